//! Finding the files to index: a gitignore-aware walk that leaves out build outputs, vendored
//! code and files of no registered language, and reports what it passes over and why.

use std::path::Path;

use ignore::WalkBuilder;
use ignore::overrides::{Override, OverrideBuilder};

use crate::fsutil::repo::{RepoFiles, RepoReadError};
use crate::languages::Registry;

/// Directories that hold build outputs, dependencies or caches, never project sources.
pub(crate) const BUILD_OUTPUTS: &[&str] = &[
    "node_modules",
    "dist",
    "build",
    "target",
    "out",
    "coverage",
    "vendor",
    "third_party",
    "site-packages",
    "__pycache__",
    ".venv",
    "venv",
    ".tox",
    ".nox",
    ".mypy_cache",
    ".pytest_cache",
    ".ruff_cache",
    ".next",
    ".nuxt",
    ".svelte-kit",
    ".turbo",
    ".cache",
    "bower_components",
];

/// The walk's exclusions as ignore overrides: build outputs and `cairn.toml`'s patterns. Invalid
/// patterns are reported, not fatal.
pub fn overrides(root: &Path, exclude: &[String]) -> (Override, Vec<Skipped>) {
    let mut overrides = OverrideBuilder::new(root);
    for dir in BUILD_OUTPUTS {
        overrides
            .add(&format!("!**/{dir}/"))
            .expect("built-in exclude patterns are valid");
    }
    let mut skipped = Vec::new();
    for pattern in exclude {
        if let Err(e) = overrides.add(&format!("!{pattern}")) {
            skipped.push(Skipped {
                path: pattern.clone(),
                reason: format!("invalid exclude pattern in cairn.toml: {e}"),
            });
        }
    }
    (overrides.build().expect("override set builds"), skipped)
}

/// The walker the index uses, over `top` (the root or a directory under it).
pub fn walker(top: &Path, overrides: Override) -> ignore::Walk {
    builder(top, overrides).build()
}

/// The index's walk, to be built: hidden files, ignored files and the exclusions left out,
/// symbolic links not followed.
fn builder(top: &Path, overrides: Override) -> WalkBuilder {
    let mut builder = WalkBuilder::new(top);
    builder
        .hidden(true)
        .git_ignore(true)
        .git_exclude(true)
        .require_git(false)
        .follow_links(false)
        .overrides(overrides);
    builder
}

/// A candidate source file.
#[derive(Debug, Clone)]
pub struct Found {
    /// Repository-relative, `/`-separated; read through [`crate::fsutil::repo::RepoFiles`].
    pub path: String,
    pub size: u64,
    pub mtime_ns: i64,
}

/// A file passed over, with the reason.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Skipped {
    pub path: String,
    pub reason: String,
}

/// What a walk found.
#[derive(Debug, Default)]
pub struct Walk {
    pub sources: Vec<Found>,
    pub skipped: Vec<Skipped>,
    /// Configs that define module roots (`tsconfig.json`, `go.mod`, …), repository-relative.
    pub configs: Vec<String>,
}

/// Walks the repository for source files of registered languages.
pub fn walk(root: &Path, exclude: &[String], max_bytes: u64) -> Walk {
    let (overrides, mut skipped) = overrides(root, exclude);
    let walker = walker(root, overrides);
    let registry = Registry::get();
    let mut found = Vec::new();
    let mut configs = Vec::new();
    for entry in walker {
        let entry = match entry {
            Ok(entry) => entry,
            Err(e) => {
                skipped.push(Skipped {
                    path: String::new(),
                    reason: format!("unreadable: {e}"),
                });
                continue;
            }
        };
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        let Ok(relative) = entry.path().strip_prefix(root) else {
            continue;
        };
        let path = relative.to_string_lossy().replace('\\', "/");
        let name = path.rsplit('/').next().unwrap_or(&path);
        if super::roots::is_config(name) {
            configs.push(path);
            continue;
        }
        if registry.for_path(&path).is_none() {
            continue;
        }
        let metadata = match entry.metadata() {
            Ok(m) => m,
            Err(e) => {
                skipped.push(Skipped {
                    path,
                    reason: format!("unreadable: {e}"),
                });
                continue;
            }
        };
        if metadata.len() > max_bytes {
            skipped.push(Skipped {
                path,
                reason: format!(
                    "larger than the limit ({} > {} bytes; raise index.max_file_bytes in cairn.toml)",
                    metadata.len(),
                    max_bytes
                ),
            });
            continue;
        }
        let mtime_ns = mtime_ns(&metadata);
        found.push(Found {
            path,
            size: metadata.len(),
            mtime_ns,
        });
    }
    found.sort_by(|a, b| a.path.cmp(&b.path));
    configs.sort();
    Walk {
        sources: found,
        skipped,
        configs,
    }
}

/// A file's modification time in nanoseconds since the epoch (0 if unknown).
pub fn mtime_ns(metadata: &std::fs::Metadata) -> i64 {
    metadata
        .modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos() as i64)
}

