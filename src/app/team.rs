//! Team mode's administration: the team server's schema, its members, trusting the server a
//! repository names, and syncing now.

use std::path::PathBuf;

use anyhow::Context as _;
use serde::Serialize;

use super::TeamLinks;
use super::{AskError, Cairn};
use crate::clock::time_of_ms;
use crate::config::team;
use crate::memory::team::TeamStatus;
use crate::storage::remote::{self, TeamDatabase};

/// The team server to administer: `--db` (or `CAIRN_DB`), else `[team] db`.
#[derive(Debug, Clone, Default)]
pub struct TeamInitRequest {
    pub db: Option<String>,
}

/// A developer to add to this repository's team, and where a new member's credentials file
/// goes (nowhere: the answer carries them). A developer with a member identity on the server
/// keeps it, password and all.
#[derive(Debug, Clone, Default)]
pub struct AddMemberRequest {
    pub db: Option<String>,
    pub developer: String,
    pub output: Option<PathBuf>,
}

/// A member whose password is replaced in every database of the server they belong to, and
/// where their new credentials file goes (nowhere: the answer carries them).
#[derive(Debug, Clone, Default)]
pub struct RotatePasswordRequest {
    pub db: Option<String>,
    pub developer: String,
    pub output: Option<PathBuf>,
}

/// A developer to remove from this repository's databases (their memories stay).
#[derive(Debug, Clone, Default)]
pub struct RemoveMemberRequest {
    pub db: Option<String>,
    pub developer: String,
}

/// The developers who can sign in.
#[derive(Debug, Clone, Default)]
pub struct MembersRequest {
    pub db: Option<String>,
}

/// Trust the team server this repository's `cairn.toml` names.
#[derive(Debug, Clone, Default)]
pub struct TrustRequest {}

/// Take back the trust in this repository's team server.
#[derive(Debug, Clone, Default)]
pub struct UntrustRequest {}

/// Replay queued writes and pull teammates' changes now.
#[derive(Debug, Clone, Default)]
pub struct SyncRequest {}

/// A team server made ready for this repository (fields in alphabetical order, as printed).
#[derive(Debug, Serialize)]
pub struct TeamInit {
    pub database: String,
    pub namespace: String,
    pub repository: String,
    pub schema: u32,
    pub server: String,
}

/// A developer who can now sign in.
#[derive(Debug, Serialize)]
pub struct MemberAdded {
    pub developer: String,
    pub server: String,
    pub repository: String,
    /// The databases they can sign in to now (`namespace/database`): the repository's and
    /// its organisation's.
    pub databases: Vec<String>,
    /// They had a member identity on this server already, whose password stays as it was
    /// (no credentials file is written: theirs still works).
    pub existing: bool,
    /// The credentials file written (mode 0600).
    pub file: Option<PathBuf>,
    /// Where a developer keeps their credentials file.
    pub default_file: Option<PathBuf>,
    /// The new password, when no file was asked for (never serialised).
    #[serde(skip)]
    pub password: Option<team::Secret>,
}

/// A member's new password, set in every database they belong to.
#[derive(Debug, Serialize)]
pub struct PasswordRotated {
    pub developer: String,
    pub server: String,
    /// Where it was set (`namespace/database`).
    pub databases: Vec<String>,
    /// The credentials file written (mode 0600).
    pub file: Option<PathBuf>,
    /// Where a developer keeps their credentials file.
    pub default_file: Option<PathBuf>,
    /// The new password, when no file was asked for (never serialised).
    #[serde(skip)]
    pub password: Option<team::Secret>,
}

/// What removing a developer from a repository did, and what stays readable to them.
#[derive(Debug, Serialize)]
pub struct MemberRemoved {
    pub developer: String,
    /// The databases they were removed from (`namespace/database`): the repository's, and
    /// the organisation's unless another repository keeps them in it.
    pub removed: Vec<String>,
    /// The organisation's database, when they stay a member of it.
    pub kept: Option<String>,
    /// The organisation's other repositories they still belong to (why `kept`).
    pub through: Vec<String>,
}

/// The developers who can sign in.
#[derive(Debug, Serialize)]
#[serde(transparent)]
pub struct Members(pub Vec<String>);

/// A repository trusted with a team server.
#[derive(Debug, Serialize)]
pub struct Trusted {
    pub repository: PathBuf,
    pub server: String,
    pub namespace: String,
    pub database: String,
    /// Where the trust is recorded.
    pub file: PathBuf,
}

/// A repository no longer trusted with a team server.
#[derive(Debug, Serialize)]
pub struct Untrusted {
    pub repository: PathBuf,
    /// It was trusted until now.
    pub was_trusted: bool,
}

/// The team link after a sync (fields in alphabetical order, as printed).
#[derive(Debug, Serialize)]
pub struct Synced {
    /// Set while answers come from the last synced copy.
    pub note: Option<String>,
    #[serde(serialize_with = "super::sorted")]
    pub status: TeamLinks,
}

