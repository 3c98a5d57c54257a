//! Proposals from what reviewers say again and again: the recorded reviews' findings grouped
//! when they say the same thing — by terms, and by meaning with the model when there are few
//! enough, as near-duplicate memories are judged — and each recurring group written as a
//! pending memory with its evidence, for a person to approve or reject.

use std::collections::HashMap;

use serde::Serialize;

use super::{AskError, Cairn};
use crate::memory::duplicates::{BY_VECTOR_UP_TO, NEAR_MEANING, NEAR_TERMS};
use crate::memory::embed::cosine;
use crate::memory::model::Metadata;
use crate::memory::text::{conflicts, fingerprint, jaccard};
use crate::memory::{Action, MemoryType, NewMemory, Scope, Source};
use crate::review::records::ReviewRecord;
use crate::review::recurring::{self, At, Proposal, Teaches};
use crate::review::repo_knowledge::cut;

/// A term shared by more findings than this is too common to suggest two alike.
const COMMON_TERM: usize = 200;
/// Group members an item is compared with to find the group's best quote.
const QUOTE_SAMPLE: usize = 500;
/// Anchored paths a proposal keeps.
const PATHS: usize = 5;
/// Longest example quoted in a proposal's evidence, in bytes.
const EXAMPLE_BYTES: usize = 200;
/// Most proposals one run writes, the largest groups first (a person decides on them before
/// the next run proposes more).
pub const MAX_PROPOSALS: usize = 50;
/// Most groups one run looks at (proposed now or already), the largest first.
pub const MAX_LISTED: usize = 2 * MAX_PROPOSALS;
/// Who proposes.
pub(super) const PROPOSER: &str = "cairn learn";

/// A learning proposed from recurring findings.
#[derive(Debug, Clone, Serialize)]
pub struct Proposed {
    /// `ADD` (proposed now), `NONE` (already proposed, approved or rejected), or absent on a
    /// dry run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub event: Option<Action>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    #[serde(rename = "type")]
    pub kind: MemoryType,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub developer: Option<String>,
    pub category: String,
    pub quote: String,
    pub findings: usize,
    pub reviews: usize,
    pub rejected: usize,
}

/// The line that heads a list of proposals: written, or (`dry_run`) what would be.
pub(super) fn proposals_heading(dry_run: bool, from: &str) -> String {
    let verb = if dry_run { "Would propose" } else { "Proposed" };
    format!("{verb}{from} (pending a person's approval: `cairn memory list --pending`):\n")
}

/// What became of one proposal, as its line says it: its new id, the id that already held
/// it, or nothing on a dry run.
pub(super) fn proposal_state(event: Option<Action>, id: Option<&str>) -> String {
    match (event, id) {
        (Some(Action::None), Some(id)) => format!(" (known: {id})"),
        (_, Some(id)) => format!(" {id}"),
        _ => String::new(),
    }
}

/// The findings' texts, compared by terms and (when given) by vectors.
struct Alike {
    terms: Vec<std::collections::BTreeSet<String>>,
    vectors: Option<Vec<Vec<f32>>>,
}

impl Alike {
    fn similar(&self, a: usize, b: usize) -> bool {
        let (ta, tb) = (&self.terms[a], &self.terms[b]);
        if conflicts(ta, tb) {
            return false;
        }
        if jaccard(ta, tb) >= NEAR_TERMS {
            return true;
        }
        self.vectors
            .as_ref()
            .is_some_and(|v| f64::from(cosine(&v[a], &v[b])) >= NEAR_MEANING)
    }

    /// The items worth comparing with `a`: all of them when vectors decide too, else those
    /// sharing a term that is not too common.
    fn candidates(&self, postings: &HashMap<&str, Vec<usize>>, a: usize) -> Vec<usize> {
        if self.vectors.is_some() {
            return (a + 1..self.terms.len()).collect();
        }
        let mut out: Vec<usize> = self.terms[a]
            .iter()
            .filter_map(|t| postings.get(t.as_str()))
            .filter(|list| list.len() <= COMMON_TERM)
            .flatten()
            .copied()
            .filter(|&b| b > a)
            .collect();
        out.sort_unstable();
        out.dedup();
        out
    }
}

impl Cairn {
    /// The proposals the recorded reviews (and `extra`, reviews not stored on a dry run)
    /// make; written pending unless `dry_run`.
    pub(super) async fn propose_recurring(
        &self,
        extra: Vec<ReviewRecord>,
        dry_run: bool,
    ) -> Result<Vec<Proposed>, AskError> {
        let mut reviews = self.memories.review_records().await?;
        let known: std::collections::HashSet<String> =
            reviews.iter().map(|r| r.id.clone()).collect();
        reviews.extend(extra.into_iter().filter(|r| !known.contains(&r.id)));
        let items = recurring::occurrences(&reviews);
        let texts: Vec<String> = items
            .iter()
            .map(|at| reviews[at.review].findings[at.finding].message.clone())
            .collect();
        let vectors = if texts.len() <= BY_VECTOR_UP_TO {
            self.memories.vectors_of(texts.clone()).await
        } else {
            None
        };
        let alike = Alike {
            terms: texts.iter().map(|t| fingerprint(t)).collect(),
            vectors,
        };
        let proposals = super::off_runtime(move || found(&reviews, &items, &alike)).await?;
        let (mut out, mut fresh) = (Vec::new(), 0);
        for proposal in proposals {
            let proposed = self.propose(proposal, dry_run).await?;
            fresh += usize::from(proposed.event != Some(Action::None));
            out.push(proposed);
            // Groups already proposed count too, so that a run over a long history stays
            // bounded in work and in the answer's length once most are known.
            if fresh == MAX_PROPOSALS || out.len() == MAX_LISTED {
                break;
            }
        }
        Ok(out)
    }

