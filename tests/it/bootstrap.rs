//! `cairn bootstrap` and the `bootstrap_framework_knowledge` prompt: frameworks detected from
//! a real repository's manifests, the shipped knowledge seeded once through the write path,
//! found by search over MCP, and hostile manifests reported, never followed or fatal.

use std::collections::BTreeSet;

use rmcp::model::GetPromptRequestParams;
use serde_json::{Value, json};

use crate::mcp::{call, connect, text};
use crate::support::TestRepo;

/// Shipped memories of the detected frameworks: Django 6, React 6, Next.js 5.
const SHIPPED: usize = 17;

/// A repository with a Django service and a React/Next.js front end, and manifests that must
/// not count: malformed, undecodable, vendored, ignored, and one linked from outside.
fn shop(outside: &std::path::Path) -> TestRepo {
    let repo = TestRepo::new();
    repo.write(
        "pyproject.toml",
        "[project]\nname = \"shop\"\ndependencies = [\"Django>=4.2,<5\", \"celery[redis]\"]\n",
    );
    repo.write(
        "web/package.json",
        r#"{"name": "web", "dependencies": {"react": "^18.2.0", "next": "14.1.0"}}"#,
    );
    repo.write(
        "admin/package.json",
        r#"{"devDependencies": {"react": "^18.2.0"}}"#,
    );
    repo.write("broken/package.json", "{\"dependencies\": {\"express\": ");
    repo.write("legacy/requirements.txt", b"flask==2.0\n\xff\xfe\n");
    let express = r#"{"dependencies": {"express": "^4.18.0"}}"#;
    repo.write("web/node_modules/lib/package.json", express);
    repo.write(".gitignore", "generated/\n");
    repo.write("generated/package.json", express);
    std::fs::write(outside.join("package.json"), express).unwrap();
    std::fs::create_dir_all(repo.path().join("linked")).unwrap();
    std::os::unix::fs::symlink(
        outside.join("package.json"),
        repo.path().join("linked/package.json"),
    )
    .unwrap();
    repo.commit("manifests");
    repo
}

fn bootstrap(repo: &TestRepo, args: &[&str]) -> Value {
    let mut all = vec!["bootstrap", "--json"];
    all.extend_from_slice(args);
    serde_json::from_str(&repo.cairn_ok(&all)).unwrap()
}

