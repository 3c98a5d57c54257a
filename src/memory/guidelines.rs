//! Guideline changes: a proposed edit of a review guideline file (`CLAUDE.md`, `AGENTS.md`,
//! …) grounded in a rule category's rejection patterns, and what became of it. An accepted
//! change marks its rejection patterns addressed and names itself on them
//! (`Memory::addressed_by`); a rejected one keeps its feedback and changes nothing else. cairn
//! stores the proposal and its outcome; the guideline file is edited by a person or an
//! assistant, never by cairn.
//!
//! Changes are rows of the memory store's `guideline_change` table, one per change id. In
//! team mode a change is kept in this developer's copy at once and shared through the outbox
//! like a memory write; teammates' changes come in with the pull, checked as a recorded change
//! is, and merged so that every copy ends in the same state ([`pulled_wins`]).

use std::collections::{BTreeSet, HashMap};

use super::write;
use super::{Memories, Memory, MemoryError, MemoryType, Result, model, store_error};
use crate::clock::now_ms;
pub use crate::review::changes::{
    ChangeInput, GuidelineChange, Outcome, RecordedChange, effect, is_change_id,
};
use crate::review::records as record;
use crate::review::stats::ChangeEffect;
use crate::secrets;

/// Longest current or proposed guideline text, in bytes.
pub(crate) const MAX_GUIDELINE_TEXT: usize = 16_000;
/// Longest rationale or feedback, in bytes.
pub(crate) const MAX_NOTE_TEXT: usize = 4_000;
/// Longest section name, in bytes.
const MAX_SECTION: usize = 200;
/// Longest guideline file path, in bytes.
const MAX_FILE: usize = 512;
/// Most rejection patterns one change may name.
pub(crate) const MAX_SUPPORT: usize = 50;

fn invalid(message: impl Into<String>) -> MemoryError {
    MemoryError::Invalid(message.into())
}

fn new_change_id() -> String {
    let hex = crate::fsutil::random_hex(8).unwrap_or_else(|_| {
        let seed = format!("{}\0{}", now_ms(), std::process::id());
        format!("{:016x}", xxhash_rust::xxh3::xxh3_64(seed.as_bytes()))
    });
    format!("g_{hex}")
}

/// A guideline file's path: repository-relative, never climbing out, secret-free.
fn guideline_path(raw: &str) -> Result<String> {
    write::refuse_secret("`file`", raw)?;
    let path = raw.trim().trim_start_matches("./").replace('\\', "/");
    let escapes = path.is_empty()
        || path.starts_with('/')
        || path.contains('\0')
        || path.contains(':')
        || path.split('/').any(|p| p == ".." || p.is_empty());
    if escapes || path.len() > MAX_FILE {
        return Err(invalid(format!(
            "guideline file {} must be a repository-relative path (at most {MAX_FILE} bytes)",
            secrets::quoted(raw)
        )));
    }
    Ok(path)
}

/// A text within `limit` bytes, trimmed and redacted (the kinds removed added to `kinds`).
fn scrubbed(text: &str, what: &str, limit: usize, kinds: &mut BTreeSet<String>) -> Result<String> {
    if text.len() > limit {
        return Err(invalid(format!(
            "`{what}` is {} bytes; the limit is {limit}",
            text.len()
        )));
    }
    let clean = secrets::redact(text.trim());
    kinds.extend(clean.kinds.iter().map(|k| k.to_string()));
    Ok(clean.text)
}

/// The supporting ids, trimmed, each once, in the order given.
fn support_ids(ids: Vec<String>) -> Result<Vec<String>> {
    if ids.len() > MAX_SUPPORT {
        return Err(invalid(format!(
            "{} memory ids; at most {MAX_SUPPORT} per change",
            ids.len()
        )));
    }
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for id in ids {
        let id = id.trim().to_string();
        if !model::is_memory_id(&id) {
            return Err(invalid(format!(
                "{} is not a memory id (m_ and 16 hex digits)",
                secrets::quoted(&id)
            )));
        }
        if seen.insert(id.clone()) {
            out.push(id);
        }
    }
    if out.is_empty() {
        return Err(invalid(
            "`memory_ids` is empty: name the rejection patterns the change answers",
        ));
    }
    Ok(out)
}

