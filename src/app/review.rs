//! Code review's use cases: the briefing for a change, recording a review's outcome, and
//! the rule statistics built from recorded reviews.

use std::collections::HashMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::{AskError, Cairn, RememberRequest, Snapshot, off_runtime};
use crate::answer;
use crate::config::Repo;
use crate::context::{self, Scorer};
use crate::fsutil::repo::{Limit, RepoFiles};
use crate::graph::Graph;
use crate::graph::score::Access;
use crate::history::{CommitInfo, History};
use crate::memory::reviews::Finding;
use crate::memory::reviews::ReviewRecord;
use crate::memory::{self, MemoryType, RecordedReview};
use crate::review::briefing::{self, ReviewReport};
use crate::review::git::Git;
use crate::review::partners::HISTORY_FILES;
use crate::review::records::{Trend, author_stats, rejection_trend};
use crate::review::stats::{AuthorStats, RuleStat};
use crate::review::{self};

/// What to review: a unified diff, or git revisions; nothing means the working tree (staged
/// and unstaged changes) against HEAD.
#[derive(Debug, Clone, Default)]
pub struct ReviewRequest {
    pub diff: Option<String>,
    pub base: Option<String>,
    pub head: Option<String>,
    pub author: Option<String>,
    pub max_tokens: Option<usize>,
}

/// A review's outcome to record: the JSON `record_review` takes and `cairn record-review`
/// reads.
#[derive(Debug, Clone, Deserialize)]
pub struct RecordReviewRequest {
    /// `approve`, `request_changes` or `comment`.
    pub verdict: String,
    #[serde(default)]
    pub findings: Vec<Finding>,
    /// The change's author.
    pub author: String,
    #[serde(default)]
    pub reviewer: Option<String>,
    /// PR or review id; recording the same id again replaces the earlier record.
    #[serde(default)]
    pub review_id: Option<String>,
    #[serde(default)]
    pub learnings: Option<Vec<Learning>>,
    /// Memories (ids) the review followed.
    #[serde(default)]
    pub applied: Vec<String>,
    /// Memories (ids) the review found wrong here.
    #[serde(default)]
    pub contradicted: Vec<String>,
    /// Who records it: the user, or `mcp` for an assistant (never read from the JSON).
    #[serde(skip)]
    pub written_by: Option<String>,
    /// Recorded by an assistant: its learnings wait for approval when `[memory] approval`
    /// gates their type (never read from the JSON).
    #[serde(skip)]
    pub by_assistant: bool,
}

/// A learning stored with a review outcome.
#[derive(Debug, Clone, Deserialize)]
pub struct Learning {
    /// A memory type, as for remember.
    #[serde(rename = "type")]
    pub kind: String,
    pub content: String,
    #[serde(default)]
    pub title: Option<String>,
    #[serde(default)]
    pub developer: Option<String>,
    #[serde(default)]
    pub paths: Option<Vec<String>>,
    #[serde(default)]
    pub symbols: Option<Vec<String>>,
    /// The files it applies to, a gitignore-style glob (rejection patterns and framework
    /// knowledge).
    #[serde(default)]
    pub file_pattern: Option<String>,
    /// `repository` or `org`; default by type (`[memory] org_types`).
    #[serde(default)]
    pub scope: Option<String>,
}

/// Which rule categories count as high-rejection.
#[derive(Debug, Clone)]
pub struct RulesRequest {
    /// Fewest findings before a category can count.
    pub min_sample: u64,
    /// Lowest rejection rate (0–1) that counts as high.
    pub min_rate: f64,
}

impl Default for RulesRequest {
    fn default() -> Self {
        RulesRequest {
            min_sample: 3,
            min_rate: 0.5,
        }
    }
}

/// Rule statistics (their JSON is the list of categories).
#[derive(Debug)]
pub struct Rules {
    pub stats: Vec<RuleStat>,
    pub min_sample: u64,
    pub min_rate: f64,
}

impl Serialize for Rules {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.stats.serialize(serializer)
    }
}

