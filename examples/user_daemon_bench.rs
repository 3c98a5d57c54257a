//! Measures one user daemon serving many repositories against one daemon per repository: N
//! copies of a checkout, each with its own data directory, indexed first; then
//!
//! - `one daemon`: `cairn daemon --user` with every copy registered and a memory bound no
//!   copy reaches; each copy's first answer (`/context`, the session-start pack, over HTTP with
//!   the copy's token: the index loaded on demand), a second answer, and the daemon's RSS with
//!   all N loaded;
//! - `evicted`: the same daemon restarted with `--memory-mb 1` (every load unloads the others),
//!   each copy asked twice round the ring: every answer is a first answer after eviction;
//! - `per repository`: N `cairn daemon` processes, one per copy, each asked once; their RSS
//!   summed.
//!
//! `user_daemon_bench --cairn BIN --repo CHECKOUT --work DIR [--copies N]`
//! Prints one JSON object. DIR is emptied first.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

mod common;

use common::{arg, percentile, rss_mb};

struct Copy {
    root: PathBuf,
    data: PathBuf,
}

struct Setup {
    cairn: PathBuf,
    work: PathBuf,
    copies: Vec<Copy>,
}

impl Setup {
    fn command(&self, copy: Option<&Copy>) -> Command {
        let mut command = Command::new(&self.cairn);
        if let Some(copy) = copy {
            command
                .arg("--repo")
                .arg(&copy.root)
                .arg("--data-dir")
                .arg(&copy.data);
        }
        command
            .env("HOME", self.work.join("home"))
            .env("XDG_DATA_HOME", self.work.join("xdg"))
            .env("XDG_CONFIG_HOME", self.work.join("config"))
            .env("CAIRN_SERVICE_MANAGER", "none");
        command
    }

    fn token(copy: &Copy) -> String {
        std::fs::read_to_string(copy.data.join("daemon.token"))
            .expect("a token")
            .trim()
            .to_string()
    }
}

fn run(command: &mut Command) {
    let output = command.output().expect("runs");
    assert!(
        output.status.success(),
        "{:?}: {}",
        command,
        String::from_utf8_lossy(&output.stderr)
    );
}

