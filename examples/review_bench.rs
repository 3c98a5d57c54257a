//! Measures `review_diff` as `cairn serve` answers it: the index loaded once, then each diff
//! reviewed many times (p50/p95), with the briefing's size in o200k tokens. Also counts the
//! tokens of other files (a peer's outputs), so every figure uses the same tokenizer.
//!
//! `review_bench --repo DIR [--data-dir DATA] [--iterations N] [--save DIR] DIFF...`
//! `review_bench --count FILE...`
//! Prints one JSON line per diff (or per counted file).

use std::path::PathBuf;
use std::time::Instant;

use cairn::app::{Cairn, ReviewRequest};
use cairn::config::Repo;

mod common;

use common::{arg, percentile};

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("--count") {
        for path in &args[1..] {
            let text = std::fs::read_to_string(path)?;
            let line = serde_json::json!({
                "file": path,
                "bytes": text.len(),
                "tokens": cairn::tokens::count(&text),
            });
            println!("{line}");
        }
        return Ok(());
    }
    let repo_dir = PathBuf::from(arg(&args, "--repo").unwrap_or_else(|| ".".to_string()));
    let data_dir = arg(&args, "--data-dir").map(PathBuf::from);
    let iterations: usize = arg(&args, "--iterations").map_or(Ok(30), |n| n.parse())?;
    let save = arg(&args, "--save").map(PathBuf::from);
    let mut diffs: Vec<String> = Vec::new();
    let mut i = 0;
    while i < args.len() {
        if args[i].starts_with("--") {
            i += 2;
        } else {
            diffs.push(args[i].clone());
            i += 1;
        }
    }
    anyhow::ensure!(!diffs.is_empty(), "name at least one diff file");
    let repo = Repo::discover(&repo_dir, data_dir.as_deref())?;
    let cairn = Cairn::new(repo);
    for path in diffs {
        let request = ReviewRequest {
            diff: Some(std::fs::read_to_string(&path)?),
            ..ReviewRequest::default()
        };
        let started = Instant::now();
        let first = cairn.review(request.clone()).await?;
        let first_ms = started.elapsed().as_secs_f64() * 1e3;
        let mut samples = Vec::with_capacity(iterations);
        for _ in 0..iterations {
            let t = Instant::now();
            cairn.review(request.clone()).await?;
            samples.push(t.elapsed().as_secs_f64() * 1e3);
        }
        if let Some(dir) = &save {
            std::fs::create_dir_all(dir)?;
            let name = PathBuf::from(&path);
            let stem = name.file_stem().unwrap_or_default().to_string_lossy();
            std::fs::write(dir.join(format!("cairn-{stem}.txt")), &first.text)?;
        }
        let symbols: Vec<String> = first
            .files
            .iter()
            .flat_map(|f| f.symbols.iter().map(|s| s.id.clone()))
            .collect();
        let line = serde_json::json!({
            "diff": path,
            "first_ms": (first_ms * 10.0).round() / 10.0,
            "p50_ms": (percentile(&mut samples, 0.5) * 10.0).round() / 10.0,
            "p95_ms": (percentile(&mut samples, 0.95) * 10.0).round() / 10.0,
            "tokens": first.tokens,
            "symbols": symbols,
            "tests": first.tests_to_run.len(),
            "callers": first.files.iter().flat_map(|f| &f.symbols).map(|s| s.callers.len()).sum::<usize>(),
        });
        println!("{line}");
    }
    Ok(())
}
