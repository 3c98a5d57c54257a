//! `cairn install` / `cairn uninstall` through the real binary, with HOME pointing at a
//! temporary directory and the service manager left alone.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::support::TestRepo;

const CURSOR_MCP: &str = r#"{
  // project servers
  "mcpServers": {
    "other": { "command": "other-server", "args": ["--flag",], },
  },
}
"#;

const CODEX_CONFIG: &str = "# mine\n[mcp_servers.other]\ncommand = \"other\"\n";

/// A repository and a home directory with configs already in them.
struct Setup {
    repo: TestRepo,
    home: tempfile::TempDir,
}

impl Setup {
    fn new() -> Setup {
        let repo = TestRepo::new();
        repo.write("CLAUDE.md", "# Project\n\nUse tabs.\n");
        repo.write(".cursor/mcp.json", CURSOR_MCP);
        let home = tempfile::tempdir().unwrap();
        let codex = home.path().join(".codex/config.toml");
        std::fs::create_dir_all(codex.parent().unwrap()).unwrap();
        std::fs::write(codex, CODEX_CONFIG).unwrap();
        Setup { repo, home }
    }

    fn cairn(&self, args: &[&str]) -> Command {
        let mut command = self.repo.cairn_command(self.repo.data_dir());
        command
            .args(args)
            .env("HOME", self.home.path())
            .env("CAIRN_SERVICE_MANAGER", "none");
        command
    }

    /// Runs cairn with `--json` and returns the outcome it prints.
    fn cairn_json(&self, args: &[&str]) -> Value {
        let output = self.cairn(args).arg("--json").output().unwrap();
        assert!(
            output.status.success(),
            "cairn {args:?} failed:\n{}\n{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        serde_json::from_slice(&output.stdout).unwrap()
    }

    /// Every file and directory in the repository (but .git) and home, with contents.
    fn files(&self) -> BTreeMap<PathBuf, Option<Vec<u8>>> {
        let mut files = BTreeMap::new();
        snapshot(self.repo.path(), &mut files);
        snapshot(self.home.path(), &mut files);
        files
    }
}

fn snapshot(dir: &Path, into: &mut BTreeMap<PathBuf, Option<Vec<u8>>>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.file_name().is_some_and(|n| n == ".git") {
            continue;
        }
        if path.is_dir() {
            into.insert(path.clone(), None);
            snapshot(&path, into);
        } else {
            into.insert(path.clone(), Some(std::fs::read(&path).unwrap()));
        }
    }
}

fn actions(outcome: &Value) -> Vec<&str> {
    outcome["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|step| step["action"].as_str().unwrap())
        .collect()
}

#[test]
fn install_everything_then_uninstall_leaves_every_file_as_it_was() {
    let setup = Setup::new();
    let before = setup.files();

    let installed = setup.cairn_json(&["install", "--client", "all", "--service"]);
    let mcp: Value = serde_json::from_str(&setup.repo.read(".mcp.json")).unwrap();
    let command = mcp["mcpServers"]["cairn"]["command"].as_str().unwrap();
    assert!(Path::new(command).is_absolute(), "{command}");
    assert!(
        setup
            .repo
            .read(".cursor/mcp.json")
            .contains("// project servers")
    );
    assert!(
        setup
            .repo
            .read("CLAUDE.md")
            .contains("<!-- cairn:begin -->")
    );
    let unit_dir = setup.home.path().join(".config/systemd/user");
    assert_eq!(std::fs::read_dir(&unit_dir).unwrap().count(), 1);
    let service = installed["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s.get("command").is_some())
        .unwrap();
    assert_eq!(service["action"], "manual");
    assert!(
        service["command"]
            .as_str()
            .unwrap()
            .contains("systemctl --user enable --now cairn-")
    );

    let again = setup.cairn_json(&["install", "--client", "all", "--service"]);
    assert!(
        actions(&again)
            .iter()
            .all(|a| *a == "unchanged" || *a == "manual"),
        "{again:#}"
    );

    setup.cairn_json(&["uninstall"]);
    assert_eq!(setup.files(), before);
}

#[test]
fn a_dry_run_writes_nothing() {
    let setup = Setup::new();
    let before = setup.files();
    let planned = setup.cairn_json(&["install", "--client", "claude", "--dry-run"]);
    assert_eq!(planned["dry_run"], true);
    assert!(actions(&planned).contains(&"created"), "{planned:#}");
    assert_eq!(setup.files(), before);
    assert!(!setup.repo.data_dir().join("install.json").exists());
}

/// Every path under `dir` (but .git) with its permission bits.
fn modes(dir: &Path) -> BTreeMap<PathBuf, u32> {
    use std::os::unix::fs::PermissionsExt;
    let mut files = BTreeMap::new();
    snapshot(dir, &mut files);
    files
        .into_keys()
        .map(|path| {
            let mode = std::fs::symlink_metadata(&path)
                .unwrap()
                .permissions()
                .mode()
                & 0o777;
            (path, mode)
        })
        .collect()
}

#[test]
fn what_install_creates_in_the_repository_is_readable_by_all_and_in_home_by_the_user() {
    use std::os::unix::process::CommandExt;
    let setup = Setup::new();
    let (repo_before, home_before) = (modes(setup.repo.path()), modes(setup.home.path()));
    let mut install = setup.cairn(&["install", "--client", "all", "--service", "--json"]);
    // A private umask, as cairn sets for its own data (and as a careful user may have).
    // SAFETY: umask only sets the child's file-creation mask between fork and exec.
    unsafe {
        install.pre_exec(|| {
            libc::umask(0o077);
            Ok(())
        });
    }
    let output = install.output().unwrap();
    assert!(output.status.success(), "{output:?}");

    let created = |dir: &Path, before: &BTreeMap<PathBuf, u32>| {
        modes(dir)
            .into_iter()
            .filter(|(path, _)| !before.contains_key(path))
            .collect::<Vec<_>>()
    };
    let in_repository = created(setup.repo.path(), &repo_before);
    let claude = setup.repo.path().join(".claude");
    assert!(
        in_repository.contains(&(claude.clone(), 0o755)),
        "{in_repository:?}"
    );
    assert!(
        in_repository.contains(&(claude.join("settings.json"), 0o644)),
        "{in_repository:?}"
    );
    for (path, mode) in &in_repository {
        let wanted = if path.is_dir() { 0o755 } else { 0o644 };
        assert_eq!(*mode, wanted, "{} is {mode:o}", path.display());
    }
    // The user's own configuration directories stay the user's.
    let in_home = created(setup.home.path(), &home_before);
    assert!(!in_home.is_empty());
    for (path, mode) in &in_home {
        let wanted = if path.is_dir() { 0o700 } else { 0o600 };
        assert_eq!(*mode, wanted, "{} is {mode:o}", path.display());
    }
}
