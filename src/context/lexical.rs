//! Lexical focus: how well each node matches a task sentence ("all teardown callbacks are
//! called despite errors"), by BM25 over the words of symbol names, paths, signatures and
//! docstrings, spread one step along the causal graph and to the files that hold the matches.
//!
//! Identifiers are split into words (`do_teardown_request` → do, teardown, request;
//! `getHTTPResponse` → get, http, response) and words are reduced to a light stem (callbacks →
//! callback, called → call), the same way for the sentence and for the code, so a task written
//! in English finds code written in identifiers.

use rustc_hash::FxHashMap;

use super::lexicon::Lexicon;
use crate::graph::{Graph, Node, NodeKind};

/// BM25's term-frequency saturation (the usual value) and length normalisation, weaker than
/// the usual 0.75 because code documents differ in length far more than prose: a long module
/// is not less about its topic. Chosen on the replay benchmark's zod commits (localization
/// recall 0.69 at 0.75/0.75, 0.74 at these).
const K1: f64 = 1.2;
pub(super) const B_SYMBOLS: f64 = 0.5;
pub(super) const B_FILES: f64 = 0.3;

/// How much each part of a node counts: a word of the name says most about what it is.
const NAME_WEIGHT: f64 = 3.0;
pub(super) const PATH_WEIGHT: f64 = 1.5;
const TEXT_WEIGHT: f64 = 1.0;

/// A file holding a matching symbol matches almost as well as the symbol.
const FILE_FROM_SYMBOL: f64 = 0.9;
/// Each further matching symbol in a file adds a little, up to a cap.
const FILE_EXTRA_PER_SYMBOL: f64 = 0.04;
const FILE_EXTRA_CAP: f64 = 0.12;
/// The best matches lend a share of their relevance to their direct causal neighbours (callers,
/// callees, bases); the share shrinks with the neighbour's degree, so a hub is not pulled in by
/// every match.
const SEEDS: usize = 20;
const NEIGHBOUR_SHARE: f64 = 0.35;
/// A memory that matches the focus lends its anchors this relevance.
const MEMORY_ANCHOR: f64 = 0.5;

/// Words that carry no topic in a task sentence or a docstring.
const STOP_WORDS: &[&str] = &[
    "a", "an", "the", "and", "or", "but", "for", "with", "that", "this", "these", "those", "from",
    "into", "onto", "to", "of", "in", "on", "at", "by", "as", "is", "are", "was", "were", "be",
    "been", "being", "it", "its", "if", "then", "else", "when", "how", "why", "what", "which",
    "who", "not", "no", "all", "any", "each", "every", "some", "so", "do", "does", "did", "done",
    "can", "could", "should", "would", "will", "may", "might", "must", "also", "only", "just",
    "than", "too", "very", "there", "here", "we", "you", "they", "them", "our", "your", "their",
    "fix", "add", "make", "use", "new", "code", "file", "bug", "issue", "change", "update",
    "remove", "support", "allow", "handle", "instead", "despite", "now", "more", "less", "get",
    "set", "self", "cls", "none", "true", "false", "return", "returns", "param", "type",
];

/// The relevance of every node to the focus, in [0, 1], by the node's position in the graph;
/// empty when the focus holds no word and no memory anchor. With the graph's lexicon only the
/// documents holding the focus's words are read; without, every node is split (the same
/// scores).
pub(super) fn relevance(
    graph: &Graph,
    lexicon: Option<&Lexicon>,
    words: &[String],
    anchors: &[String],
) -> Vec<f64> {
    let terms = query_terms(words);
    if terms.is_empty() && anchors.is_empty() {
        return Vec::new();
    }
    let mut relevance = match lexicon {
        Some(lexicon) => lexicon.bm25(graph, &terms),
        None => bm25(graph, &terms),
    };
    spread_to_neighbours(graph, &mut relevance);
    for anchor in anchors {
        let path = anchor.split("::").next().unwrap_or(anchor);
        for id in [anchor.as_str(), path] {
            if let Some(i) = graph.node_index(id) {
                relevance[i] = relevance[i].max(MEMORY_ANCHOR);
            }
        }
    }
    lift_files(graph, &mut relevance);
    relevance
}

/// The stems of the focus words, each once.
fn query_terms(words: &[String]) -> Vec<String> {
    let mut terms: Vec<String> = Vec::new();
    for word in words {
        for term in words_of(word) {
            if !terms.contains(&term) {
                terms.push(term);
            }
        }
    }
    terms
}

