//! What a review briefing lists and keeps, through the real binary on real git repositories:
//! tests to run ranked by evidence (a call, a name, a shared history, nearness) with the
//! reason for each, fixtures apart from tests, the files missing from the change, and every
//! changed file and symbol under a tight budget.

use serde_json::Value;

use crate::support::TestRepo;

/// `app/core.py`: `configure`, the function every change below touches.
fn core(version: &str) -> String {
    format!(
        "def configure(level):
    return level + 1


def shutdown():
    return 0

# {version}
"
    )
}

/// A project whose tests each know the change differently: one calls `configure`, one only
/// names it, one changed with `core.py` in its history, one reaches it through a helper,
/// and fixtures (conftest, a test app, a helper) that call or name it.
fn project() -> TestRepo {
    let repo = TestRepo::new();
    repo.write("app/__init__.py", "");
    repo.write("app/core.py", core("v1"));
    repo.write("app/api.py", "def serve():\n    return 'v1'\n");
    repo.write(
        "app/util.py",
        "from app.core import configure\n\n\ndef prepare():\n    return configure(1)\n",
    );
    repo.write("tests/__init__.py", "");
    repo.write(
        "tests/test_calls.py",
        "from app.core import configure\n\n\ndef test_configure():\n    assert configure(1) == 2\n",
    );
    repo.write(
        "tests/test_names.py",
        "import importlib\n\n\ndef test_the_entry_point_exists():\n    core = importlib.import_module('app.core')\n    assert hasattr(core, 'configure')\n",
    );
    repo.write(
        "tests/test_history.py",
        "def test_version():\n    assert 'v' in 'v1'\n",
    );
    repo.write(
        "tests/test_near.py",
        "from app.util import prepare\n\n\ndef test_prepare():\n    assert prepare() == 2\n",
    );
    repo.write(
        "tests/test_unrelated.py",
        "def test_nothing():\n    assert True\n",
    );
    repo.write(
        "tests/conftest.py",
        "from app.core import configure\n\n\ndef setup_module():\n    configure(0)\n",
    );
    repo.write(
        "tests/test_apps/demo/app.py",
        "# A test app that sets itself up with configure.\nSETUP = 'configure'\n",
    );
    repo.write(
        "tests/helpers.py",
        "from app.core import shutdown\n\n\ndef stop():\n    return shutdown()\n",
    );
    repo.commit_as("Add the app", "Alice", "alice@example.com", 30);
    // core.py changes with api.py and test_history.py, every time.
    for (i, days) in [(2, 20), (3, 10), (4, 5)] {
        repo.write("app/core.py", core(&format!("v{i}")));
        repo.write("app/api.py", format!("def serve():\n    return 'v{i}'\n"));
        repo.write(
            "tests/test_history.py",
            format!("def test_version():\n    assert 'v' in 'v{i}'\n"),
        );
        repo.commit_as(&format!("Release v{i}"), "Alice", "alice@example.com", days);
    }
    repo.index();
    repo
}

fn review_json(repo: &TestRepo, args: &[&str]) -> Value {
    let mut all = vec!["review", "--json"];
    all.extend_from_slice(args);
    serde_json::from_str(&repo.cairn_ok(&all)).unwrap()
}

fn field(values: &Value, key: &str) -> Vec<String> {
    values
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v[key].as_str().unwrap().to_string())
        .collect()
}

/// The list lines of a Markdown section, up to the next heading.
fn section<'a>(text: &'a str, heading: &str) -> Vec<&'a str> {
    text.lines()
        .skip_while(|l| !l.starts_with(heading))
        .skip(1)
        .take_while(|l| !l.starts_with("## "))
        .filter(|l| l.starts_with("- "))
        .collect()
}

