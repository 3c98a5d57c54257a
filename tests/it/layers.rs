//! The layering of the crate, checked on its source: a module may use only modules in the
//! layers before its own. ARCHITECTURE.md draws the same table; change both together.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The top-level modules, lowest layer first. `cli` is the binary (`src/main.rs`, `src/cli/`).
const LAYERS: &[(&str, &[&str])] = &[
    ("base", &["clock", "fsutil", "tokens", "words"]),
    ("base helpers", &["answer", "datadir", "lock", "secrets"]),
    ("domain roots", &["languages", "history", "running"]),
    ("domain", &["extract", "config", "frameworks"]),
    ("graph", &["graph"]),
    ("views and storage", &["context", "events", "storage"]),
    ("review", &["review"]),
    ("memory", &["memory"]),
    ("indexing", &["index"]),
    ("use cases", &["app"]),
    ("MCP adapter", &["mcp"]),
    ("daemon adapter", &["daemon"]),
    ("client adapters", &["hook", "install"]),
    ("command line", &["cli"]),
];

fn layer_of(module: &str) -> Option<usize> {
    LAYERS
        .iter()
        .position(|(_, modules)| modules.contains(&module))
}

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The top-level module a source file belongs to (`None` for the crate root).
fn owner(src: &Path, file: &Path) -> Option<String> {
    let relative = file.strip_prefix(src).unwrap();
    let first = relative.components().next()?.as_os_str().to_str()?;
    match first.strip_suffix(".rs").unwrap_or(first) {
        "lib" => None,
        "main" => Some("cli".to_string()),
        name => Some(name.to_string()),
    }
}

/// The top-level modules a file names through `crate::` (or `cairn::` in the binary),
/// including each name inside `crate::{…}`. Comments are skipped.
fn used(text: &str, roots: &[&str]) -> BTreeSet<String> {
    let lines: Vec<&str> = text
        .lines()
        .filter(|line| !line.trim_start().starts_with("//"))
        .collect();
    let code = without_strings(&lines.join("\n"));
    let mut out = BTreeSet::new();
    for root in roots {
        let prefix = format!("{root}::");
        let mut rest = code.as_str();
        while let Some(at) = rest.find(&prefix) {
            let boundary = rest[..at]
                .chars()
                .next_back()
                .is_none_or(|c| !(c.is_alphanumeric() || c == '_'));
            rest = &rest[at + prefix.len()..];
            if !boundary {
                continue;
            }
            if let Some(group) = rest.strip_prefix('{') {
                let mut depth = 0usize;
                let mut start = true;
                for (i, c) in group.char_indices() {
                    match c {
                        '{' => depth += 1,
                        '}' if depth == 0 => break,
                        '}' => depth -= 1,
                        ',' if depth == 0 => start = true,
                        c if start && (c.is_alphanumeric() || c == '_') => {
                            let name: String = group[i..]
                                .chars()
                                .take_while(|c| c.is_alphanumeric() || *c == '_')
                                .collect();
                            out.insert(name);
                            start = false;
                        }
                        _ => {}
                    }
                }
            } else {
                let name: String = rest
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                out.insert(name);
            }
        }
    }
    out
}

/// The text with the contents of string literals left out (a path in a message or a test's
/// sample is not a use).
fn without_strings(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    let mut inside = false;
    while let Some(c) = chars.next() {
        match c {
            '\\' if inside => {
                chars.next();
            }
            '"' => {
                inside = !inside;
                out.push(c);
            }
            '\'' if !inside && chars.peek() == Some(&'"') => {
                // The character literal '"'.
                out.push(c);
                out.push(chars.next().unwrap());
            }
            _ if inside => {}
            _ => out.push(c),
        }
    }
    out
}

