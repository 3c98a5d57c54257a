//! `cairn learn repo` and the `learn` tool (`from: repository`): a real git repository with
//! decision records, a contributing guide, a CODEOWNERS file and a revert, learned as pending
//! proposals once; hostile files (a link out, a huge record, a secret) skipped or redacted.

use serde_json::{Value, json};

use crate::support::TestRepo;

/// The shop, its decisions, guide, owners and a history with a revert and a quick re-fix.
fn shop(outside: &std::path::Path) -> TestRepo {
    let repo = TestRepo::new();
    repo.write(
        "src/shop/db.py",
        "class ConnectionPool:\n    def acquire(self):\n        return None\n",
    );
    repo.write("src/shop/cart.py", "def total(cart):\n    return 0\n");
    repo.write("src/shop/pool.png", "\u{89}PNG\n");
    repo.write(
        "docs/adr/0001-record-architecture-decisions.md",
        "# 1. Record architecture decisions\n\n## Status\n\nAccepted\n\n## Decision\n\nWe will keep decision records in docs/adr.\n",
    );
    let key = format!("AKIA{}", "IOSFODNN7EXAMPLE");
    repo.write(
        "docs/adr/0002-use-postgresql.md",
        format!("---\nstatus: accepted\n---\n# Use PostgreSQL\n\n## Context and Problem Statement\n\nThe pool lives in `shop/db.py` ![the pool](../../src/shop/pool.png).\n\n## Decision Outcome\n\n<!-- vale off -->\nChosen option: PostgreSQL, through `ConnectionPool`; the test account is {key}.\n"),
    );
    repo.write(
        "docs/adr/0003-use-sqlite.md",
        "# 3. Use SQLite\n\n## Status\n\nSuperseded by [2](0002-use-postgresql.md)\n\n## Decision\n\nWe will use SQLite.\n",
    );
    repo.write(
        "docs/adr/0005-huge.md",
        format!("# 5. Huge\n\n## Decision\n\n{}\n", "x".repeat(300 * 1024)),
    );
    std::fs::write(
        outside.join("secret.md"),
        "# 9. Outside\n\n## Decision\n\nRead from outside.\n",
    )
    .unwrap();
    std::os::unix::fs::symlink(
        outside.join("secret.md"),
        repo.path().join("docs/adr/0004-linked.md"),
    )
    .unwrap();
    repo.write(
        "CONTRIBUTING.md",
        "# Contributing\n\n## Getting started\n\nRun `make setup`.\n\n## Code style\n\nFunctions are short; names say what, not how.\n\n## Tests\n\nEvery change to the cart comes with a test.\n\n## License\n\nMIT.\n",
    );
    repo.write(
        ".github/CODEOWNERS",
        "* @org/everyone\n/src/shop/ @org/shop @alice\n",
    );
    repo.commit_as("shop", "Ann", "ann@example.com", 10);
    // Reverted, then re-fixed soon after: a risky file.
    repo.write(
        "src/shop/tax.py",
        "def tax(x):\n    return round(x * 0.2)\n",
    );
    repo.commit_as("Round taxes", "Ann", "ann@example.com", 9);
    let rounded = head(&repo);
    std::fs::remove_file(repo.path().join("src/shop/tax.py")).unwrap();
    let revert = format!("Revert \"Round taxes\"\n\nThis reverts commit {rounded}.");
    repo.commit_as(&revert, "Ann", "ann@example.com", 9);
    repo.write("src/shop/tax.py", "def tax(x):\n    return x * 0.21\n");
    repo.commit_as("Raise the tax rate", "Ann", "ann@example.com", 8);
    repo.write("src/shop/tax.py", "def tax(x):\n    return x * 0.2\n");
    repo.commit_as("fix: the rate is 20%", "Bob", "bob@example.com", 7);
    repo
}

fn head(repo: &TestRepo) -> String {
    String::from_utf8(repo.git(&["rev-parse", "HEAD"]).stdout)
        .unwrap()
        .trim()
        .to_string()
}

