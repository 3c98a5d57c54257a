//! The pieces cairn puts into files — a JSON server entry, Claude Code hooks, a Codex TOML
//! table, a marked instruction block, a whole file — and how each is put in and taken out.

use std::path::Path;

use jsonc_parser::cst::CstInputValue;
use serde::{Deserialize, Serialize};

use super::launch::Launch;
use super::{Error, block, codex, jsonc};

/// One piece of cairn in one file, with the content it should have.
#[derive(Debug, Clone)]
pub(super) enum Piece {
    /// `mcpServers.cairn` in a JSON or JSONC file.
    JsonServer(CstInputValue),
    /// cairn's hook entries in Claude Code's settings, running cairn as `Launch` says.
    ClaudeHooks(Launch),
    /// `[mcp_servers.cairn]` in Codex's config, running cairn as `Launch` says.
    CodexServer(Launch),
    /// The instruction block between cairn's markers in a markdown file.
    Block(String),
    /// A file that is wholly cairn's: rules files and service definitions.
    File(String),
}

/// What kind of piece a file holds, which is all uninstall needs to take it out again.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(super) enum Kind {
    JsonServer,
    ClaudeHooks,
    CodexServer,
    Block,
    File,
}

/// A file's text after cairn's piece was taken out.
pub(super) struct Stripped {
    pub text: String,
    /// Nothing but empty structure is left: a file cairn created can go.
    pub empty: bool,
}

impl Piece {
    pub fn kind(&self) -> Kind {
        match self {
            Piece::JsonServer(_) => Kind::JsonServer,
            Piece::ClaudeHooks(_) => Kind::ClaudeHooks,
            Piece::CodexServer(_) => Kind::CodexServer,
            Piece::Block(_) => Kind::Block,
            Piece::File(_) => Kind::File,
        }
    }

    /// The file's text with this piece in place of any older version of it; the text itself
    /// when the piece is already there as it should be.
    pub fn apply(&self, path: &Path, current: Option<&str>) -> Result<String, Error> {
        match self {
            Piece::JsonServer(entry) => jsonc::set_server(path, current, entry),
            Piece::ClaudeHooks(launch) => jsonc::set_hooks(path, current, launch),
            Piece::CodexServer(launch) => codex::set_server(path, current, launch),
            Piece::Block(body) => block::set_block(path, current, body),
            Piece::File(text) => Ok(text.clone()),
        }
    }
}

impl Kind {
    /// `text` without cairn's piece, everything else kept as it was.
    pub fn strip(self, path: &Path, text: &str, launch: &Launch) -> Result<Stripped, Error> {
        match self {
            Kind::JsonServer => jsonc::remove_server(path, text),
            Kind::ClaudeHooks => jsonc::remove_hooks(path, text, launch),
            Kind::CodexServer => codex::remove_server(path, text),
            Kind::Block => block::remove_block(path, text),
            Kind::File => Ok(Stripped {
                text: String::new(),
                empty: true,
            }),
        }
    }
}
