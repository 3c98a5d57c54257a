//! The write path: validation, secret redaction, anchor checks, and the decision of what a
//! write does to the live memories of its scope.
//!
//! The decision compares the new text with the most similar live memories of the same type
//! and scope, by their term sets (see [`super::text`]) and, with the model, by the cosine
//! similarity of their sentence embeddings. Candidates are judged most similar first; the
//! first that the write is not new to decides:
//! - texts that differ in a number or by a pair of opposite words (`before`/`after`) are
//!   different learnings, however close;
//! - a near-duplicate that says the opposite (`never` vs. none) supersedes the old memory;
//! - one that adds nothing (same terms, or a subset) is `NONE` and reinforces the old one;
//! - one that adds detail (a superset) or rewords it closely is an `UPDATE`: the old text
//!   goes to history;
//! - one that means the same in other words (cosine from [`SAME_MEANING`]) is `NONE`, or an
//!   `UPDATE` when it only adds terms;
//! - anything else is `ADD`, and the answer lists the nearest memories so the writer can pass
//!   `supersedes`.
//!
//! The thresholds are chosen on the labelled pairs in `tests/fixtures/memory/paraphrases.jsonl`.
//!
//! A contributor profile is one live record per developer: a new profile updates it.

use std::collections::{BTreeSet, HashMap};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use serde::Serialize;

use super::model::{
    Action, Anchors, FilePattern, MAX_ANCHOR_BYTES, MAX_ANCHORS, MAX_CONTENT_BYTES, MAX_HISTORY,
    MAX_LABEL_BYTES, MAX_TITLE_BYTES, Memory, MemoryError, MemoryType, Metadata, Owner, Provenance,
    Revision, Rule, Scope, Source, Status, check_metadata_size, developer_id, is_memory_id,
};
use super::search::{Filter, SearchIndex};
use super::{embed, text};
use crate::clock::now_ms;
use crate::graph::Graph;
use crate::secrets;
use crate::secrets::{SecretKind, quoted};

/// Jaccard similarity from which two texts are the same learning (when one holds the other's
/// terms).
const SAME_IF_CONTAINED: f64 = 0.5;
/// Jaccard similarity from which two texts are the same learning reworded.
const SAME_REWORDED: f64 = 0.85;
/// Jaccard similarity from which a negated near-duplicate contradicts (the same statement
/// with the opposite polarity, not a longer one that mentions an exception).
const CONTRADICTS: f64 = 0.9;
/// Cosine similarity from which two texts of the same polarity mean the same learning.
const SAME_MEANING: f64 = 0.87;
/// Cosine similarity from which two texts of opposite polarity about the same things
/// contradict each other.
const CONTRADICTS_MEANING: f64 = 0.94;
/// Jaccard similarity, negating words left out, that a contradiction by meaning needs too:
/// the two texts must be about the same things.
const CONTRADICTS_TERMS: f64 = 0.5;
/// The rarest terms of a write that look for its near-duplicates.
const DEDUP_TERMS: usize = 8;
/// Memories found by vector that a write is compared with.
const DEDUP_NEIGHBOURS: usize = 5;
/// Most nearest memories an ADD answer lists.
const NEAREST_LISTED: usize = 3;
/// Similarities from which a memory is listed as near an added one (by meaning, by terms).
const NEAREST_MEANING: f64 = 0.5;
const NEAREST_TERMS: f64 = 0.25;

/// A learning to store.
#[derive(Debug, Clone, Default)]
pub struct NewMemory {
    pub kind: Option<MemoryType>,
    pub title: Option<String>,
    pub content: String,
    pub developer: Option<String>,
    pub org: Option<String>,
    pub agent: Option<String>,
    pub run: Option<String>,
    /// The writer's own keys and values (secrets in string values redacted).
    pub metadata: Metadata,
    pub paths: Vec<String>,
    pub symbols: Vec<String>,
    pub supersedes: Option<String>,
    pub source: Source,
    pub source_ref: Option<String>,
    pub written_by: Option<String>,
    /// Review rule category (rejection patterns from `record_review`).
    pub category: Option<String>,
    /// The files it applies to, a gitignore-style glob (rejection patterns and framework
    /// knowledge only).
    pub file_pattern: Option<String>,
    /// The store it is written to (decided by the caller; recorded on the memory).
    pub scope: Scope,
    /// The repository its paths and symbols name when it is not the writer's (a revision
    /// that keeps an organisation memory's anchors); `None`: the writer's, which an
    /// organisation's store records.
    pub origin: Option<String>,
    /// Written by an assistant under the approval gate: stored pending, served only once a
    /// person approves it.
    pub pending: bool,
    /// Refuse the write when it holds a secret, instead of storing it redacted (a person
    /// editing in the page can take it out; a redacted text would be stored unseen).
    pub refuse_secrets: bool,
}

/// What a write did.
#[derive(Debug, Clone, Serialize)]
pub struct WriteOutcome {
    pub event: Action,
    /// The memory the write landed in (new, updated, or the existing one for NONE).
    pub id: String,
    /// The memory this write superseded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub superseded: Option<String>,
    /// Kinds of secret removed from the write, by name.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub redacted: Vec<SecretKind>,
    /// Anchors the code graph does not know.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unknown_anchors: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// For an ADD: the live memories of its type and scope closest to it, most similar
    /// first, so the writer can pass `supersedes` when one of them is what it replaces.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub nearest: Vec<Nearest>,
    pub memory: Option<Memory>,
}

/// A change of a live memory in place, keeping its id: a new text, new metadata, or both.
#[derive(Debug, Clone, Default)]
pub struct Rewrite {
    pub content: Option<String>,
    /// Replaces the memory's metadata whole.
    pub metadata: Option<Metadata>,
    /// Who changes it (kept in the memory's history).
    pub by: Option<String>,
}

/// A memory close to a write, and how close.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Nearest {
    pub id: String,
    /// Cosine similarity of the embeddings with the model, Jaccard similarity of the term
    /// sets without (rounded to 2 places).
    pub similarity: f64,
    /// `meaning` (embeddings) or `terms`.
    pub by: &'static str,
}

impl WriteOutcome {
    /// Fills in the memory as stored.
    pub(super) fn finish(mut self, memories: &HashMap<String, Memory>) -> WriteOutcome {
        self.memory = memories.get(&self.id).cloned();
        self
    }
}

/// A validated, redacted write.
#[derive(Clone)]
pub(super) struct Prepared {
    memory: Memory,
    /// Kinds of secret removed from the write, by name.
    redacted: Vec<SecretKind>,
    fingerprint: BTreeSet<String>,
    negated: bool,
    normalised: String,
    supersedes: Option<String>,
    /// The memory the text quoted as cairn served it.
    echo: Option<String>,
    notes: Vec<String>,
    /// The embedding of the text, when the model is there.
    vector: Option<Vec<f32>>,
}

impl Prepared {
    /// Makes the write replace `id` (a memory of the same scope).
    pub(super) fn set_supersedes(&mut self, id: String) {
        self.supersedes = Some(id);
    }

    /// True when the write names the memory it supersedes.
    pub(super) fn names_supersedes(&self) -> bool {
        self.supersedes.is_some()
    }

    /// The memory the write would store.
    pub(super) fn memory(&self) -> &Memory {
        &self.memory
    }

    /// The write as an organisation's store keeps it when the repository `here` writes it:
    /// with `here` as its origin, unless it names one already. `None`: nothing to record.
    pub(super) fn written_in(&self, here: &str) -> Option<Prepared> {
        if self.memory.anchors.origin.is_some() {
            return None;
        }
        let mut stamped = self.clone();
        stamped.memory.anchors.origin = Some(here.to_string());
        Some(stamped)
    }

    /// True when the write waits for a person's approval.
    pub(super) fn is_pending(&self) -> bool {
        self.memory.status == Status::Pending
    }

    /// True when the write may be compared with `memory`: a write under the gate sees every
    /// memory, any other write only approved ones (a person's write is never absorbed into
    /// an assistant's unapproved one).
    fn sees(&self, memory: &Memory) -> bool {
        self.is_pending() || memory.status.is_approved()
    }

    /// The index filter of the memories this write is compared with.
    fn filter(&self, include_superseded: bool) -> Filter {
        Filter {
            types: self.memory.kind.bit(),
            include_superseded,
            include_unapproved: self.is_pending(),
        }
    }

    /// Gives the write its embedding, to compare it by meaning.
    pub(super) fn set_vector(&mut self, vector: Vec<f32>) {
        self.vector = Some(vector);
    }

    /// Its embedding, if it has one.
    pub(super) fn vector(&self) -> Option<&[f32]> {
        self.vector.as_deref()
    }

    /// The answer to this write when it lands in memory `id`.
    fn outcome(&self, event: Action, id: &str) -> WriteOutcome {
        WriteOutcome {
            event,
            id: id.to_string(),
            superseded: None,
            redacted: self.redacted.clone(),
            unknown_anchors: self.memory.anchors.unknown_anchors.clone(),
            notes: self.notes.clone(),
            nearest: Vec::new(),
            memory: None,
        }
    }

