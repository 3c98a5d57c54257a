//! Relative and absolute paths (the TypeScript/JavaScript module system): relative specifiers
//! probed with the extensions of the languages that use it and their index files,
//! `tsconfig.json` `baseUrl`/`paths`, bare specifiers naming a package of the repository's own
//! (a `package.json`'s `name`: a monorepo's workspace package, or a package importing itself)
//! through its `exports` or entry fields, and other bare specifiers as external packages.

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
    /// The `tsconfig.json`/`jsconfig.json` settings, each for the files below its directory.
    roots: Vec<&'a Roots>,
    /// The repository's own packages by name (several when fixtures or examples reuse one).
    packages: HashMap<&'a str, Vec<&'a Roots>>,
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
        let (packages, roots): (Vec<&Roots>, Vec<&Roots>) =
            input.roots.iter().partition(|r| r.package.is_some());
        let mut by_name: HashMap<&str, Vec<&Roots>> = HashMap::default();
        for package in packages {
            if let Some(name) = package.package.as_deref() {
                by_name.entry(name).or_default().push(package);
            }
        }
        PathModules {
            by_path: input.by_path(),
            paths: input.paths(),
            roots,
            packages: by_name,
            extensions,
        }
    }

    /// The repository's package a bare specifier names, if any: the one the importing file is
    /// in (a package importing itself by name), else the one nearest the repository's root.
    fn package_for(&self, from: usize, spec: &str) -> Option<&'a Roots> {
        let candidates = self.packages.get(package_name(spec))?;
        let path = self.paths.get(&from);
        let enclosing = candidates
            .iter()
            .copied()
            .filter(|r| path.is_some_and(|p| r.covers(p)))
            .max_by_key(|r| r.dir.len());
        enclosing.or_else(|| {
            candidates
                .iter()
                .copied()
                .min_by(|a, b| (a.dir.len(), &a.dir).cmp(&(b.dir.len(), &b.dir)))
        })
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
        if let Some(package) = self.package_for(from, spec) {
            // A subpath the package does not have is not looked for outside it.
            return package.aliased(spec).iter().find_map(|p| self.probe(p));
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

/// Reads a `package.json` as a package of the repository's own, when it has a name: each
/// subpath of its `exports` (`"."`, `"./v4"`, `"./locales/*"`) becomes an alias of the
/// specifier naming it (`zod`, `zod/v4`, `zod/locales/*`) for every path its conditions list,
/// declaration files last (`{"source": "./src/index.ts", "import": "./dist/index.js"}`: the
/// build outputs are not in the repository, so the sources are what the probe finds); exact
/// subpaths come before patterns, and a longer pattern before a shorter, as Node matches
/// them. The package
/// itself also falls back on its entry fields (`source`, `module`, `main`, `types`) and
/// `src/index`/`index`, and a subpath on `src/…` and `…` below the package's directory.
pub(crate) fn read_package(text: &str, dir: &str) -> Option<Roots> {
    let value: serde_json::Value = serde_json::from_str(text).ok()?;
    let name = value.get("name")?.as_str()?.trim();
    if name.is_empty() || name.starts_with('.') || name.contains(['*', '\\']) {
        return None;
    }
    let mut paths: Vec<Alias> = Vec::new();
    let specifier = |subpath: &str| match subpath.trim_start_matches('.').trim_start_matches('/') {
        "" => name.to_string(),
        rest => format!("{name}/{rest}"),
    };
    match value.get("exports") {
        Some(serde_json::Value::Object(map)) if map.keys().all(|k| k.starts_with('.')) => {
            for (subpath, conditions) in map {
                paths.push(Alias::new(specifier(subpath), targets(conditions)));
            }
            paths.sort_by_key(|alias| match alias.pattern.split_once('*') {
                None => (false, 0),
                Some((prefix, _)) => (true, usize::MAX - prefix.len()),
            });
        }
        Some(conditions) => paths.push(Alias::new(name, targets(conditions))),
        None => {}
    }
    let entries: Vec<String> = ["source", "module", "main", "types", "typings"]
        .iter()
        .filter_map(|field| value.get(field).and_then(|v| v.as_str()))
        .map(clean)
        .chain(["src/index".to_string(), "index".to_string()])
        .collect();
    paths.push(Alias::new(name, entries));
    paths.push(Alias::new(
        format!("{name}/*"),
        vec!["src/*".to_string(), "*".to_string()],
    ));
    Some(Roots {
        package: Some(name.to_string()),
        paths,
        ..Roots::new(ModuleKind::Paths, dir)
    })
}

/// The paths a subpath's conditions list (an array is a list of fallbacks; `null` excludes),
/// declaration files last.
fn targets(conditions: &serde_json::Value) -> Vec<String> {
    fn leaves(conditions: &serde_json::Value, out: &mut Vec<String>) {
        match conditions {
            serde_json::Value::String(path) => out.push(clean(path)),
            serde_json::Value::Array(items) => items.iter().for_each(|item| leaves(item, out)),
            serde_json::Value::Object(map) => map.values().for_each(|value| leaves(value, out)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    leaves(conditions, &mut out);
    out.sort_by_key(|path| declaration(path));
    out
}

/// Whether a path names a declaration file (`index.d.ts`, `index.d.cts`).
fn declaration(path: &str) -> bool {
    path.rsplit('/').next().is_some_and(|file| {
        [".d.ts", ".d.mts", ".d.cts"]
            .iter()
            .any(|e| file.ends_with(e))
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
        check_all(paths, &[roots], from, spec)
    }

    fn check_all(paths: &[&str], roots: &[&Roots], from: usize, spec: &str) -> Option<Target> {
        let registry = Registry::get();
        let input = SystemFiles {
            files: SystemFile::numbered(paths),
            languages: vec![
                registry.by_name("typescript").unwrap(),
                registry.by_name("tsx").unwrap(),
            ],
            roots: roots.to_vec(),
            extracts: Default::default(),
        };
        PathModules::new(input).resolve(from, spec)
    }

    #[test]
    fn a_workspace_package_is_reached_through_its_exports() {
        let paths = [
            "packages/zod/src/index.ts",
            "packages/zod/src/v4/index.ts",
            "packages/zod/src/v4/locales/en.ts",
            "packages/zod/src/v4/classic/tests/string.test.ts",
            "packages/app/src/main.ts",
        ];
        let zod = read_package(
            r#"{"name": "zod", "exports": {
                "./package.json": "./package.json",
                ".": {"types": "./index.d.cts", "@zod/source": "./src/index.ts", "import": "./index.js"},
                "./v4": {"@zod/source": "./src/v4/index.ts", "require": "./v4/index.cjs"},
                "./v4/locales/*": ["./dist/v4/locales/*.js", "./src/v4/locales/*"]
            }}"#,
            "packages/zod",
        )
        .unwrap();
        assert_eq!(zod.package.as_deref(), Some("zod"));
        let roots = [&zod];
        // From a test in the package (importing itself by name) and from another package.
        for from in [3, 4] {
            assert_eq!(
                check_all(&paths, &roots, from, "zod"),
                Some(Target::File(0))
            );
            assert_eq!(
                check_all(&paths, &roots, from, "zod/v4"),
                Some(Target::File(1))
            );
            assert_eq!(
                check_all(&paths, &roots, from, "zod/v4/locales/en.js"),
                Some(Target::File(2))
            );
        }
        // A subpath the package lacks is not an outside package of the same name.
        assert_eq!(check_all(&paths, &roots, 4, "zod/v9"), None);
        // Other packages stay outside.
        assert_eq!(
            check_all(&paths, &roots, 4, "zod-extra/x"),
            Some(Target::External("zod-extra".to_string()))
        );
    }

    #[test]
    fn a_package_without_exports_falls_back_on_its_sources() {
        let paths = [
            "libs/util/src/index.ts",
            "libs/util/src/strings.ts",
            "apps/web/main.ts",
        ];
        let util = read_package(
            r#"{"name": "@acme/util", "main": "./dist/index.js", "types": "dist/index.d.ts"}"#,
            "libs/util",
        )
        .unwrap();
        let roots = [&util];
        assert_eq!(
            check_all(&paths, &roots, 2, "@acme/util"),
            Some(Target::File(0))
        );
        assert_eq!(
            check_all(&paths, &roots, 2, "@acme/util/strings"),
            Some(Target::File(1))
        );
        assert_eq!(
            check_all(&paths, &roots, 2, "@acme/utils"),
            Some(Target::External("@acme/utils".to_string()))
        );
    }

    #[test]
    fn the_enclosing_package_of_a_name_wins_then_the_shallowest() {
        let paths = [
            "lib/index.ts",
            "examples/demo/index.ts",
            "examples/demo/app.ts",
            "tools/run.ts",
        ];
        let lib = read_package(r#"{"name": "lib", "main": "index.ts"}"#, "lib").unwrap();
        let demo = read_package(r#"{"name": "lib", "main": "index.ts"}"#, "examples/demo").unwrap();
        let roots = [&demo, &lib];
        assert_eq!(check_all(&paths, &roots, 2, "lib"), Some(Target::File(1)));
        assert_eq!(check_all(&paths, &roots, 3, "lib"), Some(Target::File(0)));
    }

    #[test]
    fn a_package_beside_a_tsconfig_leaves_the_tsconfig_in_charge() {
        let paths = ["web/src/app.ts", "web/src/lib/db.ts", "web/src/index.ts"];
        let config = read_config(
            r#"{"compilerOptions": {"paths": {"@/*": ["./src/*"]}}}"#,
            "web",
        )
        .unwrap();
        let package = read_package(r#"{"name": "web"}"#, "web").unwrap();
        for roots in [[&config, &package], [&package, &config]] {
            assert_eq!(
                check_all(&paths, &roots, 0, "@/lib/db"),
                Some(Target::File(1))
            );
            assert_eq!(check_all(&paths, &roots, 0, "web"), Some(Target::File(2)));
        }
    }

    #[test]
    fn a_package_json_without_a_usable_name_is_no_package() {
        for text in [
            r#"{"private": true}"#,
            r#"{"name": ""}"#,
            r#"{"name": 7}"#,
            "not json",
            r#"{"name": "../up"}"#,
        ] {
            assert_eq!(read_package(text, "x"), None, "{text}");
        }
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
