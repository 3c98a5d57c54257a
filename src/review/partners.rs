//! Files a change probably leaves out: those using a symbol it removes or whose signature it
//! alters (the graph says so), then those that usually change with the changed files (history
//! says so). Test files are neither: they are among the tests to run.

use std::collections::HashMap;
use std::collections::hash_map::Entry;

use super::briefing::{MissingPartner, PartnerReason};
use super::{Analysis, SymbolChange, SymbolChangeKind, Use};
use crate::graph::possible::{self, Evidence};
use crate::graph::{EdgeKind, Graph};
use crate::history::History;
use crate::languages::Registry;

/// How many changed files have their history partners looked up.
pub(crate) const HISTORY_FILES: usize = 5;
/// Most files missing from a change named for each kind of evidence.
const SHOWN: usize = 8;

/// The files missing from the change, each with its reason: users of removed or re-signed
/// symbols first, then history partners (source files before docs and the like, strongest
/// first), each file once, neither in the change nor a test; `exists` says whether a path
/// not in the graph is still in the repository.
pub fn missing(
    analysis: &Analysis,
    graph: &Graph,
    history: &History,
    in_change: &[String],
    exists: &dyn Fn(&str) -> bool,
) -> Vec<MissingPartner> {
    let registry = Registry::get();
    let wanted = |path: &str, found: &[MissingPartner]| {
        !in_change.iter().any(|p| p == path)
            && registry.test_kind(path).is_none()
            && !found.iter().any(|p| p.path == path)
    };
    let mut found = users(analysis, graph, &wanted);
    let from_graph = found.len();
    for partner in from_history(analysis, history) {
        if found.len() - from_graph == SHOWN {
            break;
        }
        if wanted(&partner.path, &found)
            && (graph.node(&partner.path).is_some() || exists(&partner.path))
        {
            found.push(partner);
        }
    }
    found
}

/// Files whose symbols call, import or override a symbol the change removes or re-signs (or
/// call a method of its name on a receiver that reads as its class), in the order of the
/// changed symbols and their users (strongest first), up to [`SHOWN`].
fn users(
    analysis: &Analysis,
    graph: &Graph,
    wanted: &dyn Fn(&str, &[MissingPartner]) -> bool,
) -> Vec<MissingPartner> {
    let mut found: Vec<MissingPartner> = Vec::new();
    for file in &analysis.files {
        for symbol in &file.symbols {
            let change = match symbol.change {
                SymbolChangeKind::Removed => "removed",
                SymbolChangeKind::Modified if symbol.signature_changed => "signature",
                _ => continue,
            };
            let Some((_, qualname)) = symbol.id.split_once("::") else {
                continue;
            };
            let imports: &[Use] = if change == "removed" {
                &symbol.importers
            } else {
                &[]
            };
            let uses = symbol
                .callers
                .iter()
                .map(|u| ("calls", u.id.clone()))
                .chain(imports.iter().map(|u| ("imports", u.id.clone())))
                .chain(
                    overriders(graph, symbol)
                        .into_iter()
                        .map(|id| ("overrides", id)),
                )
                .chain(likely_callers(graph, symbol).map(|id| ("may call", id)));
            for (how, user) in uses {
                let Some(node) = graph.node(&user) else {
                    continue;
                };
                if found.len() == SHOWN {
                    return found;
                }
                if wanted(&node.path, &found) {
                    found.push(MissingPartner {
                        path: node.path.to_string(),
                        with: file.path.clone(),
                        reason: PartnerReason::Uses {
                            symbol: qualname.to_string(),
                            how,
                            change,
                        },
                    });
                }
            }
        }
    }
    found
}

/// The callers of a changed method whose receiver's type is unknown but reads as its class
/// (named like it, or returned by one of its methods): the possible callers
/// ([`possible::possible_callers`]) with evidence about the receiver itself, strongest first.
fn likely_callers(graph: &Graph, symbol: &SymbolChange) -> impl Iterator<Item = String> {
    let mut likely: Vec<(u32, String)> = graph
        .node(&symbol.id)
        .map(|method| possible::possible_callers(graph, method))
        .unwrap_or_default()
        .into_iter()
        .filter(|p| {
            p.evidence
                .iter()
                .any(|e| matches!(e, Evidence::NamedLike { .. } | Evidence::ReturnedBy { .. }))
        })
        .map(|p| (p.weight(), p.caller.id.to_string()))
        .collect();
    likely.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    likely.into_iter().map(|(_, id)| id)
}

/// The methods of the same name in the direct subclasses of a changed method's class.
fn overriders(graph: &Graph, symbol: &SymbolChange) -> Vec<String> {
    let Some((class, name)) = symbol
        .id
        .rsplit_once('.')
        .filter(|_| symbol.kind == "method")
    else {
        return Vec::new();
    };
    graph
        .incoming(class)
        .filter(|e| e.kind == EdgeKind::Inherits)
        .map(|e| format!("{}.{name}", e.src))
        .filter(|id| graph.node(id).is_some())
        .collect()
}