    /// The write stores its memory as a new one.
    fn add(&self) -> Plan {
        Plan {
            changed: vec![self.memory.clone()],
            outcome: self.outcome(Action::Add, &self.memory.id),
        }
    }

    /// The write stores its memory as a new one, listing the memories nearest to it.
    fn add_beside(&self, candidates: &[Candidate]) -> Plan {
        let mut plan = self.add();
        plan.outcome.nearest = candidates
            .iter()
            .filter(|c| match c.similarity.meaning {
                Some(meaning) => meaning >= NEAREST_MEANING,
                None => c.similarity.terms >= NEAREST_TERMS,
            })
            .take(NEAREST_LISTED)
            .map(|c| Nearest {
                id: c.memory.id.clone(),
                similarity: (c.similarity.rank() * 100.0).round() / 100.0,
                by: if c.similarity.meaning.is_some() {
                    "meaning"
                } else {
                    "terms"
                },
            })
            .collect();
        if !plan.outcome.nearest.is_empty() {
            plan.outcome.notes.push(
                "nearest memories are listed: if this replaces one, write it again with supersedes"
                    .to_string(),
            );
        }
        plan
    }

    /// The write changes nothing: it answers with memory `id` and says why.
    fn unchanged(&self, id: &str, note: String) -> Plan {
        let mut outcome = self.outcome(Action::None, id);
        outcome.notes.push(note);
        Plan {
            changed: Vec::new(),
            outcome,
        }
    }
}

/// What the write path sees of the current memories.
pub(super) struct View<'a> {
    pub memories: &'a HashMap<String, Memory>,
    pub index: &'a SearchIndex,
    /// Vectors of memories the index holds none for yet (computed for this write).
    pub vectors: &'a HashMap<String, Vec<f32>>,
}

/// The rows a write changes and what to answer.
pub(super) struct Plan {
    pub changed: Vec<Memory>,
    pub outcome: WriteOutcome,
}

fn invalid(message: impl Into<String>) -> MemoryError {
    MemoryError::Invalid(message.into())
}

fn new_id(seed: &str) -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let material = format!(
        "{seed}\0{nanos}\0{}\0{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    );
    format!("m_{:016x}", xxhash_rust::xxh3::xxh3_64(material.as_bytes()))
}

/// Kinds of secret found while redacting a write.
type Kinds = BTreeSet<SecretKind>;

/// The kinds in the order of their names (as stored and answered).
fn by_name(kinds: &Kinds) -> Vec<SecretKind> {
    let mut kinds: Vec<SecretKind> = kinds.iter().copied().collect();
    kinds.sort_by_key(|k| k.as_str());
    kinds
}

/// A short label: trimmed, bounded, secret-free; `None` when empty.
fn label(
    value: Option<String>,
    what: &str,
    kinds: &mut Kinds,
) -> Result<Option<String>, MemoryError> {
    let Some(value) = value
        .map(|v| v.trim().to_string())
        .filter(|v| !v.is_empty())
    else {
        return Ok(None);
    };
    if value.len() > MAX_LABEL_BYTES {
        return Err(invalid(format!(
            "{what} is {} bytes; at most {MAX_LABEL_BYTES}",
            value.len()
        )));
    }
    Ok(Some(redact(&value, kinds)))
}

/// Refuses an identifier that holds a secret. Ids (developers, review ids, categories) are
/// keys that records are found and counted by, so they are stored as written, never
/// redacted; the error names the field and the kind of secret, never the value.
pub(super) fn refuse_secret(what: &str, id: &str) -> Result<(), MemoryError> {
    let kinds = secrets::redact(id).kinds;
    if kinds.is_empty() {
        return Ok(());
    }
    let kinds: Vec<&str> = kinds.iter().map(|k| k.as_str()).collect();
    Err(invalid(format!(
        "{what} looks like a secret ({}): refused, since ids are stored as written and never redacted",
        kinds.join(", ")
    )))
}

/// A person's id (author, reviewer, developer): secret-free, then normalised.
pub(super) fn person(what: &str, raw: &str) -> Result<String, MemoryError> {
    refuse_secret(what, raw)?;
    developer_id(raw)
}

/// Metadata as stored: keys secret-free (they are matched as written), secrets in string
/// values redacted, the whole bounded.
fn metadata(raw: Metadata, kinds: &mut Kinds) -> Result<Metadata, MemoryError> {
    let mut out = Metadata::new();
    for (key, value) in raw {
        refuse_secret("a `metadata` key", &key)?;
        out.insert(key, redact_value(value, kinds));
    }
    check_metadata_size(&out)?;
    Ok(out)
}

/// A JSON value with the secrets of every string in it redacted.
fn redact_value(value: serde_json::Value, kinds: &mut Kinds) -> serde_json::Value {
    use serde_json::Value;
    match value {
        Value::String(text) => Value::String(redact(&text, kinds)),
        Value::Array(items) => {
            Value::Array(items.into_iter().map(|v| redact_value(v, kinds)).collect())
        }
        Value::Object(fields) => Value::Object(
            fields
                .into_iter()
                .map(|(k, v)| (redact(&k, kinds), redact_value(v, kinds)))
                .collect(),
        ),
        other => other,
    }
}

/// Adds `from`'s keys to `into` (replacing those it has when `replace`), unless the result
/// would be over the size limit: then `into` is left as it was.
fn merge_metadata(into: &mut Metadata, from: &Metadata, replace: bool) {
    let mut merged = into.clone();
    for (key, value) in from {
        if replace || !merged.contains_key(key) {
            merged.insert(key.clone(), value.clone());
        }
    }
    if check_metadata_size(&merged).is_ok() {
        *into = merged;
    }
}

fn redact(text: &str, kinds: &mut Kinds) -> String {
    let redacted = secrets::redact(text);
    kinds.extend(redacted.kinds.iter().copied());
    redacted.text
}

/// The default title: the first sentence, at most ~80 characters.
fn title_of(content: &str) -> String {
    let first = content
        .split_inclusive(['.', '!', '?', '\n'])
        .next()
        .unwrap_or(content)
        .trim()
        .trim_end_matches(['.', '\n']);
    if first.chars().count() <= 80 {
        return first.to_string();
    }
    let mut cut: String = first.chars().take(77).collect();
    if let Some(space) = cut.rfind(' ') {
        cut.truncate(space);
    }
    format!("{cut}…")
}

/// The title given (redacted), or the content's first sentence.
fn title_given(given: Option<&str>, content: &str, kinds: &mut Kinds) -> String {
    match given.map(str::trim).filter(|t| !t.is_empty()) {
        Some(title) => redact(title, kinds),
        None => title_of(content),
    }
}

/// The note saying which kinds of secret were redacted, or the refusal of a write that
/// refuses secrets.
fn redaction_note(redacted: &[String], refuse: bool) -> Result<Option<String>, MemoryError> {
    if redacted.is_empty() {
        return Ok(None);
    }
    if refuse {
        return Err(invalid(format!(
            "the text holds what looks like a secret ({}): nothing was stored; take it out and save again",
            redacted.join(", ")
        )));
    }
    Ok(Some(format!(
        "secrets were redacted before storing: {}",
        redacted.join(", ")
    )))
}

/// Validates and redacts a write, and checks its anchors against the graph.
pub(super) fn prepare(
    new: NewMemory,
    root: &Path,
    graph: Option<&Graph>,
) -> Result<Prepared, MemoryError> {
    let (kind, developer) = validate(&new)?;
    let refuse_secrets = new.refuse_secrets;
    let mut kinds = BTreeSet::new();
    let mut notes = Vec::new();
    let (content, echo) = strip_served_marker(new.content.trim());
    let content = redact(content, &mut kinds);
    let title = title_given(new.title.as_deref(), &content, &mut kinds);
    let anchors = anchors(
        &new.paths,
        &new.symbols,
        root,
        graph,
        &mut kinds,
        &mut notes,
    )?;
    let anchors = Anchors {
        origin: new.origin,
        ..anchors
    };
    let memory = Memory {
        owner: Owner {
            developer,
            org: label(new.org, "`org`", &mut kinds)?,
            agent: label(new.agent, "`agent`", &mut kinds)?,
            run: label(new.run, "`run`", &mut kinds)?,
        },
        metadata: metadata(new.metadata, &mut kinds)?,
        anchors,
        provenance: Provenance {
            source: new.source,
            source_ref: label(new.source_ref, "`source_ref`", &mut kinds)?,
            written_by: label(new.written_by, "the writer", &mut kinds)?,
        },
        scope: new.scope,
        rule: Rule {
            file_pattern: new
                .file_pattern
                .as_deref()
                .map(str::trim)
                .filter(|p| !p.is_empty())
                .map(str::to_string),
            category: new.category,
            ..Rule::default()
        },
        confidence: if new.source == Source::Review {
            0.6
        } else {
            0.5
        },
        redacted: by_name(&kinds)
            .iter()
            .map(|k| k.as_str().to_string())
            .collect(),
        status: if new.pending {
            Status::Pending
        } else {
            Status::Approved
        },
        ..Memory::new(new_id(&content), kind, title, content.clone(), now_ms())
    };
    notes.extend(redaction_note(&memory.redacted, refuse_secrets)?);
    Ok(Prepared {
        redacted: by_name(&kinds),
        fingerprint: text::fingerprint(&content),
        negated: text::negated(&content),
        normalised: text::normalised(&content),
        memory,
        supersedes: new.supersedes.map(|s| s.trim().to_string()),
        echo,
        notes,
        vector: None,
    })
}

