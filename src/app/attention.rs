//! Memories that need a person's attention: near-duplicates, memories anchored to code the
//! index no longer has, memories whose anchored code changed in a commit after they were
//! written, and memories nobody read in the days since they were written.
//!
//! Changed code is judged by the commit history at HEAD, as every served memory's `code
//! changed since` is: the newest commit that touched an anchored file after the memory's
//! text was written. File modification times are not used (a clone, checkout or rebase
//! touches every file), nor content hashes (a memory does not record its files' hashes), so
//! edits not yet committed do not count. Developer-scoped memories are looked at only for
//! the developer asked for, as `search_developer_memory` reads only theirs.

use std::collections::{HashMap, HashSet};

use serde::Serialize;

use super::{AskError, Cairn};
use crate::context::CodeChanged;
use crate::history::History;
use crate::memory::duplicates::NearPair;
use crate::memory::{Memory, model};
use crate::review::records::MemoryVerdicts;

/// Most memories (or pairs) each list holds; the answer counts the rest.
pub(crate) const LISTED: usize = 200;
/// Largest `days` a request may ask for (a hundred years).
const MAX_STALE_DAYS: u32 = 36_500;

/// Which memories to look at: the project's, and one developer's when given; `stale_days`
/// overrides `[ui] stale_days`; `patience` is how long to wait for near-duplicates being
/// compared after a change (`None`: until they are found).
#[derive(Debug, Clone, Default)]
pub struct AttentionRequest {
    pub developer: Option<String>,
    pub stale_days: Option<u32>,
    pub patience: Option<std::time::Duration>,
}

/// A pair of live memories that say nearly the same thing.
#[derive(Debug, Clone, Serialize)]
pub struct Duplicate {
    pub older: Memory,
    pub newer: Memory,
    pub similarity: f64,
    /// `meaning` (cosine of the embeddings) or `terms` (Jaccard of the term sets).
    pub by: &'static str,
}

/// A memory with anchors the index does not have.
#[derive(Debug, Clone, Serialize)]
pub struct Gone {
    pub memory: Memory,
    /// Its files, folders and symbols that are not in the code graph.
    pub anchors: Vec<String>,
}

/// A memory whose anchored code changed in a commit after its text was written.
#[derive(Debug, Clone, Serialize)]
pub struct Changed {
    pub memory: Memory,
    pub change: CodeChanged,
}

/// One list and how many it left out.
#[derive(Debug, Clone, Serialize)]
pub struct Listed<T> {
    pub items: Vec<T>,
    /// How many more there are past [`LISTED`].
    pub more: usize,
}

impl<T> Listed<T> {
    /// The first [`LISTED`] of `found`, each made by `own` (only those listed are copied).
    fn of<F>(found: Vec<F>, own: impl FnMut(F) -> T) -> Listed<T> {
        let more = found.len().saturating_sub(LISTED);
        Listed {
            items: found.into_iter().take(LISTED).map(own).collect(),
            more,
        }
    }
}

/// What needs attention, each list in the order to look at it.
#[derive(Debug, Clone, Serialize)]
pub struct Attention {
    /// The developer whose memories were looked at besides the project's.
    pub developer: Option<String>,
    /// A memory never read this many days after it was written is listed.
    pub stale_days: u32,
    /// Most similar first.
    pub near_duplicates: Listed<Duplicate>,
    /// Oldest first. Empty when the repository has not been indexed (`indexed` false).
    pub gone: Listed<Gone>,
    /// Newest change first.
    pub changed: Listed<Changed>,
    /// Oldest first.
    pub never_read: Listed<Memory>,
    /// Found wrong by reviews more often than applied, most contradicted first: to retire.
    pub contradicted: Listed<Contradicted>,
    /// Whether anchors could be checked against an index.
    pub indexed: bool,
    /// The memories changed since the near-duplicates listed were found, and they are being
    /// compared again.
    pub comparing: bool,
}

/// A memory the recorded reviews found wrong again and again.
#[derive(Debug, Clone, Serialize)]
pub struct Contradicted {
    pub memory: Memory,
    pub verdicts: MemoryVerdicts,
}

