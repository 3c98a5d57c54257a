//! Finding the files to index: a gitignore-aware walk that leaves out build outputs, vendored
//! code and files of no registered language, and reports what it passes over and why.

use std::path::{Path, PathBuf};

use ignore::WalkBuilder;
use ignore::overrides::{Override, OverrideBuilder};

use crate::languages::Registry;

/// Directories that hold build outputs, dependencies or caches, never project sources.
pub const BUILD_OUTPUTS: &[&str] = &[
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
    WalkBuilder::new(top)
        .hidden(true)
        .git_ignore(true)
        .git_exclude(true)
        .require_git(false)
        .follow_links(false)
        .overrides(overrides)
        .build()
}

/// A candidate source file.
#[derive(Debug, Clone)]
pub struct Found {
    /// Repository-relative, `/`-separated.
    pub path: String,
    pub absolute: PathBuf,
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
            absolute: entry.path().to_path_buf(),
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
