//! Crates (Rust's module system): a `Cargo.toml` names a package, whose crates are its library
//! (`src/lib.rs` or `[lib] path`), its binaries (`src/main.rs`, `src/bin/*.rs`) and its tests,
//! benchmarks and examples (`tests/*.rs`, `tests/*/main.rs`, …). `mod x;` is `x.rs` or
//! `x/mod.rs` in the directory of its parent's children; paths start at `crate`, `super`,
//! `self`, a module of the file, a crate of the repository (its name, `-` read as `_`), or
//! outside (std, the dependencies).

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use super::{Alias, ModuleSystem, Roots, SystemFiles, Target, parent};
use crate::extract::FileExtract;
use crate::languages::ModuleKind;

/// Crates every Rust program can name without a dependency.
const STANDARD_CRATES: &[&str] = &["std", "core", "alloc", "proc_macro", "test"];

/// Directories of a package whose files are crates of their own, and whose subdirectories are
/// crates rooted at their `main.rs`.
const TARGET_DIRS: &[&str] = &["src/bin", "tests", "benches", "examples"];

/// Manifest tables whose entries may name a crate root by `path` (`[[bin]] path = …`).
const TARGET_TABLES: &[&str] = &["bin", "test", "bench", "example"];

/// How many re-exports a path is followed through (`pub use`, `pub extern crate … as …`).
const MAX_REEXPORTS: usize = 8;

/// Where every Rust file is and which crates the repository's packages declare.
pub(crate) struct CrateModules<'a> {
    paths: HashMap<usize, &'a str>,
    by_path: HashMap<&'a str, usize>,
    /// Every `Cargo.toml`, deepest directory first.
    roots: Vec<&'a Roots>,
    /// Names every file sees as std's (the prelude, the primitive types).
    prelude: HashSet<&'a str>,
    /// The root file of each file's crate (see [`CrateModules::find_crate_root`]).
    crate_roots: HashMap<usize, usize>,
    /// The library root of each repository crate, by the name code uses for it.
    libraries: HashMap<&'a str, usize>,
    /// Every dependency a manifest names.
    dependencies: HashSet<&'a str>,
    /// What each file declares and imports: a path goes on through a file's re-exports and
    /// into its types.
    extracts: HashMap<usize, &'a FileExtract>,
}

impl<'a> CrateModules<'a> {
    pub fn new(input: SystemFiles<'a>) -> Self {
        let mut roots = input.roots.clone();
        roots.sort_by_key(|r| std::cmp::Reverse(depth(&r.dir)));
        let mut modules = CrateModules {
            paths: input.paths(),
            by_path: input.by_path(),
            roots,
            prelude: input
                .languages
                .iter()
                .flat_map(|l| l.spec.builtins.names.iter().map(String::as_str))
                .collect(),
            crate_roots: HashMap::default(),
            libraries: HashMap::default(),
            dependencies: HashSet::default(),
            extracts: input.extracts,
        };
        for roots in modules.roots.clone() {
            for Alias {
                pattern: name,
                targets,
            } in &roots.paths
            {
                if targets.is_empty() {
                    modules.dependencies.insert(name.as_str());
                    continue;
                }
                // The package's own crate: a library when its root file is in the repository.
                let library = roots.aliased(name).into_iter().next();
                if let Some(file) = library.and_then(|path| modules.file_at(&path)) {
                    modules.libraries.entry(name.as_str()).or_insert(file);
                }
            }
        }
        modules.crate_roots = input
            .files
            .iter()
            .filter_map(|f| Some((f.index, modules.find_crate_root(f.index, f.path)?)))
            .collect();
        modules
    }

    /// The root file of the crate a file belongs to.
    fn crate_root(&self, file: usize) -> Option<usize> {
        self.crate_roots.get(&file).copied()
    }

    fn file_at(&self, path: &str) -> Option<usize> {
        self.by_path.get(path).copied()
    }

