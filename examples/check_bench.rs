//! How often the daemon's exact rebuild finds that its quick patches missed something, on a
//! real history: the repository is indexed at an older commit, then each later commit is
//! replayed as the daemon meets it. Every file the commit changed is written and patched in
//! on its own, one save after another, then the exact rebuild runs and is compared with the
//! patched graph answers came from meanwhile.
//!
//! `check_bench --repo DIR --commits N [--data-dir DATA]` prints one JSON object: how many
//! commits were checked, in how many the rebuild found a difference, the nodes and edges it
//! added and removed by edge kind, and the first differences as examples. DIR is a git clone
//! whose work tree is moved back to HEAD~N and forward again (it must hold no changes of its
//! own); it is left at the commit it started on.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use cairn::config::Repo;
use cairn::graph::Graph;
use cairn::index::Live;
use cairn::storage::Store;

mod common;

use common::{arg, percentile};

/// Examples of a difference kept per run.
const EXAMPLES: usize = 12;

fn git(repo: &Path, args: &[&str]) -> anyhow::Result<String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(repo)
        .args(args)
        .output()?;
    anyhow::ensure!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Ok(String::from_utf8(out.stdout)?)
}

/// Edges by (kind, source, destination).
fn edge_keys(graph: &Graph) -> BTreeSet<(String, String, String)> {
    graph
        .edges
        .iter()
        .map(|e| {
            (
                e.kind.table().to_string(),
                e.src.to_string(),
                e.dst.to_string(),
            )
        })
        .collect()
}

fn node_ids(graph: &Graph) -> BTreeSet<String> {
    graph.nodes.iter().map(|n| n.id.to_string()).collect()
}

#[derive(Default)]
struct Tally {
    commits: usize,
    saves: usize,
    found: usize,
    /// Commits whose difference, by what it held at most: the patch's own resolution (calls,
    /// imports, bases, the project's nodes), else promoted edges (`drives`, `asserts_on`,
    /// which only exact builds make), else only outside modules no file imports any more.
    found_by: BTreeMap<&'static str, usize>,
    nodes_added: usize,
    nodes_removed: usize,
    /// By edge kind: (added, removed).
    edges: BTreeMap<String, (usize, usize)>,
    examples: Vec<serde_json::Value>,
    /// Each save's patch and each commit's exact rebuild, in ms.
    patch_ms: Vec<f64>,
    rebuild_ms: Vec<f64>,
}

