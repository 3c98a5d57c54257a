//! The CLI and the MCP server are two faces of the same use cases: on one repository, the same
//! requests in the same order through `cairn … --json` (the real binary) and through MCP
//! (rmcp's client to `cairn serve`) give the same structured answers.
//!
//! Each face keeps its memories in a data directory of its own, so both see the same writes.
//! What legitimately differs between two separate writes is set aside: memory ids (numbered
//! in order of appearance instead), times, who wrote, write sequence numbers, read statistics
//! (a server writes them now and then, a command when it ends), token counts (a memory id's
//! digits tokenise differently) and the last digit of clock-dependent scores.

use std::collections::HashMap;
use std::path::Path;

use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::service::RunningService;
use rmcp::transport::TokioChildProcess;
use serde_json::{Value, json};

use crate::support::TestRepo;

/// Keys whose values differ between two separate writes of the same thing.
const SET_ASIDE: &[&str] = &[
    "created_at",
    "updated_at",
    "valid_from",
    "invalidated_at",
    "at",
    "by",
    "written_by",
    "seq",
    "access_count",
    "last_access",
    "indexed_at",
    "tokens",
    "proposed_at",
    "decided_at",
];

/// The token budget `cairn memory search` asks for; the search tools are asked for the same, so
/// both faces make the same request.
const SEARCH_TOKENS: usize = 16_000;

/// A repository with a little history, and one data directory per face.
struct Faces {
    repo: TestRepo,
    mcp_data: tempfile::TempDir,
    client: Option<RunningService<rmcp::RoleClient, ()>>,
    cli_ids: Ids,
    mcp_ids: Ids,
}

/// Memory ids of one face, numbered in order of first appearance.
#[derive(Default)]
struct Ids(HashMap<String, String>);

impl Faces {
    async fn new() -> Faces {
        let repo = shop();
        let mcp_data = tempfile::tempdir().unwrap();
        let faces_index = |data: &Path| {
            let output = repo
                .cairn_command(data)
                .args(["index", "--json"])
                .output()
                .unwrap();
            assert!(output.status.success(), "{output:?}");
        };
        faces_index(repo.data_dir());
        faces_index(mcp_data.path());
        let client = serve(&repo, mcp_data.path()).await;
        Faces {
            repo,
            mcp_data,
            client: Some(client),
            cli_ids: Ids::default(),
            mcp_ids: Ids::default(),
        }
    }

    /// Indexes the repository again for both faces.
    fn index(&self) {
        for data in [self.repo.data_dir(), self.mcp_data.path()] {
            let output = self
                .repo
                .cairn_command(data)
                .args(["index", "--json"])
                .output()
                .unwrap();
            assert!(output.status.success(), "{output:?}");
        }
    }

    /// `cairn ARGS --json`'s answer.
    fn cli(&self, args: &[&str]) -> Value {
        let mut args = args.to_vec();
        args.push("--json");
        serde_json::from_str(&self.repo.cairn_ok(&args)).unwrap()
    }

    /// A tool's structured answer.
    async fn mcp(&self, tool: &'static str, arguments: Value) -> Value {
        let Value::Object(arguments) = arguments else {
            panic!("arguments are an object")
        };
        let result = self
            .client
            .as_ref()
            .expect("the server runs")
            .call_tool(CallToolRequestParams::new(tool).with_arguments(arguments))
            .await
            .expect("tool call answered");
        assert_ne!(result.is_error, Some(true), "{tool}: {:?}", result.content);
        result.structured_content.expect("structured content")
    }

    /// Asserts both faces answered the same; returns both answers as they were.
    fn same(&mut self, step: &str, cli: Value, mcp: Value) -> (Value, Value) {
        let (a, b) = (self.cli_ids.normal(&cli), self.mcp_ids.normal(&mcp));
        if let Some(at) = difference(&a, &b, "") {
            panic!("{step}: the CLI and MCP answers differ at {at}\nCLI: {a:#}\nMCP: {b:#}");
        }
        (cli, mcp)
    }
}

