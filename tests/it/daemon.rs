//! The daemon as a user runs it: a real `cairn daemon` process on a temporary repository,
//! followed through file edits, creations, deletions and renames; reached over streamable HTTP
//! with rmcp's client and over stdio through `cairn serve`; stopped by signals and killed.

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use rmcp::ServiceExt;
use rmcp::service::RunningService;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::{Value, json};

use crate::mcp::{call, connect, text};
use crate::support::TestRepo;

/// How long a test waits for the daemon to reflect a change before failing.
const DEADLINE: Duration = Duration::from_secs(30);

pub struct Daemon {
    child: Child,
    pub port: u16,
    pub token: String,
}

impl Daemon {
    /// Starts `cairn daemon` and waits until it serves.
    pub fn start(repo: &TestRepo) -> Daemon {
        Daemon::start_with(repo, &[])
    }

    /// Starts `cairn daemon` with these environment variables set, and waits until it serves.
    pub fn start_with(repo: &TestRepo, env: &[(&str, &std::path::Path)]) -> Daemon {
        let log = std::fs::File::create(repo.data_dir().join("test-daemon.log")).unwrap();
        let child = repo
            .cairn_command(repo.data_dir())
            .envs(env.iter().copied())
            .env("CAIRN_LOG", "info")
            .arg("daemon")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .unwrap();
        let mut daemon = Daemon {
            child,
            port: 0,
            token: String::new(),
        };
        // This daemon's record: one left by a daemon killed before it names another process.
        let pid = daemon.child.id();
        let record = wait_for(&mut daemon, || {
            let text = std::fs::read_to_string(repo.data_dir().join("daemon.json")).ok()?;
            serde_json::from_str::<Value>(&text)
                .ok()
                .filter(|record| record["pid"].as_u64() == Some(u64::from(pid)))
        });
        daemon.port = record["port"].as_u64().unwrap() as u16;
        daemon.token = std::fs::read_to_string(repo.data_dir().join("daemon.token"))
            .unwrap()
            .trim()
            .to_string();
        daemon
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.port)
    }

    /// SIGTERM, then the exit status.
    pub fn stop(mut self) -> std::process::ExitStatus {
        signal(&self.child, "TERM");
        let started = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(started.elapsed() < DEADLINE, "the daemon did not stop");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        self.kill();
    }
}

fn signal(child: &Child, name: &str) {
    let status = Command::new("kill")
        .arg(format!("-{name}"))
        .arg(child.id().to_string())
        .status()
        .unwrap();
    assert!(status.success());
}

/// Polls `probe` until it answers, failing if the daemon exits or the deadline passes.
fn wait_for<T>(daemon: &mut Daemon, mut probe: impl FnMut() -> Option<T>) -> T {
    let started = Instant::now();
    loop {
        if let Some(value) = probe() {
            return value;
        }
        if let Some(status) = daemon.child.try_wait().unwrap() {
            panic!("the daemon exited early: {status}");
        }
        assert!(started.elapsed() < DEADLINE, "gave up waiting");
        std::thread::sleep(Duration::from_millis(25));
    }
}