#[test]
fn modules_use_only_the_layers_before_theirs() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    files.sort();
    let mut unknown = BTreeSet::new();
    let mut wrong: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in &files {
        let Some(owner) = owner(&src, file) else {
            continue;
        };
        let Some(own) = layer_of(&owner) else {
            unknown.insert(owner);
            continue;
        };
        let roots: &[&str] = if owner == "cli" {
            &["crate", "cairn"]
        } else {
            &["crate"]
        };
        let text = std::fs::read_to_string(file).unwrap();
        for module in used(&text, roots) {
            if module == owner || (owner == "cli" && module == "cli") {
                continue;
            }
            match layer_of(&module) {
                Some(layer) if layer < own => {}
                Some(_) => {
                    wrong
                        .entry(format!("{owner} -> {module}"))
                        .or_default()
                        .insert(file.strip_prefix(&src).unwrap().display().to_string());
                }
                None => {
                    unknown.insert(module);
                }
            }
        }
    }
    assert!(
        unknown.is_empty(),
        "modules missing from the layer table (add them to LAYERS and ARCHITECTURE.md): {unknown:?}"
    );
    assert!(
        wrong.is_empty(),
        "uses against the layering (a module may use only earlier layers):\n{}",
        wrong
            .iter()
            .map(|(edge, files)| format!(
                "  {edge}: {}",
                files.iter().cloned().collect::<Vec<_>>().join(", ")
            ))
            .collect::<Vec<_>>()
            .join("\n")
    );
}

#[test]
fn the_scanner_sees_grouped_and_nested_uses() {
    let text = "use crate::{graph::{self, Node}, memory};\n// crate::app in a comment\nlet x = crate::clock::now(); fn f() { mycrate::index::x() }\nlet q = '\"'; let s = \"crate::daemon \\\" crate::hook\"; crate::lock::f();";
    let found = used(text, &["crate"]);
    assert_eq!(
        found.into_iter().collect::<Vec<_>>(),
        vec!["clock", "graph", "lock", "memory"]
    );
}

/// Calls that read a file (or list, stat or resolve a path) without the repository reader.
const DIRECT_READS: &[&str] = &[
    "std::fs::read(",
    "fs::read(",
    "read_to_string(",
    "File::open(",
    "read_dir(",
    "fs::metadata(",
    "symlink_metadata(",
    "canonicalize(",
    "OpenOptions::new()",
    "read_link(",
];

/// Every file under `src/` that reads the file system directly, how many such calls it makes,
/// and why none of them reads the repository's content. A new direct read fails the test
/// below: read repository files through `fsutil::repo::RepoFiles`, or add the file here with
/// the reason it is not repository content.
const DIRECT_READERS: &[(&str, usize, &str)] = &[
    (
        "fsutil/repo.rs",
        4,
        "the repository reader itself (cap-std, relative to the root)",
    ),
    (
        "fsutil/mod.rs",
        8,
        "cairn's own data directory (modes) and /dev/urandom",
    ),
    (
        "fsutil/jsonl.rs",
        1,
        "cairn's own append-only files in the data directory, read bytewise",
    ),
    (
        "fsutil/rotation.rs",
        2,
        "cairn's own rotated logs in the data directory",
    ),
    ("lock.rs", 1, "cairn's own lock file in the data directory"),
    (
        "index/walk.rs",
        1,
        "whether a file git tracks that an ignore file passed over is a regular file (its size and time; no content)",
    ),
    (
        "daemon/host.rs",
        2,
        "a repository's own daemon's lock in its data directory, waited on; the working set in cairn's data home",
    ),
    (
        "running/registry.rs",
        2,
        "the user's daemon's registry in cairn's data home, and its directory as the lock",
    ),
    (
        "app/learn.rs",
        1,
        "review exports a person named at the command line (an assistant's go through the repository reader)",
    ),
    (
        "config/mod.rs",
        2,
        "the start directory the user named, and the user's own config.toml",
    ),
    (
        "config/team/mod.rs",
        2,
        "the credentials file of the user's team configuration (mode-checked, never quoted)",
    ),
    ("config/team/trust.rs", 1, "the user's own trust file"),
    (
        "daemon/mod.rs",
        3,
        "the daemon record and socket in the data directory, /proc/self/statm",
    ),
    (
        "daemon/watch.rs",
        3,
        "the kind of a path a file event names, and the repository root's identity (device and inode, at start and when checked): no content is read",
    ),
    (
        "app/mod.rs",
        1,
        "the store generation in the data directory",
    ),
    (
        "running/mod.rs",
        5,
        "the daemon record, token and socket in the data directory",
    ),
    (
        "install/files.rs",
        9,
        "assistant configs in the home and the repository, opened without following links",
    ),
    (
        "events/mod.rs",
        2,
        "cairn's own event log in the data directory",
    ),
    (
        "storage/mod.rs",
        1,
        "the store's lock file in the data directory",
    ),
    (
        "cli/memory.rs",
        2,
        "a file the user names on the command line",
    ),
    (
        "cli/review.rs",
        1,
        "a file the user names on the command line",
    ),
    ("cli/install.rs", 1, "the path of the cairn binary itself"),
    (
        "index/mod.rs",
        1,
        "the cairn binary's own modification time",
    ),
    (
        "memory/embed.rs",
        3,
        "the embedding model's files and the Python environment beside the binary",
    ),
    (
        "memory/access.rs",
        1,
        "the store marker in the data directory",
    ),
    (
        "memory/team/outbox.rs",
        1,
        "the team outbox in the data directory",
    ),
    (
        "memory/team/link.rs",
        1,
        "team sync state in the data directory",
    ),
    (
        "memory/team/skipped.rs",
        1,
        "the record of skipped team rows in the data directory",
    ),
];

