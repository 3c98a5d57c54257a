//! Everything cairn knows about one node: what it is, its score and why, who depends on it and
//! what it depends on (with call-site lines), the tests that reach it, its blast radius, and
//! its source on request — inside a token budget.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{ScoreParts, Scorer, location, nearest_dependents_at, strongest_dependents_kept};
use crate::answer::{Answer, LeftOut, Page};
use crate::graph::score::Score;
use crate::graph::{self, Edge, EdgeKind, Node, NodeKind, possible};

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

/// A node that calls a method of the expanded one's name on a receiver of unknown type.
#[derive(Debug, Clone, Serialize)]
pub struct PossibleCaller {
    pub id: String,
    pub kind: String,
    pub lines: Vec<u32>,
    /// The call as its receiver's last part reads (`root_queryset.count()`).
    pub call: String,
    /// Why it may reach this method rather than another of its name, strongest first.
    pub evidence: Vec<String>,
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
    /// Calls of the method's name on a receiver of unknown type, best evidence first: they may
    /// reach it (or another method of that name). Only for methods.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub possible_callers: Vec<PossibleCaller>,
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
pub(crate) type SourceReader<'a> = &'a dyn Fn(&Node) -> Option<String>;

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
    let wanted = Wanted(include);
    // The whole radius is counted at index time (`reach`); the nearest part is enough to find
    // the tests that reach the node.
    let radius = nearest_dependents_at(scorer.graph(), &node.id, RADIUS_WALK);
    if radius.len() < node.reach as usize {
        notes.push(format!(
            "tests are taken from the nearest {} of {} reachable nodes",
            radius.len(),
            node.reach
        ));
    }
    let body = select(scorer, node, wanted, &radius);
    let out = Page::new(max_tokens, notes);
    write(
        out,
        body,
        node,
        &scorer.score(node),
        known,
        wanted,
        read_source,
    )
}

/// The sections a caller asked for: all but source when none were named.
#[derive(Debug, Clone, Copy)]
struct Wanted<'a>(&'a [Include]);

impl Wanted<'_> {
    fn has(self, part: Include) -> bool {
        if self.0.is_empty() {
            part != Include::Source
        } else {
            self.0.contains(&part)
        }
    }
}

/// Everything the graph says about `node`, every list whole and best first; `radius` is its
/// nearest dependents (positions), nearest first.
fn select(scorer: &Scorer, node: &Node, wanted: Wanted, radius: &[usize]) -> ExpandBody {
    let near = Neighbours { scorer, node };
    let only = |part: Include, links: Vec<Link>| if wanted.has(part) { links } else { Vec::new() };
    ExpandBody {
        id: node.id.to_string(),
        kind: node.kind.as_str().to_string(),
        path: node.path.to_string(),
        start_line: node.start_line,
        end_line: node.end_line,
        signature: node.signature.clone(),
        doc: node.doc.clone(),
        is_test: node.is_test,
        score: scorer.score(node).into(),
        side_effects: node.side_effects.clone(),
        state_writes: node.mutations,
        members: near.linked(near.outgoing(EdgeKind::Contains), dst),
        imports: near.linked(near.outgoing(EdgeKind::Imports), dst),
        importers: near.linked(near.incoming(EdgeKind::Imports), src),
        callers: only(
            Include::Callers,
            near.linked(near.incoming(EdgeKind::Calls), src),
        ),
        possible_callers: if wanted.has(Include::Callers) {
            near.possible_callers()
        } else {
            Vec::new()
        },
        callees: only(
            Include::Callees,
            near.linked(near.outgoing(EdgeKind::Calls), dst),
        ),
        bases: near.linked(near.outgoing(EdgeKind::Inherits), dst),
        subclasses: near.linked(near.incoming(EdgeKind::Inherits), src),
        tests: only(Include::Tests, near.tests(radius)),
        blast_radius: node.reach as usize,
        top_dependents: near.top_dependents(),
        memories: Vec::new(),
        history: Vec::new(),
        source: None,
    }
}

fn dst(link: &graph::Link) -> usize {
    link.dst
}

fn src(link: &graph::Link) -> usize {
    link.src
}

