//! The guideline refinement loop through rmcp's client and the real `cairn` binary: rejected
//! findings → the `refine_guidelines` prompt → `record_guideline_change` → the patterns
//! addressed → `cairn rules` with the rate before and after; and what it refuses.

use rmcp::model::GetPromptRequestParams;
use rmcp::service::RunningService;
use serde_json::{Value, json};

use crate::mcp::{call, connect, text};
use crate::support::TestRepo;

const CLAUDE_MD: &str = "# Working here\n\nRun the tests before pushing.\n\n## Naming\n\nUse descriptive names: prefer `compute_total` over `total`, spell words out.\n\n## Tests\n\nEvery change comes with a test in tests/.\n";

/// A git repository with a CLAUDE.md that has a `## Naming` section, indexed.
fn repo() -> TestRepo {
    let repo = TestRepo::new();
    repo.write("CLAUDE.md", CLAUDE_MD);
    repo.write(
        "shop/models.py",
        "class Order:\n    def total(self):\n        return 0\n",
    );
    repo.commit("shop");
    repo.index();
    repo
}

/// A review of `shop/models.py` with one `naming` finding.
fn naming_review(id: &str, disposition: &str, message: &str, reason: &str) -> Value {
    json!({
        "verdict": "comment",
        "author": "bob",
        "review_id": id,
        "findings": [{"category": "naming", "file": "shop/models.py", "line": 2,
                      "message": message, "disposition": disposition, "reason": reason}]
    })
}

async fn prompt(
    client: &RunningService<rmcp::RoleClient, ()>,
    arguments: Value,
) -> Result<String, String> {
    let request = GetPromptRequestParams::new("refine_guidelines")
        .with_arguments(arguments.as_object().unwrap().clone());
    let result = client
        .get_prompt(request)
        .await
        .map_err(|e| e.to_string())?;
    let messages = serde_json::to_value(&result.messages).unwrap();
    Ok(messages[0]["content"]["text"]
        .as_str()
        .expect("a text message")
        .to_string())
}

fn naming_rule(repo: &TestRepo) -> Value {
    let rules: Value = serde_json::from_str(&repo.cairn_ok(&["rules", "--json"])).unwrap();
    crate::support::rule_of(&rules, "naming")
}