/// Polls an async probe until it holds.
async fn eventually(what: &str, mut probe: impl AsyncFnMut() -> bool) {
    let started = Instant::now();
    while !probe().await {
        assert!(started.elapsed() < DEADLINE, "gave up waiting for {what}");
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

pub async fn http_client(daemon: &Daemon) -> RunningService<rmcp::RoleClient, ()> {
    http_client_at(&daemon.url(), &daemon.token).await
}

/// rmcp's client over streamable HTTP to a daemon's URL with its token.
async fn http_client_at(url: &str, token: &str) -> RunningService<rmcp::RoleClient, ()> {
    let config = StreamableHttpClientTransportConfig::with_uri(url).auth_header(token.to_string());
    let transport = StreamableHttpClientTransport::with_client(reqwest::Client::new(), config);
    ().serve(transport).await.expect("MCP handshake over HTTP")
}

async fn expand(client: &RunningService<rmcp::RoleClient, ()>, target: &str) -> String {
    text(&call(client, "expand", json!({ "target": target })).await)
}

#[tokio::test(flavor = "multi_thread")]
async fn the_daemon_follows_edits_creations_deletions_and_renames() {
    let repo = TestRepo::with_fixture("mixed");
    let mut daemon = Daemon::start(&repo);
    let client = http_client(&daemon).await;

    repo.write("src/shop/fresh.py", "def brand_new():\n    return 1\n");
    eventually("a created file", async || {
        expand(&client, "src/shop/fresh.py::brand_new")
            .await
            .contains("brand_new")
            && !expand(&client, "src/shop/fresh.py::brand_new")
                .await
                .contains("error")
    })
    .await;

    repo.write(
        "src/shop/fresh.py",
        "def brand_new():\n    return 1\n\n\ndef second():\n    return brand_new()\n",
    );
    eventually("an edit", async || {
        expand(&client, "src/shop/fresh.py::brand_new")
            .await
            .contains("second")
    })
    .await;

    std::fs::rename(
        repo.path().join("src/shop/fresh.py"),
        repo.path().join("src/shop/moved.py"),
    )
    .unwrap();
    eventually("a rename", async || {
        let moved = expand(&client, "src/shop/moved.py::second").await;
        let old = expand(&client, "src/shop/fresh.py").await;
        !moved.starts_with("error") && old.starts_with("error")
    })
    .await;

    // The same answers through `cairn serve`, which relays to the daemon.
    let relayed = connect(&repo).await;
    let over_stdio = expand(&relayed, "src/shop/moved.py::second").await;
    assert!(!over_stdio.starts_with("error"), "{over_stdio}");
    relayed.cancel().await.unwrap();

    std::fs::remove_file(repo.path().join("src/shop/moved.py")).unwrap();
    eventually("a deletion", async || {
        expand(&client, "src/shop/moved.py")
            .await
            .starts_with("error")
    })
    .await;

    // A new directory with a file in it.
    repo.write("src/shop/pkg/inner.py", "def deep():\n    return 2\n");
    eventually("a new directory", async || {
        !expand(&client, "src/shop/pkg/inner.py::deep")
            .await
            .starts_with("error")
    })
    .await;
    repo.write(
        "src/shop/pkg/inner.py",
        "def deep():\n    return 2\n\n\ndef deeper():\n    return deep()\n",
    );
    eventually("an edit in the new directory", async || {
        !expand(&client, "src/shop/pkg/inner.py::deeper")
            .await
            .starts_with("error")
    })
    .await;

    // Editor backups and other files of no indexed language change nothing.
    repo.write("src/shop/notes.txt", "todo\n");
    repo.write("src/shop/cart.py~", "def backup():\n    pass\n");

    // A directory moved out of the repository takes its files with it.
    let outside = tempfile::tempdir().unwrap();
    std::fs::rename(repo.path().join("src/shop/pkg"), outside.path().join("pkg")).unwrap();
    eventually("a directory moved away", async || {
        expand(&client, "src/shop/pkg/inner.py")
            .await
            .starts_with("error")
    })
    .await;

    // Each save was patched in, then checked by an exact rebuild: the health page counts them.
    let http = reqwest::Client::new();
    eventually("the exact rebuilds' checks", async || {
        let health = http
            .get(format!("http://127.0.0.1:{}/health", daemon.port))
            .header("authorization", format!("Bearer {}", daemon.token))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        let health: Value = serde_json::from_str(&health).unwrap();
        let checks = &health["checks"];
        checks["rebuilds"].as_u64().is_some_and(|n| n >= 1)
            && checks["found"].as_u64() <= checks["rebuilds"].as_u64()
    })
    .await;
    client.cancel().await.unwrap();

    let status = daemon_stop(&mut daemon);
    assert!(status.success(), "{status}");
    assert!(!repo.data_dir().join("daemon.json").exists());

    // Everything reached the store, and it equals a fresh index of the same tree.
    repo.assert_store_is_fresh().await;
}

fn daemon_stop(daemon: &mut Daemon) -> std::process::ExitStatus {
    let placeholder = Daemon {
        child: Command::new("true").spawn().unwrap(),
        port: 0,
        token: String::new(),
    };
    std::mem::replace(daemon, placeholder).stop()
}

#[tokio::test(flavor = "multi_thread")]
async fn one_daemon_per_repository() {
    let repo = TestRepo::with_fixture("mixed");
    let daemon = Daemon::start(&repo);
    let second = repo.cairn(&["daemon"]);
    assert!(second.status.success());
    let said = String::from_utf8_lossy(&second.stderr);
    assert!(said.contains("already running"), "{said}");
    assert!(said.contains(&daemon.port.to_string()), "{said}");
    let status = repo.cairn_ok(&["status", "--json"]);
    let status: Value = serde_json::from_str(&status).unwrap();
    assert_eq!(status["daemon"]["reachable"], json!(true), "{status}");
    assert!(daemon.stop().success());
    let status: Value = serde_json::from_str(&repo.cairn_ok(&["status", "--json"])).unwrap();
    assert_eq!(status["daemon"], Value::Null);
}

#[tokio::test(flavor = "multi_thread")]
async fn http_needs_the_token_a_loopback_host_and_no_foreign_origin() {
    let repo = TestRepo::with_fixture("mixed");
    let daemon = Daemon::start(&repo);
    let http = reqwest::Client::new();
    let initialize = json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "probe", "version": "1"}}
    });
    let post = |token: Option<&str>| {
        let mut request = http
            .post(daemon.url())
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(initialize.to_string());
        if let Some(token) = token {
            request = request.header("authorization", format!("Bearer {token}"));
        }
        request
    };
    assert_eq!(post(None).send().await.unwrap().status(), 401);
    assert_eq!(post(Some("wrong")).send().await.unwrap().status(), 401);
    let foreign = post(Some(&daemon.token))
        .header("origin", "http://evil.example")
        .send()
        .await
        .unwrap();
    assert_eq!(foreign.status(), 403);
    let rebound = post(Some(&daemon.token))
        .header("host", "evil.example")
        .send()
        .await
        .unwrap();
    assert_eq!(rebound.status(), 403);
    // An oversized body is refused from its declared length, before it is read.
    let (huge, refusal) = raw_response(
        daemon.port,
        &format!(
            "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nAuthorization: Bearer {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
            daemon.port,
            daemon.token,
            9 * 1024 * 1024
        ),
    );
    assert_eq!(huge, 413);
    assert!(
        refusal.contains("larger than the limit of 8256 KiB"),
        "{refusal}"
    );
    let health = http
        .get(format!("http://127.0.0.1:{}/health", daemon.port))
        .header("authorization", format!("Bearer {}", daemon.token))
        .send()
        .await
        .unwrap();
    assert_eq!(health.status(), 200);

    // The right token: the same tools as over stdio, and they answer.
    let client = http_client(&daemon).await;
    let tools = client.list_all_tools().await.unwrap();
    assert_eq!(tools.len(), 10);
    let context = text(&call(&client, "get_context", json!({})).await);
    assert!(context.contains("src/shop"), "{context}");
    client.cancel().await.unwrap();
    assert!(daemon.stop().success());
}

