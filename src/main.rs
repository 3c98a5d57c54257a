//! The `cairn` binary: parse the command line, run, map errors to exit codes.

mod cli;

use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context as _;
use clap::Parser;

use cairn::app::Cairn;
use cairn::config::Repo;
use cairn::index::{self, Report};
use cli::{Cli, Command};

fn main() -> ExitCode {
    let cli = Cli::parse();
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
        Err(e) => {
            eprintln!("cairn: {e:#}");
            ExitCode::FAILURE
        }
    }
}

async fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    let start = match &cli.global.repo {
        Some(repo) => repo.clone(),
        None => std::env::current_dir().context("cannot read the current directory")?,
    };
    let repo = Repo::discover(&start, cli.global.data_dir.as_deref())?;
    match cli.command {
        Command::Index { json, wait } => {
            let report = index::index_repository(&repo, Duration::from_secs(wait), |holder| {
                eprintln!(
                    "cairn: waiting for another index run{} to finish…",
                    holder.map(|p| format!(" (pid {p})")).unwrap_or_default()
                );
            })
            .await?;
            if json {
                println!("{}", serde_json::to_string_pretty(&report)?);
            } else {
                print_summary(&repo, &report);
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Serve => {
            cairn::mcp::serve_stdio(Cairn::new(repo)).await?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Context {
            focus,
            max_tokens,
            json,
        } => {
            let report = Cairn::new(repo)
                .context(focus.as_deref(), max_tokens)
                .await?;
            if json {
                println!("{}", serde_json::to_string_pretty(&report)?);
            } else {
                println!("{}", report.text);
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Expand {
            target,
            include,
            max_tokens,
            json,
        } => {
            let report = Cairn::new(repo)
                .expand(&target, &include, max_tokens)
                .await?;
            if json {
                println!("{}", serde_json::to_string_pretty(&report)?);
            } else {
                println!("{}", report.text);
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

fn print_summary(repo: &Repo, report: &Report) {
    let stats = &report.stats;
    println!("indexed {} in {:.2}s", repo.root.display(), report.seconds);
    println!(
        "  files {} (parsed {}, removed {}), symbols {}, external modules {}",
        report.files, report.parsed, report.removed, report.symbols, report.external_modules
    );
    let edges: Vec<String> = report
        .edges
        .iter()
        .map(|(k, n)| format!("{k} {n}"))
        .collect();
    println!("  edges: {}", edges.join(", "));
    println!(
        "  calls: {} resolved, {} unresolved ({:.1}% of calls into project code), {} to libraries, {} builtins",
        stats.calls_resolved,
        stats.calls_unresolved,
        report.unresolved_call_share * 100.0,
        stats.calls_external,
        stats.calls_builtin
    );
    println!(
        "  imports: {} to project files, {} external, {} unresolved",
        stats.imports_internal, stats.imports_external, stats.imports_unresolved
    );
    println!(
        "  written: {} node changes, {} edge changes; store {}",
        report.nodes_written,
        report.edges_written,
        repo.store_dir().display()
    );
    if !report.skipped.is_empty() {
        println!("  skipped {} files:", report.skipped.len());
        for skip in report.skipped.iter().take(20) {
            println!("    {}: {}", skip.path, skip.reason);
        }
        if report.skipped.len() > 20 {
            println!("    … {} more (see --json)", report.skipped.len() - 20);
        }
    }
    if !report.diagnostics.is_empty() {
        println!(
            "  {} files parsed with errors (kept what parsed):",
            report.diagnostics.len()
        );
        for d in report.diagnostics.iter().take(10) {
            println!("    {}: {}", d.path, d.reason);
        }
    }
}