#[test]
fn tests_to_run_are_ranked_by_evidence_and_say_why() {
    let repo = project();
    repo.write(
        "app/core.py",
        core("v4").replace("return level + 1", "return level + 2"),
    );
    let report = review_json(&repo, &[]);
    let tests = &report["tests_to_run"];
    // Most likely first, by the measured confidences: a test that calls what changed, then
    // one that changed with core.py in every commit but neither calls nor names it, then one
    // that only names it, then one only near it.
    assert_eq!(
        field(tests, "id"),
        [
            "tests/test_calls.py",
            "tests/test_history.py",
            "tests/test_names.py",
            "tests/test_near.py",
        ],
        "{tests:#}"
    );
    assert_eq!(
        field(tests, "how"),
        ["calls", "changed_with", "names", "near"]
    );
    let likely: Vec<f64> = tests
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["confidence"].as_f64().unwrap())
        .collect();
    assert!(
        likely.windows(2).all(|w| w[0] > w[1]) && likely[3] > 0.0,
        "{likely:?}"
    );
    // None is likely enough to be run first: the list is not split.
    assert!(
        tests
            .as_array()
            .unwrap()
            .iter()
            .all(|t| t.get("first").is_none())
    );
    let why = field(tests, "why");
    assert!(why[0].starts_with("calls configure (L5)"), "{why:?}");
    assert_eq!(why[1], "changed with core.py in 4 of 4 commits");
    assert_eq!(why[2], "names configure (L6)");
    assert!(
        why[3].starts_with("near configure in the graph ("),
        "{why:?}"
    );

    // Fixtures that call or name the change are listed apart, never as tests to run; a
    // helper that only uses other code of the file is not listed at all.
    let fixtures = field(&report["fixtures"], "id");
    assert_eq!(
        fixtures,
        ["tests/conftest.py", "tests/test_apps/demo/app.py"],
        "{:#}",
        report["fixtures"]
    );
    assert_eq!(field(&report["fixtures"], "how"), ["calls", "names"]);

    // The same in the Markdown: one line per test with its reason, fixtures in their section.
    let text = repo.cairn_ok(&["review"]);
    let listed = section(&text, "## Tests to run (4)");
    assert_eq!(listed.len(), 4, "{text}");
    assert_eq!(
        listed[1],
        format!(
            "- tests/test_history.py — changed with core.py in 4 of 4 commits · {:.0}% likely",
            likely[1] * 100.0
        ),
        "{text}"
    );
    assert!(!text.contains("Run these first"), "{text}");
    // Fixtures are no tests to run: no confidence.
    assert!(
        report["fixtures"]
            .as_array()
            .unwrap()
            .iter()
            .all(|f| f.get("confidence").is_none()),
        "{:#}",
        report["fixtures"]
    );
    assert!(
        listed
            .iter()
            .all(|l| !l.contains("conftest") && !l.contains("test_apps")),
        "{text}"
    );
    let fixtures = section(&text, "## Fixtures touched (2)");
    assert!(
        fixtures[0].starts_with("- tests/conftest.py — calls configure (L5)"),
        "{text}"
    );
    // The source file that changes with core.py, named in the history first; the files of
    // the first commit (thirteen at once) follow, far weaker.
    let history = section(&text, "## History");
    assert!(
        history[0].starts_with(
            "- not in this diff, usually changed with app/core.py: app/api.py (4 of 4 commits), app/__init__.py (1 of 4), app/util.py (1 of 4)"
        ),
        "{text}"
    );
    let partners = &report["usually_changes_with"];
    assert_eq!(
        field(partners, "path"),
        ["app/api.py", "app/__init__.py", "app/util.py"]
    );
    assert_eq!(partners[0]["reason"], "history");
    let weight = |i: usize| partners[i]["weight"].as_f64().unwrap();
    assert!(weight(0) > 0.9 && weight(1) < 0.1, "{partners}");
}

