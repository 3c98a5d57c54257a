//! The change under review: files with their hunks and, where they can be had, the full old
//! and new texts. Unified diff text (git's extended format and plain `diff -u`) is read with
//! `diffy`; texts from git are diffed with it too, so both inputs end in the same model.

use diffy::patch_set::{FileOperation, ParseOptions, PatchKind, PatchSet};
use serde::Serialize;

/// Largest diff text accepted, in bytes.
pub const MAX_DIFF_BYTES: usize = 8 * 1024 * 1024;

/// What happened to a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ChangeKind {
    Added,
    Deleted,
    Modified,
    Renamed,
    Copied,
}

impl ChangeKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ChangeKind::Added => "added",
            ChangeKind::Deleted => "deleted",
            ChangeKind::Modified => "modified",
            ChangeKind::Renamed => "renamed",
            ChangeKind::Copied => "copied",
        }
    }
}

/// One line of a hunk with its numbers on each side (1-based).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HunkLine {
    /// `'+'`, `'-'` or `' '`.
    pub op: char,
    pub old: Option<u32>,
    pub new: Option<u32>,
    pub text: String,
}

/// A hunk: ranges on both sides and its lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hunk {
    pub old_start: u32,
    pub old_len: u32,
    pub new_start: u32,
    pub new_len: u32,
    pub lines: Vec<HunkLine>,
}

/// One changed file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileChange {
    pub kind: ChangeKind,
    pub old_path: Option<String>,
    pub new_path: Option<String>,
    pub binary: bool,
    pub hunks: Vec<Hunk>,
    /// The file before and after, when known (from git, or reconstructed from the worktree).
    pub old_text: Option<String>,
    pub new_text: Option<String>,
}

impl FileChange {
    /// The path the change is known by: the new one, or the old one for a deletion.
    pub fn path(&self) -> &str {
        self.new_path
            .as_deref()
            .or(self.old_path.as_deref())
            .unwrap_or_default()
    }

    /// Added lines: (new line number, text).
    pub fn added(&self) -> impl Iterator<Item = (u32, &str)> {
        self.hunks
            .iter()
            .flat_map(|h| &h.lines)
            .filter(|l| l.op == '+')
            .filter_map(|l| Some((l.new?, l.text.as_str())))
    }

    /// Removed lines: (old line number, text).
    pub fn removed(&self) -> impl Iterator<Item = (u32, &str)> {
        self.hunks
            .iter()
            .flat_map(|h| &h.lines)
            .filter(|l| l.op == '-')
            .filter_map(|l| Some((l.old?, l.text.as_str())))
    }

    pub(crate) fn added_count(&self) -> usize {
        self.added().count()
    }

    pub(crate) fn removed_count(&self) -> usize {
        self.removed().count()
    }
}

/// A diff that cannot be read.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum DiffError {
    #[error("the diff is empty")]
    Empty,
    #[error("the diff is {0} bytes; the limit is {MAX_DIFF_BYTES}")]
    TooLarge(usize),
    #[error("malformed diff at line {line}: {message}")]
    Malformed { line: usize, message: String },
    #[error("the diff names a path outside the repository: `{0}`")]
    EscapingPath(String),
}

/// Drops the carriage returns of CRLF line ends.
pub fn normalise_newlines(text: &str) -> String {
    if text.contains('\r') {
        text.replace("\r\n", "\n")
    } else {
        text.to_string()
    }
}

/// Reads unified diff text: git's format (`diff --git`, renames, binary markers, modes) or a
/// plain `diff -u`/`---`/`+++` diff, CRLF or LF.
pub fn parse(text: &str) -> Result<Vec<FileChange>, DiffError> {
    if text.len() > MAX_DIFF_BYTES {
        return Err(DiffError::TooLarge(text.len()));
    }
    if text.trim().is_empty() {
        return Err(DiffError::Empty);
    }
    let text = normalise_newlines(text);
    let git = text.lines().any(|l| l.starts_with("diff --git "));
    let options = if git {
        ParseOptions::gitdiff()
    } else {
        ParseOptions::unidiff()
    };
    let mut changes = Vec::new();
    for patch in PatchSet::parse(&text, options) {
        let patch = patch.map_err(|e| malformed(&text, &e.to_string()))?;
        let (kind, old, new) = match patch.operation() {
            FileOperation::Create(p) => (ChangeKind::Added, None, Some(p.to_string())),
            FileOperation::Delete(p) => (ChangeKind::Deleted, Some(p.to_string()), None),
            FileOperation::Modify { original, modified } => (
                ChangeKind::Modified,
                Some(original.to_string()),
                Some(modified.to_string()),
            ),
            FileOperation::Rename { from, to } => (
                ChangeKind::Renamed,
                Some(from.to_string()),
                Some(to.to_string()),
            ),
            FileOperation::Copy { from, to } => (
                ChangeKind::Copied,
                Some(from.to_string()),
                Some(to.to_string()),
            ),
        };
        let old = old.map(|p| repo_path(&p, git)).transpose()?;
        let new = new.map(|p| repo_path(&p, git)).transpose()?;
        let (binary, hunks) = match patch.patch() {
            PatchKind::Binary(_) => (true, Vec::new()),
            PatchKind::Text(p) => (false, hunks_of(p)),
        };
        changes.push(FileChange {
            kind,
            old_path: old,
            new_path: new,
            binary,
            hunks,
            old_text: None,
            new_text: None,
        });
    }
    if changes.is_empty() {
        return Err(DiffError::Malformed {
            line: 1,
            message: "no file headers (`--- a/…`, `+++ b/…`) found".to_string(),
        });
    }
    Ok(changes)
}

