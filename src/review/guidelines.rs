//! Review guideline files (`CLAUDE.md`, `AGENTS.md`, `.cursor/rules/*.mdc`, …): finding them
//! in a repository, reading them without leaving it, splitting them into sections at their
//! Markdown headings, and picking the sections a rule category's rejections are about.
//!
//! cairn only reads these files: proposals to change them are stored as guideline changes
//! and applied by a person or an assistant.

use std::collections::BTreeSet;
use std::path::Path;

use serde::Serialize;

use crate::fsutil::repo::{Limit, RepoFiles, RepoReadError};

/// Largest guideline file read, in bytes.
pub(crate) const MAX_GUIDELINE_BYTES: u64 = Limit::GUIDELINE.bytes;
/// Most guideline files found by default.
const MAX_FOUND: usize = 40;
/// How deep nested `CLAUDE.md` and `AGENTS.md` files are looked for.
const NESTED_DEPTH: usize = 6;
/// Most directory entries the search for nested files looks at.
const NESTED_ENTRIES: usize = 10_000;

/// Guideline files at the repository's root.
const ROOT_FILES: [&str; 5] = [
    "CLAUDE.md",
    "AGENTS.md",
    "GEMINI.md",
    "REVIEW.md",
    ".github/copilot-instructions.md",
];
/// Guideline files that may also sit in subdirectories.
const NESTED_NAMES: [&str; 2] = ["CLAUDE.md", "AGENTS.md"];

/// A guideline file that could not be used, and why.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Unread {
    pub path: String,
    pub reason: String,
}

/// A part of a guideline file: a heading and the text up to the next heading.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Section {
    /// The heading's text; `None` for what comes before the first heading.
    pub heading: Option<String>,
    /// 1 for `#`, 2 for `##`, …; 0 before the first heading.
    pub level: u8,
    /// The heading's line (1-based), or the first line.
    pub line: usize,
    /// The lines below the heading, without leading and trailing blank lines.
    pub text: String,
}

/// A guideline file split into sections.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GuidelineFile {
    pub path: String,
    pub sections: Vec<Section>,
}

impl GuidelineFile {
    /// The headings, in file order.
    pub fn headings(&self) -> impl Iterator<Item = &str> {
        self.sections.iter().filter_map(|s| s.heading.as_deref())
    }
}

/// The guideline files present in the repository at `root`, repository-relative: the root
/// files, Cursor rules, Claude skills, then nested `CLAUDE.md` and `AGENTS.md` (outside
/// ignored and hidden directories). Links are listed; reading them decides.
pub fn find(root: &Path) -> Vec<String> {
    let Ok(files) = RepoFiles::open(root) else {
        return Vec::new();
    };
    let mut found: Vec<String> = ROOT_FILES
        .iter()
        .filter(|p| files.exists(p))
        .map(|p| p.to_string())
        .collect();
    let mut listed = |dir: &str, depth: usize, keep: &dyn Fn(&str) -> bool| {
        let mut paths = Vec::new();
        collect(&files, dir, depth, keep, &mut paths);
        paths.sort();
        found.extend(paths);
    };
    listed(".cursor/rules", 1, &|name| name.ends_with(".mdc"));
    listed(".claude/skills", 4, &|name| name == "SKILL.md");
    found.extend(nested(root));
    found.dedup();
    found.truncate(MAX_FOUND);
    found
}

/// Files under `dir` (repository-relative) whose names `keep` accepts, `depth` levels down,
/// without following links to directories.
fn collect(
    files: &RepoFiles,
    dir: &str,
    depth: usize,
    keep: &dyn Fn(&str) -> bool,
    out: &mut Vec<String>,
) {
    let Ok(entries) = files.list(dir, 1_000) else {
        return;
    };
    for entry in entries {
        let path = format!("{dir}/{}", entry.name);
        if entry.is_dir && depth > 1 {
            collect(files, &path, depth - 1, keep, out);
        } else if !entry.is_dir && keep(&entry.name) {
            out.push(path);
        }
    }
}

