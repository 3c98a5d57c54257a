//! `review_diff`, `record_review` and `cairn rules` on real git repositories with several
//! authors and dated commits, through the real binary (CLI and MCP over stdio).

use std::process::Stdio;

use serde_json::{Value, json};

use crate::support::TestRepo;

/// `shop/models.py`: a class with three methods and forty untouched helpers after it.
fn models(version: &str) -> String {
    let mut text = format!(
        "from shop.pricing import discount


class Order:
    def __init__(self):
        self.items = []

    def add_item(self, price):
        self.items.append(price)
        return len(self.items)

    def total(self):
        subtotal = sum(self.items)
        return discount(subtotal)

    def cancel(self):
        self.items = []

# {version}
"
    );
    for i in 0..40 {
        text.push_str(&format!("\n\ndef helper_{i}(x):\n    return x + {i}\n"));
    }
    text
}

fn views(version: &str) -> String {
    format!(
        "from shop.models import Order


def checkout():
    order = Order()
    order.add_item(10)
    return order.total()

# {version}
"
    )
}

/// A shop with history: Alice wrote it long ago, Bob (under two emails joined by the
/// mailmap) fixed `models.py` three times lately, always with `views.py` but once; Carol
/// wrote docs.
fn shop() -> TestRepo {
    let repo = TestRepo::new();
    repo.write(".mailmap", "Bob <bob@example.com> <bob@old.example.com>\n");
    repo.write("shop/__init__.py", "");
    repo.write("shop/models.py", models("v1"));
    repo.write("shop/views.py", views("v1"));
    repo.write(
        "shop/pricing.py",
        "def discount(amount):\n    return amount\n",
    );
    repo.write("shop/untested.py", "def lonely():\n    return 1\n");
    repo.write("shop/obsolete.py", "def old_thing():\n    return 0\n");
    repo.write(
        "tests/test_models.py",
        "from shop.models import Order


def test_total():
    order = Order()
    assert order.total() == 0
",
    );
    repo.commit_as("Add the shop", "Alice", "alice@example.com", 400);
    repo.write("shop/models.py", models("v2"));
    repo.write("shop/views.py", views("v2"));
    repo.commit_as("Tweak models and views", "Alice", "alice@example.com", 300);
    repo.write("shop/models.py", models("v3"));
    repo.write("shop/views.py", views("v3"));
    repo.commit_as("Fix total rounding bug", "Bob", "bob@old.example.com", 20);
    repo.write("shop/models.py", models("v4"));
    repo.commit_as("Fix cancel crash", "Bob", "bob@example.com", 10);
    repo.write("shop/models.py", models("v5"));
    repo.write("shop/views.py", views("v5"));
    repo.commit_as("Fix regression in add_item", "Bob", "bob@example.com", 5);
    repo.write("README.md", "# shop\n");
    repo.commit_as("Add docs", "Carol", "carol@example.com", 3);
    repo.write("README.md", "# shop\n\nSells things.\n");
    repo.commit_as("Add more docs", "Carol", "carol@example.com", 2);
    repo.write("NOTES.md", "notes\n");
    repo.commit_as("Add notes", "Carol", "carol@example.com", 1);
    let report = repo.index();
    assert_eq!(report["history_commits"], 8, "{report}");
    assert_eq!(report["history_new"], 8);
    repo
}

fn review_json(repo: &TestRepo, args: &[&str]) -> Value {
    let mut all = vec!["review", "--json"];
    all.extend_from_slice(args);
    serde_json::from_str(&repo.cairn_ok(&all)).unwrap()
}

fn ids(values: &Value, key: &str) -> Vec<String> {
    values
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v[key].as_str().unwrap().to_string())
        .collect()
}