/// The change an input describes, and whether the input repeats the outcome already
/// recorded.
#[derive(Debug)]
struct Merged {
    change: GuidelineChange,
    repeated: bool,
}

/// The change an input describes: a new one, or `earlier` with the input's outcome (and,
/// while it is still proposed, the fields given again).
fn merged(earlier: Option<GuidelineChange>, input: ChangeInput, now: i64) -> Result<Merged> {
    let outcome = input.outcome.unwrap_or(Outcome::Proposed);
    let mut kinds = BTreeSet::new();
    let by = input
        .by
        .as_deref()
        .filter(|b| !b.trim().is_empty())
        .map(|b| write::person("`by`", b))
        .transpose()?;
    let feedback = input
        .feedback
        .as_deref()
        .map(|f| scrubbed(f, "feedback", MAX_NOTE_TEXT, &mut kinds))
        .transpose()?
        .filter(|f| !f.is_empty());
    if let Some(confidence) = input.confidence
        && !(0.0..=1.0).contains(&confidence)
    {
        return Err(invalid(format!(
            "`confidence` is {confidence}; it must be between 0 and 1"
        )));
    }
    let mut change = match earlier {
        Some(earlier) if earlier.outcome != Outcome::Proposed => {
            return decided_again(earlier, outcome);
        }
        Some(earlier) => earlier,
        None => new_change(now),
    };
    kinds.extend(change.redacted.iter().cloned());
    given_fields(&mut change, &input, &mut kinds)?;
    change.confidence = input.confidence.or(change.confidence);
    change.outcome = outcome;
    change.feedback = feedback.or(change.feedback);
    change.by = by.or(change.by);
    change.written_by = input.written_by.or(change.written_by);
    change.decided_at = (outcome != Outcome::Proposed).then_some(now);
    change.redacted = kinds.into_iter().collect();
    Ok(Merged {
        change,
        repeated: false,
    })
}

/// A decided change recorded again: a repeat of its outcome, or refused for another.
fn decided_again(earlier: GuidelineChange, outcome: Outcome) -> Result<Merged> {
    if earlier.outcome != outcome {
        return Err(invalid(format!(
            "guideline change {} was already {} on {}: record a new proposal instead",
            earlier.id,
            earlier.outcome.as_str(),
            crate::clock::date_of(earlier.decided_at.unwrap_or(earlier.proposed_at) / 1000)
        )));
    }
    Ok(Merged {
        change: earlier,
        repeated: true,
    })
}

/// A new, empty proposal made at `now`.
fn new_change(now: i64) -> GuidelineChange {
    GuidelineChange {
        id: new_change_id(),
        file: String::new(),
        section: None,
        current_text: String::new(),
        proposed_text: String::new(),
        rationale: String::new(),
        category: String::new(),
        memories: Vec::new(),
        confidence: None,
        outcome: Outcome::Proposed,
        feedback: None,
        by: None,
        written_by: None,
        proposed_at: now,
        decided_at: None,
        redacted: Vec::new(),
    }
}

/// Sets the fields the input gives, checked and redacted, and refuses a change that still
/// lacks one it needs.
fn given_fields(
    change: &mut GuidelineChange,
    input: &ChangeInput,
    kinds: &mut BTreeSet<String>,
) -> Result<()> {
    if let Some(file) = input.file.as_deref() {
        change.file = guideline_path(file)?;
    }
    if let Some(section) = input.section.as_deref() {
        let section = scrubbed(section, "section", MAX_SECTION, kinds)?;
        change.section = (!section.is_empty()).then_some(section);
    }
    if let Some(text) = input.current_text.as_deref() {
        change.current_text = scrubbed(text, "current_text", MAX_GUIDELINE_TEXT, kinds)?;
    }
    if let Some(text) = input.proposed_text.as_deref() {
        change.proposed_text = scrubbed(text, "proposed_text", MAX_GUIDELINE_TEXT, kinds)?;
    }
    if let Some(text) = input.rationale.as_deref() {
        change.rationale = scrubbed(text, "rationale", MAX_NOTE_TEXT, kinds)?;
    }
    if let Some(category) = input.category.as_deref() {
        write::refuse_secret("`category`", category)?;
        change.category = record::normalise_category(category)?;
    }
    if let Some(ids) = &input.memories {
        change.memories = support_ids(ids.clone())?;
    }
    for (field, empty) in [
        ("file", change.file.is_empty()),
        ("proposed_text", change.proposed_text.is_empty()),
        ("rationale", change.rationale.is_empty()),
        ("category", change.category.is_empty()),
        ("memory_ids", change.memories.is_empty()),
    ] {
        if empty {
            return Err(invalid(format!("a guideline change needs `{field}`")));
        }
    }
    Ok(())
}

