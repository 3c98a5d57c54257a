//! The guideline refinement loop's use cases: the brief that asks for changes to the review
//! guidelines (`cairn rules --propose`, the `refine_guidelines` prompt) — each high-rejection
//! category with its rate, its open rejection patterns and the guideline sections they are
//! about — and recording a change and its outcome (`record_guideline_change`, `cairn rules
//! --record`). cairn reads the guideline files and never writes them.

use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::json;

use super::{AskError, Cairn, off_runtime};
use crate::answer::{self, Answer, LeftOut, Page};
use crate::memory::{self, Memory, RecordedChange};
use crate::review::guidelines::{self, GuidelineFile, Section, Unread};
use crate::review::stats::{RuleStat, is_high_rejection};
use crate::tokens;

/// The brief's default budget (o200k tokens).
pub(crate) const DEFAULT_PROPOSE_TOKENS: usize = 6_000;
/// The smallest budget the brief is useful in: its instructions alone take about 400.
const MIN_PROPOSE_TOKENS: usize = 1_000;
/// Most categories one brief covers (the highest rates first).
const MAX_CATEGORIES: usize = 5;
/// Most rejection patterns shown per category (the newest first).
const MAX_PATTERNS: usize = 12;
/// Most guideline sections shown per category.
const MAX_SECTIONS: usize = 4;
/// Longest section text shown, in bytes.
const SECTION_SHOWN: usize = 3_000;
/// Longest rejection pattern text shown, in bytes.
const EVIDENCE_SHOWN: usize = 500;
/// Most guideline files one request may name.
const MAX_FILES_ASKED: usize = 20;
/// Most headings listed per file when no section matched.
const HEADINGS_SHOWN: usize = 30;

/// What the brief is about: the guideline files to read (default: those found in the
/// repository) and which categories count as high-rejection.
#[derive(Debug, Clone)]
pub struct ProposeRequest {
    pub files: Vec<String>,
    pub min_sample: u64,
    pub min_rate: f64,
    pub max_tokens: Option<usize>,
}

impl Default for ProposeRequest {
    fn default() -> Self {
        ProposeRequest {
            files: Vec::new(),
            min_sample: 3,
            min_rate: 0.5,
            max_tokens: None,
        }
    }
}

/// The brief asking for guideline changes.
#[derive(Debug, Clone, Serialize)]
pub struct GuidelineBrief {
    pub categories: Vec<CategoryBrief>,
    /// High-rejection categories whose rejection patterns are all addressed already.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub addressed: Vec<String>,
    /// The guideline files read.
    pub files: Vec<String>,
    /// Guideline files that were not read, and why.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unread: Vec<Unread>,
}

/// A high-rejection category: its rate, the evidence and the guideline sections about it.
#[derive(Debug, Clone, Serialize)]
pub struct CategoryBrief {
    pub category: String,
    pub flagged: u64,
    pub rejected: u64,
    pub rejection_rate: f64,
    /// Its rejection patterns not yet addressed, newest first.
    pub patterns: Vec<Evidence>,
    /// The guideline sections about it, most relevant first (none: see the files' headings).
    pub sections: Vec<SectionText>,
}

/// A rejection pattern as evidence.
#[derive(Debug, Clone, Serialize)]
pub struct Evidence {
    pub id: String,
    pub title: String,
    pub content: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source_ref: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub paths: Vec<String>,
}

/// A guideline section's current text.
#[derive(Debug, Clone, Serialize)]
pub struct SectionText {
    pub file: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub heading: Option<String>,
    pub line: usize,
    /// At most [`SECTION_SHOWN`] bytes (cut marked with `…`).
    pub text: String,
}

/// A guideline change or its outcome to record: the JSON `record_guideline_change` takes and
/// `cairn rules --record` reads.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct GuidelineChangeRequest {
    /// A change recorded before (`g_…`): this records its outcome.
    #[serde(default)]
    pub id: Option<String>,
    #[serde(default)]
    pub file: Option<String>,
    #[serde(default)]
    pub section: Option<String>,
    #[serde(default)]
    pub current_text: Option<String>,
    #[serde(default)]
    pub proposed_text: Option<String>,
    #[serde(default)]
    pub rationale: Option<String>,
    #[serde(default)]
    pub category: Option<String>,
    #[serde(default)]
    pub memory_ids: Option<Vec<String>>,
    #[serde(default)]
    pub confidence: Option<f64>,
    /// `proposed` (default), `accepted` or `rejected`.
    #[serde(default)]
    pub outcome: Option<String>,
    #[serde(default)]
    pub feedback: Option<String>,
    /// Who proposed or decided it.
    #[serde(default)]
    pub by: Option<String>,
    /// Who records it: the user, or `mcp` for an assistant (never read from the JSON).
    #[serde(skip)]
    pub written_by: Option<String>,
}

