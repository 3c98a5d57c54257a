//! The real `cairn serve` over stdio, driven by rmcp's own client.

use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::RunningService;
use rmcp::transport::TokioChildProcess;
use serde_json::{Value, json};

use crate::support::TestRepo;

pub async fn connect(repo: &TestRepo) -> RunningService<rmcp::RoleClient, ()> {
    connect_with_orgs(repo, &repo.data_dir().join("orgs")).await
}

/// `cairn serve` keeping organisation memories in `orgs` (repositories of one organisation
/// share them when they share this directory).
pub async fn connect_with_orgs(
    repo: &TestRepo,
    orgs: &std::path::Path,
) -> RunningService<rmcp::RoleClient, ()> {
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_cairn"));
    command
        .arg("--repo")
        .arg(repo.path())
        .arg("--data-dir")
        .arg(repo.data_dir())
        .env("CAIRN_ORGS_DIR", orgs)
        .arg("serve");
    let transport = TokioChildProcess::new(command).expect("cairn serve starts");
    ().serve(transport).await.expect("MCP handshake")
}

pub async fn call(
    client: &RunningService<rmcp::RoleClient, ()>,
    tool: &'static str,
    args: Value,
) -> CallToolResult {
    let Value::Object(arguments) = args else {
        panic!("arguments are an object")
    };
    client
        .call_tool(CallToolRequestParams::new(tool).with_arguments(arguments))
        .await
        .expect("tool call answered")
}

