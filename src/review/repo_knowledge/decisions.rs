//! Architecture decision records: MADR (with or without YAML front matter, status as a key or
//! a `* Status:` line) and Nygard's form (`# 1. Title`, `## Status`, `## Decision`), found in
//! the folders such records usually live in. A record whose status says it no longer holds
//! (superseded, deprecated, rejected) is skipped with that reason; the others are decisions,
//! with the repository paths and the code names they mention.

use std::collections::BTreeMap;

use super::anchors::{RepoPaths, anchors};
use super::markup::{prose, without_comments};
use super::{Skipped, cut, one_line};
use crate::fsutil::repo::{Limit, RepoFiles};
use crate::review::guidelines::{Section, sections};

/// Where decision records are looked for, repository-relative (files directly inside).
pub const FOLDERS: [&str; 9] = [
    "doc/adr",
    "docs/adr",
    "docs/decisions",
    "doc/decisions",
    "docs/architecture/decisions",
    "doc/architecture/decisions",
    "architecture/decisions",
    "adr",
    "decisions",
];

/// Statuses of a record that no longer holds: never proposed.
pub const CLOSED: [&str; 6] = [
    "superseded",
    "deprecated",
    "rejected",
    "withdrawn",
    "obsolete",
    "retired",
];

/// Headings of the decision section: Nygard's (`Decision`, also in the plural) and MADR's
/// (`Decision Outcome`).
pub const DECISION_HEADINGS: [&str; 3] = ["decision", "decisions", "decision outcome"];

/// Headings other templates give what was decided: the RFC form's `Proposal` (alphagov's),
/// `Proposed decision`, `Proposed solution`, the Alexandrian form's `Solution`, `Resolution`
/// and `Outcome`. Read as the decision only in a record whose status says it was accepted
/// ([`ACCEPTED`]): before that, a proposal is not yet a decision.
pub const ACCEPTED_HEADINGS: [&str; 6] = [
    "proposal",
    "proposed decision",
    "proposed solution",
    "solution",
    "resolution",
    "outcome",
];

/// Statuses that say a record was accepted.
pub const ACCEPTED: [&str; 3] = ["accepted", "approved", "adopted"];

/// Most records read in one run.
pub const MAX_RECORDS: usize = 200;
/// Largest record read.
pub const LIMIT: Limit = Limit {
    what: "a decision record",
    bytes: 256 * 1024,
};
/// Most entries of one folder looked at.
const LISTED: usize = 2_000;
/// Longest decision text kept, in bytes.
const DECISION_BYTES: usize = 700;
/// Most code names a record is anchored on.
const ANCHORS: usize = 8;

/// An accepted (or undecided) decision record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    /// The record's path, repository-relative.
    pub path: String,
    pub title: String,
    /// The status as written (`accepted`, `proposed`), when the record has one.
    pub status: Option<String>,
    /// The decision section as prose (no comments, tags, images or link targets), on one
    /// line, cut at [`DECISION_BYTES`].
    pub decision: String,
    /// Files and folders of the repository the record names, most specific first (see
    /// [`anchors`]).
    pub paths: Vec<String>,
    /// Names in code spans (`Pool`, `Pool.acquire`, `src/db.rs::Pool`), for the code graph.
    pub names: Vec<String>,
}

/// What the decision folders hold.
#[derive(Debug, Default)]
pub struct Found {
    /// Record files read.
    pub read: usize,
    pub decisions: Vec<Decision>,
    pub skipped: Vec<Skipped>,
}

/// Reads the decision records of the repository: every Markdown file directly inside
/// [`FOLDERS`] (a `README`, an index or a template left out), at most [`MAX_RECORDS`], each
/// anchored on the files and folders of `paths` it names.
pub fn find(files: &RepoFiles, paths: &RepoPaths<'_>) -> Found {
    let mut found = Found::default();
    for path in record_paths(files) {
        if found.read >= MAX_RECORDS {
            found.skipped.push(Skipped::new(
                path,
                format!("more than {MAX_RECORDS} decision records; the first are read"),
            ));
            continue;
        }
        let text = match files.text(&path, LIMIT) {
            Ok(text) => text,
            Err(e) => {
                found.skipped.push(Skipped::new(path, e.reason()));
                continue;
            }
        };
        found.read += 1;
        match parse(&path, &text) {
            Ok(mut decision) => {
                decision.paths = anchors(paths, &path, &without_comments(&text));
                found.decisions.push(decision);
            }
            Err(why) => found.skipped.push(Skipped::new(path, why)),
        }
    }
    found
}

