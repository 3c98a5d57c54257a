//! The memory pages' server time with many memories in the store: the memories search (a
//! query, and the unfiltered list), a memory's page, its edit form and the needs-attention
//! list, answered by the daemon's `/ui` router (the same use cases, the same HTML) in this
//! process over loopback HTTP, after the repository is indexed and the memories imported.
//!
//! `ui_bench [--repo DIR] [--memories N] [--rounds N]` (default: this checkout, 10,000
//! memories, 20 rounds). Run with `cargo run --release --example ui_bench`; set
//! `CAIRN_MODEL_DIR` to measure the search with its semantic layer. Prints one line per page:
//! p50 and p95 milliseconds from request to the page's last byte, and the first request's
//! (which loads what a running daemon already holds, and finds the near-duplicates).

mod common;
#[path = "common/learnings.rs"]
mod learnings;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use cairn::app::{Cairn, ImportRequest, IndexRequest};
use cairn::config::Repo;
use cairn::daemon::ui::{self, Sessions};
use common::{arg, percentile};

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let root = arg(&args, "--repo")
        .map_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")), PathBuf::from);
    let count: usize = arg(&args, "--memories").map_or(10_000, |n| n.parse().unwrap());
    let rounds: usize = arg(&args, "--rounds").map_or(20, |n| n.parse().unwrap());
    let data = tempfile::tempdir()?;
    let repo = Repo::discover(&root, Some(data.path()))?;
    let model_dir = std::env::var_os("CAIRN_MODEL_DIR").map(PathBuf::from);
    let cairn = Cairn::serving(repo, model_dir);

    let started = Instant::now();
    let report = cairn.index(IndexRequest::default()).await?;
    eprintln!(
        "indexed {} in {:.1} s",
        root.display(),
        started.elapsed().as_secs_f64()
    );
    drop(report);
    let mut rng = fastrand::Rng::with_seed(7);
    let mut jsonl = String::new();
    for i in 0..count {
        jsonl.push_str(&serde_json::to_string(&learnings::record(&mut rng, i))?);
        jsonl.push('\n');
    }
    let started = Instant::now();
    cairn.import(ImportRequest { jsonl }).await?;
    cairn.finish().await;
    eprintln!(
        "imported {count} memories in {:.1} s",
        started.elapsed().as_secs_f64()
    );

    let sessions = Arc::new(Sessions::default());
    let code = sessions.issue_code()?;
    let logged_in = sessions.exchange(&code)?.expect("a fresh code works");
    let cookie = format!("{}={}", ui::cookie_name(&cairn.repo.data_dir), logged_in.id);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let base = format!("http://{}", listener.local_addr()?);
    let router = ui::router(cairn.clone(), Arc::new(Vec::new), sessions);
    tokio::spawn(async move { axum::serve(listener, router).await });

    let client = reqwest::Client::new();
    let listed = cairn.list(cairn::app::ListRequest::default()).await?.0;
    let id = &listed[listed.len() / 2].id;
    let pages = [
        ("search, a query", "/ui/?q=retry+token+refresh".to_string()),
        ("search, every memory", "/ui/".to_string()),
        (
            "search, a type and a path",
            "/ui/?type=decision&path=src%2F".to_string(),
        ),
        ("a memory", format!("/ui/memories/{id}")),
        ("its edit form", format!("/ui/memories/{id}/edit")),
        ("needs attention", "/ui/attention".to_string()),
    ];
    println!("{count} memories, {rounds} rounds (p50 / p95 ms, then the first request)");
    for (name, path) in pages {
        let url = format!("{base}{path}");
        let mut times = Vec::new();
        let mut first = 0.0;
        // The first request warms what a running daemon already holds; it is shown apart.
        for round in 0..=rounds {
            let started = Instant::now();
            let response = client.get(&url).header("cookie", &cookie).send().await?;
            let status = response.status();
            let body = response.bytes().await?;
            let elapsed = started.elapsed().as_secs_f64() * 1000.0;
            assert!(status.is_success(), "{path}: {status}");
            assert!(!body.is_empty());
            if round == 0 {
                first = elapsed;
            } else {
                times.push(elapsed);
            }
        }
        println!(
            "{name:28} {:7.1} / {:7.1}   (first {first:.1})",
            percentile(&mut times, 0.5),
            percentile(&mut times, 0.95)
        );
    }
    cairn.finish().await;
    Ok(())
}
