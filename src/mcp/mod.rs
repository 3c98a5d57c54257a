//! The MCP server (rmcp): tool definitions, their wire types and the stdio transport. Tools
//! answer with compact Markdown for the model plus structured content for programs.

use std::sync::Arc;

use rmcp::handler::server::router::prompt::PromptRouter;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    CallToolResult, ContentBlock, GetPromptResult, Implementation, PromptMessage, Role,
    ServerCapabilities, ServerConfig,
};
use rmcp::{
    ErrorData, ServerHandler, ServiceExt, prompt, prompt_handler, prompt_router, tool,
    tool_handler, tool_router,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::app::{AskError, Cairn};
use crate::context::Include;
use crate::memory::{self, MemoryType};

mod prompts;
pub mod render;

/// Arguments of `get_context`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct GetContextArgs {
    /// Paths or a task sentence to rank first.
    #[serde(default)]
    pub focus: Option<Focus>,
    /// Token budget (default 4000, max 16000).
    #[serde(default)]
    pub max_tokens: Option<usize>,
}

/// One focus string or several.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum Focus {
    One(String),
    Many(Vec<String>),
}

impl Focus {
    fn joined(&self) -> String {
        match self {
            Focus::One(text) => text.clone(),
            Focus::Many(parts) => parts.join(" "),
        }
    }
}

/// Arguments of `expand`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ExpandArgs {
    /// `path`, `path::Symbol`, `path::Class.method` (repo-relative) or a memory id.
    pub target: String,
    /// Sections to include (default: all but source).
    #[serde(default)]
    pub include: Option<Vec<Include>>,
    /// Token budget (default 2500, max 16000).
    #[serde(default)]
    pub max_tokens: Option<usize>,
}

/// Arguments of `remember`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct RememberArgs {
    /// project_pattern, decision, developer_pattern, developer_strength, risk_module, contributor_profile, rejection_pattern, framework_knowledge or review_outcome.
    #[serde(rename = "type")]
    pub kind: String,
    /// The learning, 1-3 sentences.
    pub content: String,
    #[serde(default)]
    pub title: Option<String>,
    /// Required for developer_* types and contributor_profile.
    #[serde(default)]
    pub developer: Option<String>,
    /// Repo-relative paths it is about.
    #[serde(default)]
    pub paths: Option<Vec<String>>,
    /// Symbols it is about (path::Name).
    #[serde(default)]
    pub symbols: Option<Vec<String>>,
    /// Id of the memory this one replaces.
    #[serde(default)]
    pub supersedes: Option<String>,
    /// review, manual, import or hook (default manual).
    #[serde(default)]
    pub source: Option<String>,
    /// PR, commit or review id.
    #[serde(default)]
    pub source_ref: Option<String>,
    /// Optional scope labels: organisation, agent, run/session.
    #[serde(default)]
    pub org: Option<String>,
    #[serde(default)]
    pub agent: Option<String>,
    #[serde(default)]
    pub run: Option<String>,
}

/// Arguments of `forget`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ForgetArgs {
    /// Memory id to remove.
    #[serde(default)]
    pub id: Option<String>,
    /// Or remove every live memory of this type...
    #[serde(default, rename = "type")]
    pub kind: Option<String>,
    /// ...and/or anchored on this path...
    #[serde(default)]
    pub path: Option<String>,
    /// ...and/or of this developer.
    #[serde(default)]
    pub developer: Option<String>,
    /// A filter only lists its matches unless this is the number of memories it matches (as
    /// the listing said): then it removes them, provided the count is still the same.
    #[serde(default)]
    pub confirm: Option<usize>,
}

/// Arguments of `search_project_memory`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct SearchProjectArgs {
    pub query: String,
    /// Memory types to keep.
    #[serde(default)]
    pub types: Option<Vec<String>>,
    /// Paths to favour.
    #[serde(default)]
    pub paths: Option<Vec<String>>,
    /// Default 10, max 100.
    #[serde(default)]
    pub limit: Option<usize>,
    /// Include superseded memories.
    #[serde(default)]
    pub include_superseded: bool,
    /// Token budget (default 2000, max 16000).
    #[serde(default)]
    pub max_tokens: Option<usize>,
}

