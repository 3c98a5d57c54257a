//! `cairn team …`: the team server, its members, trust, and syncing now.

use std::process::ExitCode;

use cairn::app::{
    AddMemberRequest, Cairn, MembersRequest, RemoveMemberRequest, SyncRequest, TeamInitRequest,
    TrustRequest, UntrustRequest, team_line,
};

use super::{TeamCommand, output};

pub async fn run(
    cairn: &Cairn,
    db: Option<String>,
    action: TeamCommand,
) -> anyhow::Result<ExitCode> {
    match action {
        TeamCommand::Init { json } => {
            let init = cairn.team_init(TeamInitRequest { db }).await?;
            if json {
                output::json(&init)?;
            } else {
                output::line(format!(
                    "team server {} ready for {} (namespace {}, database {}, schema {})",
                    init.server, init.repository, init.namespace, init.database, init.schema
                ))?;
                output::line(
                    "next: `cairn team add-member <developer> --output <file>` for each developer",
                )?;
            }
        }
        TeamCommand::AddMember { developer, output } => {
            let added = cairn
                .add_member(AddMemberRequest {
                    db,
                    developer,
                    output,
                })
                .await?;
            match (&added.file, &added.password) {
                (Some(path), _) => eprintln!(
                    "{} can sign in to {}: credentials in {} (mode 0600) — hand it over privately; it belongs at {}",
                    added.developer,
                    added.repository,
                    path.display(),
                    added
                        .default_file
                        .as_ref()
                        .map_or("~/.config/cairn/team.toml".to_string(), |p| p
                            .display()
                            .to_string())
                ),
                (None, Some(password)) => output::line(format!(
                    "server = {:?}\ndeveloper = {:?}\npassword = {:?}",
                    added.server,
                    added.developer,
                    password.expose()
                ))?,
                (None, None) => {}
            }
        }
        TeamCommand::RemoveMember { developer } => {
            let removed = cairn
                .remove_member(RemoveMemberRequest { db, developer })
                .await?;
            output::line(if removed.removed {
                format!("{} removed (their memories stay)", removed.developer)
            } else {
                format!("{} was not a member", removed.developer)
            })?;
        }
        TeamCommand::Trust => {
            let trusted = cairn.trust(TrustRequest {})?;
            output::line(format!(
                "trusted: {} may send your team credentials and memories to {} as {}/{} (recorded in {})",
                trusted.repository.display(),
                trusted.server,
                trusted.namespace,
                trusted.database,
                trusted.file.display()
            ))?;
        }
        TeamCommand::Untrust => {
            let untrusted = cairn.untrust(UntrustRequest {})?;
            output::line(if untrusted.was_trusted {
                format!(
                    "{} is no longer trusted with a team server",
                    untrusted.repository.display()
                )
            } else {
                format!(
                    "{} was not trusted with a team server",
                    untrusted.repository.display()
                )
            })?;
        }
        TeamCommand::Members => {
            for member in cairn.members(MembersRequest { db }).await?.0 {
                output::line(member)?;
            }
        }
        TeamCommand::Sync { json } => {
            let synced = cairn.team_sync(SyncRequest {}).await?;
            if json {
                output::json(&synced)?;
            } else {
                output::line(team_line(&synced.status))?;
                if let Some(note) = &synced.note {
                    output::line(note)?;
                }
            }
            // Exit 2 while writes stay queued (the server is away).
            if synced.status.queued > 0 {
                return Ok(ExitCode::from(2));
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
