//! The review memory's use cases: remember, forget, search, list, show, history, share,
//! export and import.

use std::sync::Arc;

use serde::Serialize;

use super::render::memory_line_from;
use super::{AskError, Cairn};
use crate::answer::{self, Answer, LeftOut, Page};
use crate::context::{self, MemoryNote};
use crate::memory::{
    self, ExportRecord, Found, ImportReport, Memories, Memory, MemoryError, MemoryType, Scope,
    Source, WriteOutcome,
};
use crate::tokens;

/// Most memories a `forget` answer lists.
pub(crate) const LISTED: usize = 50;
/// Default token budget of a memory search answer.
pub(crate) const DEFAULT_SEARCH_TOKENS: usize = 2_000;
/// How many memories a search returns unless asked for another number.
const DEFAULT_SEARCH_LIMIT: usize = 10;

/// The memory types that default to the organisation's memories. The organisation's store is
/// read by every repository of the organisation (on a team server, by the whole team), so a
/// repository's `cairn.toml`, its authors' text, may narrow the list but never widen it: the
/// user's own `[memory] org_types` (`~/.config/cairn/config.toml`), else the default
/// ([`memory::model::DEFAULT_ORG_TYPES`]), is the most it may ask for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OrgTypes {
    /// The types that default to the organisation.
    pub types: Vec<MemoryType>,
    /// Types the repository asked for that the user's configuration does not allow: ignored.
    pub refused: Vec<MemoryType>,
}

impl OrgTypes {
    /// The list `repository` asks for (`None`: the user's), within what `user` allows
    /// (`None`: the default list).
    pub fn resolve(
        repository: Option<&[String]>,
        user: Option<&[String]>,
    ) -> Result<OrgTypes, MemoryError> {
        let allowed = match user {
            Some(names) => parse_types(names, "the user's config.toml")?,
            None => memory::model::DEFAULT_ORG_TYPES.to_vec(),
        };
        let Some(names) = repository else {
            return Ok(OrgTypes {
                types: allowed,
                refused: Vec::new(),
            });
        };
        let (types, refused) = parse_types(names, "cairn.toml")?
            .into_iter()
            .partition(|kind| allowed.contains(kind));
        Ok(OrgTypes { types, refused })
    }
}

/// `[memory] org_types` as types; `file` names the file in the error.
fn parse_types(names: &[String], file: &str) -> Result<Vec<MemoryType>, MemoryError> {
    let mut types = Vec::new();
    for name in names {
        let kind = name
            .parse::<MemoryType>()
            .map_err(|e| MemoryError::Invalid(format!("{file} [memory] org_types: {e}")))?;
        if !types.contains(&kind) {
            types.push(kind);
        }
    }
    Ok(types)
}

/// A learning to store: the one write request the command line, MCP, mem0 clients and the
/// framework seeds map into, its labels already parsed.
#[derive(Debug, Clone)]
pub struct RememberRequest {
    pub kind: MemoryType,
    /// The learning, 1–3 sentences.
    pub content: String,
    pub title: Option<String>,
    /// Required for developer-scoped types and contributor profiles.
    pub developer: Option<String>,
    pub paths: Vec<String>,
    pub symbols: Vec<String>,
    /// Id of the memory this one replaces.
    pub supersedes: Option<String>,
    pub source: Source,
    /// PR, commit or review id.
    pub source_ref: Option<String>,
    pub org: Option<String>,
    pub agent: Option<String>,
    pub run: Option<String>,
    /// Who writes: the user, or `mcp` for an assistant.
    pub written_by: Option<String>,
    /// The files it applies to, a gitignore-style glob (rejection patterns and framework
    /// knowledge).
    pub file_pattern: Option<String>,
    /// The store asked for; `None`: by type (`[memory] org_types`).
    pub scope: Option<Scope>,
    /// Written by an assistant: it waits for approval when `[memory] approval` gates its
    /// type. A person's write (the command line, the pages) is never gated.
    pub by_assistant: bool,
    /// The writer's own keys and values, kept and filterable.
    pub metadata: memory::model::Metadata,
}

impl RememberRequest {
    /// A learning of `kind` with nothing else set (a person's, manual, scoped by type).
    pub fn new(kind: MemoryType, content: String) -> RememberRequest {
        RememberRequest {
            kind,
            content,
            title: None,
            developer: None,
            paths: Vec::new(),
            symbols: Vec::new(),
            supersedes: None,
            source: Source::Manual,
            source_ref: None,
            org: None,
            agent: None,
            run: None,
            written_by: None,
            file_pattern: None,
            scope: None,
            by_assistant: false,
            metadata: Default::default(),
        }
    }
}