/// `CLAUDE.md` and `AGENTS.md` below the root, as the index walk sees the tree (ignored and
/// hidden directories left out), within [`NESTED_DEPTH`] and [`NESTED_ENTRIES`].
fn nested(root: &Path) -> Vec<String> {
    let walk = ignore::WalkBuilder::new(root)
        .max_depth(Some(NESTED_DEPTH))
        .follow_links(false)
        .require_git(false)
        .build();
    let mut found = Vec::new();
    for entry in walk.take(NESTED_ENTRIES).flatten() {
        let name = entry.file_name().to_string_lossy();
        if entry.depth() < 2 || !NESTED_NAMES.contains(&name.as_ref()) {
            continue;
        }
        if let Ok(relative) = entry.path().strip_prefix(root) {
            found.push(relative.to_string_lossy().replace('\\', "/"));
        }
    }
    found.sort();
    found
}

/// A guideline file's path as given, repository-relative and normalised; `None` when it is
/// absolute, climbs out or names the git directory.
pub fn relative(path: &str) -> Option<String> {
    let path = crate::context::normalise(path.trim())?;
    let inside = !path.is_empty() && !path.split('/').any(|p| p == ".git");
    inside.then_some(path)
}

/// The text of the guideline file at `path` (repository-relative), read through the
/// repository reader: only if it resolves inside the repository (links followed while they
/// stay inside), is a regular file within [`MAX_GUIDELINE_BYTES`] and is UTF-8; otherwise why
/// not.
pub fn read(root: &Path, path: &str) -> Result<String, Unread> {
    let refuse = |reason: String| Unread {
        path: path.to_string(),
        reason,
    };
    let relative =
        relative(path).ok_or_else(|| refuse("not a repository-relative path".to_string()))?;
    let files = RepoFiles::open(root).map_err(|e| refuse(format!("unreadable: {e}")))?;
    files.text(&relative, Limit::GUIDELINE).map_err(|e| {
        refuse(match e {
            RepoReadError::Missing { .. } if files.exists(&relative) => {
                "a link to nothing".to_string()
            }
            RepoReadError::Missing { .. } => "not found".to_string(),
            RepoReadError::Outside { .. } => "a link that leads outside the repository".to_string(),
            RepoReadError::NotFile { .. } => "not a file".to_string(),
            RepoReadError::TooLarge { .. } => {
                format!("larger than {} KiB", MAX_GUIDELINE_BYTES / 1024)
            }
            RepoReadError::NotText { .. } => "not UTF-8 text".to_string(),
            RepoReadError::Io { source, .. } => format!("unreadable: {source}"),
        })
    })
}

/// A Markdown heading line: its level and text.
fn heading(line: &str) -> Option<(u8, String)> {
    let indent = line.len() - line.trim_start_matches(' ').len();
    if indent > 3 {
        return None;
    }
    let rest = &line[indent..];
    let level = rest.bytes().take_while(|&b| b == b'#').count();
    let after = &rest[level..];
    if !(1..=6).contains(&level) || !(after.is_empty() || after.starts_with([' ', '\t'])) {
        return None;
    }
    let text = after.trim().trim_end_matches('#').trim_end().to_string();
    Some((level as u8, text))
}

/// The fence a line opens or closes (```` ``` ```` or `~~~`), if any.
pub(crate) fn fence(line: &str) -> Option<&'static str> {
    let trimmed = line.trim_start();
    if trimmed.starts_with("```") {
        Some("```")
    } else if trimmed.starts_with("~~~") {
        Some("~~~")
    } else {
        None
    }
}

