//! Embeds the data folders into the binary: every file under `grammars/`, so built-in
//! languages load through the same loader (and the same text files) as any other grammar
//! folder, and every framework knowledge file under `frameworks/`.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn main() {
    // Read at run time, not baked in with env!: the compiled build script is reused when the
    // same checkout moves (CI clones elsewhere into a shared target directory).
    let manifest = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let manifest = Path::new(&manifest);
    embed_grammars(&manifest.join("grammars"));
    embed_frameworks(&manifest.join("frameworks"));
}

/// `GRAMMAR_FILES`: every `grammars/<lang>/<file>`.
fn embed_grammars(root: &Path) {
    println!("cargo:rerun-if-changed={}", root.display());
    let mut files = Vec::new();
    for dir in std::fs::read_dir(root).expect("grammars/ exists") {
        let dir = dir.expect("readable grammars/ entry").path();
        if !dir.is_dir() {
            continue;
        }
        println!("cargo:rerun-if-changed={}", dir.display());
        for file in std::fs::read_dir(&dir).expect("readable grammar folder") {
            let file = file.expect("readable grammar file").path();
            // `tests/` holds the fixture trees, read by the test suite, not built in.
            if !file.is_file() {
                continue;
            }
            files.push(keyed(root, file));
        }
    }
    write_table(
        "/// Every grammar file, as (`<lang>/<file>`, contents).",
        "GRAMMAR_FILES",
        files,
        "grammar_files.rs",
    );
}

/// `FRAMEWORK_FILES`: every `frameworks/<name>.toml`.
fn embed_frameworks(root: &Path) {
    println!("cargo:rerun-if-changed={}", root.display());
    let mut files = Vec::new();
    for file in std::fs::read_dir(root).expect("frameworks/ exists") {
        let file = file.expect("readable frameworks/ entry").path();
        if file.extension().is_some_and(|e| e == "toml") {
            files.push(keyed(root, file));
        }
    }
    write_table(
        "/// Every framework knowledge file, as (`<name>.toml`, contents).",
        "FRAMEWORK_FILES",
        files,
        "framework_files.rs",
    );
}

/// A file's key (its path under `root`, `/`-separated) and its path.
fn keyed(root: &Path, file: PathBuf) -> (String, String) {
    let relative = file.strip_prefix(root).expect("under the data folder");
    let key = relative.to_string_lossy().replace('\\', "/");
    (key, file.display().to_string())
}

fn write_table(doc: &str, name: &str, mut files: Vec<(String, String)>, out_file: &str) {
    files.sort();
    let mut out = format!("{doc}\npub static {name}: &[(&str, &str)] = &[\n");
    for (key, path) in files {
        writeln!(out, "    ({key:?}, include_str!({path:?})),").unwrap();
    }
    out.push_str("];\n");
    let dest = Path::new(&std::env::var("OUT_DIR").unwrap()).join(out_file);
    std::fs::write(dest, out).expect("write the embedded table");
}