/// Waits for `path` to hold a record naming `pid`; its port.
fn wait_for_record(path: &Path, child: &mut Child) -> u16 {
    let pid = u64::from(child.id());
    let started = Instant::now();
    loop {
        if let Ok(text) = std::fs::read_to_string(path)
            && let Ok(record) = serde_json::from_str::<serde_json::Value>(&text)
            && record["pid"].as_u64() == Some(pid)
        {
            return record["port"].as_u64().expect("a port") as u16;
        }
        if let Some(status) = child.try_wait().expect("waits") {
            panic!("the daemon exited: {status}");
        }
        assert!(
            started.elapsed() < Duration::from_secs(600),
            "no record at {}",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// `/context` with the copy's token; milliseconds to the whole answer.
async fn answer(client: &reqwest::Client, port: u16, token: &str) -> f64 {
    let started = Instant::now();
    let response = client
        .get(format!("http://127.0.0.1:{port}/context"))
        .bearer_auth(token)
        .send()
        .await
        .expect("answers");
    let status = response.status();
    let text = response.text().await.expect("a body");
    assert!(status.is_success(), "{status}: {text}");
    started.elapsed().as_secs_f64() * 1000.0
}

fn stop(mut child: Child) {
    let _ = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status();
    let _ = child.wait();
}

fn user_daemon(setup: &Setup, memory_mb: &str) -> (Child, u16) {
    let mut child = setup
        .command(None)
        .args(["daemon", "--user", "--memory-mb", memory_mb])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("starts");
    let port = wait_for_record(&setup.work.join("xdg/cairn/daemon.json"), &mut child);
    for copy in &setup.copies {
        wait_for_record(&copy.data.join("daemon.json"), &mut child);
    }
    (child, port)
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let cairn = PathBuf::from(arg(&args, "--cairn").expect("--cairn BIN"));
    let source = PathBuf::from(arg(&args, "--repo").expect("--repo CHECKOUT"));
    let work = PathBuf::from(arg(&args, "--work").expect("--work DIR"));
    let count: usize = arg(&args, "--copies").map_or(10, |n| n.parse().unwrap());
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work)?;
    let copies: Vec<Copy> = (0..count)
        .map(|i| Copy {
            root: work.join(format!("repo-{i}")),
            data: work.join(format!("data-{i}")),
        })
        .collect();
    let setup = Setup {
        cairn,
        work: work.clone(),
        copies,
    };
    let mut files = 0;
    for copy in &setup.copies {
        run(Command::new("git")
            .args(["clone", "--quiet", "--local"])
            .arg(&source)
            .arg(&copy.root));
        run(setup.command(Some(copy)).args(["index", "--quiet"]));
        run(setup
            .command(Some(copy))
            .args(["install", "--client", "cursor"]));
        files = String::from_utf8(
            Command::new("git")
                .arg("-C")
                .arg(&copy.root)
                .args(["ls-files"])
                .output()?
                .stdout,
        )?
        .lines()
        .count();
    }
    let client = reqwest::Client::new();

    // One daemon, everything loaded.
    let (daemon, port) = user_daemon(&setup, "1000000");
    let rss_started = rss_mb(daemon.id());
    let mut first = Vec::new();
    let mut again = Vec::new();
    let mut rss_after_each = Vec::new();
    for copy in &setup.copies {
        let token = Setup::token(copy);
        first.push(answer(&client, port, &token).await);
        again.push(answer(&client, port, &token).await);
        rss_after_each.push(rss_mb(daemon.id()).round());
    }
    // Two seconds of quiet: the loads' transients handed back.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let rss_all_loaded = rss_mb(daemon.id());
    stop(daemon);

    // One daemon, every answer a load after eviction.
    let (daemon, port) = user_daemon(&setup, "1");
    let mut evicted = Vec::new();
    let mut rss_evicting: f64 = 0.0;
    for _ in 0..2 {
        for copy in &setup.copies {
            evicted.push(answer(&client, port, &Setup::token(copy)).await);
            rss_evicting = rss_evicting.max(rss_mb(daemon.id()));
        }
    }
    stop(daemon);

    // One daemon per repository.
    let mut own = Vec::new();
    let mut own_answers = Vec::new();
    for copy in &setup.copies {
        let mut child = setup
            .command(Some(copy))
            .arg("daemon")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()?;
        let port = wait_for_record(&copy.data.join("daemon.json"), &mut child);
        own_answers.push(answer(&client, port, &Setup::token(copy)).await);
        own.push(child);
    }
    tokio::time::sleep(Duration::from_secs(3)).await;
    let rss_own: f64 = own.iter().map(|c| rss_mb(c.id())).sum();
    for child in own {
        stop(child);
    }

    let round = |v: f64| (v * 10.0).round() / 10.0;
    let report = serde_json::json!({
        "repository": source,
        "files": files,
        "copies": count,
        "one_daemon": {
            "rss_started_mb": round(rss_started),
            "rss_all_loaded_mb": round(rss_all_loaded),
            "rss_after_each_load_mb": rss_after_each,
            "first_answer_ms_p50": round(percentile(&mut first.clone(), 0.5)),
            "first_answer_ms_max": round(percentile(&mut first, 1.0)),
            "second_answer_ms_p50": round(percentile(&mut again, 0.5)),
        },
        "evicted": {
            "answers": evicted.len(),
            "first_answer_ms_p50": round(percentile(&mut evicted.clone(), 0.5)),
            "first_answer_ms_p95": round(percentile(&mut evicted.clone(), 0.95)),
            "first_answer_ms_max": round(percentile(&mut evicted, 1.0)),
            "rss_max_mb": round(rss_evicting),
        },
        "per_repository": {
            "rss_total_mb": round(rss_own),
            "answer_ms_p50": round(percentile(&mut own_answers, 0.5)),
        },
    });
    println!("{}", serde_json::to_string_pretty(&report)?);
    Ok(())
}
