//! Compact text for memory answers, shared by the MCP tools and the CLI.

use serde::Serialize;

use crate::app::AskError;
use crate::context::{self, MemoryNote};
use crate::memory::{Found, Memory, WriteOutcome};
use crate::tokens;

/// Most memories a `forget` answer lists.
pub const LISTED: usize = 50;
/// Default token budget of a memory search answer.
pub const DEFAULT_SEARCH_TOKENS: usize = 2_000;

/// What a search answers.
#[derive(Debug, Serialize)]
pub struct SearchAnswer {
    /// The developer's live contributor profile (developer searches only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub profile: Option<Memory>,
    /// Best first; histories are left out (`cairn memory history` shows them).
    pub memories: Vec<Found>,
    /// Results left out to stay within the budget.
    pub truncated: usize,
    pub tokens: usize,
    /// Team mode: set when the team server is away and the answer comes from the last
    /// synced copy.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl SearchAnswer {
    /// Adds a note (team mode's staleness) to the answer.
    pub fn with_note(mut self, note: Option<String>) -> SearchAnswer {
        self.note = note;
        self
    }

    /// The answer, cut to `max_tokens` of text (default 2,000; capped at 16,000).
    pub fn within(
        profile: Option<Memory>,
        mut found: Vec<Found>,
        max_tokens: Option<usize>,
    ) -> Result<SearchAnswer, AskError> {
        let (budget, _) = context::budget(max_tokens, DEFAULT_SEARCH_TOKENS)?;
        let mut answer = SearchAnswer {
            profile: profile.map(without_history),
            memories: Vec::new(),
            truncated: 0,
            tokens: 0,
            note: None,
        };
        let mut used = answer
            .profile
            .as_ref()
            .map_or(0, |p| tokens::count(&p.content) + 8);
        for f in &mut found {
            f.memory.history.clear();
        }
        let total = found.len();
        for f in found {
            let cost = tokens::count(&memory_line(&f.memory)) + 1;
            if used + cost > budget && !answer.memories.is_empty() {
                break;
            }
            used += cost;
            answer.memories.push(f);
        }
        answer.truncated = total - answer.memories.len();
        answer.tokens = used;
        Ok(answer)
    }
}

fn without_history(mut memory: Memory) -> Memory {
    memory.history.clear();
    memory
}

/// A memory in a listing: id, type, text and anchors.
pub fn brief(memory: Memory) -> MemoryNote {
    crate::app::note_of(&memory)
}

/// What `forget` removed (or, unconfirmed, would remove).
#[derive(Debug, Serialize)]
pub struct Forgotten {
    pub confirmed: bool,
    /// How many matched (the listing shows at most 50).
    pub total: usize,
    pub memories: Vec<MemoryNote>,
}

/// One memory on one line: `- [type] id: content (anchors) · scope · provenance`.
pub fn memory_line(memory: &Memory) -> String {
    let mut line = format!("- [{}] {}: {}", memory.kind, memory.id, memory.content);
    let anchors: Vec<&str> = memory.anchors().map(String::as_str).collect();
    if !anchors.is_empty() {
        line.push_str(&format!(" ({})", anchors.join(", ")));
    }
    let mut facts = Vec::new();
    if let Some(dev) = &memory.developer {
        facts.push(format!("@{dev}"));
    }
    if let Some(by) = &memory.superseded_by {
        facts.push(format!("superseded by {by}"));
    }
    if let Some(source_ref) = &memory.source_ref {
        facts.push(source_ref.clone());
    }
    if !memory.unknown_anchors.is_empty() {
        facts.push(format!(
            "unknown anchors: {}",
            memory.unknown_anchors.join(", ")
        ));
    }
    if !facts.is_empty() {
        line.push_str(&format!(" · {}", facts.join(" · ")));
    }
    line
}

pub fn write_outcome(outcome: &WriteOutcome) -> String {
    let mut text = format!("{:?} {}", outcome.event, outcome.id).to_uppercase();
    if let Some(old) = &outcome.superseded {
        text.push_str(&format!(" (supersedes {old})"));
    }
    if let Some(memory) = &outcome.memory {
        text.push('\n');
        text.push_str(&memory_line(memory));
    }
    for note in &outcome.notes {
        text.push_str(&format!("\n_{note}_"));
    }
    text
}

pub fn forgotten(forgotten: &Forgotten) -> String {
    let mut text = if forgotten.confirmed {
        format!("DELETE: {} memories removed", forgotten.total)
    } else {
        format!(
            "{} memories match; call again with confirm={} to remove them",
            forgotten.total, forgotten.total
        )
    };
    for memory in &forgotten.memories {
        text.push('\n');
        text.push_str(&memory.line());
    }
    if forgotten.total > forgotten.memories.len() {
        text.push_str(&format!(
            "\n… {} more",
            forgotten.total - forgotten.memories.len()
        ));
    }
    text
}