#[tokio::test(flavor = "multi_thread")]
async fn killed_while_indexing_the_next_daemon_leaves_the_store_consistent() {
    let repo = TestRepo::new();
    for i in 0..400 {
        repo.write(
            &format!("pkg/m{i}.py"),
            format!(
                "from pkg.m{} import f{}\n\n\ndef f{i}():\n    return f{}() + {i}\n",
                (i + 1) % 400,
                (i + 1) % 400,
                (i + 1) % 400
            ),
        );
    }
    repo.commit("many modules");
    let lock = repo.data_dir().join("index.lock");
    let mut victim = repo
        .cairn_command(repo.data_dir())
        .arg("daemon")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while !cairn::running::is_locked(&lock) {
        assert!(started.elapsed() < DEADLINE, "indexing never started");
        assert!(victim.try_wait().unwrap().is_none(), "the daemon exited");
        std::thread::sleep(Duration::from_millis(5));
    }
    std::thread::sleep(Duration::from_millis(150));
    victim.kill().unwrap();
    victim.wait().unwrap();

    // A new daemon starts despite the stale record and socket, and finishes the job.
    let daemon = Daemon::start(&repo);
    let client = http_client(&daemon).await;
    let answer = expand(&client, "pkg/m7.py::f7").await;
    assert!(answer.contains("f8"), "{answer}");
    client.cancel().await.unwrap();
    assert!(daemon.stop().success());
    repo.assert_store_is_fresh().await;
}

