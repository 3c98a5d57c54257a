//! Learning the review history a code host already holds: `cairn learn reviews` and the
//! `learn` tool (`from: reviews`) read the host's CLI exports (cairn makes no network call), check
//! that they are of this repository, decide each comment's outcome with git's help, and
//! record one review per finished request, so rule statistics start from the team's past.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};

use serde::Serialize;

use super::recurring::{Proposed, proposal_state, proposals_heading};
use super::{AskError, Cairn, Text, off_runtime};
use crate::fsutil::repo::{Limit, RepoFiles};
use crate::memory::{ImportedReviews, ReviewInput};
use crate::review::git::Git;
use crate::review::host::assemble::{Assembly, Learned, assemble};
use crate::review::host::{self, Exports, RepoId, Request, Thread};
use crate::review::records::{Disposition, Finding, ReviewRecord};
use crate::review::stats::RuleStat;
use crate::secrets::quoted;

/// How far a learning run is, for whoever draws it (`cairn learn` on a terminal): the run
/// only counts.
#[derive(Debug, Default)]
pub struct LearnProgress {
    /// 0 reading, 1 deciding, 2 recording, 3 proposing.
    phase: AtomicU8,
    /// Export files read, then reviews recorded.
    done: AtomicUsize,
    total: AtomicUsize,
}

impl LearnProgress {
    fn enter(&self, phase: u8, total: usize) {
        self.done.store(0, Ordering::Relaxed);
        self.total.store(total, Ordering::Relaxed);
        self.phase.store(phase, Ordering::Relaxed);
    }

    /// The progress as one line of at most `width` characters.
    pub fn line(&self, width: usize) -> String {
        let (done, total) = (
            self.done.load(Ordering::Relaxed),
            self.total.load(Ordering::Relaxed),
        );
        let text = match self.phase.load(Ordering::Relaxed) {
            0 => format!("cairn: reading exports {done}/{total}"),
            1 => "cairn: deciding each comment's outcome…".to_string(),
            2 => {
                const BAR: usize = 24;
                let filled = (done.min(total) * BAR).checked_div(total).unwrap_or(BAR);
                format!(
                    "cairn: recording [{}{}] {done}/{total} reviews",
                    "#".repeat(filled),
                    "-".repeat(BAR - filled)
                )
            }
            _ => "cairn: looking for findings that recur…".to_string(),
        };
        text.chars().take(width.saturating_sub(1)).collect()
    }
}

/// Review exports to learn from.
#[derive(Debug, Clone, Default)]
pub struct LearnReviewsRequest {
    pub files: Vec<PathBuf>,
    /// The files may be anywhere the caller can read (a person at the command line); when
    /// false (an assistant), each must be inside the repository and is read without
    /// following a link out of it.
    pub anywhere: bool,
    /// Read and decide, write nothing.
    pub dry_run: bool,
    pub progress: Arc<LearnProgress>,
}

/// Skipped items that share a reason.
#[derive(Debug, Clone, Serialize)]
pub struct SkippedGroup {
    pub why: &'static str,
    pub count: usize,
    /// The first few, by name.
    pub examples: Vec<String>,
}

/// How many findings a rule of the outcome decided.
#[derive(Debug, Clone, Serialize)]
pub struct DecidedBy {
    pub rule: &'static str,
    pub findings: usize,
}

/// What learning from review exports did.
#[derive(Debug, Clone, Serialize)]
pub struct LearnedReviews {
    /// The repositories the exports are of.
    pub repositories: Vec<String>,
    /// Finished requests read, each a review.
    pub reviews: usize,
    pub implemented: usize,
    pub rejected: usize,
    pub deferred: usize,
    /// Comments whose outcome nothing decides: not recorded.
    pub unknown: usize,
    pub decided_by: Vec<DecidedBy>,
    pub skipped: Vec<SkippedGroup>,
    /// What was stored (nothing on a dry run).
    pub stored: ImportedReviews,
    pub dry_run: bool,
    /// Rule statistics after it, by category.
    pub rules: Vec<RuleStat>,
    /// Learnings proposed from findings that recur across the recorded reviews, pending a
    /// person's approval.
    pub proposed: Vec<Proposed>,
}

/// Examples kept per reason an item was skipped.
const SKIP_EXAMPLES: usize = 3;

impl Cairn {
    /// Learns review history from code-host exports: everything is read and checked before
    /// anything is written; the same exports learned again change nothing.
    pub async fn learn_reviews(
        &self,
        request: LearnReviewsRequest,
    ) -> Result<LearnedReviews, AskError> {
        let root = self.repo.root.clone();
        let progress = request.progress.clone();
        let files = request.files;
        let anywhere = request.anywhere;
        let assembly =
            off_runtime(move || read_and_decide(&root, &files, anywhere, &progress)).await??;
        let dry_run = request.dry_run;
        let mut answer = summary(&assembly, dry_run);
        let mut unstored = Vec::new();
        if dry_run {
            unstored = assembly.learned.iter().map(unstored_record).collect();
        } else {
            request.progress.enter(2, assembly.learned.len());
            let inputs = assembly.learned.into_iter().map(review_input).collect();
            let done = &request.progress.done;
            answer.stored = self.memories.import_reviews(inputs, done).await?;
        }
        request.progress.enter(3, 0);
        answer.proposed = self.propose_recurring(unstored, dry_run).await?;
        answer.rules = self.memories.rule_stats().await?;
        Ok(answer)
    }
}

