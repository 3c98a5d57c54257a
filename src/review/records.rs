//! Review records: what a review found and what became of each finding, and the rule and
//! author statistics derived from them (per category: flagged, implemented, rejected,
//! deferred).
//!
//! Statistics are never counters that a write bumps: they are sums over the stored review
//! records, one per review id. Recording the same review twice replaces its record, so it is
//! counted once; two reviews recorded at the same time are two records.
//!
//! The records are stored beside the memories (`memory::reviews` writes a record and the
//! memories it yields in one transaction); what they are and what they add up to is here.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::review::stats::{AuthorStats, CategoryCount, RuleStat, Window};

/// A review record, verdict or category that cannot be stored, and why.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct Invalid(pub String);

/// What became of a finding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Disposition {
    /// The author changed the code as the finding asked.
    Implemented,
    /// The finding was wrong or not wanted here.
    Rejected,
    /// Agreed but left for later.
    Deferred,
}

impl Disposition {
    pub fn as_str(self) -> &'static str {
        match self {
            Disposition::Implemented => "implemented",
            Disposition::Rejected => "rejected",
            Disposition::Deferred => "deferred",
        }
    }
}

/// The review's conclusion.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Approve,
    RequestChanges,
    Comment,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Approve => "approve",
            Verdict::RequestChanges => "request_changes",
            Verdict::Comment => "comment",
        }
    }
}

impl std::str::FromStr for Verdict {
    type Err = Invalid;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s
            .trim()
            .to_ascii_lowercase()
            .replace(['-', ' '], "_")
            .as_str()
        {
            "approve" | "approved" | "lgtm" => Ok(Verdict::Approve),
            "request_changes" | "changes_requested" | "reject" | "rejected" => {
                Ok(Verdict::RequestChanges)
            }
            "comment" | "commented" => Ok(Verdict::Comment),
            other => Err(Invalid(format!(
                "unknown verdict {}: use approve, request_changes or comment",
                crate::secrets::quoted(other)
            ))),
        }
    }
}

/// One finding of a review.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Finding {
    /// The rule or kind of finding: `security`, `naming`, `error-handling`, …
    pub category: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    /// Last line, when several (learned reviews; left out of the tool's schema to keep it
    /// short).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(skip)]
    pub end_line: Option<u32>,
    pub message: String,
    pub disposition: Disposition,
    /// Why it was rejected or deferred.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Glob of the files a rejected finding's pattern applies to (`*.py`, `tests/**`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_pattern: Option<String>,
    /// Who raised it (learned reviews; left out of the tool's schema as `end_line` is).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(skip)]
    pub reviewer: Option<String>,
}

/// A review as stored: one record per review id.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReviewRecord {
    #[serde(alias = "review_id")]
    pub id: String,
    /// Milliseconds since the epoch.
    pub at: i64,
    pub author: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reviewer: Option<String>,
    pub verdict: Verdict,
    pub findings: Vec<Finding>,
    /// The memories the review followed (cited by id).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub applied: Vec<String>,
    /// The memories the review found wrong here (cited by id).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub contradicted: Vec<String>,
    /// The `review_outcome` memory written for it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<String>,
    #[serde(default)]
    pub seq: u64,
}

/// What the recorded reviews say of one memory: how many applied it and how many found it
/// wrong here.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct MemoryVerdicts {
    pub applied: u64,
    pub contradicted: u64,
}

/// Contradictions, more than applications, after which a memory is listed for retirement.
pub const RETIRE_AFTER: u64 = 3;

impl MemoryVerdicts {
    /// The weight the verdicts give a memory in ranking: `0.5 + (applied + 1) / (applied +
    /// contradicted + 2)`, the memory's rate of being right with one imaginary success and
    /// one imaginary failure (Laplace's rule), shifted so that a memory no review cited
    /// weighs 1 (rankings without verdicts are unchanged). It runs from 0.5 (always
    /// contradicted) to 1.5 (always applied), and one verdict moves it by a sixth at most.
    pub fn weight(self) -> f64 {
        let (a, c) = (self.applied as f64, self.contradicted as f64);
        0.5 + (a + 1.0) / (a + c + 2.0)
    }