/// Sends a raw HTTP request head and returns the response's status and body.
fn raw_response(port: u16, head: &str) -> (u16, String) {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream.write_all(head.as_bytes()).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut response = Vec::new();
    let mut chunk = [0u8; 1024];
    let (head, body) = loop {
        let n = stream.read(&mut chunk).unwrap();
        response.extend_from_slice(&chunk[..n]);
        let text = String::from_utf8_lossy(&response).into_owned();
        if let Some((head, body)) = text.split_once("\r\n\r\n") {
            let length = head
                .lines()
                .find_map(|line| {
                    line.to_ascii_lowercase()
                        .strip_prefix("content-length:")
                        .map(|v| v.trim().parse::<usize>().unwrap())
                })
                .unwrap_or(0);
            if body.len() >= length || n == 0 {
                break (head.to_string(), body.to_string());
            }
        }
        assert!(n > 0, "the connection closed mid-answer: {text}");
    };
    (
        head.split_whitespace().nth(1).unwrap().parse().unwrap(),
        body,
    )
}

/// Runs `cairn hook` with `event` on stdin; returns its exit status and stdout.
fn hook(repo: &TestRepo, event: &Value) -> (bool, String) {
    let output = repo.cairn_with_stdin(&["hook"], event.to_string().as_bytes());
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
    )
}

pub(crate) fn frequency_of(repo: &TestRepo, path: &str) -> f64 {
    let report: Value = serde_json::from_str(&repo.cairn_ok(&["expand", path, "--json"])).unwrap();
    report["score"]["frequency"]
        .as_f64()
        .unwrap_or_else(|| panic!("no frequency in {report}"))
}

#[test]
fn hook_events_feed_frequency_and_the_session_starts_with_context() {
    let repo = TestRepo::with_fixture("mixed");
    repo.index();
    let file = "src/shop/pricing.py".to_string();
    assert_eq!(frequency_of(&repo, &file), 0.0);
    let read = json!({
        "hook_event_name": "PostToolUse", "session_id": "s1", "cwd": repo.path(),
        "tool_name": "Read",
        "tool_input": {"file_path": repo.path().join(&file)}
    });
    for _ in 0..3 {
        let (ok, out) = hook(&repo, &read);
        assert!(ok);
        assert!(out.is_empty());
    }
    let frequency = frequency_of(&repo, &file);
    assert!((frequency - 4f64.ln()).abs() < 0.01, "{frequency}");

    // SessionStart prints the context pack, without a daemon and with one.
    let start = json!({"hook_event_name": "SessionStart", "session_id": "s2", "cwd": repo.path()});
    let (ok, alone) = hook(&repo, &start);
    assert!(ok);
    assert!(alone.contains(&file), "{alone}");
    let daemon = Daemon::start(&repo);
    let (ok, served) = hook(&repo, &start);
    assert!(ok);
    assert!(served.contains(&file), "{served}");
    assert!(daemon.stop().success());

    // Garbage never breaks the assistant: exit 0, nothing printed, a line in the log.
    let (ok, out) = hook(&repo, &json!("not an event"));
    assert!(ok);
    assert!(out.is_empty());
    let log = std::fs::read_to_string(dirs_cache().join("cairn/hook.log")).unwrap_or_default();
    let local = std::fs::read_to_string(repo.data_dir().join("hook.log")).unwrap_or_default();
    assert!(
        log.contains("not Claude Code hook JSON") || local.contains("not Claude Code hook JSON")
    );
}

fn dirs_cache() -> std::path::PathBuf {
    std::env::var_os("XDG_CACHE_HOME")
        .map(Into::into)
        .unwrap_or_else(|| {
            std::path::PathBuf::from(std::env::var_os("HOME").unwrap()).join(".cache")
        })
}