fn learn(repo: &TestRepo, extra: &[&str]) -> Value {
    let mut args = vec!["learn", "repo", "--json"];
    args.extend(extra);
    serde_json::from_str(&repo.cairn_ok(&args)).unwrap()
}

fn pending(repo: &TestRepo) -> Vec<Value> {
    let listed: Value =
        serde_json::from_str(&repo.cairn_ok(&["memory", "list", "--pending", "--json"])).unwrap();
    listed.as_array().cloned().unwrap()
}

fn proposal<'a>(answer: &'a Value, from: &str) -> &'a Value {
    answer["proposed"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["from"] == from)
        .unwrap_or_else(|| panic!("no proposal from {from}: {answer:#}"))
}

#[tokio::test(flavor = "multi_thread")]
async fn the_repository_is_proposed_once_and_waits_for_a_person() {
    let outside = tempfile::tempdir().unwrap();
    let repo = shop(outside.path());
    repo.index();

    let dry = learn(&repo, &["--dry-run"]);
    assert_eq!(dry["dry_run"], true);
    assert!(dry["proposed"][0].get("event").is_none(), "{dry:#}");
    assert!(pending(&repo).is_empty(), "a dry run writes nothing");

    let first = learn(&repo, &[]);
    let from: Vec<(&str, &str, &str)> = first["proposed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["type"].as_str().unwrap(),
                p["from"].as_str().unwrap(),
                p["event"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        from,
        [
            (
                "decision",
                "docs/adr/0001-record-architecture-decisions.md",
                "ADD"
            ),
            ("decision", "docs/adr/0002-use-postgresql.md", "ADD"),
            ("project_pattern", "CONTRIBUTING.md \"Code style\"", "ADD"),
            ("project_pattern", "CONTRIBUTING.md \"Tests\"", "ADD"),
            ("risk_module", "src/shop/tax.py", "ADD"),
        ],
        "{first:#}"
    );
    let counts = &first["counts"];
    assert_eq!(
        (
            &counts["decision_records"],
            &counts["decisions"],
            &counts["reverts"],
            &counts["refixes"],
            &counts["codeowners_rules"]
        ),
        (&json!(3), &json!(2), &json!(1), &json!(1), &json!(2)),
        "{counts:#}"
    );
    assert_eq!(first["codeowners"], ".github/CODEOWNERS");

    // Anchored on what the record names (by the end of its path, the picture left out) and
    // the index knows, quoted without its markup; the secret never stored.
    let postgres = proposal(&first, "docs/adr/0002-use-postgresql.md");
    assert_eq!(
        postgres["anchors"],
        json!(["src/shop/db.py", "src/shop/db.py::ConnectionPool"])
    );
    assert!(
        postgres["content"]
            .as_str()
            .unwrap()
            .starts_with("Decided in docs/adr/0002-use-postgresql.md (accepted): Use PostgreSQL. Chosen option: PostgreSQL"),
        "{postgres:#}"
    );
    assert_eq!(first["redacted"], json!(["aws-access-key"]));
    let risk = proposal(&first, "src/shop/tax.py");
    assert!(
        risk["content"]
            .as_str()
            .unwrap()
            .contains("2 of its changes did not hold"),
        "{risk:#}"
    );

    // What was skipped, and why: hostile files are not read.
    let skipped: Vec<(String, String)> = first["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["item"].as_str().unwrap().to_string(),
                s["why"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let why = |item: &str| {
        skipped
            .iter()
            .find(|(i, _)| i == item)
            .map(|(_, w)| w.as_str())
            .unwrap_or_else(|| panic!("{item} not skipped: {skipped:?}"))
    };
    assert_eq!(
        why("docs/adr/0003-use-sqlite.md"),
        "its status is superseded: no longer the decision"
    );
    assert!(
        why("docs/adr/0004-linked.md").contains("outside the repository"),
        "{skipped:?}"
    );
    assert!(
        why("docs/adr/0005-huge.md").contains("larger than the limit for a decision record"),
        "{skipped:?}"
    );
    assert_eq!(why("CONTRIBUTING.md \"Getting started\""), "about setup");
    assert_eq!(why("CONTRIBUTING.md \"License\""), "about the licence");

    // Pending with their evidence, never served.
    let waiting = pending(&repo);
    assert_eq!(waiting.len(), 5, "{waiting:#?}");
    let stored = serde_json::to_string(&waiting).unwrap();
    assert!(!stored.contains("IOSFODNN7EXAMPLE"), "the key was stored");
    assert!(!stored.contains("Read from outside"), "a link out was read");
    let tests = waiting
        .iter()
        .find(|m| m["metadata"]["section"] == "Tests")
        .unwrap();
    assert_eq!(tests["metadata"]["learned_from"], "contributing guide");
    assert_eq!(
        tests["metadata"]["examples"],
        json!(["CONTRIBUTING.md:11 Tests"])
    );
    let searched = repo.cairn_ok(&["memory", "search", "PostgreSQL ConnectionPool", "--json"]);
    assert!(!searched.contains("Decided in"), "{searched}");

    // A person rejects one and approves another; a second run proposes nothing again.
    repo.cairn_ok(&["memory", "reject", tests["id"].as_str().unwrap()]);
    let risky = waiting.iter().find(|m| m["type"] == "risk_module").unwrap();
    assert_eq!(risky["paths"], json!(["src/shop/tax.py"]), "{risky:#}");
    repo.cairn_ok(&["memory", "approve", risky["id"].as_str().unwrap()]);
    let again = learn(&repo, &[]);
    let events: Vec<&str> = again["proposed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["event"].as_str().unwrap())
        .collect();
    assert_eq!(events, ["NONE"; 5], "{again:#}");
    assert_eq!(pending(&repo).len(), 3);
}

#[tokio::test(flavor = "multi_thread")]
async fn owners_are_shown_beside_the_experts() {
    let outside = tempfile::tempdir().unwrap();
    let repo = shop(outside.path());
    repo.index();

    let expanded = repo.cairn_ok(&["expand", "src/shop/db.py::ConnectionPool"]);
    assert!(
        expanded.contains("- owners: @org/shop, @alice (.github/CODEOWNERS line 2)"),
        "{expanded}"
    );
    let readme: Value =
        serde_json::from_str(&repo.cairn_ok(&["expand", "src/shop/cart.py", "--json"])).unwrap();
    assert_eq!(
        readme["history"][0],
        "- owners: @org/shop, @alice (.github/CODEOWNERS line 2)"
    );

    repo.write(
        "src/shop/db.py",
        "class ConnectionPool:\n    def acquire(self):\n        return 1\n",
    );
    let briefing = repo.cairn_ok(&["review"]);
    assert!(
        briefing.contains("- owners src/shop/db.py: @org/shop, @alice (.github/CODEOWNERS line 2)"),
        "{briefing}"
    );
    assert!(briefing.contains("- experts src/shop/db.py"), "{briefing}");

    use crate::mcp::{call, connect, text};
    let client = connect(&repo).await;
    let refused = call(
        &client,
        "learn",
        json!({"from": "repository", "files": ["CONTRIBUTING.md"]}),
    )
    .await;
    assert_eq!(refused.is_error, Some(true), "{}", text(&refused));
    let answer = call(
        &client,
        "learn",
        json!({"from": "repository", "dry_run": true}),
    )
    .await;
    assert_ne!(answer.is_error, Some(true), "{}", text(&answer));
    assert!(
        text(&answer).starts_with("Learned from the repository (a dry run: nothing written)."),
        "{}",
        text(&answer)
    );
    let structured = answer.structured_content.clone().unwrap();
    assert_eq!(structured["proposed"].as_array().unwrap().len(), 5);
    client.cancel().await.unwrap();
}
