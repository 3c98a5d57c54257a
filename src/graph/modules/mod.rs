//! Module systems: how a language's import specifiers name repository files. Each language's
//! `language.toml` picks one (`module_system`) and names the config files that define its roots
//! (`roots_from`); the graph build asks the chosen system, never the language.
//!
//! - `dotted` — dotted packages (`a.b.c`, relative `..x`), namespace packages, `src/` roots;
//! - `paths` — relative and absolute paths probed with the languages' extensions and index
//!   files, `baseUrl`/`paths` aliases from `tsconfig.json`;
//! - `go` — package directories named by the `go.mod` module path; a package's names are
//!   every definition of its directory's files;
//! - `crate` — Rust crates of `Cargo.toml` packages: `mod x;` files, paths from `crate`,
//!   `super`, `self` and the workspace's crate names; std and dependencies outside;
//! - `includes` — `#include` paths beside the including file and in the include roots above
//!   it (C, C++); names are the program's: one namespace, the linker's;
//! - `namespaces` — the package or namespace each file declares (Java, C#), wherever the file
//!   is; a namespace's names are the top-level types of the files declaring it;
//! - `psr4` — PHP namespaces mapped to directories by `composer.json` PSR-4 prefixes; a
//!   namespace's names are every definition of its directory's files, and `require` of a
//!   literal path names a file;
//! - `require` — Ruby's `require_relative` paths and `require` names on `lib/` load paths;
//!   constants are global: every file sees every file's top-level classes and modules.

mod crates;
mod dotted;
mod go;
mod includes;
mod namespaces;
mod paths;
mod psr4;
mod require;

use rustc_hash::FxHashMap as HashMap;
use serde::{Deserialize, Serialize};

use crate::extract::FileExtract;
use crate::languages::{Language, ModuleKind};

/// What a name stands for.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Target {
    /// A repository file (a module).
    File(usize),
    /// A package without a file of its own: a Python namespace package (dotted name) or a Go
    /// package directory, named as its module system names it.
    Package(ModuleKind, String),
    /// A definition: (file, symbol index in that file).
    Symbol(usize, usize),
    /// Something outside the repository, by dotted name.
    External(String),
}

/// What one config file (`tsconfig.json`, `go.mod`) says about the modules below its
/// directory, repository-relative.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Roots {
    /// The module system that reads the config.
    pub system: ModuleKind,
    /// Directory of the config: it applies to files below it.
    pub dir: String,
    /// Directory the `paths` targets are relative to.
    pub base_dir: String,
    /// Directory bare specifiers are also looked up in (`baseUrl`).
    pub base_url: Option<String>,
    /// A specifier matching an alias's pattern (one `*` at most) names its targets with the
    /// `*` part substituted, e.g. `@/*` → `src/*`, or go.mod's `example.com/app/*` → `*`.
    pub paths: Vec<Alias>,
    /// Namespaces (or types, for their members) every file below the directory imports
    /// without saying so (C#'s `<Using Include=…/>` items).
    #[serde(default)]
    pub usings: Vec<Using>,
    /// The properties the config sets (an MSBuild project's `<Name>value</Name>`), that the
    /// conditions of configs above it are evaluated with.
    #[serde(default)]
    pub properties: Vec<Property>,
    /// An MSBuild project's own file (a `.csproj`): the files below it, down to another
    /// project's, are one project, for which a source file's `global using` speaks.
    #[serde(default)]
    pub project: bool,
    /// The name of the package a `package.json` declares: the config is then not one of the
    /// directory's settings but a workspace package that bare specifiers naming it reach from
    /// anywhere in the repository, through `paths` (its `exports`, `main` and fallbacks).
    #[serde(default)]
    pub package: Option<String>,
}

/// A pattern of a config's `paths` (a Rust crate's name, a PHP namespace prefix) and the
/// targets it names.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Alias {
    pub pattern: String,
    pub targets: Vec<String>,
}

impl Alias {
    /// An alias of `pattern` for `targets`.
    pub fn new(pattern: impl Into<String>, targets: Vec<String>) -> Alias {
        Alias {
            pattern: pattern.into(),
            targets,
        }
    }
}

