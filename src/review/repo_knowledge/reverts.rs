//! Changes that did not hold, from the commit history: a commit that was reverted, and a
//! commit whose lines a fix changed again soon after. Files where that happened at least
//! [`MIN_EVENTS`] times are risky modules; the events of other files count for their folder.
//!
//! The rules, kept simple:
//! - a revert is a commit whose message has git's `This reverts commit <sha>` line or whose
//!   summary is `Revert "<summary>"`; it marks the files of the commit it reverts (its own
//!   files when that commit is not in the walk);
//! - a re-fix is a fix (its summary speaks of a fix, bug, regression or crash, as
//!   [`crate::history`] judges fixes; not a revert)
//!   that removes or rewrites a line an earlier commit added to the same file at most
//!   [`REFIX_DAYS`] days before it (lines compared by their text, trimmed, short ones left
//!   out); it marks that file, once per fix, for the nearest such commit.
//!
//! Dependency bumps are not compared (their "fix" is a version) nor their reverts counted,
//! fixes of formatting, lint, style or typos are no re-fixes, and lock files, dependency
//! manifests, documentation and tests are never risky modules (their churn says nothing of
//! the code's risk).
//!
//! Bounds: the newest [`MAX_COMMITS`] commits, merges left out; commits touching more than
//! [`MAX_FILES`] files and root commits are not compared line by line; at most
//! [`MAX_COMPARED`] commits are diffed.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;

use serde::Serialize;

use super::{Progress, Skipped, Stage};
use crate::fsutil::repo::RepoFiles;
use crate::history::{Logged, is_fix, reverted_commit};
use crate::review::git::{Git, GitError};

/// Most commits walked.
pub const MAX_COMMITS: usize = 5_000;
/// How soon after a commit a fix of its lines counts as a re-fix, in days.
pub const REFIX_DAYS: i64 = 14;
/// Events from which a file or folder is a risky module.
pub const MIN_EVENTS: usize = 2;
/// Commits touching more files than this are not compared (mass changes, reformats).
pub const MAX_FILES: usize = 50;
/// Most commits diffed line by line.
pub const MAX_COMPARED: usize = 1_000;
/// Most risky modules listed.
const MAX_RISKY: usize = 20;
/// Shortest line (trimmed, in bytes) compared.
const MIN_LINE: usize = 4;

/// What happened to an earlier change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Undone {
    Reverted,
    Refixed,
}

impl Undone {
    pub fn as_str(self) -> &'static str {
        match self {
            Undone::Reverted => "reverted",
            Undone::Refixed => "re-fixed",
        }
    }
}

/// A change that did not hold.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Event {
    pub kind: Undone,
    /// The revert or the fix.
    pub commit: String,
    /// The commit it undid, when known.
    pub earlier: Option<String>,
    /// The summary of the revert or the fix.
    pub summary: String,
    /// Seconds since the epoch (the revert's or the fix's commit time).
    pub time: i64,
}

/// A file or folder whose changes often did not hold.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Risky {
    pub path: String,
    /// A folder, from the events of its files.
    pub folder: bool,
    /// Newest first, one per revert or fix.
    pub events: Vec<Event>,
}

/// What the history says.
#[derive(Debug, Default)]
pub struct Found {
    /// Commits walked.
    pub commits: usize,
    /// Reverts found.
    pub reverts: usize,
    /// Fixes that changed lines of a commit shortly before them.
    pub refixes: usize,
    pub risky: Vec<Risky>,
    pub skipped: Vec<Skipped>,
}

/// Reads the history of the repository at `root` for reverts and re-fixes; risky modules
/// are only files and folders that still exist.
pub fn find(root: &Path, files: &RepoFiles, progress: &Progress) -> Result<Found, GitError> {
    progress.enter(Stage::History, 0);
    let commits = crate::history::log(root, MAX_COMMITS)?;
    let git = Git::open(root)?;
    let mut found = Found {
        commits: commits.len(),
        ..Found::default()
    };
    let mut marked = reverts(&commits, &mut found);
    let mut lines = Lines::new(&git);
    marked.extend(refixes(&commits, &mut lines, progress, &mut found));
    if lines.full {
        found.skipped.push(Skipped::new(
            "history",
            format!("more than {MAX_COMPARED} commits to compare; the newest were compared"),
        ));
    }
    found.risky = risky(marked, |path| files.exists(path));
    Ok(found)
}

