//! Reading the config files that define module roots (`tsconfig.json`, `go.mod`, …): which
//! names are configs is each language's `roots_from`, and what a config says is read by the
//! module system of the language that names it.

use crate::fsutil::repo::{Limit, RepoFiles};
use crate::graph::{Roots, modules};
use crate::languages::{ModuleKind, Registry};

/// The module systems that read a config file of this name (none: it is not a config).
fn systems_reading(name: &str) -> Vec<ModuleKind> {
    let mut systems: Vec<ModuleKind> = Registry::get()
        .all()
        .iter()
        .filter(|l| l.spec.roots_from.iter().any(|r| names_config(r, name)))
        .map(|l| l.module_system)
        .collect();
    systems.sort();
    systems.dedup();
    systems
}

/// Whether a `roots_from` entry names a file: its exact name, or `*.ext` any name ending so.
fn names_config(entry: &str, name: &str) -> bool {
    match entry.strip_prefix('*') {
        Some(suffix) => name.len() > suffix.len() && name.ends_with(suffix),
        None => entry == name,
    }
}

/// Whether a file name is a config some language's module system reads.
pub(crate) fn is_config(name: &str) -> bool {
    !systems_reading(name).is_empty()
}

/// The roots of every readable config (repository-relative paths); a config too large,
/// not UTF-8 or leading out of the repository is passed over.
pub fn read(files: &RepoFiles, configs: &[String]) -> Vec<Roots> {
    let mut roots = Vec::new();
    for config in configs {
        let Ok(text) = files.text(config, Limit::MODULE_CONFIG) else {
            continue;
        };
        let (dir, name) = config.rsplit_once('/').unwrap_or(("", config));
        for system in systems_reading(name) {
            roots.extend(modules::read_roots(system, name, dir, &text));
        }
    }
    roots
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn configs_are_named_by_the_languages() {
        assert!(is_config("tsconfig.json"));
        assert!(is_config("go.mod"));
        assert!(is_config("composer.json"));
        assert!(is_config("Cargo.toml"));
        assert!(is_config("package.json"));
        assert!(!is_config("package-lock.json"));
        assert!(is_config("Shop.csproj"));
        assert!(is_config("Directory.Build.props"));
        assert!(!is_config(".csproj"));
    }

    #[test]
    fn each_config_is_read_by_its_module_system() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("web")).unwrap();
        std::fs::write(
            dir.path().join("web/tsconfig.json"),
            r#"{"compilerOptions": {"baseUrl": "src"}}"#,
        )
        .unwrap();
        let configs = [
            "web/tsconfig.json".to_string(),
            "gone/tsconfig.json".to_string(),
        ];
        let roots = read(&RepoFiles::open(dir.path()).unwrap(), &configs);
        assert_eq!(roots.len(), 1);
        assert_eq!(roots[0].system, ModuleKind::Paths);
        assert_eq!(roots[0].base_url.as_deref(), Some("web/src"));
    }

    #[test]
    fn oversized_configs_are_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let files = RepoFiles::open(dir.path()).unwrap();
        let go_mod = "module example.com/big\n";
        let padding = "/".repeat(Limit::MODULE_CONFIG.bytes as usize);
        std::fs::write(dir.path().join("go.mod"), format!("{go_mod}{padding}")).unwrap();
        assert!(read(&files, &["go.mod".to_string()]).is_empty());
        std::fs::write(dir.path().join("go.mod"), go_mod).unwrap();
        assert_eq!(read(&files, &["go.mod".to_string()]).len(), 1);
    }
}
