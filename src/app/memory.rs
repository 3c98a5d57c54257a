//! The review memory's use cases: remember, forget, search, list, show, history, share,
//! export and import.

use serde::Serialize;

use super::{AskError, Cairn, note_of};
use crate::context::{self, MemoryNote};
use crate::memory::{self, ExportRecord, Found, ImportReport, Memory, MemoryType, WriteOutcome};
use crate::tokens;

/// Most memories a `forget` answer lists.
pub const LISTED: usize = 50;
/// Default token budget of a memory search answer.
pub const DEFAULT_SEARCH_TOKENS: usize = 2_000;
/// How many memories a search returns unless asked for another number.
const DEFAULT_SEARCH_LIMIT: usize = 10;

/// A learning to store.
#[derive(Debug, Clone, Default)]
pub struct RememberRequest {
    /// A memory type: `project_pattern`, `decision`, `developer_pattern`, …
    pub kind: String,
    /// The learning, 1–3 sentences.
    pub content: String,
    pub title: Option<String>,
    /// Required for developer-scoped types and contributor profiles.
    pub developer: Option<String>,
    pub paths: Vec<String>,
    pub symbols: Vec<String>,
    /// Id of the memory this one replaces.
    pub supersedes: Option<String>,
    /// `review`, `manual`, `import` or `hook` (default manual).
    pub source: Option<String>,
    /// PR, commit or review id.
    pub source_ref: Option<String>,
    pub org: Option<String>,
    pub agent: Option<String>,
    pub run: Option<String>,
    /// Who writes: the user, or `mcp` for an assistant.
    pub written_by: Option<String>,
}

/// What to forget: one memory by id, or every live memory matching a filter (listed unless
/// `confirm` is the number of matches).
#[derive(Debug, Clone, Default)]
pub struct ForgetRequest {
    pub id: Option<String>,
    pub kind: Option<String>,
    pub path: Option<String>,
    pub developer: Option<String>,
    pub confirm: Option<usize>,
}

/// A memory search: project memories, or one developer's (with their profile) when
/// `developer` is given.
#[derive(Debug, Clone, Default)]
pub struct SearchRequest {
    pub text: String,
    pub developer: Option<String>,
    /// Memory types to keep.
    pub types: Vec<String>,
    /// Paths to favour.
    pub paths: Vec<String>,
    /// Default 10, at most 100.
    pub limit: Option<usize>,
    pub include_superseded: bool,
    /// Token budget of the answer (default 2,000, at most 16,000).
    pub max_tokens: Option<usize>,
}

/// Which memories to list, newest first.
#[derive(Debug, Clone, Default)]
pub struct ListRequest {
    pub kind: Option<String>,
    pub developer: Option<String>,
    /// Superseded memories too.
    pub all: bool,
}

/// One memory, by id (show, history, share).
#[derive(Debug, Clone, Default)]
pub struct MemoryRequest {
    pub id: String,
}

/// Every memory, for a backup or another repository.
#[derive(Debug, Clone, Default)]
pub struct ExportRequest {}

/// Memories to restore or seed, as JSON Lines (one exported memory a line).
#[derive(Debug, Clone, Default)]
pub struct ImportRequest {
    pub jsonl: String,
}

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
            let cost = tokens::count(&super::render::memory_line(&f.memory)) + 1;
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
    note_of(&memory)
}

/// What `forget` removed (or, unconfirmed, would remove).
#[derive(Debug, Serialize)]
pub struct Forgotten {
    pub confirmed: bool,
    /// How many matched (the listing shows at most 50).
    pub total: usize,
    pub memories: Vec<MemoryNote>,
}

/// Memories, newest first.
#[derive(Debug, Serialize)]
#[serde(transparent)]
pub struct MemoryList(pub Vec<Memory>);

/// A memory with its change history (its JSON is the memory).
#[derive(Debug, Serialize)]
#[serde(transparent)]
pub struct MemoryHistory(pub Memory);

/// A developer memory shared with the team.
#[derive(Debug, Serialize)]
pub struct Shared {
    pub memory: Memory,
    /// Team mode is on: sharing takes effect now (otherwise when the repository joins a team).
    pub team: bool,
}