/// The change between two texts of a file (either may be absent: an addition or deletion).
pub fn between(
    kind: ChangeKind,
    old_path: Option<String>,
    new_path: Option<String>,
    old_text: Option<String>,
    new_text: Option<String>,
) -> FileChange {
    let old_text = old_text.map(|t| normalise_newlines(&t));
    let new_text = new_text.map(|t| normalise_newlines(&t));
    let patch = diffy::create_patch(
        old_text.as_deref().unwrap_or_default(),
        new_text.as_deref().unwrap_or_default(),
    );
    FileChange {
        kind,
        old_path,
        new_path,
        binary: false,
        hunks: hunks_of(&patch),
        old_text,
        new_text,
    }
}

/// A binary file's change: no lines, only the fact.
pub fn binary(kind: ChangeKind, old_path: Option<String>, new_path: Option<String>) -> FileChange {
    FileChange {
        kind,
        old_path,
        new_path,
        binary: true,
        hunks: Vec::new(),
        old_text: None,
        new_text: None,
    }
}

/// Rebuilds the other side of a parsed change from one known text: `Ok(old)` from the new
/// text (reverse apply) or `Ok(new)` from the old one; `None` when the hunks do not fit.
pub fn reconstruct(change: &FileChange, known: &str, known_is_new: bool) -> Option<String> {
    let known = normalise_newlines(known);
    let mut lines: Vec<&str> = known.lines().collect();
    // Walk the hunks from the end so earlier line numbers stay valid.
    for hunk in change.hunks.iter().rev() {
        let (start, len) = if known_is_new {
            (hunk.new_start, hunk.new_len)
        } else {
            (hunk.old_start, hunk.old_len)
        };
        let (keep, put) = if known_is_new { ('+', '-') } else { ('-', '+') };
        let expected: Vec<&str> = hunk
            .lines
            .iter()
            .filter(|l| l.op == ' ' || l.op == keep)
            .map(|l| l.text.as_str())
            .collect();
        let from = if len == 0 {
            start as usize
        } else {
            start.max(1) as usize - 1
        };
        let to = from + len as usize;
        if to > lines.len() || expected.len() != len as usize {
            return None;
        }
        let fits = lines[from..to]
            .iter()
            .zip(&expected)
            .all(|(have, want)| have == want);
        if !fits {
            return None;
        }
        let replacement: Vec<&str> = hunk
            .lines
            .iter()
            .filter(|l| l.op == ' ' || l.op == put)
            .map(|l| l.text.as_str())
            .collect();
        lines.splice(from..to, replacement);
    }
    let mut out = lines.join("\n");
    if !lines.is_empty() {
        out.push('\n');
    }
    Some(out)
}

fn hunks_of(patch: &diffy::Patch<'_, str>) -> Vec<Hunk> {
    patch
        .hunks()
        .iter()
        .map(|h| {
            let old = h.old_range();
            let new = h.new_range();
            let mut old_no = old.start() as u32;
            let mut new_no = new.start() as u32;
            // A zero-length range names the line before it.
            if old.is_empty() {
                old_no += 1;
            }
            if new.is_empty() {
                new_no += 1;
            }
            let lines = h
                .lines()
                .iter()
                .map(|line| {
                    let (op, text) = match line {
                        diffy::Line::Context(t) => (' ', *t),
                        diffy::Line::Delete(t) => ('-', *t),
                        diffy::Line::Insert(t) => ('+', *t),
                    };
                    let (o, n) = match op {
                        ' ' => (Some(old_no), Some(new_no)),
                        '-' => (Some(old_no), None),
                        _ => (None, Some(new_no)),
                    };
                    if o.is_some() {
                        old_no += 1;
                    }
                    if n.is_some() {
                        new_no += 1;
                    }
                    HunkLine {
                        op,
                        old: o,
                        new: n,
                        text: text.trim_end_matches('\n').to_string(),
                    }
                })
                .collect();
            Hunk {
                old_start: old.start() as u32,
                old_len: old.len() as u32,
                new_start: new.start() as u32,
                new_len: new.len() as u32,
                lines,
            }
        })
        .collect()
}

