//! `cairn install` and `cairn uninstall`: registering cairn with assistants.

use std::process::ExitCode;

use anyhow::Context as _;
use cairn::config::Repo;
use cairn::install::{self, Options, Outcome, Setup};

use super::{InstallArgs, UninstallArgs, output};

/// `cairn install`.
pub fn install(repo: &Repo, args: InstallArgs) -> anyhow::Result<ExitCode> {
    let options = Options {
        clients: install::parse_clients(&args.clients)?,
        service: args.service,
        user_service: args.user_service,
        dry_run: args.dry_run,
    };
    let outcome = install::install(&setup(repo)?, &options)?;
    print_outcome(&outcome, args.json)
}

/// `cairn uninstall`.
pub fn uninstall(repo: &Repo, args: UninstallArgs) -> anyhow::Result<ExitCode> {
    let options = Options {
        clients: install::parse_clients(&args.clients)?,
        service: false,
        user_service: false,
        dry_run: args.dry_run,
    };
    let outcome = install::uninstall(&setup(repo)?, &options)?;
    print_outcome(&outcome, args.json)
}

/// Where `cairn install` writes for this repository.
pub fn setup(repo: &Repo) -> anyhow::Result<Setup> {
    Ok(Setup {
        repo_root: repo.root.clone(),
        home: dirs::home_dir().context("no home directory")?,
        binary: std::env::current_exe()
            .and_then(|p| p.canonicalize())
            .context("cannot tell where the cairn binary is")?,
        data_dir: repo.data_dir.clone(),
        data_home: cairn::running::registry::home(),
    })
}

fn print_outcome(outcome: &Outcome, json: bool) -> anyhow::Result<ExitCode> {
    if json {
        output::json(outcome)?;
    } else {
        output::text(outcome)?;
    }
    Ok(if outcome.failed() {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}