impl Cairn {
    /// Creates this repository's namespace and database, and its organisation's database, on
    /// the team server and applies cairn's schema and permissions (idempotent).
    pub async fn team_init(&self, request: TeamInitRequest) -> Result<TeamInit, AskError> {
        async {
            let (server, url, identity) = self.admin(request.db.as_deref()).await?;
            server.init(&identity.namespace, &identity.database).await?;
            // The organisation's memories, in the same namespace with the same schema.
            let org = identity.organisation();
            server.init(&org.namespace, &org.database).await?;
            Ok(TeamInit {
                server: url,
                repository: identity.key,
                namespace: identity.namespace,
                database: identity.database,
                schema: remote::TEAM_SCHEMA_VERSION,
            })
        }
        .await
        .map_err(AskError::Team)
    }

    /// Adds a developer to this repository's database and its organisation's. One member
    /// identity per developer per server: a developer who is a member of any database on
    /// the server keeps their password (its newest hash is copied), a new one gets a random
    /// password, written to their credentials file if asked.
    pub async fn add_member(&self, request: AddMemberRequest) -> Result<MemberAdded, AskError> {
        let developer = crate::memory::model::developer_id(&request.developer)?;
        async {
            let (server, url, identity) = self.admin(request.db.as_deref()).await?;
            let targets = repository_databases(&identity);
            for target in &targets {
                server.init(&target.namespace, &target.database).await?;
            }
            let newest = memberships(&server, &developer)
                .await?
                .into_iter()
                .map(|(_, member)| member)
                .max_by_key(|member| member.set_at);
            let (member, password) = match newest {
                Some(member) => (member, None),
                None => {
                    let password = team::new_password().context("cannot draw a random password")?;
                    (server.hash(password.expose()).await?, Some(password))
                }
            };
            for target in &targets {
                server.put_member(target, &developer, &member).await?;
            }
            let file = match (&password, &request.output) {
                (Some(password), Some(path)) => {
                    team::write_credentials(path, &url, &developer, password)
                        .with_context(|| format!("cannot write {}", path.display()))?;
                    Some(path.clone())
                }
                _ => None,
            };
            Ok(MemberAdded {
                existing: password.is_none(),
                password: password.filter(|_| request.output.is_none()),
                developer,
                server: url,
                repository: identity.key,
                databases: targets.iter().map(ToString::to_string).collect(),
                file,
                default_file: team::default_credentials_file(),
            })
        }
        .await
        .map_err(AskError::Team)
    }

    /// Gives a member a new random password in every database of the server they belong to
    /// (bringing each to cairn's schema first), writing their credentials file if asked.
    pub async fn rotate_password(
        &self,
        request: RotatePasswordRequest,
    ) -> Result<PasswordRotated, AskError> {
        let developer = crate::memory::model::developer_id(&request.developer)?;
        async {
            let (server, url, _) = self.admin(request.db.as_deref()).await?;
            let databases: Vec<TeamDatabase> = memberships(&server, &developer)
                .await?
                .into_iter()
                .map(|(database, _)| database)
                .collect();
            if databases.is_empty() {
                anyhow::bail!(
                    "{developer} is not a member of any database on {url}: `cairn team add-member {developer}` adds them"
                );
            }
            let password = team::new_password().context("cannot draw a random password")?;
            let member = server.hash(password.expose()).await?;
            for database in &databases {
                server.init(&database.namespace, &database.database).await?;
                server.put_member(database, &developer, &member).await?;
            }
            if let Some(path) = &request.output {
                team::write_credentials(path, &url, &developer, &password)
                    .with_context(|| format!("cannot write {}", path.display()))?;
            }
            Ok(PasswordRotated {
                password: request.output.is_none().then_some(password),
                developer,
                server: url,
                databases: databases.iter().map(ToString::to_string).collect(),
                file: request.output,
                default_file: team::default_credentials_file(),
            })
        }
        .await
        .map_err(AskError::Team)
    }

    /// Removes a developer from this repository's database, and from its organisation's
    /// unless they still belong to another repository of it; their memories stay, and the
    /// server ends their open sessions there at their next query.
    pub async fn remove_member(
        &self,
        request: RemoveMemberRequest,
    ) -> Result<MemberRemoved, AskError> {
        let developer = crate::memory::model::developer_id(&request.developer)?;
        async {
            let (server, _, identity) = self.admin(request.db.as_deref()).await?;
            let [repository, org] = repository_databases(&identity);
            let mut removed = Vec::new();
            if server.remove_member(&repository, &developer).await? {
                removed.push(repository.to_string());
            }
            let through: Vec<String> = memberships(&server, &developer)
                .await?
                .into_iter()
                .map(|(database, _)| database)
                .filter(|d| d.namespace == org.namespace && d.database != org.database)
                .map(|d| d.to_string())
                .collect();
            let mut kept = None;
            if !through.is_empty() {
                kept = Some(org.to_string());
            } else if server.remove_member(&org, &developer).await? {
                removed.push(org.to_string());
            }
            Ok(MemberRemoved {
                developer,
                removed,
                kept,
                through,
            })
        }
        .await
        .map_err(AskError::Team)
    }