/// A Markdown text's sections, split at ATX headings outside code fences and front matter;
/// what comes before the first heading is a section without a heading (left out when blank).
pub fn sections(text: &str) -> Vec<Section> {
    let mut sections = Vec::new();
    let mut current = Section {
        heading: None,
        level: 0,
        line: 1,
        text: String::new(),
    };
    let mut open_fence: Option<&str> = None;
    let mut front_matter = text.starts_with("---\n") || text.starts_with("---\r\n");
    for (i, line) in text.lines().enumerate() {
        let line = line.trim_end_matches('\r');
        if front_matter {
            if i > 0 && line.trim_end() == "---" {
                front_matter = false;
            }
        } else if let Some(marker) = open_fence {
            if fence(line) == Some(marker) {
                open_fence = None;
            }
        } else if let Some(marker) = fence(line) {
            open_fence = Some(marker);
        } else if let Some((level, title)) = heading(line) {
            sections.push(std::mem::replace(
                &mut current,
                Section {
                    heading: Some(title),
                    level,
                    line: i + 1,
                    text: String::new(),
                },
            ));
            continue;
        }
        current.text.push_str(line);
        current.text.push('\n');
    }
    sections.push(current);
    for section in &mut sections {
        section.text = section.text.trim_matches('\n').trim_end().to_string();
    }
    sections.retain(|s| s.heading.is_some() || !s.text.trim().is_empty());
    sections
}

/// Words that say nothing about what a guideline is about.
const STOP_WORDS: &[&str] = &[
    "about", "above", "after", "again", "all", "also", "always", "and", "any", "are", "because",
    "been", "before", "but", "can", "could", "did", "does", "each", "finding", "for", "from",
    "given", "has", "have", "here", "how", "into", "its", "just", "may", "more", "most", "must",
    "never", "none", "not", "now", "only", "other", "our", "reason", "reject", "rejected",
    "review", "should", "some", "such", "than", "that", "the", "their", "them", "then", "there",
    "these", "they", "this", "those", "too", "use", "very", "was", "were", "what", "when", "where",
    "which", "while", "who", "why", "will", "with", "would", "you", "your",
];

/// The stemmed words of a text (identifiers split at their humps, stop words and words under
/// three letters left out), as memory search folds them.
pub fn terms(text: &str) -> BTreeSet<String> {
    let mut terms = BTreeSet::new();
    for word in text.split(|c: char| !c.is_alphanumeric()) {
        let mut parts = crate::words::humps(word);
        parts.push(word);
        for part in parts {
            let lower = part.to_lowercase();
            if lower.len() < 3 || STOP_WORDS.contains(&lower.as_str()) {
                continue;
            }
            terms.insert(crate::words::stem(&lower));
        }
    }
    terms
}

/// Whether two stems are one word: equal, or one the other with one more letter (the light
/// stemmer leaves `naming` → `nam` beside `name`).
fn same_word(a: &str, b: &str) -> bool {
    let (short, long) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    short == long || (short.len() >= 3 && long.len() == short.len() + 1 && long.starts_with(short))
}

fn hits(wanted: &BTreeSet<String>, found: &BTreeSet<String>) -> usize {
    wanted
        .iter()
        .filter(|w| found.iter().any(|f| same_word(w, f)))
        .count()
}

/// How much a section is about a category: its words in the heading count most, then in
/// the text; the rejection patterns' words add less. 0 when nothing matches.
pub fn relevance(
    section: &Section,
    category: &BTreeSet<String>,
    patterns: &BTreeSet<String>,
) -> f64 {
    let heading = terms(section.heading.as_deref().unwrap_or_default());
    let body = terms(&section.text);
    3.0 * hits(category, &heading) as f64
        + hits(category, &body) as f64
        + 0.5 * hits(patterns, &heading) as f64
        + 0.25 * hits(patterns, &body) as f64
}

/// A section counts as relevant from this score: a category word in its text, or two of the
/// patterns' words in its heading, or several in its text.
pub const RELEVANT: f64 = 1.0;

#[cfg(test)]
mod tests {
    use super::*;

