//! `cairn hook`: Claude Code hook events (JSON on stdin) become episodic events — files read,
//! edited, searched, commands run — appended to the repository's event file, which feeds the
//! recency and frequency of every score. On `SessionStart` it prints the context pack (from
//! the running daemon when there is one), which Claude Code adds to the session.
//!
//! A hook must never get in the assistant's way: every failure is logged to
//! `<data dir>/hook.log` (rolled over at a size limit) and the process still exits 0 with
//! nothing on stdout.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context as _;
use serde::Deserialize;

use crate::app::Cairn;
use crate::config::Repo;
use crate::daemon::files;
use crate::events::{self, Event, Kind};

/// Hook events larger than this are not Claude Code's.
const MAX_EVENT_BYTES: u64 = 1024 * 1024;

/// How long `SessionStart` waits for the daemon's context.
const CONTEXT_TIMEOUT: Duration = Duration::from_secs(5);

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
    pub fn parse(bytes: &[u8]) -> anyhow::Result<HookInput> {
        serde_json::from_slice(bytes).context("the hook event is not Claude Code hook JSON")
    }

    fn is_session_start(&self) -> bool {
        self.hook_event_name == "SessionStart"
    }
}

/// The episodic event a hook input stands for, if any: `PostToolUse` of the file and shell
/// tools, `SessionStart` and `Stop`. `PreToolUse` records nothing — the tool has not run yet,
/// and its `PostToolUse` follows.
pub fn event_of(root: &Path, input: &HookInput, now: i64) -> Option<Event> {
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
            let command = field("command")?;
            // Only the program and the repository files it names: commands can carry secrets.
            let mut words = command.split_whitespace();
            event.command = words
                .by_ref()
                .find(|w| !w.contains('='))
                .map(|w| w.chars().take(100).collect());
            event.paths = words
                .filter(|w| !w.starts_with('-') && w.contains('.'))
                .filter_map(|w| events::relative(root, w.trim_matches(['"', '\''])))
                .filter(|p| root.join(p).is_file())
                .take(20)
                .collect();
        }
        Kind::Search => {
            event.paths = field("path")
                .and_then(|p| events::relative(root, p))
                .filter(|p| root.join(p).is_file())
                .into_iter()
                .collect();
        }
        _ => event.paths = vec![events::relative(root, file?)?],
    }
    Some(event)
}

/// `cairn hook`: reads the event from stdin, records it, and returns what the session
/// should start with (the caller prints it). Never fails: errors go to `hook.log`.
pub fn run(repo: Option<&Path>, data_dir: Option<&Path>) -> Option<String> {
    let mut bytes = Vec::new();
    let located = std::io::stdin()
        .take(MAX_EVENT_BYTES)
        .read_to_end(&mut bytes)
        .context("reading the hook event")
        .and_then(|_| {
            let input = HookInput::parse(&bytes)?;
            let start = match (repo, &input.cwd) {
                (Some(repo), _) => repo.to_path_buf(),
                (None, Some(cwd)) => cwd.clone(),
                (None, None) => std::env::current_dir().context("no working directory")?,
            };
            Ok((Repo::discover(&start, data_dir)?, input))
        });
    let (repo, input) = match located {
        Ok(located) => located,
        Err(e) => {
            // No repository to log beside: the user's cache directory.
            if let Some(dir) = dirs::cache_dir() {
                log(&dir.join("cairn"), &e);
            }
            return None;
        }
    };
    record_and_answer(&repo, &input).unwrap_or_else(|e| {
        log(&repo.data_dir, &e);
        None
    })
}

/// Appends the event the input stands for, if any; says whether the session is starting.
fn record(repo: &Repo, input: &HookInput) -> anyhow::Result<bool> {
    if let Some(event) = event_of(&repo.root, input, crate::index::now()) {
        crate::private::private_dir(&repo.data_dir)?;
        events::append(&files::events_path(&repo.data_dir), &event)
            .context("appending to the event file")?;
    }
    Ok(input.is_session_start())
}

fn record_and_answer(repo: &Repo, input: &HookInput) -> anyhow::Result<Option<String>> {
    if !record(repo, input)? {
        return Ok(None);
    }
    if let Some(record) = files::DaemonRecord::running(&repo.data_dir) {
        let token = files::read_token(&repo.data_dir).unwrap_or_default();
        match crate::daemon::client::get(record.port, &token, "/context", CONTEXT_TIMEOUT) {
            Ok(text) => return Ok(Some(text)),
            Err(e) => tracing::debug!("the daemon did not answer: {e:#}"),
        }
    }
    // No daemon: build the context here (loads the stored index once).
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let report = runtime.block_on(async {
        let cairn = Cairn::new(repo.clone());
        let report = cairn.context(Default::default()).await;
        cairn.memories.close().await;
        report
    })?;
    Ok(Some(report.text))
}

/// The daemon's `/hook`: the same as `cairn hook`, with the daemon's own context.
pub async fn handle_in(cairn: &Cairn, bytes: &[u8]) -> anyhow::Result<Option<String>> {
    let input = HookInput::parse(bytes)?;
    if !record(&cairn.repo, &input)? {
        return Ok(None);
    }
    Ok(Some(cairn.context(Default::default()).await?.text))
}

/// Appends the failure to `hook.log` in `dir`, which rolls over at its size limit.
fn log(dir: &Path, error: &anyhow::Error) {
    let _ = std::fs::create_dir_all(dir);
    let line = format!("{} cairn hook: {error:#}\n", crate::index::now());
    let _ = crate::rotation::append(
        &dir.join("hook.log"),
        line.as_bytes(),
        crate::rotation::LIMIT,
    );
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
