//! Organisation memories and file patterns, through the real `cairn serve` and rmcp's client:
//! two repositories of one organisation share developer memories and generic framework
//! knowledge but not decisions, a restatement across the scopes is NONE, and review_diff shows
//! a rejection pattern for every changed file its glob matches.

use serde_json::{Value, json};

use crate::mcp::{call, connect, connect_with_orgs, text};
use crate::support::TestRepo;

/// A repository of the organisation `acme`, with one Python file committed.
fn acme_repo(name: &str) -> TestRepo {
    let repo = TestRepo::new();
    repo.git(&[
        "remote",
        "add",
        "origin",
        &format!("git@github.com:acme/{name}.git"),
    ]);
    repo.write("app/main.py", "def main():\n    return 1\n");
    repo.commit("start");
    repo
}

fn structured(result: &rmcp::model::CallToolResult) -> Value {
    assert_ne!(result.is_error, Some(true), "{}", text(result));
    result.structured_content.clone().expect("structured")
}

/// The ids and scopes of a search's memories.
fn hits(found: &Value) -> Vec<(String, String)> {
    found["memories"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["memory"]["id"].as_str().unwrap().to_string(),
                m["memory"]["scope"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn two_repositories_of_one_organisation_share_its_memories() {
    let orgs = tempfile::tempdir().unwrap();
    let one = acme_repo("one");
    let two = acme_repo("two");

    let client = connect_with_orgs(&one, orgs.path()).await;
    let remember = |args: Value| call(&client, "remember", args);
    let pattern = structured(
        &remember(json!({
            "type": "developer_pattern",
            "developer": "alice",
            "content": "Alice forgets to close database cursors in migration scripts.",
        }))
        .await,
    );
    assert_eq!(pattern["event"], "ADD", "{pattern}");
    assert_eq!(pattern["memory"]["scope"], "org", "{pattern}");
    let framework = structured(
        &remember(json!({
            "type": "framework_knowledge",
            "content": "Django querysets are lazy: slicing one issues a LIMIT query.",
            "file_pattern": "*.py",
        }))
        .await,
    );
    assert_eq!(framework["memory"]["scope"], "org", "{framework}");
    assert_eq!(framework["memory"]["file_pattern"], "*.py", "{framework}");
    let decision = structured(
        &remember(json!({
            "type": "decision",
            "content": "Payments retry webhooks with exponential backoff capped at one hour.",
        }))
        .await,
    );
    assert_eq!(decision["memory"]["scope"], "repository", "{decision}");
    // A framework memory about this repository's own folders stays in the repository.
    let local = structured(
        &remember(json!({
            "type": "framework_knowledge",
            "content": "Celery tasks in app/tasks share one broker connection pool.",
            "file_pattern": "app/tasks/**",
        }))
        .await,
    );
    assert_eq!(local["memory"]["scope"], "repository", "{local}");
    // An organisation write that restates the repository's decision is NONE too: the
    // decision stays where it is.
    let restated = structured(
        &remember(json!({
            "type": "decision",
            "scope": "org",
            "content": "Payments retry webhooks with exponential backoff capped at one hour.",
        }))
        .await,
    );
    assert_eq!(restated["event"], "NONE", "{restated}");
    assert_eq!(restated["id"], decision["id"], "{restated}");
    assert_eq!(restated["memory"]["scope"], "repository", "{restated}");
    client.cancel().await.unwrap();

    let client = connect_with_orgs(&two, orgs.path()).await;
    let developer = call(
        &client,
        "search_developer_memory",
        json!({"developer": "alice", "query": "database cursors"}),
    )
    .await;
    let ids = hits(&structured(&developer));
    assert_eq!(
        ids,
        [(
            pattern["id"].as_str().unwrap().to_string(),
            "org".to_string()
        )]
    );
    assert!(
        text(&developer).contains("close database cursors in migration scripts. · @alice · org"),
        "{}",
        text(&developer)
    );
    let project = call(
        &client,
        "search_project_memory",
        json!({"query": "Django querysets slicing"}),
    )
    .await;
    let ids = hits(&structured(&project));
    assert_eq!(
        ids,
        [(
            framework["id"].as_str().unwrap().to_string(),
            "org".to_string()
        )]
    );
    assert!(text(&project).contains("· org"), "{}", text(&project));
    for query in [
        "payments webhooks exponential backoff",
        "Celery broker pool",
    ] {
        let elsewhere = call(&client, "search_project_memory", json!({ "query": query })).await;
        assert!(
            hits(&structured(&elsewhere)).is_empty(),
            "{query}: {}",
            text(&elsewhere)
        );
    }

    // Restating the organisation's memory from the second repository writes nothing, in
    // either scope, and answers with the organisation's memory.
    for scope in [None, Some("repository")] {
        let mut args = json!({
            "type": "framework_knowledge",
            "content": "Django querysets are lazy: slicing one issues a LIMIT query.",
            "file_pattern": "*.py",
        });
        if let Some(scope) = scope {
            args["scope"] = json!(scope);
        }
        let again = structured(&call(&client, "remember", args).await);
        assert_eq!(again["event"], "NONE", "{scope:?}: {again}");
        assert_eq!(again["id"], framework["id"], "{again}");
        assert_eq!(again["memory"]["scope"], "org", "{again}");
    }
    let again = structured(
        &call(
            &client,
            "remember",
            json!({
                "type": "developer_pattern",
                "developer": "alice",
                "content": "Alice forgets to close database cursors in migration scripts.",
            }),
        )
        .await,
    );
    assert_eq!(again["event"], "NONE", "{again}");
    assert_eq!(again["id"], pattern["id"], "{again}");
    // Nothing landed in the second repository's own store: it lists the organisation's two.
    let output = two
        .cairn_command(two.data_dir())
        .env("CAIRN_ORGS_DIR", orgs.path())
        .args(["memory", "list", "--json"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let listed: Value = serde_json::from_slice(&output.stdout).unwrap();
    let scopes: Vec<&Value> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|m| &m["scope"])
        .collect();
    assert_eq!(scopes, [&json!("org"), &json!("org")], "{listed}");
    // A memory of the organisation is found by id from either repository.
    let shown = call(
        &client,
        "expand",
        json!({"target": framework["id"].as_str().unwrap()}),
    )
    .await;
    assert!(
        text(&shown).contains("Django querysets"),
        "{}",
        text(&shown)
    );
    client.cancel().await.unwrap();

    // The organisation's store is private, like the repositories' data.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let dirs: Vec<_> = std::fs::read_dir(orgs.path())
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        assert_eq!(dirs.len(), 1, "{dirs:?}");
        assert!(
            dirs[0]
                .file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("acme-")
        );
        let mode = std::fs::metadata(&dirs[0]).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700);
    }
}

/// A repository with a test file and a source file, indexed.
fn tested_repo() -> TestRepo {
    let repo = TestRepo::new();
    repo.write("src/app.py", "def total(items):\n    return sum(items)\n");
    repo.write(
        "tests/test_x.py",
        "from src.app import total\n\ndef test_total():\n    assert total([1]) == 1\n",
    );
    // The repository's own text cannot choose an organisation's memories to join.
    repo.write("cairn.toml", "[team]\norg = \"acme\"\n");
    repo.commit("start");
    repo.index();
    repo
}

/// The ids of a briefing's rejection patterns.
fn rejections(briefing: &Value) -> Vec<String> {
    briefing["rejection_patterns"]
        .as_array()
        .map(|list| {
            list.iter()
                .map(|n| n["id"].as_str().unwrap().to_string())
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread")]
async fn review_diff_shows_rejection_patterns_whose_glob_matches_a_changed_file() {
    let repo = tested_repo();
    let client = connect(&repo).await;
    let written = structured(
        &call(
            &client,
            "remember",
            json!({
                "type": "rejection_pattern",
                "content": "Reviewers reject sleeping in fixtures; waits belong in a fake clock.",
                "file_pattern": "tests/**",
            }),
        )
        .await,
    );
    assert_eq!(written["event"], "ADD", "{written}");
    // No remote (a cairn.toml naming an org does not count): the generic pattern stays in
    // the repository, said so.
    assert_eq!(written["memory"]["scope"], "repository", "{written}");
    assert!(
        written["notes"]
            .to_string()
            .contains("stored in the repository's memories, not the organisation's"),
        "{written}"
    );
    let recorded = structured(
        &call(
            &client,
            "record_review",
            json!({
                "verdict": "comment",
                "author": "bob",
                "review_id": "PR-9",
                "findings": [{
                    "category": "naming",
                    "message": "Parametrised cases want ids spelled out",
                    "disposition": "rejected",
                    "reason": "the generated ids are enough",
                    "file_pattern": "tests/**/*.py",
                }],
            }),
        )
        .await,
    );
    let from_review = recorded["rejections"][0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(
        recorded["rejections"][0]["memory"]["file_pattern"], "tests/**/*.py",
        "{recorded}"
    );

    repo.write(
        "tests/test_x.py",
        "from src.app import total\n\ndef test_total():\n    assert total([2]) == 2\n",
    );
    let briefing = structured(&call(&client, "review_diff", json!({})).await);
    let shown = rejections(&briefing);
    assert!(
        shown.contains(&written["id"].as_str().unwrap().to_string())
            && shown.contains(&from_review),
        "{briefing}"
    );

    repo.git(&["checkout", "--", "tests/test_x.py"]);
    repo.write(
        "src/app.py",
        "def total(items):\n    return sum(items) + 0\n",
    );
    let briefing = structured(&call(&client, "review_diff", json!({})).await);
    assert!(rejections(&briefing).is_empty(), "{briefing}");

    // Patterns that leave the repository, are not globs, or sit on a type without files are
    // refused, naming the field; nothing is stored.
    for (kind, pattern, says) in [
        ("rejection_pattern", "../other/**", "`..`"),
        ("rejection_pattern", "/etc/**", "absolute"),
        ("rejection_pattern", "tests/[unclosed", "not a valid glob"),
        (
            "decision",
            "*.py",
            "applies to rejection_pattern and framework_knowledge",
        ),
    ] {
        let refused = call(
            &client,
            "remember",
            json!({"type": kind, "content": "Something else entirely.", "file_pattern": pattern}),
        )
        .await;
        assert_eq!(refused.is_error, Some(true), "{pattern}");
        assert!(
            text(&refused).contains(says),
            "{pattern}: {}",
            text(&refused)
        );
    }
    let bad_finding = call(
        &client,
        "record_review",
        json!({
            "verdict": "comment",
            "author": "bob",
            "findings": [{
                "category": "naming", "message": "m", "disposition": "rejected",
                "file_pattern": "../x",
            }],
        }),
    )
    .await;
    assert_eq!(bad_finding.is_error, Some(true));
    client.cancel().await.unwrap();
    let listed: Value =
        serde_json::from_str(&repo.cairn_ok(&["memory", "list", "--json"])).unwrap();
    let count = |kind: &str| {
        listed
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| m["type"] == kind)
            .count()
    };
    assert_eq!((count("rejection_pattern"), count("decision")), (2, 0));
}

#[tokio::test(flavor = "multi_thread")]
async fn generic_rejection_patterns_from_a_review_go_to_the_organisation() {
    let orgs = tempfile::tempdir().unwrap();
    let one = acme_repo("one");
    let two = acme_repo("two");
    let client = connect_with_orgs(&one, orgs.path()).await;
    let recorded = structured(
        &call(
            &client,
            "record_review",
            json!({
                "verdict": "comment",
                "author": "bob",
                "review_id": "PR-1",
                "findings": [
                    {"category": "style", "file": "app/main.py", "message": "Prefer f-strings over percent formatting",
                     "disposition": "rejected", "reason": "team style allows both", "file_pattern": "*.py"},
                    {"category": "style", "file": "app/main.py", "message": "Split main into smaller helpers",
                     "disposition": "rejected", "reason": "it is four lines"},
                ],
            }),
        )
        .await,
    );
    let scopes: Vec<&str> = recorded["rejections"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["memory"]["scope"].as_str().unwrap())
        .collect();
    assert_eq!(scopes, ["repository", "org"], "{recorded}");
    client.cancel().await.unwrap();

    // The second repository's review of a Python change shows the organisation's pattern.
    two.index();
    two.write("app/main.py", "def main():\n    return 2\n");
    let client = connect_with_orgs(&two, orgs.path()).await;
    let briefing = call(&client, "review_diff", json!({})).await;
    let shown = rejections(&structured(&briefing));
    let org_id = recorded["rejections"][1]["id"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(shown, [org_id.as_str()], "{}", text(&briefing));
    assert!(
        text(&briefing).contains("[rejection_pattern · org]"),
        "{}",
        text(&briefing)
    );
    client.cancel().await.unwrap();

    // The guideline loop sees both stores: the brief cites the organisation's pattern, and an
    // accepted change marks it addressed in the organisation's store, which the second
    // repository then reads.
    let repo_id = recorded["rejections"][0]["id"].as_str().unwrap();
    let client = connect_with_orgs(&one, orgs.path()).await;
    call(
        &client,
        "record_review",
        json!({
            "verdict": "comment", "author": "bob", "review_id": "PR-2",
            "findings": [{"category": "style", "file": "app/main.py",
                          "message": "Use single quotes for strings", "disposition": "rejected",
                          "reason": "the formatter decides"}],
        }),
    )
    .await;
    let prompt = client
        .get_prompt(rmcp::model::GetPromptRequestParams::new(
            "refine_guidelines",
        ))
        .await
        .unwrap();
    let brief = serde_json::to_string(&prompt).unwrap();
    assert!(
        brief.contains(&org_id) && brief.contains(repo_id),
        "{brief}"
    );
    let change = structured(
        &call(
            &client,
            "record_guideline_change",
            json!({
                "file": "CLAUDE.md", "section": "Style", "current_text": "",
                "proposed_text": "Percent formatting and f-strings are both fine; do not flag either.",
                "rationale": "both style findings were rejected", "category": "style",
                "memory_ids": [repo_id, org_id], "outcome": "accepted",
            }),
        )
        .await,
    );
    let mut addressed: Vec<&str> = change["addressed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    addressed.sort();
    let mut expected = vec![repo_id, org_id.as_str()];
    expected.sort();
    assert_eq!(addressed, expected, "{change}");
    client.cancel().await.unwrap();

    let client = connect_with_orgs(&two, orgs.path()).await;
    let shown = call(&client, "expand", json!({"target": org_id})).await;
    let change_id = change["change"]["id"].as_str().unwrap();
    assert!(
        text(&shown).contains(&format!("addressed by guideline change {change_id}")),
        "{}",
        text(&shown)
    );
    client.cancel().await.unwrap();
}

#[test]
fn scope_defaults_follow_cairn_toml_and_bad_scopes_are_refused() {
    let repo = acme_repo("three");
    let add = |extra: &[&str]| {
        let mut args = vec![
            "memory",
            "add",
            "-t",
            "developer_pattern",
            "--developer",
            "alice",
            "--json",
        ];
        args.extend_from_slice(extra);
        args.push("Alice names booleans as questions.");
        repo.cairn(&args)
    };
    let written: Value = serde_json::from_slice(&add(&[]).stdout).unwrap();
    assert_eq!(written["memory"]["scope"], "org", "{written}");

    let refused = add(&["--scope", "galaxy"]);
    assert!(!refused.status.success());
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("unknown scope `galaxy`"),
        "{refused:?}"
    );

    repo.write("cairn.toml", "[memory]\norg_types = []\n");
    let written: Value = serde_json::from_slice(&add(&[]).stdout).unwrap();
    // Per-repository isolation: the same text is now a repository memory, and it restates
    // the organisation's, so nothing is written.
    assert_eq!(written["event"], "NONE", "{written}");
    assert_eq!(written["memory"]["scope"], "org", "{written}");
    let other: Value = serde_json::from_slice(
        &repo
            .cairn(&[
                "memory",
                "add",
                "-t",
                "developer_pattern",
                "--developer",
                "alice",
                "--json",
                "Alice splits pull requests by layer.",
            ])
            .stdout,
    )
    .unwrap();
    assert_eq!(other["memory"]["scope"], "repository", "{other}");

    repo.write(
        "cairn.toml",
        "[memory]\norg_types = [\"developer_patterns\"]\n",
    );
    let refused = add(&[]);
    assert!(!refused.status.success());
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("cairn.toml [memory] org_types"),
        "{refused:?}"
    );
}

#[test]
fn a_repository_cannot_widen_its_org_types_without_the_users_own_configuration() {
    let repo = acme_repo("four");
    let config = tempfile::tempdir().unwrap();
    let cairn = |args: &[&str]| {
        repo.cairn_command(repo.data_dir())
            .env("XDG_CONFIG_HOME", config.path())
            .args(args)
            .output()
            .unwrap()
    };
    let decide = |text: &str| {
        let output = cairn(&["memory", "add", "-t", "decision", "--json", text]);
        assert!(output.status.success(), "{output:?}");
        serde_json::from_slice::<Value>(&output.stdout).unwrap()
    };
    // A decision stays in its repository by default; cairn.toml asks for the organisation.
    repo.write("cairn.toml", "[memory]\norg_types = [\"decision\"]\n");

    let ignored = decide("Payments retry three times, then park the job.");
    assert_eq!(ignored["memory"]["scope"], "repository", "{ignored}");
    assert!(
        ignored
            .to_string()
            .contains("your own configuration does not allow"),
        "{ignored}"
    );
    let doctor = String::from_utf8_lossy(&cairn(&["doctor"]).stdout).into_owned();
    assert!(
        doctor.contains("org types:  PROBLEM — cairn.toml asks to send decision"),
        "{doctor}"
    );
    assert!(doctor.contains("~/.config/cairn/config.toml"), "{doctor}");
    // Narrowing needs no consent: developer patterns stay home without a word.
    repo.write("cairn.toml", "[memory]\norg_types = []\n");
    let doctor = String::from_utf8_lossy(&cairn(&["doctor"]).stdout).into_owned();
    assert!(doctor.contains("org types:  none"), "{doctor}");

    // The user's own configuration allows it: the repository's ask is honoured.
    repo.write("cairn.toml", "[memory]\norg_types = [\"decision\"]\n");
    std::fs::create_dir_all(config.path().join("cairn")).unwrap();
    std::fs::write(
        config.path().join("cairn/config.toml"),
        "[memory]\norg_types = [\"decision\", \"developer_pattern\"]\n",
    )
    .unwrap();
    let honoured = decide("Invoices are immutable once sent; corrections are credit notes.");
    assert_eq!(honoured["memory"]["scope"], "org", "{honoured}");
    let doctor = String::from_utf8_lossy(&cairn(&["doctor"]).stdout).into_owned();
    assert!(
        doctor.contains(
            "org types:  to the organisation's memories unless a write names its scope: decision\n"
        ),
        "{doctor}"
    );
}

/// A repository of `acme` with `src/app.py` (as `app`) and `lib/web.py` (as `web`) committed
/// and indexed.
fn acme_repo_with(name: &str, app: &str, web: &str) -> TestRepo {
    let repo = TestRepo::new();
    repo.git(&[
        "remote",
        "add",
        "origin",
        &format!("git@github.com:acme/{name}.git"),
    ]);
    repo.write("src/app.py", app);
    repo.write("lib/web.py", web);
    repo.commit("start");
    repo.index();
    repo
}

/// The ids of a briefing's memories and rejection patterns.
fn briefed(briefing: &Value) -> Vec<String> {
    ["memories", "rejection_patterns"]
        .iter()
        .flat_map(|section| briefing[section].as_array().cloned().unwrap_or_default())
        .map(|n| n["id"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn an_organisation_memory_is_anchored_in_the_repository_it_was_written_in() {
    let orgs = tempfile::tempdir().unwrap();
    let one = acme_repo_with(
        "one",
        "def handle(request):\n    return request.body\n",
        "def serve():\n    return 1\n",
    );
    // The trap: the second repository has a `src/app.py` too, about something else.
    let two = acme_repo_with(
        "two",
        "def render_page(title):\n    return title.upper()\n",
        "def handle(event):\n    return event.kind\n",
    );

    let client = connect_with_orgs(&one, orgs.path()).await;
    let remember = |args: Value| call(&client, "remember", args);
    let on_path = structured(
        &remember(json!({
            "type": "decision", "scope": "org", "paths": ["src/app.py"],
            "content": "Request bodies are streamed in chunks of 64 KiB.",
        }))
        .await,
    );
    assert_eq!(on_path["memory"]["scope"], "org", "{on_path}");
    assert_eq!(
        on_path["memory"]["origin"], "github.com/acme/one",
        "{on_path}"
    );
    let on_symbol = structured(
        &remember(json!({
            "type": "project_pattern", "scope": "org", "symbols": ["src/app.py::handle"],
            "content": "Teardown hooks close the session after each call.",
        }))
        .await,
    );
    assert_eq!(
        on_symbol["memory"]["symbols"],
        json!(["src/app.py::handle"]),
        "{on_symbol}"
    );
    let on_pattern = structured(
        &remember(json!({
            "type": "framework_knowledge", "file_pattern": "*.py", "paths": ["src/app.py"],
            "content": "Gunicorn workers are recycled after a thousand requests.",
        }))
        .await,
    );
    assert_eq!(on_pattern["memory"]["scope"], "org", "{on_pattern}");
    let id = |written: &Value| written["id"].as_str().unwrap().to_string();
    let (on_path, on_symbol, on_pattern) = (id(&on_path), id(&on_symbol), id(&on_pattern));

    // In its own repository nothing changes: found by its path, shown without an origin.
    one.write(
        "src/app.py",
        "def handle(request):\n    return request.body or b''\n",
    );
    let briefing = call(&client, "review_diff", json!({})).await;
    let shown = briefed(&structured(&briefing));
    for written in [&on_path, &on_symbol, &on_pattern] {
        assert!(shown.contains(written), "{written}: {}", text(&briefing));
    }
    says(&briefing, &[], &["from github.com"]);
    client.cancel().await.unwrap();

    // In another repository, its own `src/app.py` is not the file the memories are about.
    let client = connect_with_orgs(&two, orgs.path()).await;
    two.write(
        "src/app.py",
        "def render_page(title):\n    return title.title()\n",
    );
    let briefing = call(&client, "review_diff", json!({})).await;
    let shown = briefed(&structured(&briefing));
    assert_eq!(shown, [on_pattern.as_str()], "{}", text(&briefing));
    let pattern_line = format!(
        "{on_pattern}: Gunicorn workers are recycled after a thousand requests. (from github.com/acme/one: src/app.py, *.py)"
    );
    says(&briefing, &[&pattern_line], &[]);
    let expanded = call(&client, "expand", json!({"target": "src/app.py"})).await;
    says(&expanded, &[&on_pattern], &[&on_path]);

    // A symbol of the same name is what a symbol anchor still says here.
    two.git(&["checkout", "--", "src/app.py"]);
    two.write("lib/web.py", "def handle(event):\n    return event.name\n");
    let briefing = call(&client, "review_diff", json!({})).await;
    let symbol_line = "(from github.com/acme/one: src/app.py::handle)";
    says(&briefing, &[&on_symbol, symbol_line], &[&on_path]);
    let expanded = call(&client, "expand", json!({"target": "lib/web.py::handle"})).await;
    says(&expanded, &[&on_symbol], &[&on_path]);

    // Wherever it is shown, the origin comes with the path, and the path is not called gone.
    let context = call(&client, "get_context", json!({"focus": "src/app.py"})).await;
    let path_line = format!(
        "{on_path}: Request bodies are streamed in chunks of 64 KiB. (from github.com/acme/one: src/app.py)"
    );
    says(&context, &[&path_line], &[]);
    let query = json!({"query": "request bodies streamed chunks"});
    let found = call(&client, "search_project_memory", query).await;
    says(
        &found,
        &["(from github.com/acme/one: src/app.py) · org"],
        &[],
    );
    let hit = &structured(&found)["memories"][0]["memory"];
    assert_eq!(hit["origin"], "github.com/acme/one", "{hit}");
    assert!(hit.get("unknown_anchors").is_none(), "{hit}");
    // A search by the path finds nothing of the other repository's.
    let query = json!({"query": "src/app.py"});
    let by_path = call(&client, "search_project_memory", query).await;
    says(&by_path, &[], &[&on_path]);
    client.cancel().await.unwrap();
}

/// Checks that an answer's text holds every one of `present` and none of `absent`.
fn says(result: &rmcp::model::CallToolResult, present: &[&str], absent: &[&str]) {
    let text = text(result);
    for wanted in present {
        assert!(text.contains(wanted), "{wanted:?} missing from:\n{text}");
    }
    for unwanted in absent {
        assert!(!text.contains(unwanted), "{unwanted:?} shown in:\n{text}");
    }
}
