//! Which files and folders of the repository a decision record names: written out
//! (`src/db/pool.py`), linked (from the record's folder, from the root, or on the repository's
//! code host: `https://github.com/o/r/tree/main/terraform/deployments/github`), or by their
//! last parts when exactly one path of the repository ends so (`cluster-services` for
//! `terraform/deployments/cluster-services`, `deployments/github`). Images and the
//! documentation folder that holds the records are never anchors; the most specific few are
//! kept.

use std::cmp::Reverse;
use std::collections::HashMap;
use std::path::Path;
use std::sync::LazyLock;

use regex::{Captures, Regex};

use crate::fsutil::repo::RepoFiles;
use crate::review::git::Git;
use crate::review::host::RepoId;

/// Most anchors of one record.
pub const MAX_ANCHORS: usize = 5;
/// Most files and folders of the repository held to check names against.
pub const MAX_PATHS: usize = 200_000;
/// Most names of one record checked.
const NAMES_CHECKED: usize = 400;
/// Extensions of pictures: an embedded image is never an anchor.
const IMAGES: &[&str] = &[
    "png", "jpg", "jpeg", "gif", "svg", "webp", "bmp", "ico", "tif", "tiff", "avif",
];

/// The files and folders of the repository, to check what a record names against.
pub struct RepoPaths<'f> {
    files: &'f RepoFiles,
    /// Every path at HEAD, `true` for a folder; `None` outside git or past [`MAX_PATHS`]:
    /// then the working tree is asked, and no name is looked up by its last parts.
    at_head: Option<HashMap<String, bool>>,
    /// The paths at HEAD by their last part.
    by_name: HashMap<String, Vec<String>>,
    /// The repository's name on its code host (`govuk-infrastructure`), when a remote says.
    name: Option<String>,
}

/// A name a record gives, before it is checked.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Named {
    /// Repository-relative.
    path: String,
    /// Written in prose or code, not linked: it may leave out the folders it sits in.
    written: bool,
}

impl<'f> RepoPaths<'f> {
    /// The paths of the repository at `root`: at HEAD when it is a git repository, else in
    /// the working tree.
    pub fn new(files: &'f RepoFiles, root: &Path, is_git: bool) -> RepoPaths<'f> {
        let git = is_git.then(|| Git::open(root).ok()).flatten();
        let listed = git
            .as_ref()
            .and_then(|g| g.paths_at_head(MAX_PATHS).ok().flatten());
        let name = git.as_ref().and_then(|g| {
            g.remote_urls()
                .iter()
                .filter_map(|url| RepoId::of_remote(url))
                .find_map(|id| id.path.rsplit('/').next().map(str::to_string))
        });
        RepoPaths::of(files, listed, name)
    }

    fn of(
        files: &'f RepoFiles,
        listed: Option<Vec<(String, bool)>>,
        name: Option<String>,
    ) -> RepoPaths<'f> {
        let mut by_name: HashMap<String, Vec<String>> = HashMap::new();
        let at_head = listed.map(|listed| {
            for (path, _) in &listed {
                let last = path.rsplit('/').next().unwrap_or(path);
                by_name
                    .entry(last.to_lowercase())
                    .or_default()
                    .push(path.clone());
            }
            listed.into_iter().collect()
        });
        RepoPaths {
            files,
            at_head,
            by_name,
            name,
        }
    }

    /// Whether `path` is a folder (`Some(true)`), a file (`Some(false)`), or not there.
    fn kind(&self, path: &str) -> Option<bool> {
        match &self.at_head {
            Some(paths) => paths.get(path).copied(),
            None if self.files.exists(path) => Some(self.files.stat(path).is_err()),
            None => None,
        }
    }

    /// The one path of the repository that ends with the parts of `tail`, if only one does.
    fn ending_with(&self, tail: &str) -> Option<&str> {
        let last = tail.rsplit('/').next().unwrap_or(tail).to_lowercase();
        let mut found = self.by_name.get(&last)?.iter().filter(|p| {
            p.len() > tail.len()
                && p.ends_with(tail)
                && p.as_bytes()[p.len() - tail.len() - 1] == b'/'
        });
        let one = found.next()?;
        found.next().is_none().then_some(one.as_str())
    }

    /// Whether a link on a code host (`https://github.com/o/r/blob/main/src/x.rs`) points into
    /// this repository: its name is the remote's (any name when no remote names one).
    fn is_this_repository(&self, name: &str) -> bool {
        self.name
            .as_deref()
            .is_none_or(|own| own.eq_ignore_ascii_case(name.trim_end_matches(".git")))
    }
}

