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

/// Walks the repository for source files of registered languages. A file git tracks is never
/// ignored, as git has it: one a `.gitignore` pattern matches (zod's `**/package.json`, meant
/// for generated files, covers its own tracked `package.json`) is taken all the same, unless
/// it is hidden, a link, or under a build output or a `cairn.toml` exclusion.
pub fn walk(root: &Path, exclude: &[String], max_bytes: u64) -> Walk {
    let (overrides, mut skipped) = overrides(root, exclude);
    let walker = walker(root, overrides.clone());
    let registry = Registry::get();
    let mut found = Vec::new();
    let mut configs = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let mut take = |path: String,
                    metadata: std::io::Result<std::fs::Metadata>,
                    skipped: &mut Vec<Skipped>| {
        let name = path.rsplit('/').next().unwrap_or(&path);
        if super::roots::is_config(name) {
            configs.push(path);
            return;
        }
        if registry.for_path(&path).is_none() {
            return;
        }
        let metadata = match metadata {
            Ok(m) => m,
            Err(e) => {
                skipped.push(Skipped {
                    path,
                    reason: format!("unreadable: {e}"),
                });
                return;
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
            return;
        }
        let mtime_ns = mtime_ns(&metadata);
        found.push(Found {
            path,
            size: metadata.len(),
            mtime_ns,
        });
    };
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
        seen.insert(path.clone());
        take(
            path,
            entry.metadata().map_err(std::io::Error::other),
            &mut skipped,
        );
    }
    for (path, metadata) in tracked_but_ignored(root, &overrides, &seen) {
        take(path, Ok(metadata), &mut skipped);
    }
    found.sort_by(|a, b| a.path.cmp(&b.path));
    configs.sort();
    Walk {
        sources: found,
        skipped,
        configs,
    }
}

/// The files git tracks that the walk passed over for a `.gitignore` pattern alone: regular
/// files (no links, no submodules), none hidden, none under a build output or an exclusion.
/// Empty unless the root is a git work tree's top.
fn tracked_but_ignored(
    root: &Path,
    overrides: &Override,
    seen: &std::collections::HashSet<String>,
) -> Vec<(String, std::fs::Metadata)> {
    let Ok(repo) = gix::open(root) else {
        return Vec::new();
    };
    let Ok(index) = repo.open_index() else {
        return Vec::new();
    };
    let registry = Registry::get();
    let mut excluded_dirs: std::collections::HashMap<&str, bool> = Default::default();
    let mut passed = Vec::new();
    for entry in index.entries() {
        let Ok(path) = std::str::from_utf8(entry.path(&index)) else {
            continue;
        };
        let name = path.rsplit('/').next().unwrap_or(path);
        let wanted = super::roots::is_config(name) || registry.for_path(path).is_some();
        // Hidden files stay out, and so does a path no git would write (`/etc/x`, `a//b`,
        // `../x`) that a crafted index may hold.
        let odd = path
            .split('/')
            .any(|part| part.is_empty() || part.starts_with('.'));
        if !wanted || odd || seen.contains(path) {
            continue;
        }
        let excluded = path.match_indices('/').any(|(at, _)| {
            let dir = &path[..at];
            *excluded_dirs
                .entry(dir)
                .or_insert_with(|| overrides.matched(root.join(dir), true).is_ignore())
        }) || overrides.matched(root.join(path), false).is_ignore();
        if excluded {
            continue;
        }
        // A link is never followed, whatever git tracks.
        if let Ok(metadata) = std::fs::symlink_metadata(root.join(path))
            && metadata.is_file()
        {
            passed.push((path.to_string(), metadata));
        }
    }
    passed
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
    fn tracked_files_are_never_ignored_but_build_outputs_and_hidden_ones_stay_out() {
        let repo = tempfile::tempdir().unwrap();
        let root = repo.path().canonicalize().unwrap();
        let git = |args: &[&str]| {
            let out = std::process::Command::new("git")
                .args(["-c", "user.name=a", "-c", "user.email=a@example.com"])
                .args(args)
                .current_dir(&root)
                .output()
                .unwrap();
            assert!(out.status.success(), "{out:?}");
        };
        git(&["init", "-q"]);
        std::fs::write(root.join(".gitignore"), "**/package.json\ngen/\n").unwrap();
        for path in [
            "pkg/package.json",
            "gen/tracked.py",
            "gen/untracked.py",
            "other/package.json",
            "node_modules/x/index.js",
            ".tools/run.py",
            "src/app.py",
        ] {
            write(&root, path);
        }
        git(&[
            "add",
            "-f",
            "pkg/package.json",
            "gen/tracked.py",
            "node_modules/x/index.js",
        ]);
        git(&["add", "-f", ".tools/run.py", "src/app.py", ".gitignore"]);
        git(&["commit", "-qm", "files"]);
        let walked = walk(&root, &["src/vendored/**".to_string()], 1 << 20);
        let sources: Vec<&str> = walked.sources.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(sources, ["gen/tracked.py", "src/app.py"]);
        assert_eq!(walked.configs, ["pkg/package.json"]);
        // Outside a git work tree the ignore files alone decide.
        std::fs::remove_dir_all(root.join(".git")).unwrap();
        let walked = walk(&root, &[], 1 << 20);
        let sources: Vec<&str> = walked.sources.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(sources, ["src/app.py"]);
        assert!(walked.configs.is_empty());
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