#[tokio::test(flavor = "multi_thread")]
async fn cairn_index_beside_the_daemon_keeps_one_consistent_store() {
    let repo = TestRepo::with_fixture("mixed");
    let daemon = Daemon::start(&repo);
    for round in 0..3 {
        repo.write(
            &format!("src/shop/extra{round}.py"),
            format!("def extra{round}():\n    return {round}\n"),
        );
        // Races the daemon's own write of the same change; either order must end consistent.
        repo.cairn_ok(&["index", "--json"]);
    }
    let client = http_client(&daemon).await;
    eventually("the last file", async || {
        !expand(&client, "src/shop/extra2.py::extra2")
            .await
            .starts_with("error")
    })
    .await;
    client.cancel().await.unwrap();
    assert!(daemon.stop().success());
    repo.assert_store_is_fresh().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn cairn_index_is_handed_to_the_daemon_which_stores_the_change() {
    let repo = TestRepo::with_fixture("mixed");
    let daemon = Daemon::start(&repo);
    let pid = u64::from(daemon.child.id());
    repo.write("src/shop/handed.py", "def handed():\n    return 1\n");
    let report: Value = serde_json::from_str(&repo.cairn_ok(&["index", "--json"])).unwrap();
    assert_eq!(report["daemon"].as_u64(), Some(pid), "{report:#}");
    assert_eq!(report["files"], 13, "{report:#}");
    // Stored when the command returns: the daemon opens the store only to write.
    let graph = crate::support::stored_graph(repo.data_dir()).await;
    assert!(graph.node("src/shop/handed.py::handed").is_some());
    // Nothing changed since: the daemon keeps the graph it holds.
    let again: Value = serde_json::from_str(&repo.cairn_ok(&["index", "--json"])).unwrap();
    assert_eq!(again["daemon"].as_u64(), Some(pid), "{again:#}");
    assert_eq!(again["rebuilt"], false, "{again:#}");
    assert_eq!(again["stats"], report["stats"], "{again:#}");
    // A person's summary says who did the run.
    let text = repo.cairn_ok(&["index"]);
    assert!(
        text.contains(&format!("by the daemon (pid {pid})")),
        "{text}"
    );
    assert!(daemon.stop().success());
    // No other process wrote the store, so the daemon never reloaded its index.
    let log = std::fs::read_to_string(repo.data_dir().join("test-daemon.log")).unwrap();
    assert!(!log.contains("reloading the index"), "{log}");
    // Of the three runs, only the first can have found a graph to build (the new file).
    let whole_rebuilds = log
        .lines()
        .filter(|l| l.contains("rebuilt") && l.contains("rescan=true"))
        .count();
    assert!(whole_rebuilds <= 1, "{log}");
    repo.assert_store_is_fresh().await;
}

/// A repository moved away while its daemon runs: the daemon stops on its own, says why and
/// exits successfully (a service unit does not restart it), and its stored index is kept: the
/// repository moved back indexes without parsing a file again.
#[tokio::test(flavor = "multi_thread")]
async fn a_repository_moved_away_stops_its_daemon_and_keeps_the_index() {
    let repo = TestRepo::with_fixture("mixed");
    let indexed: Value = serde_json::from_str(&repo.cairn_ok(&["index", "--json"])).unwrap();
    let mut daemon = Daemon::start(&repo);
    let root = repo.path().to_path_buf();
    let away = root.with_extension("moved");
    std::fs::rename(&root, &away).unwrap();
    let started = Instant::now();
    let status = loop {
        if let Some(status) = daemon.child.try_wait().unwrap() {
            break Some(status);
        }
        if started.elapsed() > DEADLINE {
            break None;
        }
        std::thread::sleep(Duration::from_millis(25));
    };
    // Back in place before any assertion, so the temporary directory is removed either way.
    std::fs::rename(&away, &root).unwrap();
    let status = status.expect("the daemon went on after its repository was moved away");
    assert!(status.success(), "{status}");
    let log = std::fs::read_to_string(repo.data_dir().join("test-daemon.log")).unwrap();
    assert!(log.contains("was moved or deleted"), "{log}");
    assert!(!repo.data_dir().join("daemon.json").exists());

    let again: Value = serde_json::from_str(&repo.cairn_ok(&["index", "--json"])).unwrap();
    assert_eq!(again["files"], indexed["files"], "{again}");
    assert_eq!(again["parsed"], json!(0), "{again}");
}

/// The daemon in a mount namespace of its own whose data directory is a small tmpfs, driven
/// through a shell that reads one command a line (`fill`, `free`, `seen TEXT`, `absent TEXT`,
/// `stop`) and answers one line each. The daemon's log is outside the tmpfs, where it can be
/// written while the tmpfs is full. `unshare --map-root-user` lets an unprivileged user mount it too;
/// the mount is gone with the namespace.
const CRAMPED: &str = r#"
set -u
mount -t tmpfs -o size=8m tmpfs "$DATA" || { echo "cannot mount"; exit 1; }
"$CAIRN" --repo "$REPO" --data-dir "$DATA/d" index --quiet >/dev/null 2>&1 || { echo "no index"; exit 1; }
CAIRN_LOG=info "$CAIRN" --repo "$REPO" --data-dir "$DATA/d" daemon >/dev/null 2>"$LOG" &
daemon=$!
while [ ! -s "$DATA/d/daemon.json" ]; do sleep 0.05; done
sleep 0.1
echo "ready $(tr -d '\n' < "$DATA/d/daemon.json") $(cat "$DATA/d/daemon.token")"
while read -r command text; do
  case "$command" in
    fill) dd if=/dev/zero of="$DATA/filler" bs=64k >/dev/null 2>&1; echo "filled" ;;
    free) rm -f "$DATA/filler"; echo "freed" ;;
    seen)
      tries=0
      until grep -q -- "$text" "$LOG"; do
        tries=$((tries + 1)); [ "$tries" -gt 600 ] && break; sleep 0.1
      done
      if grep -q -- "$text" "$LOG"; then echo "seen"; else echo "missing: $(tail -c 2000 "$LOG" | tr '\n' ' ')"; fi ;;
    absent) if grep -q -- "$text" "$LOG"; then echo "present"; else echo "absent"; fi ;;
    stop)
      kill -TERM "$daemon"; wait "$daemon"; status=$?
      again=$("$CAIRN" --repo "$REPO" --data-dir "$DATA/d" index --json 2>&1 | tr -d '\n')
      echo "stopped $status $again"; exit 0 ;;
  esac
