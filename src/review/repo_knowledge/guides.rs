//! Contributing and style guides, split into sections that are candidate project patterns.
//! Sections about setting up, installing, the licence or the code of conduct say nothing
//! about how the code is written here: they are skipped, and [`SKIPPED_TOPICS`] says which.
//! The instruction files assistants read (and cairn installs into) are never read here.

use super::markup::prose;
use super::{Skipped, cut, one_line};
use crate::fsutil::repo::{Limit, RepoFiles};
use crate::review::guidelines::sections;

/// Contributing guides, in the places code hosts look for them.
pub const CONTRIBUTING: [&str; 3] = [
    "CONTRIBUTING.md",
    ".github/CONTRIBUTING.md",
    "docs/CONTRIBUTING.md",
];
/// Style guides at the root; `docs/style*.md` and `docs/*style-guide*.md` are found too.
pub const STYLE_GUIDES: [&str; 2] = ["STYLEGUIDE.md", "STYLE.md"];
/// The instruction files of assistants: never read as guides.
pub const INSTRUCTION_FILES: [&str; 7] = [
    "CLAUDE.md",
    "AGENTS.md",
    "GEMINI.md",
    ".cursorrules",
    ".cursor/rules",
    ".windsurfrules",
    ".github/copilot-instructions.md",
];
/// Words in a heading that mark a section as not about the code, and what it is about
/// instead (the reason it is skipped).
pub const SKIPPED_TOPICS: [(&str, &str); 16] = [
    ("install", "setup"),
    ("setup", "setup"),
    ("set up", "setup"),
    ("setting up", "setup"),
    ("getting started", "setup"),
    ("prerequisite", "setup"),
    ("development environment", "setup"),
    ("licen", "the licence"),
    ("copyright", "the licence"),
    ("code of conduct", "the code of conduct"),
    ("table of contents", "the table of contents"),
    ("thank", "thanks"),
    ("acknowledg", "thanks"),
    ("contact", "contact"),
    ("getting help", "contact"),
    ("questions", "contact"),
];

/// Largest guide read.
pub const LIMIT: Limit = Limit {
    what: "a contributing or style guide",
    bytes: 256 * 1024,
};
/// Most guides read in one run.
const MAX_GUIDES: usize = 8;
/// Most sections of one guide proposed.
pub const MAX_SECTIONS: usize = 40;
/// Longest section text kept, in bytes.
const SECTION_BYTES: usize = 900;
/// Most entries of `docs/` looked at for style guides.
const LISTED: usize = 2_000;

/// What kind of guide a file is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Guide {
    Contributing,
    Style,
}

impl Guide {
    /// As a proposal's evidence names it.
    pub fn as_str(self) -> &'static str {
        match self {
            Guide::Contributing => "contributing guide",
            Guide::Style => "style guide",
        }
    }
}

/// A section of a guide: a candidate project pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GuideSection {
    pub path: String,
    pub guide: Guide,
    pub heading: String,
    /// The heading's line (1-based).
    pub line: usize,
    /// The section's text (its subsections included) as prose, on one line, cut at
    /// [`SECTION_BYTES`].
    pub text: String,
}

/// What the guides hold.
#[derive(Debug, Default)]
pub struct Found {
    /// Guide files read.
    pub read: usize,
    pub sections: Vec<GuideSection>,
    pub skipped: Vec<Skipped>,
}

/// Reads the contributing and style guides of the repository, at most [`MAX_GUIDES`].
pub fn find(files: &RepoFiles) -> Found {
    let mut found = Found::default();
    for (path, guide) in guide_paths(files) {
        if found.read >= MAX_GUIDES {
            found.skipped.push(Skipped::new(
                path,
                format!("more than {MAX_GUIDES} guides; the first are read"),
            ));
            continue;
        }
        match files.text(&path, LIMIT) {
            Ok(text) => {
                found.read += 1;
                let (kept, skipped) = split(&path, guide, &text);
                found.sections.extend(kept);
                found.skipped.extend(skipped);
            }
            Err(e) if e.is_missing() => {}
            Err(e) => found.skipped.push(Skipped::new(path, e.reason())),
        }
    }
    found
}

/// The guides present: contributing guides, root style guides, then those in `docs/`.
fn guide_paths(files: &RepoFiles) -> Vec<(String, Guide)> {
    let present = |list: &[&str], guide: Guide| -> Vec<(String, Guide)> {
        list.iter()
            .filter(|p| files.exists(p))
            .map(|p| (p.to_string(), guide))
            .collect()
    };
    let mut paths = present(&CONTRIBUTING, Guide::Contributing);
    paths.extend(present(&STYLE_GUIDES, Guide::Style));
    if let Ok(entries) = files.list("docs", LISTED) {
        let mut docs: Vec<String> = entries
            .into_iter()
            .filter(|e| !e.is_dir && is_docs_style_guide(&e.name))
            .map(|e| format!("docs/{}", e.name))
            .collect();
        docs.sort();
        paths.extend(docs.into_iter().map(|p| (p, Guide::Style)));
    }
    paths.retain(|(p, _)| !is_instruction_file(p));
    paths
}

/// `style*.md` or `*style-guide*.md`, any case.
fn is_docs_style_guide(name: &str) -> bool {
    let lower = name.to_lowercase();
    lower.ends_with(".md") && (lower.starts_with("style") || lower.contains("style-guide"))
}

/// Whether `path` is an assistant's instruction file (or under `.cursor/rules`).
pub fn is_instruction_file(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    INSTRUCTION_FILES
        .iter()
        .any(|f| path == *f || name == *f || path.starts_with(&format!("{f}/")))
}

