//! Watching the working tree: one non-recursive watch per directory the index walks (so
//! `node_modules`, build outputs and ignored trees cost no watches), the same ignore rules as
//! the walk answered per event from per-directory matchers loaded on first use, and the git
//! files that say HEAD moved.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use ignore::gitignore::{Gitignore, GitignoreBuilder};
use ignore::overrides::Override;
use notify::{EventKind, RecommendedWatcher, RecursiveMode, Watcher};
use tokio::sync::mpsc;

use crate::config::Repo;
use crate::index::walk;

/// What a batch of file-system events asks for.
#[derive(Debug, Default, PartialEq)]
pub struct Batch {
    /// Repository-relative files that changed (created, written, removed, renamed).
    pub files: BTreeSet<String>,
    /// Something only a whole walk can settle: a directory appeared or went, an ignore file
    /// changed, or the watcher lost events.
    pub rescan: bool,
    /// HEAD or a branch moved.
    pub head_moved: bool,
    /// Directories to start watching.
    pub new_dirs: Vec<PathBuf>,
}

impl Batch {
    pub fn is_empty(&self) -> bool {
        self.files.is_empty() && !self.rescan && !self.head_moved
    }
}

/// The repository's root as the daemon found it when it started. A root moved, deleted or
/// replaced by another directory since is no longer the repository the daemon follows: its
/// watches are on directories that left the path, and its index on a tree that is not there.
pub struct Root {
    path: PathBuf,
    identity: Option<Identity>,
}

/// What tells one directory from another at the same path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Identity {
    device: u64,
    inode: u64,
}

impl Identity {
    #[cfg(unix)]
    fn of(metadata: &std::fs::Metadata) -> Option<Identity> {
        use std::os::unix::fs::MetadataExt;
        Some(Identity {
            device: metadata.dev(),
            inode: metadata.ino(),
        })
    }

    #[cfg(not(unix))]
    fn of(_: &std::fs::Metadata) -> Option<Identity> {
        None
    }
}

impl Root {
    pub fn of(path: &Path) -> Root {
        Root {
            path: path.to_path_buf(),
            identity: std::fs::metadata(path).ok().as_ref().and_then(Identity::of),
        }
    }

    /// Why the root is no longer the repository the daemon started on; `None` while it is,
    /// and while it cannot be read for now (permissions: the index is kept until it can).
    pub fn lost(&self) -> Option<&'static str> {
        match std::fs::metadata(&self.path) {
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
                ) =>
            {
                Some("moved or deleted")
            }
            Err(_) => None,
            Ok(metadata) if !metadata.is_dir() => Some("replaced by a file"),
            Ok(metadata) => match (self.identity, Identity::of(&metadata)) {
                (Some(then), Some(now)) if then != now => Some("replaced by another directory"),
                _ => None,
            },
        }
    }
}

/// The ignore rules of the walk, answered one path at a time.
pub struct Filter {
    root: PathBuf,
    data_dir: PathBuf,
    overrides: Override,
    /// `.gitignore` and `.ignore` of each directory seen so far (`None`: it has neither).
    matchers: HashMap<PathBuf, Option<Gitignore>>,
    /// The user's global excludes, then `.git/info/exclude`.
    excludes: Vec<Gitignore>,
}

impl Filter {
    pub fn new(repo: &Repo) -> Filter {
        // Invalid patterns are reported by the index run.
        let (overrides, _) = walk::overrides(&repo.root, &repo.settings.index.exclude);
        let mut excludes = GitignoreBuilder::new(&repo.root);
        excludes.add(repo.root.join(".git/info/exclude"));
        let excludes = vec![
            GitignoreBuilder::new(&repo.root).build_global().0,
            excludes.build().unwrap_or_else(|_| Gitignore::empty()),
        ];
        Filter {
            root: repo.root.clone(),
            data_dir: repo.data_dir.clone(),
            overrides,
            matchers: HashMap::new(),
            excludes,
        }
    }

    /// Drops the cached rules of `dir` (its ignore file changed).
    pub fn forget(&mut self, dir: &Path) {
        self.matchers.remove(dir);
    }

