//! The review briefing: compact Markdown for the model plus the same facts as structured
//! content, within a token budget. Sections are written in the order a reviewer needs them
//! (what changed and who depends on it, tests, risk, the team's memories, the author,
//! history); each takes at most its share so one long section cannot crowd out the rest.

use serde::Serialize;

use super::stats::{AuthorStats, RuleStat};
use super::{Analysis, DIFF_LINES_SHOWN, FileReport, SymbolChange, TestToRun, Untested, Use};
use crate::answer::{Answer, LeftOut, Page};
use crate::context::{MemoryNote, lines_note};
use crate::history::Expert;

/// The default budget of a briefing.
pub const DEFAULT_REVIEW_TOKENS: usize = 1_500;

/// Why a change is risky.
#[derive(Debug, Clone, Serialize)]
pub struct Risk {
    /// `risk_module` (a memory), `fix_prone` (history) or `central` (graph).
    pub kind: String,
    pub subject: String,
    pub detail: String,
}

/// The author of the change and what is known of them.
#[derive(Debug, Clone, Serialize)]
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
#[derive(Debug, Clone, Serialize)]
pub struct FileExperts {
    pub path: String,
    pub experts: Vec<Expert>,
}

/// A file that usually changes with a changed one but is not in the diff.
#[derive(Debug, Clone, Serialize)]
pub struct MissingPartner {
    pub path: String,
    pub with: String,
    pub support: usize,
    pub confidence: f64,
}

/// A past commit on the changed files.
#[derive(Debug, Clone, Serialize)]
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
pub type ReviewReport = Answer<ReviewBody>;

/// What a review briefing holds, for programs.
#[derive(Debug, Clone, Serialize)]
pub struct ReviewBody {
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
}

const LEFT_OUT: LeftOut = LeftOut {
    unit: "lines",
    advice: " (raise max_tokens)",
};

/// Writes the briefing within `max_tokens`.
pub fn render(analysis: Analysis, extras: Extras, max_tokens: usize) -> ReviewReport {
    let mut notes = analysis.notes.clone();
    notes.extend(extras.notes.iter().cloned());
    let mut out = Page::new(max_tokens, notes);
    out.force(title(&analysis, &extras));
    let total = out.remaining();
    let share = |part: f64| (total as f64 * part) as usize;

    // What changed, symbol by symbol, with who depends on it.
    let limit = out.used() + share(0.5);
    for file in &analysis.files {
        write_file(&mut out, file, limit);
    }

    let mut tests_to_run = analysis.tests.clone();
    if !tests_to_run.is_empty() || !analysis.untested.is_empty() {
        let limit = out.used() + share(0.15);
        write_tests(&mut out, &mut tests_to_run, limit);
        write_untested(&mut out, &analysis.untested, limit + 40);
    }

    if !extras.risks.is_empty() {
        let limit = out.used() + share(0.08);
        write_section(&mut out, "## Risk".to_string(), risk_lines(&extras), limit);
    }

    // The team's memories.
    let limit = out.used() + share(0.12);
    if !extras.memories.is_empty() {
        let heading = "## Team patterns and decisions".to_string();
        let lines = extras.memories.iter().map(MemoryNote::line).collect();
        write_section(&mut out, heading, lines, limit);
    }
    if !extras.rejections.is_empty() || !extras.rules.is_empty() {
        let limit = out.used() + share(0.07);
        let heading = "## Avoid (rejected here before)".to_string();
        write_section(&mut out, heading, avoid_lines(&extras), limit);
    }

    if let Some(author) = &extras.author {
        let limit = out.used() + share(0.06);
        write_section(
            &mut out,
            author_heading(author),
            author_lines(author),
            limit,
        );
    }

    if !extras.experts.is_empty() || !extras.co_changes.is_empty() || !extras.commits.is_empty() {
        let limit = out.used() + share(0.1);
        write_section(
            &mut out,
            "## History".to_string(),
            history_lines(&extras),
            limit,
        );
    }

    let body = ReviewBody {
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
    };
    out.finish(body, LEFT_OUT)
}

/// The first line: how large the change is, what was compared, and by whom.
fn title(analysis: &Analysis, extras: &Extras) -> String {
    let files = analysis.files.len();
    let added: usize = analysis.files.iter().map(|f| f.added).sum();
    let removed: usize = analysis.files.iter().map(|f| f.removed).sum();
    let symbols: usize = analysis.files.iter().map(|f| f.symbols.len()).sum();
    format!(
        "# Review: {files} file{}, +{added} −{removed}, {symbols} symbol{} · {}{}",
        if files == 1 { "" } else { "s" },
        if symbols == 1 { "" } else { "s" },
        extras.label,
        extras
            .author
            .as_ref()
            .map(|a| format!(" · author {}", a.developer))
            .unwrap_or_default()
    )
}

