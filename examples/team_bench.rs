//! Team-mode benchmark against a real SurrealDB server on loopback: memory search at 10k
//! shared memories, a new working copy's first answer (pulling everything), a restart's
//! first answer (from the local copy), and the replay of 1,000 queued writes.
//!
//! Run: `CARGO_PROFILE_DEV_OPT_LEVEL=3 cargo build --example surreal` (the server), then
//! `CARGO_PROFILE_DEV_OPT_LEVEL=3 cargo run --example team_bench [-- --count 10000 --queued 1000]`
//! (`--surreal PATH` if the server binary is elsewhere). Set `CAIRN_MODEL_DIR` to measure the
//! semantic layer too.

mod common;
#[path = "common/learnings.rs"]
mod learnings;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use cairn::config::team::{Credentials, Identity, Secret, TeamConfig, TeamSetup};
use cairn::memory::team::Link;
use cairn::memory::team::outbox::{Entry, Row};
use cairn::memory::{ExportRecord, Memories, Query, SemanticSettings};
use cairn::storage::remote::TeamDatabase;
use common::{arg, percentile};

const QUERIES: &[&str] = &[
    "select_related N+1 queries",
    "transaction payments idempotency",
    "src/auth/views.py",
    "flaky parallel tests",
    "cache.get_many page load",
    "permissions before database",
];

/// The server process, killed when dropped (also when the benchmark panics).
struct Running(std::process::Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn start_server(binary: &Path, dir: &Path, port: u16) -> Running {
    let child = std::process::Command::new(binary)
        .args(["start", "--no-banner", "--log", "warn", "--bind"])
        .arg(format!("127.0.0.1:{port}"))
        .args(["--user", "root", "--pass", "bench-root"])
        .arg(format!("surrealkv://{}", dir.display()))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("the surreal binary starts");
    let started = Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "server did not start"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(300));
    Running(child)
}

async fn searches(m: &Memories, keyword_only: bool, rounds: usize) -> (f64, f64) {
    let mut times = Vec::new();
    for round in 0..rounds {
        for q in QUERIES {
            let started = Instant::now();
            let found = m
                .search(&Query {
                    text: q.to_string(),
                    limit: 10,
                    keyword_only,
                    ..Query::default()
                })
                .await
                .unwrap();
            if round > 0 {
                times.push(started.elapsed().as_secs_f64() * 1000.0);
            }
            assert!(!found.is_empty(), "no results for {q}");
        }
    }
    (percentile(&mut times, 0.5), percentile(&mut times, 0.95))
}

/// The semantic layer's settings: the model from `CAIRN_MODEL_DIR` or the default location.
fn semantic() -> SemanticSettings {
    SemanticSettings::resolve(std::env::var_os("CAIRN_MODEL_DIR").map(PathBuf::from), true)
}