/// The live memories among `memories` whose verdicts say to retire them, most contradicted
/// first.
fn to_retire(
    memories: &[Memory],
    verdicts: &HashMap<String, MemoryVerdicts>,
) -> Listed<Contradicted> {
    let mut found: Vec<(&Memory, MemoryVerdicts)> = memories
        .iter()
        .filter(|m| m.is_live())
        .filter_map(|m| Some((m, *verdicts.get(&m.id)?)))
        .filter(|(_, v)| v.to_retire())
        .collect();
    found.sort_by(|a, b| {
        b.1.contradicted
            .cmp(&a.1.contradicted)
            .then_with(|| a.0.id.cmp(&b.0.id))
    });
    Listed::of(found, |(memory, verdicts)| Contradicted {
        memory: memory.clone(),
        verdicts,
    })
}

/// What the code index says of an anchor: `true` when it still has it.
pub type Known<'a> = &'a dyn Fn(&str) -> bool;

/// What the repository's code says of memories' anchors: what the index has (`None`: no
/// index), the commits at HEAD, and the repository's identity (an organisation memory
/// written in another repository names that repository's files: its anchors are neither
/// gone nor changed here).
pub(crate) struct Code<'a> {
    pub known: Option<Known<'a>>,
    pub history: &'a History,
    pub here: Option<&'a str>,
}

/// Sorts live memories into what needs attention. `memories` are those the request may see;
/// `pairs` their near-duplicates; `code` what the repository says of their anchors; `read`
/// the ids read since their stored counts were written; `now` in milliseconds.
pub(crate) fn assess(
    memories: &[Memory],
    pairs: &[NearPair],
    code: &Code,
    read: &HashSet<String>,
    now: i64,
    stale_days: u32,
) -> Attention {
    let live: Vec<&Memory> = memories.iter().filter(|m| m.is_live()).collect();
    let by_id: HashMap<&str, &Memory> = live.iter().map(|m| (m.id.as_str(), *m)).collect();
    let duplicates: Vec<(&Memory, &Memory, &NearPair)> = pairs
        .iter()
        .filter_map(|p| {
            Some((
                *by_id.get(p.older.as_str())?,
                *by_id.get(p.newer.as_str())?,
                p,
            ))
        })
        .collect();
    let gone: Vec<(&Memory, Vec<String>)> = match code.known {
        None => Vec::new(),
        Some(known) => live
            .iter()
            .filter(|m| !m.anchored_elsewhere(code.here))
            .filter_map(|m| {
                let anchors: Vec<String> = m.anchors.all().filter(|a| !known(a)).cloned().collect();
                (!anchors.is_empty()).then_some((*m, anchors))
            })
            .collect(),
    };
    let mut changed: Vec<(&Memory, CodeChanged)> = live
        .iter()
        .filter_map(|m| {
            let changed = super::code_changed_since(m, code.history, code.here)?;
            Some((*m, changed))
        })
        .collect();
    changed.sort_by(|a, b| b.1.time.cmp(&a.1.time).then_with(|| a.0.id.cmp(&b.0.id)));
    let cutoff = now - i64::from(stale_days) * 86_400_000;
    let never_read: Vec<&Memory> = live
        .iter()
        .filter(|m| {
            m.reads.access_count == 0 && !read.contains(&m.id) && m.validity.created_at <= cutoff
        })
        .copied()
        .collect();
    Attention {
        developer: None,
        stale_days,
        near_duplicates: Listed::of(duplicates, |(older, newer, pair)| Duplicate {
            older: older.clone(),
            newer: newer.clone(),
            similarity: pair.similarity,
            by: pair.by,
        }),
        gone: Listed::of(gone, |(memory, anchors)| Gone {
            memory: memory.clone(),
            anchors,
        }),
        changed: Listed::of(changed, |(memory, change)| Changed {
            memory: memory.clone(),
            change,
        }),
        never_read: Listed::of(never_read, Memory::clone),
        contradicted: Listed::of(Vec::new(), |c| c),
        indexed: code.known.is_some(),
        comparing: false,
    }
}