/// A changed file's heading: path, kind of change, rename, line counts.
fn file_heading(file: &FileReport) -> String {
    let rename = file
        .old_path
        .as_deref()
        .map(|o| format!(" from {o}"))
        .unwrap_or_default();
    format!(
        "## {} ({}{rename}, +{} −{}){}",
        file.path,
        file.change.as_str(),
        file.added,
        file.removed,
        if file.indexed { "" } else { " · not indexed" }
    )
}

/// A changed symbol's line: how it changed, where, which lines, and its reach.
fn symbol_line(s: &SymbolChange) -> String {
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
    format!(
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
    )
}

/// What depends on a changed symbol and the side effects it gains or loses, one line each.
fn symbol_detail_lines(s: &SymbolChange) -> Vec<String> {
    [
        uses_line("callers", &s.callers, 5),
        uses_line("importers", &s.importers, 3),
        uses_line("subclasses", &s.subclasses, 3),
        (!s.top_dependents.is_empty())
            .then(|| format!("  top dependents: {}", s.top_dependents.join(", "))),
        effects_line(&s.effects_added, &s.effects_removed),
    ]
    .into_iter()
    .flatten()
    .collect()
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

/// A test to run and how it reaches the change.
fn test_line(t: &TestToRun) -> String {
    format!(
        "- {} [{}{}]",
        t.id,
        t.how,
        if t.mentions.is_empty() {
            String::new()
        } else {
            format!(", names it{}", lines_note(&t.mentions))
        }
    )
}

fn risk_lines(extras: &Extras) -> Vec<String> {
    extras
        .risks
        .iter()
        .map(|r| format!("- {} [{}]: {}", r.subject, r.kind, r.detail))
        .collect()
}

/// Review rules often rejected here, then the rejection patterns behind them.
fn avoid_lines(extras: &Extras) -> Vec<String> {
    let rules = extras.rules.iter().map(|r| {
        format!(
            "- rule `{}`: {} of {} findings rejected ({:.0}%)",
            r.category,
            r.rejected,
            r.flagged,
            r.rejection_rate * 100.0
        )
    });
    rules
        .chain(extras.rejections.iter().map(MemoryNote::line))
        .collect()
}

/// The author's heading: who, where the name came from, and their review record.
fn author_heading(author: &AuthorBrief) -> String {
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
    head
}

/// The author's profile, then the memories about them.
fn author_lines(author: &AuthorBrief) -> Vec<String> {
    author
        .profile
        .iter()
        .chain(&author.memories)
        .map(MemoryNote::line)
        .collect()
}

/// Files missing from the change, who knows the changed ones, and past commits on them.
fn history_lines(extras: &Extras) -> Vec<String> {
    let partners = extras.co_changes.iter().map(|partner| {
        format!(
            "- usually changes with {} ({} commits, {:.0}% of {}'s) — not in this diff",
            partner.path,
            partner.support,
            partner.confidence * 100.0,
            partner.with
        )
    });
    let experts = extras.experts.iter().map(|e| {
        let names: Vec<String> = e
            .experts
            .iter()
            .map(|x| format!("{} ({} commits)", x.author, x.commits))
            .collect();
        format!("- experts {}: {}", e.path, names.join(", "))
    });
    let commits = extras.commits.iter().map(|c| {
        format!(
            "- {} {} {}{}: {}",
            c.id,
            c.date,
            c.author,
            if c.fix { " [fix]" } else { "" },
            c.summary
        )
    });
    partners.chain(experts).chain(commits).collect()
}

/// Writes a heading and, when it fits, every line that fits under `limit` (a long line does
/// not keep a shorter one after it out).
fn write_section(out: &mut Page, heading: String, lines: Vec<String>, limit: usize) {
    if out.push_until(heading, limit) {
        for line in lines {
            out.push_until(line, limit);
        }
    }
}

/// Writes a changed file: heading, notes, side effects, module-level lines, then its symbols
/// until one does not fit.
fn write_file(out: &mut Page, file: &FileReport, limit: usize) {
    if !out.push_until(file_heading(file), limit) {
        return;
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
        push_diff(out, &file.module_diff, limit);
    }
    for s in &file.symbols {
        if !out.push_until(symbol_line(s), limit) {
            break;
        }
        push_diff(out, &s.diff_lines, limit);
        for line in symbol_detail_lines(s) {
            out.push_until(line, limit);
        }
    }
}

/// Most tests a briefing lists.
const TESTS_SHOWN: usize = 10;

/// Writes the tests to run until the share or the count runs out, and cuts the list to what
/// was written (keeping at least [`TESTS_SHOWN`]).
fn write_tests(out: &mut Page, tests: &mut Vec<TestToRun>, limit: usize) {
    if tests.is_empty() || !out.push_until(format!("## Tests to run ({})", tests.len()), limit) {
        return;
    }
    let mut kept = 0;
    for t in tests.iter() {
        if kept >= TESTS_SHOWN || !out.push_until(test_line(t), limit) {
            break;
        }
        kept += 1;
    }
    if kept < tests.len() {
        out.push_until(format!("- … {} more", tests.len() - kept), limit);
        out.dropped += tests.len() - kept;
        tests.truncate(kept.max(TESTS_SHOWN));
    }
}

fn write_untested(out: &mut Page, untested: &[Untested], limit: usize) {
    if untested.is_empty() {
        return;
    }
    out.push_until("## Changed code no test reaches".to_string(), limit);
    for u in untested {
        out.push_until(format!("- `{}`: {}", u.id, u.reason), limit);
    }
}

fn push_diff(out: &mut Page, lines: &[String], limit: usize) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::review::SymbolChangeKind;

    #[test]
    fn history_lines_name_missing_partners_then_experts_then_commits() {
        let extras = Extras {
            co_changes: vec![MissingPartner {
                path: "shop/views.py".to_string(),
                with: "shop/models.py".to_string(),
                support: 4,
                confidence: 0.8,
            }],
            experts: vec![FileExperts {
                path: "shop/models.py".to_string(),
                experts: vec![Expert {
                    author: "bob@example.com".to_string(),
                    name: "Bob".to_string(),
                    commits: 3,
                    weight: 1.0,
                    last: 0,
                }],
            }],
            commits: vec![CommitBrief {
                id: "abc1234".to_string(),
                date: "2024-01-02".to_string(),
                author: "bob@example.com".to_string(),
                summary: "Fix cancel crash".to_string(),
                fix: true,
            }],
            ..Extras::default()
        };
        assert_eq!(
            history_lines(&extras),
            [
                "- usually changes with shop/views.py (4 commits, 80% of shop/models.py's) — not in this diff",
                "- experts shop/models.py: bob@example.com (3 commits)",
                "- abc1234 2024-01-02 bob@example.com [fix]: Fix cancel crash",
            ]
        );
    }

    #[test]
    fn a_symbol_line_says_how_and_where_it_changed() {
        let symbol = SymbolChange {
            id: "shop/models.py::Order.total".to_string(),
            kind: "method".to_string(),
            change: SymbolChangeKind::Modified,
            start_line: 10,
            end_line: 30,
            added_lines: vec![12, 13, 14, 20],
            removed_lines: vec![15],
            indexed: true,
            callers: Vec::new(),
            importers: Vec::new(),
            subclasses: Vec::new(),
            reach: 7,
            top_dependents: vec!["shop/views.py::checkout".to_string()],
            effects_added: vec!["network".to_string()],
            effects_removed: Vec::new(),
            name: "total".to_string(),
            diff_lines: Vec::new(),
        };
        assert_eq!(
            symbol_line(&symbol),
            "- modified method `shop/models.py::Order.total` L10-30 · changed L12-14,20; old L15 removed · reach 7"
        );
        assert_eq!(
            symbol_detail_lines(&symbol),
            [
                "  top dependents: shop/views.py::checkout",
                "  side effects: +network"
            ]
        );
    }

    #[test]
    fn tests_beyond_the_shown_are_counted() {
        let mut tests: Vec<TestToRun> = (0..15)
            .map(|i| TestToRun {
                id: format!("tests/test_{i}.py"),
                how: "reaches".to_string(),
                covers: Vec::new(),
                mentions: Vec::new(),
                distance: i,
            })
            .collect();
        let mut page = Page::new(4_000, Vec::new());
        write_tests(&mut page, &mut tests, 2_000);
        assert_eq!(tests.len(), TESTS_SHOWN);
        assert_eq!(page.dropped, 5);
        let text = page.finish((), LEFT_OUT).text;
        assert!(text.starts_with("## Tests to run (15)\n- tests/test_0.py [reaches]\n"));
        assert!(
            text.contains("- tests/test_9.py [reaches]\n- … 5 more\n"),
            "{text}"
        );
    }
}
