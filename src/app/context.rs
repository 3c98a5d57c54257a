//! The code graph's answers: the context pack, and the expansion of one file, symbol or
//! memory.

use serde::Serialize;

use super::{AskError, Cairn};
use crate::answer;
use crate::context::{self, ContextReport, ExpandReport, Include, MemoryNote, Scorer};
use crate::fsutil::repo::{Limit, RepoFiles};
use crate::graph::{Node, NodeKind};
use crate::history::History;
use crate::memory::{self, Memory};

/// What `context` answers for: paths or a task sentence to rank first, and a token budget.
#[derive(Debug, Clone, Default)]
pub struct ContextRequest {
    pub focus: Option<String>,
    pub max_tokens: Option<usize>,
}

/// What to expand: `path`, `path::Symbol`, `path::Class.method` or a memory id; the sections
/// to include (none: all but source) and a token budget.
#[derive(Debug, Clone, Default)]
pub struct ExpandRequest {
    pub target: String,
    pub include: Vec<Include>,
    pub max_tokens: Option<usize>,
}

/// An expansion: of code, or of one memory (its JSON is the report or the memory itself).
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub enum Expanded {
    Code(ExpandReport),
    Memory(Memory),
}

impl Cairn {
    /// The context pack: a ranked picture of the repository (`get_context`, `cairn context`).
    pub async fn context(&self, request: ContextRequest) -> Result<ContextReport, AskError> {
        let focus = request.focus.as_deref();
        let (budget, note) = answer::budget(request.max_tokens, context::DEFAULT_CONTEXT_TOKENS)?;
        let snapshot = self.snapshot().await?;
        let freshness = self.freshness(&snapshot).await;
        let access = self.access();
        // A pack reads only the nodes it shows: through the graph's standing, and with a
        // focus through its lexicon too.
        let mut scorer = Scorer::new(&snapshot.graph, &access, crate::clock::now())
            .with_standing(snapshot.standing());
        if focus.is_some_and(|f| !f.trim().is_empty()) {
            scorer = scorer.with_lexicon(snapshot.lexicon());
        }
        let mut notes: Vec<String> = note.into_iter().collect();
        let history = self.commit_history(&snapshot).await;
        let (memories, matched) = match self.top_memories(focus, &history).await {
            Ok(found) => found,
            Err(error) => {
                notes.push(format!("memories unavailable: {error}"));
                (Vec::new(), 0)
            }
        };
        // What the memories that match the focus are anchored on is part of the focus (not
        // the anchors of an organisation memory in another repository: its files are there).
        let memory_anchors: Vec<String> = memories[..matched]
            .iter()
            .filter(|m| m.origin.is_none())
            .flat_map(|m| m.anchors.iter().cloned())
            .collect();
        let report = context::context(
            &scorer,
            &self.repo.name(),
            freshness,
            context::FocusRequest {
                text: focus,
                memory_anchors: &memory_anchors,
            },
            &memories,
            budget,
            notes,
        );
        self.count_shown(&report.text).await;
        Ok(report)
    }

    /// Everything about one file or symbol, or one memory in full when the target is a memory
    /// id (`expand`, `cairn expand`).
    pub async fn expand(&self, request: ExpandRequest) -> Result<Expanded, AskError> {
        let target = request.target.trim();
        if memory::model::is_memory_id(target) {
            let found = self.memory_by_id(target).await?;
            // A memory no person approved is never served.
            if !found.status.is_approved() {
                return Err(memory::MemoryError::Invalid(format!(
                    "{target} is {}: cairn serves a memory only once a person approves it",
                    found.status
                ))
                .into());
            }
            self.count_shown(&found.id).await;
            return Ok(Expanded::Memory(found));
        }
        let code = self
            .expand_code(&request.target, &request.include, request.max_tokens)
            .await?;
        self.count_shown(&code.text).await;
        Ok(Expanded::Code(code))
    }

