//! `cairn doctor`: what cairn depends on, checked, each problem with what fixes it.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;

use super::{AskError, Cairn, team_line};
use crate::config::team::TeamSetup;
use crate::context::Freshness;
use crate::memory::{Approval, MemoryType};
use crate::running::{self, client};
use crate::storage::StoreError;

/// Checks made elsewhere (the assistants' registrations, the token, the service), made on
/// every call: the daemon's page runs them again on each visit.
pub type Registrations = Arc<dyn Fn() -> Vec<Check> + Send + Sync>;

/// What `doctor` is asked: the checks made elsewhere, run after cairn's own (which narrow the
/// data files' modes first), and whether the daemon itself asks (its page), which then needs
/// no answer from itself over HTTP.
pub struct DoctorRequest {
    pub registrations: Registrations,
    pub in_daemon: bool,
}

impl Default for DoctorRequest {
    fn default() -> Self {
        DoctorRequest {
            registrations: Arc::new(Vec::new),
            in_daemon: false,
        }
    }
}

/// Every check, in order.
#[derive(Debug, Serialize)]
pub struct Doctor {
    pub checks: Vec<Check>,
}

impl Doctor {
    /// Some check found a problem.
    pub fn has_problems(&self) -> bool {
        self.checks.iter().any(|c| c.verdict == Verdict::Problem)
    }
}

/// One thing checked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Check {
    pub name: String,
    pub verdict: Verdict,
    /// What was found.
    pub detail: String,
    /// What to do about it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix: Option<String>,
}

/// What a check found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Ok,
    Problem,
    /// A choice the user made that weakens a protection, or something others did that cairn
    /// worked around: not a fault here, said every time.
    Warning,
    /// Worth knowing, not a fault (where things are, what is optional and missing).
    Note,
}

impl Check {
    /// A check with its verdict, what was found and what fixes it.
    pub fn new(
        name: &str,
        verdict: Verdict,
        detail: impl Into<String>,
        fix: Option<&str>,
    ) -> Check {
        Check {
            name: name.to_string(),
            verdict,
            detail: detail.into(),
            fix: fix.map(str::to_string),
        }
    }

    fn of(name: &str, verdict: Result<String, String>) -> Check {
        match verdict {
            Ok(detail) => Check::new(name, Verdict::Ok, detail, None),
            Err(detail) => Check::new(name, Verdict::Problem, detail, None),
        }
    }
}

impl Cairn {
    /// Checks the data directory, the store and index, the memories, team mode and the
    /// daemon, then the registrations given; narrows data files others could read.
    pub async fn doctor(&self, request: DoctorRequest) -> Doctor {
        let data_dir = &self.repo.data_dir;
        let mut checks = vec![
            Check::new(
                "repository",
                Verdict::Note,
                self.repo.root.display().to_string(),
                None,
            ),
            Check::new("data", Verdict::Note, data_dir.display().to_string(), None),
            // The page's visit (a GET) changes nothing: it says what `cairn doctor` narrows.
            Check::of("data files", private_data(data_dir, !request.in_daemon)),
        ];
        checks.extend(self.store_and_index_checks().await);
        checks.push(self.memories_check().await);
        checks.push(self.approval_check().await);
        checks.push(self.org_types_check());
        checks.extend(self.mem0_check());
        checks.push(Check::new(
            "search",
            Verdict::Note,
            self.memories.mode().detail,
            None,
        ));
        // After the memories: reading them exchanged with the team server.
        checks.extend(self.team_checks());
        checks.extend(self.skipped_rows_checks());
        let token = running::read_token(data_dir);
        checks.push(if request.in_daemon {
            Check::of(
                "daemon",
                Ok(format!(
                    "running (pid {}), answering this page",
                    std::process::id()
                )),
            )
        } else {
            daemon_check(data_dir, token.as_deref())
        });
        checks.extend(
            (request.registrations)()
                .into_iter()
                .map(|check| optional_as_note(check, token.is_some())),
        );
        Doctor { checks }
    }

    /// Whether the store opens (with its schema and size) and whether the index is fresh.
    async fn store_and_index_checks(&self) -> Vec<Check> {
        match self.snapshot().await {
            Ok(snapshot) => {
                let store = Check::of(
                    "store",
                    Ok(format!(
                        "opens, schema {}, {} nodes",
                        crate::storage::SCHEMA_VERSION,
                        snapshot.graph.nodes.len()
                    )),
                );
                vec![store, index_check(&self.freshness(&snapshot).await)]
            }
            Err(e) => vec![Check::new(
                "store",
                Verdict::Problem,
                e.to_string(),
                Some(if is_damaged(&e) {
                    "run `cairn index --rebuild`"
                } else {
                    "run `cairn index`"
                }),
            )],
        }
    }