    /// The developers who can sign in.
    pub async fn members(&self, request: MembersRequest) -> Result<Members, AskError> {
        async {
            let (server, _, identity) = self.admin(request.db.as_deref()).await?;
            Ok(Members(
                server
                    .members(&identity.namespace, &identity.database)
                    .await?,
            ))
        }
        .await
        .map_err(AskError::Team)
    }

    /// Trusts the team server this repository's `cairn.toml` names (recorded outside the
    /// repository).
    pub fn trust(&self, _request: TrustRequest) -> Result<Trusted, AskError> {
        let repo = &self.repo;
        (|| {
            let (url, _) = team::server_url(&repo.settings.team, None)
                .context("this repository's cairn.toml names no team server ([team] db)")?;
            let url = team::check_url(url)?;
            let identity = team::repository_identity(&repo.root, &repo.settings.team)?;
            let file = team::trust::trust(&repo.root, &url, &identity)?;
            Ok(Trusted {
                repository: repo.root.clone(),
                server: url,
                namespace: identity.namespace,
                database: identity.database,
                file,
            })
        })()
        .map_err(AskError::Team)
    }

    /// Takes back the trust in this repository's team server.
    pub fn untrust(&self, _request: UntrustRequest) -> Result<Untrusted, AskError> {
        let was_trusted =
            team::trust::untrust(&self.repo.root).map_err(|e| AskError::Team(e.into()))?;
        Ok(Untrusted {
            repository: self.repo.root.clone(),
            was_trusted,
        })
    }

    /// Replays queued writes and pulls teammates' changes now, in the repository's database
    /// and then the organisation's.
    pub async fn team_sync(&self, _request: SyncRequest) -> Result<Synced, AskError> {
        let Some(repository) = self.memories.team_sync().await? else {
            return Err(AskError::Team(anyhow::anyhow!(
                "team mode is off: pass --db wss://host or set `db` in the [team] table of cairn.toml"
            )));
        };
        let org = self
            .org_memories()
            .map_err(|why| AskError::Team(anyhow::anyhow!("{why}")))?;
        let organisation = org.team_sync().await?.ok_or_else(|| {
            AskError::Team(anyhow::anyhow!(
                "the organisation's memories are not on the team server"
            ))
        })?;
        let note = match self.memories.staleness().await {
            Some(note) => Some(note),
            None => org.staleness().await,
        };
        Ok(Synced {
            status: TeamLinks {
                repository,
                organisation,
            },
            note,
        })
    }

    /// The team server's root user, signed in, and this repository's identity on it.
    async fn admin(
        &self,
        db: Option<&str>,
    ) -> anyhow::Result<(remote::Admin, String, team::Identity)> {
        let repo = &self.repo;
        let (url, identity) = team::chosen_server(&repo.root, &repo.settings.team, db)?.context(
            "no team server: pass --db wss://host or set `db` in the [team] table of cairn.toml",
        )?;
        let user = std::env::var(team::ADMIN_USER_ENV).ok();
        let password = std::env::var(team::ADMIN_PASSWORD_ENV).ok();
        let (Some(user), Some(password)) = (user, password) else {
            anyhow::bail!(
                "set {} and {} to the team server's root user",
                team::ADMIN_USER_ENV,
                team::ADMIN_PASSWORD_ENV
            );
        };
        let server = remote::Admin::connect(&url, &user, &password).await?;
        Ok((server, url, identity))
    }
}

/// A repository's databases on the team server: its own and its organisation's.
fn repository_databases(identity: &team::Identity) -> [TeamDatabase; 2] {
    [
        TeamDatabase::new(&identity.namespace, &identity.database),
        TeamDatabase::new(&identity.namespace, team::identity::ORG_DATABASE),
    ]
}

/// Every database of the server where `developer` is a member, with their sign-in there.
async fn memberships(
    server: &remote::Admin,
    developer: &str,
) -> anyhow::Result<Vec<(TeamDatabase, remote::Member)>> {
    let mut found = Vec::new();
    for database in server.team_databases().await? {
        if let Some(member) = server.member(&database, developer).await? {
            found.push((database, member));
        }
    }
    Ok(found)
}

/// One line of team-mode status: server, who, where, last sync, queue.
pub fn team_line(status: &TeamStatus) -> String {
    let sync = match (&status.sync.error, status.sync.synced_at) {
        (Some(error), at) => format!(
            "server away since {} ({error}); last synced {}",
            status.sync.error_at.map_or("?".to_string(), time_of_ms),
            at.map_or("never".to_string(), time_of_ms)
        ),
        (None, Some(at)) => format!("synced {}", time_of_ms(at)),
        (None, None) => "not synced yet".to_string(),
    };
    format!(
        "{} as {} ({}/{}, repository {}); {sync}; {} write(s) queued{}{}",
        status.server,
        status.developer,
        status.namespace,
        status.database,
        status.repository,
        status.queued,
        if status.unreadable > 0 {
            format!(
                ", {} unreadable line(s) in the outbox (set aside at the next write)",
                status.unreadable
            )
        } else {
            String::new()
        },
        if status.rejected > 0 {
            format!(", {} refused by the server and set aside", status.rejected)
        } else {
            String::new()
        }
    )
}
