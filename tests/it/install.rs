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
            .env_remove("XDG_DATA_HOME")
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

    // Install registered the repository with the user's daemon; uninstall removes it, and
    // with it the registry, which held no other. cairn's data home itself (like a repository's
    // data directory) is cairn's state, not the user's files, and stays.
    let registry = setup
        .home
        .path()
        .join(".local/share/cairn/repositories.json");
    assert!(registry.exists());
    setup.cairn_json(&["uninstall"]);
    assert!(!registry.exists());
    let mut after = setup.files();
    after.retain(|path, _| !path.starts_with(setup.home.path().join(".local")));
    assert_eq!(after, before);
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

/// The cairn binary placed where a package runner keeps it (a hard link, or a copy where the
/// directories are on different file systems).
fn binary_at(dir: &Path, relative: &str) -> PathBuf {
    let path = dir.join(relative);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let built = Path::new(env!("CARGO_BIN_EXE_cairn"));
    if std::fs::hard_link(built, &path).is_err() {
        std::fs::copy(built, &path).unwrap();
    }
    path
}

/// An executable script named `name` in `dir` (a stand-in runner for `PATH`).
fn runner_on_path(dir: &Path, name: &str) {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join(name);
    std::fs::write(&path, "#!/bin/sh\nexit 0\n").unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn cairn_run_from_a_runners_cache_registers_the_runner_and_doctor_checks_it() {
    let setup = Setup::new();
    let runners = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    for (relative, command, args, hook) in [
        (
            ".npm/_npx/1a2b/node_modules/@cairn-mcp/linux-x64-gnu/bin/cairn",
            "npx",
            vec!["-y", "cairn-mcp", "serve"],
            "npx -y cairn-mcp hook",
        ),
        (
            ".cache/uv/archive-v0/Xy12/bin/cairn",
            "uvx",
            vec!["--from", "cairn-mcp", "cairn", "serve"],
            "uvx --from cairn-mcp cairn hook",
        ),
    ] {
        let binary = binary_at(cache.path(), relative);
        let run = |args: &[&str], path: &str| {
            Command::new(&binary)
                .arg("--repo")
                .arg(setup.repo.path())
                .arg("--data-dir")
                .arg(setup.repo.data_dir())
                .args(args)
                .env("HOME", setup.home.path())
                .env_remove("XDG_DATA_HOME")
                .env("CAIRN_SERVICE_MANAGER", "none")
                .env("CAIRN_ORGS_DIR", setup.repo.data_dir().join("orgs"))
                .env("PATH", path)
                .output()
                .unwrap()
        };
        runner_on_path(runners.path(), command);
        let path = runners.path().display().to_string();
        let installed = run(
            &["install", "--client", "claude", "--client", "codex"],
            &path,
        );
        assert!(installed.status.success(), "{installed:?}");
        let mcp: Value = serde_json::from_str(&setup.repo.read(".mcp.json")).unwrap();
        assert_eq!(mcp["mcpServers"]["cairn"]["command"], command);
        assert_eq!(mcp["mcpServers"]["cairn"]["args"], serde_json::json!(args));
        let settings = setup.repo.read(".claude/settings.json");
        assert!(settings.contains(hook), "{settings}");
        let codex = std::fs::read_to_string(setup.home.path().join(".codex/config.toml")).unwrap();
        assert!(
            codex.contains(&format!("command = \"{command}\"")),
            "{codex}"
        );

        let doctor = run(&["doctor"], &path);
        let said = String::from_utf8_lossy(&doctor.stdout).into_owned();
        let line = said
            .lines()
            .find(|l| l.starts_with("claude mcp server"))
            .unwrap_or_default();
        assert!(!line.contains("PROBLEM"), "{said}");
        // The runner gone from PATH: doctor says so.
        let empty = tempfile::tempdir().unwrap();
        let doctor = run(&["doctor"], &empty.path().display().to_string());
        let said = String::from_utf8_lossy(&doctor.stdout).into_owned();
        assert!(
            said.contains(&format!("{command} (in ")) && said.contains("is not on PATH"),
            "{said}"
        );
        std::fs::remove_file(runners.path().join(command)).unwrap();
    }

    // Installed in place, the registration names the binary itself; once it is gone (an
    // upgrade moved it), doctor says so.
    let binary = binary_at(cache.path(), "opt/cairn/bin/cairn");
    let output = Command::new(&binary)
        .arg("--repo")
        .arg(setup.repo.path())
        .arg("--data-dir")
        .arg(setup.repo.data_dir())
        .args(["install", "--client", "claude"])
        .env("HOME", setup.home.path())
        .env_remove("XDG_DATA_HOME")
        .env("CAIRN_SERVICE_MANAGER", "none")
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let mcp: Value = serde_json::from_str(&setup.repo.read(".mcp.json")).unwrap();
    assert_eq!(
        mcp["mcpServers"]["cairn"]["command"],
        binary.display().to_string()
    );
    std::fs::remove_file(&binary).unwrap();
    let said =
        String::from_utf8_lossy(&setup.cairn(&["doctor"]).output().unwrap().stdout).into_owned();
    assert!(said.contains("no longer exists"), "{said}");
}
