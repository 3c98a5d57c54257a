//! Every grammar's fixtures: each `grammars/<lang>/tests/<case>/` is a small source tree with an
//! `expected.toml`; the tree is committed to a repository, indexed by the binary, and the stored
//! graph must hold exactly the symbols, imports and calls the file lists, leave its traps
//! unbound and count the unresolved calls it says.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::support::{TestRepo, stored_graph};

/// What indexing a fixture tree must give; every list is exact.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Expected {
    /// Every symbol, as `id kind` (`pkg/a.go::Server.Handle method`).
    symbols: Vec<String>,
    /// Every import into the tree, as `importer -> imported` (files or symbols).
    imports: Vec<String>,
    /// Every resolved call, as `caller -> callee`.
    calls: Vec<String>,
    /// Edges that must not be made: a same name elsewhere (also absent from `calls`).
    #[serde(default)]
    traps: Vec<String>,
    /// How many calls into project code stay unresolved.
    unresolved: u64,
    /// If given, every node with side effects, as `id category, category`.
    effects: Option<Vec<String>>,
    /// If given, every symbol that writes state outside a constructor, as `id count`.
    mutations: Option<Vec<String>>,
}

fn cases() -> Vec<PathBuf> {
    let grammars = Path::new(env!("CARGO_MANIFEST_DIR")).join("grammars");
    let mut cases = Vec::new();
    for language in std::fs::read_dir(&grammars).unwrap() {
        let tests = language.unwrap().path().join("tests");
        let Ok(entries) = std::fs::read_dir(&tests) else {
            continue;
        };
        for case in entries {
            let case = case.unwrap().path();
            if case.is_dir() {
                cases.push(case);
            }
        }
    }
    cases.sort();
    cases
}

fn set(lines: &[String]) -> BTreeSet<String> {
    lines
        .iter()
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect()
}

/// The differences between what a list expects and what the graph holds, readable.
fn compare(
    case: &str,
    what: &str,
    expected: &BTreeSet<String>,
    actual: &BTreeSet<String>,
) -> Vec<String> {
    let mut problems = Vec::new();
    for missing in expected.difference(actual) {
        problems.push(format!("{case}: {what} missing: {missing}"));
    }
    for extra in actual.difference(expected) {
        problems.push(format!("{case}: {what} not expected: {extra}"));
    }
    problems
}

async fn check(case: &Path) -> Vec<String> {
    let name = case
        .strip_prefix(Path::new(env!("CARGO_MANIFEST_DIR")).join("grammars"))
        .unwrap()
        .display()
        .to_string();
    let text = std::fs::read_to_string(case.join("expected.toml"))
        .unwrap_or_else(|e| panic!("{name}: expected.toml: {e}"));
    let expected: Expected =
        toml::from_str(&text).unwrap_or_else(|e| panic!("{name}: expected.toml: {e}"));
    let repo = TestRepo::with_tree(case);
    let summary = repo.index();
    let graph = stored_graph(repo.data_dir()).await;
    let symbols: BTreeSet<String> = graph
        .nodes
        .iter()
        .filter(|n| n.kind.is_symbol())
        .map(|n| format!("{} {}", n.id, n.kind.as_str()))
        .collect();
    let edges = |table: &str| -> BTreeSet<String> {
        graph
            .edges
            .iter()
            .filter(|e| e.kind.table() == table && !e.dst.starts_with("ext:"))
            .map(|e| format!("{} -> {}", e.src, e.dst))
            .collect()
    };
    let calls = edges("calls");
    let mut problems = Vec::new();
    problems.extend(compare(&name, "symbol", &set(&expected.symbols), &symbols));
    problems.extend(compare(
        &name,
        "import",
        &set(&expected.imports),
        &edges("imports"),
    ));
    problems.extend(compare(&name, "call", &set(&expected.calls), &calls));
    for trap in set(&expected.traps) {
        if calls.contains(&trap) {
            problems.push(format!("{name}: trap bound: {trap}"));
        }
    }
    if let Some(effects) = &expected.effects {
        let actual: BTreeSet<String> = graph
            .nodes
            .iter()
            .filter(|n| !n.side_effects.is_empty())
            .map(|n| format!("{} {}", n.id, n.side_effects.join(", ")))
            .collect();
        problems.extend(compare(&name, "effect", &set(effects), &actual));
    }
    if let Some(mutations) = &expected.mutations {
        let actual: BTreeSet<String> = graph
            .nodes
            .iter()
            .filter(|n| n.kind.is_symbol() && n.mutations > 0)
            .map(|n| format!("{} {}", n.id, n.mutations))
            .collect();
        problems.extend(compare(&name, "mutation", &set(mutations), &actual));
    }
    let unresolved = summary["stats"]["calls_unresolved"].as_u64().unwrap();
    if unresolved != expected.unresolved {
        problems.push(format!(
            "{name}: {unresolved} unresolved calls, expected {}",
            expected.unresolved
        ));
    }
    problems
}

#[tokio::test(flavor = "multi_thread")]
async fn every_grammar_fixture_indexes_as_expected() {
    let cases = cases();
    let mut problems = Vec::new();
    let mut languages = BTreeSet::new();
    for case in &cases {
        languages.insert(case.parent().unwrap().parent().unwrap().to_path_buf());
        problems.extend(check(case).await);
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    // Every language with queries of its own has fixtures (tsx reuses typescript's).
    let grammars = Path::new(env!("CARGO_MANIFEST_DIR")).join("grammars");
    for language in std::fs::read_dir(&grammars).unwrap() {
        let dir = language.unwrap().path();
        if dir.join("definitions.scm").exists() {
            assert!(
                languages.contains(&dir),
                "{} has no fixtures",
                dir.display()
            );
        }
    }
}
