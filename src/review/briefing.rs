//! The review briefing: compact Markdown for the model plus the same facts as structured
//! content, within a token budget. Sections are written in the order a reviewer needs them
//! (what changed and who depends on it, tests, risk, the team's memories, the author,
//! history); each takes at most its share so one long section cannot crowd out the rest.

use serde::Serialize;

use super::repo_knowledge::codeowners::Owned;
use super::repo_knowledge::cut;
use super::stats::{AuthorStats, RuleStat};
use super::{Analysis, DIFF_LINES_SHOWN, FileReport, SymbolChange, TestToRun, Untested, Use};
use crate::answer::{Answer, LeftOut, Page};
use crate::context::{MemoryNote, lines_note};
use crate::history::Expert;
use crate::tokens;

/// Longest risk detail a page shows, in bytes.
const RISK_DETAIL_BYTES: usize = 200;

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

/// Who owns a changed file, as `CODEOWNERS` says.
#[derive(Debug, Clone, Serialize)]
pub struct FileOwners {
    pub path: String,
    #[serde(flatten)]
    pub owned: Owned,
}

/// A file that should probably change with this change but is not in the diff, and why.
#[derive(Debug, Clone, Serialize)]
pub struct MissingPartner {
    pub path: String,
    /// The changed file it goes with.
    pub with: String,
    #[serde(flatten)]
    pub reason: PartnerReason,
}

