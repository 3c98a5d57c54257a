//! The text of the answers both adapters print: compact Markdown for a model, the same lines
//! a person reads in a terminal.

use super::{Bootstrap, Decided, Expanded, Forgotten};
use crate::answer::Answer;
use crate::memory::{Memory, RecordedChange, RecordedReview, WriteOutcome};

/// An answer as text.
pub trait Text {
    fn to_text(&self) -> String;
}

/// A served answer (context, expand, review, search) was written within its budget.
impl<T> Text for Answer<T> {
    fn to_text(&self) -> String {
        self.text.clone()
    }
}

impl Text for Expanded {
    fn to_text(&self) -> String {
        match self {
            Expanded::Code(report) => report.text.clone(),
            Expanded::Memory(memory) => memory_detail(memory),
        }
    }
}

/// One memory in full.
impl Text for Memory {
    fn to_text(&self) -> String {
        memory_detail(self)
    }
}

impl Text for WriteOutcome {
    fn to_text(&self) -> String {
        write_outcome(self)
    }
}

impl Text for Decided {
    fn to_text(&self) -> String {
        let mut text = format!(
            "{} {}",
            self.memory.status.as_str().to_uppercase(),
            self.memory.id
        );
        if let Some(old) = &self.superseded {
            text.push_str(&format!(" (supersedes {old})"));
        }
        text.push('\n');
        text.push_str(&memory_line(&self.memory));
        text
    }
}

impl Text for Forgotten {
    fn to_text(&self) -> String {
        forgotten(self)
    }
}

impl Text for Bootstrap {
    fn to_text(&self) -> String {
        bootstrap(self)
    }
}

impl Text for RecordedChange {
    fn to_text(&self) -> String {
        recorded_change(self)
    }
}

impl Text for RecordedReview {
    fn to_text(&self) -> String {
        recorded_review(self)
    }
}

/// One memory on one line: `- [type] id: content (anchors) · scope · provenance`.
pub fn memory_line(memory: &Memory) -> String {
    memory_line_from(memory, None)
}

/// [`memory_line`] of a memory whose anchors are in the repository `origin` when it is not
/// the one answering: `(from <origin>: anchors)`.
pub fn memory_line_from(memory: &Memory, origin: Option<&str>) -> String {
    let mut line = format!("- [{}] {}: {}", memory.kind, memory.id, memory.content);
    let anchors: Vec<&str> = memory.anchors.all().map(String::as_str).collect();
    line.push_str(&crate::context::anchor_list(&anchors, origin));
    let mut facts = Vec::new();
    if let Some(dev) = &memory.owner.developer {
        facts.push(format!("@{dev}"));
    }
    if !memory.status.is_approved() {
        facts.push(memory.status.to_string());
    }
    if let Some(by) = &memory.validity.superseded_by {
        facts.push(format!("superseded by {by}"));
    }
    if let Some(source_ref) = &memory.provenance.source_ref {
        facts.push(source_ref.clone());
    }
    if !memory.anchors.unknown_anchors.is_empty() {
        facts.push(format!(
            "unknown anchors: {}",
            memory.anchors.unknown_anchors.join(", ")
        ));
    }
    if !facts.is_empty() {
        line.push_str(&format!(" · {}", facts.join(" · ")));
    }
    line
}

fn write_outcome(outcome: &WriteOutcome) -> String {
    let mut text = format!("{:?} {}", outcome.event, outcome.id).to_uppercase();
    if let Some(old) = &outcome.superseded {
        text.push_str(&format!(" (supersedes {old})"));
    }
    if let Some(memory) = &outcome.memory {
        text.push('\n');
        text.push_str(&memory_line(memory));
    }
    for near in &outcome.nearest {
        text.push_str(&format!(
            "\nnear {} (similarity {:.2} by {})",
            near.id, near.similarity, near.by
        ));
    }
    for note in &outcome.notes {
        text.push_str(&format!("\n_{note}_"));
    }
    text
}