    /// How many memories are stored and live.
    async fn memories_check(&self) -> Check {
        Check::of(
            "memories",
            match self.memories.all().await {
                Ok(all) => Ok(format!(
                    "{} stored ({} live)",
                    all.len(),
                    all.iter().filter(|m| m.is_live()).count()
                )),
                Err(e) => Err(e.to_string()),
            },
        )
    }

    /// Which assistants' memories wait for a person's approval, and how many wait; a setting
    /// that does not parse is a problem: assistants' writes fail until it is mended.
    async fn approval_check(&self) -> Check {
        let approval = match self.approval() {
            Ok(approval) => approval,
            Err(e) => {
                return Check::new(
                    "approval",
                    Verdict::Problem,
                    format!("{e}; assistants' memories are refused until it is mended"),
                    Some("write `approval = \"required\"`, `\"off\"` or a list of memory types"),
                );
            }
        };
        let gated = match &approval {
            Approval::Off => {
                return Check::new(
                    "approval",
                    Verdict::Note,
                    "off: assistants' memories are served as written",
                    Some(
                        "`[memory] approval = \"required\"` in cairn.toml or ~/.config/cairn/config.toml to approve them first",
                    ),
                );
            }
            Approval::All => "every type".to_string(),
            Approval::Types(types) => types
                .iter()
                .map(|t| t.as_str())
                .collect::<Vec<_>>()
                .join(", "),
        };
        let waiting = match self.pending_memories().await {
            Ok(pending) => format!("{} waiting", pending.len()),
            Err(e) => format!("pending memories unreadable: {e}"),
        };
        Check::of("approval", Ok(format!("required for {gated}; {waiting}")))
    }

