//! Measures the daemon as an assistant meets it: save-to-answer latency (a file written, then
//! `expand` over streamable HTTP polled until it shows the change; debounce included; the file
//! is Python, or TypeScript/JavaScript by any other extension), the daemon's resident memory
//! and idle CPU, and `cairn hook`'s cost per tool call.
//!
//! `daemon_bench --cairn BIN --repo DIR --data-dir DATA --file REL [--runs N] [--idle SECONDS]`
//! Prints one JSON object.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;

mod common;

use common::{arg, percentile, rss_mb};

/// User plus system CPU seconds the process used so far.
fn cpu_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let after = stat.rsplit(')').next().unwrap_or("");
    let fields: Vec<&str> = after.split_whitespace().collect();
    let ticks: f64 = fields.get(11..13).map_or(0.0, |f| {
        f.iter().filter_map(|v| v.parse::<f64>().ok()).sum()
    });
    ticks / 100.0
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let cairn = PathBuf::from(arg(&args, "--cairn").expect("--cairn BIN"));
    let repo = PathBuf::from(arg(&args, "--repo").expect("--repo DIR"));
    let data = PathBuf::from(arg(&args, "--data-dir").expect("--data-dir DATA"));
    let file = arg(&args, "--file").expect("--file REL");
    let runs: usize = arg(&args, "--runs").map_or(40, |n| n.parse().unwrap());
    let idle: u64 = arg(&args, "--idle").map_or(20, |n| n.parse().unwrap());
    let base = |command: &mut Command| {
        command
            .arg("--repo")
            .arg(&repo)
            .arg("--data-dir")
            .arg(&data);
    };

    let started = Instant::now();
    let mut daemon = {
        let mut command = Command::new(&cairn);
        base(&mut command);
        command
            .arg("daemon")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()?
    };
    let record_path = data.join("daemon.json");
    let record: serde_json::Value = loop {
        if let Ok(text) = std::fs::read_to_string(&record_path)
            && let Ok(record) = serde_json::from_str(&text)
        {
            break record;
        }
        if let Some(status) = daemon.try_wait()? {
            anyhow::bail!("the daemon exited: {status}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let ready_seconds = started.elapsed().as_secs_f64();
    let pid = daemon.id();
    let url = record["url"].as_str().unwrap().to_string();
    let token = std::fs::read_to_string(data.join("daemon.token"))?
        .trim()
        .to_string();
    let rss_ready = rss_mb(pid);

    let config = StreamableHttpClientTransportConfig::with_uri(url).auth_header(token);
    let transport = StreamableHttpClientTransport::with_client(reqwest::Client::new(), config);
    let client = ().serve(transport).await?;
    let expand = async |target: &str| -> anyhow::Result<bool> {
        let mut arguments = serde_json::Map::new();
        arguments.insert("target".into(), target.into());
        let result = client
            .call_tool(CallToolRequestParams::new("expand").with_arguments(arguments))
            .await?;
        Ok(result.is_error != Some(true))
    };

    let path = repo.join(&file);
    let original = std::fs::read_to_string(&path)?;
    let mut latencies = Vec::new();
    for i in 0..runs {
        let name = format!("cairn_probe_{i}");
        let text = if file.ends_with(".py") {
            format!("{original}\n\ndef {name}():\n    return {i}\n")
        } else {
            format!("{original}\nexport function {name}() {{\n  return {i};\n}}\n")
        };
        let target = format!("{file}::{name}");
        let written = Instant::now();
        std::fs::write(&path, text)?;
        let mut polls: Vec<(f64, f64)> = Vec::new();
        loop {
            let asked = written.elapsed().as_secs_f64() * 1000.0;
            let shown = expand(&target).await?;
            polls.push((asked, written.elapsed().as_secs_f64() * 1000.0 - asked));
            if shown {
                break;
            }
            anyhow::ensure!(
                written.elapsed() < Duration::from_secs(60),
                "the change never showed"
            );
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        latencies.push(written.elapsed().as_secs_f64() * 1000.0);
        if std::env::var_os("BENCH_VERBOSE").is_some() {
            eprintln!(
                "save {i}: answered after {:.0} ms (written at {:?}); polls (asked at, took) ms: {polls:.0?}",
                latencies[latencies.len() - 1],
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .unwrap()
                    .as_secs_f64()
                    - written.elapsed().as_secs_f64()
            );
        }
        // Saves a second and a half apart, as between real edits (the daemon's exact rebuild
        // waits for a quiet of twice its last duration: on larger repositories it follows the
        // last save).
        tokio::time::sleep(Duration::from_millis(1500)).await;
    }
    std::fs::write(&path, &original)?;
    // The last rebuild and write settle before idle is measured.
    tokio::time::sleep(Duration::from_secs(10)).await;
    let rss_after = rss_mb(pid);

    client.cancel().await?;
    let cpu_before = cpu_seconds(pid);
    tokio::time::sleep(Duration::from_secs(idle)).await;
    let idle_cpu = (cpu_seconds(pid) - cpu_before) / idle as f64 * 100.0;
    let rss_idle = rss_mb(pid);

    // Hook cost per tool call, with the daemon running (it is not consulted for tool calls).
    let event = serde_json::json!({
        "hook_event_name": "PostToolUse", "session_id": "bench", "cwd": repo,
        "tool_name": "Read", "tool_input": {"file_path": path}
    })
    .to_string();
    let mut hooks = Vec::new();
    for _ in 0..60 {
        hooks.push(time_hook(&cairn, &repo, &data, &event)?);
    }
    let start_event =
        serde_json::json!({"hook_event_name": "SessionStart", "session_id": "bench", "cwd": repo})
            .to_string();
    let mut starts = Vec::new();
    for _ in 0..10 {
        starts.push(time_hook(&cairn, &repo, &data, &start_event)?);
    }

    Command::new("kill")
        .arg("-TERM")
        .arg(pid.to_string())
        .status()?;
    let stop = Instant::now();
    daemon.wait()?;
    let stop_ms = stop.elapsed().as_secs_f64() * 1000.0;

    let line = serde_json::json!({
        "repo": repo,
        "file": file,
        "runs": runs,
        "ready_s": ready_seconds,
        "save_to_answer_ms": {
            "p50": percentile(&mut latencies, 0.5),
            "p95": percentile(&mut latencies, 0.95),
            "max": percentile(&mut latencies, 1.0),
        },
        "rss_mb": {"ready": rss_ready, "after_edits": rss_after, "idle": rss_idle},
        "idle_cpu_percent": idle_cpu,
        "idle_seconds": idle,
        "hook_post_tool_use_ms": {
            "p50": percentile(&mut hooks, 0.5),
            "p95": percentile(&mut hooks, 0.95),
        },
        "hook_session_start_ms": {
            "p50": percentile(&mut starts, 0.5),
            "p95": percentile(&mut starts, 0.95),
        },
        "stop_ms": stop_ms,
    });
    println!("{line}");
    Ok(())
}

fn time_hook(cairn: &Path, repo: &Path, data: &Path, event: &str) -> anyhow::Result<f64> {
    let started = Instant::now();
    let mut child = Command::new(cairn)
        .arg("--repo")
        .arg(repo)
        .arg("--data-dir")
        .arg(data)
        .arg("hook")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()?;
    child.stdin.take().unwrap().write_all(event.as_bytes())?;
    let status = child.wait()?;
    anyhow::ensure!(status.success(), "cairn hook failed");
    Ok(started.elapsed().as_secs_f64() * 1000.0)
}