    /// The package a path belongs to: the deepest `Cargo.toml` above it that names one, as its
    /// directory, the path of its library root and the roots its targets name by `path`.
    fn package(&self, path: &str) -> Option<(&'a str, String, Vec<String>)> {
        self.roots.iter().copied().find_map(|roots| {
            let own = roots.paths.first()?;
            if own.targets.is_empty() || !roots.covers(path) {
                return None;
            }
            let mut roots_of = roots.aliased(&own.pattern).into_iter();
            let library = roots_of.next()?;
            Some((roots.dir.as_str(), library, roots_of.collect()))
        })
    }

    /// The crate root a target's `path` makes of a file: the target itself, or the deepest
    /// target whose directory holds the file (`crates/core/main.rs` for `crates/core/flags.rs`)
    /// unless that directory is the package's or holds the library's.
    fn explicit_root(
        &self,
        path: &str,
        dir: &str,
        library: &str,
        targets: &[String],
    ) -> Option<usize> {
        if targets.iter().any(|t| t == path) {
            return self.file_at(path);
        }
        let library_dir = parent(library);
        targets
            .iter()
            .filter(|t| {
                let target_dir = parent(t);
                target_dir != dir
                    && !in_dir(library_dir, target_dir)
                    && in_dir(parent(path), target_dir)
            })
            .max_by_key(|t| depth(parent(t)))
            .and_then(|t| self.file_at(t))
    }

    /// The root file of the crate a file belongs to: its package's library or main binary, or
    /// the binary, test, benchmark or example it is part of; without a `Cargo.toml`, the
    /// nearest `lib.rs` or `main.rs` above it.
    fn find_crate_root(&self, file: usize, path: &str) -> Option<usize> {
        let Some((dir, library, targets)) = self.package(path) else {
            return self.nearest_root(path);
        };
        if let Some(root) = self.explicit_root(path, dir, &library, &targets) {
            return Some(root);
        }
        let within = if dir.is_empty() {
            path
        } else {
            &path[dir.len() + 1..]
        };
        let in_package = |relative: &str| join(dir, relative);
        for target in TARGET_DIRS {
            let Some(rest) = within
                .strip_prefix(*target)
                .and_then(|r| r.strip_prefix('/'))
            else {
                continue;
            };
            return match rest.split_once('/') {
                None => Some(file),
                Some((sub, _)) => self.file_at(&in_package(&format!("{target}/{sub}/main.rs"))),
            };
        }
        let main = in_package("src/main.rs");
        if path == main {
            return Some(file);
        }
        let library_dir = parent(&library);
        match self.file_at(&library) {
            Some(lib) if path == library || path.starts_with(&format!("{library_dir}/")) => {
                Some(lib)
            }
            _ => self.file_at(&main),
        }
    }

    /// Without a package: the nearest directory above a file with a `lib.rs` or `main.rs`.
    fn nearest_root(&self, path: &str) -> Option<usize> {
        let mut dir = parent(path);
        loop {
            for root in ["lib.rs", "main.rs"] {
                if let Some(file) = self.file_at(&join(dir, root)) {
                    return Some(file);
                }
            }
            if dir.is_empty() {
                return None;
            }
            dir = parent(dir);
        }
    }

    /// The directory a module's `mod x;` files are in: beside a crate root or a `mod.rs`,
    /// else in the directory named after the file (`a.rs` -> `a/`).
    fn children_dir(&self, file: usize) -> Option<String> {
        let path = *self.paths.get(&file)?;
        if is_mod_rs(path) || self.crate_root(file) == Some(file) {
            return Some(parent(path).to_string());
        }
        path.strip_suffix(".rs").map(str::to_string)
    }

    /// The file of module `name` declared in a file's module.
    fn child(&self, file: usize, name: &str) -> Option<usize> {
        let dir = self.children_dir(file)?;
        self.file_at(&join(&dir, &format!("{name}.rs")))
            .or_else(|| self.file_at(&join(&dir, &format!("{name}/mod.rs"))))
    }

    /// The module a file's module is declared in (`super`); none for a crate root.
    fn parent_module(&self, file: usize) -> Option<usize> {
        let root = self.crate_root(file);
        if root == Some(file) {
            return None;
        }
        let path = *self.paths.get(&file)?;
        let dir = if is_mod_rs(path) {
            parent(parent(path))
        } else {
            parent(path)
        };
        if let Some(root) = root
            && self.paths.get(&root).is_some_and(|r| parent(r) == dir)
        {
            return Some(root);
        }
        self.file_at(&format!("{dir}.rs"))
            .or_else(|| self.file_at(&join(dir, "mod.rs")))
    }

