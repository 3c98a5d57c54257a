//! The commit history mined through gix (no `git` process): HEAD, and commits with the files
//! they changed and their authors through the mailmap.

use std::collections::HashSet;
use std::path::Path;

use gix::bstr::ByteSlice;

use super::CommitInfo;

/// A history walk that failed, named by what was being done.
#[derive(Debug, thiserror::Error)]
pub enum HistoryError {
    #[error("{0} is not a git repository: {1}")]
    NotARepository(String, String),
    #[error("git: {doing}: {message}")]
    Failed { doing: String, message: String },
}

fn failed(doing: &str) -> impl Fn(Box<dyn std::error::Error + Send + Sync>) -> HistoryError + '_ {
    move |e| HistoryError::Failed {
        doing: doing.to_string(),
        message: e.to_string(),
    }
}

macro_rules! git {
    ($expr:expr, $doing:expr) => {
        $expr.map_err(|e| failed($doing)(Box::new(e)))
    };
}

fn open(root: &Path) -> Result<gix::Repository, HistoryError> {
    gix::open(root)
        .map_err(|e| HistoryError::NotARepository(root.display().to_string(), e.to_string()))
}

/// The commit HEAD points at: `None` outside a git repository or before the first commit.
pub fn head(root: &Path) -> Option<String> {
    let repo = open(root).ok()?;
    repo.head_id().ok().map(|id| id.detach().to_string())
}

/// Commits reachable from HEAD, newest first, at most `max_commits` of them; those in
/// `known` are listed by id only (their changes are not read again). Merge commits are
/// left out: their changes arrive with the commits they merge.
pub fn mine(
    root: &Path,
    known: &HashSet<String>,
    max_commits: usize,
) -> Result<Mined, HistoryError> {
    let repo = open(root)?;
    let mut mined = Mined::default();
    let Ok(head) = repo.head_id() else {
        return Ok(mined);
    };
    mined.head = Some(head.detach().to_string());
    let mailmap = repo.open_mailmap();
    let walk = git!(
        head.ancestors()
            .sorting(gix::revision::walk::Sorting::ByCommitTime(
                gix::traverse::commit::simple::CommitTimeOrder::NewestFirst
            ))
            .all(),
        "walking the history"
    )?;
    let mut state = gix::diff::tree::State::default();
    for info in walk {
        if mined.window.len() >= max_commits {
            break;
        }
        let info = git!(info, "walking the history")?;
        if info.parent_ids.len() > 1 {
            continue;
        }
        let id = info.id.to_string();
        mined.window.push(id.clone());
        if known.contains(&id) {
            continue;
        }
        let commit = git!(info.object(), "reading a commit")?;
        let tree = git!(commit.tree(), "reading a commit's tree")?;
        let parent_tree = match info.parent_ids.first() {
            Some(parent) => {
                let parent = git!(repo.find_object(*parent), "reading a parent")?;
                Some(git!(
                    git!(parent.try_into_commit(), "reading a parent")?.tree(),
                    "reading a parent's tree"
                )?)
            }
            None => None,
        };
        let mut recorder = gix::diff::tree::Recorder::default();
        let empty: &[u8] = &[];
        let hash = repo.object_hash();
        git!(
            gix::diff::tree(
                gix::objs::TreeRefIter::from_bytes(
                    parent_tree.as_ref().map_or(empty, |t| &t.data),
                    hash
                ),
                gix::objs::TreeRefIter::from_bytes(&tree.data, hash),
                &mut state,
                &repo.objects,
                &mut recorder,
            ),
            "comparing a commit with its parent"
        )?;
        use gix::diff::tree::recorder::Change as R;
        let mut files: Vec<String> = recorder
            .records
            .into_iter()
            .filter_map(|change| match change {
                R::Addition {
                    entry_mode, path, ..
                }
                | R::Deletion {
                    entry_mode, path, ..
                }
                | R::Modification {
                    entry_mode, path, ..
                } if entry_mode.is_blob() => Some(path.to_str_lossy().into_owned()),
                _ => None,
            })
            .collect();
        files.sort();
        files.dedup();
        let author = git!(commit.author(), "reading an author")?;
        let resolved = mailmap.resolve(author);
        let message = commit.message_raw_sloppy().to_str_lossy().into_owned();
        let summary = message
            .lines()
            .next()
            .unwrap_or_default()
            .trim()
            .to_string();
        mined.commits.push(CommitInfo {
            id,
            time: info.commit_time.unwrap_or(resolved.time.seconds),
            author: identity(&resolved.name.to_string(), &resolved.email.to_string()),
            name: resolved.name.to_string(),
            summary: crate::extract::truncate(&summary, 120),
            fix: super::is_fix(&message),
            files,
        });
    }
    Ok(mined)
}

/// How a developer is named: the email (lowercase) when there is one, else the name.
pub fn identity(name: &str, email: &str) -> String {
    let email = email.trim().to_lowercase();
    if email.is_empty() {
        name.trim().to_string()
    } else {
        email
    }
}

/// What a history walk found.
#[derive(Debug, Default)]
pub struct Mined {
    pub head: Option<String>,
    /// Ids of the commits in the window, newest first.
    pub window: Vec<String>,
    /// Commits read this walk (those not already known).
    pub commits: Vec<CommitInfo>,
}
