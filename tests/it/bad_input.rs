//! Bad input never aborts an index or loses what is stored, and is always reported.

use std::time::Duration;

use crate::support::{TestRepo, stored_graph};

fn skipped(summary: &serde_json::Value) -> Vec<(String, String)> {
    summary["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["path"].as_str().unwrap().to_string(),
                s["reason"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn broken_binary_undecodable_and_huge_files_are_reported_not_fatal() {
    let repo = TestRepo::with_fixture("mixed");
    repo.write(
        "src/shop/broken.py",
        "def ok():\n    return 1\n\ndef broken(:\n    pass\n",
    );
    repo.write("src/shop/blob.py", b"\x00\x01\x02binary\x00".as_slice());
    repo.write("src/shop/latin.py", b"name = '\xe9t\xe9'\n".as_slice());
    repo.write("cairn.toml", "[index]\nmax_file_bytes = 4096\n");
    repo.write(
        "src/shop/large.py",
        format!("def big():\n    return [{}]\n", "1, ".repeat(3000)),
    );
    repo.write("node_modules/lib/index.ts", "export const x = 1;\n");
    repo.write("build/gen.py", "X = 1\n");
    repo.write(".gitignore", "ignored/\n");
    repo.write("ignored/secret.py", "X = 1\n");
    let summary = repo.index();
    let skipped = skipped(&summary);
    let reason = |path: &str| {
        skipped
            .iter()
            .find(|(p, _)| p == path)
            .map(|(_, r)| r.clone())
    };
    assert!(
        reason("src/shop/blob.py").unwrap().contains("binary"),
        "{skipped:?}"
    );
    assert!(
        reason("src/shop/latin.py").unwrap().contains("UTF-8"),
        "{skipped:?}"
    );
    assert!(
        reason("src/shop/large.py")
            .unwrap()
            .contains("larger than the limit"),
        "{skipped:?}"
    );
    let diagnostics = summary["diagnostics"].as_array().unwrap();
    assert!(
        diagnostics
            .iter()
            .any(|d| d["path"] == "src/shop/broken.py"),
        "{summary:#}"
    );
    let graph = stored_graph(repo.data_dir()).await;
    assert!(
        graph.node("src/shop/broken.py::ok").is_some(),
        "what parsed is kept"
    );
    for left_out in [
        "node_modules/lib/index.ts",
        "build/gen.py",
        "ignored/secret.py",
    ] {
        assert!(graph.node(left_out).is_none(), "{left_out} is not indexed");
    }
    assert!(graph.node("src/shop/cart.py").is_some());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_directory_outside_git_indexes_too() {
    let repo = TestRepo::plain();
    repo.write(
        "app.py",
        "import helpers\n\ndef main():\n    return helpers.run()\n",
    );
    repo.write("helpers.py", "def run():\n    return 1\n");
    let summary = repo.index();
    assert_eq!(summary["files"], 2);
    assert!(summary["commit"].is_null());
    let graph = stored_graph(repo.data_dir()).await;
    assert!(
        graph
            .edges
            .iter()
            .any(|e| &*e.src == "app.py::main" && &*e.dst == "helpers.py::run")
    );
}

#[test]
fn an_unreadable_file_is_reported() {
    use std::os::unix::fs::PermissionsExt;
    let repo = TestRepo::with_fixture("mixed");
    repo.write("src/shop/locked.py", "X = 1\n");
    let path = repo.path().join("src/shop/locked.py");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o000)).unwrap();
    let root_reads_anyway = std::fs::read(&path).is_ok();
    let summary = repo.index();
    let skipped = skipped(&summary);
    if root_reads_anyway {
        // Permissions do not bind this user (root): the file is simply indexed.
        assert!(skipped.is_empty(), "{skipped:?}");
    } else {
        assert!(
            skipped
                .iter()
                .any(|(p, r)| p == "src/shop/locked.py" && r.starts_with("unreadable")),
            "{skipped:?}"
        );
    }
    assert_eq!(
        summary["files"].as_u64().unwrap(),
        12 + u64::from(root_reads_anyway)
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_second_writer_waits_or_refuses_and_nothing_is_lost() {
    let repo = TestRepo::with_fixture("mixed");
    repo.index();
    let before = stored_graph(repo.data_dir()).await.nodes.len();

    // Held lock: a writer that will not wait refuses clearly.
    let held =
        cairn::lock::acquire(&repo.data_dir().join("index.lock"), Duration::ZERO, |_| {}).unwrap();
    let refused = repo.cairn(&["index", "--wait", "1"]);
    assert!(!refused.status.success());
    let message = String::from_utf8_lossy(&refused.stderr);
    assert!(message.contains("another cairn process"), "{message}");
    drop(held);

    // Two writers at once: one waits for the other; both succeed.
    repo.write("src/shop/extra.py", "def extra():\n    return 2\n");
    let mut first = repo
        .cairn_command(repo.data_dir())
        .args(["index", "--json"])
        .spawn()
        .unwrap();
    let second = repo.cairn(&["index", "--json"]);
    assert!(first.wait().unwrap().success());
    assert!(
        second.status.success(),
        "{}",
        String::from_utf8_lossy(&second.stderr)
    );
    let graph = stored_graph(repo.data_dir()).await;
    assert!(graph.nodes.len() > before);
    assert!(graph.node("src/shop/extra.py::extra").is_some());
}

#[test]
fn a_corrupt_configuration_is_a_clear_error() {
    let repo = TestRepo::with_fixture("mixed");
    repo.write("cairn.toml", "[index\nmax_file_bytes = \"lots\"\n");
    let output = repo.cairn(&["index"]);
    assert!(!output.status.success());
    let message = String::from_utf8_lossy(&output.stderr);
    assert!(
        message.contains("cairn.toml is not valid cairn configuration"),
        "{message}"
    );
}

#[test]
fn cli_expand_refuses_escaping_and_unknown_targets() {
    let repo = TestRepo::with_fixture("mixed");
    repo.index();
    let escaping = repo.cairn(&["expand", "../../etc/passwd"]);
    assert!(!escaping.status.success());
    assert!(String::from_utf8_lossy(&escaping.stderr).contains("outside the repository"));
    let unknown = repo.cairn(&["expand", "src/shop/cart.py::Nope"]);
    assert!(!unknown.status.success());
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("no file or symbol"));
}

#[test]
fn a_rust_file_repeating_one_re_export_indexes_in_bounded_time() {
    // Each `use self::x;` binds `x` to itself: following every binding at every hop would be
    // 40^8 walks; one binding is followed, so the index ends.
    let repo = TestRepo::plain();
    repo.write(
        "Cargo.toml",
        "[package]\nname = \"loop\"\nversion = \"0.1.0\"\n",
    );
    let uses = "use self::x;\nuse crate::x;\n".repeat(20);
    repo.write("src/lib.rs", format!("{uses}pub fn f() {{ x::g(); }}\n"));
    let mut child = repo
        .cairn_command(repo.data_dir())
        .args(["index", "--json"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(120);
    while child.try_wait().unwrap().is_none() {
        if std::time::Instant::now() > deadline {
            child.kill().unwrap();
            panic!("indexing a file of repeated re-exports did not end");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success());
    let summary: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let stats = &summary["stats"];
    let imports =
        stats["imports_internal"].as_u64().unwrap() + stats["imports_unresolved"].as_u64().unwrap();
    assert_eq!(imports, 40, "{stats}");
    // `x::g()` names a function no file declares: outside code, counted once.
    let calls =
        stats["calls_unresolved"].as_u64().unwrap() + stats["calls_external"].as_u64().unwrap();
    assert_eq!(calls, 1, "{stats}");
}

#[test]
fn an_oversized_record_review_names_the_limit_not_a_json_column() {
    const LIMIT: usize = 8 * 1024 * 1024;
    let repo = TestRepo::new();
    // Valid JSON one byte over the limit: read whole, it would parse.
    let head = r#"{"verdict": "approve", "author": ""#;
    let tail = r#""}"#;
    let over = format!(
        "{head}{}{tail}",
        "a".repeat(LIMIT + 1 - head.len() - tail.len())
    );
    assert_eq!(over.len(), LIMIT + 1);
    repo.write("review.json", &over);
    let file = repo.path().join("review.json");
    let from_file = repo.cairn(&["record-review", file.to_str().unwrap()]);
    let from_stdin = repo.cairn_with_stdin(&["record-review", "-"], over.as_bytes());
    for (output, name) in [(from_file, file.to_str().unwrap()), (from_stdin, "stdin")] {
        assert!(!output.status.success());
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            stderr.contains(&format!("{name} is larger than the limit of 8 MiB")),
            "{stderr}"
        );
        assert!(!stderr.contains("column"), "{stderr}");
    }
    // At the limit it is read and parsed (and its author, far too long, refused as such).
    let at = format!("{}{tail}", &over[..LIMIT - tail.len()]);
    assert_eq!(at.len(), LIMIT);
    repo.write("review.json", &at);
    let output = repo.cairn(&["record-review", file.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        !stderr.contains("larger than the limit of 8 MiB"),
        "{stderr}"
    );
    assert!(!stderr.contains("column"), "{stderr}");
}

/// Cuts every file of the graph store's manifest short, as a crash or a full disk would.
fn damage_graph_store(data_dir: &std::path::Path) {
    let manifests = data_dir.join("store/manifest");
    let mut cut = 0;
    for entry in std::fs::read_dir(&manifests).unwrap() {
        let file = std::fs::OpenOptions::new()
            .write(true)
            .open(entry.unwrap().path())
            .unwrap();
        file.set_len(10).unwrap();
        cut += 1;
    }
    assert!(cut > 0, "no manifest in {}", manifests.display());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_damaged_graph_store_names_the_rebuild_which_keeps_the_memories() {
    let repo = TestRepo::with_fixture("mixed");
    repo.index();
    let added: serde_json::Value = serde_json::from_str(&repo.cairn_ok(&[
        "memory",
        "add",
        "-t",
        "decision",
        "--json",
        "Cart totals are cents.",
    ]))
    .unwrap();
    let id = added["id"].as_str().unwrap().to_string();
    damage_graph_store(repo.data_dir());

    let store = repo.data_dir().join("store");
    for args in [&["index"][..], &["context"]] {
        let failed = repo.cairn(args);
        assert!(!failed.status.success(), "{args:?}");
        let stderr = String::from_utf8_lossy(&failed.stderr);
        assert!(
            stderr.contains(&format!(
                "the graph store at {} is damaged",
                store.display()
            )),
            "{args:?}: {stderr}"
        );
        assert!(
            stderr.contains("`cairn index --rebuild` discards it")
                && stderr.contains("memories and reviews are kept"),
            "{stderr}"
        );
    }
    let doctor = String::from_utf8_lossy(&repo.cairn(&["doctor"]).stdout).into_owned();
    assert!(doctor.contains("— run `cairn index --rebuild`"), "{doctor}");

    let rebuilt: serde_json::Value =
        serde_json::from_str(&repo.cairn_ok(&["index", "--rebuild", "--json"])).unwrap();
    assert_eq!(rebuilt["parsed"], rebuilt["files"], "{rebuilt}");
    repo.assert_store_is_fresh().await;
    let context = repo.cairn_ok(&["context"]);
    assert!(context.contains("Cart totals are cents."), "{context}");
    let shown = repo.cairn_ok(&["memory", "show", &id]);
    assert!(shown.contains("Cart totals are cents."), "{shown}");
}