/// The node's edges and the nodes at their far ends, ranked by score.
struct Neighbours<'s, 'g> {
    scorer: &'s Scorer<'g>,
    node: &'s Node,
}

impl<'g> Neighbours<'_, 'g> {
    fn kind_of(&self, id: &str) -> String {
        self.scorer
            .graph()
            .node(id)
            .map_or("unknown", |n| n.kind.as_str())
            .to_string()
    }

    /// The node's position in the graph.
    fn at(&self) -> usize {
        self.scorer.graph().position(self.node)
    }

    fn outgoing(&self, kind: EdgeKind) -> Vec<graph::Link<'g>> {
        self.scorer
            .graph()
            .links_out(self.at())
            .filter(|l| l.edge.kind == kind)
            .collect()
    }

    fn incoming(&self, kind: EdgeKind) -> Vec<graph::Link<'g>> {
        self.scorer
            .graph()
            .links_in(self.at())
            .filter(|l| l.edge.kind == kind)
            .collect()
    }

    /// The far ends of `links`, best first, with the lines of each edge.
    fn linked(&self, links: Vec<graph::Link<'g>>, far: fn(&graph::Link) -> usize) -> Vec<Link> {
        // Each far end ranked once, by position, not per comparison (a hub has thousands).
        let nodes = &self.scorer.graph().nodes;
        let mut ranked: Vec<(f64, usize, &Edge)> = links
            .iter()
            .map(|l| (self.scorer.score_at(far(l)).total(), far(l), l.edge))
            .collect();
        ranked.sort_by(|a, b| {
            b.0.total_cmp(&a.0)
                .then_with(|| nodes[a.1].id.cmp(&nodes[b.1].id))
        });
        ranked
            .into_iter()
            .map(|(_, at, edge)| Link {
                id: nodes[at].id.to_string(),
                kind: nodes[at].kind.as_str().to_string(),
                lines: edge.lines.to_vec(),
            })
            .collect()
    }

    /// Tests that assert on the node or, for a file or class, on its members (`asserts_on`),
    /// then test files in its radius (`reaches`); only files a test runner collects.
    fn tests(&self, radius: &[usize]) -> Vec<Link> {
        let graph = self.scorer.graph();
        let mut asserting = self.incoming(EdgeKind::AssertsOn);
        for member in self.outgoing(EdgeKind::Contains) {
            asserting.extend(
                graph
                    .links_in(member.dst)
                    .filter(|l| l.edge.kind == EdgeKind::AssertsOn),
            );
        }
        let mut tests: Vec<Link> = self.linked(asserting, src);
        tests.dedup_by(|a, b| a.id == b.id);
        for test in &mut tests {
            test.kind = "asserts_on".to_string();
        }
        // Fixtures and helpers of the test trees (conftest.py, test apps) are not tests to run.
        tests.retain(|t| runs(t.id.split("::").next().unwrap_or(&t.id)));
        for &i in radius {
            let node = &graph.nodes[i];
            let id = &*node.id;
            if node.is_test
                && node.kind == NodeKind::File
                && runs(id)
                && !tests.iter().any(|t| t.id == id)
            {
                tests.push(Link {
                    id: id.to_string(),
                    kind: "reaches".to_string(),
                    lines: Vec::new(),
                });
            }
        }
        tests
    }

    /// For a method, the calls of its name on receivers of unknown type
    /// ([`possible::possible_callers`]): those with evidence before the weak ones, code before
    /// tests (tests are listed as tests too), the strongest evidence first, then the caller's
    /// score.
    fn possible_callers(&self) -> Vec<PossibleCaller> {
        let graph = self.scorer.graph();
        let mut ranked: Vec<(possible::PossibleCall, u32, f64)> =
            possible::possible_callers(graph, self.node)
                .into_iter()
                .map(|p| {
                    let weight = p.weight();
                    let score = self.scorer.score(p.caller).total();
                    (p, weight, score)
                })
                .collect();
        ranked.sort_by(|(a, wa, sa), (b, wb, sb)| {
            let key = |p: &possible::PossibleCall, w: u32| {
                (w < possible::WEAK, p.caller.is_test, std::cmp::Reverse(w))
            };
            key(a, *wa)
                .cmp(&key(b, *wb))
                .then_with(|| sb.total_cmp(sa))
                .then_with(|| (&a.caller.id, &a.call.lines).cmp(&(&b.caller.id, &b.call.lines)))
        });
        ranked
            .into_iter()
            .map(|(p, _, _)| PossibleCaller {
                id: p.caller.id.to_string(),
                kind: p.caller.kind.as_str().to_string(),
                lines: p.call.lines.to_vec(),
                call: p.written(),
                evidence: p
                    .evidence
                    .iter()
                    .map(possible::Evidence::describe)
                    .collect(),
            })
            .collect()
    }

    /// The strongest few dependents outside the node's file and its tests: direct users
    /// first, highest impact first among equally near ones.
    fn top_dependents(&self) -> Vec<Link> {
        let graph = self.scorer.graph();
        let elsewhere = |n: &Node| !n.is_test && n.path != self.node.path;
        strongest_dependents_kept(
            graph,
            &self.node.id,
            RADIUS_WALK,
            TOP_DEPENDENTS,
            &elsewhere,
        )
        .into_iter()
        .map(|d| Link {
            id: d.id.to_string(),
            kind: self.kind_of(d.id),
            lines: Vec::new(),
        })
        .collect()
    }
}