    /// Contradicted at least [`RETIRE_AFTER`] times and more often than applied: a person
    /// should look at retiring it.
    pub fn to_retire(self) -> bool {
        self.contradicted >= RETIRE_AFTER && self.contradicted > self.applied
    }
}

/// Each cited memory's verdicts, summed over the review records.
pub fn memory_verdicts<'a>(
    reviews: impl IntoIterator<Item = &'a ReviewRecord>,
) -> std::collections::HashMap<String, MemoryVerdicts> {
    let mut out: std::collections::HashMap<String, MemoryVerdicts> = Default::default();
    for review in reviews {
        for id in &review.applied {
            out.entry(id.clone()).or_default().applied += 1;
        }
        for id in &review.contradicted {
            out.entry(id.clone()).or_default().contradicted += 1;
        }
    }
    out
}

/// A category as stored: trimmed, lowercase, words joined by `-`.
pub fn normalise_category(raw: &str) -> Result<String, Invalid> {
    let category: String = raw
        .trim()
        .to_lowercase()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join("-");
    let valid = !category.is_empty()
        && category.len() <= 64
        && category
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '/' | '.' | ':'));
    if valid {
        Ok(category)
    } else {
        Err(Invalid(format!(
            "invalid finding category {}: up to 64 letters, digits, - _ / . :",
            crate::secrets::quoted(raw)
        )))
    }
}

/// The id of a review that came without one: the same author, verdict and findings give the
/// same id, so recording it again changes nothing.
pub fn derived_id(author: &str, verdict: Verdict, findings: &[Finding]) -> String {
    let mut text = format!("{author}\u{1}{}", verdict.as_str());
    for f in findings {
        text.push_str(&format!(
            "\u{1}{}\u{2}{}\u{2}{}\u{2}{}\u{2}{}",
            f.category,
            f.file.as_deref().unwrap_or_default(),
            f.line.unwrap_or_default(),
            f.message,
            f.disposition.as_str()
        ));
    }
    format!("r_{:016x}", xxhash_rust::xxh3::xxh3_64(text.as_bytes()))
}

/// Per-category statistics over review records, categories sorted by name.
pub fn rule_stats<'a>(reviews: impl IntoIterator<Item = &'a ReviewRecord>) -> Vec<RuleStat> {
    let mut by: BTreeMap<&str, RuleStat> = BTreeMap::new();
    for review in reviews {
        for f in &review.findings {
            let stat = by.entry(f.category.as_str()).or_insert_with(|| RuleStat {
                category: f.category.clone(),
                ..RuleStat::default()
            });
            stat.flagged += 1;
            match f.disposition {
                Disposition::Implemented => stat.implemented += 1,
                Disposition::Rejected => stat.rejected += 1,
                Disposition::Deferred => stat.deferred += 1,
            }
        }
    }
    by.into_values()
        .map(|mut s| {
            s.rejection_rate =
                ((s.rejected as f64 / s.flagged.max(1) as f64) * 1000.0).round() / 1000.0;
            s
        })
        .collect()
}

/// A span of consecutive recorded reviews.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Period {
    /// The first and last review's time (milliseconds since the epoch).
    pub from: i64,
    pub to: i64,
    pub reviews: u64,
}

/// Each category's findings per period, periods oldest first.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Trend {
    pub periods: Vec<Period>,
    /// Per category, sorted by name.
    pub categories: Vec<CategoryTrend>,
}

/// One category's findings in each period.
#[derive(Debug, Clone, PartialEq)]
pub struct CategoryTrend {
    pub category: String,
    /// Its window in each period (`None`: not flagged then).
    pub windows: Vec<Option<Window>>,
}

/// Serialised as the pair `[category, windows]` it was before it had names.
impl Serialize for CategoryTrend {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        (&self.category, &self.windows).serialize(serializer)
    }
}

