//! mem0 clients against the real daemon: the pinned `mem0ai` SDK in a venv the test makes
//! from `.ci/fetch-mem0ai`'s wheels, a Ruby Faraday client making pikuri's calls, raw HTTP for
//! bad input and for the keys, and MCP, the command line and the pages reading what mem0
//! clients wrote (and mem0 clients reading what MCP wrote).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

use reqwest::Method;
use serde_json::{Value, json};

use crate::daemon::{Daemon, http_client};
use crate::mcp::{call, text};
use crate::support::{TestRepo, run};
use crate::ui;

/// The `mem0ai` release the SDK test runs (`.ci/fetch-mem0ai` fetches its wheels).
pub const MEM0AI: &str = "2.2.1";

fn base(daemon: &Daemon) -> String {
    format!("http://127.0.0.1:{}", daemon.port)
}

/// A mem0 call with the daemon's token, as the SDK sends it, and a JSON body when given.
fn request(
    daemon: &Daemon,
    method: Method,
    path: &str,
    body: Option<Value>,
) -> reqwest::RequestBuilder {
    let mut request = reqwest::Client::new()
        .request(method, format!("{}{path}", base(daemon)))
        .header("authorization", format!("Token {}", daemon.token));
    if let Some(body) = body {
        request = request
            .header("content-type", "application/json")
            .body(body.to_string());
    }
    request
}

/// The status and JSON body of a call.
async fn reply(request: reqwest::RequestBuilder) -> (u16, Value) {
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    let body = response.text().await.unwrap();
    let value =
        serde_json::from_str(&body).unwrap_or_else(|_| panic!("{status}: not JSON: {body}"));
    (status, value)
}

/// Adds `content` as one user turn for `ids`; the results.
async fn add(daemon: &Daemon, content: &str, ids: Value) -> Vec<Value> {
    let mut body = json!({"messages": [{"role": "user", "content": content}]});
    body.as_object_mut()
        .unwrap()
        .extend(ids.as_object().unwrap().clone());
    let (status, answer) = reply(request(daemon, Method::POST, "/memories", Some(body))).await;
    assert_eq!(status, 200, "{answer}");
    answer["results"].as_array().unwrap().clone()
}

/// The texts of the memories a mem0 search finds.
async fn searched(daemon: &Daemon, query: &str, filters: Value) -> Vec<String> {
    let body = json!({"query": query, "filters": filters, "top_k": 10});
    let (status, answer) = reply(request(daemon, Method::POST, "/search", Some(body))).await;
    assert_eq!(status, 200, "{answer}");
    texts(&answer["results"])
}

fn texts(results: &Value) -> Vec<String> {
    results
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["memory"].as_str().unwrap().to_string())
        .collect()
}

/// Every memory the command line lists, superseded ones included.
fn every_memory(repo: &TestRepo) -> Vec<Value> {
    let listed: Value =
        serde_json::from_str(&repo.cairn_ok(&["memory", "list", "--all", "--json"])).unwrap();
    listed.as_array().unwrap().clone()
}

/// Where `.ci/fetch-mem0ai` keeps the SDK's wheels and those it depends on.
fn wheelhouse() -> PathBuf {
    let cache = std::env::var_os("CAIRN_WHEEL_CACHE").map_or_else(
        || {
            let home = std::env::var_os("HOME").expect("HOME is set");
            Path::new(&home).join(".cache/cairn/wheels")
        },
        PathBuf::from,
    );
    cache.join(format!("mem0ai-{MEM0AI}"))
}

/// A Python with the pinned `mem0ai` installed from the wheelhouse (never from the network),
/// made once per target directory.
fn mem0ai_python() -> PathBuf {
    static MAKING: Mutex<()> = Mutex::new(());
    let _making = MAKING.lock().unwrap_or_else(|e| e.into_inner());
    let wheels = wheelhouse();
    assert!(
        wheels.join("complete").exists(),
        "the mem0ai {MEM0AI} SDK's wheels are not in {}: run .ci/fetch-mem0ai (.ci/deps runs it)",
        wheels.display()
    );
    let venv = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("mem0ai-{MEM0AI}"));
    let python = venv.join("bin").join("python");
    let installed = venv.join("installed");
    if !installed.exists() {
        run(Command::new("python3")
            .args(["-m", "venv", "--clear"])
            .arg(&venv));
        run(Command::new(&python)
            .args([
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
                "--no-index",
                "--find-links",
            ])
            .arg(&wheels)
            .arg(format!("mem0ai=={MEM0AI}")));
        std::fs::write(&installed, MEM0AI).unwrap();
    }
    python
}

