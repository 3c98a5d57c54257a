//! `cairn team …`: the team server, its members, trust, and syncing now.

use std::process::ExitCode;

use cairn::app::{
    AddMemberRequest, Cairn, MembersRequest, RemoveMemberRequest, SyncRequest, TeamInitRequest,
    TrustRequest, UntrustRequest, team_line,
};

use super::{TeamCommand, output};

/// `cairn team …`: one function per subcommand; `db` is the `--db` the command line gave.
pub async fn run(
    cairn: &Cairn,
    db: Option<String>,
    action: TeamCommand,
) -> anyhow::Result<ExitCode> {
    match action {
        TeamCommand::Init { json } => init(cairn, TeamInitRequest { db }, json).await?,
        TeamCommand::AddMember { developer, output } => {
            let request = AddMemberRequest {
                db,
                developer,
                output,
            };
            add_member(cairn, request).await?;
        }
        TeamCommand::RemoveMember { developer } => {
            remove_member(cairn, RemoveMemberRequest { db, developer }).await?;
        }
        TeamCommand::Trust => trust(cairn)?,
        TeamCommand::Untrust => untrust(cairn)?,
        TeamCommand::Members => members(cairn, MembersRequest { db }).await?,
        TeamCommand::Sync { json } => return sync(cairn, json).await,
    }
    Ok(ExitCode::SUCCESS)
}

/// `cairn team init`: the namespace and database made ready, and what to do next.
async fn init(cairn: &Cairn, request: TeamInitRequest, json: bool) -> anyhow::Result<()> {
    let init = cairn.team_init(request).await?;
    if json {
        return output::json(&init);
    }
    output::line(format!(
        "team server {} ready for {} (namespace {}, database {}, schema {})",
        init.server, init.repository, init.namespace, init.database, init.schema
    ))?;
    output::line("next: `cairn team add-member <developer> --output <file>` for each developer")
}

/// `cairn team add-member`: where the credentials file went (on stderr), or the credentials
/// themselves when there is no file.
async fn add_member(cairn: &Cairn, request: AddMemberRequest) -> anyhow::Result<()> {
    let added = cairn.add_member(request).await?;
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
    Ok(())
}

/// `cairn team remove-member`.
async fn remove_member(cairn: &Cairn, request: RemoveMemberRequest) -> anyhow::Result<()> {
    let removed = cairn.remove_member(request).await?;
    output::line(if removed.removed {
        format!("{} removed (their memories stay)", removed.developer)
    } else {
        format!("{} was not a member", removed.developer)
    })
}

/// `cairn team trust`.
fn trust(cairn: &Cairn) -> anyhow::Result<()> {
    let trusted = cairn.trust(TrustRequest {})?;
    output::line(format!(
        "trusted: {} may send your team credentials and memories to {} as {}/{} (recorded in {})",
        trusted.repository.display(),
        trusted.server,
        trusted.namespace,
        trusted.database,
        trusted.file.display()
    ))
}

/// `cairn team untrust`.
fn untrust(cairn: &Cairn) -> anyhow::Result<()> {
    let untrusted = cairn.untrust(UntrustRequest {})?;
    let repository = untrusted.repository.display();
    output::line(if untrusted.was_trusted {
        format!("{repository} is no longer trusted with a team server")
    } else {
        format!("{repository} was not trusted with a team server")
    })
}

/// `cairn team members`: one developer a line.
async fn members(cairn: &Cairn, request: MembersRequest) -> anyhow::Result<()> {
    for member in cairn.members(request).await?.0 {
        output::line(member)?;
    }
    Ok(())
}

/// `cairn team sync`: exits 2 while writes stay queued (the server is away).
async fn sync(cairn: &Cairn, json: bool) -> anyhow::Result<ExitCode> {
    let synced = cairn.team_sync(SyncRequest {}).await?;
    if json {
        output::json(&synced)?;
    } else {
        output::line(team_line(&synced.status))?;
        if let Some(note) = &synced.note {
            output::line(note)?;
        }
    }
    Ok(if synced.status.queued > 0 {
        ExitCode::from(2)
    } else {
        ExitCode::SUCCESS
    })
}
