//! Memory benchmark: write throughput, `remember` latency, search latency and store size at
//! 1k, 10k and 100k generated review learnings in one project; with `org`, search latency
//! of a repository's memories alone and with its organisation's beside them (as every search
//! reads both scopes), at the same number of memories in each.
//!
//! Run: `cargo run --release --example memory_bench [-- 1000,10000,100000]`, or
//! `… memory_bench -- org [10000]`. Set `CAIRN_MODEL_DIR` to a model directory to measure the
//! semantic layer too.

#[path = "common/learnings.rs"]
mod learnings;

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use cairn::memory::store::MemoryStore;
use cairn::memory::{ExportRecord, Memories, NewMemory, Query, SemanticSettings, search_scopes};
use learnings::{record, text};

/// Milliseconds of `count` new learnings written one at a time, sorted.
async fn timed_remembers(m: &Memories, rng: &mut fastrand::Rng, count: usize) -> Vec<f64> {
    let mut times = Vec::new();
    for _ in 0..count {
        let (kind, content, path) = text(rng);
        let started = Instant::now();
        m.remember(
            NewMemory {
                kind: Some(kind),
                content: format!("{content} Variant {}.", rng.u32(..)),
                paths: vec![path],
                ..NewMemory::default()
            },
            None,
        )
        .await
        .unwrap();
        times.push(started.elapsed().as_secs_f64() * 1000.0);
    }
    times.sort_by(f64::total_cmp);
    times
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

fn dir_size(path: &Path) -> u64 {
    std::fs::read_dir(path)
        .map(|entries| {
            entries
                .flatten()
                .map(|e| {
                    let p = e.path();
                    if p.is_dir() {
                        dir_size(&p)
                    } else {
                        e.metadata().map_or(0, |m| m.len())
                    }
                })
                .sum()
        })
        .unwrap_or(0)
}

async fn timed_searches(m: &Memories, queries: &[&str], rounds: usize) -> (f64, f64) {
    timed_scope_searches(m, None, queries, rounds).await
}

/// p50 and p95 milliseconds of searches of `m`, and of `org` beside it when given.
async fn timed_scope_searches(
    m: &Memories,
    org: Option<&Memories>,
    queries: &[&str],
    rounds: usize,
) -> (f64, f64) {
    let mut times = Vec::new();
    for round in 0..rounds {
        for q in queries {
            let started = Instant::now();
            let found = search_scopes(
                m,
                org,
                &Query {
                    text: q.to_string(),
                    limit: 10,
                    ..Query::default()
                },
            )
            .await
            .unwrap();
            if round > 0 {
                times.push(started.elapsed().as_secs_f64() * 1000.0);
            }
            std::hint::black_box(found);
        }
    }
    times.sort_by(f64::total_cmp);
    (percentile(&times, 0.5), percentile(&times, 0.95))
}

/// A held store of `size` generated memories in `dir`.
async fn loaded(dir: &Path, size: usize, seed: u64, semantic: &SemanticSettings) -> Arc<Memories> {
    let mut rng = fastrand::Rng::with_seed(seed);
    let records: Vec<ExportRecord> = (0..size).map(|i| record(&mut rng, i)).collect();
    let store = MemoryStore::open(&dir.join("memory")).await.unwrap();
    let held = Memories::held(dir, store, semantic.clone());
    for chunk in records.chunks(1_000) {
        held.import(chunk.to_vec()).await.unwrap();
    }
    if semantic.model_dir.is_some() {
        held.embed_pending().await.unwrap();
    }
    held
}

/// Search latency of a repository's memories alone, then with its organisation's beside
/// them, `size` memories in each.
async fn org_scope(size: usize, semantic: &SemanticSettings, queries: &[(&str, &[&str])]) {
    let dir = tempfile::tempdir().unwrap();
    let repository = loaded(&dir.path().join("repo"), size, 42, semantic).await;
    let org = loaded(&dir.path().join("org"), size, 7, semantic).await;
    println!(
        "| memories per scope | query | repository only p50/p95 ms | repository + org p50/p95 ms | added p95 ms |"
    );
    println!("|---|---|---|---|---|");
    for (label, queries) in queries {
        let mut alone = Vec::new();
        let mut both = Vec::new();
        // Each query alone then with the organisation's, round after round, so both see the
        // same machine; the first round warms up.
        for round in 0..40 {
            for q in *queries {
                let query = Query {
                    text: q.to_string(),
                    limit: 10,
                    ..Query::default()
                };
                for (times, org) in [(&mut alone, None), (&mut both, Some(&*org))] {
                    let started = Instant::now();
                    let found = search_scopes(&repository, org, &query).await.unwrap();
                    if round > 0 {
                        times.push(started.elapsed().as_secs_f64() * 1000.0);
                    }
                    std::hint::black_box(found);
                }
            }
        }
        alone.sort_by(f64::total_cmp);
        both.sort_by(f64::total_cmp);
        let (a50, a95) = (percentile(&alone, 0.5), percentile(&alone, 0.95));
        let (b50, b95) = (percentile(&both, 0.5), percentile(&both, 0.95));
        println!(
            "| {size} + {size} | {label} | {a50:.2}/{a95:.2} | {b50:.2}/{b95:.2} | {:.2} |",
            b95 - a95
        );
    }
}

#[tokio::main]
async fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let org_mode = args.first().is_some_and(|a| a == "org");
    if org_mode {
        args.remove(0);
    }
    let sizes: Vec<usize> = args
        .first()
        .cloned()
        .unwrap_or_else(|| {
            if org_mode {
                "10000"
            } else {
                "1000,10000,100000"
            }
            .to_string()
        })
        .split(',')
        .filter_map(|s| s.trim().parse().ok())
        .collect();
    let semantic =
        SemanticSettings::resolve(std::env::var_os("CAIRN_MODEL_DIR").map(Into::into), true);
    println!(
        "search mode: {}",
        if semantic.model_dir.is_some() {
            "keyword + semantic"
        } else {
            "keyword"
        }
    );
    let queries_by_kind: [(&str, &[&str]); 4] = [
        (
            "two words",
            &[
                "tenant permissions",
                "nightly batch",
                "flaky tests",
                "second reviewer",
            ],
        ),
        (
            "identifier",
            &[
                "select_related",
                "send_file",
                "validate_token",
                "cache.get_many",
            ],
        ),
        (
            "one common word",
            &["transaction", "review", "database", "src"],
        ),
        (
            "sentence",
            &[
                "why do we wrap billing writes in a transaction",
                "what breaks when the tenant id is missing in checkout",
            ],
        ),
    ];
    if org_mode {
        for &size in &sizes {
            org_scope(size, &semantic, &queries_by_kind).await;
        }
        return;
    }
    println!(
        "| memories | bulk write/s | load s | remember p50/p95 ms (held) | remember p50/p95 ms (open per write) | remember p50/p95 ms (serve, lingering) | query | search p50/p95 ms | store MB |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    for &size in &sizes {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("data");
        std::fs::create_dir_all(&data).unwrap();
        let root = dir.path();
        let mut rng = fastrand::Rng::with_seed(42);
        let records: Vec<ExportRecord> = (0..size).map(|i| record(&mut rng, i)).collect();

        // Bulk load through import (one transaction per 1,000), with the store held open.
        let store = MemoryStore::open(&data.join("memory")).await.unwrap();
        let held: Arc<Memories> = Memories::held(root, store, semantic.clone());
        let started = Instant::now();
        for chunk in records.chunks(1_000) {
            held.import(chunk.to_vec()).await.unwrap();
        }
        let bulk = size as f64 / started.elapsed().as_secs_f64();
        let embedded = if semantic.model_dir.is_some() {
            let started = Instant::now();
            let n = held.embed_pending().await.unwrap();
            Some(n as f64 / started.elapsed().as_secs_f64())
        } else {
            None
        };

        // remember, one at a time, with dedup against everything stored.
        let held_times = timed_remembers(&held, &mut rng, 200).await;
        let mut rows = Vec::new();
        for (label, queries) in queries_by_kind {
            let (p50, p95) = timed_searches(&held, queries, 30).await;
            rows.push((label, p50, p95));
        }
        drop(held);
        // The store must be closed before another handle opens it.
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;

        let per_open = Memories::open(root, &data, SemanticSettings::default());
        let started = Instant::now();
        per_open
            .search(&Query {
                text: "transaction".into(),
                limit: 10,
                ..Query::default()
            })
            .await
            .unwrap();
        let load = started.elapsed().as_secs_f64();
        let open_times = timed_remembers(&per_open, &mut rng, 50).await;
        drop(per_open);

        // As `cairn serve` writes: the store lingers open for a second after each use.
        let serving = Memories::lingering(
            root,
            &data,
            SemanticSettings::default(),
            std::time::Duration::from_secs(1),
        );
        serving.all().await.unwrap();
        let serve_times = timed_remembers(&serving, &mut rng, 100).await;
        serving.close().await;
        let mb = dir_size(&data.join("memory")) as f64 / 1e6;
        for (i, (label, p50, p95)) in rows.iter().enumerate() {
            if i == 0 {
                println!(
                    "| {size} | {bulk:.0}{} | {load:.2} | {:.2}/{:.2} | {:.1}/{:.1} | {:.1}/{:.1} | {label} | {p50:.2}/{p95:.2} | {mb:.1} |",
                    embedded
                        .map(|e| format!(" ({e:.0}/s embedded)"))
                        .unwrap_or_default(),
                    percentile(&held_times, 0.5),
                    percentile(&held_times, 0.95),
                    percentile(&open_times, 0.5),
                    percentile(&open_times, 0.95),
                    percentile(&serve_times, 0.5),
                    percentile(&serve_times, 0.95),
                );
            } else {
                println!("| | | | | | | {label} | {p50:.2}/{p95:.2} | |");
            }
        }
    }
}
