//! PHP namespaces under PSR-4 (`composer.json` `autoload` and `autoload-dev`): a prefix such as
//! `App\` names a directory (`src/`), so the namespace `App\Models` is the directory
//! `src/Models` and its names are the definitions of that directory's files. A file sees the
//! names of the namespace it declares; a namespace no repository directory holds is outside;
//! `require` and `include` of a literal path name a file relative to the including one. Names
//! arrive dotted (`App.Models`): extraction reads PHP's `\` as `.`.

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use super::{Alias, ModuleSystem, Roots, SystemFile, SystemFiles, Target, normalise, parent};
use crate::extract::FileExtract;
use crate::languages::ModuleKind;

/// Most prefixes, and directories per prefix, taken from one `composer.json`.
const MAX_PREFIXES: usize = 256;
const MAX_DIRECTORIES: usize = 16;

/// Where every namespace of the repository lives.
pub(crate) struct Psr4Modules<'a> {
    /// Namespace (dotted) -> the files directly in its directories, in path order.
    namespaces: HashMap<String, Vec<usize>>,
    /// Every namespace and each of its leading parts (`App`, `App.Models`).
    known: HashSet<String>,
    /// File -> its namespace, for files under a PSR-4 directory.
    file_namespaces: HashMap<usize, String>,
    by_path: HashMap<&'a str, usize>,
    paths: HashMap<usize, &'a str>,
}

impl<'a> Psr4Modules<'a> {
    pub fn new(input: SystemFiles<'a>) -> Self {
        // (prefix, directory) pairs, the deepest directory first: a file belongs to the most
        // specific mapping that covers it.
        let mut mappings: Vec<(String, String)> = Vec::new();
        for roots in &input.roots {
            for alias in &roots.paths {
                let prefix = alias.pattern.trim_end_matches('*').trim_end_matches('.');
                for target in &alias.targets {
                    let Some(dir) = normalise(&roots.base_dir, target.trim_end_matches('*')) else {
                        continue;
                    };
                    mappings.push((prefix.to_string(), dir));
                }
            }
        }
        mappings.sort_by_key(|(_, dir)| std::cmp::Reverse(dir.len()));
        let mut modules = Psr4Modules {
            namespaces: HashMap::default(),
            known: HashSet::default(),
            file_namespaces: HashMap::default(),
            by_path: input.by_path(),
            paths: input.paths(),
        };
        for SystemFile { index, path } in input.sorted_by_path() {
            let under_prefix = mappings
                .iter()
                .find_map(|(prefix, dir)| namespace_of(prefix, dir, path));
            // PHP reads a file's names in the namespace it declares, wherever it is: a test in
            // `tests/Routing/` that says `namespace App\Tests;` sees `App\Tests`'s classes.
            let declared = input.extracts.get(&index).and_then(|e| declared(e));
            let Some(namespace) = declared.filter(|_| under_prefix.is_some()).or(under_prefix)
            else {
                continue;
            };
            modules.add(index, namespace);
        }
        modules
    }

    fn add(&mut self, file: usize, namespace: String) {
        let mut part = namespace.as_str();
        loop {
            self.known.insert(part.to_string());
            match part.rsplit_once('.') {
                Some((head, _)) => part = head,
                None => break,
            }
        }
        self.namespaces
            .entry(namespace.clone())
            .or_default()
            .push(file);
        self.file_namespaces.insert(file, namespace);
    }

    /// A literal path of `require`/`include`, relative to the including file (`__DIR__ .
    /// '/x.php'` arrives as `/x.php`).
    fn path(&self, from: usize, spec: &str) -> Option<Target> {
        let dir = parent(self.paths.get(&from)?);
        let path = normalise(dir, spec.trim_start_matches('/'))?;
        self.by_path.get(path.as_str()).map(|&i| Target::File(i))
    }
}

/// The namespace of a file under a PSR-4 directory: the prefix, then the directories below.
fn namespace_of(prefix: &str, dir: &str, path: &str) -> Option<String> {
    let relative = if dir.is_empty() {
        path
    } else {
        path.strip_prefix(dir)?.strip_prefix('/')?
    };
    let below = parent(relative);
    if below.split('/').any(|part| part.contains('.')) {
        return None;
    }
    Some(match (prefix.is_empty(), below.is_empty()) {
        (_, true) => prefix.to_string(),
        (true, false) => below.replace('/', "."),
        (false, false) => format!("{prefix}.{}", below.replace('/', ".")),
    })
}