/// The files and folders of the repository that the record at `record` names in `text`, at
/// most [`MAX_ANCHORS`]: files before folders, deeper before shallower, then in the order
/// named. Never an image, anything in git's own folder, or anything in the documentation
/// folder that holds the record (`docs` for `docs/architecture/decisions/0003-x.md`).
pub fn anchors(paths: &RepoPaths<'_>, record: &str, text: &str) -> Vec<String> {
    let folder = record.rsplit_once('/').map_or("", |(dir, _)| dir);
    let docs = folder.split('/').next().unwrap_or_default();
    let mut found: Vec<(String, bool)> = Vec::new();
    for named in names(paths, text, folder).into_iter().take(NAMES_CHECKED) {
        let Some((path, is_dir)) = resolve(paths, &named) else {
            continue;
        };
        let in_docs = !docs.is_empty() && (path == docs || path.starts_with(&format!("{docs}/")));
        let in_git = path.split('/').any(|p| p == ".git");
        if in_docs || in_git || is_image(&path) || found.iter().any(|(p, _)| *p == path) {
            continue;
        }
        found.push((path, is_dir));
    }
    let mut ranked: Vec<(usize, (String, bool))> = found.into_iter().enumerate().collect();
    ranked.sort_by_key(|(at, (path, is_dir))| (*is_dir, Reverse(path.matches('/').count()), *at));
    ranked
        .into_iter()
        .take(MAX_ANCHORS)
        .map(|(_, (path, _))| path)
        .collect()
}

/// The path a name stands for and whether it is a folder: as given, else, for a name written
/// out, the one path that ends with it.
fn resolve(paths: &RepoPaths<'_>, named: &Named) -> Option<(String, bool)> {
    if let Some(is_dir) = paths.kind(&named.path) {
        return Some((named.path.clone(), is_dir));
    }
    if !named.written || paths.at_head.is_none() {
        return None;
    }
    let path = paths.ending_with(&named.path)?.to_string();
    let is_dir = paths.kind(&path)?;
    Some((path, is_dir))
}

/// What the text names that may be a path, in order: link targets (images left out), then
/// words with a `/` or a file extension, and code spans of one word with a `-` or `_`.
fn names(paths: &RepoPaths<'_>, text: &str, folder: &str) -> Vec<Named> {
    static LINK: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r#"(!?)\[[^\]]*\]\(\s*<?([^)\s>]*)>?(?:\s+"[^"]*")?\s*\)"#)
            .expect("valid pattern")
    });
    static DEFINITION: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(?m)^ {0,3}\[[^\]]+\]:[ \t]*<?([^\s>]+)>?").expect("valid pattern")
    });
    static URL: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r#"[a-z][a-z0-9+.-]*://[^\s)\]>"'`]+"#).expect("valid pattern")
    });
    let mut out = Vec::new();
    let rest = LINK.replace_all(text, |found: &Captures| {
        if found[1].is_empty() {
            out.extend(linked(paths, &found[2], folder));
        }
        " "
    });
    let rest = DEFINITION.replace_all(&rest, |found: &Captures| {
        out.extend(linked(paths, &found[1], folder));
        " "
    });
    let rest = URL.replace_all(&rest, |found: &Captures| {
        out.extend(linked(paths, &found[0], folder));
        " "
    });
    for (i, piece) in rest.split('`').enumerate() {
        let words: Vec<&str> = piece
            .split(|c: char| c.is_whitespace() || "\"'()[]<>{},;=|*!?".contains(c))
            .map(|w| w.trim_end_matches(['.', ':']))
            .filter(|w| !w.is_empty())
            .collect();
        if i % 2 == 1
            && let [word] = words.as_slice()
            && is_bare_name(word)
        {
            out.push(Named {
                path: word.to_string(),
                written: true,
            });
            continue;
        }
        out.extend(words.into_iter().filter_map(|w| written(w, folder)));
    }
    out
}

/// A name in code that may be a file or folder by its last part: no `/`, no extension, a `-`
/// or `_` in it (`cluster-services`, `app_config`).
fn is_bare_name(word: &str) -> bool {
    word.contains(['-', '_']) && !word.contains('/') && !has_extension(word)
}

/// A word with a `/` or a file extension, repository-relative (`./` and `../` from the
/// record's folder).
fn written(word: &str, folder: &str) -> Option<Named> {
    if word.contains("::") || word.starts_with('/') || !(word.contains('/') || has_extension(word))
    {
        return None;
    }
    let from_record = word.starts_with("./") || word.starts_with("../");
    let path = if from_record {
        crate::context::normalise(&format!("{folder}/{word}"))?
    } else {
        crate::context::normalise(word)?
    };
    (!path.is_empty()).then_some(Named {
        path,
        written: !from_record,
    })
}

/// A link target as a repository path: relative to the record's folder, from the root
/// (`/src`), or on the repository's code host (`…/tree/<ref>/<path>`, `…/-/blob/<ref>/<path>`).
fn linked(paths: &RepoPaths<'_>, target: &str, folder: &str) -> Option<Named> {
    static HOSTED: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"^https?://[^/]+/(?:[^/]+/)+?([^/]+)/(?:-/)?(?:tree|blob)/[^/]+/([^?#]+)")
            .expect("valid pattern")
    });
    let target = target.split('#').next().unwrap_or_default();
    if target.is_empty() || target.starts_with("mailto:") {
        return None;
    }
    let path = if target.contains("://") {
        let found = HOSTED.captures(target)?;
        if !paths.is_this_repository(&found[1]) {
            return None;
        }
        crate::context::normalise(found[2].trim_end_matches('/'))?
    } else if let Some(from_root) = target.strip_prefix('/') {
        crate::context::normalise(from_root)?
    } else {
        crate::context::normalise(&format!("{folder}/{target}"))?
    };
    (!path.is_empty()).then_some(Named {
        path,
        written: false,
    })
}