impl Cairn {
    /// The brief that asks for guideline changes: each high-rejection category with open
    /// rejection patterns, the patterns as evidence, and the current text of the guideline
    /// sections they are about, within the budget.
    pub async fn propose_guidelines(
        &self,
        request: ProposeRequest,
    ) -> Result<Answer<GuidelineBrief>, AskError> {
        let (budget, note) = answer::budget(request.max_tokens, DEFAULT_PROPOSE_TOKENS)?;
        if budget < MIN_PROPOSE_TOKENS {
            return Err(AskError::Review(format!(
                "max_tokens must be at least {MIN_PROPOSE_TOKENS} for the guideline brief (got {budget})"
            )));
        }
        let asked = asked_files(&request.files)?;
        let mut high: Vec<RuleStat> = self
            .memories
            .rule_stats()
            .await?
            .into_iter()
            .filter(|s| is_high_rejection(s, request.min_sample, request.min_rate))
            .collect();
        high.sort_by(|a, b| {
            b.rejection_rate
                .total_cmp(&a.rejection_rate)
                .then(b.flagged.cmp(&a.flagged))
                .then(a.category.cmp(&b.category))
        });
        let mut open = Vec::new();
        let mut addressed = Vec::new();
        for stat in high {
            let patterns = self.open_rejection_patterns(&stat.category).await?;
            if patterns.is_empty() {
                addressed.push(stat.category);
            } else if open.len() < MAX_CATEGORIES {
                open.push((stat, patterns));
            }
        }
        let root = self.repo.root.clone();
        let (files, unread) = off_runtime(move || read_guidelines(&root, asked)).await?;
        let brief = GuidelineBrief {
            categories: open
                .into_iter()
                .map(|(stat, patterns)| category_brief(stat, &patterns, &files))
                .collect(),
            addressed,
            files: files.iter().map(|f| f.path.clone()).collect(),
            unread,
        };
        Ok(write_brief(brief, &files, &request, budget, note))
    }

    /// Records a guideline proposal or the outcome of one recorded before: an accepted change
    /// marks its rejection patterns addressed, a rejected one keeps its feedback.
    pub async fn record_guideline_change(
        &self,
        request: GuidelineChangeRequest,
    ) -> Result<RecordedChange, AskError> {
        let outcome = request
            .outcome
            .as_deref()
            .map(str::parse::<memory::Outcome>)
            .transpose()?;
        let input = memory::ChangeInput {
            id: request.id,
            file: request.file,
            section: request.section,
            current_text: request.current_text,
            proposed_text: request.proposed_text,
            rationale: request.rationale,
            category: request.category,
            memories: request.memory_ids,
            confidence: request.confidence,
            outcome,
            feedback: request.feedback,
            by: request.by,
            written_by: request.written_by,
        };
        // The organisation's rejection patterns the change cites are checked beside this
        // repository's and marked in their own store.
        let org = self.org_memories().ok();
        let mut beside = Vec::new();
        if let Some(org) = org {
            let cited = match (&input.memories, &input.id) {
                (Some(ids), _) => ids.clone(),
                // The outcome of an earlier proposal: the patterns it cited.
                (None, Some(id)) => self
                    .memories
                    .guideline_changes()
                    .await?
                    .into_iter()
                    .find(|c| c.id == id.trim())
                    .map(|c| c.memories)
                    .unwrap_or_default(),
                (None, None) => Vec::new(),
            };
            for id in &cited {
                if let Ok(memory) = org.get(id).await {
                    beside.push(memory);
                }
            }
        }
        let mut recorded = self
            .memories
            .record_guideline_change(input, &beside)
            .await?;
        if let Some(org) = org
            && recorded.change.outcome == memory::Outcome::Accepted
        {
            let ids: Vec<String> = recorded
                .change
                .memories
                .iter()
                .filter(|id| beside.iter().any(|m| &m.id == *id))
                .cloned()
                .collect();
            if !ids.is_empty() {
                let marked = org.mark_addressed_by(&ids, &recorded.change.id).await?;
                recorded.addressed.extend(marked);
            }
        }
        Ok(recorded)
    }

