//! Git through gix (no `git` process, no parsing of its text output): the change between two
//! revisions or in the working tree, file contents at a revision, authors through the
//! mailmap, and the commit history mined for experts, fix-prone files and co-change.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::path::Path;

use gix::bstr::ByteSlice;

use super::check_files;
use super::diff::{self, ChangeKind, FileChange};
use crate::fsutil::repo::{Limit, RepoFiles};

/// A git failure, named by what was being done.
#[derive(Debug, thiserror::Error)]
pub enum GitError {
    #[error("{0} is not a git repository: {1}")]
    NotARepository(String, String),
    #[error("unknown revision `{0}`: {1}")]
    UnknownRevision(String, String),
    #[error("git: {doing}: {message}")]
    Failed { doing: String, message: String },
    #[error(transparent)]
    TooLarge(#[from] super::TooLarge),
}

impl From<crate::history::HistoryError> for GitError {
    fn from(error: crate::history::HistoryError) -> GitError {
        use crate::history::HistoryError as H;
        match error {
            H::NotARepository(path, why) => GitError::NotARepository(path, why),
            H::Failed { doing, message } => GitError::Failed { doing, message },
        }
    }
}

fn failed(doing: &str) -> impl Fn(Box<dyn std::error::Error + Send + Sync>) -> GitError + '_ {
    move |e| GitError::Failed {
        doing: doing.to_string(),
        message: e.to_string(),
    }
}

macro_rules! git {
    ($expr:expr, $doing:expr) => {
        $expr.map_err(|e| failed($doing)(Box::new(e)))
    };
}

/// Largest file read whole for a review (bigger ones are treated as binary).
const MAX_BLOB_BYTES: usize = 4 * 1024 * 1024;

/// The same bound for a changed file read from the working tree.
const WORKTREE_LIMIT: Limit = Limit {
    what: "a changed file",
    bytes: MAX_BLOB_BYTES as u64,
};

/// An open repository.
pub struct Git {
    repo: gix::Repository,
}

/// A recorder of a tree's entries that stops at `max` of them.
struct Bounded {
    recorder: gix::traverse::tree::Recorder,
    max: usize,
}

impl Bounded {
    fn record(
        &mut self,
        visit: impl FnOnce(&mut gix::traverse::tree::Recorder) -> Action,
    ) -> Action {
        if self.recorder.records.len() >= self.max {
            return Action::Break(());
        }
        visit(&mut self.recorder)
    }
}

type Action = gix::traverse::tree::visit::Action;

impl gix::traverse::tree::Visit for Bounded {
    fn pop_back_tracked_path_and_set_current(&mut self) {
        self.recorder.pop_back_tracked_path_and_set_current();
    }

    fn pop_front_tracked_path_and_set_current(&mut self) {
        self.recorder.pop_front_tracked_path_and_set_current();
    }

    fn push_back_tracked_path_component(&mut self, component: &gix::bstr::BStr) {
        self.recorder.push_back_tracked_path_component(component);
    }

    fn push_path_component(&mut self, component: &gix::bstr::BStr) {
        self.recorder.push_path_component(component);
    }

    fn pop_path_component(&mut self) {
        self.recorder.pop_path_component();
    }

    fn visit_tree(&mut self, entry: &gix::objs::tree::EntryRef<'_>) -> Action {
        self.record(|r| r.visit_tree(entry))
    }

    fn visit_nontree(&mut self, entry: &gix::objs::tree::EntryRef<'_>) -> Action {
        self.record(|r| r.visit_nontree(entry))
    }
}

/// Text of a blob, or `None` for binary (NUL bytes, not UTF-8, too large).
fn text_of(data: &[u8]) -> Option<String> {
    if data.len() > MAX_BLOB_BYTES || data.contains(&0) {
        return None;
    }
    String::from_utf8(data.to_vec()).ok()
}

/// What a file holds on one side of a change.
enum Side {
    Missing,
    Binary,
    Text(String),
}

impl Git {
    pub fn open(root: &Path) -> Result<Git, GitError> {
        let repo = gix::open(root)
            .map_err(|e| GitError::NotARepository(root.display().to_string(), e.to_string()))?;
        Ok(Git { repo })
    }

    /// The commit HEAD points at (`None` in a repository without commits).
    pub fn head(&self) -> Option<String> {
        self.repo.head_id().ok().map(|id| id.detach().to_string())
    }