    /// Whether `path` (absolute, inside the root) is left out of the index: hidden, a build
    /// output, excluded in `cairn.toml`, ignored by git, or cairn's own data.
    pub fn ignored(&mut self, path: &Path, is_dir: bool) -> bool {
        if path.starts_with(&self.data_dir) {
            return true;
        }
        let Ok(relative) = path.strip_prefix(&self.root) else {
            return true;
        };
        let parts: Vec<_> = relative.components().collect();
        if parts.is_empty() {
            return false;
        }
        let mut prefix = PathBuf::new();
        for (i, part) in parts.iter().enumerate() {
            prefix.push(part);
            let last = i + 1 == parts.len();
            let dir = !last || is_dir;
            if part.as_os_str().to_string_lossy().starts_with('.') {
                return true;
            }
            if self.overrides.matched(&prefix, dir).is_ignore() {
                return true;
            }
        }
        // The deepest ignore file with an opinion decides, as in git.
        let mut dirs: Vec<PathBuf> = path
            .ancestors()
            .skip(1)
            .take_while(|d| d.starts_with(&self.root))
            .map(Path::to_path_buf)
            .collect();
        dirs.reverse();
        let mut ignored = false;
        for excludes in &self.excludes {
            let matched = excludes.matched_path_or_any_parents(path, is_dir);
            if !matched.is_none() {
                ignored = matched.is_ignore();
            }
        }
        for dir in dirs {
            if let Some(matcher) = self.matcher(&dir) {
                let matched = matcher.matched_path_or_any_parents(path, is_dir);
                if !matched.is_none() {
                    ignored = matched.is_ignore();
                }
            }
        }
        ignored
    }

    fn matcher(&mut self, dir: &Path) -> Option<&Gitignore> {
        self.matchers
            .entry(dir.to_path_buf())
            .or_insert_with(|| {
                let mut builder = GitignoreBuilder::new(dir);
                let mut any = false;
                for name in [".gitignore", ".ignore"] {
                    let file = dir.join(name);
                    if file.is_file() {
                        any = true;
                        builder.add(file);
                    }
                }
                any.then(|| builder.build().ok()).flatten()
            })
            .as_ref()
    }

    /// Sorts raw events into a batch: changed files, rescans, HEAD moves.
    pub fn classify(&mut self, event: &notify::Event, batch: &mut Batch) {
        if event.need_rescan() {
            batch.rescan = true;
            return;
        }
        if matches!(event.kind, EventKind::Access(_)) {
            return;
        }

        let git = self.root.join(".git");
        for path in &event.paths {
            if let Ok(inside) = path.strip_prefix(&git) {
                let name = inside.to_string_lossy();
                if name == "HEAD" || name == "packed-refs" || name.starts_with("refs/heads") {
                    batch.head_moved = true;
                }
                continue;
            }
            let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
            if matches!(name.as_deref(), Some(".gitignore" | ".ignore")) {
                if let Some(dir) = path.parent() {
                    self.forget(dir);
                }
                batch.rescan = true;
                continue;
            }
            // A directory removed: what it held is only found by a walk.
            if matches!(
                event.kind,
                EventKind::Remove(notify::event::RemoveKind::Folder)
            ) {
                batch.rescan |= !self.ignored(path, true);
                continue;
            }
            let metadata = std::fs::symlink_metadata(path).ok();
            let is_dir = metadata.as_ref().is_some_and(|m| m.is_dir());
            if self.ignored(path, is_dir) {
                continue;
            }
            if is_dir {
                if matches!(event.kind, EventKind::Create(_) | EventKind::Modify(_)) {
                    batch.new_dirs.push(path.clone());
                }
                batch.rescan = true;
                continue;
            }
            if metadata.is_none() && self.was_dir(path) {
                batch.rescan = true;
                continue;
            }
            if let Ok(relative) = path.strip_prefix(&self.root) {
                batch
                    .files
                    .insert(relative.to_string_lossy().replace('\\', "/"));
            }
        }
    }

    /// Whether a path that no longer exists was a watched directory (its rules were loaded).
    fn was_dir(&self, path: &Path) -> bool {
        self.matchers.contains_key(path)
    }
}

