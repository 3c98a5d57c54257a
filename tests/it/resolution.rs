//! Call resolution audited on a fixture full of traps: the stored call edges are exactly the
//! ones its comments expect, so every rule is shown to work and none to guess.

use std::collections::BTreeSet;
use std::path::Path;

use crate::support::{TestRepo, fixture, stored_graph};

/// (file, line, what the comment expects) for every `# -> …` comment of the files under
/// `root/dir`: `what` picks the expected names out of the comment's text.
fn expectations(
    root: &Path,
    dir: &str,
    what: impl Fn(&str) -> Vec<String>,
) -> BTreeSet<(String, u32, String)> {
    let mut expected = BTreeSet::new();
    for entry in std::fs::read_dir(root.join(dir)).unwrap() {
        let entry = entry.unwrap();
        if entry.file_type().unwrap().is_dir() {
            continue;
        }
        let name = entry.file_name().into_string().unwrap();
        let path = format!("{dir}/{name}");
        let text = std::fs::read_to_string(root.join(&path)).unwrap();
        for (i, line) in text.lines().enumerate() {
            if let Some((_, comment)) = line.split_once("# -> ") {
                for name in what(comment) {
                    expected.insert((path.clone(), i as u32 + 1, name));
                }
            }
        }
    }
    expected
}

/// The fixture's folders whose files carry `# -> …` comments.
const DIRS: [&str; 3] = ["src/shop", "src/tests", "src/tests/api"];

/// A path with its `..` segments taken out (`src/tests/../shop/web.py` -> `src/shop/web.py`).
fn normal(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        if part == ".." {
            parts.pop();
        } else {
            parts.push(part);
        }
    }
    parts.join("/")
}

/// (caller's file, line, callee id) for every `# -> a.py::X, ../b.py::Y` comment under
/// `root`'s [`DIRS`]; callee files are named relative to the caller's directory.
fn expected_calls(root: &Path) -> BTreeSet<(String, u32, String)> {
    DIRS.iter()
        .flat_map(|dir| {
            expectations(root, dir, |comment| {
                let callees = comment
                    .split_once("; may call ")
                    .map_or(comment, |(c, _)| c);
                callees
                    .split(", ")
                    .filter(|c| *c != "nothing")
                    .map(|callee| normal(&format!("{dir}/{callee}")))
                    .collect()
            })
        })
        .collect()
}

/// (caller's file, line, name) for every `# -> …; may call a, b` comment under `root`'s
/// [`DIRS`].
fn expected_untyped_calls(root: &Path) -> BTreeSet<(String, u32, String)> {
    DIRS.iter()
        .flat_map(|dir| {
            expectations(root, dir, |comment| {
                comment
                    .split_once("; may call ")
                    .map(|(_, names)| names.split(", ").map(String::from).collect())
                    .unwrap_or_default()
            })
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn calls_resolve_exactly_where_the_type_is_known() {
    let repo = TestRepo::with_fixture("resolution");
    let summary = repo.index();
    let graph = stored_graph(repo.data_dir()).await;
    let actual: BTreeSet<(String, u32, String)> = graph
        .edges
        .iter()
        .filter(|e| e.kind.table() == "calls")
        .flat_map(|e| {
            let file = e.src.split("::").next().unwrap().to_string();
            e.lines
                .iter()
                .map(move |&line| (file.clone(), line, e.dst.to_string()))
        })
        .collect();
    let expected = expected_calls(&fixture("resolution"));
    let invented: Vec<_> = actual.difference(&expected).collect();
    let missing: Vec<_> = expected.difference(&actual).collect();
    assert!(
        invented.is_empty() && missing.is_empty(),
        "invented: {invented:#?}\nmissing: {missing:#?}"
    );
    // The traps are counted as unresolved, not dropped.
    let stats = &summary["stats"];
    assert!(
        stats["calls_unresolved"].as_u64().unwrap() >= 15,
        "{summary:#}"
    );
}

/// A call on a receiver nothing is known of is kept as a possible call of every method of its
/// name; one on a receiver known to be of another type (a `str`, a list, an instance of a
/// class without the method) is not. `expand` lists them apart from the callers, the one
/// whose receiver reads as the class first.
#[tokio::test(flavor = "multi_thread")]
async fn calls_on_untyped_receivers_are_possible_callers_and_no_more() {
    let repo = TestRepo::with_fixture("resolution");
    repo.index();
    let graph = stored_graph(repo.data_dir()).await;
    let actual: BTreeSet<(String, u32, String)> = graph
        .nodes
        .iter()
        .flat_map(|n| {
            n.untyped_calls.iter().flat_map(move |c| {
                c.lines
                    .iter()
                    .map(move |&line| (n.path.to_string(), line, c.name.to_string()))
            })
        })
        .collect();
    let expected = expected_untyped_calls(&fixture("resolution"));
    let invented: Vec<_> = actual.difference(&expected).collect();
    let missing: Vec<_> = expected.difference(&actual).collect();
    assert!(
        invented.is_empty() && missing.is_empty(),
        "invented: {invented:#?}\nmissing: {missing:#?}"
    );

    let expanded = repo.cairn_ok(&["expand", "src/shop/models.py::QuerySet.count", "--json"]);
    let report: serde_json::Value = serde_json::from_str(&expanded).unwrap();
    let possible: Vec<(&str, &str)> = report["possible_callers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["id"].as_str().unwrap(), p["call"].as_str().unwrap()))
        .collect();
    // The resolved callers stay callers; the possible ones are apart, best evidence first.
    let callers: Vec<&str> = report["callers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap())
        .collect();
    assert!(
        callers.contains(&"src/shop/flows.py::counters"),
        "{report:#}"
    );
    assert_eq!(
        possible[..2],
        [
            ("src/shop/flows.py::untyped_receivers", "qs.count()"),
            ("src/shop/flows.py::untyped_receivers", "filter().count()"),
        ],
        "{report:#}"
    );
    assert!(possible.contains(&("src/shop/flows.py::untyped_receivers", "rows.count()")));
    assert!(
        report["possible_callers"][0]["evidence"]
            .as_array()
            .unwrap()
            .contains(&serde_json::json!("receiver named like QuerySet")),
        "{report:#}"
    );
    assert!(
        report["possible_callers"][1]["evidence"][0] == "receiver from QuerySet.filter()",
        "{report:#}"
    );
    for (id, _) in &possible {
        assert!(
            !id.ends_with("Order.ship"),
            "a list's count is no caller: {report:#}"
        );
    }
    let text = repo.cairn_ok(&["expand", "src/shop/models.py::QuerySet.count"]);
    assert!(
        text.contains("## Possible callers, receiver type unknown (")
            && text.contains("`qs.count()` · receiver named like QuerySet"),
        "{text}"
    );
    // A class with no method of the name has none.
    let engine = repo.cairn_ok(&["expand", "src/shop/models.py::Engine", "--json"]);
    assert!(!engine.contains("possible_callers"), "{engine}");
}