done
"#;

/// A disk that fills under the daemon: the index it holds keeps answering (changes included),
/// the log says the disk is full rather than that the store is damaged, and once space is
/// freed the daemon stores again, leaving a store that the next index run finds whole and up
/// to date (nothing to parse again).
#[tokio::test(flavor = "multi_thread")]
async fn a_full_disk_keeps_the_index_answering_and_the_store_whole() {
    use std::io::{BufRead, BufReader, Write};

    let repo = TestRepo::with_fixture("mixed");
    let mount = tempfile::tempdir().unwrap();
    let mut shell = Command::new("unshare")
        .args(["--mount", "--map-root-user", "sh", "-c", CRAMPED])
        .env("CAIRN", env!("CARGO_BIN_EXE_cairn"))
        .env("REPO", repo.path())
        .env("DATA", mount.path())
        .env("LOG", repo.data_dir().join("cramped-daemon.log"))
        .env_remove("CAIRN_REPO")
        .env_remove("CAIRN_DATA_DIR")
        .env("CAIRN_ORGS_DIR", repo.data_dir().join("orgs"))
        .env("CAIRN_MODEL_DIR", repo.data_dir().join("no-model"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("unshare (util-linux) runs the daemon in a mount namespace of its own");
    let mut commands = shell.stdin.take().unwrap();
    let mut answers = BufReader::new(shell.stdout.take().unwrap()).lines();
    let ready = answers.next().unwrap().unwrap();
    let mut ask = |command: &str| -> String {
        writeln!(commands, "{command}").unwrap();
        answers.next().unwrap().unwrap()
    };

    let (record, token) = ready
        .strip_prefix("ready ")
        .and_then(|rest| rest.rsplit_once(' '))
        .unwrap_or_else(|| panic!("the daemon did not start: {ready}"));
    let record: Value = serde_json::from_str(record).unwrap();
    let client = http_client_at(record["url"].as_str().unwrap(), token).await;
    assert!(
        !expand(&client, "src/shop/cart.py")
            .await
            .starts_with("error")
    );

    assert_eq!(ask("fill"), "filled");
    repo.write(
        "src/shop/late.py",
        "def written_on_a_full_disk():\n    return 1\n",
    );
    eventually("the change answered from memory", async || {
        !expand(&client, "src/shop/late.py::written_on_a_full_disk")
            .await
            .starts_with("error")
    })
    .await;
    assert_eq!(ask("seen the disk holding the store is full"), "seen");
    assert!(
        !expand(&client, "src/shop/cart.py")
            .await
            .starts_with("error")
    );

    assert_eq!(ask("free"), "freed");
    assert_eq!(ask("seen the index is stored again"), "seen");
    // A full disk is not a damaged store, and the engine's lock is not left held.
    assert_eq!(ask("absent damaged or unreadable"), "absent");
    assert_eq!(ask("absent in use by another process"), "absent");
    client.cancel().await.unwrap();

    let stopped = ask("stop");
    let rest = stopped
        .strip_prefix("stopped ")
        .unwrap_or_else(|| panic!("{stopped}"));
    let (status, again) = rest.split_once(' ').unwrap();
    assert_eq!(status, "0", "{stopped}");
    let again: Value = serde_json::from_str(again).unwrap_or_else(|_| panic!("{again}"));
    assert_eq!(again["parsed"], json!(0), "{again}");
    assert!(shell.wait().unwrap().success());
}
