//! The secret scanner against its labelled corpus (`tests/fixtures/secrets/corpus.tsv`):
//! every secret is found and every near-miss left, precision and recall are measured (run
//! with `--nocapture` to read them), and the project's own fixtures hold no false positive.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use cairn::secrets::redact;

/// The corpus, relative to this crate.
const CORPUS: &str = "tests/fixtures/secrets/corpus.tsv";

/// Secrets the scanner is known to miss, each with its reason in the corpus's note.
const KNOWN_MISSES: usize = 3;

/// One labelled line.
struct Case {
    line: usize,
    secret: bool,
    class: String,
    text: String,
    /// The values that must be gone after redaction (none for a clean line).
    values: Vec<String>,
    known_miss: bool,
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// `raw` with `\n`, `\t` and `\\` decoded, the `{+}` joins removed, and the `⟦…⟧` marks taken
/// out: the text, and the values they marked.
fn decode(raw: &str) -> (String, Vec<String>) {
    let mut text = String::new();
    let mut values = Vec::new();
    let mut value: Option<String> = None;
    let mut chars = raw
        .replace("{+}", "")
        .chars()
        .collect::<Vec<_>>()
        .into_iter();
    while let Some(c) = chars.next() {
        let decoded = match c {
            '⟦' => {
                value = Some(String::new());
                continue;
            }
            '⟧' => {
                values.extend(value.take());
                continue;
            }
            '\\' => match chars.next() {
                Some('n') => '\n',
                Some('t') => '\t',
                Some(other) => other,
                None => '\\',
            },
            c => c,
        };
        text.push(decoded);
        if let Some(v) = value.as_mut() {
            v.push(decoded);
        }
    }
    (text, values)
}

fn corpus() -> Vec<Case> {
    let text = std::fs::read_to_string(root().join(CORPUS)).unwrap();
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.starts_with('#') && !l.trim().is_empty())
        .map(|(n, l)| {
            let fields: Vec<&str> = l.split('\t').collect();
            assert_eq!(fields.len(), 4, "{CORPUS}:{}: four fields", n + 1);
            let (text, values) = decode(fields[2]);
            let secret = match fields[0] {
                "secret" => true,
                "clean" => false,
                other => panic!("{CORPUS}:{}: label {other:?}", n + 1),
            };
            assert_eq!(
                secret,
                !values.is_empty(),
                "{CORPUS}:{}: a secret line marks its values, a clean one none",
                n + 1
            );
            Case {
                line: n + 1,
                secret,
                class: fields[1].to_string(),
                text,
                values,
                known_miss: fields[3].starts_with("known miss:"),
            }
        })
        .collect()
}

#[test]
fn the_scanner_finds_every_secret_and_leaves_every_near_miss() {
    let cases = corpus();
    let (secrets, clean) = (
        cases.iter().filter(|c| c.secret).count(),
        cases.iter().filter(|c| !c.secret).count(),
    );
    assert!(
        secrets >= 100 && clean >= 100,
        "{secrets} secrets, {clean} clean"
    );
    let (mut found, mut missed, mut flagged) = (0usize, 0usize, 0usize);
    let mut per_class: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    let mut failures = Vec::new();
    let mut known = 0;
    for case in &cases {
        let out = redact(&case.text).text;
        if case.secret {
            let caught = case.values.iter().all(|v| !out.contains(v.as_str()));
            let entry = per_class.entry(case.class.as_str()).or_default();
            entry.1 += 1;
            if caught {
                found += 1;
                entry.0 += 1;
            } else {
                missed += 1;
            }
            match (caught, case.known_miss) {
                (false, true) => known += 1,
                (false, false) => failures.push(format!("line {}: missed: {out:?}", case.line)),
                (true, true) => failures.push(format!(
                    "line {}: a known miss is found now: label it as a plain secret",
                    case.line
                )),
                (true, false) => {}
            }
        } else if out != case.text {
            flagged += 1;
            failures.push(format!("line {}: false positive: {out:?}", case.line));
        }
    }
    let precision = found as f64 / (found + flagged).max(1) as f64;
    let recall = found as f64 / (found + missed).max(1) as f64;
    println!(
        "secret corpus: {secrets} secrets, {clean} near-misses; found {found}, missed {missed}, \
         false positives {flagged}; precision {:.1}%, recall {:.1}%",
        precision * 100.0,
        recall * 100.0
    );
    for (class, (caught, all)) in &per_class {
        println!("  {class}: {caught}/{all}");
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert_eq!(known, KNOWN_MISSES, "known misses");
}

/// Every file under `dir`, recursively.
fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(files(&path));
        } else {
            out.push(path);
        }
    }
    out
}

#[test]
fn the_projects_own_fixtures_hold_no_secret() {
    let corpus_dir = root().join("tests/fixtures/secrets");
    let mut scanned = 0;
    let mut flagged = Vec::new();
    for dir in ["tests/fixtures", "grammars"] {
        for path in files(&root().join(dir)) {
            if path.starts_with(&corpus_dir) {
                continue;
            }
            let Ok(text) = std::fs::read_to_string(&path) else {
                continue;
            };
            scanned += 1;
            let r = redact(&text);
            if !r.kinds.is_empty() {
                let changed: Vec<&str> = r
                    .text
                    .lines()
                    .filter(|l| l.contains("[REDACTED:"))
                    .take(3)
                    .collect();
                flagged.push(format!("{}: {:?} {changed:?}", path.display(), r.kinds));
            }
        }
    }
    assert!(scanned >= 100, "only {scanned} files scanned");
    assert!(flagged.is_empty(), "{}", flagged.join("\n"));
}
