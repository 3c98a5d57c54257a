//! Reading `tsconfig.json` (or `jsconfig.json`) at the repository root for `baseUrl` and
//! `paths`. The files are JSON with comments and trailing commas.

use std::path::Path;

use crate::graph::PathAliases;

/// Config file names that carry module resolution settings.
pub const CONFIG_NAMES: &[&str] = &["tsconfig.json", "jsconfig.json"];

/// The module-resolution aliases of every readable config (repository-relative paths).
pub fn aliases(root: &Path, configs: &[String]) -> Vec<PathAliases> {
    configs
        .iter()
        .filter_map(|config| {
            let text = std::fs::read_to_string(root.join(config)).ok()?;
            let dir = config.rsplit_once('/').map_or("", |(d, _)| d);
            parse(&text, dir)
        })
        .collect()
}

/// Parses a config's `compilerOptions.baseUrl` and `paths`; `dir` is the config's directory.
pub fn parse(text: &str, dir: &str) -> Option<PathAliases> {
    let value: serde_json::Value = serde_json::from_str(&strip_jsonc(text)).ok()?;
    let options = value.get("compilerOptions")?;
    let within = |path: String| match (dir.is_empty(), path.is_empty()) {
        (true, _) => path,
        (_, true) => dir.to_string(),
        _ => format!("{dir}/{path}"),
    };
    let base_url = options
        .get("baseUrl")
        .and_then(|b| b.as_str())
        .map(clean)
        .map(within);
    let paths = options
        .get("paths")
        .and_then(|p| p.as_object())
        .map(|map| {
            map.iter()
                .map(|(pattern, targets)| {
                    let targets = targets
                        .as_array()
                        .map(|t| t.iter().filter_map(|x| x.as_str()).map(clean).collect())
                        .unwrap_or_default();
                    (pattern.clone(), targets)
                })
                .collect()
        })
        .unwrap_or_default();
    Some(PathAliases {
        dir: dir.to_string(),
        base_dir: base_url.clone().unwrap_or_else(|| dir.to_string()),
        base_url,
        paths,
    })
}

fn clean(path: &str) -> String {
    let trimmed = path.trim_start_matches("./").trim_end_matches('/');
    if trimmed == "." {
        String::new()
    } else {
        trimmed.to_string()
    }
}

/// Removes `//` and `/* */` comments and trailing commas, leaving strings intact.
fn strip_jsonc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    let mut in_string = false;
    while let Some(c) = chars.next() {
        if in_string {
            out.push(c);
            if c == '\\' {
                out.extend(chars.next());
            } else if c == '"' {
                in_string = false;
            }
            continue;
        }
        match (c, chars.peek()) {
            ('"', _) => {
                in_string = true;
                out.push(c);
            }
            ('/', Some('/')) => {
                for next in chars.by_ref() {
                    if next == '\n' {
                        out.push('\n');
                        break;
                    }
                }
            }
            ('/', Some('*')) => {
                chars.next();
                let mut last = ' ';
                for next in chars.by_ref() {
                    if last == '*' && next == '/' {
                        break;
                    }
                    last = next;
                }
            }
            (',', _) => {
                let rest: String = chars.clone().collect();
                let following = rest.trim_start().chars().next();
                if !matches!(following, Some('}') | Some(']')) {
                    out.push(c);
                }
            }
            _ => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_jsonc_with_comments_and_trailing_commas() {
        let aliases = parse(
            r#"{
              // the app
              "compilerOptions": {
                "baseUrl": "./src", /* sources */
                "paths": { "@/*": ["./*"], "~lib": ["lib/index.ts",], },
              },
            }"#,
            "web",
        )
        .unwrap();
        assert_eq!(aliases.base_url.as_deref(), Some("web/src"));
        assert_eq!(aliases.base_dir, "web/src");
        assert_eq!(aliases.paths[0], ("@/*".to_string(), vec!["*".to_string()]));
        assert_eq!(aliases.paths[1].1, vec!["lib/index.ts".to_string()]);
    }

    #[test]
    fn strings_with_comment_markers_survive() {
        let aliases = parse(r#"{"compilerOptions": {"baseUrl": "a//b"}}"#, "").unwrap();
        assert_eq!(aliases.base_url.as_deref(), Some("a//b"));
    }
}