impl Tally {
    /// Compares the patched graph with the exact one; says whether they differ.
    fn compare(&mut self, commit: &str, patched: &Graph, exact: &Graph) -> bool {
        let (before, after) = (node_ids(patched), node_ids(exact));
        let nodes_added: Vec<&String> = after.difference(&before).collect();
        let nodes_removed: Vec<&String> = before.difference(&after).collect();
        let (before, after) = (edge_keys(patched), edge_keys(exact));
        let edges_added: Vec<_> = after.difference(&before).collect();
        let edges_removed: Vec<_> = before.difference(&after).collect();
        self.nodes_added += nodes_added.len();
        self.nodes_removed += nodes_removed.len();
        for (kind, _, _) in &edges_added {
            self.edges.entry(kind.clone()).or_default().0 += 1;
        }
        for (kind, _, _) in &edges_removed {
            self.edges.entry(kind.clone()).or_default().1 += 1;
        }
        let differs = !(nodes_added.is_empty()
            && nodes_removed.is_empty()
            && edges_added.is_empty()
            && edges_removed.is_empty());
        let project_node = nodes_added
            .iter()
            .chain(&nodes_removed)
            .any(|id| !id.starts_with("ext:"));
        let resolved = edges_added
            .iter()
            .chain(&edges_removed)
            .any(|(kind, _, _)| !matches!(kind.as_str(), "drives" | "asserts_on"));
        let what = if project_node || resolved {
            "resolution"
        } else if !edges_added.is_empty() || !edges_removed.is_empty() {
            "promotions"
        } else {
            "outside modules"
        };
        if differs {
            *self.found_by.entry(what).or_default() += 1;
        }
        if differs && self.examples.len() < EXAMPLES {
            let few = |edges: &[&(String, String, String)]| -> Vec<String> {
                edges
                    .iter()
                    .take(5)
                    .map(|(k, s, d)| format!("{s} -{k}-> {d}"))
                    .collect()
            };
            self.examples.push(serde_json::json!({
                "commit": commit,
                "what": what,
                "nodes_added": nodes_added.iter().take(5).collect::<Vec<_>>(),
                "nodes_removed": nodes_removed.iter().take(5).collect::<Vec<_>>(),
                "edges_added": few(&edges_added),
                "edges_removed": few(&edges_removed),
            }));
        }
        differs
    }
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let dir = PathBuf::from(arg(&args, "--repo").expect("--repo DIR"));
    let commits: usize = arg(&args, "--commits").map_or(Ok(30), |n| n.parse())?;
    let scratch = tempfile::tempdir()?;
    let data_dir =
        arg(&args, "--data-dir").map_or_else(|| scratch.path().to_path_buf(), PathBuf::from);
    anyhow::ensure!(
        git(&dir, &["status", "--porcelain", "--untracked-files=no"])?.is_empty(),
        "{} holds changes of its own",
        dir.display()
    );
    let start = git(&dir, &["rev-parse", "HEAD"])?.trim().to_string();
    // First parents only: the history as its main line saw it.
    let line = git(
        &dir,
        &[
            "rev-list",
            "--first-parent",
            "--reverse",
            &format!("-{}", commits + 1),
            &start,
        ],
    )?;
    let line: Vec<&str> = line.lines().collect();
    let outcome = replay(&dir, &data_dir, &line).await;
    git(&dir, &["checkout", "-q", "--detach", &start])?;
    let mut tally = outcome?;
    anyhow::ensure!(tally.commits > 0, "no commit changed a file cairn reads");
    let edges: serde_json::Map<String, serde_json::Value> = tally
        .edges
        .iter()
        .map(|(kind, (added, removed))| {
            (
                kind.clone(),
                serde_json::json!({"added": added, "removed": removed}),
            )
        })
        .collect();
    let result = serde_json::json!({
        "repo": dir,
        "commits": tally.commits,
        "saves": tally.saves,
        "found": tally.found,
        "found_by": tally.found_by,
        "nodes": {"added": tally.nodes_added, "removed": tally.nodes_removed},
        "edges": edges,
        "examples": tally.examples,
        "patch_ms": {"p50": percentile(&mut tally.patch_ms, 0.5), "p95": percentile(&mut tally.patch_ms, 0.95)},
        "rebuild_ms": {"p50": percentile(&mut tally.rebuild_ms, 0.5), "p95": percentile(&mut tally.rebuild_ms, 0.95)},
    });
    println!("{result}");
    Ok(())
}

async fn replay(dir: &Path, data_dir: &Path, line: &[&str]) -> anyhow::Result<Tally> {
    let (first, rest) = line
        .split_first()
        .expect("a history of at least one commit");
    git(dir, &["checkout", "-q", "--detach", first])?;
    let repo = Repo::discover(dir, Some(data_dir))?;
    let store = Store::open(&data_dir.join("store")).await?;
    cairn::index::run(&repo, &store).await?;
    let mut live = Live::load(&store).await?;
    store.close().await;
    live.read(&repo, None);
    if !live.is_exact() {
        live.rebuild();
    }
    let mut tally = Tally::default();
    let mut parent = *first;
    for commit in rest {
        let changed = git(
            dir,
            &["diff", "--name-only", "--no-renames", parent, commit],
        )?;
        git(dir, &["checkout", "-q", "--detach", commit])?;
        parent = commit;
        // Each file the commit changed, saved on its own, as an editor writes them.
        let mut patched_any = false;
        for path in changed.lines() {
            let reading = live.read(&repo, Some(&[path.to_string()]));
            if reading.changed.is_empty() {
                continue;
            }
            let timing = live.patch(&reading.changed);
            tally.patch_ms.push(timing.total.as_secs_f64() * 1e3);
            tally.saves += 1;
            patched_any = true;
        }
        if !patched_any {
            continue;
        }
        tally.commits += 1;
        let patched = live.graph();
        let started = std::time::Instant::now();
        live.rebuild();
        tally.rebuild_ms.push(started.elapsed().as_secs_f64() * 1e3);
        if tally.compare(commit, &patched, &live.graph()) {
            tally.found += 1;
        }
    }
    Ok(tally)
}
