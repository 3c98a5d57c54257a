//! Claude Code hook events (JSON) as episodic events: files read, edited, searched, commands
//! run. `cairn hook` and the daemon's `/hook` both record through here.

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use serde::Deserialize;

use super::{Event, Kind};
use crate::config::Repo;
use crate::datadir::DataDir;
use crate::secrets;

/// The fields of a Claude Code hook event cairn reads.
#[derive(Debug, Deserialize)]
pub struct HookInput {
    pub hook_event_name: String,
    #[serde(default)]
    pub session_id: Option<String>,
    #[serde(default)]
    pub cwd: Option<PathBuf>,
    #[serde(default)]
    pub tool_name: Option<String>,
    #[serde(default)]
    pub tool_input: Option<serde_json::Value>,
}

impl HookInput {
    /// Reads a hook event; an error describes the JSON without quoting it.
    pub fn parse(bytes: &[u8]) -> anyhow::Result<HookInput> {
        serde_json::from_slice(bytes).map_err(|e| {
            let text = String::from_utf8_lossy(bytes);
            anyhow::anyhow!(
                "the hook event is not Claude Code hook JSON: {}",
                secrets::json_error(&text, &e)
            )
        })
    }

    pub(crate) fn is_session_start(&self) -> bool {
        self.hook_event_name == "SessionStart"
    }
}

/// The episodic event a hook input stands for, if any: `PostToolUse` of the file and shell
/// tools, `SessionStart` and `Stop`. `PreToolUse` records nothing — the tool has not run yet,
/// and its `PostToolUse` follows.
pub(crate) fn event_of(root: &Path, input: &HookInput, now: i64) -> Option<Event> {
    let mut event = Event {
        t: now,
        kind: Kind::SessionStart,
        paths: Vec::new(),
        command: None,
        session: input.session_id.clone(),
    };
    match input.hook_event_name.as_str() {
        "SessionStart" => return Some(event),
        "Stop" | "SessionEnd" => {
            event.kind = Kind::Stop;
            return Some(event);
        }
        "PostToolUse" => {}
        _ => return None,
    }
    let tool_input = input.tool_input.as_ref()?;
    let field = |name: &str| tool_input.get(name).and_then(|v| v.as_str());
    let file = field("file_path").or_else(|| field("notebook_path"));
    event.kind = match input.tool_name.as_deref()? {
        "Read" | "NotebookRead" => Kind::Read,
        "Edit" | "MultiEdit" | "Write" | "NotebookEdit" => Kind::Edit,
        "Grep" | "Glob" => Kind::Search,
        "Bash" => Kind::Command,
        _ => return None,
    };
    match event.kind {
        Kind::Command => {
            // Only the program and the repository files it names, read from the command with
            // its secrets redacted: commands carry passwords, tokens and URLs with
            // credentials, and a token can be typed where a program goes.
            let command = secrets::redact(field("command")?).text;
            let mut words = command.split_whitespace();
            event.command = words.by_ref().find(|w| !w.contains('=')).and_then(program);
            event.paths = words
                .filter(|w| !w.starts_with('-') && w.contains('.'))
                .filter_map(|w| super::relative(root, w.trim_matches(['"', '\''])))
                .filter(|p| root.join(p).is_file())
                .take(20)
                .collect();
        }
        Kind::Search => {
            event.paths = field("path")
                .and_then(|p| super::relative(root, p))
                .filter(|p| root.join(p).is_file())
                .into_iter()
                .collect();
        }
        _ => event.paths = vec![super::relative(root, file?)?],
    }
    Some(event)
}

/// The first word of a redacted command as the event keeps it: a program's name or path
/// (`cargo`, `./scripts/test.sh`), or the word with a redaction in it (a token or a URL with
/// credentials where a program goes, `[REDACTED:github-token]`); any other word (a password
/// typed at a shell prompt, a URL) is not kept. At most 100 characters.
fn program(word: &str) -> Option<String> {
    let name = word
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-' | b'+' | b'/'));
    (name || word.contains("[REDACTED:")).then(|| word.chars().take(100).collect())
}

