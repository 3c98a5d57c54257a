//! Review statistics as a briefing shows them: how each rule (finding category) fares and an
//! author's record. Plain data: the memory layer computes them from its review records.

use serde::Serialize;

/// Rule effectiveness for one category.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct RuleStat {
    pub category: String,
    pub flagged: u64,
    pub implemented: u64,
    pub rejected: u64,
    pub deferred: u64,
    /// rejected / flagged.
    pub rejection_rate: f64,
    /// Live rejection patterns of this category (the reasons behind the rate).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub memories: Vec<String>,
    /// Guideline changes recorded for this category, oldest first.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub changes: Vec<ChangeEffect>,
}

/// A category's findings over a span of reviews.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Window {
    /// Review records in the span that flagged the category.
    pub reviews: u64,
    pub flagged: u64,
    pub rejected: u64,
    /// rejected / flagged (0 when nothing was flagged).
    pub rejection_rate: f64,
}

/// A guideline change of a category and, once accepted, the category's rejection rate in the
/// reviews recorded before and after it was accepted.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ChangeEffect {
    /// The change id (`g_…`).
    pub id: String,
    pub file: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub section: Option<String>,
    /// `proposed`, `accepted` or `rejected`.
    pub outcome: String,
    /// When the outcome was recorded (milliseconds since the epoch).
    pub at: i64,
    /// The rejection patterns it addressed (accepted changes).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub addressed: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub before: Option<Window>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub after: Option<Window>,
}

/// A developer's record as an author of reviewed changes.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct AuthorStats {
    pub reviews: u64,
    pub approved: u64,
    pub changes_requested: u64,
    pub findings: u64,
    pub implemented: u64,
    pub rejected: u64,
    pub deferred: u64,
    /// Categories most often flagged on their changes, with counts.
    pub top_categories: Vec<CategoryCount>,
}

/// A category and how often it was flagged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CategoryCount {
    pub category: String,
    pub count: u64,
}

/// Answered as the pair `[category, count]` it was before it had names.
impl Serialize for CategoryCount {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        (&self.category, self.count).serialize(serializer)
    }
}

/// Whether a category's findings are usually rejected here.
pub fn is_high_rejection(stat: &RuleStat, min_sample: u64, min_rate: f64) -> bool {
    stat.flagged >= min_sample && stat.rejection_rate >= min_rate
}