    fn tree_of(&self, rev: &str) -> Result<gix::Tree<'_>, GitError> {
        let id = self
            .repo
            .rev_parse_single(rev)
            .map_err(|e| GitError::UnknownRevision(rev.to_string(), e.to_string()))?;
        let object = git!(id.object(), "reading a revision")?;
        object
            .peel_to_tree()
            .map_err(|e| GitError::UnknownRevision(rev.to_string(), e.to_string()))
    }

    fn blob_at(&self, tree: &gix::Tree<'_>, path: &str) -> Result<Side, GitError> {
        let Some(entry) = git!(tree.lookup_entry_by_path(path), "looking up a path")? else {
            return Ok(Side::Missing);
        };
        if !entry.mode().is_blob() {
            return Ok(Side::Missing);
        }
        let object = git!(entry.object(), "reading a file")?;
        Ok(text_of(&object.data).map_or(Side::Binary, Side::Text))
    }

    fn blob(&self, id: &gix::oid) -> Result<Side, GitError> {
        let object = git!(self.repo.find_object(id), "reading a file")?;
        Ok(text_of(&object.data).map_or(Side::Binary, Side::Text))
    }

    /// The text of `path` at HEAD (`None` when absent or binary).
    pub fn text_at_head(&self, path: &str) -> Option<String> {
        let tree = self.repo.head_tree().ok()?;
        match self.blob_at(&tree, path).ok()? {
            Side::Text(text) => Some(text),
            _ => None,
        }
    }

    /// Every file and folder at HEAD (`true` for a folder), repository-relative; `None` when
    /// there are more than `max` or the repository has no commits.
    pub fn paths_at_head(&self, max: usize) -> Result<Option<Vec<(String, bool)>>, GitError> {
        let Ok(tree) = self.repo.head_tree() else {
            return Ok(None);
        };
        let mut bounded = Bounded {
            recorder: gix::traverse::tree::Recorder::default(),
            max,
        };
        let walked = tree.traverse().breadthfirst(&mut bounded);
        if bounded.recorder.records.len() >= max {
            return Ok(None);
        }
        git!(walked, "listing the files at HEAD")?;
        let paths = bounded
            .recorder
            .records
            .into_iter()
            .map(|e| (e.filepath.to_str_lossy().into_owned(), e.mode.is_tree()))
            .collect();
        Ok(Some(paths))
    }

    /// How many commits `head` has that `base` has not, counted no further than `cap + 1`.
    pub fn commits_between(&self, base: &str, head: &str, cap: usize) -> Result<usize, GitError> {
        let walk = git!(
            self.repo
                .rev_walk([self.commit_of(head)?])
                .with_hidden([self.commit_of(base)?])
                .all(),
            "walking the range"
        )?;
        let mut count = 0;
        for info in walk.take(cap.saturating_add(1)) {
            git!(info, "walking the range")?;
            count += 1;
        }
        Ok(count)
    }

    fn commit_of(&self, rev: &str) -> Result<gix::ObjectId, GitError> {
        let unknown =
            |e: &dyn std::fmt::Display| GitError::UnknownRevision(rev.to_string(), e.to_string());
        let id = self.repo.rev_parse_single(rev).map_err(|e| unknown(&e))?;
        let object = git!(id.object(), "reading a revision")?;
        Ok(object.peel_to_commit().map_err(|e| unknown(&e))?.id)
    }

    /// The change from revision `base` to revision `head`, renames detected; more than
    /// `max_files` changed files are refused before any is read.
    pub fn changes_between(
        &self,
        base: &str,
        head: &str,
        max_files: usize,
    ) -> Result<Vec<FileChange>, GitError> {
        let old = self.tree_of(base)?;
        let new = self.tree_of(head)?;
        let mut options = gix::diff::Options::default();
        options
            .track_path()
            .track_rewrites(Some(gix::diff::Rewrites::default()));
        let changes = git!(
            self.repo
                .diff_tree_to_tree(Some(&old), Some(&new), Some(options)),
            "comparing trees"
        )?;
        check_files(
            changes.iter().filter(|c| c.entry_mode().is_blob()).count(),
            max_files,
        )?;
        let mut out = Vec::new();
        for change in changes.into_iter().filter_map(BlobChange::of) {
            let side = |id: Option<gix::ObjectId>| match id {
                Some(id) => self.blob(&id),
                None => Ok(Side::Missing),
            };
            let old_side = side(change.old_id)?;
            let new_side = side(change.new_id)?;
            let old_path = change.old_path.map(|p| p.to_str_lossy().into_owned());
            let new_path = change.new_path.map(|p| p.to_str_lossy().into_owned());
            out.push(file_change(
                change.kind,
                old_path,
                new_path,
                old_side,
                new_side,
            ));
        }
        out.sort_by(|a, b| a.path().cmp(b.path()));
        Ok(out)
    }

    /// The change from HEAD to the working tree, staged or not (untracked files left out,
    /// as `git diff HEAD` does). Files staged as renames are reported as renames. More than
    /// `max_files` changed files are refused before any is read.
    pub fn worktree_changes(
        &self,
        root: &Path,
        max_files: usize,
    ) -> Result<Vec<FileChange>, GitError> {
        let status = git!(
            self.repo.status(gix::progress::Discard),
            "reading the status"
        )?;
        let items = git!(
            status
                .untracked_files(gix::status::UntrackedFiles::None)
                .into_iter(None),
            "reading the status"
        )?;
        let mut paths: BTreeSet<String> = BTreeSet::new();
        let mut renames: BTreeMap<String, String> = BTreeMap::new();
        for item in items {
            let item = git!(item, "reading the status")?;
            if let gix::status::Item::TreeIndex(gix::diff::index::Change::Rewrite {
                source_location,
                location,
                copy: false,
                ..
            }) = &item
            {
                renames.insert(
                    location.to_str_lossy().into_owned(),
                    source_location.to_str_lossy().into_owned(),
                );
            }
            paths.insert(item.location().to_str_lossy().into_owned());
        }
        check_files(paths.len().saturating_sub(renames.len()), max_files)?;
        let head_tree = self.repo.head_tree().ok();
        let files = RepoFiles::open(root).map_err(|e| GitError::Failed {
            doing: "opening the working tree".to_string(),
            message: e.to_string(),
        })?;
        let mut out = Vec::new();
        for path in paths {
            let old_path = renames.get(&path).cloned().unwrap_or_else(|| path.clone());
            let old_side = match &head_tree {
                Some(tree) => self.blob_at(tree, &old_path)?,
                None => Side::Missing,
            };
            // Through the repository reader: a link out of the repository, a FIFO or a file
            // over the limit is a change without text, never read.
            let new_side = match files.read(&path, WORKTREE_LIMIT) {
                Ok(data) => text_of(&data).map_or(Side::Binary, Side::Text),
                Err(e) if e.is_missing() => Side::Missing,
                Err(_) => Side::Binary,
            };
            let kind = match (&old_side, &new_side) {
                (Side::Missing, Side::Missing) => continue,
                (Side::Missing, _) => ChangeKind::Added,
                (_, Side::Missing) => ChangeKind::Deleted,
                _ if old_path != path => ChangeKind::Renamed,
                _ => ChangeKind::Modified,
            };
            if let (Side::Text(a), Side::Text(b)) = (&old_side, &new_side)
                && diff::normalise_newlines(a) == diff::normalise_newlines(b)
                && old_path == path
            {
                continue;
            }
            let (old_path, new_path) = match kind {
                ChangeKind::Added => (None, Some(path)),
                ChangeKind::Deleted => (Some(path), None),
                _ => (Some(old_path), Some(path)),
            };
            out.push(file_change(kind, old_path, new_path, old_side, new_side));
        }
        // A staged rename also shows its source as deleted: keep the rename only.
        let sources: HashSet<String> = renames.values().cloned().collect();
        out.retain(|c| !(c.kind == ChangeKind::Deleted && sources.contains(c.path())));
        Ok(out)
    }

    /// The author a review of the working tree is for: the configured user (email first).
    pub fn configured_author(&self) -> Option<String> {
        let author = self.repo.author()?.ok()?;
        let email = author.email.to_str_lossy().trim().to_string();
        if email.is_empty() {
            let name = author.name.to_str_lossy().trim().to_string();
            (!name.is_empty()).then_some(name)
        } else {
            Some(email)
        }
    }

    /// Whether lines `start..=end` of `path` at commit `from` were changed on the way to
    /// commit `to` (removed, replaced, or a line put between them; a file gone counts as
    /// changed). `None` when either commit is not in this repository (a pull request's
    /// commits are often not fetched) or a side is binary.
    pub fn lines_changed(
        &self,
        from: &str,
        to: &str,
        path: &str,
        start: u32,
        end: u32,
    ) -> Option<bool> {
        let hex = |rev: &str| rev.len() >= 7 && rev.bytes().all(|b| b.is_ascii_hexdigit());
        if !hex(from) || !hex(to) {
            return None;
        }
        let old = self.tree_of(from).ok()?;
        let new = self.tree_of(to).ok()?;
        let (Side::Text(before), after) = (
            self.blob_at(&old, path).ok()?,
            self.blob_at(&new, path).ok()?,
        ) else {
            return None;
        };
        let after = match after {
            Side::Text(text) => text,
            Side::Missing => return Some(true),
            Side::Binary => return None,
        };
        let change = diff::between(
            ChangeKind::Modified,
            Some(path.to_string()),
            Some(path.to_string()),
            Some(before),
            Some(after),
        );
        Some(change.hunks.iter().any(|hunk| touches(hunk, start, end)))
    }

    /// The fetch URLs of the repository's remotes.
    pub fn remote_urls(&self) -> Vec<String> {
        self.repo
            .remote_names()
            .into_iter()
            .filter_map(|name| {
                let name: &gix::bstr::BStr = name.as_ref();
                self.repo.find_remote(name).ok()
            })
            .filter_map(|remote| {
                let url = remote.url(gix::remote::Direction::Fetch)?;
                Some(url.to_bstring().to_str_lossy().into_owned())
            })
            .collect()
    }

    /// The author of a revision, through the mailmap.
    pub fn author_of(&self, rev: &str) -> Result<String, GitError> {
        let id = self
            .repo
            .rev_parse_single(rev)
            .map_err(|e| GitError::UnknownRevision(rev.to_string(), e.to_string()))?;
        let commit = git!(id.object(), "reading a revision")?
            .peel_to_commit()
            .map_err(|e| GitError::UnknownRevision(rev.to_string(), e.to_string()))?;
        let author = git!(commit.author(), "reading an author")?;
        let resolved = self.repo.open_mailmap().resolve(author);
        Ok(crate::history::identity(
            &resolved.name.to_string(),
            &resolved.email.to_string(),
        ))
    }
}