/// Appends the event the input stands for, if any; says whether the session is starting.
pub fn record(repo: &Repo, input: &HookInput) -> anyhow::Result<bool> {
    if let Some(event) = event_of(&repo.root, input, crate::clock::now()) {
        crate::fsutil::private_dir(&repo.data_dir)?;
        super::append(&DataDir::at(&repo.data_dir).events(), &event)
            .context("appending to the event file")?;
    }
    Ok(input.is_session_start())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(json: serde_json::Value) -> HookInput {
        HookInput::parse(json.to_string().as_bytes()).unwrap()
    }

    #[test]
    fn tool_uses_become_events() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::write(root.join("src/a.py"), "").unwrap();
        let root_text = root.to_string_lossy();
        let read = input(serde_json::json!({
            "hook_event_name": "PostToolUse", "session_id": "s1", "tool_name": "Read",
            "tool_input": {"file_path": format!("{root_text}/src/a.py")}
        }));
        let event = event_of(root, &read, 7).unwrap();
        assert_eq!(
            (event.kind, event.paths.clone()),
            (Kind::Read, vec!["src/a.py".to_string()])
        );
        assert_eq!(event.session.as_deref(), Some("s1"));
        let edit = input(serde_json::json!({
            "hook_event_name": "PostToolUse", "tool_name": "MultiEdit",
            "tool_input": {"file_path": "src/a.py"}
        }));
        assert_eq!(event_of(root, &edit, 7).unwrap().kind, Kind::Edit);
        let bash = input(serde_json::json!({
            "hook_event_name": "PostToolUse", "tool_name": "Bash",
            "tool_input": {"command": "API_KEY=sk-secret pytest -x src/a.py missing.py"}
        }));
        let event = event_of(root, &bash, 7).unwrap();
        assert_eq!(event.kind, Kind::Command);
        assert_eq!(event.paths, ["src/a.py"]);
        assert_eq!(event.command.as_deref(), Some("pytest"));
        assert!(!serde_json::to_string(&event).unwrap().contains("sk-secret"));
    }

    #[test]
    fn commands_are_recorded_after_redaction() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::write(root.join("dump.sql"), "").unwrap();
        let token = ["gh", "p_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"].concat();
        for (command, recorded, secret) in [
            (
                token.clone(),
                Some("[REDACTED:github-token]"),
                token.as_str(),
            ),
            (
                "postgres://app:Pg-s3cret@db.internal/prod".to_string(),
                Some("postgres://app:[REDACTED:url-password]@db.internal/prod"),
                "Pg-s3cret",
            ),
            ("S3cr3t!pass".to_string(), None, "S3cr3t!pass"),
            (
                "mysql -u root -pS3cretPass shop < dump.sql".to_string(),
                Some("mysql"),
                "S3cretPass",
            ),
            (
                "PGPASSWORD=hunter2 ./scripts/psql.sh dump.sql".to_string(),
                Some("./scripts/psql.sh"),
                "hunter2",
            ),
        ] {
            let bash = input(serde_json::json!({
                "hook_event_name": "PostToolUse", "tool_name": "Bash",
                "tool_input": {"command": command}
            }));
            let event = event_of(root, &bash, 7).unwrap();
            assert_eq!(event.command.as_deref(), recorded, "{command}");
            let line = serde_json::to_string(&event).unwrap();
            assert!(!line.contains(secret), "{line}");
        }
    }

    #[test]
    fn what_is_not_an_event_records_nothing() {
        let root = Path::new("/repo");
        let pre = input(serde_json::json!({
            "hook_event_name": "PreToolUse", "tool_name": "Read",
            "tool_input": {"file_path": "/repo/a.py"}
        }));
        assert!(event_of(root, &pre, 1).is_none());
        let outside = input(serde_json::json!({
            "hook_event_name": "PostToolUse", "tool_name": "Read",
            "tool_input": {"file_path": "/etc/passwd"}
        }));
        assert!(event_of(root, &outside, 1).is_none());
        let other = input(serde_json::json!({
            "hook_event_name": "PostToolUse", "tool_name": "WebFetch", "tool_input": {}
        }));
        assert!(event_of(root, &other, 1).is_none());
        assert_eq!(
            event_of(
                root,
                &input(serde_json::json!({"hook_event_name": "Stop"})),
                1
            )
            .unwrap()
            .kind,
            Kind::Stop
        );
        assert!(HookInput::parse(b"not json").is_err());
    }
}