/// Directories under `top` the walk enters (top included), for watching.
pub fn directories(repo: &Repo, top: &Path) -> Vec<PathBuf> {
    let (overrides, _) = walk::overrides(&repo.root, &repo.settings.index.exclude);
    let mut dirs = Vec::new();
    for entry in walk::walker(top, overrides).filter_map(Result::ok) {
        if entry.file_type().is_some_and(|t| t.is_dir()) {
            dirs.push(entry.into_path());
        }
    }
    dirs
}

/// How many file-system events wait for the daemon's loop before further ones are dropped
/// and stand for one rescan.
pub(crate) const QUEUE: usize = 4096;

/// File-system notifications from the watcher (notify's events), at most [`QUEUE`] waiting. The watcher's thread never
/// waits for the loop: when the queue is full, an event is dropped and the loop is given one
/// rescan instead, which finds whatever the dropped events named.
pub struct Notifications {
    queue: mpsc::Receiver<notify::Result<notify::Event>>,
    dropped: Arc<AtomicBool>,
}

impl Notifications {
    /// The next event; a rescan when events were dropped since the last call. `None` once
    /// the watcher is gone.
    pub async fn recv(&mut self) -> Option<notify::Result<notify::Event>> {
        if self.dropped.swap(false, Ordering::AcqRel) {
            return Some(Ok(rescan()));
        }
        self.queue.recv().await
    }
}

/// An event that asks for a whole walk (as notify's own for lost kernel events).
fn rescan() -> notify::Event {
    notify::Event::new(EventKind::Other).set_flag(notify::event::Flag::Rescan)
}

/// The sending half of [`Notifications`], for the watcher's thread.
fn feed(
    capacity: usize,
) -> (
    impl Fn(notify::Result<notify::Event>) + Send + 'static,
    Notifications,
) {
    let (sender, queue) = mpsc::channel(capacity);
    let dropped = Arc::new(AtomicBool::new(false));
    let flag = dropped.clone();
    let send = move |event| {
        if sender.try_send(event).is_err() {
            flag.store(true, Ordering::Release);
        }
    };
    (send, Notifications { queue, dropped })
}

/// Starts watching `dirs` (each non-recursively) and the git files that move HEAD, and returns
/// the watcher with its events.
pub fn watch(repo: &Repo, dirs: &[PathBuf]) -> notify::Result<(RecommendedWatcher, Notifications)> {
    let (send, events) = feed(QUEUE);
    let mut watcher = notify::recommended_watcher(send)?;
    for dir in dirs {
        add(&mut watcher, dir);
    }
    let git = repo.root.join(".git");
    if git.is_dir() {
        add(&mut watcher, &git);
        let heads = git.join("refs/heads");
        if heads.is_dir()
            && let Err(e) = watcher.watch(&heads, RecursiveMode::Recursive)
        {
            tracing::warn!("cannot watch {}: {e}", heads.display());
        }
    }
    Ok((watcher, events))
}