/// The labels of a write as an edge receives them, parsed in the order their errors are
/// reported: the type, then the source (`None`: manual), then the scope.
pub fn write_labels(
    kind: &str,
    source: Option<&str>,
    scope: Option<&str>,
) -> Result<WriteLabels, AskError> {
    Ok(WriteLabels {
        kind: kind.parse()?,
        source: source.map(str::parse).transpose()?.unwrap_or_default(),
        scope: scope.map(str::parse).transpose()?,
    })
}

/// The memory type a listing or a forget asks for as an edge receives it (`None`: any),
/// parsed.
pub fn asked_type(kind: Option<&str>) -> Result<Option<MemoryType>, AskError> {
    Ok(kind.map(str::parse).transpose()?)
}

/// A write's type, source and scope, parsed from text.
#[derive(Debug, Clone, Copy)]
pub struct WriteLabels {
    pub kind: MemoryType,
    pub source: Source,
    pub scope: Option<Scope>,
}

/// What to forget: one memory by id, or every live memory matching a filter (listed unless
/// `confirm` is the number of matches).
#[derive(Debug, Clone, Default)]
pub struct ForgetRequest {
    pub id: Option<String>,
    pub kind: Option<MemoryType>,
    pub path: Option<String>,
    pub developer: Option<String>,
    pub confirm: Option<usize>,
}

/// A type and a developer a listing or a forget asks for, the developer normalised.
struct TypeAndDeveloper {
    kind: Option<MemoryType>,
    developer: Option<String>,
}

impl TypeAndDeveloper {
    fn parse(
        kind: Option<MemoryType>,
        developer: Option<&str>,
    ) -> Result<TypeAndDeveloper, AskError> {
        Ok(TypeAndDeveloper {
            kind,
            developer: developer.map(memory::model::developer_id).transpose()?,
        })
    }

    /// Of the type and the developer asked for (each when asked).
    fn matches(&self, m: &Memory) -> bool {
        self.kind.is_none_or(|k| m.kind == k)
            && (self.developer.is_none() || m.owner.developer == self.developer)
    }
}

/// The memories a forget by filter matches: every filter given must match.
struct ForgetFilter {
    asked: TypeAndDeveloper,
    path: Option<String>,
}

impl ForgetFilter {
    /// The request's filter, checked; refused when it names none.
    fn of(request: &ForgetRequest) -> Result<ForgetFilter, AskError> {
        let asked = TypeAndDeveloper::parse(request.kind, request.developer.as_deref())?;
        let path = request
            .path
            .as_deref()
            .map(|p| {
                context::normalise(p).ok_or_else(|| {
                    memory::MemoryError::Invalid(format!(
                        "path {} is outside the repository",
                        crate::secrets::quoted(p)
                    ))
                })
            })
            .transpose()?;
        if asked.kind.is_none() && asked.developer.is_none() && path.is_none() {
            return Err(memory::MemoryError::Invalid(
                "pass an `id`, or a filter (`type`, `path`, `developer`)".to_string(),
            )
            .into());
        }
        Ok(ForgetFilter { asked, path })
    }

    /// Whether the filter takes memory `m`, read by the repository `here`: a path names this
    /// repository's files, never those of an organisation memory written elsewhere.
    fn matches(&self, m: &Memory, here: Option<&str>) -> bool {
        // Another developer's memories are only reachable through their developer.
        (self.asked.developer.is_some() || !m.kind.developer_scoped())
            && self.asked.matches(m)
            && self.path.as_ref().is_none_or(|p| {
                !m.anchored_elsewhere(here)
                    && m.anchors
                        .paths
                        .iter()
                        .any(|q| q == p || q.starts_with(&format!("{p}/")))
            })
    }
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
    /// A person browsing the page: what it shows is not counted as read (reads are what
    /// assistants and commands were served).
    pub browsing: bool,
}

/// Which memories to list, newest first.
#[derive(Debug, Clone, Default)]
pub struct ListRequest {
    pub kind: Option<MemoryType>,
    pub developer: Option<String>,
    /// Superseded, pending and rejected memories too.
    pub all: bool,
    /// Only the memories waiting for approval.
    pub pending: bool,
}

/// A person's decision about a pending memory.
#[derive(Debug, Clone, Default)]
pub struct DecideRequest {
    pub id: String,
    /// Who decides (recorded in the memory's history).
    pub by: Option<String>,
    /// Why it was rejected (kept in the history).
    pub reason: Option<String>,
}

