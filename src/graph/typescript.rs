//! The TypeScript/JavaScript module system: relative specifiers with extension and index-file
//! probing, `tsconfig.json` `baseUrl`/`paths`, and bare specifiers as external packages.

use rustc_hash::FxHashMap as HashMap;

use super::{PathAliases, Target};

const EXTENSIONS: &[&str] = &["ts", "tsx", "d.ts", "mts", "cts", "js", "jsx", "mjs", "cjs"];

/// Where every TypeScript/JavaScript module of the repository lives.
pub struct TypescriptModules<'a> {
    by_path: HashMap<&'a str, usize>,
    paths: HashMap<usize, &'a str>,
    aliases: &'a [PathAliases],
}

/// Joins a `/`-separated relative path onto a directory, refusing to leave the repository.
fn normalise(dir: &str, relative: &str) -> Option<String> {
    let mut parts: Vec<&str> = dir.split('/').filter(|p| !p.is_empty()).collect();
    for part in relative.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            other => parts.push(other),
        }
    }
    Some(parts.join("/"))
}

impl<'a> TypescriptModules<'a> {
    pub fn new(files: &[(usize, &'a str)], aliases: &'a [PathAliases]) -> Self {
        TypescriptModules {
            by_path: files.iter().map(|&(i, p)| (p, i)).collect(),
            paths: files.iter().copied().collect(),
            aliases,
        }
    }

    /// Resolves a specifier imported from file `from`: a repository file, or an external package.
    pub fn resolve(&self, from: usize, spec: &str) -> Option<Target> {
        if spec.starts_with("./") || spec.starts_with("../") || spec == "." || spec == ".." {
            let path = self.paths.get(&from)?;
            let dir = path.rsplit_once('/').map_or("", |(d, _)| d);
            return normalise(dir, spec).and_then(|p| self.probe(&p));
        }
        if let Some(found) = self.config_for(from).and_then(|a| self.aliased(a, spec)) {
            return Some(found);
        }
        Some(Target::External(package_name(spec).to_string()))
    }

    /// The nearest config above a file.
    fn config_for(&self, file: usize) -> Option<&'a PathAliases> {
        let path = self.paths.get(&file)?;
        self.aliases
            .iter()
            .filter(|a| a.dir.is_empty() || path.starts_with(&format!("{}/", a.dir)))
            .max_by_key(|a| a.dir.len())
    }

    fn aliased(&self, aliases: &PathAliases, spec: &str) -> Option<Target> {
        for (pattern, targets) in &aliases.paths {
            let rest = match pattern.split_once('*') {
                Some((prefix, suffix)) => spec
                    .strip_prefix(prefix)
                    .and_then(|r| r.strip_suffix(suffix)),
                None => (spec == pattern).then_some(""),
            };
            let Some(rest) = rest else { continue };
            for target in targets {
                let substituted = target.replace('*', rest);
                if let Some(found) =
                    normalise(&aliases.base_dir, &substituted).and_then(|p| self.probe(&p))
                {
                    return Some(found);
                }
            }
        }
        let base = aliases.base_url.as_ref()?;
        normalise(base, spec).and_then(|p| self.probe(&p))
    }

    /// Finds the file a module path names: as written, with an extension, or as a directory's
    /// index file; `./x.js` also finds `x.ts` (ESM-style TypeScript imports).
    fn probe(&self, path: &str) -> Option<Target> {
        if let Some(&i) = self.by_path.get(path) {
            return Some(Target::File(i));
        }
        let stripped = ["js", "jsx", "mjs", "cjs"]
            .iter()
            .find_map(|e| path.strip_suffix(&format!(".{e}")));
        let stems = [Some(path), stripped];
        for stem in stems.into_iter().flatten() {
            for extension in EXTENSIONS {
                if let Some(&i) = self.by_path.get(format!("{stem}.{extension}").as_str()) {
                    return Some(Target::File(i));
                }
            }
        }
        EXTENSIONS.iter().find_map(|extension| {
            let index = if path.is_empty() {
                format!("index.{extension}")
            } else {
                format!("{path}/index.{extension}")
            };
            self.by_path.get(index.as_str()).map(|&i| Target::File(i))
        })
    }
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

    fn check(paths: &[&str], aliases: &PathAliases, from: usize, spec: &str) -> Option<Target> {
        let files: Vec<(usize, &str)> = paths.iter().copied().enumerate().collect();
        let aliases = std::slice::from_ref(aliases);
        TypescriptModules::new(&files, aliases).resolve(from, spec)
    }

    #[test]
    fn relative_specifiers_probe_extensions_and_index_files() {
        let paths = [
            "src/app.ts",
            "src/lib/index.ts",
            "src/util.tsx",
            "src/esm.ts",
        ];
        let none = PathAliases::default();
        assert_eq!(check(&paths, &none, 0, "./lib"), Some(Target::File(1)));
        assert_eq!(check(&paths, &none, 0, "./util"), Some(Target::File(2)));
        assert_eq!(check(&paths, &none, 0, "./esm.js"), Some(Target::File(3)));
        assert_eq!(check(&paths, &none, 1, "../app"), Some(Target::File(0)));
        assert_eq!(check(&paths, &none, 0, "./missing"), None);
        assert_eq!(check(&paths, &none, 0, "../../../etc/passwd"), None);
    }

    #[test]
    fn bare_specifiers_are_packages_unless_aliased() {
        let paths = ["src/app.ts", "src/lib/db.ts"];
        let aliases = PathAliases {
            dir: String::new(),
            base_dir: String::new(),
            base_url: Some("src".to_string()),
            paths: vec![("@/*".to_string(), vec!["src/*".to_string()])],
        };
        assert_eq!(
            check(&paths, &aliases, 0, "@/lib/db"),
            Some(Target::File(1))
        );
        assert_eq!(check(&paths, &aliases, 0, "lib/db"), Some(Target::File(1)));
        assert_eq!(
            check(&paths, &aliases, 0, "@scope/pkg/deep"),
            Some(Target::External("@scope/pkg".to_string()))
        );
        assert_eq!(
            check(&paths, &aliases, 0, "react"),
            Some(Target::External("react".to_string()))
        );
    }
}
