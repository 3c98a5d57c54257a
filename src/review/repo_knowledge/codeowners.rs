//! `CODEOWNERS`: who owns a file, as GitHub and GitLab read it. Patterns are gitignore-style
//! (`*.js` anywhere, `/docs/` at the root, `docs/*` only directly inside, `apps/` any folder of
//! that name); the last rule that matches a file decides its owners, and a rule without owners
//! leaves the file unowned. GitLab's sections (`[Docs]`, `^[Optional][2] @default`) are read
//! as GitLab does: each section's last matching rule counts, and their owners add up.

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};
use serde::Serialize;

use super::Skipped;
use crate::fsutil::repo::{Limit, RepoFiles};

/// Where a `CODEOWNERS` file is looked for, the first found used (GitHub's order, then
/// GitLab's `.gitlab/`).
pub const LOCATIONS: [&str; 4] = [
    ".github/CODEOWNERS",
    "CODEOWNERS",
    "docs/CODEOWNERS",
    ".gitlab/CODEOWNERS",
];
/// Largest `CODEOWNERS` read.
pub const LIMIT: Limit = Limit {
    what: "a CODEOWNERS file",
    bytes: 512 * 1024,
};
/// Most rules read; later ones are left out.
pub const MAX_RULES: usize = 5_000;

/// One rule: a pattern and its owners.
#[derive(Debug)]
struct Rule {
    /// The section it belongs to (0 before any section).
    section: usize,
    matcher: GlobSet,
    owners: Vec<String>,
    line: usize,
}

/// A parsed `CODEOWNERS` file.
#[derive(Debug)]
pub struct CodeOwners {
    /// Where it is, repository-relative.
    pub path: String,
    rules: Vec<Rule>,
    /// Lines that are not rules cairn can read (a bad pattern, past [`MAX_RULES`]).
    pub skipped: Vec<Skipped>,
}

/// The owners of one file, and the rules (their lines) that name them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Owned {
    pub owners: Vec<String>,
    /// The `CODEOWNERS` file.
    pub file: String,
    pub lines: Vec<usize>,
}

impl Owned {
    /// `@a, @b (CODEOWNERS line 3)`.
    pub fn describe(&self) -> String {
        let lines: Vec<String> = self.lines.iter().map(usize::to_string).collect();
        format!(
            "{} ({} line {})",
            self.owners.join(", "),
            self.file,
            lines.join(", ")
        )
    }
}

/// The repository's `CODEOWNERS` (the first of [`LOCATIONS`] present): `Ok(None)` when it
/// has none, `Err` when the one it has cannot be read.
pub fn read(files: &RepoFiles) -> Result<Option<CodeOwners>, Skipped> {
    let Some(path) = LOCATIONS.iter().find(|p| files.exists(p)) else {
        return Ok(None);
    };
    match files.text(path, LIMIT) {
        Ok(text) => Ok(Some(CodeOwners::parse(path, &text))),
        Err(e) if e.is_missing() => Ok(None),
        Err(e) => Err(Skipped::new(*path, e.reason())),
    }
}

