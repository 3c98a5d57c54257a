//! Review outcomes in the memory store: `record_review` writes a review record (one per
//! review id), a `review_outcome` memory, a `rejection_pattern` per rejected finding and the
//! learnings that came with it; rule statistics and author statistics are sums over the
//! records, so a review recorded twice counts once.

use std::collections::{BTreeSet, HashMap};

use serde::Serialize;

use crate::review::records as record;
pub use crate::review::records::{Disposition, Finding, ReviewRecord, Verdict};

use super::write::{self, NewMemory, WriteOutcome};
use super::{Memories, MemoryError, MemoryStore, MemoryType, Result, Source, State, model};
use crate::clock::now_ms;
use crate::review::stats::{AuthorStats, RuleStat};
use crate::secrets::SecretKind;

/// Most findings one review may carry.
pub(crate) const MAX_FINDINGS: usize = 200;
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
    /// The types whose rejection patterns may go to the organisation's store (`[memory]
    /// org_types`); empty when there is no organisation store.
    pub org_types: Vec<MemoryType>,
    /// When the review happened (milliseconds since the epoch); now when `None`.
    pub at: Option<i64>,
    /// Memories the review followed, and memories it found wrong here (ids).
    pub cited: Cited,
}

/// Memories a review cites by id: those it followed and those it found wrong here.
#[derive(Debug, Clone, Default)]
pub struct Cited {
    pub applied: Vec<String>,
    pub contradicted: Vec<String>,
}

/// Most memories one review may cite.
pub const MAX_CITED: usize = 50;

/// A review's cited memory ids: each a memory id, at most [`MAX_CITED`], none both applied
/// and contradicted; sorted, without repeats.
fn cited(cited: Cited) -> Result<(Vec<String>, Vec<String>)> {
    let clean = |ids: Vec<String>, what: &str| -> Result<Vec<String>> {
        let mut out: Vec<String> = ids.iter().map(|id| id.trim().to_string()).collect();
        out.sort();
        out.dedup();
        if out.len() > MAX_CITED {
            return Err(invalid(format!(
                "{} memories {what}; at most {MAX_CITED} per review",
                out.len()
            )));
        }
        if let Some(bad) = out.iter().find(|id| !model::is_memory_id(id)) {
            return Err(invalid(format!(
                "{} in `{what}` is not a memory id (m_ and 16 hex digits)",
                crate::secrets::quoted(bad)
            )));
        }
        Ok(out)
    };
    let applied = clean(cited.applied, "applied")?;
    let contradicted = clean(cited.contradicted, "contradicted")?;
    if let Some(both) = applied.iter().find(|id| contradicted.contains(id)) {
        return Err(invalid(format!(
            "{both} is both applied and contradicted: cite it once"
        )));
    }
    Ok((applied, contradicted))
}

/// What importing reviews did.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ImportedReviews {
    /// Records written: new reviews, or reviews whose findings changed since.
    pub written: usize,
    /// Reviews stored before with the same findings: nothing counted again.
    pub repeated: usize,
    /// Kinds of secret removed from the findings, by name.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub redacted: Vec<SecretKind>,
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
    /// Kinds of secret removed from the review's texts, by name.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub redacted: Vec<SecretKind>,
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
            "finding file {} must be a repository-relative path",
            crate::secrets::quoted(raw)
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
            "invalid review_id {}: up to 100 letters, digits, . _ - : / # !",
            crate::secrets::quoted(raw)
        )))
    }
}