/// Checks a write before anything in it is redacted or resolved: its type, the sizes of its
/// content, title and anchors, its developer and category, the id it supersedes. Returns
/// its type and its developer, normalised.
fn validate(new: &NewMemory) -> Result<(MemoryType, Option<String>), MemoryError> {
    let kind = new.kind.ok_or_else(|| invalid("`type` is required"))?;
    if kind == MemoryType::RuleEffectiveness {
        return Err(invalid(
            "rule_effectiveness records are computed from review outcomes (record_review), not written directly",
        ));
    }
    let content = new.content.trim();
    if content.is_empty() {
        return Err(invalid(
            "`content` is empty: a memory is a learning of 1–3 sentences",
        ));
    }
    if content.len() > MAX_CONTENT_BYTES {
        return Err(invalid(format!(
            "`content` is {} bytes; a memory holds at most {MAX_CONTENT_BYTES} (1–3 sentences): store the learning, not the evidence",
            content.len()
        )));
    }
    if let Some(title) = &new.title
        && title.trim().len() > MAX_TITLE_BYTES
    {
        return Err(invalid(format!(
            "`title` is {} bytes; at most {MAX_TITLE_BYTES}",
            title.trim().len()
        )));
    }
    let developer = new
        .developer
        .as_deref()
        .map(|d| person("`developer`", d))
        .transpose()?;
    if let Some(category) = &new.category {
        refuse_secret("`category`", category)?;
    }
    if kind.developer_scoped() && developer.is_none() {
        return Err(invalid(format!(
            "type {kind} belongs to a developer: pass `developer`"
        )));
    }
    if let Some(pattern) = new.file_pattern.as_deref().filter(|p| !p.trim().is_empty()) {
        check_file_pattern(kind, pattern)?;
    }
    if new.paths.len() + new.symbols.len() > MAX_ANCHORS {
        return Err(invalid(format!(
            "{} anchors; at most {MAX_ANCHORS}",
            new.paths.len() + new.symbols.len()
        )));
    }
    if let Some(id) = &new.supersedes
        && !is_memory_id(id.trim())
    {
        return Err(invalid(format!(
            "`supersedes`: {} is not a memory id",
            quoted(id)
        )));
    }
    Ok((kind, developer))
}

/// Checks a file pattern: only on the types that take one, secret-free (it is matched as
/// written, never redacted), and a valid repository-relative glob.
pub(super) fn check_file_pattern(kind: MemoryType, pattern: &str) -> Result<(), MemoryError> {
    if !super::model::takes_file_pattern(kind) {
        return Err(invalid(format!(
            "`file_pattern` applies to rejection_pattern and framework_knowledge memories, not {kind}: anchor a {kind} with `paths` or `symbols`"
        )));
    }
    refuse_secret("`file_pattern`", pattern)?;
    FilePattern::compile(pattern).map(|_| ())
}

/// Removes a leading `m_0123456789abcdef:`-style marker cairn puts before memories it serves,
/// and the decorations after the text (` (anchors)`, ` · facts`), so an echoed memory
/// compares as its text.
fn strip_served_marker(content: &str) -> (&str, Option<String>) {
    let (text, id) = strip_marker(content);
    if id.is_none() {
        return (text, id);
    }
    let text = text.split(" · ").next().unwrap_or(text).trim_end();
    (text, id)
}

fn strip_marker(content: &str) -> (&str, Option<String>) {
    let trimmed = content.trim_start_matches(['-', '*', ' ']);
    let trimmed = match trimmed.strip_prefix('[') {
        Some(rest) => rest
            .split_once(']')
            .map_or(trimmed, |(_, after)| after.trim_start()),
        None => trimmed,
    };
    if let Some((id, rest)) = trimmed.split_once(':')
        && is_memory_id(id.trim())
        && !rest.trim().is_empty()
    {
        return (rest.trim(), Some(id.trim().to_string()));
    }
    (content, None)
}

/// True (and the kinds and a note recorded) when an anchor holds a secret: it is dropped.
fn holds_secret(anchor: &str, kinds: &mut Kinds, notes: &mut Vec<String>) -> bool {
    let found = secrets::redact(anchor).kinds;
    if found.is_empty() {
        return false;
    }
    kinds.extend(found.iter().copied());
    notes.push("an anchor holding a secret was dropped".to_string());
    true
}

/// Normalises anchors and splits off those the graph does not know.
fn anchors(
    paths: &[String],
    symbols: &[String],
    root: &Path,
    graph: Option<&Graph>,
    kinds: &mut Kinds,
    notes: &mut Vec<String>,
) -> Result<Anchors, MemoryError> {
    let mut out_paths = Vec::new();
    let mut out_symbols = Vec::new();
    let mut unknown = Vec::new();
    let check = |anchor: &str| -> Result<String, MemoryError> {
        if anchor.len() > MAX_ANCHOR_BYTES {
            return Err(invalid(format!(
                "anchor is {} bytes; at most {MAX_ANCHOR_BYTES}",
                anchor.len()
            )));
        }
        Ok(anchor.trim().to_string())
    };
    for raw in paths {
        let raw = check(raw)?;
        if raw.is_empty() {
            continue;
        }
        if holds_secret(&raw, kinds, notes) {
            continue;
        }
        let path = repo_relative(&raw, root)?;
        let known = graph.is_none_or(|g| {
            g.node(&path).is_some()
                || path.is_empty()
                || g.files().any(|f| f.path.starts_with(&format!("{path}/")))
        });
        if !known {
            unknown.push(path.clone());
        }
        if !out_paths.contains(&path) {
            out_paths.push(path);
        }
    }
    for raw in symbols {
        let raw = check(raw)?;
        if raw.is_empty() {
            continue;
        }
        if holds_secret(&raw, kinds, notes) {
            continue;
        }
        let symbol = match graph.map(|g| crate::context::resolve_target(g, &raw)) {
            Some(Ok(node)) => node.id.to_string(),
            Some(Err(_)) => {
                unknown.push(raw.clone());
                raw
            }
            None => raw,
        };
        if !out_symbols.contains(&symbol) {
            out_symbols.push(symbol);
        }
    }
    if graph.is_none() && !(paths.is_empty() && symbols.is_empty()) {
        notes.push("anchors were not checked: the repository is not indexed yet".to_string());
    }
    Ok(Anchors {
        paths: out_paths,
        symbols: out_symbols,
        unknown_anchors: unknown,
        origin: None,
    })
}

/// A repo-relative path, or an error for one outside the repository.
fn repo_relative(raw: &str, root: &Path) -> Result<String, MemoryError> {
    let outside = || invalid(format!("path {} is outside the repository", quoted(raw)));
    let relative = if Path::new(raw).is_absolute() {
        let absolute = Path::new(raw);
        let stripped = absolute
            .strip_prefix(root)
            .ok()
            .map(|p| p.to_string_lossy().into_owned());
        stripped.ok_or_else(outside)?
    } else {
        raw.to_string()
    };
    crate::context::normalise(&relative).ok_or_else(outside)
}

/// Looks like a file name: `name.ext` with a short alphanumeric extension (the language
/// registry is not consulted: compiling its queries costs a first search ~0.3 s).
fn looks_like_file(token: &str) -> bool {
    token.rsplit_once('.').is_some_and(|(name, ext)| {
        !name.is_empty()
            && (1..=5).contains(&ext.len())
            && ext.chars().all(|c| c.is_ascii_alphanumeric())
            && ext.chars().any(|c| c.is_ascii_alphabetic())
    })
}

/// The paths a query names (tokens with a `/` or a file extension) and the given ones,
/// normalised.
pub(super) fn paths_in(text: &str, extra: &[String]) -> Vec<String> {
    let mut paths: Vec<String> = text
        .split(|c: char| c.is_whitespace() || matches!(c, ',' | ';' | '(' | ')' | '`' | '"'))
        .map(|t| t.split("::").next().unwrap_or(t))
        .map(|t| t.trim_end_matches(['.', '?', '!', ':']))
        .filter(|t| t.contains('/') || looks_like_file(t))
        .chain(extra.iter().map(String::as_str))
        .filter_map(|t| crate::context::normalise(t.trim_end_matches('/')))
        .filter(|p| !p.is_empty())
        .collect();
    paths.sort();
    paths.dedup();
    paths
}