/// Rejection patterns of a rule category to mark addressed.
#[derive(Debug, Clone, Default)]
pub struct AddressedRequest {
    pub category: String,
}

/// The rejection patterns marked addressed.
#[derive(Debug, Serialize)]
pub struct Addressed {
    pub category: String,
    pub ids: Vec<String>,
}

/// The recorded reviews over time: each category's rejection rate per period, and the latest
/// reviews, newest first.
#[derive(Debug, Serialize)]
pub struct ReviewHistory {
    pub trend: Trend,
    pub latest: Vec<ReviewRecord>,
    /// All recorded reviews.
    pub reviews: usize,
    /// Each author's record, most reviewed first.
    pub authors: Vec<AuthorRecord>,
}

/// One author's record over the recorded reviews.
#[derive(Debug)]
pub struct AuthorRecord {
    pub author: String,
    pub stats: AuthorStats,
}

/// Serialised as the pair `[author, stats]` it was before it had names.
impl Serialize for AuthorRecord {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        (&self.author, &self.stats).serialize(serializer)
    }
}

impl Cairn {
    /// The review briefing for a change (DESIGN §6): the change analysed against the graph,
    /// then what the team knows of it, its risks, its history and its author.
    pub async fn review(&self, request: ReviewRequest) -> Result<ReviewReport, AskError> {
        let (budget, note) = answer::budget(request.max_tokens, briefing::DEFAULT_REVIEW_TOKENS)?;
        let snapshot = self.snapshot().await?;
        let history = self.commit_history(&snapshot).await;
        let (mut analysis, label, empty) = self
            .analyse_off_runtime(&request, &snapshot, history.clone())
            .await?;
        analysis.notes.extend(note);
        if empty {
            analysis.notes.push(format!("no changes ({label})"));
        }
        let subject = Subject::of(&analysis);
        let mut extras = briefing::Extras {
            label,
            ..briefing::Extras::default()
        };
        self.add_anchored_memories(&subject, &mut extras).await;
        self.add_matching_memories(&subject, &mut extras).await;
        self.add_high_rejection_rules(&mut extras).await;
        extras
            .risks
            .extend(central_risks(&analysis, &snapshot.graph));
        self.add_history(&history, &snapshot, &analysis, &subject.paths, &mut extras);
        extras.owners = self.owners(&analysis);
        self.add_author(&request, &subject, &mut extras).await;
        let report = off_runtime(move || briefing::render(analysis, extras, budget)).await?;
        self.count_shown(&report.text).await;
        Ok(report)
    }

    /// Records a review's outcome: the review record, rejection patterns for rejected
    /// findings, the learnings (anchors checked against the graph when there is one); their
    /// vectors are computed after answering.
    pub async fn record_review(
        &self,
        request: RecordReviewRequest,
    ) -> Result<RecordedReview, AskError> {
        let learnings = request
            .learnings
            .unwrap_or_default()
            .into_iter()
            .map(|l| {
                let labels = super::write_labels(&l.kind, None, l.scope.as_deref())?;
                let (new, asked) = self.new_memory(RememberRequest {
                    title: l.title,
                    developer: l.developer,
                    paths: l.paths.unwrap_or_default(),
                    symbols: l.symbols.unwrap_or_default(),
                    file_pattern: l.file_pattern,
                    scope: labels.scope,
                    by_assistant: request.by_assistant,
                    ..RememberRequest::new(labels.kind, l.content)
                })?;
                let (scope, _) = self.scope_of(labels.kind, new.file_pattern.as_deref(), asked)?;
                Ok(memory::NewMemory { scope, ..new })
            })
            .collect::<Result<Vec<_>, AskError>>()?;
        let org = self.org_memories().ok();
        let input = memory::ReviewInput {
            review_id: request.review_id,
            verdict: request.verdict.parse()?,
            findings: request.findings,
            author: request.author,
            reviewer: request.reviewer,
            learnings,
            written_by: request.written_by,
            org_types: self.org_types()?,
            at: None,
            cited: memory::Cited {
                applied: request.applied,
                contradicted: request.contradicted,
            },
        };
        let snapshot = self.graph_if_indexed().await;
        let recorded = self
            .memories
            .record_review_beside(
                input,
                snapshot.as_ref().map(|s| &*s.graph),
                org.map(|o| &**o),
            )
            .await?;
        self.queue_embedding();
        Ok(recorded)
    }

