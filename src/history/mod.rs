//! What the commit history says about files: who knows them (authors weighted by recency and
//! number of commits), which ones attract fixes and reverts, and which change together.
//! Commits come from [`walk`] (and the store, which keeps the mined window); the rest is pure.
//!
//! - [`walk`] — HEAD and the commit walk, through gix.
//! - `fixes` — whether a commit is a fix or a revert, by its subject line and git's revert line.

mod fixes;
pub mod walk;

pub(crate) use fixes::{is_fix, reverted_commit};
pub use walk::{CaughtUp, HistoryError, Logged, Mined, catch_up, head, identity, log, mine};

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

/// Commits touching more files than this are left out of co-change (mass renames, reformats).
pub(crate) const MAX_COCHANGE_FILES: usize = 30;
/// Half-life of a commit's weight in expertise, in days.
const EXPERTISE_HALF_LIFE_DAYS: f64 = 180.0;
/// Half-life of a commit's weight as co-change evidence, in days before the newest commit.
const COCHANGE_HALF_LIFE_DAYS: f64 = 365.0;

/// One commit, as mined.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CommitInfo {
    pub id: String,
    /// Seconds since the epoch (commit time).
    pub time: i64,
    /// The author's identity after the mailmap: email, or name without one.
    pub author: String,
    pub name: String,
    pub summary: String,
    /// A fix or a revert, by its subject line or git's revert line ([`is_fix`]).
    pub fix: bool,
    pub files: Vec<String>,
}

/// The commit history a store holds: the window of mined commits and the HEAD it was mined
/// at.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StoredHistory {
    pub commits: Vec<CommitInfo>,
    pub head: Option<String>,
}

/// Someone who knows a file.
#[derive(Debug, Clone, Serialize)]
pub struct Expert {
    pub author: String,
    pub name: String,
    pub commits: usize,
    /// Commits weighted by recency (half-life 180 days).
    pub weight: f64,
    /// Seconds since the epoch of their last commit to the file.
    pub last: i64,
}

/// A file that usually changes with another.
#[derive(Debug, Clone, Serialize)]
pub struct CoChange {
    pub path: String,
    /// Commits that changed both.
    pub support: usize,
    /// Commits of the file counted (those touching no more than [`MAX_COCHANGE_FILES`]).
    pub of: usize,
    /// Share of the file's commits that also changed the partner.
    pub confidence: f64,
    /// The same share (unrounded) with each commit weighed by recency (half-life a year before
    /// the newest commit) and by how specific it is (a commit of `n` files pairs each with
    /// `1/(n-1)`): the order [`History::partners`] ranks by.
    pub weight: f64,
}

/// A file's history of fixes.
#[derive(Debug, Clone, Serialize)]
pub struct FixHistory {
    pub commits: usize,
    pub fixes: usize,
    /// Fix share of this file over the repository's.
    pub lift: f64,
}

/// The mined window of history, indexed by file.
#[derive(Debug, Default)]
pub struct History {
    /// Newest first.
    pub commits: Vec<CommitInfo>,
    by_file: HashMap<String, Vec<usize>>,
    /// Each folder holding a changed file (`src/db`, no trailing `/`) and the newest commit
    /// that changed a file under it; made on first use.
    by_folder: std::sync::OnceLock<HashMap<String, usize>>,
    fix_share: f64,
}

