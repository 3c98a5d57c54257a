//! Guideline changes: a proposed edit of a review guideline file (`CLAUDE.md`, `AGENTS.md`,
//! …) grounded in a rule category's rejection patterns, what became of it, and its effect on
//! the category's rejection rate. `memory::guidelines` checks and stores them beside the
//! memories; cairn never edits a guideline file itself.

use serde::{Deserialize, Serialize};

use super::records::{Disposition, Invalid, ReviewRecord};
use super::stats::{ChangeEffect, Window};

/// What became of a proposal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// Proposed, not decided yet.
    Proposed,
    /// A person accepted it (and edited the file).
    Accepted,
    /// A person turned it down.
    Rejected,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Proposed => "proposed",
            Outcome::Accepted => "accepted",
            Outcome::Rejected => "rejected",
        }
    }
}

impl std::str::FromStr for Outcome {
    type Err = Invalid;

    fn from_str(s: &str) -> Result<Outcome, Invalid> {
        match s.trim().to_ascii_lowercase().as_str() {
            "proposed" | "proposal" => Ok(Outcome::Proposed),
            "accepted" | "accept" => Ok(Outcome::Accepted),
            "rejected" | "reject" => Ok(Outcome::Rejected),
            other => Err(Invalid(format!(
                "unknown outcome {}: use proposed, accepted or rejected",
                crate::secrets::quoted(other)
            ))),
        }
    }
}

/// A guideline change as stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GuidelineChange {
    /// `g_` and 16 hex digits.
    #[serde(alias = "change_id")]
    pub id: String,
    /// The guideline file, repository-relative.
    pub file: String,
    /// The heading of the section it changes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub section: Option<String>,
    /// The section's text when it was proposed (empty for a new section).
    #[serde(default)]
    pub current_text: String,
    pub proposed_text: String,
    pub rationale: String,
    /// The rule category whose rejections it answers.
    pub category: String,
    /// The rejection patterns behind it.
    pub memories: Vec<String>,
    /// 0–1, as the proposer judged it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confidence: Option<f64>,
    pub outcome: Outcome,
    /// Why it was accepted or rejected, in the decider's words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub feedback: Option<String>,
    /// Who proposed or decided it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub by: Option<String>,
    /// Who recorded it (the user, or `mcp`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub written_by: Option<String>,
    /// Milliseconds since the epoch.
    pub proposed_at: i64,
    /// When it was accepted or rejected.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decided_at: Option<i64>,
    /// Kinds of secret redacted from its texts.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub redacted: Vec<String>,
}

/// A proposal or an outcome to record. With `id`, it is the outcome of a change recorded
/// before, whose fields it keeps unless given again (only while still proposed).
#[derive(Debug, Clone, Default)]
pub struct ChangeInput {
    pub id: Option<String>,
    pub file: Option<String>,
    pub section: Option<String>,
    pub current_text: Option<String>,
    pub proposed_text: Option<String>,
    pub rationale: Option<String>,
    pub category: Option<String>,
    pub memories: Option<Vec<String>>,
    pub confidence: Option<f64>,
    /// Default: proposed.
    pub outcome: Option<Outcome>,
    pub feedback: Option<String>,
    pub by: Option<String>,
    pub written_by: Option<String>,
}

/// What recording a guideline change did.
#[derive(Debug, Clone, Serialize)]
pub struct RecordedChange {
    pub change: GuidelineChange,
    /// Rejection patterns this call marked addressed.
    pub addressed: Vec<String>,
    /// The change was already recorded with this outcome: nothing changed.
    pub repeated: bool,
}

/// A guideline change id: `g_` and 16 hex digits.
pub fn is_change_id(id: &str) -> bool {
    id.strip_prefix("g_")
        .is_some_and(|hex| hex.len() == 16 && hex.chars().all(|c| c.is_ascii_hexdigit()))
}

/// The findings of `category` in the reviews `keep` selects.
fn window<'a>(
    reviews: impl IntoIterator<Item = &'a ReviewRecord>,
    category: &str,
    keep: impl Fn(&ReviewRecord) -> bool,
) -> Window {
    let mut window = Window::default();
    for review in reviews.into_iter().filter(|r| keep(r)) {
        let mut flagged = false;
        for f in review.findings.iter().filter(|f| f.category == category) {
            flagged = true;
            window.flagged += 1;
            if f.disposition == Disposition::Rejected {
                window.rejected += 1;
            }
        }
        window.reviews += u64::from(flagged);
    }
    if window.flagged > 0 {
        window.rejection_rate =
            ((window.rejected as f64 / window.flagged as f64) * 1000.0).round() / 1000.0;
    }
    window
}

/// A change as `cairn rules` shows it: accepted ones with the category's rejection rate in
/// the reviews recorded before and after the acceptance.
pub fn effect<'a>(
    change: &GuidelineChange,
    reviews: impl IntoIterator<Item = &'a ReviewRecord> + Clone,
) -> ChangeEffect {
    let at = change.decided_at.unwrap_or(change.proposed_at);
    let accepted = change.outcome == Outcome::Accepted;
    ChangeEffect {
        id: change.id.clone(),
        file: change.file.clone(),
        section: change.section.clone(),
        outcome: change.outcome.as_str().to_string(),
        at,
        addressed: if accepted {
            change.memories.clone()
        } else {
            Vec::new()
        },
        before: accepted.then(|| window(reviews.clone(), &change.category, |r| r.at < at)),
        after: accepted.then(|| window(reviews, &change.category, |r| r.at >= at)),
    }
}