    /// Rule effectiveness: findings per category and how many were rejected, with the
    /// guideline changes recorded for each (an accepted one with the rejection rate before
    /// and after it).
    pub async fn rules(&self, request: RulesRequest) -> Result<Rules, AskError> {
        let mut stats = self.memories.rule_stats().await?;
        // Rejection patterns with a generic glob live in the organisation's store.
        if let Ok(org) = self.org_memories() {
            for stat in &mut stats {
                let patterns = org.open_rejection_patterns(&stat.category).await?;
                stat.memories.extend(patterns.into_iter().map(|m| m.id));
            }
        }
        for (category, effect) in self.memories.change_effects().await? {
            if let Some(stat) = stats.iter_mut().find(|s| s.category == category) {
                stat.changes.push(effect);
            }
        }
        Ok(Rules {
            stats,
            min_sample: request.min_sample,
            min_rate: request.min_rate,
        })
    }

    /// The repository's recorded reviews: the rejection trend over at most `periods` periods
    /// and the `latest` reviews.
    pub async fn review_history(
        &self,
        periods: usize,
        latest: usize,
    ) -> Result<ReviewHistory, AskError> {
        let records = self.memories.review_records().await?;
        let trend = rejection_trend(&records, periods);
        // Each author's statistics over their own records only (one pass to group them).
        let mut by_author: std::collections::BTreeMap<&str, Vec<&ReviewRecord>> =
            std::collections::BTreeMap::new();
        for record in &records {
            by_author.entry(&record.author).or_default().push(record);
        }
        let mut authors: Vec<AuthorRecord> = by_author
            .into_iter()
            .map(|(author, own)| AuthorRecord {
                author: author.to_string(),
                stats: author_stats(author, own),
            })
            .collect();
        authors.sort_by(|a, b| {
            b.stats
                .reviews
                .cmp(&a.stats.reviews)
                .then_with(|| a.author.cmp(&b.author))
        });
        Ok(ReviewHistory {
            trend,
            authors,
            reviews: records.len(),
            latest: records.iter().rev().take(latest).cloned().collect(),
        })
    }

    /// Marks a category's rejection patterns as addressed (the review guidelines were
    /// updated), so briefings stop raising them.
    pub async fn mark_addressed(&self, request: AddressedRequest) -> Result<Addressed, AskError> {
        let mut ids = self.memories.mark_addressed(&request.category).await?;
        if let Ok(org) = self.org_memories() {
            ids.extend(org.mark_addressed(&request.category).await?);
        }
        Ok(Addressed {
            category: request.category,
            ids,
        })
    }
}

/// What a change is about, to find what is known of it: its paths, its changed symbols and
/// the words of its changed code.
struct Subject {
    paths: Vec<String>,
    symbols: Vec<String>,
    text: String,
}

impl Subject {
    fn of(analysis: &review::Analysis) -> Subject {
        Subject {
            paths: analysis.paths(),
            symbols: analysis.symbol_ids(),
            text: analysis.query_text(),
        }
    }
}

/// The steps of a review briefing, in the order `review` takes them.
impl Cairn {
    /// The change a request names, analysed against the snapshot's graph away from the async
    /// runtime (reading files and git is blocking work).
    async fn analyse_off_runtime(
        &self,
        request: &ReviewRequest,
        snapshot: &Snapshot,
        history: Arc<History>,
    ) -> Result<(review::Analysis, String, bool), AskError> {
        let (repo, request) = (self.repo.clone(), request.clone());
        let (graph, access) = (snapshot.graph.clone(), self.access());
        off_runtime(move || analyse_change(&repo, &request, &graph, &access, &history)).await?
    }

