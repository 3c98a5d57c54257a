//! Review memory on the real embedded store: scopes, deduplication, supersession, secrets,
//! export/import, persistence across processes and bad input.

use std::path::Path;
use std::sync::Arc;

use cairn::memory::{Action, Memories, MemoryType, NewMemory, Query, SemanticSettings};
use serde_json::Value;

use crate::support::TestRepo;

/// Keyword-only memories of a repository in `data_dir` (the semantic layer has its own test).
fn memories(root: &Path, data_dir: &Path) -> Arc<Memories> {
    Memories::open(root, data_dir, SemanticSettings::default())
}

fn learning(kind: MemoryType, content: &str) -> NewMemory {
    NewMemory {
        kind: Some(kind),
        content: content.to_string(),
        ..NewMemory::default()
    }
}

fn search(text: &str) -> Query {
    Query {
        text: text.to_string(),
        limit: 10,
        ..Query::default()
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn scopes_keep_developers_and_repositories_apart() {
    let repo = TestRepo::new();
    let other = TestRepo::new();
    let m = memories(repo.path(), repo.data_dir());
    let mut alice = learning(
        MemoryType::DeveloperPattern,
        "Often forgets to close database connections in error paths.",
    );
    alice.developer = Some("@Alice".to_string());
    assert_eq!(m.remember(alice, None).await.unwrap().event, Action::Add);
    m.remember(
        learning(
            MemoryType::ProjectPattern,
            "Every database connection is opened through the pool helper.",
        ),
        None,
    )
    .await
    .unwrap();

    let for_alice = m
        .search(&Query {
            developer: Some("alice".into()),
            ..search("database connections")
        })
        .await
        .unwrap();
    assert_eq!(for_alice.len(), 1);
    assert_eq!(
        for_alice[0].memory.owner.developer.as_deref(),
        Some("alice")
    );

    let mut bob = learning(
        MemoryType::DeveloperPattern,
        "Closes database connections carefully but skips migration tests.",
    );
    bob.developer = Some("bob".to_string());
    m.remember(bob, None).await.unwrap();
    let for_bob = m
        .search(&Query {
            developer: Some("bob".into()),
            ..search("database connections error paths close")
        })
        .await
        .unwrap();
    assert_eq!(for_bob.len(), 1, "{for_bob:?}");
    assert_eq!(for_bob[0].memory.owner.developer.as_deref(), Some("bob"));

    let project = m
        .search(&search("close database connections"))
        .await
        .unwrap();
    assert_eq!(project.len(), 1);
    assert_eq!(project[0].memory.kind, MemoryType::ProjectPattern);

    // Another repository has its own memories.
    let elsewhere = memories(other.path(), other.data_dir());
    assert!(
        elsewhere
            .search(&search("database connections"))
            .await
            .unwrap()
            .is_empty()
    );
    // A developer-scoped type needs its developer.
    let orphan = m
        .remember(
            learning(MemoryType::DeveloperStrength, "Writes great tests."),
            None,
        )
        .await;
    assert!(orphan.unwrap_err().to_string().contains("pass `developer`"));
}

#[tokio::test(flavor = "multi_thread")]
async fn rewordings_of_one_learning_make_one_memory() {
    let repo = TestRepo::new();
    let m = memories(repo.path(), repo.data_dir());
    let first = m
        .remember(
            learning(
                MemoryType::ProjectPattern,
                "Every database write in the billing service is wrapped in a transaction.",
            ),
            None,
        )
        .await
        .unwrap();
    assert_eq!(first.event, Action::Add);
    let second = m
        .remember(
            learning(
                MemoryType::ProjectPattern,
                "Billing service: each DB write is wrapped in a transaction",
            ),
            None,
        )
        .await
        .unwrap();
    assert_eq!(second.event, Action::None, "{second:?}");
    assert_eq!(second.id, first.id);
    let third = m
        .remember(
            learning(
                MemoryType::ProjectPattern,
                "In the billing service every database write is wrapped in a transaction, including the refund path.",
            ),
            None,
        )
        .await
        .unwrap();
    assert_eq!(third.event, Action::Update, "{third:?}");
    assert_eq!(third.id, first.id);

    let all = memories(repo.path(), repo.data_dir()).all().await.unwrap();
    assert_eq!(all.len(), 1, "{all:#?}");
    assert!(all[0].content.contains("refund path"));
    assert_eq!(all[0].history.len(), 1);
    assert!(
        all[0].history[0]
            .content
            .starts_with("Every database write")
    );
    assert!(all[0].confidence > 0.5);

    // A different learning about the same service is its own memory.
    let other = m
        .remember(
            learning(
                MemoryType::ProjectPattern,
                "The billing service logs every refund to the audit table.",
            ),
            None,
        )
        .await
        .unwrap();
    assert_eq!(other.event, Action::Add);
}

#[tokio::test(flavor = "multi_thread")]
async fn superseding_keeps_history_and_hides_the_old_memory() {
    let repo = TestRepo::new();
    let m = memories(repo.path(), repo.data_dir());
    let old = m
        .remember(
            learning(
                MemoryType::Decision,
                "Use select_related for author lookups in the feed views.",
            ),
            None,
        )
        .await
        .unwrap();
    // A contradiction supersedes; it never deletes.
    let contra = m
        .remember(
            learning(
                MemoryType::Decision,
                "Do not use select_related for author lookups in the feed views.",
            ),
            None,
        )
        .await
        .unwrap();
    assert_eq!(contra.event, Action::Supersede, "{contra:?}");
    assert_eq!(contra.superseded.as_deref(), Some(old.id.as_str()));

    let found = m.search(&search("select_related feed")).await.unwrap();
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].memory.id, contra.id);
    let with_old = m
        .search(&Query {
            include_superseded: true,
            ..search("select_related feed")
        })
        .await
        .unwrap();
    assert_eq!(with_old.len(), 2);
    let stored_old = m.get(&old.id).await.unwrap();
    assert_eq!(
        stored_old.validity.superseded_by.as_deref(),
        Some(contra.id.as_str())
    );
    assert!(stored_old.validity.invalidated_at.is_some());
    assert!(stored_old.content.starts_with("Use select_related"));
    assert_eq!(stored_old.history.last().unwrap().event, Action::Supersede);

    // Echoing the superseded text does not bring it back.
    let echo = m
        .remember(
            learning(
                MemoryType::Decision,
                "Use select_related for author lookups in the feed views.",
            ),
            None,
        )
        .await
        .unwrap();
    assert_eq!(echo.event, Action::None);

    // An explicit supersede.
    let newer = NewMemory {
        supersedes: Some(contra.id.clone()),
        ..learning(
            MemoryType::Decision,
            "Feed views load authors with a prefetch_related cache instead.",
        )
    };
    let newer = m.remember(newer, None).await.unwrap();
    assert_eq!(newer.event, Action::Supersede);
    let again = NewMemory {
        supersedes: Some(contra.id.clone()),
        ..learning(
            MemoryType::Decision,
            "Something else entirely about caching.",
        )
    };
    let err = m.remember(again, None).await.unwrap_err().to_string();
    assert!(err.contains("already superseded"), "{err}");
}