fn forgotten(forgotten: &Forgotten) -> String {
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

/// One memory in full: the line, its provenance and validity, and its history.
fn memory_detail(memory: &Memory) -> String {
    let mut text = memory_line(memory);
    text.push_str(&format!(
        "\ntitle: {}\nsource: {:?}{} · confidence {:.1} · read {} times",
        memory.title,
        memory.provenance.source,
        memory
            .provenance
            .source_ref
            .as_deref()
            .map(|r| format!(" ({r})"))
            .unwrap_or_default(),
        memory.confidence,
        memory.reads.access_count
    ));
    if let Some(old) = &memory.validity.supersedes {
        text.push_str(&format!("\nsupersedes {old}"));
    }
    match &memory.rule.addressed_by {
        Some(change) => text.push_str(&format!("\naddressed by guideline change {change}")),
        None if memory.rule.addressed => text.push_str("\naddressed by a guideline update"),
        None => {}
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

/// The answer of `record_guideline_change`.
fn recorded_change(r: &RecordedChange) -> String {
    let c = &r.change;
    let place = match &c.section {
        Some(section) => format!("{} § {section}", c.file),
        None => c.file.clone(),
    };
    let mut text = if r.repeated {
        format!(
            "guideline change {} was already recorded as {}; nothing changed",
            c.id,
            c.outcome.as_str()
        )
    } else {
        format!(
            "guideline change {} recorded as {}",
            c.id,
            c.outcome.as_str()
        )
    };
    text.push_str(&format!(
        "\n{place} · category `{}` · supported by {}",
        c.category,
        c.memories.join(", ")
    ));
    if let Some(feedback) = &c.feedback {
        text.push_str(&format!("\nfeedback: {feedback}"));
    }
    if !r.addressed.is_empty() {
        text.push_str(&format!(
            "\nmarked addressed: {} (`cairn rules` shows the rejection rate before and after)",
            r.addressed.join(", ")
        ));
    }
    if !c.redacted.is_empty() {
        text.push_str(&format!("\nredacted: {}", c.redacted.join(", ")));
    }
    text
}

/// The answer of `record_review`.
fn recorded_review(r: &RecordedReview) -> String {
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
        let kinds: Vec<&str> = r.redacted.iter().map(|k| k.as_str()).collect();
        text.push_str(&format!("\n_redacted: {}_", kinds.join(", ")));
    }
    text
}

fn bootstrap(bootstrap: &Bootstrap) -> String {
    let mut text = if bootstrap.detected.is_empty() {
        "no frameworks detected in the repository's manifests".to_string()
    } else {
        format!("Detected frameworks ({}):", bootstrap.frameworks().len())
    };
    for d in &bootstrap.detected {
        let version = d
            .version
            .as_deref()
            .map_or(String::new(), |v| format!(" {v}"));
        text.push_str(&format!(
            "\n- {}{version} ({} {}, {})",
            d.framework, d.ecosystem, d.package, d.manifest
        ));
    }
    if !bootstrap.seeded.is_empty() {
        let (written, unchanged) = (bootstrap.written, bootstrap.unchanged);
        text.push_str(&if bootstrap.dry_run {
            format!("\n\nWould write {written} framework memories; {unchanged} already stored (dry run):")
        } else {
            format!("\n\nFramework knowledge: {written} written, {unchanged} unchanged:")
        });
    }
    for s in &bootstrap.seeded {
        let what = match (&s.event, &s.id) {
            (Some(event), Some(id)) => format!("{} {id}", format!("{event:?}").to_uppercase()),
            _ if s.stored => "stored".to_string(),
            _ => "new".to_string(),
        };
        text.push_str(&format!(
            "\n- {what} [{}] {} ({}, {} scope) {}",
            s.framework,
            s.title,
            s.file_pattern,
            s.scope.as_str(),
            s.source_ref
        ));
    }
    if !bootstrap.without_knowledge.is_empty() {
        text.push_str(&format!(
            "\n\nDetected without shipped knowledge: {} (the bootstrap_framework_knowledge prompt asks for memories about them)",
            bootstrap.without_knowledge.join(", ")
        ));
    }
    if !bootstrap.notes.is_empty() {
        text.push_str("\n\nManifests passed over:");
        for note in &bootstrap.notes {
            if note.manifest.is_empty() {
                text.push_str(&format!("\n- {}", note.reason));
            } else {
                text.push_str(&format!("\n- {}: {}", note.manifest, note.reason));
            }
        }
    }
    text
}
