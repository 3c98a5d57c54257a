//! Learnings that prove their worth: every memory an answer shows is counted, reviews cite
//! the memories they applied or found wrong, and that record is on the memory's page, weighs
//! in search, and sends a memory contradicted again and again to needs-attention.

use serde_json::{Value, json};

use crate::support::TestRepo;
use crate::ui;

fn show(repo: &TestRepo, id: &str) -> Value {
    serde_json::from_str(&repo.cairn_ok(&["memory", "show", id, "--json"])).unwrap()
}

fn record(
    repo: &TestRepo,
    id: &str,
    applied: &[&str],
    contradicted: &[&str],
) -> std::process::Output {
    let review = json!({"verdict": "comment", "author": "alice", "review_id": id,
        "applied": applied, "contradicted": contradicted});
    let path = repo.data_dir().join(format!("{id}.json"));
    std::fs::write(&path, review.to_string()).unwrap();
    repo.cairn(&["record-review", "--json", path.to_str().unwrap()])
}

fn searched(repo: &TestRepo, query: &str) -> Vec<String> {
    let found: Value =
        serde_json::from_str(&repo.cairn_ok(&["memory", "search", query, "--json"])).unwrap();
    found["memories"]
        .as_array()
        .unwrap_or_else(|| panic!("{found}"))
        .iter()
        .map(|m| m["memory"]["id"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn what_reviews_say_of_a_memory_is_counted_weighed_and_shown() {
    let (repo, stored) = ui::repository_with_memories();
    let backoff = ui::add_memory(
        &repo,
        &[
            "--type",
            "project_pattern",
            "Payment webhooks are retried with exponential backoff.",
        ],
    );
    let jitter = ui::add_memory(
        &repo,
        &[
            "--type",
            "project_pattern",
            "Payment webhooks are retried with a fixed delay and jitter.",
        ],
    );

    // Shown in a context pack: counted as read.
    let before = show(&repo, &stored.cents)["access_count"].as_u64().unwrap();
    let context = repo.cairn_ok(&["context"]);
    assert!(context.contains(&stored.cents), "{context}");
    assert_eq!(show(&repo, &stored.cents)["access_count"], before + 1);

    // Cited ids are checked before anything is stored.
    let bad = record(&repo, "PR-1", &["not-an-id"], &[]);
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("is not a memory id"));
    let both = record(&repo, "PR-1", &[&backoff], &[&backoff]);
    assert!(String::from_utf8_lossy(&both.stderr).contains("both applied and contradicted"));

    // Whichever ranks first, three reviews that find it wrong and apply the other turn the
    // order around.
    let order = searched(&repo, "payment webhooks retried");
    let (first, second) = (order[0].clone(), order[1].clone());
    assert!([&backoff, &jitter].contains(&&first) && [&backoff, &jitter].contains(&&second));
    for n in 0..3 {
        let output = record(&repo, &format!("PR-{n}"), &[&second], &[&first]);
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    assert_eq!(
        searched(&repo, "payment webhooks retried")[..2],
        [second.clone(), first.clone()]
    );

    // Recording a review again counts it once.
    record(&repo, "PR-0", &[&second], &[&first]);
    let daemon = crate::daemon::Daemon::start(&repo);
    let (cookie, _) = ui::log_in(&daemon, &ui::code_of(&ui::log_in_address(&repo))).await;
    let (_, page) = ui::get_with(&daemon, &format!("/ui/memories/{first}"), Some(&cookie)).await;
    assert!(page.contains("applied 0, contradicted 3"), "{page}");
    assert!(page.contains("listed to retire"), "{page}");
    let (_, page) = ui::get_with(&daemon, &format!("/ui/memories/{second}"), Some(&cookie)).await;
    assert!(page.contains("applied 3, contradicted 0"), "{page}");
    let (_, attention) = ui::get_with(&daemon, "/ui/attention", Some(&cookie)).await;
    let listed = ui::part(&attention, "id=\"contradicted\"", "</section>");
    assert!(
        listed.contains(&first) && !listed.contains(&second),
        "{listed}"
    );
    assert!(
        listed.contains("contradicted by 3 reviews, applied by 0"),
        "{listed}"
    );
    assert!(daemon.stop().success());
}