#[tokio::test(flavor = "multi_thread")]
async fn rejected_findings_become_an_accepted_guideline_change_with_its_effect() {
    let repo = repo();
    let before_bytes = std::fs::read(repo.path().join("CLAUDE.md")).unwrap();
    let client = connect(&repo).await;

    let rejected = [
        (
            "PR-1",
            "rename total to compute_total",
            "total is the domain term here",
        ),
        (
            "PR-2",
            "Order should be PurchaseOrder",
            "Order is what the business says",
        ),
        (
            "PR-3",
            "abbreviation qty should be quantity",
            "qty is the accepted short form",
        ),
    ];
    let mut patterns = Vec::new();
    for (id, message, reason) in rejected {
        let recorded = call(
            &client,
            "record_review",
            naming_review(id, "rejected", message, reason),
        )
        .await;
        assert_ne!(recorded.is_error, Some(true), "{}", text(&recorded));
        let recorded = recorded.structured_content.unwrap();
        patterns.push(
            recorded["rejections"][0]["id"]
                .as_str()
                .unwrap()
                .to_string(),
        );
    }

    // The prompt: the category, its rate and sample, the evidence and the Naming section.
    let brief = prompt(&client, json!({})).await.unwrap();
    assert!(
        brief.contains("## `naming`: 3 of 3 findings rejected (100%; sample 3)"),
        "{brief}"
    );
    for id in &patterns {
        assert!(brief.contains(id.as_str()), "{id}: {brief}");
    }
    assert!(brief.contains("total is the domain term here"), "{brief}");
    assert!(brief.contains("### CLAUDE.md § Naming (line 5)"), "{brief}");
    assert!(
        brief.contains("Use descriptive names: prefer `compute_total` over `total`"),
        "{brief}"
    );
    assert!(!brief.contains("Every change comes with a test"), "{brief}");
    assert!(brief.contains("record_guideline_change"), "{brief}");
    assert!(brief.contains("\"category\": \"naming\""), "{brief}");

    // A proposal, then its acceptance by id.
    let proposal = json!({
        "file": "CLAUDE.md",
        "section": "Naming",
        "current_text": "Use descriptive names: prefer `compute_total` over `total`, spell words out.",
        "proposed_text": "Use the domain's words (`total`, `Order`, `qty`) as they are; do not ask to rename them.",
        "rationale": "Three naming findings were rejected: the names were the domain's terms.",
        "category": "naming",
        "memory_ids": patterns,
        "confidence": 0.8,
        "outcome": "proposed"
    });
    let proposed = call(&client, "record_guideline_change", proposal.clone()).await;
    assert_ne!(proposed.is_error, Some(true), "{}", text(&proposed));
    let proposed = proposed.structured_content.unwrap();
    let change = proposed["change"]["id"].as_str().unwrap().to_string();
    assert!(change.starts_with("g_"), "{proposed:#}");
    assert_eq!(proposed["change"]["outcome"], "proposed");
    assert_eq!(proposed["addressed"], json!([]));
    // The same proposal sent again (a retried call) is the one recorded, not a second.
    let retried = call(&client, "record_guideline_change", proposal).await;
    let retried = retried.structured_content.unwrap();
    assert_eq!(retried["change"]["id"], change.as_str(), "{retried:#}");
    assert_eq!(retried["repeated"], true);
    let shown = call(&client, "expand", json!({"target": patterns[0]})).await;
    assert!(
        !text(&shown).contains("addressed"),
        "a proposal addresses nothing: {}",
        text(&shown)
    );

    let accepted = call(
        &client,
        "record_guideline_change",
        json!({"id": change, "outcome": "accepted", "feedback": "merged in PR-4", "by": "alice"}),
    )
    .await;
    assert_ne!(accepted.is_error, Some(true), "{}", text(&accepted));
    let accepted = accepted.structured_content.unwrap();
    assert_eq!(accepted["change"]["outcome"], "accepted");
    assert_eq!(accepted["change"]["by"], "alice");
    let mut addressed: Vec<String> = serde_json::from_value(accepted["addressed"].clone()).unwrap();
    addressed.sort();
    let mut expected = patterns.clone();
    expected.sort();
    assert_eq!(addressed, expected);

    // The patterns are addressed, and each names the change.
    for id in &patterns {
        let shown = call(&client, "expand", json!({"target": id})).await;
        assert!(
            text(&shown).contains(&format!("addressed by guideline change {change}")),
            "{}",
            text(&shown)
        );
    }
    let after_prompt = prompt(&client, json!({})).await.unwrap();
    assert!(
        after_prompt.contains("Already addressed (every rejection pattern marked): naming."),
        "{after_prompt}"
    );
    // Accepting again changes nothing; rejecting an accepted change is refused.
    let again = call(
        &client,
        "record_guideline_change",
        json!({"id": change, "outcome": "accepted"}),
    )
    .await;
    assert_eq!(again.structured_content.unwrap()["repeated"], true);
    let flip = call(
        &client,
        "record_guideline_change",
        json!({"id": change, "outcome": "rejected"}),
    )
    .await;
    assert_eq!(flip.is_error, Some(true));
    assert!(text(&flip).contains("already accepted"), "{}", text(&flip));

    // Later reviews follow the new guideline.
    for id in ["PR-5", "PR-6"] {
        let recorded = call(
            &client,
            "record_review",
            naming_review(id, "implemented", "rename tmp to order_rows", "agreed"),
        )
        .await;
        assert_ne!(recorded.is_error, Some(true), "{}", text(&recorded));
    }
    let last_brief = prompt(&client, json!({})).await.unwrap();
    client.cancel().await.unwrap();
    // The command line prints the same brief.
    let cli = repo.cairn_ok(&["rules", "--propose"]);
    assert_eq!(cli.trim_end(), last_brief, "cli and prompt differ");

    let naming = naming_rule(&repo);
    let changes = naming["changes"].as_array().expect("changes listed");
    assert_eq!(changes.len(), 1, "{naming:#}");
    let effect = &changes[0];
    assert_eq!(effect["id"], change.as_str());
    assert_eq!(effect["outcome"], "accepted");
    assert_eq!(effect["section"], "Naming");
    assert_eq!(
        effect["before"],
        json!({"reviews": 3, "flagged": 3, "rejected": 3, "rejection_rate": 1.0})
    );
    assert_eq!(
        effect["after"],
        json!({"reviews": 2, "flagged": 2, "rejected": 0, "rejection_rate": 0.0})
    );
    let report = repo.cairn_ok(&["rules"]);
    assert!(
        report.contains(&format!(
            "{change} accepted {} · naming · CLAUDE.md § Naming: rejection rate 100% of 3 findings in 3 reviews before → 0% of 2 findings in 2 reviews after",
            cairn::clock::date_of(cairn::clock::now())
        )),
        "{report}"
    );

    // cairn never touched the guideline file, or anything else in the repository.
    assert_eq!(
        std::fs::read(repo.path().join("CLAUDE.md")).unwrap(),
        before_bytes
    );
    let status = repo.git(&["status", "--porcelain"]);
    assert_eq!(String::from_utf8_lossy(&status.stdout), "");
}

