//! Compact text for memory answers, shared by the MCP tools and the CLI.

use serde::Serialize;

use crate::memory::{Found, Memory, WriteOutcome};

/// What a search answers.
#[derive(Debug, Serialize)]
pub struct SearchAnswer {
    /// The developer's live contributor profile (developer searches only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub profile: Option<Memory>,
    pub memories: Vec<Found>,
}

/// What `forget` removed (or, unconfirmed, would remove).
#[derive(Debug, Serialize)]
pub struct Forgotten {
    pub confirmed: bool,
    pub memories: Vec<Memory>,
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
        format!("DELETE: {} memories removed", forgotten.memories.len())
    } else {
        format!(
            "{} memories match; call again with confirm=true to remove them",
            forgotten.memories.len()
        )
    };
    for memory in &forgotten.memories {
        text.push('\n');
        text.push_str(&memory_line(memory));
    }
    text
}

pub fn search(answer: &SearchAnswer) -> String {
    let mut text = String::new();
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
    text.trim_end().to_string()
}
