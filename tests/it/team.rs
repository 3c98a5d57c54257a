//! Team mode against a real SurrealDB server (the `surreal` example, `examples/surreal.rs`,
//! which `cargo test` builds; started on 127.0.0.1 inside each test): two clones
//! sharing project memories, developer privacy against hand-written queries, the server
//! killed in the middle of a run of writes (both databases queueing), wrong credentials,
//! guideline changes and approval decisions shared like memories, a server set up by an older
//! cairn; and, with no server at all, an outbox cut inside a character by a crash.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use rmcp::ServiceExt;
use rmcp::transport::TokioChildProcess;
use serde_json::{Value, json};
use surrealdb::Surreal;
use surrealdb::engine::any::Any;

use crate::mcp::{call, text};
use crate::support::TestRepo;

pub(crate) const ROOT_PASSWORD: &str = "root-pass-for-tests";

/// The test server binary: the `surreal` example, built by `cargo test` beside the cairn binary
/// under test (`target/<profile>/examples/surreal`).
fn surreal_binary() -> PathBuf {
    let cairn = Path::new(env!("CARGO_BIN_EXE_cairn"));
    let binary = cairn.with_file_name("examples").join("surreal");
    assert!(
        binary.exists(),
        "{} is missing: `cargo test` builds it (`cargo build --example surreal` on its own)",
        binary.display()
    );
    binary
}

/// A SurrealDB server on loopback, storing in a directory so it can be killed and restarted.
pub(crate) struct Server {
    pub(crate) port: u16,
    dir: tempfile::TempDir,
    child: Option<Child>,
}

impl Server {
    pub(crate) fn start() -> Server {
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let mut server = Server {
            port,
            dir: tempfile::tempdir().unwrap(),
            child: None,
        };
        server.restart();
        server
    }

    pub(crate) fn url(&self) -> String {
        format!("ws://127.0.0.1:{}", self.port)
    }

