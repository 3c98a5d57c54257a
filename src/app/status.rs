//! `cairn status`: the daemon and the index's freshness, without opening the store.

use std::path::PathBuf;
use std::time::Duration;

use serde::Serialize;

use super::Cairn;
use crate::config::team::TeamSetup;
use crate::memory::team::TeamStatus;
use crate::running::{self, client};

/// Where things stand (fields in alphabetical order: the order `cairn status --json` prints).
#[derive(Debug, Serialize)]
pub struct Status {
    pub daemon: Option<DaemonStatus>,
    pub data_dir: PathBuf,
    pub head: Option<String>,
    /// An index run has written the store.
    pub indexed: bool,
    pub repository: PathBuf,
    pub team: TeamState,
    pub token: PathBuf,
}

/// The daemon that holds this repository's lock (fields in alphabetical order, as printed).
#[derive(Debug, Serialize)]
pub struct DaemonStatus {
    /// Why it did not answer.
    pub error: Option<String>,
    /// What it answered.
    pub health: Option<serde_json::Value>,
    pub pid: u32,
    /// It answered `/health`.
    pub reachable: bool,
    pub socket: PathBuf,
    pub started_at: i64,
    pub url: String,
}

impl DaemonStatus {
    /// The commit the daemon's index is at.
    pub fn indexed_commit(&self) -> Option<&str> {
        self.health.as_ref().and_then(|h| h["commit"].as_str())
    }

    /// How many nodes the daemon holds in memory.
    pub fn nodes(&self) -> u64 {
        self.health
            .as_ref()
            .and_then(|h| h["nodes"].as_u64())
            .unwrap_or(0)
    }
}

/// Team mode as configured (its JSON: null when off, `{"error": …}` when misconfigured, the
/// links' status when on).
#[derive(Debug)]
pub enum TeamState {
    Off,
    Broken(String),
    On(Box<TeamLinks>),
}

/// Team mode's two databases, each synced through its own outbox and pull cursor (its JSON:
/// the repository's status, with the organisation's under `organisation`).
#[derive(Debug, Clone, Serialize)]
pub struct TeamLinks {
    #[serde(flatten)]
    pub repository: TeamStatus,
    /// The organisation's database (`_org`) on the same server.
    pub organisation: TeamStatus,
}

impl TeamLinks {
    /// The state of every database of this repository's link.
    pub fn of(
        config: &std::sync::Arc<crate::config::team::TeamConfig>,
        data_dir: &std::path::Path,
    ) -> TeamLinks {
        use crate::memory::team::Link;
        TeamLinks {
            repository: Link::new(config.clone(), data_dir).status(),
            organisation: Link::new(std::sync::Arc::new(config.organisation()), data_dir).status(),
        }
    }

    /// Each database with the name `cairn status` and `cairn doctor` give it.
    pub fn each(&self) -> [(&'static str, &TeamStatus); 2] {
        [("team", &self.repository), ("team org", &self.organisation)]
    }

    /// Writes waiting for the server, in both databases.
    pub fn queued(&self) -> usize {
        self.repository.queued + self.organisation.queued
    }
}

impl Serialize for TeamState {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            TeamState::Off => serializer.serialize_none(),
            TeamState::Broken(why) => serde_json::json!({ "error": why }).serialize(serializer),
            TeamState::On(status) => super::sorted(status, serializer),
        }
    }
}

impl Cairn {
    /// Whether the daemon runs and answers, where, and what the index and team mode are.
    pub fn status(&self) -> Status {
        let repo = &self.repo;
        let token = running::read_token(&repo.data_dir);
        let daemon = running::DaemonRecord::running(&repo.data_dir).map(|record| {
            let health = client::get(
                record.port,
                token.as_deref().unwrap_or(""),
                "/health",
                Duration::from_secs(2),
            )
            .and_then(|body| Ok(serde_json::from_str::<serde_json::Value>(&body)?));
            DaemonStatus {
                pid: record.pid,
                url: record.url,
                socket: record.socket,
                started_at: record.started_at,
                reachable: health.is_ok(),
                error: health.as_ref().err().map(|e| format!("{e:#}")),
                health: health.ok(),
            }
        });
        Status {
            repository: repo.root.clone(),
            data_dir: repo.data_dir.clone(),
            indexed: crate::datadir::DataDir::at(&repo.data_dir)
                .generation()
                .exists(),
            head: repo
                .is_git
                .then(|| crate::history::head(&repo.root))
                .flatten(),
            daemon,
            token: crate::datadir::DataDir::at(&repo.data_dir).token(),
            team: self.team_state(),
        }
    }

    /// Team mode's configuration and, when on, the link's state.
    pub(super) fn team_state(&self) -> TeamState {
        match &self.repo.team {
            TeamSetup::Off => TeamState::Off,
            TeamSetup::Broken(why) => TeamState::Broken(why.clone()),
            TeamSetup::On(config) => {
                TeamState::On(Box::new(TeamLinks::of(config, &self.repo.data_dir)))
            }
        }
    }
}