fn memories(root: &Path, data: &Path, setup: &TeamSetup) -> Arc<Memories> {
    Memories::for_setup(root, data, semantic(), Some(Duration::from_secs(1)), setup)
}

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    let count: usize = arg(&args, "--count").map_or(10_000, |v| v.parse().unwrap());
    let queued: usize = arg(&args, "--queued").map_or(1_000, |v| v.parse().unwrap());
    let binary = arg(&args, "--surreal")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            let exe = std::env::current_exe().unwrap();
            exe.with_file_name("surreal")
        });
    let work = tempfile::tempdir().unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let server = start_server(&binary, &work.path().join("server"), port);
    let url = format!("ws://127.0.0.1:{port}");
    let identity = Identity::new("example.com/bench/app", None).unwrap();
    let admin = cairn::storage::remote::Admin::connect(&url, "root", "bench-root")
        .await
        .unwrap();
    admin
        .init(&identity.namespace, &identity.database)
        .await
        .unwrap();
    let password = cairn::config::team::new_password().unwrap();
    let member = admin.hash(password.expose()).await.unwrap();
    let database = TeamDatabase::new(&identity.namespace, &identity.database);
    admin.put_member(&database, "bench", &member).await.unwrap();
    let config = Arc::new(TeamConfig {
        url: url.clone(),
        identity,
        credentials: Credentials {
            developer: "bench".to_string(),
            password: Secret::new(password.expose()),
        },
    });
    let setup = TeamSetup::On(config.clone());
    let root = work.path().join("repo");
    std::fs::create_dir_all(&root).unwrap();
    let semantic = semantic().model_dir.is_some();
    println!("team server on loopback (surrealkv), {count} memories, semantic layer: {semantic}");

    // One working copy seeds the server (an import: entries of 500 rows).
    let seeding = work.path().join("seed");
    let m = memories(&root, &seeding, &setup);
    let mut rng = fastrand::Rng::with_seed(7);
    let records: Vec<ExportRecord> = (0..count).map(|i| learnings::record(&mut rng, i)).collect();
    let started = Instant::now();
    let report = m.import(records).await.unwrap();
    assert_eq!(report.imported.len(), count);
    println!(
        "seed: {count} memories imported to the server in {:.2}s",
        started.elapsed().as_secs_f64()
    );
    if semantic {
        let started = Instant::now();
        let embedded = m.embed_pending().await.unwrap();
        println!(
            "seed: {embedded} vectors computed and shared in {:.1}s",
            started.elapsed().as_secs_f64()
        );
    }
    drop(m);

    // A teammate's new working copy: the first answer pulls everything.
    let teammate = work.path().join("teammate");
    let m = memories(&root, &teammate, &setup);
    let started = Instant::now();
    let (p50, _) = {
        let found = m
            .search(&Query {
                text: QUERIES[0].to_string(),
                limit: 10,
                keyword_only: true,
                ..Query::default()
            })
            .await
            .unwrap();
        assert!(!found.is_empty());
        (started.elapsed().as_secs_f64(), 0.0)
    };
    println!("new working copy: first answer (pull of {count}) {p50:.2}s");
    let (p50, p95) = searches(&m, true, 20).await;
    println!(
        "search, keyword: p50 {p50:.2} ms, p95 {p95:.2} ms (each asks the server for changes)"
    );
    if semantic {
        let (p50, p95) = searches(&m, false, 20).await;
        println!("search, keyword + semantic: p50 {p50:.2} ms, p95 {p95:.2} ms");
    }
    m.close().await;
    drop(m);

    // The same working copy restarted: the local copy answers, the server sends nothing new.
    let m = memories(&root, &teammate, &setup);
    let started = Instant::now();
    m.search(&Query {
        text: QUERIES[1].to_string(),
        limit: 10,
        keyword_only: true,
        ..Query::default()
    })
    .await
    .unwrap();
    println!(
        "restarted working copy: first answer (local copy of {count}) {:.2}s",
        started.elapsed().as_secs_f64()
    );
    m.close().await;
    drop(m);

    // Writes queued while the server was away, replayed when it is back (the working copy
    // is up to date before, so the time is the replay and the pull of what it wrote).
    let away = work.path().join("away");
    let m = memories(&root, &away, &setup);
    m.team_sync().await.unwrap();
    let link = Link::new(config.clone(), &away);
    let entries: Vec<Entry> = (0..queued)
        .map(|i| {
            let record = learnings::record(&mut rng, count + 1_000_000 + i);
            Entry::new(
                vec![Row {
                    memory: record.memory,
                    vector: None,
                    base: None,
                }],
                Vec::new(),
                None,
            )
        })
        .collect();
    let started = Instant::now();
    for entry in &entries {
        link.outbox.append(std::slice::from_ref(entry)).unwrap();
    }
    println!(
        "outbox: {queued} writes queued (each synced to disk) in {:.2}s",
        started.elapsed().as_secs_f64()
    );
    let started = Instant::now();
    let status = m.team_sync().await.unwrap().unwrap();
    let replay = started.elapsed().as_secs_f64();
    assert_eq!(status.queued, 0);
    let all = m.all().await.unwrap();
    assert_eq!(all.len(), count + queued);
    println!(
        "replay: {queued} queued writes sent (batches of {}) and pulled back in {replay:.2}s",
        cairn::memory::team::REPLAY_BATCH
    );
    m.close().await;
    drop(server);
}