/// A finding as stored: category normalised, file repository-relative, message and reason
/// at most `limit` bytes and redacted. A category holding a secret is refused (it is an id);
/// a file holding one is dropped, as a memory's anchors are, and its kinds are added to
/// `redacted`.
fn clean_finding(f: Finding, limit: usize, redacted: &mut BTreeSet<SecretKind>) -> Result<Finding> {
    let mut scrub = |text: &str, what: &str| -> Result<String> {
        if text.len() > limit {
            return Err(invalid(format!(
                "a finding's {what} is {} bytes; the limit is {limit}",
                text.len()
            )));
        }
        let clean = crate::secrets::redact(text.trim());
        redacted.extend(clean.kinds.iter().copied());
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
            let kinds = crate::secrets::redact(raw).kinds;
            redacted.extend(kinds.iter().copied());
            kinds.is_empty().then(|| finding_path(raw)).transpose()?
        }
        None => None,
    };
    let file_pattern = f
        .file_pattern
        .map(|p| p.trim().to_string())
        .filter(|p| !p.is_empty());
    if let Some(pattern) = &file_pattern {
        write::check_file_pattern(MemoryType::RejectionPattern, pattern)?;
    }
    let reviewer = f
        .reviewer
        .as_deref()
        .filter(|r| !r.trim().is_empty())
        .map(|r| write::person("a finding's `reviewer`", r))
        .transpose()?;
    let end_line = f
        .end_line
        .filter(|end| f.line.is_some_and(|start| *end > start));
    Ok(Finding {
        category: record::normalise_category(&f.category)?,
        file,
        line: f.line,
        end_line,
        message,
        disposition: f.disposition,
        reason,
        file_pattern,
        reviewer,
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

/// Served rejection patterns of `category` (live and approved) that no guideline update has
/// addressed yet.
pub(super) fn open_rejections<'a>(
    memories: &'a HashMap<String, super::Memory>,
    category: &'a str,
) -> impl Iterator<Item = &'a super::Memory> {
    memories.values().filter(move |m| {
        m.kind == MemoryType::RejectionPattern
            && m.is_served()
            && !m.rule.addressed
            && m.rule.category.as_deref() == Some(category)
    })
}

/// A review's input, validated: the record to store and what comes with it.
struct Checked {
    /// The record, without its outcome memory and sequence number (the write sets them).
    record: ReviewRecord,
    learnings: Vec<NewMemory>,
    written_by: Option<String>,
    /// Kinds of secret removed from the findings.
    redacted: BTreeSet<SecretKind>,
    org_types: Vec<MemoryType>,
}

/// Validates a review's input and builds its record: people and the review id checked,
/// findings within their limits and scrubbed, the id derived when none is given.
fn checked(input: ReviewInput) -> Result<Checked> {
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
    let (applied, contradicted) = cited(input.cited)?;
    Ok(Checked {
        record: ReviewRecord {
            id,
            at: input.at.unwrap_or_else(now_ms),
            author,
            reviewer,
            verdict: input.verdict,
            findings,
            applied,
            contradicted,
            memory: None,
            seq: 0,
        },
        learnings: input.learnings,
        written_by: input.written_by,
        redacted,
        org_types: input.org_types,
    })
}

/// A memory written by review `id`: its source is the review, its writer `written_by` unless
/// it names its own.
fn from_review(mut new: NewMemory, id: &str, written_by: Option<&String>) -> NewMemory {
    new.source = Source::Review;
    new.source_ref = Some(id.to_string());
    new.written_by = new.written_by.or_else(|| written_by.cloned());
    new
}

/// The `review_outcome` memory of a review: about its author.
fn outcome_memory(record: &ReviewRecord) -> NewMemory {
    NewMemory {
        kind: Some(MemoryType::ReviewOutcome),
        title: Some(format!("Review {}: {}", record.id, record.verdict.as_str())),
        content: outcome_text(record),
        developer: Some(record.author.clone()),
        ..NewMemory::default()
    }
}

/// One `rejection_pattern` memory per rejected finding, anchored at its file and applying to
/// its file pattern; in the organisation's scope when its pattern is generic and
/// `org_types` lets rejection patterns go there.
fn rejection_memories(record: &ReviewRecord, org_types: &[MemoryType]) -> Vec<NewMemory> {
    record
        .findings
        .iter()
        .filter(|f| f.disposition == Disposition::Rejected)
        .map(|f| {
            let (title, content) = rejection_text(f);
            NewMemory {
                kind: Some(MemoryType::RejectionPattern),
                title: Some(title),
                content,
                paths: f.file.iter().cloned().collect(),
                category: Some(f.category.clone()),
                scope: model::Scope::default_for(
                    MemoryType::RejectionPattern,
                    f.file_pattern.as_deref(),
                    org_types,
                ),
                file_pattern: f.file_pattern.clone(),
                ..NewMemory::default()
            }
        })
        .collect()
}

