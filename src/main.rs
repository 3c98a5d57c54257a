//! The `cairn` binary: parse the command line, run, map errors to exit codes.

mod cli;

use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context as _;
use clap::Parser;

use cairn::app::Cairn;
use cairn::config::Repo;
use cairn::index::{self, Report};
use cli::{Cli, Command, MemoryCommand, TeamCommand};

fn main() -> ExitCode {
    cairn::private::restrict_new_files();
    let cli = Cli::parse();
    if let Command::Hook = cli.command {
        // Cheap and quiet: no runtime or logging unless the event needs them.
        if let Some(output) =
            cairn::hook::run(cli.global.repo.as_deref(), cli.global.data_dir.as_deref())
        {
            println!("{output}");
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
    let mut repo = Repo::discover(&start, cli.global.data_dir.as_deref())?;
    cairn::private::private_dir(&repo.data_dir)
        .with_context(|| format!("cannot create {}", repo.data_dir.display()))?;
    if let Some(db) = &cli.global.db {
        repo.use_db(db);
    }
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
            #[cfg(unix)]
            if let Some(record) = cairn::daemon::DaemonRecord::running(&repo.data_dir) {
                let socket = cairn::daemon::files::owned_socket(&record.socket);
                match async { tokio::net::UnixStream::connect(socket?).await }.await {
                    Ok(stream) => {
                        cairn::daemon::client::relay(stream).await?;
                        return Ok(ExitCode::SUCCESS);
                    }
                    Err(e) => tracing::warn!(
                        "the daemon's socket {} did not answer ({e}); serving from the store",
                        record.socket.display()
                    ),
                }
            }
            cairn::mcp::serve_stdio(Cairn::serving(repo, model_dir)).await?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Daemon { port } => {
            let root = repo.root.clone();
            match cairn::daemon::run(repo, model_dir, port, |record| {
                eprintln!(
                    "cairn: daemon for {} serving {} (pid {})",
                    root.display(),
                    record.url,
                    record.pid
                );
            })
            .await
            {
                Ok(()) => Ok(ExitCode::SUCCESS),
                Err(e @ cairn::daemon::StartError::Running { .. }) => {
                    eprintln!("cairn: {e}");
                    Ok(ExitCode::SUCCESS)
                }
                Err(e) => Err(e.into()),
            }
        }
        Command::Status { json } => status(&repo, json),
        Command::Install {
            clients,
            service,
            dry_run,
            json,
        } => {
            let options = cairn::install::Options {
                clients: cairn::install::parse_clients(&clients)?,
                service,
                dry_run,
            };
            let outcome = cairn::install::install(&install_setup(&repo)?, &options)?;
            print_outcome(&outcome, json)
        }
        Command::Uninstall {
            clients,
            dry_run,
            json,
        } => {
            let options = cairn::install::Options {
                clients: cairn::install::parse_clients(&clients)?,
                service: false,
                dry_run,
            };
            let outcome = cairn::install::uninstall(&install_setup(&repo)?, &options)?;
            print_outcome(&outcome, json)
        }
        Command::Hook => Ok(ExitCode::SUCCESS),
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
        Command::Team { action } => {
            team_command(repo, cli.global.db.as_deref(), model_dir, action).await
        }
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
            if let Some(note) = memories.staleness().await {
                eprintln!("cairn: {note}");
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
            let note = memories.staleness().await;
            let answer =
                render::SearchAnswer::within(profile, found, Some(16_000))?.with_note(note);
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
        MemoryCommand::Share { id } => {
            let shared = memories.share(&id).await?;
            println!(
                "shared {} ({}) with the team{}",
                shared.id,
                shared.title,
                if memories.team().is_some() {
                    ""
                } else {
                    " — takes effect in team mode; this repository keeps memories locally"
                }
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
/// Narrows anything in the data directory that others could read; says what it narrowed.
fn private_data(data_dir: &std::path::Path) -> Result<String, String> {
    match cairn::private::tighten(data_dir) {
        Ok(opened) if opened.is_empty() => Ok("private (directories 0700, files 0600)".into()),
        Ok(opened) => Err(format!(
            "{} entr{} could be read by others and {} narrowed to 0700/0600: {}",
            opened.len(),
            if opened.len() == 1 { "y" } else { "ies" },
            if opened.len() == 1 { "was" } else { "were" },
            opened
                .iter()
                .take(5)
                .map(|o| format!("{} ({:o})", o.path.display(), o.mode))
                .collect::<Vec<_>>()
                .join(", ")
        )),
        Err(e) => Err(format!("cannot check the modes: {e}")),
    }
}

async fn doctor(cairn: std::sync::Arc<Cairn>) -> anyhow::Result<ExitCode> {
    use cairn::daemon::{client, files};
    let mut problems = 0;
    let mut report = |name: &str, verdict: Result<String, String>| match verdict {
        Ok(detail) => println!("{}ok — {detail}", label(name)),
        Err(detail) => {
            problems += 1;
            println!("{}PROBLEM — {detail}", label(name));
        }
    };
    let repo = &cairn.repo;
    println!("{}{}", label("repository"), repo.root.display());
    println!("{}{}", label("data"), repo.data_dir.display());
    report("data files", private_data(&repo.data_dir));
    match cairn.snapshot().await {
        Ok(snapshot) => {
            report(
                "store",
                Ok(format!(
                    "opens, schema {}, {} nodes",
                    cairn::storage::SCHEMA_VERSION,
                    snapshot.graph.nodes.len()
                )),
            );
            let fresh = cairn.freshness(&snapshot).await;
            let behind = fresh.head_commit.is_some() && fresh.head_commit != fresh.indexed_commit;
            report(
                "index",
                if behind || fresh.changed_count > 0 {
                    Err(format!(
                        "indexed at {}, HEAD is {}, {} file(s) changed since (first: {}) — run `cairn index`, or keep `cairn daemon` running",
                        fresh.indexed_commit.as_deref().unwrap_or("(no commit)"),
                        fresh.head_commit.as_deref().unwrap_or("(no commit)"),
                        fresh.changed_count,
                        fresh.changed_files.first().map_or("-", String::as_str)
                    ))
                } else {
                    Ok(format!(
                        "fresh at {}",
                        fresh
                            .indexed_commit
                            .as_deref()
                            .unwrap_or("(not a git repository)")
                    ))
                },
            );
        }
        Err(e) => report("store", Err(format!("{e} — run `cairn index`"))),
    }
    match cairn.memories.all().await {
        Ok(all) => report(
            "memories",
            Ok(format!(
                "{} stored ({} live)",
                all.len(),
                all.iter().filter(|m| m.is_live()).count()
            )),
        ),
        Err(e) => report("memories", Err(e.to_string())),
    }
    println!("{}{}", label("search"), cairn.memories.mode().detail);
    match &repo.team {
        cairn::config::team::TeamSetup::Off => {}
        cairn::config::team::TeamSetup::Broken(why) => report("team", Err(why.clone())),
        cairn::config::team::TeamSetup::On(_) => {
            // `memories.all()` above exchanged with the server.
            if let Some(link) = cairn.memories.team() {
                let status = link.status();
                let line = team_line(&status);
                report(
                    "team",
                    if status.sync.error.is_some() || status.queued > 0 || status.rejected > 0 {
                        Err(line)
                    } else {
                        Ok(line)
                    },
                );
            }
        }
    }
    let token = files::read_token(&repo.data_dir);
    match files::DaemonRecord::running(&repo.data_dir) {
        // Not a fault: the CLI and `cairn serve` work without a daemon, only slower to follow
        // edits. An installed service that is not running shows up in the service check.
        None => println!(
            "{}not running — start it with `cairn daemon`, or `cairn install --service` to run it as a user service",
            label("daemon")
        ),
        Some(record) => report(
            "daemon",
            match client::get(
                record.port,
                token.as_deref().unwrap_or(""),
                "/health",
                Duration::from_secs(2),
            ) {
                Ok(_) => Ok(format!("running (pid {}) at {}", record.pid, record.url)),
                Err(e) => Err(format!(
                    "pid {} holds the lock but {} does not answer ({e:#}) — restart it",
                    record.pid, record.url
                )),
            },
        ),
    }
    for check in cairn::install::check(&install_setup(repo)?) {
        // Not faults: the CLI and `cairn serve` work unregistered and without the HTTP token.
        let optional = check.name == "clients" || (check.name == "token" && token.is_none());
        if !check.ok && optional {
            println!(
                "{}{} — {}",
                label(&check.name),
                check.detail,
                check.fix.unwrap_or_default()
            );
            continue;
        }
        report(
            &check.name,
            if check.ok {
                Ok(check.detail)
            } else {
                Err(match check.fix {
                    Some(fix) => format!("{} — {fix}", check.detail),
                    None => check.detail,
                })
            },
        );
    }
    Ok(if problems == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// `name:` padded so doctor's verdicts line up.
fn label(name: &str) -> String {
    format!("{:<12}", format!("{name}: "))
}

fn print_outcome(outcome: &cairn::install::Outcome, json: bool) -> anyhow::Result<ExitCode> {
    if json {
        println!("{}", serde_json::to_string_pretty(outcome)?);
    } else {
        print!("{outcome}");
    }
    Ok(if outcome.failed() {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// Where `cairn install` writes for this repository.
fn install_setup(repo: &Repo) -> anyhow::Result<cairn::install::Setup> {
    Ok(cairn::install::Setup {
        repo_root: repo.root.clone(),
        home: dirs::home_dir().context("no home directory")?,
        binary: std::env::current_exe()
            .and_then(|p| p.canonicalize())
            .context("cannot tell where the cairn binary is")?,
        data_dir: repo.data_dir.clone(),
    })
}

/// `cairn status`: the daemon and the index's freshness, without opening the store.
fn status(repo: &Repo, json: bool) -> anyhow::Result<ExitCode> {
    use cairn::daemon::{client, files};
    let record = files::DaemonRecord::running(&repo.data_dir);
    let token = files::read_token(&repo.data_dir);
    let health = record.as_ref().map(|r| {
        client::get(
            r.port,
            token.as_deref().unwrap_or(""),
            "/health",
            Duration::from_secs(2),
        )
        .and_then(|body| Ok(serde_json::from_str::<serde_json::Value>(&body)?))
    });
    let head = repo
        .is_git
        .then(|| index::head_commit(&repo.root))
        .flatten();
    let indexed = health
        .as_ref()
        .and_then(|h| h.as_ref().ok())
        .and_then(|h| h["commit"].as_str().map(str::to_string));
    let status = serde_json::json!({
        "repository": repo.root,
        "data_dir": repo.data_dir,
        "indexed": cairn::app::generation_path(repo).exists(),
        "head": head,
        "daemon": record.as_ref().map(|r| serde_json::json!({
            "pid": r.pid,
            "url": r.url,
            "socket": r.socket,
            "started_at": r.started_at,
            "reachable": health.as_ref().is_some_and(|h| h.is_ok()),
            "health": health.as_ref().and_then(|h| h.as_ref().ok()),
            "error": health.as_ref().and_then(|h| h.as_ref().err()).map(|e| format!("{e:#}")),
        })),
        "token": files::token_path(&repo.data_dir),
        "team": team_status(repo),
    });
    if json {
        println!("{}", serde_json::to_string_pretty(&status)?);
        return Ok(ExitCode::SUCCESS);
    }
    println!("repository: {}", repo.root.display());
    println!("data:       {}", repo.data_dir.display());
    match (&record, &health) {
        (Some(r), Some(Ok(h))) => {
            println!("daemon:     running (pid {}) at {}", r.pid, r.url);
            println!(
                "index:      {} nodes in memory, at commit {}{}",
                h["nodes"].as_u64().unwrap_or(0),
                indexed.as_deref().unwrap_or("(none)"),
                match (&indexed, &head) {
                    (Some(i), Some(h)) if i != h => format!(" — HEAD is {h}, catching up"),
                    _ => String::new(),
                }
            );
        }
        (Some(r), Some(Err(e))) => {
            println!(
                "daemon:     running (pid {}) but not answering: {e:#}",
                r.pid
            )
        }
        _ => println!(
            "daemon:     not running (start it with `cairn daemon` or `cairn install --service`)"
        ),
    }
    println!(
        "token:      {}",
        files::token_path(&repo.data_dir).display()
    );
    match &repo.team {
        cairn::config::team::TeamSetup::Off => println!("memories:   embedded store"),
        cairn::config::team::TeamSetup::Broken(why) => println!("team:       PROBLEM — {why}"),
        cairn::config::team::TeamSetup::On(config) => {
            let link = cairn::memory::team::Link::new(config.clone(), &repo.data_dir);
            println!("team:       {}", team_line(&link.status()));
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn team_status(repo: &Repo) -> serde_json::Value {
    match &repo.team {
        cairn::config::team::TeamSetup::Off => serde_json::Value::Null,
        cairn::config::team::TeamSetup::Broken(why) => serde_json::json!({ "error": why }),
        cairn::config::team::TeamSetup::On(config) => serde_json::to_value(
            cairn::memory::team::Link::new(config.clone(), &repo.data_dir).status(),
        )
        .unwrap_or_default(),
    }
}

/// One line of team-mode status: server, who, where, last sync, queue.
fn team_line(status: &cairn::memory::team::TeamStatus) -> String {
    let sync = match (&status.sync.error, status.sync.synced_at) {
        (Some(error), at) => format!(
            "server away since {} ({error}); last synced {}",
            status
                .sync
                .error_at
                .map_or("?".to_string(), cairn::app::time_of_ms),
            at.map_or("never".to_string(), cairn::app::time_of_ms)
        ),
        (None, Some(at)) => format!("synced {}", cairn::app::time_of_ms(at)),
        (None, None) => "not synced yet".to_string(),
    };
    format!(
        "{} as {} ({}/{}, repository {}); {sync}; {} write(s) queued{}",
        status.server,
        status.developer,
        status.namespace,
        status.database,
        status.repository,
        status.queued,
        if status.rejected > 0 {
            format!(", {} refused by the server and set aside", status.rejected)
        } else {
            String::new()
        }
    )
}

/// `cairn team …`.
async fn team_command(
    repo: Repo,
    db: Option<&str>,
    model_dir: Option<std::path::PathBuf>,
    action: TeamCommand,
) -> anyhow::Result<ExitCode> {
    use cairn::config::team;
    use cairn::storage::remote;
    // The server's root user, signed in, and this repository's identity on the server.
    let admin = async || -> anyhow::Result<(remote::Admin, String, team::Identity)> {
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
    };
    match action {
        TeamCommand::Init { json } => {
            let (server, url, identity) = admin().await?;
            server.init(&identity.namespace, &identity.database).await?;
            if json {
                print_json(&serde_json::json!({
                    "server": url,
                    "repository": identity.key,
                    "namespace": identity.namespace,
                    "database": identity.database,
                    "schema": remote::TEAM_SCHEMA_VERSION,
                }))?;
            } else {
                println!(
                    "team server {url} ready for {} (namespace {}, database {}, schema {})",
                    identity.key,
                    identity.namespace,
                    identity.database,
                    remote::TEAM_SCHEMA_VERSION
                );
                println!(
                    "next: `cairn team add-member <developer> --output <file>` for each developer"
                );
            }
        }
        TeamCommand::AddMember { developer, output } => {
            let developer = cairn::memory::model::developer_id(&developer)?;
            let (server, url, identity) = admin().await?;
            let password = team::new_password().context("cannot draw a random password")?;
            server
                .add_member(
                    &identity.namespace,
                    &identity.database,
                    &developer,
                    password.expose(),
                )
                .await?;
            match output {
                Some(path) => {
                    team::write_credentials(&path, &url, &developer, &password)
                        .with_context(|| format!("cannot write {}", path.display()))?;
                    eprintln!(
                        "{developer} can sign in to {}: credentials in {} (mode 0600) — hand it over privately; it belongs at {}",
                        identity.key,
                        path.display(),
                        team::default_credentials_file()
                            .map_or("~/.config/cairn/team.toml".to_string(), |p| p
                                .display()
                                .to_string())
                    );
                }
                None => {
                    println!(
                        "server = {url:?}\ndeveloper = {developer:?}\npassword = {:?}",
                        password.expose()
                    );
                }
            }
        }
        TeamCommand::RemoveMember { developer } => {
            let developer = cairn::memory::model::developer_id(&developer)?;
            let (server, _, identity) = admin().await?;
            if server
                .remove_member(&identity.namespace, &identity.database, &developer)
                .await?
            {
                println!("{developer} removed (their memories stay)");
            } else {
                println!("{developer} was not a member");
            }
        }
        TeamCommand::Trust => {
            let (url, _) = team::server_url(&repo.settings.team, None)
                .context("this repository's cairn.toml names no team server ([team] db)")?;
            let url = team::check_url(url)?;
            let identity = team::repository_identity(&repo.root, &repo.settings.team)?;
            let file = team::trust::trust(&repo.root, &url, &identity)?;
            println!(
                "trusted: {} may send your team credentials and memories to {url} as {}/{} (recorded in {})",
                repo.root.display(),
                identity.namespace,
                identity.database,
                file.display()
            );
        }
        TeamCommand::Untrust => {
            if team::trust::untrust(&repo.root)? {
                println!(
                    "{} is no longer trusted with a team server",
                    repo.root.display()
                );
            } else {
                println!("{} was not trusted with a team server", repo.root.display());
            }
        }
        TeamCommand::Members => {
            let (server, _, identity) = admin().await?;
            for member in server
                .members(&identity.namespace, &identity.database)
                .await?
            {
                println!("{member}");
            }
        }
        TeamCommand::Sync { json } => {
            let cairn = Cairn::with_model_dir(repo, model_dir);
            let Some(status) = cairn.memories.team_sync().await? else {
                anyhow::bail!(
                    "team mode is off: pass --db wss://host or set `db` in the [team] table of cairn.toml"
                );
            };
            let stale = cairn.memories.staleness().await;
            if json {
                print_json(&serde_json::json!({ "status": status, "note": stale }))?;
            } else {
                println!("{}", team_line(&status));
                if let Some(note) = stale {
                    println!("{note}");
                }
            }
            // Exit 2 while writes stay queued (the server is away).
            if status.queued > 0 {
                return Ok(ExitCode::from(2));
            }
        }
    }
    Ok(ExitCode::SUCCESS)
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