/// A project that tests by feature names a test for the symbol, not the file: the test of
/// that name is listed for a change to the symbol, one named for a leading word of it is not.
#[test]
fn a_test_named_for_a_changed_symbol_is_listed() {
    let repo = TestRepo::new();
    let schemas = |body: &str| {
        format!(
            "class ZodCatch:\n    def run(self, value):\n        return {body}\n\n\n\
             class ZodString:\n    def run(self, value):\n        return str(value)\n"
        )
    };
    repo.write("lib/schemas.py", schemas("value"));
    for name in ["catch", "zod", "string"] {
        repo.write(
            &format!("tests/test_{name}.py"),
            format!("def test_{name}():\n    assert '{name}'\n"),
        );
    }
    repo.commit("schemas and their tests");
    repo.index();
    repo.write("lib/schemas.py", schemas("value or None"));
    let report = review_json(&repo, &[]);
    let tests = field(&report["tests_to_run"], "id");
    assert_eq!(
        tests,
        ["tests/test_catch.py"],
        "{:#}",
        report["tests_to_run"]
    );
    assert_eq!(report["tests_to_run"][0]["how"], "named_for");
    assert_eq!(report["tests_to_run"][0]["why"], "named for ZodCatch");
}

#[test]
fn near_only_tests_are_cut_short_when_stronger_evidence_exists() {
    let repo = project();
    // Five more tests reach `configure` only through `prepare`.
    for i in 0..5 {
        repo.write(
            &format!("tests/test_near_{i}.py"),
            "from app.util import prepare\n\n\ndef test_prepare_again():\n    assert prepare()\n",
        );
    }
    repo.commit("More tests through prepare");
    repo.index();
    repo.write(
        "app/core.py",
        core("v4").replace("return level + 1", "return level + 2"),
    );
    let report = review_json(&repo, &[]);
    let hows = field(&report["tests_to_run"], "how");
    assert_eq!(
        hows.iter().filter(|h| *h == "near").count(),
        2,
        "{:#}",
        report["tests_to_run"]
    );
    assert_eq!(hows[..3], ["calls", "changed_with", "names"]);
    let text = repo.cairn_ok(&["review"]);
    assert!(
        text.contains("_4 more test files with weaker evidence left out_"),
        "{text}"
    );
}

/// A test whose history agrees with its code evidence is among those to run first; the
/// others are also relevant.
#[test]
fn tests_the_history_and_the_code_agree_on_are_run_first() {
    let repo = project();
    // test_calls.py now changes with core.py too.
    for i in [5, 6] {
        repo.write("app/core.py", core(&format!("v{i}")));
        repo.write(
            "tests/test_calls.py",
            format!(
                "from app.core import configure\n\n\ndef test_configure():\n    assert configure({i}) == {}\n",
                i + 1
            ),
        );
        repo.commit(&format!("Release v{i}"));
    }
    repo.index();
    repo.write(
        "app/core.py",
        core("v6").replace("return level + 1", "return level + 2"),
    );
    let report = review_json(&repo, &[]);
    let tests = report["tests_to_run"].as_array().unwrap();
    assert_eq!(tests[0]["id"], "tests/test_calls.py", "{tests:#?}");
    assert_eq!(tests[0]["first"], true, "{tests:#?}");
    assert_eq!(
        tests[0]["evidence"],
        serde_json::json!(["calls", "names", "changed_with", "near"]),
        "{tests:#?}"
    );
    assert!(
        tests[1..].iter().all(|t| t.get("first").is_none()),
        "{tests:#?}"
    );
    let first = tests[0]["confidence"].as_f64().unwrap();
    assert!(
        tests[1..]
            .iter()
            .all(|t| t["confidence"].as_f64().unwrap() < first)
    );
    let text = repo.cairn_ok(&["review"]);
    assert!(
        text.contains("Run these first (1):\n- tests/test_calls.py — calls configure"),
        "{text}"
    );
    assert!(
        text.contains(&format!("Also relevant ({}):\n- ", tests.len() - 1)),
        "{text}"
    );
}

