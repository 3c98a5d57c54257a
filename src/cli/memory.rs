//! `cairn memory …`: add, search, list, approve, reject, forget, share, show, history, export,
//! import.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context as _;
use cairn::app::{
    self, Cairn, DecideManyRequest, DecideRequest, ExportRequest, ForgetRequest, ImportRequest,
    ListRequest, MemoryHistory, MemoryRequest, RememberRequest, SearchRequest, render,
};

use super::{MemoryAddArgs, MemoryCommand, MemorySearchArgs, output};

/// A memory search's token budget on the command line (a person reads more than a model).
const SEARCH_TOKENS: usize = 16_000;

/// `cairn memory …`: one function per subcommand.
pub async fn run(cairn: &Cairn, action: MemoryCommand) -> anyhow::Result<ExitCode> {
    match action {
        MemoryCommand::Add(args) => add(cairn, *args).await?,
        MemoryCommand::Search(args) => search(cairn, args).await?,
        MemoryCommand::List {
            kind,
            developer,
            all,
            pending,
            json,
        } => {
            list(
                cairn,
                ListRequest {
                    kind: app::asked_type(kind.as_deref())?,
                    developer,
                    all,
                    pending,
                },
                json,
            )
            .await?
        }
        MemoryCommand::Approve { ids, json } => decide(cairn, ids, None, true, json).await?,
        MemoryCommand::Reject { ids, reason, json } => {
            decide(cairn, ids, reason, false, json).await?
        }
        MemoryCommand::Forget { id, json } => forget(cairn, id, json).await?,
        MemoryCommand::Share { id } => share(cairn, id).await?,
        MemoryCommand::Show { id, json } => show(cairn, id, json).await?,
        MemoryCommand::History { id } => history(cairn, id).await?,
        MemoryCommand::Export { output: file } => export(cairn, file).await?,
        MemoryCommand::Import { file } => import(cairn, &file).await?,
    }
    Ok(ExitCode::SUCCESS)
}

/// `cairn memory approve|reject ID…`: one id answers as it always has; several are one
/// decision (none is decided if one is not waiting), answered as a list.
async fn decide(
    cairn: &Cairn,
    ids: Vec<String>,
    reason: Option<String>,
    approve: bool,
    json: bool,
) -> anyhow::Result<()> {
    if let [id] = ids.as_slice() {
        let request = DecideRequest {
            id: id.clone(),
            by: user(),
            reason,
        };
        let decided = if approve {
            cairn.approve(request).await?
        } else {
            cairn.reject(request).await?
        };
        return output::answer(&decided, json);
    }
    let decided = cairn
        .decide_many(DecideManyRequest {
            ids,
            by: user(),
            reason,
            approve,
        })
        .await?;
    if json {
        return output::json(&decided);
    }
    let texts: Vec<String> = decided.iter().map(app::Text::to_text).collect();
    output::line(texts.join("\n"))
}

/// The person at the command line (`$USER`).
fn user() -> Option<String> {
    std::env::var("USER").ok().filter(|u| !u.is_empty())
}

/// `cairn memory add`: the write event, then a note on stderr if the index is stale.
async fn add(cairn: &Cairn, args: MemoryAddArgs) -> anyhow::Result<()> {
    let labels = app::write_labels(&args.kind, Some(&args.source), args.scope.as_deref())?;
    let outcome = cairn
        .remember(RememberRequest {
            title: args.title,
            developer: args.developer,
            paths: args.paths,
            symbols: args.symbols,
            supersedes: args.supersedes,
            source: labels.source,
            source_ref: args.source_ref,
            org: args.org,
            agent: args.agent,
            run: args.run,
            written_by: user(),
            file_pattern: args.file_pattern,
            scope: labels.scope,
            ..RememberRequest::new(labels.kind, args.content)
        })
        .await?;
    output::answer(&outcome, args.json)?;
    if let Some(note) = cairn.staleness().await {
        eprintln!("cairn: {note}");
    }
    Ok(())
}