/// The one namespace a file declares, if it declares exactly one.
fn declared(extract: &FileExtract) -> Option<String> {
    let (first, rest) = extract.packages.split_first()?;
    rest.iter().all(|p| p == first).then(|| first.clone())
}

/// Whether an import names a file (`require 'lib/util.php'`) rather than a namespace.
fn is_path(spec: &str) -> bool {
    spec.contains('/') || spec.ends_with(".php") || spec.ends_with(".inc")
}

impl ModuleSystem for Psr4Modules<'_> {
    /// A repository namespace, a required file, or an outside namespace (a dependency, PHP's
    /// own classes). A namespace no repository directory holds is outside even below the
    /// repository's own prefix: Composer looks for its classes in the packages that map it
    /// (slim/http's `Slim\Http\` beside the project's `Slim\`).
    fn resolve(&self, from: usize, spec: &str) -> Option<Target> {
        if is_path(spec) {
            return self.path(from, spec);
        }
        Some(if self.known.contains(spec) {
            Target::Package(ModuleKind::Psr4, spec.to_string())
        } else {
            Target::External(spec.to_string())
        })
    }

    /// `Illuminate.Support.Facades` is recorded as `Illuminate.Support` (vendor and package).
    fn external_name<'s>(&self, module: &'s str) -> &'s str {
        match module.match_indices('.').nth(1) {
            Some((end, _)) => &module[..end],
            None => module,
        }
    }

    fn package_member(&self, package: &str, name: &str) -> Option<Target> {
        let namespace = format!("{package}.{name}");
        self.known
            .contains(&namespace)
            .then_some(Target::Package(ModuleKind::Psr4, namespace))
    }

    fn package_files(&self, package: &str) -> &[usize] {
        self.namespaces.get(package).map_or(&[], Vec::as_slice)
    }

    fn own_package(&self, file: usize) -> Option<Target> {
        let namespace = self.file_namespaces.get(&file)?;
        Some(Target::Package(ModuleKind::Psr4, namespace.clone()))
    }

    /// A namespace's first part (`App` of `\App\Models\User`) is seen from every file.
    fn path_root(&self, _file: usize, name: &str) -> Option<Target> {
        self.known
            .contains(name)
            .then(|| Target::Package(ModuleKind::Psr4, name.to_string()))
    }
}