/// The first line of a message.
fn summary(message: &str) -> String {
    crate::tokens::truncate(message.lines().next().unwrap_or_default().trim(), 120)
}

/// The commit a revert names (git's `This reverts commit <sha>` line), or the summary it
/// quotes (`Revert "<summary>"`); `None` when the commit is no revert.
fn reverted(message: &str) -> Option<Reverts> {
    if let Some(sha) = reverted_commit(message) {
        return Some(Reverts::Commit(sha));
    }
    let first = message.lines().next().unwrap_or_default().trim();
    let quoted = first.strip_prefix("Revert \"")?.strip_suffix('"')?;
    Some(Reverts::Summary(quoted.to_string()))
}

enum Reverts {
    Commit(String),
    Summary(String),
}

/// The files each revert marks, with its event.
fn reverts(commits: &[Logged], found: &mut Found) -> Vec<(String, Event)> {
    let mut marked = Vec::new();
    for (at, commit) in commits.iter().enumerate() {
        let Some(reverts) = reverted(&commit.message) else {
            continue;
        };
        found.reverts += 1;
        let older = &commits[at + 1..];
        let target = older.iter().find(|c| match &reverts {
            Reverts::Commit(sha) => c.id.starts_with(sha.as_str()),
            Reverts::Summary(quoted) => summary(&c.message) == *quoted,
        });
        // Taking back a dependency bump says nothing of the code.
        let undone = target.map_or(commit.message.as_str(), |t| t.message.as_str());
        let quoted = commit.message.trim_start().strip_prefix("Revert \"");
        if is_dependency_bump(undone) || quoted.is_some_and(is_dependency_bump) {
            continue;
        }
        let files = &target.unwrap_or(commit).files;
        if files.len() > MAX_FILES {
            found.skipped.push(Skipped::new(
                short(&commit.id),
                format!("a revert of more than {MAX_FILES} files: not counted"),
            ));
            continue;
        }
        let event = Event {
            kind: Undone::Reverted,
            commit: short(&commit.id),
            earlier: target.map(|t| short(&t.id)),
            summary: summary(&commit.message),
            time: commit.time,
        };
        marked.extend(files.iter().map(|f| (f.clone(), event.clone())));
    }
    marked
}

/// Whether a commit can be compared line by line: not a root, not a mass change, not a
/// revert, not a dependency bump (whose "fix" is a version, not a mistake).
fn comparable(commit: &Logged) -> bool {
    commit.parent.is_some()
        && commit.files.len() <= MAX_FILES
        && reverted(&commit.message).is_none()
        && !is_dependency_bump(&commit.message)
}

/// Summaries that bots and people give dependency updates.
const BUMPS: &[&str] = &[
    "bump ",
    "update dependency",
    "update dependencies",
    "update deps",
    "chore(deps",
    "fix(deps",
    "build(deps",
    "deps:",
    "deps(",
    "[dependabot",
    "[renovate",
];

/// Words of a fix that changes how the code looks, not what it does.
const COSMETIC: &[&str] = &[
    "format",
    "lint",
    "style",
    "typo",
    "whitespace",
    "prettier",
    "indent",
    "clippy",
    "rubocop",
];

/// Whether a fix's summary is about how the code looks (formatting, lint, style, typos).
fn is_cosmetic(message: &str) -> bool {
    let summary = message.lines().next().unwrap_or_default().to_lowercase();
    COSMETIC.iter().any(|w| summary.contains(w))
}

/// Whether a commit message is a dependency update.
fn is_dependency_bump(message: &str) -> bool {
    let summary = message
        .lines()
        .next()
        .unwrap_or_default()
        .trim()
        .to_lowercase();
    BUMPS.iter().any(|b| summary.starts_with(b))
}