/// The Markdown files in the decision folders, sorted within each folder.
fn record_paths(files: &RepoFiles) -> Vec<String> {
    let mut paths = Vec::new();
    for folder in FOLDERS {
        let Ok(entries) = files.list(folder, LISTED) else {
            continue;
        };
        let mut names: Vec<String> = entries
            .into_iter()
            .filter(|e| !e.is_dir && is_record_name(&e.name))
            .map(|e| format!("{folder}/{}", e.name))
            .collect();
        names.sort();
        paths.extend(names);
    }
    paths
}

/// Whether a file name is a decision record's: Markdown, not a README, index or template.
fn is_record_name(name: &str) -> bool {
    let lower = name.to_lowercase();
    let Some(stem) = lower
        .strip_suffix(".md")
        .or_else(|| lower.strip_suffix(".markdown"))
    else {
        return false;
    };
    !(matches!(stem, "readme" | "index" | "_index" | "summary") || stem.contains("template"))
}

/// A record's decision, or why it is not one to propose.
pub fn parse(path: &str, text: &str) -> Result<Decision, String> {
    let text = &without_comments(text);
    let front = front_matter(text);
    let parts = sections(text);
    let status = front
        .get("status")
        .cloned()
        .or_else(|| section_status(&parts))
        .or_else(|| line_status(&parts))
        .filter(|s| !s.is_empty());
    let word = status.as_deref().map(first_word).unwrap_or_default();
    if CLOSED.contains(&word.as_str()) {
        return Err(format!("its status is {word}: no longer the decision"));
    }
    let title = front
        .get("title")
        .cloned()
        .or_else(|| {
            parts
                .iter()
                .find(|s| s.level == 1)
                .and_then(|s| s.heading.clone())
        })
        .map(|t| without_number(&prose(&t)))
        .filter(|t| !t.is_empty())
        .unwrap_or_else(|| title_of_file(path));
    let decision = decision_section(&parts, ACCEPTED.contains(&word.as_str()))
        .map(|s| cut(&one_line(&prose(&s.text)), DECISION_BYTES))
        .filter(|d| !d.is_empty())
        .ok_or_else(|| {
            "no decision section (## Decision or ## Decision Outcome; ## Proposal and the like once accepted)"
                .to_string()
        })?;
    Ok(Decision {
        path: path.to_string(),
        title: cut(&one_line(&title), 200),
        status,
        decision,
        paths: Vec::new(),
        names: code_names(text),
    })
}

/// `key: value` lines of a YAML front matter, keys lowercased, quotes taken off.
fn front_matter(text: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut lines = text.lines().map(|l| l.trim_end_matches('\r'));
    if lines.next() != Some("---") {
        return out;
    }
    for line in lines {
        if line.trim_end() == "---" {
            break;
        }
        if let Some((key, value)) = line.split_once(':')
            && !key.starts_with([' ', '\t', '-'])
        {
            let value = value.trim().trim_matches(['"', '\'']).trim();
            out.insert(key.trim().to_lowercase(), value.to_string());
        }
    }
    out
}

/// The first line of a `## Status` section (Nygard).
fn section_status(parts: &[Section]) -> Option<String> {
    let section = parts.iter().find(|s| {
        s.heading
            .as_deref()
            .is_some_and(|h| h.trim().eq_ignore_ascii_case("status"))
    })?;
    let line = section
        .text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())?;
    Some(plain(line))
}

/// A `* Status: accepted` line before the first section (MADR 2).
fn line_status(parts: &[Section]) -> Option<String> {
    parts
        .iter()
        .take_while(|s| s.level < 2)
        .flat_map(|s| s.text.lines())
        .find_map(|line| {
            let line = plain(line.trim().trim_start_matches(['*', '-', '+']).trim());
            let (key, value) = line.split_once(':')?;
            key.trim()
                .eq_ignore_ascii_case("status")
                .then(|| value.trim().to_string())
        })
}