fn symbols(report: &Value) -> Vec<(String, String)> {
    report["files"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|f| f["symbols"].as_array().unwrap().iter())
        .map(|s| {
            (
                s["id"].as_str().unwrap().to_string(),
                s["change"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn a_three_line_change_in_a_large_file_reports_that_symbol_only() {
    let repo = shop();
    let changed = models("v5").replace(
        "        subtotal = sum(self.items)\n",
        "        subtotal = sum(self.items)\n        if subtotal < 0:\n            raise ValueError(subtotal)\n",
    );
    repo.write("shop/models.py", changed);

    let report = review_json(&repo, &[]);
    assert_eq!(report["compared"], "HEAD → working tree");
    assert_eq!(
        symbols(&report),
        vec![(
            "shop/models.py::Order.total".to_string(),
            "modified".to_string()
        )]
    );
    let symbol = &report["files"][0]["symbols"][0];
    assert_eq!(symbol["added_lines"], json!([14, 15]));
    // The resolved caller, with its call-site line.
    let callers = symbol["callers"].as_array().unwrap();
    let checkout = callers
        .iter()
        .find(|c| c["id"] == "shop/views.py::checkout")
        .expect("checkout calls Order.total");
    assert_eq!(checkout["lines"], json!([7]));
    // The test that calls it, and no untouched helper flagged as untested.
    let tests = ids(&report["tests_to_run"], "id");
    assert!(
        tests.contains(&"tests/test_models.py".to_string()),
        "{tests:?}"
    );
    assert_eq!(report["untested"], json!([]));
    // History: Bob (two emails, one person) knows the file; it attracts fixes; views.py
    // usually changes with it.
    let experts = &report["experts"][0];
    assert_eq!(experts["path"], "shop/models.py");
    assert_eq!(experts["experts"][0]["author"], "bob@example.com");
    assert_eq!(experts["experts"][0]["commits"], 3);
    assert_eq!(experts["experts"][1]["author"], "alice@example.com");
    let risks = report["risks"].as_array().unwrap();
    assert!(
        risks
            .iter()
            .any(|r| r["kind"] == "fix_prone" && r["subject"] == "shop/models.py"),
        "{risks:?}"
    );
    let partners = report["usually_changes_with"].as_array().unwrap();
    assert_eq!(partners[0]["path"], "shop/views.py");
    assert_eq!(partners[0]["support"], 4);
    assert!(ids(&report["related_commits"], "summary").contains(&"Fix cancel crash".to_string()));
    // The author comes from git's configuration.
    assert_eq!(report["author"]["developer"], "dev@example.com");
    assert!(
        report["tokens"].as_u64().unwrap() <= 1_500,
        "{}",
        report["tokens"]
    );

    let text = repo.cairn_ok(&["review"]);
    assert!(text.contains("+L14         if subtotal < 0:"), "{text}");
    assert!(text.contains("shop/views.py::checkout L7"), "{text}");
    assert!(
        !text.contains("helper_"),
        "untouched helpers stay out:\n{text}"
    );
    assert!(
        text.contains(
            "- not in this diff, usually changed with shop/models.py: shop/views.py (4 of 5 commits)"
        ),
        "{text}"
    );
}

#[test]
fn files_using_what_a_change_removes_or_re_signs_are_named_as_missing() {
    let repo = TestRepo::new();
    // A call of `save` on an untyped parameter whose name does not read as a store (its own
    // commit: no history joins it to the store).
    repo.write("app/notes.py", "def keep(note):\n    return note.save()\n");
    repo.commit("Add notes");
    repo.write(
        "app/base.py",
        "class Store:\n    def save(self, item):\n        return item\n\n\ndef load(key):\n    return key\n\n\ndef size(key):\n    return len(key)\n",
    );
    repo.write(
        "app/disk.py",
        "from app.base import Store\n\n\nclass DiskStore(Store):\n    def save(self, item):\n        return str(item)\n",
    );
    repo.write(
        "app/api.py",
        "from app.base import load\n\n\ndef fetch(key):\n    return load(key)\n",
    );
    repo.write(
        "app/cli.py",
        "from app.base import Store, size\n\n\ndef run():\n    store = Store()\n    return store.save(size('k'))\n",
    );
    // A call of `save` on an untyped parameter whose name reads as a store.
    repo.write(
        "app/jobs.py",
        "def flush(store):\n    return store.save(1)\n",
    );
    repo.write(
        "tests/test_base.py",
        "from app.base import load\n\n\ndef test_load():\n    assert load(1) == 1\n",
    );
    repo.commit("Add the store");
    repo.index();
    // `save` takes a new keyword, `load` goes, `size` changes inside only.
    repo.write(
        "app/base.py",
        "class Store:\n    def save(self, item, *, sync=False):\n        return item\n\n\ndef size(key):\n    return len(key) + 1\n",
    );

    let report = review_json(&repo, &[]);
    let partners: Vec<(String, String, String, String)> = report["usually_changes_with"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let field = |k: &str| p[k].as_str().unwrap_or_default().to_string();
            (
                field("path"),
                field("how"),
                field("symbol"),
                field("change"),
            )
        })
        .collect();
    let expected = |path: &str, how: &str, symbol: &str, change: &str| {
        (path.into(), how.into(), symbol.into(), change.into())
    };
    // Each file once, by its first reason; the test calling `load` is among the tests to run,
    // and `size`'s caller has nothing to change.
    assert_eq!(
        partners,
        [
            expected("app/cli.py", "calls", "Store.save", "signature"),
            expected("app/disk.py", "overrides", "Store.save", "signature"),
            expected("app/jobs.py", "may call", "Store.save", "signature"),
            expected("app/api.py", "calls", "load", "removed"),
        ],
        "{report}"
    );
    assert!(
        report["usually_changes_with"]
            .as_array()
            .unwrap()
            .iter()
            .all(|p| p["reason"] == "uses" && p["with"] == "app/base.py"),
        "{report}"
    );
    let text = repo.cairn_ok(&["review"]);
    for line in [
        "- not in this diff, uses what this change re-signs: app/cli.py (calls Store.save), app/disk.py (overrides Store.save), app/jobs.py (may call Store.save)",
        "- not in this diff, uses what this change removes: app/api.py (calls load)",
    ] {
        assert!(text.contains(line), "{line}\n{text}");
    }

    // Once the callers follow in the same change, nothing is missing.
    repo.write("app/api.py", "def fetch(key):\n    return key\n");
    repo.write(
        "app/jobs.py",
        "def flush(store):\n    return store.save(1, sync=True)\n",
    );
    repo.write(
        "app/cli.py",
        "from app.base import Store, size\n\n\ndef run():\n    store = Store()\n    return store.save(size('k'), sync=True)\n",
    );
    repo.write(
        "app/disk.py",
        "from app.base import Store\n\n\nclass DiskStore(Store):\n    def save(self, item, *, sync=False):\n        return str(item)\n",
    );
    let report = review_json(&repo, &[]);
    assert_eq!(report["usually_changes_with"], json!([]), "{report}");
}

#[test]
fn files_a_change_needs_by_contract_or_by_a_member_they_lack_are_named_as_missing() {
    let repo = TestRepo::new();
    // Each file in a commit of its own: no history joins them to one another.
    for (path, text) in [
        ("src/IClock.cs", "interface IClock\n{\n    long Now();\n}\n"),
        (
            "src/SystemClock.cs",
            "class SystemClock : IClock\n{\n    public long Now() { return 0; }\n}\n",
        ),
        (
            "src/Limits.cs",
            "static class Limits\n{\n    public const int Max = 3;\n}\n",
        ),
        (
            "src/Service.cs",
            "class Service\n{\n    int Run()\n    {\n        return 0;\n    }\n}\n",
        ),
    ] {
        repo.write(path, text);
        repo.commit(&format!("Add {path}"));
    }
    repo.index();
    let partners = |report: &Value| -> Vec<(String, String, String)> {
        report["usually_changes_with"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| {
                let field = |k: &str| p[k].as_str().unwrap_or_default().to_string();
                (
                    field("path"),
                    field("reason"),
                    format!("{} {}", field("how"), field("symbol")),
                )
            })
            .collect()
    };

    // The service starts using the clock and a limit nobody declared yet.
    repo.write(
        "src/Service.cs",
        "class Service\n{\n    int Run()\n    {\n        var clock = new SystemClock();\n        return Limits.Min + Limits.Max;\n    }\n}\n",
    );
    let report = review_json(&repo, &[]);
    assert_eq!(
        partners(&report),
        [
            (
                "src/Limits.cs".into(),
                "tied".into(),
                "lacks Limits.Min".into()
            ),
            (
                "src/SystemClock.cs".into(),
                "tied".into(),
                "starts using SystemClock".into()
            ),
            (
                "src/IClock.cs".into(),
                "tied".into(),
                "interface of SystemClock".into()
            ),
        ],
        "{report}"
    );
    let text = repo.cairn_ok(&["review"]);
    for line in [
        "- not in this diff, lacks what this change uses: src/Limits.cs (Limits.Min)",
        "- not in this diff, bound to it by a contract: src/SystemClock.cs (starts using SystemClock), src/IClock.cs (interface of SystemClock)",
    ] {
        assert!(text.contains(line), "{line}\n{text}");
    }

    // A method added to the interface: its implementation must follow.
    repo.write(
        "src/Service.cs",
        "class Service\n{\n    int Run()\n    {\n        return 0;\n    }\n}\n",
    );
    repo.write(
        "src/IClock.cs",
        "interface IClock\n{\n    long Now();\n    long Today();\n}\n",
    );
    let report = review_json(&repo, &[]);
    assert_eq!(
        partners(&report),
        [(
            "src/SystemClock.cs".into(),
            "tied".into(),
            "implements IClock".into()
        )],
        "{report}"
    );
}

#[test]
fn unreached_changes_are_flagged_with_the_reason() {
    let repo = shop();
    repo.write("shop/untested.py", "def lonely():\n    return 2\n");
    let report = review_json(&repo, &[]);
    let untested = report["untested"].as_array().unwrap();
    assert_eq!(untested.len(), 1, "{untested:?}");
    assert_eq!(untested[0]["id"], "shop/untested.py::lonely");
    assert!(untested[0]["reason"].as_str().unwrap().contains("no test"));
}

#[test]
fn revisions_with_a_rename_a_deletion_and_a_new_function() {
    let repo = shop();
    repo.git(&["mv", "shop/untested.py", "shop/lonely.py"]);
    std::fs::remove_file(repo.path().join("shop/obsolete.py")).unwrap();
    repo.write(
        "shop/views.py",
        views("v5") + "\n\ndef refund(order):\n    order.cancel()\n    return 0\n",
    );
    repo.commit_as("Refund orders", "Dave", "dave@example.com", 0);

    let report = review_json(&repo, &["--base", "HEAD~1", "--head", "HEAD"]);
    assert_eq!(report["compared"], "HEAD~1..HEAD");
    let files: Vec<(String, String)> = report["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["path"].as_str().unwrap().to_string(),
                f["change"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        files,
        vec![
            ("shop/lonely.py".to_string(), "renamed".to_string()),
            ("shop/obsolete.py".to_string(), "deleted".to_string()),
            ("shop/views.py".to_string(), "modified".to_string()),
        ]
    );
    assert_eq!(report["files"][0]["old_path"], "shop/untested.py");
    assert_eq!(
        symbols(&report),
        vec![
            (
                "shop/obsolete.py::old_thing".to_string(),
                "removed".to_string()
            ),
            ("shop/views.py::refund".to_string(), "added".to_string()),
        ]
    );
    // The author of the head commit, from git.
    assert_eq!(report["author"]["developer"], "dave@example.com");
    assert_eq!(report["author"]["from"], "git");

    // `--head` alone reviews that one commit.
    let one = review_json(&repo, &["--head", "HEAD"]);
    assert_eq!(one["compared"], "HEAD~1..HEAD");
    assert_eq!(one["files"].as_array().unwrap().len(), 3);

    let unknown = repo.cairn(&["review", "--base", "no-such-branch"]);
    assert!(!unknown.status.success());
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("unknown revision `no-such-branch`"));
}

fn review_stdin(repo: &TestRepo, diff: &str, extra: &[&str]) -> std::process::Output {
    let mut args = vec!["review", "--diff", "-"];
    args.extend_from_slice(extra);
    repo.cairn_with_stdin(&args, diff.as_bytes())
}

#[test]
fn pasted_diffs_including_files_cairn_never_indexed() {
    let repo = shop();
    // A git diff of the working tree, pasted: mapped exactly as the working tree review is.
    repo.write(
        "shop/models.py",
        models("v5").replace(
            "        self.items = []\n\n#",
            "        self.items = None\n\n#",
        ),
    );
    let pasted = String::from_utf8(repo.git(&["diff"]).stdout).unwrap();
    let output = review_stdin(&repo, &pasted, &["--json", "--author", "Bob@Example.com"]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["compared"], "pasted diff");
    assert_eq!(
        symbols(&report),
        vec![(
            "shop/models.py::Order.cancel".to_string(),
            "modified".to_string()
        )]
    );
    assert_eq!(report["author"]["developer"], "bob@example.com");
    assert_eq!(report["author"]["from"], "given");

    // A new Python file and a shell script: neither was ever indexed.
    let diff = "diff --git a/shop/extra.py b/shop/extra.py
new file mode 100644
--- /dev/null
+++ b/shop/extra.py
@@ -0,0 +1,5 @@
+import subprocess
+
+
+def deploy():
+    subprocess.run([\"make\", \"deploy\"])
diff --git a/scripts/tool.sh b/scripts/tool.sh
--- a/scripts/tool.sh
+++ b/scripts/tool.sh
@@ -1,2 +1,2 @@
 #!/bin/sh
-echo old
+echo new
";
    let output = review_stdin(&repo, diff, &["--json"]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    let extra = &report["files"][0];
    assert_eq!(extra["path"], "shop/extra.py");
    assert_eq!(extra["indexed"], false);
    assert_eq!(extra["symbols"][0]["id"], "shop/extra.py::deploy");
    assert_eq!(extra["symbols"][0]["change"], "added");
    assert_eq!(extra["symbols"][0]["effects_added"], json!(["subprocess"]));
    let script = &report["files"][1];
    assert_eq!(script["path"], "scripts/tool.sh");
    assert_eq!(script["module_lines"], json!([2]));
    assert!(
        script["notes"][0]
            .as_str()
            .unwrap()
            .contains("not a language cairn parses")
    );
    let untested = ids(&report["untested"], "id");
    assert_eq!(untested, vec!["shop/extra.py::deploy".to_string()]);
}

#[test]
fn malformed_and_escaping_diffs_are_refused_clearly() {
    let repo = shop();
    for (diff, expected) in [
        ("", "the diff is empty"),
        (
            "just some text\nwith no headers\n",
            "malformed diff at line",
        ),
        (
            "--- a/x.py\n+++ b/x.py\n@@ -1,3 +1,3 @@\n-a\n+b\n",
            "malformed diff at line",
        ),
        (
            "--- a/../../etc/passwd\n+++ b/../../etc/passwd\n@@ -1 +1 @@\n-a\n+b\n",
            "outside the repository",
        ),
    ] {
        let output = review_stdin(&repo, diff, &[]);
        assert!(!output.status.success(), "{diff:?} was accepted");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(expected), "{diff:?}: {stderr}");
    }
}

/// The `naming` category's statistics in a list of rule statistics.
fn naming_rule(rules: &Value) -> Value {
    crate::support::rule_of(rules, "naming")
}

fn record(repo: &TestRepo, review: &Value) -> Value {
    let path = repo.data_dir().join(format!(
        "review-{}.json",
        review["review_id"].as_str().unwrap_or("x")
    ));
    std::fs::write(&path, review.to_string()).unwrap();
    serde_json::from_str(&repo.cairn_ok(&["record-review", "--json", path.to_str().unwrap()]))
        .unwrap()
}

fn pr7() -> Value {
    json!({
        "verdict": "request_changes",
        "author": "bob@example.com",
        "reviewer": "alice@example.com",
        "review_id": "PR-7",
        "findings": [
            {"category": "naming", "file": "shop/models.py", "line": 12,
             "message": "rename total to compute_total", "disposition": "rejected",
             "reason": "total is the domain term here"},
            {"category": "Naming", "file": "shop/views.py", "line": 4,
             "message": "checkout should be checkout_order", "disposition": "rejected",
             "reason": "short view names are the convention"},
            {"category": "naming", "file": "shop/models.py", "line": 9,
             "message": "items should be line_items", "disposition": "implemented"},
            {"category": "error handling", "file": "shop/models.py", "line": 13,
             "message": "total() ignores None prices", "disposition": "deferred"}
        ],
        "learnings": [
            {"type": "project_pattern",
             "content": "Prices are integers in cents in shop/models.py; never floats.",
             "paths": ["shop/models.py"]}
        ]
    })
}

#[test]
fn recorded_reviews_count_once_and_feed_the_next_briefing() {
    let repo = shop();
    let first = record(&repo, &pr7());
    assert_eq!(first["repeated"], false);
    assert_eq!(first["outcome"]["event"], "ADD");
    assert_eq!(first["rejections"].as_array().unwrap().len(), 2);
    assert_eq!(first["learnings"][0]["event"], "ADD");
    let naming = naming_rule(&first["rules"]);
    assert_eq!(
        (naming["flagged"].as_u64(), naming["rejected"].as_u64()),
        (Some(3), Some(2))
    );
    assert_eq!(first["author"]["reviews"], 1);

    // The same review again: nothing is counted twice, no memory is duplicated.
    let again = record(&repo, &pr7());
    assert_eq!(again["repeated"], true);
    assert_eq!(again["learnings"][0]["event"], "NONE");
    assert_eq!(again["author"]["reviews"], 1);
    let rules: Value = serde_json::from_str(&repo.cairn_ok(&["rules", "--json"])).unwrap();
    let naming = naming_rule(&rules);
    assert_eq!(naming["flagged"], 3);
    assert_eq!(naming["rejected"], 2);
    assert_eq!(naming["memories"].as_array().unwrap().len(), 2);
    let listed: Value =
        serde_json::from_str(&repo.cairn_ok(&["memory", "list", "--json"])).unwrap();
    let outcomes = listed
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["type"] == "review_outcome")
        .count();
    assert_eq!(outcomes, 1);
    let report = repo.cairn_ok(&["rules"]);
    assert!(
        report.contains("naming") && report.contains("← high"),
        "{report}"
    );

    // The next briefing on these files brings the rule, the rejections, the pattern and
    // the author's record.
    repo.write(
        "shop/models.py",
        models("v5").replace("return discount(subtotal)", "return discount(subtotal) + 0"),
    );
    let text = repo.cairn_ok(&[
        "review",
        "--author",
        "bob@example.com",
        "--max-tokens",
        "3000",
    ]);
    assert!(
        text.contains("rule `naming`: 2 of 3 findings rejected"),
        "{text}"
    );
    assert!(text.contains("[rejection_pattern]"), "{text}");
    assert!(text.contains("total is the domain term here"), "{text}");
    assert!(text.contains("Prices are integers in cents"), "{text}");
    assert!(text.contains("1 reviewed changes"), "{text}");

    // Guidelines updated: the category's rejection patterns are addressed.
    let out = repo.cairn_ok(&["rules", "--addressed", "naming"]);
    assert!(out.starts_with("2 rejection patterns"), "{out}");
    let rules: Value = serde_json::from_str(&repo.cairn_ok(&["rules", "--json"])).unwrap();
    let naming = naming_rule(&rules);
    assert!(naming.get("memories").is_none(), "{naming}");

    // Changed findings under the same id replace the record.
    let mut changed = pr7();
    changed["findings"][0]["disposition"] = json!("implemented");
    let replaced = record(&repo, &changed);
    assert_eq!(replaced["repeated"], false);
    assert_eq!(replaced["outcome"]["event"], "SUPERSEDE");
    let rules: Value = serde_json::from_str(&repo.cairn_ok(&["rules", "--json"])).unwrap();
    let naming = naming_rule(&rules);
    assert_eq!(
        (naming["flagged"].as_u64(), naming["rejected"].as_u64()),
        (Some(3), Some(1))
    );
}

#[test]
fn bad_review_outcomes_are_refused_before_anything_is_stored() {
    let repo = shop();
    for (patch, expected) in [
        (json!({"verdict": "maybe"}), "unknown verdict"),
        (json!({"author": "not a handle!"}), "invalid developer"),
        (
            json!({"findings": [{"category": "", "message": "m", "disposition": "rejected"}]}),
            "invalid finding category",
        ),
        (
            json!({"findings": [{"category": "x", "file": "../etc/passwd", "message": "m", "disposition": "rejected"}]}),
            "repository-relative",
        ),
        (
            json!({"learnings": [{"type": "rule_effectiveness", "content": "always right"}]}),
            "computed from review outcomes",
        ),
    ] {
        let mut review = pr7();
        for (k, v) in patch.as_object().unwrap() {
            review[k] = v.clone();
        }
        let path = repo.data_dir().join("bad.json");
        std::fs::write(&path, review.to_string()).unwrap();
        let output = repo.cairn(&["record-review", path.to_str().unwrap()]);
        assert!(!output.status.success(), "{patch} was accepted");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(expected), "{patch}: {stderr}");
    }
    let rules = repo.cairn_ok(&["rules"]);
    assert!(rules.contains("no review outcomes recorded yet"), "{rules}");
    let listed = repo.cairn_ok(&["memory", "list", "--json"]);
    assert_eq!(listed.trim(), "[]", "nothing was stored");

    // Secrets in findings never reach the store.
    let mut review = pr7();
    review["findings"][0]["reason"] = json!("the key AKIAIOSFODNN7EXAMPLE is a test key");
    let recorded = record(&repo, &review);
    assert_eq!(recorded["redacted"], json!(["aws-access-key"]));
    let shown = repo.cairn_ok(&["memory", "list", "--json"]);
    assert!(!shown.contains("AKIAIOSFODNN7EXAMPLE"));
}

#[test]
fn concurrent_record_reviews_both_land() {
    let repo = shop();
    let mut children = Vec::new();
    for id in ["PR-1", "PR-2", "PR-3"] {
        let mut review = pr7();
        review["review_id"] = json!(id);
        let path = repo.data_dir().join(format!("{id}.json"));
        std::fs::write(&path, review.to_string()).unwrap();
        children.push(
            repo.cairn_command(repo.data_dir())
                .args(["record-review", path.to_str().unwrap()])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap(),
        );
    }
    for child in children {
        let output = child.wait_with_output().unwrap();
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    let rules: Value = serde_json::from_str(&repo.cairn_ok(&["rules", "--json"])).unwrap();
    let naming = naming_rule(&rules);
    assert_eq!(
        naming["flagged"], 9,
        "three reviews of three naming findings"
    );
    assert_eq!(naming["rejected"], 6);
}

#[test]
fn history_is_mined_incrementally_as_head_moves() {
    let repo = shop();
    let again = repo.index();
    assert_eq!(again["history_new"], 0, "{again}");
    repo.write(
        "shop/pricing.py",
        "def discount(amount):\n    return amount - 1\n",
    );
    repo.commit_as("Fix discount off by one", "Bob", "bob@example.com", 1);
    let after = repo.index();
    assert_eq!(after["history_commits"], 9);
    assert_eq!(after["history_new"], 1);
    // Commits made after the last index run are read by the review itself.
    repo.write(
        "shop/pricing.py",
        "def discount(amount):\n    return amount - 2\n",
    );
    repo.commit_as("Fix discount again", "Carol", "carol@example.com", 0);
    repo.write(
        "shop/pricing.py",
        "def discount(amount):\n    return amount - 3\n",
    );
    let report = review_json(&repo, &[]);
    let commits = ids(&report["related_commits"], "summary");
    assert_eq!(commits[0], "Fix discount again", "{commits:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn review_tools_and_prompt_over_stdio() {
    use crate::mcp::{call, connect, text};
    let repo = shop();
    repo.write(
        "shop/views.py",
        views("v5").replace("order.add_item(10)", "order.add_item(20)"),
    );
    let client = connect(&repo).await;

    let briefing = call(&client, "review_diff", json!({})).await;
    assert_ne!(briefing.is_error, Some(true), "{}", text(&briefing));
    let structured = briefing.structured_content.clone().unwrap();
    assert_eq!(
        symbols(&structured),
        vec![(
            "shop/views.py::checkout".to_string(),
            "modified".to_string()
        )]
    );
    assert!(text(&briefing).contains("## shop/views.py (modified, +1 −1)"));

    let bad = call(&client, "review_diff", json!({"diff": "not a diff"})).await;
    assert_eq!(bad.is_error, Some(true));
    assert!(text(&bad).contains("malformed diff"), "{}", text(&bad));

    let recorded = call(&client, "record_review", pr7()).await;
    assert_ne!(recorded.is_error, Some(true), "{}", text(&recorded));
    assert!(
        text(&recorded).contains("review PR-7 recorded"),
        "{}",
        text(&recorded)
    );
    let repeat = call(&client, "record_review", pr7()).await;
    assert!(
        text(&repeat).contains("already recorded"),
        "{}",
        text(&repeat)
    );

    let prompts = client.list_all_prompts().await.unwrap();
    assert!(prompts.iter().any(|p| p.name == "review"));
    let prompt = client
        .get_prompt(
            rmcp::model::GetPromptRequestParams::new("review").with_arguments(
                json!({"author": "bob@example.com"})
                    .as_object()
                    .unwrap()
                    .clone(),
            ),
        )
        .await
        .unwrap();
    let rendered = serde_json::to_string(&prompt).unwrap();
    assert!(rendered.contains("record_review") && rendered.contains("@bob@example.com"));
    client.cancel().await.unwrap();
}
