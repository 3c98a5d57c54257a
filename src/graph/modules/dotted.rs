//! Dotted packages (Python's module system): dotted module names to files, with packages,
//! namespace packages, `src/`-style roots and relative imports.

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use super::{ModuleSystem, SystemFile, SystemFiles, Target, parent};
use crate::languages::ModuleKind;

/// Where every module of the repository lives.
#[derive(Default)]
pub(crate) struct DottedModules {
    /// Dotted name -> the files of that name, each under its root.
    by_name: HashMap<String, Vec<RootedFile>>,
    /// Every dotted prefix of a module name (packages, namespace packages included).
    packages: HashSet<String>,
    /// File index -> its module's name.
    names: HashMap<usize, ModuleName>,
    /// File index -> its path.
    paths: HashMap<usize, String>,
    /// Path without extension (packages: their directory) -> file index.
    by_stem: HashMap<String, usize>,
}

/// A file a dotted name names, under the root directory the name is relative to.
struct RootedFile {
    root: String,
    file: usize,
}

/// A file's module: the root directory its name is relative to, and its dotted name under
/// that root.
struct ModuleName {
    root: String,
    dotted: String,
}

/// The source roots of the languages using dotted packages, in order.
fn source_roots(input: &SystemFiles) -> Vec<String> {
    let mut roots: Vec<String> = input
        .languages
        .iter()
        .flat_map(|l| l.spec.source_roots.iter().cloned())
        .collect();
    roots.sort();
    roots.dedup();
    roots
}

fn join(dir: &str, rest: &str) -> String {
    match (dir.is_empty(), rest.is_empty()) {
        (true, _) => rest.to_string(),
        (_, true) => dir.to_string(),
        _ => format!("{dir}/{rest}"),
    }
}

impl DottedModules {
    /// Indexes the files of the languages using dotted packages; their `source_roots` are
    /// extra roots that are tried for every file below them.
    pub fn new(input: &SystemFiles) -> DottedModules {
        DottedModules::of(&input.files, &source_roots(input))
    }

    /// What the table of `input` is made from, as one number: the files' positions and
    /// paths and the source roots.
    pub fn key(input: &SystemFiles) -> u128 {
        let mut hasher = xxhash_rust::xxh3::Xxh3::new();
        for root in source_roots(input) {
            hasher.update(root.as_bytes());
            hasher.update(b"\0");
        }
        hasher.update(b"\x01");
        for file in &input.files {
            hasher.update(&file.index.to_le_bytes());
            hasher.update(file.path.as_bytes());
            hasher.update(b"\0");
        }
        hasher.digest128()
    }

    fn of(files: &[SystemFile], source_roots: &[String]) -> DottedModules {
        let package_dirs: HashSet<&str> = files
            .iter()
            .map(|f| f.path)
            .filter(|p| p.ends_with("/__init__.py") || *p == "__init__.py")
            .map(parent)
            .collect();
        let mut modules = DottedModules::default();
        let mut ordered: Vec<&SystemFile> = files.iter().collect();
        // A `.py` file wins over a `.pyi` stub of the same module.
        ordered.sort_by_key(|f| (f.path.ends_with(".pyi"), f.path));
        for &&SystemFile { index, path } in &ordered {
            let stem = path.rsplit_once('.').map_or(path, |(s, _)| s);
            let stem = stem.strip_suffix("/__init__").unwrap_or(stem);
            let stem = if stem == "__init__" { "" } else { stem };
            // The top of the package chain: the first directory upwards that is not a package.
            let mut top = parent(path);
            while !top.is_empty() && package_dirs.contains(top) {
                top = parent(top);
            }
            let mut roots: Vec<&str> = vec!["", top];
            roots.extend(
                source_roots
                    .iter()
                    .map(String::as_str)
                    .filter(|r| path.starts_with(&format!("{r}/"))),
            );
            roots.dedup();
            for root in roots {
                let relative = if root.is_empty() {
                    stem
                } else {
                    match stem.strip_prefix(root) {
                        Some(rest) => rest.trim_start_matches('/'),
                        None => continue,
                    }
                };
                if relative.is_empty() || relative.split('/').any(|part| part.contains('.')) {
                    continue;
                }
                let dotted = relative.replace('/', ".");
                let mut prefix = String::new();
                for part in dotted.split('.') {
                    if !prefix.is_empty() {
                        prefix.push('.');
                    }
                    prefix.push_str(part);
                    modules.packages.insert(prefix.clone());
                }
                let entries = modules.by_name.entry(dotted.clone()).or_default();
                if !entries.iter().any(|e| e.root == root) {
                    entries.push(RootedFile {
                        root: root.to_string(),
                        file: index,
                    });
                }
                if root == top || !modules.names.contains_key(&index) {
                    let root = root.to_string();
                    modules.names.insert(index, ModuleName { root, dotted });
                }
            }
            modules.paths.insert(index, path.to_string());
            modules.by_stem.entry(stem.to_string()).or_insert(index);
        }
        modules
    }