impl CodeOwners {
    /// The rules of `text`, the file at `path`.
    pub fn parse(path: &str, text: &str) -> CodeOwners {
        let mut owners = CodeOwners {
            path: path.to_string(),
            rules: Vec::new(),
            skipped: Vec::new(),
        };
        let mut sections: Vec<String> = Vec::new();
        let mut section = 0;
        let mut defaults: Vec<String> = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            if let Some((name, default_owners)) = section_header(line) {
                let name = name.to_lowercase();
                section = match sections.iter().position(|s| *s == name) {
                    Some(at) => at + 1,
                    None => {
                        sections.push(name);
                        sections.len()
                    }
                };
                defaults = default_owners;
                continue;
            }
            if owners.rules.len() >= MAX_RULES {
                owners.skipped.push(Skipped::new(
                    format!("{path} line {}", i + 1),
                    format!("more than {MAX_RULES} rules; the first are read"),
                ));
                break;
            }
            let (pattern, mut named) = rule_parts(line);
            if named.is_empty() && section > 0 {
                named = defaults.clone();
            }
            match matcher(&pattern) {
                Some(matcher) => owners.rules.push(Rule {
                    section,
                    matcher,
                    owners: named
                        .iter()
                        .map(|o| crate::secrets::redact(o).text)
                        .collect(),
                    line: i + 1,
                }),
                None => owners.skipped.push(Skipped::new(
                    format!("{path} line {}", i + 1),
                    "a pattern cairn cannot read",
                )),
            }
        }
        owners
    }

    /// How many rules it holds.
    pub fn rules(&self) -> usize {
        self.rules.len()
    }

    /// The owners of the file at `path` (repository-relative): in each section the last rule
    /// that matches; `None` when no rule matches or the deciding rules name no owner.
    pub fn owners_of(&self, path: &str) -> Option<Owned> {
        let mut deciding: Vec<&Rule> = Vec::new();
        for rule in self.rules.iter().rev() {
            if deciding.iter().any(|r| r.section == rule.section) || !rule.matcher.is_match(path) {
                continue;
            }
            deciding.push(rule);
        }
        deciding.reverse();
        let mut owned = Owned {
            owners: Vec::new(),
            file: self.path.clone(),
            lines: Vec::new(),
        };
        for rule in deciding.iter().filter(|r| !r.owners.is_empty()) {
            owned.lines.push(rule.line);
            for owner in &rule.owners {
                if !owned.owners.contains(owner) {
                    owned.owners.push(owner.clone());
                }
            }
        }
        (!owned.owners.is_empty()).then_some(owned)
    }
}

/// A GitLab section header (`[Name]`, `^[Name]`, `[Name][2]`, each with optional default
/// owners): its name and default owners.
fn section_header(line: &str) -> Option<(String, Vec<String>)> {
    let rest = line.strip_prefix('^').unwrap_or(line);
    let rest = rest.strip_prefix('[')?;
    let (name, mut after) = rest.split_once(']')?;
    // The number of approvals: `[Name][2]`.
    if let Some(count) = after.strip_prefix('[') {
        after = count.split_once(']')?.1;
    }
    if !(after.is_empty() || after.starts_with([' ', '\t'])) {
        return None;
    }
    Some((name.trim().to_string(), owner_words(after)))
}

/// A rule line's pattern (backslash escapes kept for the glob) and owners.
fn rule_parts(line: &str) -> (String, Vec<String>) {
    let mut pattern = String::new();
    let mut chars = line.char_indices();
    let mut rest = "";
    while let Some((at, c)) = chars.next() {
        match c {
            '\\' => {
                pattern.push(c);
                if let Some((_, escaped)) = chars.next() {
                    pattern.push(escaped);
                }
            }
            c if c.is_whitespace() => {
                rest = &line[at..];
                break;
            }
            c => pattern.push(c),
        }
    }
    (pattern, owner_words(rest))
}

/// Owners up to a comment.
fn owner_words(text: &str) -> Vec<String> {
    text.split_whitespace()
        .take_while(|w| !w.starts_with('#'))
        .map(str::to_string)
        .collect()
}

/// The globs a `CODEOWNERS` pattern stands for, matched against repository-relative paths.
fn matcher(pattern: &str) -> Option<GlobSet> {
    let mut set = GlobSetBuilder::new();
    for glob in globs(pattern) {
        let glob = GlobBuilder::new(&glob)
            .literal_separator(true)
            .backslash_escape(true)
            .build()
            .ok()?;
        set.add(glob);
    }
    set.build().ok()
}