/// A document's weighted length and its weighted counts of the query terms.
#[derive(Debug, Clone, Default)]
pub(super) struct Bag {
    pub(super) length: f64,
    pub(super) counts: Vec<f64>,
}

impl Bag {
    fn add(&mut self, words: &[String], weight: f64, terms: &[String]) {
        for word in words {
            self.length += weight;
            if let Some(t) = terms.iter().position(|t| t == word) {
                self.counts[t] += weight;
            }
        }
    }

    fn merge(&mut self, other: &Bag) {
        self.length += other.length;
        for (mine, theirs) in self.counts.iter_mut().zip(&other.counts) {
            *mine += theirs;
        }
    }
}

/// BM25 against the terms, scaled so the best match is 1, in two collections: symbols (a
/// symbol's name, signature and docstring) and files (a file's path and everything its
/// symbols say), so a file is found by what it holds as well as by its best symbol.
pub(super) fn bm25(graph: &Graph, terms: &[String]) -> Vec<f64> {
    let empty = Bag {
        length: 0.0,
        counts: vec![0.0; terms.len()],
    };
    let mut symbols: Vec<Option<Bag>> = vec![None; graph.nodes.len()];
    let mut files: FxHashMap<&str, Bag> = FxHashMap::default();
    for (i, node) in graph.nodes.iter().enumerate() {
        if !is_document(node) {
            continue;
        }
        let mut bag = empty.clone();
        for (words, weight) in weighted_words(node) {
            bag.add(&words, weight, terms);
        }
        let file = files.entry(&*node.path).or_insert_with(|| {
            let mut bag = empty.clone();
            bag.add(&words_of(&node.path), PATH_WEIGHT, terms);
            bag
        });
        file.merge(&bag);
        if node.kind != NodeKind::File {
            symbols[i] = Some(bag);
        }
    }
    let mut relevance = scores(&symbols, terms.len(), B_SYMBOLS);
    let file_bags: Vec<Option<Bag>> = graph
        .nodes
        .iter()
        .map(|n| match n.kind {
            NodeKind::File => files.remove(&*n.path),
            _ => None,
        })
        .collect();
    for (i, score) in scores(&file_bags, terms.len(), B_FILES)
        .into_iter()
        .enumerate()
    {
        if file_bags[i].is_some() {
            relevance[i] = score;
        }
    }
    relevance
}

/// A document's words, each part with its weight: a symbol's name and signature, and a node's
/// docstring.
pub(super) fn weighted_words(node: &Node) -> Vec<(Vec<String>, f64)> {
    let mut parts = Vec::new();
    // A protocol hook's name (`__hash__`, `__eq__`) says what the language calls it for, not
    // what the code is about.
    let hook = node.name.len() > 4 && node.name.starts_with("__") && node.name.ends_with("__");
    if node.kind != NodeKind::File && !hook {
        parts.push((words_of(&node.name), NAME_WEIGHT));
        if let Some(signature) = &node.signature {
            parts.push((words_of(signature), TEXT_WEIGHT));
        }
    }
    if let Some(doc) = &node.doc {
        parts.push((words_of(doc), TEXT_WEIGHT));
    }
    parts
}

/// Okapi BM25 of one document, by the query terms' idf and the collection's average length.
pub(super) fn bm25_of(bag: &Bag, idf: &[f64], average: f64, b: f64) -> f64 {
    let norm = K1 * (1.0 - b + b * bag.length / average);
    bag.counts
        .iter()
        .enumerate()
        .filter(|(_, f)| **f > 0.0)
        .map(|(t, &f)| idf[t] * f * (K1 + 1.0) / (f + norm))
        .sum()
}

