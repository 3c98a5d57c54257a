//! The review briefing: compact Markdown for the model plus the same facts as structured
//! content, within a token budget. Sections are written in the order a reviewer needs them
//! (what changed and who depends on it, tests, risk, the team's memories, the author,
//! history); each takes at most its share so one long section cannot crowd out the rest.

use schemars::JsonSchema;
use serde::Serialize;

use super::history::Expert;
use super::stats::{AuthorStats, RuleStat};
use super::{Analysis, DIFF_LINES_SHOWN, FileReport, TestToRun, Untested, Use};
use crate::context::{MemoryNote, lines_note};
use crate::tokens::Budget;

/// The default budget of a briefing.
pub const DEFAULT_REVIEW_TOKENS: usize = 1_500;

/// Why a change is risky.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Risk {
    /// `risk_module` (a memory), `fix_prone` (history) or `central` (graph).
    pub kind: String,
    pub subject: String,
    pub detail: String,
}

/// The author of the change and what is known of them.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct AuthorBrief {
    pub developer: String,
    /// `given` or `git`.
    pub from: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub profile: Option<MemoryNote>,
    pub stats: AuthorStats,
    pub memories: Vec<MemoryNote>,
}

/// Who knows a changed file.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct FileExperts {
    pub path: String,
    pub experts: Vec<Expert>,
}

/// A file that usually changes with a changed one but is not in the diff.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct MissingPartner {
    pub path: String,
    pub with: String,
    pub support: usize,
    pub confidence: f64,
}

/// A past commit on the changed files.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct CommitBrief {
    pub id: String,
    pub date: String,
    pub author: String,
    pub summary: String,
    pub fix: bool,
}

/// What the caller adds to the analysis: memories, history and the author.
#[derive(Debug, Clone, Default)]
pub struct Extras {
    /// What was compared: `HEAD → working tree`, `main..feature`, `pasted diff`.
    pub label: String,
    pub author: Option<AuthorBrief>,
    pub memories: Vec<MemoryNote>,
    pub risks: Vec<Risk>,
    pub rejections: Vec<MemoryNote>,
    pub rules: Vec<RuleStat>,
    pub experts: Vec<FileExperts>,
    pub co_changes: Vec<MissingPartner>,
    pub commits: Vec<CommitBrief>,
    pub notes: Vec<String>,
}

/// The answer of `review_diff`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ReviewReport {
    pub compared: String,
    pub files: Vec<FileReport>,
    pub tests_to_run: Vec<TestToRun>,
    pub untested: Vec<Untested>,
    pub risks: Vec<Risk>,
    pub memories: Vec<MemoryNote>,
    pub rejection_patterns: Vec<MemoryNote>,
    pub high_rejection_rules: Vec<RuleStat>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub author: Option<AuthorBrief>,
    pub experts: Vec<FileExperts>,
    pub usually_changes_with: Vec<MissingPartner>,
    pub related_commits: Vec<CommitBrief>,
    pub tokens: usize,
    pub max_tokens: usize,
    pub truncated: usize,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    #[serde(skip)]
    pub text: String,
}

fn uses_line(title: &str, uses: &[Use], shown: usize) -> Option<String> {
    if uses.is_empty() {
        return None;
    }
    let mut parts: Vec<String> = uses
        .iter()
        .take(shown)
        .map(|u| format!("{}{}", u.id, lines_note(&u.lines)))
        .collect();
    if uses.len() > shown {
        parts.push(format!("+{} more", uses.len() - shown));
    }
    Some(format!("  {title} ({}): {}", uses.len(), parts.join(", ")))
}

fn ranges(lines: &[u32]) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let start = lines[i];
        let mut end = start;
        while i + 1 < lines.len() && lines[i + 1] == end + 1 {
            i += 1;
            end = lines[i];
        }
        out.push(if start == end {
            start.to_string()
        } else {
            format!("{start}-{end}")
        });
        i += 1;
    }
    out.join(",")
}

fn effects_line(added: &[String], removed: &[String]) -> Option<String> {
    if added.is_empty() && removed.is_empty() {
        return None;
    }
    let mut parts: Vec<String> = added.iter().map(|c| format!("+{c}")).collect();
    parts.extend(removed.iter().map(|c| format!("−{c}")));
    Some(format!("  side effects: {}", parts.join(" ")))
}

