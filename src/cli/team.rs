//! `cairn team …`: the team server, its members, trust, and syncing now.

use std::process::ExitCode;

use std::path::Path;

use cairn::app::{
    AddMemberRequest, Cairn, MembersRequest, RemoveMemberRequest, RotatePasswordRequest,
    SyncRequest, TeamInitRequest, TrustRequest, UntrustRequest, team_line,
};
use cairn::config::team::Secret;

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
        TeamCommand::RotatePassword { developer, output } => {
            let request = RotatePasswordRequest {
                db,
                developer,
                output,
            };
            rotate_password(cairn, request).await?;
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

/// `cairn team add-member`: for a new member, where the credentials file went (on stderr) or
/// the credentials themselves; for a developer who already signs in to this server, that
/// their password is unchanged.
async fn add_member(cairn: &Cairn, request: AddMemberRequest) -> anyhow::Result<()> {
    let asked_for_file = request.output.is_some();
    let added = cairn.add_member(request).await?;
    let databases = added.databases.join(" and ");
    if added.existing {
        if asked_for_file {
            eprintln!(
                "no credentials file written: {} already has one for {}",
                added.developer, added.server
            );
        }
        return output::line(format!(
            "{} can sign in to {databases} with the password they already have on {} (unchanged; `cairn team rotate-password {}` issues a new one)",
            added.developer, added.server, added.developer
        ));
    }
    hand_over(
        &added.developer,
        &added.server,
        &databases,
        added.file.as_deref(),
        added.default_file.as_deref(),
        added.password.as_ref(),
    )
}

/// `cairn team rotate-password`: like a new member's credentials, handed over the same way.
async fn rotate_password(cairn: &Cairn, request: RotatePasswordRequest) -> anyhow::Result<()> {
    let rotated = cairn.rotate_password(request).await?;
    eprintln!(
        "{}'s old password no longer signs in to {}: every working copy of theirs needs the new credentials",
        rotated.developer, rotated.server
    );
    hand_over(
        &rotated.developer,
        &rotated.server,
        &rotated.databases.join(", "),
        rotated.file.as_deref(),
        rotated.default_file.as_deref(),
        rotated.password.as_ref(),
    )
}

/// New credentials: where their file went (on stderr), or the credentials themselves.
fn hand_over(
    developer: &str,
    server: &str,
    databases: &str,
    file: Option<&Path>,
    default_file: Option<&Path>,
    password: Option<&Secret>,
) -> anyhow::Result<()> {
    match (file, password) {
        (Some(path), _) => eprintln!(
            "{developer} can sign in to {databases}: credentials in {} (mode 0600) — hand it over privately; it belongs at {}",
            path.display(),
            default_file.map_or("~/.config/cairn/team.toml".to_string(), |p| p
                .display()
                .to_string())
        ),
        (None, Some(password)) => output::line(format!(
            "server = {server:?}\ndeveloper = {developer:?}\npassword = {:?}",
            password.expose()
        ))?,
        (None, None) => {}
    }
    Ok(())
}

/// `cairn team remove-member`: where they were removed from, and what stays readable to them.
async fn remove_member(cairn: &Cairn, request: RemoveMemberRequest) -> anyhow::Result<()> {
    let removed = cairn.remove_member(request).await?;
    let who = &removed.developer;
    if removed.removed.is_empty() {
        output::line(format!(
            "{who} was not a member of this repository's databases"
        ))?;
    } else {
        output::line(format!(
            "{who} removed from {}: they can no longer sign in there, and the server ends their open sessions at their next query",
            removed.removed.join(" and ")
        ))?;
    }
    if let Some(org) = &removed.kept {
        output::line(format!(
            "still readable to {who}: {org}, the organisation's memories, as a member of {}",
            removed.through.join(", ")
        ))?;
    }
    output::line(format!(
        "what {who} wrote stays on the server for the team (private developer memories readable by no one else), and what their cairn already pulled stays in its local copy on their machine"
    ))
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

/// `cairn team sync`: a line per database; exits 2 while writes stay queued in either (the
/// server is away).
async fn sync(cairn: &Cairn, json: bool) -> anyhow::Result<ExitCode> {
    let synced = cairn.team_sync(SyncRequest {}).await?;
    if json {
        output::json(&synced)?;
    } else {
        for (_, status) in synced.status.each() {
            output::line(team_line(status))?;
        }
        if let Some(note) = &synced.note {
            output::line(note)?;
        }
    }
    Ok(if synced.status.queued() > 0 {
        ExitCode::from(2)
    } else {
        ExitCode::SUCCESS
    })
}
