//! The assistants cairn registers with, and where each keeps its MCP servers and
//! instructions.

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

use jsonc_parser::cst::CstInputValue;
use serde::{Deserialize, Serialize};

use super::launch::Launch;
use super::piece::Piece;
use super::{Error, Item, Setup};

/// The instructions every assistant gets (in a marked block or a rules file of its own).
const INSTRUCTIONS: &str = include_str!("../../install/instructions.md");

/// An assistant cairn can register with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Client {
    /// Claude Code.
    Claude,
    Cursor,
    /// Codex CLI.
    Codex,
    Windsurf,
    /// Gemini CLI.
    Gemini,
}

impl Client {
    /// Every client, in the order `all` installs them.
    pub const ALL: [Client; 5] = [
        Client::Claude,
        Client::Cursor,
        Client::Codex,
        Client::Windsurf,
        Client::Gemini,
    ];

    /// The name `--client` takes.
    pub fn name(self) -> &'static str {
        match self {
            Client::Claude => "claude",
            Client::Cursor => "cursor",
            Client::Codex => "codex",
            Client::Windsurf => "windsurf",
            Client::Gemini => "gemini",
        }
    }
}

impl fmt::Display for Client {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Client {
    type Err = Error;

    fn from_str(name: &str) -> Result<Self, Error> {
        match name.trim().to_ascii_lowercase().as_str() {
            "claude" | "claude-code" => Ok(Client::Claude),
            "cursor" => Ok(Client::Cursor),
            "codex" | "codex-cli" => Ok(Client::Codex),
            "windsurf" => Ok(Client::Windsurf),
            "gemini" | "gemini-cli" => Ok(Client::Gemini),
            _ => Err(Error::UnknownClient(name.to_string())),
        }
    }
}

/// The clients `names` stand for, where `all` stands for every one; each client once, in the
/// order first named.
pub fn parse_clients<S: AsRef<str>>(names: &[S]) -> Result<Vec<Client>, Error> {
    let mut clients = Vec::new();
    for name in names {
        let named = if name.as_ref().trim().eq_ignore_ascii_case("all") {
            Client::ALL.to_vec()
        } else {
            vec![name.as_ref().parse()?]
        };
        for client in named {
            if !clients.contains(&client) {
                clients.push(client);
            }
        }
    }
    Ok(clients)
}

/// The assistants that look in use: their configuration folder exists in the repository or
/// the home directory.
pub fn detect_clients(setup: &Setup) -> Vec<Client> {
    let (repo, home) = (&setup.repo_root, &setup.home);
    Client::ALL
        .into_iter()
        .filter(|client| {
            let marks = match client {
                Client::Claude => vec![
                    home.join(".claude"),
                    repo.join(".claude"),
                    repo.join(".mcp.json"),
                ],
                Client::Cursor => vec![home.join(".cursor"), repo.join(".cursor")],
                Client::Codex => vec![home.join(".codex")],
                Client::Windsurf => vec![home.join(".codeium/windsurf"), repo.join(".windsurf")],
                Client::Gemini => vec![home.join(".gemini"), repo.join(".gemini")],
            };
            marks.iter().any(|mark| mark.exists())
        })
        .collect()
}

/// One piece of cairn in one file.
#[derive(Debug, Clone)]
pub(super) struct Target {
    /// The client it is for; none for the service.
    pub client: Option<Client>,
    pub item: Item,
    pub path: PathBuf,
    /// The directory the file must stay inside, links followed: the repository for project
    /// files, the client's own config directory for global ones.
    pub within: PathBuf,
    pub piece: Piece,
}

/// Everything install writes for `client`, its MCP server entry first.
pub(super) fn targets(setup: &Setup, client: Client) -> Vec<Target> {
    let (repo, home) = (&setup.repo_root, &setup.home);
    let launch = Launch::for_binary(&setup.binary);
    let codex_dir = home.join(".codex");
    let windsurf_dir = home.join(".codeium/windsurf");
    let target = |item, path: PathBuf, piece| Target {
        client: Some(client),
        item,
        within: [&codex_dir, &windsurf_dir]
            .into_iter()
            .find(|dir| path.starts_with(dir))
            .unwrap_or(repo)
            .clone(),
        path,
        piece,
    };
    let server = |path: PathBuf, with_type: bool| {
        target(
            Item::McpServer,
            path,
            Piece::JsonServer(server_entry(&launch, with_type)),
        )
    };
    let block = |path: PathBuf| {
        target(
            Item::Instructions,
            path,
            Piece::Block(INSTRUCTIONS.to_string()),
        )
    };
    match client {
        Client::Claude => vec![
            server(repo.join(".mcp.json"), true),
            target(
                Item::Hooks,
                repo.join(".claude/settings.json"),
                Piece::ClaudeHooks(launch.clone()),
            ),
            block(repo.join("CLAUDE.md")),
        ],
        Client::Cursor => vec![
            server(repo.join(".cursor/mcp.json"), false),
            target(
                Item::Instructions,
                repo.join(".cursor/rules/cairn.mdc"),
                Piece::File(rules_file(
                    "description: cairn, this repository's memory over MCP\nalwaysApply: true",
                )),
            ),
        ],
        Client::Codex => vec![
            target(
                Item::McpServer,
                codex_dir.join("config.toml"),
                Piece::CodexServer(launch.clone()),
            ),
            block(repo.join("AGENTS.md")),
        ],
        Client::Windsurf => vec![
            server(windsurf_dir.join("mcp_config.json"), false),
            target(
                Item::Instructions,
                repo.join(".windsurf/rules/cairn.md"),
                Piece::File(rules_file("trigger: always_on")),
            ),
        ],
        Client::Gemini => vec![
            server(repo.join(".gemini/settings.json"), false),
            block(repo.join("GEMINI.md")),
        ],
    }
}

/// The MCP server entry of a JSON config: the command that serves cairn over stdio (with
/// `"type": "stdio"` where the client asks for it).
fn server_entry(launch: &Launch, with_type: bool) -> CstInputValue {
    let mut entry = Vec::new();
    if with_type {
        entry.push(("type".to_string(), "stdio".into()));
    }
    entry.push(("command".to_string(), launch.program_text().into()));
    entry.push((
        "args".to_string(),
        CstInputValue::Array(
            launch
                .args(&["serve"])
                .into_iter()
                .map(Into::into)
                .collect(),
        ),
    ));
    CstInputValue::Object(entry)
}

/// A rules file of cairn's own: front matter, then the instructions.
fn rules_file(front_matter: &str) -> String {
    format!("---\n{front_matter}\n---\n\n{INSTRUCTIONS}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_and_all_expands_once() {
        assert_eq!("Claude".parse::<Client>().unwrap(), Client::Claude);
        assert_eq!(
            parse_clients(&["codex", "all", "codex"]).unwrap(),
            vec![
                Client::Codex,
                Client::Claude,
                Client::Cursor,
                Client::Windsurf,
                Client::Gemini
            ]
        );
        let err = parse_clients(&["vim"]).unwrap_err();
        assert!(err.to_string().contains("unknown client `vim`"), "{err}");
        for client in Client::ALL {
            assert_eq!(client.to_string().parse::<Client>().unwrap(), client);
        }
    }
}