/// A teammate's change as pulled from the team server, checked and scrubbed as a recorded
/// change is (any member's client can write any row).
pub(super) fn clean_pulled(change: GuidelineChange) -> Result<GuidelineChange> {
    if !is_change_id(&change.id) {
        return Err(invalid("its id is not a guideline change id"));
    }
    if change.confidence.is_some_and(|c| !(0.0..=1.0).contains(&c)) {
        return Err(invalid("`confidence` is not between 0 and 1"));
    }
    let input = ChangeInput {
        file: Some(change.file.clone()),
        section: change.section.clone(),
        current_text: Some(change.current_text.clone()),
        proposed_text: Some(change.proposed_text.clone()),
        rationale: Some(change.rationale.clone()),
        category: Some(change.category.clone()),
        memories: Some(change.memories.clone()),
        ..ChangeInput::default()
    };
    let mut kinds: BTreeSet<String> = change.redacted.iter().cloned().collect();
    let mut clean = change;
    given_fields(&mut clean, &input, &mut kinds)?;
    clean.feedback = clean
        .feedback
        .as_deref()
        .map(|f| scrubbed(f, "feedback", MAX_NOTE_TEXT, &mut kinds))
        .transpose()?;
    clean.by = clean
        .by
        .as_deref()
        .map(|b| write::person("`by`", b))
        .transpose()?;
    clean.written_by = clean
        .written_by
        .as_deref()
        .map(|w| scrubbed(w, "written_by", MAX_SECTION, &mut kinds))
        .transpose()?;
    if (clean.outcome == Outcome::Proposed) != clean.decided_at.is_none() {
        return Err(invalid("its outcome and decision time disagree"));
    }
    clean.redacted = kinds.into_iter().collect();
    Ok(clean)
}

/// Whether a pulled change replaces this copy's version of it, so that every copy ends in the
/// same state whatever order the writes arrive in: a decision beats a proposal; of two
/// proposals, the later edit; of two different decisions, the earlier one (a change is decided
/// once: the first decision the server took stands).
pub(super) fn pulled_wins(local: Option<&GuidelineChange>, pulled: &GuidelineChange) -> bool {
    let Some(local) = local else {
        return true;
    };
    match (local.decided_at, pulled.decided_at) {
        (None, Some(_)) => true,
        (Some(_), None) => false,
        (None, None) => pulled.proposed_at >= local.proposed_at,
        (Some(mine), Some(theirs)) => {
            (theirs, pulled.outcome.as_str()) < (mine, local.outcome.as_str())
        }
    }
}

/// An undecided change that proposes what `change`, a new proposal, does: the same text for
/// the same section of the same file, about the same category (compared after redaction).
fn same_proposal<'a>(
    stored: &'a [GuidelineChange],
    change: &GuidelineChange,
) -> Option<&'a GuidelineChange> {
    if change.outcome != Outcome::Proposed {
        return None;
    }
    stored.iter().find(|c| {
        c.outcome == Outcome::Proposed
            && c.file == change.file
            && c.section == change.section
            && c.category == change.category
            && c.current_text == change.current_text
            && c.proposed_text == change.proposed_text
    })
}

/// Checks that every supporting id is a live rejection pattern of the change's category and,
/// for an accepted change, that no other update addressed it already.
#[cfg(test)]
fn check_support(change: &GuidelineChange, memories: &HashMap<String, Memory>) -> Result<()> {
    check_support_in(change, |id| memories.get(id))
}