/// A line without Markdown emphasis and markup.
fn plain(line: &str) -> String {
    prose(line).replace(['*', '_', '`'], "").trim().to_string()
}

/// The first word of a status, lowercased (`Superseded by [ADR-7](…)` → `superseded`).
fn first_word(status: &str) -> String {
    status
        .split(|c: char| !c.is_alphabetic())
        .find(|w| !w.is_empty())
        .unwrap_or_default()
        .to_lowercase()
}

/// The section that says what was decided: one under a [`DECISION_HEADINGS`] heading, else,
/// in an `accepted` record, the first under an [`ACCEPTED_HEADINGS`] one.
fn decision_section(parts: &[Section], accepted: bool) -> Option<&Section> {
    let under = |headings: &[&str]| {
        parts.iter().find(|s| {
            s.level >= 2
                && s.heading
                    .as_deref()
                    .is_some_and(|h| headings.contains(&heading_words(h).as_str()))
        })
    };
    under(&DECISION_HEADINGS).or_else(|| accepted.then(|| under(&ACCEPTED_HEADINGS)).flatten())
}

/// A heading as compared: lowercased, without its number or a closing colon (`3. Decision:`
/// → `decision`).
fn heading_words(heading: &str) -> String {
    without_number(heading.trim().trim_end_matches(':')).to_lowercase()
}

/// A title without its record number (`1. Use X`, `ADR-0001: Use X`, `0001 Use X`).
fn without_number(title: &str) -> String {
    static NUMBER: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r"(?i)^\s*(adr)?[-\s]*[0-9]+(\s*[.:)\-]\s*|\s+)").expect("valid pattern")
    });
    NUMBER.replace(title, "").trim().to_string()
}

/// A title from the file name (`0003-use-postgres.md` → `use postgres`).
fn title_of_file(path: &str) -> String {
    let name = path.rsplit('/').next().unwrap_or(path);
    let stem = name.split('.').next().unwrap_or(name);
    without_number(&stem.replace(['-', '_'], " "))
}