    async fn expand_code(
        &self,
        target: &str,
        include: &[Include],
        max_tokens: Option<usize>,
    ) -> Result<ExpandReport, AskError> {
        let (budget, note) = answer::budget(max_tokens, context::DEFAULT_EXPAND_TOKENS)?;
        let snapshot = self.snapshot().await?;
        let node = context::resolve_target(&snapshot.graph, target)?;
        let access = self.access();
        let scorer = Scorer::new(&snapshot.graph, &access, crate::clock::now());
        let files = RepoFiles::open(&self.repo.root).ok();
        let limit = Limit::source(self.repo.settings.index.max_file_bytes);
        let read = move |node: &Node| read_node_source(files.as_ref()?, limit, node);
        let mut notes: Vec<String> = note.into_iter().collect();
        let wants_memories = include.is_empty() || include.contains(&Include::Memories);
        let memories = if wants_memories {
            let mut symbols = vec![node.id.to_string()];
            let mut parent = node.parent.as_deref();
            while let Some(id) = parent {
                symbols.push(id.to_string());
                parent = snapshot.graph.node(id).and_then(|n| n.parent.as_deref());
            }
            let paths = vec![node.path.to_string()];
            match self.anchored_scopes(&paths, &symbols).await {
                Ok(found) => {
                    let history = self.commit_history(&snapshot).await;
                    found
                        .iter()
                        .take(20)
                        .map(|m| self.checked_note(m, &history))
                        .collect()
                }
                Err(error) => {
                    notes.push(format!("memories unavailable: {error}"));
                    Vec::new()
                }
            }
        } else {
            Vec::new()
        };
        let history = if include.is_empty() || include.contains(&Include::History) {
            let history = self.commit_history(&snapshot).await;
            let owners = self.owners_of(&node.path);
            owners
                .map(|o| format!("- owners: {}", o.describe()))
                .into_iter()
                .chain(file_history(&history, &node.path))
                .collect()
        } else {
            Vec::new()
        };
        Ok(context::expand(
            &scorer,
            node,
            include,
            context::Known {
                memories: &memories,
                history: &history,
            },
            budget,
            &read,
            notes,
        ))
    }

    /// The project memories the context pack shows: those matching the focus first, then the
    /// standing ones (by type, confidence, use and age); with how many of them match the focus.
    async fn top_memories(
        &self,
        focus: Option<&str>,
        history: &History,
    ) -> Result<(Vec<MemoryNote>, usize), AskError> {
        const SHOWN: usize = 12;
        let mut found = Vec::new();
        if let Some(focus) = focus.filter(|f| !f.trim().is_empty()) {
            found = self
                .search_scopes(&memory::Query {
                    text: focus.to_string(),
                    limit: SHOWN / 2,
                    keyword_only: true,
                    // Counted once shown (`count_shown`), not as searched.
                    browsing: true,
                    ..memory::Query::default()
                })
                .await?;
        }
        let matched = found.len();
        let standing = self
            .search_scopes(&memory::Query {
                limit: SHOWN,
                browsing: true,
                ..memory::Query::default()
            })
            .await?;
        for f in standing {
            if found.len() >= SHOWN {
                break;
            }
            if !found.iter().any(|g| g.memory.id == f.memory.id) {
                found.push(f);
            }
        }
        Ok((
            found
                .iter()
                .map(|f| self.checked_note(&f.memory, history))
                .collect(),
            matched,
        ))
    }
}

/// A file's experts and latest commits, one line each, for `expand` (after its owners).
fn file_history(history: &History, path: &str) -> Vec<String> {
    let mut lines = Vec::new();
    let experts = history.experts(path, crate::clock::now(), 3);
    if !experts.is_empty() {
        lines.push(format!(
            "- experts: {}",
            experts
                .iter()
                .map(|e| format!(
                    "{} ({} commits, last {})",
                    e.author,
                    e.commits,
                    crate::clock::date_of(e.last)
                ))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    if let Some(fixes) = history.is_fix_prone(path) {
        lines.push(format!(
            "- fix-prone: {} of {} commits were fixes or reverts",
            fixes.fixes, fixes.commits
        ));
    }
    for partner in history.co_changes(path, 3, 0.3).into_iter().take(3) {
        lines.push(format!(
            "- usually changes with {} ({} commits)",
            partner.path, partner.support
        ));
    }
    for c in history.commits_of(path).into_iter().take(3) {
        lines.push(format!(
            "- {} {} {}: {}",
            &c.id[..c.id.len().min(10)],
            crate::clock::date_of(c.time),
            c.author,
            c.summary
        ));
    }
    lines
}

/// The lines of a node as they are on disk now, if the file still reads.
fn read_node_source(files: &RepoFiles, limit: Limit, node: &Node) -> Option<String> {
    if node.kind == NodeKind::External {
        return None;
    }
    let text = files.text(&node.path, limit).ok()?;
    let start = node.start_line.max(1) as usize - 1;
    let count = (node.end_line as usize + 1).saturating_sub(node.start_line.max(1) as usize);
    Some(
        text.lines()
            .skip(start)
            .take(count)
            .collect::<Vec<_>>()
            .join("\n"),
    )
}