/// Files whose churn says nothing of the code's risk: lock files and dependency manifests
/// (versions move), documentation, and tests (they change with the code they test).
fn churn_only(path: &str) -> bool {
    const LOCKS: &[&str] = &[
        "package-lock.json",
        "yarn.lock",
        "pnpm-lock.yaml",
        "Cargo.lock",
        "go.sum",
        "poetry.lock",
        "Pipfile.lock",
        "Gemfile.lock",
        "composer.lock",
        "package.json",
        "packages.lock.json",
        "Directory.Packages.props",
    ];
    const DOCS: &[&str] = &[".md", ".rst", ".txt", ".adoc"];
    const TEST_DIRS: &[&str] = &[
        "test",
        "tests",
        "spec",
        "specs",
        "__tests__",
        "e2e",
        "testdata",
    ];
    let name = path.rsplit('/').next().unwrap_or(path);
    let lower = name.to_lowercase();
    let stem = lower.split('.').next().unwrap_or_default();
    // `FooTest.java`, `BarTests.cs`: the case tells a test class from `contest.rs`.
    let class = name.split('.').next().unwrap_or_default();
    let in_tests = path
        .split('/')
        .rev()
        .skip(1)
        .any(|dir| TEST_DIRS.contains(&dir.to_lowercase().as_str()));
    LOCKS.contains(&name)
        || lower.ends_with(".lock")
        || lower.ends_with(".csproj")
        || DOCS.iter().any(|d| lower.ends_with(d))
        || in_tests
        || stem.starts_with("test_")
        || stem.ends_with("_test")
        || stem.ends_with("-test")
        || class.ends_with("Test")
        || class.ends_with("Tests")
        || lower.contains(".spec.")
        || lower.contains(".test.")
}

/// The files each re-fix marks, with its event.
fn refixes(
    commits: &[Logged],
    lines: &mut Lines,
    progress: &Progress,
    found: &mut Found,
) -> Vec<(String, Event)> {
    let window = REFIX_DAYS * 24 * 3600;
    let fixes: Vec<usize> = (0..commits.len())
        .filter(|&at| {
            let message = &commits[at].message;
            is_fix(message) && !is_cosmetic(message) && comparable(&commits[at])
        })
        .collect();
    progress.enter(Stage::Comparing, fixes.len());
    let mut marked = Vec::new();
    for at in fixes {
        progress.one_done();
        let fix = &commits[at];
        let Some(fixed) = lines.of(fix) else {
            continue;
        };
        let mut any = false;
        for file in &fix.files {
            let Some(removed) = fixed
                .get(file)
                .map(|c| &c.removed)
                .filter(|r| !r.is_empty())
            else {
                continue;
            };
            let earlier = commits[at + 1..]
                .iter()
                .take_while(|e| fix.time - e.time <= window)
                .filter(|e| e.files.contains(file) && comparable(e))
                .find(|e| {
                    lines
                        .of(e)
                        .and_then(|changed| changed.get(file).cloned())
                        .is_some_and(|c| !c.added.is_disjoint(removed))
                });
            if let Some(earlier) = earlier {
                any = true;
                marked.push((
                    file.clone(),
                    Event {
                        kind: Undone::Refixed,
                        commit: short(&fix.id),
                        earlier: Some(short(&earlier.id)),
                        summary: summary(&fix.message),
                        time: fix.time,
                    },
                ));
            }
        }
        found.refixes += usize::from(any);
    }
    marked
}

/// The lines a commit added and removed in one file, trimmed, short ones left out.
#[derive(Debug, Clone, Default)]
struct Changed {
    added: HashSet<String>,
    removed: HashSet<String>,
}

/// Each commit's changed lines by file, diffed once, at most [`MAX_COMPARED`] commits.
struct Lines<'g> {
    git: &'g Git,
    diffed: HashMap<String, Option<std::sync::Arc<HashMap<String, Changed>>>>,
    /// More commits were to be diffed than the bound allows.
    full: bool,
}