/// What an approval or rejection changed: the decided memory, and for an approval the memory
/// it superseded.
#[derive(Debug, Serialize)]
pub struct Decided {
    pub memory: Memory,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub superseded: Option<String>,
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

/// What a search found: the profile (developer searches) and the memories that fit.
#[derive(Debug, Serialize)]
pub struct SearchBody {
    /// The developer's live contributor profile (developer searches only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub profile: Option<Memory>,
    /// Best first; histories are left out (`cairn memory history` shows them).
    pub memories: Vec<Found>,
}

/// What a search answers. In team mode, its first note says when the team server is away and
/// the answer comes from the last synced copy.
pub type SearchAnswer = Answer<SearchBody>;

const LEFT_OUT: LeftOut = LeftOut {
    unit: "more memories",
    advice: "; raise max_tokens or narrow the query",
};

/// The answer within `max_tokens` (default 2,000; capped at 16,000): the staleness note
/// first, the profile, then as many memories as fit, best first — always at least one.
fn search_answer(
    profile: Option<Memory>,
    mut found: Vec<Found>,
    max_tokens: Option<usize>,
    staleness: Option<String>,
    scopes: Scopes,
) -> Result<SearchAnswer, AskError> {
    let (max_tokens, capped) = answer::budget(max_tokens, DEFAULT_SEARCH_TOKENS)?;
    let mut page = Page::new(max_tokens, capped.into_iter().collect());
    if let Some(staleness) = staleness {
        page.lead(staleness);
    }
    let profile = profile.map(without_history);
    if let Some(profile) = &profile {
        page.force(format!(
            "## Profile of @{}",
            profile.owner.developer.as_deref().unwrap_or("?")
        ));
        page.force(profile.content.clone());
    }
    if found.is_empty() {
        page.force("no matching memories");
    } else {
        let lines: Vec<String> = found.iter().map(|f| found_line(f, &scopes)).collect();
        let header = |shown: usize| format!("{shown} memories");
        let room = page
            .remaining()
            .saturating_sub(tokens::count(&header(lines.len())) + 1);
        let shown = fitting(&lines, room);
        page.dropped += lines.len() - shown;
        page.force(header(shown));
        for line in lines.into_iter().take(shown) {
            page.force(line);
        }
        found.truncate(shown);
        for f in &mut found {
            f.memory.history.clear();
        }
    }
    let body = SearchBody {
        profile,
        memories: found,
    };
    Ok(page.finish(body, LEFT_OUT))
}

/// Which stores a search read: the repository's alone, or the organisation's too (read by
/// the repository `here`).
#[derive(Debug, Clone, Default)]
struct Scopes {
    both: bool,
    here: Option<String>,
}

/// A found memory's line: as listed (with the origin of anchors in another repository), its
/// scope when the search read both, then whether its code changed since.
fn found_line(found: &Found, scopes: &Scopes) -> String {
    let origin = found.memory.anchors_from(scopes.here.as_deref());
    let mut line = memory_line_from(&found.memory, origin);
    if scopes.both {
        line.push_str(&format!(" · {}", found.memory.scope.label()));
    }
    if let Some(changed) = &found.code_changed_since {
        line.push_str(&format!(" · {}", changed.fact()));
    }
    line
}

/// How many of `lines`, in order, fit in `room` tokens — at least one.
fn fitting(lines: &[String], mut room: usize) -> usize {
    let mut shown = 0;
    for line in lines {
        let cost = tokens::count(line) + 1;
        if shown > 0 && cost > room {
            break;
        }
        room = room.saturating_sub(cost);
        shown += 1;
    }
    shown
}

fn without_history(mut memory: Memory) -> Memory {
    memory.history.clear();
    memory
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
        let by_assistant = request.by_assistant;
        let (mut new, asked) = self.new_memory(request)?;
        if by_assistant {
            self.wait_as_it_did(&mut new).await;
        }
        self.write_memory(new, asked).await
    }

    /// An assistant's write that replaces a memory still waiting for a person (a proposal
    /// it phrased, say) waits too, with the evidence the person decides on: the replaced
    /// memory's metadata keys the write does not set, its category and file pattern.
    async fn wait_as_it_did(&self, new: &mut memory::NewMemory) {
        let Some(id) = new.supersedes.as_deref().map(str::trim) else {
            return;
        };
        let Ok(old) = self.memory_by_id(id).await else {
            return;
        };
        if old.status != memory::Status::Pending {
            return;
        }
        new.pending = true;
        for (key, value) in old.metadata {
            new.metadata.entry(key).or_insert(value);
        }
        if new.file_pattern.is_none() {
            new.file_pattern = old.rule.file_pattern;
        }
        if new.category.is_none() {
            new.category = old.rule.category;
        }
    }

    /// The write a request asks for, and the scope it names; the approval gate applied.
    pub(super) fn new_memory(
        &self,
        request: RememberRequest,
    ) -> Result<(memory::NewMemory, Option<Scope>), AskError> {
        let new = memory::NewMemory {
            kind: Some(request.kind),
            title: request.title,
            content: request.content,
            developer: request.developer,
            paths: request.paths,
            symbols: request.symbols,
            supersedes: request.supersedes,
            source: request.source,
            source_ref: request.source_ref,
            org: request.org,
            agent: request.agent,
            run: request.run,
            metadata: request.metadata,
            written_by: request.written_by,
            category: None,
            file_pattern: request.file_pattern,
            scope: Scope::Repository,
            origin: None,
            pending: false,
            refuse_secrets: false,
        };
        let asked = request.scope;
        let pending = request.by_assistant && self.approval()?.gates(request.kind);
        Ok((memory::NewMemory { pending, ..new }, asked))
    }