/// The code of a source file without its test modules: a top-level `#[cfg(…test…)]` module is
/// left out up to its closing brace (formatted code closes it with `}` alone on a line).
fn without_tests(text: &str) -> String {
    let mut kept = String::with_capacity(text.len());
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        let is_test_module = line.starts_with("#[cfg(")
            && line.contains("test")
            && lines
                .peek()
                .is_some_and(|next| next.starts_with("mod ") || next.starts_with("#[path"));
        if !is_test_module {
            kept.push_str(line);
            kept.push('\n');
            continue;
        }
        for inner in lines.by_ref() {
            if inner == "}" || (inner.starts_with("mod ") && inner.ends_with(';')) {
                break;
            }
        }
    }
    kept
}

#[test]
fn repository_files_are_read_only_through_the_repository_reader() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    files.sort();
    let mut found: BTreeMap<String, usize> = BTreeMap::new();
    for file in &files {
        let relative = file.strip_prefix(&src).unwrap().display().to_string();
        if relative.ends_with("tests.rs") {
            continue;
        }
        let text = std::fs::read_to_string(file).unwrap();
        let code = without_tests(&text);
        let lines: Vec<&str> = code
            .lines()
            .filter(|line| !line.trim_start().starts_with("//"))
            .collect();
        let code = lines.join("\n");
        let mut count = 0;
        let mut at = 0;
        while at < code.len() {
            let next = DIRECT_READS
                .iter()
                .filter_map(|call| code[at..].find(call).map(|i| (i, call.len())))
                .min();
            let Some((i, len)) = next else { break };
            count += 1;
            at += i + len;
        }
        if count > 0 {
            found.insert(relative, count);
        }
    }
    let expected: BTreeMap<String, usize> = DIRECT_READERS
        .iter()
        .map(|(file, count, _)| (file.to_string(), *count))
        .collect();
    let unexpected: Vec<String> = found
        .iter()
        .filter(|(file, count)| expected.get(*file) != Some(count))
        .map(|(file, count)| {
            format!(
                "  {file}: {count} direct reads (listed: {})",
                expected
                    .get(file)
                    .map_or("none".to_string(), |c| c.to_string())
            )
        })
        .collect();
    let stale: Vec<&String> = expected
        .keys()
        .filter(|f| !found.contains_key(*f))
        .collect();
    assert!(
        unexpected.is_empty() && stale.is_empty(),
        "direct file reads outside the repository reader (read repository files through \
         fsutil::repo::RepoFiles, or list the file in DIRECT_READERS with its reason):\n{}\n\
         listed but gone: {stale:?}",
        unexpected.join("\n")
    );
}