    /// Starts the server (again) on the same port and data, and waits until it answers.
    fn restart(&mut self) {
        let child = Command::new(surreal_binary())
            .args(["start", "--no-banner", "--log", "warn", "--bind"])
            .arg(format!("127.0.0.1:{}", self.port))
            .args(["--user", "root", "--pass", ROOT_PASSWORD])
            .arg(format!(
                "surrealkv://{}",
                self.dir.path().join("data").display()
            ))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("the surreal binary starts");
        self.child = Some(child);
        let started = Instant::now();
        loop {
            if std::net::TcpStream::connect(("127.0.0.1", self.port)).is_ok()
                && reqwest_health(self.port)
            {
                return;
            }
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
            child.kill().unwrap();
            child.wait().unwrap();
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Whether the server's HTTP endpoint answers `/health`.
fn reqwest_health(port: u16) -> bool {
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

/// A clone of the shared repository, for one developer, with their own config directory
/// (where `cairn team add-member --output` put their credentials file).
pub(crate) struct WorkingCopy {
    pub(crate) repo: TestRepo,
    pub(crate) url: String,
    pub(crate) config_home: PathBuf,
}

impl WorkingCopy {
    pub(crate) fn credentials(&self) -> PathBuf {
        self.config_home.join("cairn").join("team.toml")
    }

    pub(crate) fn command(&self) -> Command {
        let mut command = self.repo.cairn_command(self.repo.data_dir());
        command
            .arg("--db")
            .arg(&self.url)
            .env_remove("CAIRN_TEAM_DEVELOPER")
            .env_remove("CAIRN_TEAM_PASSWORD")
            .env_remove("CAIRN_DB")
            .env("XDG_CONFIG_HOME", &self.config_home);
        command
    }

    pub(crate) fn cairn(&self, args: &[&str]) -> Output {
        self.command().args(args).output().unwrap()
    }

    pub(crate) fn ok(&self, args: &[&str]) -> String {
        let output = self.cairn(args);
        assert!(
            output.status.success(),
            "cairn {args:?} failed:\n{}\n{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8(output.stdout).unwrap()
    }

    pub(crate) fn json(&self, args: &[&str]) -> Value {
        let mut all = args.to_vec();
        all.push("--json");
        serde_json::from_str(&self.ok(&all)).unwrap()
    }
}

/// A repository with an `origin` remote, its team set up on `server`, and two clones: Alice's
/// (ssh remote) and Bob's (https remote).
pub(crate) struct Team {
    pub(crate) alice: WorkingCopy,
    pub(crate) bob: WorkingCopy,
    _origin: TestRepo,
    _homes: tempfile::TempDir,
}

pub(crate) fn team(server: &Server) -> Team {
    let origin = TestRepo::with_fixture("mixed");
    let homes = tempfile::tempdir().unwrap();
    let clone = |remote: &str, who: &str| {
        let repo = TestRepo::plain();
        let output = Command::new("git")
            .args(["clone", "-q"])
            .arg(origin.path())
            .arg(repo.path())
            .output()
            .unwrap();
        assert!(output.status.success(), "{output:?}");
        repo.git(&["remote", "set-url", "origin", remote]);
        WorkingCopy {
            repo,
            url: server.url(),
            config_home: homes.path().join(who),
        }
    };
    let alice = clone("git@github.com:Acme/App.git", "alice");
    let bob = clone("https://github.com/acme/app", "bob");
    let admin = |args: &[&str]| {
        let output = admin(&alice, args);
        assert!(output.status.success(), "cairn {args:?}: {output:?}");
        String::from_utf8(output.stdout).unwrap()
    };
    let init: Value = serde_json::from_str(&admin(&["team", "init", "--json"])).unwrap();
    assert_eq!(init["repository"], "github.com/acme/app");
    assert_eq!(init["namespace"], "acme");
    // Idempotent.
    admin(&["team", "init"]);
    for (name, who) in [("alice", &alice), ("bob", &bob)] {
        let path = who.credentials();
        admin(&[
            "team",
            "add-member",
            name,
            "--output",
            path.to_str().unwrap(),
        ]);
    }
    let members = admin(&["team", "members"]);
    assert_eq!(members.lines().collect::<Vec<_>>(), ["alice", "bob"]);
    Team {
        alice,
        bob,
        _origin: origin,
        _homes: homes,
    }
}

/// `cairn` in `copy`, signed in to the team server as its root user.
pub(crate) fn admin(copy: &WorkingCopy, args: &[&str]) -> Output {
    copy.command()
        .env("CAIRN_TEAM_ADMIN_USER", "root")
        .env("CAIRN_TEAM_ADMIN_PASSWORD", ROOT_PASSWORD)
        .args(args)
        .output()
        .unwrap()
}

/// The password in a credentials file `cairn team add-member` wrote.
pub(crate) fn password_in(credentials: &Path) -> String {
    let text = std::fs::read_to_string(credentials).unwrap();
    let file: toml::Table = toml::from_str(&text).unwrap();
    file["password"].as_str().unwrap().to_string()
}

/// cairn's own connection to the team server, as `who` of `clone`.
fn cairn_server(server: &Server, who: &str, clone: &WorkingCopy) -> cairn::memory::team::Server {
    cairn::memory::team::Server::new(
        &server.url(),
        "acme",
        "github_com_acme_app",
        cairn::config::team::Credentials {
            developer: who.to_string(),
            password: cairn::config::team::Secret::new(password_in(&clone.credentials())),
        },
    )
}

/// A developer's SurrealDB client, signed in as their record user: what a hand-written
/// client could do with their credentials.
pub(crate) async fn signed_in(server: &Server, who: &str, credentials: &Path) -> Surreal<Any> {
    signed_in_to(server, who, credentials, "github_com_acme_app").await
}

/// A developer's SurrealDB client signed in to `database` of the `acme` namespace.
pub(crate) async fn signed_in_to(
    server: &Server,
    who: &str,
    credentials: &Path,
    database: &str,
) -> Surreal<Any> {
    sign_in(server, who, &password_in(credentials), database)
        .await
        .unwrap_or_else(|e| panic!("{who} cannot sign in to {database}: {e}"))
}

/// A SurrealDB client signing in as `who` with `password` to `database` of `acme`.
async fn sign_in(
    server: &Server,
    who: &str,
    password: &str,
    database: &str,
) -> surrealdb::Result<Surreal<Any>> {
    let db = surrealdb::engine::any::connect(server.url()).await?;
    let mut params = surrealdb::types::Object::new();
    params.insert("developer", who);
    params.insert("password", password);
    db.signin(surrealdb::opt::auth::Record {
        namespace: "acme".to_string(),
        database: database.to_string(),
        access: "member".to_string(),
        params,
    })
    .await?;
    db.use_ns("acme").use_db(database).await?;
    Ok(db)
}

/// The ids of the decisions `cairn memory list` shows in a working copy, sorted.
fn decision_ids(copy: &WorkingCopy) -> Vec<String> {
    let listed = copy.json(&["memory", "list", "-t", "decision"]);
    let mut ids: Vec<String> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap().to_string())
        .collect();
    ids.sort();
    ids
}

/// The ids a `SELECT VALUE record::id(id) …` query answers, sorted.
async fn sorted_ids(db: &Surreal<Any>, query: &str) -> Vec<String> {
    let mut ids: Vec<String> = rows(db, query)
        .await
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect();
    ids.sort();
    ids
}

pub(crate) async fn rows(db: &Surreal<Any>, query: &str) -> Vec<Value> {
    let mut response = db.query(query).await.unwrap();
    // An error is not an empty answer: privacy checks must not pass on a failed query.
    let rows: Vec<Value> = response.take(0).unwrap_or_else(|e| panic!("{query}: {e}"));
    rows
}

/// Framework knowledge about every Python file, written in `copy`: an organisation memory.
fn org_knowledge(copy: &WorkingCopy, text: &str) -> String {
    let written = copy.json(&[
        "memory",
        "add",
        "-t",
        "framework_knowledge",
        "--file-pattern",
        "*.py",
        text,
    ]);
    assert_eq!(written["memory"]["scope"], "org", "{written}");
    written["id"].as_str().unwrap().to_string()
}

fn search_ids(found: &Value) -> Vec<String> {
    found["memories"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["memory"]["id"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn two_clones_share_project_memory_and_developer_memory_stays_private() {
    let server = Server::start();
    let team = team(&server);
    let (alice, bob) = (&team.alice, &team.bob);

    // Alice learns a decision and a private habit.
    let decision = alice.json(&[
        "memory",
        "add",
        "-t",
        "decision",
        "--title",
        "Repository pattern for database access",
        "All database access goes through repository classes; views never build queries.",
    ]);
    let decision_id = decision["id"].as_str().unwrap().to_string();
    // In the repository's database (a developer memory defaults to the organisation's).
    let habit = alice.json(&[
        "memory",
        "add",
        "-t",
        "developer_pattern",
        "--scope",
        "repository",
        "--developer",
        "alice",
        "Alice tends to forget closing cursors in migration scripts",
    ]);
    let habit_id = habit["id"].as_str().unwrap().to_string();

    // Bob's next session, in his own clone, over MCP: the decision is there.
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_cairn"));
    command
        .arg("--repo")
        .arg(bob.repo.path())
        .arg("--data-dir")
        .arg(bob.repo.data_dir())
        .arg("--db")
        .arg(&bob.url)
        .env("XDG_CONFIG_HOME", &bob.config_home)
        .env("CAIRN_MODEL_DIR", bob.repo.data_dir().join("no-model"))
        .env_remove("CAIRN_TEAM_DEVELOPER")
        .env_remove("CAIRN_TEAM_PASSWORD")
        .arg("serve");
    let client = ().serve(TokioChildProcess::new(command).unwrap()).await.unwrap();
    let found = call(
        &client,
        "search_project_memory",
        json!({"query": "repository pattern database"}),
    )
    .await;
    assert!(!found.is_error.unwrap_or(false), "{}", text(&found));
    let structured = found.structured_content.clone().unwrap();
    assert_eq!(
        search_ids(&structured),
        vec![decision_id.clone()],
        "{structured}"
    );
    // Alice's habit is hers: Bob's cairn cannot see it, even asking for it by developer.
    let private = call(
        &client,
        "search_developer_memory",
        json!({"developer": "alice", "query": "cursors migration"}),
    )
    .await;
    let structured = private.structured_content.clone().unwrap();
    assert!(search_ids(&structured).is_empty(), "{structured}");
    client.cancel().await.unwrap();

    // Bob's answer over the CLI too, and the shared decision is the same memory.
    let shown = bob.json(&["memory", "show", &decision_id]);
    assert_eq!(shown["content"], decision["memory"]["content"]);
    let refused = bob.cairn(&["memory", "show", &habit_id]);
    assert!(!refused.status.success());

    // A hand-written client with Bob's credentials gets no further than Bob's cairn.
    let as_bob = signed_in(&server, "bob", &bob.credentials()).await;
    let everything = rows(&as_bob, "SELECT record::id(id) AS key, kind FROM memory").await;
    assert!(
        everything.iter().any(|r| r["key"] == decision_id.as_str()),
        "{everything:?}"
    );
    assert!(
        everything.iter().all(|r| r["key"] != habit_id.as_str()),
        "{everything:?}"
    );
    let seen = rows(&as_bob, "SELECT * FROM memory WHERE developer = 'alice'").await;
    assert!(
        seen.iter().all(|r| r["kind"] != "developer_pattern"),
        "{seen:?}"
    );
    assert!(
        rows(&as_bob, &format!("SELECT * FROM memory:{habit_id}"))
            .await
            .is_empty()
    );
    let members = rows(&as_bob, "SELECT * FROM member").await;
    assert_eq!(members.len(), 1, "only his own row: {members:?}");
    assert!(
        members[0].get("pass").is_none() && members[0].get("pass_at").is_none(),
        "password hashes are not readable: {members:?}"
    );
    let _ = as_bob
        .query(format!(
            "UPDATE memory:{habit_id} SET content = 'rewritten by bob'"
        ))
        .await;
    let _ = as_bob.query(format!("DELETE memory:{decision_id}")).await;
    let _ = as_bob
        .query("CREATE memory:m_00000000000000ff CONTENT { kind: 'developer_pattern', developer: 'alice', title: 'forged', content: 'forged by bob', seq: 999999 }")
        .await;

    let as_alice = signed_in(&server, "alice", &alice.credentials()).await;
    let hers = rows(&as_alice, &format!("SELECT content FROM memory:{habit_id}")).await;
    assert_eq!(hers.len(), 1);
    assert_eq!(hers[0]["content"], habit["memory"]["content"]);
    assert_eq!(
        rows(&as_alice, &format!("SELECT id FROM memory:{decision_id}"))
            .await
            .len(),
        1
    );
    assert!(
        rows(&as_alice, "SELECT id FROM memory:m_00000000000000ff")
            .await
            .is_empty()
    );

    // Bob's cairn refuses to write Alice's private memories, clearly.
    let output = bob.cairn(&[
        "memory",
        "add",
        "-t",
        "developer_pattern",
        "--developer",
        "alice",
        "Alice likes long functions",
    ]);
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("only be written by alice"), "{stderr}");

    // Shared on purpose, the habit becomes readable by the team.
    alice.ok(&["memory", "share", &habit_id]);
    let found = bob.json(&[
        "memory",
        "search",
        "--developer",
        "alice",
        "cursors migration",
    ]);
    assert_eq!(search_ids(&found), vec![habit_id.clone()], "{found}");

    // Review outcomes are shared: Bob records a review of Alice's change; Alice sees it.
    let review = json!({
        "author": "alice",
        "reviewer": "bob",
        "verdict": "changes_requested",
        "findings": [{"category": "naming", "message": "Use snake_case for helpers", "disposition": "implemented"}]
    });
    let file = bob.repo.data_dir().join("review.json");
    std::fs::write(&file, review.to_string()).unwrap();
    bob.ok(&["record-review", file.to_str().unwrap()]);
    let stats = alice.json(&["rules"]);
    assert!(stats.to_string().contains("naming"), "{stats}");

    // Status names the server and the developer and shows nothing queued.
    let status = alice.json(&["status"]);
    assert_eq!(status["team"]["developer"], "alice");
    assert_eq!(status["team"]["queued"], 0);
    assert!(status["team"]["synced_at"].is_number(), "{status}");
}

#[tokio::test(flavor = "multi_thread")]
async fn writes_made_while_the_server_is_down_are_replayed_exactly_once() {
    let mut server = Server::start();
    let team = team(&server);
    let (alice, bob) = (&team.alice, &team.bob);
    let title = |i: usize| format!("Decision number {i} about the payment module");
    let add = |i: usize| {
        alice.json(&[
            "memory",
            "add",
            "-t",
            "decision",
            "--title",
            &title(i),
            &format!("Payments rule {i}: amounts are integers of cents, never floats ({i})"),
        ])
    };
    // A run of writes, the server killed in the middle of it and back later.
    let mut ids = Vec::new();
    for i in 0..6 {
        ids.push(add(i)["id"].as_str().unwrap().to_string());
    }
    server.kill();
    for i in 6..14 {
        ids.push(add(i)["id"].as_str().unwrap().to_string());
    }
    // The organisation's database queues in its own outbox.
    let framework_id = org_knowledge(alice, "Celery retries re-run the whole task body");
    // Reads go on from the local copy, with a note.
    let found = alice.ok(&[
        "memory",
        "search",
        "--limit",
        "50",
        "payments integers cents",
    ]);
    assert!(found.contains("may be stale"), "{found}");
    // One written before the server went, one while it was away.
    assert!(
        found.contains("Payments rule 2:") && found.contains("Payments rule 9:"),
        "{found}"
    );
    let status = alice.json(&["status"]);
    assert!(status["team"]["queued"].as_u64().unwrap() >= 1, "{status}");
    assert!(status["team"]["error"].is_string(), "{status}");
    let organisation = &status["team"]["organisation"];
    assert_eq!(organisation["database"], "_org", "{status}");
    assert_eq!(organisation["queued"], 1, "{status}");
    let text = alice.ok(&["status"]);
    assert!(
        text.contains("team org:") && text.contains("acme/_org"),
        "{text}"
    );
    // The sync command says the writes are still queued.
    let waiting = alice.cairn(&["team", "sync"]);
    assert_eq!(waiting.status.code(), Some(2), "{waiting:?}");

    server.restart();
    for i in 14..18 {
        ids.push(add(i)["id"].as_str().unwrap().to_string());
    }
    let synced = alice.json(&["team", "sync"]);
    assert_eq!(synced["status"]["queued"], 0, "{synced}");
    assert_eq!(synced["status"]["organisation"]["queued"], 0, "{synced}");
    assert!(
        synced["status"]["organisation"]["synced_at"].is_i64(),
        "{synced}"
    );
    // A second replay finds nothing to do.
    alice.ok(&["team", "sync"]);
    // The organisation's write reached its database once.
    let org = signed_in_to(&server, "bob", &bob.credentials(), "_org").await;
    let there = rows(&org, "SELECT VALUE record::id(id) FROM memory").await;
    assert_eq!(there, vec![json!(framework_id)]);

    // Everything is on the server exactly once, in the order written.
    let as_bob = signed_in(&server, "bob", &bob.credentials()).await;
    let stored = rows(
        &as_bob,
        "SELECT title, seq FROM memory WHERE kind = 'decision' ORDER BY seq",
    )
    .await;
    let titles: Vec<String> = stored
        .iter()
        .map(|r| r["title"].as_str().unwrap().to_string())
        .collect();
    let expected: Vec<String> = (0..18).map(title).collect();
    assert_eq!(titles, expected);
    let applied = rows(&as_bob, "SELECT count() FROM applied GROUP ALL").await;
    assert_eq!(applied[0]["count"], 18, "one applied key per write");

    // Bob's clone sees all of them.
    ids.sort();
    assert_eq!(decision_ids(bob), ids);
}

/// A queued write that a long-running cairn replays while another process holds the local
/// copy (so the pulled rows cannot be written into it) stays queued until the copy holds it: a
/// process started meanwhile with the server away still finds it, and the next sync leaves
/// the copy whole, each write on the server once.
#[tokio::test(flavor = "multi_thread")]
async fn a_replayed_write_stays_findable_until_the_local_copy_holds_it() {
    let mut server = Server::start();
    let team = team(&server);
    let (alice, bob) = (&team.alice, &team.bob);
    let mut serve = alice.command();
    serve.arg("serve");
    let transport =
        TokioChildProcess::new(tokio::process::Command::from(serve)).expect("cairn serve starts");
    let client = ().serve(transport).await.expect("MCP handshake");
    let remember = async |content: &str| {
        let answer = call(
            &client,
            "remember",
            json!({"type": "decision", "content": content}),
        )
        .await;
        assert!(!answer.is_error.unwrap_or(false), "{}", text(&answer));
        answer.structured_content.unwrap()["id"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let mut ids = vec![remember("Invoices are numbered per tenant, never globally.").await];
    server.kill();
    ids.push(remember("Refunds go back to the original payment method.").await);
    ids.push(remember("Currency amounts are integers of cents, never floats.").await);
    assert_eq!(alice.json(&["status"])["team"]["queued"], 2);

    // The server is back; the test holds the local copy while `cairn serve` replays.
    server.restart();
    let copies: Vec<PathBuf> = std::fs::read_dir(alice.repo.data_dir())
        .unwrap()
        .map(|entry| entry.unwrap().path().join("memory"))
        .filter(|dir| dir.is_dir())
        .collect();
    assert!(!copies.is_empty());
    let mut held = Vec::new();
    for dir in &copies {
        held.push(cairn::memory::store::MemoryStore::open(dir).await.unwrap());
    }
    // Past the time a server that did not answer is left alone.
    tokio::time::sleep(Duration::from_secs(6)).await;
    let found = call(
        &client,
        "search_project_memory",
        json!({"query": "refunds payment method"}),
    )
    .await;
    assert!(text(&found).contains("Refunds go back"), "{}", text(&found));
    for store in held {
        store.close().await;
    }

    // Another process, the server away again: the replayed writes are in the local copy or
    // in the queue, never in neither.
    server.kill();
    ids.sort();
    assert_eq!(decision_ids(alice), ids);

    // `cairn serve` syncs again with the copy free: the queue empties and the copy alone
    // holds all three (no hole where its pull was not written).
    server.restart();
    tokio::time::sleep(Duration::from_secs(6)).await;
    let found = call(
        &client,
        "search_project_memory",
        json!({"query": "invoices"}),
    )
    .await;
    assert!(!found.is_error.unwrap_or(false), "{}", text(&found));
    client.cancel().await.unwrap();
    assert_eq!(alice.json(&["status"])["team"]["queued"], 0);
    server.kill();
    let listed = alice.json(&["memory", "list", "-t", "decision"]);
    assert_eq!(listed.as_array().unwrap().len(), 3, "{listed}");
    server.restart();
    let as_bob = signed_in(&server, "bob", &bob.credentials()).await;
    let stored = sorted_ids(
        &as_bob,
        "SELECT VALUE record::id(id) FROM memory WHERE kind = 'decision'",
    )
    .await;
    assert_eq!(stored, ids);
}

#[tokio::test(flavor = "multi_thread")]
async fn an_entry_sent_twice_is_applied_once() {
    use cairn::memory::team::outbox::{Entry, Row};
    use cairn::memory::{Memory, MemoryType};
    let server = Server::start();
    let team = team(&server);
    let remote = cairn_server(&server, "alice", &team.alice);
    let memory = Memory::new(
        "m_00000000000000a1".to_string(),
        MemoryType::Decision,
        "Sent twice".to_string(),
        "The answer to the first send was lost".to_string(),
        1,
    );
    let entry = Entry::new(
        vec![Row {
            memory,
            vector: None,
            base: None,
        }],
        Vec::new(),
        None,
    );
    remote.push(std::slice::from_ref(&entry)).await.unwrap();
    remote.push(std::slice::from_ref(&entry)).await.unwrap();
    assert!(remote.applied(&entry.key).await.unwrap());
    let changes = remote.changes_since(0).await.unwrap().memories;
    let copies: Vec<_> = changes
        .iter()
        .filter(|c| c.memory.id == "m_00000000000000a1")
        .collect();
    assert_eq!(copies.len(), 1);
    let seq = copies[0].memory.seq;
    // The second send did not take a sequence number either.
    assert_eq!(changes.iter().map(|c| c.memory.seq).max(), Some(seq));

    // A write based on an old version is a conflict, not a silent overwrite.
    let mut stale = entry.clone();
    stale.key = "0123456789abcdef0123456789abcdef".to_string();
    stale.memories[0].base = Some("not-the-current-revision".to_string());
    let conflict = remote.push(std::slice::from_ref(&stale)).await.unwrap_err();
    assert!(
        matches!(conflict, cairn::storage::remote::RemoteError::Conflict(ref id) if id == "m_00000000000000a1"),
        "{conflict}"
    );
}

#[test]
fn wrong_credentials_and_bad_settings_give_clear_errors() {
    let server = Server::start();
    let team = team(&server);
    let alice = &team.alice;

    let wrong = alice
        .command()
        .env("CAIRN_TEAM_DEVELOPER", "alice")
        .env("CAIRN_TEAM_PASSWORD", "not-her-password")
        .args(["memory", "search", "anything"])
        .output()
        .unwrap();
    assert!(!wrong.status.success());
    let stderr = String::from_utf8_lossy(&wrong.stderr);
    assert!(
        stderr.contains("refused the credentials of `alice`"),
        "{stderr}"
    );
    assert!(!stderr.contains("not-her-password"), "{stderr}");

    let stranger = alice
        .command()
        .env("CAIRN_TEAM_DEVELOPER", "mallory")
        .env("CAIRN_TEAM_PASSWORD", "guess")
        .args([
            "memory",
            "add",
            "-t",
            "decision",
            "Mallory was here all along",
        ])
        .output()
        .unwrap();
    assert!(!stranger.status.success());
    assert!(
        String::from_utf8_lossy(&stranger.stderr).contains("refused the credentials of `mallory`")
    );
    // Nothing of it was queued to be sent later.
    assert_eq!(alice.json(&["status"])["team"]["queued"], 0);

    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(alice.credentials(), std::fs::Permissions::from_mode(0o644)).unwrap();
    let open = alice.cairn(&["memory", "search", "anything"]);
    assert!(!open.status.success());
    assert!(
        String::from_utf8_lossy(&open.stderr).contains("chmod 600"),
        "{open:?}"
    );
    std::fs::set_permissions(alice.credentials(), std::fs::Permissions::from_mode(0o600)).unwrap();

    let in_url = alice
        .repo
        .cairn_command(alice.repo.data_dir())
        .env("XDG_CONFIG_HOME", &alice.config_home)
        .args([
            "--db",
            &format!("ws://alice:secret@127.0.0.1:{}", server.port),
        ])
        .args(["memory", "search", "anything"])
        .output()
        .unwrap();
    assert!(!in_url.status.success());
    let stderr = String::from_utf8_lossy(&in_url.stderr);
    assert!(
        stderr.contains("carries credentials") && !stderr.contains("secret"),
        "{stderr}"
    );

    // A repository whose team was never set up on the server: said so, with what to run.
    alice.repo.git(&[
        "remote",
        "set-url",
        "origin",
        "git@github.com:globex/app.git",
    ]);
    let missing = alice.cairn(&["memory", "search", "anything"]);
    assert!(!missing.status.success());
    let stderr = String::from_utf8_lossy(&missing.stderr);
    assert!(
        stderr.contains("has no team set up for globex/github_com_globex_app")
            && stderr.contains("cairn team init"),
        "{stderr}"
    );
    alice
        .repo
        .git(&["remote", "set-url", "origin", "git@github.com:Acme/App.git"]);

    // And with the right credentials it works.
    alice.ok(&["memory", "search", "anything"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn an_offline_edit_of_a_memory_a_teammate_changed_keeps_both_texts() {
    let mut server = Server::start();
    let team = team(&server);
    let (alice, bob) = (&team.alice, &team.bob);
    let first = alice.json(&[
        "memory",
        "add",
        "-t",
        "project_pattern",
        "Money amounts in the billing module are integer cents",
    ]);
    let id = first["id"].as_str().unwrap().to_string();
    // Bob's copy knows it.
    assert_eq!(bob.json(&["memory", "show", &id])["id"], id.as_str());

    server.kill();
    let offline = alice.json(&[
        "memory",
        "add",
        "-t",
        "project_pattern",
        "Money amounts in the billing module and in invoices are integer cents",
    ]);
    assert_eq!(offline["event"], "UPDATE", "{offline}");
    assert_eq!(offline["id"], id.as_str());
    server.restart();
    let online = bob.json(&[
        "memory",
        "add",
        "-t",
        "project_pattern",
        "Money amounts in the billing module are integer cents, refunds included",
    ]);
    assert_eq!(online["event"], "UPDATE", "{online}");

    // Alice's queued edit reaches the server after Bob's: hers is the text, his is history.
    alice.json(&["team", "sync"]);
    let shown = bob.json(&["memory", "show", &id]);
    assert_eq!(
        shown["content"],
        "Money amounts in the billing module and in invoices are integer cents"
    );
    let history = shown["history"].to_string();
    assert!(history.contains("refunds included"), "{shown}");
    assert!(history.contains("replaced by a write"), "{shown}");
    // Still one memory of that kind, not two.
    let listed = bob.json(&["memory", "list", "-t", "project_pattern"]);
    assert_eq!(listed.as_array().unwrap().len(), 1, "{listed}");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_expired_session_signs_in_again() {
    let server = Server::start();
    let team = team(&server);
    // Sessions of one second (cairn's schema gives them 12 hours).
    let root = surrealdb::engine::any::connect(server.url()).await.unwrap();
    root.signin(surrealdb::opt::auth::Root {
        username: "root".to_string(),
        password: ROOT_PASSWORD.to_string(),
    })
    .await
    .unwrap();
    root.use_ns("acme")
        .use_db("github_com_acme_app")
        .await
        .unwrap();
    root.query(
        "DEFINE ACCESS OVERWRITE member ON DATABASE TYPE RECORD
            SIGNIN (SELECT * FROM type::record('member', $developer) WHERE crypto::argon2::compare(pass, $password))
            DURATION FOR TOKEN 1s, FOR SESSION 1s",
    )
    .await
    .unwrap()
    .check()
    .unwrap();

    // The control: a plain client's session does expire.
    let plain = signed_in(&server, "alice", &team.alice.credentials()).await;
    tokio::time::sleep(Duration::from_millis(2_500)).await;
    let expired = plain
        .query("SELECT * FROM memory_meta")
        .await
        .and_then(|r| r.check());
    assert!(expired.is_err(), "the session did not expire: {expired:?}");

    let remote = cairn_server(&server, "alice", &team.alice);
    remote.changes_since(0).await.unwrap();
    tokio::time::sleep(Duration::from_millis(2_500)).await;
    remote.changes_since(0).await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn organisation_memories_live_in_the_organisation_database_with_the_same_privacy() {
    let server = Server::start();
    let team = team(&server);
    let (alice, bob) = (&team.alice, &team.bob);
    let habit = alice.json(&[
        "memory",
        "add",
        "-t",
        "developer_pattern",
        "--developer",
        "alice",
        "Alice leaves debug prints in Celery tasks",
    ]);
    assert_eq!(habit["memory"]["scope"], "org", "{habit}");
    let habit_id = habit["id"].as_str().unwrap().to_string();
    let framework_id = org_knowledge(alice, "Django signals run inside the sender's transaction");

    // Bob reads the organisation's framework knowledge, labelled, but not Alice's habit.
    let found = bob.json(&["memory", "search", "Django signals transaction"]);
    assert_eq!(search_ids(&found), vec![framework_id.clone()], "{found}");
    assert_eq!(found["memories"][0]["memory"]["scope"], "org", "{found}");
    let found = bob.json(&[
        "memory",
        "search",
        "debug prints Celery",
        "--developer",
        "alice",
    ]);
    assert!(search_ids(&found).is_empty(), "{found}");
    let mine = alice.json(&[
        "memory",
        "search",
        "debug prints Celery",
        "--developer",
        "alice",
    ]);
    assert_eq!(search_ids(&mine), vec![habit_id.clone()], "{mine}");

    // On the server: both rows are in the organisation's database, not the repository's, and
    // the server itself keeps Alice's habit from Bob.
    let as_alice = signed_in_to(&server, "alice", &alice.credentials(), "_org").await;
    let hers = rows(&as_alice, "SELECT VALUE record::id(id) FROM memory").await;
    assert!(
        hers.contains(&json!(habit_id)) && hers.contains(&json!(framework_id)),
        "{hers:?}"
    );
    let as_bob = signed_in_to(&server, "bob", &bob.credentials(), "_org").await;
    let his = rows(&as_bob, "SELECT VALUE record::id(id) FROM memory").await;
    assert_eq!(his, vec![json!(framework_id)]);
    let repository = signed_in(&server, "alice", &alice.credentials()).await;
    let there = rows(&repository, "SELECT VALUE record::id(id) FROM memory").await;
    assert!(there.is_empty(), "{there:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_accepted_guideline_change_addresses_the_patterns_for_every_member() {
    let server = Server::start();
    let team = team(&server);
    let (alice, bob) = (&team.alice, &team.bob);
    let review = json!({
        "author": "alice", "reviewer": "bob", "verdict": "comment", "review_id": "PR-9",
        "findings": [{"category": "naming", "file": "src/shop/cart.py",
                      "message": "Cart should be ShoppingCart", "disposition": "rejected",
                      "reason": "Cart is the domain's word"}]
    });
    let file = bob.repo.data_dir().join("review.json");
    std::fs::write(&file, review.to_string()).unwrap();
    let recorded: Value =
        serde_json::from_str(&bob.ok(&["record-review", "--json", file.to_str().unwrap()]))
            .unwrap();
    let pattern = recorded["rejections"][0]["id"]
        .as_str()
        .unwrap()
        .to_string();

    // Alice accepts a change for the pattern Bob's review left.
    let change = json!({
        "file": "CLAUDE.md", "section": "Naming", "current_text": "",
        "proposed_text": "Cart is the domain's word: keep it.", "rationale": "rejected in PR-9",
        "category": "naming", "memory_ids": [pattern], "outcome": "accepted"
    });
    let file = alice.repo.data_dir().join("change.json");
    std::fs::write(&file, change.to_string()).unwrap();
    let accepted = alice.json(&["rules", "--record", file.to_str().unwrap()]);
    let change_id = accepted["change"]["id"].as_str().unwrap().to_string();
    assert_eq!(accepted["addressed"], json!([pattern]), "{accepted:#}");

    // The addressed pattern travels to Bob through the server, naming the change.
    let shown = bob.json(&["memory", "show", &pattern]);
    assert_eq!(shown["addressed"], true, "{shown:#}");
    assert_eq!(shown["addressed_by"], change_id.as_str(), "{shown:#}");
    let naming =
        |copy: &WorkingCopy| -> Value { crate::support::rule_of(&copy.json(&["rules"]), "naming") };
    assert!(naming(bob).get("memories").is_none());
    // So does the change itself.
    assert_eq!(naming(alice)["changes"][0]["id"], change_id.as_str());
    assert_eq!(
        naming(bob)["changes"][0]["id"],
        change_id.as_str(),
        "{:#}",
        naming(bob)
    );

    // Bob proposes another change while the server is away: it waits in his outbox, Alice
    // sees it once the server is back, rejects it, and Bob's copy ends in her decision.
    let mut server = server;
    server.kill();
    let proposal = json!({
        "file": "CLAUDE.md", "section": "Naming", "current_text": "",
        "proposed_text": "Name carts ShoppingCart.", "rationale": "one reviewer asked",
        "category": "naming", "memory_ids": [pattern]
    });
    let file = bob.repo.data_dir().join("proposal.json");
    std::fs::write(&file, proposal.to_string()).unwrap();
    let proposed = bob.json(&["rules", "--record", file.to_str().unwrap()]);
    let proposal_id = proposed["change"]["id"].as_str().unwrap().to_string();
    assert_eq!(bob.json(&["status"])["team"]["queued"], 1);
    server.restart();
    bob.ok(&["team", "sync"]);
    let outcome = json!({"id": proposal_id, "outcome": "rejected", "feedback": "Cart stays"});
    let file = alice.repo.data_dir().join("outcome.json");
    std::fs::write(&file, outcome.to_string()).unwrap();
    alice.json(&["rules", "--record", file.to_str().unwrap()]);
    let outcome_of = |copy: &WorkingCopy| -> Value {
        naming(copy)["changes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["id"] == proposal_id.as_str())
            .cloned()
            .unwrap_or(Value::Null)
    };
    assert_eq!(outcome_of(alice)["outcome"], "rejected");
    assert_eq!(outcome_of(bob)["outcome"], "rejected", "{:#}", naming(bob));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_server_set_up_by_an_older_cairn_keeps_working_and_says_what_it_cannot_share() {
    let server = Server::start();
    let team = team(&server);
    let (alice, bob) = (&team.alice, &team.bob);
    // The server as cairn's schema 3 left it: no guideline_change table.
    let root = surrealdb::engine::any::connect(server.url()).await.unwrap();
    root.signin(surrealdb::opt::auth::Root {
        username: "root".into(),
        password: ROOT_PASSWORD.into(),
    })
    .await
    .unwrap();
    root.use_ns("acme")
        .use_db("github_com_acme_app")
        .await
        .unwrap();
    root.query("REMOVE TABLE guideline_change; UPSERT memory_meta:schema SET version = 3;")
        .await
        .and_then(|r| r.check())
        .unwrap();

    // Memories still go both ways.
    let added = alice.json(&[
        "memory",
        "add",
        "-t",
        "decision",
        "Invoices are immutable once sent",
    ]);
    let id = added["id"].as_str().unwrap().to_string();
    let listed = bob.json(&["memory", "list", "-t", "decision"]);
    assert_eq!(listed[0]["id"], id.as_str(), "{listed}");
    let review = json!({
        "author": "alice", "reviewer": "bob", "verdict": "comment", "review_id": "PR-3",
        "findings": [{"category": "naming", "file": "src/shop/cart.py",
                      "message": "Cart should be ShoppingCart", "disposition": "rejected",
                      "reason": "Cart is the domain's word"}]
    });
    let file = bob.repo.data_dir().join("review.json");
    std::fs::write(&file, review.to_string()).unwrap();
    let recorded = bob.json(&["record-review", file.to_str().unwrap()]);
    let pattern = recorded["rejections"][0]["id"]
        .as_str()
        .unwrap()
        .to_string();

    // A guideline change is kept in Alice's copy, and she is told why it is not shared.
    let change = json!({
        "file": "CLAUDE.md", "proposed_text": "Cart is the domain's word.", "rationale": "PR-3",
        "category": "naming", "memory_ids": [pattern]
    });
    let file = alice.repo.data_dir().join("change.json");
    std::fs::write(&file, change.to_string()).unwrap();
    let refused = alice.cairn(&["rules", "--record", file.to_str().unwrap()]);
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(!refused.status.success(), "{refused:?}");
    assert!(
        said.contains("schema version 3") && said.contains("cairn team init"),
        "{said}"
    );
    let rules = crate::support::rule_of(&alice.json(&["rules"]), "naming");
    assert_eq!(
        rules["changes"].as_array().map(Vec::len),
        Some(1),
        "{rules:#}"
    );

    // After `cairn team init` the next change is shared.
    let output = admin(alice, &["team", "init"]);
    assert!(output.status.success(), "{output:?}");
    let change = json!({
        "file": "CLAUDE.md", "proposed_text": "Say Cart, never Basket.", "rationale": "PR-3",
        "category": "naming", "memory_ids": [pattern]
    });
    std::fs::write(&file, change.to_string()).unwrap();
    let shared = alice.json(&["rules", "--record", file.to_str().unwrap()]);
    let shared_id = shared["change"]["id"].as_str().unwrap();
    let rules = crate::support::rule_of(&bob.json(&["rules"]), "naming");
    assert_eq!(rules["changes"][0]["id"], shared_id, "{rules:#}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_member_removed_while_offline_keeps_the_queue_and_can_export_it() {
    let mut server = Server::start();
    let team = team(&server);
    let (alice, bob) = (&team.alice, &team.bob);
    // A session Bob's cairn opened before the removal (a daemon or `cairn serve` keeps one).
    let open = cairn_server(&server, "bob", bob);
    assert!(open.changes_since(0).await.is_ok());

    server.kill();
    let mut queued = Vec::new();
    for i in 0..3 {
        let added = bob.json(&[
            "memory",
            "add",
            "-t",
            "decision",
            &format!("Offline decision {i}: refunds settle within five days"),
        ]);
        queued.push(added["id"].as_str().unwrap().to_string());
    }
    server.restart();
    let removed = admin(alice, &["team", "remove-member", "bob"]);
    assert!(removed.status.success(), "{removed:?}");

    // The open session is told, not set aside: the write is refused as a whole.
    let said = format!("{:?}", bob_push_after_removal(&open).await);
    assert!(said.contains("Removed"), "{said}");

    // Bob's next sign-in is refused with what to do; the queue stays, nothing set aside.
    let sync = bob.cairn(&["team", "sync"]);
    let err = String::from_utf8_lossy(&sync.stderr);
    assert!(!sync.status.success(), "{sync:?}");
    assert!(
        err.contains("refused the credentials of `bob`") && err.contains("cairn memory export"),
        "{err}"
    );
    let status = bob.json(&["status"]);
    assert_eq!(status["team"]["queued"], 3, "{status}");
    assert_eq!(status["team"]["rejected"], 0, "{status}");

    // The export saves what his copy holds, the queued writes included.
    let exported = bob.ok(&["memory", "export"]);
    for id in &queued {
        assert!(
            exported.contains(id.as_str()),
            "{id} missing from {exported}"
        );
    }
    assert_eq!(bob.json(&["status"])["team"]["queued"], 3);
    // And none of it reached the server.
    let as_alice = signed_in(&server, "alice", &alice.credentials()).await;
    let there = rows(&as_alice, "SELECT VALUE title FROM memory").await;
    assert!(there.is_empty(), "{there:?}");
}

/// A write through a session opened before its member was removed.
async fn bob_push_after_removal(
    open: &cairn::memory::team::Server,
) -> Result<(), cairn::storage::remote::RemoteError> {
    use cairn::memory::team::outbox::{Entry, Row};
    let memory = cairn::memory::Memory::new(
        "m_00000000000000b0".to_string(),
        cairn::memory::MemoryType::Decision,
        "late".to_string(),
        "written after removal".to_string(),
        1_700_000_000_000,
    );
    let row = Row {
        memory,
        vector: None,
        base: None,
    };
    open.push(&[Entry::new(vec![row], Vec::new(), None)]).await
}

#[tokio::test(flavor = "multi_thread")]
async fn a_decision_on_a_pending_memory_names_the_member_who_made_it() {
    let server = Server::start();
    let team = team(&server);
    let (alice, bob) = (&team.alice, &team.bob);
    alice
        .repo
        .write("cairn.toml", "[memory]\napproval = \"required\"\n");
    let mut serve = alice.command();
    serve.arg("serve").env("USER", "ann");
    let transport =
        TokioChildProcess::new(tokio::process::Command::from(serve)).expect("cairn serve starts");
    let client = ().serve(transport).await.expect("MCP handshake");
    let answer = call(
        &client,
        "remember",
        json!({"type": "decision", "content": "Refunds go back to the original payment method."}),
    )
    .await;
    let answer = answer.structured_content.clone().expect("structured");
    assert_eq!(answer["memory"]["status"], "pending", "{answer}");
    let id = answer["id"].as_str().unwrap().to_string();
    client.cancel().await.unwrap();

    // Bob approves it as the local user `bert`: the history names the member first.
    let approved = bob
        .command()
        .args(["memory", "approve", &id])
        .env("USER", "bert")
        .output()
        .unwrap();
    assert!(approved.status.success(), "{approved:?}");
    let said = alice.ok(&["memory", "history", &id]);
    assert!(said.contains("approved by bob (bert)"), "{said}");
    // Approved: the status is no longer written (approved is the default).
    let shown = alice.json(&["memory", "show", &id]);
    assert!(shown.get("status").is_none(), "{shown}");
}

/// A row of `table` written straight into the server by a member's own client, under the
/// next sequence number (what cairn's push does, without its checks).
async fn write_row(db: &Surreal<Any>, table: &str, key: &str, mut body: Value) {
    let object = body.as_object_mut().unwrap();
    object.remove("id");
    object.remove("key");
    db.query(
        "LET $seq = (UPSERT ONLY memory_meta:head SET seq += 1 RETURN VALUE seq);
         UPSERT type::record($table, $key) CONTENT object::extend($body, { seq: $seq });",
    )
    .bind(("table", table.to_string()))
    .bind(("key", key.to_string()))
    .bind(("body", body))
    .await
    .unwrap()
    .check()
    .unwrap();
}

/// The lines of `cairn doctor` about rows skipped from the team server.
fn skipped_lines(copy: &WorkingCopy) -> Vec<String> {
    let output = copy.cairn(&["doctor"]);
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter(|line| line.starts_with("team rows:"))
        .map(str::to_string)
        .collect()
}

/// A row that does not decode and a row over the import limits, written straight into the
/// server by a member's own client, are skipped past: the teammate's pull goes on to the
/// valid row after them, warns without quoting them, keeps its own copy of the memory the
/// oversized row overwrote, and `cairn doctor` names both, once.
#[tokio::test(flavor = "multi_thread")]
async fn an_undecodable_or_oversized_row_never_stalls_the_pull() {
    let server = Server::start();
    let team = team(&server);
    let (alice, bob) = (&team.alice, &team.bob);
    // A secret in both bad rows, built at run time so this file does not look like a leak.
    let token = ["gh", "p_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"].concat();
    let first = alice.json(&[
        "memory",
        "add",
        "-t",
        "decision",
        "--title",
        "Invoices are immutable",
        "An issued invoice is never edited; a correction is a credit note.",
    ]);
    let first_id = first["id"].as_str().unwrap().to_string();
    assert_eq!(
        bob.json(&["memory", "show", &first_id])["id"],
        first_id.as_str()
    );

    let as_alice = signed_in(&server, "alice", &alice.credentials()).await;
    let stored = rows(&as_alice, &format!("SELECT * FROM memory:{first_id}")).await;
    let mut malformed = stored[0].clone();
    malformed["confidence"] = json!(token);
    write_row(&as_alice, "memory", "m_00000000000000b1", malformed).await;
    let mut oversized = stored[0].clone();
    // Within what the pull checked before, over what an import takes.
    oversized["title"] = json!(format!(
        "{token} {}",
        "x".repeat(cairn::memory::model::MAX_TITLE_BYTES)
    ));
    write_row(&as_alice, "memory", &first_id, oversized).await;
    let later = alice.json(&[
        "memory",
        "add",
        "-t",
        "decision",
        "--title",
        "Credit notes name their invoice",
        "A credit note always carries the number of the invoice it corrects.",
    ]);
    let later_id = later["id"].as_str().unwrap().to_string();

    // Bob's pull gets the valid row after the bad ones and keeps his copy of the first.
    let output = bob.cairn(&["memory", "list", "-t", "decision", "--json"]);
    assert!(output.status.success(), "{output:?}");
    let listed: Value = serde_json::from_slice(&output.stdout).unwrap();
    let mut ids: Vec<&str> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap())
        .collect();
    ids.sort();
    let mut expected = vec![first_id.as_str(), later_id.as_str()];
    expected.sort();
    assert_eq!(ids, expected, "{listed}");
    let shown = bob.json(&["memory", "show", &first_id]);
    assert_eq!(shown["content"], first["memory"]["content"], "{shown}");
    let warned = String::from_utf8_lossy(&output.stderr);
    assert!(
        warned.contains("skipped memory `m_00000000000000b1`")
            && warned.contains(&format!("skipped memory `{first_id}`")),
        "{warned}"
    );
    assert!(!warned.contains(&token), "{warned}");

    // Doctor names both, with why, and never the secret.
    let lines = skipped_lines(bob);
    assert_eq!(lines.len(), 2, "{lines:?}");
    let repository = &lines[0];
    assert!(
        repository.contains("acme/github_com_acme_app: 2 row(s)"),
        "{repository}"
    );
    assert!(
        repository.contains("`m_00000000000000b1`") && repository.contains("does not decode"),
        "{repository}"
    );
    assert!(
        repository.contains(&format!("`{first_id}`")) && repository.contains("`title` is"),
        "{repository}"
    );
    assert!(!repository.contains(&token), "{repository}");
    assert!(lines[1].contains("acme/_org: none skipped"), "{lines:?}");

    // A bad row that is the newest on the server: the cursor still moves past it.
    let review = json!({
        "review_id": "PR-13", "at": 1_700_000_000_000_i64, "author": "alice",
        "verdict": "comment", "findings": token,
    });
    write_row(&as_alice, "review", "PR-13", review).await;
    let synced = bob.cairn(&["team", "sync"]);
    assert!(synced.status.success(), "{synced:?}");
    let warned = String::from_utf8_lossy(&synced.stderr);
    assert!(warned.contains("skipped review `PR-13`"), "{warned}");
    assert!(!warned.contains(&token), "{warned}");
    let head = rows(&as_alice, "SELECT VALUE seq FROM memory_meta:head").await;
    assert_eq!(markers(bob).into_iter().max(), head[0].as_u64(), "{head:?}");
    // The next pull neither warns again nor counts them twice.
    let again = bob.cairn(&["team", "sync"]);
    assert!(again.status.success(), "{again:?}");
    assert!(
        !String::from_utf8_lossy(&again.stderr).contains("skipped"),
        "{again:?}"
    );
    let lines = skipped_lines(bob);
    assert!(lines[0].contains(": 3 row(s)"), "{lines:?}");
    assert!(
        lines[0].contains("newest first: review `PR-13`"),
        "{lines:?}"
    );
    // His copy still holds both decisions.
    let listed = bob.json(&["memory", "list", "-t", "decision"]);
    assert_eq!(listed.as_array().unwrap().len(), 2, "{listed}");
}

/// The pull cursors of a working copy's team copies (`team-*/memory.seq`).
fn markers(copy: &WorkingCopy) -> Vec<u64> {
    std::fs::read_dir(copy.repo.data_dir())
        .unwrap()
        .filter_map(|entry| {
            let path = entry.unwrap().path().join("memory.seq");
            std::fs::read_to_string(path).ok()?.trim().parse().ok()
        })
        .collect()
}

/// An outbox whose last line a crash cut inside a character: status counts the write still
/// queued and the cut line, reads and writes go on with the server away, and the cut line is
/// set aside by the next write.
#[test]
fn an_outbox_cut_inside_a_character_never_blocks_reads_or_writes() {
    use cairn::config::team::{Credentials, Identity, Secret, TeamConfig};
    use cairn::memory::team::Link;
    use cairn::memory::team::outbox::{Entry, Row};
    use cairn::memory::{Memory, MemoryType};

    // A port nothing listens on: the server is away.
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("ws://127.0.0.1:{port}");
    let repo = TestRepo::new();
    repo.git(&["remote", "add", "origin", "https://github.com/acme/app"]);
    let config = TeamConfig {
        url: url.clone(),
        identity: Identity::new("github.com/acme/app", None).unwrap(),
        credentials: Credentials {
            developer: "alice".to_string(),
            password: Secret::new("a-password-for-tests"),
        },
    };
    let outbox = Link::new(std::sync::Arc::new(config), repo.data_dir()).outbox;
    let entry = |id: &str, title: &str| {
        let memory = Memory::new(
            id.to_string(),
            MemoryType::Decision,
            title.to_string(),
            format!("{title}: amounts are integers of cents"),
            1,
        );
        let row = Row {
            memory,
            vector: None,
            base: None,
        };
        Entry::new(vec![row], Vec::new(), None)
    };
    outbox
        .append(&[entry("m_00000000000000c1", "Queued café decision")])
        .unwrap();
    let cut = serde_json::to_vec(&entry("m_00000000000000c2", "Cut café ✓ 日本 decision")).unwrap();
    let check = cut.windows(3).position(|w| w == "✓".as_bytes()).unwrap();
    let fragment = &cut[..check + 2];
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(outbox.path())
        .unwrap();
    std::io::Write::write_all(&mut file, fragment).unwrap();

    let cairn = |args: &[&str]| {
        repo.cairn_command(repo.data_dir())
            .arg("--db")
            .arg(&url)
            .env_remove("CAIRN_DB")
            .env("CAIRN_TEAM_DEVELOPER", "alice")
            .env("CAIRN_TEAM_PASSWORD", "a-password-for-tests")
            .args(args)
            .output()
            .unwrap()
    };
    let ok = |args: &[&str]| {
        let output = cairn(args);
        assert!(
            output.status.success(),
            "cairn {args:?} failed:\n{}\n{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8(output.stdout).unwrap()
    };
    let json = |args: &[&str]| -> Value {
        let mut all = args.to_vec();
        all.push("--json");
        serde_json::from_str(&ok(&all)).unwrap()
    };

    let status = json(&["status"]);
    assert_eq!(status["team"]["queued"], 1, "{status}");
    assert_eq!(status["team"]["unreadable"], 1, "{status}");
    let listed = ok(&["memory", "list"]);
    assert!(listed.contains("m_00000000000000c1"), "{listed}");
    assert!(!listed.contains("m_00000000000000c2"), "{listed}");

    ok(&[
        "memory",
        "add",
        "-t",
        "decision",
        "--title",
        "Written after the crash",
        "Refunds are recorded as negative integers of cents, never as floats",
    ]);
    let status = json(&["status"]);
    assert_eq!(status["team"]["queued"], 2, "{status}");
    assert_eq!(status["team"]["unreadable"], 0, "{status}");
    let listed = ok(&["memory", "list"]);
    assert!(
        listed.contains("m_00000000000000c1") && listed.contains("Refunds are recorded"),
        "{listed}"
    );
    let torn = std::fs::read_to_string(outbox.torn_path()).unwrap();
    let note: Value = serde_json::from_str(torn.trim()).unwrap();
    let kept = String::from_utf8_lossy(fragment);
    assert_eq!(note["fragment"], *kept, "{torn}");

    // The writes stay queued while the server is away: sync says so, and does not fail.
    let sync = cairn(&["team", "sync"]);
    assert_eq!(sync.status.code(), Some(2), "{sync:?}");
}

/// Whether `who` signs in with `password` to each of `databases` of `acme`, in order.
async fn signs_in(server: &Server, who: &str, password: &str, databases: &[&str]) -> Vec<bool> {
    let mut answers = Vec::new();
    for database in databases {
        answers.push(sign_in(server, who, password, database).await.is_ok());
    }
    answers
}

fn stdout(output: &Output) -> String {
    assert!(output.status.success(), "{output:?}");
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// One member identity per developer per server: Alice, added to a second repository of the
/// organisation, keeps her one password for both and the organisation's database; a rotation
/// replaces it everywhere; removing Bob ends his open session and takes him off the
/// organisation's database too, while Alice, removed from one repository, keeps the
/// organisation's memories through the other, and each removal says so.
#[tokio::test(flavor = "multi_thread")]
async fn one_identity_per_developer_across_repositories() {
    const APP: &str = "github_com_acme_app";
    const BILLING: &str = "github_com_acme_billing";
    const ALL: [&str; 3] = [APP, BILLING, "_org"];
    let server = Server::start();
    let team = team(&server);
    let (alice, bob) = (&team.alice, &team.bob);
    let first = password_in(&alice.credentials());

    // Alice's second repository of the organisation, with her same credentials file.
    let billing = WorkingCopy {
        repo: TestRepo::new(),
        url: server.url(),
        config_home: alice.config_home.clone(),
    };
    billing
        .repo
        .git(&["remote", "add", "origin", "git@github.com:acme/billing.git"]);
    stdout(&admin(&billing, &["team", "init"]));
    assert_eq!(
        signs_in(&server, "alice", &first, &ALL).await,
        [true, false, true]
    );
    let credentials = alice.credentials();
    let added = admin(
        &billing,
        &[
            "team",
            "add-member",
            "alice",
            "-o",
            credentials.to_str().unwrap(),
        ],
    );
    let said = stdout(&added);
    assert!(
        said.contains("acme/github_com_acme_billing and acme/_org")
            && said.contains("unchanged")
            && !said.contains(&first),
        "{said}"
    );
    assert!(
        String::from_utf8_lossy(&added.stderr).contains("no credentials file written"),
        "{added:?}"
    );
    assert_eq!(password_in(&credentials), first, "her file is left alone");
    assert_eq!(signs_in(&server, "alice", &first, &ALL).await, [true; 3]);
    billing.ok(&[
        "memory",
        "add",
        "-t",
        "decision",
        "Billing amounts are integer cents, never floats",
    ]);
    alice.ok(&["memory", "search", "anything"]);
    // Added again to the first repository: nothing changes either.
    let again = stdout(&admin(alice, &["team", "add-member", "alice"]));
    assert!(!again.contains("password ="), "{again}");
    assert_eq!(signs_in(&server, "alice", &first, &ALL).await, [true; 3]);

    // A rotation: the new password everywhere she belongs, the old one nowhere.
    let file = alice.config_home.join("alice-rotated.toml");
    let rotated = admin(
        alice,
        &[
            "team",
            "rotate-password",
            "alice",
            "-o",
            file.to_str().unwrap(),
        ],
    );
    stdout(&rotated);
    let warned = String::from_utf8_lossy(&rotated.stderr);
    assert!(
        warned.contains("acme/_org, acme/github_com_acme_app, acme/github_com_acme_billing"),
        "{warned}"
    );
    let second = password_in(&file);
    assert_ne!(second, first);
    assert_eq!(signs_in(&server, "alice", &first, &ALL).await, [false; 3]);
    assert_eq!(signs_in(&server, "alice", &second, &ALL).await, [true; 3]);
    std::fs::copy(&file, &credentials).unwrap();
    billing.ok(&["memory", "search", "cents"]);
    // Bob's password was not touched.
    let bobs = password_in(&bob.credentials());
    assert_eq!(
        signs_in(&server, "bob", &bobs, &[APP, "_org"]).await,
        [true; 2]
    );

    // Bob removed: off the repository and the organisation, his open session ended.
    alice.ok(&[
        "memory",
        "add",
        "-t",
        "decision",
        "Invoices are never edited once issued",
    ]);
    let open = signed_in(&server, "bob", &bob.credentials()).await;
    assert_eq!(
        rows(&open, "SELECT VALUE title FROM memory").await,
        [json!("Invoices are never edited once issued")]
    );
    let said = stdout(&admin(alice, &["team", "remove-member", "bob"]));
    assert!(
        said.contains("bob removed from acme/github_com_acme_app and acme/_org")
            && said.contains("stays in its local copy")
            && !said.contains("still readable to bob: acme/_org"),
        "{said}"
    );
    for query in [
        "SELECT * FROM memory",
        "SELECT * FROM review",
        "SELECT * FROM memory_meta",
        "SELECT * FROM applied",
    ] {
        assert_eq!(rows(&open, query).await, Vec::<Value>::new(), "{query}");
    }
    let _ = open
        .query("UPSERT memory_meta:head SET seq += 1; CREATE memory:m_00000000000000e1 CONTENT { kind: 'decision', title: 'late', content: 'written after removal', seq: 2 }")
        .await;
    let as_alice = signed_in(&server, "alice", &credentials).await;
    assert!(
        rows(&as_alice, "SELECT id FROM memory:m_00000000000000e1")
            .await
            .is_empty()
    );
    assert_eq!(
        signs_in(&server, "bob", &bobs, &[APP, "_org"]).await,
        [false; 2]
    );
    let refused = bob.cairn(&["memory", "search", "anything"]);
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("refused the credentials of `bob`"),
        "{refused:?}"
    );
    assert_eq!(stdout(&admin(alice, &["team", "members"])), "alice\n");

    // Alice removed from billing keeps the organisation's memories through the first
    // repository, and is told so.
    let said = stdout(&admin(&billing, &["team", "remove-member", "alice"]));
    assert!(
        said.contains("alice removed from acme/github_com_acme_billing:")
            && said.contains(
                "still readable to alice: acme/_org, the organisation's memories, as a member of acme/github_com_acme_app"
            ),
        "{said}"
    );
    assert_eq!(
        signs_in(&server, "alice", &second, &ALL).await,
        [true, false, true]
    );

    // Rotating someone who belongs nowhere says so.
    let nobody = admin(alice, &["team", "rotate-password", "bob"]);
    assert!(!nobody.status.success());
    assert!(
        String::from_utf8_lossy(&nobody.stderr).contains("bob is not a member of any database"),
        "{nobody:?}"
    );
}

/// `surreal export` or `surreal import` of one database of the `acme` namespace, as root
/// (the export without the access method, whose signing key it cannot carry).
fn backup(server: &Server, verb: &str, database: &str, file: &Path) {
    let mut command = Command::new(surreal_binary());
    command.arg(verb);
    if verb == "export" {
        command.args(["--accesses", "false"]);
    }
    let output = command
        .args(["--endpoint", &format!("http://127.0.0.1:{}", server.port)])
        .args(["--username", "root", "--password", ROOT_PASSWORD])
        .args(["--namespace", "acme", "--database", database])
        .arg(file)
        .output()
        .unwrap();
    assert!(output.status.success(), "surreal {verb}: {output:?}");
}

/// The documented backup and restore: `surreal export` of both databases, the server lost,
/// a new one given the backup with `surreal import` and `cairn team init`. The members' copies are newer than the
/// backup: each notices the server's numbering went back, offers again what it holds from
/// after the backup (a memory, a forget), and pulls everything anew; nothing is lost or
/// doubled, and later writes reach everyone.
#[tokio::test(flavor = "multi_thread")]
async fn a_server_restored_from_a_backup_is_brought_up_to_date_by_its_members() {
    let mut server = Server::start();
    let team = team(&server);
    let (alice, bob) = (&team.alice, &team.bob);
    let add = |copy: &WorkingCopy, text: &str| -> String {
        copy.json(&["memory", "add", "-t", "decision", text])["id"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let kept = add(alice, "Invoices are immutable once sent");
    let dropped = add(bob, "Refunds wait for the finance team's approval");
    let backups = tempfile::tempdir().unwrap();
    for database in ["github_com_acme_app", "_org"] {
        backup(&server, "export", database, &backups.path().join(database));
    }

    // After the backup: a new memory and a forget, seen by both copies.
    let later = add(alice, "Webhooks are retried with exponential backoff");
    bob.ok(&["memory", "forget", &dropped]);
    alice.ok(&["team", "sync"]);
    bob.ok(&["team", "sync"]);

    // The server is lost; a new one is given the backup.
    server.kill();
    std::fs::remove_dir_all(server.dir.path().join("data")).unwrap();
    server.restart();
    for database in ["github_com_acme_app", "_org"] {
        backup(&server, "import", database, &backups.path().join(database));
    }
    // The members' sign-in is defined again (a new signing key).
    let output = admin(alice, &["team", "init"]);
    assert!(output.status.success(), "{output:?}");

    // Each member's next syncs offer again what the backup lacks, once.
    for copy in [bob, alice, bob, alice] {
        copy.cairn(&["team", "sync"]);
    }
    let synced = alice.json(&["team", "sync"]);
    assert_eq!(synced["status"]["queued"], 0, "{synced}");
    let as_alice = signed_in(&server, "alice", &alice.credentials()).await;
    let ids = sorted_ids(
        &as_alice,
        "SELECT VALUE record::id(id) FROM memory WHERE forgotten != true ORDER BY seq",
    )
    .await;
    let mut expected = vec![kept.clone(), later.clone()];
    expected.sort();
    assert_eq!(ids, expected, "live memories on the restored server");

    // A write after the restore reaches the other member: the cursors follow the new
    // numbering.
    let after = add(bob, "Staging deploys run at noon");
    let mut all = vec![kept, later, after];
    all.sort();
    assert_eq!(decision_ids(alice), all);
    assert_eq!(decision_ids(bob), all);
}
