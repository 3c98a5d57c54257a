//! A soak and fault run of team mode, shared by the `team_soak` benchmark and the test suite.
//! Members — each a `cairn serve` process driven by rmcp's client, with its own clone, data
//! directory and config home — write, supersede, share and forget memories and record
//! reviews against a real SurrealDB server on loopback while the server is killed and
//! restarted, one member is cut off for the first half (its writes queue in its outbox), pairs
//! of members supersede one memory at once, and two members' clocks run minutes off
//! (libfaketime). Then every member syncs, and what each holds, what the server holds and
//! what each member's own query can read are checked against every accepted write.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::RunningService;
use rmcp::transport::TokioChildProcess;
use serde_json::{Value, json};
use surrealdb::Surreal;
use surrealdb::engine::any::Any;

const ROOT_PASSWORD: &str = "soak-root-password";
const NAMES: [&str; 16] = [
    "alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi", "ivan", "judy", "ken",
    "lena", "mona", "nils", "olga", "pete",
];
/// Where Debian's `faketime` package puts the library.
pub const LIBFAKETIME: &str = "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1";
/// Members whose clock runs off, and by how much (libfaketime's `FAKETIME`, seconds).
const SKEWS: [(usize, i64); 2] = [(2, -240), (5, 180)];
/// The namespace and database every member's origin remote names.
const NAMESPACE: &str = "acme";
const DATABASE: &str = "github_com_acme_app";
const PRIVATE_KINDS: [&str; 2] = ["developer_pattern", "developer_strength"];
/// How long the final sync may take before the run reports what did not converge.
const CONVERGE_DEADLINE: Duration = Duration::from_secs(180);
const WORDS: &[&str] = &[
    "billing",
    "invoice",
    "refund",
    "ledger",
    "cursor",
    "migration",
    "session",
    "token",
    "cache",
    "queue",
    "retry",
    "webhook",
    "upload",
    "thumbnail",
    "search",
    "index",
    "shard",
    "replica",
    "tenant",
    "quota",
    "audit",
    "report",
    "export",
    "import",
    "schema",
    "column",
    "trigger",
    "worker",
    "scheduler",
    "cron",
    "timeout",
    "deadline",
    "backoff",
    "jitter",
    "socket",
    "stream",
    "buffer",
    "parser",
    "lexer",
    "template",
    "render",
    "layout",
    "theme",
    "locale",
    "currency",
    "rounding",
    "decimal",
    "checksum",
    "signature",
    "digest",
    "payload",
    "envelope",
    "header",
    "cookie",
    "password",
    "permission",
    "role",
    "group",
    "membership",
    "profile",
    "avatar",
    "notification",
    "email",
    "digest",
    "summary",
    "metric",
    "counter",
    "gauge",
    "histogram",
    "sampling",
    "tracing",
    "logging",
    "rotation",
    "archive",
    "snapshot",
    "restore",
    "backup",
    "vacuum",
    "lock",
    "mutex",
    "semaphore",
    "channel",
    "actor",
    "mailbox",
    "pipeline",
    "stage",
    "fixture",
    "factory",
    "mock",
    "harness",
    "golden",
    "snapshot",
    "diff",
    "patch",
    "hunk",
];

/// What to run: the binaries, how many members, for how long, how many writes the cut-off
/// member queues.
pub struct Plan {
    pub cairn: PathBuf,
    pub surreal: PathBuf,
    pub members: usize,
    pub duration: Duration,
    pub offline_writes: usize,
    pub seed: u64,
}

/// What a run measured and found. Every list of findings is empty in a sound run.
#[derive(Debug, Default)]
pub struct Report {
    pub members: usize,
    pub seconds: f64,
    /// Writes the members' cairn accepted (adds, supersessions, forgets, shares, reviews).
    pub writes: usize,
    pub writes_per_second: f64,
    /// How long each write over MCP took to answer (ms), all members.
    pub write_ms: Vec<f64>,
    /// Writes accepted while the server was down (queued by the members that were online).
    pub outage_writes: usize,
    /// From the server's restart until every write accepted during the outage was on it.
    pub outage_converge_seconds: f64,
    /// Writes the cut-off member queued before it could reach the server.
    pub offline_queued: usize,
    /// From the cut-off member's network coming back until all its queued writes were on the
    /// server.
    pub offline_replay_seconds: f64,
    /// From the end of the writes until every member held the same set (a `cairn team sync`
    /// per member, repeated).
    pub final_converge_seconds: f64,
    /// Memories every member holds at the end (shared and project ones).
    pub shared_memories: usize,
    /// Accepted writes missing at the end (from a member's copy or the server).
    pub lost: Vec<String>,
    /// Accepted writes present more than once on the server.
    pub duplicated: Vec<String>,
    /// Members whose copy differs from what was accepted.
    pub diverged: Vec<String>,
    /// Private memories another member could read (its cairn or its own query).
    pub leaked: Vec<String>,
    /// Writes the members' cairn refused or answered unexpectedly.
    pub anomalies: Vec<String>,
    /// Writes answered `the team server is busy` (write conflicts on the sequence past
    /// cairn's tries; such a write is queued instead).
    pub busy: Vec<String>,
    /// The pairs of members superseding one memory at once, and how each ended.
    pub supersessions: Vec<String>,
    /// Pairs whose end state is not the documented one.
    pub supersession_faults: Vec<String>,
    /// The clock offsets seen in the skewed members' writes (member, seconds).
    pub skews: Vec<(String, i64)>,
}

impl Report {
    /// The findings that make a run unsound, as lines.
    pub fn faults(&self) -> Vec<String> {
        let mut faults = Vec::new();
        for (name, list) in [
            ("lost", &self.lost),
            ("duplicated", &self.duplicated),
            ("diverged", &self.diverged),
            ("leaked", &self.leaked),
            ("anomaly", &self.anomalies),
            ("refused as busy", &self.busy),
            ("supersession", &self.supersession_faults),
        ] {
            faults.extend(list.iter().map(|f| format!("{name}: {f}")));
        }
        faults
    }