/// Every memory with its vector, one JSON line each.
#[derive(Debug, Serialize)]
#[serde(transparent)]
pub struct Exported(pub Vec<ExportRecord>);

impl Exported {
    /// The export as JSON Lines.
    pub fn jsonl(&self) -> Result<String, serde_json::Error> {
        let mut text = String::new();
        for record in &self.0 {
            text.push_str(&serde_json::to_string(record)?);
            text.push('\n');
        }
        Ok(text)
    }
}

impl Cairn {
    /// Stores a learning (deduplicated, secrets redacted), its anchors checked against the
    /// code graph when there is one; its vector is computed after answering.
    pub async fn remember(&self, request: RememberRequest) -> Result<WriteOutcome, AskError> {
        let new = memory::NewMemory {
            kind: Some(request.kind.parse::<MemoryType>()?),
            title: request.title,
            content: request.content,
            developer: request.developer,
            paths: request.paths,
            symbols: request.symbols,
            supersedes: request.supersedes,
            source: match request.source.as_deref() {
                Some(source) => source.parse()?,
                None => memory::Source::Manual,
            },
            source_ref: request.source_ref,
            org: request.org,
            agent: request.agent,
            run: request.run,
            written_by: request.written_by,
            category: None,
        };
        let snapshot = self.graph_if_indexed().await;
        let outcome = self
            .memories
            .remember(new, snapshot.as_ref().map(|s| &*s.graph))
            .await?;
        self.queue_embedding();
        Ok(outcome)
    }

    /// Removes a memory by id, or lists the memories a filter matches and removes them when
    /// `confirm` is their number.
    pub async fn forget(&self, request: ForgetRequest) -> Result<Forgotten, AskError> {
        if let Some(id) = request.id.as_deref().filter(|id| !id.trim().is_empty()) {
            let removed = self.memories.forget(id).await?;
            return Ok(Forgotten {
                confirmed: true,
                total: 1,
                memories: vec![brief(removed)],
            });
        }
        let kind = request
            .kind
            .as_deref()
            .map(str::parse::<MemoryType>)
            .transpose()?;
        let developer = request
            .developer
            .as_deref()
            .map(memory::model::developer_id)
            .transpose()?;
        let path = request
            .path
            .as_deref()
            .map(|p| {
                context::normalise(p).ok_or_else(|| {
                    memory::MemoryError::Invalid(format!("path `{p}` is outside the repository"))
                })
            })
            .transpose()?;
        if kind.is_none() && developer.is_none() && path.is_none() {
            return Err(memory::MemoryError::Invalid(
                "pass an `id`, or a filter (`type`, `path`, `developer`)".to_string(),
            )
            .into());
        }
        let matches: Vec<Memory> = self
            .memories
            .all()
            .await?
            .into_iter()
            // Another developer's memories are only reachable through their developer.
            .filter(|m| developer.is_some() || !m.kind.developer_scoped())
            .filter(|m| kind.is_none_or(|k| m.kind == k))
            .filter(|m| developer.is_none() || m.developer == developer)
            .filter(|m| {
                path.as_ref().is_none_or(|p| {
                    m.paths
                        .iter()
                        .any(|q| q == p || q.starts_with(&format!("{p}/")))
                })
            })
            .collect();
        let total = matches.len();
        let Some(confirmed) = request.confirm else {
            let mut listed = matches;
            listed.truncate(LISTED);
            return Ok(Forgotten {
                confirmed: false,
                total,
                memories: listed.into_iter().map(brief).collect(),
            });
        };
        if confirmed != total {
            return Err(memory::MemoryError::Invalid(format!(
                "confirm={confirmed} but the filter matches {total} memories now: nothing was removed; list them again and confirm with their number"
            ))
            .into());
        }
        let ids: Vec<String> = matches.into_iter().map(|m| m.id).collect();
        let mut removed: Vec<MemoryNote> = self
            .memories
            .forget_many(&ids)
            .await?
            .into_iter()
            .map(brief)
            .collect();
        removed.truncate(LISTED);
        Ok(Forgotten {
            confirmed: true,
            total,
            memories: removed,
        })
    }