pub fn search(answer: &SearchAnswer) -> String {
    let mut text = String::new();
    if let Some(note) = &answer.note {
        text.push_str(&format!("_{note}_\n"));
    }
    if let Some(profile) = &answer.profile {
        text.push_str(&format!(
            "## Profile of @{}\n{}\n",
            profile.developer.as_deref().unwrap_or("?"),
            profile.content
        ));
    }
    if answer.memories.is_empty() {
        text.push_str("no matching memories");
        return text;
    }
    text.push_str(&format!("{} memories\n", answer.memories.len()));
    for found in &answer.memories {
        text.push_str(&memory_line(&found.memory));
        text.push('\n');
    }
    if answer.truncated > 0 {
        text.push_str(&format!(
            "_truncated: {} more memories left out to fit the budget; raise max_tokens or narrow the query_\n",
            answer.truncated
        ));
    }
    text.trim_end().to_string()
}

/// One memory in full: the line, its provenance and validity, and its history.
pub fn memory_detail(memory: &Memory) -> String {
    let mut text = memory_line(memory);
    text.push_str(&format!(
        "\ntitle: {}\nsource: {:?}{} · confidence {:.1} · read {} times",
        memory.title,
        memory.source,
        memory
            .source_ref
            .as_deref()
            .map(|r| format!(" ({r})"))
            .unwrap_or_default(),
        memory.confidence,
        memory.access_count
    ));
    if let Some(old) = &memory.supersedes {
        text.push_str(&format!("\nsupersedes {old}"));
    }
    if !memory.history.is_empty() {
        text.push_str("\n## History (earlier texts, oldest first)");
        for revision in &memory.history {
            text.push_str(&format!(
                "\n- {:?}{}: {}",
                revision.event,
                revision
                    .note
                    .as_deref()
                    .map(|n| format!(" ({n})"))
                    .unwrap_or_default(),
                revision.content
            ));
        }
    }
    text
}

/// The answer of `record_review`.
pub fn recorded_review(r: &crate::memory::RecordedReview) -> String {
    let mut text = if r.repeated {
        format!(
            "review {}: already recorded with the same findings; statistics unchanged",
            r.review_id
        )
    } else {
        format!("review {} recorded", r.review_id)
    };
    if let Some(outcome) = &r.outcome {
        text.push_str(&format!("\noutcome: {:?} {}", outcome.event, outcome.id));
    }
    for w in &r.rejections {
        text.push_str(&format!("\nrejection pattern: {:?} {}", w.event, w.id));
    }
    for w in &r.learnings {
        text.push_str(&format!("\nlearning: {:?} {}", w.event, w.id));
    }
    for s in &r.rules {
        text.push_str(&format!(
            "\nrule `{}`: flagged {}, implemented {}, rejected {}, deferred {} (rejection rate {:.0}%)",
            s.category,
            s.flagged,
            s.implemented,
            s.rejected,
            s.deferred,
            s.rejection_rate * 100.0
        ));
    }
    let a = &r.author;
    text.push_str(&format!(
        "\nauthor: {} reviews, {} findings ({} implemented, {} rejected, {} deferred)",
        a.reviews, a.findings, a.implemented, a.rejected, a.deferred
    ));
    if !r.redacted.is_empty() {
        text.push_str(&format!("\n_redacted: {}_", r.redacted.join(", ")));
    }
    text
}

/// The `cairn rules` report: categories by rejection rate, high ones marked.
pub fn rules_report(
    stats: &[crate::review::stats::RuleStat],
    min_sample: u64,
    min_rate: f64,
) -> String {
    if stats.is_empty() {
        return "no review outcomes recorded yet (record_review)".to_string();
    }
    let mut sorted: Vec<&crate::review::stats::RuleStat> = stats.iter().collect();
    sorted.sort_by(|a, b| {
        b.rejection_rate
            .total_cmp(&a.rejection_rate)
            .then(b.flagged.cmp(&a.flagged))
            .then(a.category.cmp(&b.category))
    });
    let mut text = format!(
        "{:<24} {:>7} {:>11} {:>8} {:>8} {:>9}\n",
        "category", "flagged", "implemented", "rejected", "deferred", "rejection"
    );
    for s in &sorted {
        let high = crate::review::stats::is_high_rejection(s, min_sample, min_rate);
        text.push_str(&format!(
            "{:<24} {:>7} {:>11} {:>8} {:>8} {:>8.0}%{}\n",
            s.category,
            s.flagged,
            s.implemented,
            s.rejected,
            s.deferred,
            s.rejection_rate * 100.0,
            if high { "  ← high" } else { "" }
        ));
    }
    let high: Vec<&&crate::review::stats::RuleStat> = sorted
        .iter()
        .filter(|s| crate::review::stats::is_high_rejection(s, min_sample, min_rate))
        .collect();
    if high.is_empty() {
        text.push_str(&format!(
            "\nno category is rejected in {:.0}%+ of at least {min_sample} findings",
            min_rate * 100.0
        ));
    } else {
        text.push_str("\nHigh-rejection categories (update the review guidelines, then `cairn rules --addressed CATEGORY`):\n");
        for s in high {
            text.push_str(&format!(
                "- {}: {} of {} rejected; supporting memories: {}\n",
                s.category,
                s.rejected,
                s.flagged,
                if s.memories.is_empty() {
                    "none".to_string()
                } else {
                    s.memories.join(", ")
                }
            ));
        }
    }
    text
}