/// A namespace every file below a config imports, with the condition it is read under, if
/// any: a property and the value it must have.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Using {
    pub namespace: String,
    pub condition: Option<Property>,
}

/// A property of an MSBuild file and its value (set, or tested by a condition).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Property {
    pub name: String,
    pub value: String,
}

impl Roots {
    /// Empty roots of a system for a directory.
    pub fn new(system: ModuleKind, dir: &str) -> Roots {
        Roots {
            system,
            dir: dir.to_string(),
            base_dir: dir.to_string(),
            base_url: None,
            paths: Vec::new(),
            usings: Vec::new(),
            properties: Vec::new(),
            project: false,
            package: None,
        }
    }

    /// Whether the config applies to a repository-relative path.
    fn covers(&self, path: &str) -> bool {
        self.dir.is_empty() || path.starts_with(&format!("{}/", self.dir))
    }

    /// The targets a specifier names through `paths`, in order, `*` substituted.
    fn aliased(&self, spec: &str) -> Vec<String> {
        let mut found = Vec::new();
        for alias in &self.paths {
            let rest = match alias.pattern.split_once('*') {
                Some((prefix, suffix)) => spec
                    .strip_prefix(prefix)
                    .and_then(|r| r.strip_suffix(suffix)),
                None => (spec == alias.pattern).then_some(""),
            };
            let Some(rest) = rest else { continue };
            for target in &alias.targets {
                found.extend(normalise(&self.base_dir, &target.replace('*', rest)));
            }
        }
        found
    }
}

/// Reads one config file for the module system that declares it in `roots_from`; `None` when
/// the file says nothing this system uses (or cannot be read as such).
pub fn read_roots(system: ModuleKind, name: &str, dir: &str, text: &str) -> Option<Roots> {
    match system {
        ModuleKind::Dotted => None,
        ModuleKind::Paths if name == "package.json" => paths::read_package(text, dir),
        ModuleKind::Paths => paths::read_config(text, dir),
        ModuleKind::Go => go::read_go_mod(name, text, dir),
        ModuleKind::Psr4 => psr4::read_composer(name, text, dir),
        ModuleKind::Require => None,
        ModuleKind::Crate => crates::read_cargo_toml(name, text, dir),
        ModuleKind::Includes => None,
        ModuleKind::Namespaces => namespaces::read_msbuild(text, dir, name.ends_with(".csproj")),
    }
}

/// How one module system answers for the files of the languages that chose it. File indexes
/// are those of the whole build.
pub(super) trait ModuleSystem {
    /// What an import's module, as written in file `from`, names: a repository file or
    /// package, or an outside module; `None` for a repository module that is not there.
    fn resolve(&self, from: usize, spec: &str) -> Option<Target>;

    /// The external node an outside module is recorded under (`os.path` -> `os`).
    fn external_name<'s>(&self, module: &'s str) -> &'s str {
        module
    }

    /// The name a whole-module import without an alias binds, and what it stands for
    /// (`import a.b.c` binds `a`; Go's `import "x/y/z"` binds `z`).
    fn implicit_binding(
        &self,
        _from: usize,
        _spec: &str,
        _target: &Target,
    ) -> Option<(String, Target)> {
        None
    }

    /// A module or package inside a package (`pkg.sub` of a namespace package).
    fn package_member(&self, _package: &str, _name: &str) -> Option<Target> {
        None
    }

    /// The files whose top-level definitions are a package's names (Go: its directory's).
    fn package_files(&self, _package: &str) -> &[usize] {
        &[]
    }

    /// A submodule a file's module exposes as one of its names (`pkg/__init__.py`: `pkg.sub`).
    fn submodule(&self, _file: usize, _name: &str) -> Option<Target> {
        None
    }

    /// The package whose names a file sees without importing them (Go: its directory).
    fn own_package(&self, _file: usize) -> Option<Target> {
        None
    }

    /// What a file imports wholesale without saying so (C#'s project-wide usings), as
    /// import specifiers.
    fn implicit_imports(&self, _file: usize) -> &[String] {
        &[]
    }

    /// A name every file sees without importing it, where a path can start (Rust: `crate`,
    /// `super`, the repository's crates and the dependencies by name, the prelude; PHP: a
    /// namespace's first part, which a fully qualified `\App\Models\User` starts from). The
    /// file's own package's names come first.
    fn path_root(&self, _file: usize, _name: &str) -> Option<Target> {
        None
    }

    /// Whether a name that no file of a file's own package defines or binds at the top level
    /// is outside the repository: so in one flat namespace (C's program, where a library's
    /// functions are called by their bare names; Ruby's constants, `File`, `Net`), never where
    /// imports bind names.
    fn undefined_is_outside(&self, _name: &str) -> bool {
        false
    }
}