/// How many directories below the root a manifest is looked for.
pub(crate) const MANIFEST_DEPTH: usize = 6;
/// Most directory entries one manifest walk visits.
pub(crate) const MANIFEST_ENTRIES: usize = 100_000;
/// Most manifests one walk returns.
pub(crate) const MAX_MANIFESTS: usize = 1_000;

/// What a manifest walk found.
#[derive(Debug, Default)]
pub struct Manifests {
    /// Files (or links to files inside the repository) whose path `is_manifest` accepts,
    /// sorted by path; `absolute` is the file to read.
    pub files: Vec<Found>,
    pub skipped: Vec<Skipped>,
}

/// The manifests of the repository and its sub-projects: the index's walk (gitignore-aware,
/// build outputs and vendored code left out), bounded in depth, entries and results. A
/// symbolic link is kept only when it leads, relatively, to a file inside the repository.
pub fn manifests(root: &Path, exclude: &[String], is_manifest: impl Fn(&str) -> bool) -> Manifests {
    let (overrides, mut skipped) = overrides(root, exclude);
    let walker = builder(root, overrides)
        .max_depth(Some(MANIFEST_DEPTH + 1))
        .build();
    let mut files = Vec::new();
    let reader = RepoFiles::open(root);
    for (visited, entry) in walker.enumerate() {
        if visited == MANIFEST_ENTRIES || files.len() == MAX_MANIFESTS {
            skipped.push(Skipped {
                path: String::new(),
                reason: format!(
                    "stopped after {visited} entries and {} manifests; the rest of the repository was not searched",
                    files.len()
                ),
            });
            break;
        }
        let Ok(entry) = entry else { continue };
        let Some(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() {
            continue;
        }
        let Ok(relative) = entry.path().strip_prefix(root) else {
            continue;
        };
        let path = relative.to_string_lossy().replace('\\', "/");
        if !is_manifest(&path) {
            continue;
        }
        // Through the repository reader: a link is followed only while it stays inside.
        let stat = match &reader {
            Ok(reader) => reader.stat(&path),
            Err(e) => {
                skipped.push(Skipped {
                    path,
                    reason: format!("unreadable: {e}"),
                });
                continue;
            }
        };
        match stat {
            Ok(stat) => files.push(Found {
                path,
                size: stat.size,
                mtime_ns: stat.mtime_ns,
            }),
            Err(e) => skipped.push(Skipped {
                path,
                reason: match e {
                    RepoReadError::Outside { .. } => {
                        "a symbolic link to outside the repository (or an absolute link); not followed"
                            .to_string()
                    }
                    RepoReadError::Missing { .. } => "a symbolic link to nothing".to_string(),
                    e => e.reason(),
                },
            }),
        }
    }
    files.sort_by(|a, b| a.path.cmp(&b.path));
    Manifests { files, skipped }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(root: &Path, path: &str) {
        let full = root.join(path);
        std::fs::create_dir_all(full.parent().unwrap()).unwrap();
        std::fs::write(full, "{}").unwrap();
    }

    #[test]
    fn manifests_are_found_within_bounds_and_links_only_inside() {
        let repo = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let root = repo.path().canonicalize().unwrap();
        write(&root, "package.json");
        write(&root, "a/b/c/d/e/f/package.json");
        write(&root, "a/b/c/d/e/f/g/package.json");
        write(&root, "web/node_modules/x/package.json");
        write(&root, "skipped/package.json");
        write(&root, ".hidden/package.json");
        write(&root, "web/README.md");
        write(outside.path(), "package.json");
        std::os::unix::fs::symlink(root.join("package.json"), root.join("inner.json")).unwrap();
        std::fs::create_dir_all(root.join("linked")).unwrap();
        std::os::unix::fs::symlink(
            outside.path().join("package.json"),
            root.join("linked/package.json"),
        )
        .unwrap();
        std::fs::create_dir_all(root.join("alias")).unwrap();
        std::os::unix::fs::symlink("../package.json", root.join("alias/package.json")).unwrap();
        // An absolute link, even to a file inside, is not followed (it names one checkout).
        std::fs::create_dir_all(root.join("pinned")).unwrap();
        std::os::unix::fs::symlink(root.join("package.json"), root.join("pinned/package.json"))
            .unwrap();
        std::os::unix::fs::symlink(outside.path(), root.join("away")).unwrap();

        let found = manifests(&root, &["skipped/".to_string()], |path| {
            path.ends_with("package.json")
        });
        let paths: Vec<&str> = found.files.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(
            paths,
            [
                "a/b/c/d/e/f/package.json",
                "alias/package.json",
                "package.json"
            ]
        );
        assert_eq!(found.files[1].size, 2);
        let mut skipped: Vec<(&str, &str)> = found
            .skipped
            .iter()
            .map(|s| (s.path.as_str(), s.reason.as_str()))
            .collect();
        skipped.sort();
        assert_eq!(skipped.len(), 2, "{skipped:?}");
        assert_eq!(skipped[0].0, "linked/package.json");
        assert_eq!(skipped[1].0, "pinned/package.json");
        assert!(
            skipped
                .iter()
                .all(|s| s.1.contains("outside the repository"))
        );
    }
}
