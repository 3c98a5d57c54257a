//! `cairn doctor` and `cairn status`.

use std::process::ExitCode;
use std::sync::Arc;

use cairn::app::{
    Cairn, Check, DoctorRequest, Registrations, Status, TeamState, Verdict, team_line,
};
use cairn::config::Repo;

use super::output;

/// `cairn doctor`: every check on a line; fails when one found a problem.
pub async fn doctor(cairn: &Cairn) -> anyhow::Result<ExitCode> {
    let doctor = cairn
        .doctor(DoctorRequest {
            registrations: registrations(&cairn.repo),
            in_daemon: false,
        })
        .await;
    for check in &doctor.checks {
        output::line(check_line(check))?;
    }
    Ok(if doctor.has_problems() {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// The assistants' registrations, the token and the service, checked as `install` checks
/// them, on every call (the daemon's page asks again on each visit); where they cannot be
/// made, one problem saying why.
pub fn registrations(repo: &Repo) -> Registrations {
    let setup = match super::install::setup(repo) {
        Ok(setup) => setup,
        Err(e) => {
            let why = format!("{e:#}");
            return Arc::new(move || {
                vec![Check::new("clients", Verdict::Problem, why.clone(), None)]
            });
        }
    };
    Arc::new(move || {
        cairn::install::check(&setup)
            .into_iter()
            .map(|check| {
                let verdict = if check.ok {
                    Verdict::Ok
                } else {
                    Verdict::Problem
                };
                Check::new(&check.name, verdict, check.detail, check.fix.as_deref())
            })
            .collect()
    })
}

/// `name: ok — detail`, `name: PROBLEM — detail — fix`, `name: WARNING — detail — fix`, or
/// `name: detail — fix` for what is worth knowing but not a fault.
fn check_line(check: &Check) -> String {
    let fix = check
        .fix
        .as_deref()
        .map(|fix| format!(" — {fix}"))
        .unwrap_or_default();
    let label = label(&check.name);
    match check.verdict {
        Verdict::Ok => format!("{label}ok — {}", check.detail),
        Verdict::Problem => format!("{label}PROBLEM — {}{fix}", check.detail),
        Verdict::Warning => format!("{label}WARNING — {}{fix}", check.detail),
        Verdict::Note => format!("{label}{}{fix}", check.detail),
    }
}

/// `name:` padded so doctor's verdicts line up.
fn label(name: &str) -> String {
    format!("{:<12}", format!("{name}: "))
}

/// `cairn status`.
pub fn status(cairn: &Cairn, json: bool) -> anyhow::Result<ExitCode> {
    let status = cairn.status();
    if json {
        output::json(&status)?;
    } else {
        output::text(status_text(&status))?;
    }
    Ok(ExitCode::SUCCESS)
}

fn status_text(status: &Status) -> String {
    let mut lines = vec![
        format!("repository: {}", status.repository.display()),
        format!("data:       {}", status.data_dir.display()),
    ];
    lines.push(match &status.daemon {
        Some(d) if d.reachable => {
            let indexed = d.indexed_commit();
            format!(
                "daemon:     running (pid {}) at {}\nindex:      {} nodes in memory, at commit {}{}",
                d.pid,
                d.url,
                d.nodes(),
                indexed.unwrap_or("(none)"),
                match (indexed, &status.head) {
                    (Some(i), Some(h)) if i != h => format!(" — HEAD is {h}, catching up"),
                    _ => String::new(),
                }
            )
        }
        Some(d) => format!(
            "daemon:     running (pid {}) but not answering: {}",
            d.pid,
            d.error.as_deref().unwrap_or_default()
        ),
        None => "daemon:     not running (start it with `cairn daemon` or `cairn install --service`)"
            .to_string(),
    });
    lines.push(format!("token:      {}", status.token.display()));
    match &status.team {
        TeamState::Off => lines.push("memories:   embedded store".to_string()),
        TeamState::Broken(why) => lines.push(format!("team:       PROBLEM — {why}")),
        TeamState::On(team) => lines.extend(
            team.each()
                .map(|(name, status)| format!("{:<12}{}", format!("{name}:"), team_line(status))),
        ),
    }
    let mut text = lines.join("\n");
    text.push('\n');
    text
}