fn refused(message: String) -> AskError {
    AskError::Review(message)
}

/// Reads every export, checks they are of this repository, and decides each comment.
fn read_and_decide(
    root: &std::path::Path,
    files: &[PathBuf],
    anywhere: bool,
    progress: &LearnProgress,
) -> Result<Assembly, AskError> {
    if files.is_empty() {
        return Err(refused(
            "no export to learn from: pass the files `gh api --paginate` or `glab api --paginate` wrote".into(),
        ));
    }
    if files.len() > host::MAX_EXPORT_FILES {
        return Err(refused(format!(
            "{} export files; at most {} at a time",
            files.len(),
            host::MAX_EXPORT_FILES
        )));
    }
    let mut exports = Exports::default();
    progress.enter(0, files.len());
    for file in files {
        read_export(root, file, anywhere, &mut exports)?;
        progress.done.fetch_add(1, Ordering::Relaxed);
    }
    progress.enter(1, 0);
    let git = Git::open(root)?;
    check_repository(&git, &exports)?;
    Ok(assemble(exports, |thread, request| {
        lines_changed(&git, thread, request)
    }))
}

/// Reads one export into `exports`.
fn read_export(
    root: &std::path::Path,
    file: &std::path::Path,
    anywhere: bool,
    exports: &mut Exports,
) -> Result<(), AskError> {
    let name = file.display().to_string();
    let export_error = |e: host::ExportError| refused(e.to_string());
    if anywhere {
        let opened = std::fs::File::open(file)
            .map_err(|e| refused(format!("cannot read {}: {e}", quoted(&name))))?;
        let bytes = opened.metadata().map(|m| m.len()).unwrap_or_default();
        if bytes > host::MAX_EXPORT_BYTES {
            return Err(export_error(host::ExportError::TooLarge {
                file: name,
                bytes,
            }));
        }
        return host::read(&name, opened, exports).map_err(export_error);
    }
    let relative = file
        .strip_prefix(root)
        .unwrap_or(file)
        .to_string_lossy()
        .replace('\\', "/");
    let files =
        RepoFiles::open(root).map_err(|e| refused(format!("cannot open the repository: {e}")))?;
    let limit = Limit {
        what: "a review export",
        bytes: host::MAX_EXPORT_BYTES,
    };
    let bytes = files.read(&relative, limit).map_err(|e| {
        refused(format!(
            "{}: {} (an assistant may pass only exports inside the repository)",
            quoted(&relative),
            e.reason()
        ))
    })?;
    host::read(&relative, bytes.as_slice(), exports).map_err(export_error)
}

/// Refuses exports of another repository than this one, known by its remotes.
fn check_repository(git: &Git, exports: &Exports) -> Result<(), AskError> {
    let remotes: Vec<RepoId> = git
        .remote_urls()
        .iter()
        .filter_map(|url| RepoId::of_remote(url))
        .collect();
    let named = exports.repositories();
    if named.is_empty() {
        return Err(refused(
            "the exports hold no pull request, merge request or review comment".into(),
        ));
    }
    if remotes.is_empty() {
        return Err(refused(format!(
            "this repository has no remote to check the exports (of {}) against: add the one they come from (`git remote add origin URL`)",
            list(&named)
        )));
    }
    let foreign: Vec<&RepoId> = named.iter().filter(|r| !remotes.contains(r)).collect();
    if !foreign.is_empty() {
        return Err(refused(format!(
            "the exports are of {}, which is not a remote of this repository ({}); nothing was learned",
            list(foreign),
            list(&remotes)
        )));
    }
    Ok(())
}