    /// The one write path of every memory a person or an assistant writes: the scope
    /// resolved (the one `asked`, else the type's default), the write decided against that
    /// store with the other scope's checked first; its vector is computed after answering.
    pub(super) async fn write_memory(
        &self,
        new: memory::NewMemory,
        asked: Option<Scope>,
    ) -> Result<WriteOutcome, AskError> {
        let kind = new
            .kind
            .ok_or_else(|| MemoryError::Invalid("`type` is required".to_string()))?;
        let (scope, note) = self.scope_of(kind, new.file_pattern.as_deref(), asked)?;
        let new = memory::NewMemory { scope, ..new };
        let snapshot = self.graph_if_indexed().await;
        let graph = snapshot.as_ref().map(|s| &*s.graph);
        let org = self.org_memories().ok();
        let mut outcome = match (scope, org) {
            (Scope::Org, Some(org)) => {
                org.remember_beside(new, graph, Some(&self.memories))
                    .await?
            }
            (_, org) => {
                self.memories
                    .remember_beside(new, graph, org.map(|o| &**o))
                    .await?
            }
        };
        outcome.notes.extend(note);
        self.queue_embedding();
        Ok(outcome)
    }

    /// The memory types that default to the organisation's scope (`[memory] org_types`).
    pub(super) fn org_types(&self) -> Result<Vec<MemoryType>, MemoryError> {
        self.org_scope().map(|scope| scope.types)
    }

    /// Which memory types default to the organisation's scope, and which the repository's
    /// `cairn.toml` asked for beyond what the user allows (ignored).
    pub fn org_scope(&self) -> Result<OrgTypes, MemoryError> {
        OrgTypes::resolve(
            self.repo.settings.memory.org_types.as_deref(),
            self.repo.user.memory.org_types.as_deref(),
        )
    }

    /// Which assistant-written memories wait for approval: the user's `[memory] approval`
    /// and the repository's together (a repository can add to the user's gate, never lift
    /// it). A value that does not parse fails the write: the gate is never silently off.
    pub fn approval(&self) -> Result<memory::Approval, MemoryError> {
        let read = |setting: &Option<crate::config::ApprovalSetting>, file: &str| {
            setting
                .as_ref()
                .map(memory::Approval::parse)
                .transpose()
                .map(Option::unwrap_or_default)
                .map_err(|e| MemoryError::Invalid(format!("{file} [memory] approval: {e}")))
        };
        let user = read(&self.repo.user.memory.approval, "the user's config.toml")?;
        let repository = read(&self.repo.settings.memory.approval, "cairn.toml")?;
        Ok(user.union(repository))
    }

    /// The scope a write goes to: the one it asks for, else its type's default; the
    /// repository's, with a note, when the organisation's memories are unavailable or only
    /// the repository's `cairn.toml` (not the user) would have sent it there.
    pub(super) fn scope_of(
        &self,
        kind: MemoryType,
        file_pattern: Option<&str>,
        asked: Option<Scope>,
    ) -> Result<(Scope, Option<String>), MemoryError> {
        let scope = match asked {
            Some(scope) => scope,
            None => {
                let org = self.org_scope()?;
                let scope = Scope::default_for(kind, file_pattern, &org.types);
                if scope == Scope::Repository
                    && Scope::default_for(kind, file_pattern, &org.refused) == Scope::Org
                {
                    return Ok((
                        scope,
                        Some(format!(
                            "stored in the repository's memories: cairn.toml's [memory] org_types asks to send {kind} to the organisation's, which your own configuration does not allow"
                        )),
                    ));
                }
                scope
            }
        };
        if scope == Scope::Org
            && let Err(why) = self.org_memories()
        {
            return Ok((
                Scope::Repository,
                Some(format!(
                    "stored in the repository's memories, not the organisation's: {why}"
                )),
            ));
        }
        Ok((scope, None))
    }

    /// Searches the repository's memories and the organisation's, best first within the
    /// query's limit; each hit carries its scope.
    pub async fn search_scopes(&self, query: &memory::Query) -> Result<Vec<Found>, MemoryError> {
        let org = self.org_memories().ok().map(|o| &**o);
        memory::search_scopes(&self.memories, org, query).await
    }