fn strings<'a>(value: &'a Value, key: &str) -> Vec<&'a str> {
    value
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v[key].as_str().unwrap())
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn bootstrap_seeds_detected_frameworks_once() {
    let outside = tempfile::tempdir().unwrap();
    let repo = shop(outside.path());

    let plan = bootstrap(&repo, &["--dry-run"]);
    let detected: BTreeSet<&str> = strings(&plan["detected"], "framework")
        .into_iter()
        .collect();
    assert_eq!(
        detected,
        BTreeSet::from(["Celery", "Django", "Next.js", "React"]),
        "{plan:#}"
    );
    let django = &plan["detected"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["framework"] == "Django")
        .unwrap();
    assert_eq!(django["version"], ">=4.2,<5");
    assert_eq!(django["manifest"], "pyproject.toml");
    assert_eq!(plan["without_knowledge"], json!(["Celery"]));
    assert_eq!(plan["written"], SHIPPED);
    assert!(
        plan["seeded"]
            .as_array()
            .unwrap()
            .iter()
            .all(|s| s["event"].is_null())
    );
    let notes: Vec<String> = plan["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| {
            format!(
                "{}: {}",
                n["manifest"].as_str().unwrap(),
                n["reason"].as_str().unwrap()
            )
        })
        .collect();
    let noted = |path: &str, reason: &str| {
        assert!(
            notes
                .iter()
                .any(|n| n.starts_with(path) && n.contains(reason)),
            "{path} ({reason}) in {notes:#?}"
        )
    };
    noted("broken/package.json", "malformed JSON");
    noted("legacy/requirements.txt", "not UTF-8");
    noted("linked/package.json", "symbolic link");
    assert_eq!(notes.len(), 3, "{notes:#?}");
    let listed = repo.cairn_ok(&["memory", "list", "--json"]);
    assert_eq!(
        serde_json::from_str::<Value>(&listed).unwrap(),
        json!([]),
        "a dry run writes nothing"
    );

    let first = bootstrap(&repo, &[]);
    assert_eq!(first["written"], SHIPPED, "{first:#}");
    assert_eq!(first["unchanged"], 0);
    let seeded = first["seeded"].as_array().unwrap();
    assert!(seeded.iter().all(|s| s["event"] == "ADD"), "{first:#}");
    let ids: BTreeSet<&str> = strings(&first["seeded"], "id").into_iter().collect();
    assert_eq!(ids.len(), SHIPPED, "one memory per shipped fact");
    let frameworks: BTreeSet<&str> = strings(&first["seeded"], "framework").into_iter().collect();
    assert_eq!(frameworks, BTreeSet::from(["Django", "Next.js", "React"]));

    let again = bootstrap(&repo, &[]);
    assert_eq!(again["written"], 0, "{again:#}");
    assert_eq!(again["unchanged"], SHIPPED);
    assert!(
        again["seeded"]
            .as_array()
            .unwrap()
            .iter()
            .all(|s| s["event"] == "NONE")
    );
    let same: BTreeSet<&str> = strings(&again["seeded"], "id").into_iter().collect();
    assert_eq!(same, ids);
    let text_answer = repo.cairn_ok(&["bootstrap", "--dry-run"]);
    assert!(
        text_answer.contains("Would write 0 framework memories; 17 already stored"),
        "{text_answer}"
    );
    assert!(
        text_answer.contains("Detected without shipped knowledge: Celery"),
        "{text_answer}"
    );

    let client = connect(&repo).await;
    let found = call(
        &client,
        "search_project_memory",
        json!({"query": "select_related prefetch_related queries in a loop", "types": ["framework_knowledge"]}),
    )
    .await;
    assert_ne!(found.is_error, Some(true), "{}", text(&found));
    let body = found.structured_content.expect("structured content");
    let top = &body["memories"][0]["memory"];
    assert_eq!(top["type"], "framework_knowledge", "{body:#}");
    assert_eq!(top["source"], "import");
    assert_eq!(
        top["source_ref"],
        "https://docs.djangoproject.com/en/stable/ref/models/querysets/#select-related"
    );
    assert!(ids.contains(top["id"].as_str().unwrap()));

    let prompts = client.list_all_prompts().await.unwrap();
    assert!(
        prompts
            .iter()
            .any(|p| p.name == "bootstrap_framework_knowledge")
    );
    let prompt = client
        .get_prompt(GetPromptRequestParams::new("bootstrap_framework_knowledge"))
        .await
        .expect("prompt answered");
    let prompt_text = serde_json::to_string(&prompt.messages).unwrap();
    for expected in [
        "Django (python package django, version >=4.2,<5) in pyproject.toml",
        "React (npm package react, version ^18.2.0) in admin/package.json, web/package.json",
        "Next.js (npm package next, version 14.1.0) in web/package.json",
        "Django: 6 memories, all stored",
        "Detected without shipped knowledge: Celery",
        "broken/package.json: malformed JSON",
        "\\\"type\\\": \\\"framework_knowledge\\\"",
        "source_ref",
    ] {
        assert!(
            prompt_text.contains(expected),
            "{expected} in {prompt_text}"
        );
    }
    assert!(!prompt_text.contains("Express"), "{prompt_text}");
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn the_prompt_before_any_bootstrap_says_what_is_not_stored() {
    let repo = TestRepo::new();
    repo.write(
        "services/api/requirements-prod.txt",
        "fastapi>=0.110\nSQLAlchemy==2.0.25\n",
    );
    repo.write(
        "services/api/pyproject.toml",
        "[tool.poetry.dependencies]\npython = \"^3.12\"\nfastapi = \"^0.110\"\n",
    );
    repo.commit("api");
    let client = connect(&repo).await;
    let prompt = client
        .get_prompt(GetPromptRequestParams::new("bootstrap_framework_knowledge"))
        .await
        .expect("prompt answered");
    let prompt_text = serde_json::to_string(&prompt.messages).unwrap();
    for expected in [
        "FastAPI (python package fastapi, version >=0.110) in services/api/requirements-prod.txt",
        "FastAPI (python package fastapi, version ^0.110) in services/api/pyproject.toml",
        "SQLAlchemy (python package sqlalchemy, version ==2.0.25)",
        "FastAPI: 6 memories, 0 stored; `cairn bootstrap` seeds the other 6",
    ] {
        assert!(
            prompt_text.contains(expected),
            "{expected} in {prompt_text}"
        );
    }
    client.cancel().await.unwrap();
    let listed = repo.cairn_ok(&["memory", "list", "--json"]);
    assert_eq!(
        serde_json::from_str::<Value>(&listed).unwrap(),
        json!([]),
        "the prompt writes nothing"
    );
}

