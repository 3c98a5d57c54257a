//! Turning what a user or model typed (`src/app.py`, `src/app.py::App.run`, `App.run`) into a
//! node, refusing paths that leave the repository and suggesting near matches for unknown ones.

use crate::graph::{Graph, Node, NodeKind, short_name};
use crate::secrets::quoted;

/// Why a target could not be found.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum TargetError {
    #[error("target is empty")]
    Empty,
    #[error("{} is outside the repository: targets are repository-relative paths", quoted(.0))]
    OutsideRepository(String),
    #[error("no file or symbol {} in the index{}", quoted(.target), suggest(.suggestions))]
    Unknown {
        target: String,
        suggestions: Vec<String>,
    },
    #[error("{} names {} symbols; pick one: {}", quoted(.target), .candidates.len(), .candidates.join(", "))]
    Ambiguous {
        target: String,
        candidates: Vec<String>,
    },
}

fn suggest(suggestions: &[String]) -> String {
    if suggestions.is_empty() {
        String::new()
    } else {
        format!("; did you mean {}?", suggestions.join(", "))
    }
}

const MAX_CANDIDATES: usize = 8;

/// Finds the node a target names.
pub fn resolve_target<'g>(graph: &'g Graph, raw: &str) -> Result<&'g Node, TargetError> {
    let target = raw.trim();
    if target.is_empty() {
        return Err(TargetError::Empty);
    }
    let (path, symbol) = match target.split_once("::") {
        Some((path, symbol)) => (path, Some(symbol)),
        None => (target, None),
    };
    let path = normalise(path).ok_or_else(|| TargetError::OutsideRepository(raw.to_string()))?;
    let id = match symbol {
        Some(symbol) => format!("{path}::{symbol}"),
        None => path.clone(),
    };
    if let Some(node) = graph.node(&id) {
        return Ok(node);
    }
    let candidates: Vec<&Node> = match symbol {
        // `path::method` for `path::Class.method`.
        Some(symbol) => graph
            .symbols_in(&path)
            .iter()
            .map(|n| &**n)
            .filter(|n| n.kind.is_symbol() && ends_with_segment(&n.name, symbol))
            .collect(),
        // A bare symbol name anywhere.
        None => graph
            .symbols_named(path.rsplit('.').next().unwrap_or(&path))
            .iter()
            .map(|&i| &*graph.nodes[i as usize])
            .filter(|n| ends_with_segment(&n.name, &path))
            .collect(),
    };
    match candidates.as_slice() {
        [one] => Ok(one),
        [] => Err(TargetError::Unknown {
            target: raw.to_string(),
            suggestions: match symbol {
                // A symbol of a known file: the near names are that file's, found without a
                // pass over the graph (an assistant asking for a symbol just written asks
                // again until the daemon has it).
                Some(symbol) if graph.node(&path).is_some() => {
                    near(graph.symbols_in(&path).iter().map(|n| &**n), symbol)
                }
                _ => near(graph.nodes.iter().map(|n| &**n), symbol.unwrap_or(&path)),
            },
        }),
        many => Err(TargetError::Ambiguous {
            target: raw.to_string(),
            candidates: many
                .iter()
                .take(MAX_CANDIDATES)
                .map(|n| n.id.to_string())
                .collect(),
        }),
    }
}

/// `Class.method` ends with segment `method` and with `Class.method`.
fn ends_with_segment(name: &str, wanted: &str) -> bool {
    name == wanted
        || name
            .strip_suffix(wanted)
            .is_some_and(|rest| rest.ends_with('.'))
}

/// Repository-relative form of a path; `None` if it is absolute or climbs out.
pub fn normalise(path: &str) -> Option<String> {
    let path = path.replace('\\', "/");
    if path.starts_with('/') || path.contains('\0') || path.get(1..2) == Some(":") {
        return None;
    }
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            other => parts.push(other),
        }
    }
    Some(parts.join("/"))
}

/// Ids of `nodes` whose short name contains the wanted text, files first.
fn near<'g>(nodes: impl Iterator<Item = &'g Node>, wanted: &str) -> Vec<String> {
    let last = wanted
        .rsplit(['/', '.', ':'])
        .find(|s| !s.is_empty())
        .unwrap_or(wanted)
        .to_lowercase();
    if last.len() < 2 {
        return Vec::new();
    }
    let mut found: Vec<&Node> = nodes
        .filter(|n| n.kind != NodeKind::External && contains_lowercase(short_name(&n.id), &last))
        .collect();
    found.sort_by_key(|n| (n.kind != NodeKind::File, n.id.len()));
    found.iter().take(5).map(|n| n.id.to_string()).collect()
}

