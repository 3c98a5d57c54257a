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

/// The commits reachable from `head`, newest first.
fn newest_first<'r>(head: &gix::Id<'r>) -> Result<gix::revision::Walk<'r>, HistoryError> {
    git!(
        head.ancestors()
            .sorting(gix::revision::walk::Sorting::ByCommitTime(
                gix::traverse::commit::simple::CommitTimeOrder::NewestFirst
            ))
            .all(),
        "walking the history"
    )
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
    let walk = newest_first(&head)?;
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
        let files = changed_files(&repo, &mut state, &commit, info.parent_ids.first())?;
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
            summary: crate::tokens::truncate(&summary, 120),
            fix: super::is_fix(&message),
            files,
        });
    }
    Ok(mined)
}

/// A commit with its whole message: what the history says in words (a revert names the
/// commit it reverts in its body).
#[derive(Debug, Clone, PartialEq)]
pub struct Logged {
    pub id: String,
    /// Its parent (`None` for a root commit).
    pub parent: Option<String>,
    /// Seconds since the epoch (commit time).
    pub time: i64,
    /// The message, at most [`MAX_MESSAGE_BYTES`].
    pub message: String,
    pub files: Vec<String>,
}

/// Longest commit message kept by [`log`].
pub const MAX_MESSAGE_BYTES: usize = 4 * 1024;

/// Commits reachable from HEAD, newest first, at most `max_commits`, merges left out, each
/// with its message and the files it changed.
pub fn log(root: &Path, max_commits: usize) -> Result<Vec<Logged>, HistoryError> {
    let repo = open(root)?;
    let Ok(head) = repo.head_id() else {
        return Ok(Vec::new());
    };
    let walk = newest_first(&head)?;
    let mut state = gix::diff::tree::State::default();
    let mut logged = Vec::new();
    for info in walk {
        if logged.len() >= max_commits {
            break;
        }
        let info = git!(info, "walking the history")?;
        if info.parent_ids.len() > 1 {
            continue;
        }
        let commit = git!(info.object(), "reading a commit")?;
        let parent = info.parent_ids.first();
        let files = changed_files(&repo, &mut state, &commit, parent)?;
        let message = commit.message_raw_sloppy().to_str_lossy();
        logged.push(Logged {
            id: info.id.to_string(),
            parent: parent.map(|p| p.to_string()),
            // A walk sorted by commit time knows each commit's time.
            time: info.commit_time.unwrap_or_default(),
            message: crate::tokens::truncate(&message, MAX_MESSAGE_BYTES),
            files,
        });
    }
    Ok(logged)
}

/// The files (blobs) a commit added, deleted or modified against its parent (all of its
/// files for a root commit), sorted.
fn changed_files(
    repo: &gix::Repository,
    state: &mut gix::diff::tree::State,
    commit: &gix::Commit,
    parent: Option<&gix::ObjectId>,
) -> Result<Vec<String>, HistoryError> {
    let tree = git!(commit.tree(), "reading a commit's tree")?;
    let parent_tree = match parent {
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
            state,
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
    Ok(files)
}

/// A stored window of commits brought up to HEAD.
#[derive(Debug, Default)]
pub struct CaughtUp {
    pub head: Option<String>,
    /// Stored commits still in the window.
    pub kept: Vec<CommitInfo>,
    /// Commits read this walk.
    pub new: Vec<CommitInfo>,
    /// Ids of stored commits that left the window.
    pub dropped: Vec<String>,
}

impl CaughtUp {
    /// Commits in the window now.
    pub fn len(&self) -> usize {
        self.kept.len() + self.new.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The whole window: kept and new commits.
    pub fn into_commits(self) -> Vec<CommitInfo> {
        let mut commits = self.kept;
        commits.extend(self.new);
        commits
    }
}

/// Brings `stored` (a window mined earlier) up to HEAD: known commits are not read again,
/// new ones are mined, and those that fell out of the newest `max_commits` are dropped.
pub fn catch_up(
    root: &Path,
    stored: Vec<CommitInfo>,
    max_commits: usize,
) -> Result<CaughtUp, HistoryError> {
    let known: HashSet<String> = stored.iter().map(|c| c.id.clone()).collect();
    let mined = mine(root, &known, max_commits)?;
    let window: HashSet<&str> = mined.window.iter().map(String::as_str).collect();
    let (kept, dropped): (Vec<CommitInfo>, Vec<CommitInfo>) = stored
        .into_iter()
        .partition(|c| window.contains(c.id.as_str()));
    Ok(CaughtUp {
        head: mined.head,
        kept,
        new: mined.commits,
        dropped: dropped.into_iter().map(|c| c.id).collect(),
    })
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

#[cfg(test)]
mod tests {
    use super::*;

    fn git(dir: &Path, args: &[&str]) {
        let status = std::process::Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(["-c", "user.name=Ada", "-c", "user.email=Ada@Example.com"])
            .args(args)
            .status()
            .unwrap();
        assert!(status.success(), "git {args:?}");
    }

    fn commit(dir: &Path, file: &str, message: &str) {
        std::fs::write(dir.join(file), message).unwrap();
        git(dir, &["add", "."]);
        git(dir, &["commit", "-q", "-m", message]);
    }

    #[test]
    fn catching_up_reads_only_new_commits_and_drops_those_out_of_the_window() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        assert_eq!(head(root), None);
        git(root, &["init", "-q"]);
        commit(root, "a.txt", "first");
        commit(root, "b.txt", "fix: second");
        let stored = mine(root, &HashSet::new(), 2).unwrap();
        assert_eq!(stored.commits.len(), 2);
        assert_eq!(stored.head, head(root));
        assert_eq!(stored.commits[0].author, "ada@example.com");
        assert!(stored.commits[0].fix);

        commit(root, "c.txt", "third");
        let caught = catch_up(root, stored.commits.clone(), 2).unwrap();
        assert_eq!(caught.new.len(), 1, "only the new commit is read");
        assert_eq!(caught.new[0].summary, "third");
        assert_eq!(caught.new[0].files, ["c.txt"]);
        assert_eq!(caught.kept.len(), 1);
        assert_eq!(caught.dropped.len(), 1);
        assert_eq!(
            caught.dropped[0], stored.commits[1].id,
            "the oldest left the window"
        );
        assert_eq!(caught.head, head(root));
        assert_eq!(caught.len(), 2);
    }
}
