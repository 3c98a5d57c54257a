//! Everything cairn knows about one node: what it is, its score and why, who depends on it and
//! what it depends on (with call-site lines), the tests that reach it, its blast radius, and
//! its source on request — inside a token budget.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{ScoreParts, Scorer, location, nearest_dependents};
use crate::answer::{Answer, LeftOut, Page};
use crate::graph::{Edge, EdgeKind, Node, NodeKind};

/// Parts of an expansion a caller can ask for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Include {
    Source,
    Callers,
    Callees,
    Tests,
    History,
    Memories,
}

/// A neighbour with the lines that connect it.
#[derive(Debug, Clone, Serialize)]
pub struct Link {
    pub id: String,
    pub kind: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub lines: Vec<u32>,
}

/// The answer of `expand`.
pub type ExpandReport = Answer<ExpandBody>;

/// What an expansion holds, for programs.
#[derive(Debug, Clone, Serialize)]
pub struct ExpandBody {
    pub id: String,
    pub kind: String,
    pub path: String,
    pub start_line: u32,
    pub end_line: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub doc: Option<String>,
    pub is_test: bool,
    pub score: ScoreParts,
    pub side_effects: Vec<String>,
    pub state_writes: u32,
    pub members: Vec<Link>,
    pub imports: Vec<Link>,
    pub importers: Vec<Link>,
    pub callers: Vec<Link>,
    pub callees: Vec<Link>,
    pub bases: Vec<Link>,
    pub subclasses: Vec<Link>,
    pub tests: Vec<Link>,
    /// Nodes a change here can reach.
    pub blast_radius: usize,
    pub top_dependents: Vec<Link>,
    /// Memories anchored on the node, its file or its enclosing definitions.
    pub memories: Vec<super::MemoryNote>,
    /// The file's history: experts and recent commits, one line each.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub history: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
}

const LEFT_OUT: LeftOut = LeftOut {
    unit: "items",
    advice: "",
};

/// What cairn knows about a node beyond the graph: memories anchored on it and its file's
/// history lines.
#[derive(Debug, Clone, Copy, Default)]
pub struct Known<'a> {
    pub memories: &'a [super::MemoryNote],
    pub history: &'a [String],
}

/// How many of the nearest dependents an expansion walks.
const RADIUS_WALK: usize = 2_000;

/// The source text of a node, when the caller can read it.
pub type SourceReader<'a> = &'a dyn Fn(&Node) -> Option<String>;

