//! The `cairn` binary: parse the command line, run, map errors to exit codes.

mod cli;

use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context as _;
use clap::Parser;

use cairn::app::Cairn;
use cairn::config::Repo;
use cairn::index::{self, Report};
use cli::{Cli, Command, MemoryCommand};

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
    let model_dir = cli.global.model_dir.clone();
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
            cairn::mcp::serve_stdio(Cairn::serving(repo, model_dir)).await?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Context {
            focus,
            max_tokens,
            json,
        } => {
            let report = Cairn::with_model_dir(repo, model_dir)
                .context(focus.as_deref(), max_tokens)
                .await?;
            if json {
                println!("{}", serde_json::to_string_pretty(&report)?);
            } else {
                println!("{}", report.text);
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Expand { target, json, .. }
            if cairn::memory::model::is_memory_id(target.trim()) =>
        {
            let cairn = Cairn::with_model_dir(repo, model_dir);
            let m = cairn.memories.get(&target).await?;
            if json {
                print_json(&m)?;
            } else {
                println!("{}", cairn::mcp::render::memory_detail(&m));
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Expand {
            target,
            include,
            max_tokens,
            json,
        } => {
            let report = Cairn::with_model_dir(repo, model_dir)
                .expand(&target, &include, max_tokens)
                .await?;
            if json {
                println!("{}", serde_json::to_string_pretty(&report)?);
            } else {
                println!("{}", report.text);
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Memory { action } => {
            memory_command(Cairn::with_model_dir(repo, model_dir), *action).await
        }
        Command::Review {
            base,
            head,
            diff,
            author,
            max_tokens,
            json,
        } => {
            let diff = match diff {
                Some(path) => Some(read_input(&path)?),
                None => None,
            };
            let request = cairn::app::ReviewRequest {
                diff,
                base,
                head,
                author,
                max_tokens,
            };
            let report = Cairn::with_model_dir(repo, model_dir)
                .review(&request)
                .await?;
            if json {
                print_json(&report)?;
            } else {
                println!("{}", report.text);
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::RecordReview { file, json } => {
            let text = read_input(&file)?;
            let args: cairn::mcp::RecordReviewArgs =
                serde_json::from_str(&text).with_context(|| {
                    format!("{} is not a record_review JSON object", file.display())
                })?;
            let cairn = Cairn::with_model_dir(repo, model_dir);
            let recorded = cairn
                .record_review(args.into_input(std::env::var("USER").ok())?)
                .await?;
            if json {
                print_json(&recorded)?;
            } else {
                println!("{}", cairn::mcp::render::recorded_review(&recorded));
            }
            cairn.memories.embed_pending().await?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Rules {
            min_sample,
            min_rate,
            addressed,
            json,
        } => {
            let cairn = Cairn::with_model_dir(repo, model_dir);
            if let Some(category) = addressed {
                let ids = cairn.memories.mark_addressed(&category).await?;
                println!(
                    "{} rejection pattern{} of `{category}` marked addressed{}",
                    ids.len(),
                    if ids.len() == 1 { "" } else { "s" },
                    if ids.is_empty() {
                        String::new()
                    } else {
                        format!(": {}", ids.join(", "))
                    }
                );
                return Ok(ExitCode::SUCCESS);
            }
            let stats = cairn.memories.rule_stats().await?;
            if json {
                print_json(&stats)?;
            } else {
                print!(
                    "{}",
                    cairn::mcp::render::rules_report(&stats, min_sample, min_rate)
                );
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Doctor => doctor(Cairn::with_model_dir(repo, model_dir)).await,
    }
}

/// A file's text, or stdin's for `-`.
fn read_input(path: &std::path::Path) -> anyhow::Result<String> {
    use std::io::Read as _;
    const LIMIT: u64 = cairn::review::diff::MAX_DIFF_BYTES as u64 + 1;
    let mut text = String::new();
    if path.as_os_str() == "-" {
        std::io::stdin()
            .take(LIMIT)
            .read_to_string(&mut text)
            .context("cannot read stdin as text")?;
    } else {
        std::fs::File::open(path)
            .and_then(|f| f.take(LIMIT).read_to_string(&mut text))
            .with_context(|| format!("cannot read {} as text", path.display()))?;
    }
    Ok(text)
}

fn print_json(value: &impl serde::Serialize) -> anyhow::Result<()> {
    println!("{}", serde_json::to_string_pretty(value)?);
    Ok(())
}

async fn memory_command(
    cairn: std::sync::Arc<Cairn>,
    action: MemoryCommand,
) -> anyhow::Result<ExitCode> {
    use cairn::mcp::render;
    use cairn::memory::{self, MemoryType};
    let memories = cairn.memories.clone();
    let parse_types = |types: &[String]| -> anyhow::Result<Vec<MemoryType>> {
        Ok(types
            .iter()
            .map(|t| t.parse::<MemoryType>())
            .collect::<Result<_, _>>()?)
    };
    match action {
        MemoryCommand::Add {
            kind,
            content,
            title,
            developer,
            paths,
            symbols,
            supersedes,
            source,
            source_ref,
            org,
            agent,
            run,
            json,
        } => {
            let new = memory::NewMemory {
                kind: Some(kind.parse()?),
                title,
                content,
                developer,
                paths,
                symbols,
                supersedes,
                source: source.parse()?,
                source_ref,
                org,
                agent,
                run,
                written_by: std::env::var("USER").ok(),
                category: None,
            };
            let outcome = cairn.remember(new).await?;
            if json {
                print_json(&outcome)?;
            } else {
                println!("{}", render::write_outcome(&outcome));
            }
            memories.embed_pending().await?;
        }
        MemoryCommand::Search {
            query,
            developer,
            types,
            paths,
            limit,
            all,
            json,
        } => {
            let profile = match &developer {
                Some(dev) => memories.profile(dev).await?,
                None => None,
            };
            let found = memories
                .search(&memory::Query {
                    text: query,
                    developer,
                    types: parse_types(&types)?,
                    paths,
                    limit,
                    include_superseded: all,
                    keyword_only: false,
                })
                .await?;
            memories.flush_access().await?;
            let answer = render::SearchAnswer::within(profile, found, Some(16_000))?;
            if json {
                print_json(&answer)?;
            } else {
                println!("{}", render::search(&answer));
            }
        }
        MemoryCommand::List {
            kind,
            developer,
            all,
            json,
        } => {
            let kind = kind.as_deref().map(str::parse::<MemoryType>).transpose()?;
            let developer = developer
                .as_deref()
                .map(memory::model::developer_id)
                .transpose()?;
            let mut listed: Vec<memory::Memory> = memories
                .all()
                .await?
                .into_iter()
                .filter(|m| all || m.is_live())
                .filter(|m| kind.is_none_or(|k| m.kind == k))
                .filter(|m| developer.is_none() || m.developer == developer)
                .collect();
            listed.reverse();
            if json {
                print_json(&listed)?;
            } else if listed.is_empty() {
                println!("no memories");
            } else {
                for m in &listed {
                    println!("{}", render::memory_line(m));
                }
            }
        }
        MemoryCommand::Forget { id } => {
            let removed = memories.forget(&id).await?;
            println!(
                "{}",
                render::forgotten(&render::Forgotten {
                    confirmed: true,
                    total: 1,
                    memories: vec![render::brief(removed)],
                })
            );
        }
        MemoryCommand::Show { id, json } => {
            let m = memories.get(&id).await?;
            if json {
                print_json(&m)?;
            } else {
                println!("{}", render::memory_detail(&m));
            }
        }
        MemoryCommand::History { id } => {
            let m = memories.get(&id).await?;
            println!("{} [{}] created {}", m.id, m.kind, m.created_at);
            for r in &m.history {
                println!(
                    "  {} {:?}: {}{}",
                    r.at,
                    r.event,
                    r.content,
                    r.note
                        .as_deref()
                        .map(|n| format!(" ({n})"))
                        .unwrap_or_default()
                );
            }
            println!(
                "  now{}: {}",
                m.superseded_by
                    .as_deref()
                    .map(|s| format!(" (superseded by {s})"))
                    .unwrap_or_default(),
                m.content
            );
        }
        MemoryCommand::Export { output } => {
            let records = memories.export().await?;
            let mut text = String::new();
            for record in &records {
                text.push_str(&serde_json::to_string(record)?);
                text.push('\n');
            }
            match output {
                Some(path) => {
                    std::fs::write(&path, text)
                        .with_context(|| format!("cannot write {}", path.display()))?;
                    eprintln!("exported {} memories to {}", records.len(), path.display());
                }
                None => print!("{text}"),
            }
        }
        MemoryCommand::Import { file } => {
            let text = if file.as_os_str() == "-" {
                std::io::read_to_string(std::io::stdin()).context("cannot read stdin")?
            } else {
                std::fs::read_to_string(&file)
                    .with_context(|| format!("cannot read {}", file.display()))?
            };
            let records = memory::parse_jsonl(&text)?;
            let report = memories.import(records).await?;
            println!(
                "imported {} memories, skipped {} already present, {} forgotten here (not restored)",
                report.imported.len(),
                report.skipped.len(),
                report.forgotten.len()
            );
            memories.embed_pending().await?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Checks what cairn depends on and says what to do about problems.
async fn doctor(cairn: std::sync::Arc<Cairn>) -> anyhow::Result<ExitCode> {
    let mut healthy = true;
    println!("repository: {}", cairn.repo.root.display());
    println!("data:       {}", cairn.repo.data_dir.display());
    match cairn.snapshot().await {
        Ok(snapshot) => println!(
            "index:      ok — {} nodes, schema {}, indexed at commit {}",
            snapshot.graph.nodes.len(),
            cairn::storage::SCHEMA_VERSION,
            snapshot
                .meta
                .commit
                .as_deref()
                .unwrap_or("(not a git repository)")
        ),
        Err(e) => {
            healthy = false;
            println!("index:      PROBLEM — {e}");
        }
    }
    match cairn.memories.all().await {
        Ok(all) => println!(
            "memories:   ok — {} stored ({} live)",
            all.len(),
            all.iter().filter(|m| m.is_live()).count()
        ),
        Err(e) => {
            healthy = false;
            println!("memories:   PROBLEM — {e}");
        }
    }
    println!("search:     {}", cairn.memories.mode().detail);
    Ok(if healthy {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
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
    if !report.moved.is_empty() {
        println!(
            "  moved {} files (memories anchored on them follow)",
            report.moved.len()
        );
    }
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