/// Reads a `composer.json`: the `psr-4` prefixes of `autoload` and `autoload-dev`, each as
/// (`App\*`, [`src/*`]) relative to the file's directory (the text is bounded where it is
/// read: `index::roots`). Malformed or without PSR-4: nothing (the namespaces are then
/// outside the repository).
pub(crate) fn read_composer(name: &str, text: &str, dir: &str) -> Option<Roots> {
    if name != "composer.json" {
        return None;
    }
    let value: serde_json::Value = serde_json::from_str(text).ok()?;
    let mut paths = Vec::new();
    for section in ["autoload", "autoload-dev"] {
        let Some(prefixes) = value
            .get(section)
            .and_then(|s| s.get("psr-4"))
            .and_then(|p| p.as_object())
        else {
            continue;
        };
        for (prefix, targets) in prefixes.iter().take(MAX_PREFIXES) {
            let targets: Vec<String> = match targets {
                serde_json::Value::String(one) => vec![one.clone()],
                serde_json::Value::Array(many) => many
                    .iter()
                    .filter_map(|t| t.as_str())
                    .take(MAX_DIRECTORIES)
                    .map(str::to_string)
                    .collect(),
                _ => continue,
            };
            let prefix = prefix.trim_matches('\\').replace('\\', ".");
            let pattern = if prefix.is_empty() {
                "*".to_string()
            } else {
                format!("{prefix}.*")
            };
            let targets = targets
                .iter()
                .map(|t| t.trim_start_matches("./").trim_end_matches('/'))
                .map(|t| {
                    if t == "." {
                        "*".to_string()
                    } else {
                        format!("{t}/*")
                    }
                })
                .map(|t| t.trim_start_matches('/').to_string())
                .collect();
            paths.push(Alias::new(pattern, targets));
        }
    }
    if paths.is_empty() {
        return None;
    }
    Some(Roots {
        paths,
        ..Roots::new(ModuleKind::Psr4, dir)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn modules<'a>(paths: &[&'a str], roots: &'a [Roots]) -> Psr4Modules<'a> {
        Psr4Modules::new(SystemFiles {
            files: SystemFile::numbered(paths),
            languages: Vec::new(),
            roots: roots.iter().collect(),
            extracts: Default::default(),
        })
    }

    fn package(namespace: &str) -> Option<Target> {
        Some(Target::Package(ModuleKind::Psr4, namespace.to_string()))
    }

    #[test]
    fn prefixes_name_directories() {
        let roots = [read_composer(
            "composer.json",
            r#"{"autoload": {"psr-4": {"App\\": "src/", "Acme\\Blog\\": ["lib", "extra/"]}},
               "autoload-dev": {"psr-4": {"Tests\\": "tests/"}}}"#,
            "",
        )
        .unwrap()];
        let m = modules(
            &[
                "src/Models/User.php",
                "src/Kernel.php",
                "lib/Post.php",
                "extra/Http/Feed.php",
                "tests/Unit/UserTest.php",
                "bin/console.php",
            ],
            &roots,
        );
        assert_eq!(m.resolve(5, "App.Models"), package("App.Models"));
        assert_eq!(m.resolve(5, "App"), package("App"));
        assert_eq!(m.resolve(5, "Acme.Blog.Http"), package("Acme.Blog.Http"));
        // Below the project's prefix but in no directory of it: another package's.
        assert_eq!(
            m.resolve(5, "App.Http"),
            Some(Target::External("App.Http".to_string()))
        );
        assert_eq!(
            m.resolve(5, "GuzzleHttp"),
            Some(Target::External("GuzzleHttp".to_string()))
        );
        assert_eq!(m.package_files("App.Models"), &[0]);
        assert_eq!(m.package_files("Acme.Blog"), &[2]);
        assert_eq!(m.own_package(4), package("Tests.Unit"));
        assert_eq!(m.own_package(5), None);
        assert_eq!(m.path_root(0, "Acme"), package("Acme"));
        assert_eq!(m.path_root(0, "Models"), None);
        assert_eq!(m.package_member("App", "Models"), package("App.Models"));
        assert_eq!(
            m.external_name("Illuminate.Support.Facades"),
            "Illuminate.Support"
        );
    }

    #[test]
    fn a_file_is_read_in_the_namespace_it_declares() {
        let roots = [read_composer(
            "composer.json",
            r#"{"autoload-dev": {"psr-4": {"App\\Tests\\": "tests/"}}}"#,
            "",
        )
        .unwrap()];
        let declares = FileExtract {
            packages: vec!["App.Tests".to_string()],
            ..Default::default()
        };
        let plain = FileExtract::default();
        let m = Psr4Modules::new(SystemFiles {
            files: SystemFile::numbered(&[
                "tests/Routing/RouteTest.php",
                "tests/Unit/UserTest.php",
                "bin/tool.php",
            ]),
            languages: Vec::new(),
            roots: roots.iter().collect(),
            extracts: [(0, &declares), (1, &plain), (2, &declares)]
                .into_iter()
                .collect(),
        });
        assert_eq!(m.own_package(0), package("App.Tests"));
        assert_eq!(m.own_package(1), package("App.Tests.Unit"));
        // Outside every PSR-4 directory: not a namespace of the repository's.
        assert_eq!(m.own_package(2), None);
    }

    #[test]
    fn required_paths_are_relative_to_the_file() {
        let m = modules(
            &["public/index.php", "bootstrap/app.php", "public/lib.php"],
            &[],
        );
        assert_eq!(m.resolve(0, "/../bootstrap/app.php"), Some(Target::File(1)));
        assert_eq!(m.resolve(0, "lib.php"), Some(Target::File(2)));
        assert_eq!(m.resolve(0, "../../../etc/passwd.php"), None);
        assert_eq!(m.resolve(0, "missing.php"), None);
    }

    #[test]
    fn hostile_composer_files_say_nothing() {
        assert_eq!(read_composer("composer.json", "{not json", ""), None);
        assert_eq!(
            read_composer("composer.json", r#"{"autoload": 3}"#, ""),
            None
        );
        assert_eq!(
            read_composer(
                "composer.json",
                r#"{"autoload": {"psr-4": {"A\\": 7}}}"#,
                ""
            ),
            None
        );
        assert_eq!(read_composer("package.json", "{}", ""), None);
        let climbing = read_composer(
            "composer.json",
            r#"{"autoload": {"psr-4": {"A\\": "../../outside"}}}"#,
            "pkg",
        )
        .unwrap();
        let m = modules(&["pkg/a.php"], std::slice::from_ref(&climbing));
        // A directory outside the repository: the namespace is outside too.
        assert_eq!(m.resolve(0, "A"), Some(Target::External("A".to_string())));
    }
}