/// Expands one node within `max_tokens`. `include` limits the sections (default: all but
/// source); `read_source` supplies the file text when source is asked for.
pub fn expand(
    scorer: &Scorer,
    node: &Node,
    include: &[Include],
    known: Known,
    max_tokens: usize,
    read_source: SourceReader,
    mut notes: Vec<String>,
) -> ExpandReport {
    let Known { memories, history } = known;
    let graph = scorer.graph();
    let wants = |part: Include| {
        if include.is_empty() {
            part != Include::Source
        } else {
            include.contains(&part)
        }
    };
    let score = scorer.score(node);
    let rank = |id: &str| graph.node(id).map_or(0.0, |n| scorer.score(n).total());
    let linked = |edges: Vec<&Edge>, far: fn(&Edge) -> &str| -> Vec<Link> {
        let mut links: Vec<Link> = edges
            .into_iter()
            .map(|e| Link {
                id: far(e).to_string(),
                kind: graph
                    .node(far(e))
                    .map_or("unknown", |n| n.kind.as_str())
                    .to_string(),
                lines: e.lines.clone(),
            })
            .collect();
        links.sort_by(|a, b| {
            rank(&b.id)
                .total_cmp(&rank(&a.id))
                .then_with(|| a.id.cmp(&b.id))
        });
        links
    };
    let out_of = |kind: EdgeKind| {
        graph
            .outgoing(&node.id)
            .filter(move |e| e.kind == kind)
            .collect::<Vec<_>>()
    };
    let into = |kind: EdgeKind| {
        graph
            .incoming(&node.id)
            .filter(move |e| e.kind == kind)
            .collect::<Vec<_>>()
    };
    fn dst(e: &Edge) -> &str {
        &e.dst
    }
    fn src(e: &Edge) -> &str {
        &e.src
    }

    // The whole radius is counted at index time (`reach`); the nearest part is enough to rank
    // dependents and find the tests that reach the node.
    let radius = nearest_dependents(graph, &node.id, RADIUS_WALK);
    if radius.len() < node.reach as usize {
        notes.push(format!(
            "tests and dependents are taken from the nearest {} of {} reachable nodes",
            radius.len(),
            node.reach
        ));
    }
    // Tests that assert on the node or, for a file or class, on its members.
    let members: Vec<&str> = graph
        .outgoing(&node.id)
        .filter(|e| e.kind == EdgeKind::Contains)
        .map(|e| e.dst.as_str())
        .collect();
    let mut asserting: Vec<&Edge> = into(EdgeKind::AssertsOn);
    for member in &members {
        asserting.extend(
            graph
                .incoming(member)
                .filter(|e| e.kind == EdgeKind::AssertsOn),
        );
    }
    let mut tests: Vec<Link> = linked(asserting, src);
    tests.dedup_by(|a, b| a.id == b.id);
    for id in &radius {
        if graph
            .node(id)
            .is_some_and(|n| n.is_test && n.kind == NodeKind::File)
            && !tests.iter().any(|t| t.id == *id)
        {
            tests.push(Link {
                id: id.to_string(),
                kind: "reaches".to_string(),
                lines: Vec::new(),
            });
        }
    }
    for test in &mut tests {
        if test.kind != "reaches" {
            test.kind = "asserts_on".to_string();
        }
    }
    let mut dependents: Vec<(f64, &str)> = radius
        .iter()
        .filter(|id| {
            graph
                .node(id)
                .is_some_and(|n| !n.is_test && n.path != node.path)
        })
        .map(|id| (rank(id), *id))
        .collect();
    dependents.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(b.1)));

    let mut report = ExpandBody {
        id: node.id.clone(),
        kind: node.kind.as_str().to_string(),
        path: node.path.clone(),
        start_line: node.start_line,
        end_line: node.end_line,
        signature: node.signature.clone(),
        doc: node.doc.clone(),
        is_test: node.is_test,
        score: score.into(),
        side_effects: node.side_effects.clone(),
        state_writes: node.mutations,
        members: linked(out_of(EdgeKind::Contains), dst),
        imports: linked(out_of(EdgeKind::Imports), dst),
        importers: linked(into(EdgeKind::Imports), src),
        callers: if wants(Include::Callers) {
            linked(into(EdgeKind::Calls), src)
        } else {
            Vec::new()
        },
        callees: if wants(Include::Callees) {
            linked(out_of(EdgeKind::Calls), dst)
        } else {
            Vec::new()
        },
        bases: linked(out_of(EdgeKind::Inherits), dst),
        subclasses: linked(into(EdgeKind::Inherits), src),
        tests: if wants(Include::Tests) {
            tests
        } else {
            Vec::new()
        },
        blast_radius: node.reach as usize,
        top_dependents: dependents
            .iter()
            .take(8)
            .map(|(_, id)| Link {
                id: id.to_string(),
                kind: graph
                    .node(id)
                    .map_or("unknown", |n| n.kind.as_str())
                    .to_string(),
                lines: Vec::new(),
            })
            .collect(),
        memories: Vec::new(),
        history: Vec::new(),
        source: None,
    };

    let mut out = Page::new(max_tokens, notes);
    out.force(format!(
        "# {} ({} {}{})",
        node.id,
        node.kind.as_str(),
        location(node),
        if node.is_test { ", test" } else { "" }
    ));
    if let Some(signature) = &node.signature {
        out.force(format!("`{signature}`"));
    }
    if let Some(doc) = &node.doc {
        out.push(format!("doc: {doc}"));
    }
    out.force(format!(
        "score {} · reach {} · deps {} · side effects: {} · state writes: {}",
        score.explain(),
        node.reach,
        node.causal_in,
        if node.side_effects.is_empty() {
            "none".to_string()
        } else {
            node.side_effects.join(", ")
        },
        node.mutations
    ));
    let sections: [(&str, &mut Vec<Link>, bool); 9] = [
        ("Callers", &mut report.callers, true),
        ("Tests", &mut report.tests, true),
        ("Callees", &mut report.callees, true),
        ("Importers", &mut report.importers, true),
        ("Subclasses", &mut report.subclasses, true),
        ("Bases", &mut report.bases, true),
        ("Imports", &mut report.imports, true),
        (
            "Top dependents (blast radius)",
            &mut report.top_dependents,
            true,
        ),
        ("Members", &mut report.members, true),
    ];
    let section_share = out.remaining() / 5;
    if wants(Include::Memories) && !memories.is_empty() {
        let total = memories.len();
        if out.push(format!("## Memories ({total})")) {
            let limit = out.used() + section_share;
            for memory in memories {
                if !out.push_until(memory.line(), limit) {
                    break;
                }
                report.memories.push(memory.clone());
            }
        } else {
            out.dropped += total;
        }
    }
    if wants(Include::History) && !history.is_empty() {
        if out.push("## History".to_string()) {
            let limit = out.used() + section_share / 2;
            for line in history {
                if !out.push_until(line.clone(), limit) {
                    break;
                }
                report.history.push(line.clone());
            }
        } else {
            out.dropped += history.len();
        }
    }
    for (title, links, _) in sections {
        if links.is_empty() {
            continue;
        }
        let total = links.len();
        let heading = if title.starts_with("Top dependents") {
            format!("## {title}: {} nodes reachable", report.blast_radius)
        } else {
            format!("## {title} ({total})")
        };
        if !out.push(heading) {
            out.dropped += total;
            links.clear();
            continue;
        }
        let limit = out.used() + section_share;
        let mut kept = 0;
        for link in links.iter() {
            let line = format!(
                "- {}{}{}",
                link.id,
                if link.kind.is_empty() {
                    String::new()
                } else {
                    format!(" [{}]", link.kind)
                },
                lines_note(&link.lines)
            );
            if !out.push_until(line, limit) {
                break;
            }
            kept += 1;
        }
        if kept < total {
            out.dropped += total - kept - 1;
            links.truncate(kept);
            out.push(format!("- … {} more", total - kept));
        }
    }
    if wants(Include::Source) {
        match read_source(node) {
            Some(text) => {
                out.push("## Source".to_string());
                let mut shown = Vec::new();
                let fence = "```";
                out.push(fence.to_string());
                let lines: Vec<&str> = text.lines().collect();
                for (i, line) in lines.iter().enumerate() {
                    let numbered = format!("{:>5} {line}", node.start_line as usize + i);
                    if out.remaining() < 20 || !out.push(numbered) {
                        out.note(format!("source cut after {} of {} lines", i, lines.len()));
                        break;
                    }
                    shown.push(*line);
                }
                out.force(fence.to_string());
                report.source = Some(shown.join("\n"));
            }
            None => out.note(
                "source is not readable (file changed or missing since the index)".to_string(),
            ),
        }
    }
    out.finish(report, LEFT_OUT)
}

/// ` L12`, ` L3,9`, ` L3,9,12,… (7 sites)`: the lines of a use, compactly.
pub fn lines_note(lines: &[u32]) -> String {
    match lines {
        [] => String::new(),
        [one] => format!(" L{one}"),
        many if many.len() <= 4 => format!(
            " L{}",
            many.iter()
                .map(u32::to_string)
                .collect::<Vec<_>>()
                .join(",")
        ),
        many => format!(
            " L{},… ({} sites)",
            many[..3]
                .iter()
                .map(u32::to_string)
                .collect::<Vec<_>>()
                .join(","),
            many.len()
        ),
    }
}