    /// The library root of a repository crate, by the name code uses for it.
    fn library(&self, name: &str) -> Option<usize> {
        self.libraries.get(name).copied()
    }

    /// Resolves a dotted path from a file (see [`ModuleSystem::resolve`]): each name after the
    /// first is a module file, a module or crate the file re-exports (`pub use a::b;`, `pub
    /// extern crate grep_searcher as searcher;`), a type the file declares (`use
    /// self::Kind::*` reaches its members), after which the path ends, or an inline module
    /// of the file.
    fn walk(&self, from: usize, spec: &str, reexports: usize) -> Option<Target> {
        let segments: Vec<&str> = spec.split('.').collect();
        let mut file = match segments[0] {
            "crate" => self.crate_root(from)?,
            "self" => from,
            "super" => self.parent_module(from)?,
            name => match self.child(from, name).or_else(|| self.library(name)) {
                Some(file) => file,
                None => {
                    let known = self.is_outside_crate(name)
                        || self.package(self.paths.get(&from)?).is_none();
                    return known.then(|| Target::External(spec.to_string()));
                }
            },
        };
        for (i, &segment) in segments.iter().enumerate().skip(1) {
            file = match segment {
                "super" => self.parent_module(file)?,
                "self" => file,
                name => match self.child(file, name) {
                    Some(child) => child,
                    None => {
                        let found = self
                            .reexported(file, name, reexports)
                            .or_else(|| self.declared_type(file, name))
                            .or_else(|| self.inline_module(file, name))?;
                        let more = segments[i + 1..].join(".");
                        return match found {
                            found if more.is_empty() => Some(found),
                            Target::File(f) => self.walk(f, &format!("self.{more}"), reexports + 1),
                            Target::External(m) => Some(Target::External(format!("{m}.{more}"))),
                            _ => None,
                        };
                    }
                },
            };
        }
        Some(Target::File(file))
    }

    /// A module or crate a file binds at its top level by `use` or `extern crate` (under its
    /// alias or last name), as the file resolves it.
    fn reexported(&self, file: usize, name: &str, reexports: usize) -> Option<Target> {
        if reexports >= MAX_REEXPORTS {
            return None;
        }
        let imports = &self.extracts.get(&file)?.imports;
        // Only the first binding of the name is followed: Rust allows one, and following every
        // one a hostile file repeats would cost (repeats)^MAX_REEXPORTS walks.
        let import = imports.iter().find(|i| {
            let local = match (&i.alias, &i.name) {
                (Some(alias), _) => Some(alias.as_str()),
                (None, Some(item)) => Some(item.as_str()),
                (None, None) => i.module.rsplit('.').next(),
            };
            i.scope.is_none() && !i.wildcard && local == Some(name)
        })?;
        let path = match &import.name {
            Some(item) => format!("{}.{item}", import.module),
            None => import.module.to_string(),
        };
        self.walk(file, &path, reexports + 1)
    }

    /// An inline module of a file (`mod tests { … }`, its extract's packages): its items are
    /// read as the file's, so a path through it stays in the file.
    fn inline_module(&self, file: usize, name: &str) -> Option<Target> {
        let packages = &self.extracts.get(&file)?.packages;
        packages
            .iter()
            .any(|p| p == name)
            .then_some(Target::File(file))
    }

    /// A type declared at the top level of a file.
    fn declared_type(&self, file: usize, name: &str) -> Option<Target> {
        let symbols = &self.extracts.get(&file)?.symbols;
        symbols
            .iter()
            .position(|s| s.parent.is_none() && s.name == name && s.kind.is_class_like())
            .map(|s| Target::Symbol(file, s))
    }

    /// Whether a name is a crate from outside the repository: std's, or a dependency.
    fn is_outside_crate(&self, name: &str) -> bool {
        STANDARD_CRATES.contains(&name) || self.dependencies.contains(name)
    }
}

