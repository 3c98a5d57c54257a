//! Relative and absolute paths (the TypeScript/JavaScript module system): relative specifiers
//! probed with the extensions of the languages that use it and their index files,
//! `tsconfig.json` `baseUrl`/`paths`, and bare specifiers as external packages.

use rustc_hash::FxHashMap as HashMap;

use super::{Alias, ModuleSystem, Roots, SystemFiles, Target, normalise, parent};
use crate::languages::ModuleKind;

/// Extensions a specifier may be written with for a file of another script extension
/// (`./x.js` names `x.ts` in ESM-style TypeScript).
const WRITTEN_EXTENSIONS: &[&str] = &["js", "jsx", "mjs", "cjs"];

/// Where every module of the repository lives.
pub(crate) struct PathModules<'a> {
    by_path: HashMap<&'a str, usize>,
    paths: HashMap<usize, &'a str>,
    roots: Vec<&'a Roots>,
    /// The languages' extensions, in registry order, then declaration files (`d.ts`).
    extensions: Vec<String>,
}

impl<'a> PathModules<'a> {
    pub fn new(input: SystemFiles<'a>) -> Self {
        let mut extensions: Vec<String> = Vec::new();
        for extension in input.languages.iter().flat_map(|l| &l.spec.extensions) {
            if !extensions.contains(extension) {
                extensions.push(extension.clone());
            }
        }
        let declarations: Vec<String> = extensions.iter().map(|e| format!("d.{e}")).collect();
        extensions.extend(declarations);
        PathModules {
            by_path: input.by_path(),
            paths: input.paths(),
            roots: input.roots,
            extensions,
        }
    }

    /// The nearest config above a file.
    fn config_for(&self, file: usize) -> Option<&'a Roots> {
        let path = self.paths.get(&file)?;
        self.roots
            .iter()
            .copied()
            .filter(|r| r.covers(path))
            .max_by_key(|r| r.dir.len())
    }

    fn aliased(&self, roots: &Roots, spec: &str) -> Option<Target> {
        if let Some(found) = roots.aliased(spec).iter().find_map(|p| self.probe(p)) {
            return Some(found);
        }
        let base = roots.base_url.as_ref()?;
        normalise(base, spec).and_then(|p| self.probe(&p))
    }

    /// Finds the file a module path names: as written, with an extension, or as a directory's
    /// index file; `./x.js` also finds `x.ts` (ESM-style TypeScript imports).
    fn probe(&self, path: &str) -> Option<Target> {
        if let Some(&i) = self.by_path.get(path) {
            return Some(Target::File(i));
        }
        let stripped = WRITTEN_EXTENSIONS
            .iter()
            .find_map(|e| path.strip_suffix(&format!(".{e}")));
        let stems = [Some(path), stripped];
        for stem in stems.into_iter().flatten() {
            for extension in &self.extensions {
                if let Some(&i) = self.by_path.get(format!("{stem}.{extension}").as_str()) {
                    return Some(Target::File(i));
                }
            }
        }
        self.extensions.iter().find_map(|extension| {
            let index = if path.is_empty() {
                format!("index.{extension}")
            } else {
                format!("{path}/index.{extension}")
            };
            self.by_path.get(index.as_str()).map(|&i| Target::File(i))
        })
    }
}

impl ModuleSystem for PathModules<'_> {
    /// A repository file, or an external package.
    fn resolve(&self, from: usize, spec: &str) -> Option<Target> {
        if spec.starts_with("./") || spec.starts_with("../") || spec == "." || spec == ".." {
            let path = self.paths.get(&from)?;
            return normalise(parent(path), spec).and_then(|p| self.probe(&p));
        }
        if let Some(found) = self.config_for(from).and_then(|r| self.aliased(r, spec)) {
            return Some(found);
        }
        Some(Target::External(package_name(spec).to_string()))
    }
}

