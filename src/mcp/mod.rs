//! The MCP server (rmcp): the tools, their argument types, the prompts and the stdio
//! transport. Each tool maps its arguments to a use case's request and the answer to compact
//! Markdown for the model plus structured content for programs.

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

use crate::app::{self, AskError, Cairn, Text};
use crate::context::Include;
use crate::memory;

mod prompts;

/// Arguments of `get_context`.
#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct GetContextArgs {
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
pub(crate) struct RememberArgs {
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
    /// Glob of the files it applies to (`tests/**`); rejection_pattern, framework_knowledge.
    #[serde(default)]
    pub file_pattern: Option<String>,
    /// repository or org; default by type.
    #[serde(default)]
    pub scope: Option<String>,
}

/// Arguments of `forget`.
#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct ForgetArgs {
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
pub(crate) struct SearchProjectArgs {
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
pub(crate) struct SearchDeveloperArgs {
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
pub(crate) struct ReviewDiffArgs {
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
pub(crate) struct LearningArg {
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
    /// As for remember.
    #[serde(default)]
    pub file_pattern: Option<String>,
    #[serde(default)]
    pub scope: Option<String>,
}

/// Arguments of `record_review` (also the JSON `cairn record-review` reads).
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
pub(crate) struct RecordReviewArgs {
    /// approve, request_changes or comment.
    pub verdict: String,
    /// Each: category, file, line, message, disposition (implemented/rejected/deferred), reason, file_pattern.
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
    /// Memory ids the review followed.
    #[serde(default)]
    pub applied: Vec<String>,
    /// Memory ids it found wrong here.
    #[serde(default)]
    pub contradicted: Vec<String>,
}

impl From<LearningArg> for app::Learning {
    fn from(l: LearningArg) -> app::Learning {
        app::Learning {
            kind: l.kind,
            content: l.content,
            title: l.title,
            developer: l.developer,
            paths: l.paths,
            symbols: l.symbols,
            file_pattern: l.file_pattern,
            scope: l.scope,
        }
    }
}

impl RecordReviewArgs {
    /// The request, written by `written_by`, an assistant.
    fn into_request(self, written_by: Option<String>) -> app::RecordReviewRequest {
        app::RecordReviewRequest {
            verdict: self.verdict,
            findings: self.findings,
            author: self.author,
            reviewer: self.reviewer,
            review_id: self.review_id,
            learnings: self
                .learnings
                .map(|l| l.into_iter().map(app::Learning::from).collect()),
            applied: self.applied,
            contradicted: self.contradicted,
            written_by,
            by_assistant: true,
        }
    }
}

/// What `learn` learns from.
#[derive(Debug, Clone, Copy, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
#[schemars(inline)]
pub(crate) enum LearnFrom {
    Reviews,
    Repository,
}

/// Arguments of `learn`.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
pub(crate) struct LearnArgs {
    /// reviews: code-host exports (files); repository: decision records, guides, reverts.
    pub from: LearnFrom,
    /// With reviews: export files in the repository (gh: pulls, review comments, reviews; glab: merge requests, discussions).
    #[serde(default)]
    pub files: Vec<String>,
    /// Read and decide, write nothing.
    #[serde(default)]
    pub dry_run: bool,
}

/// Arguments of `record_guideline_change`.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
pub(crate) struct GuidelineChangeArgs {
    #[serde(default)]
    pub id: Option<String>,
    #[serde(default)]
    pub file: Option<String>,
    #[serde(default)]
    pub section: Option<String>,
    #[serde(default)]
    pub current_text: Option<String>,
    #[serde(default)]
    pub proposed_text: Option<String>,
    #[serde(default)]
    pub rationale: Option<String>,
    #[serde(default)]
    pub category: Option<String>,
    #[serde(default)]
    pub memory_ids: Option<Vec<String>>,
    #[serde(default)]
    pub confidence: Option<f64>,
    /// proposed, accepted or rejected.
    #[serde(default)]
    pub outcome: Option<String>,
    #[serde(default)]
    pub feedback: Option<String>,
    #[serde(default)]
    pub by: Option<String>,
}

impl GuidelineChangeArgs {
    /// The request, written by `written_by`.
    fn into_request(self, written_by: Option<String>) -> app::GuidelineChangeRequest {
        app::GuidelineChangeRequest {
            id: self.id,
            file: self.file,
            section: self.section,
            current_text: self.current_text,
            proposed_text: self.proposed_text,
            rationale: self.rationale,
            category: self.category,
            memory_ids: self.memory_ids,
            confidence: self.confidence,
            outcome: self.outcome,
            feedback: self.feedback,
            by: self.by,
            written_by,
        }
    }
}

/// Arguments of the `refine_guidelines` prompt.
#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct RefineArgs {
    /// Guideline files to consider, repo-relative, separated by commas (default: CLAUDE.md,
    /// AGENTS.md, GEMINI.md, REVIEW.md, .github/copilot-instructions.md, .cursor/rules/*.mdc,
    /// .claude/skills/**/SKILL.md and nested CLAUDE.md/AGENTS.md found in the repository).
    #[serde(default)]
    pub files: Option<String>,
}

/// Arguments of the `review` prompt.
#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct ReviewPromptArgs {
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
pub(crate) struct ExtractArgs {
    /// The PR author whose profile to fill in.
    #[serde(default)]
    pub developer: Option<String>,
    /// The finished review (comments, verdict, discussion).
    #[serde(default)]
    pub review: Option<String>,
}

/// Who memories written through MCP are recorded as written by.
const WRITTEN_BY: &str = "mcp";

/// The MCP face of a [`Cairn`].
#[derive(Clone)]
pub struct Server {
    cairn: Arc<Cairn>,
    tool_router: ToolRouter<Server>,
    prompt_router: PromptRouter<Server>,
}

/// An answer as the model reads it (text) and as programs read it (structured content), or
/// a refusal the model can act on.
fn reply<T: Serialize + Text>(result: Result<T, AskError>) -> CallToolResult {
    match result {
        Ok(answer) => {
            let mut result = CallToolResult::success(vec![ContentBlock::text(answer.to_text())]);
            result.structured_content = serde_json::to_value(&answer).ok();
            result
        }
        Err(error) => refusal(error),
    }
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
        let request = app::ContextRequest {
            focus: args.focus.as_ref().map(Focus::joined),
            max_tokens: args.max_tokens,
        };
        Ok(reply(self.cairn.context(request).await))
    }