    /// The open rejection patterns of a category in the repository's store and the
    /// organisation's, newest first.
    pub(crate) async fn open_rejection_patterns(
        &self,
        category: &str,
    ) -> Result<Vec<memory::Memory>, AskError> {
        let mut patterns = self.memories.open_rejection_patterns(category).await?;
        if let Ok(org) = self.org_memories() {
            patterns.extend(org.open_rejection_patterns(category).await?);
            patterns.sort_by(|a, b| {
                b.validity
                    .updated_at
                    .cmp(&a.validity.updated_at)
                    .then(a.id.cmp(&b.id))
            });
        }
        Ok(patterns)
    }
}

/// The files a request names, repository-relative; `None` for the defaults.
fn asked_files(files: &[String]) -> Result<Option<Vec<String>>, AskError> {
    if files.is_empty() {
        return Ok(None);
    }
    if files.len() > MAX_FILES_ASKED {
        return Err(AskError::Review(format!(
            "{} guideline files; at most {MAX_FILES_ASKED} per request",
            files.len()
        )));
    }
    files
        .iter()
        .map(|f| {
            guidelines::relative(f).ok_or_else(|| {
                AskError::Review(format!(
                    "guideline file `{}` must be a repository-relative path",
                    tokens::truncate(f, 120)
                ))
            })
        })
        .collect::<Result<Vec<_>, _>>()
        .map(Some)
}

/// The guideline files (those asked for, or those found), split into sections; those that
/// cannot be read are listed with the reason.
fn read_guidelines(root: &Path, asked: Option<Vec<String>>) -> (Vec<GuidelineFile>, Vec<Unread>) {
    let paths = asked.unwrap_or_else(|| guidelines::find(root));
    let mut files = Vec::new();
    let mut unread = Vec::new();
    for path in paths {
        match guidelines::read(root, &path) {
            Ok(text) => files.push(GuidelineFile {
                sections: guidelines::sections(&text),
                path,
            }),
            Err(why) => unread.push(why),
        }
    }
    (files, unread)
}

/// A category's brief: its open patterns as evidence and the sections most about it.
fn category_brief(stat: RuleStat, patterns: &[Memory], files: &[GuidelineFile]) -> CategoryBrief {
    let category_terms = guidelines::terms(&stat.category.replace(['-', '_', '/', '.', ':'], " "));
    let evidence_text: Vec<&str> = patterns.iter().map(|m| m.content.as_str()).collect();
    let pattern_terms = guidelines::terms(&evidence_text.join("\n"));
    let mut scored: Vec<(f64, usize, &str, &Section)> = files
        .iter()
        .flat_map(|f| f.sections.iter().map(move |s| (f.path.as_str(), s)))
        .enumerate()
        .map(|(order, (file, section))| {
            let score = guidelines::relevance(section, &category_terms, &pattern_terms);
            (score, order, file, section)
        })
        .filter(|(score, ..)| *score >= guidelines::RELEVANT)
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    CategoryBrief {
        category: stat.category,
        flagged: stat.flagged,
        rejected: stat.rejected,
        rejection_rate: stat.rejection_rate,
        patterns: patterns
            .iter()
            .take(MAX_PATTERNS)
            .map(|m| Evidence {
                id: m.id.clone(),
                title: m.title.clone(),
                content: tokens::truncate(&m.content, EVIDENCE_SHOWN),
                source_ref: m.provenance.source_ref.clone(),
                paths: m.anchors.paths.clone(),
            })
            .collect(),
        sections: scored
            .into_iter()
            .take(MAX_SECTIONS)
            .map(|(_, _, file, s)| SectionText {
                file: file.to_string(),
                heading: s
                    .heading
                    .as_deref()
                    .map(|h| crate::tokens::truncate(h, 200)),
                line: s.line,
                text: tokens::truncate(&s.text, SECTION_SHOWN),
            })
            .collect(),
    }
}

/// A code fence longer than any run of backticks in `text`.
fn fence_for(text: &str) -> String {
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    "`".repeat(longest.max(2) + 1)
}

fn percent(rate: f64) -> String {
    format!("{:.0}%", rate * 100.0)
}

const LEFT_OUT: LeftOut = LeftOut {
    unit: "items",
    advice: " (raise max_tokens, or name fewer guideline files)",
};

