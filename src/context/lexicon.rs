//! The words of a graph's documents, kept once per graph so a focused pack reads only the
//! documents that hold the focus's words instead of splitting and stemming every node's name,
//! signature and docstring per call.
//!
//! Documents are grouped by file (a file's symbols, and the file itself with its path's
//! words): a graph made from another by a patch reuses the groups of the files whose nodes
//! say the same, so only changed files are split again. Counts and lengths are sums of the
//! word weights (multiples of one half), exact in floating point whatever the order, so the
//! scores are exactly those of scanning every node ([`super::lexical`]'s reference).

use std::hash::{Hash, Hasher};
use std::sync::{Arc, RwLock};

use rustc_hash::{FxHashMap, FxHasher};

use super::lexical::{self, Bag};
use crate::graph::{Graph, Node, NodeKind};

/// A graph's documents by their words.
pub struct Lexicon {
    /// Term ids, shared with the lexicons made from this one (a stem keeps its id).
    terms: Arc<RwLock<FxHashMap<Box<str>, u32>>>,
    /// Each file's documents.
    groups: Vec<Arc<Group>>,
    /// Where the documents' nodes are in this graph (a reused group's documents may sit
    /// elsewhere than in the graph it was made for): each group's symbols from
    /// `symbols_at[starts[g]..]`, its file at `file_at[g]`.
    symbols_at: Vec<u32>,
    starts: Vec<u32>,
    file_at: Vec<u32>,
    /// Per term id: the groups holding it (ascending) and how many symbol and file
    /// documents hold it.
    postings: Vec<Posting>,
    symbols: Collection,
    files: Collection,
}

impl std::fmt::Debug for Lexicon {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lexicon")
            .field("groups", &self.groups.len())
            .field("terms", &self.postings.len())
            .finish()
    }
}

/// A collection's size: its documents and their summed length.
#[derive(Debug, Default, Clone, Copy)]
struct Collection {
    documents: usize,
    length: f64,
}

impl Collection {
    fn average(&self) -> f64 {
        (self.length / self.documents as f64).max(1.0)
    }
}

#[derive(Debug, Default, Clone)]
struct Posting {
    groups: Vec<u32>,
    symbol_documents: u32,
    file_documents: u32,
}

/// The documents of one path: its symbols and, when the graph has the file's node, the file.
#[derive(Debug)]
struct Group {
    path: Arc<str>,
    /// What the group was made from (ids, kinds, names, signatures, docstrings).
    fingerprint: u64,
    symbols: Vec<Document>,
    file: Option<Document>,
}

/// One document: its weighted length and weighted count per term (by term id).
#[derive(Debug)]
struct Document {
    length: f64,
    counts: Box<[(u32, f32)]>,
}

impl Document {
    fn count(&self, term: u32) -> f64 {
        self.counts
            .binary_search_by_key(&term, |&(t, _)| t)
            .map_or(0.0, |at| f64::from(self.counts[at].1))
    }
}

impl Lexicon {
    /// The lexicon of `graph`, reusing the groups of `previous` (a lexicon of an earlier graph
    /// of the same index) whose files say the same.
    pub fn of(graph: &Graph, previous: Option<&Lexicon>) -> Lexicon {
        let mut by_path: FxHashMap<&str, Vec<usize>> = FxHashMap::default();
        let mut paths: Vec<&str> = Vec::new();
        for (i, node) in graph.nodes.iter().enumerate() {
            if !lexical::is_document(node) {
                continue;
            }
            by_path
                .entry(&node.path)
                .or_insert_with(|| {
                    paths.push(&node.path);
                    Vec::new()
                })
                .push(i);
        }
        let reusable: FxHashMap<&str, &Arc<Group>> = previous
            .map(|p| p.groups.iter().map(|g| (&*g.path, g)).collect())
            .unwrap_or_default();
        let terms = previous.map_or_else(Default::default, |p| p.terms.clone());
        let mut groups = Vec::with_capacity(paths.len());
        let (mut symbols_at, mut starts, mut file_at) = (Vec::new(), Vec::new(), Vec::new());
        {
            let mut ids = terms.write().unwrap_or_else(|e| e.into_inner());
            for path in paths {
                let at = &by_path[path];
                starts.push(symbols_at.len() as u32);
                symbols_at.extend(
                    at.iter()
                        .filter(|&&i| graph.nodes[i].kind != NodeKind::File)
                        .map(|&i| i as u32),
                );
                file_at.push(
                    at.iter()
                        .find(|&&i| graph.nodes[i].kind == NodeKind::File)
                        .map_or(u32::MAX, |&i| i as u32),
                );
                let members: Vec<&Node> = at.iter().map(|&i| &*graph.nodes[i]).collect();
                let fingerprint = fingerprint(path, &members);
                match reusable.get(path) {
                    Some(group) if group.fingerprint == fingerprint => {
                        groups.push((*group).clone())
                    }
                    _ => groups.push(Arc::new(Group::of(
                        &graph.nodes[at[0]].path,
                        fingerprint,
                        &members,
                        &mut ids,
                    ))),
                }
            }
        }
        let size = terms.read().unwrap_or_else(|e| e.into_inner()).len();
        let mut postings = vec![Posting::default(); size];
        let (mut symbols, mut files) = (Collection::default(), Collection::default());
        let mut held: Vec<u32> = Vec::new();
        for (g, group) in groups.iter().enumerate() {
            held.clear();
            for document in &group.symbols {
                symbols.documents += 1;
                symbols.length += document.length;
                for &(term, _) in document.counts.iter() {
                    postings[term as usize].symbol_documents += 1;
                    held.push(term);
                }
            }
            if let Some(file) = &group.file {
                files.documents += 1;
                files.length += file.length;
                for &(term, _) in file.counts.iter() {
                    postings[term as usize].file_documents += 1;
                    held.push(term);
                }
            }
            held.sort_unstable();
            held.dedup();
            for &term in &held {
                postings[term as usize].groups.push(g as u32);
            }
        }
        Lexicon {
            terms,
            groups,
            symbols_at,
            starts,
            file_at,
            postings,
            symbols,
            files,
        }
    }