/// A file of a module system: its index in the build and its path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct SystemFile<'a> {
    pub index: usize,
    pub path: &'a str,
}

impl<'a> SystemFile<'a> {
    /// Files at the positions of their paths (0, 1, …).
    #[cfg(test)]
    pub fn numbered(paths: &[&'a str]) -> Vec<SystemFile<'a>> {
        paths
            .iter()
            .enumerate()
            .map(|(index, &path)| SystemFile { index, path })
            .collect()
    }
}

/// The files of one module system and what its languages say.
pub(super) struct SystemFiles<'a> {
    pub files: Vec<SystemFile<'a>>,
    pub languages: Vec<&'a Language>,
    pub roots: Vec<&'a Roots>,
    /// What each file declares (its package, its definitions), for systems that index files
    /// by declaration.
    pub extracts: HashMap<usize, &'a FileExtract>,
}

impl<'a> SystemFiles<'a> {
    /// Each file's path by its index.
    fn paths(&self) -> HashMap<usize, &'a str> {
        self.files.iter().map(|f| (f.index, f.path)).collect()
    }

    /// Each file's index by its path.
    fn by_path(&self) -> HashMap<&'a str, usize> {
        self.files.iter().map(|f| (f.path, f.index)).collect()
    }

    /// The files in the order of their paths.
    fn sorted_by_path(&self) -> Vec<SystemFile<'a>> {
        let mut files = self.files.clone();
        files.sort_by_key(|f| f.path);
        files
    }
}

/// Module tables kept between the quick patches of one index (see `build_focused`): those
/// made from the files' paths alone, used again while the paths and their positions are the
/// same (a save changes a file's text, seldom which files there are). Python's table of
/// dotted names over 50,000 files took a fifth of each patch.
#[derive(Default)]
pub struct Kept {
    dotted: Option<KeptDotted>,
    /// Counts the changes of the files' paths and module roots, once the owner tells of
    /// them (see `graph::Kept`): a table made at the same count is taken without the key.
    layout: Option<u64>,
}

impl Kept {
    /// The files' paths or the module roots changed (and from now on the owner says so).
    pub(in crate::graph) fn paths_changed(&mut self) {
        self.layout = Some(self.layout.map_or(0, |n| n + 1));
    }
}

/// A dotted table and the [`dotted::DottedModules::key`] of what it was made from.
struct KeptDotted {
    made_from: u128,
    /// The [`Kept::layout`] it was made at.
    layout: Option<u64>,
    table: std::sync::Arc<dotted::DottedModules>,
}

