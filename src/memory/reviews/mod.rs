//! Review outcomes in the memory store: `record_review` writes a review record (one per
//! review id), a `review_outcome` memory, a `rejection_pattern` per rejected finding and the
//! learnings that came with it; rule statistics and author statistics are sums over the
//! records, so a review recorded twice counts once.

pub mod record;

use std::collections::{BTreeSet, HashMap};

use serde::Serialize;

pub use record::{Disposition, Finding, ReviewRecord, Verdict};

use super::write::{self, NewMemory, WriteOutcome};
use super::{Memories, MemoryError, MemoryType, Result, Source, model, state_view};
use crate::clock::now_ms;
use crate::review::stats::{AuthorStats, RuleStat};

/// Most findings one review may carry.
pub const MAX_FINDINGS: usize = 200;
/// Most learnings one review may carry.
pub const MAX_LEARNINGS: usize = 50;
/// Longest finding message or reason, in bytes.
const MAX_FINDING_TEXT: usize = 2_000;
/// Longest finding message or reason in a stored record: room for the markers redaction puts
/// in place of secrets.
const MAX_STORED_FINDING_TEXT: usize = 2 * MAX_FINDING_TEXT;

/// A review outcome to record.
#[derive(Debug, Clone)]
pub struct ReviewInput {
    pub review_id: Option<String>,
    pub verdict: Verdict,
    pub findings: Vec<Finding>,
    pub author: String,
    pub reviewer: Option<String>,
    pub learnings: Vec<NewMemory>,
    pub written_by: Option<String>,
}

/// What recording a review did.
#[derive(Debug, Clone, Serialize)]
pub struct RecordedReview {
    pub review_id: String,
    /// The same review was recorded before with the same findings: nothing was counted again.
    pub repeated: bool,
    /// The `review_outcome` memory.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outcome: Option<WriteOutcome>,
    /// One per rejected finding.
    pub rejections: Vec<WriteOutcome>,
    pub learnings: Vec<WriteOutcome>,
    /// Statistics of the categories this review touched, after it.
    pub rules: Vec<RuleStat>,
    /// The author's statistics after it.
    pub author: AuthorStats,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub redacted: Vec<String>,
}

fn invalid(message: impl Into<String>) -> MemoryError {
    MemoryError::Invalid(message.into())
}

/// A finding's path: repository-relative, never climbing out.
fn finding_path(raw: &str) -> Result<String> {
    let path = raw.trim().trim_start_matches("./").replace('\\', "/");
    let escapes = path.starts_with('/')
        || path.split('/').any(|p| p == "..")
        || path.contains(':')
        || path.is_empty();
    if escapes || path.len() > model::MAX_ANCHOR_BYTES {
        return Err(invalid(format!(
            "finding file `{raw}` must be a repository-relative path"
        )));
    }
    Ok(path)
}

fn review_id(raw: &str) -> Result<String> {
    write::refuse_secret("`review_id`", raw)?;
    let id = raw.trim();
    let valid = !id.is_empty()
        && id.len() <= 100
        && id
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '.' | '_' | '-' | ':' | '/' | '#' | '!'));
    if valid {
        Ok(id.to_string())
    } else {
        Err(invalid(format!(
            "invalid review_id `{raw}`: up to 100 letters, digits, . _ - : / # !"
        )))
    }
}

/// A finding as stored: category normalised, file repository-relative, message and reason
/// at most `limit` bytes and redacted. A category holding a secret is refused (it is an id);
/// a file holding one is dropped, as a memory's anchors are, and its kinds are added to
/// `redacted`.
fn clean_finding(f: Finding, limit: usize, redacted: &mut BTreeSet<String>) -> Result<Finding> {
    let mut scrub = |text: &str, what: &str| -> Result<String> {
        if text.len() > limit {
            return Err(invalid(format!(
                "a finding's {what} is {} bytes; the limit is {limit}",
                text.len()
            )));
        }
        let clean = super::secrets::redact(text.trim());
        redacted.extend(clean.kinds.iter().map(|k| k.to_string()));
        Ok(clean.text)
    };
    let message = scrub(&f.message, "message")?;
    if message.is_empty() {
        return Err(invalid("a finding has an empty message"));
    }
    let reason = f
        .reason
        .as_deref()
        .map(|r| scrub(r, "reason"))
        .transpose()?
        .filter(|r| !r.is_empty());
    write::refuse_secret("a finding's `category`", &f.category)?;
    let file = match f.file.as_deref() {
        Some(raw) => {
            let kinds = super::secrets::redact(raw).kinds;
            redacted.extend(kinds.iter().map(|k| k.to_string()));
            kinds.is_empty().then(|| finding_path(raw)).transpose()?
        }
        None => None,
    };
    Ok(Finding {
        category: record::normalise_category(&f.category)?,
        file,
        line: f.line,
        message,
        disposition: f.disposition,
        reason,
    })
}

