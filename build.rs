//! Embeds every file under `grammars/` into the binary, so built-in languages load through the
//! same loader (and the same text files) as any other grammar folder.

use std::fmt::Write as _;
use std::path::Path;

fn main() {
    // Read at run time, not baked in with env!: the compiled build script is reused when the
    // same checkout moves (CI clones elsewhere into a shared target directory).
    let manifest = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let root = Path::new(&manifest).join("grammars");
    println!("cargo:rerun-if-changed={}", root.display());
    let mut files = Vec::new();
    for dir in std::fs::read_dir(&root).expect("grammars/ exists") {
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
            let relative = file.strip_prefix(&root).expect("under grammars/");
            let key = relative.to_string_lossy().replace('\\', "/");
            files.push((key, file.display().to_string()));
        }
    }
    files.sort();
    let mut out = String::from(
        "/// Every grammar file, as (`<lang>/<file>`, contents).\npub static GRAMMAR_FILES: &[(&str, &str)] = &[\n",
    );
    for (key, path) in files {
        writeln!(out, "    ({key:?}, include_str!({path:?})),").unwrap();
    }
    out.push_str("];\n");
    let dest = Path::new(&std::env::var("OUT_DIR").unwrap()).join("grammar_files.rs");
    std::fs::write(dest, out).expect("write grammar_files.rs");
}