/// Files that changed with the first [`HISTORY_FILES`] changed files, each weighed by
/// [`History::partners`] and summed over the changed files it goes with (its `with` the one
/// it goes with most); source files first, then the others (docs, changelogs), strongest
/// first.
fn from_history(analysis: &Analysis, history: &History) -> Vec<MissingPartner> {
    // Each path's summed weight, its strongest weight and the partner made of that.
    let mut by_path: HashMap<String, (f64, f64, MissingPartner)> = HashMap::new();
    for file in analysis.files.iter().take(HISTORY_FILES) {
        for partner in history.partners(&file.path) {
            let weight = partner.weight;
            let candidate = MissingPartner {
                path: partner.path.clone(),
                with: file.path.clone(),
                reason: PartnerReason::History {
                    support: partner.support,
                    of: partner.of,
                    confidence: partner.confidence,
                    weight: (weight * 100.0).round() / 100.0,
                },
            };
            match by_path.entry(partner.path) {
                Entry::Vacant(v) => {
                    v.insert((weight, weight, candidate));
                }
                Entry::Occupied(mut o) => {
                    let (sum, strongest, kept) = o.get_mut();
                    *sum += weight;
                    // The changed file it goes with most names it.
                    if weight > *strongest {
                        *strongest = weight;
                        *kept = candidate;
                    }
                }
            }
        }
    }
    let registry = Registry::get();
    let mut ranked: Vec<(f64, MissingPartner)> = by_path
        .into_values()
        .map(|(sum, _, partner)| (sum, partner))
        .collect();
    ranked.sort_by(|(a, pa), (b, pb)| {
        let source = |p: &MissingPartner| registry.for_path(&p.path).is_none();
        source(pa)
            .cmp(&source(pb))
            .then_with(|| b.total_cmp(a))
            .then_with(|| pa.path.cmp(&pb.path))
    });
    ranked.into_iter().map(|(_, p)| p).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::CommitInfo;
    use crate::review::{ChangeKind, FileReport};

    fn changed(path: &str) -> FileReport {
        FileReport {
            path: path.to_string(),
            old_path: None,
            change: ChangeKind::Modified,
            added: 1,
            removed: 1,
            binary: false,
            language: Some("python".to_string()),
            indexed: true,
            symbols: Vec::new(),
            module_lines: Vec::new(),
            effects_added: Vec::new(),
            effects_removed: Vec::new(),
            notes: Vec::new(),
            module_diff: Vec::new(),
        }
    }

    fn commit(id: &str, days_ago: i64, files: &[&str]) -> CommitInfo {
        CommitInfo {
            id: id.to_string(),
            time: 1_000_000_000 - days_ago * 86_400,
            author: "a@x".to_string(),
            name: "A".to_string(),
            summary: format!("Change {id}"),
            fix: false,
            files: files.iter().map(|f| f.to_string()).collect(),
        }
    }

    #[test]
    fn history_partners_add_up_over_the_changed_files_and_leave_out_tests_and_the_change() {
        let history = History::new(vec![
            commit("1", 3, &["app/a.py", "app/shared.py"]),
            commit("2", 2, &["app/b.py", "app/shared.py", "CHANGES.md"]),
            commit("3", 1, &["app/a.py", "app/only_a.py", "tests/test_a.py"]),
            commit("4", 0, &["app/a.py", "app/b.py"]),
        ]);
        let analysis = Analysis {
            files: vec![changed("app/a.py"), changed("app/b.py")],
            ..Analysis::default()
        };
        let graph = Graph::default();
        let in_change = ["app/a.py".to_string(), "app/b.py".to_string()];
        let found = missing(&analysis, &graph, &history, &in_change, &|p| {
            p != "app/gone.py"
        });
        let listed: Vec<(&str, &str)> = found
            .iter()
            .map(|p| (p.path.as_str(), p.with.as_str()))
            .collect();
        // shared.py goes with both changed files (their weights add up) and is named with the
        // one it goes with most (two fifths of a.py's weighted commits, a third of b.py's);
        // the changelog comes after the source files; the test and the change are left out.
        assert_eq!(
            listed,
            [
                ("app/shared.py", "app/a.py"),
                ("app/only_a.py", "app/a.py"),
                ("CHANGES.md", "app/b.py"),
            ],
            "{found:?}"
        );
        assert!(
            found
                .iter()
                .all(|p| matches!(p.reason, PartnerReason::History { .. }))
        );
        // A partner that no longer exists is not named.
        let gone = History::new(vec![commit("1", 0, &["app/a.py", "app/gone.py"])]);
        let found = missing(&analysis, &graph, &gone, &in_change, &|p| {
            p != "app/gone.py"
        });
        assert!(found.is_empty(), "{found:?}");
    }
}
