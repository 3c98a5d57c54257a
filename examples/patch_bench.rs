//! Measures the daemon's quick patch in process: the index loaded from the store as the daemon
//! holds it, then a save of one file re-read and patched into the graph, many times, with the
//! patch's two halves (building the file's nodes and edges against every file, and making the
//! patched graph) timed apart. What a save costs before its answer, without the debounce, the
//! watcher or the transport.
//!
//! `patch_bench --repo DIR --data-dir DATA --file REL [--runs N]` prints one JSON line; DATA is
//! a data directory `cairn index` wrote. The file is restored at the end.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::Context as _;

use cairn::config::Repo;
use cairn::index::Live;
use cairn::storage::Store;

mod common;

use common::{arg, percentile};

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let repo_dir = PathBuf::from(arg(&args, "--repo").expect("--repo DIR"));
    let data_dir = PathBuf::from(arg(&args, "--data-dir").expect("--data-dir DATA"));
    let file = arg(&args, "--file").expect("--file REL");
    let runs: usize = arg(&args, "--runs").map_or(Ok(20), |n| n.parse())?;
    // Each run appends a new function, so the probes are known before the long load.
    let probes: Vec<String> = (0..runs)
        .map(|i| probe_function(&file, i))
        .collect::<Option<_>>()
        .with_context(|| format!("cannot add a top-level function to {file}"))?;
    let repo = Repo::discover(&repo_dir, Some(&data_dir))?;

    let started = Instant::now();
    let store = Store::open(&data_dir.join("store")).await?;
    let mut live = Live::load(&store).await?;
    store.close().await;
    // The daemon's first read: a whole walk (module roots), nothing changed.
    live.read(&repo, None);
    let load_s = started.elapsed().as_secs_f64();

    let path = repo.root.join(&file);
    let original = std::fs::read_to_string(&path)?;
    let (mut build_ms, mut graph_ms, mut total_ms) = (Vec::new(), Vec::new(), Vec::new());
    let outcome = (|| -> anyhow::Result<()> {
        for (i, probe) in probes.iter().enumerate() {
            std::fs::write(&path, format!("{original}{probe}"))?;
            let t = Instant::now();
            let reading = live.read(&repo, Some(std::slice::from_ref(&file)));
            anyhow::ensure!(reading.changed == [file.clone()], "the save was not read");
            let timing = live.patch(&reading.changed);
            total_ms.push(t.elapsed().as_secs_f64() * 1e3);
            build_ms.push(timing.built.as_secs_f64() * 1e3);
            graph_ms.push(timing.patched.as_secs_f64() * 1e3);
            let probe = format!("{file}::cairn_probe_{i}");
            anyhow::ensure!(
                live.graph().node(&probe).is_some(),
                "{probe} is not in the graph"
            );
        }
        Ok(())
    })();
    std::fs::write(&path, &original)?;
    outcome?;
    let graph = live.graph();
    let result = serde_json::json!({
        "repo": repo.root,
        "file": file,
        "runs": runs,
        "nodes": graph.nodes.len(),
        "edges": graph.edges.len(),
        "load_s": load_s,
        "save_to_patched_ms": {"p50": percentile(&mut total_ms, 0.5), "p95": percentile(&mut total_ms, 0.95)},
        "build_ms": {"p50": percentile(&mut build_ms, 0.5), "p95": percentile(&mut build_ms, 0.95)},
        "graph_ms": {"p50": percentile(&mut graph_ms, 0.5), "p95": percentile(&mut graph_ms, 0.95)},
    });
    println!("{result}");
    Ok(())
}

/// A new top-level function `cairn_probe_{i}` in the language of `file`, appended to it; none
/// for a language whose functions live in a class (Java, C#).
fn probe_function(file: &str, i: usize) -> Option<String> {
    let extension = file.rsplit('.').next().unwrap_or("");
    Some(match extension {
        "py" | "pyi" => format!("\n\ndef cairn_probe_{i}():\n    return {i}\n"),
        "c" | "h" | "cc" | "cpp" | "cxx" | "hh" | "hpp" => {
            format!("\n\nint cairn_probe_{i}(void)\n{{\n\treturn {i};\n}}\n")
        }
        "ts" | "tsx" | "js" | "jsx" | "mjs" | "cjs" | "mts" | "cts" => {
            format!("\n\nexport function cairn_probe_{i}() {{\n  return {i};\n}}\n")
        }
        "go" => format!("\n\nfunc cairn_probe_{i}() int {{\n\treturn {i}\n}}\n"),
        "rs" => format!("\n\npub fn cairn_probe_{i}() -> usize {{\n    {i}\n}}\n"),
        "rb" => format!("\n\ndef cairn_probe_{i}\n  {i}\nend\n"),
        "php" => format!("\n\nfunction cairn_probe_{i}() {{\n    return {i};\n}}\n"),
        _ => return None,
    })
}