/// Writes the briefing within `max_tokens`.
pub fn render(analysis: Analysis, extras: Extras, max_tokens: usize) -> ReviewReport {
    let mut notes = analysis.notes.clone();
    notes.extend(extras.notes.iter().cloned());
    let mut out = Budget::new(max_tokens.saturating_sub(crate::context::reserve_for_notes(&notes)));
    let added: usize = analysis.files.iter().map(|f| f.added).sum();
    let removed: usize = analysis.files.iter().map(|f| f.removed).sum();
    let symbols: usize = analysis.files.iter().map(|f| f.symbols.len()).sum();
    out.force(format!(
        "# Review: {} file{}, +{added} −{removed}, {symbols} symbol{} · {}{}",
        analysis.files.len(),
        if analysis.files.len() == 1 { "" } else { "s" },
        if symbols == 1 { "" } else { "s" },
        extras.label,
        extras
            .author
            .as_ref()
            .map(|a| format!(" · author {}", a.developer))
            .unwrap_or_default()
    ));
    let total = out.remaining();
    let share = |part: f64| (total as f64 * part) as usize;

    // What changed, symbol by symbol, with who depends on it.
    let limit = out.used() + share(0.5);
    for file in &analysis.files {
        let rename = file
            .old_path
            .as_deref()
            .map(|o| format!(" from {o}"))
            .unwrap_or_default();
        let head = format!(
            "## {} ({}{rename}, +{} −{}){}",
            file.path,
            file.change.as_str(),
            file.added,
            file.removed,
            if file.indexed { "" } else { " · not indexed" }
        );
        if !out.push_until(head, limit) {
            continue;
        }
        for note in &file.notes {
            out.push_until(format!("_{note}_"), limit);
        }
        if let Some(line) = effects_line(&file.effects_added, &file.effects_removed) {
            out.push_until(line.replacen("  side", "file side", 1), limit);
        }
        if !file.module_lines.is_empty() {
            out.push_until(
                format!("- module level L{}", ranges(&file.module_lines)),
                limit,
            );
            push_diff(&mut out, &file.module_diff, limit);
        }
        for s in &file.symbols {
            let mut changed = if s.added_lines.is_empty() {
                String::new()
            } else {
                format!("L{}", ranges(&s.added_lines))
            };
            if !s.removed_lines.is_empty() {
                if !changed.is_empty() {
                    changed.push_str("; ");
                }
                changed.push_str(&format!("old L{} removed", ranges(&s.removed_lines)));
            }
            let line = format!(
                "- {} {} `{}` L{}-{} · changed {changed}{}",
                s.change.as_str(),
                s.kind,
                s.id,
                s.start_line,
                s.end_line,
                if s.indexed {
                    format!(" · reach {}", s.reach)
                } else {
                    String::new()
                }
            );
            if !out.push_until(line, limit) {
                break;
            }
            push_diff(&mut out, &s.diff_lines, limit);
            for line in [
                uses_line("callers", &s.callers, 5),
                uses_line("importers", &s.importers, 3),
                uses_line("subclasses", &s.subclasses, 3),
                (!s.top_dependents.is_empty())
                    .then(|| format!("  top dependents: {}", s.top_dependents.join(", "))),
                effects_line(&s.effects_added, &s.effects_removed),
            ]
            .into_iter()
            .flatten()
            {
                out.push_until(line, limit);
            }
        }
    }

    // Tests.
    let mut tests_to_run = analysis.tests.clone();
    if !tests_to_run.is_empty() || !analysis.untested.is_empty() {
        let limit = out.used() + share(0.15);
        if !tests_to_run.is_empty()
            && out.push_until(format!("## Tests to run ({})", tests_to_run.len()), limit)
        {
            let mut kept = 0;
            for t in &tests_to_run {
                let line = format!(
                    "- {} [{}{}]",
                    t.id,
                    t.how,
                    if t.mentions.is_empty() {
                        String::new()
                    } else {
                        format!(", names it{}", lines_note(&t.mentions))
                    }
                );
                if kept >= 10 || !out.push_until(line, limit) {
                    break;
                }
                kept += 1;
            }
            if kept < tests_to_run.len() {
                out.push_until(format!("- … {} more", tests_to_run.len() - kept), limit);
                out.dropped += tests_to_run.len() - kept;
                tests_to_run.truncate(kept.max(10));
            }
        }
        if !analysis.untested.is_empty() {
            out.push_until("## Changed code no test reaches".to_string(), limit + 40);
            for u in &analysis.untested {
                out.push_until(format!("- `{}`: {}", u.id, u.reason), limit + 40);
            }
        }
    }

    // Risk.
    if !extras.risks.is_empty() {
        let limit = out.used() + share(0.08);
        if out.push_until("## Risk".to_string(), limit) {
            for r in &extras.risks {
                out.push_until(format!("- {} [{}]: {}", r.subject, r.kind, r.detail), limit);
            }
        }
    }

    // The team's memories.
    let limit = out.used() + share(0.12);
    if !extras.memories.is_empty()
        && out.push_until("## Team patterns and decisions".to_string(), limit)
    {
        for m in &extras.memories {
            out.push_until(m.line(), limit);
        }
    }
    if !extras.rejections.is_empty() || !extras.rules.is_empty() {
        let limit = out.used() + share(0.07);
        if out.push_until("## Avoid (rejected here before)".to_string(), limit) {
            for r in &extras.rules {
                out.push_until(
                    format!(
                        "- rule `{}`: {} of {} findings rejected ({:.0}%)",
                        r.category,
                        r.rejected,
                        r.flagged,
                        r.rejection_rate * 100.0
                    ),
                    limit,
                );
            }
            for m in &extras.rejections {
                out.push_until(m.line(), limit);
            }
        }
    }

    // The author.
    if let Some(author) = &extras.author {
        let limit = out.used() + share(0.06);
        let stats = &author.stats;
        let mut head = format!("## Author {} ({})", author.developer, author.from);
        if stats.reviews > 0 {
            head.push_str(&format!(
                " · {} reviewed changes, {} findings ({} implemented, {} rejected){}",
                stats.reviews,
                stats.findings,
                stats.implemented,
                stats.rejected,
                if stats.top_categories.is_empty() {
                    String::new()
                } else {
                    format!(
                        ", most flagged: {}",
                        stats
                            .top_categories
                            .iter()
                            .take(3)
                            .map(|(c, n)| format!("{c} {n}"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    )
                }
            ));
        }
        if out.push_until(head, limit) {
            if let Some(profile) = &author.profile {
                out.push_until(profile.line(), limit);
            }
            for m in &author.memories {
                out.push_until(m.line(), limit);
            }
        }
    }

    // History.
    if !extras.experts.is_empty() || !extras.co_changes.is_empty() || !extras.commits.is_empty() {
        let limit = out.used() + share(0.1);
        if out.push_until("## History".to_string(), limit) {
            for partner in &extras.co_changes {
                out.push_until(
                    format!(
                        "- usually changes with {} ({} commits, {:.0}% of {}'s) — not in this diff",
                        partner.path,
                        partner.support,
                        partner.confidence * 100.0,
                        partner.with
                    ),
                    limit,
                );
            }
            for e in &extras.experts {
                let names: Vec<String> = e
                    .experts
                    .iter()
                    .map(|x| format!("{} ({} commits)", x.author, x.commits))
                    .collect();
                out.push_until(format!("- experts {}: {}", e.path, names.join(", ")), limit);
            }
            for c in &extras.commits {
                out.push_until(
                    format!(
                        "- {} {} {}{}: {}",
                        c.id,
                        c.date,
                        c.author,
                        if c.fix { " [fix]" } else { "" },
                        c.summary
                    ),
                    limit,
                );
            }
        }
    }

    let truncated = out.dropped;
    if truncated > 0 {
        notes.push(format!(
            "truncated: {truncated} lines left out to fit {max_tokens} tokens (raise max_tokens)"
        ));
    }
    for note in &notes {
        out.force(format!("_{note}_"));
    }
    let tokens = out.used();
    ReviewReport {
        compared: extras.label,
        files: analysis.files,
        tests_to_run,
        untested: analysis.untested,
        risks: extras.risks,
        memories: extras.memories,
        rejection_patterns: extras.rejections,
        high_rejection_rules: extras.rules,
        author: extras.author,
        experts: extras.experts,
        usually_changes_with: extras.co_changes,
        related_commits: extras.commits,
        tokens,
        max_tokens,
        truncated,
        notes,
        text: out.into_text(),
    }
}

fn push_diff(out: &mut Budget, lines: &[String], limit: usize) {
    if lines.is_empty() {
        return;
    }
    if !out.push_until("  ```diff".to_string(), limit) {
        return;
    }
    for line in lines.iter().take(DIFF_LINES_SHOWN) {
        if !out.push_until(format!("  {line}"), limit) {
            break;
        }
    }
    if lines.len() > DIFF_LINES_SHOWN {
        out.push_until(
            format!("  … {} more changed lines", lines.len() - DIFF_LINES_SHOWN),
            limit,
        );
    }
    out.force("  ```".to_string());
}