/// Arguments of `search_developer_memory`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct SearchDeveloperArgs {
    pub developer: String,
    #[serde(default)]
    pub query: Option<String>,
    #[serde(default)]
    pub types: Option<Vec<String>>,
    #[serde(default)]
    pub limit: Option<usize>,
    #[serde(default)]
    pub max_tokens: Option<usize>,
}

/// Arguments of `review_diff`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ReviewDiffArgs {
    /// Unified diff text. Omit (with base/head) to review the working tree against HEAD.
    #[serde(default)]
    pub diff: Option<String>,
    /// Git revisions: base..head; head alone reviews that commit.
    #[serde(default)]
    pub base: Option<String>,
    #[serde(default)]
    pub head: Option<String>,
    /// Author of the change (default: from git).
    #[serde(default)]
    pub author: Option<String>,
    /// Token budget (default 1500, max 16000).
    #[serde(default)]
    pub max_tokens: Option<usize>,
}

/// A learning stored with a review outcome.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
pub struct LearningArg {
    /// A memory type, as for remember.
    #[serde(rename = "type")]
    pub kind: String,
    pub content: String,
    #[serde(default)]
    pub title: Option<String>,
    #[serde(default)]
    pub developer: Option<String>,
    #[serde(default)]
    pub paths: Option<Vec<String>>,
    #[serde(default)]
    pub symbols: Option<Vec<String>>,
}

/// Arguments of `record_review` (also the JSON `cairn record-review` reads).
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
pub struct RecordReviewArgs {
    /// approve, request_changes or comment.
    pub verdict: String,
    /// Each: category, file, line, message, disposition (implemented/rejected/deferred), reason.
    #[serde(default)]
    pub findings: Vec<crate::memory::reviews::Finding>,
    /// The change's author.
    pub author: String,
    #[serde(default)]
    pub reviewer: Option<String>,
    /// PR or review id; recording the same id again replaces the earlier record.
    #[serde(default)]
    pub review_id: Option<String>,
    #[serde(default)]
    pub learnings: Option<Vec<LearningArg>>,
}

impl RecordReviewArgs {
    /// The review as the memory layer takes it.
    pub fn into_input(self, written_by: Option<String>) -> Result<memory::ReviewInput, AskError> {
        let learnings = self
            .learnings
            .unwrap_or_default()
            .into_iter()
            .map(|l| {
                Ok(memory::NewMemory {
                    kind: Some(l.kind.parse::<MemoryType>()?),
                    title: l.title,
                    content: l.content,
                    developer: l.developer,
                    paths: l.paths.unwrap_or_default(),
                    symbols: l.symbols.unwrap_or_default(),
                    ..memory::NewMemory::default()
                })
            })
            .collect::<Result<Vec<_>, AskError>>()?;
        Ok(memory::ReviewInput {
            review_id: self.review_id,
            verdict: self.verdict.parse()?,
            findings: self.findings,
            author: self.author,
            reviewer: self.reviewer,
            learnings,
            written_by,
        })
    }
}

/// Arguments of the `review` prompt.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ReviewPromptArgs {
    /// What to review: a base revision (default: the working tree against HEAD).
    #[serde(default)]
    pub base: Option<String>,
    #[serde(default)]
    pub head: Option<String>,
    /// The change's author.
    #[serde(default)]
    pub author: Option<String>,
}

/// Arguments of the `extract_learnings` prompt.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ExtractArgs {
    /// The PR author whose profile to fill in.
    #[serde(default)]
    pub developer: Option<String>,
    /// The finished review (comments, verdict, discussion).
    #[serde(default)]
    pub review: Option<String>,
}

/// The MCP face of a [`Cairn`].
#[derive(Clone)]
pub struct Server {
    cairn: Arc<Cairn>,
    tool_router: ToolRouter<Server>,
    prompt_router: PromptRouter<Server>,
}

fn parse_types(types: Option<Vec<String>>) -> Result<Vec<MemoryType>, AskError> {
    types
        .unwrap_or_default()
        .iter()
        .map(|t| t.parse::<MemoryType>().map_err(AskError::from))
        .collect()
}

