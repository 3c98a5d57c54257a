//! Command-line definitions (clap) — only the shape of the commands, no behaviour.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use cairn::context::Include;

/// cairn: repository and code-review memory for coding assistants, over MCP.
#[derive(Debug, Parser)]
#[command(name = "cairn", version, about)]
pub struct Cli {
    #[command(flatten)]
    pub global: Global,
    #[command(subcommand)]
    pub command: Command,
}

/// Options every command takes.
#[derive(Debug, Args)]
pub struct Global {
    /// Repository to work on (default: the current directory's repository).
    #[arg(long, global = true, env = "CAIRN_REPO")]
    pub repo: Option<PathBuf>,
    /// Where cairn keeps this repository's data (default: $XDG_DATA_HOME/cairn/repos/…).
    #[arg(long, global = true, env = "CAIRN_DATA_DIR")]
    pub data_dir: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Index the repository (incremental: only changed files are parsed again).
    Index {
        /// Print the summary as JSON.
        #[arg(long)]
        json: bool,
        /// Seconds to wait for another index run to finish before giving up.
        #[arg(long, default_value_t = 60)]
        wait: u64,
    },
    /// Serve MCP over stdio (for an assistant to spawn).
    Serve,
    /// Print the context pack (what `get_context` answers).
    Context {
        /// Paths or a task sentence to rank first.
        #[arg(long)]
        focus: Option<String>,
        #[arg(long)]
        max_tokens: Option<usize>,
        /// Print the structured report as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Print everything known about a file or symbol (what `expand` answers).
    Expand {
        /// `path`, `path::Symbol` or `path::Class.method`.
        target: String,
        /// Sections: source, callers, callees, tests, history, memories.
        #[arg(long, value_delimiter = ',', value_parser = parse_include)]
        include: Vec<Include>,
        #[arg(long)]
        max_tokens: Option<usize>,
        #[arg(long)]
        json: bool,
    },
}

fn parse_include(text: &str) -> Result<Include, String> {
    serde_json::from_value(serde_json::Value::String(text.to_string())).map_err(|_| {
        format!("unknown section {text:?}: use source, callers, callees, tests, history, memories")
    })
}