/// The memories a review writes, each validated before any is written.
struct ReviewWrites {
    /// The `review_outcome` memory.
    outcome: write::Prepared,
    /// One `rejection_pattern` per rejected finding.
    rejections: Vec<write::Prepared>,
    learnings: Vec<write::Prepared>,
}

/// Outcomes and writes of a review set apart from the rest: those another store already
/// holds, or those bound for the organisation's store.
struct Known<T = WriteOutcome> {
    rejections: Vec<T>,
    learnings: Vec<T>,
}

impl<T> Default for Known<T> {
    fn default() -> Self {
        Known {
            rejections: Vec::new(),
            learnings: Vec::new(),
        }
    }
}

impl ReviewWrites {
    /// Takes out the writes of the repository's scope that `org` already holds, answering
    /// with its memories.
    async fn known_in(&mut self, org: &Memories) -> Known {
        let mut known = Known::default();
        for (list, answers) in [
            (&mut self.rejections, &mut known.rejections),
            (&mut self.learnings, &mut known.learnings),
        ] {
            let mut kept = Vec::new();
            for prepared in std::mem::take(list) {
                if prepared.memory().scope == model::Scope::Repository
                    && let Some(outcome) = org.restated_or_warn(&prepared).await
                {
                    answers.push(outcome);
                } else {
                    kept.push(prepared);
                }
            }
            *list = kept;
        }
        known
    }

    /// Takes out the writes of the organisation's scope.
    fn take_org(&mut self) -> Known<write::Prepared> {
        let is_org = |p: &write::Prepared| p.memory().scope == model::Scope::Org;
        let (rejections, kept): (Vec<_>, Vec<_>) = std::mem::take(&mut self.rejections)
            .into_iter()
            .partition(is_org);
        self.rejections = kept;
        let (learnings, kept): (Vec<_>, Vec<_>) = std::mem::take(&mut self.learnings)
            .into_iter()
            .partition(is_org);
        self.learnings = kept;
        Known {
            rejections,
            learnings,
        }
    }
}

/// True when `record` says what `previous` said (the same people, verdict and findings):
/// recording it again counts nothing again.
fn repeats(previous: &ReviewRecord, record: &ReviewRecord) -> bool {
    previous.author == record.author
        && previous.reviewer == record.reviewer
        && previous.verdict == record.verdict
        && previous.findings == record.findings
        && previous.applied == record.applied
        && previous.contradicted == record.contradicted
}

