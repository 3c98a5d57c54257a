//! Call resolution audited on a fixture full of traps: the stored call edges are exactly the
//! ones its comments expect, so every rule is shown to work and none to guess.

use std::collections::BTreeSet;
use std::path::Path;

use crate::support::{TestRepo, fixture, stored_graph};

/// (caller's file, line, callee id) for every `# -> a.py::X, b.py::Y` comment under `root`;
/// callee files are named relative to the caller's directory.
fn expected_calls(root: &Path, dir: &str) -> BTreeSet<(String, u32, String)> {
    let mut expected = BTreeSet::new();
    for entry in std::fs::read_dir(root.join(dir)).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        let path = format!("{dir}/{name}");
        let text = std::fs::read_to_string(root.join(&path)).unwrap();
        for (i, line) in text.lines().enumerate() {
            let Some((_, callees)) = line.split_once("# -> ") else {
                continue;
            };
            for callee in callees.split(", ").filter(|c| *c != "nothing") {
                expected.insert((path.clone(), i as u32 + 1, format!("{dir}/{callee}")));
            }
        }
    }
    expected
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
    let expected = expected_calls(&fixture("resolution"), "src/shop");
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
