//! Measures what an assistant waits for: loading the index, then `get_context` (without and
//! with a focus) and `expand` answered in process (as `cairn serve` answers them), with
//! p50/p95 over many calls.
//!
//! `query_bench --repo DIR [--data-dir DATA] [--iterations N]` prints one JSON line.

use std::path::PathBuf;
use std::time::Instant;

use cairn::app::{Cairn, ContextRequest, ExpandRequest};
use cairn::config::Repo;

mod common;

use common::{arg, percentile};

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let repo_dir = PathBuf::from(arg(&args, "--repo").unwrap_or_else(|| ".".to_string()));
    let data_dir = arg(&args, "--data-dir").map(PathBuf::from);
    let iterations: usize = arg(&args, "--iterations").map_or(Ok(200), |n| n.parse())?;
    let repo = Repo::discover(&repo_dir, data_dir.as_deref())?;
    let cairn = Cairn::new(repo);

    let started = Instant::now();
    let first = cairn.context(Default::default()).await?;
    let load_ms = started.elapsed().as_secs_f64() * 1e3;
    let targets: Vec<String> = first
        .top_symbols
        .iter()
        .chain(first.top_files.iter())
        .map(|r| r.id.clone())
        .collect();
    anyhow::ensure!(
        !targets.is_empty(),
        "nothing to expand: is the repository indexed?"
    );

    let mut context_ms = Vec::with_capacity(iterations);
    for _ in 0..iterations {
        let t = Instant::now();
        cairn.context(Default::default()).await?;
        context_ms.push(t.elapsed().as_secs_f64() * 1e3);
    }
    // Focused as an assistant asks: a task sentence naming what one of the top symbols does.
    let mut focused_ms = Vec::with_capacity(iterations);
    for i in 0..iterations {
        let target = &targets[i % targets.len()];
        let name = target.rsplit([':', '.', '/']).next().unwrap_or(target);
        let t = Instant::now();
        cairn
            .context(ContextRequest {
                focus: Some(format!("why does {name} fail on errors")),
                ..ContextRequest::default()
            })
            .await?;
        focused_ms.push(t.elapsed().as_secs_f64() * 1e3);
    }
    let mut expand_ms = Vec::with_capacity(iterations);
    for i in 0..iterations {
        let target = &targets[i % targets.len()];
        let t = Instant::now();
        cairn
            .expand(ExpandRequest {
                target: target.clone(),
                ..ExpandRequest::default()
            })
            .await?;
        expand_ms.push(t.elapsed().as_secs_f64() * 1e3);
    }
    let result = serde_json::json!({
        "load_ms": load_ms,
        "context_tokens": first.tokens,
        "context_p50_ms": percentile(&mut context_ms, 0.5),
        "context_p95_ms": percentile(&mut context_ms, 0.95),
        "focused_context_p50_ms": percentile(&mut focused_ms, 0.5),
        "focused_context_p95_ms": percentile(&mut focused_ms, 0.95),
        "expand_p50_ms": percentile(&mut expand_ms, 0.5),
        "expand_p95_ms": percentile(&mut expand_ms, 0.95),
        "iterations": iterations,
    });
    println!("{result}");
    Ok(())
}