/// Why a heading's section is not a project pattern, if it is one of [`SKIPPED_TOPICS`].
pub fn skipped_topic(heading: &str) -> Option<&'static str> {
    let lower = heading.to_lowercase();
    SKIPPED_TOPICS
        .iter()
        .find(|(word, _)| lower.contains(word))
        .map(|(_, topic)| *topic)
}

/// A guide's sections at its `##` headings (at `#` when it has none), deeper headings kept
/// in their section and the text before the first such heading left out; with what was
/// skipped and why.
pub fn split(path: &str, guide: Guide, text: &str) -> (Vec<GuideSection>, Vec<Skipped>) {
    let parts = sections(text);
    let level = if parts.iter().any(|s| s.level == 2) {
        2
    } else {
        1
    };
    let mut grouped: Vec<GuideSection> = Vec::new();
    let mut open = false;
    for part in parts {
        if part.level == level {
            grouped.push(GuideSection {
                path: path.to_string(),
                guide,
                heading: part.heading.unwrap_or_default(),
                line: part.line,
                text: part.text,
            });
            open = true;
        } else if part.level > level && open {
            let current = grouped.last_mut().expect("a section is open");
            let heading = part.heading.unwrap_or_default();
            current.text = format!("{}\n{heading}: {}", current.text, part.text);
        } else {
            open = false;
        }
    }
    let mut kept = Vec::new();
    let mut skipped = Vec::new();
    for mut section in grouped {
        let item = format!("{path} \"{}\"", section.heading);
        section.text = cut(&one_line(&prose(&section.text)), SECTION_BYTES);
        if let Some(topic) = skipped_topic(&section.heading) {
            skipped.push(Skipped::new(item, format!("about {topic}")));
        } else if section.text.is_empty() {
            skipped.push(Skipped::new(item, "empty"));
        } else if kept.len() >= MAX_SECTIONS {
            skipped.push(Skipped::new(
                item,
                format!("more than {MAX_SECTIONS} sections in one guide"),
            ));
        } else {
            kept.push(section);
        }
    }
    (kept, skipped)
}

#[cfg(test)]
mod tests {
    use super::*;

    const CONTRIBUTING_MD: &str = "# Contributing\n\nThanks for helping!\n\n## Table of Contents\n\n- a\n\n## Getting Started\n\nRun `make setup`.\n\n## Code style\n\nUse four spaces.\n\n### Naming\n\nFunctions are verbs.\n\n## Tests\n\nEvery change has a test.\n\n## License\n\nMIT.\n\n## Reviews\n\n";

    #[test]
    fn sections_at_level_two_keep_their_subsections_and_skip_setup_and_licence() {
        let (kept, skipped) = split("CONTRIBUTING.md", Guide::Contributing, CONTRIBUTING_MD);
        let headings: Vec<(&str, &str)> = kept
            .iter()
            .map(|s| (s.heading.as_str(), s.text.as_str()))
            .collect();
        assert_eq!(
            headings,
            [
                (
                    "Code style",
                    "Use four spaces. Naming: Functions are verbs."
                ),
                ("Tests", "Every change has a test.")
            ]
        );
        assert_eq!(kept[0].line, 13);
        let why: Vec<(&str, &str)> = skipped
            .iter()
            .map(|s| (s.item.as_str(), s.why.as_str()))
            .collect();
        assert_eq!(
            why,
            [
                (
                    "CONTRIBUTING.md \"Table of Contents\"",
                    "about the table of contents"
                ),
                ("CONTRIBUTING.md \"Getting Started\"", "about setup"),
                ("CONTRIBUTING.md \"License\"", "about the licence"),
                ("CONTRIBUTING.md \"Reviews\"", "empty"),
            ]
        );
    }

    #[test]
    fn a_guide_without_second_level_headings_splits_at_the_first_level() {
        let (kept, _) = split(
            "STYLE.md",
            Guide::Style,
            "# Naming\nNouns for types.\n# Errors\nNo panics.\n",
        );
        let headings: Vec<&str> = kept.iter().map(|s| s.heading.as_str()).collect();
        assert_eq!(headings, ["Naming", "Errors"]);
    }

    #[test]
    fn guides_are_found_and_instruction_files_never_are() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let write =
            |path: &str, text: &str| crate::review::repo_knowledge::write_under(root, path, text);
        write(".github/CONTRIBUTING.md", "## Style\nShort functions.\n");
        write("docs/style.md", "## Layout\nOne module per file.\n");
        write(
            "docs/python-style-guide.md",
            "## Imports\nAbsolute imports.\n",
        );
        write("docs/CLAUDE.md", "## Style\nAssistant text.\n");
        write("CLAUDE.md", "## Style\nAssistant text.\n");
        write("docs/notes.md", "## Style\nNot a guide.\n");
        let found = find(&RepoFiles::open(root).unwrap());
        let paths: Vec<&str> = found.sections.iter().map(|s| s.path.as_str()).collect();
        assert_eq!(
            paths,
            [
                ".github/CONTRIBUTING.md",
                "docs/python-style-guide.md",
                "docs/style.md"
            ]
        );
        assert_eq!(found.sections[2].guide, Guide::Style);
        for file in INSTRUCTION_FILES {
            assert!(is_instruction_file(file), "{file}");
        }
        assert!(is_instruction_file(".cursor/rules/style.mdc"));
        assert!(!is_instruction_file("docs/style.md"));
    }
}