/// Merges a write's path and symbol anchors (and unknown ones) into a kept memory's when
/// both name files of one repository: an organisation memory keeps the anchors of the
/// repository it was written in, and takes the writer's (and its origin) only while it has
/// none. True when a path or symbol was added.
fn merge_anchors(kept: &mut Anchors, new: &Anchors) -> bool {
    if kept.origin != new.origin {
        let kept_none = kept.paths.is_empty() && kept.symbols.is_empty();
        if !kept_none || new.all().next().is_none() {
            return false;
        }
        kept.origin = new.origin.clone();
    }
    let grew = merge(&mut kept.paths, &new.paths) | merge(&mut kept.symbols, &new.symbols);
    merge(&mut kept.unknown_anchors, &new.unknown_anchors);
    grew
}

fn merge(into: &mut Vec<String>, from: &[String]) -> bool {
    let mut grew = false;
    for item in from {
        if !into.contains(item) {
            into.push(item.clone());
            grew = true;
        }
    }
    grew
}

fn push_history(memory: &mut Memory, revision: Revision) {
    memory.history.push(revision);
    if memory.history.len() > MAX_HISTORY {
        // Keep the first (original) text and the most recent ones.
        memory.history.remove(1);
    }
}

fn revision(memory: &Memory, event: Action, by: &Option<String>, note: Option<String>) -> Revision {
    Revision {
        at: now_ms(),
        event,
        title: memory.title.clone(),
        content: memory.content.clone(),
        by: by.clone(),
        note,
    }
}

/// Decides what a prepared write does (see [`decide_open`]); a write under the approval gate
/// then never changes an approved memory (see [`gate`]).
pub(super) fn decide(prepared: &Prepared, view: View) -> Result<Plan, MemoryError> {
    let memories = view.memories;
    let plan = decide_open(prepared, view)?;
    Ok(if prepared.is_pending() {
        gate(prepared, plan, memories)
    } else {
        plan
    })
}

/// A pending write's plan, held to the gate: what it does to pending memories stands (a
/// repeated pending write refreshes the pending one, a contradiction supersedes it), but an
/// approved memory is never changed before a person approves. Restating one changes nothing;
/// refining, contradicting or naming one to supersede stores the write as a new pending
/// memory that supersedes it on approval.
fn gate(prepared: &Prepared, plan: Plan, memories: &HashMap<String, Memory>) -> Plan {
    let approved = plan.changed.iter().find(|m| {
        m.id != prepared.memory.id
            && memories
                .get(&m.id)
                .is_some_and(|old| old.status.is_approved())
    });
    let Some(approved) = approved else {
        let mut plan = plan;
        let target = &plan.outcome.id;
        let waits = *target == prepared.memory.id
            || memories
                .get(target)
                .is_some_and(|m| m.status == Status::Pending);
        if waits {
            plan.outcome.notes.push(awaits_approval(target));
        }
        return plan;
    };
    let old = approved.id.clone();
    if plan.outcome.event == Action::None {
        let mut plan = plan;
        plan.changed.clear();
        return plan;
    }
    let mut new = prepared.memory.clone();
    new.validity.supersedes = Some(old.clone());
    let mut outcome = prepared.outcome(Action::Add, &new.id);
    outcome.notes.push(format!(
        "{} Once approved, it supersedes {old}, which is served until then.",
        awaits_approval(&new.id)
    ));
    Plan {
        changed: vec![new],
        outcome,
    }
}

/// What a pending write's answer says.
pub(super) fn awaits_approval(id: &str) -> String {
    format!(
        "{id} awaits approval: it is stored pending and served only after a person approves it (`cairn memory approve {id}` or the project's pages)."
    )
}

/// Decides what a prepared write does: an echo of a served memory changes nothing, a named
/// supersede replaces that memory, a contributor profile replaces the developer's profile,
/// and anything else is judged against the closest memory of its type and scope.
fn decide_open(prepared: &Prepared, view: View) -> Result<Plan, MemoryError> {
    // A memory cairn served, echoed back: nothing new, whatever was appended to it.
    if prepared.supersedes.is_none()
        && let Some(id) = &prepared.echo
        && view.memories.contains_key(id)
    {
        return Ok(prepared.unchanged(
            id,
            format!("this quotes memory {id} as cairn served it; to change it, pass supersedes"),
        ));
    }
    if let Some(old_id) = &prepared.supersedes {
        return supersede_named(prepared, old_id, view.memories);
    }
    if prepared.memory.kind == MemoryType::ContributorProfile {
        return Ok(replace_profile(prepared, view.memories));
    }
    Ok(match closest(prepared, &view) {
        // An echo of a superseded memory does not bring it back.
        Closest::Superseded(old) if old.status == Status::Rejected => prepared.unchanged(
            &old.id,
            format!(
                "this repeats {}, which a person rejected: nothing was written",
                old.id
            ),
        ),
        Closest::Superseded(old) => prepared.unchanged(
            &old.id,
            format!(
                "this repeats {} which was superseded by {}; pass supersedes to restore it",
                old.id,
                old.validity
                    .superseded_by
                    .as_deref()
                    .unwrap_or("another memory")
            ),
        ),
        Closest::Live(candidates) => candidates
            .iter()
            .find_map(|c| judge(prepared, c.memory, c.similarity))
            .unwrap_or_else(|| prepared.add_beside(&candidates)),
    })
}

/// The write replaces the memory it names, when that one is live and of its own scope (for
/// a contributor profile: the developer's current profile).
fn supersede_named(
    prepared: &Prepared,
    old_id: &str,
    memories: &HashMap<String, Memory>,
) -> Result<Plan, MemoryError> {
    let new = &prepared.memory;
    let old = memories
        .get(old_id)
        .ok_or_else(|| MemoryError::NotFound(old_id.to_string()))?;
    if let Some(by) = &old.validity.superseded_by {
        return Err(invalid(format!(
            "{old_id} is already superseded by {by}; supersede that one"
        )));
    }
    if old.partition() != new.partition() {
        return Err(invalid(format!(
            "{old_id} belongs to another scope; a memory can only supersede one of its own scope"
        )));
    }
    if new.kind == MemoryType::ContributorProfile
        && memories.values().any(|m| {
            m.kind == MemoryType::ContributorProfile
                && m.is_live()
                && m.owner.developer == new.owner.developer
                && m.id != old_id
        })
    {
        return Err(invalid(
            "a contributor profile can only supersede the developer's current profile",
        ));
    }
    Ok(supersede(
        old,
        new,
        prepared.outcome(Action::Supersede, &new.id),
        None,
    ))
}

/// A contributor profile is one live record per developer: the first is added, the same
/// text again changes nothing, another text updates it.
fn replace_profile(prepared: &Prepared, memories: &HashMap<String, Memory>) -> Plan {
    let new = &prepared.memory;
    let current = memories.values().find(|m| {
        m.kind == MemoryType::ContributorProfile
            && m.is_live()
            && m.owner.developer == new.owner.developer
            && prepared.sees(m)
    });
    match current {
        None => prepared.add(),
        Some(old) if text::normalised(&old.content) == prepared.normalised => {
            reinforce(old, new, prepared.outcome(Action::None, &old.id))
        }
        Some(old) => update(old, new, prepared.outcome(Action::Update, &old.id)),
    }
}

/// How similar a memory is to a write.
#[derive(Debug, Clone, Copy)]
struct Similarity {
    /// Jaccard similarity of the term sets.
    terms: f64,
    /// Cosine similarity of the embeddings, when both have one.
    meaning: Option<f64>,
}

impl Similarity {
    /// What candidates are ordered by: meaning when known, else terms.
    fn rank(self) -> f64 {
        self.meaning.unwrap_or(self.terms)
    }

    fn describe(self) -> String {
        match self.meaning {
            Some(meaning) => format!(
                "similarity {meaning:.2} by meaning, {:.2} by terms",
                self.terms
            ),
            None => format!("similarity {:.2}", self.terms),
        }
    }
}

/// A live memory a write is compared with.
struct Candidate<'a> {
    memory: &'a Memory,
    similarity: Similarity,
}