fn memory_answer<T: Serialize>(
    result: Result<T, AskError>,
    render: impl FnOnce(&T) -> String,
) -> CallToolResult {
    match result {
        Ok(value) => answer(render(&value), &value),
        Err(error) => refusal(error),
    }
}

fn answer(text: String, structured: impl Serialize) -> CallToolResult {
    let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
    result.structured_content = serde_json::to_value(structured).ok();
    result
}

fn refusal(error: AskError) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(format!("error: {error}"))])
}

#[tool_router]
impl Server {
    pub fn new(cairn: Arc<Cairn>) -> Server {
        Server {
            cairn,
            tool_router: Self::tool_router(),
            prompt_router: Self::prompt_router(),
        }
    }

    #[tool(
        description = "Ranked picture of this repository: shape, top files/symbols and relationships, hot spots, tests, index freshness. Call at session start.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn get_context(
        &self,
        Parameters(args): Parameters<GetContextArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        let focus = args.focus.as_ref().map(Focus::joined);
        Ok(
            match self.cairn.context(focus.as_deref(), args.max_tokens).await {
                Ok(report) => answer(report.text.clone(), &report),
                Err(error) => refusal(error),
            },
        )
    }

    #[tool(
        description = "Everything known about one file or symbol: signature, score, callers/callees with lines, importers, tests, blast radius; source on request.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn expand(
        &self,
        Parameters(args): Parameters<ExpandArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        let include = args.include.unwrap_or_default();
        if memory::model::is_memory_id(args.target.trim()) {
            let found = self.cairn.memories.get(&args.target).await;
            return Ok(memory_answer(found.map_err(AskError::from), |m| {
                render::memory_detail(m)
            }));
        }
        Ok(
            match self
                .cairn
                .expand(&args.target, &include, args.max_tokens)
                .await
            {
                Ok(report) => answer(report.text.clone(), &report),
                Err(error) => refusal(error),
            },
        )
    }
    #[tool(
        description = "Store a learning from a review or session (deduplicated, secrets redacted). Returns the event (ADD/UPDATE/NONE/SUPERSEDE) and id.",
        annotations(
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn remember(
        &self,
        Parameters(args): Parameters<RememberArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        let cairn = self.cairn.clone();
        let result = async {
            let new = memory::NewMemory {
                kind: Some(args.kind.parse::<MemoryType>()?),
                title: args.title,
                content: args.content,
                developer: args.developer,
                paths: args.paths.unwrap_or_default(),
                symbols: args.symbols.unwrap_or_default(),
                supersedes: args.supersedes,
                source: match args.source.as_deref() {
                    Some(source) => source.parse()?,
                    None => memory::Source::Manual,
                },
                source_ref: args.source_ref,
                org: args.org,
                agent: args.agent,
                run: args.run,
                written_by: Some("mcp".to_string()),
                category: None,
            };
            cairn.remember(new).await
        }
        .await;
        if result.is_ok() {
            // Vectors are computed after answering: a write must not wait ~15 ms per text.
            let memories = self.cairn.memories.clone();
            tokio::spawn(async move {
                if let Err(e) = memories.embed_pending().await {
                    tracing::warn!("embedding new memories failed: {e}");
                }
            });
        }
        Ok(memory_answer(result, render::write_outcome))
    }

    #[tool(
        description = "Remove a memory by id, or every memory matching a filter (type/path/developer; lists matches; confirm=N, the number listed, removes them).",
        annotations(
            read_only_hint = false,
            destructive_hint = true,
            open_world_hint = false
        )
    )]
    async fn forget(
        &self,
        Parameters(args): Parameters<ForgetArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        let result = forget(&self.cairn, args).await;
        Ok(memory_answer(result, render::forgotten))
    }

    #[tool(
        description = "Search the project's memories (patterns, decisions, risks, rejections) by words, identifiers or paths.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn search_project_memory(
        &self,
        Parameters(args): Parameters<SearchProjectArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        let result = async {
            let query = memory::Query {
                text: args.query,
                developer: None,
                types: parse_types(args.types)?,
                paths: args.paths.unwrap_or_default(),
                limit: args.limit.unwrap_or(10),
                include_superseded: args.include_superseded,
                keyword_only: false,
            };
            let mut found = self.cairn.memories.search(&query).await?;
            self.flag_gone(&mut found).await;
            let note = self.cairn.memories.staleness().await;
            render::SearchAnswer::within(None, found, args.max_tokens).map(|a| a.with_note(note))
        }
        .await;
        Ok(memory_answer(result, render::search))
    }

    #[tool(
        description = "A developer's profile and their memories (habits, strengths), ranked for a query.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn search_developer_memory(
        &self,
        Parameters(args): Parameters<SearchDeveloperArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        let result = async {
            let profile = self.cairn.memories.profile(&args.developer).await?;
            let query = memory::Query {
                text: args.query.unwrap_or_default(),
                developer: Some(args.developer),
                types: parse_types(args.types)?,
                paths: Vec::new(),
                limit: args.limit.unwrap_or(10),
                include_superseded: false,
                keyword_only: false,
            };
            let mut found = self.cairn.memories.search(&query).await?;
            if let Some(p) = &profile {
                found.retain(|f| f.memory.id != p.id);
            }
            self.flag_gone(&mut found).await;
            let note = self.cairn.memories.staleness().await;
            render::SearchAnswer::within(profile, found, args.max_tokens).map(|a| a.with_note(note))
        }
        .await;
        Ok(memory_answer(result, render::search))
    }

    #[tool(
        description = "Hunk-precise review briefing (default: working tree vs HEAD): changed symbols, callers, tests to run, untested code, side effects, risk, team memories, author, history.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn review_diff(
        &self,
        Parameters(args): Parameters<ReviewDiffArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        let request = crate::app::ReviewRequest {
            diff: args.diff,
            base: args.base,
            head: args.head,
            author: args.author,
            max_tokens: args.max_tokens,
        };
        Ok(match self.cairn.review(&request).await {
            Ok(report) => answer(report.text.clone(), &report),
            Err(error) => refusal(error),
        })
    }

    #[tool(
        description = "Store a review outcome: verdict, findings with disposition (rejected ones become rejection patterns), learnings; updates rule statistics.",
        annotations(
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn record_review(
        &self,
        Parameters(args): Parameters<RecordReviewArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        let result = async {
            let input = args.into_input(Some("mcp".to_string()))?;
            self.cairn.record_review(input).await
        }
        .await;
        if result.is_ok() {
            let memories = self.cairn.memories.clone();
            tokio::spawn(async move {
                if let Err(e) = memories.embed_pending().await {
                    tracing::warn!("embedding new memories failed: {e}");
                }
            });
        }
        Ok(memory_answer(result, render::recorded_review))
    }
}