    /// The team's memories anchored on the changed files and symbols: risky modules,
    /// rejection patterns not yet addressed, patterns and decisions.
    async fn add_anchored_memories(&self, subject: &Subject, extras: &mut briefing::Extras) {
        let anchored = match self.anchored_scopes(&subject.paths, &subject.symbols).await {
            Ok(anchored) => anchored,
            Err(e) => {
                extras.notes.push(memories_unavailable(e));
                return;
            }
        };
        for m in anchored {
            let note = self.note(&m);
            match m.kind {
                MemoryType::RiskModule => extras.risks.push(briefing::Risk {
                    kind: "risk_module".to_string(),
                    subject: risk_subject(&note),
                    detail: format!("{}: {}", m.id, m.content),
                }),
                MemoryType::RejectionPattern if !m.rule.addressed => extras.rejections.push(note),
                MemoryType::ProjectPattern
                | MemoryType::Decision
                | MemoryType::FrameworkKnowledge => extras.memories.push(note),
                _ => {}
            }
        }
    }

    /// The team's memories the changed code's words match, after the anchored ones: patterns
    /// and decisions, then rejection patterns not yet addressed, each list up to its limit.
    async fn add_matching_memories(&self, subject: &Subject, extras: &mut briefing::Extras) {
        if subject.text.is_empty() {
            return;
        }
        let searches = [
            (
                vec![
                    MemoryType::ProjectPattern,
                    MemoryType::Decision,
                    MemoryType::FrameworkKnowledge,
                ],
                6,
            ),
            (vec![MemoryType::RejectionPattern], 4),
        ];
        for (types, limit) in searches {
            let rejection = types.contains(&MemoryType::RejectionPattern);
            let found = self
                .search_scopes(&memory::Query {
                    text: subject.text.clone(),
                    types,
                    paths: subject.paths.clone(),
                    limit,
                    keyword_only: true,
                    // Counted once shown (`count_shown`), not as searched.
                    browsing: true,
                    ..memory::Query::default()
                })
                .await;
            let found = match found {
                Ok(found) => found,
                Err(e) => {
                    extras.notes.push(memories_unavailable(e));
                    continue;
                }
            };
            let list = if rejection {
                &mut extras.rejections
            } else {
                &mut extras.memories
            };
            for f in found {
                if list.len() >= limit || (rejection && f.memory.rule.addressed) {
                    continue;
                }
                if !list.iter().any(|n| n.id == f.memory.id) {
                    list.push(self.note(&f.memory));
                }
            }
        }
    }

    /// The rule categories whose findings are most often rejected.
    async fn add_high_rejection_rules(&self, extras: &mut briefing::Extras) {
        match self.memories.rule_stats().await {
            Ok(stats) => extras.rules = high_rejection_rules(stats),
            Err(e) => extras.notes.push(memories_unavailable(e)),
        }
    }

    /// The partners missing from the change (from the code, and from the commit history when
    /// there is one), and from the history: fix-prone files, experts and the past commits on
    /// its files; a note when no history was mined.
    fn add_history(
        &self,
        history: &History,
        snapshot: &Snapshot,
        analysis: &review::Analysis,
        paths: &[String],
        extras: &mut briefing::Extras,
    ) {
        // The code's partners need no history; the history's come with them.
        let files = SourceReader::open(&self.repo);
        let read = |path: &str| files.text(path);
        extras.co_changes =
            review::partners::missing(analysis, &snapshot.graph, history, paths, &read);
        if history.is_empty() {
            if self.repo.is_git {
                extras
                    .notes
                    .push("no commit history mined yet: run `cairn index`".to_string());
            }
            return;
        }
        extras.risks.extend(fix_prone_risks(history, paths));
        extras.experts = experts(history, analysis);
        extras.commits = related_commits(history, paths);
    }

    /// The owners of the changed files (the first of them) `CODEOWNERS` names.
    fn owners(&self, analysis: &review::Analysis) -> Vec<briefing::FileOwners> {
        let paths: Vec<String> = analysis
            .files
            .iter()
            .take(HISTORY_FILES)
            .map(|f| f.path.clone())
            .collect();
        self.owners_of_each(&paths)
            .into_iter()
            .map(|(path, owned)| briefing::FileOwners { path, owned })
            .collect()
    }