/// The brief's text: the request, a part per category (evidence, then sections), the
/// guideline files, and what to answer (always written, so room is kept for it).
fn write_brief(
    brief: GuidelineBrief,
    files: &[GuidelineFile],
    request: &ProposeRequest,
    budget: usize,
    note: Option<String>,
) -> Answer<GuidelineBrief> {
    let mut page = Page::new(budget, note.into_iter().collect());
    page.force("# Refine the review guidelines");
    page.force(
        "Review findings of the categories below are usually rejected in this repository: what \
the review guidelines ask for is not what the team wants. Propose concrete, small \
changes to the guideline files so reviews stop raising what the evidence says is noise (or \
raise it the way the team wants). cairn never edits these files: a person applies an accepted \
change (or asks you to).",
    );
    let tail = what_to_answer(&brief);
    let room = page.max().saturating_sub(tokens::count(&tail) + 1);
    if brief.categories.is_empty() {
        page.push_until(
            format!(
                "\nNo rule category with rejection patterns still open is rejected in {}+ of at least {} findings: nothing to propose yet.",
                percent(request.min_rate),
                request.min_sample
            ),
            room,
        );
    }
    if !brief.addressed.is_empty() {
        page.push_until(
            format!(
                "\nAlready addressed (every rejection pattern marked): {}.",
                brief.addressed.join(", ")
            ),
            room,
        );
    }
    for category in &brief.categories {
        write_category(&mut page, category, files, room);
    }
    page.push_until("\n## Guideline files".to_string(), room);
    if brief.files.is_empty() {
        page.push_until(
            "- none found (looked for CLAUDE.md, AGENTS.md, GEMINI.md, REVIEW.md, \
.github/copilot-instructions.md, .cursor/rules/*.mdc, .claude/skills/**/SKILL.md): propose a \
new section in the file the team's assistant reads"
                .to_string(),
            room,
        );
    } else {
        page.push_until(format!("- read: {}", brief.files.join(", ")), room);
    }
    for unread in &brief.unread {
        page.push_until(
            format!("- not read: {} ({})", unread.path, unread.reason),
            room,
        );
    }
    page.force(tail);
    page.finish(brief, LEFT_OUT)
}

/// One category's part: the rate, the evidence, the relevant sections (or the files'
/// headings when none is about it).
fn write_category(page: &mut Page, category: &CategoryBrief, files: &[GuidelineFile], room: usize) {
    page.push_until(
        format!(
            "\n## `{}`: {} of {} findings rejected ({}; sample {})",
            category.category,
            category.rejected,
            category.flagged,
            percent(category.rejection_rate),
            category.flagged
        ),
        room,
    );
    page.push_until(
        "Rejection patterns not yet addressed (the evidence):".to_string(),
        room,
    );
    for p in &category.patterns {
        let mut facts = vec![p.id.clone()];
        facts.extend(p.source_ref.clone());
        facts.extend(p.paths.iter().take(3).cloned());
        page.push_until(format!("- {}: {}", facts.join(" · "), p.content), room);
    }
    if category.sections.is_empty() {
        page.push_until(
            format!(
                "No guideline section is about `{}`: propose where it belongs. Headings:",
                category.category
            ),
            room,
        );
        for file in files {
            let headings: Vec<&str> = file.headings().take(HEADINGS_SHOWN).collect();
            let listed = if headings.is_empty() {
                "(no headings)".to_string()
            } else {
                headings.join(" · ")
            };
            page.push_until(format!("- {}: {listed}", file.path), room);
        }
        return;
    }
    page.push_until("Guideline sections about it:".to_string(), room);
    for s in &category.sections {
        let fence = fence_for(&s.text);
        page.push_until(
            format!(
                "\n### {} § {} (line {})\n{fence}markdown\n{}\n{fence}",
                s.file,
                s.heading.as_deref().unwrap_or("(before the first heading)"),
                s.line,
                s.text
            ),
            room,
        );
    }
}

