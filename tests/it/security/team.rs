//! Team mode against people who would misuse it: a repository that names a server to collect
//! the user's credentials, and a member with a hand-written client trying to hide or rewrite
//! the team's writes (a real SurrealDB server on loopback, as in the team tests).

use std::net::TcpListener;
use std::process::{Command, Output};

use serde_json::{Value, json};

use crate::team::{Server, WorkingCopy, password_in, rows, signed_in, team};

/// A port that records whether anyone connected: a server the repository would like the
/// user's password sent to.
struct Collector {
    listener: TcpListener,
}

impl Collector {
    fn new() -> Collector {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        Collector { listener }
    }

    fn url(&self) -> String {
        format!("ws://{}", self.listener.local_addr().unwrap())
    }

    fn was_contacted(&self) -> bool {
        self.listener.accept().is_ok()
    }
}

/// cairn in `who`'s clone with only the repository's settings (no --db), credentials from
/// their config directory, and, if given, from the environment too.
fn cairn_without_db(who: &WorkingCopy, env_password: Option<&str>, args: &[&str]) -> Output {
    let mut command: Command = who.repo.cairn_command(who.repo.data_dir());
    command
        .env("XDG_CONFIG_HOME", &who.config_home)
        .env_remove("CAIRN_DB")
        .env_remove("CAIRN_TEAM_DEVELOPER")
        .env_remove("CAIRN_TEAM_PASSWORD");
    if let Some(password) = env_password {
        command
            .env("CAIRN_TEAM_DEVELOPER", "alice")
            .env("CAIRN_TEAM_PASSWORD", password);
    }
    command.args(args).output().unwrap()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_repository_cannot_choose_where_the_users_credentials_go() {
    let server = Server::start();
    let team = team(&server);
    let alice = &team.alice;
    let password = password_in(&alice.credentials());
    let collector = Collector::new();
    let session_start =
        json!({"hook_event_name": "SessionStart", "session_id": "s", "cwd": alice.repo.path()});

    // The repository names its own server: nothing is sent there, with credentials from the
    // environment or from the credentials file, by a command, the session hook or a sync.
    alice.repo.write(
        "cairn.toml",
        format!("[team]\ndb = \"{}\"\n", collector.url()),
    );
    for env in [Some(password.as_str()), None] {
        let search = cairn_without_db(alice, env, &["memory", "search", "anything"]);
        assert!(!search.status.success());
        assert!(
            stderr(&search).contains("a server you have not chosen")
                && stderr(&search).contains("cairn team trust"),
            "{}",
            stderr(&search)
        );
        let sync = cairn_without_db(alice, env, &["team", "sync"]);
        assert!(!sync.status.success());
        let mut hook = alice.repo.cairn_command(alice.repo.data_dir());
        hook.env("XDG_CONFIG_HOME", &alice.config_home)
            .env_remove("CAIRN_DB");
        if let Some(password) = env {
            hook.env("CAIRN_TEAM_DEVELOPER", "alice")
                .env("CAIRN_TEAM_PASSWORD", password);
        }
        let mut child = hook
            .arg("hook")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        use std::io::Write;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(session_start.to_string().as_bytes())
            .unwrap();
        child.wait_with_output().unwrap();
        let init = cairn_without_db(alice, env, &["team", "init"]);
        assert!(!init.status.success());
    }
    assert!(
        !collector.was_contacted(),
        "the repository's server was contacted"
    );

    // The real server named by the repository: refused until the user trusts it, then used
    // with the credentials file issued for it.
    alice
        .repo
        .write("cairn.toml", format!("[team]\ndb = \"{}\"\n", server.url()));
    let before = cairn_without_db(alice, None, &["memory", "search", "anything"]);
    assert!(
        stderr(&before).contains("cairn team trust"),
        "{}",
        stderr(&before)
    );
    let trusted = cairn_without_db(alice, None, &["team", "trust"]);
    assert!(trusted.status.success(), "{}", stderr(&trusted));
    let trust_file = alice.config_home.join("cairn/trusted.toml");
    assert!(trust_file.exists());
    assert!(!trust_file.starts_with(alice.repo.path()));
    let after = cairn_without_db(alice, None, &["memory", "search", "anything"]);
    assert!(after.status.success(), "{}", stderr(&after));

    // Trust is for that server: the repository pointing elsewhere is refused again.
    alice.repo.write(
        "cairn.toml",
        format!("[team]\ndb = \"{}\"\n", collector.url()),
    );
    let moved = cairn_without_db(alice, Some(&password), &["memory", "search", "anything"]);
    assert!(
        stderr(&moved).contains("cairn team trust"),
        "{}",
        stderr(&moved)
    );
    assert!(!collector.was_contacted());

    // Named by the user, another server still does not get credentials issued for this one.
    std::fs::remove_file(alice.repo.path().join("cairn.toml")).unwrap();
    let elsewhere = cairn_without_db(
        alice,
        None,
        &["--db", &collector.url(), "memory", "search", "anything"],
    );
    assert!(!elsewhere.status.success());
    assert!(
        stderr(&elsewhere).contains("are for") && !stderr(&elsewhere).contains(&password),
        "{}",
        stderr(&elsewhere)
    );
    assert!(!collector.was_contacted());

    // Plain ws:// leaves this machine only as wss://.
    let plain = cairn_without_db(
        alice,
        Some(&password),
        &[
            "--db",
            "ws://cairn.example.com:8000",
            "memory",
            "search",
            "x",
        ],
    );
    assert!(stderr(&plain).contains("use wss://"), "{}", stderr(&plain));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_member_cannot_move_the_sequence_or_hide_and_rewrite_the_teams_writes() {
    let server = Server::start();
    let team = team(&server);
    let (alice, bob) = (&team.alice, &team.bob);
    alice.json(&[
        "memory",
        "add",
        "-t",
        "decision",
        "--title",
        "Money is Decimal",
        "Prices are Decimal, never float, from the database to the template.",
    ]);
    let review = json!({
        "author": "bob",
        "reviewer": "alice",
        "verdict": "changes_requested",
        "findings": [{"category": "naming", "message": "Use snake_case for helpers", "disposition": "implemented"}]
    });
    let file = alice.repo.data_dir().join("review.json");
    std::fs::write(&file, review.to_string()).unwrap();
    alice.ok(&["record-review", file.to_str().unwrap()]);
    let found = bob.json(&["memory", "search", "Decimal"]);
    assert_eq!(found["memories"].as_array().unwrap().len(), 1, "{found}");

    let as_bob = signed_in(&server, "bob", &bob.credentials()).await;
    let head = async || -> i64 {
        let seq = rows(&as_bob, "SELECT VALUE seq FROM memory_meta:head").await;
        seq[0].as_i64().unwrap()
    };
    let start = head().await;
    assert!(start > 0);
    // Moving the head back (so numbers are reused and teammates never pull them) is refused.
    let _ = as_bob.query("UPDATE memory_meta:head SET seq = 0").await;
    let _ = as_bob
        .query("UPSERT memory_meta:head CONTENT { seq: 1 }")
        .await;
    let _ = as_bob.query("DELETE memory_meta:head").await;
    assert_eq!(head().await, start);
    // A row numbered far beyond the head (teammates would skip every later write) is refused.
    let _ = as_bob
        .query("CREATE memory:far CONTENT { kind: 'decision', title: 'far', content: 'far', seq: 999999999 }")
        .await;
    assert!(rows(&as_bob, "SELECT * FROM memory:far").await.is_empty());
    // A review someone else recorded cannot be rewritten.
    let recorded = rows(&as_bob, "SELECT verdict, findings FROM review").await;
    assert_eq!(recorded.len(), 1);
    let _ = as_bob
        .query("UPDATE review SET verdict = 'approved', findings = []")
        .await;
    let reviews = rows(&as_bob, "SELECT verdict, findings FROM review").await;
    assert_eq!(reviews, recorded);
    // A row that does not decode, numbered within the head: skipped, not fatal.
    let mut bumped = as_bob
        .query("UPDATE memory_meta:head SET seq += 1 RETURN VALUE seq")
        .await
        .unwrap();
    let bumped: Vec<Value> = bumped.take(0).unwrap();
    let garbage = format!(
        "CREATE memory:garbage CONTENT {{ kind: 'no such kind', title: 42, seq: {} }}",
        bumped[0]
    );
    as_bob.query(garbage).await.unwrap().check().unwrap();

    // Alice's next write still reaches Bob, and his answers still work.
    alice.json(&[
        "memory",
        "add",
        "-t",
        "decision",
        "--title",
        "Dates are UTC",
        "Timestamps are stored in UTC and converted only in templates.",
    ]);
    let found = bob.json(&["memory", "search", "UTC timestamps"]);
    let titles: Vec<&str> = found["memories"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["memory"]["title"].as_str().unwrap())
        .collect();
    assert_eq!(titles, vec!["Dates are UTC"], "{found}");
    let rules = bob.json(&["rules"]);
    assert!(rules.to_string().contains("naming"), "{rules}");
}