/// Watches one more directory; one that vanished already is no error.
pub fn add(watcher: &mut RecommendedWatcher, dir: &Path) {
    if let Err(e) = watcher.watch(dir, RecursiveMode::NonRecursive)
        && dir.exists()
    {
        tracing::warn!("cannot watch {}: {e}", dir.display());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_root_is_lost_when_moved_deleted_or_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("repo");
        std::fs::create_dir(&path).unwrap();
        let root = Root::of(&path);
        std::fs::write(path.join("a.py"), "x = 1\n").unwrap();
        assert_eq!(root.lost(), None, "a file written is no loss");

        std::fs::rename(&path, dir.path().join("elsewhere")).unwrap();
        assert_eq!(root.lost(), Some("moved or deleted"));
        std::fs::create_dir(&path).unwrap();
        assert_eq!(root.lost(), Some("replaced by another directory"));
        std::fs::remove_dir(&path).unwrap();
        std::fs::write(&path, "").unwrap();
        assert_eq!(root.lost(), Some("replaced by a file"));

        // Moved back, it is the same directory again.
        std::fs::remove_file(&path).unwrap();
        std::fs::rename(dir.path().join("elsewhere"), &path).unwrap();
        assert_eq!(root.lost(), None);
    }

    fn repo(root: &Path) -> Repo {
        Repo::discover(root, Some(&root.join("data-outside"))).unwrap()
    }

    #[test]
    fn the_filter_follows_the_walks_rules() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("src/gen")).unwrap();
        std::fs::create_dir_all(root.join("node_modules/x")).unwrap();
        std::fs::write(root.join(".gitignore"), "*.log\n/secret/\n").unwrap();
        std::fs::write(root.join("src/.gitignore"), "gen/\n!keep.log\n").unwrap();
        let repo = repo(&root);
        let mut filter = Filter::new(&repo);
        assert!(!filter.ignored(&root.join("src/a.py"), false));
        assert!(filter.ignored(&root.join("node_modules/x/a.js"), false));
        assert!(filter.ignored(&root.join("debug.log"), false));
        assert!(!filter.ignored(&root.join("src/keep.log"), false));
        assert!(filter.ignored(&root.join("src/gen/a.py"), false));
        assert!(filter.ignored(&root.join("secret/a.py"), false));
        assert!(filter.ignored(&root.join(".hidden/a.py"), false));
        assert!(filter.ignored(&root.join("data-outside/store/x"), false));
        assert!(filter.ignored(Path::new("/elsewhere/a.py"), false));
    }

    #[test]
    fn a_changed_ignore_file_is_read_again() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let repo = repo(&root);
        let mut filter = Filter::new(&repo);
        assert!(!filter.ignored(&root.join("a.py"), false));
        std::fs::write(root.join(".gitignore"), "a.py\n").unwrap();
        let event = notify::Event::new(EventKind::Modify(notify::event::ModifyKind::Any))
            .add_path(root.join(".gitignore"));
        let mut batch = Batch::default();
        filter.classify(&event, &mut batch);
        assert!(batch.rescan);
        assert!(filter.ignored(&root.join("a.py"), false));
    }

    #[test]
    fn events_sort_into_files_directories_and_head_moves() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join(".git/refs/heads")).unwrap();
        std::fs::create_dir_all(root.join("pkg")).unwrap();
        let repo = repo(&root);
        let mut filter = Filter::new(&repo);
        let mut batch = Batch::default();
        let create = |path: PathBuf| {
            notify::Event::new(EventKind::Create(notify::event::CreateKind::Any)).add_path(path)
        };
        filter.classify(&create(root.join("a.py")), &mut batch);
        filter.classify(&create(root.join(".git/index")), &mut batch);
        assert!(!batch.head_moved && !batch.rescan);
        filter.classify(&create(root.join(".git/refs/heads/main")), &mut batch);
        filter.classify(&create(root.join("pkg")), &mut batch);
        assert_eq!(batch.files.iter().collect::<Vec<_>>(), ["a.py"]);
        assert!(batch.head_moved);
        assert!(batch.rescan);
        assert_eq!(batch.new_dirs, vec![root.join("pkg")]);
    }

    #[tokio::test]
    async fn events_that_do_not_fit_become_one_rescan() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let (send, mut events) = feed(2);
        let write = |name: &str| {
            Ok(
                notify::Event::new(EventKind::Modify(notify::event::ModifyKind::Any))
                    .add_path(root.join(name)),
            )
        };
        for name in ["a.py", "b.py", "c.py", "d.py"] {
            send(write(name));
        }
        let mut filter = Filter::new(&repo(&root));
        let mut batch = Batch::default();
        for _ in 0..3 {
            let event = events.recv().await.unwrap().unwrap();
            filter.classify(&event, &mut batch);
        }
        assert!(batch.rescan);
        assert_eq!(batch.files.iter().collect::<Vec<_>>(), ["a.py", "b.py"]);
        send(write("e.py"));
        let next = events.recv().await.unwrap().unwrap();
        assert!(!next.need_rescan(), "one rescan for the dropped events");
    }

    #[test]
    fn directories_leave_out_ignored_trees() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        for d in ["src/a", "node_modules/x", ".venv/lib", "build"] {
            std::fs::create_dir_all(root.join(d)).unwrap();
        }
        let repo = repo(&root);
        let mut found: Vec<String> = directories(&repo, &root)
            .iter()
            .map(|d| {
                d.strip_prefix(&root)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned()
            })
            .collect();
        found.sort();
        assert_eq!(found, ["", "src", "src/a"]);
    }
}
