//! Test scaffolding: temporary git repositories, the cairn binary, and reading a store back.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use cairn::graph::Graph;
use cairn::storage::Store;

/// A temporary repository with its own cairn data directory.
pub struct TestRepo {
    dir: tempfile::TempDir,
    data: tempfile::TempDir,
}

/// The fixture tree, relative to this crate.
pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

fn copy_tree(from: &Path, to: &Path) {
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            std::fs::create_dir_all(&target).unwrap();
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

impl TestRepo {
    /// An empty git repository.
    pub fn new() -> TestRepo {
        let repo = TestRepo::plain();
        repo.git(&["init", "-q", "-b", "main"]);
        repo.git(&["config", "user.email", "dev@example.com"]);
        repo.git(&["config", "user.name", "Dev"]);
        repo
    }

    /// A directory that is not a git repository.
    pub fn plain() -> TestRepo {
        TestRepo {
            dir: tempfile::tempdir().unwrap(),
            data: tempfile::tempdir().unwrap(),
        }
    }

    /// A git repository holding a fixture tree, committed.
    pub fn with_fixture(name: &str) -> TestRepo {
        TestRepo::with_tree(&fixture(name))
    }

    /// A git repository holding a copy of a directory, committed.
    pub fn with_tree(tree: &Path) -> TestRepo {
        let repo = TestRepo::new();
        copy_tree(tree, repo.path());
        repo.commit("fixture");
        repo
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    pub fn data_dir(&self) -> &Path {
        self.data.path()
    }

    pub fn write(&self, path: &str, text: impl AsRef<[u8]>) {
        let full = self.path().join(path);
        std::fs::create_dir_all(full.parent().unwrap()).unwrap();
        std::fs::write(full, text).unwrap();
    }

    pub fn read(&self, path: &str) -> String {
        std::fs::read_to_string(self.path().join(path)).unwrap()
    }

    pub fn git(&self, args: &[&str]) -> Output {
        let output = Command::new("git")
            .arg("-C")
            .arg(self.path())
            .args(args)
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        output
    }

    pub fn commit(&self, message: &str) {
        self.git(&["add", "-A"]);
        self.git(&["commit", "-q", "--allow-empty", "-m", message]);
    }

    /// Commits everything as `name <email>`, `days_ago` days back.
    pub fn commit_as(&self, message: &str, name: &str, email: &str, days_ago: i64) {
        self.git(&["add", "-A"]);
        let when = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs() as i64
            - days_ago * 86_400;
        let date = format!("{when} +0000");
        let output = Command::new("git")
            .arg("-C")
            .arg(self.path())
            .args(["commit", "-q", "--allow-empty", "-m", message])
            .env("GIT_AUTHOR_NAME", name)
            .env("GIT_AUTHOR_EMAIL", email)
            .env("GIT_AUTHOR_DATE", &date)
            .env("GIT_COMMITTER_NAME", name)
            .env("GIT_COMMITTER_EMAIL", email)
            .env("GIT_COMMITTER_DATE", &date)
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "git commit: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }

    /// A `cairn` command for this repository and data directory.
    pub fn cairn_command(&self, data_dir: &Path) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_cairn"));
        command
            .arg("--repo")
            .arg(self.path())
            .arg("--data-dir")
            .arg(data_dir)
            .env_remove("CAIRN_REPO")
            .env_remove("CAIRN_DATA_DIR")
            // Organisation memories stay beside the test's data, never in the user's.
            .env("CAIRN_ORGS_DIR", data_dir.join("orgs"))
            // Keyword search only: the semantic layer has its own test with the real model.
            .env("CAIRN_MODEL_DIR", data_dir.join("no-model"));
        command
    }

    /// Runs cairn with this repository's data directory.
    pub fn cairn(&self, args: &[&str]) -> Output {
        self.cairn_command(self.data_dir())
            .args(args)
            .output()
            .unwrap()
    }

    /// Runs cairn and expects success; returns stdout.
    pub fn cairn_ok(&self, args: &[&str]) -> String {
        let output = self.cairn(args);
        assert!(
            output.status.success(),
            "cairn {args:?} failed:\n{}\n{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8(output.stdout).unwrap()
    }

    /// Runs cairn with `input` on stdin.
    pub fn cairn_with_stdin(&self, args: &[&str], input: &[u8]) -> Output {
        use std::io::Write;
        use std::process::Stdio;
        let mut child = self
            .cairn_command(self.data_dir())
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(input).unwrap();
        child.wait_with_output().unwrap()
    }

    /// The graph a fresh index of the working tree stores (in a data directory of its own).
    pub async fn fresh_graph(&self) -> Graph {
        let fresh = tempfile::tempdir().unwrap();
        let output = self
            .cairn_command(fresh.path())
            .args(["index", "--json"])
            .output()
            .unwrap();
        assert!(output.status.success(), "{output:?}");
        stored_graph(fresh.path()).await
    }

    /// The store is up to date (indexing again writes nothing) and holds exactly what a fresh
    /// index of the same tree would.
    pub async fn assert_store_is_fresh(&self) {
        let again = self.index();
        assert_eq!(again["wrote"], serde_json::json!(false), "{again}");
        assert_eq!(
            graph_lines(&stored_graph(self.data_dir()).await),
            graph_lines(&self.fresh_graph().await)
        );
    }

    /// `cairn index --json`, parsed.
    pub fn index(&self) -> serde_json::Value {
        serde_json::from_str(&self.cairn_ok(&["index", "--json"])).unwrap()
    }
}

/// The graph stored in a data directory.
pub async fn stored_graph(data_dir: &Path) -> Graph {
    let store = Store::open(&data_dir.join("store")).await.unwrap();
    let graph = store.load_graph().await.unwrap();
    store.close().await;
    graph
}

/// A graph as sorted lines, for comparing two graphs with readable differences.
pub fn graph_lines(graph: &Graph) -> Vec<String> {
    let mut lines: Vec<String> = graph
        .nodes
        .iter()
        .map(|n| format!("node {}", serde_json::to_string(n).unwrap()))
        .chain(
            graph
                .edges
                .iter()
                .map(|e| format!("edge {}", serde_json::to_string(e).unwrap())),
        )
        .collect();
    lines.sort();
    lines
}

/// Whether the graph has an edge of `kind` from `src` to `dst`.
pub fn has_edge(graph: &Graph, kind: &str, src: &str, dst: &str) -> bool {
    graph
        .edges
        .iter()
        .any(|e| e.kind.table() == kind && &*e.src == src && &*e.dst == dst)
}

/// One category's statistics in `cairn rules --json`'s list.
pub fn rule_of(rules: &serde_json::Value, category: &str) -> serde_json::Value {
    rules
        .as_array()
        .unwrap_or_else(|| panic!("not a list of rules: {rules}"))
        .iter()
        .find(|r| r["category"] == category)
        .unwrap_or_else(|| panic!("{category} has no statistics: {rules}"))
        .clone()
}

/// Runs `command` to its end, asserting it succeeded (its output in the message otherwise).
pub fn run(command: &mut std::process::Command) -> std::process::Output {
    let output = command
        .output()
        .unwrap_or_else(|e| panic!("{command:?}: {e}"));
    assert!(
        output.status.success(),
        "{command:?} failed:\n{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    output
}