    /// The change's author (given, or from git) with their profile, review record and
    /// patterns; a note when the author is invalid, or unknown for a pasted diff.
    async fn add_author(
        &self,
        request: &ReviewRequest,
        subject: &Subject,
        extras: &mut briefing::Extras,
    ) {
        match self.author_of(request) {
            Some((raw, from)) => match memory::model::developer_id(&raw) {
                Ok(developer) => {
                    extras.author = Some(self.author_brief(developer, from, subject).await);
                }
                Err(e) => extras.notes.push(format!("author left out: {e}")),
            },
            None if request.diff.is_some() => extras
                .notes
                .push("pass `author` to include the author's profile".to_string()),
            None => {}
        }
    }

    /// Who wrote the change and where that came from: the request's author, else for
    /// revisions the head commit's author, for the working tree git's configured user; none
    /// for a pasted diff.
    fn author_of(&self, request: &ReviewRequest) -> Option<(String, &'static str)> {
        if let Some(given) = request.author.as_deref().filter(|a| !a.trim().is_empty()) {
            return Some((given.to_string(), "given"));
        }
        if request.diff.is_some() {
            return None;
        }
        let git = Git::open(&self.repo.root).ok()?;
        let author = if request.base.is_some() || request.head.is_some() {
            git.author_of(request.head.as_deref().unwrap_or("HEAD"))
                .ok()
        } else {
            git.configured_author()
        };
        author.map(|a| (a, "git"))
    }

    /// What is known of a developer: their profile, review record, and patterns and strengths
    /// on the changed code; what cannot be read is left out.
    async fn author_brief(
        &self,
        developer: String,
        from: &str,
        subject: &Subject,
    ) -> briefing::AuthorBrief {
        let profile = self.profile_of(&developer).await.ok().flatten();
        let stats = self
            .memories
            .author_stats(&developer)
            .await
            .unwrap_or_default();
        let memories = self
            .search_scopes(&memory::Query {
                text: subject.text.clone(),
                developer: Some(developer.clone()),
                types: vec![MemoryType::DeveloperPattern, MemoryType::DeveloperStrength],
                paths: subject.paths.clone(),
                limit: 3,
                keyword_only: true,
                browsing: true,
                ..memory::Query::default()
            })
            .await
            .map(|found| found.iter().map(|f| self.note(&f.memory)).collect())
            .unwrap_or_default();
        briefing::AuthorBrief {
            developer,
            from: from.to_string(),
            profile: profile.as_ref().map(|p| self.note(p)),
            stats,
            memories,
        }
    }
}

/// What a risky-module memory is about: its first anchor, with the repository it is in when
/// that is another (`github.com/acme/one: src/pay.py`).
fn risk_subject(note: &crate::context::MemoryNote) -> String {
    let first = note.anchors.first().cloned().unwrap_or_default();
    match &note.origin {
        Some(origin) => format!("{origin}: {first}"),
        None => first,
    }
}

/// The note a briefing carries when the memories cannot be read.
fn memories_unavailable(e: memory::MemoryError) -> String {
    format!("memories unavailable: {e}")
}

/// The five rule categories with the highest rejection rates, of those that count as high.
fn high_rejection_rules(stats: Vec<RuleStat>) -> Vec<RuleStat> {
    let mut high: Vec<_> = stats
        .into_iter()
        .filter(|s| crate::review::stats::is_high_rejection(s, 3, 0.5))
        .collect();
    high.sort_by(|a, b| b.rejection_rate.total_cmp(&a.rejection_rate));
    high.truncate(5);
    high
}

/// A changed symbol is central when no more than this share of the repository's symbols have
/// an impact as high as its own…
const CENTRAL_SHARE: f64 = 0.05;
/// …and its impact is at least this many times the median symbol's: in a flat distribution
/// nothing stands out, so nothing is flagged.
const CENTRAL_LIFT: f64 = 4.0;

