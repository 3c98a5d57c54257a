//! Package directories (Go's module system): an import path below a `go.mod` module path names
//! the directory under that `go.mod`; the package's names are the top-level definitions of
//! every file in the directory, and a file sees its own package's names without importing them.

use rustc_hash::FxHashMap as HashMap;

use super::{Alias, ModuleSystem, Roots, SystemFiles, Target, parent};
use crate::languages::ModuleKind;

/// Where every package of the repository lives.
pub(crate) struct GoModules<'a> {
    /// Directory -> its files, in path order.
    by_dir: HashMap<&'a str, Vec<usize>>,
    paths: HashMap<usize, &'a str>,
    roots: Vec<&'a Roots>,
}

impl<'a> GoModules<'a> {
    pub fn new(input: SystemFiles<'a>) -> Self {
        let mut by_dir: HashMap<&'a str, Vec<usize>> = HashMap::default();
        for file in input.sorted_by_path() {
            by_dir
                .entry(parent(file.path))
                .or_default()
                .push(file.index);
        }
        GoModules {
            by_dir,
            paths: input.paths(),
            roots: input.roots,
        }
    }
}

impl ModuleSystem for GoModules<'_> {
    /// A path below a module path is a repository package (`None` when its directory holds no
    /// Go file); any other path is outside (the standard library, a dependency).
    fn resolve(&self, _from: usize, spec: &str) -> Option<Target> {
        let mut named = false;
        for roots in &self.roots {
            for dir in roots.aliased(spec) {
                named = true;
                if self.by_dir.contains_key(dir.as_str()) {
                    return Some(Target::Package(ModuleKind::Go, dir));
                }
            }
        }
        (!named).then(|| Target::External(spec.to_string()))
    }

    /// An import binds the package's name: the last element of its path, without a major
    /// version (`/v2`, `.v3`) or a `go-` style prefix.
    fn implicit_binding(
        &self,
        _from: usize,
        spec: &str,
        target: &Target,
    ) -> Option<(String, Target)> {
        let last = spec
            .rsplit('/')
            .find(|part| !is_major_version(part))
            .unwrap_or(spec);
        // `yaml.v3` -> yaml, `kafka-go` / `nats.go` -> kafka / nats, `go-isatty` -> isatty.
        let last = match last.rsplit_once(".v") {
            Some((name, version)) if is_major_version(&format!("v{version}")) => name,
            _ => last,
        };
        let last = last
            .strip_suffix("-go")
            .or_else(|| last.strip_suffix(".go"))
            .unwrap_or(last);
        let last = last
            .strip_prefix("go-")
            .or_else(|| last.strip_prefix("go."))
            .unwrap_or(last);
        let name = last.rsplit(['-', '.']).next().unwrap_or(last);
        Some((name.to_string(), target.clone()))
    }

    fn package_files(&self, package: &str) -> &[usize] {
        self.by_dir.get(package).map_or(&[], Vec::as_slice)
    }

    fn own_package(&self, file: usize) -> Option<Target> {
        let path = self.paths.get(&file)?;
        Some(Target::Package(ModuleKind::Go, parent(path).to_string()))
    }
}

/// `v2`, `v10`: a module's major version element, not a package name.
fn is_major_version(part: &str) -> bool {
    part.strip_prefix('v')
        .is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
}

/// Reads a `go.mod`: its module path names the directory it is in, and paths below it the
/// directories below.
pub(crate) fn read_go_mod(name: &str, text: &str, dir: &str) -> Option<Roots> {
    if name != "go.mod" {
        return None;
    }
    let module = text.lines().find_map(|line| {
        let line = line.split("//").next().unwrap_or_default().trim();
        let rest = line.strip_prefix("module")?;
        rest.starts_with(char::is_whitespace)
            .then(|| rest.trim().trim_matches('"').to_string())
    })?;
    if module.is_empty() {
        return None;
    }
    Some(Roots {
        paths: vec![
            Alias::new(module.clone(), vec![String::new()]),
            Alias::new(format!("{module}/*"), vec!["*".to_string()]),
        ],
        ..Roots::new(ModuleKind::Go, dir)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::modules::SystemFile;

    fn modules<'a>(paths: &[&'a str], roots: &'a [Roots]) -> GoModules<'a> {
        GoModules::new(SystemFiles {
            files: SystemFile::numbered(paths),
            languages: Vec::new(),
            roots: roots.iter().collect(),
            extracts: Default::default(),
        })
    }

    #[test]
    fn module_paths_name_package_directories() {
        let roots = [
            read_go_mod(
                "go.mod",
                "// app\nmodule example.com/app // main\n\ngo 1.22\n",
                "",
            )
            .unwrap(),
            read_go_mod("go.mod", "module \"example.com/tool\"\n", "tools/gen").unwrap(),
        ];
        let m = modules(
            &["main.go", "internal/store/db.go", "tools/gen/main.go"],
            &roots,
        );
        let package = |dir: &str| Some(Target::Package(ModuleKind::Go, dir.to_string()));
        assert_eq!(
            m.resolve(0, "example.com/app/internal/store"),
            package("internal/store")
        );
        assert_eq!(m.resolve(0, "example.com/app"), package(""));
        assert_eq!(m.resolve(0, "example.com/tool"), package("tools/gen"));
        assert_eq!(m.resolve(0, "example.com/app/missing"), None);
        assert_eq!(
            m.resolve(0, "net/http"),
            Some(Target::External("net/http".to_string()))
        );
        assert_eq!(m.package_files("internal/store"), &[1]);
        assert_eq!(m.own_package(1), package("internal/store"));
    }

    #[test]
    fn imports_bind_the_package_name() {
        let m = modules(&[], &[]);
        let target = Target::External(String::new());
        let bound = |spec: &str| m.implicit_binding(0, spec, &target).unwrap().0;
        assert_eq!(bound("net/http"), "http");
        assert_eq!(bound("fmt"), "fmt");
        assert_eq!(bound("github.com/jackc/pgx/v5"), "pgx");
        assert_eq!(bound("gopkg.in/yaml.v3"), "yaml");
        assert_eq!(bound("github.com/mattn/go-sqlite3"), "sqlite3");
        assert_eq!(bound("github.com/segmentio/kafka-go"), "kafka");
        assert_eq!(bound("github.com/nats-io/nats.go"), "nats");
        assert_eq!(bound("github.com/stripe/stripe-go/v76"), "stripe");
        assert_eq!(bound("example.com/pkg/api.vendor"), "vendor");
    }

    #[test]
    fn a_go_mod_without_a_module_line_says_nothing() {
        assert_eq!(read_go_mod("go.mod", "go 1.22\n", ""), None);
        assert_eq!(read_go_mod("go.sum", "module x\n", ""), None);
    }
}