/// A review record pulled from the team server, checked and scrubbed as `record_review`
/// checks its input: any member's client can write any record.
pub(super) fn clean_record(record: ReviewRecord) -> Result<ReviewRecord> {
    if record.findings.len() > MAX_FINDINGS {
        return Err(invalid(format!(
            "{} findings; at most {MAX_FINDINGS} per review",
            record.findings.len()
        )));
    }
    let id = review_id(&record.id)?;
    let author = write::person("`author`", &record.author)?;
    let reviewer = record
        .reviewer
        .as_deref()
        .map(|r| write::person("`reviewer`", r))
        .transpose()?;
    let findings = record
        .findings
        .into_iter()
        .map(|f| clean_finding(f, MAX_STORED_FINDING_TEXT, &mut BTreeSet::new()))
        .collect::<Result<Vec<_>>>()?;
    Ok(ReviewRecord {
        id,
        author,
        reviewer,
        findings,
        memory: record.memory.filter(|m| model::is_memory_id(m)),
        ..record
    })
}

/// Live rejection patterns of `category` that no guideline update has addressed yet.
fn open_rejections<'a>(
    memories: &'a HashMap<String, super::Memory>,
    category: &'a str,
) -> impl Iterator<Item = &'a super::Memory> {
    memories.values().filter(move |m| {
        m.kind == MemoryType::RejectionPattern
            && m.is_live()
            && !m.addressed
            && m.category.as_deref() == Some(category)
    })
}

impl Memories {
    /// Records a review's outcome. Everything is validated before anything is written; the
    /// memories go first (each deduplicated as any write is) and the review record last, in
    /// its own transaction, so an interrupted call is completed by calling it again.
    pub async fn record_review(
        &self,
        input: ReviewInput,
        graph: Option<&crate::graph::Graph>,
    ) -> Result<RecordedReview> {
        let author = write::person("`author`", &input.author)?;
        let reviewer = input
            .reviewer
            .as_deref()
            .filter(|r| !r.trim().is_empty())
            .map(|r| write::person("`reviewer`", r))
            .transpose()?;
        if input.findings.len() > MAX_FINDINGS {
            return Err(invalid(format!(
                "{} findings; at most {MAX_FINDINGS} per review",
                input.findings.len()
            )));
        }
        if input.learnings.len() > MAX_LEARNINGS {
            return Err(invalid(format!(
                "{} learnings; at most {MAX_LEARNINGS} per review",
                input.learnings.len()
            )));
        }
        let mut redacted = BTreeSet::new();
        let findings = input
            .findings
            .into_iter()
            .map(|f| clean_finding(f, MAX_FINDING_TEXT, &mut redacted))
            .collect::<Result<Vec<_>>>()?;
        let id = match input.review_id.as_deref() {
            Some(raw) => review_id(raw)?,
            None => record::derived_id(&author, input.verdict, &findings),
        };
        let mut record = ReviewRecord {
            id: id.clone(),
            at: now_ms(),
            author: author.clone(),
            reviewer: reviewer.clone(),
            verdict: input.verdict,
            findings,
            memory: None,
            seq: 0,
        };

        // Validate every memory before writing any.
        let source = |mut new: NewMemory| {
            new.source = Source::Review;
            new.source_ref = Some(id.clone());
            new.written_by = new.written_by.or_else(|| input.written_by.clone());
            new
        };
        let outcome_memory = write::prepare(
            source(NewMemory {
                kind: Some(MemoryType::ReviewOutcome),
                title: Some(format!("Review {id}: {}", input.verdict.as_str())),
                content: record::outcome_text(&record),
                developer: Some(author.clone()),
                ..NewMemory::default()
            }),
            &self.root,
            graph,
        )?;
        let mut rejections = Vec::new();
        for f in record
            .findings
            .iter()
            .filter(|f| f.disposition == Disposition::Rejected)
        {
            let (title, content) = record::rejection_text(f);
            rejections.push(write::prepare(
                source(NewMemory {
                    kind: Some(MemoryType::RejectionPattern),
                    title: Some(title),
                    content,
                    paths: f.file.iter().cloned().collect(),
                    category: Some(f.category.clone()),
                    ..NewMemory::default()
                }),
                &self.root,
                graph,
            )?);
        }
        let mut learnings = Vec::new();
        for new in input.learnings {
            learnings.push(write::prepare(source(new), &self.root, graph)?);
        }

        let mut state = self.state.lock().await;
        let state = &mut *state;
        let recorded = self
            .with_store(true, async |store| {
                self.catch_up(store, state).await?;
                let previous = state.reviews.get(&id).cloned();
                let repeated = previous.as_ref().is_some_and(|p| {
                    p.author == record.author
                        && p.reviewer == record.reviewer
                        && p.verdict == record.verdict
                        && p.findings == record.findings
                });
                let mut answer = RecordedReview {
                    review_id: id.clone(),
                    repeated,
                    outcome: None,
                    rejections: Vec::new(),
                    learnings: Vec::new(),
                    rules: Vec::new(),
                    author: AuthorStats::default(),
                    redacted: Vec::new(),
                };
                // A changed re-record replaces the review's earlier outcome memory.
                let replaces = previous
                    .as_ref()
                    .and_then(|p| p.memory.clone())
                    .filter(|old| state.memories.get(old).is_some_and(|m| m.is_live()));
                let mut write_one = async |prepared: &write::Prepared| -> Result<WriteOutcome> {
                    let plan = write::decide(prepared, state_view(state))?;
                    let outcome = plan.outcome.clone();
                    if !plan.changed.is_empty() {
                        self.commit(store, state, plan.changed, &HashMap::new())
                            .await?;
                    }
                    Ok(outcome.finish(&state.memories))
                };
                if !repeated {
                    let mut outcome_memory = outcome_memory;
                    if let Some(old) = replaces {
                        outcome_memory.set_supersedes(old);
                    }
                    let written = write_one(&outcome_memory).await?;
                    record.memory = Some(written.id.clone());
                    answer.outcome = Some(written);
                    for prepared in &rejections {
                        answer.rejections.push(write_one(prepared).await?);
                    }
                } else {
                    record.memory = previous.as_ref().and_then(|p| p.memory.clone());
                }
                for prepared in &learnings {
                    answer.learnings.push(write_one(prepared).await?);
                }
                if !repeated && let Some(link) = self.team() {
                    self.team_write(
                        link,
                        store,
                        state,
                        Vec::new(),
                        Vec::new(),
                        Some(record.clone()),
                    )
                    .await?;
                } else if !repeated {
                    let head = store
                        .head()
                        .await
                        .map_err(super::store_error)?
                        .max(state.seq);
                    record.seq = head + 1;
                    store
                        .write_review(&record)
                        .await
                        .map_err(super::store_error)?;
                    state.apply_reviews(vec![record.clone()]);
                    self.set_marker(record.seq);
                }
                Ok(answer)
            })
            .await?
            .expect("the store is created for writes");
        let mut recorded = recorded;
        let categories: Vec<&str> = record
            .findings
            .iter()
            .map(|f| f.category.as_str())
            .collect();
        recorded.rules = record::rule_stats(state.reviews.values())
            .into_iter()
            .filter(|s| categories.contains(&s.category.as_str()))
            .collect();
        recorded.author = record::author_stats(&author, state.reviews.values());
        recorded.redacted = redacted.into_iter().collect();
        Ok(recorded)
    }