/// [`check_support`] over whatever `find` looks in (this store, then the other scope's).
fn check_support_in<'a>(
    change: &GuidelineChange,
    find: impl Fn(&str) -> Option<&'a Memory>,
) -> Result<()> {
    for id in &change.memories {
        let Some(memory) = find(id) else {
            return Err(invalid(format!("unknown memory `{id}`")));
        };
        if memory.kind != MemoryType::RejectionPattern {
            return Err(invalid(format!(
                "`{id}` is a {}, not a rejection_pattern",
                memory.kind
            )));
        }
        if memory.rule.category.as_deref() != Some(change.category.as_str()) {
            return Err(invalid(format!(
                "`{id}` is a rejection pattern of `{}`, not of `{}`",
                memory.rule.category.as_deref().unwrap_or("no category"),
                change.category
            )));
        }
        if let Some(newer) = &memory.validity.superseded_by {
            return Err(invalid(format!(
                "`{id}` was superseded by {newer}: name the live pattern"
            )));
        }
        if !memory.is_live() {
            return Err(invalid(format!("`{id}` is no longer live")));
        }
        if change.outcome == Outcome::Accepted
            && memory.rule.addressed
            && memory.rule.addressed_by.as_deref() != Some(change.id.as_str())
        {
            return Err(invalid(format!(
                "`{id}` is already addressed ({})",
                memory.rule.addressed_by.as_deref().map_or_else(
                    || "by `cairn rules --addressed`".to_string(),
                    |by| format!("by guideline change {by}")
                )
            )));
        }
    }
    Ok(())
}

impl Memories {
    /// Records a guideline proposal or its outcome. Everything is checked before anything is
    /// written; the change is stored first and an accepted one's patterns marked after, so
    /// recording the same outcome again completes an interrupted call.
    ///
    /// `beside` are rejection patterns of the other scope's store (the organisation's) the
    /// change may cite: they are checked like this store's, and the caller marks them
    /// addressed there ([`Memories::mark_addressed_by`]) with the change's id.
    pub async fn record_guideline_change(
        &self,
        input: ChangeInput,
        beside: &[Memory],
    ) -> Result<RecordedChange> {
        if let Some(id) = input.id.as_deref()
            && !is_change_id(id.trim())
        {
            return Err(invalid(format!(
                "{} is not a guideline change id (g_ and 16 hex digits)",
                secrets::quoted(id)
            )));
        }
        let mut state = self.state.lock().await;
        let state = &mut *state;
        self.with_store(true, async |store| {
            self.catch_up(store, state).await?;
            let stored = store.guideline_changes().await.map_err(store_error)?;
            let earlier = match input.id.as_deref().map(str::trim) {
                Some(id) => Some(
                    stored
                        .iter()
                        .find(|c| c.id == id)
                        .cloned()
                        .ok_or_else(|| invalid(format!("unknown guideline change `{id}`")))?,
                ),
                None => None,
            };
            let named = earlier.is_some();
            let Merged {
                mut change,
                mut repeated,
            } = merged(earlier, input, now_ms())?;
            // The same proposal recorded again (a retried call) is the one recorded before.
            if !named && let Some(same) = same_proposal(&stored, &change) {
                change = same.clone();
                repeated = true;
            }
            // A rejection marks nothing: its patterns may since have been superseded.
            if change.outcome != Outcome::Rejected {
                check_support_in(&change, |id| {
                    state
                        .memories
                        .get(id)
                        .or_else(|| beside.iter().find(|m| m.id == id))
                })?;
            }
            if !repeated {
                store
                    .write_guideline_change(&change)
                    .await
                    .map_err(store_error)?;
                if let Some(link) = self.team() {
                    let attached = super::team::Attached {
                        guidelines: vec![change.clone()],
                        ..Default::default()
                    };
                    self.team_write(link, store, state, Vec::new(), Vec::new(), attached)
                        .await?;
                }
            }
            let mut addressed = Vec::new();
            if change.outcome == Outcome::Accepted {
                let marked: Vec<Memory> = change
                    .memories
                    .iter()
                    .filter_map(|id| state.memories.get(id))
                    .filter(|m| m.rule.addressed_by.as_deref() != Some(change.id.as_str()))
                    .map(|m| {
                        let mut m = m.clone();
                        m.rule.addressed = true;
                        m.rule.addressed_by = Some(change.id.clone());
                        m.validity.updated_at = 0;
                        m
                    })
                    .collect();
                addressed = marked.iter().map(|m| m.id.clone()).collect();
                if !marked.is_empty() {
                    self.commit(store, state, marked, &HashMap::new()).await?;
                }
            }
            Ok(RecordedChange {
                change,
                addressed,
                repeated,
            })
        })
        .await
        .map(|r| r.expect("the store is created for writes"))
    }