    #[tool(
        description = "Everything known about one file or symbol: signature, score, callers/callees with lines, possible callers (untyped receivers), importers, tests, blast radius; source on request.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn expand(
        &self,
        Parameters(args): Parameters<ExpandArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        let request = app::ExpandRequest {
            target: args.target,
            include: args.include.unwrap_or_default(),
            max_tokens: args.max_tokens,
        };
        Ok(reply(self.cairn.expand(request).await))
    }

    #[tool(
        description = "Store a learning (deduplicated by terms and meaning, secrets redacted). Returns the event (ADD/UPDATE/NONE/SUPERSEDE) and id; an ADD lists the nearest memories, for `supersedes`.",
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
        let labels =
            match app::write_labels(&args.kind, args.source.as_deref(), args.scope.as_deref()) {
                Ok(labels) => labels,
                Err(error) => return Ok(refusal(error)),
            };
        let request = app::RememberRequest {
            title: args.title,
            developer: args.developer,
            paths: args.paths.unwrap_or_default(),
            symbols: args.symbols.unwrap_or_default(),
            supersedes: args.supersedes,
            source: labels.source,
            source_ref: args.source_ref,
            org: args.org,
            agent: args.agent,
            run: args.run,
            written_by: Some(WRITTEN_BY.to_string()),
            file_pattern: args.file_pattern,
            scope: labels.scope,
            by_assistant: true,
            ..app::RememberRequest::new(labels.kind, args.content)
        };
        Ok(reply(self.cairn.remember(request).await))
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
        let kind = match app::asked_type(args.kind.as_deref()) {
            Ok(kind) => kind,
            Err(error) => return Ok(refusal(error)),
        };
        let request = app::ForgetRequest {
            id: args.id,
            kind,
            path: args.path,
            developer: args.developer,
            confirm: args.confirm,
        };
        Ok(reply(self.cairn.forget(request).await))
    }

    #[tool(
        description = "Search the project's memories (patterns, decisions, risks, rejections) by words, identifiers or paths.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn search_project_memory(
        &self,
        Parameters(args): Parameters<SearchProjectArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        let request = app::SearchRequest {
            text: args.query,
            developer: None,
            types: args.types.unwrap_or_default(),
            paths: args.paths.unwrap_or_default(),
            limit: args.limit,
            include_superseded: args.include_superseded,
            max_tokens: args.max_tokens,
            browsing: false,
        };
        Ok(reply(self.cairn.search_memories(request).await))
    }

    #[tool(
        description = "A developer's profile and their memories (habits, strengths), ranked for a query.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn search_developer_memory(
        &self,
        Parameters(args): Parameters<SearchDeveloperArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        let request = app::SearchRequest {
            text: args.query.unwrap_or_default(),
            developer: Some(args.developer),
            types: args.types.unwrap_or_default(),
            paths: Vec::new(),
            limit: args.limit,
            include_superseded: false,
            max_tokens: args.max_tokens,
            browsing: false,
        };
        Ok(reply(self.cairn.search_memories(request).await))
    }

    #[tool(
        description = "Hunk-precise review briefing (default: working tree vs HEAD): changed symbols, callers, tests to run, untested code, side effects, risk, team memories, author, history.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn review_diff(
        &self,
        Parameters(args): Parameters<ReviewDiffArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        let request = app::ReviewRequest {
            diff: args.diff,
            base: args.base,
            head: args.head,
            author: args.author,
            max_tokens: args.max_tokens,
        };
        Ok(reply(self.cairn.review(request).await))
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
        let request = args.into_request(Some(WRITTEN_BY.to_string()));
        Ok(reply(self.cairn.record_review(request).await))
    }

    #[tool(
        description = "Learn the team's past: reviews from gh/glab api exports in the repository, or the repository's decision records, guides and reverts (proposed pending).",
        annotations(
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn learn(
        &self,
        Parameters(args): Parameters<LearnArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        let root = &self.cairn.repo.root;
        match args.from {
            LearnFrom::Reviews => {
                let request = app::LearnReviewsRequest {
                    files: args.files.iter().map(|f| root.join(f)).collect(),
                    anywhere: false,
                    dry_run: args.dry_run,
                    progress: Default::default(),
                };
                Ok(reply(self.cairn.learn_reviews(request).await))
            }
            LearnFrom::Repository if !args.files.is_empty() => Ok(refusal(AskError::Review(
                "`files` are export files, read with from=reviews; from=repository reads the repository itself".to_string(),
            ))),
            LearnFrom::Repository => {
                let request = app::LearnRepoRequest {
                    dry_run: args.dry_run,
                    ..app::LearnRepoRequest::default()
                };
                Ok(reply(self.cairn.learn_repo(request).await))
            }
        }
    }

    #[tool(
        description = "Store a review-guideline change proposal (memory_ids: its rejection patterns), or its outcome by id; accepted marks them addressed.",
        annotations(
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn record_guideline_change(
        &self,
        Parameters(args): Parameters<GuidelineChangeArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        let request = args.into_request(Some(WRITTEN_BY.to_string()));
        Ok(reply(self.cairn.record_guideline_change(request).await))
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
        name = "refine_guidelines",
        description = "Propose review-guideline changes for rule categories usually rejected here, with the evidence and the current guideline sections."
    )]
    async fn refine_guidelines(
        &self,
        Parameters(args): Parameters<RefineArgs>,
    ) -> Result<GetPromptResult, ErrorData> {
        let files = args
            .files
            .unwrap_or_default()
            .split([',', '\n'])
            .map(str::trim)
            .filter(|f| !f.is_empty())
            .map(str::to_string)
            .collect();
        let request = app::ProposeRequest {
            files,
            ..app::ProposeRequest::default()
        };
        let brief = self
            .cairn
            .propose_guidelines(request)
            .await
            .map_err(|e| ErrorData::invalid_params(e.to_string(), None))?;
        Ok(
            GetPromptResult::new(vec![PromptMessage::new_text(Role::User, brief.text)])
                .with_description("Propose review-guideline changes from the rejection evidence"),
        )
    }

    #[prompt(
        name = "phrase_learnings",
        description = "Phrase what `cairn learn` proposed from the review history and the repository (quoted, grouped and counted) as learnings, each written with remember; they wait for a person's approval."
    )]
    async fn phrase_learnings(&self) -> Result<GetPromptResult, ErrorData> {
        let brief = self
            .cairn
            .phrase_brief()
            .await
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
        Ok(
            GetPromptResult::new(vec![PromptMessage::new_text(Role::User, brief.text)])
                .with_description("Phrase the learnings cairn proposed"),
        )
    }

    #[prompt(
        name = "session_start",
        description = "How to use cairn in this repository, with the team's top memories."
    )]
    async fn session_start(&self) -> Result<GetPromptResult, ErrorData> {
        let memories = self
            .cairn
            .search_scopes(&memory::Query {
                limit: 8,
                keyword_only: true,
                ..memory::Query::default()
            })
            .await
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
        let notes: Vec<String> = memories
            .iter()
            .map(|f| crate::app::note_of(&f.memory, self.cairn.here()).line())
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
                .profile_of(dev)
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

    #[prompt(
        name = "bootstrap_framework_knowledge",
        description = "Write framework_knowledge memories for the frameworks this repository's manifests name (detected with versions; shipped knowledge and what is stored listed)."
    )]
    async fn bootstrap_framework_knowledge(&self) -> Result<GetPromptResult, ErrorData> {
        let plan = self
            .cairn
            .bootstrap(app::BootstrapRequest {
                dry_run: true,
                written_by: None,
            })
            .await
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
        let text = prompts::bootstrap_framework_knowledge(&self.cairn.repo.name(), &plan);
        Ok(
            GetPromptResult::new(vec![PromptMessage::new_text(Role::User, text)])
                .with_description("Framework knowledge for the frameworks in use"),
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

/// Serves MCP over stdin/stdout until the client goes away, then finishes what answers left
/// behind.
pub async fn serve_stdio(cairn: Arc<Cairn>) -> anyhow::Result<()> {
    let service = Server::new(cairn.clone())
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| anyhow::anyhow!("MCP handshake failed: {e}"))?;
    let ended = service.waiting().await;
    cairn.finish().await;
    ended?;
    Ok(())
}