fn script(name: &str) -> PathBuf {
    crate::support::fixture("mem0").join(name)
}

/// Runs pikuri's calls from Ruby against `daemon`, sending `key` when given; they must all
/// read what they expect.
fn pikuri(daemon: &Daemon, key: Option<&str>) {
    let faraday = Command::new("ruby")
        .args(["-e", "require 'faraday'"])
        .output();
    assert!(
        faraday.as_ref().is_ok_and(|o| o.status.success()),
        "ruby with Faraday is needed (Debian's ruby and ruby-faraday; .ci/deps installs them): {faraday:?}"
    );
    let mut command = Command::new("ruby");
    command
        .arg(script("pikuri_client.rb"))
        .env("MEM0_URL", base(daemon));
    if let Some(key) = key {
        command.env("MEM0_API_KEY", key);
    }
    let output = run(&mut command);
    assert_eq!(String::from_utf8_lossy(&output.stdout).trim(), "ok");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_mem0ai_sdk_adds_searches_lists_updates_and_deletes() {
    let python = mem0ai_python();
    let repo = TestRepo::with_fixture("mixed");
    let daemon = Daemon::start(&repo);
    let mem0_home = tempfile::tempdir().unwrap();
    let output = run(Command::new(python)
        .arg(script("sdk_client.py"))
        .env("CAIRN_HOST", base(&daemon))
        .env("CAIRN_TOKEN", &daemon.token)
        .env("MEM0_TELEMETRY", "false")
        .env("MEM0_DIR", mem0_home.path()));
    let made: Value = serde_json::from_slice(&output.stdout).unwrap();
    // What the SDK deleted and reset is gone for cairn too, and nothing else was written.
    let ids: Vec<Value> = every_memory(&repo)
        .iter()
        .map(|m| m["id"].clone())
        .collect();
    assert!(!ids.contains(&made["deleted"]), "{ids:?}");
    assert!(!ids.contains(&made["project"]), "{ids:?}");
    assert!(ids.is_empty(), "{ids:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn pikuris_rest_calls_from_ruby_read_mem0s_shapes() {
    let repo = TestRepo::with_fixture("mixed");
    let daemon = Daemon::start(&repo);
    pikuri(&daemon, Some(&daemon.token));
}

#[tokio::test(flavor = "multi_thread")]
async fn what_mem0_clients_write_mcp_the_command_line_and_the_pages_read_and_the_other_way_round() {
    let repo = TestRepo::with_fixture("mixed");
    repo.index();
    let daemon = Daemon::start(&repo);
    let habit = "Alice writes the failing test before the fix.";
    let rule = "Every money amount in the cart is an integer number of cents.";
    let alice = add(
        &daemon,
        habit,
        json!({"user_id": "alice", "agent_id": "nectr"}),
    )
    .await;
    assert_eq!(alice[0]["type"], "developer_pattern", "{alice:?}");
    let project = add(
        &daemon,
        rule,
        json!({"agent_id": "nectr", "metadata": {"memory_type": "decision", "source_pr": 12}}),
    )
    .await;
    assert_eq!(project[0]["type"], "decision", "{project:?}");

    // The memories page shows it, with its writer and agent.
    let (cookie, _) = ui::log_in(&daemon, &ui::code_of(&ui::log_in_address(&repo))).await;
    let id = project[0]["id"].as_str().unwrap();
    let (status, page) = ui::get_with(&daemon, &format!("/ui/memories/{id}"), Some(&cookie)).await;
    assert_eq!(status, 200, "{page}");
    for shown in [rule, "mem0", "nectr"] {
        assert!(page.contains(shown), "{shown}: {page}");
    }

    // MCP reads them in their scopes.
    let client = http_client(&daemon).await;
    let developer = text(
        &call(
            &client,
            "search_developer_memory",
            json!({"developer": "alice", "query": "failing test"}),
        )
        .await,
    );
    assert!(developer.contains(habit), "{developer}");
    let project_text = text(
        &call(
            &client,
            "search_project_memory",
            json!({"query": "money cents"}),
        )
        .await,
    );
    assert!(project_text.contains(rule), "{project_text}");
    assert!(!project_text.contains(habit), "{project_text}");
    // So does the command line, with the labels kept.
    let cli: Value = serde_json::from_str(&repo.cairn_ok(&[
        "memory",
        "search",
        "failing test",
        "--developer",
        "alice",
        "--json",
    ]))
    .unwrap();
    let found = &cli["memories"][0]["memory"];
    assert_eq!(found["content"], habit, "{cli}");
    assert_eq!(found["agent"], "nectr", "{cli}");
    assert_eq!(found["written_by"], "mem0", "{cli}");
    let decision = every_memory(&repo)
        .into_iter()
        .find(|m| m["content"] == rule)
        .unwrap();
    assert_eq!(
        decision["metadata"],
        json!({"memory_type": "decision", "source_pr": 12})
    );

    // What MCP writes, mem0 clients find: by query, by user and by metadata-free listing.
    let remembered = call(
        &client,
        "remember",
        json!({"type": "risk_module", "content": "The payment webhook handler retries without idempotency keys.", "paths": ["src/shop/cart.py"]}),
    )
    .await;
    assert_ne!(remembered.is_error, Some(true), "{}", text(&remembered));
    call(
        &client,
        "remember",
        json!({"type": "developer_pattern", "developer": "bob", "content": "Bob forgets to close database cursors on error paths."}),
    )
    .await;
    let found = searched(&daemon, "webhook idempotency", json!({})).await;
    assert_eq!(
        found[0],
        "The payment webhook handler retries without idempotency keys."
    );
    let bobs = searched(&daemon, "database cursors", json!({"user_id": "bob"})).await;
    assert_eq!(
        bobs,
        ["Bob forgets to close database cursors on error paths."]
    );
    // Another developer's memories stay in their scope.
    assert!(
        searched(&daemon, "database cursors", json!({}))
            .await
            .is_empty()
    );
    let (_, listed) = reply(request(
        &daemon,
        Method::GET,
        "/memories?agent_id=nectr",
        None,
    ))
    .await;
    assert_eq!(texts(&listed["results"]), [rule], "{listed}");
    let (_, metadata) = reply(request(
        &daemon,
        Method::POST,
        "/v3/memories/",
        Some(json!({"filters": {"metadata": {"source_pr": {"in": [11, 12]}}}})),
    ))
    .await;
    assert_eq!(texts(&metadata["results"]), [rule], "{metadata}");

    // Removals in bulk take only what mem0 clients wrote, for the ids named.
    let (status, removed) = reply(request(
        &daemon,
        Method::DELETE,
        "/memories?user_id=alice",
        None,
    ))
    .await;
    assert_eq!((status, &removed["deleted"]), (200, &json!(1)), "{removed}");
    let (status, reset) = reply(request(&daemon, Method::POST, "/reset", None)).await;
    assert_eq!((status, &reset["deleted"]), (200, &json!(1)), "{reset}");
    let left: Vec<Value> = every_memory(&repo)
        .into_iter()
        .map(|m| m["content"].clone())
        .collect();
    assert_eq!(left.len(), 2, "{left:?}");
    assert!(left.contains(&json!(
        "Bob forgets to close database cursors on error paths."
    )));
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_input_gets_a_clear_4xx_in_mem0s_shape_and_stores_nothing() {
    let repo = TestRepo::with_fixture("mixed");
    let daemon = Daemon::start(&repo);
    let user = |content: &str| json!({"messages": [{"role": "user", "content": content}], "user_id": "alice"});
    let too_long = json!({
        "messages": [{"role": "user", "content": "a".repeat(300 * 1024)}],
        "user_id": "alice",
    });
    // A secret anywhere in what would be stored refuses the request whole, and no answer
    // repeats it.
    let key = ["AKIA", "Z7Q4", "K2M9", "XW3T", "R8PB"].concat();
    let with_key = format!("Deploys read the key {key} from the vault.");
    let cases: Vec<(Method, &str, Option<String>, u16, &str)> = vec![
        (Method::POST, "/memories", Some(json!({"messages": [{"role": "user", "content": "Tabs."}, {"role": "user", "content": with_key}], "user_id": "alice"}).to_string()), 400, "messages[1].content holds what looks like a secret (aws-access-key)"),
        (Method::POST, "/memories", Some(json!({"messages": "Tabs.", "user_id": "alice", "metadata": {"note": with_key}}).to_string()), 400, "`metadata` holds what looks like a secret"),
        (Method::POST, "/memories", Some(json!({"messages": "Tabs.", "user_id": key}).to_string()), 400, "secret"),
        (Method::POST, "/memories", Some(json!({"messages": [{"role": key, "content": "Tabs."}], "user_id": "alice"}).to_string()), 400, "role (value withheld)"),
        (Method::POST, "/memories", Some(json!({"messages": "Tabs.", "user_id": "alice", "infer": key}).to_string()), 422, "expected a boolean"),
        (Method::POST, "/memories", Some(format!("{{\"messages\": \"{key}")), 422, "not valid JSON"),
        (Method::PUT, "/memories/m_0000000000000000", Some(json!({"text": with_key}).to_string()), 400, "`text` holds what looks like a secret"),
        (Method::POST, "/memories", Some("{\"messages\": [".into()), 422, "not valid JSON"),
        (Method::POST, "/memories", Some("".into()), 422, "empty"),
        (Method::POST, "/memories", Some(json!({"user_id": "alice"}).to_string()), 422, "missing field `messages`"),
        (Method::POST, "/memories", Some(json!({"messages": "Tabs."}).to_string()), 400, "identifier"),
        (Method::POST, "/memories", Some(user("   ").to_string()), 400, "empty"),
        (Method::POST, "/memories", Some(json!({"messages": [{"role": "assistant", "content": "Noted."}], "user_id": "alice"}).to_string()), 400, "user's own words"),
        (Method::POST, "/memories", Some(json!({"messages": [{"role": "robot", "content": "beep"}], "user_id": "alice"}).to_string()), 400, "role `robot`"),
        (Method::POST, "/memories", Some(json!({"messages": [{"role": "user", "content": "Tabs."}], "user_id": 7}).to_string()), 422, "expected a string"),
        (Method::POST, "/memories", Some(json!({"messages": [{"role": "user", "content": "x".repeat(5_000)}], "user_id": "alice", "infer": false}).to_string()), 400, "4096"),
        (Method::POST, "/memories", Some(json!({"messages": [{"role": "user", "content": "Tabs."}, {"role": "user", "content": ""}], "user_id": "alice"}).to_string()), 400, "messages[1]"),
        (Method::POST, "/memories", Some(json!({"messages": "Tabs.", "user_id": "alice", "metadata": {"big": "x".repeat(3_000)}}).to_string()), 400, "metadata"),
        (Method::POST, "/memories", Some(too_long.to_string()), 413, "over 256 KiB"),
        (Method::POST, "/search", Some(json!({"query": " "}).to_string()), 400, "`query` is empty"),
        (Method::POST, "/search", Some(json!({"query": "tabs", "filters": {"OR": [{"user_id": "a"}, {"user_id": "b"}]}}).to_string()), 400, "OR"),
        (Method::POST, "/search", Some(json!({"query": "tabs", "threshold": 2}).to_string()), 400, "threshold"),
        (Method::GET, "/memories/m_0000000000000000", None, 404, "no memory"),
        (Method::GET, "/memories/not-an-id/history", None, 404, "no memory"),
        (Method::PUT, "/memories/m_0000000000000000", Some(json!({"text": "Tabs."}).to_string()), 404, "no memory"),
        (Method::PUT, "/memories/m_0000000000000000", Some(json!({}).to_string()), 400, "text or metadata"),
        (Method::DELETE, "/memories/m_0000000000000000", None, 404, "no memory"),
        (Method::DELETE, "/memories", None, 400, "identifier"),
    ];
    for (method, path, body, status, detail) in cases {
        let mut call = reqwest::Client::new()
            .request(method.clone(), format!("{}{path}", base(&daemon)))
            .header("authorization", format!("Token {}", daemon.token))
            .header("content-type", "application/json");
        if let Some(body) = body.clone() {
            call = call.body(body);
        }
        let (got, answer) = reply(call).await;
        let said = answer["detail"]
            .as_str()
            .unwrap_or_else(|| panic!("{answer}"));
        assert_eq!(got, status, "{method} {path} {body:?}: {answer}");
        assert!(said.contains(detail), "{method} {path}: {said}");
        assert!(
            !said.to_lowercase().contains(&key.to_lowercase()),
            "{method} {path}: {said}"
        );
    }
    assert!(
        every_memory(&repo).is_empty(),
        "a refused call stored nothing"
    );

    // Unknown fields are ignored, as mem0 ignores them.
    let mut body = user("Alice prefers tabs over spaces.");
    body["prompt"] = json!("Extract the user's preferences.");
    body["unheard_of"] = json!({"nested": true});
    let (status, added) = reply(request(&daemon, Method::POST, "/memories", Some(body))).await;
    assert_eq!(status, 200, "{added}");
    assert_eq!(added["results"][0]["event"], "ADD", "{added}");
    assert_eq!(every_memory(&repo).len(), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn the_token_comes_as_mem0_clients_send_keys_and_only_the_users_config_waives_it() {
    let repo = TestRepo::with_fixture("mixed");
    let daemon = Daemon::start(&repo);
    let list = |header: Option<(&str, String)>, host: Option<&str>| {
        let mut call =
            reqwest::Client::new().get(format!("{}/memories?user_id=alice", base(&daemon)));
        if let Some((name, value)) = header {
            call = call.header(name, value);
        }
        if let Some(host) = host {
            call = call.header("host", host);
        }
        call
    };
    let token = daemon.token.clone();
    for header in [
        ("authorization", format!("Token {token}")),
        ("authorization", format!("Bearer {token}")),
        ("x-api-key", token.clone()),
    ] {
        let (status, answer) = reply(list(Some(header.clone()), None)).await;
        assert_eq!(status, 200, "{header:?}: {answer}");
        assert_eq!(answer["results"], json!([]));
    }
    for header in [
        None,
        Some(("authorization", "Token wrong".to_string())),
        Some(("x-api-key", "wrong".to_string())),
        Some(("authorization", format!("Basic {token}"))),
    ] {
        let (status, answer) = reply(list(header.clone(), None)).await;
        assert_eq!(status, 401, "{header:?}");
        assert!(answer["detail"].is_string(), "{answer}");
    }
    let (status, answer) = reply(list(Some(("x-api-key", token)), Some("evil.example"))).await;
    assert_eq!(status, 403, "{answer}");
    assert!(answer["detail"].is_string(), "{answer}");
    assert!(daemon.stop().success());

    // Only the user's own configuration lets a client without any header in; the Host check
    // stays, a wrong key is still wrong, and doctor warns.
    let config = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(config.path().join("cairn")).unwrap();
    std::fs::write(
        config.path().join("cairn/config.toml"),
        "[mem0]\nallow_without_token = true\n",
    )
    .unwrap();
    let open = Daemon::start_with(&repo, &[("XDG_CONFIG_HOME", config.path())]);
    let call = |header: Option<(&str, &str)>, host: Option<&str>| {
        let mut call =
            reqwest::Client::new().get(format!("{}/memories?user_id=alice", base(&open)));
        if let Some((name, value)) = header {
            call = call.header(name, value);
        }
        if let Some(host) = host {
            call = call.header("host", host);
        }
        call
    };
    assert_eq!(reply(call(None, None)).await.0, 200);
    assert_eq!(reply(call(Some(("x-api-key", "wrong")), None)).await.0, 401);
    assert_eq!(reply(call(None, Some("evil.example"))).await.0, 403);
    // pikuri's client, which sends no key at all.
    pikuri(&open, None);
    let doctor = repo
        .cairn_command(repo.data_dir())
        .env("XDG_CONFIG_HOME", config.path())
        .arg("doctor")
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&doctor.stdout);
    let line = said
        .lines()
        .find(|l| l.starts_with("mem0"))
        .unwrap_or_else(|| panic!("{said}"));
    assert!(
        line.contains("WARNING") && line.contains("allow_without_token"),
        "{line}"
    );
    let quiet = String::from_utf8_lossy(&repo.cairn(&["doctor"]).stdout).to_string();
    assert!(!quiet.lines().any(|l| l.starts_with("mem0")), "{quiet}");
}