/// Every shipped memory, written with the real embedding model in two rounds (the Python
/// frameworks, then the JavaScript ones beside their vectors), lands as its own memory with its
/// text, link and type unchanged: nothing redacted, nothing merged into another fact.
#[test]
fn every_shipped_memory_is_stored_as_written() {
    let catalogue = cairn::frameworks::Catalogue::shipped().unwrap();
    let shipped: Vec<&cairn::frameworks::Shipped> = catalogue
        .frameworks
        .iter()
        .flat_map(|f| &f.memories)
        .collect();
    let model = cairn::memory::embed::default_model_dir();
    assert!(
        cairn::memory::embed::model_present(&model),
        "run `.ci/fetch-model`"
    );
    let repo = TestRepo::new();
    let run = |repo: &TestRepo| -> Value {
        let output = repo
            .cairn_command(repo.data_dir())
            .env("CAIRN_MODEL_DIR", &model)
            .args(["bootstrap", "--json"])
            .output()
            .unwrap();
        assert!(output.status.success(), "{output:?}");
        serde_json::from_slice(&output.stdout).unwrap()
    };
    repo.write(
        "pyproject.toml",
        "[project]\ndependencies = [\"django\", \"flask\", \"fastapi\", \"sqlalchemy\"]\n",
    );
    let python = run(&repo);
    repo.write(
        "web/package.json",
        r#"{"dependencies": {"react": "18", "next": "15", "express": "5"}}"#,
    );
    let both = run(&repo);
    assert_eq!(python["unchanged"], 0, "{python:#}");
    assert_eq!(both["unchanged"], python["written"], "{both:#}");
    assert_eq!(
        python["written"].as_u64().unwrap() + both["written"].as_u64().unwrap(),
        shipped.len() as u64
    );
    for round in [&python, &both] {
        for s in round["seeded"].as_array().unwrap() {
            assert!(
                s["event"] == "ADD" || s["event"] == "NONE" && s["stored"] == true,
                "{s}"
            );
        }
    }
    let listed: Value =
        serde_json::from_str(&repo.cairn_ok(&["memory", "list", "--json"])).unwrap();
    let stored = listed.as_array().unwrap();
    assert_eq!(stored.len(), shipped.len());
    for memory in shipped {
        let found = stored
            .iter()
            .find(|m| m["content"] == memory.content.as_str())
            .unwrap_or_else(|| panic!("stored as written: {}", memory.title));
        assert_eq!(found["title"], memory.title.as_str());
        assert_eq!(found["type"], "framework_knowledge");
        assert_eq!(found["source_ref"], memory.source.as_str());
    }
}