    /// Live memories of both scopes anchored on `paths` or `symbols`, or whose file pattern
    /// matches one of `paths`: the repository's first.
    pub(super) async fn anchored_scopes(
        &self,
        paths: &[String],
        symbols: &[String],
    ) -> Result<Vec<Memory>, MemoryError> {
        let mut found = self.memories.anchored(paths, symbols).await?;
        for m in &mut found {
            m.scope = Scope::Repository;
        }
        if let Ok(org) = self.org_memories() {
            match org.anchored(paths, symbols).await {
                Ok(hits) => found.extend(hits.into_iter().map(|mut m| {
                    m.scope = Scope::Org;
                    m
                })),
                Err(e) => tracing::warn!("organisation memories left out: {e}"),
            }
        }
        Ok(found)
    }

    /// The store that holds memory `id`: the repository's, else the organisation's.
    pub(super) async fn store_of(&self, id: &str) -> Result<&Arc<Memories>, MemoryError> {
        match self.memories.get(id).await {
            Err(MemoryError::NotFound(missing)) => match self.org_memories() {
                Ok(org) => {
                    org.get(id).await?;
                    Ok(org)
                }
                Err(_) => Err(MemoryError::NotFound(missing)),
            },
            Err(e) => Err(e),
            Ok(_) => Ok(&self.memories),
        }
    }

    /// One memory by id, from whichever scope holds it.
    pub(super) async fn memory_by_id(&self, id: &str) -> Result<Memory, MemoryError> {
        let store = self.store_of(id).await?;
        let mut memory = store.get(id).await?;
        memory.scope = if Arc::ptr_eq(store, &self.memories) {
            Scope::Repository
        } else {
            Scope::Org
        };
        Ok(memory)
    }

    /// The developer's live contributor profile: the organisation's, else the repository's.
    pub async fn profile_of(&self, developer: &str) -> Result<Option<Memory>, MemoryError> {
        if let Ok(org) = self.org_memories()
            && let Some(profile) = org.profile(developer).await?
        {
            return Ok(Some(profile));
        }
        self.memories.profile(developer).await
    }

    /// Loads the memories of both scopes and their search indexes, so the first search does
    /// not wait for them (the daemon calls it once it serves).
    pub async fn load_memories(&self) -> Result<usize, MemoryError> {
        Ok(self.all_scopes().await?.len())
    }

    /// Every memory of both scopes, oldest first.
    pub(super) async fn all_scopes(&self) -> Result<Vec<Memory>, MemoryError> {
        let mut all = self.memories.all().await?;
        for m in &mut all {
            m.scope = Scope::Repository;
        }
        if let Ok(org) = self.org_memories() {
            all.extend(org.all().await?.into_iter().map(|mut m| {
                m.scope = Scope::Org;
                m
            }));
            all.sort_by(|a, b| {
                a.validity
                    .created_at
                    .cmp(&b.validity.created_at)
                    .then(a.id.cmp(&b.id))
            });
        }
        Ok(all)
    }

    /// Removes a memory by id, or lists the memories a filter matches and removes them when
    /// `confirm` is their number.
    pub async fn forget(&self, request: ForgetRequest) -> Result<Forgotten, AskError> {
        if let Some(id) = request.id.as_deref().filter(|id| !id.trim().is_empty()) {
            let removed = self.store_of(id.trim()).await?.forget(id).await?;
            return Ok(Forgotten {
                confirmed: true,
                total: 1,
                memories: vec![self.note(&removed)],
            });
        }
        let filter = ForgetFilter::of(&request)?;
        let matches: Vec<Memory> = self
            .all_scopes()
            .await?
            .into_iter()
            .filter(|m| filter.matches(m, self.here()))
            .collect();
        let total = matches.len();
        let Some(confirmed) = request.confirm else {
            let mut listed = matches;
            listed.truncate(LISTED);
            return Ok(Forgotten {
                confirmed: false,
                total,
                memories: listed.iter().map(|m| self.note(m)).collect(),
            });
        };
        if confirmed != total {
            return Err(memory::MemoryError::Invalid(format!(
                "confirm={confirmed} but the filter matches {total} memories now: nothing was removed; list them again and confirm with their number"
            ))
            .into());
        }
        let mut removed: Vec<MemoryNote> = self
            .forget_all(matches)
            .await?
            .iter()
            .map(|m| self.note(m))
            .collect();
        removed.truncate(LISTED);
        Ok(Forgotten {
            confirmed: true,
            total,
            memories: removed,
        })
    }

    /// Forgets memories of either scope, each in its own store.
    async fn forget_all(&self, memories: Vec<Memory>) -> Result<Vec<Memory>, AskError> {
        let (org_ids, ids): (Vec<Memory>, Vec<Memory>) =
            memories.into_iter().partition(|m| m.scope == Scope::Org);
        let ids: Vec<String> = ids.into_iter().map(|m| m.id).collect();
        let org_ids: Vec<String> = org_ids.into_iter().map(|m| m.id).collect();
        let mut removed = self.memories.forget_many(&ids).await?;
        if let (false, Ok(org)) = (org_ids.is_empty(), self.org_memories()) {
            removed.extend(org.forget_many(&org_ids).await?);
        }
        Ok(removed)
    }

