//! Promotions after a build (fan-in and mutation `DRIVES`, test `ASSERTS_ON`) and the causal
//! measures every node carries (reach, direct dependents, impact).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use rustc_hash::FxHashMap as HashMap;

use super::rank::{self, Link};
use super::{Edge, EdgeKind, Graph, IMPORTS_MODULE, IMPORTS_NAMES, Node, NodeKind, reach};

/// A module imported by this many files or more drives its importers.
pub(crate) const FAN_IN_THRESHOLD: usize = 3;

/// Adds promoted edges and computes reach, direct dependents and impact.
pub fn promote(mut nodes: Vec<Node>, mut edges: Vec<Edge>) -> Graph {
    let by_id: HashMap<&str, &Node> = nodes.iter().map(|n| (&*n.id, n)).collect();
    let is_file = |id: &str| by_id.get(id).is_some_and(|n| n.kind == NodeKind::File);
    let is_test = |id: &str| by_id.get(id).is_some_and(|n| n.is_test);

    let mut importers: BTreeMap<&Arc<str>, BTreeSet<&Arc<str>>> = BTreeMap::new();
    let mut promoted: BTreeMap<(EdgeKind, Arc<str>, Arc<str>), BTreeSet<String>> = BTreeMap::new();
    for edge in edges.iter().filter(|e| e.kind == EdgeKind::Imports) {
        if is_file(&edge.dst) {
            importers.entry(&edge.dst).or_default().insert(&edge.src);
        }
        // A test asserts on what it imports: the named definitions, or the whole module.
        if is_test(&edge.src) && by_id.contains_key(&*edge.dst) && !is_test(&edge.dst) {
            let external = by_id[&*edge.dst].kind == NodeKind::External;
            let names_only = impact(edge, NodeKind::File).is_none();
            if !external && !names_only {
                promoted
                    .entry((EdgeKind::AssertsOn, edge.src.clone(), edge.dst.clone()))
                    .or_default()
                    .insert("import".to_string());
            }
        }
    }
    for (module, files) in &importers {
        let fan_in = files.len() >= FAN_IN_THRESHOLD;
        let mutates = by_id[&***module].mutations > 0;
        for importer in files {
            let mut reasons = Vec::new();
            if fan_in {
                reasons.push("fan_in");
            }
            if mutates {
                reasons.push("mutation");
            }
            if !reasons.is_empty() {
                promoted
                    .entry((EdgeKind::Drives, Arc::clone(module), Arc::clone(importer)))
                    .or_default()
                    .extend(reasons.into_iter().map(String::from));
            }
        }
    }
    edges.extend(
        promoted
            .into_iter()
            .map(|((kind, src, dst), reasons)| Edge {
                kind,
                src,
                dst,
                lines: Default::default(),
                reasons: reasons.into_iter().map(Into::into).collect(),
            }),
    );
    measure(&mut nodes, &edges);
    Graph::new(nodes, edges)
}

/// The impact of an edge, if it carries one: a change at the first node can break the second.
pub fn impact(edge: &Edge, src_kind: NodeKind) -> Option<(&str, &str)> {
    impact_link(edge, src_kind).map(|(from, to, _)| (from, to))
}

/// The impact of an edge, if it carries one, and what kind of link it is.
///
/// Impact runs against dependencies: the called, inherited, asserted-on or imported symbol
/// reaches its user. A file reaches its importers only where they use it as a whole module;
/// an importer of named definitions depends on those symbols (their own edges), not on the
/// rest of the file — otherwise every change would reach everything through import chains.
/// A method reaches its class (calls through instances cannot be resolved statically, so the
/// class's users stand in), and a file reaches its top-level definitions (a change to the file
/// is a change to them): both are weaker links than a use. `drives` edges summarise imports
/// and add no impact of their own.
pub fn impact_link(edge: &Edge, src_kind: NodeKind) -> Option<(&str, &str, Link)> {
    let against = Some((&*edge.dst, &*edge.src, Link::Use));
    let has = |reason: &str| edge.reasons.iter().any(|r| r == reason);
    match edge.kind {
        EdgeKind::Calls | EdgeKind::Inherits | EdgeKind::AssertsOn => against,
        EdgeKind::Imports if has(IMPORTS_NAMES) && !has(IMPORTS_MODULE) => None,
        EdgeKind::Imports => against,
        EdgeKind::Contains if src_kind.is_class_like() => {
            Some((&edge.dst, &edge.src, Link::Member))
        }
        EdgeKind::Contains if src_kind == NodeKind::File => {
            Some((&edge.src, &edge.dst, Link::Definition))
        }
        EdgeKind::Contains | EdgeKind::Drives => None,
    }
}

/// Each node's direct dependents over impact links (by position in `nodes`), sorted; external
/// modules take no part.
pub fn impact_links(nodes: &[Node], edges: &[Edge]) -> Vec<Vec<(u32, Link)>> {
    let index: HashMap<&str, usize> = nodes
        .iter()
        .enumerate()
        .filter(|(_, n)| n.kind != NodeKind::External)
        .map(|(i, n)| (&*n.id, i))
        .collect();
    let mut dependents: Vec<Vec<(u32, Link)>> = vec![Vec::new(); nodes.len()];
    let kinds: HashMap<&str, NodeKind> = nodes.iter().map(|n| (&*n.id, n.kind)).collect();
    let kind_of = |id: &str| kinds.get(id).copied().unwrap_or(NodeKind::External);
    for (from, to, link) in edges.iter().filter_map(|e| impact_link(e, kind_of(&e.src))) {
        if let (Some(&a), Some(&b)) = (index.get(from), index.get(to)) {
            dependents[a].push((b as u32, link));
        }
    }
    for list in &mut dependents {
        list.sort_unstable();
        // One link per pair, the strongest (`Use` sorts first).
        list.dedup_by_key(|(to, _)| *to);
    }
    dependents
}

/// Sets every node's causal measures: reach, direct dependents and impact.
pub fn measure(nodes: &mut [Node], edges: &[Edge]) {
    let dependents = impact_links(nodes, edges);
    let successors: Vec<Vec<u32>> = dependents
        .iter()
        .map(|list| list.iter().map(|&(to, _)| to).collect())
        .collect();
    let keys: Vec<u64> = nodes.iter().map(|n| reach::key(&n.id)).collect();
    let reach = reach::reach_counts(&successors, &keys);
    let impact = rank::impact_scores(&dependents);
    for (i, node) in nodes.iter_mut().enumerate() {
        node.reach = reach[i];
        node.causal_in = successors[i].len() as u32;
        node.impact = rank::stored(impact[i]);
    }
}