impl Ids {
    /// `value` without what two separate writes differ in, its memory and guideline change
    /// ids numbered.
    fn normal(&mut self, value: &Value) -> Value {
        match value {
            Value::String(text) => Value::String(self.renumber(text)),
            Value::Array(items) => Value::Array(items.iter().map(|v| self.normal(v)).collect()),
            Value::Object(fields) => Value::Object(
                fields
                    .iter()
                    .filter(|(key, _)| !SET_ASIDE.contains(&key.as_str()))
                    .map(|(key, v)| (key.clone(), self.normal(v)))
                    .collect(),
            ),
            other => other.clone(),
        }
    }

    fn renumber(&mut self, text: &str) -> String {
        let id = regex::Regex::new(r"[mg]_[0-9a-f]{16}").unwrap();
        id.replace_all(text, |found: &regex::Captures| {
            let next = format!("memory#{}", self.0.len() + 1);
            self.0.entry(found[0].to_string()).or_insert(next).clone()
        })
        .into_owned()
    }
}

/// Where two answers differ (numbers that are not whole may differ in their last digit).
fn difference(a: &Value, b: &Value, at: &str) -> Option<String> {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) if x.is_f64() || y.is_f64() => {
            let (x, y) = (x.as_f64().unwrap(), y.as_f64().unwrap());
            ((x - y).abs() > 0.002_f64.max(x.abs() * 1e-3)).then(|| at.to_string())
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => x
            .iter()
            .zip(y)
            .enumerate()
            .find_map(|(i, (x, y))| difference(x, y, &format!("{at}[{i}]"))),
        (Value::Object(x), Value::Object(y))
            if x.keys().collect::<Vec<_>>() == y.keys().collect::<Vec<_>>() =>
        {
            x.iter()
                .find_map(|(key, v)| difference(v, &y[key], &format!("{at}.{key}")))
        }
        (x, y) => (x != y).then(|| format!("{at} (or its length or keys)")),
    }
}

/// `cairn serve` for the repository with the MCP face's data directory.
pub(crate) async fn serve(repo: &TestRepo, data: &Path) -> RunningService<rmcp::RoleClient, ()> {
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_cairn"));
    command
        .arg("--repo")
        .arg(repo.path())
        .arg("--data-dir")
        .arg(data)
        .arg("serve")
        .env_remove("CAIRN_REPO")
        .env_remove("CAIRN_DATA_DIR")
        .env_remove("CAIRN_DB")
        // Keyword search on both faces (the CLI's commands get the same).
        .env("CAIRN_MODEL_DIR", data.join("no-model"));
    let transport = TokioChildProcess::new(command).expect("cairn serve starts");
    ().serve(transport).await.expect("MCP handshake")
}

/// A small Python shop with a few weeks of history by two authors.
pub(crate) fn shop() -> TestRepo {
    let repo = TestRepo::new();
    repo.write("src/shop/__init__.py", "");
    repo.write(
        "src/shop/cart.py",
        "from shop.storage import write_cart\n\n\nclass Cart:\n    def __init__(self):\n        self.items = []\n\n    def add(self, item):\n        self.items.append(item)\n\n    def save(self):\n        write_cart(self)\n",
    );
    repo.write(
        "src/shop/storage.py",
        "import sqlite3\n\n\ndef write_cart(cart):\n    db = sqlite3.connect(\"shop.db\")\n    db.execute(\"insert into carts values (?)\", (len(cart.items),))\n",
    );
    repo.write(
        "src/shop/legacy.py",
        "def old_total(items):\n    return sum(items)\n",
    );
    repo.write(
        "tests/test_cart.py",
        "from shop.cart import Cart\n\n\ndef test_add():\n    cart = Cart()\n    cart.add(1)\n    assert cart.items == [1]\n",
    );
    repo.commit_as("add the cart", "Alice", "alice@example.com", 40);
    repo.write(
        "src/shop/storage.py",
        "import sqlite3\n\n\ndef write_cart(cart):\n    db = sqlite3.connect(\"shop.db\")\n    db.execute(\"insert into carts values (?)\", (len(cart.items),))\n    db.commit()\n",
    );
    repo.commit_as("fix: commit cart writes", "Bob", "bob@example.com", 20);
    repo
}