    /// Which memory types go to the organisation's memories by default; a repository's ask
    /// beyond what the user allows (ignored) or a list that does not parse is a problem.
    fn org_types_check(&self) -> Check {
        let names = |types: &[MemoryType]| {
            types
                .iter()
                .map(|t| t.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        };
        match self.org_scope() {
            Err(e) => Check::new(
                "org types",
                Verdict::Problem,
                format!("{e}; writes that take the default scope fail until it is mended"),
                Some("list memory types, e.g. `org_types = [\"developer_pattern\"]`"),
            ),
            Ok(scope) if !scope.refused.is_empty() => Check::new(
                "org types",
                Verdict::Problem,
                format!(
                    "cairn.toml asks to send {} to the organisation's memories, which every repository of the organisation reads; ignored: your own configuration does not allow it",
                    names(&scope.refused)
                ),
                Some(
                    "to allow it, list the types in `[memory] org_types` of ~/.config/cairn/config.toml; otherwise nothing to do",
                ),
            ),
            Ok(scope) if scope.types.is_empty() => Check::new(
                "org types",
                Verdict::Note,
                "none: every memory stays in the repository unless a write names `org`",
                None,
            ),
            Ok(scope) => Check::new(
                "org types",
                Verdict::Note,
                format!(
                    "to the organisation's memories unless a write names its scope: {}",
                    names(&scope.types)
                ),
                None,
            ),
        }
    }

    /// A warning while the user's own configuration opens the mem0 routes without the
    /// daemon's token; none otherwise.
    fn mem0_check(&self) -> Option<Check> {
        self.repo.user.mem0.allow_without_token.then(|| {
            Check::new(
                "mem0",
                Verdict::Warning,
                "the mem0 routes answer without the daemon's token (`[mem0] allow_without_token` in your config.toml): any program on this machine can read and write memories through them",
                Some("remove `allow_without_token` once every mem0 client sends the token"),
            )
        })
    }

    /// Team mode's configuration and sync state, one check per database (the repository's
    /// and the organisation's); none in solo mode.
    fn team_checks(&self) -> Vec<Check> {
        match &self.repo.team {
            TeamSetup::Off => Vec::new(),
            TeamSetup::Broken(why) => vec![Check::of("team", Err(why.clone()))],
            TeamSetup::On(config) => {
                let links = super::TeamLinks::of(config, &self.repo.data_dir);
                links
                    .each()
                    .into_iter()
                    .map(|(name, status)| {
                        let line = team_line(status);
                        let troubled = status.sync.error.is_some()
                            || status.queued > 0
                            || status.unreadable > 0
                            || status.rejected > 0;
                        Check::of(name, if troubled { Err(line) } else { Ok(line) })
                    })
                    .collect()
            }
        }
    }

    /// Per team database (the repository's and the organisation's): the pulled rows this copy
    /// skipped past, how many and the newest reasons.
    fn skipped_rows_checks(&self) -> Vec<Check> {
        if !matches!(self.repo.team, TeamSetup::On(_)) {
            return Vec::new();
        }
        let mut links: Vec<_> = self.memories.team().cloned().into_iter().collect();
        if let Ok(org) = self.org_memories() {
            links.extend(org.team().cloned());
        }
        links.iter().map(|link| skipped_rows_check(link)).collect()
    }
}

/// The rows one team database's copy skipped past.
fn skipped_rows_check(link: &crate::memory::team::Link) -> Check {
    let identity = &link.config.identity;
    let database = format!("{}/{}", identity.namespace, identity.database);
    let record = link.skip_log().read();
    if record.total == 0 {
        return Check::of("team rows", Ok(format!("{database}: none skipped")));
    }
    let newest: Vec<String> = record.newest.iter().rev().map(|s| s.describe()).collect();
    Check::new(
        "team rows",
        Verdict::Warning,
        format!(
            "{database}: {} row(s) from the team server skipped (they do not decode, or fail the checks and limits of `cairn memory import`); newest first: {}",
            record.total,
            newest.join("; ")
        ),
        Some(
            "they stay on the server as they are and this copy goes on without them: write them again with cairn, or delete them on the server",
        ),
    )
}

/// Whether the graph store failed on its contents (a rebuild mends it).
fn is_damaged(error: &AskError) -> bool {
    let AskError::Store(error) = error else {
        return false;
    };
    error
        .chain()
        .any(|cause| matches!(cause.downcast_ref(), Some(StoreError::Damaged { .. })))
}

/// Whether the index is in step with HEAD and the files on disk.
fn index_check(fresh: &Freshness) -> Check {
    let behind = fresh.head_commit.is_some() && fresh.head_commit != fresh.indexed_commit;
    if behind || fresh.changed_count > 0 {
        Check::new(
            "index",
            Verdict::Problem,
            format!(
                "indexed at {}, HEAD is {}, {} file(s) changed since (first: {})",
                fresh.indexed_commit.as_deref().unwrap_or("(no commit)"),
                fresh.head_commit.as_deref().unwrap_or("(no commit)"),
                fresh.changed_count,
                fresh.changed_files.first().map_or("-", String::as_str)
            ),
            Some("run `cairn index`, or keep `cairn daemon` running"),
        )
    } else {
        Check::of(
            "index",
            Ok(format!(
                "fresh at {}",
                fresh
                    .indexed_commit
                    .as_deref()
                    .unwrap_or("(not a git repository)")
            )),
        )
    }
}

/// Whether a daemon runs for this repository and answers.
fn daemon_check(data_dir: &Path, token: Option<&str>) -> Check {
    match running::DaemonRecord::running(data_dir) {
        // Not a fault: the CLI and `cairn serve` work without a daemon, only slower to follow
        // edits. An installed service that is not running shows up in the service check.
        None => Check::new(
            "daemon",
            Verdict::Note,
            "not running",
            Some(
                "start it with `cairn daemon`, or `cairn install --service` to run it as a user service",
            ),
        ),
        Some(record) => match client::get(
            record.port,
            token.unwrap_or(""),
            "/health",
            Duration::from_secs(2),
        ) {
            Ok(_) => Check::of(
                "daemon",
                Ok(format!("running (pid {}) at {}", record.pid, record.url)),
            ),
            Err(e) => Check::new(
                "daemon",
                Verdict::Problem,
                format!(
                    "pid {} holds the lock but {} does not answer ({e:#})",
                    record.pid, record.url
                ),
                Some("restart it"),
            ),
        },
    }
}

/// A registration check as reported: a missing registration, or a missing token while there
/// is none, is a note.
fn optional_as_note(mut check: Check, has_token: bool) -> Check {
    // Not faults: the CLI and `cairn serve` work unregistered and without the HTTP token.
    let optional = check.name == "clients" || (check.name == "token" && !has_token);
    if optional && check.verdict == Verdict::Problem {
        check.verdict = Verdict::Note;
    }
    check
}

/// Narrows anything in the data directory that others could read (or, not `narrowing`, only
/// finds it); says what it found.
fn private_data(data_dir: &Path, narrowing: bool) -> Result<String, String> {
    let found = if narrowing {
        crate::fsutil::tighten(data_dir)
    } else {
        crate::fsutil::exposed(data_dir)
    };
    match found {
        Ok(opened) if opened.is_empty() => Ok("private (directories 0700, files 0600)".into()),
        Ok(opened) => Err(format!(
            "{} entr{} {}: {}",
            opened.len(),
            if opened.len() == 1 { "y" } else { "ies" },
            match (narrowing, opened.len() == 1) {
                (true, true) => "could be read by others and was narrowed to 0700/0600",
                (true, false) => "could be read by others and were narrowed to 0700/0600",
                (false, _) => "can be read by others (`cairn doctor` narrows them to 0700/0600)",
            },
            opened
                .iter()
                .take(5)
                .map(|o| format!("{} ({:o})", o.path.display(), o.mode))
                .collect::<Vec<_>>()
                .join(", ")
        )),
        Err(e) => Err(format!("cannot check the modes: {e}")),
    }
}
