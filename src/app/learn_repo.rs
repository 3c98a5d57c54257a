//! Learning what the repository itself holds: `cairn learn repo` and the `learn` tool (`from:
//! repository`) read its decision records, its contributing and style guides and its history
//! of reverts and re-fixes, and propose each learning as a pending memory with its evidence,
//! for a person to approve or reject. `CODEOWNERS` is not learned: `expand` and `review` show
//! a file's owners from it.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::Path;
use std::sync::Arc;

use serde::Serialize;

use super::recurring::{proposal_state, proposals_heading};
use super::{AskError, Cairn, Text, off_runtime};
use crate::fsutil::repo::RepoFiles;
use crate::graph::Graph;
use crate::memory::model::Metadata;
use crate::memory::{Action, MemoryType, NewMemory, Scope, Source};
use crate::review::repo_knowledge::anchors::RepoPaths;
use crate::review::repo_knowledge::codeowners::{self, CodeOwners, Owned};
use crate::review::repo_knowledge::decisions::{self, Decision};
use crate::review::repo_knowledge::guides::{self, GuideSection};
use crate::review::repo_knowledge::reverts::{self, REFIX_DAYS, Risky, Undone};
use crate::review::repo_knowledge::{Progress, Skipped, Stage, cut};
use crate::secrets::SecretKind;

/// Examples of evidence a proposal keeps.
const EXAMPLES: usize = 5;
/// Longest example, in bytes.
const EXAMPLE_BYTES: usize = 200;
/// Skipped items the text answer lists (the structured one has them all).
/// Proposals the answer's text lists (the JSON has them all).
const PROPOSALS_LISTED: usize = 40;
const SKIPPED_LISTED: usize = 20;

/// Learning from the repository.
#[derive(Debug, Clone, Default)]
pub struct LearnRepoRequest {
    /// Read and decide, write nothing.
    pub dry_run: bool,
    /// How far the run is, for whoever draws it.
    pub progress: Arc<Progress>,
}

/// How much each source held.
#[derive(Debug, Clone, Default, Serialize)]
pub struct RepoCounts {
    /// Decision records read, and the decisions among them.
    pub decision_records: usize,
    pub decisions: usize,
    /// Contributing and style guides read, and their sections kept.
    pub guides: usize,
    pub guide_sections: usize,
    /// Commits walked, reverts among them, fixes that changed lines of a recent commit.
    pub commits: usize,
    pub reverts: usize,
    pub refixes: usize,
    pub risky_modules: usize,
    /// Rules of the `CODEOWNERS` file.
    pub codeowners_rules: usize,
}

/// A learning proposed from the repository.
#[derive(Debug, Clone, Serialize)]
pub struct RepoProposal {
    /// `ADD` (proposed now), `NONE` (already proposed, approved or rejected), or absent on a
    /// dry run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub event: Option<Action>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    #[serde(rename = "type")]
    pub kind: MemoryType,
    /// `decision record`, `contributing guide`, `style guide` or `history`.
    pub learned_from: &'static str,
    /// The file, section or module it comes from.
    pub from: String,
    pub content: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub anchors: Vec<String>,
}

/// What learning from the repository did.
#[derive(Debug, Clone, Serialize)]
pub struct LearnedRepo {
    pub dry_run: bool,
    pub counts: RepoCounts,
    /// The `CODEOWNERS` file, when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub codeowners: Option<String>,
    pub proposed: Vec<RepoProposal>,
    pub skipped: Vec<Skipped>,
    /// Kinds of secret taken out of what was proposed.
    #[serde(skip_serializing_if = "BTreeSet::is_empty")]
    pub redacted: BTreeSet<&'static str>,
}

/// What was read, before anything is proposed.
struct Read {
    decisions: decisions::Found,
    guides: guides::Found,
    codeowners: Option<CodeOwners>,
    history: reverts::Found,
    skipped: Vec<Skipped>,
}

/// A proposal and the memory it is written as.
struct Candidate {
    answer: RepoProposal,
    memory: NewMemory,
}

