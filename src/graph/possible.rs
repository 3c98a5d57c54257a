//! The possible callers of a method: calls of its name on receivers of unknown type
//! ([`UntypedCall`]), each with the evidence that it reaches this method rather than another
//! of its name. Never edges: nothing that scores, reaches or selects tests reads them.

use super::{Graph, Node, NodeKind, UntypedCall};
use crate::languages::Registry;

/// Why a call on a receiver of unknown type may reach a given method.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Evidence {
    /// The receiver is returned by a method of the class (`qs.filter().count()`).
    ReturnedBy { class: String, method: String },
    /// The receiver's name reads as the class's (`root_queryset`, `qs` for `QuerySet`).
    NamedLike { class: String },
    /// The call is in the method's file.
    SameFile,
    /// The caller's file imports the method's file or a name of it.
    Imports { path: String },
    /// The caller's file is in the method's directory.
    SameDirectory,
}

impl Evidence {
    /// How much it says: what the receiver is called or comes from most, where the call is
    /// less, a shared directory least.
    pub fn weight(&self) -> u32 {
        match self {
            Evidence::ReturnedBy { .. } | Evidence::NamedLike { .. } => 3,
            Evidence::SameFile | Evidence::Imports { .. } => 2,
            Evidence::SameDirectory => 1,
        }
    }

    /// What a reader is told.
    pub fn describe(&self) -> String {
        match self {
            Evidence::ReturnedBy { class, method } => format!("receiver from {class}.{method}()"),
            Evidence::NamedLike { class } => format!("receiver named like {class}"),
            Evidence::SameFile => "same file".to_string(),
            Evidence::Imports { path } => format!("imports {path}"),
            Evidence::SameDirectory => "same directory".to_string(),
        }
    }
}

/// Possible callers whose evidence weighs less than this (the same directory alone) say
/// little: they are listed after the others.
pub const WEAK: u32 = 2;

/// One call (a caller's calls of the name on one receiver) that may reach the method.
#[derive(Debug, Clone)]
pub struct PossibleCall<'g> {
    pub caller: &'g Node,
    pub call: &'g UntypedCall,
    /// Strongest first.
    pub evidence: Vec<Evidence>,
}

impl PossibleCall<'_> {
    pub fn weight(&self) -> u32 {
        self.evidence.iter().map(Evidence::weight).sum()
    }

    /// The call as its receiver's last part reads (`root_queryset.count()`).
    pub fn written(&self) -> String {
        format!("{}.{}()", self.call.receiver, self.call.name)
    }
}

/// The possible callers of `method` (a method of a class or interface; none for anything
/// else), in graph order. Callers in a language of another module system, which cannot call
/// it, are left out.
pub fn possible_callers<'g>(graph: &'g Graph, method: &Node) -> Vec<PossibleCall<'g>> {
    let Some(class) = method
        .parent
        .as_deref()
        .and_then(|p| graph.node(p))
        .filter(|c| c.kind.is_class_like() && method.kind == NodeKind::Method)
    else {
        return Vec::new();
    };
    let registry = Registry::get();
    let system = |path: &str| registry.for_path(path).map(|l| l.module_system);
    let name = method.name.rsplit('.').next().unwrap_or(&method.name);
    let class_name = class.name.rsplit('.').next().unwrap_or(&class.name);
    let mut found = Vec::new();
    for &at in graph.untyped_callers(name) {
        let caller = &*graph.nodes[at as usize];
        if system(&caller.path) != system(&method.path) {
            continue;
        }
        let mut placed = Vec::new();
        if caller.path == method.path {
            placed.push(Evidence::SameFile);
        } else {
            if imports_file(graph, caller, &method.path) {
                placed.push(Evidence::Imports {
                    path: method.path.to_string(),
                });
            }
            if parent_dir(&caller.path) == parent_dir(&method.path) {
                placed.push(Evidence::SameDirectory);
            }
        }
        for call in caller.untyped_calls.iter().filter(|c| c.name == name) {
            let receiver = call.receiver.trim_end_matches("()");
            let mut evidence = Vec::new();
            if call.receiver.ends_with("()")
                && graph.node(&format!("{}.{receiver}", class.id)).is_some()
            {
                evidence.push(Evidence::ReturnedBy {
                    class: class_name.to_string(),
                    method: receiver.to_string(),
                });
            } else if named_like(receiver, class_name) {
                evidence.push(Evidence::NamedLike {
                    class: class_name.to_string(),
                });
            }
            evidence.extend(placed.iter().cloned());
            found.push(PossibleCall {
                caller,
                call,
                evidence,
            });
        }
    }
    found
}

/// Whether `node`'s file imports the file at `path` or a name of it.
fn imports_file(graph: &Graph, node: &Node, path: &str) -> bool {
    graph.outgoing(&node.path).any(|e| {
        e.kind == super::EdgeKind::Imports
            && (&*e.dst == path
                || e.dst
                    .strip_prefix(path)
                    .is_some_and(|r| r.starts_with("::")))
    })
}

fn parent_dir(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(dir, _)| dir)
}

/// Whether a receiver's name reads as a value of `class`: it ends with the class's name
/// (`root_queryset`, `queryset` for `QuerySet`), is its initials (`qs`), or ends with the
/// class's last word of four letters or more (`manager` for `RelatedManager`).
fn named_like(receiver: &str, class: &str) -> bool {
    let flat: String = receiver
        .chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect();
    let words: Vec<String> = class
        .split('_')
        .flat_map(crate::words::humps)
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    let class_flat = words.concat();
    let initials: String = words.iter().filter_map(|w| w.chars().next()).collect();
    let last = words.last().map_or("", String::as_str);
    !flat.is_empty()
        && (flat.ends_with(&class_flat)
            || (initials.len() >= 2 && flat == initials)
            || (last.len() >= 4 && flat.ends_with(last)))
}

#[cfg(test)]
mod tests {
    use super::named_like;

    #[test]
    fn a_receiver_named_like_a_class_reads_as_one() {
        for receiver in ["qs", "queryset", "root_queryset", "QuerySet", "querySet"] {
            assert!(named_like(receiver, "QuerySet"), "{receiver}");
        }
        assert!(named_like("manager", "RelatedManager"));
        assert!(named_like("http_client", "HTTPClient"));
        for receiver in ["q", "set", "query", "querysets", "text", ""] {
            assert!(!named_like(receiver, "QuerySet"), "{receiver}");
        }
        // A last word under four letters says too little (`id`, `set`).
        assert!(!named_like("url", "BaseURL"));
    }
}