/// The written memory's id, as each face answered.
fn ids(answers: &(Value, Value)) -> (String, String) {
    let id = |v: &Value| v["id"].as_str().expect("a memory id").to_string();
    (id(&answers.0), id(&answers.1))
}

#[tokio::test(flavor = "multi_thread")]
async fn the_cli_and_mcp_answer_every_use_case_alike() {
    let mut faces = Faces::new().await;

    // The code graph.
    let cli = faces.cli(&["context", "--focus", "cart"]);
    let mcp = faces.mcp("get_context", json!({"focus": "cart"})).await;
    faces.same("context", cli, mcp);
    let cli = faces.cli(&["expand", "src/shop/cart.py::Cart"]);
    let mcp = faces
        .mcp("expand", json!({"target": "src/shop/cart.py::Cart"}))
        .await;
    faces.same("expand a symbol", cli, mcp);

    // Writes.
    let remember = [
        (
            "decision",
            "Carts are saved through write_cart only.",
            "src/shop/cart.py",
            None,
        ),
        (
            "project_pattern",
            "Totals once came from old_total in the legacy module.",
            "src/shop/legacy.py",
            None,
        ),
        (
            "contributor_profile",
            "Alice reviews cart changes carefully and asks for tests.",
            "src/shop/cart.py",
            Some("alice"),
        ),
        (
            "developer_pattern",
            "Alice often forgets cart tests when she touches storage.",
            "src/shop/storage.py",
            Some("alice"),
        ),
    ];
    let mut written = Vec::new();
    for (kind, content, path, developer) in remember {
        let mut args = vec!["memory", "add", "-t", kind, content, "--path", path];
        let mut arguments = json!({"type": kind, "content": content, "paths": [path]});
        if let Some(developer) = developer {
            args.extend(["--developer", developer]);
            arguments["developer"] = json!(developer);
        }
        let cli = faces.cli(&args);
        let mcp = faces.mcp("remember", arguments).await;
        written.push(ids(&faces.same(&format!("remember a {kind}"), cli, mcp)));
    }
    let (cli_cart, mcp_cart) = written[0].clone();
    let cli = faces.cli(&["expand", &cli_cart]);
    let mcp = faces.mcp("expand", json!({"target": mcp_cart})).await;
    faces.same("expand a memory id", cli, mcp);

    // A file goes away: memories anchored on it are flagged, not dropped.
    std::fs::remove_file(faces.repo.path().join("src/shop/legacy.py")).unwrap();
    faces
        .repo
        .commit_as("remove the legacy module", "Bob", "bob@example.com", 10);
    faces.index();
    let cli = faces.cli(&["memory", "search", "totals legacy module"]);
    let mcp = faces
        .mcp(
            "search_project_memory",
            json!({"query": "totals legacy module", "max_tokens": SEARCH_TOKENS}),
        )
        .await;
    let (cli, _) = faces.same("search project memories", cli, mcp);
    assert_eq!(cli["max_tokens"], SEARCH_TOKENS, "{cli:#}");
    assert_eq!(
        cli["memories"][0]["memory"]["unknown_anchors"],
        json!(["src/shop/legacy.py"]),
        "{cli:#}"
    );

    // A developer's memories: the profile is shown as the profile, not again among them.
    let cli = faces.cli(&["memory", "search", "cart tests", "--developer", "alice"]);
    let mcp = faces
        .mcp(
            "search_developer_memory",
            json!({"developer": "alice", "query": "cart tests", "max_tokens": SEARCH_TOKENS}),
        )
        .await;
    let (cli, _) = faces.same("search a developer's memories", cli, mcp);
    let profile = cli["profile"]["id"].as_str().expect("a profile");
    let found: Vec<&str> = cli["memories"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["memory"]["id"].as_str().unwrap())
        .collect();
    assert_eq!(found, [written[3].0.as_str()], "{cli:#}");
    assert!(!found.contains(&profile));

    // Code review.
    faces.repo.write(
        "src/shop/cart.py",
        format!(
            "{}\n    def clear(self):\n        self.items = []\n",
            faces.repo.read("src/shop/cart.py")
        ),
    );
    let cli = faces.cli(&["review"]);
    let mcp = faces.mcp("review_diff", json!({})).await;
    faces.same("review the working tree", cli, mcp);
    let outcome = json!({
        "verdict": "request_changes",
        "author": "alice",
        "review_id": "PR-7",
        "findings": [
            {"category": "naming", "file": "src/shop/cart.py", "line": 4, "message": "Cart is vague",
             "disposition": "rejected", "reason": "it is the domain's word"},
            {"category": "tests", "file": "src/shop/cart.py", "line": 14, "message": "test clear()",
             "disposition": "implemented"}
        ],
        "learnings": [{"type": "decision", "content": "Carts keep items in the order they were added.",
                       "paths": ["src/shop/cart.py"]}]
    });
    let file = faces.repo.data_dir().join("outcome.json");
    std::fs::write(&file, outcome.to_string()).unwrap();
    let cli = faces.cli(&["record-review", file.to_str().unwrap()]);
    let mcp = faces.mcp("record_review", outcome).await;
    let (recorded, recorded_mcp) = faces.same("record a review", cli, mcp);
    // The rules are what the recorded reviews add up to, with the rejection patterns behind
    // them (which a recorded review lists on its own).
    let mut rules = faces.cli(&["rules"]);
    let behind: Vec<Value> = rules
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .filter_map(|stat| stat.as_object_mut().unwrap().remove("memories"))
        .collect();
    assert_eq!(rules, recorded["rules"], "{rules:#}");
    let rejections: Vec<&Value> = recorded["rejections"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| &w["id"])
        .collect();
    assert_eq!(behind, [json!(rejections)], "{recorded:#}");

    // A guideline change accepted for the rejected naming finding.
    let change = |recorded: &Value| {
        json!({
            "file": "CLAUDE.md", "section": "Naming", "current_text": "",
            "proposed_text": "Domain words such as Cart are good names.",
            "rationale": "rejected: it is the domain's word", "category": "naming",
            "memory_ids": [recorded["rejections"][0]["id"]], "confidence": 0.9,
            "outcome": "accepted", "by": "alice"
        })
    };
    let file = faces.repo.data_dir().join("change.json");
    std::fs::write(&file, change(&recorded).to_string()).unwrap();
    let cli = faces.cli(&["rules", "--record", file.to_str().unwrap()]);
    let mcp = faces
        .mcp("record_guideline_change", change(&recorded_mcp))
        .await;
    let (accepted, _) = faces.same("record a guideline change", cli, mcp);
    assert_eq!(accepted["addressed"], json!(rejections), "{accepted:#}");

    // Forgetting.
    let cli = faces.cli(&["memory", "forget", &cli_cart]);
    let mcp = faces.mcp("forget", json!({"id": mcp_cart})).await;
    faces.same("forget a memory", cli, mcp);
    let cli = faces.cli(&["memory", "search", "carts saved"]);
    let mcp = faces
        .mcp(
            "search_project_memory",
            json!({"query": "carts saved", "max_tokens": SEARCH_TOKENS}),
        )
        .await;
    let (cli, _) = faces.same("search after forgetting", cli, mcp);
    assert!(!cli.to_string().contains(&cli_cart), "{cli:#}");

    // Both faces left the same memories and rule statistics behind.
    faces.client.take().unwrap().cancel().await.unwrap();
    let of = |repo: &TestRepo, data: &Path, args: &[&str]| -> Value {
        let output = repo.cairn_command(data).args(args).output().unwrap();
        assert!(output.status.success(), "{output:?}");
        serde_json::from_slice(&output.stdout).unwrap()
    };
    for args in [
        &["memory", "list", "--all", "--json"][..],
        &["rules", "--json"],
    ] {
        // Memories written in one transaction share their time, and their random ids order
        // them: by content instead.
        let by_content = |mut answer: Value| {
            if let Value::Array(items) = &mut answer {
                items.sort_by_key(|m| m["content"].to_string());
            }
            answer
        };
        let cli = by_content(of(&faces.repo, faces.repo.data_dir(), args));
        let mcp = by_content(of(&faces.repo, faces.mcp_data.path(), args));
        faces.same(&format!("what `cairn {}` finds", args.join(" ")), cli, mcp);
    }
}