/// Reads a `tsconfig.json` (or `jsconfig.json`, JSON with comments and trailing commas):
/// its `compilerOptions.baseUrl` and `paths`; `dir` is the config's directory.
pub(crate) fn read_config(text: &str, dir: &str) -> Option<Roots> {
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
                    Alias::new(pattern.clone(), targets)
                })
                .collect()
        })
        .unwrap_or_default();
    Some(Roots {
        system: ModuleKind::Paths,
        dir: dir.to_string(),
        base_dir: base_url.clone().unwrap_or_else(|| dir.to_string()),
        base_url,
        paths,
        ..Roots::new(ModuleKind::Paths, dir)
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

/// `@scope/pkg/sub` -> `@scope/pkg`; `lodash/fp` -> `lodash`; `node:fs` stays.
fn package_name(spec: &str) -> &str {
    let mut parts = spec.splitn(3, '/');
    let first = parts.next().unwrap_or(spec);
    if first.starts_with('@')
        && let Some(second) = parts.next()
    {
        return &spec[..first.len() + 1 + second.len()];
    }
    first
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::modules::SystemFile;
    use crate::languages::Registry;

    fn check(paths: &[&str], roots: &Roots, from: usize, spec: &str) -> Option<Target> {
        let registry = Registry::get();
        let input = SystemFiles {
            files: SystemFile::numbered(paths),
            languages: vec![
                registry.by_name("typescript").unwrap(),
                registry.by_name("tsx").unwrap(),
            ],
            roots: vec![roots],
            extracts: Default::default(),
        };
        PathModules::new(input).resolve(from, spec)
    }

    #[test]
    fn relative_specifiers_probe_extensions_and_index_files() {
        let paths = [
            "src/app.ts",
            "src/lib/index.ts",
            "src/util.tsx",
            "src/esm.ts",
            "src/types.d.ts",
        ];
        let none = Roots::new(ModuleKind::Paths, "");
        assert_eq!(check(&paths, &none, 0, "./lib"), Some(Target::File(1)));
        assert_eq!(check(&paths, &none, 0, "./util"), Some(Target::File(2)));
        assert_eq!(check(&paths, &none, 0, "./esm.js"), Some(Target::File(3)));
        assert_eq!(check(&paths, &none, 0, "./types"), Some(Target::File(4)));
        assert_eq!(check(&paths, &none, 1, "../app"), Some(Target::File(0)));
        assert_eq!(check(&paths, &none, 0, "./missing"), None);
        assert_eq!(check(&paths, &none, 0, "../../../etc/passwd"), None);
    }

    #[test]
    fn bare_specifiers_are_packages_unless_aliased() {
        let paths = ["src/app.ts", "src/lib/db.ts"];
        let roots = Roots {
            base_url: Some("src".to_string()),
            paths: vec![Alias::new("@/*", vec!["src/*".to_string()])],
            ..Roots::new(ModuleKind::Paths, "")
        };
        assert_eq!(check(&paths, &roots, 0, "@/lib/db"), Some(Target::File(1)));
        assert_eq!(check(&paths, &roots, 0, "lib/db"), Some(Target::File(1)));
        assert_eq!(
            check(&paths, &roots, 0, "@scope/pkg/deep"),
            Some(Target::External("@scope/pkg".to_string()))
        );
        assert_eq!(
            check(&paths, &roots, 0, "react"),
            Some(Target::External("react".to_string()))
        );
    }

    #[test]
    fn reads_jsonc_with_comments_and_trailing_commas() {
        let aliases = read_config(
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
        assert_eq!(aliases.paths[0], Alias::new("@/*", vec!["*".to_string()]));
        assert_eq!(aliases.paths[1].targets, vec!["lib/index.ts".to_string()]);
    }

    #[test]
    fn strings_with_comment_markers_survive() {
        let aliases = read_config(r#"{"compilerOptions": {"baseUrl": "a//b"}}"#, "").unwrap();
        assert_eq!(aliases.base_url.as_deref(), Some("a//b"));
    }
}