impl Cairn {
    /// The live memories of both scopes that need attention: the project's, and the
    /// developer's when asked.
    pub async fn attention(&self, request: AttentionRequest) -> Result<Attention, AskError> {
        let developer = request
            .developer
            .as_deref()
            .map(str::trim)
            .filter(|d| !d.is_empty())
            .map(model::developer_id)
            .transpose()?;
        let stale_days = request
            .stale_days
            .unwrap_or(self.repo.settings.ui.stale_days)
            .min(MAX_STALE_DAYS);
        let memories: Vec<Memory> = self
            .all_scopes()
            .await?
            .into_iter()
            .filter(|m| m.is_live())
            .filter(|m| {
                !m.kind.developer_scoped()
                    || (developer.is_some() && m.owner.developer == developer)
            })
            .collect();
        let near = self
            .memories
            .near_duplicates(developer.as_deref(), request.patience)
            .await?;
        let mut comparing = near.comparing;
        let mut pairs = near.pairs;
        let mut read = self.memories.unflushed_reads().await;
        if let Ok(org) = self.org_memories() {
            match org
                .near_duplicates(developer.as_deref(), request.patience)
                .await
            {
                Ok(found) => {
                    comparing |= found.comparing;
                    pairs.extend(found.pairs);
                }
                Err(e) => tracing::warn!("organisation memories left out of near-duplicates: {e}"),
            }
            read.extend(org.unflushed_reads().await);
        }
        pairs.sort_by(|a, b| b.similarity.total_cmp(&a.similarity));
        let snapshot = self.graph_if_indexed().await;
        let history = match &snapshot {
            Some(snapshot) => self.commit_history(snapshot).await,
            None => std::sync::Arc::new(History::default()),
        };
        let graph = snapshot.as_ref().map(|s| &*s.graph);
        // Folders are anchors too: every folder that holds an indexed file.
        let folders: HashSet<&str> = graph
            .into_iter()
            .flat_map(|g| g.files())
            .flat_map(|f| f.path.match_indices('/').map(move |(at, _)| &f.path[..at]))
            .collect();
        let known = |anchor: &str| {
            graph.is_none_or(|g| {
                g.node(anchor).is_some() || folders.contains(anchor.trim_end_matches('/'))
            })
        };
        let attention = assess(
            &memories,
            &pairs,
            &Code {
                known: graph.is_some().then_some(&known as Known),
                history: &history,
                here: self.here(),
            },
            &read,
            crate::clock::now_ms(),
            stale_days,
        );
        let verdicts = self.memories.all_verdicts().await?;
        Ok(Attention {
            developer,
            comparing,
            contradicted: to_retire(&memories, &verdicts),
            ..attention
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::CommitInfo;
    use crate::memory::MemoryType;

    const DAY: i64 = 86_400_000;
    const NOW: i64 = 1_800_000_000_000;

    fn memory(id: &str, created: i64) -> Memory {
        Memory::new(
            id.to_string(),
            MemoryType::Decision,
            String::new(),
            format!("learning {id}"),
            created,
        )
    }

    fn commit(id: &str, time_ms: i64, files: &[&str]) -> CommitInfo {
        CommitInfo {
            id: id.to_string(),
            time: time_ms / 1000,
            author: "bob@example.com".to_string(),
            name: "Bob".to_string(),
            summary: "change".to_string(),
            fix: false,
            files: files.iter().map(|f| f.to_string()).collect(),
        }
    }

    /// The code of a repository that reads no organisation's memories.
    fn code<'a>(known: Option<Known<'a>>, history: &'a History) -> Code<'a> {
        Code {
            known,
            history,
            here: None,
        }
    }

    fn ids<T>(listed: &Listed<T>, id: impl Fn(&T) -> &str) -> Vec<String> {
        listed.items.iter().map(|t| id(t).to_string()).collect()
    }

    #[test]
    fn each_list_takes_only_what_belongs_in_it() {
        let mut cart = memory("m_cart", NOW - 200 * DAY);
        cart.anchors.paths = vec!["src/cart.py".to_string()];
        cart.reads.access_count = 3;
        let mut gone = memory("m_gone", NOW - 3 * DAY);
        gone.anchors.paths = vec!["src/old.py".to_string()];
        gone.anchors.symbols = vec![
            "src/cart.py::Cart.total".to_string(),
            "src/old.py::f".to_string(),
        ];
        let mut symbol = memory("m_symbol", NOW - 10 * DAY);
        symbol.anchors.symbols = vec!["src/cart.py::Cart.total".to_string()];
        let never = memory("m_never", NOW - 91 * DAY);
        let young = memory("m_young", NOW - 89 * DAY);
        let read_lately = memory("m_read_lately", NOW - 300 * DAY);
        let mut superseded = memory("m_superseded", NOW - 400 * DAY);
        superseded.validity.invalidated_at = Some(NOW - 100 * DAY);
        superseded.anchors.paths = vec!["src/old.py".to_string()];
        let memories = [cart, gone, symbol, never, young, read_lately, superseded];
        let history = History::new(vec![
            commit("c_before", NOW - 300 * DAY, &["src/cart.py"]),
            commit("c_after", NOW - 5 * DAY, &["src/cart.py"]),
        ]);
        let known = |a: &str| a.starts_with("src/cart.py");
        let pairs = [
            NearPair {
                older: "m_never".to_string(),
                newer: "m_young".to_string(),
                similarity: 0.91,
                by: "meaning",
            },
            NearPair {
                older: "m_superseded".to_string(),
                newer: "m_cart".to_string(),
                similarity: 0.95,
                by: "terms",
            },
        ];
        let read = HashSet::from(["m_read_lately".to_string()]);
        let Attention {
            near_duplicates: duplicates,
            gone,
            changed,
            never_read,
            ..
        } = assess(
            &memories,
            &pairs,
            &code(Some(&known), &history),
            &read,
            NOW,
            90,
        );

        let pair: Vec<(String, String)> = duplicates
            .items
            .iter()
            .map(|d| (d.older.id.clone(), d.newer.id.clone()))
            .collect();
        assert_eq!(
            pair,
            [("m_never".to_string(), "m_young".to_string())],
            "a superseded memory is no duplicate"
        );
        assert_eq!(ids(&gone, |g| &g.memory.id), ["m_gone"]);
        assert_eq!(gone.items[0].anchors, ["src/old.py", "src/old.py::f"]);
        assert_eq!(
            ids(&changed, |c| &c.memory.id),
            ["m_cart", "m_symbol"],
            "a symbol's file counts; the change must follow the text"
        );
        assert_eq!(changed.items[0].change.commit, "c_after");
        assert_eq!(
            ids(&never_read, |m| &m.id),
            ["m_never"],
            "read, read lately or younger than 90 days are left out"
        );
    }

    #[test]
    fn without_an_index_no_anchor_is_called_gone_and_days_move_the_cutoff() {
        let mut anchored = memory("m_a", NOW - 30 * DAY);
        anchored.anchors.paths = vec!["src/nowhere.py".to_string()];
        let memories = [anchored];
        let history = History::default();
        let after_days = |days| {
            assess(
                &memories,
                &[],
                &code(None, &history),
                &HashSet::new(),
                NOW,
                days,
            )
        };
        let found = after_days(90);
        assert!(!found.indexed);
        assert!(found.gone.items.is_empty() && found.changed.items.is_empty());
        assert!(found.never_read.items.is_empty());
        let found = after_days(30);
        assert_eq!(ids(&found.never_read, |m| &m.id), ["m_a"]);
    }

    #[test]
    fn anchors_in_another_repository_are_neither_gone_nor_changed_here() {
        let org = |id: &str, origin: &str| {
            let mut m = memory(id, NOW - 30 * DAY);
            m.scope = crate::memory::Scope::Org;
            m.anchors.origin = Some(origin.to_string());
            m.anchors.paths = vec!["src/app.py".to_string(), "src/old.py".to_string()];
            m
        };
        let memories = [
            org("m_here", "github.com/acme/two"),
            org("m_there", "github.com/acme/one"),
        ];
        let history = History::new(vec![commit("c_after", NOW - DAY, &["src/app.py"])]);
        let known = |a: &str| a == "src/app.py";
        let code = Code {
            known: Some(&known),
            history: &history,
            here: Some("github.com/acme/two"),
        };
        let found = assess(&memories, &[], &code, &HashSet::new(), NOW, 90);
        assert_eq!(ids(&found.gone, |g| &g.memory.id), ["m_here"]);
        assert_eq!(ids(&found.changed, |c| &c.memory.id), ["m_here"]);
    }

    #[test]
    fn long_lists_are_cut_and_counted() {
        let memories: Vec<Memory> = (0..LISTED + 7)
            .map(|i| memory(&format!("m_{i:04}"), NOW - 100 * DAY))
            .collect();
        let Attention { never_read, .. } = assess(
            &memories,
            &[],
            &code(None, &History::default()),
            &HashSet::new(),
            NOW,
            90,
        );
        assert_eq!((never_read.items.len(), never_read.more), (LISTED, 7));
    }
}