/// Builds the module system of a kind over its files, or takes the one `kept` holds for
/// the same files.
pub(super) fn system<'a>(
    kind: ModuleKind,
    input: SystemFiles<'a>,
    kept: Option<&mut Kept>,
) -> Box<dyn ModuleSystem + 'a> {
    match kind {
        ModuleKind::Dotted => match kept {
            None => Box::new(dotted::DottedModules::new(&input)),
            Some(kept) => {
                if let Some(dotted) = &kept.dotted
                    && kept.layout.is_some()
                    && dotted.layout == kept.layout
                {
                    return Box::new(dotted.table.clone());
                }
                let key = dotted::DottedModules::key(&input);
                match &mut kept.dotted {
                    Some(dotted) if dotted.made_from == key => {
                        dotted.layout = kept.layout;
                        Box::new(dotted.table.clone())
                    }
                    _ => {
                        let table = std::sync::Arc::new(dotted::DottedModules::new(&input));
                        kept.dotted = Some(KeptDotted {
                            made_from: key,
                            layout: kept.layout,
                            table: table.clone(),
                        });
                        Box::new(table)
                    }
                }
            }
        },
        ModuleKind::Paths => Box::new(paths::PathModules::new(input)),
        ModuleKind::Go => Box::new(go::GoModules::new(input)),
        ModuleKind::Psr4 => Box::new(psr4::Psr4Modules::new(input)),
        ModuleKind::Require => Box::new(require::RequireModules::new(input)),
        ModuleKind::Crate => Box::new(crates::CrateModules::new(input)),
        ModuleKind::Includes => Box::new(includes::IncludeModules::new(input)),
        ModuleKind::Namespaces => Box::new(namespaces::Namespaces::new(input)),
    }
}

/// A shared system answers as the system itself.
impl<T: ModuleSystem + ?Sized> ModuleSystem for std::sync::Arc<T> {
    fn resolve(&self, from: usize, spec: &str) -> Option<Target> {
        (**self).resolve(from, spec)
    }

    fn external_name<'s>(&self, module: &'s str) -> &'s str {
        (**self).external_name(module)
    }

    fn implicit_binding(
        &self,
        from: usize,
        spec: &str,
        target: &Target,
    ) -> Option<(String, Target)> {
        (**self).implicit_binding(from, spec, target)
    }

    fn package_member(&self, package: &str, name: &str) -> Option<Target> {
        (**self).package_member(package, name)
    }

    fn package_files(&self, package: &str) -> &[usize] {
        (**self).package_files(package)
    }

    fn submodule(&self, file: usize, name: &str) -> Option<Target> {
        (**self).submodule(file, name)
    }

    fn own_package(&self, file: usize) -> Option<Target> {
        (**self).own_package(file)
    }

    fn implicit_imports(&self, file: usize) -> &[String] {
        (**self).implicit_imports(file)
    }

    fn path_root(&self, file: usize, name: &str) -> Option<Target> {
        (**self).path_root(file, name)
    }

    fn undefined_is_outside(&self, name: &str) -> bool {
        (**self).undefined_is_outside(name)
    }
}

/// The directory of a repository-relative path (`""` at the root).
fn parent(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(dir, _)| dir)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::languages::Registry;

    #[test]
    fn a_kept_table_serves_the_same_files_only() {
        let python = Registry::get().by_name("python").unwrap();
        let input = |files: &[(usize, &'static str)]| SystemFiles {
            files: files
                .iter()
                .map(|&(index, path)| SystemFile { index, path })
                .collect(),
            languages: vec![python],
            roots: Vec::new(),
            extracts: HashMap::default(),
        };
        let kept_table = |kept: &Kept| kept.dotted.as_ref().unwrap().table.clone();
        let pkg = [(0, "pkg/__init__.py"), (1, "pkg/a.py")];
        let mut kept = Kept::default();
        let first = system(ModuleKind::Dotted, input(&pkg), Some(&mut kept));
        let table = kept_table(&kept);
        assert!(matches!(first.resolve(1, "pkg"), Some(Target::File(0))));
        system(ModuleKind::Dotted, input(&pkg), Some(&mut kept));
        assert!(std::sync::Arc::ptr_eq(&kept_table(&kept), &table));
        // Another file, or the same files at other positions: made again.
        for other in [
            vec![(0, "pkg/__init__.py"), (1, "pkg/a.py"), (2, "pkg/b.py")],
            vec![(1, "pkg/__init__.py"), (0, "pkg/a.py")],
        ] {
            let system = system(ModuleKind::Dotted, input(&other), Some(&mut kept));
            assert!(!std::sync::Arc::ptr_eq(&kept_table(&kept), &table));
            let init = other[0].0;
            assert!(matches!(system.resolve(1, "pkg"), Some(Target::File(i)) if i == init));
        }
    }
}