/// How many of the best-ranked dependents an expansion lists.
const TOP_DEPENDENTS: usize = 8;

/// Writes the expansion: the node's heading, memories, history, each list of links within
/// its share of the budget (cut to what was written), and the source when asked.
fn write(
    mut out: Page,
    mut body: ExpandBody,
    node: &Node,
    score: &Score,
    known: Known,
    wanted: Wanted,
    read_source: SourceReader,
) -> ExpandReport {
    write_heading(&mut out, node, score);
    let share = out.remaining() / 5;
    let Known { memories, history } = known;
    if wanted.has(Include::Memories) && !memories.is_empty() {
        let heading = format!("## Memories ({})", memories.len());
        let kept = write_until_full(&mut out, heading, memories.iter().map(|m| m.line()), share);
        body.memories = memories[..kept].to_vec();
    }
    if wanted.has(Include::History) && !history.is_empty() {
        let heading = "## History".to_string();
        let kept = write_until_full(&mut out, heading, history.iter().cloned(), share / 2);
        body.history = history[..kept].to_vec();
    }
    let radius = body.blast_radius;
    if !body.callers.is_empty() {
        let heading = format!("## Callers ({})", body.callers.len());
        write_links(&mut out, heading, &mut body.callers, share);
    }
    if !body.possible_callers.is_empty() {
        let heading = format!(
            "## Possible callers, receiver type unknown ({})",
            body.possible_callers.len()
        );
        write_list(&mut out, heading, &mut body.possible_callers, share, |c| {
            let mut line = format!(
                "- {} [{}]{} `{}`",
                c.id,
                c.kind,
                lines_note(&c.lines),
                c.call
            );
            for evidence in &c.evidence {
                line.push_str(" · ");
                line.push_str(evidence);
            }
            line
        });
    }
    for (title, links) in [
        ("Tests", &mut body.tests),
        ("Callees", &mut body.callees),
        ("Importers", &mut body.importers),
        ("Subclasses", &mut body.subclasses),
        ("Bases", &mut body.bases),
        ("Imports", &mut body.imports),
        ("Top dependents (blast radius)", &mut body.top_dependents),
        ("Members", &mut body.members),
    ] {
        if links.is_empty() {
            continue;
        }
        let heading = if title.starts_with("Top dependents") {
            format!("## {title}: {radius} nodes reachable")
        } else {
            format!("## {title} ({})", links.len())
        };
        write_links(&mut out, heading, links, share);
    }
    if wanted.has(Include::Source) {
        body.source = write_source(&mut out, node, read_source);
    }
    out.finish(body, LEFT_OUT)
}

fn write_heading(out: &mut Page, node: &Node, score: &Score) {
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
        "score {} · impact {:.1} · reach {} · deps {} · side effects: {} · state writes: {}",
        score.explain(),
        node.impact,
        node.reach,
        node.causal_in,
        if node.side_effects.is_empty() {
            "none".to_string()
        } else {
            node.side_effects.join(", ")
        },
        node.mutations
    ));
}