impl Cairn {
    /// Learns from the repository's decision records, guides and history: each learning is
    /// written pending with its evidence (even when the approval gate is off: it is cairn's,
    /// not a person's); what is already proposed, approved or rejected is not proposed again.
    pub async fn learn_repo(&self, request: LearnRepoRequest) -> Result<LearnedRepo, AskError> {
        let root = self.repo.root.clone();
        let is_git = self.repo.is_git;
        let progress = request.progress.clone();
        let read = off_runtime(move || read_repository(&root, is_git, &progress)).await??;
        let snapshot = self.graph_if_indexed().await;
        let symbols = snapshot
            .as_ref()
            .map(|s| symbols_named(&s.graph, &read.decisions.decisions))
            .unwrap_or_default();
        let mut redacted = BTreeSet::new();
        let candidates = candidates(&read, &symbols, &mut redacted);
        let mut answer = LearnedRepo {
            dry_run: request.dry_run,
            counts: counts(&read),
            codeowners: read.codeowners.as_ref().map(|c| c.path.clone()),
            proposed: Vec::new(),
            skipped: read.skipped,
            redacted,
        };
        request.progress.enter(Stage::Writing, candidates.len());
        for Candidate {
            answer: mut proposal,
            memory,
        } in candidates
        {
            if !request.dry_run {
                let written = self.write_memory(memory, Some(Scope::Repository)).await?;
                proposal.event = Some(written.event);
                proposal.id = Some(written.id);
            }
            request.progress.one_done();
            answer.proposed.push(proposal);
        }
        Ok(answer)
    }

    /// The owners `CODEOWNERS` gives the file at `path`, when the repository has one.
    pub(super) fn owners_of(&self, path: &str) -> Option<Owned> {
        let (_, owned) = self.owners_of_each(&[path.to_string()]).pop()?;
        Some(owned)
    }

    /// The owners of each of `paths` that has some, in order.
    pub(super) fn owners_of_each(&self, paths: &[String]) -> Vec<(String, Owned)> {
        let Some(codeowners) = RepoFiles::open(&self.repo.root)
            .ok()
            .and_then(|files| codeowners::read(&files).ok().flatten())
        else {
            return Vec::new();
        };
        paths
            .iter()
            .filter_map(|p| Some((p.clone(), codeowners.owners_of(p)?)))
            .collect()
    }
}

fn refused(message: String) -> AskError {
    AskError::Review(message)
}

/// Reads every source, each within its bounds; a source that cannot be read is a skipped
/// item, not a failure.
fn read_repository(root: &Path, is_git: bool, progress: &Progress) -> Result<Read, AskError> {
    let files =
        RepoFiles::open(root).map_err(|e| refused(format!("cannot open the repository: {e}")))?;
    progress.enter(Stage::Files, 0);
    let decisions = decisions::find(&files, &RepoPaths::new(&files, root, is_git));
    let guides = guides::find(&files);
    let mut skipped: Vec<Skipped> = Vec::new();
    skipped.extend(decisions.skipped.iter().cloned());
    skipped.extend(guides.skipped.iter().cloned());
    let codeowners = match codeowners::read(&files) {
        Ok(found) => found,
        Err(why) => {
            skipped.push(why);
            None
        }
    };
    skipped.extend(codeowners.iter().flat_map(|c| c.skipped.iter().cloned()));
    let history = if is_git {
        reverts::find(root, &files, progress).unwrap_or_else(|e| reverts::Found {
            skipped: vec![Skipped::new("history", e.to_string())],
            ..reverts::Found::default()
        })
    } else {
        reverts::Found::default()
    };
    skipped.extend(history.skipped.iter().cloned());
    Ok(Read {
        decisions,
        guides,
        codeowners,
        history,
        skipped,
    })
}

fn counts(read: &Read) -> RepoCounts {
    RepoCounts {
        decision_records: read.decisions.read,
        decisions: read.decisions.decisions.len(),
        guides: read.guides.read,
        guide_sections: read.guides.sections.len(),
        commits: read.history.commits,
        reverts: read.history.reverts,
        refixes: read.history.refixes,
        risky_modules: read.history.risky.len(),
        codeowners_rules: read.codeowners.as_ref().map_or(0, CodeOwners::rules),
    }
}

