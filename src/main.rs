//! The `cairn` binary: parse the command line, run, map errors to exit codes.

mod cli;

use std::process::ExitCode;

use anyhow::Context as _;
use clap::Parser;

use cairn::app::Cairn;
use cairn::config::Repo;
use cli::{Cli, Command, Global, output};

fn main() -> ExitCode {
    cairn::fsutil::restrict_new_files();
    let cli = Cli::parse();
    if let Command::Hook = cli.command {
        // Cheap and quiet: no runtime or logging unless the event needs them.
        if let Some(context) =
            cairn::hook::run(cli.global.repo.as_deref(), cli.global.data_dir.as_deref())
        {
            // The hook exits 0 whatever happens, a reader that went away included.
            let _ = output::line(context);
        }
        return ExitCode::SUCCESS;
    }
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("CAIRN_LOG").unwrap_or_else(|_| {
                tracing_subscriber::EnvFilter::new("warn,surrealkv::lsm=error")
            }),
        )
        .init();
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("cairn: cannot start: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(cli)) {
        Ok(code) => code,
        Err(e) if output::closed(&e) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("cairn: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// Runs one command, then finishes what its answers left behind (vectors, read statistics).
async fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    if let Command::Daemon {
        user: true,
        port,
        memory_mb,
        idle_minutes,
        data_home,
    } = cli.command
    {
        let options = cairn::daemon::host::Options {
            model_dir: cli.global.model_dir.clone(),
            port: port.unwrap_or(0),
            memory_mb,
            idle: std::time::Duration::from_secs(idle_minutes * 60),
        };
        return cli::index::user_daemon(options, data_home).await;
    }
    let repo = repository(&cli.global)?;
    let cairn = Cairn::with_model_dir(repo, cli.global.model_dir.clone());
    let ran = dispatch(&cairn, cli.command, cli.global).await;
    cairn.finish().await;
    ran
}

/// The repository to work on, its data directory created, team mode as `--db` says.
fn repository(global: &Global) -> anyhow::Result<Repo> {
    let start = match &global.repo {
        Some(repo) => repo.clone(),
        None => std::env::current_dir().context("cannot read the current directory")?,
    };
    let mut repo = Repo::discover(&start, global.data_dir.as_deref())?;
    cairn::fsutil::private_dir(&repo.data_dir)
        .with_context(|| format!("cannot create {}", repo.data_dir.display()))?;
    if let Some(db) = &global.db {
        repo.use_db(db);
    }
    Ok(repo)
}

async fn dispatch(cairn: &Cairn, command: Command, global: Global) -> anyhow::Result<ExitCode> {
    let (repo, model_dir) = (cairn.repo.clone(), global.model_dir.clone());
    match command {
        Command::Index {
            json,
            wait,
            quiet,
            rebuild,
        } => cli::index::index(cairn, json, wait, quiet, rebuild).await,
        Command::Serve => cli::index::serve(repo, model_dir).await,
        Command::Daemon { port, .. } => cli::index::daemon(repo, model_dir, port).await,
        Command::Ui { no_open } => cli::ui::ui(&repo, &global, no_open).await,
        Command::Status { json } => cli::doctor::status(cairn, json),
        Command::Doctor => cli::doctor::doctor(cairn).await,
        Command::Install(args) => cli::install::install(&repo, args),
        Command::Uninstall(args) => cli::install::uninstall(&repo, args),
        Command::Hook => Ok(ExitCode::SUCCESS),
        Command::Context(args) => cli::context::context(cairn, args).await,
        Command::Expand(args) => cli::context::expand(cairn, args).await,
        Command::Memory { action } => cli::memory::run(cairn, *action).await,
        Command::Review(args) => cli::review::review(cairn, args).await,
        Command::RecordReview { file, json } => {
            cli::review::record_review(cairn, &file, json).await
        }
        Command::Bootstrap { dry_run, json } => cli::bootstrap::run(cairn, dry_run, json).await,
        Command::Learn { what } => cli::learn::run(cairn, what).await,
        Command::Rules(args) => cli::review::rules(cairn, args).await,
        Command::Team { action } => cli::team::run(cairn, global.db, action).await,
    }
}
