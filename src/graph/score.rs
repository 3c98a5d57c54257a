//! Node and edge scores (DESIGN §3), computed at query time from stored measures so recency is
//! always current. Every score can explain itself through its parts.

use super::{Edge, Node};

const SECONDS_PER_DAY: f64 = 86_400.0;

/// Use of a node by assistants (from hooks and tool calls).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Access {
    pub count: u64,
    /// Seconds since the epoch of the last access, 0 if never.
    pub last: i64,
}

/// A node's score and its parts.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Score {
    pub recency: f64,
    pub frequency: f64,
    pub centrality: f64,
    pub side_effect_cost: f64,
}

impl Score {
    pub fn total(&self) -> f64 {
        self.recency + self.frequency + self.centrality + self.side_effect_cost
    }

    /// `2.41 = r0.52 f0.00 c1.79 s0.10`: compact enough to show beside every ranked item.
    pub fn explain(&self) -> String {
        format!(
            "{:.2} = r{:.2} f{:.2} c{:.2} s{:.2}",
            self.total(),
            self.recency,
            self.frequency,
            self.centrality,
            self.side_effect_cost
        )
    }
}

/// Scores a node at time `now` (seconds since the epoch).
pub fn node_score(node: &Node, access: Access, now: i64) -> Score {
    Score {
        recency: recency(node.last_change.max(access.last), now),
        frequency: (access.count as f64).ln_1p(),
        centrality: node.impact.max(1.0).ln(),
        side_effect_cost: (node.side_effects.len() as f64).ln_1p() * 0.5,
    }
}

/// Recency at `now` of a change or use at `last` (0: never): halves in about five days, and
/// never falls as `last` grows.
pub fn recency(last: i64, now: i64) -> f64 {
    if last > 0 {
        let age_days = ((now - last).max(0) as f64) / SECONDS_PER_DAY;
        (-age_days / 7.0).exp()
    } else {
        0.0
    }
}

/// Scores an edge from its ends' scores.
pub fn edge_score(edge: &Edge, src: &Score, dst: &Score) -> f64 {
    let causal = if edge.kind.is_causal() { 1.0 } else { 0.0 };
    let cost = if edge.kind.is_costly() { 0.5 } else { 0.0 };
    let observations = edge.lines.len().max(1) as f64;
    src.total() + dst.total() + causal + cost + observations.ln_1p() * 0.3
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::NodeKind;

    fn node(impact: f64, effects: usize, last_change: i64) -> Node {
        Node {
            id: "a.py".into(),
            kind: NodeKind::File,
            path: "a.py".into(),
            name: "a.py".into(),
            start_line: 1,
            end_line: 1,
            signature: None,
            doc: None,
            is_test: false,
            side_effects: vec!["network".into(); effects],
            mutations: 0,
            reach: 0,
            causal_in: 0,
            impact,
            last_change,
            parent: None,
            untyped_calls: Box::default(),
        }
    }

    #[test]
    fn parts_follow_the_design_formulas() {
        let now = 1_000 * 86_400;
        let score = node_score(
            &node(24.0, 2, now - 7 * 86_400),
            Access { count: 4, last: 0 },
            now,
        );
        assert!((score.recency - (-1.0f64).exp()).abs() < 1e-9);
        assert!((score.frequency - 5f64.ln()).abs() < 1e-9);
        assert!((score.centrality - 24f64.ln()).abs() < 1e-9);
        assert!((score.side_effect_cost - 3f64.ln() * 0.5).abs() < 1e-9);
        assert!(
            score
                .explain()
                .starts_with(&format!("{:.2} = r0.37", score.total()))
        );
    }

    #[test]
    fn centrality_is_zero_for_a_node_nothing_depends_on() {
        let lone = node_score(&node(1.0, 0, 0), Access::default(), 0);
        let used = node_score(&node(3.5, 0, 0), Access::default(), 0);
        assert_eq!(lone.centrality, 0.0);
        assert!((used.centrality - 3.5f64.ln()).abs() < 1e-9);
    }

    #[test]
    fn a_recent_access_refreshes_recency() {
        let now = 1_000 * 86_400;
        let old = node(1.0, 0, now - 70 * 86_400);
        let stale = node_score(&old, Access::default(), now);
        let touched = node_score(
            &old,
            Access {
                count: 1,
                last: now,
            },
            now,
        );
        assert!(stale.recency < 0.001);
        assert!((touched.recency - 1.0).abs() < 1e-9);
    }
}