#[prompt_router]
impl Server {
    #[prompt(
        name = "review",
        description = "Review a change with cairn: review_diff, then the review, then record_review."
    )]
    async fn review(
        &self,
        Parameters(args): Parameters<ReviewPromptArgs>,
    ) -> Result<GetPromptResult, ErrorData> {
        let text = prompts::review(
            args.base.as_deref(),
            args.head.as_deref(),
            args.author.as_deref(),
        );
        Ok(
            GetPromptResult::new(vec![PromptMessage::new_text(Role::User, text)])
                .with_description("Review a change with cairn's briefing and record the outcome"),
        )
    }

    #[prompt(
        name = "session_start",
        description = "How to use cairn in this repository, with the team's top memories."
    )]
    async fn session_start(&self) -> Result<GetPromptResult, ErrorData> {
        let memories = self
            .cairn
            .memories
            .search(&memory::Query {
                limit: 8,
                keyword_only: true,
                ..memory::Query::default()
            })
            .await
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
        let notes: Vec<String> = memories
            .iter()
            .map(|f| crate::app::note_of(&f.memory).line())
            .collect();
        let text = prompts::session_start(&self.cairn.repo.name(), &notes);
        Ok(
            GetPromptResult::new(vec![PromptMessage::new_text(Role::User, text)])
                .with_description("Start a session with cairn"),
        )
    }

    #[prompt(
        name = "extract_learnings",
        description = "Turn a finished review into remember calls (patterns, decisions, developer habits and strengths, risks, profile, rejections)."
    )]
    async fn extract_learnings(
        &self,
        Parameters(args): Parameters<ExtractArgs>,
    ) -> Result<GetPromptResult, ErrorData> {
        let profile = match args.developer.as_deref() {
            Some(dev) => self
                .cairn
                .memories
                .profile(dev)
                .await
                .map_err(|e| ErrorData::invalid_params(e.to_string(), None))?,
            None => None,
        };
        let text = prompts::extract_learnings(
            args.developer.as_deref(),
            profile.as_ref(),
            args.review.as_deref(),
        );
        Ok(
            GetPromptResult::new(vec![PromptMessage::new_text(Role::User, text)])
                .with_description("Extract durable learnings from a finished review"),
        )
    }
}