/// The rejection rate of each category over time: `reviews` (oldest first) cut into at most
/// `periods` runs of consecutive reviews of near-equal size, so the trend shows even when
/// reviews were recorded in one afternoon.
pub fn rejection_trend(reviews: &[ReviewRecord], periods: usize) -> Trend {
    let count = periods.min(reviews.len());
    if count == 0 {
        return Trend::default();
    }
    let chunks: Vec<&[ReviewRecord]> = (0..count)
        .map(|i| &reviews[i * reviews.len() / count..(i + 1) * reviews.len() / count])
        .collect();
    let mut by: BTreeMap<&str, Vec<Option<Window>>> = BTreeMap::new();
    for (i, chunk) in chunks.iter().enumerate() {
        for review in chunk.iter() {
            let mut seen = Vec::new();
            for f in &review.findings {
                let windows = by
                    .entry(f.category.as_str())
                    .or_insert_with(|| vec![None; count]);
                let window = windows[i].get_or_insert_with(Window::default);
                window.flagged += 1;
                if f.disposition == Disposition::Rejected {
                    window.rejected += 1;
                }
                if !seen.contains(&f.category.as_str()) {
                    seen.push(f.category.as_str());
                    window.reviews += 1;
                }
            }
        }
    }
    let categories = by
        .into_iter()
        .map(|(category, mut windows)| {
            for window in windows.iter_mut().flatten() {
                window.rejection_rate =
                    ((window.rejected as f64 / window.flagged.max(1) as f64) * 1000.0).round()
                        / 1000.0;
            }
            CategoryTrend {
                category: category.to_string(),
                windows,
            }
        })
        .collect();
    Trend {
        periods: chunks
            .iter()
            .map(|chunk| Period {
                from: chunk.first().map_or(0, |r| r.at),
                to: chunk.last().map_or(0, |r| r.at),
                reviews: chunk.len() as u64,
            })
            .collect(),
        categories,
    }
}