/// Why a file missing from the change goes with it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "reason", rename_all = "snake_case")]
pub enum PartnerReason {
    /// It uses a symbol of `with` that the change removes or whose signature it alters:
    /// `how` it uses it (`calls`, `imports`, `overrides`, `may call`: a possible caller),
    /// `change` (`removed`, `signature`).
    Uses {
        symbol: String,
        how: &'static str,
        change: &'static str,
    },
    /// The code binds it to `with`: `how` (`lacks` a member the change uses, `implements` an
    /// interface whose method the change alters, `declares` a method the change re-signs,
    /// `starts using` a type it declares, `interface of` the one class implementing it) and
    /// the `symbol` that does.
    Tied { symbol: String, how: &'static str },
    /// It changed together with `with` in `support` of its `of` commits; `confidence` is that
    /// share, `weight` the share weighed by recency and specificity ([`crate::history::History::partners`]).
    History {
        support: usize,
        of: usize,
        confidence: f64,
        weight: f64,
    },
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
    /// Owners of the changed files, when the repository has a `CODEOWNERS`.
    pub owners: Vec<FileOwners>,
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
    /// Fixtures and helpers of the test trees the change touches: not tests to run.
    pub fixtures: Vec<TestToRun>,
    pub untested: Vec<Untested>,
    pub risks: Vec<Risk>,
    pub memories: Vec<MemoryNote>,
    pub rejection_patterns: Vec<MemoryNote>,
    pub high_rejection_rules: Vec<RuleStat>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub author: Option<AuthorBrief>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub owners: Vec<FileOwners>,
    pub experts: Vec<FileExperts>,
    pub usually_changes_with: Vec<MissingPartner>,
    pub related_commits: Vec<CommitBrief>,
}

const LEFT_OUT: LeftOut = LeftOut {
    unit: "lines",
    advice: " (raise max_tokens)",
};

/// Tokens kept for the history's heading (`## History` and its line break).
const HEADING_ROOM: usize = 4;

/// Writes the briefing within `max_tokens`. Every changed file and symbol gets its line
/// first; the tests to run and the files missing from the change keep their room; the
/// changes' details (diffs, callers) share what their part leaves, a little to every symbol
/// before more to any; the other sections take their shares in order.
pub fn render(analysis: Analysis, extras: Extras, max_tokens: usize) -> ReviewReport {
    let mut notes = analysis.notes.clone();
    notes.extend(extras.notes.iter().cloned());
    let mut out = Page::new(max_tokens, notes);
    out.force(title(&analysis, &extras));
    let total = out.remaining();
    let end = out.used() + total;
    let share = |part: f64| (total as f64 * part) as usize;

    let tests = test_lines(&analysis);
    let tests_room = cost(&tests).min(share(0.3));
    // The partners that fit their share, strongest first (a line is written whole or not at
    // all, so the weakest partners go until the lines fit).
    let mut named = extras.co_changes.len();
    let mut partners = partner_lines(&extras.co_changes);
    let fit = |named: &mut usize, partners: &mut Vec<String>, room: usize| {
        while *named > 0 && cost(partners) > room {
            *named -= 1;
            *partners = partner_lines(&extras.co_changes[..*named]);
        }
    };
    fit(&mut named, &mut partners, share(0.12));
    let partners_room = cost(&partners);
    // Sections before the history stop short of the partners' room and the heading above them.
    let before_history = end.saturating_sub(partners_room + HEADING_ROOM);

    // What changed: a line for every file and symbol, then the details.
    let mut changes = Changes::of(&analysis.files);
    if cost(&changes.skeleton_lines()) > share(0.6) {
        changes.compact();
    }
    let skeleton = cost(&changes.skeleton_lines());
    let room = share(0.55).min(total.saturating_sub(tests_room + partners_room + share(0.15)));
    out.dropped += changes.allot(room.saturating_sub(skeleton));
    changes.write(&mut out, before_history);

    let limit = (out.used() + tests_room).min(before_history);
    write_section_lines(&mut out, tests, limit);
    if !analysis.untested.is_empty() {
        let limit = (out.used() + share(0.05)).min(before_history);
        write_untested(&mut out, &analysis.untested, limit);
    }

    write_risk_and_team(&mut out, &extras, share, before_history);

    let has_history =
        !extras.owners.is_empty() || !extras.experts.is_empty() || !extras.commits.is_empty();
    // Lines written whatever the budget (a line for every changed symbol) may have taken some
    // of the partners' room: the strongest that still fit are named rather than none.
    fit(
        &mut named,
        &mut partners,
        out.remaining().saturating_sub(HEADING_ROOM),
    );
    out.dropped += extras.co_changes.len() - named;
    if !partners.is_empty() || has_history {
        // The partners' room, and the owners, experts and commits a share of their own.
        let limit = out.used() + partners_room + share(0.1);
        let mut lines = partners;
        lines.extend(history_lines(&extras));
        write_section(&mut out, "## History".to_string(), lines, limit);
    }

    out.finish(ReviewBody::of(analysis, extras), LEFT_OUT)
}

/// The sections between the tests and the history: risks, the team's memories, what was
/// rejected here before, and the author's record; each takes its `share` of the page and
/// stops short of `before_history`.
fn write_risk_and_team(
    out: &mut Page,
    extras: &Extras,
    share: impl Fn(f64) -> usize,
    before_history: usize,
) {
    if !extras.risks.is_empty() {
        let limit = (out.used() + share(0.08)).min(before_history);
        write_section(out, "## Risk".to_string(), risk_lines(extras), limit);
    }

    // The team's memories.
    if !extras.memories.is_empty() {
        let limit = (out.used() + share(0.12)).min(before_history);
        let heading = "## Team patterns and decisions".to_string();
        let lines = extras.memories.iter().map(MemoryNote::line).collect();
        write_section(out, heading, lines, limit);
    }
    if !extras.rejections.is_empty() || !extras.rules.is_empty() {
        let limit = (out.used() + share(0.07)).min(before_history);
        let heading = "## Avoid (rejected here before)".to_string();
        write_section(out, heading, avoid_lines(extras), limit);
    }

    if let Some(author) = &extras.author {
        let limit = (out.used() + share(0.06)).min(before_history);
        write_section(out, author_heading(author), author_lines(author), limit);
    }
}

impl ReviewBody {
    /// The answer's structured part: everything the analysis and the extras found.
    fn of(analysis: Analysis, extras: Extras) -> ReviewBody {
        ReviewBody {
            compared: extras.label,
            files: analysis.files,
            tests_to_run: analysis.tests,
            fixtures: analysis.fixtures,
            untested: analysis.untested,
            risks: extras.risks,
            memories: extras.memories,
            rejection_patterns: extras.rejections,
            high_rejection_rules: extras.rules,
            author: extras.author,
            owners: extras.owners,
            experts: extras.experts,
            usually_changes_with: extras.co_changes,
            related_commits: extras.commits,
        }
    }
}

/// Tokens a list of lines takes on the page.
fn cost(lines: &[String]) -> usize {
    lines.iter().map(String::as_str).map(line_cost).sum()
}

fn line_cost(line: &str) -> usize {
    tokens::count(line) + 1
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

/// A changed symbol in few words: how it changed, its kind, name and lines.
fn short_symbol_line(s: &SymbolChange) -> String {
    let qualname = s.id.split_once("::").map_or(s.id.as_str(), |(_, q)| q);
    format!(
        "- {} {} `{qualname}` L{}-{}",
        s.change.as_str(),
        s.kind,
        s.start_line,
        s.end_line
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

/// The risks as the page shows them: a memory's text cut short (its id leads to the rest),
/// and no fix-prone line for a path a risky-module memory already names (what the team
/// learned about it says more than the count; the structured answer keeps both).
fn risk_lines(extras: &Extras) -> Vec<String> {
    let remembered: Vec<&str> = extras
        .risks
        .iter()
        .filter(|r| r.kind == "risk_module")
        .map(|r| r.subject.as_str())
        .collect();
    extras
        .risks
        .iter()
        .filter(|r| !(r.kind == "fix_prone" && remembered.contains(&r.subject.as_str())))
        .map(|r| {
            format!(
                "- {} [{}]: {}",
                r.subject,
                r.kind,
                cut(&r.detail, RISK_DETAIL_BYTES)
            )
        })
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
                        .map(|c| format!("{} {}", c.category, c.count))
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

/// Files missing from the change, one line per reason in the order first met: those using a
/// symbol the change removes, those using one it re-signs (each with how and what), then those
/// that usually change with a changed file (by file, strongest first).
fn partner_lines(partners: &[MissingPartner]) -> Vec<String> {
    let mut lines: Vec<(String, Vec<String>)> = Vec::new();
    for p in partners {
        let head = match &p.reason {
            PartnerReason::Uses {
                change: "removed", ..
            } => "uses what this change removes".to_string(),
            PartnerReason::Uses { .. } => "uses what this change re-signs".to_string(),
            PartnerReason::Tied { how: "lacks", .. } => "lacks what this change uses".to_string(),
            PartnerReason::Tied { .. } => "bound to it by a contract".to_string(),
            PartnerReason::History { .. } => format!("usually changed with {}", p.with),
        };
        let at = match lines.iter().position(|(h, _)| *h == head) {
            Some(at) => at,
            None => {
                lines.push((head, Vec::new()));
                lines.len() - 1
            }
        };
        let items = &mut lines[at].1;
        items.push(match &p.reason {
            // History counts say "commits" once, after the first.
            PartnerReason::History { support, of, .. } if items.is_empty() => {
                format!("{} ({support} of {of} commits)", p.path)
            }
            PartnerReason::History { support, of, .. } => {
                format!("{} ({support} of {of})", p.path)
            }
            PartnerReason::Tied {
                symbol,
                how: "lacks",
            } => format!("{} ({symbol})", p.path),
            PartnerReason::Uses { symbol, how, .. } | PartnerReason::Tied { symbol, how } => {
                format!("{} ({how} {symbol})", p.path)
            }
        });
    }
    lines
        .into_iter()
        .map(|(head, items)| format!("- not in this diff, {head}: {}", items.join(", ")))
        .collect()
}

/// Who owns and who knows the changed files, and past commits on them.
fn history_lines(extras: &Extras) -> Vec<String> {
    let owners = extras
        .owners
        .iter()
        .map(|o| format!("- owners {}: {}", o.path, o.owned.describe()));
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
    owners.chain(experts).chain(commits).collect()
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

/// Writes lines while they fit under `limit` (a long line does not keep a shorter one after
/// it out); the first is the heading, and nothing is written when it does not fit.
fn write_section_lines(out: &mut Page, lines: Vec<String>, limit: usize) {
    let mut lines = lines.into_iter();
    if let Some(heading) = lines.next()
        && out.push_until(heading, limit)
    {
        for line in lines {
            out.push_until(line, limit);
        }
    }
}

/// The tests to run, each with its evidence, then the fixtures the change touches: the
/// section as written, heading first (nothing when there is neither).
fn test_lines(analysis: &Analysis) -> Vec<String> {
    let mut lines = Vec::new();
    if !analysis.tests.is_empty() {
        lines.push(format!("## Tests to run ({})", analysis.tests.len()));
        let first = analysis.tests.iter().filter(|t| t.first).count();
        // Split only when both parts have tests: a heading over the whole list says nothing.
        let split = first > 0 && first < analysis.tests.len();
        for (i, t) in analysis.tests.iter().enumerate() {
            if split && i == 0 {
                lines.push(format!("Run these first ({first}):"));
            }
            if split && i == first {
                lines.push(format!("Also relevant ({}):", analysis.tests.len() - first));
            }
            lines.push(test_line(t));
        }
        if analysis.tests_left_out > 0 {
            lines.push(format!(
                "_{} more test files with weaker evidence left out_",
                analysis.tests_left_out
            ));
        }
    }
    if !analysis.fixtures.is_empty() {
        lines.push(format!(
            "## Fixtures touched ({}) · helpers of the tests, not tests to run",
            analysis.fixtures.len()
        ));
        lines.extend(analysis.fixtures.iter().map(test_line));
    }
    lines
}

/// A test file, why it is listed and how likely the change needs it (fixtures: why only).
fn test_line(t: &TestToRun) -> String {
    match t.confidence {
        Some(likely) if t.how != crate::review::Evidence::Changed => {
            format!("- {} — {} · {:.0}% likely", t.id, t.why, likely * 100.0)
        }
        _ => format!("- {} — {}", t.id, t.why),
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

/// The changes as the briefing writes them: per file its heading and notes, then one block
/// per module-level change and per symbol. The skeleton (headings, notes, the line of every
/// block) is always written; details (side effects, diff lines, callers) as far as allotted.
struct Changes {
    files: Vec<FileLines>,
}

struct FileLines {
    heading: Vec<String>,
    /// The file's side effects gained or lost.
    effects: Option<String>,
    effects_shown: bool,
    blocks: Vec<Block>,
}

/// A module-level change or a changed symbol: its line, its changed lines and what depends
/// on it.
struct Block {
    line: String,
    /// A shorter line for large changes (kind, name and lines only).
    short: String,
    diff: Vec<String>,
    details: Vec<String>,
    diff_shown: usize,
    details_shown: usize,
}

/// Tokens of the fences around a diff and of the line counting what it leaves out.
const DIFF_FRAME: usize = 16;

impl Block {
    /// Gives the next diff line (up to `diff_to`) or detail line (up to `details_to`) if it
    /// costs no more than `left`; returns its cost.
    fn take(&mut self, diff_to: usize, details_to: usize, left: usize) -> Option<usize> {
        if self.diff_shown < diff_to.min(self.diff.len()).min(DIFF_LINES_SHOWN) {
            let frame = if self.diff_shown == 0 { DIFF_FRAME } else { 0 };
            let cost = line_cost(&self.diff[self.diff_shown]) + 2 + frame;
            if cost <= left {
                self.diff_shown += 1;
                return Some(cost);
            }
            return None;
        }
        if self.details_shown < details_to.min(self.details.len()) {
            let cost = line_cost(&self.details[self.details_shown]);
            if cost <= left {
                self.details_shown += 1;
                return Some(cost);
            }
        }
        None
    }

    /// Lines allotted none of the room.
    fn left_out(&self) -> usize {
        self.diff.len().min(DIFF_LINES_SHOWN) - self.diff_shown + self.details.len()
            - self.details_shown
    }

    /// Writes the block's line, then its allotted diff lines (never an empty block) and
    /// details.
    fn write(&self, out: &mut Page, limit: usize) {
        if !out.push_until(self.line.clone(), limit) {
            out.dropped += self.diff_shown + self.details_shown;
            return;
        }
        let diff: Vec<String> = self.diff[..self.diff_shown]
            .iter()
            .map(|l| format!("  {l}"))
            .collect();
        let opening = [
            "  ```diff".to_string(),
            diff.first().cloned().unwrap_or_default(),
        ];
        let room = limit.min(out.max()).saturating_sub(out.used());
        if !diff.is_empty() && cost(&opening) + line_cost("  ```") <= room {
            // Room for the closing fence stays free, so the block never ends past the limit.
            let inside = limit.min(out.max()).saturating_sub(line_cost("  ```"));
            let mut lines = diff.into_iter();
            out.push_until(opening[0].clone(), inside);
            for line in lines.by_ref() {
                if !out.push_until(line, inside) {
                    break;
                }
            }
            out.dropped += lines.count();
            let hidden = self.diff.len() - self.diff_shown;
            if hidden > 0 {
                out.push_until(format!("  … {hidden} more changed lines"), inside);
            }
            out.force("  ```".to_string());
        } else {
            out.dropped += diff.len();
        }
        for line in &self.details[..self.details_shown] {
            out.push_until(line.clone(), limit);
        }
    }
}

impl Changes {
    fn of(files: &[FileReport]) -> Changes {
        let files = files
            .iter()
            .map(|file| {
                let mut heading = vec![file_heading(file)];
                heading.extend(file.notes.iter().map(|n| format!("_{n}_")));
                let mut blocks = Vec::new();
                if !file.module_lines.is_empty() {
                    let line = format!(
                        "- module level L{} ({} line{})",
                        ranges(&file.module_lines),
                        file.module_lines.len(),
                        if file.module_lines.len() == 1 {
                            ""
                        } else {
                            "s"
                        }
                    );
                    blocks.push(Block {
                        short: line.clone(),
                        line,
                        diff: file.module_diff.clone(),
                        details: Vec::new(),
                        diff_shown: 0,
                        details_shown: 0,
                    });
                }
                blocks.extend(file.symbols.iter().map(|s| Block {
                    line: symbol_line(s),
                    short: short_symbol_line(s),
                    diff: s.diff_lines.clone(),
                    details: symbol_detail_lines(s),
                    diff_shown: 0,
                    details_shown: 0,
                }));
                FileLines {
                    heading,
                    effects: effects_line(&file.effects_added, &file.effects_removed)
                        .map(|l| l.replacen("  side", "file side", 1)),
                    effects_shown: false,
                    blocks,
                }
            })
            .collect();
        Changes { files }
    }

    /// The lines every briefing writes: headings, notes, one line per block.
    fn skeleton_lines(&self) -> Vec<String> {
        self.files
            .iter()
            .flat_map(|f| {
                f.heading
                    .iter()
                    .cloned()
                    .chain(f.blocks.iter().map(|b| b.line.clone()))
            })
            .collect()
    }

    /// Shortens every block's line (for changes too large for the full lines).
    fn compact(&mut self) {
        for block in self.files.iter_mut().flat_map(|f| &mut f.blocks) {
            block.line = block.short.clone();
        }
    }

    /// Allots `room` tokens of details: in rounds, a little to every block before more to
    /// any (the files' side effects; a first changed line each; three and the callers; the
    /// rest). Returns how many lines
    /// were left out.
    fn allot(&mut self, room: usize) -> usize {
        let mut left = room;
        for file in &mut self.files {
            if let Some(effects) = &file.effects
                && line_cost(effects) <= left
            {
                left -= line_cost(effects);
                file.effects_shown = true;
            }
        }
        for (diff_to, details_to) in [(1, 0), (3, 1), (DIFF_LINES_SHOWN, usize::MAX)] {
            for block in self.files.iter_mut().flat_map(|f| &mut f.blocks) {
                while let Some(cost) = block.take(diff_to, details_to, left) {
                    left -= cost;
                }
            }
        }
        self.files
            .iter()
            .map(|f| {
                usize::from(f.effects.is_some() && !f.effects_shown)
                    + f.blocks.iter().map(Block::left_out).sum::<usize>()
            })
            .sum()
    }

    /// Writes the skeleton whatever it costs (up to `limit`, where only a change of very many
    /// files stops), the allotted details within it.
    fn write(&self, out: &mut Page, limit: usize) {
        for file in &self.files {
            for line in &file.heading {
                out.push_until(line.clone(), limit);
            }
            if file.effects_shown
                && let Some(effects) = &file.effects
            {
                out.push_until(effects.clone(), limit);
            }
            for block in &file.blocks {
                block.write(out, limit);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::review::SymbolChangeKind;

    fn uses(path: &str, symbol: &str, how: &'static str, change: &'static str) -> MissingPartner {
        MissingPartner {
            path: path.to_string(),
            with: "shop/models.py".to_string(),
            reason: PartnerReason::Uses {
                symbol: symbol.to_string(),
                how,
                change,
            },
        }
    }

    fn history_reason(support: usize, of: usize) -> PartnerReason {
        let share = support as f64 / of as f64;
        PartnerReason::History {
            support,
            of,
            confidence: share,
            weight: share,
        }
    }

    fn risk(kind: &str, subject: &str, detail: &str) -> Risk {
        Risk {
            kind: kind.to_string(),
            subject: subject.to_string(),
            detail: detail.to_string(),
        }
    }

    #[test]
    fn a_remembered_risk_replaces_the_fix_count_of_its_file_and_is_cut_short() {
        let long = format!(
            "m_1: shop/pay.py is a risky file: {}",
            "reverted again; ".repeat(30)
        );
        let extras = Extras {
            risks: vec![
                risk("risk_module", "shop/pay.py", &long),
                risk(
                    "fix_prone",
                    "shop/pay.py",
                    "3 of its 5 recent commits were fixes",
                ),
                risk(
                    "fix_prone",
                    "shop/cart.py",
                    "2 of its 4 recent commits were fixes",
                ),
            ],
            ..Extras::default()
        };
        let lines = risk_lines(&extras);
        assert_eq!(lines.len(), 2, "{lines:#?}");
        assert!(lines[0].starts_with("- shop/pay.py [risk_module]: m_1: "));
        assert!(
            lines[0].ends_with('…') && lines[0].len() < long.len(),
            "{}",
            lines[0]
        );
        assert_eq!(
            lines[1],
            "- shop/cart.py [fix_prone]: 2 of its 4 recent commits were fixes"
        );
    }

    #[test]
    fn history_lines_name_missing_partners_then_owners_experts_and_commits() {
        let extras = Extras {
            owners: vec![FileOwners {
                path: "shop/models.py".to_string(),
                owned: Owned {
                    owners: vec!["@org/shop".to_string(), "@ann".to_string()],
                    file: "CODEOWNERS".to_string(),
                    lines: vec![3],
                },
            }],
            co_changes: vec![
                uses("shop/api.py", "Order.total", "calls", "signature"),
                MissingPartner {
                    path: "shop/views.py".to_string(),
                    with: "shop/models.py".to_string(),
                    reason: history_reason(4, 5),
                },
                uses("shop/admin.py", "Order.total", "calls", "signature"),
                MissingPartner {
                    path: "shop/urls.py".to_string(),
                    with: "shop/models.py".to_string(),
                    reason: history_reason(1, 5),
                },
                uses("shop/forms.py", "Order.legacy", "imports", "removed"),
            ],
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
            partner_lines(&extras.co_changes),
            [
                "- not in this diff, uses what this change re-signs: shop/api.py (calls Order.total), shop/admin.py (calls Order.total)",
                "- not in this diff, usually changed with shop/models.py: shop/views.py (4 of 5 commits), shop/urls.py (1 of 5)",
                "- not in this diff, uses what this change removes: shop/forms.py (imports Order.legacy)",
            ]
        );
        assert_eq!(
            history_lines(&extras),
            [
                "- owners shop/models.py: @org/shop, @ann (CODEOWNERS line 3)",
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
            signature_changed: false,
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

    fn symbol(path: &str, i: u32, diff: usize) -> SymbolChange {
        SymbolChange {
            id: format!("{path}::Service.method_number_{i}"),
            kind: "method".to_string(),
            change: SymbolChangeKind::Modified,
            start_line: i * 100,
            end_line: i * 100 + 60,
            added_lines: (0..diff as u32).map(|l| i * 100 + l).collect(),
            removed_lines: Vec::new(),
            indexed: true,
            signature_changed: false,
            callers: (0..8)
                .map(|c| Use {
                    id: format!("pkg/caller_{c}.py::use_it_{c}"),
                    kind: "function".to_string(),
                    lines: vec![c + 10],
                })
                .collect(),
            importers: Vec::new(),
            subclasses: Vec::new(),
            reach: 40,
            top_dependents: vec!["pkg/far.py::far_away".to_string()],
            effects_added: Vec::new(),
            effects_removed: Vec::new(),
            name: format!("method_number_{i}"),
            diff_lines: (0..diff)
                .map(|l| {
                    format!(
                        "+L{} value = compute_something_long(argument_{l}, other_{l})",
                        i * 100 + l as u32
                    )
                })
                .collect(),
        }
    }

    fn file(path: &str, symbols: Vec<SymbolChange>, module_lines: Vec<u32>) -> FileReport {
        FileReport {
            path: path.to_string(),
            old_path: None,
            change: crate::review::ChangeKind::Modified,
            added: 90,
            removed: 10,
            binary: false,
            language: Some("python".to_string()),
            indexed: true,
            module_diff: module_lines
                .iter()
                .map(|l| format!("+L{l} import something_{l}"))
                .collect(),
            module_lines,
            symbols,
            effects_added: Vec::new(),
            effects_removed: Vec::new(),
            notes: Vec::new(),
        }
    }

    #[test]
    fn every_changed_symbol_has_its_line_and_the_tests_stay_whole_within_the_budget() {
        let files = vec![
            file(
                "pkg/app.py",
                (1..=4).map(|i| symbol("pkg/app.py", i, 30)).collect(),
                vec![],
            ),
            file(
                "pkg/ctx.py",
                (5..=7).map(|i| symbol("pkg/ctx.py", i, 20)).collect(),
                vec![3, 4],
            ),
            file(
                "pkg/helpers.py",
                (8..=9).map(|i| symbol("pkg/helpers.py", i, 40)).collect(),
                vec![],
            ),
        ];
        let tests = (0..6)
            .map(|i| TestToRun {
                id: format!("tests/test_{i}.py"),
                how: crate::review::Evidence::Calls,
                evidence: vec![crate::review::Evidence::Calls],
                confidence: Some(0.3),
                first: i < 2,
                why: format!("calls Service.method_number_{i} (L{i}0)"),
                covers: Vec::new(),
                mentions: Vec::new(),
            })
            .collect();
        let analysis = Analysis {
            files,
            tests,
            ..Analysis::default()
        };
        let extras = Extras {
            label: "HEAD~1..HEAD".to_string(),
            co_changes: vec![MissingPartner {
                path: "pkg/views.py".to_string(),
                with: "pkg/app.py".to_string(),
                reason: history_reason(4, 6),
            }],
            ..Extras::default()
        };
        let answer = render(analysis, extras, DEFAULT_REVIEW_TOKENS);
        let text = &answer.text;
        assert!(answer.tokens <= DEFAULT_REVIEW_TOKENS, "{}", answer.tokens);
        for i in 1..=9 {
            let id = format!("::Service.method_number_{i}`");
            assert_eq!(text.matches(&id).count(), 1, "symbol {i}:\n{text}");
        }
        for path in ["pkg/app.py", "pkg/ctx.py", "pkg/helpers.py"] {
            assert!(text.contains(&format!("## {path} (modified")), "{text}");
        }
        assert!(text.contains("- module level L3-4 (2 lines)"), "{text}");
        assert!(text.contains("## Tests to run (6)"), "{text}");
        assert!(
            text.contains("Run these first (2):\n- tests/test_0.py")
                && text.contains("Also relevant (4):\n- tests/test_2.py"),
            "{text}"
        );
        assert!(text.contains("(L10) · 30% likely"), "{text}");
        for i in 0..6 {
            assert!(
                text.contains(&format!("- tests/test_{i}.py — calls")),
                "{text}"
            );
        }
        assert!(text.contains("pkg/views.py (4 of 6 commits)"), "{text}");
        assert!(
            !text.contains("```diff\n  ```"),
            "no empty diff block:\n{text}"
        );
        assert!(answer.truncated > 0, "the details were cut, and said so");
        // Symbols get a first changed line each before any gets more.
        assert!(text.matches("```diff").count() >= 5, "{text}");
    }

    #[test]
    fn many_partners_are_named_strongest_first_as_far_as_their_share_goes() {
        let analysis = Analysis {
            files: vec![file(
                "packages/core/src/v4/core.ts",
                vec![symbol("packages/core/src/v4/core.ts", 1, 3)],
                vec![],
            )],
            ..Analysis::default()
        };
        let co_changes: Vec<MissingPartner> = (0..16)
            .map(|i| MissingPartner {
                path: format!("packages/core/src/v4/deeply/nested/module_number_{i}.ts"),
                with: "packages/core/src/v4/core.ts".to_string(),
                reason: history_reason(16 - i, 40),
            })
            .collect();
        let extras = Extras {
            co_changes,
            ..Extras::default()
        };
        let answer = render(analysis, extras, DEFAULT_REVIEW_TOKENS);
        let text = &answer.text;
        assert!(answer.tokens <= DEFAULT_REVIEW_TOKENS, "{}", answer.tokens);
        // The line is there with the strongest partners, not dropped whole for its length.
        let line = text
            .lines()
            .find(|l| l.starts_with("- not in this diff, usually changed with"))
            .unwrap_or_else(|| panic!("no partner line:\n{text}"));
        assert!(
            line.contains("module_number_0.ts (16 of 40 commits)"),
            "{line}"
        );
        assert!(!line.contains("module_number_15.ts"), "{line}");
        assert!(
            answer.truncated > 0,
            "the weakest were left out, and said so"
        );
        // Every partner is in the structured content.
        assert_eq!(answer.body.usually_changes_with.len(), 16);
    }
}
