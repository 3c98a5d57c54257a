//! `cairn memory …`: add, search, list, forget, share, show, history, export, import.

use std::fmt::Write as _;
use std::process::ExitCode;

use anyhow::Context as _;
use cairn::app::{
    Cairn, ExportRequest, ForgetRequest, ImportRequest, ListRequest, MemoryHistory, MemoryRequest,
    RememberRequest, SearchRequest, render,
};

use super::{MemoryCommand, output};

/// A memory search's token budget on the command line (a person reads more than a model).
const SEARCH_TOKENS: usize = 16_000;

pub async fn run(cairn: &Cairn, action: MemoryCommand) -> anyhow::Result<ExitCode> {
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
            let outcome = cairn
                .remember(RememberRequest {
                    kind,
                    content,
                    title,
                    developer,
                    paths,
                    symbols,
                    supersedes,
                    source: Some(source),
                    source_ref,
                    org,
                    agent,
                    run,
                    written_by: std::env::var("USER").ok(),
                })
                .await?;
            output::answer(&outcome, json)?;
            if let Some(note) = cairn.staleness().await {
                eprintln!("cairn: {note}");
            }
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
            let answer = cairn
                .search_memories(SearchRequest {
                    text: query,
                    developer,
                    types,
                    paths,
                    limit: Some(limit),
                    include_superseded: all,
                    max_tokens: Some(SEARCH_TOKENS),
                })
                .await?;
            output::answer(&answer, json)?;
        }
        MemoryCommand::List {
            kind,
            developer,
            all,
            json,
        } => {
            let listed = cairn
                .list(ListRequest {
                    kind,
                    developer,
                    all,
                })
                .await?;
            if json {
                output::json(&listed)?;
            } else if listed.0.is_empty() {
                output::line("no memories")?;
            } else {
                for m in &listed.0 {
                    output::line(render::memory_line(m))?;
                }
            }
        }
        MemoryCommand::Forget { id, json } => {
            let forgotten = cairn
                .forget(ForgetRequest {
                    id: Some(id),
                    ..ForgetRequest::default()
                })
                .await?;
            output::answer(&forgotten, json)?;
        }
        MemoryCommand::Share { id } => {
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
            ))?;
        }
        MemoryCommand::Show { id, json } => {
            let memory = cairn.show(MemoryRequest { id }).await?;
            output::answer(&memory, json)?;
        }
        MemoryCommand::History { id } => {
            let history = cairn.memory_history(MemoryRequest { id }).await?;
            output::text(history_text(&history))?;
        }
        MemoryCommand::Export { output: file } => {
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
                }
                None => output::text(text)?,
            }
        }
        MemoryCommand::Import { file } => {
            let jsonl = if file.as_os_str() == "-" {
                std::io::read_to_string(std::io::stdin()).context("cannot read stdin")?
            } else {
                std::fs::read_to_string(&file)
                    .with_context(|| format!("cannot read {}", file.display()))?
            };
            let report = cairn.import(ImportRequest { jsonl }).await?;
            output::line(format!(
                "imported {} memories, skipped {} already present, {} forgotten here (not restored)",
                report.imported.len(),
                report.skipped.len(),
                report.forgotten.len()
            ))?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// A memory's texts, oldest first, and what it says now.
fn history_text(MemoryHistory(m): &MemoryHistory) -> String {
    let mut text = format!("{} [{}] created {}\n", m.id, m.kind, m.created_at);
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
        m.superseded_by
            .as_deref()
            .map(|s| format!(" (superseded by {s})"))
            .unwrap_or_default(),
        m.content
    );
    text
}