    /// Marks the rejection patterns `ids` of this store addressed by the accepted guideline
    /// change `change` (its record lives in another store); the ids marked now.
    pub async fn mark_addressed_by(&self, ids: &[String], change: &str) -> Result<Vec<String>> {
        if !is_change_id(change) {
            return Err(invalid(format!(
                "{} is not a guideline change id",
                secrets::quoted(change)
            )));
        }
        let mut state = self.state.lock().await;
        let state = &mut *state;
        self.with_store(true, async |store| {
            self.catch_up(store, state).await?;
            let marked: Vec<Memory> = ids
                .iter()
                .filter_map(|id| state.memories.get(id))
                .filter(|m| m.kind == MemoryType::RejectionPattern && m.is_live())
                .filter(|m| m.rule.addressed_by.as_deref() != Some(change))
                .map(|m| {
                    let mut m = m.clone();
                    m.rule.addressed = true;
                    m.rule.addressed_by = Some(change.to_string());
                    m.validity.updated_at = 0;
                    m
                })
                .collect();
            let marked_ids = marked.iter().map(|m| m.id.clone()).collect();
            if !marked.is_empty() {
                self.commit(store, state, marked, &HashMap::new()).await?;
            }
            Ok(marked_ids)
        })
        .await
        .map(Option::unwrap_or_default)
    }

    /// Every recorded guideline change, oldest first.
    pub async fn guideline_changes(&self) -> Result<Vec<GuidelineChange>> {
        self.with_store(false, async |store| {
            store.guideline_changes().await.map_err(store_error)
        })
        .await
        .map(Option::unwrap_or_default)
    }

    /// Every guideline change with its category and effect, oldest first.
    pub async fn change_effects(&self) -> Result<Vec<(String, ChangeEffect)>> {
        let changes = self.guideline_changes().await?;
        let mut state = self.state.lock().await;
        self.refresh(&mut state).await?;
        Ok(changes
            .iter()
            .map(|c| (c.category.clone(), effect(c, state.reviews.values())))
            .collect())
    }

