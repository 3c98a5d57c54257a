//! `cairn learn reviews` and the `learn` tool (`from: reviews`): a code host's exported review
//! history, in the hosts' documented shapes, recorded as reviews of a real repository.

use serde_json::{Value, json};

use crate::support::{TestRepo, fixture, rule_of};
use cairn::memory::{Memories, SemanticSettings};

const GITHUB: [&str; 3] = [
    "github-pulls.json",
    "github-comments.json",
    "github-reviews.json",
];

/// A repository whose remote is the exports' repository, the exports copied into it.
fn shop(remote: &str) -> TestRepo {
    let repo = TestRepo::new();
    repo.write("src/cart.py", "def total(cart):\n    return 0\n");
    repo.commit("cart");
    repo.git(&["remote", "add", "origin", remote]);
    // A reply quotes an access key (kept out of the fixture, which must hold no secret).
    let key = format!("AKIA{}", "IOSFODNN7EXAMPLE");
    for name in GITHUB {
        let text = std::fs::read_to_string(fixture("host").join(name)).unwrap();
        repo.write(
            &format!("exports/{name}"),
            text.replace("TEST-KEY-PLACEHOLDER", &key),
        );
    }
    repo
}

fn learn(repo: &TestRepo, extra: &[&str]) -> std::process::Output {
    let files: Vec<String> = GITHUB
        .iter()
        .map(|n| repo.path().join("exports").join(n).display().to_string())
        .collect();
    let mut args = vec!["learn", "reviews", "--json"];
    args.extend(extra);
    args.extend(files.iter().map(String::as_str));
    repo.cairn(&args)
}