    const CLAUDE: &str = "---\ndescription: x\n# not a heading\n---\nIntro line.\n\n# Guide\n\n## Naming\n\nUse descriptive names.\nPrefer `compute_total` over `total`.\n\n```sh\n# a comment, not a heading\n```\n\n## Tests ##\nEvery change has a test.\n#hashtag is text\n";

    #[test]
    fn sections_split_at_headings_outside_fences_and_front_matter() {
        let sections = sections(CLAUDE);
        let headings: Vec<Option<&str>> = sections.iter().map(|s| s.heading.as_deref()).collect();
        assert_eq!(
            headings,
            [None, Some("Guide"), Some("Naming"), Some("Tests")]
        );
        assert!(
            sections[0].text.contains("Intro line."),
            "{:?}",
            sections[0]
        );
        let naming = &sections[2];
        assert_eq!((naming.level, naming.line), (2, 9));
        assert!(
            naming.text.starts_with("Use descriptive names."),
            "{naming:?}"
        );
        assert!(naming.text.contains("# a comment, not a heading"));
        assert!(sections[3].text.ends_with("#hashtag is text"));
        assert_eq!(super::sections(""), Vec::new());
    }

    #[test]
    fn the_naming_section_is_the_relevant_one() {
        let sections = sections(CLAUDE);
        let category = terms("naming");
        let patterns = terms(
            "Rejected naming finding on shop/models.py: rename total to computeTotal — reason: total is the domain term",
        );
        assert!(
            patterns.contains("total") && patterns.contains("comput"),
            "{patterns:?}"
        );
        let scores: Vec<f64> = sections
            .iter()
            .map(|s| relevance(s, &category, &patterns))
            .collect();
        let best = scores
            .iter()
            .enumerate()
            .max_by(|a, b| a.1.total_cmp(b.1))
            .unwrap()
            .0;
        assert_eq!(
            sections[best].heading.as_deref(),
            Some("Naming"),
            "{scores:?}"
        );
        assert!(scores[best] >= RELEVANT);
        assert!(scores[3] < RELEVANT, "{scores:?}");
    }

    #[test]
    fn files_are_found_and_read_only_inside_the_repository() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let write = |path: &str, text: &[u8]| {
            let full = root.join(path);
            std::fs::create_dir_all(full.parent().unwrap()).unwrap();
            std::fs::write(full, text).unwrap();
        };
        write("CLAUDE.md", b"# Guide\n");
        write(".cursor/rules/style.mdc", b"---\n---\n# Style\n");
        write(".cursor/rules/notes.txt", b"x");
        write(".claude/skills/review/SKILL.md", b"# Skill\n");
        write("services/api/AGENTS.md", b"# Api\n");
        write(
            "big/REVIEW.md",
            &vec![b'a'; MAX_GUIDELINE_BYTES as usize + 1],
        );
        write("bad.md", &[0xff, 0xfe, 0x00]);
        std::os::unix::fs::symlink("/etc/passwd", root.join("AGENTS.md")).unwrap();
        assert_eq!(
            find(root),
            [
                "CLAUDE.md",
                "AGENTS.md",
                ".cursor/rules/style.mdc",
                ".claude/skills/review/SKILL.md",
                "services/api/AGENTS.md"
            ]
        );
        assert_eq!(read(root, "./CLAUDE.md").unwrap(), "# Guide\n");
        let reason = |path: &str| read(root, path).unwrap_err().reason;
        assert_eq!(
            reason("AGENTS.md"),
            "a link that leads outside the repository"
        );
        assert_eq!(reason("../etc/passwd"), "not a repository-relative path");
        assert_eq!(reason("/etc/passwd"), "not a repository-relative path");
        assert_eq!(reason(".git/config"), "not a repository-relative path");
        assert_eq!(reason("GEMINI.md"), "not found");
        assert_eq!(reason("big/REVIEW.md"), "larger than 256 KiB");
        assert_eq!(reason("bad.md"), "not UTF-8 text");
        assert_eq!(reason(".cursor"), "not a file");
    }
}