/// Okapi BM25 of each document (`None`: not in the collection, scored 0), scaled so the best
/// is 1.
fn scores(documents: &[Option<Bag>], terms: usize, b: f64) -> Vec<f64> {
    let mut scores = vec![0.0; documents.len()];
    let present: Vec<&Bag> = documents.iter().flatten().collect();
    if present.is_empty() {
        return scores;
    }
    let n = present.len() as f64;
    let average = (present.iter().map(|b| b.length).sum::<f64>() / n).max(1.0);
    let idf: Vec<f64> = (0..terms)
        .map(|t| {
            let df = present.iter().filter(|b| b.counts[t] > 0.0).count() as f64;
            (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
        })
        .collect();
    let mut best = 0.0f64;
    for (i, bag) in documents.iter().enumerate() {
        let Some(bag) = bag else { continue };
        let score = bm25_of(bag, &idf, average, b);
        scores[i] = score;
        best = best.max(score);
    }
    if best > 0.0 {
        for s in &mut scores {
            *s /= best;
        }
    }
    scores
}

/// Files and symbols of the project are documents; external modules are not.
pub(super) fn is_document(node: &Node) -> bool {
    node.kind != NodeKind::External && (node.kind == NodeKind::File || node.kind.is_symbol())
}

/// The best-matching symbols lend relevance to their causal neighbours.
fn spread_to_neighbours(graph: &Graph, relevance: &mut [f64]) {
    let mut seeds: Vec<(usize, f64)> = relevance
        .iter()
        .enumerate()
        .filter(|&(i, &r)| r > 0.0 && graph.nodes[i].kind.is_symbol())
        .map(|(i, &r)| (i, r))
        .collect();
    seeds.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    seeds.truncate(SEEDS);
    let degree = |id: &str| {
        graph
            .outgoing(id)
            .chain(graph.incoming(id))
            .filter(|e| e.kind.is_causal())
            .count()
    };
    let mut lent: Vec<(usize, f64)> = Vec::new();
    for (seed, r) in seeds {
        let id = &graph.nodes[seed].id;
        for edge in graph
            .outgoing(id)
            .chain(graph.incoming(id))
            .filter(|e| e.kind.is_causal())
        {
            let other = if *edge.src == **id {
                &edge.dst
            } else {
                &edge.src
            };
            let Some(j) = graph.node_index(other) else {
                continue;
            };
            if !graph.nodes[j].kind.is_symbol() || graph.nodes[j].kind == NodeKind::External {
                continue;
            }
            let share = NEIGHBOUR_SHARE * r / (1.0 + (degree(other) as f64).ln_1p());
            lent.push((j, share));
        }
    }
    for (j, share) in lent {
        relevance[j] = relevance[j].max(share);
    }
}

/// A file is as relevant as its own words or, a little less, its best symbol, plus a little
/// for each further matching symbol.
fn lift_files(graph: &Graph, relevance: &mut [f64]) {
    let mut by_file: FxHashMap<&str, (f64, usize)> = FxHashMap::default();
    for (i, node) in graph.nodes.iter().enumerate() {
        if relevance[i] > 0.0 && node.kind.is_symbol() && node.kind != NodeKind::External {
            let entry = by_file.entry(&*node.path).or_insert((0.0, 0));
            entry.0 = entry.0.max(relevance[i]);
            entry.1 += 1;
        }
    }
    for (path, (best, matches)) in by_file {
        if let Some(i) = graph.node_index(path) {
            let extra = (FILE_EXTRA_PER_SYMBOL * (matches - 1) as f64).min(FILE_EXTRA_CAP);
            let lifted = (FILE_FROM_SYMBOL * best + extra).min(1.0);
            relevance[i] = relevance[i].max(lifted);
        }
    }
}

/// The stemmed words of a text or identifier, stop words left out.
pub(super) fn words_of(text: &str) -> Vec<String> {
    let mut words = Vec::new();
    for part in text.split(|c: char| !c.is_alphanumeric()) {
        for word in crate::words::humps(part) {
            let word = word.to_lowercase();
            if word.len() < 2 || word.chars().all(|c| c.is_ascii_digit()) {
                continue;
            }
            let stemmed = crate::words::stem(&word);
            if STOP_WORDS.contains(&word.as_str()) || stop_stems().contains(&stemmed) {
                continue;
            }
            words.push(stemmed);
        }
    }
    words
}

/// The stop words' stems, so "handles" is left out as "handle" is.
fn stop_stems() -> &'static std::collections::HashSet<String> {
    static STEMS: std::sync::OnceLock<std::collections::HashSet<String>> =
        std::sync::OnceLock::new();
    STEMS.get_or_init(|| STOP_WORDS.iter().map(|w| crate::words::stem(w)).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers_and_sentences_meet_in_the_same_words() {
        assert_eq!(
            words_of("do_teardown_request"),
            vec!["teardown".to_string(), "request".to_string()]
        );
        assert_eq!(words_of("getHTTPResponse"), vec!["http", "respons"]);
        assert_eq!(
            words_of("all teardown callbacks are called despite errors"),
            vec!["teardown", "callback", "call", "error"]
        );
        assert_eq!(words_of("renders"), words_of("render"));
        assert_eq!(words_of("rendered"), words_of("rendering"));
        assert_eq!(words_of("rendered"), vec!["render"]);
        assert!(
            words_of("handles").is_empty(),
            "a stop word's forms are stop words"
        );
        assert_eq!(words_of("class"), vec!["class"]);
        assert_eq!(words_of("queries"), words_of("query"));
    }
}