/// A module of `n` functions whose bodies change in every version.
fn module(prefix: &str, n: usize, version: &str) -> String {
    let mut text = format!("import os\n\nversion = '{version}'\n");
    for i in 0..n {
        text.push_str(&format!(
            "\n\ndef {prefix}_{i}(value):\n    first = os.path.join(str(value), '{version}-a')\n    second = os.path.join(first, '{version}-b')\n    third = os.path.join(second, '{version}-c')\n    return third\n"
        ));
    }
    text
}

#[test]
fn every_changed_file_and_symbol_keeps_its_line_under_a_tight_budget() {
    let repo = TestRepo::new();
    repo.write("pkg/__init__.py", "");
    repo.write("pkg/app.py", module("app", 4, "v1"));
    repo.write("pkg/ctx.py", module("ctx", 3, "v1"));
    repo.write("pkg/helpers.py", module("helper", 2, "v1"));
    repo.write("pkg/settings.py", "debug = False\nname = 'v1'\n");
    let mut calls = String::new();
    for (m, prefix, n) in [
        ("app", "app", 4),
        ("ctx", "ctx", 3),
        ("helpers", "helper", 2),
    ] {
        for i in 0..n {
            calls.push_str(&format!("from pkg.{m} import {prefix}_{i}\n"));
        }
    }
    calls.push_str("\n\ndef test_all():\n");
    for (prefix, n) in [("app", 4), ("ctx", 3), ("helper", 2)] {
        for i in 0..n {
            calls.push_str(&format!("    assert {prefix}_{i}(1)\n"));
        }
    }
    repo.write("tests/test_all.py", calls);
    repo.commit("The package");
    repo.index();
    // Three files, nine symbols with long diffs, and a module-level change in a fourth file.
    repo.write("pkg/app.py", module("app", 4, "v2"));
    repo.write("pkg/ctx.py", module("ctx", 3, "v2"));
    repo.write("pkg/helpers.py", module("helper", 2, "v2"));
    repo.write("pkg/settings.py", "debug = True\nname = 'v2'\n");

    for budget in ["1500", "900"] {
        let text = repo.cairn_ok(&["review", "--max-tokens", budget]);
        let report = review_json(&repo, &["--max-tokens", budget]);
        assert!(
            report["tokens"].as_u64().unwrap() <= budget.parse().unwrap(),
            "{}",
            report["tokens"]
        );
        for path in [
            "pkg/app.py",
            "pkg/ctx.py",
            "pkg/helpers.py",
            "pkg/settings.py",
        ] {
            assert!(
                text.contains(&format!("## {path} (modified")),
                "{budget}:\n{text}"
            );
        }
        for (prefix, n) in [("app", 4), ("ctx", 3), ("helper", 2)] {
            for i in 0..n {
                assert!(
                    text.contains(&format!("{prefix}_{i}` L")),
                    "{prefix}_{i} at {budget}:\n{text}"
                );
            }
        }
        // The module-level change of settings.py and of every other file, with its size.
        assert!(text.contains("- module level L1-2 (2 lines)"), "{text}");
        assert!(text.contains("- module level L3 (1 line)"), "{text}");
        assert!(
            !text.contains("```diff\n  ```"),
            "an empty diff block:\n{text}"
        );
        let tests = section(&text, "## Tests to run (1)");
        assert_eq!(tests.len(), 1, "{budget}:\n{text}");
        assert!(
            tests[0].starts_with("- tests/test_all.py — calls "),
            "{text}"
        );
    }
}

#[test]
fn expand_lists_tests_to_run_and_leaves_fixtures_out() {
    let repo = project();
    let expanded: Value =
        serde_json::from_str(&repo.cairn_ok(&["expand", "app/core.py::configure", "--json"]))
            .unwrap();
    let tests = field(&expanded["tests"], "id");
    assert!(
        tests.iter().any(|t| t.starts_with("tests/test_calls.py")),
        "{tests:?}"
    );
    assert!(
        tests
            .iter()
            .all(|t| !t.starts_with("tests/conftest.py") && !t.starts_with("tests/helpers.py")),
        "{tests:?}"
    );
}