    /// Searches the project's memories, or one developer's with their profile (shown as the
    /// profile, not again among the results). Anchors the code no longer has are flagged;
    /// read statistics are written back later.
    pub async fn search_memories(&self, request: SearchRequest) -> Result<SearchAnswer, AskError> {
        let profile = match &request.developer {
            Some(developer) => self.profile_of(developer).await?,
            None => None,
        };
        let types = request
            .types
            .iter()
            .map(|t| t.parse::<MemoryType>())
            .collect::<Result<Vec<_>, _>>()?;
        let mut found = self
            .search_scopes(&memory::Query {
                text: request.text,
                developer: request.developer,
                types,
                paths: request.paths,
                limit: request.limit.unwrap_or(DEFAULT_SEARCH_LIMIT),
                include_superseded: request.include_superseded,
                browsing: request.browsing,
                ..memory::Query::default()
            })
            .await?;
        if !request.browsing {
            self.note_reads();
        }
        if let Some(profile) = &profile {
            found.retain(|f| f.memory.id != profile.id);
        }
        self.flag_gone_anchors(&mut found).await;
        self.flag_changed_code(&mut found).await;
        let staleness = self.memories.staleness().await;
        let scopes = Scopes {
            both: self.org_memories().is_ok(),
            here: self.here().map(str::to_string),
        };
        search_answer(profile, found, request.max_tokens, staleness, scopes)
    }

    /// Memories, newest first, of one type or developer if asked.
    pub async fn list(&self, request: ListRequest) -> Result<MemoryList, AskError> {
        let asked = TypeAndDeveloper::parse(request.kind, request.developer.as_deref())?;
        let mut listed: Vec<Memory> = self
            .all_scopes()
            .await?
            .into_iter()
            .filter(|m| match (request.pending, request.all) {
                (true, _) => m.status == memory::Status::Pending && m.is_live(),
                (false, true) => true,
                (false, false) => m.is_served(),
            })
            .filter(|m| asked.matches(m))
            .collect();
        listed.reverse();
        Ok(MemoryList(listed))
    }

    /// Approves a pending memory, from whichever scope holds it: served from now on.
    pub async fn approve(&self, request: DecideRequest) -> Result<Decided, AskError> {
        self.decide_pending(request, memory::approval::Decision::Approve)
            .await
    }

    /// Rejects a pending memory: kept for the record, never served.
    pub async fn reject(&self, request: DecideRequest) -> Result<Decided, AskError> {
        self.decide_pending(request, memory::approval::Decision::Reject)
            .await
    }

    async fn decide_pending(
        &self,
        request: DecideRequest,
        decision: memory::approval::Decision,
    ) -> Result<Decided, AskError> {
        let id = request.id.trim();
        if !memory::model::is_memory_id(id) {
            return Err(MemoryError::Invalid(format!(
                "{} is not a memory id (ids look like m_0123456789abcdef)",
                crate::secrets::quoted(id)
            ))
            .into());
        }
        let store = self.store_of(id).await?;
        let by = request.by.as_deref();
        let mut changed = match decision {
            memory::approval::Decision::Approve => store.approve(id, by).await?,
            memory::approval::Decision::Reject => {
                store.reject(id, by, request.reason.as_deref()).await?
            }
        };
        let superseded = changed.get(1).map(|m| m.id.clone());
        Ok(Decided {
            memory: changed.remove(0),
            superseded,
        })
    }

    /// The memories of both scopes waiting for approval, oldest first.
    pub async fn pending_memories(&self) -> Result<Vec<Memory>, AskError> {
        let mut pending = self.memories.pending().await?;
        if let Ok(org) = self.org_memories() {
            match org.pending().await {
                Ok(more) => pending.extend(more.into_iter().map(|mut m| {
                    m.scope = Scope::Org;
                    m
                })),
                Err(e) => tracing::warn!("organisation memories left out: {e}"),
            }
            pending.sort_by(|a, b| {
                a.validity
                    .created_at
                    .cmp(&b.validity.created_at)
                    .then(a.id.cmp(&b.id))
            });
        }
        Ok(pending)
    }

    /// One memory, live or superseded.
    pub async fn show(&self, request: MemoryRequest) -> Result<Memory, AskError> {
        Ok(self.memory_by_id(request.id.trim()).await?)
    }

    /// One memory and the texts it had before.
    pub async fn memory_history(&self, request: MemoryRequest) -> Result<MemoryHistory, AskError> {
        Ok(MemoryHistory(self.memory_by_id(request.id.trim()).await?))
    }

    /// Shares one of the developer's memories with the team.
    pub async fn share(&self, request: MemoryRequest) -> Result<Shared, AskError> {
        let id = request.id.trim();
        let memory = self.store_of(id).await?.share(id).await?;
        Ok(Shared {
            memory,
            team: self.memories.team().is_some(),
        })
    }

