//! Measures the causal measures on an indexed repository: the time of reach and of impact
//! over the stored graph, and how well centrality (`ln impact`, what `get_context` ranks by)
//! discriminates between symbols: the top values and how many symbols share each, as shown
//! (two decimals), beside the same for the centrality reach gave before impact.
//!
//! Reach is timed both ways, exact (blocked bitsets) and estimated (bottom-k sketches, what
//! graphs past `reach::EXACT_UP_TO` nodes get), with the estimates' error against the exact
//! counts.
//!
//! `impact_bench --store DATA/store [--runs N]` prints one JSON object.

use std::path::PathBuf;
use std::time::Instant;

use cairn::graph::{self, Node, rank, reach};
use cairn::storage::Store;

mod common;

use common::{arg, percentile};

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let store_dir = PathBuf::from(arg(&args, "--store").expect("--store DATA/store"));
    let runs: usize = arg(&args, "--runs").map_or(Ok(5), |n| n.parse())?;
    let store = Store::open(&store_dir).await?;
    let graph = store.load_graph().await?;
    store.close().await;
    let nodes: Vec<Node> = graph.nodes.iter().map(|n| (**n).clone()).collect();
    let edges: Vec<graph::Edge> = graph.edges.iter().cloned().collect();

    let (mut links_ms, mut reach_ms, mut impact_ms) = (Vec::new(), Vec::new(), Vec::new());
    let mut estimate_ms = Vec::new();
    let keys: Vec<u64> = nodes.iter().map(|n| reach::key(&n.id)).collect();
    let (mut impacts, mut exact, mut estimates) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..runs {
        let started = Instant::now();
        let dependents = graph::impact_links(&nodes, &edges);
        links_ms.push(started.elapsed().as_secs_f64() * 1e3);
        let successors: Vec<Vec<u32>> = dependents
            .iter()
            .map(|l| l.iter().map(|&(to, _)| to).collect())
            .collect();
        let started = Instant::now();
        exact = reach::exact(&successors);
        reach_ms.push(started.elapsed().as_secs_f64() * 1e3);
        let started = Instant::now();
        estimates = reach::estimated(&successors, &keys, reach::SKETCH);
        estimate_ms.push(started.elapsed().as_secs_f64() * 1e3);
        let started = Instant::now();
        impacts = rank::impact_scores(&dependents);
        impact_ms.push(started.elapsed().as_secs_f64() * 1e3);
    }
    let symbols: Vec<usize> = (0..nodes.len())
        .filter(|&i| nodes[i].kind.is_symbol())
        .collect();
    let by_reach: Vec<f64> = symbols
        .iter()
        .map(|&i| (2.0 * nodes[i].reach as f64 + nodes[i].causal_in as f64).ln_1p())
        .collect();
    let by_impact: Vec<f64> = symbols
        .iter()
        .map(|&i| rank::stored(impacts[i]).max(1.0).ln())
        .collect();
    let result = serde_json::json!({
        "nodes": nodes.len(),
        "edges": edges.len(),
        "symbols": symbols.len(),
        "links_p50_ms": percentile(&mut links_ms, 0.5),
        "reach_p50_ms": percentile(&mut reach_ms, 0.5),
        "reach_estimated_p50_ms": percentile(&mut estimate_ms, 0.5),
        "reach_estimate_error": estimate_error(&exact, &estimates),
        "impact_p50_ms": percentile(&mut impact_ms, 0.5),
        "centrality_from_reach": distribution(&by_reach),
        "centrality_from_impact": distribution(&by_impact),
    });
    println!("{result}");
    Ok(())
}

/// How far estimated reach is from exact reach: how many counts are exact, and the relative
/// error's percentiles over the rest.
fn estimate_error(exact: &[u32], estimates: &[u32]) -> serde_json::Value {
    let mut errors: Vec<f64> = exact
        .iter()
        .zip(estimates)
        .filter(|(t, e)| t != e)
        .map(|(&t, &e)| (e as f64 - t as f64).abs() / t.max(1) as f64)
        .collect();
    if errors.is_empty() {
        errors.push(0.0);
    }
    serde_json::json!({
        "exact_share": 1.0 - errors.len() as f64 / exact.len().max(1) as f64,
        "relative_error_p50": percentile(&mut errors, 0.5),
        "relative_error_p95": percentile(&mut errors, 0.95),
        "relative_error_max": errors.iter().copied().fold(0.0, f64::max),
    })
}

/// The ten highest values as shown (two decimals) with how many symbols share each, the share
/// of symbols at the top value, and the 50th/95th/99th percentiles.
fn distribution(values: &[f64]) -> serde_json::Value {
    let shown = |v: f64| (v * 100.0).round() / 100.0;
    let mut sorted: Vec<f64> = values.iter().map(|&v| shown(v)).collect();
    sorted.sort_by(|a, b| b.total_cmp(a));
    let mut top: Vec<(f64, usize)> = Vec::new();
    for &v in &sorted {
        if let Some((last, count)) = top.last_mut()
            && *last == v
        {
            *count += 1;
        } else if top.len() == 10 {
            break;
        } else {
            top.push((v, 1));
        }
    }
    let at = |p: f64| sorted[((sorted.len() - 1) as f64 * (1.0 - p)) as usize];
    serde_json::json!({
        "top_values_shared_by": top,
        "share_at_top_value": top.first().map_or(0.0, |t| t.1 as f64 / sorted.len() as f64),
        "share_within_1pct_of_top": sorted.iter().filter(|&&v| v >= 0.99 * sorted[0]).count() as f64 / sorted.len() as f64,
        "p50": at(0.5),
        "p95": at(0.95),
        "p99": at(0.99),
    })
}