#[tokio::test(flavor = "multi_thread")]
async fn hostile_guideline_input_is_refused_and_nothing_is_stored() {
    let repo = repo();
    std::os::unix::fs::symlink("/etc/passwd", repo.path().join("AGENTS.md")).unwrap();
    let client = connect(&repo).await;
    let recorded = call(
        &client,
        "record_review",
        json!({
            "verdict": "comment",
            "author": "bob",
            "review_id": "PR-1",
            "findings": [
                {"category": "naming", "file": "shop/models.py", "message": "rename total",
                 "disposition": "rejected", "reason": "domain term"},
                {"category": "security", "file": "shop/models.py", "message": "validate input",
                 "disposition": "rejected", "reason": "internal only"}
            ]
        }),
    )
    .await
    .structured_content
    .unwrap();
    let rejections: Vec<&str> = recorded["rejections"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    let (naming, security) = (rejections[0], rejections[1]);
    let decision = call(
        &client,
        "remember",
        json!({"type": "decision", "content": "Orders keep their totals in cents."}),
    )
    .await
    .structured_content
    .unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();

    let proposal = |patch: Value| {
        let mut args = json!({
            "file": "CLAUDE.md", "section": "Naming", "current_text": "Use descriptive names.",
            "proposed_text": "Domain terms stay.", "rationale": "rejected three times",
            "category": "naming", "memory_ids": [naming], "outcome": "accepted"
        });
        for (key, value) in patch.as_object().unwrap() {
            args[key] = value.clone();
        }
        args
    };
    for (patch, expected) in [
        (
            json!({"memory_ids": ["m_0123456789abcdef"]}),
            "unknown memory `m_0123456789abcdef`",
        ),
        (
            json!({"memory_ids": [decision]}),
            "is a decision, not a rejection_pattern",
        ),
        (
            json!({"memory_ids": [security]}),
            "is a rejection pattern of `security`",
        ),
        (
            json!({"memory_ids": ["m_1; DROP TABLE memory"]}),
            "is not a memory id",
        ),
        (
            json!({"file": "../../etc/passwd"}),
            "must be a repository-relative path",
        ),
        (
            json!({"file": "/etc/passwd"}),
            "must be a repository-relative path",
        ),
        (
            json!({"proposed_text": "x".repeat(20_000)}),
            "the limit is 16000",
        ),
        (json!({"rationale": "y".repeat(5_000)}), "the limit is 4000"),
        (json!({"outcome": "maybe"}), "unknown outcome"),
        (json!({"confidence": 7}), "between 0 and 1"),
        (
            json!({"id": "g_ffffffffffffffff"}),
            "unknown guideline change `g_ffffffffffffffff`",
        ),
        (json!({"id": "../g"}), "not a guideline change id"),
    ] {
        let refused = call(&client, "record_guideline_change", proposal(patch.clone())).await;
        assert_eq!(refused.is_error, Some(true), "{patch} was accepted");
        assert!(
            text(&refused).contains(expected),
            "{patch}: {}",
            text(&refused)
        );
    }

    // A guideline path that climbs out is refused; a link out of the repository is not read.
    let error = prompt(&client, json!({"files": "../../etc/passwd"}))
        .await
        .unwrap_err();
    assert!(error.contains("repository-relative"), "{error}");
    let brief = prompt(
        &client,
        json!({"files": "CLAUDE.md, AGENTS.md, missing.md"}),
    )
    .await
    .unwrap();
    assert!(
        brief.contains("- not read: AGENTS.md (a link that leads outside the repository)"),
        "{brief}"
    );
    assert!(
        brief.contains("- not read: missing.md (not found)"),
        "{brief}"
    );
    assert!(!brief.contains("root:"), "{brief}");
    let defaults = prompt(&client, json!({})).await.unwrap();
    assert!(defaults.contains("- read: CLAUDE.md\n"), "{defaults}");
    assert!(
        defaults.contains("- not read: AGENTS.md (a link"),
        "{defaults}"
    );

    // Secrets in a proposal's texts are redacted before they are stored.
    let key = format!("{}IOSFODNN7EXAMPLE", "AKIA");
    let redacted = call(
        &client,
        "record_guideline_change",
        proposal(
            json!({"outcome": "rejected", "proposed_text": format!("Log the key {key}."),
                        "feedback": "no"}),
        ),
    )
    .await;
    assert_ne!(redacted.is_error, Some(true), "{}", text(&redacted));
    let redacted = redacted.structured_content.unwrap();
    assert!(!redacted.to_string().contains(&key), "{redacted:#}");
    assert_eq!(redacted["change"]["redacted"], json!(["aws-access-key"]));
    assert_eq!(
        redacted["addressed"],
        json!([]),
        "a rejected change addresses nothing"
    );
    client.cancel().await.unwrap();

    // Nothing refused was stored; the rejected change is listed and addressed nothing.
    let rules: Value = serde_json::from_str(&repo.cairn_ok(&["rules", "--json"])).unwrap();
    let naming_rule = crate::support::rule_of(&rules, "naming");
    assert_eq!(naming_rule["memories"], json!([naming]));
    let changes = naming_rule["changes"].as_array().unwrap();
    assert_eq!(changes.len(), 1, "{naming_rule:#}");
    assert_eq!(changes[0]["outcome"], "rejected");
    assert!(changes[0].get("before").is_none());

    // The command line refuses the same way.
    let outside = repo.cairn(&["rules", "--propose", "--file", "../../etc/passwd"]);
    assert!(!outside.status.success());
    assert!(
        String::from_utf8_lossy(&outside.stderr).contains("repository-relative"),
        "{outside:?}"
    );
    let file = repo.data_dir().join("change.json");
    std::fs::write(
        &file,
        proposal(json!({"memory_ids": [decision]})).to_string(),
    )
    .unwrap();
    let refused = repo.cairn(&["rules", "--record", file.to_str().unwrap()]);
    assert!(!refused.status.success());
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("not a rejection_pattern"),
        "{refused:?}"
    );
    std::fs::write(&file, "{not json").unwrap();
    let garbled = repo.cairn(&["rules", "--record", file.to_str().unwrap()]);
    assert!(
        String::from_utf8_lossy(&garbled.stderr)
            .contains("is not a record_guideline_change JSON object"),
        "{garbled:?}"
    );
}
