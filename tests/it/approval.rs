//! The approval gate: memories an assistant writes under `[memory] approval` wait, pending and
//! never served (search, context, expand, review), until a person approves them with `cairn
//! memory approve` or on the page; a rejected one stays unserved and is not proposed again.
//! The real binary over stdio with rmcp's client, the CLI beside it, the daemon's pages over
//! HTTP and in Chromium.

use std::path::Path;

use rmcp::ServiceExt;
use rmcp::service::RunningService;
use rmcp::transport::TokioChildProcess;
use serde_json::{Value, json};

use crate::daemon::Daemon;
use crate::mcp::{call, connect, text};
use crate::support::TestRepo;
use crate::ui;

/// The `mixed` fixture with `[memory] approval = <setting>` in its cairn.toml, indexed.
fn gated(setting: &str) -> TestRepo {
    let repo = TestRepo::with_fixture("mixed");
    repo.write("cairn.toml", format!("[memory]\napproval = {setting}\n"));
    repo.index();
    repo
}

/// `cairn serve` with the user's configuration directory at `config`.
async fn connect_as_user(repo: &TestRepo, config: &Path) -> RunningService<rmcp::RoleClient, ()> {
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_cairn"));
    command
        .arg("--repo")
        .arg(repo.path())
        .arg("--data-dir")
        .arg(repo.data_dir())
        .env("CAIRN_ORGS_DIR", repo.data_dir().join("orgs"))
        .env("XDG_CONFIG_HOME", config)
        .arg("serve");
    let transport = TokioChildProcess::new(command).expect("cairn serve starts");
    ().serve(transport).await.expect("MCP handshake")
}

/// The structured answer of a call that must succeed.
fn ok(result: &rmcp::model::CallToolResult) -> Value {
    assert_ne!(result.is_error, Some(true), "{}", text(result));
    result
        .structured_content
        .clone()
        .expect("structured content")
}

/// Remembers `content` as an assistant; the id and the whole answer.
async fn remember(
    client: &RunningService<rmcp::RoleClient, ()>,
    args: Value,
) -> (String, Value, String) {
    let result = call(client, "remember", args).await;
    let answer = ok(&result);
    (
        answer["id"].as_str().unwrap().to_string(),
        answer,
        text(&result),
    )
}

/// Everything a tool answered, structured content and text, as one string to search.
async fn answered(
    client: &RunningService<rmcp::RoleClient, ()>,
    tool: &'static str,
    args: Value,
) -> String {
    let result = call(client, tool, args).await;
    let body = ok(&result);
    format!("{body}\n{}", text(&result))
}

const RISK: &str = "Cart totals drift with float rounding; compute every total in integer cents.";
const HABIT: &str = "Alice often leaves database cursors open on error paths.";