/// What to answer, with the JSON of `record_guideline_change` filled in from the first
/// category.
fn what_to_answer(brief: &GuidelineBrief) -> String {
    let first = brief.categories.first();
    let section = first.and_then(|c| c.sections.first());
    let memory_ids: Vec<String> = first.map_or_else(
        || vec!["m_…".to_string()],
        |c| c.patterns.iter().take(3).map(|p| p.id.clone()).collect(),
    );
    // In the order a proposal is thought through (a JSON object's keys would be sorted).
    let example = [
        (
            "file",
            json!(section.map_or("CLAUDE.md", |s| s.file.as_str())),
        ),
        (
            "section",
            json!(
                section
                    .and_then(|s| s.heading.as_deref())
                    .unwrap_or("Review")
            ),
        ),
        (
            "current_text",
            json!("the section's text as it is (empty for a new section)"),
        ),
        (
            "proposed_text",
            json!("the section's text as you propose it"),
        ),
        ("rationale", json!("why, citing the rejection reasons")),
        (
            "category",
            json!(first.map_or("naming", |c| c.category.as_str())),
        ),
        ("memory_ids", json!(memory_ids)),
        ("confidence", json!(0.7)),
        ("outcome", json!("proposed")),
    ]
    .iter()
    .map(|(key, value)| format!("\"{key}\": {value}"))
    .collect::<Vec<_>>()
    .join(", ");
    format!(
        "\n## What to answer\n\
For each proposal give: the file, the section, its current text (verbatim), the proposed \
text, the rationale, the supporting memory ids (the rejection patterns above) and your \
confidence (0–1). Propose only what the evidence supports; one change per section.\n\
Record each with `record_guideline_change` (or `cairn rules --record FILE.json`):\n\
```json\n{{{example}}}\n```\n\
When the person decides, record the outcome by id: `{{\"id\": \"g_…\", \"outcome\": \
\"accepted\", \"feedback\": \"…\", \"by\": \"…\"}}` (or `\"rejected\"`). An accepted change \
marks its rejection patterns addressed; `cairn rules` then shows the category's rejection \
rate before and after it."
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn brief(sections: Vec<SectionText>) -> GuidelineBrief {
        GuidelineBrief {
            categories: vec![CategoryBrief {
                category: "naming".to_string(),
                flagged: 3,
                rejected: 3,
                rejection_rate: 1.0,
                patterns: (0..40)
                    .map(|i| Evidence {
                        id: format!("m_{i:016x}"),
                        title: "naming: rename total".to_string(),
                        content: "Rejected naming finding: rename total to compute_total — reason: total is the domain term here".to_string(),
                        source_ref: Some(format!("PR-{i}")),
                        paths: vec!["shop/models.py".to_string()],
                    })
                    .collect(),
                sections,
            }],
            addressed: Vec::new(),
            files: vec!["CLAUDE.md".to_string()],
            unread: vec![Unread {
                path: "AGENTS.md".to_string(),
                reason: "a link that leads outside the repository".to_string(),
            }],
        }
    }

    #[test]
    fn the_brief_keeps_its_instructions_within_the_budget() {
        let section = SectionText {
            file: "CLAUDE.md".to_string(),
            heading: Some("Naming".to_string()),
            line: 3,
            text: "Use descriptive names.\n```\ncode\n```".to_string(),
        };
        let full = write_brief(
            brief(vec![section.clone()]),
            &[],
            &ProposeRequest::default(),
            6_000,
            None,
        );
        assert_eq!(full.truncated, 0);
        assert!(
            full.text
                .contains("### CLAUDE.md § Naming (line 3)\n````markdown"),
            "{}",
            full.text
        );
        assert!(
            full.text
                .contains("- not read: AGENTS.md (a link that leads outside")
        );
        assert!(
            full.text
                .contains("{\"file\": \"CLAUDE.md\", \"section\": \"Naming\", \"current_text\": "),
            "{}",
            full.text
        );
        assert!(
            full.text
                .contains("\"memory_ids\": [\"m_0000000000000000\",\"m_0000000000000001\""),
            "{}",
            full.text
        );
        let small = write_brief(
            brief(vec![section]),
            &[],
            &ProposeRequest::default(),
            1_000,
            None,
        );
        assert!(small.truncated > 0);
        assert!(small.tokens <= 1_000, "{} tokens", small.tokens);
        assert!(small.text.contains("## What to answer"));
        assert!(small.text.contains("record_guideline_change"));
    }

    #[test]
    fn files_named_must_stay_in_the_repository() {
        assert_eq!(asked_files(&[]).unwrap(), None);
        assert_eq!(
            asked_files(&["./docs/REVIEW.md".to_string()]).unwrap(),
            Some(vec!["docs/REVIEW.md".to_string()])
        );
        for bad in ["../x.md", "/etc/passwd", ".git/config"] {
            let error = asked_files(&[bad.to_string()]).unwrap_err().to_string();
            assert!(error.contains("repository-relative"), "{bad}: {error}");
        }
        assert!(asked_files(&vec!["a.md".to_string(); MAX_FILES_ASKED + 1]).is_err());
    }
}
