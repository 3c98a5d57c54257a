//! Memories deduplicated by meaning: the labelled paraphrase/contradiction set decided on the
//! real embedded store, with terms only and with the real model; nearest memories listed on
//! an ADD; memories whose anchored code changed since they were written flagged in answers.

use std::collections::BTreeMap;
use std::sync::Arc;

use cairn::memory::store::MemoryStore;
use cairn::memory::{Action, Memories, MemoryType, NewMemory, SemanticSettings};
use serde::Deserialize;
use serde_json::Value;

use crate::support::{TestRepo, fixture};

/// The issue's pair: the second must not be stored as a new memory.
const EVERY: &str =
    "Every database mutation is wrapped in a transaction through the session_scope helper.";
const ALL: &str =
    "All database mutations are wrapped in a transaction via the session_scope helper.";

/// One labelled pair: `duplicate` (the same learning: NONE or UPDATE), `related` (same topic,
/// another learning: ADD), `contradiction` (SUPERSEDE when it is the same statement with the
/// opposite polarity, else ADD; never merged) or `distinct` (ADD).
#[derive(Debug, Deserialize)]
struct Pair {
    label: String,
    text_a: String,
    text_b: String,
}

fn pairs() -> Vec<Pair> {
    let text = std::fs::read_to_string(fixture("memory/paraphrases.jsonl")).unwrap();
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn learning(developer: &str, content: &str) -> NewMemory {
    NewMemory {
        kind: Some(MemoryType::DeveloperPattern),
        content: content.to_string(),
        developer: Some(developer.to_string()),
        ..NewMemory::default()
    }
}

/// Writes each pair's first text then its second, each pair in a scope of its own (one
/// developer per pair) of one store, and returns the second write's event per pair.
async fn decide(m: &Memories, pairs: &[Pair]) -> Vec<Action> {
    let mut events = Vec::new();
    for (i, pair) in pairs.iter().enumerate() {
        let developer = format!("pair{i}");
        let first = m
            .remember(learning(&developer, &pair.text_a), None)
            .await
            .unwrap();
        assert_eq!(first.event, Action::Add, "{pair:?}");
        let second = m
            .remember(learning(&developer, &pair.text_b), None)
            .await
            .unwrap();
        events.push(second.event);
    }
    events
}

fn merged(event: Action) -> bool {
    matches!(event, Action::None | Action::Update)
}

/// Prints the confusion (label × event) and checks the decisions: no pair is merged unless
/// it is a duplicate (precision 1.0), no contradiction is merged, no related or distinct
/// memory is superseded; returns the recall of duplicates.
fn check(mode: &str, pairs: &[Pair], events: &[Action]) -> f64 {
    let mut confusion: BTreeMap<&str, BTreeMap<String, usize>> = BTreeMap::new();
    for (pair, event) in pairs.iter().zip(events) {
        *confusion
            .entry(pair.label.as_str())
            .or_default()
            .entry(format!("{event:?}").to_uppercase())
            .or_default() += 1;
    }
    let duplicates = pairs.iter().filter(|p| p.label == "duplicate").count();
    let found = pairs
        .iter()
        .zip(events)
        .filter(|(p, e)| p.label == "duplicate" && merged(**e))
        .count();
    let merges = events.iter().filter(|e| merged(**e)).count();
    let recall = found as f64 / duplicates as f64;
    eprintln!("{mode}: label -> events");
    for (label, row) in &confusion {
        eprintln!("  {label:<13} {row:?}");
    }
    eprintln!(
        "{mode}: duplicate precision {found}/{merges}, recall {found}/{duplicates} = {recall:.2}"
    );
    for (pair, event) in pairs.iter().zip(events) {
        let wrong = match pair.label.as_str() {
            "duplicate" => false,
            "contradiction" => merged(*event),
            _ => *event != Action::Add,
        };
        assert!(!wrong, "{mode}: {event:?} for {pair:?}");
        if pair.label == "duplicate" && !merged(*event) {
            eprintln!("  missed: {} || {}", pair.text_a, pair.text_b);
        }
    }
    assert!(
        pairs.len() >= 40 && duplicates >= 15,
        "the set is too small"
    );
    recall
}

async fn held(repo: &TestRepo, semantic: SemanticSettings) -> Arc<Memories> {
    let store = MemoryStore::open(&repo.data_dir().join("memory"))
        .await
        .unwrap();
    Memories::held(repo.path(), store, semantic)
}

#[tokio::test(flavor = "multi_thread")]
async fn the_paraphrase_set_is_deduplicated_by_terms() {
    let repo = TestRepo::new();
    let m = held(&repo, SemanticSettings::default()).await;
    let pairs = pairs();
    let events = decide(&m, &pairs).await;
    let recall = check("terms", &pairs, &events);
    assert!(recall >= 0.6, "duplicate recall {recall:.2} by terms");
    let issue = pairs
        .iter()
        .position(|p| p.text_a == EVERY && p.text_b == ALL);
    assert!(merged(
        events[issue.expect("the issue's pair is in the set")]
    ));
}

#[tokio::test(flavor = "multi_thread")]
async fn the_paraphrase_set_is_deduplicated_by_meaning_with_the_real_model() {
    let model = cairn::memory::embed::default_model_dir();
    assert!(
        cairn::memory::embed::model_present(&model),
        "the all-MiniLM-L6-v2 model is missing from {}: run .ci/fetch-model",
        model.display()
    );
    let repo = TestRepo::new();
    let m = held(&repo, SemanticSettings::resolve(Some(model), true)).await;
    assert!(m.mode().semantic);
    let pairs = pairs();
    let events = decide(&m, &pairs).await;
    let recall = check("meaning", &pairs, &events);
    let issue = pairs
        .iter()
        .position(|p| p.text_a == EVERY && p.text_b == ALL);
    assert!(merged(
        events[issue.expect("the issue's pair is in the set")]
    ));
    assert!(recall >= 0.9, "duplicate recall {recall:.2} with the model");

    // The vector computed to compare a write is stored with the new memory.
    let first = m
        .remember(
            learning(
                "late",
                "Use the event bus to notify other services of order changes.",
            ),
            None,
        )
        .await
        .unwrap();
    assert!(m.vector(&first.id).await.is_some());
}

/// `cairn memory add --json` for this repository; the answer as JSON.
fn add(repo: &TestRepo, content: &str, extra: &[&str]) -> Value {
    let mut args = vec!["memory", "add", "--json", "-t", "project_pattern", content];
    args.extend_from_slice(extra);
    serde_json::from_str(&repo.cairn_ok(&args)).unwrap()
}

#[test]
fn the_issue_pair_is_one_memory_and_an_add_lists_its_nearest() {
    let repo = TestRepo::new();
    let first = add(&repo, EVERY, &[]);
    assert_eq!(first["event"], "ADD", "{first}");
    let second = add(&repo, ALL, &[]);
    assert!(
        second["event"] == "NONE" || second["event"] == "UPDATE",
        "{second}"
    );
    assert_eq!(second["id"], first["id"]);

    // Another learning about the same helper is added, with the first listed beside it.
    let related = add(
        &repo,
        "Read-only reports open the session_scope helper with autocommit on.",
        &[],
    );
    assert_eq!(related["event"], "ADD", "{related}");
    let nearest = related["nearest"].as_array().expect("nearest listed");
    assert_eq!(nearest[0]["id"], first["id"], "{related}");
    assert_eq!(nearest[0]["by"], "terms");
    let similarity = nearest[0]["similarity"].as_f64().unwrap();
    assert!(similarity > 0.0 && similarity < 1.0, "{related}");

    // The text answer says it too, and a write with supersedes replaces it.
    let text = repo.cairn_ok(&[
        "memory",
        "add",
        "-t",
        "project_pattern",
        "Bulk imports call the session_scope helper once per batch, not per row.",
    ]);
    assert!(text.starts_with("ADD "), "{text}");
    assert!(
        text.contains(&format!("near {}", first["id"].as_str().unwrap())),
        "{text}"
    );
    let id = first["id"].as_str().unwrap();
    let replaced = add(
        &repo,
        "Database mutations go through the unit_of_work helper, not session_scope.",
        &["--supersedes", id],
    );
    assert_eq!(replaced["event"], "SUPERSEDE", "{replaced}");
    assert!(replaced.get("nearest").is_none(), "{replaced}");
}

fn flagged(memory: &Value) -> Option<String> {
    memory["code_changed_since"]["commit"]
        .as_str()
        .map(str::to_string)
}

fn head(repo: &TestRepo) -> String {
    String::from_utf8(repo.git(&["rev-parse", "HEAD"]).stdout)
        .unwrap()
        .trim()
        .to_string()
}

#[test]
fn memories_on_code_changed_since_they_were_written_are_flagged() {
    let repo = TestRepo::new();
    repo.write(
        "app/db.py",
        "def session_scope():\n    return None\n\n\ndef save(row):\n    with session_scope():\n        return row\n",
    );
    repo.write("app/views.py", "def index():\n    return 'ok'\n");
    repo.commit_as("start", "Dev", "dev@example.com", 2);
    repo.cairn_ok(&["index"]);
    let on_symbol = add(
        &repo,
        "save wraps its write in session_scope.",
        &["--symbol", "app/db.py::save"],
    );
    let on_views = add(
        &repo,
        "Views return plain strings.",
        &["--path", "app/views.py"],
    );
    let search = |query: &str| -> Value {
        serde_json::from_str(&repo.cairn_ok(&["memory", "search", "--json", query])).unwrap()
    };
    let first = search("session_scope");
    assert_eq!(first["memories"][0]["memory"]["id"], on_symbol["id"]);
    assert_eq!(flagged(&first["memories"][0]), None, "{first}");

    // The anchored file changes after the memory was written (commit times are in seconds).
    std::thread::sleep(std::time::Duration::from_millis(1_100));
    repo.write(
        "app/db.py",
        "def session_scope():\n    return None\n\n\ndef save(row):\n    return row\n",
    );
    repo.commit_as("save without a transaction", "Dev", "dev@example.com", 0);
    let commit = head(&repo);
    let short = &commit[..10];
    let after = search("session_scope");
    assert_eq!(after["memories"][0]["memory"]["id"], on_symbol["id"]);
    assert_eq!(
        flagged(&after["memories"][0]).as_deref(),
        Some(short),
        "{after}"
    );
    assert_eq!(
        after["memories"][0]["code_changed_since"]["path"],
        "app/db.py"
    );
    let text = repo.cairn_ok(&["memory", "search", "session_scope"]);
    assert!(
        text.contains(&format!("code changed since: {short} (app/db.py)")),
        "{text}"
    );
    // A memory on a file that did not change is not flagged.
    let views = search("views return plain strings");
    assert_eq!(views["memories"][0]["memory"]["id"], on_views["id"]);
    assert_eq!(flagged(&views["memories"][0]), None, "{views}");

    // Expanding the file shows the memory, flagged.
    repo.cairn_ok(&["index"]);
    let expanded = repo.cairn_ok(&["expand", "app/db.py::save"]);
    assert!(
        expanded.contains(&format!("code changed since: {short}")),
        "{expanded}"
    );
    let json: Value =
        serde_json::from_str(&repo.cairn_ok(&["expand", "--json", "app/db.py::save"])).unwrap();
    let memories = json["memories"]
        .as_array()
        .expect("memories in the expansion");
    let memory = memories
        .iter()
        .find(|m| m["id"] == on_symbol["id"])
        .expect("the anchored memory");
    assert_eq!(flagged(memory).as_deref(), Some(short), "{json}");

    // Restating the learning after the change trusts it again.
    let restated = add(
        &repo,
        "save no longer wraps its write in session_scope; callers open the transaction.",
        &[
            "--symbol",
            "app/db.py::save",
            "--supersedes",
            on_symbol["id"].as_str().unwrap(),
        ],
    );
    let now = search("callers open the transaction");
    assert_eq!(now["memories"][0]["memory"]["id"], restated["id"]);
    assert_eq!(flagged(&now["memories"][0]), None, "{now}");
}

#[test]
fn the_paraphrase_set_is_well_formed() {
    let pairs = pairs();
    let labels = ["duplicate", "related", "contradiction", "distinct"];
    for pair in &pairs {
        assert!(labels.contains(&pair.label.as_str()), "{pair:?}");
        assert_ne!(pair.text_a, pair.text_b);
    }
    assert!((40..=80).contains(&pairs.len()), "{} pairs", pairs.len());
}