/// `name.ext` with a short alphanumeric extension after a non-empty name.
fn has_extension(word: &str) -> bool {
    word.rsplit_once('.').is_some_and(|(name, ext)| {
        !name.is_empty()
            && (1..=5).contains(&ext.len())
            && ext.chars().all(|c| c.is_ascii_alphanumeric())
            && ext.chars().any(|c| c.is_ascii_alphabetic())
    })
}

fn is_image(path: &str) -> bool {
    path.rsplit_once('.')
        .is_some_and(|(_, ext)| IMAGES.contains(&ext.to_lowercase().as_str()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repo(paths: &[&str]) -> (tempfile::TempDir, RepoFiles) {
        let dir = tempfile::tempdir().unwrap();
        for path in paths {
            let full = dir.path().join(path);
            std::fs::create_dir_all(full.parent().unwrap()).unwrap();
            std::fs::write(full, "x").unwrap();
        }
        let files = RepoFiles::open(dir.path()).unwrap();
        (dir, files)
    }

    /// Every file of `paths` and the folders above them, as HEAD would list them.
    fn listed(paths: &[&str]) -> Vec<(String, bool)> {
        let mut out: Vec<(String, bool)> = Vec::new();
        for path in paths {
            let parts: Vec<&str> = path.split('/').collect();
            for end in 1..=parts.len() {
                let entry = (parts[..end].join("/"), end < parts.len());
                if !out.contains(&entry) {
                    out.push(entry);
                }
            }
        }
        out
    }

    /// alphagov/govuk-infrastructure's tree, in part.
    const GOVUK: &[&str] = &[
        "docs/architecture/decisions/0003-split-terraform-state.md",
        "docs/img/adr-0018-existing-cicd.png",
        "docs/README.md",
        "terraform/deployments/cluster-infrastructure/main.tf",
        "terraform/deployments/cluster-services/main.tf",
        "terraform/deployments/github/main.tf",
        "terraform/deployments/ecr/main.tf",
        "charts/app-config/values.yaml",
    ];

    fn check(record: &str, text: &str, name: Option<&str>, expected: &[&str]) {
        let (_dir, files) = repo(GOVUK);
        let paths = RepoPaths::of(&files, Some(listed(GOVUK)), name.map(str::to_string));
        assert_eq!(anchors(&paths, record, text), expected, "{text}");
    }

    const RECORD: &str = "docs/architecture/decisions/0003-split-terraform-state.md";

    #[test]
    fn folders_named_by_their_last_parts_or_linked_on_the_host() {
        check(
            RECORD,
            "Split into two states:\n1. `cluster-infrastructure` - EKS.\n2. `cluster-services` - Kubernetes.\n",
            None,
            &[
                "terraform/deployments/cluster-infrastructure",
                "terraform/deployments/cluster-services",
            ],
        );
        let host = "They affect the [GitHub deployment](https://github.com/alphagov/govuk-infrastructure/tree/main/terraform/deployments/github).";
        check(RECORD, host, None, &["terraform/deployments/github"]);
        check(
            RECORD,
            host,
            Some("govuk-infrastructure"),
            &["terraform/deployments/github"],
        );
        check(RECORD, host, Some("another-repository"), &[]);
        // Ends that several paths share, or that no path has, name nothing.
        check(RECORD, "Edit `main.tf` and `no-such-thing`.", None, &[]);
        check(
            RECORD,
            "See deployments/ecr and values.yaml.",
            None,
            &["charts/app-config/values.yaml", "terraform/deployments/ecr"],
        );
    }

    #[test]
    fn never_images_nor_the_records_own_documentation() {
        check(
            RECORD,
            "![A flowchart](../../img/adr-0018-existing-cicd.png) [the docs](../../README.md) [ADR 2](0002-x.md) and docs/img/adr-0018-existing-cicd.png",
            None,
            &[],
        );
    }

    #[test]
    fn files_first_then_the_deepest_folders_at_most_five() {
        check(
            RECORD,
            "terraform terraform/deployments `cluster-services` [ecr](/terraform/deployments/ecr/main.tf) terraform/deployments/github/main.tf charts/app-config charts terraform/deployments/ecr",
            None,
            &[
                "terraform/deployments/ecr/main.tf",
                "terraform/deployments/github/main.tf",
                "terraform/deployments/cluster-services",
                "terraform/deployments/ecr",
                "terraform/deployments",
            ],
        );
    }

    #[test]
    fn outside_git_the_working_tree_is_asked_as_written() {
        let (_dir, files) = repo(GOVUK);
        let paths = RepoPaths::of(&files, None, None);
        assert_eq!(
            anchors(
                &paths,
                RECORD,
                "`cluster-services` and terraform/deployments/github/main.tf and [ecr](../../../terraform/deployments/ecr)"
            ),
            [
                "terraform/deployments/github/main.tf",
                "terraform/deployments/ecr"
            ]
        );
    }
}