/// A pattern as globs: anchored at the root when it has a `/` before its end, anywhere
/// otherwise; a folder's files at any depth, unless its last part has a wildcard (`docs/*`
/// is only what is directly in `docs`).
fn globs(pattern: &str) -> Vec<String> {
    let anchored = pattern.trim_end_matches('/').contains('/');
    let folder_only = pattern.ends_with('/');
    let body = pattern.trim_start_matches('/').trim_end_matches('/');
    if body.is_empty() {
        return vec!["**".to_string()];
    }
    let base = if anchored || body.starts_with("**") {
        body.to_string()
    } else {
        format!("**/{body}")
    };
    let last = body.rsplit('/').next().unwrap_or(body);
    if folder_only {
        vec![format!("{base}/**")]
    } else if last.contains('*') {
        vec![base]
    } else {
        vec![base.clone(), format!("{base}/**")]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GITHUB: &str = "# Owners\n* @org/everyone\n*.js @js-owner # front end\n/build/logs/ @doctocat\ndocs/* docs@example.com\napps/ @octocat\n/src/payments/ @org/payments @alice\n/src/payments/generated.py\n**/migrations @dba\n/scripts/deploy\\ tool.sh @ops\n";

    fn owners(file: &CodeOwners, path: &str) -> Vec<String> {
        file.owners_of(path).map(|o| o.owners).unwrap_or_default()
    }

    #[test]
    fn the_last_matching_rule_decides() {
        let file = CodeOwners::parse(".github/CODEOWNERS", GITHUB);
        assert_eq!(file.rules(), 9);
        let check = |path: &str, expected: &[&str]| {
            assert_eq!(owners(&file, path), expected, "{path}");
        };
        check("README.md", &["@org/everyone"]);
        check("web/app.js", &["@js-owner"]);
        check("build/logs/today.txt", &["@doctocat"]);
        check("nested/build/logs/today.txt", &["@org/everyone"]);
        check("docs/intro.md", &["docs@example.com"]);
        check("docs/deep/intro.md", &["@org/everyone"]);
        check("apps/web/main.py", &["@octocat"]);
        check("services/apps/main.py", &["@octocat"]);
        check("src/payments/charge.py", &["@org/payments", "@alice"]);
        check("src/payments/generated.py", &[]);
        check("db/migrations/0001.sql", &["@dba"]);
        check("scripts/deploy tool.sh", &["@ops"]);
        let owned = file.owners_of("src/payments/charge.py").unwrap();
        assert_eq!(
            owned.describe(),
            "@org/payments, @alice (.github/CODEOWNERS line 7)"
        );
    }

    #[test]
    fn gitlab_sections_add_up_and_lend_their_default_owners() {
        let text = "* @everyone\n\n[Documentation] @docs-team\ndocs/\nREADME.md @writer\n\n^[Database][2] @dba\nmigrations/\n\n[documentation]\n*.md @md-reviewer\n";
        let file = CodeOwners::parse("CODEOWNERS", text);
        assert_eq!(owners(&file, "src/app.py"), ["@everyone"]);
        assert_eq!(owners(&file, "docs/guide.txt"), ["@everyone", "@docs-team"]);
        // One section, written in two places: its last match counts.
        assert_eq!(
            owners(&file, "docs/guide.md"),
            ["@everyone", "@md-reviewer"]
        );
        assert_eq!(owners(&file, "db/migrations/1.sql"), ["@everyone", "@dba"]);
        assert!(file.skipped.is_empty(), "{:?}", file.skipped);
    }

    #[test]
    fn the_first_file_present_is_read_through_the_repository_reader() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let files = RepoFiles::open(root).unwrap();
        assert!(read(&files).unwrap().is_none());
        std::fs::create_dir_all(root.join("docs")).unwrap();
        std::fs::write(root.join("docs/CODEOWNERS"), "* @docs\n").unwrap();
        std::fs::write(root.join("CODEOWNERS"), "* @root\n").unwrap();
        let found = read(&files).unwrap().unwrap();
        assert_eq!(found.path, "CODEOWNERS");
        assert_eq!(owners(&found, "a.py"), ["@root"]);
        std::fs::create_dir_all(root.join(".github")).unwrap();
        std::os::unix::fs::symlink("/etc/passwd", root.join(".github/CODEOWNERS")).unwrap();
        let refused = read(&files).unwrap_err();
        assert_eq!(refused.item, ".github/CODEOWNERS");
        assert!(
            refused.why.contains("outside the repository"),
            "{refused:?}"
        );
    }
}
