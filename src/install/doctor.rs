//! The install as `cairn doctor` sees it: each assistant's registration, hooks and
//! instructions, the HTTP token and the service file, each with the command that fixes it.

use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;

use super::clients::{self, Target};
use super::launch::{self, Launch};
use super::manifest::Manifest;
use super::piece::Piece;
use super::service::ServiceRecord;
use super::shell::shell_quote;
use super::{Client, Setup, block, codex, files, jsonc};
use crate::datadir::DataDir;
use crate::fsutil::mode_of;

/// One thing checked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Check {
    pub name: String,
    pub ok: bool,
    /// What was found.
    pub detail: String,
    /// The command (or edit) that fixes a failing check.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix: Option<String>,
}

impl Check {
    fn pass(name: impl Into<String>, detail: String) -> Self {
        Check {
            name: name.into(),
            ok: true,
            detail,
            fix: None,
        }
    }

    fn fail(name: impl Into<String>, detail: String, fix: String) -> Self {
        Check {
            name: name.into(),
            ok: false,
            detail,
            fix: Some(fix),
        }
    }
}

/// Checks every assistant cairn is recorded for or whose config exists, the token, and the
/// service if one was installed.
pub fn check(setup: &Setup) -> Vec<Check> {
    let mut checks = Vec::new();
    let manifest = Manifest::load(&setup.data_dir).unwrap_or_else(|e| {
        checks.push(Check::fail(
            "install record",
            e.to_string(),
            "delete it and run `cairn install` again".into(),
        ));
        Manifest::default()
    });
    let mut any_client = false;
    for client in Client::ALL {
        let targets = clients::targets(setup, client);
        let recorded = manifest.files.iter().any(|r| r.client == Some(client));
        if !recorded && !targets[0].path.exists() {
            continue;
        }
        any_client = true;
        checks.extend(targets.iter().map(|target| check_target(client, target)));
    }
    if !any_client {
        checks.push(Check::fail(
            "clients",
            "cairn is not registered with any assistant".into(),
            "cairn install --client <claude|cursor|codex|windsurf|gemini|all>".into(),
        ));
    }
    checks.push(check_token(&setup.data_dir));
    if let Some(service) = &manifest.service {
        checks.push(check_service(service));
    }
    checks
}

fn check_target(client: Client, target: &Target) -> Check {
    let name = format!("{client} {}", target.item);
    let path = &target.path;
    let fix = format!("cairn install --client {client}");
    let text = match files::read(path) {
        Ok(Some(bytes)) => match files::text(path, &bytes) {
            Ok(text) => text.to_string(),
            Err(e) => return Check::fail(name, e.to_string(), fix),
        },
        Ok(None) => return Check::fail(name, format!("{} is missing", path.display()), fix),
        Err(e) => return Check::fail(name, e.to_string(), fix),
    };
    let found = match &target.piece {
        Piece::JsonServer(_) => jsonc::server(path, &text).map(|entry| server(path, entry)),
        Piece::CodexServer(_) => codex::server(path, &text).map(|entry| server(path, entry)),
        Piece::ClaudeHooks(launch) => {
            jsonc::missing_hook_events(path, &text, launch).map(|missing| {
                if missing.is_empty() {
                    Ok(format!("hooks in {}", path.display()))
                } else {
                    Err(format!(
                        "no cairn hook for {} in {}",
                        missing.join(", "),
                        path.display()
                    ))
                }
            })
        }
        Piece::Block(_) if block::has_block(&text) => {
            Ok(Ok(format!("instruction block in {}", path.display())))
        }
        Piece::Block(_) => Ok(Err(format!(
            "no cairn instruction block in {}",
            path.display()
        ))),
        Piece::File(_) => Ok(Ok(format!("{} is there", path.display()))),
    };
    match found {
        Ok(Ok(detail)) => Check::pass(name, detail),
        Ok(Err(problem)) => Check::fail(name, problem, fix),
        Err(e) => Check::fail(
            name,
            e.to_string(),
            format!("fix {}, then {fix}", path.display()),
        ),
    }
}

/// Whether a server entry runs `cairn serve` with a program that is there: an existing cairn
/// binary (a path that no longer exists, as after an upgrade moved it, is a problem), or a
/// package runner found on `PATH` running cairn's package.
fn server(path: &Path, entry: Option<Value>) -> Result<String, String> {
    let Some(entry) = entry else {
        return Err(format!("cairn is not registered in {}", path.display()));
    };
    let Some(command) = entry.get("command").and_then(Value::as_str) else {
        return Err(format!(
            "cairn's entry in {} has no command",
            path.display()
        ));
    };
    let args = entry.get("args").cloned().unwrap_or(Value::Null);
    let words: Option<Vec<String>> = args
        .as_array()
        .and_then(|a| a.iter().map(|v| v.as_str().map(str::to_string)).collect());
    let Some((last, prefix)) = words.as_deref().and_then(<[String]>::split_last) else {
        return Err(format!(
            "cairn's args in {} are {args} instead of [\"serve\"]",
            path.display()
        ));
    };
    let launch = Launch {
        program: PathBuf::from(command),
        prefix: prefix.to_vec(),
    };
    if last != "serve" || (!launch.is_runner() && !prefix.is_empty()) {
        return Err(format!(
            "cairn's args in {} are {args}, which do not end in \"serve\"",
            path.display()
        ));
    }
    if !launch.exists(&launch::path_dirs()) {
        let what = if launch.is_runner() {
            "is not on PATH"
        } else if Path::new(command).exists() {
            "is not an executable file"
        } else {
            "no longer exists (moved by an upgrade?)"
        };
        return Err(format!("{command} (in {}) {what}", path.display()));
    }
    Ok(format!(
        "{} serve, registered in {}",
        launch.command_line(&[]),
        path.display()
    ))
}

fn check_token(data_dir: &Path) -> Check {
    let path = DataDir::at(data_dir).token();
    if !path.exists() {
        return Check::fail(
            "token",
            format!("no HTTP token at {}", path.display()),
            "cairn install".into(),
        );
    }
    match mode_of(&path) {
        Some(mode) if mode != 0o600 => Check::fail(
            "token",
            format!("{} has mode {mode:o}: others can read it", path.display()),
            format!("chmod 600 {}", shell_quote(&path.to_string_lossy())),
        ),
        _ => Check::pass("token", format!("{} (mode 600)", path.display())),
    }
}

fn check_service(service: &ServiceRecord) -> Check {
    if service.path.exists() {
        Check::pass("service", format!("{} is there", service.path.display()))
    } else {
        Check::fail(
            "service",
            format!("{} is missing", service.path.display()),
            "cairn install --service".into(),
        )
    }
}