    /// Rule statistics per category, each with its live rejection patterns not yet
    /// addressed by a guideline update.
    pub async fn rule_stats(&self) -> Result<Vec<RuleStat>> {
        let mut state = self.state.lock().await;
        self.refresh(&mut state).await?;
        let mut stats = record::rule_stats(state.reviews.values());
        for stat in &mut stats {
            let mut ids: Vec<&super::Memory> =
                open_rejections(&state.memories, &stat.category).collect();
            ids.sort_by(|a, b| b.updated_at.cmp(&a.updated_at).then(a.id.cmp(&b.id)));
            stat.memories = ids.into_iter().map(|m| m.id.clone()).collect();
        }
        Ok(stats)
    }

    /// An author's review statistics.
    pub async fn author_stats(&self, developer: &str) -> Result<AuthorStats> {
        let developer = model::developer_id(developer)?;
        let mut state = self.state.lock().await;
        self.refresh(&mut state).await?;
        Ok(record::author_stats(&developer, state.reviews.values()))
    }

    /// Marks the live rejection patterns of `category` as addressed (the review guidelines
    /// were updated for them); returns their ids.
    pub async fn mark_addressed(&self, category: &str) -> Result<Vec<String>> {
        let category = record::normalise_category(category)?;
        let mut state = self.state.lock().await;
        let state = &mut *state;
        self.with_store(true, async |store| {
            self.catch_up(store, state).await?;
            let changed: Vec<super::Memory> = open_rejections(&state.memories, &category)
                .map(|m| super::Memory {
                    addressed: true,
                    updated_at: 0,
                    ..m.clone()
                })
                .collect();
            let ids: Vec<String> = changed.iter().map(|m| m.id.clone()).collect();
            if !changed.is_empty() {
                self.commit(store, state, changed, &HashMap::new()).await?;
            }
            Ok(ids)
        })
        .await
        .map(Option::unwrap_or_default)
    }
}