/// A diff's path as a repository-relative path: git's `a/`/`b/` prefixes dropped, and
/// anything that would leave the repository refused.
fn repo_path(raw: &str, git: bool) -> Result<String, DiffError> {
    let raw = raw.trim();
    let stripped = if git {
        raw.strip_prefix("a/")
            .or_else(|| raw.strip_prefix("b/"))
            .unwrap_or(raw)
    } else {
        raw.strip_prefix("a/")
            .or_else(|| raw.strip_prefix("b/"))
            .or_else(|| raw.strip_prefix("./"))
            .unwrap_or(raw)
    };
    let escapes = stripped.starts_with('/')
        || stripped.starts_with('\\')
        || stripped.split(['/', '\\']).any(|part| part == "..")
        || stripped.contains(':');
    if escapes || stripped.is_empty() {
        return Err(DiffError::EscapingPath(raw.to_string()));
    }
    Ok(stripped.to_string())
}

fn malformed(text: &str, message: &str) -> DiffError {
    // diffy reports a byte offset ("… at byte N: …"); name the line instead.
    let offset = message
        .split("at byte ")
        .nth(1)
        .and_then(|rest| rest.split(':').next())
        .and_then(|n| n.trim().parse::<usize>().ok());
    let line = offset.map_or(1, |o| {
        text.as_bytes()[..o.min(text.len())]
            .iter()
            .filter(|&&b| b == b'\n')
            .count()
            + 1
    });
    let message = message
        .split_once(": ")
        .filter(|_| offset.is_some())
        .map_or(message, |(_, rest)| rest)
        .to_string();
    DiffError::Malformed { line, message }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GIT: &str = "diff --git a/pkg/app.py b/pkg/app.py
index 1111111..2222222 100644
--- a/pkg/app.py
+++ b/pkg/app.py
@@ -10,6 +10,7 @@ class App:
     def run(self):
         a = 1
-        b = 2
+        b = 3
+        c = 4
         return a
 
 
@@ -40,3 +41,2 @@ def tail():
     x = 1
-    y = 2
     return x
diff --git a/old.py b/new.py
similarity index 90%
rename from old.py
rename to new.py
index 3333333..4444444 100644
--- a/old.py
+++ b/new.py
@@ -1,2 +1,2 @@
-import os
+import sys
 VALUE = 1
diff --git a/gone.py b/gone.py
deleted file mode 100644
index 5555555..0000000
--- a/gone.py
+++ /dev/null
@@ -1,2 +0,0 @@
-def f():
-    pass
diff --git a/logo.png b/logo.png
new file mode 100644
index 0000000..6666666
Binary files /dev/null and b/logo.png differ
diff --git a/fresh.py b/fresh.py
new file mode 100644
index 0000000..7777777
--- /dev/null
+++ b/fresh.py
@@ -0,0 +1,2 @@
+def g():
+    return 1
\\ No newline at end of file
";

    #[test]
    fn reads_a_git_diff_with_renames_deletions_binaries_and_new_files() {
        let changes = parse(GIT).unwrap();
        let kinds: Vec<(ChangeKind, &str, bool)> = changes
            .iter()
            .map(|c| (c.kind, c.path(), c.binary))
            .collect();
        assert_eq!(
            kinds,
            vec![
                (ChangeKind::Modified, "pkg/app.py", false),
                (ChangeKind::Renamed, "new.py", false),
                (ChangeKind::Deleted, "gone.py", false),
                (ChangeKind::Added, "logo.png", true),
                (ChangeKind::Added, "fresh.py", false),
            ]
        );
        let app = &changes[0];
        assert_eq!(
            app.added().collect::<Vec<_>>(),
            vec![(12, "        b = 3"), (13, "        c = 4")]
        );
        assert_eq!(
            app.removed().collect::<Vec<_>>(),
            vec![(12, "        b = 2"), (41, "    y = 2")]
        );
        assert_eq!(changes[1].old_path.as_deref(), Some("old.py"));
        assert_eq!(changes[2].removed_count(), 2);
        assert_eq!(
            changes[4].added().collect::<Vec<_>>(),
            vec![(1, "def g():"), (2, "    return 1")]
        );
    }

    #[test]
    fn reads_plain_and_crlf_diffs() {
        let plain = "--- a.py\t2026-01-01\n+++ a.py\t2026-01-02\n@@ -1 +1 @@\n-x = 1\n+x = 2\n";
        let changes = parse(plain).unwrap();
        assert_eq!(changes[0].path(), "a.py");
        assert_eq!(changes[0].added().collect::<Vec<_>>(), vec![(1, "x = 2")]);
        let crlf = GIT.replace('\n', "\r\n");
        let again = parse(&crlf).unwrap();
        assert_eq!(again.len(), 5);
        assert_eq!(again[0].added().next(), Some((12, "        b = 3")));
    }

    #[test]
    fn malformed_diffs_name_the_line() {
        assert_eq!(parse("  \n"), Err(DiffError::Empty));
        let bad = "diff --git a/x.py b/x.py\n--- a/x.py\n+++ b/x.py\n@@ -1,3 +1,3 @@\n-a\n+b\n";
        match parse(bad) {
            Err(DiffError::Malformed { line, .. }) => assert!(line >= 1),
            other => panic!("expected a malformed diff, got {other:?}"),
        }
        assert!(matches!(
            parse("hello\nworld\n"),
            Err(DiffError::Malformed { .. })
        ));
        let escaping = "--- a/../../etc/passwd\n+++ b/../../etc/passwd\n@@ -1 +1 @@\n-a\n+b\n";
        assert!(matches!(parse(escaping), Err(DiffError::EscapingPath(_))));
        let absolute = "--- /etc/passwd\n+++ /etc/passwd\n@@ -1 +1 @@\n-a\n+b\n";
        assert!(matches!(parse(absolute), Err(DiffError::EscapingPath(_))));
    }

    #[test]
    fn texts_are_diffed_and_rebuilt() {
        let old = "a\nb\nc\nd\ne\nf\ng\nh\n";
        let new = "a\nb\nC\nd\ne\nf\ng\nh\ni\n";
        let change = between(
            ChangeKind::Modified,
            Some("f.py".into()),
            Some("f.py".into()),
            Some(old.into()),
            Some(new.into()),
        );
        assert_eq!(change.added().collect::<Vec<_>>(), vec![(3, "C"), (9, "i")]);
        assert_eq!(change.removed().collect::<Vec<_>>(), vec![(3, "c")]);
        assert_eq!(reconstruct(&change, new, true).as_deref(), Some(old));
        assert_eq!(reconstruct(&change, old, false).as_deref(), Some(new));
        assert_eq!(reconstruct(&change, "unrelated\n", true), None);
    }

    mod properties {
        use super::*;
        use proptest::prelude::*;

        /// Lines a unified diff is made of, mixed with noise.
        fn diff_line() -> impl Strategy<Value = String> {
            prop_oneof![
                Just("diff --git a/x.py b/x.py".to_string()),
                Just("--- a/x.py".to_string()),
                Just("+++ b/x.py".to_string()),
                Just("--- /dev/null".to_string()),
                Just("rename from a.py".to_string()),
                Just("Binary files a/x and b/x differ".to_string()),
                (0u32..5, 0u32..5, 0u32..5, 0u32..5)
                    .prop_map(|(a, b, c, d)| format!("@@ -{a},{b} +{c},{d} @@")),
                "[ +-][a-z ]{0,12}",
                "\\PC{0,24}",
            ]
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(512))]

            #[test]
            fn parsing_never_panics(lines in prop::collection::vec(diff_line(), 0..40)) {
                let _ = parse(&lines.join("\n"));
            }

            #[test]
            fn parsing_arbitrary_text_never_panics(text in "\\PC{0,400}") {
                let _ = parse(&text);
            }

            #[test]
            fn a_diff_of_two_texts_rebuilds_either_side(
                old in prop::collection::vec("[a-c]{0,3}", 0..20),
                new in prop::collection::vec("[a-c]{0,3}", 0..20),
            ) {
                let (old, new) = (old.join("\n") + "\n", new.join("\n") + "\n");
                let change = between(
                    ChangeKind::Modified,
                    Some("f.py".into()),
                    Some("f.py".into()),
                    Some(old.clone()),
                    Some(new.clone()),
                );
                prop_assert_eq!(reconstruct(&change, &new, true), Some(old.clone()));
                prop_assert_eq!(reconstruct(&change, &old, false), Some(new));
            }
        }
    }
}