fn learned(repo: &TestRepo) -> Value {
    let output = learn(repo, &[]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

fn rules(repo: &TestRepo) -> Value {
    serde_json::from_str(&repo.cairn_ok(&["rules", "--json"])).unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn code_host_history_becomes_reviews_counted_once() {
    let repo = shop("git@github.com:octo-org/shop.git");
    let first = learned(&repo);
    assert_eq!(first["repositories"], json!(["github.com/octo-org/shop"]));
    assert_eq!(first["reviews"], 2);
    assert_eq!(
        [
            &first["implemented"],
            &first["rejected"],
            &first["deferred"],
            &first["unknown"]
        ],
        [2, 1, 1, 1]
    );
    assert_eq!(first["stored"]["written"], 2);
    assert_eq!(first["stored"]["redacted"], json!(["aws-access-key"]));
    let skipped: Vec<&str> = first["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["why"].as_str().unwrap())
        .collect();
    assert!(
        skipped.contains(&"its path is outside the repository"),
        "{skipped:?}"
    );
    assert!(skipped.contains(&"opened by a bot"), "{skipped:?}");

    // Rule statistics from day one: the rejected rename shows in `cairn rules`.
    let naming = rule_of(&rules(&repo), "naming");
    assert_eq!(
        (&naming["flagged"], &naming["rejected"]),
        (&json!(1), &json!(1))
    );
    assert_eq!(naming["rejection_rate"], 1.0);

    // The same history again changes nothing.
    let again = learned(&repo);
    assert_eq!(
        (&again["stored"]["written"], &again["stored"]["repeated"]),
        (&json!(0), &json!(2))
    );
    assert_eq!(rule_of(&rules(&repo), "naming")["flagged"], 1);

    let memories = Memories::open(repo.path(), repo.data_dir(), SemanticSettings::default());
    let records = memories.review_records().await.unwrap();
    assert_eq!(records.len(), 2);
    let stored = serde_json::to_string(&records).unwrap();
    assert!(!stored.contains("IOSFODNN7EXAMPLE"), "the key was stored");
    let first = records
        .iter()
        .find(|r| r.id == "github:octo-org/shop#1")
        .unwrap();
    assert_eq!(first.author, "alice");
    assert_eq!(first.reviewer.as_deref(), Some("carol"));
    // Recorded when the pull request was merged, not when it was learned.
    assert_eq!(first.at, 1_709_553_600_000);
    assert!(
        memories.all().await.unwrap().is_empty(),
        "no memory is written"
    );
}

#[test]
fn exports_of_another_repository_or_cut_short_write_nothing() {
    let other = shop("https://github.com/someone/else.git");
    let output = learn(&other, &[]);
    assert!(!output.status.success());
    let error = String::from_utf8_lossy(&output.stderr);
    assert!(
        error.contains("the exports are of `github.com/octo-org/shop`, which is not a remote"),
        "{error}"
    );
    assert_eq!(rules(&other), json!([]));

    let repo = shop("https://github.com/octo-org/shop");
    let comments = repo.read("exports/github-comments.json");
    repo.write(
        "exports/github-comments.json",
        &comments[..comments.len() / 3],
    );
    let output = learn(&repo, &[]);
    assert!(!output.status.success());
    let error = String::from_utf8_lossy(&output.stderr);
    assert!(
        error.contains("github-comments.json: the export ends early"),
        "{error}"
    );
    assert_eq!(rules(&repo), json!([]), "nothing partial was written");

    let dry = shop("https://github.com/octo-org/shop");
    let output = learn(&dry, &["--dry-run"]);
    assert!(output.status.success());
    let answer: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(
        (&answer["dry_run"], &answer["reviews"]),
        (&json!(true), &json!(2))
    );
    assert_eq!(rules(&dry), json!([]));
}

/// A pull request whose head changed line 2 of the file but not line 1.
fn two_commits(repo: &TestRepo) -> (String, String) {
    let sha = |repo: &TestRepo| {
        String::from_utf8(repo.git(&["rev-parse", "HEAD"]).stdout)
            .unwrap()
            .trim()
            .to_string()
    };
    repo.write(
        "src/tax.py",
        "RATE = 0.2\ndef tax(x):\n    return x * RATE\n",
    );
    repo.commit("tax");
    let reviewed = sha(repo);
    repo.write(
        "src/tax.py",
        "RATE = 0.2\ndef tax(amount):\n    return amount * RATE\n",
    );
    repo.commit("rename");
    (reviewed, sha(repo))
}

#[test]
fn git_decides_whether_a_later_commit_changed_the_commented_lines() {
    let repo = shop("https://github.com/octo-org/shop");
    let (reviewed, head) = two_commits(&repo);
    let pull = json!([{"number": 5, "state": "closed", "merged_at": "2024-06-01T00:00:00Z",
        "html_url": "https://github.com/octo-org/shop/pull/5", "user": {"login": "alice"},
        "head": {"sha": head}, "base": {"sha": reviewed}}]);
    let comment = |id: u64, line: u32, body: &str| {
        json!({"id": id, "pull_request_url": "https://api.github.com/repos/octo-org/shop/pulls/5",
            "diff_hunk": "@@", "path": "src/tax.py", "line": line, "original_line": line,
            "side": "RIGHT", "commit_id": head, "original_commit_id": reviewed,
            "user": {"login": "carol"}, "body": body})
    };
    let comments = json!([
        comment(1, 2, "Please name the parameter `amount`."),
        comment(2, 1, "Should the rate come from settings?"),
    ]);
    repo.write("exports/pull.json", pull.to_string());
    repo.write("exports/comments.json", comments.to_string());
    let exports = repo.path().join("exports");
    let output = repo.cairn(&[
        "learn",
        "reviews",
        "--json",
        exports.join("comments.json").to_str().unwrap(),
        exports.join("pull.json").to_str().unwrap(),
    ]);
    let answer: Value = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|_| panic!("{}", String::from_utf8_lossy(&output.stderr)));
    assert_eq!(
        (&answer["implemented"], &answer["unknown"]),
        (&json!(1), &json!(1))
    );
    assert_eq!(
        answer["decided_by"][0]["rule"],
        "a later commit of the request changed the commented lines"
    );
    let naming = rule_of(&rules(&repo), "naming");
    assert_eq!(
        (&naming["flagged"], &naming["implemented"]),
        (&json!(1), &json!(1))
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_tool_reads_only_exports_inside_the_repository() {
    use crate::mcp::{call, connect, text};
    let repo = shop("https://github.com/octo-org/shop");
    let outside = tempfile::tempdir().unwrap();
    let secret = outside.path().join("pulls.json");
    std::fs::copy(repo.path().join("exports/github-pulls.json"), &secret).unwrap();
    std::os::unix::fs::symlink(&secret, repo.path().join("exports/linked.json")).unwrap();
    let client = connect(&repo).await;

    for files in [
        json!([secret.display().to_string()]),
        json!(["../pulls.json"]),
        json!(["exports/linked.json"]),
    ] {
        let refused = call(&client, "learn", json!({"from": "reviews", "files": files})).await;
        assert_eq!(refused.is_error, Some(true), "{files}: {}", text(&refused));
        assert!(
            text(&refused).contains("inside the repository"),
            "{}",
            text(&refused)
        );
    }

    let files: Vec<String> = GITHUB.iter().map(|n| format!("exports/{n}")).collect();
    let answer = call(&client, "learn", json!({"from": "reviews", "files": files})).await;
    assert_ne!(answer.is_error, Some(true), "{}", text(&answer));
    assert!(text(&answer).starts_with("Learned 2 reviews of github.com/octo-org/shop"));
    let structured = answer.structured_content.clone().unwrap();
    assert_eq!(structured["stored"]["written"], 2);
    client.cancel().await.unwrap();
}

/// A merged pull request: its number, its author, and its threads (a comment by carol and
/// the author's reply).
type Pull<'a> = (u64, &'a str, &'a [(&'a str, &'a str)]);

/// Exports of merged pull requests.
fn exports(repo: &TestRepo, pulls: &[Pull]) -> Vec<String> {
    let mut prs = Vec::new();
    let mut comments = Vec::new();
    let mut id = 1000;
    for (number, author, threads) in pulls {
        prs.push(json!({"number": number, "state": "closed", "merged_at": format!("2024-07-{:02}T00:00:00Z", number),
            "html_url": format!("https://github.com/octo-org/shop/pull/{number}"),
            "user": {"login": author}, "head": {"sha": "f".repeat(40)}, "base": {}}));
        for (body, reply) in threads.iter() {
            id += 2;
            let url = format!("https://api.github.com/repos/octo-org/shop/pulls/{number}");
            comments.push(json!({"id": id, "pull_request_url": url, "diff_hunk": "@@", "path": format!("src/api/m{number}.py"),
                "line": 3, "original_line": 3, "user": {"login": "carol"}, "body": body}));
            comments.push(json!({"id": id + 1, "in_reply_to_id": id, "pull_request_url": url, "diff_hunk": "@@",
                "path": format!("src/api/m{number}.py"), "user": {"login": author}, "body": reply}));
        }
    }
    repo.write("exports/prs.json", serde_json::to_string(&prs).unwrap());
    repo.write(
        "exports/comments.json",
        serde_json::to_string(&comments).unwrap(),
    );
    ["prs.json", "comments.json"]
        .iter()
        .map(|n| repo.path().join("exports").join(n).display().to_string())
        .collect()
}

fn pending(repo: &TestRepo) -> Vec<Value> {
    let listed: Value =
        serde_json::from_str(&repo.cairn_ok(&["memory", "list", "--pending", "--json"])).unwrap();
    listed
        .as_array()
        .cloned()
        .unwrap_or_else(|| panic!("{listed}"))
}

/// Exports where findings recur: requests for a test of the error path (three of four on
/// alice's changes), a guard clause rejected three times, and findings said once.
fn recurring_exports(repo: &TestRepo) -> Vec<String> {
    let alike: &[(&str, &str)] = &[
        ("Please add a test for the error path.", "Done"),
        (
            "Use a guard clause here.",
            "Won't fix, this is intentional.",
        ),
    ];
    let distinct: &[(&str, &str)] = &[
        (
            "Use a guard clause here please.",
            "No, intentional: it reads better.",
        ),
        ("The docstring of refund() is out of date.", "Done"),
        ("Split this module: it mixes parsing and I/O.", "Done"),
        ("Why is the timeout thirty seconds?", "Fixed"),
        ("Log the order id on failure.", "Done"),
    ];
    let more: &[(&str, &str)] = &[
        ("Use pathlib instead of os.path.", "Done"),
        ("Pin the dependency version.", "Done"),
        ("Inline this helper, it is used once.", "Done"),
        ("The migration needs a reverse step.", "Done"),
    ];
    // Alice's changes draw three of the four requests for a test while she has fewer than a
    // third of all findings: a developer pattern of hers. The guard clause recurs on both.
    exports(
        repo,
        &[
            (10, "alice", alike),
            (11, "alice", &[("Add a test for this error path.", "done")]),
            (
                12,
                "bob",
                &[
                    ("Could you add a test for the error path?", "Fixed."),
                    ("Use a guard clause.", "won't fix"),
                ],
            ),
            (13, "alice", &[("add a test for the error path", "Done!")]),
            (14, "bob", distinct),
            (15, "bob", more),
        ],
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn recurring_findings_are_proposed_once_and_wait_for_a_person() {
    let repo = shop("https://github.com/octo-org/shop");
    let files = recurring_exports(&repo);
    let mut args = vec!["learn", "reviews", "--json"];
    args.extend(files.iter().map(String::as_str));
    let first: Value = serde_json::from_str(&repo.cairn_ok(&args)).unwrap();
    let proposed = first["proposed"].as_array().unwrap();
    let kinds: Vec<(&str, &str)> = proposed
        .iter()
        .map(|p| (p["type"].as_str().unwrap(), p["event"].as_str().unwrap()))
        .collect();
    assert_eq!(
        kinds,
        [
            ("project_pattern", "ADD"),
            ("developer_pattern", "ADD"),
            ("rejection_pattern", "ADD")
        ],
        "{first:#}"
    );
    assert_eq!(proposed[1]["developer"], "alice");
    assert_eq!(
        (&proposed[0]["findings"], &proposed[0]["reviews"]),
        (&json!(4), &json!(4))
    );
    assert_eq!(
        (&proposed[2]["rejected"], &proposed[2]["category"]),
        (&json!(3), &json!("general"))
    );

    // Pending, with their evidence, and never served until a person approves.
    let waiting = pending(&repo);
    assert_eq!(waiting.len(), 3, "{waiting:#?}");
    let rejection = waiting
        .iter()
        .find(|m| m["type"] == "rejection_pattern")
        .unwrap();
    assert_eq!(rejection["file_pattern"], "src/api/**");
    assert_eq!(rejection["metadata"]["findings"], 3);
    assert_eq!(
        rejection["metadata"]["examples"].as_array().unwrap().len(),
        3
    );
    let found: Value = serde_json::from_str(&repo.cairn_ok(&[
        "memory",
        "search",
        "test error path guard clause",
        "--json",
    ]))
    .unwrap();
    assert!(!found.to_string().contains("again and again"), "{found}");

    // A person rejects one on the command line and approves the others with one action on
    // the page, which shows each proposal's evidence; a second run proposes nothing again.
    let id = |m: &Value| m["id"].as_str().unwrap().to_string();
    let mut both = vec!["memory", "reject", "m_ffffffffffffffff"];
    let rejected = id(rejection);
    both.push(&rejected);
    assert!(
        !repo.cairn(&both).status.success(),
        "one unknown id: nothing decided"
    );
    assert_eq!(pending(&repo).len(), 3);
    repo.cairn_ok(&["memory", "reject", &rejected]);
    let others: Vec<String> = waiting
        .iter()
        .filter(|m| m["type"] != "rejection_pattern")
        .map(id)
        .collect();
    approve_all_on_the_page(&repo, &others).await;
    assert!(pending(&repo).is_empty());
    let again: Value = serde_json::from_str(&repo.cairn_ok(&args)).unwrap();
    assert!(
        again["proposed"]
            .as_array()
            .unwrap()
            .iter()
            .all(|p| p["event"] == "NONE"),
        "{again:#}"
    );
    assert!(pending(&repo).is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn an_assistant_phrases_the_proposals_and_a_person_still_decides() {
    use crate::mcp::{call, connect, text};
    let repo = shop("https://github.com/octo-org/shop");
    let mut args = vec!["learn", "reviews"];
    let files = recurring_exports(&repo);
    args.extend(files.iter().map(String::as_str));
    repo.cairn_ok(&args);
    let waiting = pending(&repo);
    let rejection = waiting
        .iter()
        .find(|m| m["type"] == "rejection_pattern")
        .unwrap();
    let quoted = rejection["id"].as_str().unwrap();

    // The brief lists every waiting proposal with how to write it and its evidence.
    let client = connect(&repo).await;
    let prompt = client
        .get_prompt(rmcp::model::GetPromptRequestParams::new("phrase_learnings"))
        .await
        .expect("prompt answered");
    let brief = serde_json::to_string(&prompt.messages).unwrap();
    for memory in &waiting {
        assert!(brief.contains(memory["id"].as_str().unwrap()), "{brief}");
    }
    assert!(brief.contains("file_pattern src/api/**"), "{brief}");
    assert!(
        brief.contains("3 findings in 3 reviews, 3 rejected"),
        "{brief}"
    );
    assert!(
        brief.contains("github:octo-org/shop#12 (rejected)"),
        "{brief}"
    );
    assert_eq!(
        repo.cairn_ok(&["learn", "phrase"]).trim(),
        prompt.messages[0].content.as_text().unwrap().text.trim(),
        "the command line prints the same brief"
    );

    // The approval gate is off, yet the phrased proposal waits as the quote did, with the
    // quote's evidence, and replaces it in the list.
    let phrased = call(
        &client,
        "remember",
        json!({"type": "rejection_pattern", "supersedes": quoted,
               "content": "Do not ask for guard clauses in src/api: the team keeps nested conditionals there on purpose."}),
    )
    .await;
    assert_ne!(phrased.is_error, Some(true), "{}", text(&phrased));
    assert!(
        text(&phrased).contains("awaits approval"),
        "{}",
        text(&phrased)
    );
    let now = pending(&repo);
    assert_eq!(now.len(), waiting.len(), "{now:#?}");
    assert!(now.iter().all(|m| m["id"] != quoted));
    let new = now
        .iter()
        .find(|m| m["type"] == "rejection_pattern")
        .unwrap();
    assert!(new["content"].as_str().unwrap().starts_with("Do not ask"));
    assert_eq!(new["file_pattern"], "src/api/**");
    assert_eq!(
        (&new["category"], &rejection["category"]),
        (&json!("general"), &json!("general"))
    );
    assert_eq!(
        new["metadata"]["examples"],
        rejection["metadata"]["examples"]
    );
    let again = client
        .get_prompt(rmcp::model::GetPromptRequestParams::new("phrase_learnings"))
        .await
        .unwrap();
    let again = serde_json::to_string(&again.messages).unwrap();
    assert!(
        !again.contains(quoted),
        "a phrased proposal is not asked for again"
    );
    client.cancel().await.unwrap();

    // Served once a person approves it.
    let id = new["id"].as_str().unwrap();
    repo.cairn_ok(&["memory", "approve", id]);
    let found = repo.cairn_ok(&["memory", "search", "guard clauses nested conditionals"]);
    assert!(found.contains(id), "{found}");
}

/// Approves `ids`, the whole pending list, with the page's approve-all form.
async fn approve_all_on_the_page(repo: &TestRepo, ids: &[String]) {
    use crate::ui;
    let daemon = crate::daemon::Daemon::start(repo);
    let (cookie, _) = ui::log_in(&daemon, &ui::code_of(&ui::log_in_address(repo))).await;
    let (status, list) = ui::get_with(&daemon, "/ui/pending", Some(&cookie)).await;
    assert_eq!(status, 200);
    assert!(
        list.contains("Learned from the review history: 4 findings in 4 reviews"),
        "{list}"
    );
    assert!(list.contains("Approve all 2"), "{list}");
    let csrf = ui::csrf_in(&list);
    let origin = ui::base(&daemon);
    let forged = format!("csrf={csrf}&ids={}+m_ffffffffffffffff", ids[0]);
    let (status, _) =
        ui::post_page(&daemon, "/ui/pending/approve", &cookie, &origin, &forged).await;
    assert_eq!(status, 400, "an id that is not waiting decides nothing");
    assert_eq!(pending(repo).len(), 2);
    let body = format!("csrf={csrf}&ids={}", ids.join("+"));
    let (status, page) =
        ui::post_page(&daemon, "/ui/pending/approve", &cookie, &origin, &body).await;
    assert_eq!(status, 200, "{page}");
    assert!(page.contains("Approved 2 memories"), "{page}");
    assert!(daemon.stop().success());
}