    /// Every memory with its vector: the repository's, then the organisation's (each record
    /// says its `scope`).
    pub async fn export(&self, _request: ExportRequest) -> Result<Exported, AskError> {
        let mut records = self.memories.export().await?;
        if let Ok(org) = self.org_memories() {
            records.extend(org.export().await?);
        }
        Ok(Exported(records))
    }

    /// Restores exported memories (all lines valid or nothing written), each into the store
    /// its `scope` names: the organisation's, or the repository's when it has none; vectors of
    /// those without one are computed after answering.
    pub async fn import(&self, request: ImportRequest) -> Result<ImportReport, AskError> {
        let records = memory::parse_jsonl(&request.jsonl)?;
        let (org_records, mut records): (Vec<_>, Vec<_>) = records
            .into_iter()
            .partition(|r| r.memory.scope == memory::Scope::Org);
        let org = self.org_memories().ok();
        let mut in_repository = Vec::new();
        let org_records = match org {
            Some(_) => org_records,
            None => {
                for mut record in org_records {
                    record.memory.scope = memory::Scope::Repository;
                    in_repository.push(record.memory.id.clone());
                    records.push(record);
                }
                Vec::new()
            }
        };
        let mut report = self.memories.import(records).await?;
        if let Some(org) = org
            && !org_records.is_empty()
        {
            report.absorb(org.import(org_records).await?);
        }
        report.in_repository.extend(
            in_repository
                .into_iter()
                .filter(|id| report.imported.contains(id)),
        );
        self.queue_embedding();
        Ok(report)
    }

    /// Flags found memories whose anchored code changed after they were written (the
    /// newest such commit in the history at HEAD).
    async fn flag_changed_code(&self, found: &mut [Found]) {
        if found.iter().all(|f| f.memory.anchors.files().is_empty()) {
            return;
        }
        let Some(snapshot) = self.graph_if_indexed().await else {
            return;
        };
        let history = self.commit_history(&snapshot).await;
        for f in found.iter_mut() {
            f.code_changed_since = super::code_changed_since(&f.memory, &history, self.here());
        }
    }

