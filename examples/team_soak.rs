//! Team-mode soak and fault benchmark against a real SurrealDB server on loopback: members
//! (separate `cairn serve` processes, data directories and config homes) write, supersede,
//! share and forget memories and record reviews for minutes while the server is killed and
//! restarted, one member is offline for the first half, pairs supersede one memory at once
//! and two clocks run minutes off; then every member syncs and everything is checked. Prints
//! writes per second, the times to converge and what was lost (must be nothing), then one
//! JSON line.
//!
//! Run (the binaries `cargo test --no-run` builds, or a release `cairn`):
//! `cargo run --example team_soak -- [--members 8] [--seconds 240] [--offline-writes 400]
//! [--cairn PATH] [--surreal PATH] [--seed 1]`. Some members' clocks are offset with
//! libfaketime (Debian's `faketime` package). `CAIRN_SOAK_KEEP=1` keeps the run's server data,
//! clones, data directories (each with its `cairn serve` log) and config homes.

mod common;
#[path = "common/soak.rs"]
mod soak;

use std::path::PathBuf;
use std::time::Duration;

use common::{arg, percentile};

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    let number = |name: &str, default: u64| -> u64 {
        arg(&args, name).map_or(default, |v| v.parse().expect("a number"))
    };
    let beside = |name: &str| {
        let exe = std::env::current_exe().expect("the benchmark's path");
        let dir = exe.parent().expect("a directory");
        // target/<profile>/examples/team_soak: cairn is one level up, surreal beside it.
        if name == "cairn" {
            dir.parent().expect("the profile directory").join(name)
        } else {
            dir.join(name)
        }
    };
    let plan = soak::Plan {
        cairn: arg(&args, "--cairn").map_or_else(|| beside("cairn"), PathBuf::from),
        surreal: arg(&args, "--surreal").map_or_else(|| beside("surreal"), PathBuf::from),
        members: number("--members", 8) as usize,
        duration: Duration::from_secs(number("--seconds", 240)),
        offline_writes: number("--offline-writes", 400) as usize,
        seed: number("--seed", 1),
    };
    assert!(
        std::path::Path::new(soak::LIBFAKETIME).exists(),
        "{} is missing: install Debian's faketime package",
        soak::LIBFAKETIME
    );
    println!(
        "team soak: {} members for {}s, {} writes queued offline; cairn {}, server {}",
        plan.members,
        plan.duration.as_secs(),
        plan.offline_writes,
        plan.cairn.display(),
        plan.surreal.display()
    );
    let report = soak::run(&plan).await;
    println!("{}", report.summary());
    let mut answered = report.write_ms.clone();
    let (p50, p95) = (
        percentile(&mut answered, 0.5),
        percentile(&mut answered, 0.95),
    );
    println!("a write's answer over MCP: p50 {p50:.1} ms, p95 {p95:.1} ms");
    let mut line = report.json();
    line["write_p50_ms"] = serde_json::json!((p50 * 10.0).round() / 10.0);
    line["write_p95_ms"] = serde_json::json!((p95 * 10.0).round() / 10.0);
    println!("{line}");
    if !report.faults().is_empty() {
        std::process::exit(1);
    }
}
