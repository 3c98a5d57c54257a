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
        dry_run: args.dry_run,
    };
    let outcome = install::install(&setup(repo)?, &options)?;
    if !args.dry_run && !outcome.failed() {
        registry(repo, true);
    }
    print_outcome(&outcome, args.json)
}

/// `cairn uninstall`.
pub fn uninstall(repo: &Repo, args: UninstallArgs) -> anyhow::Result<ExitCode> {
    let options = Options {
        clients: install::parse_clients(&args.clients)?,
        service: false,
        dry_run: args.dry_run,
    };
    let outcome = install::uninstall(&setup(repo)?, &options)?;
    if !args.dry_run && args.clients.is_empty() {
        registry(repo, false);
    }
    print_outcome(&outcome, args.json)
}

/// Adds the repository to the ones a user's daemon (`cairn daemon --user`) serves, or
/// removes it. A registry that cannot be written is said and does not fail the install.
fn registry(repo: &Repo, add: bool) {
    use cairn::running::registry;
    let Some(home) = registry::home() else { return };
    let changed = if add {
        registry::register(&home, &repo.root, &repo.data_dir)
    } else {
        registry::unregister(&home, &repo.root)
    };
    if let Err(e) = changed {
        eprintln!("cairn: the user daemon's registry is unchanged: {e:#}");
    }
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
