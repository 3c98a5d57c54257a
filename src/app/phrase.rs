//! The brief that hands what `cairn learn` proposed to an assistant to phrase: without a
//! model cairn groups, counts and quotes; the assistant turns each waiting proposal into the
//! learning a reviewer can apply and writes it with `remember`, superseding the quote. The
//! phrased memory waits for a person as the quote did, with the same evidence.

use serde::Serialize;

use super::render::Text;
use super::{AskError, Cairn};
use crate::memory::Memory;
use crate::review::repo_knowledge::cut;

/// Most proposals one brief lists, those with the most evidence first.
const LISTED: usize = 40;
/// Longest proposal text quoted in the brief, in bytes.
const TEXT_BYTES: usize = 600;
/// Examples quoted per proposal.
const EXAMPLES: usize = 3;
/// Paths listed per proposal.
const PATHS: usize = 5;

/// The brief asking an assistant to phrase the waiting proposals.
#[derive(Debug, Clone, Serialize)]
pub struct PhraseBrief {
    /// Proposals of `cairn learn` waiting for a person.
    pub waiting: usize,
    /// The ids listed in the text, in its order.
    pub listed: Vec<String>,
    pub text: String,
}

impl Cairn {
    /// What `cairn learn` proposed and a person has not decided yet, as a brief for an
    /// assistant to phrase each proposal as a learning.
    pub async fn phrase_brief(&self) -> Result<PhraseBrief, AskError> {
        let mut waiting: Vec<Memory> = self
            .pending_memories()
            .await?
            .into_iter()
            .filter(|m| {
                m.is_live()
                    && m.provenance.written_by.as_deref() == Some(super::recurring::PROPOSER)
            })
            .collect();
        waiting.sort_by_key(|m| std::cmp::Reverse(evidence(m)));
        let listed: Vec<&Memory> = waiting.iter().take(LISTED).collect();
        Ok(PhraseBrief {
            waiting: waiting.len(),
            listed: listed.iter().map(|m| m.id.clone()).collect(),
            text: brief_text(waiting.len(), &listed),
        })
    }
}

impl Text for PhraseBrief {
    fn to_text(&self) -> String {
        self.text.clone()
    }
}

/// How much a proposal rests on: its findings, else one.
fn evidence(memory: &Memory) -> u64 {
    memory
        .metadata
        .get("findings")
        .and_then(serde_json::Value::as_u64)
        .unwrap_or(1)
}

fn brief_text(waiting: usize, listed: &[&Memory]) -> String {
    if listed.is_empty() {
        return "No proposals of `cairn learn` are waiting for a person: run `cairn learn \
reviews FILE…` or `cairn learn repo` first (those already approved or rejected are not listed \
again)."
            .to_string();
    }
    let shown = if listed.len() < waiting {
        format!(
            "{waiting} proposals are waiting; the {} with the most evidence:",
            listed.len()
        )
    } else {
        format!("{waiting} proposals are waiting:")
    };
    let items: Vec<String> = listed
        .iter()
        .enumerate()
        .map(|(i, m)| item(i + 1, m))
        .collect();
    format!(
        "cairn learned these from this repository's history (review threads, decision records, \
guides, reverts) and quotes them as found, grouped and counted. Each waits for a person's \
approval. Phrase each one as the learning a reviewer can apply, and store it with one \
`remember` call:
- the type, developer, paths and file_pattern listed with it, and `supersedes`: its id. The \
phrased memory replaces the quote and waits for the same person's approval, with the same \
evidence;
- 1–3 sentences: what to do or avoid, where, and why when the evidence says; specific \
(names, paths, identifiers); never copy secrets, tokens or credentials;
- skip a proposal that is no durable learning (a one-off, a question, noise): leave it for \
the person to reject, and say which ones you skipped and why.

{shown}

{}",
        items.join("\n\n")
    )
}

/// One proposal as the brief lists it: how to write it, its text and its evidence.
fn item(n: usize, memory: &Memory) -> String {
    let mut head = vec![memory.id.clone(), memory.kind.as_str().to_string()];
    if let Some(developer) = &memory.owner.developer {
        head.push(format!("developer {developer}"));
    }
    if let Some(category) = &memory.rule.category {
        head.push(format!("category {category}"));
    }
    if let Some(pattern) = &memory.rule.file_pattern {
        head.push(format!("file_pattern {pattern}"));
    }
    if let Some(from) = memory.metadata.get("learned_from").and_then(|v| v.as_str()) {
        head.push(format!("from {from}"));
    }
    if let Some(count) = counted(memory) {
        head.push(count);
    }
    let mut lines = vec![
        format!("{n}. {}", head.join(" · ")),
        format!("   > {}", cut(&memory.content, TEXT_BYTES)),
    ];
    if !memory.anchors.paths.is_empty() {
        let paths: Vec<&str> = memory
            .anchors
            .paths
            .iter()
            .take(PATHS)
            .map(String::as_str)
            .collect();
        lines.push(format!("   paths: {}", paths.join(", ")));
    }
    let examples = memory
        .metadata
        .get("examples")
        .and_then(|v| v.as_array())
        .into_iter()
        .flatten()
        .filter_map(|e| e.as_str())
        .take(EXAMPLES);
    lines.extend(examples.map(|e| format!("   - {e}")));
    lines.join("\n")
}

/// The counts a review-history proposal rests on.
fn counted(memory: &Memory) -> Option<String> {
    let get = |key: &str| memory.metadata.get(key).and_then(|v| v.as_u64());
    let (findings, reviews) = (get("findings")?, get("reviews")?);
    let rejected = get("rejected").unwrap_or(0);
    Some(format!(
        "{findings} findings in {reviews} reviews, {rejected} rejected"
    ))
}