    /// Searches the project's memories, or one developer's with their profile (shown as the
    /// profile, not again among the results). Anchors the code no longer has are flagged;
    /// read statistics are written back later.
    pub async fn search_memories(&self, request: SearchRequest) -> Result<SearchAnswer, AskError> {
        let profile = match &request.developer {
            Some(developer) => self.memories.profile(developer).await?,
            None => None,
        };
        let types = request
            .types
            .iter()
            .map(|t| t.parse::<MemoryType>())
            .collect::<Result<Vec<_>, _>>()?;
        let mut found = self
            .memories
            .search(&memory::Query {
                text: request.text,
                developer: request.developer,
                types,
                paths: request.paths,
                limit: request.limit.unwrap_or(DEFAULT_SEARCH_LIMIT),
                include_superseded: request.include_superseded,
                keyword_only: false,
            })
            .await?;
        self.note_reads();
        if let Some(profile) = &profile {
            found.retain(|f| f.memory.id != profile.id);
        }
        self.flag_gone_anchors(&mut found).await;
        let note = self.memories.staleness().await;
        Ok(SearchAnswer::within(profile, found, request.max_tokens)?.with_note(note))
    }

    /// Memories, newest first, of one type or developer if asked.
    pub async fn list(&self, request: ListRequest) -> Result<MemoryList, AskError> {
        let kind = request
            .kind
            .as_deref()
            .map(str::parse::<MemoryType>)
            .transpose()?;
        let developer = request
            .developer
            .as_deref()
            .map(memory::model::developer_id)
            .transpose()?;
        let mut listed: Vec<Memory> = self
            .memories
            .all()
            .await?
            .into_iter()
            .filter(|m| request.all || m.is_live())
            .filter(|m| kind.is_none_or(|k| m.kind == k))
            .filter(|m| developer.is_none() || m.developer == developer)
            .collect();
        listed.reverse();
        Ok(MemoryList(listed))
    }

    /// One memory, live or superseded.
    pub async fn show(&self, request: MemoryRequest) -> Result<Memory, AskError> {
        Ok(self.memories.get(&request.id).await?)
    }

    /// One memory and the texts it had before.
    pub async fn memory_history(&self, request: MemoryRequest) -> Result<MemoryHistory, AskError> {
        Ok(MemoryHistory(self.memories.get(&request.id).await?))
    }

    /// Shares one of the developer's memories with the team.
    pub async fn share(&self, request: MemoryRequest) -> Result<Shared, AskError> {
        let memory = self.memories.share(&request.id).await?;
        Ok(Shared {
            memory,
            team: self.memories.team().is_some(),
        })
    }

    /// Every memory with its vector.
    pub async fn export(&self, _request: ExportRequest) -> Result<Exported, AskError> {
        Ok(Exported(self.memories.export().await?))
    }

    /// Restores exported memories (all lines valid or nothing written); vectors of those
    /// without one are computed after answering.
    pub async fn import(&self, request: ImportRequest) -> Result<ImportReport, AskError> {
        let records = memory::parse_jsonl(&request.jsonl)?;
        let report = self.memories.import(records).await?;
        self.queue_embedding();
        Ok(report)
    }

    /// Flags anchors of found memories that the current graph no longer has (the file was
    /// deleted or moved): memories are flagged, never dropped, when their anchor disappears.
    async fn flag_gone_anchors(&self, found: &mut [Found]) {
        let Some(snapshot) = self.graph_if_indexed().await else {
            return;
        };
        let graph = &snapshot.graph;
        for m in found.iter_mut().map(|f| &mut f.memory) {
            let gone: Vec<String> = m
                .paths
                .iter()
                .filter(|p| {
                    graph.node(p).is_none()
                        && !graph.files().any(|f| f.path.starts_with(&format!("{p}/")))
                })
                .chain(m.symbols.iter().filter(|s| graph.node(s).is_none()))
                .filter(|a| !m.unknown_anchors.contains(a))
                .cloned()
                .collect();
            m.unknown_anchors.extend(gone);
        }
    }
}