/// Names in code spans that may be code: identifiers, dotted names, `path::Name`.
fn code_names(text: &str) -> Vec<String> {
    static NAME: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(
            r"^([A-Za-z0-9_./-]+::)?[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*(\(\))?$",
        )
        .expect("valid pattern")
    });
    let mut names = Vec::new();
    for (i, span) in text.split('`').enumerate() {
        if i % 2 == 0 || span.len() < 3 || span.len() > 120 {
            continue;
        }
        let span = span.trim();
        if !NAME.is_match(span) || (span.contains('/') && !span.contains("::")) {
            continue;
        }
        let name = span.trim_end_matches("()").to_string();
        if !names.contains(&name) {
            names.push(name);
        }
        if names.len() >= ANCHORS {
            break;
        }
    }
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    const NYGARD: &str = "# 2. Use PostgreSQL for persistence\n\nDate: 2024-01-02\n\n## Status\n\nAccepted\n\n## Context\n\nWe need a database; `src/db/pool.py` holds the pool.\n\n## Decision\n\nWe will use PostgreSQL through `ConnectionPool`\nfor all persistent data.\n\n## Consequences\n\nOperations must run it.\n";

    const MADR: &str = "---\nstatus: \"accepted\"\ndate: 2024-03-01\ndecision-makers: alice\n---\n# Use MADR for decision records\n\n## Context and Problem Statement\n\nWhich format?\n\n## Decision Outcome\n\nChosen option: \"MADR\", because it is lean.\n\n### Consequences\n\n* Good, because we agree.\n";

    const MADR2: &str = "# Record retries in the queue\n\n* Status: superseded by [ADR-0009](0009-retries.md)\n* Date: 2023-01-01\n\n## Decision Outcome\n\nRetries are kept in the queue.\n";

    #[test]
    fn nygard_records_give_their_title_status_decision_and_names() {
        let decision = parse("docs/adr/0002-use-postgresql.md", NYGARD).unwrap();
        assert_eq!(decision.title, "Use PostgreSQL for persistence");
        assert_eq!(decision.status.as_deref(), Some("Accepted"));
        assert_eq!(
            decision.decision,
            "We will use PostgreSQL through `ConnectionPool` for all persistent data."
        );
        assert_eq!(decision.names, ["ConnectionPool"]);
    }

    #[test]
    fn madr_records_with_front_matter_or_a_status_line() {
        let decision = parse("docs/decisions/0001-use-madr.md", MADR).unwrap();
        assert_eq!(decision.title, "Use MADR for decision records");
        assert_eq!(decision.status.as_deref(), Some("accepted"));
        assert_eq!(
            decision.decision,
            "Chosen option: \"MADR\", because it is lean."
        );

        let why = parse("docs/decisions/0004-retries.md", MADR2).unwrap_err();
        assert_eq!(why, "its status is superseded: no longer the decision");
        for status in ["Deprecated", "Rejected"] {
            let text = NYGARD.replace("Accepted", status);
            let why = parse("adr/1.md", &text).unwrap_err();
            assert!(why.contains(&status.to_lowercase()), "{why}");
        }
        let proposed = parse("adr/1.md", &NYGARD.replace("Accepted", "Proposed")).unwrap();
        assert_eq!(proposed.status.as_deref(), Some("Proposed"));
    }

    #[test]
    fn a_record_without_a_decision_or_a_title_heading() {
        let why = parse(
            "adr/0001-x.md",
            "# 1. Title\n\n## Context\n\nOnly context.\n",
        );
        assert_eq!(
            why.unwrap_err(),
            "no decision section (## Decision or ## Decision Outcome; ## Proposal and the like once accepted)"
        );
        let untitled = parse(
            "adr/0007-keep-money-in-cents.md",
            "## Decision\n\nMoney is integer cents.\n",
        )
        .unwrap();
        assert_eq!(untitled.title, "keep money in cents");
        assert_eq!(untitled.status, None);
        assert_eq!(without_number("ADR-0012: Split the API"), "Split the API");
    }

    /// alphagov/govuk-infrastructure's ADR 12, in short: an accepted record written as an RFC.
    const PROPOSAL: &str = "# 12. Non-GOV.UK domain policy\n\nDate: 2025-05-06\n\n## Status\n\nAccepted\n\n## Definitions\n\n- \"Non-GOV.UK domain\": a domain that does not end in `gov.uk`.\n\n## Context\n\nIt is dangerous to have a Non-GOV.UK domain that is publicly accessible.\n\n## Proposal\n\nAny web page that lives on a Non-GOV.UK domain MUST either be Authenticated\nor unavailable to the public internet.\n";

    #[test]
    fn an_accepted_record_may_put_its_decision_under_another_heading() {
        let decision = parse(
            "docs/architecture/decisions/0012-non-govuk-domain-policy.md",
            PROPOSAL,
        )
        .unwrap();
        assert_eq!(decision.title, "Non-GOV.UK domain policy");
        assert_eq!(
            decision.decision,
            "Any web page that lives on a Non-GOV.UK domain MUST either be Authenticated or unavailable to the public internet."
        );
        for (status, heading) in [
            ("Approved", "## 3. Resolution:"),
            ("Adopted", "### Proposed decision"),
        ] {
            let text = PROPOSAL
                .replace("Accepted", status)
                .replace("## Proposal", heading);
            assert!(parse("adr/1.md", &text).is_ok(), "{status} {heading}");
        }
        // Still a proposal: not a decision yet.
        let proposed = PROPOSAL.replace("Accepted", "Proposed");
        assert!(
            parse("adr/1.md", &proposed)
                .unwrap_err()
                .starts_with("no decision section")
        );
        // A decision section comes first, wherever the proposal is.
        let both = PROPOSAL.replace("## Context", "## Decision\n\nWe decided.\n\n## Context");
        assert_eq!(parse("adr/1.md", &both).unwrap().decision, "We decided.");
    }

    #[test]
    fn decisions_are_quoted_without_their_markup() {
        // alphagov/govuk-infrastructure's ADR 20, in short.
        let text = "<!-- vale RedHat.Headings = NO -->\n# 20. Use [Crossplane](https://www.crossplane.io/) for abstraction\n\n## Status\n\n**Accepted**\n\n## Decision\n\n<!-- vale RedHat.TermsSuggestions = NO -->\nWe have decided that we want to use [Crossplane](https://www.crossplane.io/) to create a\nKubernetes-flavoured API for our users.\n<!-- vale RedHat.TermsSuggestions = YES -->\n\n![The API](../../img/api.png)\n\n## Consequences\n\n<!--\n## Decision\n\nNot this one.\n-->\n";
        let decision = parse("docs/architecture/decisions/0020-use-crossplane.md", text).unwrap();
        assert_eq!(decision.title, "Use Crossplane for abstraction");
        assert_eq!(decision.status.as_deref(), Some("Accepted"));
        assert_eq!(
            decision.decision,
            "We have decided that we want to use Crossplane to create a Kubernetes-flavoured API for our users."
        );
    }

    #[test]
    fn records_are_found_in_their_folders_and_name_existing_paths_only() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let write =
            |path: &str, text: &str| crate::review::repo_knowledge::write_under(root, path, text);
        write("src/db/pool.py", "class ConnectionPool: pass\n");
        write("docs/adr/0002-use-postgresql.md", NYGARD);
        write("docs/adr/README.md", "# Decisions\n");
        write("docs/adr/template.md", "# Title\n## Decision\n");
        write(
            "docs/adr/0003-link.md",
            "# Link\n## Decision\nSee [the pool](../../src/db/pool.py) and src/gone.py.\n",
        );
        write(
            "notes/0001-elsewhere.md",
            "# Not a record\n## Decision\nx\n",
        );
        let files = RepoFiles::open(root).unwrap();
        let found = find(&files, &RepoPaths::new(&files, root, false));
        assert_eq!(found.read, 2);
        let paths: Vec<(&str, &[String])> = found
            .decisions
            .iter()
            .map(|d| (d.path.as_str(), d.paths.as_slice()))
            .collect();
        assert_eq!(
            paths,
            [
                (
                    "docs/adr/0002-use-postgresql.md",
                    &["src/db/pool.py".to_string()][..]
                ),
                ("docs/adr/0003-link.md", &["src/db/pool.py".to_string()][..]),
            ]
        );
        assert!(found.skipped.is_empty(), "{:?}", found.skipped);
    }

    #[test]
    fn records_in_git_are_anchored_on_what_head_holds() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let write =
            |path: &str, text: &str| crate::review::repo_knowledge::write_under(root, path, text);
        let git = |args: &[&str]| {
            let done = std::process::Command::new("git")
                .arg("-C")
                .arg(root)
                .args(["-c", "user.name=Ada", "-c", "user.email=ada@example.com"])
                .args(args)
                .output()
                .unwrap();
            assert!(done.status.success(), "git {args:?}: {done:?}");
        };
        // alphagov/govuk-infrastructure's ADRs 3 and 18, in short.
        write(
            "terraform/deployments/cluster-infrastructure/main.tf",
            "x\n",
        );
        write("terraform/deployments/cluster-services/main.tf", "x\n");
        write("docs/img/adr-0018-existing-cicd.png", "x\n");
        write(
            "docs/architecture/decisions/0003-split-terraform-state.md",
            "# 3. Split Terraform state\n\n## Status\n\nAccepted\n\n## Decision\n\n1. `cluster-infrastructure` - EKS.\n2. `cluster-services` - Kubernetes.\n3. `cluster-addons` - not yet committed.\n",
        );
        write(
            "docs/architecture/decisions/0018-use-concourse-ci.md",
            "# 18. Use Concourse CI\n\n## Status\n\nAccepted\n\n## Context\n\n![The flow](../../img/adr-0018-existing-cicd.png)\n\n## Decision\n\nUse Concourse.\n",
        );
        git(&["init", "-q"]);
        git(&["add", "."]);
        git(&["commit", "-q", "-m", "start"]);
        write("terraform/deployments/cluster-addons/main.tf", "x\n");
        let files = RepoFiles::open(root).unwrap();
        let found = find(&files, &RepoPaths::new(&files, root, true));
        let anchored: Vec<(&str, Vec<&str>)> = found
            .decisions
            .iter()
            .map(|d| {
                (
                    d.title.as_str(),
                    d.paths.iter().map(String::as_str).collect(),
                )
            })
            .collect();
        assert_eq!(
            anchored,
            [
                (
                    "Split Terraform state",
                    vec![
                        "terraform/deployments/cluster-infrastructure",
                        "terraform/deployments/cluster-services"
                    ]
                ),
                ("Use Concourse CI", vec![]),
            ]
        );
    }
}