/// Writes a heading and then lines until one does not fit in `share`; returns how many lines
/// were written. A heading that does not fit leaves out every line.
fn write_until_full(
    out: &mut Page,
    heading: String,
    lines: impl ExactSizeIterator<Item = String>,
    share: usize,
) -> usize {
    let total = lines.len();
    if !out.push(heading) {
        out.dropped += total;
        return 0;
    }
    let limit = out.used() + share;
    let mut kept = 0;
    for line in lines {
        if !out.push_until(line, limit) {
            break;
        }
        kept += 1;
    }
    kept
}

/// Writes a list of links within `share`, ending with a count of those left out, and cuts
/// the list to what was written.
fn write_links(out: &mut Page, heading: String, links: &mut Vec<Link>, share: usize) {
    write_list(out, heading, links, share, |link| {
        format!(
            "- {}{}{}",
            link.id,
            if link.kind.is_empty() {
                String::new()
            } else {
                format!(" [{}]", link.kind)
            },
            lines_note(&link.lines)
        )
    });
}

/// Writes a heading and a line per item within `share`, ending with a count of those left
/// out, and cuts the list to what was written.
fn write_list<T>(
    out: &mut Page,
    heading: String,
    items: &mut Vec<T>,
    share: usize,
    line: impl Fn(&T) -> String,
) {
    let total = items.len();
    if !out.push(heading) {
        out.dropped += total;
        items.clear();
        return;
    }
    let limit = out.used() + share;
    let mut kept = 0;
    for item in items.iter() {
        if !out.push_until(line(item), limit) {
            break;
        }
        kept += 1;
    }
    if kept < total {
        // The line that did not fit is counted already; the "more" line stands for it.
        out.dropped += total - kept - 1;
        items.truncate(kept);
        out.push(format!("- … {} more", total - kept));
    }
}

/// Writes the node's numbered source lines while the budget lasts; returns what was shown.
fn write_source(out: &mut Page, node: &Node, read_source: SourceReader) -> Option<String> {
    let Some(text) = read_source(node) else {
        out.note("source is not readable (file changed or missing since the index)");
        return None;
    };
    out.push("## Source".to_string());
    let fence = "```";
    out.push(fence.to_string());
    let lines: Vec<&str> = text.lines().collect();
    let mut shown = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let numbered = format!("{:>5} {line}", node.start_line as usize + i);
        if out.remaining() < 20 || !out.push(numbered) {
            out.note(format!("source cut after {} of {} lines", i, lines.len()));
            break;
        }
        shown.push(*line);
    }
    out.force(fence.to_string());
    Some(shown.join("\n"))
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

/// Whether a test runner collects the file at `path` (not a fixture or helper).
fn runs(path: &str) -> bool {
    crate::languages::Registry::get().test_kind(path) == Some(true)
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;
    use crate::context::testing::shop;

    fn ids(links: &[Link]) -> Vec<String> {
        links
            .iter()
            .map(|l| format!("{} [{}]", l.id, l.kind))
            .collect()
    }

    #[test]
    fn selection_finds_callers_tests_and_dependents() {
        let graph = shop();
        let access = HashMap::new();
        let scorer = Scorer::new(&graph, &access, 0);
        let node = graph.node("shop/pricing.py::price_of").unwrap();
        let radius = nearest_dependents_at(&graph, &node.id, RADIUS_WALK);
        let body = select(&scorer, node, Wanted(&[]), &radius);
        assert_eq!(
            ids(&body.callers),
            [
                "shop/views.py::checkout [function]",
                "tests/test_pricing.py::test_price [function]"
            ]
        );
        assert_eq!(body.callers[0].lines, [4]);
        assert_eq!(ids(&body.tests), ["tests/test_pricing.py [asserts_on]"]);
        // Tests are listed as tests, not as dependents.
        assert_eq!(
            ids(&body.top_dependents),
            ["shop/views.py [file]", "shop/views.py::checkout [function]"]
        );
        assert!(body.callees.is_empty() && body.members.is_empty());

        let only_source = select(&scorer, node, Wanted(&[Include::Source]), &radius);
        assert!(only_source.callers.is_empty() && only_source.tests.is_empty());
        assert_eq!(only_source.top_dependents.len(), body.top_dependents.len());
    }
}