/// Statistics of the categories `record` touched, over `reviews`.
fn rules_touched<'a>(
    record: &ReviewRecord,
    reviews: impl IntoIterator<Item = &'a ReviewRecord>,
) -> Vec<RuleStat> {
    let categories: Vec<&str> = record
        .findings
        .iter()
        .map(|f| f.category.as_str())
        .collect();
    record::rule_stats(reviews)
        .into_iter()
        .filter(|s| categories.contains(&s.category.as_str()))
        .collect()
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
        self.record_review_beside(input, graph, None).await
    }

    /// Records a review's outcome as [`Memories::record_review`] does, with the memories of
    /// the organisation's scope (generic rejection patterns, learnings written so) in `org`'s
    /// store after the review's own; a memory either store already holds is NONE.
    pub async fn record_review_beside(
        &self,
        input: ReviewInput,
        graph: Option<&crate::graph::Graph>,
        org: Option<&Memories>,
    ) -> Result<RecordedReview> {
        let Checked {
            mut record,
            learnings,
            written_by,
            redacted,
            org_types,
        } = checked(input)?;
        let org_types = if org.is_some() { org_types } else { Vec::new() };
        let mut writes =
            self.prepare_review(&record, learnings, written_by.as_ref(), graph, &org_types)?;
        // The learnings are compared by meaning too (outcomes and rejection patterns are
        // generated text, compared by terms).
        for prepared in &mut writes.learnings {
            self.embed_write(prepared).await;
        }
        let mut known = Known::default();
        let mut elsewhere = Known::default();
        if let Some(org) = org {
            known = writes.known_in(org).await;
            elsewhere = writes.take_org();
        }
        // The organisation's memories go first, like the review's own memories go before its
        // record: an interrupted call is completed by calling it again. A review that repeats
        // its stored record writes no rejection patterns again.
        let mut org_written = Known::default();
        if let Some(org) = org {
            let repeated = {
                let mut state = self.state.lock().await;
                self.refresh(&mut state).await?;
                state
                    .reviews
                    .get(&record.id)
                    .is_some_and(|previous| repeats(previous, &record))
            };
            if !repeated {
                for prepared in &elsewhere.rejections {
                    org_written
                        .rejections
                        .push(self.write_in(org, prepared).await?);
                }
            }
            for prepared in &elsewhere.learnings {
                org_written
                    .learnings
                    .push(self.write_in(org, prepared).await?);
            }
        }
        let mut recorded = {
            let mut state = self.state.lock().await;
            let state = &mut *state;
            let mut recorded = self
                .with_store(true, async |store| {
                    self.write_review(store, state, &mut record, writes).await
                })
                .await?
                .expect("the store is created for writes");
            recorded.rules = rules_touched(&record, state.reviews.values());
            recorded.author = record::author_stats(&record.author, state.reviews.values());
            recorded
        };
        if !recorded.repeated {
            recorded.rejections.extend(known.rejections);
        }
        recorded.learnings.extend(known.learnings);
        recorded.rejections.extend(org_written.rejections);
        recorded.learnings.extend(org_written.learnings);
        recorded.redacted = redacted.into_iter().collect();
        recorded.redacted.sort_by_key(|k| k.as_str());
        Ok(recorded)
    }

    /// Records reviews learned from history: records only (their statistics), no memories;
    /// what they teach is proposed apart, for a person to approve. Every input is checked
    /// before any is written; a review stored before with the same findings is left as it is
    /// (counted as repeated), so importing the same history again changes nothing.
    pub async fn import_reviews(
        &self,
        inputs: Vec<ReviewInput>,
        done: &std::sync::atomic::AtomicUsize,
    ) -> Result<ImportedReviews> {
        let mut answer = ImportedReviews::default();
        let mut redacted = BTreeSet::new();
        let mut records = Vec::with_capacity(inputs.len());
        for input in inputs {
            let checked = checked(input)?;
            redacted.extend(checked.redacted);
            records.push(checked.record);
        }
        let mut state = self.state.lock().await;
        let state = &mut *state;
        self.with_store(true, async |store| {
            self.catch_up(store, state).await?;
            for mut record in records {
                done.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let previous = state.reviews.get(&record.id);
                if previous.is_some_and(|p| repeats(p, &record)) {
                    answer.repeated += 1;
                    continue;
                }
                record.memory = previous.and_then(|p| p.memory.clone());
                self.store_record(store, state, &mut record).await?;
                answer.written += 1;
            }
            Ok(())
        })
        .await?;
        answer.redacted = redacted.into_iter().collect();
        answer.redacted.sort_by_key(|k| k.as_str());
        Ok(answer)
    }

    /// Writes a prepared memory in `other`'s store, unless this store already holds it.
    async fn write_in(&self, other: &Memories, prepared: &write::Prepared) -> Result<WriteOutcome> {
        match self.restated_or_warn(prepared).await {
            Some(known) => Ok(known),
            None => other.write_alone(prepared).await,
        }
    }

    /// Prepares the memories a review writes: its outcome, its rejection patterns and its
    /// learnings, in that order.
    fn prepare_review(
        &self,
        record: &ReviewRecord,
        learnings: Vec<NewMemory>,
        written_by: Option<&String>,
        graph: Option<&crate::graph::Graph>,
        org_types: &[MemoryType],
    ) -> Result<ReviewWrites> {
        let prepare = |new: NewMemory| {
            write::prepare(from_review(new, &record.id, written_by), &self.root, graph)
        };
        Ok(ReviewWrites {
            outcome: prepare(outcome_memory(record))?,
            rejections: rejection_memories(record, org_types)
                .into_iter()
                .map(prepare)
                .collect::<Result<_>>()?,
            learnings: learnings.into_iter().map(prepare).collect::<Result<_>>()?,
        })
    }

    /// Writes a review's memories, then its record (unless it repeats the stored one), in an
    /// open store. Answers without the statistics.
    async fn write_review(
        &self,
        store: &MemoryStore,
        state: &mut State,
        record: &mut ReviewRecord,
        writes: ReviewWrites,
    ) -> Result<RecordedReview> {
        self.catch_up(store, state).await?;
        let previous = state.reviews.get(&record.id).cloned();
        let repeated = previous.as_ref().is_some_and(|p| repeats(p, record));
        let mut answer = RecordedReview {
            review_id: record.id.clone(),
            repeated,
            outcome: None,
            rejections: Vec::new(),
            learnings: Vec::new(),
            rules: Vec::new(),
            author: AuthorStats::default(),
            redacted: Vec::new(),
        };
        let earlier_outcome = previous.and_then(|p| p.memory);
        if repeated {
            record.memory = earlier_outcome;
        } else {
            let mut outcome = writes.outcome;
            // A changed re-record replaces the review's earlier outcome memory.
            if let Some(old) =
                earlier_outcome.filter(|old| state.memories.get(old).is_some_and(|m| m.is_live()))
            {
                outcome.set_supersedes(old);
            }
            let written = self.write_prepared(store, state, &outcome).await?;
            record.memory = Some(written.id.clone());
            answer.outcome = Some(written);
            for prepared in &writes.rejections {
                answer
                    .rejections
                    .push(self.write_prepared(store, state, prepared).await?);
            }
        }
        for prepared in &writes.learnings {
            answer
                .learnings
                .push(self.write_prepared(store, state, prepared).await?);
        }
        if !repeated {
            self.store_record(store, state, record).await?;
        }
        Ok(answer)
    }

    /// Decides and commits one prepared memory; answers with the memory as stored.
    async fn write_prepared(
        &self,
        store: &MemoryStore,
        state: &mut State,
        prepared: &write::Prepared,
    ) -> Result<WriteOutcome> {
        let outcome = self.write_decided(store, state, prepared).await?;
        Ok(outcome.finish(&state.memories))
    }

    /// Stores a review record: through the team server in team mode, otherwise under the
    /// next sequence number.
    async fn store_record(
        &self,
        store: &MemoryStore,
        state: &mut State,
        record: &mut ReviewRecord,
    ) -> Result<()> {
        if let Some(link) = self.team() {
            return self
                .team_write(
                    link,
                    store,
                    state,
                    Vec::new(),
                    Vec::new(),
                    super::team::Attached {
                        review: Some(record.clone()),
                        ..Default::default()
                    },
                )
                .await;
        }
        let head = store
            .head()
            .await
            .map_err(super::store_error)?
            .max(state.seq);
        record.seq = head + 1;
        store
            .write_review(record)
            .await
            .map_err(super::store_error)?;
        state.apply_reviews(vec![record.clone()]);
        self.backend.set_marker(record.seq);
        Ok(())
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
            ids.sort_by(|a, b| {
                b.validity
                    .updated_at
                    .cmp(&a.validity.updated_at)
                    .then(a.id.cmp(&b.id))
            });
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

    /// Every recorded review, oldest first (by time, then by the order they were recorded).
    pub async fn review_records(&self) -> Result<Vec<ReviewRecord>> {
        let mut state = self.state.lock().await;
        self.refresh(&mut state).await?;
        let mut records: Vec<ReviewRecord> = state.reviews.values().cloned().collect();
        records.sort_by(|a, b| {
            a.at.cmp(&b.at)
                .then(a.seq.cmp(&b.seq))
                .then(a.id.cmp(&b.id))
        });
        Ok(records)
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
                .map(|m| {
                    let mut m = m.clone();
                    m.rule.addressed = true;
                    m.validity.updated_at = 0;
                    m
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

/// The text of a review's `review_outcome` memory.
fn outcome_text(record: &ReviewRecord) -> String {
    let count = |d: Disposition| {
        record
            .findings
            .iter()
            .filter(|f| f.disposition == d)
            .count()
    };
    let mut text = format!(
        "Review {} of {}'s change{}: {}; {} finding{} ({} implemented, {} rejected, {} deferred).",
        record.id,
        record.author,
        record
            .reviewer
            .as_deref()
            .map(|r| format!(" by {r}"))
            .unwrap_or_default(),
        record.verdict.as_str().replace('_', " "),
        record.findings.len(),
        if record.findings.len() == 1 { "" } else { "s" },
        count(Disposition::Implemented),
        count(Disposition::Rejected),
        count(Disposition::Deferred),
    );
    for f in &record.findings {
        let place = match (&f.file, f.line) {
            (Some(file), Some(line)) => format!(" {file}:{line}"),
            (Some(file), None) => format!(" {file}"),
            _ => String::new(),
        };
        let item = format!(
            " [{}{}] {} ({})",
            f.category,
            place,
            crate::tokens::truncate(&f.message, 160),
            f.disposition.as_str()
        );
        if text.len() + item.len() > super::model::MAX_CONTENT_BYTES - 64 {
            text.push_str(" …");
            break;
        }
        text.push_str(&item);
        text.push(';');
    }
    text
}

/// The text of the rejection pattern a rejected finding becomes.
fn rejection_text(finding: &Finding) -> (String, String) {
    let title = crate::tokens::truncate(
        &format!("{}: {}", finding.category, finding.message),
        super::model::MAX_TITLE_BYTES - 8,
    );
    let mut content = format!(
        "Rejected {} finding{}: {}",
        finding.category,
        finding
            .file
            .as_deref()
            .map(|f| format!(" on {f}"))
            .unwrap_or_default(),
        crate::tokens::truncate(&finding.message, 1500)
    );
    match &finding.reason {
        Some(reason) if !reason.trim().is_empty() => {
            content.push_str(&format!(
                " — reason: {}",
                crate::tokens::truncate(reason.trim(), 1500)
            ));
        }
        _ => content.push_str(" — no reason given"),
    }
    (title, content)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn finding(category: &str, file: &str, disposition: Disposition) -> Finding {
        Finding {
            category: category.to_string(),
            file: Some(file.to_string()),
            line: Some(3),
            message: "use the shared client".to_string(),
            disposition,
            reason: None,
            file_pattern: None,
            end_line: None,
            reviewer: None,
        }
    }

    fn input(findings: Vec<Finding>) -> ReviewInput {
        ReviewInput {
            review_id: None,
            verdict: Verdict::RequestChanges,
            findings,
            author: "@Alice".to_string(),
            reviewer: Some("  ".to_string()),
            learnings: Vec::new(),
            written_by: Some("claude".to_string()),
            org_types: Vec::new(),
            at: None,
            cited: Cited::default(),
        }
    }

    #[test]
    fn checked_input_is_scrubbed_and_named() {
        let key = format!("{}IOSFODNN7EXAMPLE", "AKIA");
        let mut leaky = finding(" Error Handling ", "./src/a.py", Disposition::Rejected);
        leaky.message = format!("the key {key} is logged");
        let checked = checked(input(vec![leaky])).unwrap();
        let record = &checked.record;
        assert_eq!(record.author, "alice");
        assert_eq!(record.reviewer, None);
        assert_eq!(record.findings[0].category, "error-handling");
        assert_eq!(record.findings[0].file.as_deref(), Some("src/a.py"));
        assert!(!record.findings[0].message.contains(&key));
        assert_eq!(
            checked.redacted.into_iter().collect::<Vec<_>>(),
            [SecretKind::AwsAccessKey]
        );
        assert_eq!(
            record.id,
            record::derived_id("alice", Verdict::RequestChanges, &record.findings)
        );
        assert_eq!((record.memory.as_deref(), record.seq), (None, 0));
    }

    #[test]
    fn checked_input_is_refused_past_its_limits() {
        let many = vec![finding("naming", "a.py", Disposition::Implemented); MAX_FINDINGS + 1];
        assert!(matches!(checked(input(many)), Err(MemoryError::Invalid(_))));
        let mut learned = input(Vec::new());
        learned.learnings = vec![NewMemory::default(); MAX_LEARNINGS + 1];
        assert!(matches!(checked(learned), Err(MemoryError::Invalid(_))));
        let outside = finding("naming", "../secrets.txt", Disposition::Rejected);
        assert!(checked(input(vec![outside])).is_err());
        let mut named = input(Vec::new());
        named.review_id = Some("PR 12; drop".to_string());
        assert!(checked(named).is_err());
    }

    #[test]
    fn rejected_findings_become_rejection_patterns() {
        let record = checked(input(vec![
            finding("naming", "src/a.py", Disposition::Rejected),
            finding("security", "src/b.py", Disposition::Implemented),
            finding("style", "src/c.py", Disposition::Deferred),
        ]))
        .unwrap()
        .record;
        let rejections = rejection_memories(&record, &[]);
        assert_eq!(rejections.len(), 1);
        assert_eq!(rejections[0].kind, Some(MemoryType::RejectionPattern));
        assert_eq!(rejections[0].category.as_deref(), Some("naming"));
        assert_eq!(rejections[0].paths, ["src/a.py"]);

        let outcome = outcome_memory(&record);
        assert_eq!(outcome.kind, Some(MemoryType::ReviewOutcome));
        assert_eq!(outcome.developer.as_deref(), Some("alice"));
        assert_eq!(
            outcome.title,
            Some(format!("Review {}: request_changes", record.id))
        );

        let sourced = from_review(outcome, &record.id, Some(&"claude".to_string()));
        assert_eq!(sourced.source, Source::Review);
        assert_eq!(sourced.source_ref.as_deref(), Some(record.id.as_str()));
        assert_eq!(sourced.written_by.as_deref(), Some("claude"));
        let own = NewMemory {
            written_by: Some("codex".to_string()),
            ..NewMemory::default()
        };
        let own = from_review(own, &record.id, Some(&"claude".to_string()));
        assert_eq!(own.written_by.as_deref(), Some("codex"));
    }

    #[test]
    fn a_review_repeats_only_what_it_said() {
        let first = checked(input(vec![finding(
            "naming",
            "src/a.py",
            Disposition::Rejected,
        )]))
        .unwrap()
        .record;
        let again = ReviewRecord {
            at: first.at + 1,
            memory: Some("m_0123456789abcdef".to_string()),
            seq: 7,
            ..first.clone()
        };
        assert!(repeats(&first, &again));
        let approved = ReviewRecord {
            verdict: Verdict::Approve,
            ..first.clone()
        };
        assert!(!repeats(&first, &approved));
        let mut changed = first.clone();
        changed.findings[0].disposition = Disposition::Implemented;
        assert!(!repeats(&first, &changed));
    }

    #[test]
    fn only_the_rules_a_review_touched_are_answered() {
        let naming = checked(input(vec![finding(
            "naming",
            "src/a.py",
            Disposition::Rejected,
        )]))
        .unwrap()
        .record;
        let mut other = naming.clone();
        other.id = "other".to_string();
        other.findings = vec![
            finding("naming", "src/b.py", Disposition::Implemented),
            finding("security", "src/b.py", Disposition::Implemented),
        ];
        let rules = rules_touched(&naming, [&naming, &other]);
        assert_eq!(rules.len(), 1);
        assert_eq!(rules[0].category, "naming");
        assert_eq!((rules[0].flagged, rules[0].rejected), (2, 1));
    }
}