#[tokio::test(flavor = "multi_thread")]
async fn a_pending_memory_is_served_nowhere_until_a_person_approves_it() {
    let repo = gated("\"required\"");
    let client = connect(&repo).await;
    let (risk, answer, said) = remember(
        &client,
        json!({"type": "risk_module", "content": RISK, "paths": ["src/shop/cart.py"]}),
    )
    .await;
    assert_eq!(answer["event"], "ADD", "{answer}");
    assert_eq!(answer["memory"]["status"], "pending", "{answer}");
    assert!(
        said.contains(&format!("{risk} awaits approval")),
        "the answer says so: {said}"
    );
    let (habit, answer, _) = remember(
        &client,
        json!({"type": "developer_pattern", "developer": "alice", "content": HABIT}),
    )
    .await;
    assert_eq!(answer["memory"]["status"], "pending", "{answer}");
    // A person's write is not gated.
    let by_person = repo.cairn_ok(&[
        "memory",
        "add",
        "--json",
        "-t",
        "decision",
        "Coupons are applied before tax, never after.",
    ]);
    let by_person: Value = serde_json::from_str(&by_person).unwrap();
    assert!(by_person["memory"].get("status").is_none(), "{by_person}");

    // A change to the anchored file, for review_diff.
    repo.write(
        "src/shop/cart.py",
        format!("{}\n# totals\n", repo.read("src/shop/cart.py")),
    );
    let served = async |client: &RunningService<rmcp::RoleClient, ()>| {
        let search = answered(
            client,
            "search_project_memory",
            json!({"query": "cart totals float rounding integer cents", "include_superseded": true}),
        )
        .await;
        let developer = answered(
            client,
            "search_developer_memory",
            json!({"developer": "alice", "query": "database cursors error paths"}),
        )
        .await;
        let context = answered(client, "get_context", json!({})).await;
        let file = answered(client, "expand", json!({"target": "src/shop/cart.py"})).await;
        let review = answered(client, "review_diff", json!({})).await;
        let expanded = call(client, "expand", json!({"target": risk})).await;
        [
            ("search_project_memory", search.contains(&risk)),
            ("search_developer_memory", developer.contains(&habit)),
            ("get_context", context.contains(&risk)),
            ("expand of the file", file.contains(&risk)),
            ("review_diff", review.contains(&risk)),
            (
                "expand of the id",
                expanded.is_error != Some(true) && text(&expanded).contains(RISK),
            ),
        ]
    };
    let leaked: Vec<&str> = served(&client)
        .await
        .into_iter()
        .filter_map(|(face, found)| found.then_some(face))
        .collect();
    assert!(leaked.is_empty(), "pending memories served by {leaked:?}");
    let refused = call(&client, "expand", json!({"target": risk})).await;
    assert!(text(&refused).contains("pending"), "{}", text(&refused));
    let found = repo.cairn_ok(&["memory", "search", "cart totals rounding"]);
    assert!(!found.contains(&risk), "{found}");

    // The person sees them, while the server runs.
    let listed = repo.cairn_ok(&["memory", "list", "--pending"]);
    assert!(
        listed.contains(&risk) && listed.contains(&habit) && listed.contains("pending"),
        "{listed}"
    );
    assert!(!listed.contains("Coupons"), "{listed}");
    let live = repo.cairn_ok(&["memory", "list"]);
    assert!(!live.contains(&risk) && live.contains("Coupons"), "{live}");

    for id in [&risk, &habit] {
        let approved = repo.cairn_ok(&["memory", "approve", id]);
        assert!(
            approved.starts_with(&format!("APPROVED {id}")),
            "{approved}"
        );
    }
    let missing: Vec<&str> = served(&client)
        .await
        .into_iter()
        .filter_map(|(face, found)| (!found).then_some(face))
        .collect();
    assert!(
        missing.is_empty(),
        "approved memories not served by {missing:?}"
    );
    let again = repo.cairn(&["memory", "approve", &risk]);
    assert!(!again.status.success());
    assert!(
        String::from_utf8_lossy(&again.stderr).contains("is approved, not awaiting approval"),
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );
    let history = repo.cairn_ok(&["memory", "history", &risk]);
    assert!(history.contains("(approved"), "{history}");
    assert_eq!(
        repo.cairn_ok(&["memory", "list", "--pending"]).trim(),
        "no memories await approval"
    );
    client.cancel().await.unwrap();

    // And without the server: another memory, approved from the command line alone.
    let client = connect(&repo).await;
    let (later, _, _) = remember(
        &client,
        json!({"type": "decision", "content": "Refunds are issued to the original payment method only."}),
    )
    .await;
    client.cancel().await.unwrap();
    let before = repo.cairn_ok(&["memory", "search", "refunds original payment"]);
    assert!(!before.contains(&later), "{before}");
    repo.cairn_ok(&["memory", "approve", &later]);
    let after = repo.cairn_ok(&["memory", "search", "refunds original payment"]);
    assert!(after.contains(&later), "{after}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_rejected_learning_is_kept_unserved_and_not_proposed_again() {
    let repo = gated("[\"decision\"]");
    let client = connect(&repo).await;
    let order = "Carts keep items in the order they were added.";
    let recorded = ok(&call(
        &client,
        "record_review",
        json!({
            "verdict": "comment",
            "author": "bob",
            "review_id": "PR-3",
            "learnings": [
                {"type": "decision", "content": order},
                {"type": "project_pattern", "content": "Prices are looked up through price_of, never read from items."},
            ],
        }),
    )
    .await);
    let learnings = recorded["learnings"].as_array().unwrap();
    let decision = learnings[0]["id"].as_str().unwrap().to_string();
    let pattern = learnings[1]["id"].as_str().unwrap().to_string();
    assert_eq!(learnings[0]["memory"]["status"], "pending", "{recorded}");
    assert!(
        learnings[1]["memory"].get("status").is_none(),
        "an ungated type is served at once: {recorded}"
    );
    let found = answered(
        &client,
        "search_project_memory",
        json!({"query": "carts items order prices"}),
    )
    .await;
    assert!(
        found.contains(&pattern) && !found.contains(&decision),
        "{found}"
    );

    let token = format!("ghp_{}", "a1B2c3D4e5".repeat(4));
    let reason = format!("order is not promised (seen with {token})");
    let rejected = repo.cairn_ok(&["memory", "reject", &decision, "--reason", &reason]);
    assert!(
        rejected.starts_with(&format!("REJECTED {decision}")),
        "{rejected}"
    );
    let found = answered(
        &client,
        "search_project_memory",
        json!({"query": "carts items order added", "include_superseded": true}),
    )
    .await;
    assert!(!found.contains(&decision), "{found}");
    assert_eq!(
        repo.cairn_ok(&["memory", "list", "--pending"]).trim(),
        "no memories await approval"
    );
    let shown: Value =
        serde_json::from_str(&repo.cairn_ok(&["memory", "show", &decision, "--json"])).unwrap();
    assert_eq!(shown["status"], "rejected", "{shown}");
    let history = repo.cairn_ok(&["memory", "history", &decision]);
    assert!(history.contains("order is not promised"), "{history}");
    assert!(
        !history.contains(&token),
        "the reason's secret is redacted: {history}"
    );
    let all = repo.cairn_ok(&["memory", "list", "--all"]);
    assert!(all.contains(&decision) && all.contains("rejected"), "{all}");

    // The same learning again: nothing new waits.
    let result = call(
        &client,
        "remember",
        json!({"type": "decision", "content": order}),
    )
    .await;
    let again = ok(&result);
    assert_eq!(
        (again["event"].as_str(), again["id"].as_str()),
        (Some("NONE"), Some(decision.as_str()))
    );
    assert!(text(&result).contains("rejected"), "{}", text(&result));
    let approve = repo.cairn(&["memory", "approve", &decision]);
    assert!(
        !approve.status.success(),
        "a rejected memory is not approved"
    );
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn approval_settings_fail_clearly_and_a_repository_cannot_lift_the_users() {
    // A word cairn does not know: an assistant's write fails, naming the setting; a person's
    // write still goes through.
    let repo = gated("\"sometimes\"");
    let client = connect(&repo).await;
    let result = call(
        &client,
        "remember",
        json!({"type": "decision", "content": "Use UTC."}),
    )
    .await;
    assert_eq!(result.is_error, Some(true), "{}", text(&result));
    assert!(
        text(&result).contains("cairn.toml [memory] approval")
            && text(&result).contains("\"required\""),
        "{}",
        text(&result)
    );
    client.cancel().await.unwrap();
    repo.cairn_ok(&["memory", "add", "-t", "decision", "Use UTC."]);
    let repo_types = gated("[\"decisions\"]");
    let client = connect(&repo_types).await;
    let result = call(
        &client,
        "remember",
        json!({"type": "decision", "content": "Use UTC."}),
    )
    .await;
    assert!(
        text(&result).contains("unknown memory type `decisions`"),
        "{}",
        text(&result)
    );
    client.cancel().await.unwrap();

    // A value of the wrong kind: no command runs.
    let repo_number = TestRepo::with_fixture("mixed");
    repo_number.write("cairn.toml", "[memory]\napproval = 3\n");
    let output = repo_number.cairn(&["memory", "list"]);
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("not valid cairn configuration") && stderr.contains("list of memory types"),
        "{stderr}"
    );

    // The user's gate holds whatever the repository says.
    let open = gated("\"off\"");
    let config = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(config.path().join("cairn")).unwrap();
    std::fs::write(
        config.path().join("cairn/config.toml"),
        "[memory]\napproval = \"required\"\n",
    )
    .unwrap();
    let client = connect_as_user(&open, config.path()).await;
    let (_, answer, _) =
        remember(&client, json!({"type": "decision", "content": "Use UTC."})).await;
    assert_eq!(answer["memory"]["status"], "pending", "{answer}");
    client.cancel().await.unwrap();
    let client = connect(&open).await;
    let (_, answer, _) = remember(
        &client,
        json!({"type": "decision", "content": "Money is stored as integer cents."}),
    )
    .await;
    assert!(
        answer["memory"].get("status").is_none(),
        "off without the user's gate: {answer}"
    );
    client.cancel().await.unwrap();
}

/// A gated repository with one pending memory an assistant wrote; its id.
async fn with_pending_memory() -> (TestRepo, String) {
    let repo = gated("\"required\"");
    let client = connect(&repo).await;
    let (id, _, _) = remember(
        &client,
        json!({"type": "decision", "content": "Shipping fees are charged per parcel, not per item.", "paths": ["src/shop/pricing.py"]}),
    )
    .await;
    client.cancel().await.unwrap();
    (repo, id)
}

fn is_pending(repo: &TestRepo, id: &str) -> bool {
    repo.cairn_ok(&["memory", "list", "--pending"]).contains(id)
}

#[tokio::test(flavor = "multi_thread")]
async fn approving_on_the_page_needs_the_sessions_csrf_token() {
    let (repo, id) = with_pending_memory().await;
    let daemon = Daemon::start(&repo);
    let (cookie, _) = ui::log_in(&daemon, &ui::code_of(&ui::log_in_address(&repo))).await;
    let (_, home) = ui::get_with(&daemon, "/ui/", Some(&cookie)).await;
    assert!(home.contains("1 memory awaits approval"), "{home}");
    let (status, list) = ui::get_with(&daemon, "/ui/pending", Some(&cookie)).await;
    assert_eq!(status, 200);
    assert!(
        list.contains("Shipping fees are charged per parcel"),
        "{list}"
    );
    let csrf = ui::csrf_in(&list);
    let (_, page) = ui::get_with(&daemon, &format!("/ui/memories/{id}"), Some(&cookie)).await;
    assert!(page.contains("Awaits approval"), "{page}");
    let (status, _) = ui::get_with(&daemon, &format!("/ui/symbol?id={id}"), Some(&cookie)).await;
    assert_eq!(
        status, 303,
        "a memory id goes to the memory's page, pending or not"
    );
    let approve = format!("/ui/pending/{id}/approve");
    let origin = ui::base(&daemon);
    for body in [
        String::new(),
        "csrf=".to_string(),
        format!("csrf={}", "0".repeat(csrf.len())),
    ] {
        assert_eq!(
            ui::post_form(&daemon, &approve, &cookie, &origin, &body).await,
            403,
            "{body:?}"
        );
    }
    let foreign = ui::post_form(
        &daemon,
        &approve,
        &cookie,
        "http://evil.example",
        &format!("csrf={csrf}"),
    )
    .await;
    assert_eq!(foreign, 403);
    let (status, _) = ui::get_with(&daemon, &approve, Some(&cookie)).await;
    assert_eq!(status, 405, "a GET approves nothing");
    assert!(is_pending(&repo, &id), "still pending");
    let forged = format!("/ui/pending/{}/approve", "m_ffffffffffffffff");
    assert_eq!(
        ui::post_form(&daemon, &forged, &cookie, &origin, &format!("csrf={csrf}")).await,
        404
    );

    assert_eq!(
        ui::post_form(&daemon, &approve, &cookie, &origin, &format!("csrf={csrf}")).await,
        200
    );
    assert!(!is_pending(&repo, &id));
    let found = repo.cairn_ok(&["memory", "search", "shipping fees parcel"]);
    assert!(found.contains(&id), "{found}");
    let (_, page) = ui::get_with(&daemon, &format!("/ui/memories/{id}"), Some(&cookie)).await;
    // Decided by the daemon's user (who alone can open a session), on the page.
    let by = match std::env::var("USER").ok().filter(|u| !u.trim().is_empty()) {
        Some(user) => format!("approved by {} on the project", user.trim()),
        None => "approved by the project".to_string(),
    };
    assert!(page.contains(&by), "{by}: {page}");
    assert!(daemon.stop().success());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_person_approves_a_pending_memory_in_chromium() {
    let (repo, id) = with_pending_memory().await;
    let address = ui::log_in_address(&repo);
    let _daemon = ui::StartedDaemon(repo.data_dir());
    let (_driver, driver_url) = ui::chromedriver().await;
    let profile = tempfile::tempdir().unwrap();
    let client = ui::browser(&driver_url, profile.path()).await;
    let origin = ui::origin_of(&address);

    client.goto(&address).await.unwrap();
    ui::find(&client, "input#q").await;
    client
        .goto(&format!("{origin}/ui/?q=shipping+parcel"))
        .await
        .unwrap();
    let before = ui::body_text(&client).await;
    assert!(
        !before.contains("Shipping fees"),
        "pending is not found: {before}"
    );
    ui::find(&client, "p.waiting a")
        .await
        .click()
        .await
        .unwrap();
    ui::find(&client, "ol.pending").await;
    let list = ui::body_text(&client).await;
    assert!(
        list.contains("Shipping fees are charged per parcel"),
        "{list}"
    );
    ui::screenshot(&client, "pending").await;
    ui::find(&client, "button.approve")
        .await
        .click()
        .await
        .unwrap();
    ui::wait_for(&client, fantoccini::Locator::XPath("//h1[.='Approved']")).await;
    assert!(!is_pending(&repo, &id));

    client
        .goto(&format!("{origin}/ui/?q=shipping+parcel"))
        .await
        .unwrap();
    let after = ui::body_text(&client).await;
    assert!(
        after.contains("Shipping fees are charged per parcel"),
        "{after}"
    );
    assert!(!after.contains("awaits approval"), "{after}");
    client.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn in_team_mode_pending_memories_replicate_and_a_teammates_approval_counts() {
    let server = crate::team::Server::start();
    let team = crate::team::team(&server);
    let (alice, bob) = (&team.alice, &team.bob);
    // Alice requires approval for herself; the repository says nothing.
    std::fs::write(
        alice.config_home.join("cairn/config.toml"),
        "[memory]\napproval = \"required\"\n",
    )
    .unwrap();
    let serve = {
        let mut command = alice.command();
        command.arg("serve");
        tokio::process::Command::from(command)
    };
    let client = ().serve(TokioChildProcess::new(serve).unwrap()).await.unwrap();
    let (id, answer, _) = remember(
        &client,
        json!({"type": "decision", "content": "Invoices are numbered per tax year, without gaps."}),
    )
    .await;
    assert_eq!(answer["memory"]["status"], "pending", "{answer}");
    client.cancel().await.unwrap();

    // Bob sees it pending through the server, not served; his approval serves it for Alice.
    assert!(bob.ok(&["memory", "list", "--pending"]).contains(&id));
    let search = |copy: &crate::team::WorkingCopy| {
        copy.ok(&["memory", "search", "invoices numbered tax year"])
    };
    assert!(!search(bob).contains(&id), "{}", search(bob));
    assert!(!search(alice).contains(&id));
    let approved = bob.ok(&["memory", "approve", &id]);
    assert!(
        approved.starts_with(&format!("APPROVED {id}")),
        "{approved}"
    );
    assert!(search(alice).contains(&id), "{}", search(alice));
    assert!(!alice.ok(&["memory", "list", "--pending"]).contains(&id));
}