impl ModuleSystem for CrateModules<'_> {
    /// A dotted path (`crate.store`, `super.model`, `billing_core.ledger`): the file of the
    /// module it names, or outside when it starts at a crate from outside. A name that is
    /// neither a module, a crate of the repository nor a known dependency is unresolved (no
    /// `Cargo.toml` says what it is), unless no `Cargo.toml` covers the file.
    fn resolve(&self, from: usize, spec: &str) -> Option<Target> {
        self.walk(from, spec, 0)
    }

    /// Outside code is recorded under its crate (`std`, `tokio`).
    fn external_name<'s>(&self, module: &'s str) -> &'s str {
        module.split('.').next().unwrap_or(module)
    }

    /// `use serde;`, `mod store;` and `use a::b::{self}` bind the last name of the path.
    fn implicit_binding(
        &self,
        _from: usize,
        spec: &str,
        target: &Target,
    ) -> Option<(String, Target)> {
        let name = spec.rsplit('.').next()?;
        (!name.is_empty()).then(|| (name.to_string(), target.clone()))
    }

    fn submodule(&self, file: usize, name: &str) -> Option<Target> {
        self.child(file, name).map(Target::File)
    }

    /// `crate` and `super` start paths from the file; a crate of the repository or a
    /// dependency is in scope by its name; the prelude's names are std's.
    fn path_root(&self, file: usize, name: &str) -> Option<Target> {
        match name {
            "crate" => self.crate_root(file).map(Target::File),
            "super" => self.parent_module(file).map(Target::File),
            _ if self.prelude.contains(name) => Some(Target::External(format!("std.{name}"))),
            _ => match self.library(name) {
                Some(library) => Some(Target::File(library)),
                None => self
                    .is_outside_crate(name)
                    .then(|| Target::External(name.to_string())),
            },
        }
    }
}

/// How many directories deep a repository-relative directory is (`""`: 0).
fn depth(dir: &str) -> usize {
    dir.split('/').filter(|part| !part.is_empty()).count()
}

/// Whether a directory is (or is below) another (`""`: the repository holds everything).
fn in_dir(sub: &str, dir: &str) -> bool {
    dir.is_empty() || sub == dir || sub.starts_with(&format!("{dir}/"))
}

fn is_mod_rs(path: &str) -> bool {
    path == "mod.rs" || path.ends_with("/mod.rs")
}

fn join(dir: &str, relative: &str) -> String {
    if dir.is_empty() {
        relative.to_string()
    } else {
        format!("{dir}/{relative}")
    }
}

/// The crate roots a manifest's binaries, tests, benchmarks and examples name by `path`
/// (`[[bin]] path = "crates/core/main.rs"`).
fn target_paths(manifest: &toml::Table) -> Vec<String> {
    TARGET_TABLES
        .iter()
        .filter_map(|key| manifest.get(*key).and_then(toml::Value::as_array))
        .flatten()
        .filter_map(|target| target.get("path").and_then(toml::Value::as_str))
        .map(str::to_string)
        .collect()
}

