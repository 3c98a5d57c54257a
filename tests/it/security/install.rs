//! `cairn install` in a repository someone else wrote: links it ships are never written
//! through, paths are escaped for systemd or refused, and uninstall keeps what the user edited.

use std::os::unix::fs::symlink;
use std::path::Path;
use std::process::{Command, Output};

use crate::support::TestRepo;

const BASHRC: &str = "# the user's shell start-up\nexport PATH=\"$HOME/bin:$PATH\"\n";

/// A repository and a home directory holding a `.bashrc` the repository would like to reach.
struct Target {
    repo: TestRepo,
    home: tempfile::TempDir,
}

impl Target {
    fn new() -> Target {
        let home = tempfile::tempdir().unwrap();
        std::fs::write(home.path().join(".bashrc"), BASHRC).unwrap();
        Target {
            repo: TestRepo::new(),
            home,
        }
    }

    fn bashrc(&self) -> String {
        std::fs::read_to_string(self.home.path().join(".bashrc")).unwrap()
    }

    fn cairn_in(&self, repo: &Path, args: &[&str]) -> Output {
        let mut command = Command::new(env!("CARGO_BIN_EXE_cairn"));
        command
            .arg("--repo")
            .arg(repo)
            .arg("--data-dir")
            .arg(self.repo.data_dir())
            .args(args)
            .env("HOME", self.home.path())
            .env("XDG_CONFIG_HOME", self.home.path().join(".config"))
            .env("CAIRN_SERVICE_MANAGER", "none")
            .env_remove("CAIRN_DB");
        command.output().unwrap()
    }

    fn cairn(&self, args: &[&str]) -> Output {
        self.cairn_in(self.repo.path(), args)
    }
}

/// A git repository at `path`.
fn repository_at(path: &Path) -> std::path::PathBuf {
    std::fs::create_dir_all(path).unwrap();
    let git = Command::new("git")
        .arg("-C")
        .arg(path)
        .args(["init", "-q"])
        .output()
        .unwrap();
    assert!(git.status.success(), "{git:?}");
    path.to_path_buf()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn a_planted_staging_link_is_not_followed() {
    let target = Target::new();
    target.repo.write("CLAUDE.md", "# Project\n");
    // The staging name install used to write before renaming over CLAUDE.md.
    symlink(
        target.home.path().join(".bashrc"),
        target.repo.path().join(".CLAUDE.md.cairn-new"),
    )
    .unwrap();
    let output = target.cairn(&["install", "--client", "claude"]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(target.bashrc(), BASHRC);
    assert!(
        target
            .repo
            .read("CLAUDE.md")
            .contains("<!-- cairn:begin -->")
    );
    let planted = target.repo.path().join(".CLAUDE.md.cairn-new");
    assert!(planted.symlink_metadata().unwrap().file_type().is_symlink());
}

#[test]
fn a_target_that_is_a_link_out_is_refused_and_nothing_is_written() {
    let target = Target::new();
    symlink(
        target.home.path().join(".bashrc"),
        target.repo.path().join("CLAUDE.md"),
    )
    .unwrap();
    let output = target.cairn(&["install", "--client", "claude"]);
    assert!(!output.status.success());
    let error = stderr(&output);
    assert!(
        error.contains("CLAUDE.md is a symbolic link") && error.contains(".bashrc"),
        "{error}"
    );
    assert_eq!(target.bashrc(), BASHRC);
    // Planned before anything is written: the other files of the client were not made either.
    assert!(!target.repo.path().join(".mcp.json").exists());
    assert!(!target.repo.data_dir().join("install.json").exists());
}

#[test]
fn a_directory_linked_out_of_the_repository_is_refused() {
    let target = Target::new();
    let outside = target.home.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    symlink(&outside, target.repo.path().join(".cursor")).unwrap();
    let output = target.cairn(&["install", "--client", "cursor"]);
    assert!(!output.status.success());
    let error = stderr(&output);
    assert!(error.contains("outside"), "{error}");
    assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 0);
}

#[test]
fn a_linked_global_config_is_refused_too() {
    let target = Target::new();
    let codex = target.home.path().join(".codex");
    std::fs::create_dir_all(&codex).unwrap();
    symlink(
        target.home.path().join(".bashrc"),
        codex.join("config.toml"),
    )
    .unwrap();
    let output = target.cairn(&["install", "--client", "codex"]);
    assert!(!output.status.success());
    assert!(
        stderr(&output).contains("symbolic link"),
        "{}",
        stderr(&output)
    );
    assert_eq!(target.bashrc(), BASHRC);
}

#[test]
fn uninstall_keeps_a_rules_file_the_user_edited() {
    let target = Target::new();
    let output = target.cairn(&["install", "--client", "cursor"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let rules = ".cursor/rules/cairn.mdc";
    let edited = format!("{}\nAlso: run the linter first.\n", target.repo.read(rules));
    target.repo.write(rules, &edited);

    let output = target.cairn(&["uninstall"]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(target.repo.read(rules), edited);
    let said = String::from_utf8_lossy(&output.stdout);
    assert!(
        said.lines()
            .any(|l| l.starts_with("kept") && l.contains("cairn.mdc")),
        "{said}"
    );
    // The MCP entry cairn merged into .cursor/mcp.json is gone as usual.
    assert!(!target.repo.path().join(".cursor/mcp.json").exists());
}

#[test]
fn a_repository_path_systemd_cannot_express_gets_no_unit() {
    let target = Target::new();
    let awkward = repository_at(
        &target
            .repo
            .path()
            .join("my repo 100%\nExecStartPre=/bin/touch /tmp/PWN"),
    );

    let output = target.cairn_in(&awkward, &["install", "--service"]);
    assert!(!output.status.success());
    assert!(
        stderr(&output).contains("control character"),
        "{}",
        stderr(&output)
    );
    let units = target.home.path().join(".config/systemd/user");
    assert!(
        !units.exists() || std::fs::read_dir(&units).unwrap().count() == 0,
        "no unit may be written"
    );

    // A space and a percent sign are escaped, not refused.
    let spaced = repository_at(&target.repo.path().join("my repo 100%"));
    let output = target.cairn_in(&spaced, &["install", "--service"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let unit = std::fs::read_dir(&units)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let text = std::fs::read_to_string(unit).unwrap();
    assert!(text.contains("my repo 100%%"), "{text}");
    assert!(text.contains("UMask=0077"), "{text}");
    assert!(
        !text.contains("100%\n") && !text.contains("100% "),
        "{text}"
    );
}