/// An author's statistics over review records.
pub fn author_stats<'a>(
    author: &str,
    reviews: impl IntoIterator<Item = &'a ReviewRecord>,
) -> AuthorStats {
    let mut stats = AuthorStats::default();
    let mut categories: BTreeMap<String, u64> = BTreeMap::new();
    for review in reviews.into_iter().filter(|r| r.author == author) {
        stats.reviews += 1;
        match review.verdict {
            Verdict::Approve => stats.approved += 1,
            Verdict::RequestChanges => stats.changes_requested += 1,
            Verdict::Comment => {}
        }
        for f in &review.findings {
            stats.findings += 1;
            *categories.entry(f.category.clone()).or_default() += 1;
            match f.disposition {
                Disposition::Implemented => stats.implemented += 1,
                Disposition::Rejected => stats.rejected += 1,
                Disposition::Deferred => stats.deferred += 1,
            }
        }
    }
    let mut top: Vec<CategoryCount> = categories
        .into_iter()
        .map(|(category, count)| CategoryCount { category, count })
        .collect();
    top.sort_by(|a, b| b.count.cmp(&a.count).then(a.category.cmp(&b.category)));
    top.truncate(5);
    stats.top_categories = top;
    stats
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts_weigh_by_laplaces_rule_and_name_what_to_retire() {
        let v = |applied, contradicted| MemoryVerdicts {
            applied,
            contradicted,
        };
        assert_eq!(
            v(0, 0).weight(),
            1.0,
            "no verdict leaves the ranking as it was"
        );
        assert!((v(0, 3).weight() - 0.7).abs() < 1e-9);
        assert!((v(3, 0).weight() - 1.3).abs() < 1e-9);
        assert!(v(0, 1).weight() > v(0, 2).weight() && v(0, 100).weight() > 0.5);
        assert!(v(1, 0).weight() < v(2, 0).weight() && v(100, 0).weight() < 1.5);
        assert!(!v(0, 2).to_retire() && v(0, 3).to_retire() && v(2, 3).to_retire());
        assert!(!v(3, 3).to_retire(), "as often applied as contradicted");

        let mut first = review("r1", "bob", Vec::new());
        first.applied = vec!["m_1".into()];
        first.contradicted = vec!["m_2".into()];
        let mut second = review("r2", "bob", Vec::new());
        second.contradicted = vec!["m_2".into()];
        let all = memory_verdicts([&first, &second]);
        assert_eq!(all["m_1"], v(1, 0));
        assert_eq!(all["m_2"], v(0, 2));
    }
    use crate::review::stats::is_high_rejection;

    fn finding(category: &str, disposition: Disposition) -> Finding {
        Finding {
            category: category.to_string(),
            file: Some("a.py".to_string()),
            line: Some(3),
            message: "m".to_string(),
            disposition,
            reason: None,
            file_pattern: None,
            end_line: None,
            reviewer: None,
        }
    }

    fn review(id: &str, author: &str, findings: Vec<Finding>) -> ReviewRecord {
        ReviewRecord {
            id: id.to_string(),
            at: 0,
            author: author.to_string(),
            reviewer: None,
            verdict: Verdict::RequestChanges,
            findings,
            applied: Vec::new(),
            contradicted: Vec::new(),
            memory: None,
            seq: 0,
        }
    }

    #[test]
    fn the_trend_cuts_reviews_into_periods_of_consecutive_reviews() {
        let reviews: Vec<ReviewRecord> = (0..5)
            .map(|i| {
                let disposition = if i < 3 {
                    Disposition::Rejected
                } else {
                    Disposition::Implemented
                };
                let mut findings = vec![finding("naming", disposition)];
                if i == 4 {
                    findings.push(finding("security", Disposition::Implemented));
                }
                ReviewRecord {
                    at: i * 1000,
                    ..review(&i.to_string(), "bob", findings)
                }
            })
            .collect();
        let trend = rejection_trend(&reviews, 2);
        assert_eq!(trend.periods.len(), 2);
        assert_eq!(
            (
                trend.periods[0].from,
                trend.periods[0].to,
                trend.periods[0].reviews
            ),
            (0, 1000, 2)
        );
        assert_eq!(trend.periods[1].reviews, 3);
        assert_eq!(trend.categories[0].category, "naming");
        let naming = &trend.categories[0].windows;
        let first = naming[0].as_ref().unwrap();
        assert_eq!(
            (first.flagged, first.rejected, first.rejection_rate),
            (2, 2, 1.0)
        );
        let second = naming[1].as_ref().unwrap();
        assert_eq!((second.flagged, second.rejected), (3, 1));
        assert_eq!(second.rejection_rate, 0.333);
        assert_eq!(trend.categories[1].category, "security");
        assert_eq!(
            trend.categories[1].windows[0], None,
            "not flagged in the first period"
        );
        assert_eq!(
            serde_json::to_value(&trend.categories[1]).unwrap()[0],
            "security",
            "answered as the pair [category, windows]"
        );
        assert_eq!(rejection_trend(&[], 4), Trend::default());
        assert_eq!(rejection_trend(&reviews, 10).periods.len(), 5);
    }

    #[test]
    fn statistics_sum_review_records() {
        let reviews = [
            review(
                "1",
                "alice",
                vec![
                    finding("naming", Disposition::Rejected),
                    finding("naming", Disposition::Rejected),
                    finding("security", Disposition::Implemented),
                ],
            ),
            review(
                "2",
                "bob",
                vec![
                    finding("naming", Disposition::Implemented),
                    finding("security", Disposition::Deferred),
                ],
            ),
        ];
        let stats = rule_stats(&reviews);
        assert_eq!(stats.len(), 2);
        let naming = &stats[0];
        assert_eq!(
            (naming.flagged, naming.implemented, naming.rejected),
            (3, 1, 2)
        );
        assert!((naming.rejection_rate - 0.667).abs() < 1e-9);
        assert!(is_high_rejection(naming, 3, 0.5));
        assert!(!is_high_rejection(&stats[1], 3, 0.5));
        let alice = author_stats("alice", &reviews);
        assert_eq!((alice.reviews, alice.findings, alice.rejected), (1, 3, 2));
        assert_eq!(
            alice.top_categories[0],
            CategoryCount {
                category: "naming".to_string(),
                count: 2
            }
        );
    }

    #[test]
    fn categories_and_ids() {
        assert_eq!(
            normalise_category(" Error Handling ").unwrap(),
            "error-handling"
        );
        assert!(normalise_category("").is_err());
        assert!(normalise_category("a;drop").is_err());
        let f = vec![finding("naming", Disposition::Rejected)];
        assert_eq!(
            derived_id("alice", Verdict::Approve, &f),
            derived_id("alice", Verdict::Approve, &f)
        );
        assert_ne!(
            derived_id("alice", Verdict::Approve, &f),
            derived_id("bob", Verdict::Approve, &f)
        );
        assert_eq!(
            "changes requested".parse::<Verdict>().unwrap(),
            Verdict::RequestChanges
        );
        assert!("maybe".parse::<Verdict>().is_err());
    }
}