/// Risk from the graph: changed symbols (not new ones) among the most depended-on code, by
/// impact (see `graph::rank`).
fn central_risks(analysis: &review::Analysis, graph: &Graph) -> Vec<briefing::Risk> {
    let mut impacts: Vec<f64> = graph
        .nodes
        .iter()
        .filter(|n| n.kind.is_symbol())
        .map(|n| n.impact)
        .collect();
    if impacts.is_empty() {
        return Vec::new();
    }
    impacts.sort_by(f64::total_cmp);
    let median = impacts[impacts.len() / 2].max(1.0);
    analysis
        .files
        .iter()
        .flat_map(|file| &file.symbols)
        .filter(|s| s.indexed && s.change != review::SymbolChangeKind::Added)
        .filter_map(|s| {
            let impact = graph.node(&s.id)?.impact;
            let as_high = impacts.len() - impacts.partition_point(|&x| x < impact);
            let share = as_high as f64 / impacts.len() as f64;
            (share <= CENTRAL_SHARE && impact >= median * CENTRAL_LIFT).then(|| briefing::Risk {
                kind: "central".to_string(),
                subject: s.id.clone(),
                detail: format!(
                    "impact {impact:.1}: top {}% of this repository's symbols (median {median:.1}); reaches {} nodes",
                    (share * 100.0).ceil().max(1.0),
                    s.reach
                ),
            })
        })
        .collect()
}

/// The changed files (the first of them) that attract fixes.
fn fix_prone_risks(history: &History, paths: &[String]) -> Vec<briefing::Risk> {
    paths
        .iter()
        .take(HISTORY_FILES * 2)
        .filter_map(|path| {
            let fixes = history.is_fix_prone(path)?;
            Some(briefing::Risk {
                kind: "fix_prone".to_string(),
                subject: path.clone(),
                detail: format!(
                    "{} of its {} recent commits were fixes or reverts ({:.1}× this repository's share)",
                    fixes.fixes, fixes.commits, fixes.lift
                ),
            })
        })
        .collect()
}

/// Who knows the changed files (the first of them): up to three authors each.
fn experts(history: &History, analysis: &review::Analysis) -> Vec<briefing::FileExperts> {
    let now = crate::clock::now();
    analysis
        .files
        .iter()
        .take(HISTORY_FILES)
        .filter_map(|file| {
            let experts = history.experts(&file.path, now, 3);
            (!experts.is_empty()).then(|| briefing::FileExperts {
                path: file.path.clone(),
                experts,
            })
        })
        .collect()
}

/// The five latest commits on the changed files.
fn related_commits(history: &History, paths: &[String]) -> Vec<briefing::CommitBrief> {
    let mut seen = std::collections::HashSet::new();
    let mut related: Vec<&CommitInfo> = paths
        .iter()
        .flat_map(|p| history.commits_of(p))
        .filter(|c| seen.insert(c.id.clone()))
        .collect();
    related.sort_by_key(|c| std::cmp::Reverse(c.time));
    related
        .into_iter()
        .take(5)
        .map(|c| briefing::CommitBrief {
            id: c.id.chars().take(10).collect(),
            date: crate::clock::date_of(c.time),
            author: c.author.clone(),
            summary: c.summary.clone(),
            fix: c.fix,
        })
        .collect()
}

/// A repository's files as a review reads them: every read inside the repository (links
/// included) and within the index's size limit; none for a file gone, too large or unreadable.
struct SourceReader {
    files: Option<RepoFiles>,
    limit: Limit,
}

impl SourceReader {
    fn open(repo: &Repo) -> SourceReader {
        SourceReader {
            files: RepoFiles::open(&repo.root).ok(),
            limit: Limit::source(repo.settings.index.max_file_bytes),
        }
    }

    fn text(&self, path: &str) -> Option<String> {
        let files = self.files.as_ref()?;
        context::normalise(path).and_then(|p| files.text(&p, self.limit).ok())
    }
}