/// `cairn memory search`.
async fn search(cairn: &Cairn, args: MemorySearchArgs) -> anyhow::Result<()> {
    let answer = cairn
        .search_memories(SearchRequest {
            text: args.query,
            developer: args.developer,
            types: args.types,
            paths: args.paths,
            limit: Some(args.limit),
            include_superseded: args.all,
            max_tokens: Some(SEARCH_TOKENS),
            browsing: false,
        })
        .await?;
    output::answer(&answer, args.json)
}

/// `cairn memory list`: one line per memory.
async fn list(cairn: &Cairn, request: ListRequest, json: bool) -> anyhow::Result<()> {
    let pending = request.pending;
    let listed = cairn.list(request).await?;
    if json {
        output::json(&listed)?;
    } else if listed.0.is_empty() {
        output::line(if pending {
            "no memories await approval"
        } else {
            "no memories"
        })?;
    } else {
        for m in &listed.0 {
            output::line(render::memory_line(m))?;
        }
    }
    Ok(())
}

/// `cairn memory forget`.
async fn forget(cairn: &Cairn, id: String, json: bool) -> anyhow::Result<()> {
    let forgotten = cairn
        .forget(ForgetRequest {
            id: Some(id),
            ..ForgetRequest::default()
        })
        .await?;
    output::answer(&forgotten, json)
}

/// `cairn memory share`.
async fn share(cairn: &Cairn, id: String) -> anyhow::Result<()> {
    let shared = cairn.share(MemoryRequest { id }).await?;
    output::line(format!(
        "shared {} ({}) with the team{}",
        shared.memory.id,
        shared.memory.title,
        if shared.team {
            ""
        } else {
            " — takes effect in team mode; this repository keeps memories locally"
        }
    ))
}

/// `cairn memory show`.
async fn show(cairn: &Cairn, id: String, json: bool) -> anyhow::Result<()> {
    let memory = cairn.show(MemoryRequest { id }).await?;
    output::answer(&memory, json)
}

/// `cairn memory history`.
async fn history(cairn: &Cairn, id: String) -> anyhow::Result<()> {
    let history = cairn.memory_history(MemoryRequest { id }).await?;
    output::text(history_text(&history))
}

/// `cairn memory export`: JSON Lines to stdout, or to a file with a count on stderr.
async fn export(cairn: &Cairn, file: Option<PathBuf>) -> anyhow::Result<()> {
    let exported = cairn.export(ExportRequest {}).await?;
    let text = exported.jsonl()?;
    match file {
        Some(path) => {
            std::fs::write(&path, text)
                .with_context(|| format!("cannot write {}", path.display()))?;
            eprintln!(
                "exported {} memories to {}",
                exported.0.len(),
                path.display()
            );
            Ok(())
        }
        None => output::text(text),
    }
}

/// `cairn memory import`: from a file, or stdin for `-`.
async fn import(cairn: &Cairn, file: &Path) -> anyhow::Result<()> {
    let jsonl = if file.as_os_str() == "-" {
        std::io::read_to_string(std::io::stdin()).context("cannot read stdin")?
    } else {
        std::fs::read_to_string(file).with_context(|| format!("cannot read {}", file.display()))?
    };
    let report = cairn.import(ImportRequest { jsonl }).await?;
    output::line(format!(
        "imported {} memories, skipped {} already present, {} forgotten here (not restored){}",
        report.imported.len(),
        report.skipped.len(),
        report.forgotten.len(),
        match report.in_repository.len() {
            0 => String::new(),
            n => format!(
                "; {n} organisation memories kept with this repository's (it has no organisation)"
            ),
        }
    ))
}

/// A memory's texts, oldest first, and what it says now.
fn history_text(MemoryHistory(m): &MemoryHistory) -> String {
    let mut text = format!("{} [{}] created {}\n", m.id, m.kind, m.validity.created_at);
    for r in &m.history {
        let _ = writeln!(
            text,
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
    let _ = writeln!(
        text,
        "  now{}: {}",
        m.validity
            .superseded_by
            .as_deref()
            .map(|s| format!(" (superseded by {s})"))
            .unwrap_or_default(),
        m.content
    );
    text
}
