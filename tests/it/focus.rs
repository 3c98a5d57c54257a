//! `get_context` focused by a task sentence, through the real binary: the files and symbols
//! whose names, paths and docstrings share the sentence's words come first, the memories that
//! match it bring the code they are anchored on, and paths keep working as focus.

use serde_json::Value;

use crate::support::TestRepo;

/// A logging helper every module calls (the most central code), a small teardown module
/// nothing else uses, a ledger module with a name unrelated to invoices, and filler modules.
fn project() -> TestRepo {
    let repo = TestRepo::new();
    repo.write("app/__init__.py", "");
    repo.write(
        "app/log.py",
        "import os\n\n\ndef log(msg):\n    os.environ.get(\"LOG\")\n    return msg\n",
    );
    repo.write(
        "app/lifecycle.py",
        "def run_teardown_callbacks(callbacks):\n    \"\"\"Call every registered teardown callback, even when one of them raises.\"\"\"\n    errors = []\n    for callback in callbacks:\n        try:\n            callback()\n        except Exception as error:\n            errors.append(error)\n    return errors\n",
    );
    repo.write(
        "app/ledger.py",
        "def post_entries(entries):\n    return sum(entries)\n",
    );
    for (i, name) in ["orders", "users", "search", "mail", "cache", "export"]
        .iter()
        .enumerate()
    {
        repo.write(
            &format!("app/{name}.py"),
            format!(
                "from app.log import log\n\n\ndef handle_{name}(x):\n    return log(x + {i})\n"
            ),
        );
    }
    repo.commit("project");
    repo.index();
    repo
}

fn context(repo: &TestRepo, extra: &[&str]) -> Value {
    let mut args = vec!["context", "--json", "--max-tokens", "2000"];
    args.extend_from_slice(extra);
    serde_json::from_str(&repo.cairn_ok(&args)).unwrap()
}

fn ids(list: &Value) -> Vec<&str> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|v| v["id"].as_str().unwrap())
        .collect()
}

#[test]
fn a_task_sentence_brings_the_code_it_talks_about_first() {
    let repo = project();
    let plain = context(&repo, &[]);
    assert_ne!(
        ids(&plain["top_files"])[0],
        "app/lifecycle.py",
        "without a focus the central code leads: {plain:#}"
    );
    let focused = context(
        &repo,
        &[
            "--focus",
            "all teardown callbacks are called despite errors",
        ],
    );
    assert_eq!(
        ids(&focused["top_files"])[0],
        "app/lifecycle.py",
        "{focused:#}"
    );
    assert_eq!(
        ids(&focused["top_symbols"])[0],
        "app/lifecycle.py::run_teardown_callbacks",
        "{focused:#}"
    );
    // Words that match nothing leave the ranking as it was.
    let unmatched = context(&repo, &["--focus", "quantum entanglement"]);
    assert_eq!(ids(&unmatched["top_files"]), ids(&plain["top_files"]));
}

#[test]
fn a_memory_that_matches_the_focus_brings_its_anchored_file() {
    let repo = project();
    let before = context(&repo, &["--focus", "how invoices are rounded"]);
    let rank = |answer: &Value| {
        ids(&answer["top_files"])
            .iter()
            .position(|id| *id == "app/ledger.py")
    };
    assert_ne!(rank(&before), Some(0), "{before:#}");
    repo.cairn_ok(&[
        "memory",
        "add",
        "--type",
        "decision",
        "--path",
        "app/ledger.py",
        "Invoices are rounded half-even, once, when entries are posted.",
    ]);
    let after = context(&repo, &["--focus", "how invoices are rounded"]);
    assert_eq!(rank(&after), Some(0), "{after:#}");
}

#[test]
fn a_symbol_named_as_focus_leads_its_section() {
    let repo = project();
    let focused = context(&repo, &["--focus", "app/ledger.py::post_entries"]);
    assert_eq!(
        ids(&focused["top_files"])[0],
        "app/ledger.py",
        "{focused:#}"
    );
    assert_eq!(
        ids(&focused["top_symbols"])[0],
        "app/ledger.py::post_entries",
        "{focused:#}"
    );
}