    /// BM25 of every node against the (stemmed, distinct) terms, scaled so the best match of
    /// each collection is 1, by node position: symbols against symbols, files against files.
    pub(super) fn bm25(&self, graph: &Graph, terms: &[String]) -> Vec<f64> {
        let mut relevance = vec![0.0; graph.nodes.len()];
        // Terms no document of this graph holds add nothing to any score.
        let ids: Vec<u32> = {
            let known = self.terms.read().unwrap_or_else(|e| e.into_inner());
            terms
                .iter()
                .filter_map(|t| known.get(t.as_str()).copied())
                .filter(|&id| (id as usize) < self.postings.len())
                .collect()
        };
        let posting = |t: u32| &self.postings[t as usize];
        let mut candidates: Vec<u32> = ids
            .iter()
            .flat_map(|&t| posting(t).groups.iter().copied())
            .collect();
        candidates.sort_unstable();
        candidates.dedup();
        let idf = |collection: &Collection, df: fn(&Posting) -> u32| -> Vec<f64> {
            let n = collection.documents as f64;
            ids.iter()
                .map(|&t| {
                    let df = df(posting(t)) as f64;
                    (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
                })
                .collect()
        };
        let symbol_idf = idf(&self.symbols, |p| p.symbol_documents);
        let file_idf = idf(&self.files, |p| p.file_documents);
        let (symbol_average, file_average) = (self.symbols.average(), self.files.average());
        let mut scored_symbols: Vec<(usize, f64)> = Vec::new();
        let mut scored_files: Vec<(usize, f64)> = Vec::new();
        let mut bag = Bag {
            length: 0.0,
            counts: vec![0.0; ids.len()],
        };
        let mut score = |document: &Document, idf: &[f64], average: f64, b: f64| -> Option<f64> {
            bag.length = document.length;
            for (count, &t) in bag.counts.iter_mut().zip(&ids) {
                *count = document.count(t);
            }
            bag.counts
                .iter()
                .any(|&c| c > 0.0)
                .then(|| lexical::bm25_of(&bag, idf, average, b))
        };
        for &g in &candidates {
            let group = &self.groups[g as usize];
            let start = self.starts[g as usize] as usize;
            for (k, document) in group.symbols.iter().enumerate() {
                if let Some(s) = score(document, &symbol_idf, symbol_average, lexical::B_SYMBOLS) {
                    scored_symbols.push((self.symbols_at[start + k] as usize, s));
                }
            }
            if let Some(file) = &group.file
                && let Some(s) = score(file, &file_idf, file_average, lexical::B_FILES)
            {
                scored_files.push((self.file_at[g as usize] as usize, s));
            }
        }
        for scored in [scored_symbols, scored_files] {
            let best = scored.iter().map(|&(_, s)| s).fold(0.0f64, f64::max);
            for (i, s) in scored {
                relevance[i] = if best > 0.0 { s / best } else { s };
            }
        }
        relevance
    }
}

impl Group {
    /// Splits the documents of one path: each symbol's, and the file's (its path's words and
    /// everything its documents say) when the file's node is among them.
    fn of(
        path: &Arc<str>,
        fingerprint: u64,
        members: &[&Node],
        ids: &mut FxHashMap<Box<str>, u32>,
    ) -> Group {
        let mut intern = |word: &str| -> u32 {
            if let Some(&id) = ids.get(word) {
                return id;
            }
            let id = ids.len() as u32;
            ids.insert(word.into(), id);
            id
        };
        let mut file_counts: FxHashMap<u32, f64> = FxHashMap::default();
        let mut file_length = 0.0;
        for word in lexical::words_of(path) {
            *file_counts.entry(intern(&word)).or_default() += lexical::PATH_WEIGHT;
            file_length += lexical::PATH_WEIGHT;
        }
        let mut symbols = Vec::new();
        let mut has_file = false;
        for node in members {
            let mut counts: FxHashMap<u32, f64> = FxHashMap::default();
            let mut length = 0.0;
            for (words, weight) in lexical::weighted_words(node) {
                for word in words {
                    *counts.entry(intern(&word)).or_default() += weight;
                    length += weight;
                }
            }
            for (&term, &count) in &counts {
                *file_counts.entry(term).or_default() += count;
            }
            file_length += length;
            if node.kind == NodeKind::File {
                has_file = true;
            } else {
                symbols.push(Document {
                    length,
                    counts: sorted(counts),
                });
            }
        }
        Group {
            path: path.clone(),
            fingerprint,
            symbols,
            file: has_file.then(|| Document {
                length: file_length,
                counts: sorted(file_counts),
            }),
        }
    }
}

fn sorted(counts: FxHashMap<u32, f64>) -> Box<[(u32, f32)]> {
    let mut counts: Vec<(u32, f32)> = counts.into_iter().map(|(t, c)| (t, c as f32)).collect();
    counts.sort_unstable_by_key(|&(t, _)| t);
    counts.into_boxed_slice()
}

/// What a group's words are made from: its path and, for each member in order, its id, kind,
/// name, signature and docstring.
fn fingerprint(path: &str, members: &[&Node]) -> u64 {
    let mut hasher = FxHasher::default();
    path.hash(&mut hasher);
    for node in members {
        node.id.hash(&mut hasher);
        node.kind.as_str().hash(&mut hasher);
        node.name.hash(&mut hasher);
        node.signature.hash(&mut hasher);
        node.doc.hash(&mut hasher);
    }
    hasher.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::context::testing::graph_of;

    const A: (&str, &str) = (
        "app/a.py",
        "def load_config(path):\n    \"\"\"Reads the config file.\"\"\"\n    return path\n",
    );
    const C: (&str, &str) = (
        "app/c.py",
        "class Cache:\n    \"\"\"Keeps config values.\"\"\"\n    def flush(self):\n        return 1\n",
    );

    fn group(lexicon: &Lexicon, path: &str) -> Option<Arc<Group>> {
        lexicon.groups.iter().find(|g| &*g.path == path).cloned()
    }

    #[test]
    fn a_lexicon_made_from_the_previous_one_splits_only_changed_files_and_scores_the_same() {
        let before = graph_of(&[
            A,
            ("app/b.py", "def save_config(x):\n    return x\n"),
            C,
            ("app/gone.py", "def config_gone():\n    return 0\n"),
        ]);
        let after = graph_of(&[
            A,
            (
                "app/b.py",
                "def save_settings(x):\n    \"\"\"Writes the config.\"\"\"\n    return x\n",
            ),
            C,
            ("app/d.py", "def config_reader():\n    return 2\n"),
        ]);
        let old = Lexicon::of(&before, None);
        let reused = Lexicon::of(&after, Some(&old));
        let fresh = Lexicon::of(&after, None);
        for path in ["app/a.py", "app/c.py"] {
            let (now, then) = (group(&reused, path).unwrap(), group(&old, path).unwrap());
            assert!(Arc::ptr_eq(&now, &then), "{path} is split again");
        }
        let b = group(&reused, "app/b.py").unwrap();
        assert!(!Arc::ptr_eq(&b, &group(&old, "app/b.py").unwrap()));
        assert!(group(&reused, "app/gone.py").is_none());
        assert!(group(&reused, "app/d.py").is_some());
        let mut matched = 0;
        for focus in [
            "config",
            "config cache",
            "settings write",
            "flush",
            "gone",
            "zebra",
            "app",
            "reader values path",
        ] {
            let terms = lexical::words_of(focus);
            let scanned = lexical::bm25(&after, &terms);
            assert_eq!(reused.bm25(&after, &terms), scanned, "{focus}");
            assert_eq!(fresh.bm25(&after, &terms), scanned, "{focus}");
            matched += scanned.iter().filter(|&&r| r > 0.0).count();
        }
        assert!(matched > 15, "{matched} matches");
        // A term only the earlier graph held matches nothing now.
        let gone = lexical::words_of("gone");
        assert!(reused.bm25(&after, &gone).iter().all(|&r| r == 0.0));
    }
}