/// Reads a `Cargo.toml`: the package's crate name (its `[lib] name`, else the package name,
/// `-` read as `_`) with its library root as the first alias and the roots its targets name by
/// `path` after it, then every dependency's name (no target: outside, unless a package of the
/// repository has that name). A manifest that is not TOML or names nothing says nothing (its
/// size is bounded where it is read: `index::roots`).
pub(crate) fn read_cargo_toml(name: &str, text: &str, dir: &str) -> Option<Roots> {
    if name != "Cargo.toml" {
        return None;
    }
    let manifest: toml::Table = toml::from_str(text).ok()?;
    let string = |table: Option<&toml::Value>, key: &str| {
        table
            .and_then(|t| t.get(key))
            .and_then(toml::Value::as_str)
            .map(str::to_string)
    };
    let mut paths = Vec::new();
    if let Some(package) = string(manifest.get("package"), "name") {
        let lib = manifest.get("lib");
        let crate_name = string(lib, "name").unwrap_or(package);
        let root = string(lib, "path").unwrap_or_else(|| "src/lib.rs".to_string());
        let mut roots = vec![root];
        roots.extend(target_paths(&manifest));
        paths.push(Alias::new(crate_name.replace('-', "_"), roots));
    }
    let mut dependencies: Vec<String> = Vec::new();
    let mut collect = |table: &toml::Table| {
        for key in ["dependencies", "dev-dependencies", "build-dependencies"] {
            if let Some(deps) = table.get(key).and_then(toml::Value::as_table) {
                dependencies.extend(deps.keys().map(|d| d.replace('-', "_")));
            }
        }
    };
    collect(&manifest);
    if let Some(workspace) = manifest.get("workspace").and_then(toml::Value::as_table) {
        collect(workspace);
    }
    if let Some(targets) = manifest.get("target").and_then(toml::Value::as_table) {
        for target in targets.values().filter_map(toml::Value::as_table) {
            collect(target);
        }
    }
    dependencies.sort();
    dependencies.dedup();
    paths.extend(dependencies.into_iter().map(|d| Alias::new(d, Vec::new())));
    if paths.is_empty() {
        return None;
    }
    Some(Roots {
        paths,
        ..Roots::new(ModuleKind::Crate, dir)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::modules::SystemFile;

    const SHOP: &str = "[package]\nname = \"shop\"\n\n[dependencies]\nbilling-core = { path = \"../billing\" }\nreqwest = \"0.12\"\n";
    const BILLING: &str = "[package]\nname = \"billing-core\"\n\n[target.'cfg(unix)'.dev-dependencies]\nnix = \"0.29\"\n";

    const FILES: &[&str] = &[
        "shop/src/main.rs",
        "shop/src/store/mod.rs",
        "shop/src/store/close.rs",
        "shop/src/shapes.rs",
        "shop/src/shapes/circle.rs",
        "billing/src/lib.rs",
        "billing/src/ledger.rs",
        "billing/tests/open.rs",
        "shop/src/bin/tool.rs",
        "shop/tests/common/mod.rs",
        "scripts/lib.rs",
        "scripts/util.rs",
    ];

    fn modules(roots: &[Roots]) -> CrateModules<'_> {
        CrateModules::new(SystemFiles {
            files: SystemFile::numbered(FILES),
            languages: Vec::new(),
            roots: roots.iter().collect(),
            extracts: Default::default(),
        })
    }

    fn workspace() -> Vec<Roots> {
        vec![
            read_cargo_toml("Cargo.toml", SHOP, "shop").unwrap(),
            read_cargo_toml("Cargo.toml", BILLING, "billing").unwrap(),
        ]
    }

    #[test]
    fn manifests_name_the_crate_its_library_and_dependencies() {
        let roots = workspace();
        let names = |r: &Roots| r.paths.clone();
        assert_eq!(
            names(&roots[0]),
            vec![
                Alias::new("shop", vec!["src/lib.rs".to_string()]),
                Alias::new("billing_core", vec![]),
                Alias::new("reqwest", vec![]),
            ]
        );
        assert_eq!(
            names(&roots[1]),
            vec![
                Alias::new("billing_core", vec!["src/lib.rs".to_string()]),
                Alias::new("nix", vec![]),
            ]
        );
        let custom = "[package]\nname = \"a-b\"\n[lib]\nname = \"ab\"\npath = \"lib.rs\"\n";
        assert_eq!(
            read_cargo_toml("Cargo.toml", custom, "").unwrap().paths,
            vec![Alias::new("ab", vec!["lib.rs".to_string()])]
        );
    }

    #[test]
    fn targets_named_by_path_are_crate_roots() {
        let manifest = "[package]\nname = \"rg\"\n[[bin]]\nname = \"rg\"\npath = \"core/main.rs\"\n[[test]]\nname = \"it\"\npath = \"tests/tests.rs\"\n[[bench]]\nname = 3\n";
        let roots = [read_cargo_toml("Cargo.toml", manifest, "").unwrap()];
        assert_eq!(
            roots[0].paths[0].targets,
            vec!["src/lib.rs", "core/main.rs", "tests/tests.rs"]
        );
        let files = [
            "core/main.rs",
            "core/flags/mod.rs",
            "core/search.rs",
            "tests/tests.rs",
            "tests/util.rs",
            "other/x.rs",
        ];
        let m = CrateModules::new(SystemFiles {
            files: SystemFile::numbered(&files),
            languages: Vec::new(),
            roots: roots.iter().collect(),
            extracts: Default::default(),
        });
        let file = |i: usize| Some(Target::File(i));
        assert_eq!(m.resolve(0, "crate"), file(0));
        assert_eq!(m.resolve(0, "flags"), file(1));
        assert_eq!(m.resolve(1, "crate.search"), file(2));
        assert_eq!(m.resolve(2, "super"), file(0));
        assert_eq!(m.resolve(4, "crate"), file(3));
        // Outside every target's directory, and no src/main.rs or src/lib.rs: no crate.
        assert_eq!(m.resolve(5, "crate"), None);
    }

    #[test]
    fn hostile_manifests_say_nothing() {
        assert_eq!(read_cargo_toml("Cargo.toml", "[package\nname = ", ""), None);
        assert_eq!(read_cargo_toml("Cargo.toml", "[workspace]\n", ""), None);
        assert_eq!(
            read_cargo_toml("Cargo.toml", "package = 3\nlib = []\n", ""),
            None
        );
        assert_eq!(read_cargo_toml("Cargo.lock", SHOP, ""), None);
        let nested = format!("a = {}{}", "[".repeat(10_000), "]".repeat(10_000));
        assert_eq!(read_cargo_toml("Cargo.toml", &nested, ""), None);
    }

    #[test]
    fn paths_name_module_files() {
        let roots = workspace();
        let m = modules(&roots);
        let file = |i: usize| Some(Target::File(i));
        assert_eq!(m.resolve(0, "store"), file(1));
        assert_eq!(m.resolve(1, "close"), file(2));
        assert_eq!(m.resolve(2, "super"), file(1));
        assert_eq!(m.resolve(1, "super"), file(0));
        assert_eq!(m.resolve(0, "super"), None);
        assert_eq!(m.resolve(2, "crate.shapes.circle"), file(4));
        assert_eq!(m.resolve(4, "super.super.store.close"), file(2));
        assert_eq!(m.resolve(0, "self.shapes"), file(3));
        assert_eq!(m.resolve(3, "circle"), file(4));
        assert_eq!(m.resolve(0, "crate.missing"), None);
        assert_eq!(m.resolve(0, "billing_core.ledger"), file(6));
        assert_eq!(m.resolve(7, "billing_core"), file(5));
        assert_eq!(m.resolve(6, "crate"), file(5));
        assert_eq!(m.resolve(8, "crate"), file(8));
        assert_eq!(m.resolve(9, "crate"), None);
        assert_eq!(
            m.resolve(0, "std.fs"),
            Some(Target::External("std.fs".to_string()))
        );
        assert_eq!(
            m.resolve(0, "reqwest.Client"),
            Some(Target::External("reqwest.Client".to_string()))
        );
        // Neither a module, a crate of the repository nor a dependency of the package.
        assert_eq!(m.resolve(0, "tokio.fs"), None);
        // No manifest: the nearest lib.rs is the crate, and other names are outside.
        assert_eq!(m.resolve(11, "crate"), file(10));
        assert_eq!(m.resolve(10, "util"), file(11));
        assert_eq!(
            m.resolve(11, "tokio.fs"),
            Some(Target::External("tokio.fs".to_string()))
        );
        assert_eq!(m.external_name("std.fs.File"), "std");
    }

    #[test]
    fn paths_start_at_crate_super_and_crate_names() {
        let roots = workspace();
        let m = modules(&roots);
        assert_eq!(m.path_root(2, "crate"), Some(Target::File(0)));
        assert_eq!(m.path_root(2, "super"), Some(Target::File(1)));
        assert_eq!(m.path_root(0, "billing_core"), Some(Target::File(5)));
        assert_eq!(
            m.path_root(0, "std"),
            Some(Target::External("std".to_string()))
        );
        assert_eq!(m.path_root(0, "store"), None);
        assert_eq!(m.path_root(0, "helper"), None);
    }
}