    /// Writes one proposal pending (even when the approval gate is off: it is cairn's, not a
    /// person's), unless `dry_run`.
    async fn propose(&self, proposal: Proposal, dry_run: bool) -> Result<Proposed, AskError> {
        let new = new_memory(&proposal);
        let mut answer = Proposed {
            event: None,
            id: None,
            kind: new.kind.unwrap_or(MemoryType::ProjectPattern),
            developer: new.developer.clone(),
            category: proposal.category,
            quote: proposal.quote,
            findings: proposal.findings,
            reviews: proposal.reviews,
            rejected: proposal.rejected,
        };
        if !dry_run {
            let written = self.write_memory(new, None).await?;
            answer.event = Some(written.event);
            answer.id = Some(written.id);
        }
        Ok(answer)
    }
}

/// Groups the findings and lists what the recurring groups propose.
fn found(reviews: &[ReviewRecord], items: &[At], alike: &Alike) -> Vec<Proposal> {
    let mut postings: HashMap<&str, Vec<usize>> = HashMap::new();
    for (item, terms) in alike.terms.iter().enumerate() {
        for term in terms {
            postings.entry(term.as_str()).or_default().push(item);
        }
    }
    let groups = recurring::group(
        items.len(),
        |a| alike.candidates(&postings, a),
        |a, b| alike.similar(a, b),
    );
    let mut by_author: HashMap<&str, usize> = HashMap::new();
    for at in items {
        *by_author
            .entry(reviews[at.review].author.as_str())
            .or_default() += 1;
    }
    let total = items.len().max(1) as f64;
    let share = |author: &str| by_author.get(author).copied().unwrap_or(0) as f64 / total;
    let mut out = Vec::new();
    for group in groups {
        if group.len() < recurring::MIN_FINDINGS {
            break;
        }
        let members: Vec<At> = group.iter().map(|&i| items[i]).collect();
        let index: HashMap<At, usize> = group.iter().map(|&i| (items[i], i)).collect();
        let sample: Vec<usize> = group.iter().copied().take(QUOTE_SAMPLE).collect();
        let degree = |at: At| {
            let own = index[&at];
            sample
                .iter()
                .filter(|&&o| o != own && alike.similar(own, o))
                .count()
        };
        out.extend(recurring::proposals(reviews, &members, degree, share));
    }
    out
}

/// A proposal as the pending memory it is written as: the quote in words that say where it
/// comes from, its evidence in the metadata.
fn new_memory(proposal: &Proposal) -> NewMemory {
    let quote = &proposal.quote;
    let (kind, developer, content) = match &proposal.teaches {
        Teaches::ProjectPattern => (
            MemoryType::ProjectPattern,
            None,
            format!("Reviewers here ask for this again and again: \"{quote}\""),
        ),
        Teaches::RejectionPattern => {
            let reason = proposal
                .reason
                .as_deref()
                .map(|r| format!(" The reason given: \"{r}\""))
                .unwrap_or_default();
            (
                MemoryType::RejectionPattern,
                None,
                format!(
                    "Reviewers raise this here and the team usually rejects it: \"{quote}\".{reason}"
                ),
            )
        }
        Teaches::DeveloperPattern { developer } => (
            MemoryType::DeveloperPattern,
            Some(developer.clone()),
            format!("Reviewers raise this on {developer}'s changes again and again: \"{quote}\""),
        ),
    };
    let mut metadata = Metadata::new();
    metadata.insert("learned_from".into(), "review history".into());
    metadata.insert("findings".into(), proposal.findings.into());
    metadata.insert("reviews".into(), proposal.reviews.into());
    metadata.insert("rejected".into(), proposal.rejected.into());
    let examples: Vec<String> = proposal
        .examples
        .iter()
        .map(|e| {
            format!(
                "{} ({}): {}",
                e.review,
                e.disposition.as_str(),
                cut(&e.message, EXAMPLE_BYTES)
            )
        })
        .collect();
    metadata.insert("examples".into(), examples.into());
    let rejection = kind == MemoryType::RejectionPattern;
    NewMemory {
        kind: Some(kind),
        title: Some(format!("Recurring {} finding", proposal.category)),
        content,
        developer,
        metadata,
        paths: proposal.paths.iter().take(PATHS).cloned().collect(),
        source: Source::Import,
        source_ref: proposal.examples.first().map(|e| e.review.clone()),
        written_by: Some(PROPOSER.to_string()),
        category: rejection.then(|| proposal.category.clone()),
        file_pattern: proposal.file_pattern.clone().filter(|_| rejection),
        scope: Scope::Repository,
        pending: true,
        ..NewMemory::default()
    }
}