impl<'g> Lines<'g> {
    fn new(git: &'g Git) -> Lines<'g> {
        Lines {
            git,
            diffed: HashMap::new(),
            full: false,
        }
    }

    fn of(&mut self, commit: &Logged) -> Option<std::sync::Arc<HashMap<String, Changed>>> {
        if let Some(known) = self.diffed.get(&commit.id) {
            return known.clone();
        }
        if self.diffed.len() >= MAX_COMPARED {
            self.full = true;
            return None;
        }
        let parent = commit.parent.as_deref()?;
        let changed = self
            .git
            .changes_between(parent, &commit.id, MAX_FILES)
            .ok()
            .map(|changes| {
                let keep = |text: &str| {
                    let text = text.trim();
                    (text.len() >= MIN_LINE && text.chars().any(char::is_alphanumeric))
                        .then(|| text.to_string())
                };
                let by_file = changes
                    .iter()
                    .map(|change| {
                        let lines = Changed {
                            added: change.added().filter_map(|(_, t)| keep(t)).collect(),
                            removed: change.removed().filter_map(|(_, t)| keep(t)).collect(),
                        };
                        (change.path().to_string(), lines)
                    })
                    .collect();
                std::sync::Arc::new(by_file)
            });
        self.diffed.insert(commit.id.clone(), changed.clone());
        changed
    }
}

/// A commit's id as answers show it.
fn short(id: &str) -> String {
    id.chars().take(10).collect()
}

/// Files with at least [`MIN_EVENTS`] events, then folders with that many among the events of
/// their other files; each event counted once per file or folder, only paths that exist.
fn risky(marked: Vec<(String, Event)>, exists: impl Fn(&str) -> bool) -> Vec<Risky> {
    let mut by_file: BTreeMap<String, Vec<Event>> = BTreeMap::new();
    for (file, event) in marked.into_iter().filter(|(file, _)| !churn_only(file)) {
        add_once(by_file.entry(file).or_default(), event);
    }
    let mut out = Vec::new();
    let mut by_folder: BTreeMap<String, Vec<Event>> = BTreeMap::new();
    for (file, events) in by_file {
        if events.len() >= MIN_EVENTS {
            out.push(Risky {
                path: file,
                folder: false,
                events,
            });
        } else if let Some((folder, _)) = file.rsplit_once('/') {
            let folder_events = by_folder.entry(folder.to_string()).or_default();
            for event in events {
                add_once(folder_events, event);
            }
        }
    }
    out.extend(
        by_folder
            .into_iter()
            .filter(|(_, events)| events.len() >= MIN_EVENTS)
            .map(|(path, events)| Risky {
                path,
                folder: true,
                events,
            }),
    );
    out.retain(|r| exists(&r.path));
    for r in &mut out {
        r.events
            .sort_by(|a, b| b.time.cmp(&a.time).then_with(|| a.commit.cmp(&b.commit)));
    }
    out.sort_by(|a, b| {
        b.events
            .len()
            .cmp(&a.events.len())
            .then_with(|| a.path.cmp(&b.path))
    });
    out.truncate(MAX_RISKY);
    out
}

/// Adds `event` unless the same commit is already there.
fn add_once(events: &mut Vec<Event>, event: Event) {
    if !events.iter().any(|e| e.commit == event.commit) {
        events.push(event);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn git(dir: &Path, args: &[&str]) -> String {
        let output = std::process::Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(["-c", "user.name=Ada", "-c", "user.email=ada@example.com"])
            .args(args)
            .output()
            .unwrap();
        assert!(output.status.success(), "git {args:?}: {output:?}");
        String::from_utf8(output.stdout).unwrap().trim().to_string()
    }

    fn commit(dir: &Path, file: &str, text: &str, message: &str) -> String {
        let full = dir.join(file);
        std::fs::create_dir_all(full.parent().unwrap()).unwrap();
        std::fs::write(full, text).unwrap();
        git(dir, &["add", "."]);
        git(dir, &["commit", "-q", "-m", message]);
        git(dir, &["rev-parse", "HEAD"])
    }

    #[test]
    fn reverts_and_quick_refixes_mark_their_files() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        git(root, &["init", "-q"]);
        commit(root, "README.md", "shop\n", "start");
        // Reverted once, re-fixed once: a risky file.
        let rounding = commit(
            root,
            "src/billing/tax.py",
            "def tax(x):\n    return round(x * 0.2)\n",
            "Round taxes",
        );
        git(root, &["revert", "--no-edit", &rounding]);
        commit(
            root,
            "src/billing/tax.py",
            "def tax(x):\n    return x * 0.21\n",
            "Raise the rate",
        );
        commit(
            root,
            "src/billing/tax.py",
            "def tax(x):\n    return x * 0.2\n",
            "fix: the rate is 20%",
        );
        // A fix of lines nobody added recently: nothing.
        commit(root, "src/cart.py", "def total():\n    return 0\n", "cart");
        commit(
            root,
            "src/cart.py",
            "def total():\n    return 1\n",
            "cart two",
        );
        commit(
            root,
            "src/cart.py",
            "def total():\n    return 2\n",
            "docs: explain",
        );
        commit(
            root,
            "src/cart.py",
            "def total():\n    return 3\n",
            "fix typo in docs",
        );
        let files = RepoFiles::open(root).unwrap();
        let found = find(root, &files, &Progress::default()).unwrap();
        assert_eq!(found.commits, 9);
        assert_eq!(found.reverts, 1);
        let paths: Vec<&str> = found.risky.iter().map(|r| r.path.as_str()).collect();
        assert_eq!(paths, ["src/billing/tax.py"]);
        let events = &found.risky[0].events;
        assert_eq!(events.len(), 2);
        let revert = events.iter().find(|e| e.kind == Undone::Reverted).unwrap();
        let refix = events.iter().find(|e| e.kind == Undone::Refixed).unwrap();
        assert_eq!(refix.summary, "fix: the rate is 20%");
        assert_eq!(revert.earlier.as_deref(), Some(&rounding[..10]));
        assert_eq!(revert.summary, "Revert \"Round taxes\"");
        // `fix typo` changed a line `docs: explain` added the day it was added, but a typo
        // fix is cosmetic: no re-fix.
        assert_eq!(found.refixes, 1);
    }

    #[test]
    fn the_subject_says_whether_a_commit_fixes() {
        // alphagov/govuk-infrastructure's 1605bbb1, 2a3a1e8f and c6a4960c, in short: none fixes.
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        git(root, &["init", "-q"]);
        commit(root, "README.md", "infra\n", "start");
        let main = "terraform/deployments/chat/main.tf";
        commit(
            root,
            main,
            "source = \"../modules/app\"\nname = \"m1\"\n",
            "Add chat",
        );
        commit(
            root,
            main,
            "source = \"github.com/alphagov/modules?ref=1605bbb\"\nname = \"m1\"\n",
            "Update module sources to specify the modules as from github with a fixed sha",
        );
        commit(
            root,
            main,
            "source = \"github.com/alphagov/modules?ref=1605bbb\"\nname = \"tokens\"\n",
            "Give metric IDs more meaningful names\n\nThis could lead\nto bugs in future.",
        );
        commit(
            root,
            main,
            "source = \"github.com/alphagov/modules?ref=1605bbb\"\nname = \"token_count\"\n",
            "Archive the exporter\n\n- Effectively reverts https://github.com/alphagov/govuk-infrastructure/pull/3246",
        );
        let files = RepoFiles::open(root).unwrap();
        let found = find(root, &files, &Progress::default()).unwrap();
        assert_eq!((found.reverts, found.refixes), (0, 0));
        commit(
            root,
            main,
            "source = \"github.com/alphagov/modules?ref=1605bbb\"\nname = \"tokens\"\n",
            "GOV.UK Chat: fix CloudWatch metric names",
        );
        let found = find(root, &files, &Progress::default()).unwrap();
        assert_eq!((found.reverts, found.refixes), (0, 1));
    }

    #[test]
    fn folders_count_the_events_of_their_other_files() {
        let event = |commit: &str| Event {
            kind: Undone::Reverted,
            commit: commit.to_string(),
            earlier: None,
            summary: String::new(),
            time: 0,
        };
        let marked = vec![
            ("src/api/a.py".to_string(), event("1")),
            ("src/api/b.py".to_string(), event("2")),
            ("src/api/c.py".to_string(), event("2")),
            ("src/web/x.py".to_string(), event("3")),
            ("gone/y.py".to_string(), event("4")),
            ("gone/z.py".to_string(), event("5")),
        ];
        let found = risky(marked, |p| !p.starts_with("gone"));
        let paths: Vec<(&str, bool, usize)> = found
            .iter()
            .map(|r| (r.path.as_str(), r.folder, r.events.len()))
            .collect();
        assert_eq!(paths, [("src/api", true, 2)]);
    }

    #[test]
    fn churn_is_not_risk() {
        for path in [
            "extension/package-lock.json",
            "notification/package.json",
            "yarn.lock",
            "docs/guide.md",
            "extension/test/unit/lambda.spec.js",
            "tests/test_cart.py",
            "src/cart_test.go",
            "test/Foo.Tests/BarControllerTests.cs",
            "web/app.test.ts",
        ] {
            assert!(churn_only(path), "{path}");
        }
        for path in [
            "src/cart.py",
            "src/Authentication/Services/SystemUserService.cs",
            "extension/src/config/config.js",
            "Dockerfile",
            "src/contest.rs",
        ] {
            assert!(!churn_only(path), "{path}");
        }
        assert!(is_dependency_bump(
            "chore(deps): update dependency ajv to v8\n\nbody"
        ));
        assert!(is_dependency_bump("Bump lodash from 4.17.20 to 4.17.21"));
        assert!(!is_dependency_bump("fix: bumper overflow in cart totals"));
        assert!(is_cosmetic("Fix coding style issues") && is_cosmetic("fix eslint issues"));
        assert!(!is_cosmetic("Fix notification payment lookup (#1049)"));
    }
}
