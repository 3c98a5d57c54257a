//! The documentation holds together without building it: every page of the user guide is in
//! its summary, every relative link in the README, ARCHITECTURE.md and the guide reaches a file
//! and a heading that exist, the README stays a front page, and the benchmarks page is what the
//! results file makes.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The guide's pages, relative to `docs/src`.
fn pages() -> Vec<PathBuf> {
    let dir = root().join("docs/src");
    let mut pages: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    pages.sort();
    pages
}

/// The id mdBook and GitHub give a heading: lower case, spaces to `-`, other punctuation gone.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// The ids of a Markdown file's headings (outside code fences).
fn anchors(text: &str) -> BTreeSet<String> {
    let mut fenced = false;
    let mut out = BTreeSet::new();
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        } else if !fenced && line.starts_with('#') {
            out.insert(slug(line.trim_start_matches('#')));
        }
    }
    out
}

/// The targets of inline links `[text](target)` outside code fences and code spans.
fn links(text: &str) -> Vec<String> {
    let mut fenced = false;
    let mut out = Vec::new();
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        let mut code = false;
        let bytes = line.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            match bytes[i] {
                b'`' => code = !code,
                b']' if !code && bytes.get(i + 1) == Some(&b'(') => {
                    if let Some(end) = line[i + 2..].find(')') {
                        out.push(line[i + 2..i + 2 + end].to_string());
                        i += end + 2;
                    }
                }
                _ => {}
            }
            i += 1;
        }
    }
    out
}

#[test]
fn every_page_is_in_the_summary_and_every_summary_entry_is_a_page() {
    let summary = std::fs::read_to_string(root().join("docs/src/SUMMARY.md")).unwrap();
    let listed: BTreeSet<String> = links(&summary).into_iter().collect();
    let present: BTreeSet<String> = pages()
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .filter(|name| name != "SUMMARY.md")
        .collect();
    assert_eq!(listed, present, "docs/src/SUMMARY.md and the pages differ");
}

#[test]
fn every_relative_link_reaches_a_file_and_a_heading() {
    let mut documents = vec![root().join("README.md"), root().join("ARCHITECTURE.md")];
    documents.extend(pages());
    let mut broken = Vec::new();
    for document in &documents {
        let text = std::fs::read_to_string(document).unwrap();
        let base = document.parent().unwrap();
        for link in links(&text) {
            if link.contains("://") || link.starts_with("mailto:") {
                continue;
            }
            let (file, anchor) = link.split_once('#').unwrap_or((&link, ""));
            let target = if file.is_empty() {
                document.clone()
            } else {
                base.join(file)
            };
            if !target.exists() {
                broken.push(format!("{}: {link} (no such file)", document.display()));
                continue;
            }
            if !anchor.is_empty() {
                let heads = anchors(&std::fs::read_to_string(&target).unwrap_or_default());
                if !heads.contains(anchor) {
                    broken.push(format!("{}: {link} (no such heading)", document.display()));
                }
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn the_readme_is_a_front_page() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let lines = readme.lines().count();
    assert!(
        lines <= 250,
        "README.md has {lines} lines; the guide under docs/ holds the rest"
    );
    // The two setup commands: cairn's main job on the embedded store, and the tests.
    assert!(readme.contains("index && cargo run --release -- --repo /path/to/your/repo context"));
    assert!(readme.contains(".ci/deps && .ci/fetch-model && cargo test"));
}

#[test]
fn the_benchmarks_page_is_what_the_results_file_makes() {
    let output = std::process::Command::new("python3")
        .arg(root().join("bench/page.py"))
        .arg("--check")
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
fn the_link_scanner_sees_links_but_not_code() {
    let text = "see [a](a.md#x) and `[b](b.md)`\n```\n[c](c.md)\n```\n[d](#y)";
    assert_eq!(links(text), ["a.md#x", "#y"]);
    assert_eq!(slug(" The project's pages"), "the-projects-pages");
    assert!(anchors("# Team mode\n```\n# not\n```").contains("team-mode"));
}