impl History {
    pub fn new(mut commits: Vec<CommitInfo>) -> History {
        commits.sort_by(|a, b| b.time.cmp(&a.time).then_with(|| a.id.cmp(&b.id)));
        let mut by_file: HashMap<String, Vec<usize>> = HashMap::new();
        for (i, commit) in commits.iter().enumerate() {
            for file in &commit.files {
                by_file.entry(file.clone()).or_default().push(i);
            }
        }
        let fixes = commits.iter().filter(|c| c.fix).count();
        let fix_share = if commits.is_empty() {
            0.0
        } else {
            fixes as f64 / commits.len() as f64
        };
        History {
            commits,
            by_file,
            by_folder: std::sync::OnceLock::new(),
            fix_share,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.commits.is_empty()
    }

    fn of(&self, path: &str) -> impl Iterator<Item = &CommitInfo> {
        self.by_file
            .get(path)
            .into_iter()
            .flatten()
            .map(|&i| &self.commits[i])
    }

    /// Commits that changed `path`, newest first.
    pub fn commits_of(&self, path: &str) -> Vec<&CommitInfo> {
        self.of(path).collect()
    }

    /// The newest commit after `after` (seconds since the epoch) that changed the file
    /// `path`, or a file under the folder `path`.
    pub fn changed_after(&self, path: &str, after: i64) -> Option<&CommitInfo> {
        if self.by_file.contains_key(path) {
            // Newest first: only the newest can be after `after` if any is.
            return self.of(path).next().filter(|c| c.time > after);
        }
        let newest = *self.folders().get(path.trim_end_matches('/'))?;
        Some(&self.commits[newest]).filter(|c| c.time > after)
    }

    /// Every folder of a changed file with the newest commit under it (commits are newest
    /// first, so the first seen).
    fn folders(&self) -> &HashMap<String, usize> {
        self.by_folder.get_or_init(|| {
            let mut folders: HashMap<String, usize> = HashMap::new();
            for (i, commit) in self.commits.iter().enumerate() {
                for file in &commit.files {
                    for (at, _) in file.match_indices('/') {
                        if !folders.contains_key(&file[..at]) {
                            folders.insert(file[..at].to_string(), i);
                        }
                    }
                }
            }
            folders
        })
    }

    /// Authors of `path` by recency-weighted commit count, best first.
    pub fn experts(&self, path: &str, now: i64, limit: usize) -> Vec<Expert> {
        let mut by_author: HashMap<&str, Expert> = HashMap::new();
        for commit in self.of(path) {
            let age_days = ((now - commit.time).max(0)) as f64 / 86_400.0;
            let weight = 0.5f64.powf(age_days / EXPERTISE_HALF_LIFE_DAYS);
            let expert = by_author
                .entry(commit.author.as_str())
                .or_insert_with(|| Expert {
                    author: commit.author.clone(),
                    name: commit.name.clone(),
                    commits: 0,
                    weight: 0.0,
                    last: commit.time,
                });
            expert.commits += 1;
            expert.weight += weight;
            expert.last = expert.last.max(commit.time);
        }
        let mut experts: Vec<Expert> = by_author.into_values().collect();
        for e in &mut experts {
            e.weight = (e.weight * 100.0).round() / 100.0;
        }
        experts.sort_by(|a, b| {
            b.weight
                .total_cmp(&a.weight)
                .then_with(|| b.commits.cmp(&a.commits))
                .then_with(|| a.author.cmp(&b.author))
        });
        experts.truncate(limit);
        experts
    }

    /// How often `path` was fixed, against the repository's usual share of fix commits
    /// (projects that name every ticket "Fixed #…" have a high baseline).
    pub fn fixes(&self, path: &str) -> Option<FixHistory> {
        let commits: Vec<&CommitInfo> = self.of(path).collect();
        if commits.is_empty() {
            return None;
        }
        let fixes = commits.iter().filter(|c| c.fix).count();
        let share = fixes as f64 / commits.len() as f64;
        let lift = if self.fix_share > 0.0 {
            share / self.fix_share
        } else {
            0.0
        };
        Some(FixHistory {
            commits: commits.len(),
            fixes,
            lift: (lift * 100.0).round() / 100.0,
        })
    }

    /// Whether `path` attracts fixes: at least three, and a fix share well above the norm.
    pub fn is_fix_prone(&self, path: &str) -> Option<FixHistory> {
        self.fixes(path)
            .filter(|f| f.fixes >= 3 && (f.lift >= 1.5 || self.fix_share == 0.0))
    }

    /// Files that changed together with `path` in at least `min_support` commits and in at
    /// least `min_confidence` of its commits, strongest first.
    pub fn co_changes(&self, path: &str, min_support: usize, min_confidence: f64) -> Vec<CoChange> {
        let mut out: Vec<CoChange> = self
            .together(path)
            .into_iter()
            .filter(|c| c.support >= min_support && c.confidence >= min_confidence)
            .collect();
        out.sort_by(|a, b| {
            b.support
                .cmp(&a.support)
                .then_with(|| b.confidence.total_cmp(&a.confidence))
                .then_with(|| a.path.cmp(&b.path))
        });
        out
    }

    /// Every file that changed together with `path`, by how much that says it changes with
    /// it: recent commits and commits of few files weigh most (a file changed with everything
    /// in a large commit is little evidence), so one recent commit of two files can rank above
    /// old sweeping ones. Strongest first.
    pub fn partners(&self, path: &str) -> Vec<CoChange> {
        let mut out = self.together(path);
        out.sort_by(|a, b| {
            b.weight
                .total_cmp(&a.weight)
                .then_with(|| b.support.cmp(&a.support))
                .then_with(|| a.path.cmp(&b.path))
        });
        out
    }

    /// The files that changed with `path`, each with its count and its weighted share of
    /// `path`'s commits (those of at most [`MAX_COCHANGE_FILES`] files).
    fn together(&self, path: &str) -> Vec<CoChange> {
        let newest = self.commits.first().map_or(0, |c| c.time);
        let mut counted = 0usize;
        let mut weighed = 0.0;
        let mut together: HashMap<&str, (usize, f64)> = HashMap::new();
        for commit in self.of(path) {
            if commit.files.len() > MAX_COCHANGE_FILES {
                continue;
            }
            counted += 1;
            let age_days = (newest - commit.time).max(0) as f64 / 86_400.0;
            let weight = 0.5f64.powf(age_days / COCHANGE_HALF_LIFE_DAYS)
                / commit.files.len().saturating_sub(1).max(1) as f64;
            weighed += weight;
            for other in &commit.files {
                if other != path {
                    let entry = together.entry(other.as_str()).or_default();
                    entry.0 += 1;
                    entry.1 += weight;
                }
            }
        }
        together
            .into_iter()
            .map(|(p, (n, w))| CoChange {
                path: p.to_string(),
                support: n,
                of: counted,
                confidence: ((n as f64 / counted as f64) * 100.0).round() / 100.0,
                weight: w / weighed,
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn commit(id: &str, days_ago: i64, author: &str, summary: &str, files: &[&str]) -> CommitInfo {
        CommitInfo {
            id: id.to_string(),
            time: 1_000_000_000 - days_ago * 86_400,
            author: author.to_string(),
            name: author.to_string(),
            summary: summary.to_string(),
            fix: is_fix(summary),
            files: files.iter().map(|f| f.to_string()).collect(),
        }
    }

    #[test]
    fn the_newest_change_after_a_time_is_found_for_files_and_folders() {
        let history = History::new(vec![
            commit(
                "c1",
                10,
                "a",
                "Add app",
                &["src/app.py", "src/db/session.py"],
            ),
            commit("c2", 5, "a", "Tune app", &["src/app.py"]),
            commit("c3", 1, "a", "Tune sessions", &["src/db/session.py"]),
        ]);
        let day = |days_ago: i64| 1_000_000_000 - days_ago * 86_400;
        let id = |c: Option<&CommitInfo>| c.map(|c| c.id.clone());
        assert_eq!(
            id(history.changed_after("src/app.py", day(7))),
            Some("c2".into())
        );
        assert_eq!(id(history.changed_after("src/app.py", day(5))), None);
        assert_eq!(
            id(history.changed_after("src/db", day(20))),
            Some("c3".into())
        );
        assert_eq!(
            id(history.changed_after("src/db/", day(20))),
            Some("c3".into())
        );
        assert_eq!(id(history.changed_after("src/d", day(20))), None);
        assert_eq!(id(history.changed_after("README.md", day(20))), None);
    }

    /// A folder's newest change looked up equals scanning the commits for a file under it.
    #[test]
    fn a_folders_newest_change_equals_the_scan_of_the_commits() {
        let mut rng = fastrand::Rng::with_seed(11);
        let names = ["a", "b", "ab", "src", "db"];
        for _ in 0..200 {
            let commits: Vec<CommitInfo> = (0..rng.usize(0..12))
                .map(|i| {
                    let files: Vec<String> = (0..rng.usize(1..5))
                        .map(|_| {
                            let depth = rng.usize(1..4);
                            let mut parts: Vec<&str> = (0..depth)
                                .map(|_| names[rng.usize(..names.len())])
                                .collect();
                            parts.push("f.py");
                            parts.join("/")
                        })
                        .collect();
                    let files: Vec<&str> = files.iter().map(String::as_str).collect();
                    commit(&format!("c{i}"), rng.i64(0..30), "a", "Change", &files)
                })
                .collect();
            let history = History::new(commits);
            for _ in 0..20 {
                let depth = rng.usize(1..3);
                let folder: Vec<&str> = (0..depth)
                    .map(|_| names[rng.usize(..names.len())])
                    .collect();
                let folder = folder.join("/");
                let after = 1_000_000_000 - rng.i64(0..32) * 86_400;
                let prefix = format!("{folder}/");
                let scanned = history
                    .commits
                    .iter()
                    .take_while(|c| c.time > after)
                    .find(|c| c.files.iter().any(|f| f.starts_with(&prefix)));
                for asked in [folder.clone(), prefix.clone()] {
                    assert_eq!(
                        history.changed_after(&asked, after).map(|c| &c.id),
                        scanned.map(|c| &c.id),
                        "{asked} after {after}"
                    );
                }
            }
        }
    }

    #[test]
    fn experts_cochange_and_fix_proneness() {
        let now = 1_000_000_000;
        let history = History::new(vec![
            commit("1", 400, "old@x", "Add models", &["models.py", "views.py"]),
            commit(
                "2",
                300,
                "old@x",
                "Tweak models",
                &["models.py", "views.py"],
            ),
            commit(
                "3",
                10,
                "new@x",
                "Fix models bug",
                &["models.py", "views.py"],
            ),
            commit("4", 5, "new@x", "Fix models again", &["models.py"]),
            commit(
                "5",
                2,
                "new@x",
                "Fix crash in models",
                &["models.py", "urls.py"],
            ),
            commit("6", 1, "other@x", "Add docs", &["README.md"]),
            commit("7", 1, "other@x", "Add more docs", &["README.md"]),
            commit("8", 1, "other@x", "Add docs index", &["docs.md"]),
        ]);
        let experts = history.experts("models.py", now, 5);
        assert_eq!(experts[0].author, "new@x", "recent work weighs more");
        assert_eq!(experts[0].commits, 3);
        assert_eq!(experts[1].commits, 2);
        let partners = history.co_changes("models.py", 2, 0.3);
        assert_eq!(partners.len(), 1);
        assert_eq!(partners[0].path, "views.py");
        assert_eq!(partners[0].support, 3);
        assert_eq!(partners[0].of, 5);
        assert!((partners[0].confidence - 0.6).abs() < 1e-9);
        assert!(history.is_fix_prone("models.py").is_some());
        assert!(history.is_fix_prone("README.md").is_none());
        assert!(history.fixes("nowhere.py").is_none());
    }

    #[test]
    fn partners_rank_recent_and_specific_commits_first() {
        let history = History::new(vec![
            // Old sweeping commits: models.py with many files at once.
            commit(
                "1",
                900,
                "a@x",
                "Rename",
                &["models.py", "admin.py", "a.py", "b.py", "c.py"],
            ),
            commit(
                "2",
                800,
                "a@x",
                "Reformat",
                &["models.py", "admin.py", "d.py", "e.py", "f.py"],
            ),
            commit(
                "3",
                700,
                "a@x",
                "Lint",
                &["models.py", "admin.py", "g.py", "h.py", "i.py"],
            ),
            // One recent commit of two files.
            commit("4", 1, "b@x", "Add field", &["models.py", "forms.py"]),
            commit("5", 0, "b@x", "Docs", &["README.md"]),
        ]);
        let partners = history.partners("models.py");
        let order: Vec<&str> = partners.iter().map(|p| p.path.as_str()).collect();
        assert_eq!(order[..2], ["forms.py", "admin.py"], "{partners:?}");
        let forms = &partners[0];
        assert_eq!((forms.support, forms.of), (1, 4));
        assert!((forms.confidence - 0.25).abs() < 1e-9);
        // The recent pair carries most of models.py's weighted commits: 1 / (1 + 3 × 0.25 × ~0.2).
        assert!(forms.weight > 0.8, "{forms:?}");
        // Counted alone, the sweeping partner is the stronger one.
        let counted = history.co_changes("models.py", 1, 0.0);
        assert_eq!(counted[0].path, "admin.py");
        assert_eq!(counted[0].support, 3);
        // A file never changed has no partners; one changed alone has none either.
        assert!(history.partners("nowhere.py").is_empty());
        assert!(history.partners("README.md").is_empty());
    }
}