#[tokio::test(flavor = "multi_thread")]
async fn one_live_contributor_profile_per_developer() {
    let repo = TestRepo::new();
    let m = memories(repo.path(), repo.data_dir());
    let profile = |text: &str| NewMemory {
        developer: Some("carol".into()),
        ..learning(MemoryType::ContributorProfile, text)
    };
    let first = m
        .remember(
            profile("Works mostly on the payment adapters; careful with retries."),
            None,
        )
        .await
        .unwrap();
    let second = m
        .remember(
            profile("Owns the payment adapters and the webhook queue; strong on idempotency."),
            None,
        )
        .await
        .unwrap();
    assert_eq!(second.event, Action::Update);
    assert_eq!(second.id, first.id);
    let live = m.profile("Carol").await.unwrap().unwrap();
    assert!(live.content.contains("webhook queue"));
    assert_eq!(
        live.history[0].content,
        "Works mostly on the payment adapters; careful with retries."
    );
    let all = m.all().await.unwrap();
    assert_eq!(
        all.iter()
            .filter(|x| x.kind == MemoryType::ContributorProfile)
            .count(),
        1
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn secrets_never_reach_the_store() {
    let repo = TestRepo::new();
    let m = memories(repo.path(), repo.data_dir());
    let aws = "AKIAIOSFODNN7EXAMPLE";
    let github = format!("ghp_{}", "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8");
    let password = "s3cr3t-Passw0rd";
    let pem = "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA1c2V0dGluZ3MgZm9yIHRlc3Rpbmc\n-----END RSA PRIVATE KEY-----";
    let outcome = m
        .remember(
            NewMemory {
                title: Some(format!("Staging key {aws}")),
                paths: vec![format!("config/{github}.env"), "src/settings.py".into()],
                ..learning(
                    MemoryType::RiskModule,
                    &format!(
                        "The staging DSN postgres://app:{password}@db.internal/prod and token {github} were pasted in settings.py; rotate them. {pem}"
                    ),
                )
            },
            None,
        )
        .await
        .unwrap();
    assert!(!outcome.redacted.is_empty());
    let rows = serde_json::to_string(&m.raw_rows().await.unwrap()).unwrap();
    for secret in [aws, github.as_str(), password, "MIIEpAIBAAKCAQEA"] {
        assert!(!rows.contains(secret), "{secret} reached the store: {rows}");
    }
    assert!(rows.contains("REDACTED"), "{rows}");
    assert!(
        rows.contains("db.internal"),
        "the sentence keeps its meaning: {rows}"
    );
    assert!(rows.contains("src/settings.py"));
    let stored = m.get(&outcome.id).await.unwrap();
    assert_eq!(stored.anchors.paths, ["src/settings.py"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn identifiers_and_paths_in_queries_match() {
    let repo = TestRepo::new();
    let m = memories(repo.path(), repo.data_dir());
    for text in [
        "QuerySet.select_related must not be used on the admin changelist: it joins 14 tables.",
        "send_file streams from disk; never read uploads into memory first.",
        "token_service.py signs refresh tokens; changes need a security review.",
        "Templates are rendered with autoescape on; mark_safe needs a comment.",
        "The cache layer invalidates on post_save signals only.",
    ] {
        m.remember(learning(MemoryType::ProjectPattern, text), None)
            .await
            .unwrap();
    }
    for (query, expected) in [
        ("select_related", "QuerySet.select_related"),
        ("send_file", "send_file streams"),
        ("token_service.py", "token_service.py signs"),
        (
            "how does the select related join work",
            "QuerySet.select_related",
        ),
        ("sendFile uploads", "send_file streams"),
    ] {
        let found = m.search(&search(query)).await.unwrap();
        assert!(
            found
                .first()
                .is_some_and(|f| f.memory.content.starts_with(expected)),
            "{query}: {:?}",
            found.iter().map(|f| &f.memory.content).collect::<Vec<_>>()
        );
    }
    // Anchor overlap with a path in the query lifts a memory.
    m.remember(
        NewMemory {
            paths: vec!["src/cache/layer.py".into()],
            ..learning(
                MemoryType::RiskModule,
                "Cache keys here include the tenant; forgetting it leaks data across tenants.",
            )
        },
        None,
    )
    .await
    .unwrap();
    let found = m.search(&search("cache src/cache/layer.py")).await.unwrap();
    assert!(
        found[0].memory.content.starts_with("Cache keys"),
        "{found:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_writes_are_refused_and_lose_nothing() {
    let repo = TestRepo::new();
    let m = memories(repo.path(), repo.data_dir());
    let kept = m
        .remember(
            learning(MemoryType::Decision, "Timestamps are stored in UTC."),
            None,
        )
        .await
        .unwrap();
    let empty = m
        .remember(learning(MemoryType::Decision, "   "), None)
        .await;
    assert!(empty.unwrap_err().to_string().contains("empty"));
    let huge = m
        .remember(
            learning(MemoryType::Decision, &"x".repeat(1024 * 1024)),
            None,
        )
        .await;
    assert!(huge.unwrap_err().to_string().contains("at most 4096"));
    let no_type = m
        .remember(
            NewMemory {
                kind: None,
                content: "a".into(),
                ..NewMemory::default()
            },
            None,
        )
        .await;
    assert!(no_type.is_err());
    assert!(
        "nonsense"
            .parse::<MemoryType>()
            .unwrap_err()
            .to_string()
            .contains("unknown memory type")
    );
    let escaping = m
        .remember(
            NewMemory {
                paths: vec!["../../etc/passwd".into()],
                ..learning(MemoryType::RiskModule, "Sensitive.")
            },
            None,
        )
        .await;
    assert!(
        escaping
            .unwrap_err()
            .to_string()
            .contains("outside the repository")
    );
    assert!(m.forget("m_0000000000000000").await.is_err());
    assert!(
        m.forget("not-an-id")
            .await
            .unwrap_err()
            .to_string()
            .contains("not a memory id")
    );
    let malformed = cairn::memory::parse_jsonl("{\"id\": \"m_1\"}\nnot json\n");
    assert!(malformed.unwrap_err().to_string().starts_with("line 1"));

    let all = memories(repo.path(), repo.data_dir()).all().await.unwrap();
    assert_eq!(all.len(), 1);
    assert_eq!(all[0].id, kept.id);
}

#[test]
fn cli_memories_persist_export_and_import_exactly() {
    let repo = TestRepo::new();
    repo.write(
        "src/auth/token_service.py",
        "def sign(token):\n    return token\n",
    );
    repo.commit("init");
    repo.index();
    let add = |args: &[&str]| {
        let mut full = vec!["memory", "add", "--json"];
        full.extend_from_slice(args);
        let out: serde_json::Value = serde_json::from_str(&repo.cairn_ok(&full)).unwrap();
        out
    };
    let risk = add(&[
        "--type",
        "risk_module",
        "--path",
        "src/auth/token_service.py",
        "--symbol",
        "src/auth/token_service.py::sign",
        "--symbol",
        "nowhere::ghost",
        "token_service.py signs refresh tokens; every change needs a second reviewer.",
    ]);
    assert_eq!(risk["event"], "ADD");
    assert_eq!(
        risk["unknown_anchors"],
        serde_json::json!(["nowhere::ghost"])
    );
    let id = risk["id"].as_str().unwrap().to_string();
    let decision = add(&[
        "--type",
        "decision",
        "--source",
        "review",
        "--source-ref",
        "PR #42",
        "Eager loading on the feed was rejected for N+1 risk.",
    ]);
    add(&[
        "--type",
        "decision",
        "--supersedes",
        decision["id"].as_str().unwrap(),
        "The feed now prefetches authors in one query.",
    ]);
    add(&[
        "--type",
        "developer_strength",
        "--developer",
        "alice",
        "Writes thorough migration tests.",
    ]);

    // Another process finds them (persistence across restarts).
    let found = repo.cairn_ok(&["memory", "search", "token_service.py"]);
    assert!(found.contains(&id), "{found}");
    let history = repo.cairn_ok(&["memory", "history", decision["id"].as_str().unwrap()]);
    assert!(history.contains("superseded by"), "{history}");

    // expand shows memories anchored on the file and its symbols; get_context the top ones.
    let expanded = repo.cairn_ok(&["expand", "src/auth/token_service.py::sign"]);
    assert!(expanded.contains(&id), "{expanded}");
    let context = repo.cairn_ok(&["context"]);
    assert!(context.contains("## Memories"), "{context}");
    assert!(context.contains("prefetches authors"), "{context}");
    assert!(
        !context.contains("Writes thorough"),
        "developer memories stay out: {context}"
    );

    // doctor reports the index, the memories and the search mode.
    let doctor = repo.cairn_ok(&["doctor"]);
    assert!(
        doctor.contains("memories:   ok — 4 stored (3 live)"),
        "{doctor}"
    );
    assert!(doctor.contains("keyword (BM25) only"), "{doctor}");

    // Export → import into a fresh data directory → export again: identical.
    let exported = repo.cairn_ok(&["memory", "export"]);
    assert_eq!(exported.lines().count(), 4);
    let backup = repo.path().join("backup.jsonl");
    std::fs::write(&backup, &exported).unwrap();
    let fresh = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| {
        let out = repo
            .cairn_command(fresh.path())
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let imported = run(&["memory", "import", backup.to_str().unwrap()]);
    assert!(imported.contains("imported 4"), "{imported}");
    assert_eq!(run(&["memory", "export"]), exported);
    // Importing again changes nothing.
    let again = run(&["memory", "import", backup.to_str().unwrap()]);
    assert!(again.contains("skipped 4"), "{again}");

    // A malformed line fails the whole import and keeps what is stored.
    let bad = repo.path().join("bad.jsonl");
    std::fs::write(
        &bad,
        format!("{}\n{{\"id\": 7}}\n", exported.lines().next().unwrap()),
    )
    .unwrap();
    let out = repo
        .cairn_command(fresh.path())
        .args(["memory", "import", bad.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("line 2"));
    assert_eq!(run(&["memory", "export"]), exported);

    // Forget removes the text from the store.
    let forgotten = repo.cairn_ok(&["memory", "forget", &id]);
    assert!(forgotten.contains("DELETE"), "{forgotten}");
    let listed = repo.cairn_ok(&["memory", "list", "--all"]);
    assert!(!listed.contains(&id), "{listed}");
    let bad_forget = repo.cairn(&["memory", "forget", &id]);
    assert!(!bad_forget.status.success());
    assert!(String::from_utf8_lossy(&bad_forget.stderr).contains("no memory"));
}

#[test]
fn concurrent_writers_lose_nothing() {
    let repo = TestRepo::new();
    let handles: Vec<_> = (0..4)
        .map(|i| {
            let mut command = repo.cairn_command(repo.data_dir());
            command.args([
                "memory",
                "add",
                "--type",
                "project_pattern",
                &format!("Concurrent learning number {i} about module_{i}."),
            ]);
            std::thread::spawn(move || command.output().unwrap())
        })
        .collect();
    for handle in handles {
        let out = handle.join().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let listed = repo.cairn_ok(&["memory", "list"]);
    for i in 0..4 {
        assert!(listed.contains(&format!("module_{i}")), "{listed}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn semantic_search_finds_paraphrases_with_the_real_model() {
    let model = cairn::memory::embed::default_model_dir();
    assert!(
        cairn::memory::embed::model_present(&model),
        "the all-MiniLM-L6-v2 model is missing from {}: run .ci/fetch-model",
        model.display()
    );
    let repo = TestRepo::new();
    let m = Memories::open(
        repo.path(),
        repo.data_dir(),
        SemanticSettings::resolve(Some(model), true),
    );
    assert!(m.mode().semantic);
    let billing = m
        .remember(
            learning(
                MemoryType::ProjectPattern,
                "Every database write in the billing service is wrapped in a transaction.",
            ),
            None,
        )
        .await
        .unwrap();
    m.remember(
        learning(
            MemoryType::ProjectPattern,
            "Templates are rendered with autoescape on; mark_safe needs a comment.",
        ),
        None,
    )
    .await
    .unwrap();
    // Each write computed its vector to compare itself with the others, and stored it.
    assert_eq!(m.embed_pending().await.unwrap(), 0);
    let vector = m.vector(&billing.id).await.expect("vector stored");
    assert_eq!(vector.len(), 384);

    // No word in common with the billing memory: only the vectors can find it.
    let query = "how are payment records kept consistent when saving";
    let keyword_only = m
        .search(&Query {
            keyword_only: true,
            ..search(query)
        })
        .await
        .unwrap();
    assert!(keyword_only.is_empty(), "{keyword_only:?}");
    let found = m.search(&search(query)).await.unwrap();
    assert_eq!(found[0].memory.id, billing.id, "{found:?}");

    // Vectors are stored with the memory: another process reads them back.
    let again = Memories::open(repo.path(), repo.data_dir(), SemanticSettings::default());
    assert_eq!(again.vector(&billing.id).await.unwrap(), vector);

    // An update drops the stale vector; the next pass embeds the new text.
    let updated = m
        .remember(
            learning(
                MemoryType::ProjectPattern,
                "Every database write in the billing service is wrapped in a transaction, refunds included.",
            ),
            None,
        )
        .await
        .unwrap();
    assert_eq!(updated.event, Action::Update);
    assert!(m.vector(&billing.id).await.is_none());
    assert_eq!(m.embed_pending().await.unwrap(), 1);
    let fresh = m.vector(&billing.id).await.unwrap();
    assert!(cairn::memory::embed::cosine(&fresh, &vector) < 0.9999);
}

#[tokio::test(flavor = "multi_thread")]
async fn echoes_numbers_and_polarity_are_told_apart() {
    let repo = TestRepo::new();
    let m = memories(repo.path(), repo.data_dir());
    let first = m
        .remember(
            NewMemory {
                paths: vec!["src/pay/retry.py".into()],
                source_ref: Some("PR #7".into()),
                ..learning(MemoryType::Decision, "Retry payments at most 3 times.")
            },
            None,
        )
        .await
        .unwrap();
    // An assistant echoing the line cairn served (with its decorations) adds nothing.
    let served = cairn::app::render::memory_line(first.memory.as_ref().unwrap());
    let echo = m
        .remember(learning(MemoryType::Decision, &served), None)
        .await
        .unwrap();
    assert_eq!(echo.event, Action::None, "{served}");
    assert_eq!(
        m.get(&first.id).await.unwrap().content,
        "Retry payments at most 3 times."
    );
    // A different number is a different decision.
    let five = m
        .remember(
            learning(MemoryType::Decision, "Retry payments at most 5 times."),
            None,
        )
        .await
        .unwrap();
    assert_eq!(five.event, Action::Add);
    // A typographic apostrophe still negates.
    let yes = m
        .remember(
            learning(
                MemoryType::ProjectPattern,
                "Use eager loading in the feed views.",
            ),
            None,
        )
        .await
        .unwrap();
    let no = m
        .remember(
            learning(
                MemoryType::ProjectPattern,
                "Don\u{2019}t use eager loading in the feed views.",
            ),
            None,
        )
        .await
        .unwrap();
    assert_eq!(no.event, Action::Supersede);
    assert_eq!(no.superseded.as_deref(), Some(yes.id.as_str()));
    // A longer statement that mentions an exception does not contradict.
    let exception = m
        .remember(
            learning(
                MemoryType::Decision,
                "Retry payments at most 3 times, but never retry refunds.",
            ),
            None,
        )
        .await
        .unwrap();
    assert_ne!(exception.event, Action::Supersede, "{exception:?}");

    // Forgetting the memory that superseded another makes that one valid again.
    m.forget(&no.id).await.unwrap();
    let back = m.get(&yes.id).await.unwrap();
    assert!(back.is_live(), "{back:?}");
    assert!(back.validity.superseded_by.is_none());
}

#[tokio::test(flavor = "multi_thread")]
async fn imports_are_scrubbed_and_do_not_resurrect_forgotten_memories() {
    let repo = TestRepo::new();
    let m = memories(repo.path(), repo.data_dir());
    let kept = m
        .remember(
            learning(MemoryType::Decision, "Timestamps are stored in UTC."),
            None,
        )
        .await
        .unwrap();
    let gone = m
        .remember(
            learning(
                MemoryType::RiskModule,
                "The importer deletes rows it cannot parse.",
            ),
            None,
        )
        .await
        .unwrap();
    let mut exported = m.export().await.unwrap();
    m.forget(&gone.id).await.unwrap();

    // A backup edited by hand with a secret in it, plus a forgotten memory.
    let aws = "AKIAIOSFODNN7EXAMPLE";
    exported[0].memory.id = "m_00000000000000aa".into();
    exported[0].memory.content = format!("Staging uses key {aws} for uploads.");
    let jsonl: String = exported
        .iter()
        .map(|r| serde_json::to_string(r).unwrap() + "\n")
        .collect();
    let report = m
        .import(cairn::memory::parse_jsonl(&jsonl).unwrap())
        .await
        .unwrap();
    assert_eq!(report.imported, ["m_00000000000000aa"]);
    assert_eq!(report.forgotten, std::slice::from_ref(&gone.id));
    let rows = serde_json::to_string(&m.raw_rows().await.unwrap()).unwrap();
    assert!(!rows.contains(aws), "{rows}");
    assert!(m.get(&gone.id).await.is_err());
    assert!(m.get(&kept.id).await.is_ok());
}

#[test]
fn memories_follow_their_files_when_they_move() {
    let repo = TestRepo::new();
    repo.write(
        "src/billing/charge.py",
        "def charge(amount):\n    return amount\n",
    );
    repo.write("src/other.py", "def other():\n    return 1\n");
    repo.commit("init");
    repo.index();
    let added = repo.cairn_ok(&[
        "memory",
        "add",
        "--type",
        "risk_module",
        "--path",
        "src/billing/charge.py",
        "--symbol",
        "src/billing/charge.py::charge",
        "charge() talks to the payment provider; retries must be idempotent.",
    ]);
    assert!(added.starts_with("ADD"), "{added}");

    std::fs::create_dir_all(repo.path().join("src/payments")).unwrap();
    std::fs::rename(
        repo.path().join("src/billing/charge.py"),
        repo.path().join("src/payments/charge.py"),
    )
    .unwrap();
    let report = repo.index();
    assert_eq!(
        report["moved"],
        serde_json::json!([{"from": "src/billing/charge.py", "to": "src/payments/charge.py"}])
    );
    let listed = repo.cairn_ok(&["memory", "list", "--json"]);
    let listed: serde_json::Value = serde_json::from_str(&listed).unwrap();
    assert_eq!(
        listed[0]["paths"],
        serde_json::json!(["src/payments/charge.py"])
    );
    assert_eq!(
        listed[0]["symbols"],
        serde_json::json!(["src/payments/charge.py::charge"])
    );
    assert!(
        listed[0]["history"][0]["note"]
            .as_str()
            .unwrap()
            .contains("src/billing/charge.py → src/payments/charge.py")
    );
    // expand on the new path shows it.
    let expanded = repo.cairn_ok(&["expand", "src/payments/charge.py::charge"]);
    assert!(expanded.contains("payment provider"), "{expanded}");
}

#[tokio::test(flavor = "multi_thread")]
async fn forgetting_several_memories_is_one_write() {
    let repo = TestRepo::new();
    let m = memories(repo.path(), repo.data_dir());
    let mut ids = Vec::new();
    for text in [
        "Caches are keyed by tenant.",
        "Uploads are scanned before storage.",
        "Exports run in the nightly batch.",
    ] {
        ids.push(
            m.remember(learning(MemoryType::ProjectPattern, text), None)
                .await
                .unwrap()
                .id,
        );
    }
    // An unknown id fails the whole call and removes nothing.
    let err = m
        .forget_many(&[ids[0].clone(), "m_00000000000000ff".into()])
        .await
        .unwrap_err();
    assert!(err.to_string().contains("no memory"), "{err}");
    assert_eq!(m.all().await.unwrap().len(), 3);

    let removed = m.forget_many(&ids[..2]).await.unwrap();
    assert_eq!(removed.len(), 2);
    let left = memories(repo.path(), repo.data_dir()).all().await.unwrap();
    assert_eq!(left.len(), 1);
    assert_eq!(left[0].id, ids[2]);
    let rows = serde_json::to_string(&m.raw_rows().await.unwrap()).unwrap();
    assert!(!rows.contains("Caches are keyed"), "{rows}");
}

/// Near-duplicates are kept until the memories change; asked with no patience after a change,
/// the answer is the pairs found before it (and says a comparison goes on) or already the
/// new ones — never a wait — and the comparison it started answers the next call.
#[tokio::test(flavor = "multi_thread")]
async fn near_duplicates_answer_the_kept_pairs_while_a_change_is_compared() {
    let repo = TestRepo::new();
    let m = memories(repo.path(), repo.data_dir());
    let write = |content: &str| learning(MemoryType::Decision, content);
    let cents = m
        .remember(
            write("Cart totals are integers of cents, never floats: rounding drifted on refunds."),
            None,
        )
        .await
        .unwrap();
    let twin = m
        .remember(
            write(
                "Cart totals are integers of cents, never floats: rounding drifted on discounts.",
            ),
            None,
        )
        .await
        .unwrap();
    assert_eq!(twin.event, Action::Add);
    let ids = |pairs: &[cairn::memory::duplicates::NearPair]| -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|p| (p.older.clone(), p.newer.clone()))
            .collect()
    };
    let first = m.near_duplicates(None, None).await.unwrap();
    assert!(!first.comparing);
    assert_eq!(ids(&first.pairs), [(cents.id.clone(), twin.id.clone())]);
    // Unchanged: the kept pairs, at once, even with no patience.
    let kept = m
        .near_duplicates(None, Some(std::time::Duration::ZERO))
        .await
        .unwrap();
    assert!(!kept.comparing);
    assert_eq!(ids(&kept.pairs), ids(&first.pairs));

    // The twin forgotten: the pair is stale until compared again.
    m.forget(&twin.id).await.unwrap();
    let meanwhile = m
        .near_duplicates(None, Some(std::time::Duration::ZERO))
        .await
        .unwrap();
    if meanwhile.comparing {
        assert_eq!(ids(&meanwhile.pairs), ids(&first.pairs), "the kept pairs");
    } else {
        assert!(meanwhile.pairs.is_empty(), "{:?}", meanwhile.pairs);
    }
    let after = m.near_duplicates(None, None).await.unwrap();
    assert!(!after.comparing);
    assert!(after.pairs.is_empty(), "{:?}", after.pairs);
}

/// A store written by cairn 0.1.0 — the rows of its `memory` table and its export, for
/// memories that between them set every field — opens and round-trips: the memories read
/// from those rows export as 0.1.0 exported them, and importing that export writes the same
/// rows. Regenerate neither file: they are what an earlier release wrote.
#[tokio::test(flavor = "multi_thread")]
async fn a_store_written_by_the_previous_release_opens_and_round_trips() {
    let fixture = |name: &str| {
        std::fs::read_to_string(crate::support::fixture(&format!("memory/{name}"))).unwrap()
    };
    let export = fixture("previous-release.jsonl");
    let rows: Vec<serde_json::Value> =
        serde_json::from_str(&fixture("previous-release.rows.json")).unwrap();
    let by_id = |mut values: Vec<serde_json::Value>| {
        values.sort_by_key(|v| v["id"].to_string());
        values
    };
    let lines = |text: &str| -> Vec<serde_json::Value> {
        by_id(
            text.lines()
                .map(|l| serde_json::from_str(l).unwrap())
                .collect(),
        )
    };

    // The old rows, written as they are into a store, open and export as they did.
    let repo = TestRepo::new();
    let dir = cairn::datadir::DataDir::at(repo.data_dir()).memory();
    let store = cairn::storage::memory::Store::open(&dir).await.unwrap();
    let head = rows.iter().filter_map(|r| r["seq"].as_u64()).max().unwrap();
    let as_written = rows
        .iter()
        .map(|row| {
            let mut row = row.as_object().unwrap().clone();
            let id = row["id"].as_str().unwrap().trim_start_matches("memory:");
            row.insert("id".into(), id.into());
            row
        })
        .collect();
    store
        .write(as_written, &[], Vec::new(), head)
        .await
        .unwrap();
    store.close().await;
    let m = memories(repo.path(), repo.data_dir());
    let exported: Vec<serde_json::Value> = m
        .export()
        .await
        .unwrap()
        .iter()
        .map(|r| serde_json::to_value(r).unwrap())
        .collect();
    assert_eq!(by_id(exported), lines(&export));
    assert_eq!(by_id(m.raw_rows().await.unwrap()), by_id(rows.clone()));

    // The old export, imported, writes the old rows.
    let fresh = TestRepo::new();
    let m = memories(fresh.path(), fresh.data_dir());
    let records = cairn::memory::parse_jsonl(&export).unwrap();
    let report = m.import(records).await.unwrap();
    assert_eq!(report.imported.len(), rows.len());
    assert_eq!(by_id(m.raw_rows().await.unwrap()), by_id(rows));

    // A key no memory has is refused by name, whichever part of a memory it is near.
    let first = export.lines().next().unwrap();
    for (known, misspelt) in [("confidence", "confidance"), ("source_ref", "source_rev")] {
        let line = first.replacen(&format!("\"{known}\""), &format!("\"{misspelt}\""), 1);
        let error = cairn::memory::parse_jsonl(&line).unwrap_err().to_string();
        assert!(
            error.contains(&format!("unknown field `{misspelt}`")),
            "{error}"
        );
    }
}

/// Export covers the repository's memories and the organisation's, each record with its
/// scope; import puts each back in the store its scope names, or with the repository's when
/// the repository has no organisation.
#[test]
fn export_and_import_cover_the_organisations_memories() {
    let repo = TestRepo::new();
    repo.git(&["remote", "add", "origin", "git@github.com:acme/one.git"]);
    repo.write("app/main.py", "def main():\n    return 1\n");
    repo.commit("start");
    let add = |args: &[&str]| -> Value {
        let mut all = vec!["memory", "add"];
        all.extend_from_slice(args);
        all.push("--json");
        serde_json::from_str(&repo.cairn_ok(&all)).unwrap()
    };
    let decision = add(&["-t", "decision", "Invoices are immutable once sent."]);
    assert_eq!(decision["memory"]["scope"], "repository", "{decision}");
    let framework = add(&[
        "-t",
        "framework_knowledge",
        "--file-pattern",
        "*.py",
        "Django querysets are lazy: slicing one issues a LIMIT query.",
    ]);
    assert_eq!(framework["memory"]["scope"], "org", "{framework}");

    let exported = repo.cairn_ok(&["memory", "export"]);
    let scopes: Vec<String> = exported
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap()["scope"].to_string())
        .collect();
    assert_eq!(scopes, ["\"repository\"", "\"org\""], "{exported}");
    let backup = repo.path().join("backup.jsonl");
    std::fs::write(&backup, &exported).unwrap();

    // Another machine (a fresh data directory and organisation stores): both come back, each
    // in its own store.
    let fresh = tempfile::tempdir().unwrap();
    let run = |repo: &TestRepo, args: &[&str]| {
        let out = repo
            .cairn_command(fresh.path())
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    let imported = run(&repo, &["memory", "import", backup.to_str().unwrap()]);
    assert!(imported.contains("imported 2"), "{imported}");
    assert_eq!(run(&repo, &["memory", "export"]), exported);
    let again = run(&repo, &["memory", "import", backup.to_str().unwrap()]);
    assert!(again.contains("skipped 2"), "{again}");

    // A repository without a remote has no organisation store: the organisation's memory is
    // kept with the repository's, and the import says so.
    let alone = TestRepo::new();
    let fresh = tempfile::tempdir().unwrap();
    let out = alone
        .cairn_command(fresh.path())
        .args(["memory", "import", backup.to_str().unwrap()])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        said.contains("imported 2") && said.contains("1 organisation memories kept"),
        "{said}"
    );
    let there = alone
        .cairn_command(fresh.path())
        .args(["memory", "list", "--json"])
        .output()
        .unwrap();
    let listed: Value = serde_json::from_slice(&there.stdout).unwrap();
    let scopes: Vec<&str> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["scope"].as_str().unwrap())
        .collect();
    assert_eq!(scopes, ["repository", "repository"], "{listed}");
}