/// Each name the decision records mention in code that the code graph knows as exactly one
/// symbol, with its id: `path::Name` as a target, a bare or dotted name by the end of
/// symbols' names (one pass over the graph).
fn symbols_named(graph: &Graph, decisions: &[Decision]) -> HashMap<String, String> {
    let names: HashSet<&str> = decisions
        .iter()
        .flat_map(|d| &d.names)
        .map(String::as_str)
        .collect();
    let mut found: HashMap<String, String> = HashMap::new();
    let mut bare: HashMap<&str, Vec<&str>> = HashMap::new();
    for name in &names {
        if name.contains("::") {
            if let Ok(node) = crate::context::resolve_target(graph, name)
                && node.kind.is_symbol()
            {
                found.insert(name.to_string(), node.id.to_string());
            }
        } else {
            bare.insert(name, Vec::new());
        }
    }
    for node in graph.nodes.iter().filter(|n| n.kind.is_symbol()) {
        let name: &str = &node.name;
        let ends = std::iter::once(0).chain(name.match_indices('.').map(|(at, _)| at + 1));
        for start in ends {
            if let Some(ids) = bare.get_mut(&name[start..]) {
                ids.push(&node.id);
            }
        }
    }
    for (name, ids) in bare {
        if let [one] = ids.as_slice() {
            found.insert(name.to_string(), one.to_string());
        }
    }
    found
}

/// Every proposal, in the order of the sources: decisions, guide sections, risky modules.
fn candidates(
    read: &Read,
    symbols: &HashMap<String, String>,
    redacted: &mut BTreeSet<&'static str>,
) -> Vec<Candidate> {
    let mut clean = |text: &str| {
        let found = crate::secrets::redact(text);
        redacted.extend(found.kinds.iter().map(|k: &SecretKind| k.as_str()));
        found.text
    };
    let mut out = Vec::new();
    for decision in &read.decisions.decisions {
        out.push(decision_candidate(decision, symbols, &mut clean));
    }
    for section in &read.guides.sections {
        out.push(section_candidate(section, &mut clean));
    }
    for risky in &read.history.risky {
        out.push(risk_candidate(risky, &mut clean));
    }
    out
}

/// The memory every proposal starts from: pending, imported, by cairn.
fn proposal_memory(kind: MemoryType, title: String, content: String) -> NewMemory {
    NewMemory {
        kind: Some(kind),
        title: Some(title),
        content,
        source: Source::Import,
        written_by: Some(super::recurring::PROPOSER.to_string()),
        scope: Scope::Repository,
        pending: true,
        ..NewMemory::default()
    }
}

fn examples(list: impl IntoIterator<Item = String>) -> serde_json::Value {
    list.into_iter()
        .take(EXAMPLES)
        .map(|e| cut(&e, EXAMPLE_BYTES))
        .collect::<Vec<_>>()
        .into()
}

fn decision_candidate(
    decision: &Decision,
    symbols: &HashMap<String, String>,
    clean: &mut impl FnMut(&str) -> String,
) -> Candidate {
    let title = clean(decision.title.trim_end_matches('.'));
    let status = decision
        .status
        .as_deref()
        .map(|s| format!(" ({})", cut(s, 40)))
        .unwrap_or_default();
    let content = clean(&format!(
        "Decided in {}{status}: {title}. {}",
        decision.path, decision.decision
    ));
    let symbols: Vec<String> = decision
        .names
        .iter()
        .filter_map(|n| symbols.get(n).cloned())
        .collect();
    let mut metadata = Metadata::new();
    metadata.insert("learned_from".into(), "decision record".into());
    metadata.insert("file".into(), decision.path.clone().into());
    if let Some(status) = &decision.status {
        metadata.insert("status".into(), clean(&cut(status, 80)).into());
    }
    metadata.insert(
        "examples".into(),
        examples([format!("{}: {title}", decision.path)]),
    );
    let anchors = decision.paths.iter().chain(&symbols).cloned().collect();
    let memory = NewMemory {
        metadata,
        paths: decision.paths.clone(),
        symbols,
        source_ref: Some(decision.path.clone()),
        ..proposal_memory(MemoryType::Decision, title, content.clone())
    };
    Candidate {
        answer: RepoProposal {
            event: None,
            id: None,
            kind: MemoryType::Decision,
            learned_from: "decision record",
            from: decision.path.clone(),
            content,
            anchors,
        },
        memory,
    }
}

fn section_candidate(section: &GuideSection, clean: &mut impl FnMut(&str) -> String) -> Candidate {
    let heading = clean(&section.heading);
    let content = clean(&format!(
        "From {}, \"{heading}\": {}",
        section.path, section.text
    ));
    let learned_from = section.guide.as_str();
    let mut metadata = Metadata::new();
    metadata.insert("learned_from".into(), learned_from.into());
    metadata.insert("file".into(), section.path.clone().into());
    metadata.insert("section".into(), cut(&heading, 120).into());
    metadata.insert("line".into(), section.line.into());
    metadata.insert(
        "examples".into(),
        examples([format!("{}:{} {heading}", section.path, section.line)]),
    );
    let memory = NewMemory {
        metadata,
        source_ref: Some(format!("{}:{}", section.path, section.line)),
        ..proposal_memory(
            MemoryType::ProjectPattern,
            cut(&format!("{heading} ({})", section.path), 200),
            content.clone(),
        )
    };
    Candidate {
        answer: RepoProposal {
            event: None,
            id: None,
            kind: MemoryType::ProjectPattern,
            learned_from,
            from: format!("{} \"{heading}\"", section.path),
            content,
            anchors: Vec::new(),
        },
        memory,
    }
}