/// What the indexes find close to a write among the memories of its type and scope.
enum Closest<'a> {
    /// A superseded memory it repeats word for word.
    Superseded(&'a Memory),
    /// The live memories that share its rarest terms or are nearest by meaning, most similar
    /// first.
    Live(Vec<Candidate<'a>>),
}

/// The ids of the live memories of a write's type and scope nearest to it by meaning.
fn neighbours(prepared: &Prepared, index: &SearchIndex) -> Vec<String> {
    let Some(vector) = prepared.vector() else {
        return Vec::new();
    };
    let filter = prepared.filter(false);
    index
        .nearest(
            &prepared.memory.partition(),
            vector,
            filter,
            DEDUP_NEIGHBOURS,
        )
        .into_iter()
        .map(|hit| hit.id)
        .collect()
}

/// The live candidates of a write that have no vector yet (to embed before deciding).
pub(super) fn without_vectors(prepared: &Prepared, view: &View) -> Vec<super::ToEmbed> {
    if prepared.vector.is_none() {
        return Vec::new();
    }
    let new = &prepared.memory;
    let filter = prepared.filter(false);
    view.index
        .keyword_with(&new.partition(), &new.content, filter, 20, DEDUP_TERMS)
        .into_iter()
        .filter(|hit| !view.index.has_vector(&hit.id) && !view.vectors.contains_key(&hit.id))
        .filter_map(|hit| view.memories.get(&hit.id))
        .map(super::ToEmbed::of)
        .collect()
}

/// The live memories most similar to a write, unless it repeats a superseded one first.
fn closest<'a>(prepared: &Prepared, view: &View<'a>) -> Closest<'a> {
    let new = &prepared.memory;
    let filter = prepared.filter(true);
    let mut ids: Vec<String> = view
        .index
        .keyword_with(&new.partition(), &new.content, filter, 20, DEDUP_TERMS)
        .into_iter()
        .map(|hit| hit.id)
        .collect();
    for id in neighbours(prepared, view.index) {
        if !ids.contains(&id) {
            ids.push(id);
        }
    }
    let mut candidates = Vec::new();
    for id in ids {
        let Some(old) = view.memories.get(&id).filter(|m| prepared.sees(m)) else {
            continue;
        };
        if !old.is_live() {
            if text::normalised(&old.content) == prepared.normalised {
                return Closest::Superseded(old);
            }
            continue;
        }
        let meaning = prepared.vector().and_then(|new| {
            let old = view
                .index
                .vector(&old.id)
                .or_else(|| view.vectors.get(&old.id).cloned())?;
            Some(f64::from(embed::cosine(new, &old)))
        });
        candidates.push(Candidate {
            memory: old,
            similarity: Similarity {
                terms: text::jaccard(&text::fingerprint(&old.content), &prepared.fingerprint),
                meaning,
            },
        });
    }
    candidates.sort_by(|a, b| {
        b.similarity
            .rank()
            .total_cmp(&a.similarity.rank())
            .then_with(|| a.memory.id.cmp(&b.memory.id))
    });
    Closest::Live(candidates)
}

/// A write against one live memory of its type and scope: texts that conflict (numbers,
/// opposite words) are apart; a near-duplicate that says the opposite supersedes it; one
/// that adds nothing reinforces it; one that adds detail, rewords it closely or means the
/// same updates or reinforces it. `None`: the write is new to this memory.
fn judge(prepared: &Prepared, old: &Memory, similarity: Similarity) -> Option<Plan> {
    let new = &prepared.memory;
    let old_terms = text::fingerprint(&old.content);
    if text::conflicts(&old_terms, &prepared.fingerprint) {
        return None;
    }
    let terms = similarity.terms;
    let meaning = similarity.meaning.unwrap_or(0.0);
    let adds_terms = !prepared.fingerprint.is_subset(&old_terms);
    let drops_terms = !old_terms.is_subset(&prepared.fingerprint);
    if text::negated(&old.content) != prepared.negated {
        let about_the_same = text::jaccard(
            &text::without_negations(&old_terms),
            &text::without_negations(&prepared.fingerprint),
        );
        let contradicts = terms >= CONTRADICTS
            || about_the_same >= CONTRADICTS
            || (meaning >= CONTRADICTS_MEANING && about_the_same >= CONTRADICTS_TERMS);
        if !contradicts {
            return None;
        }
        let note = format!(
            "contradicts {} (similar text, opposite polarity; {}); it is kept in history as superseded",
            old.id,
            similarity.describe()
        );
        return Some(supersede(
            old,
            new,
            prepared.outcome(Action::Supersede, &new.id),
            Some(note),
        ));
    }
    let same = !adds_terms && terms >= SAME_IF_CONTAINED;
    let refines = (!drops_terms && terms >= SAME_IF_CONTAINED) || terms >= SAME_REWORDED;
    let same_meaning = meaning >= SAME_MEANING;
    // By meaning, a write that only adds terms refines the memory; any other rewording
    // restates it.
    let only_adds = adds_terms && !drops_terms;
    if same || (same_meaning && !refines && !only_adds) {
        let mut plan = reinforce(old, new, prepared.outcome(Action::None, &old.id));
        plan.outcome.notes.push(format!(
            "already known as {} ({})",
            old.id,
            similarity.describe()
        ));
        return Some(plan);
    }
    if refines || same_meaning {
        let mut plan = update(old, new, prepared.outcome(Action::Update, &old.id));
        plan.outcome
            .notes
            .push(format!("refines {} ({})", old.id, similarity.describe()));
        return Some(plan);
    }
    None
}

/// The new memory replaces `old`, which stays as superseded.
fn supersede(old: &Memory, new: &Memory, mut outcome: WriteOutcome, note: Option<String>) -> Plan {
    let mut old = old.clone();
    let mut new = new.clone();
    new.validity.supersedes = Some(old.id.clone());
    let superseded = revision(
        &old,
        Action::Supersede,
        &new.provenance.written_by,
        Some(format!("superseded by {}", new.id)),
    );
    push_history(&mut old, superseded);
    old.validity.invalidated_at = Some(new.validity.created_at);
    old.validity.superseded_by = Some(new.id.clone());
    old.validity.updated_at = new.validity.created_at;
    outcome.superseded = Some(old.id.clone());
    outcome.notes.extend(note);
    Plan {
        changed: vec![old, new],
        outcome,
    }
}

/// The same learning again: more confidence, new anchors merged (then it is an update).
fn reinforce(old: &Memory, new: &Memory, mut outcome: WriteOutcome) -> Plan {
    let mut kept = old.clone();
    kept.confidence = (kept.confidence + 0.1).min(1.0);
    let mut grew = merge_anchors(&mut kept.anchors, &new.anchors);
    if kept.rule.file_pattern.is_none() && new.rule.file_pattern.is_some() {
        kept.rule.file_pattern = new.rule.file_pattern.clone();
        grew = true;
    }
    merge(&mut kept.redacted, &new.redacted);
    merge_metadata(&mut kept.metadata, &new.metadata, false);
    if grew {
        outcome.event = Action::Update;
        kept.validity.updated_at = new.validity.created_at;
        push_history(
            &mut kept,
            revision(
                old,
                Action::Update,
                &new.provenance.written_by,
                Some("anchors added".into()),
            ),
        );
    }
    Plan {
        changed: vec![kept],
        outcome,
    }
}

/// The new text replaces the old one, which goes to history.
fn update(old: &Memory, new: &Memory, outcome: WriteOutcome) -> Plan {
    let mut kept = old.clone();
    push_history(
        &mut kept,
        revision(old, Action::Update, &new.provenance.written_by, None),
    );
    kept.title = new.title.clone();
    kept.content = new.content.clone();
    kept.confidence = (kept.confidence + 0.1).min(1.0);
    kept.validity.updated_at = new.validity.created_at;
    kept.provenance.source = new.provenance.source;
    if new.provenance.source_ref.is_some() {
        kept.provenance.source_ref = new.provenance.source_ref.clone();
    }
    merge_anchors(&mut kept.anchors, &new.anchors);
    merge(&mut kept.redacted, &new.redacted);
    merge_metadata(&mut kept.metadata, &new.metadata, true);
    if new.rule.file_pattern.is_some() {
        kept.rule.file_pattern = new.rule.file_pattern.clone();
    }
    Plan {
        changed: vec![kept],
        outcome,
    }
}

/// The write a rewrite of `old` is validated and redacted as: the old memory's type, owner
/// and scope with the new text (its title then its first sentence) or metadata.
pub(super) fn rewritten(old: &Memory, change: &Rewrite) -> NewMemory {
    NewMemory {
        kind: Some(old.kind),
        title: change.content.is_none().then(|| old.title.clone()),
        content: change
            .content
            .clone()
            .unwrap_or_else(|| old.content.clone()),
        developer: old.owner.developer.clone(),
        metadata: change
            .metadata
            .clone()
            .unwrap_or_else(|| old.metadata.clone()),
        scope: old.scope,
        written_by: change.by.clone(),
        ..NewMemory::default()
    }
}

/// A rewrite of live memory `old` as `prepared` (see [`rewritten`]): the text it had goes to
/// its history as an UPDATE, its id stays; NONE when neither its text nor its metadata
/// changes.
pub(super) fn rewrite(old: &Memory, prepared: &Prepared) -> Plan {
    let new = &prepared.memory;
    let text_changes = new.content != old.content;
    if !text_changes && new.metadata == old.metadata {
        return prepared.unchanged(
            &old.id,
            format!("{} already says this: nothing was changed", old.id),
        );
    }
    let mut kept = old.clone();
    let note = (!text_changes).then(|| "metadata changed".to_string());
    push_history(
        &mut kept,
        revision(old, Action::Update, &new.provenance.written_by, note),
    );
    if text_changes {
        kept.title = new.title.clone();
        kept.content = new.content.clone();
    }
    kept.metadata = new.metadata.clone();
    kept.validity.updated_at = new.validity.created_at;
    merge(&mut kept.redacted, &new.redacted);
    Plan {
        changed: vec![kept],
        outcome: prepared.outcome(Action::Update, &old.id),
    }
}