    /// Resolves an absolute dotted module name as imported from file `from`.
    pub fn absolute(&self, from: usize, dotted: &str) -> Option<Target> {
        if let Some(entries) = self.by_name.get(dotted) {
            if let [only] = entries.as_slice() {
                return Some(Target::File(only.file));
            }
            let own_root = self.names.get(&from).map(|name| name.root.as_str());
            let pick = entries
                .iter()
                .find(|e| Some(e.root.as_str()) == own_root)
                .or_else(|| entries.iter().find(|e| e.root.is_empty()));
            return pick.map(|e| Target::File(e.file));
        }
        self.packages
            .contains(dotted)
            .then(|| Target::Package(ModuleKind::Dotted, dotted.to_string()))
    }

    /// Resolves `from <dots><rest> import …` relative to file `from`.
    pub fn relative(&self, from: usize, spec: &str) -> Option<Target> {
        let dots = spec.chars().take_while(|&c| c == '.').count();
        let rest = &spec[dots..];
        let path = self.paths.get(&from)?;
        let mut dir = parent(path).to_string();
        for _ in 1..dots {
            if dir.is_empty() {
                return None;
            }
            dir = parent(&dir).to_string();
        }
        let target_dir = join(&dir, &rest.replace('.', "/"));
        self.by_path(&target_dir)
    }

    /// The module at a path without extension: `a/b` is `a/b.py`, the package `a/b/`, or a
    /// namespace package.
    fn by_path(&self, stem: &str) -> Option<Target> {
        if let Some(&index) = self.by_stem.get(stem) {
            return Some(Target::File(index));
        }
        let dotted = stem.replace('/', ".");
        self.packages
            .contains(&dotted)
            .then_some(Target::Package(ModuleKind::Dotted, dotted))
    }

    /// The dotted name of a file's module, if it is a Python module.
    pub fn name_of(&self, file: usize) -> Option<&str> {
        self.names.get(&file).map(|name| name.dotted.as_str())
    }
}

impl ModuleSystem for DottedModules {
    /// `..x` relative to the importing file (`None` if it is not there); an absolute name not
    /// in the repository is outside it.
    fn resolve(&self, from: usize, spec: &str) -> Option<Target> {
        if spec.starts_with('.') {
            self.relative(from, spec)
        } else {
            self.absolute(from, spec)
                .or_else(|| Some(Target::External(spec.to_string())))
        }
    }

    /// `os.path` is recorded as `os`.
    fn external_name<'s>(&self, module: &'s str) -> &'s str {
        module.split('.').next().unwrap_or(module)
    }

    /// `import a.b.c` binds `a`.
    fn implicit_binding(&self, from: usize, spec: &str, _: &Target) -> Option<(String, Target)> {
        let top = spec.split('.').next().unwrap_or_default();
        let target = self
            .absolute(from, top)
            .unwrap_or_else(|| Target::External(top.to_string()));
        Some((top.to_string(), target))
    }

    fn package_member(&self, package: &str, name: &str) -> Option<Target> {
        self.absolute(usize::MAX, &format!("{package}.{name}"))
    }

    fn submodule(&self, file: usize, name: &str) -> Option<Target> {
        let dotted = self.name_of(file)?;
        self.absolute(file, &format!("{dotted}.{name}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn modules(paths: &[&str]) -> DottedModules {
        DottedModules::of(&SystemFile::numbered(paths), &["src".to_string()])
    }

    #[test]
    fn absolute_imports_find_packages_modules_and_src_layouts() {
        let m = modules(&[
            "src/flask/__init__.py",
            "src/flask/app.py",
            "tests/test_app.py",
            "django/db/models/base.py",
            "django/db/models/__init__.py",
            "django/db/__init__.py",
            "django/__init__.py",
        ]);
        assert_eq!(m.absolute(2, "flask"), Some(Target::File(0)));
        assert_eq!(m.absolute(2, "flask.app"), Some(Target::File(1)));
        assert_eq!(
            m.absolute(0, "django.db.models.base"),
            Some(Target::File(3))
        );
        assert_eq!(m.absolute(0, "django.db.models"), Some(Target::File(4)));
        assert_eq!(m.absolute(0, "requests"), None);
    }

    #[test]
    fn relative_imports_climb_packages() {
        let m = modules(&[
            "pkg/__init__.py",
            "pkg/sub/__init__.py",
            "pkg/sub/a.py",
            "pkg/b.py",
        ]);
        assert_eq!(m.relative(2, ".."), Some(Target::File(0)));
        assert_eq!(m.relative(2, "..b"), Some(Target::File(3)));
        assert_eq!(m.relative(2, "."), Some(Target::File(1)));
        assert_eq!(m.relative(1, ".a"), Some(Target::File(2)));
        assert_eq!(m.relative(2, "...."), None);
    }

    #[test]
    fn ambiguous_top_level_names_are_not_guessed() {
        let m = modules(&[
            "tools/a/utils.py",
            "tools/b/utils.py",
            "tools/a/run.py",
            "other/main.py",
        ]);
        assert_eq!(m.absolute(2, "utils"), Some(Target::File(0)));
        assert_eq!(m.absolute(1, "utils"), Some(Target::File(1)));
        assert_eq!(m.absolute(3, "utils"), None);
    }
}