    /// Flags anchors of found memories that the current graph no longer has (the file was
    /// deleted or moved): memories are flagged, never dropped, when their anchor disappears.
    async fn flag_gone_anchors(&self, found: &mut [Found]) {
        let Some(snapshot) = self.graph_if_indexed().await else {
            return;
        };
        let graph = &snapshot.graph;
        let here = self.here();
        // Anchors in another repository name its files, not this one's.
        let found = found.iter_mut().map(|f| &mut f.memory);
        for m in found.filter(|m| !m.anchored_elsewhere(here)) {
            let gone: Vec<String> = m
                .anchors
                .paths
                .iter()
                .filter(|p| {
                    graph.node(p).is_none()
                        && !graph.files().any(|f| f.path.starts_with(&format!("{p}/")))
                })
                .chain(m.anchors.symbols.iter().filter(|s| graph.node(s).is_none()))
                .filter(|a| !m.anchors.unknown_anchors.contains(a))
                .cloned()
                .collect();
            m.anchors.unknown_anchors.extend(gone);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_repositorys_org_types_only_narrow_what_the_user_allows() {
        let list = |names: &[&str]| names.iter().map(|n| n.to_string()).collect::<Vec<_>>();
        let resolve = |repository: Option<&[&str]>, user: Option<&[&str]>| {
            let (repository, user) = (repository.map(list), user.map(list));
            OrgTypes::resolve(repository.as_deref(), user.as_deref())
        };
        let default = memory::model::DEFAULT_ORG_TYPES.to_vec();
        assert_eq!(resolve(None, None).unwrap().types, default);
        // Narrowing is the repository's to choose.
        let narrowed = resolve(Some(&["developer_pattern"]), None).unwrap();
        assert_eq!(narrowed.types, [MemoryType::DeveloperPattern]);
        assert!(narrowed.refused.is_empty());
        assert!(resolve(Some(&[]), None).unwrap().types.is_empty());
        // Widening needs the user's consent.
        let widened = resolve(Some(&["decision", "developer_pattern"]), None).unwrap();
        assert_eq!(widened.types, [MemoryType::DeveloperPattern]);
        assert_eq!(widened.refused, [MemoryType::Decision]);
        let consented = resolve(Some(&["decision"]), Some(&["decision"])).unwrap();
        assert_eq!(consented.types, [MemoryType::Decision]);
        assert!(consented.refused.is_empty());
        // The user's list is the default too, and the most any repository gets.
        assert!(resolve(None, Some(&[])).unwrap().types.is_empty());
        let refused = resolve(Some(&["developer_pattern"]), Some(&[])).unwrap();
        assert_eq!(refused.refused, [MemoryType::DeveloperPattern]);
        // A name that is no type names its file.
        let error = resolve(Some(&["decisions"]), None).unwrap_err().to_string();
        assert!(error.contains("cairn.toml [memory] org_types"), "{error}");
        let error = resolve(None, Some(&["decisions"])).unwrap_err().to_string();
        assert!(
            error.contains("the user's config.toml [memory] org_types"),
            "{error}"
        );
    }

    #[test]
    fn an_asked_type_is_parsed_at_the_edge_and_an_unknown_one_refused_by_name() {
        assert_eq!(asked_type(None).unwrap(), None);
        assert_eq!(
            asked_type(Some("Risk-Module")).unwrap(),
            Some(MemoryType::RiskModule)
        );
        let error = asked_type(Some("decisions")).unwrap_err().to_string();
        assert!(
            error.starts_with("unknown memory type `decisions`: use one of project_pattern,"),
            "{error}"
        );
    }

    fn found(i: usize, content: &str) -> Found {
        Found {
            memory: Memory::new(
                format!("m_{i:016x}"),
                MemoryType::Decision,
                format!("rule {i}"),
                content.to_string(),
                1_700_000_000_000,
            ),
            score: 1.0 / (i + 1) as f64,
            code_changed_since: None,
        }
    }

    fn many(n: usize) -> Vec<Found> {
        (0..n)
            .map(|i| {
                found(
                    i,
                    &format!("Cart totals are integers of cents, never floats ({i})"),
                )
            })
            .collect()
    }

    #[test]
    fn the_text_lists_the_memories_under_their_count() {
        let answer = search_answer(None, many(2), None, None, Scopes::default()).unwrap();
        assert_eq!(
            answer.text,
            "2 memories\n\
             - [decision] m_0000000000000000: Cart totals are integers of cents, never floats (0)\n\
             - [decision] m_0000000000000001: Cart totals are integers of cents, never floats (1)"
        );
        assert_eq!((answer.truncated, answer.max_tokens), (0, 2_000));
        assert!(answer.notes.is_empty());
    }

    #[test]
    fn a_search_is_cut_to_its_budget_and_says_so() {
        let answer = search_answer(None, many(100), Some(500), None, Scopes::default()).unwrap();
        let shown = answer.memories.len();
        assert!(shown > 1 && shown < 100, "{shown} shown");
        assert_eq!(answer.truncated, 100 - shown);
        assert!(answer.tokens <= 500, "{} tokens", answer.tokens);
        assert!(answer.text.starts_with(&format!("{shown} memories\n")));
        let cut = format!(
            "truncated: {} more memories left out to fit 500 tokens; raise max_tokens or narrow the query",
            100 - shown
        );
        assert_eq!(answer.notes, std::slice::from_ref(&cut));
        assert!(
            answer.text.ends_with(&format!("\n_{cut}_")),
            "{}",
            answer.text
        );
    }

    #[test]
    fn a_search_always_shows_one_memory() {
        let long = "cents ".repeat(400);
        let answer = search_answer(
            None,
            vec![found(0, &long), found(1, "short")],
            Some(200),
            None,
            Scopes::default(),
        )
        .unwrap();
        assert_eq!(answer.memories.len(), 1);
        assert_eq!(answer.memories[0].memory.id, "m_0000000000000000");
        assert_eq!(answer.truncated, 1);
    }

    #[test]
    fn staleness_comes_first_and_the_json_lists_the_notes() {
        let stale = "team memories may be stale: server away; answering from the copy synced at 2024-01-01 00:00";
        let answer = search_answer(
            None,
            many(1),
            Some(50_000),
            Some(stale.to_string()),
            Scopes::default(),
        )
        .unwrap();
        assert!(
            answer.text.starts_with(&format!("_{stale}_\n1 memories\n")),
            "{}",
            answer.text
        );
        assert!(
            answer
                .text
                .ends_with("\n_max_tokens 50000 capped at 16000_"),
            "{}",
            answer.text
        );
        let json = serde_json::to_value(&answer).unwrap();
        assert_eq!(
            json["notes"],
            serde_json::json!([stale, "max_tokens 50000 capped at 16000"])
        );
        assert_eq!(json["max_tokens"], 16_000);
        assert_eq!(json["truncated"], 0);
        assert!(json.get("note").is_none(), "{json}");
        assert!(json.get("profile").is_none(), "{json}");
    }

    #[test]
    fn a_developer_search_shows_the_profile_then_the_memories() {
        let mut profile = found(9, "Alice writes small, well-tested changes").memory;
        profile.owner.developer = Some("alice".to_string());
        let answer =
            search_answer(Some(profile), Vec::new(), None, None, Scopes::default()).unwrap();
        assert_eq!(
            answer.text,
            "## Profile of @alice\nAlice writes small, well-tested changes\nno matching memories"
        );
        assert!(answer.memories.is_empty());
    }
}