/// Redacts every text of a memory that did not come through [`prepare`] (imports).
pub(super) fn scrub(memory: &mut Memory) {
    let mut kinds = BTreeSet::new();
    memory.title = redact(&memory.title, &mut kinds);
    memory.content = redact(&memory.content, &mut kinds);
    for revision in &mut memory.history {
        revision.title = redact(&revision.title, &mut kinds);
        revision.content = redact(&revision.content, &mut kinds);
        for field in [&mut revision.by, &mut revision.note].into_iter().flatten() {
            *field = redact(field, &mut kinds);
        }
    }
    for field in [
        &mut memory.provenance.source_ref,
        &mut memory.provenance.written_by,
        &mut memory.owner.org,
        &mut memory.owner.agent,
        &mut memory.owner.run,
    ]
    .into_iter()
    .flatten()
    {
        *field = redact(field, &mut kinds);
    }
    let metadata = std::mem::take(&mut memory.metadata);
    memory.metadata = metadata
        .into_iter()
        .filter(|(key, _)| !secrets::contains_secret(key))
        .map(|(key, value)| (key, redact_value(value, &mut kinds)))
        .collect();
    memory
        .anchors
        .paths
        .retain(|p| !secrets::contains_secret(p));
    memory
        .anchors
        .symbols
        .retain(|s| !secrets::contains_secret(s));
    memory
        .anchors
        .unknown_anchors
        .retain(|s| !secrets::contains_secret(s));
    memory.redacted.retain(|s| !secrets::contains_secret(s));
    for id in [
        &mut memory.validity.superseded_by,
        &mut memory.validity.supersedes,
    ] {
        if id.as_deref().is_some_and(|id| !is_memory_id(id)) {
            *id = None;
        }
    }
    for kind in by_name(&kinds) {
        if !memory.redacted.iter().any(|k| k == kind.as_str()) {
            memory.redacted.push(kind.as_str().to_string());
        }
    }
}