    /// The live rejection patterns of `category` not yet addressed, newest first.
    pub async fn open_rejection_patterns(&self, category: &str) -> Result<Vec<Memory>> {
        let category = record::normalise_category(category)?;
        let mut state = self.state.lock().await;
        self.refresh(&mut state).await?;
        let mut open: Vec<Memory> = super::reviews::open_rejections(&state.memories, &category)
            .cloned()
            .collect();
        open.sort_by(|a, b| {
            b.validity
                .updated_at
                .cmp(&a.validity.updated_at)
                .then(a.id.cmp(&b.id))
        });
        Ok(open)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::review::records::{Disposition, Finding, ReviewRecord, Verdict};

    fn proposal() -> ChangeInput {
        ChangeInput {
            file: Some("./CLAUDE.md".to_string()),
            section: Some("Naming".to_string()),
            current_text: Some("Use descriptive names.".to_string()),
            proposed_text: Some("Domain terms (`total`, `cart`) are fine as names.".to_string()),
            rationale: Some("Three naming findings were rejected.".to_string()),
            category: Some("Naming".to_string()),
            memories: Some(vec![
                "m_0000000000000001".to_string(),
                " m_0000000000000001 ".to_string(),
            ]),
            confidence: Some(0.8),
            by: Some("@Alice".to_string()),
            ..ChangeInput::default()
        }
    }

    fn pattern(id: &str, category: &str) -> Memory {
        let mut m = Memory::new(
            id.to_string(),
            MemoryType::RejectionPattern,
            "t".to_string(),
            "c".to_string(),
            1,
        );
        m.rule.category = Some(category.to_string());
        m
    }

    #[test]
    fn a_proposal_is_normalised_and_redacted() {
        let key = format!("{}IOSFODNN7EXAMPLE", "AKIA");
        let mut input = proposal();
        input.proposed_text = Some(format!("Never log the key {key}."));
        let Merged { change, repeated } = merged(None, input, 7).unwrap();
        assert!(!repeated);
        assert!(is_change_id(&change.id), "{}", change.id);
        assert_eq!(change.file, "CLAUDE.md");
        assert_eq!(change.category, "naming");
        assert_eq!(change.memories, ["m_0000000000000001"]);
        assert_eq!(change.by.as_deref(), Some("alice"));
        assert_eq!((change.outcome, change.proposed_at), (Outcome::Proposed, 7));
        assert_eq!(change.decided_at, None);
        assert!(!change.proposed_text.contains(&key));
        assert_eq!(change.redacted, ["aws-access-key"]);
    }

    #[test]
    fn a_proposal_recorded_again_is_the_undecided_one_before_it() {
        let Merged { change: first, .. } = merged(None, proposal(), 7).unwrap();
        let Merged { change: again, .. } = merged(None, proposal(), 9).unwrap();
        assert_ne!(first.id, again.id, "ids are random");
        let stored = [first.clone()];
        assert_eq!(
            same_proposal(&stored, &again).map(|c| &c.id),
            Some(&first.id)
        );
        // Another text, or a proposal decided since, is another change.
        let mut other = proposal();
        other.proposed_text = Some("Names follow the domain glossary.".to_string());
        let Merged { change: other, .. } = merged(None, other, 9).unwrap();
        assert!(same_proposal(&stored, &other).is_none());
        let decided = [GuidelineChange {
            outcome: Outcome::Rejected,
            ..first
        }];
        assert!(same_proposal(&decided, &again).is_none());
    }

    #[test]
    fn bad_proposals_are_refused() {
        type Case = (fn(&mut ChangeInput), &'static str);
        let cases: Vec<Case> = vec![
            (
                |i| i.file = Some("../etc/passwd".into()),
                "repository-relative",
            ),
            (
                |i| i.file = Some("/etc/passwd".into()),
                "repository-relative",
            ),
            (
                |i| i.memories = Some(vec!["x; drop".into()]),
                "not a memory id",
            ),
            (|i| i.memories = Some(Vec::new()), "is empty"),
            (|i| i.confidence = Some(1.5), "between 0 and 1"),
            (
                |i| i.category = Some("a;b".into()),
                "invalid finding category",
            ),
            (|i| i.proposed_text = None, "needs `proposed_text`"),
            (
                |i| i.proposed_text = Some("x".repeat(MAX_GUIDELINE_TEXT + 1)),
                "the limit is",
            ),
        ];
        for (change, expected) in cases {
            let mut input = proposal();
            change(&mut input);
            let error = merged(None, input, 1).unwrap_err().to_string();
            assert!(error.contains(expected), "{expected}: {error}");
        }
    }

    #[test]
    fn an_outcome_completes_a_proposal_once() {
        let Merged {
            change: proposed, ..
        } = merged(None, proposal(), 1).unwrap();
        let accept = ChangeInput {
            id: Some(proposed.id.clone()),
            outcome: Some(Outcome::Accepted),
            feedback: Some("merged in #12".to_string()),
            ..ChangeInput::default()
        };
        let Merged {
            change: accepted,
            repeated,
        } = merged(Some(proposed.clone()), accept.clone(), 5).unwrap();
        assert!(!repeated);
        assert_eq!(accepted.id, proposed.id);
        assert_eq!(accepted.proposed_text, proposed.proposed_text);
        assert_eq!((accepted.decided_at, accepted.proposed_at), (Some(5), 1));
        let Merged {
            change: again,
            repeated,
        } = merged(Some(accepted.clone()), accept, 9).unwrap();
        assert!(repeated);
        assert_eq!(again, accepted);
        let reject = ChangeInput {
            outcome: Some(Outcome::Rejected),
            ..ChangeInput::default()
        };
        let error = merged(Some(accepted), reject, 9).unwrap_err().to_string();
        assert!(error.contains("already accepted"), "{error}");
    }

    #[test]
    fn support_must_be_open_rejection_patterns_of_the_category() {
        let Merged { mut change, .. } = merged(None, proposal(), 1).unwrap();
        let mut memories = HashMap::new();
        let check = |change: &GuidelineChange, memories: &HashMap<String, Memory>| {
            check_support(change, memories).map_err(|e| e.to_string())
        };
        assert!(
            check(&change, &memories)
                .unwrap_err()
                .contains("unknown memory")
        );
        let mut decision = pattern("m_0000000000000001", "naming");
        decision.kind = MemoryType::Decision;
        memories.insert(decision.id.clone(), decision);
        assert!(
            check(&change, &memories)
                .unwrap_err()
                .contains("is a decision")
        );
        let security = pattern("m_0000000000000001", "security");
        memories.insert(security.id.clone(), security);
        assert!(
            check(&change, &memories)
                .unwrap_err()
                .contains("of `security`")
        );
        let mut addressed = pattern("m_0000000000000001", "naming");
        addressed.rule.addressed = true;
        memories.insert(addressed.id.clone(), addressed.clone());
        assert!(check(&change, &memories).is_ok(), "a proposal may cite it");
        change.outcome = Outcome::Accepted;
        assert!(
            check(&change, &memories)
                .unwrap_err()
                .contains("already addressed")
        );
        addressed.rule.addressed_by = Some(change.id.clone());
        memories.insert(addressed.id.clone(), addressed);
        assert!(
            check(&change, &memories).is_ok(),
            "addressed by this change"
        );
    }

    #[test]
    fn an_imported_memory_names_only_a_change_id() {
        let mut memory = pattern("m_0000000000000001", "naming");
        memory.validity.created_at = 1_700_000_000_000;
        memory.validity.updated_at = memory.validity.created_at;
        memory.validity.valid_from = memory.validity.created_at;
        memory.rule.addressed = true;
        memory.rule.addressed_by = Some("g_00000000000000ab".to_string());
        let line = |m: &Memory| serde_json::to_string(m).unwrap();
        let parsed = crate::memory::parse_jsonl(&line(&memory)).unwrap();
        assert_eq!(parsed[0].memory.rule.addressed_by, memory.rule.addressed_by);
        memory.rule.addressed_by = Some("../../etc/passwd".to_string());
        let error = crate::memory::parse_jsonl(&line(&memory)).unwrap_err();
        assert!(
            error.to_string().contains("not a guideline change id"),
            "{error}"
        );
    }

    #[test]
    fn the_rate_is_split_at_the_acceptance() {
        let review = |id: &str, at: i64, disposition: Disposition| ReviewRecord {
            id: id.to_string(),
            at,
            author: "bob".to_string(),
            reviewer: None,
            verdict: Verdict::Comment,
            findings: vec![Finding {
                category: "naming".to_string(),
                file: None,
                line: None,
                message: "m".to_string(),
                disposition,
                reason: None,
                file_pattern: None,
                end_line: None,
                reviewer: None,
            }],
            applied: Vec::new(),
            contradicted: Vec::new(),
            memory: None,
            seq: 0,
        };
        let reviews = [
            review("1", 10, Disposition::Rejected),
            review("2", 11, Disposition::Rejected),
            review("3", 12, Disposition::Implemented),
            review("4", 30, Disposition::Implemented),
        ];
        let Merged { mut change, .. } = merged(None, proposal(), 5).unwrap();
        let proposed = effect(&change, &reviews);
        assert_eq!((proposed.before, proposed.after), (None, None));
        change.outcome = Outcome::Accepted;
        change.decided_at = Some(20);
        let accepted = effect(&change, &reviews);
        let before = accepted.before.unwrap();
        let after = accepted.after.unwrap();
        assert_eq!((before.reviews, before.flagged, before.rejected), (3, 3, 2));
        assert!((before.rejection_rate - 0.667).abs() < 1e-9);
        assert_eq!(
            (after.flagged, after.rejected, after.rejection_rate),
            (1, 0, 0.0)
        );
        assert_eq!(accepted.addressed, ["m_0000000000000001"]);
    }
}