fn risk_candidate(risky: &Risky, clean: &mut impl FnMut(&str) -> String) -> Candidate {
    let count = |kind: Undone| risky.events.iter().filter(|e| e.kind == kind).count();
    let (reverted, refixed) = (count(Undone::Reverted), count(Undone::Refixed));
    let what = if risky.folder { "module" } else { "file" };
    let summaries: Vec<String> = risky
        .events
        .iter()
        .take(3)
        .map(|e| clean(&e.summary))
        .collect();
    let content = format!(
        "{} is a risky {what}: {} of its changes did not hold, reverted or fixed again within {REFIX_DAYS} days ({}).",
        risky.path,
        risky.events.len(),
        summaries.join("; ")
    );
    let mut metadata = Metadata::new();
    metadata.insert("learned_from".into(), "history".into());
    metadata.insert("reverted".into(), reverted.into());
    metadata.insert("refixed".into(), refixed.into());
    metadata.insert(
        "examples".into(),
        examples(risky.events.iter().map(|e| {
            let earlier = e
                .earlier
                .as_deref()
                .map(|c| format!(" {c}"))
                .unwrap_or_default();
            format!(
                "{} {}{earlier}: {}",
                e.commit,
                e.kind.as_str(),
                clean(&e.summary)
            )
        })),
    );
    let memory = NewMemory {
        metadata,
        paths: vec![risky.path.clone()],
        source_ref: risky.events.first().map(|e| e.commit.clone()),
        ..proposal_memory(
            MemoryType::RiskModule,
            format!("Risky {what}: {}", risky.path),
            content.clone(),
        )
    };
    Candidate {
        answer: RepoProposal {
            event: None,
            id: None,
            kind: MemoryType::RiskModule,
            learned_from: "history",
            from: risky.path.clone(),
            content,
            anchors: vec![risky.path.clone()],
        },
        memory,
    }
}

impl Text for LearnedRepo {
    fn to_text(&self) -> String {
        let c = &self.counts;
        let mut text = format!(
            "Learned from the repository{}.\n",
            if self.dry_run {
                " (a dry run: nothing written)"
            } else {
                ""
            }
        );
        text.push_str(&format!(
            "  decision records: {} read, {} decisions\n  guides: {} read, {} sections\n  history: {} commits, {} reverts, {} re-fixes, {} risky modules\n",
            c.decision_records, c.decisions, c.guides, c.guide_sections, c.commits, c.reverts, c.refixes, c.risky_modules
        ));
        if let Some(file) = &self.codeowners {
            text.push_str(&format!(
                "  {file}: {} rules (owners shown by expand and review, not learned)\n",
                c.codeowners_rules
            ));
        }
        if !self.proposed.is_empty() {
            text.push_str(&proposals_heading(self.dry_run, ""));
            for p in self.proposed.iter().take(PROPOSALS_LISTED) {
                let state = proposal_state(p.event, p.id.as_deref());
                text.push_str(&format!("  [{}]{state} {}\n", p.kind, cut(&p.content, 240)));
            }
            if self.proposed.len() > PROPOSALS_LISTED {
                text.push_str(&format!(
                    "  … {} more (see --json, or the pending list)\n",
                    self.proposed.len() - PROPOSALS_LISTED
                ));
            }
        }
        if !self.skipped.is_empty() {
            text.push_str(&format!("Skipped {}:\n", self.skipped.len()));
            for s in self.skipped.iter().take(SKIPPED_LISTED) {
                text.push_str(&format!("  {}: {}\n", s.item, s.why));
            }
            if self.skipped.len() > SKIPPED_LISTED {
                text.push_str(&format!(
                    "  … {} more (see --json)\n",
                    self.skipped.len() - SKIPPED_LISTED
                ));
            }
        }
        if !self.redacted.is_empty() {
            let kinds: Vec<&str> = self.redacted.iter().copied().collect();
            text.push_str(&format!("Secrets removed: {}\n", kinds.join(", ")));
        }
        text
    }
}