    /// A human summary.
    pub fn summary(&self) -> String {
        let mut lines = vec![
            format!(
                "{} members, {:.0}s: {} accepted writes, {:.1} writes/s",
                self.members, self.seconds, self.writes, self.writes_per_second
            ),
            format!(
                "server killed and restarted: {} writes queued meanwhile, all on the server {:.2}s after it returned",
                self.outage_writes, self.outage_converge_seconds
            ),
            format!(
                "member offline for the first half: {} writes queued, all on the server {:.2}s after it came back",
                self.offline_queued, self.offline_replay_seconds
            ),
            format!(
                "final sync: every member holds the same {} memories {:.2}s after the writes stopped",
                self.shared_memories, self.final_converge_seconds
            ),
            format!(
                "clock offsets seen: {}",
                self.skews
                    .iter()
                    .map(|(who, s)| format!("{who} {s:+}s"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ];
        lines.extend(self.supersessions.iter().map(|s| format!("at once: {s}")));
        lines.push(format!(
            "refused as busy {}; lost {}, duplicated {}, diverged {}, leaked {}, anomalies {}",
            self.busy.len(),
            self.lost.len(),
            self.duplicated.len(),
            self.diverged.len(),
            self.leaked.len(),
            self.anomalies.len()
        ));
        lines.extend(self.faults());
        lines.join("\n")
    }

    /// One JSON line of the figures.
    pub fn json(&self) -> Value {
        json!({
            "bench": "team_soak",
            "members": self.members,
            "seconds": round(self.seconds),
            "writes": self.writes,
            "writes_per_second": round(self.writes_per_second),
            "outage_writes": self.outage_writes,
            "outage_converge_seconds": round(self.outage_converge_seconds),
            "offline_queued": self.offline_queued,
            "offline_replay_seconds": round(self.offline_replay_seconds),
            "final_converge_seconds": round(self.final_converge_seconds),
            "shared_memories": self.shared_memories,
            "lost": self.lost.len(),
            "duplicated": self.duplicated.len(),
            "diverged": self.diverged.len(),
            "leaked": self.leaked.len(),
            "anomalies": self.anomalies.len(),
            "busy": self.busy.len(),
        })
    }
}

fn round(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

/// A SurrealDB server on loopback, storing in a directory so it can be killed and restarted.
struct Server {
    binary: PathBuf,
    port: u16,
    dir: PathBuf,
    child: Option<Child>,
}

impl Server {
    fn start(binary: &Path, dir: &Path) -> Server {
        let mut server = Server {
            binary: binary.to_path_buf(),
            port: free_port(),
            dir: dir.to_path_buf(),
            child: None,
        };
        server.restart();
        server
    }

    fn url(&self) -> String {
        format!("ws://127.0.0.1:{}", self.port)
    }

    /// Starts the server (again) on the same port and data, and waits until it answers.
    fn restart(&mut self) {
        let child = Command::new(&self.binary)
            .args(["start", "--no-banner", "--log", "warn", "--bind"])
            .arg(format!("127.0.0.1:{}", self.port))
            .args(["--user", "root", "--pass", ROOT_PASSWORD])
            .arg(format!("surrealkv://{}", self.dir.display()))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("the surreal binary starts");
        self.child = Some(child);
        let started = Instant::now();
        while !healthy(self.port) {
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "the server did not start"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Kills the server without warning.
    fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.kill();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free loopback port")
        .port()
}

/// Whether the server's HTTP endpoint answers `/health`.
fn healthy(port: u16) -> bool {
    use std::io::{Read, Write};
    let Ok(mut stream) = std::net::TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
    let request =
        format!("GET /health HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n");
    if stream.write_all(request.as_bytes()).is_err() {
        return false;
    }
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    answer.starts_with("HTTP/1.1 200")
}

/// The cut-off member's network: nothing listens on its port until [`open_link`] forwards it
/// to the server, so its cairn finds the server unreachable (connection refused) until then.
async fn open_link(port: u16, server: u16) -> tokio::task::JoinHandle<()> {
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port))
        .await
        .expect("the cut-off member's port is free");
    tokio::spawn(async move {
        while let Ok((mut inbound, _)) = listener.accept().await {
            tokio::spawn(async move {
                if let Ok(mut outbound) =
                    tokio::net::TcpStream::connect(("127.0.0.1", server)).await
                {
                    let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                }
            });
        }
    })
}

type Client = RunningService<rmcp::RoleClient, ()>;

/// One developer: a clone, a data directory, a config home with their credentials file, the
/// server address their cairn uses, their clock offset, and their `cairn serve`.
struct Member {
    index: usize,
    name: &'static str,
    cairn: PathBuf,
    repo: PathBuf,
    data: PathBuf,
    home: PathBuf,
    url: String,
    skew: Option<i64>,
    client: tokio::sync::OnceCell<Client>,
    /// How long each tool call took to answer (ms).
    answered_ms: Mutex<Vec<f64>>,
}

impl Member {
    /// `cairn` as this member, in their clone, with their data, credentials and clock.
    fn command(&self) -> Command {
        let mut command = Command::new(&self.cairn);
        command
            .arg("--repo")
            .arg(&self.repo)
            .arg("--data-dir")
            .arg(&self.data)
            .arg("--db")
            .arg(&self.url)
            .env("XDG_CONFIG_HOME", &self.home)
            .env("CAIRN_ORGS_DIR", self.data.join("orgs"))
            // Keyword search only: meaning is not what this run measures.
            .env("CAIRN_MODEL_DIR", self.data.join("no-model"))
            .env("USER", self.name)
            .env_remove("CAIRN_TEAM_DEVELOPER")
            .env_remove("CAIRN_TEAM_PASSWORD")
            .env_remove("CAIRN_DB")
            .env_remove("CAIRN_REPO")
            .env_remove("CAIRN_DATA_DIR");
        if let Some(seconds) = self.skew {
            command
                .env("LD_PRELOAD", LIBFAKETIME)
                .env("FAKETIME", format!("{seconds:+}s"))
                .env("FAKETIME_DONT_FAKE_MONOTONIC", "1");
        }
        command
    }

    fn cairn(&self, args: &[&str]) -> Output {
        self.command()
            .args(args)
            .output()
            .expect("the cairn binary runs")
    }

    fn credentials(&self) -> PathBuf {
        self.home.join("cairn").join("team.toml")
    }

    async fn connect(&self) {
        let mut command = tokio::process::Command::from(self.command());
        command.arg("serve");
        std::fs::create_dir_all(&self.data).expect("a data directory");
        let log = std::fs::File::create(self.data.join("serve.log")).expect("a log file");
        let (transport, _) = TokioChildProcess::builder(command)
            .stderr(log)
            .spawn()
            .expect("cairn serve starts");
        let client = ().serve(transport).await.expect("MCP handshake");
        let _ = self.client.set(client);
    }

    async fn call(&self, tool: &'static str, args: Value) -> Result<Value, String> {
        let Value::Object(arguments) = args else {
            unreachable!("tool arguments are an object")
        };
        let client = self.client.get().expect("connected");
        let asked = Instant::now();
        let result: CallToolResult = client
            .call_tool(CallToolRequestParams::new(tool).with_arguments(arguments))
            .await
            .map_err(|e| format!("{tool}: no answer: {e}"))?;
        self.answered_ms
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(asked.elapsed().as_secs_f64() * 1000.0);
        if result.is_error.unwrap_or(false) {
            let text: Vec<String> = result
                .content
                .iter()
                .filter_map(|c| c.as_text().map(|t| t.text.clone()))
                .collect();
            return Err(format!("{tool}: {}", text.join(" ")));
        }
        Ok(result.structured_content.unwrap_or(Value::Null))
    }

    /// Ends this member's `cairn serve`.
    async fn disconnect(&self) {
        if let Some(client) = self.client.get() {
            client.cancellation_token().cancel();
        }
    }
}

/// An accepted memory write, and what became of the memory since.
#[derive(Debug, Clone)]
struct Written {
    owner: usize,
    content: String,
    private: bool,
    shared: bool,
    forgotten: bool,
    superseded_by: Option<String>,
    /// The memory this one superseded.
    supersedes: Option<String>,
    /// A memory pairs of members supersede at once, or one of its successors: no one else
    /// touches it.
    target: bool,
}

/// Every accepted write, and when, as the members' cairn answered them.
#[derive(Default)]
struct Ledger {
    memories: BTreeMap<String, Written>,
    /// New memories (adds and supersessions): who wrote them and when.
    new: Vec<(usize, Instant, String)>,
    reviews: Vec<String>,
    /// Every accepted write: who and when.
    accepted: Vec<(usize, Instant)>,
    anomalies: Vec<String>,
    busy: Vec<String>,
    skews: BTreeMap<usize, Vec<i64>>,
}

impl Ledger {
    fn accept(&mut self, member: usize) {
        self.accepted.push((member, Instant::now()));
    }
}

type Shared = Arc<Mutex<Ledger>>;

fn ledger(shared: &Shared) -> std::sync::MutexGuard<'_, Ledger> {
    shared
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

/// A learning no other write resembles: a member's tag, a counter and random words.
fn learning(rng: &mut fastrand::Rng, who: &str, n: usize) -> String {
    let words: Vec<&str> = (0..8).map(|_| WORDS[rng.usize(..WORDS.len())]).collect();
    format!(
        "Soak {who} {n} {}: the {} of {} goes through {} before {}, then {} {} {} {}.",
        rng.u64(..),
        words[0],
        words[1],
        words[2],
        words[3],
        words[4],
        words[5],
        words[6],
        words[7]
    )
}

/// Records an accepted memory write from a `remember` answer.
fn record_remember(
    shared: &Shared,
    member: &Member,
    answer: &Value,
    content: &str,
    private: bool,
    expected: &str,
) -> Option<String> {
    let id = answer["id"].as_str()?.to_string();
    let event = answer["event"].as_str().unwrap_or_default();
    let mut ledger = ledger(shared);
    if event != expected {
        ledger.anomalies.push(format!(
            "{} expected {expected}, cairn answered {event} for {id}: {answer}",
            member.name
        ));
    }
    if let (Some(_), Some(at)) = (member.skew, answer["memory"]["created_at"].as_i64()) {
        let seen = (at - now_ms()) / 1000;
        ledger.skews.entry(member.index).or_default().push(seen);
    }
    ledger.accept(member.index);
    if event == "ADD" || event == "SUPERSEDE" {
        ledger.new.push((member.index, Instant::now(), id.clone()));
    }
    let content = answer["memory"]["content"]
        .as_str()
        .unwrap_or(content)
        .to_string();
    let entry = ledger.memories.entry(id.clone()).or_insert(Written {
        owner: member.index,
        content: content.clone(),
        private,
        shared: false,
        forgotten: false,
        superseded_by: None,
        supersedes: None,
        target: false,
    });
    entry.content = content;
    if let Some(old) = answer["superseded"].as_str() {
        entry.supersedes = Some(old.to_string());
        if let Some(old) = ledger.memories.get_mut(old) {
            old.superseded_by = Some(id.clone());
        }
    }
    Some(id)
}

/// A write cairn did not accept: refused as busy, or an anomaly.
fn anomaly(shared: &Shared, what: String) {
    let mut ledger = ledger(shared);
    if what.contains("the team server is busy") {
        ledger.busy.push(what);
    } else {
        ledger.anomalies.push(what);
    }
}

/// A member's own live memory of the wanted privacy, for a supersession, a forget or a share.
fn pick_own(
    shared: &Shared,
    rng: &mut fastrand::Rng,
    member: usize,
    private: bool,
    unshared: bool,
) -> Option<String> {
    let ledger = ledger(shared);
    let candidates: Vec<&String> = ledger
        .memories
        .iter()
        .filter(|(_, w)| {
            w.owner == member
                && !w.target
                && !w.forgotten
                && w.superseded_by.is_none()
                && w.private == private
                && !(unshared && w.shared)
        })
        .map(|(id, _)| id)
        .collect();
    (!candidates.is_empty()).then(|| candidates[rng.usize(..candidates.len())].clone())
}

/// A `remember` by `member`, recorded when accepted (`expected` is the event it should get).
async fn remember(member: &Member, shared: &Shared, args: Value, private: bool, expected: &str) {
    let content = args["content"].as_str().unwrap_or_default().to_string();
    match member.call("remember", args).await {
        Ok(answer) => {
            record_remember(shared, member, &answer, &content, private, expected);
        }
        Err(e) => anomaly(shared, format!("{}: {e}", member.name)),
    }
}

/// One random write by `member`: an add (project or private), a supersession, a forget, a
/// share or a review.
async fn one_write(member: &Member, shared: &Shared, rng: &mut fastrand::Rng, n: usize) {
    let me = member.name;
    let roll = rng.u32(..100);
    if roll < 40 {
        let kind = if rng.bool() {
            "decision"
        } else {
            "project_pattern"
        };
        let args = json!({"type": kind, "content": learning(rng, me, n), "scope": "repository"});
        remember(member, shared, args, false, "ADD").await;
    } else if roll < 55 {
        let args = json!({"type": "developer_pattern", "developer": me, "content": learning(rng, me, n), "scope": "repository"});
        remember(member, shared, args, true, "ADD").await;
    } else if roll < 67 {
        let Some(old) = pick_own(shared, rng, member.index, false, false) else {
            return;
        };
        let args = json!({"type": "decision", "content": learning(rng, me, n), "scope": "repository", "supersedes": old});
        remember(member, shared, args, false, "SUPERSEDE").await;
    } else if roll < 77 {
        let Some(id) = pick_own(shared, rng, member.index, false, false) else {
            return;
        };
        match member.call("forget", json!({"id": id})).await {
            Ok(_) => {
                let mut ledger = ledger(shared);
                ledger.accept(member.index);
                let Some(gone) = ledger.memories.get_mut(&id) else {
                    return;
                };
                gone.forgotten = true;
                // The memory it superseded is valid again.
                let previous = gone.supersedes.clone();
                if let Some(previous) = previous.and_then(|p| ledger.memories.get_mut(&p))
                    && previous.superseded_by.as_deref() == Some(id.as_str())
                {
                    previous.superseded_by = None;
                }
            }
            Err(e) => anomaly(shared, format!("{me} forgetting {id}: {e}")),
        }
    } else if roll < 85 {
        let Some(id) = pick_own(shared, rng, member.index, true, true) else {
            return;
        };
        let output = member.cairn(&["memory", "share", &id]);
        if output.status.success() {
            let mut ledger = ledger(shared);
            ledger.accept(member.index);
            if let Some(w) = ledger.memories.get_mut(&id) {
                w.shared = true;
            }
        } else {
            anomaly(
                shared,
                format!(
                    "{me} sharing {id}: {}",
                    String::from_utf8_lossy(&output.stderr).trim()
                ),
            );
        }
    } else {
        let id = format!("SOAK-{me}-{n}");
        let review = json!({
            "review_id": id,
            "author": NAMES[(member.index + 1) % NAMES.len()],
            "reviewer": me,
            "verdict": "comment",
            "findings": [{"category": "naming", "file": "src/app.py",
                          "message": learning(rng, me, n), "disposition": "implemented"}],
        });
        match member.call("record_review", review).await {
            Ok(answer) => {
                // Its `review_outcome` memory is a memory write like any other.
                let outcome = &answer["outcome"];
                if outcome.is_object() {
                    record_remember(shared, member, outcome, "", false, "ADD");
                } else {
                    ledger(shared).accept(member.index);
                }
                ledger(shared).reviews.push(id);
            }
            Err(e) => anomaly(shared, format!("{me} recording {id}: {e}")),
        }
    }
}

/// A member writing until `deadline`; the cut-off member first queues its burst of accepted
/// writes as fast as it can, then says so.
async fn write_until(
    member: Arc<Member>,
    shared: Shared,
    seed: u64,
    deadline: Instant,
    burst: Option<(usize, Option<tokio::sync::oneshot::Sender<()>>)>,
) {
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut n = 0;
    if let Some((writes, done)) = burst {
        let accepted = |shared: &Shared| {
            ledger(shared)
                .accepted
                .iter()
                .filter(|(by, _)| *by == member.index)
                .count()
        };
        // Some tries find nothing to supersede, forget or share yet.
        while accepted(&shared) < writes && n < 3 * writes {
            one_write(&member, &shared, &mut rng, n).await;
            n += 1;
        }
        if let Some(done) = done {
            let _ = done.send(());
        }
    }
    while Instant::now() < deadline {
        one_write(&member, &shared, &mut rng, n).await;
        n += 1;
        // A pause as a person's assistant would take, short enough to keep the server busy.
        tokio::time::sleep(Duration::from_millis(rng.u64(20..120))).await;
    }
}

/// A memory two members superseded at once, and how each member's cairn answered (the
/// successor's id, or why it refused).
type Pair = (String, Vec<(usize, Result<String, String>)>);

/// Two members supersede `target` at once; returns how each answered.
async fn supersede_at_once(
    shared: &Shared,
    a: &Member,
    b: &Member,
    target: &str,
    round: usize,
) -> Vec<(usize, Result<String, String>)> {
    let mut rng = fastrand::Rng::with_seed(round as u64);
    let texts = [
        learning(&mut rng, a.name, 90_000 + round),
        learning(&mut rng, b.name, 90_000 + round),
    ];
    let args = |text: &str| json!({"type": "decision", "content": text, "scope": "repository", "supersedes": target});
    let (first, second) = tokio::join!(
        a.call("remember", args(&texts[0])),
        b.call("remember", args(&texts[1]))
    );
    let mut outcomes = Vec::new();
    for (member, answer, text) in [(a, first, &texts[0]), (b, second, &texts[1])] {
        let outcome = match answer {
            Ok(answer) => record_remember(shared, member, &answer, text, false, "SUPERSEDE")
                .ok_or_else(|| format!("no id in {answer}")),
            Err(e) => Err(e),
        };
        if let Ok(id) = &outcome
            && let Some(successor) = ledger(shared).memories.get_mut(id)
        {
            successor.target = true;
        }
        outcomes.push((member.index, outcome));
    }
    outcomes
}

/// The repository every member clones: one file, one commit, the team's origin remote.
fn repository(dir: &Path) {
    std::fs::create_dir_all(dir).expect("a repository directory");
    std::fs::write(
        dir.join("app.py"),
        "def total(items):\n    return sum(items)\n",
    )
    .expect("a file");
    for args in [
        &["init", "-q", "-b", "main"][..],
        &["config", "user.email", "soak@example.com"],
        &["config", "user.name", "Soak"],
        &["add", "."],
        &["commit", "-q", "-m", "app"],
        &["remote", "add", "origin", "https://github.com/acme/app"],
    ] {
        let output = Command::new("git")
            .args(args)
            .current_dir(dir)
            .output()
            .expect("git runs");
        assert!(output.status.success(), "git {args:?}: {output:?}");
    }
}

fn admin(member: &Member, args: &[&str]) -> String {
    let output = member
        .command()
        .env("CAIRN_TEAM_ADMIN_USER", "root")
        .env("CAIRN_TEAM_ADMIN_PASSWORD", ROOT_PASSWORD)
        .args(args)
        .output()
        .expect("cairn runs");
    assert!(output.status.success(), "cairn {args:?}: {output:?}");
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// The members, their team set up on `server`: the last one reaches it through `link_port`.
fn members(plan: &Plan, work: &Path, server: &Server, link_port: u16) -> Vec<Arc<Member>> {
    assert!(
        (2..=NAMES.len()).contains(&plan.members),
        "2 to {} members",
        NAMES.len()
    );
    let members: Vec<Member> = (0..plan.members)
        .map(|index| {
            let name = NAMES[index];
            let repo = work.join("clones").join(name);
            repository(&repo);
            let offline = index == plan.members - 1;
            Member {
                index,
                name,
                cairn: plan.cairn.clone(),
                repo,
                data: work.join("data").join(name),
                home: work.join("homes").join(name),
                url: if offline {
                    format!("ws://127.0.0.1:{link_port}")
                } else {
                    server.url()
                },
                skew: SKEWS.iter().find(|(i, _)| *i == index).map(|(_, s)| *s),
                client: tokio::sync::OnceCell::new(),
                answered_ms: Mutex::default(),
            }
        })
        .collect();
    admin(&members[0], &["team", "init"]);
    for member in &members {
        let file = member.credentials();
        std::fs::create_dir_all(file.parent().expect("a config directory")).expect("a home");
        admin(
            &members[0],
            &[
                "team",
                "add-member",
                member.name,
                "-o",
                file.to_str().expect("utf-8"),
            ],
        );
        // The cut-off member's credentials name the address it reaches the server by.
        let text = std::fs::read_to_string(&file).expect("credentials");
        std::fs::write(&file, text.replace(&server.url(), &member.url)).expect("credentials");
    }
    members.into_iter().map(Arc::new).collect()
}

/// A root session on the server.
async fn root(url: &str) -> surrealdb::Result<Surreal<Any>> {
    let db = surrealdb::engine::any::connect(url).await?;
    db.signin(surrealdb::opt::auth::Root {
        username: "root".to_string(),
        password: ROOT_PASSWORD.to_string(),
    })
    .await?;
    db.use_ns(NAMESPACE).use_db(DATABASE).await?;
    Ok(db)
}

/// The memory ids on the server at `url` now (none while it is away).
async fn ids_on_server(url: &str) -> BTreeSet<String> {
    let Ok(db) = root(url).await else {
        return BTreeSet::new();
    };
    let Ok(mut response) = db.query("SELECT VALUE record::id(id) FROM memory").await else {
        return BTreeSet::new();
    };
    let ids: Vec<String> = response.take(0).unwrap_or_default();
    ids.into_iter().collect()
}

/// Waits until every id in `ids` is on the server; the seconds it took from `since` (none
/// before the deadline).
async fn until_on_server(url: String, ids: BTreeSet<String>, since: Instant) -> Option<f64> {
    let deadline = since + CONVERGE_DEADLINE;
    loop {
        if ids.is_subset(&ids_on_server(&url).await) {
            return Some(since.elapsed().as_secs_f64());
        }
        if Instant::now() > deadline {
            return None;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn sleep_until(at: Instant) {
    tokio::time::sleep_until(tokio::time::Instant::from_std(at)).await;
}

/// The new memories `who` (or everyone but `who`) wrote between two instants.
fn new_between(
    shared: &Shared,
    who: usize,
    mine: bool,
    from: Instant,
    to: Instant,
) -> BTreeSet<String> {
    ledger(shared)
        .new
        .iter()
        .filter(|(by, when, _)| (*by == who) == mine && *when >= from && *when < to)
        .map(|(_, _, id)| id.clone())
        .collect()
}

/// The memories the pairs will supersede at once: written before the run by the first
/// member, then touched by no one else.
async fn targets(member: &Member, shared: &Shared, seed: u64) -> Vec<String> {
    let mut targets = Vec::new();
    for round in 0..3 {
        let content = learning(&mut fastrand::Rng::with_seed(seed + round), "target", 0);
        let answer = member
            .call(
                "remember",
                json!({"type": "decision", "content": content, "scope": "repository"}),
            )
            .await
            .expect("a target memory");
        let id =
            record_remember(shared, member, &answer, &content, false, "ADD").expect("a target id");
        ledger(shared)
            .memories
            .get_mut(&id)
            .expect("recorded")
            .target = true;
        targets.push(id);
    }
    targets
}

/// Runs the plan; the report holds the figures and every fault found.
pub async fn run(plan: &Plan) -> Report {
    let work = tempfile::tempdir().expect("a temporary directory");
    let mut server = Server::start(&plan.surreal, &work.path().join("server"));
    let link_port = free_port();
    let members = members(plan, work.path(), &server, link_port);
    let offline = members.len() - 1;
    let shared: Shared = Arc::default();
    members[0].connect().await;
    let targets = targets(&members[0], &shared, plan.seed).await;
    for member in &members[1..] {
        member.connect().await;
    }

    let started = Instant::now();
    let at = |fraction: f64| started + plan.duration.mul_f64(fraction);
    let deadline = at(1.0);
    let (queued_all, burst_done) = tokio::sync::oneshot::channel();
    let mut queued_all = Some(queued_all);
    let writers: Vec<_> = members
        .iter()
        .map(|member| {
            let burst = (member.index == offline).then(|| (plan.offline_writes, queued_all.take()));
            tokio::spawn(write_until(
                member.clone(),
                shared.clone(),
                plan.seed * 1000 + member.index as u64,
                deadline,
                burst,
            ))
        })
        .collect();

    let mut pairs = Vec::new();
    sleep_until(at(0.15)).await;
    pairs.push((
        targets[0].clone(),
        supersede_at_once(&shared, &members[0], &members[1], &targets[0], 0).await,
    ));
    sleep_until(at(0.25)).await;
    server.kill();
    let killed = Instant::now();
    sleep_until(at(0.30)).await;
    // Both queue their supersession while the server is down.
    pairs.push((
        targets[1].clone(),
        supersede_at_once(&shared, &members[1], &members[3], &targets[1], 1).await,
    ));
    sleep_until(at(0.40)).await;
    server.restart();
    let restarted = Instant::now();
    let outage = new_between(&shared, offline, false, killed, restarted);
    let outage_converged = tokio::spawn(until_on_server(server.url(), outage.clone(), restarted));

    // The cut-off member comes back at half time, once it has queued all its writes.
    sleep_until(at(0.50)).await;
    let _ = burst_done.await;
    let link = open_link(link_port, server.port).await;
    let reconnected = Instant::now();
    let queued = new_between(&shared, offline, true, started, reconnected);
    let offline_queued = ledger(&shared)
        .accepted
        .iter()
        .filter(|(by, when)| *by == offline && *when < reconnected)
        .count();
    let offline_replayed = tokio::spawn(until_on_server(server.url(), queued.clone(), reconnected));

    sleep_until(at(0.65)).await;
    pairs.push((
        targets[2].clone(),
        supersede_at_once(&shared, &members[3], &members[4], &targets[2], 2).await,
    ));
    for writer in writers {
        writer.await.expect("a writer finishes");
    }
    let stopped = Instant::now();
    for member in &members {
        member.disconnect().await;
    }

    let expected = ledger(&shared).memories.clone();
    let (holdings, converged) = converge(&members, &expected).await;
    let seconds = |measured: Option<f64>| measured.unwrap_or(f64::NAN);
    let mut report = Report {
        members: members.len(),
        seconds: (stopped - started).as_secs_f64(),
        outage_writes: outage.len(),
        outage_converge_seconds: seconds(outage_converged.await.expect("measured")),
        offline_queued,
        offline_replay_seconds: seconds(offline_replayed.await.expect("measured")),
        final_converge_seconds: seconds(converged.map(|at| (at - stopped).as_secs_f64())),
        ..Report::default()
    };
    check_holdings(&mut report, &members, &expected, &holdings);
    check_server(&mut report, &server, &members, &shared, &expected).await;
    check_pairs(&mut report, &members, &holdings, &pairs);
    {
        let ledger = ledger(&shared);
        report.writes = ledger.accepted.len();
        report.writes_per_second = report.writes as f64 / report.seconds;
        report.anomalies.extend(ledger.anomalies.iter().cloned());
        report.busy = ledger.busy.clone();
        report.skews = ledger
            .skews
            .iter()
            .map(|(i, seen)| (members[*i].name.to_string(), median(seen)))
            .collect();
    }
    for member in &members {
        let answered = member
            .answered_ms
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        report.write_ms.extend(answered.iter());
    }
    for (what, measured) in [
        (
            "the writes made during the outage",
            report.outage_converge_seconds,
        ),
        ("the offline member's writes", report.offline_replay_seconds),
        ("the final sync", report.final_converge_seconds),
    ] {
        if measured.is_nan() {
            report.lost.push(format!(
                "{what} did not converge within {CONVERGE_DEADLINE:?}"
            ));
        }
    }
    link.abort();
    drop(server);
    if std::env::var_os("CAIRN_SOAK_KEEP").is_some() {
        eprintln!("soak: kept {}", work.keep().display());
    }
    report
}

fn median(values: &[i64]) -> i64 {
    let mut sorted = values.to_vec();
    sorted.sort_unstable();
    sorted.get(sorted.len() / 2).copied().unwrap_or(0)
}

/// A memory as a member holds it: what must be the same everywhere.
#[derive(Debug, Clone, PartialEq)]
struct Held {
    content: String,
    kind: String,
    developer: Option<String>,
    superseded_by: Option<String>,
    shared: bool,
    /// The notes of its history, oldest first.
    history: Vec<String>,
}

type Holdings = Vec<BTreeMap<String, Held>>;

/// What `member` exports (every memory it can read).
fn export(member: &Member) -> Result<BTreeMap<String, Held>, String> {
    let output = member.cairn(&["memory", "export"]);
    if !output.status.success() {
        return Err(String::from_utf8_lossy(&output.stderr).into_owned());
    }
    let mut held = BTreeMap::new();
    for line in String::from_utf8_lossy(&output.stdout).lines() {
        let record: Value = serde_json::from_str(line).map_err(|e| e.to_string())?;
        let memory = record.get("memory").unwrap_or(&record);
        let text = |key: &str| memory[key].as_str().map(str::to_string);
        held.insert(
            text("id").unwrap_or_default(),
            Held {
                content: text("content").unwrap_or_default(),
                kind: text("type").unwrap_or_default(),
                developer: text("developer"),
                superseded_by: text("superseded_by"),
                shared: memory["shared"].as_bool().unwrap_or(false),
                history: memory["history"]
                    .as_array()
                    .map(|h| {
                        h.iter()
                            .map(|r| r["note"].as_str().unwrap_or_default().to_string())
                            .collect()
                    })
                    .unwrap_or_default(),
            },
        );
    }
    Ok(held)
}

/// Which memories `member` should hold: every accepted one not forgotten that is not
/// another developer's unshared private memory.
fn visible(expected: &BTreeMap<String, Written>, member: usize) -> BTreeSet<String> {
    expected
        .iter()
        .filter(|(_, w)| !w.forgotten && (!w.private || w.shared || w.owner == member))
        .map(|(id, _)| id.clone())
        .collect()
}

/// `f` for every member at once, each in its own thread; the answers in members' order.
async fn each<T: Send + 'static>(
    members: &[Arc<Member>],
    f: impl Fn(&Member) -> T + Send + Sync + Copy + 'static,
) -> Vec<T> {
    let tasks: Vec<_> = members
        .iter()
        .map(|member| {
            let member = member.clone();
            tokio::task::spawn_blocking(move || f(&member))
        })
        .collect();
    let mut answers = Vec::new();
    for task in tasks {
        answers.push(task.await.expect("a member's command finishes"));
    }
    answers
}

/// `cairn team sync` on every member until nothing is queued and each holds what was
/// accepted; the holdings and when that was reached (none before the deadline).
async fn converge(
    members: &[Arc<Member>],
    expected: &BTreeMap<String, Written>,
) -> (Holdings, Option<Instant>) {
    let deadline = Instant::now() + CONVERGE_DEADLINE;
    loop {
        let synced = each(members, |m| m.cairn(&["team", "sync"]).status.success()).await;
        let holdings: Holdings = each(members, |m| export(m).unwrap_or_default()).await;
        let done = synced.iter().all(|s| *s)
            && members.iter().all(|m| {
                let ids: BTreeSet<String> = holdings[m.index].keys().cloned().collect();
                ids.is_superset(&visible(expected, m.index))
            });
        if done || Instant::now() > deadline {
            return (holdings, done.then(Instant::now));
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Every accepted memory in every member's copy as accepted, the same everywhere, and no
/// other developer's private memory in it.
fn check_holdings(
    report: &mut Report,
    members: &[Arc<Member>],
    expected: &BTreeMap<String, Written>,
    holdings: &Holdings,
) {
    let names: HashMap<&str, usize> = members.iter().map(|m| (m.name, m.index)).collect();
    for member in members {
        let held = &holdings[member.index];
        for id in visible(expected, member.index) {
            let written = &expected[&id];
            match held.get(&id) {
                None => report
                    .lost
                    .push(format!("{id} missing from {}", member.name)),
                Some(h) if h.content != written.content => report.diverged.push(format!(
                    "{id} in {}: {:?}, accepted {:?}",
                    member.name, h.content, written.content
                )),
                Some(h) if !written.target && h.superseded_by != written.superseded_by => {
                    report.diverged.push(format!(
                        "{id} in {} superseded by {:?}, accepted {:?}",
                        member.name, h.superseded_by, written.superseded_by
                    ))
                }
                Some(_) => {}
            }
        }
        for (id, h) in held {
            let private = PRIVATE_KINDS.contains(&h.kind.as_str());
            let owner = h.developer.as_deref().and_then(|d| names.get(d)).copied();
            if private && !h.shared && owner != Some(member.index) {
                report.leaked.push(format!(
                    "{id} ({:?}'s) readable by {}",
                    h.developer, member.name
                ));
            }
            match expected.get(id) {
                Some(w) if w.forgotten => report.diverged.push(format!(
                    "{id} was forgotten, {} still holds it",
                    member.name
                )),
                None => report
                    .diverged
                    .push(format!("{id} in {} was never written", member.name)),
                _ => {}
            }
        }
    }
    // The shared part is the same in every copy.
    let common = |held: &BTreeMap<String, Held>| -> BTreeMap<String, Held> {
        held.iter()
            .filter(|(_, h)| !PRIVATE_KINDS.contains(&h.kind.as_str()) || h.shared)
            .map(|(id, h)| (id.clone(), h.clone()))
            .collect()
    };
    let first = common(&holdings[0]);
    report.shared_memories = first.len();
    for member in &members[1..] {
        let theirs = common(&holdings[member.index]);
        if theirs != first {
            let differ: Vec<&String> = first
                .keys()
                .chain(theirs.keys())
                .filter(|id| first.get(*id) != theirs.get(*id))
                .collect();
            report.diverged.push(format!(
                "{} and {} hold different shared sets: {differ:?}",
                members[0].name, member.name
            ));
        }
    }
}

/// On the server: every accepted text exactly once, every review once, and each member's
/// own query reads no other developer's unshared private memory.
async fn check_server(
    report: &mut Report,
    server: &Server,
    members: &[Arc<Member>],
    shared: &Shared,
    expected: &BTreeMap<String, Written>,
) {
    let db = match root(&server.url()).await {
        Ok(db) => db,
        Err(e) => {
            report.lost.push(format!("the server does not answer: {e}"));
            return;
        }
    };
    let counted: Vec<Value> = db
        .query("SELECT content, count() AS n FROM memory WHERE content != NONE GROUP BY content")
        .await
        .and_then(|mut r| r.take(0))
        .unwrap_or_default();
    let counts: HashMap<String, u64> = counted
        .iter()
        .filter_map(|r| Some((r["content"].as_str()?.to_string(), r["n"].as_u64()?)))
        .collect();
    for (id, written) in expected {
        let n = counts.get(&written.content).copied().unwrap_or(0);
        match (written.forgotten, n) {
            (false, 0) => report.lost.push(format!("{id} is not on the server")),
            (false, 1) | (true, 0) => {}
            (true, _) => report.diverged.push(format!(
                "{id} was forgotten, the server still holds its text"
            )),
            (false, n) => report
                .duplicated
                .push(format!("{id} is on the server {n} times")),
        }
    }
    let reviews: Vec<Value> = db
        .query("SELECT record::id(id) AS id, count() AS n FROM review GROUP BY id")
        .await
        .and_then(|mut r| r.take(0))
        .unwrap_or_default();
    let reviews: HashMap<String, u64> = reviews
        .iter()
        .filter_map(|r| Some((r["id"].as_str()?.to_string(), r["n"].as_u64()?)))
        .collect();
    for id in &ledger(shared).reviews {
        match reviews.get(id) {
            None => report
                .lost
                .push(format!("review {id} is not on the server")),
            Some(1) => {}
            Some(n) => report
                .duplicated
                .push(format!("review {id} is there {n} times")),
        }
    }
    for member in members {
        check_own_query(report, server, member, expected).await;
    }
}

/// What a hand-written client with `member`'s credentials reads of private memories.
async fn check_own_query(
    report: &mut Report,
    server: &Server,
    member: &Member,
    expected: &BTreeMap<String, Written>,
) {
    let text = std::fs::read_to_string(member.credentials()).unwrap_or_default();
    let password = text
        .parse::<toml::Table>()
        .ok()
        .and_then(|t| t.get("password")?.as_str().map(str::to_string))
        .unwrap_or_default();
    let session = async {
        let db = surrealdb::engine::any::connect(server.url()).await?;
        let mut params = surrealdb::types::Object::new();
        params.insert("developer", member.name);
        params.insert("password", password.as_str());
        db.signin(surrealdb::opt::auth::Record {
            namespace: NAMESPACE.to_string(),
            database: DATABASE.to_string(),
            access: "member".to_string(),
            params,
        })
        .await?;
        db.use_ns(NAMESPACE).use_db(DATABASE).await?;
        let mut response = db
            .query("SELECT VALUE record::id(id) FROM memory WHERE kind IN ['developer_pattern', 'developer_strength']")
            .await?;
        response.take::<Vec<String>>(0)
    };
    match session.await {
        Ok(ids) => {
            for id in ids {
                if let Some(w) = expected.get(&id)
                    && w.private
                    && !w.shared
                    && w.owner != member.index
                {
                    report
                        .leaked
                        .push(format!("{id} readable by {}'s own query", member.name));
                }
            }
        }
        Err(e) => report
            .anomalies
            .push(format!("{} cannot query the server: {e}", member.name)),
    }
}

/// Each pair's end state, the documented one: in every copy the target is superseded by an
/// accepted successor — the one whose write reached the server last — and every accepted
/// successor is live. With one refused (the other's supersession had reached it first), the
/// history names the accepted one; with both accepted, the later write was rebased on the
/// earlier, and the history names the earlier successor and the rebase.
fn check_pairs(report: &mut Report, members: &[Arc<Member>], holdings: &Holdings, pairs: &[Pair]) {
    for (target, outcomes) in pairs {
        let accepted: Vec<&String> = outcomes
            .iter()
            .filter_map(|(_, o)| o.as_ref().ok())
            .collect();
        let ends: BTreeSet<Option<String>> = holdings
            .iter()
            .map(|h| h.get(target).and_then(|m| m.superseded_by.clone()))
            .collect();
        let end = ends.iter().next().cloned().flatten();
        let history = holdings[0]
            .get(target)
            .map(|m| m.history.join("; "))
            .unwrap_or_default();
        let said: Vec<String> = outcomes
            .iter()
            .map(|(who, o)| match o {
                Ok(id) => format!("{} wrote {id}", members[*who].name),
                Err(e) => format!("{} was refused ({e})", members[*who].name),
            })
            .collect();
        report.supersessions.push(format!(
            "{target}: {}; in the end superseded by {}; history: {history}",
            said.join(", "),
            end.as_deref().unwrap_or("nothing"),
        ));
        let mut fault = |what: String| report.supersession_faults.push(format!("{target}: {what}"));
        if ends.len() != 1 {
            fault(format!("ends differently in different copies: {ends:?}"));
        }
        if !accepted.iter().any(|id| end.as_ref() == Some(*id)) {
            fault(format!(
                "superseded by {end:?}, not by an accepted successor {accepted:?}"
            ));
        }
        for id in &accepted {
            if !holdings
                .iter()
                .all(|h| h.get(*id).is_some_and(|m| m.superseded_by.is_none()))
            {
                fault(format!("its successor {id} is not live in every copy"));
            }
        }
        let named = |id: &str| history.contains(&format!("superseded by {id}"));
        let documented = match accepted.as_slice() {
            [only] => named(only),
            [_, _] => {
                accepted
                    .iter()
                    .any(|id| end.as_ref() != Some(*id) && named(id))
                    && history.contains(
                        "replaced by a write another working copy made from an older version",
                    )
            }
            _ => false,
        };
        if !documented {
            fault(format!("its history is not the documented one: {history}"));
        }
    }
}
