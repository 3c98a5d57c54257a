//! What an install or uninstall did (or, in a dry run, would do), step by step.

use std::fmt;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::Client;

/// The steps of one install or uninstall.
#[derive(Debug, Clone, Serialize)]
pub struct Outcome {
    /// Nothing was changed: the steps say what would be.
    pub dry_run: bool,
    pub steps: Vec<Step>,
}

/// One file changed (or left alone), or one service-manager command.
#[derive(Debug, Clone, Serialize)]
pub struct Step {
    /// The assistant the step is for; none for the token and the service.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client: Option<Client>,
    pub item: Item,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<PathBuf>,
    pub action: Action,
    /// The service-manager command run, or for the user to run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// Why a command was not run, or how it failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

/// What a step is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Item {
    /// The MCP server entry in the assistant's config.
    McpServer,
    /// Claude Code's hooks.
    Hooks,
    /// The instruction block or rules file.
    Instructions,
    /// The HTTP bearer token.
    Token,
    /// The user service running `cairn daemon`.
    Service,
    /// The repository's entry in the registry of the user's daemon.
    Registry,
}

/// What happened to a file, or to a command.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Action {
    /// The file did not exist and was written.
    Created,
    /// cairn's entry was merged into the file, the rest kept.
    Merged,
    /// A file of cairn's own was rewritten.
    Updated,
    /// The file already was as it should be.
    Unchanged,
    /// The file's original bytes were put back.
    Restored,
    /// The file (which cairn had created) was deleted.
    Removed,
    /// The file was edited since install: only cairn's entries were taken out.
    Cleaned,
    /// A file of cairn's own that the user edited since install: left as it is.
    Kept,
    /// The command ran.
    Ran,
    /// The command was not run; it is for the user to run.
    Manual,
    /// The command failed.
    Failed,
}

impl Outcome {
    pub(super) fn new(dry_run: bool) -> Self {
        Outcome {
            dry_run,
            steps: Vec::new(),
        }
    }

    /// Whether any file changed (or, in a dry run, would).
    pub fn changed(&self) -> bool {
        self.steps
            .iter()
            .any(|step| !matches!(step.action, Action::Unchanged | Action::Manual))
    }

    /// Whether a service-manager command failed.
    pub fn failed(&self) -> bool {
        self.steps.iter().any(|step| step.action == Action::Failed)
    }
}

impl Step {
    pub(super) fn file(client: Option<Client>, item: Item, path: PathBuf, action: Action) -> Self {
        Step {
            client,
            item,
            path: Some(path),
            action,
            command: None,
            detail: None,
        }
    }

    pub(super) fn command(action: Action, command: String, detail: Option<String>) -> Self {
        Step {
            client: None,
            item: Item::Service,
            path: None,
            action,
            command: Some(command),
            detail,
        }
    }
}

impl Action {
    /// How the action reads in a summary; `planned` for a dry run.
    pub fn label(self, planned: bool) -> &'static str {
        match (self, planned) {
            (Action::Created, false) => "created",
            (Action::Created, true) => "would create",
            (Action::Merged, false) => "merged",
            (Action::Merged, true) => "would merge",
            (Action::Updated, false) => "updated",
            (Action::Updated, true) => "would update",
            (Action::Unchanged, _) => "unchanged",
            (Action::Restored, false) => "restored",
            (Action::Restored, true) => "would restore",
            (Action::Removed, false) => "removed",
            (Action::Removed, true) => "would remove",
            (Action::Cleaned, false) => "cleaned",
            (Action::Cleaned, true) => "would clean",
            (Action::Kept, false) => "kept",
            (Action::Kept, true) => "would keep",
            (Action::Ran, false) => "ran",
            (Action::Ran, true) => "would run",
            (Action::Manual, _) => "to run",
            (Action::Failed, _) => "failed",
        }
    }
}

impl fmt::Display for Item {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Item::McpServer => "mcp server",
            Item::Hooks => "hooks",
            Item::Instructions => "instructions",
            Item::Token => "token",
            Item::Service => "service",
            Item::Registry => "user daemon registry",
        })
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.steps.is_empty() {
            return writeln!(f, "nothing to do: cairn is not installed here");
        }
        for step in &self.steps {
            let what = match step.client {
                Some(client) => format!("{client} {}", step.item),
                None => step.item.to_string(),
            };
            let subject = match (&step.path, &step.command) {
                (Some(path), _) => path.display().to_string(),
                (None, Some(command)) => command.clone(),
                (None, None) => String::new(),
            };
            write!(
                f,
                "{:<13} {what:<21} {subject}",
                step.action.label(self.dry_run)
            )?;
            if let Some(detail) = &step.detail {
                write!(f, " ({detail})")?;
            }
            writeln!(f)?;
        }
        if self.dry_run {
            writeln!(f, "dry run: nothing was changed")?;
        }
        Ok(())
    }
}
