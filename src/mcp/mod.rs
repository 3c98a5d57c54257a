//! The MCP server (rmcp): tool definitions, their wire types and the stdio transport. Tools
//! answer with compact Markdown for the model plus structured content for programs.

use std::sync::Arc;

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, ContentBlock, Implementation, ServerCapabilities, ServerConfig};
use rmcp::{ErrorData, ServerHandler, ServiceExt, tool, tool_handler, tool_router};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::app::{AskError, Cairn};
use crate::context::Include;

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
    /// `path`, `path::Symbol` or `path::Class.method` (repo-relative).
    pub target: String,
    /// Sections to include (default: all but source).
    #[serde(default)]
    pub include: Option<Vec<Include>>,
    /// Token budget (default 2500, max 16000).
    #[serde(default)]
    pub max_tokens: Option<usize>,
}

/// The MCP face of a [`Cairn`].
#[derive(Clone)]
pub struct Server {
    cairn: Arc<Cairn>,
    tool_router: ToolRouter<Server>,
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
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("cairn", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "cairn knows this repository's code graph. Start with get_context; drill in with expand.",
            )
    }
}

/// Serves MCP over stdin/stdout until the client goes away.
pub async fn serve_stdio(cairn: Arc<Cairn>) -> anyhow::Result<()> {
    let service = Server::new(cairn)
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| anyhow::anyhow!("MCP handshake failed: {e}"))?;
    service.waiting().await?;
    Ok(())
}