/// Whether `text` lowercased contains `lowercase`, without lowercasing a copy of `text`
/// where both are ASCII (every node of the graph is tried on a miss).
fn contains_lowercase(text: &str, lowercase: &str) -> bool {
    if !text.is_ascii() || !lowercase.is_ascii() {
        return text.to_lowercase().contains(lowercase);
    }
    let (text, needle) = (text.as_bytes(), lowercase.as_bytes());
    let Some(&first) = needle.first() else {
        return true;
    };
    // Candidates are where the first letter is, in either case (a vectorised search).
    memchr::memchr2_iter(first, first.to_ascii_uppercase(), text).any(|at| {
        text.get(at..at + needle.len())
            .is_some_and(|window| window.eq_ignore_ascii_case(needle))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unknown_target_is_named_unless_it_holds_a_secret() {
        let unknown = |target: &str| {
            TargetError::Unknown {
                target: target.to_string(),
                suggestions: Vec::new(),
            }
            .to_string()
        };
        assert!(unknown("App.run").contains("`App.run`"));
        let token = "ghp_0123456789abcdefghijklmnopqrstuvwxyzAB";
        let said = unknown(token);
        assert!(!said.contains(token), "{said}");
        assert!(said.contains("withheld"), "{said}");
        let outside = TargetError::OutsideRepository(format!("../{token}")).to_string();
        assert!(!outside.contains(token), "{outside}");
    }

    #[test]
    fn a_near_name_is_found_in_any_case() {
        assert!(contains_lowercase("app/Models/UserStore.py", "userstore"));
        assert!(contains_lowercase("a.py::QuerySet.count", "queryset"));
        assert!(!contains_lowercase("a.py::QuerySet.count", "querysets"));
        assert!(contains_lowercase("ÄrgerStore.py", "ärger"));
        assert!(!contains_lowercase("ÄrgerStore.py", "ärgr"));
        assert!(!contains_lowercase("ab", "abc"));
        assert!(contains_lowercase("a.py::QuerySet.count", "count"));
        assert!(contains_lowercase("x::aaAB", "aab"));
        assert!(!contains_lowercase("x::aaA", "aab"));
        assert!(contains_lowercase("anything", ""));
    }

    fn suggestions(graph: &Graph, target: &str) -> Vec<String> {
        match resolve_target(graph, target) {
            Err(TargetError::Unknown { suggestions, .. }) => suggestions,
            other => panic!("{target} was not unknown: {other:?}"),
        }
    }

    #[test]
    fn an_unknown_symbol_of_a_known_file_is_matched_within_that_file() {
        let graph = crate::context::testing::graph_of(&[
            (
                "app/store.py",
                "def helper_one():\n    pass\n\ndef helper_two():\n    pass\n",
            ),
            ("app/other.py", "def helper_three():\n    pass\n"),
            ("app/helper.py", "X = 1\n"),
        ]);
        assert_eq!(
            suggestions(&graph, "app/store.py::helper"),
            ["app/store.py::helper_one", "app/store.py::helper_two"]
        );
        assert!(suggestions(&graph, "app/store.py::nothing_like_it").is_empty());
        // An unknown file: the name is looked for everywhere, files first, in the names of
        // files and symbols (not in the folders: `app/helper.py::X` is not near `helper`).
        assert_eq!(
            suggestions(&graph, "app/gone.py::helper"),
            [
                "app/helper.py",
                "app/store.py::helper_one",
                "app/store.py::helper_two",
                "app/other.py::helper_three"
            ]
        );
        assert_eq!(
            suggestions(&graph, "helper_thre")[0],
            "app/other.py::helper_three"
        );
    }

    #[test]
    fn a_bare_name_is_found_by_its_last_parts() {
        let graph = crate::context::testing::graph_of(&[
            (
                "app/store.py",
                "class Store:\n    def load(self):\n        pass\n\ndef loader():\n    pass\n",
            ),
            ("app/cache.py", "def load():\n    pass\n\nLOAD = 1\n"),
            (
                "app/other.py",
                "class Cache:\n    def load_all(self):\n        pass\n",
            ),
        ]);
        let id = |target: &str| resolve_target(&graph, target).map(|n| n.id.to_string());
        assert_eq!(id("Store.load"), Ok("app/store.py::Store.load".to_string()));
        assert_eq!(id("loader"), Ok("app/store.py::loader".to_string()));
        assert_eq!(
            id("load_all"),
            Ok("app/other.py::Cache.load_all".to_string())
        );
        match resolve_target(&graph, "load") {
            Err(TargetError::Ambiguous { candidates, .. }) => assert_eq!(
                candidates,
                ["app/cache.py::load", "app/store.py::Store.load"]
            ),
            other => panic!("`load` was not ambiguous: {other:?}"),
        }
        assert!(matches!(
            resolve_target(&graph, "Other.load"),
            Err(TargetError::Unknown { .. })
        ));
    }

    #[test]
    fn paths_that_leave_the_repository_are_refused() {
        assert_eq!(normalise("../../etc/passwd"), None);
        assert_eq!(normalise("/etc/passwd"), None);
        assert_eq!(normalise("C:/x"), None);
        assert_eq!(normalise("a/../../b"), None);
        assert_eq!(normalise("./src//app.py").as_deref(), Some("src/app.py"));
        assert_eq!(normalise("src/x/../app.py").as_deref(), Some("src/app.py"));
    }
}