/// Checks an imported memory's shape.
pub(super) fn validate_stored(memory: &Memory) -> Result<(), MemoryError> {
    refuse_secret("the id", &memory.id)?;
    if !is_memory_id(&memory.id) {
        return Err(invalid(format!(
            "{} is not a memory id",
            quoted(&memory.id)
        )));
    }
    if memory.content.trim().is_empty() {
        return Err(invalid("empty content"));
    }
    if memory.content.len() > MAX_CONTENT_BYTES {
        return Err(invalid(format!(
            "content is {} bytes; at most {MAX_CONTENT_BYTES}",
            memory.content.len()
        )));
    }
    if memory.kind.developer_scoped() && memory.owner.developer.is_none() {
        return Err(invalid(format!("type {} needs a developer", memory.kind)));
    }
    if let Some(category) = &memory.rule.category {
        refuse_secret("`category`", category)?;
    }
    if let Some(change) = &memory.rule.addressed_by
        && !super::guidelines::is_change_id(change)
    {
        return Err(invalid(format!(
            "`addressed_by` {} is not a guideline change id",
            quoted(change)
        )));
    }
    if let Some(pattern) = &memory.rule.file_pattern {
        check_file_pattern(memory.kind, pattern)?;
    }
    if let Some(dev) = &memory.owner.developer
        && person("`developer`", dev)? != *dev
    {
        return Err(invalid(format!(
            "developer {} is not normalised (lowercase, no leading @)",
            quoted(dev)
        )));
    }
    // Between 2000 and 2200, in milliseconds.
    let sane = |t: i64| (946_684_800_000..7_258_118_400_000).contains(&t);
    for t in [
        memory.validity.created_at,
        memory.validity.updated_at,
        memory.validity.valid_from,
    ]
    .into_iter()
    .chain(memory.validity.invalidated_at)
    .chain(memory.reads.last_access)
    {
        if !sane(t) {
            return Err(invalid(format!(
                "timestamp {t} is not milliseconds since 1970"
            )));
        }
    }
    if !(0.0..=1.0).contains(&memory.confidence) || memory.reads.access_count > u32::MAX as u64 {
        return Err(invalid("confidence or access count out of range"));
    }
    for path in &memory.anchors.paths {
        if crate::context::normalise(path).as_deref() != Some(path.as_str()) {
            return Err(invalid(format!(
                "path {} is not repo-relative",
                quoted(path)
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(kind: MemoryType, content: &str) -> NewMemory {
        NewMemory {
            kind: Some(kind),
            content: content.to_string(),
            developer: kind.developer_scoped().then(|| "alice".to_string()),
            ..NewMemory::default()
        }
    }

    fn prepared(kind: MemoryType, content: &str) -> Prepared {
        prepare(write(kind, content), Path::new("/work/repo"), None).unwrap()
    }

    fn stored(kind: MemoryType, content: &str) -> Memory {
        prepared(kind, content).memory
    }

    fn by_id(memories: &[&Memory]) -> HashMap<String, Memory> {
        memories
            .iter()
            .map(|m| (m.id.clone(), (*m).clone()))
            .collect()
    }

    /// The plan for `new` against `old` as its closest live memory.
    fn judged(old: &str, new: &str) -> (Memory, Plan) {
        let old = stored(MemoryType::ProjectPattern, old);
        let new = prepared(MemoryType::ProjectPattern, new);
        let similarity = Similarity {
            terms: text::jaccard(&text::fingerprint(&old.content), &new.fingerprint),
            meaning: None,
        };
        let plan = judge(&new, &old, similarity).unwrap_or_else(|| new.add());
        (old, plan)
    }

    #[test]
    fn writes_are_validated_before_anything_else() {
        let valid = write(MemoryType::Decision, "Use UTC everywhere.");
        assert_eq!(validate(&valid).unwrap(), (MemoryType::Decision, None));
        let mut profile = write(MemoryType::ContributorProfile, "Careful with migrations.");
        profile.developer = Some("@Alice".to_string());
        assert_eq!(
            validate(&profile).unwrap(),
            (MemoryType::ContributorProfile, Some("alice".to_string()))
        );
        let refused = [
            NewMemory {
                kind: None,
                ..valid.clone()
            },
            write(MemoryType::RuleEffectiveness, "naming: 3 of 4 rejected."),
            write(MemoryType::Decision, "   "),
            write(MemoryType::Decision, &"a".repeat(MAX_CONTENT_BYTES + 1)),
            NewMemory {
                developer: None,
                ..write(MemoryType::DeveloperPattern, "Forgets to close files.")
            },
            NewMemory {
                paths: vec!["a.py".to_string(); MAX_ANCHORS + 1],
                ..valid.clone()
            },
            NewMemory {
                supersedes: Some("the old one".to_string()),
                ..valid.clone()
            },
        ];
        for new in refused {
            assert!(
                matches!(validate(&new), Err(MemoryError::Invalid(_))),
                "{new:?}"
            );
        }
    }

    #[test]
    fn a_write_that_refuses_secrets_stores_none_and_names_only_their_kind() {
        let key = ["AKIA", "Z7Q4", "K2M9", "XW3T", "R8PB"].concat();
        let text = format!("Deploys use the key {key} from the vault.");
        let redacted = prepared(MemoryType::Decision, &text);
        assert!(!redacted.memory().content.contains(&key));
        assert!(!redacted.memory().redacted.is_empty());
        let refusing = |content: &str, paths: Vec<String>| NewMemory {
            refuse_secrets: true,
            paths,
            ..write(MemoryType::Decision, content)
        };
        let root = Path::new("/work/repo");
        let Err(MemoryError::Invalid(why)) = prepare(refusing(&text, Vec::new()), root, None)
        else {
            panic!("a secret in the text is refused");
        };
        assert!(why.contains("secret") && !why.contains(&key), "{why}");
        let in_anchor = refusing("Deploys read the vault.", vec![format!("keys/{key}.txt")]);
        assert!(
            prepare(in_anchor, root, None).is_err(),
            "a secret in an anchor"
        );
        let clean = refusing("Deploys read the vault.", Vec::new());
        assert!(prepare(clean, root, None).is_ok());
    }

    #[test]
    fn metadata_is_kept_with_its_secrets_redacted_and_its_size_bounded() {
        let key = ["AKIA", "Z7Q4", "K2M9", "XW3T", "R8PB"].concat();
        let mut new = write(MemoryType::Decision, "Deploys read the vault.");
        new.metadata = Metadata::from([
            ("pr".to_string(), serde_json::json!(12)),
            (
                "env".to_string(),
                serde_json::json!({"aws": [format!("key {key}")]}),
            ),
        ]);
        let root = Path::new("/work/repo");
        let memory = prepare(new.clone(), root, None).unwrap().memory;
        assert_eq!(memory.metadata["pr"], serde_json::json!(12));
        let env = memory.metadata["env"].to_string();
        assert!(!env.contains(&key) && env.contains("REDACTED"), "{env}");
        assert!(!memory.redacted.is_empty());
        let refused = [
            Metadata::from([(key.clone(), serde_json::json!(1))]),
            Metadata::from([(String::new(), serde_json::json!(1))]),
            Metadata::from([("big".to_string(), serde_json::json!("x".repeat(3_000)))]),
        ];
        for metadata in refused {
            let write = NewMemory {
                metadata,
                ..new.clone()
            };
            let Err(MemoryError::Invalid(why)) = prepare(write, root, None) else {
                panic!("refused");
            };
            assert!(why.contains("metadata") && !why.contains(&key), "{why}");
        }
    }

    #[test]
    fn a_rewrite_keeps_the_id_and_puts_the_text_it_had_in_history() {
        let mut old = stored(MemoryType::Decision, "Use UTC everywhere.");
        old.metadata.insert("pr".into(), serde_json::json!(1));
        let root = Path::new("/work/repo");
        let change = |content: Option<&str>, metadata: Option<Metadata>| {
            let asked = Rewrite {
                content: content.map(str::to_string),
                metadata,
                by: Some("mem0".to_string()),
            };
            let prepared = prepare(rewritten(&old, &asked), root, None).unwrap();
            rewrite(&old, &prepared)
        };
        let plan = change(Some("Use UTC in storage and logs."), None);
        assert_eq!(plan.outcome.event, Action::Update);
        assert_eq!(plan.outcome.id, old.id);
        let kept = &plan.changed[0];
        assert_eq!(kept.id, old.id);
        assert_eq!(kept.content, "Use UTC in storage and logs.");
        assert_eq!(kept.title, "Use UTC in storage and logs");
        assert_eq!(kept.metadata, old.metadata);
        assert_eq!(kept.history.last().unwrap().content, "Use UTC everywhere.");
        let plan = change(
            None,
            Some(Metadata::from([("pr".into(), serde_json::json!(2))])),
        );
        assert_eq!(plan.outcome.event, Action::Update);
        assert_eq!(plan.changed[0].content, old.content);
        assert_eq!(plan.changed[0].metadata["pr"], serde_json::json!(2));
        let plan = change(Some("Use UTC everywhere."), None);
        assert_eq!(plan.outcome.event, Action::None);
        assert!(plan.changed.is_empty());
    }

    #[test]
    fn a_write_is_judged_against_its_closest_memory() {
        let (old, plan) = judged(
            "Wrap billing mutations in a database transaction so audit rows stay consistent.",
            "Wrap billing mutations in a database transaction.",
        );
        assert_eq!(plan.outcome.event, Action::None);
        assert_eq!(plan.outcome.id, old.id);
        assert_eq!(plan.changed.len(), 1);
        assert!(plan.changed[0].confidence > old.confidence);

        let (old, plan) = judged(
            "Wrap billing mutations in a database transaction.",
            "Wrap billing mutations in a database transaction, audit rows included.",
        );
        assert_eq!(plan.outcome.event, Action::Update);
        assert_eq!(plan.changed[0].id, old.id);
        assert!(plan.changed[0].content.contains("audit rows included"));
        assert_eq!(plan.changed[0].history[0].content, old.content);

        let (old, plan) = judged(
            "Retry the payment webhook with exponential backoff.",
            "Never retry the payment webhook with exponential backoff.",
        );
        assert_eq!(plan.outcome.event, Action::Supersede);
        assert_eq!(plan.outcome.superseded.as_deref(), Some(old.id.as_str()));
        assert_eq!(
            plan.changed[0].validity.superseded_by,
            Some(plan.changed[1].id.clone())
        );

        let (_, plan) = judged(
            "Retry the payment webhook with exponential backoff.",
            "Render invoices as PDF on the worker queue.",
        );
        assert_eq!(plan.outcome.event, Action::Add);
        assert_eq!(plan.changed.len(), 1);
        assert_eq!(plan.changed[0].id, plan.outcome.id);
    }

    #[test]
    fn a_restatement_from_another_repository_keeps_the_anchors_of_the_first() {
        let anchored = |origin: &str, path: &str| Anchors {
            paths: vec![path.to_string()],
            origin: Some(origin.to_string()),
            ..Anchors::default()
        };
        // From the same repository, anchors are merged.
        let mut kept = anchored("github.com/acme/one", "src/app.py");
        assert!(merge_anchors(
            &mut kept,
            &anchored("github.com/acme/one", "src/db.py")
        ));
        assert_eq!(kept.paths, ["src/app.py", "src/db.py"]);
        // From another, its paths would name the first repository's files: left out.
        assert!(!merge_anchors(
            &mut kept,
            &anchored("github.com/acme/two", "src/web.py")
        ));
        assert_eq!(kept.paths, ["src/app.py", "src/db.py"]);
        assert_eq!(kept.origin.as_deref(), Some("github.com/acme/one"));
        // A memory without anchors takes the writer's, and its origin.
        let mut bare = Anchors {
            origin: Some("github.com/acme/one".to_string()),
            ..Anchors::default()
        };
        assert!(merge_anchors(
            &mut bare,
            &anchored("github.com/acme/two", "src/web.py")
        ));
        assert_eq!(bare, anchored("github.com/acme/two", "src/web.py"));
        // A repository's own memories have no origin: merged as ever.
        let mut own = Anchors {
            paths: vec!["src/app.py".to_string()],
            ..Anchors::default()
        };
        let more = Anchors {
            symbols: vec!["src/app.py::run".to_string()],
            ..Anchors::default()
        };
        assert!(merge_anchors(&mut own, &more));
        assert_eq!(own.symbols, ["src/app.py::run"]);
    }

    /// The event for `new` against `old` at cosine `meaning`.
    fn by_meaning(old: &str, new: &str, meaning: f64) -> Option<Action> {
        let old = stored(MemoryType::ProjectPattern, old);
        let new = prepared(MemoryType::ProjectPattern, new);
        let similarity = Similarity {
            terms: text::jaccard(&text::fingerprint(&old.content), &new.fingerprint),
            meaning: Some(meaning),
        };
        judge(&new, &old, similarity).map(|plan| plan.outcome.event)
    }

    #[test]
    fn meaning_merges_rewordings_but_not_conflicts_or_contradictions() {
        let money = "Money is stored as integer cents, never as floats.";
        let reworded = "Amounts of money are kept in integer cents and never in floats.";
        assert_eq!(by_meaning(money, reworded, 0.95), Some(Action::None));
        assert_eq!(by_meaning(money, reworded, 0.80), None);
        assert_eq!(
            by_meaning(
                "Wrap billing mutations in a transaction.",
                "Wrap billing mutations in a transaction, refunds and audit rows included.",
                0.90
            ),
            Some(Action::Update)
        );
        assert_eq!(
            by_meaning(
                "Retry payments at most 3 times.",
                "Retry payments at most 5 times.",
                0.99
            ),
            None
        );
        assert_eq!(
            by_meaning(
                "Run migrations before deploying.",
                "Run migrations after deploying.",
                0.99
            ),
            None
        );
        let validate = "Validate webhook signatures before parsing the payload.";
        let skip = "Parse the payload without validating webhook signatures first.";
        assert_eq!(by_meaning(validate, skip, 0.96), Some(Action::Supersede));
        assert_eq!(by_meaning(validate, skip, 0.90), None);
    }

    #[test]
    fn only_a_live_memory_of_the_same_scope_is_superseded() {
        let old = stored(MemoryType::ProjectPattern, "Use the shared HTTP client.");
        let other_scope = stored(MemoryType::DeveloperPattern, "Writes long functions.");
        let mut gone = stored(MemoryType::ProjectPattern, "Use requests directly.");
        gone.validity.superseded_by = Some(old.id.clone());
        let memories = by_id(&[&old, &other_scope, &gone]);
        let new = prepared(
            MemoryType::ProjectPattern,
            "Use the shared async HTTP client.",
        );

        let plan = supersede_named(&new, &old.id, &memories).unwrap();
        assert_eq!(plan.outcome.event, Action::Supersede);
        assert_eq!(plan.outcome.id, new.memory.id);
        assert_eq!(
            plan.changed[0].validity.superseded_by.as_ref(),
            Some(&new.memory.id)
        );
        assert!(matches!(
            supersede_named(&new, "m_0000000000000000", &memories),
            Err(MemoryError::NotFound(_))
        ));
        assert!(supersede_named(&new, &gone.id, &memories).is_err());
        assert!(supersede_named(&new, &other_scope.id, &memories).is_err());
    }

    #[test]
    fn a_developer_has_one_contributor_profile() {
        let profile = |text: &str| prepared(MemoryType::ContributorProfile, text);
        let first = profile("Careful with migrations; fast reviews.");
        let plan = replace_profile(&first, &HashMap::new());
        assert_eq!(plan.outcome.event, Action::Add);

        let memories = by_id(&[&first.memory]);
        let again = replace_profile(&profile("careful with migrations, fast reviews"), &memories);
        assert_eq!(
            (again.outcome.event, again.outcome.id.as_str()),
            (Action::None, first.memory.id.as_str())
        );
        let changed = replace_profile(&profile("Writes thorough tests."), &memories);
        assert_eq!(
            (changed.outcome.event, changed.outcome.id.as_str()),
            (Action::Update, first.memory.id.as_str())
        );
        assert_eq!(changed.changed[0].content, "Writes thorough tests.");
    }

    #[test]
    fn an_echo_of_a_served_memory_changes_nothing() {
        let served = stored(MemoryType::Decision, "Use UTC everywhere.");
        let memories = by_id(&[&served]);
        let index = SearchIndex::default();
        let vectors = HashMap::new();
        let view = || View {
            memories: &memories,
            index: &index,
            vectors: &vectors,
        };
        let echo = prepared(
            MemoryType::Decision,
            &format!("- [decision] {}: Use UTC everywhere. · 2 reads", served.id),
        );
        let plan = decide(&echo, view()).unwrap();
        assert!(plan.changed.is_empty());
        assert_eq!(
            (plan.outcome.event, plan.outcome.id.as_str()),
            (Action::None, served.id.as_str())
        );
        assert!(plan.outcome.notes[0].contains("as cairn served it"));

        let fresh = prepared(MemoryType::Decision, "Store money as integer cents.");
        let plan = decide(&fresh, view()).unwrap();
        assert_eq!(plan.outcome.event, Action::Add);
        assert_eq!(plan.changed, std::slice::from_ref(&fresh.memory));
    }

    /// A write under the approval gate.
    fn pending(kind: MemoryType, content: &str) -> Prepared {
        let new = NewMemory {
            pending: true,
            ..write(kind, content)
        };
        prepare(new, Path::new("/work/repo"), None).unwrap()
    }

    /// The search index over `memories`, as the process keeps it.
    fn indexed(memories: &HashMap<String, Memory>) -> SearchIndex {
        let mut index = SearchIndex::default();
        for m in memories.values() {
            index.upsert(&super::super::search::Entry {
                id: &m.id,
                partition: &m.partition(),
                kind: m.kind,
                live: m.is_live(),
                approved: m.status.is_approved(),
                title: &m.title,
                content: &m.content,
                anchors: &[],
                vector: None,
            });
        }
        index
    }

    #[test]
    fn a_pending_write_never_changes_an_approved_memory() {
        let kind = MemoryType::ProjectPattern;
        let known = stored(
            kind,
            "Wrap billing mutations in a database transaction so audit rows stay consistent.",
        );
        let retry = stored(kind, "Retry the payment webhook with exponential backoff.");
        let memories = by_id(&[&known, &retry]);
        let index = indexed(&memories);
        let vectors = HashMap::new();
        let view = || View {
            memories: &memories,
            index: &index,
            vectors: &vectors,
        };
        // Restating an approved memory: nothing is written, not even its confidence.
        let plan = decide(
            &pending(kind, "Wrap billing mutations in a database transaction."),
            view(),
        )
        .unwrap();
        assert_eq!(
            (plan.outcome.event, plan.outcome.id.as_str()),
            (Action::None, known.id.as_str())
        );
        assert!(plan.changed.is_empty(), "{:?}", plan.changed);
        // Contradicting one: a new pending memory that supersedes it once approved.
        let against = pending(
            kind,
            "Never retry the payment webhook with exponential backoff.",
        );
        let plan = decide(&against, view()).unwrap();
        assert_eq!(plan.outcome.event, Action::Add);
        assert_eq!(plan.changed.len(), 1, "the approved memory is untouched");
        assert_eq!(plan.changed[0].id, against.memory.id);
        assert_eq!(plan.changed[0].status, Status::Pending);
        assert_eq!(
            plan.changed[0].validity.supersedes.as_deref(),
            Some(retry.id.as_str())
        );
        assert!(plan.outcome.superseded.is_none());
        assert!(
            plan.outcome
                .notes
                .iter()
                .any(|n| n.contains("awaits approval")),
            "{:?}",
            plan.outcome.notes
        );
        // Without the gate the same write supersedes it at once.
        let open = prepared(
            kind,
            "Never retry the payment webhook with exponential backoff.",
        );
        let plan = decide(&open, view()).unwrap();
        assert_eq!(plan.outcome.event, Action::Supersede);
        // Naming it to supersede is held the same way.
        let mut named = pending(kind, "Retry the payment webhook twice, then alert.");
        named.set_supersedes(retry.id.clone());
        let plan = decide(&named, view()).unwrap();
        assert_eq!(plan.changed.len(), 1);
        assert_eq!(
            plan.changed[0].validity.supersedes.as_deref(),
            Some(retry.id.as_str())
        );
        // Something new is added pending.
        let fresh = pending(kind, "Render invoices as PDF on the worker queue.");
        let plan = decide(&fresh, view()).unwrap();
        assert_eq!(plan.outcome.event, Action::Add);
        assert_eq!(plan.changed[0].status, Status::Pending);
        assert!(plan.outcome.notes[0].contains(&format!("{} awaits approval", fresh.memory.id)));
    }

    #[test]
    fn a_repeated_pending_write_refreshes_the_pending_memory() {
        let kind = MemoryType::Decision;
        let waiting = pending(kind, "Store money as integer cents in every table.").memory;
        let mut refused = pending(kind, "Log full card numbers for debugging.").memory;
        refused.status = Status::Rejected;
        refused.validity.invalidated_at = Some(refused.validity.created_at);
        let memories = by_id(&[&waiting, &refused]);
        let index = indexed(&memories);
        let vectors = HashMap::new();
        let view = || View {
            memories: &memories,
            index: &index,
            vectors: &vectors,
        };
        let again = pending(kind, "Store money as integer cents in every table.");
        let plan = decide(&again, view()).unwrap();
        assert_eq!(
            (plan.outcome.event, plan.outcome.id.as_str()),
            (Action::None, waiting.id.as_str())
        );
        assert_eq!(plan.changed.len(), 1);
        assert_eq!(plan.changed[0].status, Status::Pending, "still pending");
        assert!(plan.changed[0].confidence > waiting.confidence);
        assert!(
            plan.outcome
                .notes
                .iter()
                .any(|n| n.contains("awaits approval"))
        );
        // A person's write does not see it: it is added, approved, beside it.
        let by_person = prepared(kind, "Store money as integer cents in every table.");
        let plan = decide(&by_person, view()).unwrap();
        assert_eq!(plan.outcome.event, Action::Add);
        assert_eq!(plan.changed[0].status, Status::Approved);
        // A rejected learning written again is not proposed again.
        let rejected_again = pending(kind, "Log full card numbers for debugging.");
        let plan = decide(&rejected_again, view()).unwrap();
        assert_eq!(
            (plan.outcome.event, plan.outcome.id.as_str()),
            (Action::None, refused.id.as_str())
        );
        assert!(plan.changed.is_empty());
        assert!(
            plan.outcome.notes[0].contains("rejected"),
            "{:?}",
            plan.outcome.notes
        );
    }

    #[test]
    fn titles_are_the_first_sentence() {
        assert_eq!(
            title_of("Wrap mutations in a transaction. Otherwise audit rows leak."),
            "Wrap mutations in a transaction"
        );
        let long = "a ".repeat(100);
        assert!(title_of(&long).chars().count() <= 80);
    }

    #[test]
    fn served_markers_are_stripped() {
        let (text, id) =
            strip_served_marker("- [decision] m_0123456789abcdef: Use UTC everywhere.");
        assert_eq!(text, "Use UTC everywhere.");
        assert_eq!(id.as_deref(), Some("m_0123456789abcdef"));
        let (text, id) = strip_served_marker("Note: use UTC");
        assert_eq!(text, "Note: use UTC");
        assert!(id.is_none());
    }

    #[test]
    fn paths_outside_the_repository_are_refused() {
        let root = Path::new("/work/repo");
        assert_eq!(repo_relative("./src/a.py", root).unwrap(), "src/a.py");
        assert_eq!(
            repo_relative("/work/repo/src/a.py", root).unwrap(),
            "src/a.py"
        );
        assert!(repo_relative("../etc/passwd", root).is_err());
        assert!(repo_relative("/etc/passwd", root).is_err());
    }

    #[test]
    fn query_paths_are_found() {
        assert_eq!(
            paths_in("why is src/auth/token.py slow, and app.py::main", &[]),
            ["app.py", "src/auth/token.py"]
        );
    }
}
