//! A reader that stops early (`cairn memory search … | head -5`) ends a command quietly: exit
//! 0, nothing on stderr about the pipe, no panic.

use std::io::Write as _;
use std::process::{Command, Stdio};

use serde_json::json;

use crate::support::TestRepo;

/// Runs `command` with its stdout closed before it writes, `input` on stdin; asserts it
/// succeeds and says nothing about the pipe.
fn assert_quiet_when_closed(mut command: Command, input: Option<&[u8]>, what: &str) {
    let mut child = command
        .stdin(if input.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The reader goes away before anything is written.
    drop(child.stdout.take());
    if let Some(input) = input {
        child.stdin.take().unwrap().write_all(input).unwrap();
    }
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "{what}: {:?} with stdout closed\n{stderr}",
        output.status
    );
    for sign in ["panicked", "Broken pipe", "broken pipe", "stdout"] {
        assert!(
            !stderr.contains(sign),
            "{what}: {sign:?} on stderr:\n{stderr}"
        );
    }
}

#[test]
fn every_command_that_prints_ends_quietly_when_its_reader_goes_away() {
    let repo = TestRepo::with_fixture("mixed");
    let home = tempfile::tempdir().unwrap();
    let cairn = |args: &[&str]| {
        let mut command = repo.cairn_command(repo.data_dir());
        command
            .args(args)
            .env("HOME", home.path())
            .env("XDG_CONFIG_HOME", home.path().join(".config"))
            .env("CAIRN_SERVICE_MANAGER", "none");
        command
    };
    let closed = |args: &[&str]| assert_quiet_when_closed(cairn(args), None, &args.join(" "));

    closed(&["index"]);
    closed(&["index", "--json"]);
    let id = {
        let added = repo.cairn_ok(&[
            "memory",
            "add",
            "-t",
            "decision",
            "Carts are saved through storage.write_cart only.",
            "--path",
            "src/shop/cart.py",
            "--json",
        ]);
        let added: serde_json::Value = serde_json::from_str(&added).unwrap();
        added["id"].as_str().unwrap().to_string()
    };
    let export = repo.data_dir().join("export.jsonl");
    repo.cairn_ok(&["memory", "export", "--output", export.to_str().unwrap()]);
    let findings = repo.data_dir().join("review.json");
    std::fs::write(
        &findings,
        json!({
            "verdict": "comment",
            "author": "alice",
            "review_id": "PR-1",
            "findings": [{"category": "naming", "file": "src/shop/cart.py", "line": 1,
                "message": "unclear name", "disposition": "rejected", "reason": "it is the domain's word"}]
        })
        .to_string(),
    )
    .unwrap();
    repo.write(
        "src/shop/cart.py",
        format!("{}\n# changed\n", repo.read("src/shop/cart.py")),
    );

    for args in [
        &["context"][..],
        &["context", "--json"],
        &["expand", "src/shop/cart.py"],
        &["expand", "src/shop/cart.py", "--json"],
        &["expand", &id],
        &[
            "memory",
            "add",
            "-t",
            "decision",
            "Prices are integers in cents.",
        ],
        &["memory", "list"],
        &["memory", "list", "--json"],
        &["memory", "search", "carts"],
        &["memory", "search", "carts", "--json"],
        &["memory", "show", &id],
        &["memory", "show", &id, "--json"],
        &["memory", "history", &id],
        &["memory", "export"],
        &["memory", "import", export.to_str().unwrap()],
        &["review"],
        &["review", "--json"],
        &["record-review", findings.to_str().unwrap()],
        &["rules"],
        &["rules", "--json"],
        &["rules", "--addressed", "naming"],
        &["status"],
        &["status", "--json"],
        &["doctor"],
        &["install", "--dry-run", "--client", "claude"],
        &["install", "--dry-run", "--client", "claude", "--json"],
        &["uninstall", "--dry-run"],
        &["team", "untrust"],
        &["memory", "forget", &id],
    ] {
        closed(args);
    }

    // The hook, whose session-start answer is the context.
    let start = json!({"hook_event_name": "SessionStart", "session_id": "s1", "cwd": repo.path()});
    assert_quiet_when_closed(cairn(&["hook"]), Some(start.to_string().as_bytes()), "hook");
}