pub fn text(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test(flavor = "multi_thread")]
async fn tools_answer_over_stdio() {
    let repo = TestRepo::with_fixture("mixed");
    repo.index();
    let client = connect(&repo).await;

    let tools = client.list_all_tools().await.unwrap();
    let mut names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    names.sort();
    assert_eq!(
        names,
        [
            "expand",
            "forget",
            "get_context",
            "learn",
            "record_guideline_change",
            "record_review",
            "remember",
            "review_diff",
            "search_developer_memory",
            "search_project_memory"
        ]
    );
    for tool in &tools {
        let annotations = tool.annotations.as_ref().expect("annotated");
        let writes = [
            "remember",
            "forget",
            "record_review",
            "record_guideline_change",
            "learn",
        ]
        .contains(&tool.name.as_ref());
        assert_eq!(annotations.read_only_hint, Some(!writes), "{}", tool.name);
        assert!(
            tool.description.as_ref().unwrap().len() < 200,
            "short description"
        );
    }
    let schema_tokens = cairn::tokens::count(&serde_json::to_string(&tools).unwrap());
    eprintln!("tools/list: {schema_tokens} tokens");
    assert!(
        schema_tokens < 2_900,
        "tools/list costs {schema_tokens} tokens"
    );

    let context = call(&client, "get_context", json!({})).await;
    assert_ne!(context.is_error, Some(true), "{}", text(&context));
    let body = text(&context);
    assert!(body.contains("## Top files"), "{body}");
    assert!(body.contains("src/shop/cart.py"), "{body}");
    let structured = context.structured_content.expect("structured content");
    assert_eq!(structured["files"], 12);
    assert!(
        structured["top_files"]
            .as_array()
            .unwrap()
            .iter()
            .all(|f| !f["id"].as_str().unwrap().starts_with('/'))
    );
    let first = &structured["top_files"][0]["score"];
    assert!(first["total"].as_f64().unwrap() > 0.0, "{first}");
    assert!(structured["tokens"].as_u64().unwrap() <= 4_000);

    let focused = call(
        &client,
        "get_context",
        json!({"focus": ["web/src/lib"], "max_tokens": 1500}),
    )
    .await;
    let focused = focused.structured_content.unwrap();
    assert!(
        focused["top_files"][0]["id"]
            .as_str()
            .unwrap()
            .starts_with("web/src/lib/"),
        "{focused:#}"
    );
    assert!(focused["tokens"].as_u64().unwrap() <= 1_500);

    let file = call(&client, "expand", json!({"target": "src/shop/storage.py"})).await;
    let file_text = text(&file);
    assert!(file_text.contains("write_cart"), "{file_text}");
    assert!(file_text.contains("database"), "{file_text}");

    let method = call(
        &client,
        "expand",
        json!({"target": "src/shop/cart.py::Cart.total", "include": ["callers", "callees", "tests", "source"]}),
    )
    .await;
    let data = method.structured_content.clone().unwrap();
    assert_eq!(data["kind"], "method");
    let callers: Vec<&str> = data["callers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap())
        .collect();
    assert!(
        callers.contains(&"src/shop/cart.py::GiftCart.total"),
        "{callers:?}"
    );
    assert!(
        data["callees"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["id"] == "src/shop/pricing.py::price_of"
                && !c["lines"].as_array().unwrap().is_empty())
    );
    assert!(
        data["tests"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["id"] == "tests/test_cart.py"),
        "{data:#}"
    );
    assert!(
        data["source"]
            .as_str()
            .unwrap()
            .contains("def total(self):")
    );
    assert!(data["blast_radius"].as_u64().unwrap() >= 1);

    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_arguments_get_clear_tool_errors() {
    let repo = TestRepo::with_fixture("mixed");
    repo.index();
    let client = connect(&repo).await;

    let unknown = call(&client, "expand", json!({"target": "src/shop/nope.py"})).await;
    assert_eq!(unknown.is_error, Some(true));
    assert!(
        text(&unknown).contains("no file or symbol"),
        "{}",
        text(&unknown)
    );

    let escaping = call(&client, "expand", json!({"target": "../../etc/passwd"})).await;
    assert_eq!(escaping.is_error, Some(true));
    assert!(
        text(&escaping).contains("outside the repository"),
        "{}",
        text(&escaping)
    );

    let suggested = call(
        &client,
        "expand",
        json!({"target": "src/shop/cart.py::totl"}),
    )
    .await;
    assert_eq!(suggested.is_error, Some(true));

    let zero = call(&client, "get_context", json!({"max_tokens": 0})).await;
    assert_eq!(zero.is_error, Some(true));
    assert!(
        text(&zero).contains("max_tokens must be at least"),
        "{}",
        text(&zero)
    );

    let huge = call(&client, "get_context", json!({"max_tokens": 10_000_000})).await;
    assert_ne!(huge.is_error, Some(true));
    assert!(text(&huge).contains("capped at 16000"), "{}", text(&huge));

    let missing = client
        .call_tool(CallToolRequestParams::new("expand").with_arguments(serde_json::Map::new()))
        .await;
    // rmcp reports arguments that do not match the schema as a tool error the model can fix.
    let missing = missing.expect("answered");
    assert_eq!(missing.is_error, Some(true));
    assert!(
        text(&missing).contains("missing field `target`"),
        "{}",
        text(&missing)
    );

    let symbol = call(&client, "expand", json!({"target": "Cart.save"})).await;
    assert_ne!(symbol.is_error, Some(true), "{}", text(&symbol));
    assert!(text(&symbol).contains("src/shop/cart.py::Cart.save"));

    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn serving_before_any_index_says_what_to_do() {
    let repo = TestRepo::with_fixture("mixed");
    let client = connect(&repo).await;
    let result = call(&client, "get_context", json!({})).await;
    assert_eq!(result.is_error, Some(true));
    assert!(text(&result).contains("cairn index"), "{}", text(&result));
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_running_server_sees_a_new_index() {
    let repo = TestRepo::with_fixture("mixed");
    repo.index();
    let client = connect(&repo).await;
    let before = call(&client, "expand", json!({"target": "src/shop/fresh.py"})).await;
    assert_eq!(before.is_error, Some(true));
    repo.write(
        "src/shop/fresh.py",
        "from .pricing import price_of\n\ndef fresh():\n    return price_of(1)\n",
    );
    repo.index();
    let after = call(
        &client,
        "expand",
        json!({"target": "src/shop/fresh.py::fresh"}),
    )
    .await;
    assert_ne!(after.is_error, Some(true), "{}", text(&after));
    assert!(text(&after).contains("price_of"));
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn memory_tools_over_stdio() {
    let repo = TestRepo::with_fixture("mixed");
    repo.index();
    let client = connect(&repo).await;

    let added = call(
        &client,
        "remember",
        json!({
            "type": "risk_module",
            "content": "cart.py computes totals with floats; money must use Decimal.",
            "paths": ["src/shop/cart.py"],
            "symbols": ["src/shop/cart.py::Cart.total"],
            "source": "review",
            "source_ref": "PR #7",
            "agent": "claude-code",
            "run": "session-1"
        }),
    )
    .await;
    assert_ne!(added.is_error, Some(true), "{}", text(&added));
    let added = added.structured_content.unwrap();
    assert_eq!(added["event"], "ADD");
    assert_eq!(added["memory"]["run"], "session-1");
    assert_eq!(added["memory"]["agent"], "claude-code");
    assert_eq!(
        added["memory"]["symbols"],
        json!(["src/shop/cart.py::Cart.total"])
    );
    let id = added["id"].as_str().unwrap().to_string();

    // Another process writes while the server holds the memory store; the server sees it.
    let cli = repo.cairn_ok(&[
        "memory",
        "add",
        "--type",
        "decision",
        "Coupons are applied before tax, never after.",
    ]);
    assert!(cli.starts_with("ADD"), "{cli}");
    let seen = call(
        &client,
        "search_project_memory",
        json!({"query": "coupons tax"}),
    )
    .await;
    assert!(
        text(&seen).contains("Coupons are applied"),
        "{}",
        text(&seen)
    );

    let repeat = call(
        &client,
        "remember",
        json!({"type": "risk_module", "content": "cart.py computes totals with floats; money must use Decimal"}),
    )
    .await;
    assert_eq!(repeat.structured_content.unwrap()["event"], "NONE");

    let found = call(
        &client,
        "search_project_memory",
        json!({"query": "Decimal money totals", "types": ["risk_module"]}),
    )
    .await;
    let found_text = text(&found);
    assert!(found_text.contains(&id), "{found_text}");
    let found = found.structured_content.unwrap();
    assert_eq!(found["memories"][0]["memory"]["source_ref"], "PR #7");

    let dev = call(
        &client,
        "remember",
        json!({"type": "contributor_profile", "developer": "dana", "content": "Dana owns the cart and pricing code."}),
    )
    .await;
    assert_eq!(dev.structured_content.unwrap()["event"], "ADD");
    let dev_found = call(
        &client,
        "search_developer_memory",
        json!({"developer": "dana", "query": "pricing"}),
    )
    .await;
    assert!(
        text(&dev_found).contains("Profile of @dana"),
        "{}",
        text(&dev_found)
    );
    let other_dev = call(
        &client,
        "search_developer_memory",
        json!({"developer": "erin", "query": "pricing cart"}),
    )
    .await;
    assert!(
        !text(&other_dev).contains("Dana owns"),
        "{}",
        text(&other_dev)
    );

    let expanded = call(
        &client,
        "expand",
        json!({"target": "src/shop/cart.py::Cart.total"}),
    )
    .await;
    assert!(text(&expanded).contains(&id), "{}", text(&expanded));
    let context = call(&client, "get_context", json!({})).await;
    assert!(text(&context).contains(&id), "{}", text(&context));

    let prompt = client
        .get_prompt(
            rmcp::model::GetPromptRequestParams::new("extract_learnings").with_arguments(
                json!({"developer": "dana", "review": "LGTM after the Decimal fix."})
                    .as_object()
                    .unwrap()
                    .clone(),
            ),
        )
        .await
        .expect("prompt answered");
    let prompt_text = serde_json::to_string(&prompt.messages).unwrap();
    assert!(prompt_text.contains("Dana owns the cart"), "{prompt_text}");
    assert!(prompt_text.contains("rejection_pattern"));

    let bad = call(
        &client,
        "remember",
        json!({"type": "gossip", "content": "x"}),
    )
    .await;
    assert_eq!(bad.is_error, Some(true));
    assert!(text(&bad).contains("unknown memory type"), "{}", text(&bad));
    let orphan = call(
        &client,
        "remember",
        json!({"type": "developer_pattern", "content": "Skips tests."}),
    )
    .await;
    assert_eq!(orphan.is_error, Some(true));

    let detail = call(&client, "expand", json!({"target": id})).await;
    assert!(
        text(&detail).contains("source: Review (PR #7)"),
        "{}",
        text(&detail)
    );

    let listed = call(&client, "forget", json!({"type": "risk_module"})).await;
    let count: usize = text(&listed)
        .split_whitespace()
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{}", text(&listed)));
    assert!(
        text(&listed).contains(&format!("confirm={count}")),
        "{}",
        text(&listed)
    );
    // A filter removes only the number of memories the caller saw listed.
    let miscounted = call(
        &client,
        "forget",
        json!({"type": "risk_module", "confirm": count + 1}),
    )
    .await;
    assert_eq!(miscounted.is_error, Some(true));
    assert!(
        text(&miscounted).contains("nothing was removed"),
        "{}",
        text(&miscounted)
    );
    let still = call(&client, "forget", json!({"type": "risk_module"})).await;
    assert_eq!(text(&still), text(&listed));
    let gone = call(&client, "forget", json!({"id": id})).await;
    assert!(text(&gone).contains("DELETE"), "{}", text(&gone));
    let after = call(
        &client,
        "search_project_memory",
        json!({"query": "Decimal"}),
    )
    .await;
    assert!(
        text(&after).contains("no matching memories"),
        "{}",
        text(&after)
    );

    client.cancel().await.unwrap();
}