/// A change to a blob between two trees: its kind, and each side's path and blob (none on
/// the side where the file is missing).
struct BlobChange {
    kind: ChangeKind,
    old_path: Option<gix::bstr::BString>,
    new_path: Option<gix::bstr::BString>,
    old_id: Option<gix::ObjectId>,
    new_id: Option<gix::ObjectId>,
}

impl BlobChange {
    /// The change of a tree entry if it is a blob (a file), not a tree or a submodule.
    fn of(change: gix::object::tree::diff::ChangeDetached) -> Option<BlobChange> {
        use gix::object::tree::diff::ChangeDetached as C;
        let change = match change {
            C::Addition {
                location,
                entry_mode,
                id,
                ..
            } if entry_mode.is_blob() => BlobChange {
                kind: ChangeKind::Added,
                old_path: None,
                new_path: Some(location),
                old_id: None,
                new_id: Some(id),
            },
            C::Deletion {
                location,
                entry_mode,
                id,
                ..
            } if entry_mode.is_blob() => BlobChange {
                kind: ChangeKind::Deleted,
                old_path: Some(location),
                new_path: None,
                old_id: Some(id),
                new_id: None,
            },
            C::Modification {
                location,
                entry_mode,
                previous_id,
                id,
                ..
            } if entry_mode.is_blob() => BlobChange {
                kind: ChangeKind::Modified,
                old_path: Some(location.clone()),
                new_path: Some(location),
                old_id: Some(previous_id),
                new_id: Some(id),
            },
            C::Rewrite {
                source_location,
                source_id,
                location,
                id,
                entry_mode,
                copy,
                ..
            } if entry_mode.is_blob() => BlobChange {
                kind: if copy {
                    ChangeKind::Copied
                } else {
                    ChangeKind::Renamed
                },
                old_path: Some(source_location),
                new_path: Some(location),
                old_id: Some(source_id),
                new_id: Some(id),
            },
            _ => return None,
        };
        Some(change)
    }
}

/// Whether a hunk removes one of old lines `start..=end` or puts a line between two of them.
fn touches(hunk: &diff::Hunk, start: u32, end: u32) -> bool {
    let mut previous_old = if hunk.old_len == 0 {
        hunk.old_start
    } else {
        hunk.old_start.saturating_sub(1)
    };
    for line in &hunk.lines {
        match (line.op, line.old) {
            ('-', Some(old)) if (start..=end).contains(&old) => return true,
            ('+', _) if previous_old >= start && previous_old < end => return true,
            (_, Some(old)) => previous_old = old,
            _ => {}
        }
    }
    false
}

fn file_change(
    kind: ChangeKind,
    old_path: Option<String>,
    new_path: Option<String>,
    old: Side,
    new: Side,
) -> FileChange {
    match (old, new) {
        (Side::Binary, _) | (_, Side::Binary) => diff::binary(kind, old_path, new_path),
        (old, new) => {
            let text = |s: Side| match s {
                Side::Text(t) => Some(t),
                _ => None,
            };
            diff::between(kind, old_path, new_path, text(old), text(new))
        }
    }
}