fn list<'a>(repos: impl IntoIterator<Item = &'a RepoId>) -> String {
    repos
        .into_iter()
        .map(|r| quoted(&r.to_string()).to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Git's answer to whether a later commit of `request` changed `thread`'s lines.
fn lines_changed(git: &Git, thread: &Thread, request: &Request) -> Option<bool> {
    let (Some(from), Some(to), Some(lines)) = (&thread.commit, &request.head, thread.lines) else {
        return None;
    };
    if !thread.right_side || from == to {
        return None;
    }
    git.lines_changed(from, to, &thread.path, lines.start, lines.end)
}

/// A learned request as a review to import.
fn review_input(learned: Learned) -> ReviewInput {
    ReviewInput {
        review_id: Some(learned.request.review_id()),
        verdict: learned.verdict,
        findings: learned.findings,
        author: learned.request.author,
        reviewer: learned.reviewer,
        learnings: Vec::new(),
        written_by: Some("import".to_string()),
        org_types: Vec::new(),
        at: learned.request.at,
        cited: Default::default(),
    }
}

/// A learned review as it would be stored, for a dry run's proposals (texts redacted as a
/// stored record's are).
fn unstored_record(learned: &Learned) -> ReviewRecord {
    let redacted = |text: &str| crate::secrets::redact(text).text;
    ReviewRecord {
        id: learned.request.review_id(),
        at: learned.request.at.unwrap_or_default(),
        author: learned.request.author.clone(),
        reviewer: learned.reviewer.clone(),
        verdict: learned.verdict,
        findings: learned
            .findings
            .iter()
            .map(|f| Finding {
                message: redacted(&f.message),
                reason: f.reason.as_deref().map(redacted),
                ..f.clone()
            })
            .collect(),
        applied: Vec::new(),
        contradicted: Vec::new(),
        memory: None,
        seq: 0,
    }
}

/// The counts of an assembly, skipped items grouped by reason.
fn summary(assembly: &Assembly, dry_run: bool) -> LearnedReviews {
    let count = |d: Disposition| {
        assembly
            .learned
            .iter()
            .flat_map(|l| &l.findings)
            .filter(|f| f.disposition == d)
            .count()
    };
    let mut skipped: BTreeMap<&'static str, SkippedGroup> = BTreeMap::new();
    for skip in &assembly.skipped {
        let group = skipped.entry(skip.why).or_insert_with(|| SkippedGroup {
            why: skip.why,
            count: 0,
            examples: Vec::new(),
        });
        group.count += 1;
        if group.examples.len() < SKIP_EXAMPLES {
            group.examples.push(skip.item.clone());
        }
    }
    let repositories = assembly
        .learned
        .iter()
        .map(|l| l.request.repo.to_string())
        .collect::<std::collections::BTreeSet<_>>();
    LearnedReviews {
        repositories: repositories.into_iter().collect(),
        reviews: assembly.learned.len(),
        implemented: count(Disposition::Implemented),
        rejected: count(Disposition::Rejected),
        deferred: count(Disposition::Deferred),
        unknown: assembly.learned.iter().map(|l| l.unknown).sum(),
        decided_by: assembly
            .decided_by
            .iter()
            .map(|(rule, findings)| DecidedBy {
                rule,
                findings: *findings,
            })
            .collect(),
        skipped: skipped.into_values().collect(),
        stored: ImportedReviews::default(),
        dry_run,
        rules: Vec::new(),
        proposed: Vec::new(),
    }
}

impl Text for LearnedReviews {
    fn to_text(&self) -> String {
        let stored = if self.dry_run {
            "a dry run: nothing written".to_string()
        } else {
            format!(
                "{} new or changed, {} unchanged",
                self.stored.written, self.stored.repeated
            )
        };
        let mut text = format!(
            "Learned {} reviews of {} ({stored}).\n",
            self.reviews,
            self.repositories.join(", "),
        );
        text.push_str(&format!(
            "Findings: {} implemented, {} rejected, {} deferred; {} undecided (not counted).\n",
            self.implemented, self.rejected, self.deferred, self.unknown
        ));
        for d in &self.decided_by {
            text.push_str(&format!("  {}: {}\n", d.rule, d.findings));
        }
        for group in &self.skipped {
            text.push_str(&format!(
                "Skipped {} ({}): {}\n",
                group.count,
                group.why,
                group.examples.join(", ")
            ));
        }
        if !self.stored.redacted.is_empty() {
            let kinds: Vec<&str> = self.stored.redacted.iter().map(|k| k.as_str()).collect();
            text.push_str(&format!("Secrets removed: {}\n", kinds.join(", ")));
        }
        if !self.proposed.is_empty() {
            text.push_str(&proposals_heading(
                self.dry_run,
                " from findings that recur",
            ));
            for p in &self.proposed {
                let state = proposal_state(p.event, p.id.as_deref());
                let who = p
                    .developer
                    .as_deref()
                    .map(|d| format!(" @{d}"))
                    .unwrap_or_default();
                text.push_str(&format!(
                    "  [{}{who}]{state} {}× in {} reviews ({} rejected): {}\n",
                    p.kind, p.findings, p.reviews, p.rejected, p.quote
                ));
            }
        }
        if !self.rules.is_empty() {
            text.push_str("Rules now:\n");
            for r in &self.rules {
                text.push_str(&format!(
                    "  {}: {} flagged, {} rejected ({:.0}%)\n",
                    r.category,
                    r.flagged,
                    r.rejected,
                    r.rejection_rate * 100.0
                ));
            }
        }
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_progress_line_follows_the_phases_and_fits_the_width() {
        let progress = LearnProgress::default();
        progress.enter(0, 3);
        progress.done.fetch_add(1, Ordering::Relaxed);
        assert_eq!(progress.line(80), "cairn: reading exports 1/3");
        progress.enter(2, 4);
        progress.done.fetch_add(1, Ordering::Relaxed);
        assert_eq!(
            progress.line(80),
            "cairn: recording [######------------------] 1/4 reviews"
        );
        progress.enter(2, 0);
        assert!(progress.line(80).contains("[########################] 0/0"));
        assert_eq!(progress.line(10).chars().count(), 9);
    }
}