/// The change a review request names, analysed against the graph: the analysis, what was
/// compared, and whether nothing changed.
fn analyse_change(
    repo: &Repo,
    request: &ReviewRequest,
    graph: &Graph,
    access: &HashMap<String, Access>,
    history: &History,
) -> Result<(review::Analysis, String, bool), AskError> {
    let (changes, label) = changes_for(repo, request)?;
    let scorer = Scorer::new(graph, access, crate::clock::now());
    let rank = |id: &str| graph.node(id).map_or(0.0, |n| scorer.score(n).total());
    // Paths come from the diff, the graph and the history.
    let files = SourceReader::open(repo);
    let read = |path: &str| files.text(path);
    let analysis = review::analyse(&changes, graph, &rank, &read, history);
    Ok((analysis, label, changes.is_empty()))
}

/// The change a review request names, with file texts where they can be had; a change larger
/// than the `[review]` caps is refused before its files are read.
fn changes_for(
    repo: &Repo,
    request: &ReviewRequest,
) -> Result<(Vec<review::FileChange>, String), AskError> {
    let root = &repo.root;
    let caps = repo.settings.review;
    if let Some(text) = request.diff.as_deref() {
        if request.base.is_some() || request.head.is_some() {
            return Err(AskError::Review(
                "pass either `diff` or `base`/`head`, not both".to_string(),
            ));
        }
        let mut changes = review::diff::parse(text)?;
        review::check_files(changes.len(), caps.max_files)?;
        let git = if repo.is_git {
            Git::open(root).ok()
        } else {
            None
        };
        let files = RepoFiles::open(root)
            .map_err(|e| AskError::Review(format!("cannot open {}: {e}", root.display())))?;
        let limit = Limit::source(repo.settings.index.max_file_bytes);
        for change in &mut changes {
            fill_texts(change, &files, limit, git.as_ref());
        }
        return Ok((changes, "pasted diff".to_string()));
    }
    if !repo.is_git {
        return Err(AskError::Review(
            "not a git repository: pass the change as `diff` (unified diff text)".to_string(),
        ));
    }
    let git = Git::open(root)?;
    match (request.base.as_deref(), request.head.as_deref()) {
        (None, None) => Ok((
            git.worktree_changes(root, caps.max_files)?,
            "HEAD → working tree".to_string(),
        )),
        (base, head) => {
            let head = head.unwrap_or("HEAD");
            let base = base.map_or_else(|| format!("{head}~1"), str::to_string);
            let range = format!("{base}..{head}");
            if git.commits_between(&base, head, caps.max_commits)? > caps.max_commits {
                return Err(review::TooLarge::Commits {
                    range,
                    cap: caps.max_commits,
                }
                .into());
            }
            Ok((git.changes_between(&base, head, caps.max_files)?, range))
        }
    }
}

/// Gives a parsed change its texts: the working tree's new side with the old side rebuilt
/// from it, or HEAD's old side with the new side rebuilt; added and deleted files carry
/// their whole text in the diff.
fn fill_texts(change: &mut review::FileChange, files: &RepoFiles, limit: Limit, git: Option<&Git>) {
    use review::ChangeKind;
    if change.binary {
        return;
    }
    let whole = |lines: Vec<&str>| {
        let mut text = lines.join("\n");
        text.push('\n');
        text
    };
    match change.kind {
        ChangeKind::Added => {
            change.new_text = Some(whole(change.added().map(|(_, t)| t).collect()));
            return;
        }
        ChangeKind::Deleted => {
            change.old_text = Some(whole(change.removed().map(|(_, t)| t).collect()));
            return;
        }
        _ => {}
    }
    if let Some(new_path) = change.new_path.as_deref()
        && let Some(current) = context::normalise(new_path).and_then(|p| files.text(&p, limit).ok())
        && let Some(old) = review::diff::reconstruct(change, &current, true)
    {
        change.old_text = Some(old);
        change.new_text = Some(review::diff::normalise_newlines(&current));
        return;
    }
    if let (Some(git), Some(old_path)) = (git, change.old_path.as_deref())
        && let Some(before) = git.text_at_head(old_path)
        && let Some(new) = review::diff::reconstruct(change, &before, false)
    {
        change.new_text = Some(new);
        change.old_text = Some(review::diff::normalise_newlines(&before));
    }
}