#[tool_handler(router = self.tool_router)]
#[prompt_handler(router = self.prompt_router)]
impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_prompts()
                .build(),
        )
            .with_server_info(Implementation::new("cairn", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "cairn knows this repository's code graph and its review memory. Start with get_context; drill in with expand; search_project_memory before reviewing; remember what a review taught.",
            )
    }
}

/// Serves MCP over stdin/stdout until the client goes away.
pub async fn serve_stdio(cairn: Arc<Cairn>) -> anyhow::Result<()> {
    let memories = cairn.memories.clone();
    let service = Server::new(cairn)
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| anyhow::anyhow!("MCP handshake failed: {e}"))?;
    let ended = service.waiting().await;
    if let Err(e) = memories.flush_access().await {
        tracing::warn!("writing memory read statistics failed: {e}");
    }
    memories.close().await;
    ended?;
    Ok(())
}

impl Server {
    /// Marks anchors that disappeared from the code, and writes read statistics back now and
    /// then.
    async fn flag_gone(&self, found: &mut [memory::Found]) {
        let mut memories: Vec<memory::Memory> = found.iter().map(|f| f.memory.clone()).collect();
        self.cairn.flag_gone_anchors(&mut memories).await;
        for (f, m) in found.iter_mut().zip(memories) {
            f.memory = m;
        }
        let memories = self.cairn.memories.clone();
        tokio::spawn(async move {
            if let Err(e) = memories.flush_access_now_and_then().await {
                tracing::warn!("writing memory read statistics failed: {e}");
            }
        });
    }
}

/// `forget` by id, or by filter (listing matches unless confirmed).
async fn forget(cairn: &Cairn, args: ForgetArgs) -> Result<render::Forgotten, AskError> {
    if let Some(id) = args.id.as_deref().filter(|id| !id.trim().is_empty()) {
        let removed = cairn.memories.forget(id).await?;
        return Ok(render::Forgotten {
            confirmed: true,
            total: 1,
            memories: vec![render::brief(removed)],
        });
    }
    let kind = args
        .kind
        .as_deref()
        .map(str::parse::<MemoryType>)
        .transpose()?;
    let developer = args
        .developer
        .as_deref()
        .map(memory::model::developer_id)
        .transpose()?;
    let path = args
        .path
        .as_deref()
        .map(|p| {
            crate::context::normalise(p).ok_or_else(|| {
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
    let matches: Vec<memory::Memory> = cairn
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
    let Some(confirmed) = args.confirm else {
        let total = matches.len();
        let mut listed = matches;
        listed.truncate(render::LISTED);
        return Ok(render::Forgotten {
            confirmed: false,
            total,
            memories: listed.into_iter().map(render::brief).collect(),
        });
    };
    let total = matches.len();
    if confirmed != total {
        return Err(memory::MemoryError::Invalid(format!(
            "confirm={confirmed} but the filter matches {total} memories now: nothing was removed; list them again and confirm with their number"
        ))
        .into());
    }
    let ids: Vec<String> = matches.into_iter().map(|m| m.id).collect();
    let mut removed: Vec<_> = cairn
        .memories
        .forget_many(&ids)
        .await?
        .into_iter()
        .map(render::brief)
        .collect();
    removed.truncate(render::LISTED);
    Ok(render::Forgotten {
        confirmed: true,
        total,
        memories: removed,
    })
}
