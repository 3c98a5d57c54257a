//! Install and uninstall against temporary repositories and home directories holding the
//! kind of configs users already have: JSONC with comments and trailing commas, TOML with
//! comments and other servers, markdown with text, Claude settings with hooks of their own.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::*;

const CURSOR_MCP: &str = r#"{
  // servers for this project
  "mcpServers": {
    "other": {
      "command": "other-server", /* keep me */
      "args": ["--flag",],
    },
  },
  "theme": "dark",
}
"#;

const CODEX_CONFIG: &str = r#"# my codex settings
model = "o4"   # the model

[mcp_servers.other]
command = "other"
args = ["x"]  # other args

[profiles.fast]
model = "o4-mini"
"#;

const CLAUDE_MD: &str = "# Project\n\nUse tabs.\n";

const CLAUDE_SETTINGS: &str = r#"{
  "permissions": {
    "allow": ["Bash(npm test)"]
  },
  "hooks": {
    "PostToolUse": [
      {
        "matcher": "Write",
        "hooks": [{ "type": "command", "command": "prettier --write" }]
      }
    ]
  }
}
"#;

/// A repository, a home directory, a data directory and a cairn binary, all temporary.
struct Fixture {
    _dir: tempfile::TempDir,
    setup: Setup,
}

impl Fixture {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let binary = root.join("bin/cairn");
        write(&binary, "#!/bin/sh\n");
        make_executable(&binary);
        let setup = Setup {
            repo_root: root.join("repo"),
            home: root.join("home"),
            binary,
            data_dir: root.join("data"),
            data_home: None,
        };
        fs::create_dir_all(&setup.repo_root).unwrap();
        fs::create_dir_all(&setup.home).unwrap();
        Fixture { _dir: dir, setup }
    }

    /// A fixture holding the configs a user already has.
    fn lived_in() -> Self {
        let fixture = Fixture::new();
        write(&fixture.repo(".cursor/mcp.json"), CURSOR_MCP);
        write(&fixture.home(".codex/config.toml"), CODEX_CONFIG);
        write(&fixture.repo("CLAUDE.md"), CLAUDE_MD);
        write(&fixture.repo(".claude/settings.json"), CLAUDE_SETTINGS);
        fixture
    }

    fn repo(&self, path: &str) -> PathBuf {
        self.setup.repo_root.join(path)
    }

    fn home(&self, path: &str) -> PathBuf {
        self.setup.home.join(path)
    }

    fn install(&self, clients: &[Client], service: bool) -> Outcome {
        self.try_install(clients, service, false).unwrap()
    }

    fn try_install(
        &self,
        clients: &[Client],
        service: bool,
        dry_run: bool,
    ) -> Result<Outcome, Error> {
        let options = Options {
            clients: clients.to_vec(),
            service,
            dry_run,
            ..Options::default()
        };
        install_with(&self.setup, &options, Manager::Systemd, not_run)
    }

    fn uninstall(&self, clients: &[Client], dry_run: bool) -> Outcome {
        let options = Options {
            clients: clients.to_vec(),
            dry_run,
            ..Options::default()
        };
        uninstall_with(&self.setup, &options, not_run).unwrap()
    }

    /// Every file and directory under the repository and home, with file contents.
    fn user_files(&self) -> BTreeMap<PathBuf, Option<Vec<u8>>> {
        let mut files = snapshot(&self.setup.repo_root);
        files.extend(snapshot(&self.setup.home));
        files
    }

    fn read(&self, path: &Path) -> String {
        fs::read_to_string(path).unwrap()
    }
}

fn not_run(_: Manager) -> Commands {
    Commands::Show("not in tests".into())
}

fn write(path: &Path, text: &str) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, text).unwrap();
}

fn make_executable(path: &Path) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(path, fs::Permissions::from_mode(0o755)).unwrap();
    }
}

fn snapshot(root: &Path) -> BTreeMap<PathBuf, Option<Vec<u8>>> {
    let mut found = BTreeMap::new();
    let Ok(entries) = fs::read_dir(root) else {
        return found;
    };
    for entry in entries {
        let path = entry.unwrap().path();
        if path.is_dir() {
            found.insert(path.clone(), None);
            found.extend(snapshot(&path));
        } else {
            found.insert(path.clone(), Some(fs::read(&path).unwrap()));
        }
    }
    found
}

/// JSONC read the way a client would: comments and trailing commas dropped, then strict JSON.
fn jsonc(text: &str) -> Value {
    let mut plain = String::new();
    let mut chars = text.chars().peekable();
    let mut in_string = false;
    while let Some(c) = chars.next() {
        if in_string {
            plain.push(c);
            match c {
                '\\' => plain.extend(chars.next()),
                '"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match (c, chars.peek()) {
            ('"', _) => {
                in_string = true;
                plain.push(c);
            }
            ('/', Some('/')) => {
                while chars.peek().is_some_and(|&c| c != '\n') {
                    chars.next();
                }
            }
            ('/', Some('*')) => {
                chars.next();
                let mut last = ' ';
                for c in chars.by_ref() {
                    if last == '*' && c == '/' {
                        break;
                    }
                    last = c;
                }
            }
            _ => plain.push(c),
        }
    }
    let trailing_comma = regex::Regex::new(r",(\s*[}\]])").unwrap();
    let plain = trailing_comma.replace_all(&plain, "$1");
    serde_json::from_str(&plain).unwrap_or_else(|e| panic!("{e}: {plain}"))
}

fn actions(outcome: &Outcome) -> Vec<(Option<PathBuf>, Action)> {
    outcome
        .steps
        .iter()
        .map(|s| (s.path.clone(), s.action))
        .collect()
}

fn action_for(outcome: &Outcome, path: &Path) -> Action {
    outcome
        .steps
        .iter()
        .find(|s| s.path.as_deref() == Some(path))
        .unwrap_or_else(|| panic!("no step for {}: {outcome}", path.display()))
        .action
}

fn cairn_hook_count(settings: &Value, event: &str) -> usize {
    settings["hooks"][event]
        .as_array()
        .map(|entries| {
            entries
                .iter()
                .flat_map(|e| e["hooks"].as_array().unwrap())
                .filter(|h| h["command"].as_str().unwrap().ends_with("cairn hook"))
                .count()
        })
        .unwrap_or(0)
}

#[test]
fn install_merges_cairn_in_and_keeps_everything_else() {
    let fx = Fixture::lived_in();
    let outcome = fx.install(&Client::ALL, false);
    let bin = fx.setup.binary.to_str().unwrap();

    let mcp: Value = serde_json::from_str(&fx.read(&fx.repo(".mcp.json"))).unwrap();
    assert_eq!(
        mcp,
        json!({"mcpServers": {"cairn": {"type": "stdio", "command": bin, "args": ["serve"]}}})
    );

    let cursor_text = fx.read(&fx.repo(".cursor/mcp.json"));
    for kept in [
        "// servers for this project",
        r#""command": "other-server", /* keep me */"#,
        r#""args": ["--flag",],"#,
        r#""theme": "dark","#,
    ] {
        assert!(cursor_text.contains(kept), "lost {kept:?}:\n{cursor_text}");
    }
    let cursor = jsonc(&cursor_text);
    assert_eq!(cursor["mcpServers"]["other"]["args"], json!(["--flag"]));
    assert_eq!(
        cursor["mcpServers"]["cairn"],
        json!({"command": bin, "args": ["serve"]})
    );

    let codex_text = fx.read(&fx.home(".codex/config.toml"));
    assert!(codex_text.starts_with(&CODEX_CONFIG[..CODEX_CONFIG.find("[profiles").unwrap()]));
    assert!(codex_text.contains("args = [\"x\"]  # other args"));
    let codex: toml::Table = toml::from_str(&codex_text).unwrap();
    assert_eq!(
        codex["mcp_servers"]["other"]["command"].as_str(),
        Some("other")
    );
    assert_eq!(codex["mcp_servers"]["cairn"]["command"].as_str(), Some(bin));
    assert_eq!(
        codex["mcp_servers"]["cairn"]["args"],
        toml::Value::Array(vec!["serve".into()])
    );
    assert_eq!(codex["profiles"]["fast"]["model"].as_str(), Some("o4-mini"));

    let claude_md = fx.read(&fx.repo("CLAUDE.md"));
    assert!(claude_md.starts_with(CLAUDE_MD), "{claude_md}");
    assert!(claude_md.contains("<!-- cairn:begin -->\n## cairn"));
    assert!(claude_md.contains("`get_context`") && claude_md.contains("`review_diff`"));
    assert!(claude_md.ends_with("<!-- cairn:end -->\n"));

    let settings = jsonc(&fx.read(&fx.repo(".claude/settings.json")));
    assert_eq!(settings["permissions"]["allow"], json!(["Bash(npm test)"]));
    assert_eq!(
        settings["hooks"]["PostToolUse"][0]["hooks"][0]["command"],
        "prettier --write"
    );
    let cairn_hook = json!({"type": "command", "command": format!("{bin} hook"), "timeout": 10});
    assert!(settings["hooks"].get("PreToolUse").is_none());
    for event in ["SessionStart", "PostToolUse", "Stop"] {
        assert_eq!(cairn_hook_count(&settings, event), 1, "{event}");
        let entry = settings["hooks"][event].as_array().unwrap().last().unwrap();
        assert_eq!(entry["hooks"], json!([cairn_hook]), "{event}");
        let matcher = entry.get("matcher").and_then(Value::as_str);
        match event {
            "PostToolUse" => assert_eq!(
                matcher,
                Some("Read|Edit|MultiEdit|Write|NotebookEdit|Bash|Grep|Glob")
            ),
            _ => assert_eq!(matcher, None),
        }
    }

    let rules = fx.read(&fx.repo(".cursor/rules/cairn.mdc"));
    assert!(rules.starts_with("---\n") && rules.contains("\nalwaysApply: true\n---\n"));
    assert!(
        fx.read(&fx.repo(".windsurf/rules/cairn.md"))
            .contains("trigger: always_on")
    );
    for block_file in ["AGENTS.md", "GEMINI.md"] {
        assert!(
            fx.read(&fx.repo(block_file))
                .starts_with("<!-- cairn:begin -->\n")
        );
    }
    let windsurf: Value =
        serde_json::from_str(&fx.read(&fx.home(".codeium/windsurf/mcp_config.json"))).unwrap();
    assert_eq!(windsurf["mcpServers"]["cairn"]["args"], json!(["serve"]));
    let gemini: Value = serde_json::from_str(&fx.read(&fx.repo(".gemini/settings.json"))).unwrap();
    assert_eq!(gemini["mcpServers"]["cairn"]["command"], bin);

    let token = DataDir::at(&fx.setup.data_dir).token();
    assert_eq!(crate::fsutil::mode_of(&token), Some(0o600));

    assert_eq!(action_for(&outcome, &fx.repo(".mcp.json")), Action::Created);
    assert_eq!(
        action_for(&outcome, &fx.repo(".cursor/mcp.json")),
        Action::Merged
    );
    assert_eq!(
        action_for(&outcome, &fx.home(".codex/config.toml")),
        Action::Merged
    );
    assert_eq!(action_for(&outcome, &fx.repo("CLAUDE.md")), Action::Merged);
    assert_eq!(action_for(&outcome, &token), Action::Created);
    let summary = outcome.to_string();
    assert!(
        summary.contains("merged") && summary.contains("cursor mcp server"),
        "{summary}"
    );
}

#[test]
fn installing_again_changes_no_byte() {
    let fx = Fixture::lived_in();
    fx.install(&Client::ALL, true);
    let installed = (fx.user_files(), snapshot(&fx.setup.data_dir));
    let again = fx.install(&Client::ALL, true);
    assert_eq!((fx.user_files(), snapshot(&fx.setup.data_dir)), installed);
    for step in &again.steps {
        let expected = if step.path.is_some() {
            Action::Unchanged
        } else {
            Action::Manual
        };
        assert_eq!(step.action, expected, "{again}");
    }
    assert!(!again.changed());
}

#[test]
fn uninstall_gives_back_every_file_byte_for_byte() {
    let fx = Fixture::lived_in();
    let before = fx.user_files();
    fx.install(&Client::ALL, true);
    assert!(fx.home(".config/systemd/user").is_dir());
    let outcome = fx.uninstall(&[], false);
    assert_eq!(fx.user_files(), before, "{outcome}");
    assert_eq!(
        action_for(&outcome, &fx.repo("CLAUDE.md")),
        Action::Restored
    );
    assert_eq!(action_for(&outcome, &fx.repo(".mcp.json")), Action::Removed);
    assert!(!fx.setup.data_dir.join("install.json").exists());
    assert!(!fx.setup.data_dir.join("backups").exists());
    assert!(outcome.steps.iter().any(|s| {
        s.action == Action::Manual
            && s.command
                .as_deref()
                .unwrap()
                .contains("disable --now cairn-repo-")
    }));
}

#[test]
fn uninstall_after_a_moved_binary_and_reinstall_still_restores_the_originals() {
    let fx = Fixture::lived_in();
    let before = fx.user_files();
    fx.install(&Client::ALL, false);
    let mut moved = fx.setup.clone();
    moved.binary = fx.setup.binary.with_file_name("cairn-new");
    write(&moved.binary, "#!/bin/sh\n");
    make_executable(&moved.binary);
    let everything = Options {
        clients: Client::ALL.to_vec(),
        ..Options::default()
    };
    let outcome = install_with(&moved, &everything, Manager::Systemd, not_run).unwrap();
    assert_eq!(
        action_for(&outcome, &fx.repo(".cursor/mcp.json")),
        Action::Merged
    );
    let settings = jsonc(&fx.read(&fx.repo(".claude/settings.json")));
    for event in ["SessionStart", "PostToolUse", "Stop"] {
        let commands: Vec<&str> = settings["hooks"][event]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|e| e["hooks"].as_array().unwrap())
            .map(|h| h["command"].as_str().unwrap())
            .filter(|c| c.ends_with(" hook"))
            .collect();
        assert_eq!(commands.len(), 1, "{event}: {commands:?}");
        assert!(commands[0].contains("cairn-new"));
    }
    fs::remove_file(&moved.binary).unwrap();
    uninstall_with(&moved, &Options::default(), not_run).unwrap();
    assert_eq!(fx.user_files(), before);
}

#[test]
fn uninstall_after_user_edits_takes_out_only_cairns_pieces() {
    let fx = Fixture::lived_in();
    fx.install(&Client::ALL, false);
    let cursor = fx.repo(".cursor/mcp.json");
    let edited = fx.read(&cursor).replace(
        "\"theme\": \"dark\",",
        "\"theme\": \"dark\",\n  // added by hand\n  \"fontSize\": 14,",
    );
    write(&cursor, &edited);
    let claude_md = fx.repo("CLAUDE.md");
    write(
        &claude_md,
        &format!("{}\nMore notes.\n", fx.read(&claude_md)),
    );
    let codex = fx.home(".codex/config.toml");
    write(
        &codex,
        &format!("{}\n[tui]\nnotifications = true\n", fx.read(&codex)),
    );
    let settings = fx.repo(".claude/settings.json");
    write(
        &settings,
        &fx.read(&settings)
            .replace("\"Bash(npm test)\"", "\"Bash(npm test)\", \"Bash(ls)\""),
    );
    let gemini_md = fx.repo("GEMINI.md");
    write(&gemini_md, &format!("# Mine\n\n{}", fx.read(&gemini_md)));

    let outcome = fx.uninstall(&[], false);
    for path in [&cursor, &claude_md, &codex, &settings, &gemini_md] {
        assert_eq!(
            action_for(&outcome, path),
            Action::Cleaned,
            "{}",
            path.display()
        );
    }

    let cursor_text = fx.read(&cursor);
    assert!(cursor_text.contains("// added by hand") && cursor_text.contains("/* keep me */"));
    let cursor = jsonc(&cursor_text);
    assert_eq!(cursor["fontSize"], 14);
    assert!(cursor["mcpServers"].get("cairn").is_none());
    assert_eq!(cursor["mcpServers"]["other"]["command"], "other-server");

    assert_eq!(fx.read(&claude_md), format!("{CLAUDE_MD}\nMore notes.\n"));

    let codex_text = fx.read(&codex);
    assert!(codex_text.starts_with(CODEX_CONFIG), "{codex_text}");
    assert!(!codex_text.contains("cairn"));
    assert!(codex_text.ends_with("[tui]\nnotifications = true\n"));

    let settings = jsonc(&fx.read(&settings));
    assert_eq!(
        settings["permissions"]["allow"],
        json!(["Bash(npm test)", "Bash(ls)"])
    );
    assert_eq!(
        settings["hooks"],
        json!({"PostToolUse": [{"matcher": "Write", "hooks": [{"type": "command", "command": "prettier --write"}]}]})
    );

    assert_eq!(fx.read(&gemini_md), "# Mine\n");
    assert!(!fx.repo(".mcp.json").exists());
    assert!(!fx.repo(".gemini").exists());
}

#[test]
fn an_edit_between_two_installs_survives_uninstall() {
    let fx = Fixture::lived_in();
    fx.install(&[Client::Claude], false);
    let claude_md = fx.repo("CLAUDE.md");
    let edited = fx
        .read(&claude_md)
        .replace("Use tabs.", "Use tabs. Always.");
    write(&claude_md, &edited);
    let again = fx.install(&[Client::Claude], false);
    assert_eq!(action_for(&again, &claude_md), Action::Unchanged);
    fx.uninstall(&[], false);
    assert_eq!(fx.read(&claude_md), "# Project\n\nUse tabs. Always.\n");
}

#[test]
fn uninstalling_one_client_leaves_the_others() {
    let fx = Fixture::lived_in();
    fx.install(&[Client::Cursor, Client::Gemini], false);
    let outcome = fx.uninstall(&[Client::Cursor], false);
    assert_eq!(
        fx.read(&fx.repo(".cursor/mcp.json")),
        CURSOR_MCP,
        "{outcome}"
    );
    assert!(!fx.repo(".cursor/rules").exists());
    assert!(fx.repo(".gemini/settings.json").exists());
    let outcome = fx.uninstall(&[], false);
    assert!(!fx.repo(".gemini").exists(), "{outcome}");
    assert!(!fx.setup.data_dir.join("install.json").exists());
}

#[test]
fn uninstall_of_a_named_client_cleans_entries_it_has_no_record_of() {
    let fx = Fixture::new();
    let bin = fx.setup.binary.display().to_string();
    let gemini = fx.repo(".gemini/settings.json");
    write(
        &gemini,
        &format!(
            "{{\n  \"theme\": \"x\",\n  \"mcpServers\": {{\n    \"cairn\": {{ \"command\": \"{bin}\", \"args\": [\"serve\"] }}\n  }}\n}}\n"
        ),
    );
    let outcome = fx.uninstall(&[Client::Gemini], false);
    assert_eq!(action_for(&outcome, &gemini), Action::Cleaned);
    assert_eq!(fx.read(&gemini), "{\n  \"theme\": \"x\"\n}\n");
}

#[test]
fn a_config_that_does_not_parse_stops_the_install_before_any_write() {
    let fx = Fixture::lived_in();
    let cursor = fx.repo(".cursor/mcp.json");
    write(
        &cursor,
        "{\n  \"mcpServers\": {\n    \"a\": {}\n    \"b\": {}\n  }\n}\n",
    );
    let before = fx.user_files();
    let err = fx.try_install(&Client::ALL, true, false).unwrap_err();
    let message = err.to_string();
    assert!(message.contains(&cursor.display().to_string()), "{message}");
    assert!(message.contains("line 4"), "{message}");
    assert_eq!(fx.user_files(), before);
    assert!(!fx.setup.data_dir.exists());

    write(&cursor, CURSOR_MCP);
    write(
        &fx.home(".codex/config.toml"),
        "[mcp_servers\ncommand = 1\n",
    );
    let err = fx.try_install(&Client::ALL, false, false).unwrap_err();
    assert!(
        err.to_string()
            .contains("config.toml is not valid TOML (line 1"),
        "{err}"
    );
    assert!(!fx.setup.data_dir.exists());
}

#[test]
fn a_dry_run_reports_the_plan_and_writes_nothing() {
    let fx = Fixture::lived_in();
    let before = fx.user_files();
    let outcome = fx.try_install(&Client::ALL, true, true).unwrap();
    assert_eq!(fx.user_files(), before);
    assert!(!fx.setup.data_dir.exists());
    assert!(outcome.dry_run && outcome.changed());
    let summary = outcome.to_string();
    for expected in [
        "would create",
        "would merge",
        "would run",
        "dry run: nothing was changed",
    ] {
        assert!(
            summary.contains(expected),
            "{expected:?} missing from:\n{summary}"
        );
    }
    let json = serde_json::to_value(&outcome).unwrap();
    assert_eq!(json["dry_run"], true);
    assert_eq!(json["steps"][0]["action"], "created");

    fx.install(&Client::ALL, true);
    let installed = (fx.user_files(), snapshot(&fx.setup.data_dir));
    let outcome = fx.uninstall(&[], true);
    assert_eq!((fx.user_files(), snapshot(&fx.setup.data_dir)), installed);
    assert!(outcome.to_string().contains("would restore"), "{outcome}");
}

#[test]
fn the_service_is_installed_with_the_command_to_enable_it() {
    let fx = Fixture::new();
    let outcome = fx.install(&[], true);
    let record = ServiceRecord::new(&fx.setup, Manager::Systemd);
    assert!(record.name.starts_with("cairn-repo-") && record.name.ends_with(".service"));
    assert_eq!(
        record.path,
        fx.home(".config/systemd/user").join(&record.name)
    );
    let unit = fx.read(&record.path);
    assert!(unit.contains("Type=simple"));
    let enable = outcome.steps.last().unwrap();
    assert_eq!(enable.action, Action::Manual);
    assert_eq!(
        enable.command.as_deref(),
        Some(
            format!(
                "systemctl --user daemon-reload && systemctl --user enable --now {}",
                record.name
            )
            .as_str()
        )
    );
    fx.uninstall(&[], false);
    assert!(!fx.home(".config").exists());
}

#[test]
fn two_checkouts_with_the_same_name_get_different_services() {
    let a = service::service_id(Path::new("/src/a/app"));
    let b = service::service_id(Path::new("/src/b/app"));
    assert!(a.starts_with("app-") && b.starts_with("app-") && a != b);
    assert_eq!(a.len(), "app-".len() + 8);
    assert!(service::service_id(Path::new("/src/my app!")).starts_with("my-app--"));
}

fn awkward_setup() -> Setup {
    Setup {
        repo_root: PathBuf::from("/home/me/my \"repo\" & $HOME 100%"),
        home: PathBuf::from("/home/me"),
        binary: PathBuf::from("/home/me/my tools$/cairn"),
        data_dir: PathBuf::from("/home/me/.local/share/cairn/repos/<my repo>"),
        data_home: Some(PathBuf::from("/home/me/.local/share/cairn")),
    }
}

#[test]
fn the_systemd_unit_has_what_systemd_needs_and_escapes_paths() {
    let unit = service::render_unit(&awkward_setup()).unwrap();
    for line in [
        "Type=simple",
        r#"ExecStart="/home/me/my tools$/cairn" daemon --repo "/home/me/my \"repo\" & $$HOME 100%%" --data-dir "/home/me/.local/share/cairn/repos/<my repo>""#,
        "WorkingDirectory=/home/me/my \"repo\" & $HOME 100%%",
        "Restart=on-failure",
        "RestartSec=2",
        "StandardOutput=append:/home/me/.local/share/cairn/repos/<my repo>/daemon.log",
        "StandardError=append:/home/me/.local/share/cairn/repos/<my repo>/daemon.log",
        "WantedBy=default.target",
    ] {
        assert!(unit.lines().any(|l| l == line), "no {line:?} in\n{unit}");
    }
    assert!(
        unit.contains("[Unit]\n") && unit.contains("[Service]\n") && unit.contains("[Install]\n")
    );
}

#[test]
fn systemd_accepts_the_unit() {
    let Some(analyze) = program_on_path("systemd-analyze") else {
        eprintln!("note: systemd-analyze is not on PATH; the unit was not verified by systemd");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let binary = root.join("bin $dir %h/cairn");
    write(&binary, "#!/bin/sh\n");
    make_executable(&binary);
    let setup = Setup {
        repo_root: root.join("my repo \"$HOME\" %h's"),
        home: root.to_path_buf(),
        binary,
        data_dir: root.join("data & <dir>"),
        data_home: None,
    };
    fs::create_dir_all(&setup.repo_root).unwrap();
    let unit = root.join("cairn-test.service");
    write(&unit, &service::render_unit(&setup).unwrap());
    // And the user daemon's unit, its log in a data home with awkward characters.
    let user_setup = Setup {
        data_home: Some(root.join("data home %h $x")),
        ..setup.clone()
    };
    let user_unit = root.join("cairn-test-user.service");
    let crate::install::piece::Piece::File(text) =
        service::target(&user_setup, Manager::Systemd, true)
            .unwrap()
            .piece
    else {
        panic!("a unit is a whole file")
    };
    write(&user_unit, &text);
    let output = std::process::Command::new(analyze)
        .arg("verify")
        .arg(&unit)
        .arg(&user_unit)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    let about_unit: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("cairn-test"))
        .collect();
    assert!(about_unit.is_empty(), "systemd-analyze verify:\n{stderr}");
}

fn program_on_path(program: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|dir| dir.join(program))
        .find(|path| files::is_executable(path))
}

#[test]
fn the_plist_is_well_formed_xml_with_escaped_values() {
    let setup = awkward_setup();
    let label = format!("dev.cairn.{}", service::service_id(&setup.repo_root));
    let plist = service::render_plist(&setup, &label);
    assert!(plist.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!DOCTYPE plist PUBLIC \"-//Apple//DTD PLIST 1.0//EN\" \"http://www.apple.com/DTDs/PropertyList-1.0.dtd\">\n"));
    let elements = xml_elements(&plist);
    assert_eq!(elements.first().map(String::as_str), Some("plist"));
    for expected in [
        "<string>/home/me/my tools$/cairn</string>",
        "<string>/home/me/my &quot;repo&quot; &amp; $HOME 100%</string>",
        "<string>/home/me/.local/share/cairn/repos/&lt;my repo&gt;/daemon.log</string>",
        "<key>KeepAlive</key>\n\t<dict>\n\t\t<key>SuccessfulExit</key>\n\t\t<false/>",
        "<key>RunAtLoad</key>\n\t<true/>",
        &format!("<key>Label</key>\n\t<string>{label}</string>"),
        "<key>StandardErrorPath</key>",
    ] {
        assert!(plist.contains(expected), "no {expected:?} in\n{plist}");
    }
}

/// The element names of a small XML document in document order, after checking that tags
/// balance, text holds no raw `<` or bare `&`, and there is one root element.
fn xml_elements(xml: &str) -> Vec<String> {
    let mut rest = xml;
    let mut open: Vec<String> = Vec::new();
    let mut seen = Vec::new();
    let mut roots = 0;
    while let Some(start) = rest.find('<') {
        check_text(&rest[..start]);
        let end = rest[start..].find('>').expect("unclosed tag") + start;
        let tag = &rest[start + 1..end];
        rest = &rest[end + 1..];
        if tag.starts_with('?') || tag.starts_with('!') {
            assert!(
                open.is_empty() || tag.starts_with("!--"),
                "declaration inside the root: {tag}"
            );
            continue;
        }
        if let Some(name) = tag.strip_prefix('/') {
            assert_eq!(open.pop().as_deref(), Some(name), "mismatched </{name}>");
            continue;
        }
        let name = tag
            .trim_end_matches('/')
            .split_whitespace()
            .next()
            .unwrap()
            .to_string();
        assert!(!tag.contains('<'), "'<' inside tag {tag}");
        if open.is_empty() {
            roots += 1;
        }
        seen.push(name.clone());
        if !tag.ends_with('/') {
            open.push(name);
        }
    }
    check_text(rest);
    assert!(open.is_empty(), "unclosed elements: {open:?}");
    assert_eq!(roots, 1, "one root element");
    seen
}

fn check_text(text: &str) {
    let mut rest = text;
    while let Some(at) = rest.find('&') {
        let entity = &rest[at..rest[at..].find(';').map_or(rest.len(), |e| at + e + 1)];
        assert!(
            ["&amp;", "&lt;", "&gt;", "&quot;", "&apos;"].contains(&entity),
            "bare & in {text:?}"
        );
        rest = &rest[at + 1..];
    }
}

#[test]
fn check_reports_what_is_missing_and_how_to_fix_it() {
    let fx = Fixture::lived_in();
    let checks = check(&fx.setup);
    let cursor = checks
        .iter()
        .find(|c| c.name == "cursor mcp server")
        .unwrap();
    assert!(
        !cursor.ok && cursor.detail.contains("not registered"),
        "{cursor:?}"
    );
    assert_eq!(cursor.fix.as_deref(), Some("cairn install --client cursor"));
    let token = checks.iter().find(|c| c.name == "token").unwrap();
    assert!(!token.ok);
    assert!(checks.iter().all(|c| !c.name.starts_with("gemini")));

    fx.install(&Client::ALL, true);
    let checks = check(&fx.setup);
    assert!(checks.iter().all(|c| c.ok), "{checks:#?}");
    assert!(checks.iter().any(|c| c.name == "claude hooks"));
    assert!(checks.iter().any(|c| c.name == "service"));

    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let token = DataDir::at(&fx.setup.data_dir).token();
        fs::set_permissions(&token, fs::Permissions::from_mode(0o644)).unwrap();
        let checks = check(&fx.setup);
        let token_check = checks.iter().find(|c| c.name == "token").unwrap();
        assert!(
            !token_check.ok && token_check.detail.contains("644"),
            "{token_check:?}"
        );
        assert_eq!(
            token_check.fix.as_deref(),
            Some(format!("chmod 600 {}", token.display()).as_str())
        );
    }

    write(&fx.repo("GEMINI.md"), "# emptied by hand\n");
    fs::remove_file(&fx.setup.binary).unwrap();
    let checks = check(&fx.setup);
    let failing: Vec<&str> = checks
        .iter()
        .filter(|c| !c.ok)
        .map(|c| c.name.as_str())
        .collect();
    assert!(failing.contains(&"gemini instructions"), "{failing:?}");
    assert!(failing.contains(&"codex mcp server"), "{failing:?}");
    let claude = checks
        .iter()
        .find(|c| c.name == "claude mcp server")
        .unwrap();
    // The binary the registration names is gone, as after an upgrade moved it.
    assert!(claude.detail.contains("no longer exists"), "{claude:?}");
}

#[test]
fn check_without_any_install_says_to_install() {
    let fx = Fixture::new();
    let checks = check(&fx.setup);
    let clients = checks.iter().find(|c| c.name == "clients").unwrap();
    assert!(!clients.ok);
    assert!(
        clients
            .fix
            .as_deref()
            .unwrap()
            .starts_with("cairn install --client")
    );
}

#[test]
fn install_without_clients_takes_the_ones_in_use() {
    let fx = Fixture::new();
    let err = fx.try_install(&[], false, false).unwrap_err();
    assert!(matches!(err, Error::NoClient));
    fs::create_dir_all(fx.home(".codex")).unwrap();
    let outcome = fx.install(&[], false);
    let clients: Vec<Option<Client>> = outcome.steps.iter().map(|s| s.client).collect();
    assert!(clients.contains(&Some(Client::Codex)));
    assert!(!clients.contains(&Some(Client::Cursor)));
    assert_eq!(actions(&outcome).len(), 3);
}

/// Property tests: the config edits never panic, and never touch a byte outside cairn's piece
/// (all they may take away from the user's text is blank space and a separating comma).
mod properties {
    use super::*;
    use proptest::prelude::*;

    /// The stretch of `before` that `after` does not keep (between their common prefix and
    /// suffix).
    fn taken_away<'a>(before: &'a str, after: &str) -> &'a str {
        let prefix = before
            .bytes()
            .zip(after.bytes())
            .take_while(|(a, b)| a == b)
            .count();
        let suffix = before.as_bytes()[prefix..]
            .iter()
            .rev()
            .zip(after.as_bytes()[prefix.min(after.len())..].iter().rev())
            .take_while(|(a, b)| a == b)
            .count();
        let (start, end) = (prefix, before.len() - suffix);
        let start = (0..=start)
            .rev()
            .find(|&i| before.is_char_boundary(i))
            .unwrap_or(0);
        let end = (end..=before.len())
            .find(|&i| before.is_char_boundary(i))
            .unwrap_or(before.len());
        &before[start..end]
    }

    fn only_separators(text: &str) -> bool {
        text.chars().all(|c| c.is_whitespace() || c == ',')
    }

    /// Whether `after` keeps every non-blank character of `before`, in order, with nothing
    /// taken away but separating commas (a one-line object may be laid out again).
    fn keeps_the_users_text(before: &str, after: &str) -> bool {
        let squeeze = |text: &str| {
            text.chars()
                .filter(|c| !c.is_whitespace())
                .collect::<String>()
        };
        only_separators(taken_away(&squeeze(before), &squeeze(after)))
    }

    /// A JSONC file with other servers, other keys and comments, in varied layouts.
    fn jsonc_config() -> impl Strategy<Value = String> {
        let server = ("[a-z]{1,8}", "[a-z/ -]{0,12}", prop::bool::ANY).prop_map(
            |(name, command, comment)| {
                let comment = if comment { " /* theirs */" } else { "" };
                format!("\"{name}x\": {{ \"command\": \"{command}\" }},{comment}")
            },
        );
        (
            prop::collection::vec(server, 0..4),
            prop::bool::ANY,
            "[a-z]{0,6}",
            prop::sample::select(vec!["\n", "\n  ", " ", "\n\t"]),
        )
            .prop_map(|(servers, with_servers, theme, gap)| {
                let mut text = format!("{{{gap}/* user settings */{gap}\"theme\": \"{theme}\",");
                if with_servers {
                    text.push_str(&format!("{gap}\"mcpServers\": {{"));
                    for server in servers {
                        text.push_str(&format!("{gap}  {server}"));
                    }
                    text.push_str(&format!("{gap}}},"));
                }
                text.push_str(&format!("{gap}}}\n"));
                text
            })
    }

    /// A TOML file with other tables, keys and comments.
    fn toml_config() -> impl Strategy<Value = String> {
        let table = ("[a-z ]{0,10}", prop::bool::ANY).prop_map(|(value, comment)| {
            let comment = if comment { "  # theirs" } else { "" };
            format!("command = \"{value}\"{comment}\n")
        });
        (
            prop::collection::btree_map("[a-z]{1,8}", table, 0..4),
            "[a-z]{0,6}",
            prop::bool::ANY,
        )
            .prop_map(|(tables, model, blank)| {
                let gap = if blank { "\n" } else { "" };
                let mut text = format!("# mine\nmodel = \"{model}\"\n{gap}");
                for (name, table) in tables {
                    text.push_str(&format!("[mcp_servers.{name}x]\n{table}"));
                    text.push_str(gap);
                }
                text
            })
    }

    fn entry() -> jsonc_parser::cst::CstInputValue {
        jsonc_parser::cst::CstInputValue::Object(vec![
            ("command".into(), "/bin/cairn".into()),
            (
                "args".into(),
                jsonc_parser::cst::CstInputValue::Array(vec!["serve".into()]),
            ),
        ])
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        #[test]
        fn jsonc_edits_keep_every_byte_of_the_users(text in jsonc_config()) {
            let path = Path::new("mcp.json");
            let with = jsonc::set_server(path, Some(&text), &entry()).unwrap();
            prop_assert!(keeps_the_users_text(&text, &with), "{text:?} -> {with:?}");
            let without = jsonc::remove_server(path, &with).unwrap().text;
            prop_assert!(!without.contains("/bin/cairn"), "{without:?}");
            prop_assert!(keeps_the_users_text(&text, &without) || text.contains("mcpServers"));
        }

        #[test]
        fn toml_edits_keep_every_byte_of_the_users(text in toml_config()) {
            let path = Path::new("config.toml");
            let with = codex::set_server(path, Some(&text), &launch::Launch::binary(Path::new("/bin/cairn"))).unwrap();
            prop_assert!(only_separators(taken_away(&text, &with)), "{text:?} -> {with:?}");
            let without = codex::remove_server(path, &with).unwrap().text;
            prop_assert_eq!(without.trim_end(), text.trim_end());
        }

        #[test]
        fn block_edits_keep_every_byte_of_the_users(text in "\\PC{0,200}") {
            let path = Path::new("CLAUDE.md");
            prop_assume!(!text.contains("cairn:begin") && !text.contains("cairn:end"));
            let with = block::set_block(path, Some(&text), "use cairn").unwrap();
            prop_assert!(only_separators(taken_away(&text, &with)), "{text:?} -> {with:?}");
        }

        #[test]
        fn edits_of_arbitrary_text_never_panic(text in "\\PC{0,300}") {
            let path = Path::new("any");
            let _ = jsonc::set_server(path, Some(&text), &entry());
            let _ = jsonc::remove_server(path, &text);
            let _ = codex::set_server(path, Some(&text), &launch::Launch::binary(Path::new("/bin/cairn")));
            let _ = codex::remove_server(path, &text);
            let _ = block::set_block(path, Some(&text), "use cairn");
            let _ = block::remove_block(path, &text);
        }
    }
}

/// The window between install's check and its write is closed: a directory swapped for a link
/// to elsewhere after the check is never written through, and a link planted at the file's
/// name is replaced or refused, never followed.
#[test]
fn a_directory_swapped_for_a_link_after_the_check_is_never_written_through() {
    use std::os::unix::fs::symlink;
    let repo = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    fs::create_dir_all(repo.path().join(".claude")).unwrap();
    let target = repo.path().join(".claude/settings.json");
    files::confine(&target, repo.path()).unwrap();
    let placement = files::Placement::open(&target, repo.path(), files::Readers::Everyone).unwrap();
    fs::rename(repo.path().join(".claude"), repo.path().join("moved")).unwrap();
    symlink(outside.path(), repo.path().join(".claude")).unwrap();
    placement.write(b"{}\n").unwrap();
    assert!(!outside.path().join("settings.json").exists());
    assert_eq!(
        fs::read_to_string(repo.path().join("moved/settings.json")).unwrap(),
        "{}\n"
    );

    // A link planted at the name after the check: refused, the link's target untouched.
    fs::create_dir_all(repo.path().join("docs")).unwrap();
    let file = repo.path().join("docs/AGENTS.md");
    let placement = files::Placement::open(&file, repo.path(), files::Readers::Everyone).unwrap();
    let victim = outside.path().join("victim.txt");
    fs::write(&victim, "keep").unwrap();
    symlink(&victim, &file).unwrap();
    assert!(matches!(placement.write(b"x"), Err(Error::Link { .. })));
    assert_eq!(fs::read_to_string(&victim).unwrap(), "keep");

    // A directory on the way that is a link out, from the start: refused before any write.
    symlink(outside.path(), repo.path().join("away")).unwrap();
    let escaping = repo.path().join("away/sub/file.json");
    assert!(matches!(
        files::Placement::open(&escaping, repo.path(), files::Readers::Everyone),
        Err(Error::Escapes { .. })
    ));
    assert!(!outside.path().join("sub").exists());
}

#[test]
fn the_user_daemon_s_service_is_shared_and_goes_with_the_last_repository() {
    let fx = Fixture::new();
    let (a, b, data_home) = two_registered(&fx);
    let user_service = Options {
        clients: vec![Client::Cursor],
        user_service: true,
        ..Options::default()
    };
    let unit = fx.home(".config/systemd/user/cairn-user.service");
    let registry = data_home.join(crate::running::registry::FILE);
    let roots = || -> Vec<PathBuf> {
        crate::running::registry::registered(&data_home)
            .unwrap()
            .into_iter()
            .map(|r| r.root)
            .collect()
    };

    let first = install_with(&a, &user_service, Manager::Systemd, not_run).unwrap();
    assert_eq!(action_for(&first, &unit), Action::Created);
    assert_eq!(action_for(&first, &registry), Action::Created);
    let text = fs::read_to_string(&unit).unwrap();
    let exec = text.lines().find(|l| l.starts_with("ExecStart=")).unwrap();
    assert!(
        exec.ends_with(&format!(
            " daemon --user --data-home {}",
            data_home.display()
        )),
        "{exec}"
    );
    assert!(
        text.contains(&format!(
            "append:{}",
            data_home.join("daemon.log").display()
        )),
        "{text}"
    );
    let second = install_with(&b, &user_service, Manager::Systemd, not_run).unwrap();
    assert_eq!(action_for(&second, &unit), Action::Unchanged);
    assert_eq!(roots(), [a.repo_root.clone(), b.repo_root.clone()]);

    // The repository whose install wrote the unit goes first: the unit stays for the other.
    let everything = Options::default();
    let gone = uninstall_with(&a, &everything, not_run).unwrap();
    assert_eq!(action_for(&gone, &unit), Action::Kept, "{gone}");
    assert_eq!(action_for(&gone, &registry), Action::Removed);
    assert!(unit.exists());
    assert_eq!(roots(), vec![b.repo_root.clone()]);
    assert!(
        !gone.steps.iter().any(|s| s.command.is_some()),
        "the shared service is not disabled: {gone}"
    );

    // The last one takes the unit with it, though its own install did not write it.
    let last = uninstall_with(&b, &everything, not_run).unwrap();
    assert_eq!(action_for(&last, &unit), Action::Removed, "{last}");
    assert!(!unit.exists());
    assert!(!registry.exists());
    assert!(last.steps.iter().any(|s| s.command.is_some()), "{last}");
}

#[test]
fn the_last_repository_out_takes_the_user_daemon_s_service_whoever_installed_it() {
    let fx = Fixture::new();
    let (a, b, _) = two_registered(&fx);
    let cursor = Options {
        clients: vec![Client::Cursor],
        ..Options::default()
    };
    let user_service = Options {
        user_service: true,
        ..cursor.clone()
    };
    let unit = fx.home(".config/systemd/user/cairn-user.service");
    install_with(&a, &user_service, Manager::Systemd, not_run).unwrap();
    // B only registers (a plain install).
    install_with(&b, &cursor, Manager::Systemd, not_run).unwrap();
    // One repository cannot have both kinds of service.
    let switched = Options {
        service: true,
        ..cursor.clone()
    };
    let error = install_with(&a, &switched, Manager::Systemd, not_run).unwrap_err();
    assert!(
        matches!(&error, Error::ServiceSwitch { installed } if installed == "cairn-user.service"),
        "{error}"
    );

    let everything = Options::default();
    let kept = uninstall_with(&a, &everything, not_run).unwrap();
    assert_eq!(action_for(&kept, &unit), Action::Kept, "{kept}");
    let last = uninstall_with(&b, &everything, not_run).unwrap();
    assert_eq!(action_for(&last, &unit), Action::Removed, "{last}");
    assert!(!unit.exists());
    assert!(
        last.steps.iter().any(|s| s
            .command
            .as_deref()
            .is_some_and(|c| c.contains("cairn-user.service"))),
        "{last}"
    );
}

#[test]
fn a_damaged_registry_does_not_stop_a_plain_install_but_stops_the_user_daemon_s() {
    let fx = Fixture::new();
    let data_home = fx.setup.home.join(".local/share/cairn");
    fs::create_dir_all(&data_home).unwrap();
    fs::write(data_home.join(crate::running::registry::FILE), "{").unwrap();
    let setup = Setup {
        data_home: Some(data_home.clone()),
        ..fx.setup.clone()
    };
    let cursor = Options {
        clients: vec![Client::Cursor],
        ..Options::default()
    };
    let plain = install_with(&setup, &cursor, Manager::Systemd, not_run).unwrap();
    let registry = data_home.join(crate::running::registry::FILE);
    assert_eq!(action_for(&plain, &registry), Action::Kept, "{plain}");
    assert!(!plain.failed());
    let user_service = Options {
        user_service: true,
        ..cursor
    };
    let before = fx.user_files();
    let other = Setup {
        repo_root: setup.repo_root.with_file_name("other"),
        data_dir: setup.data_dir.with_file_name("other-data"),
        ..setup.clone()
    };
    fs::create_dir_all(&other.repo_root).unwrap();
    assert!(matches!(
        install_with(&other, &user_service, Manager::Systemd, not_run),
        Err(Error::Registry(_))
    ));
    assert_eq!(fx.user_files(), before, "nothing is written");
    assert!(!other.repo_root.join(".cursor").exists());
}

/// Two repositories of one user (the fixture's and a sibling), with cairn's data home.
fn two_registered(fx: &Fixture) -> (Setup, Setup, PathBuf) {
    let data_home = fx.setup.home.join(".local/share/cairn");
    let a = Setup {
        data_home: Some(data_home.clone()),
        ..fx.setup.clone()
    };
    let b = Setup {
        repo_root: a.repo_root.with_file_name("other"),
        data_dir: a.data_dir.with_file_name("other-data"),
        ..a.clone()
    };
    fs::create_dir_all(&b.repo_root).unwrap();
    (a, b, data_home)
}

#[test]
fn a_repository_registered_with_another_data_directory_is_updated() {
    let fx = Fixture::new();
    let (a, _, data_home) = two_registered(&fx);
    let registry = data_home.join(crate::running::registry::FILE);
    let cursor = Options {
        clients: vec![Client::Cursor],
        ..Options::default()
    };
    let first = install_with(&a, &cursor, Manager::Systemd, not_run).unwrap();
    assert_eq!(action_for(&first, &registry), Action::Created);
    let again = install_with(&a, &cursor, Manager::Systemd, not_run).unwrap();
    assert_eq!(action_for(&again, &registry), Action::Unchanged);
    let moved = Setup {
        data_dir: a.data_dir.with_file_name("moved-data"),
        ..a.clone()
    };
    let updated = install_with(&moved, &cursor, Manager::Systemd, not_run).unwrap();
    assert_eq!(action_for(&updated, &registry), Action::Updated);
    let entries = crate::running::registry::registered(&data_home).unwrap();
    assert_eq!(entries.len(), 1);
    assert_eq!(entries[0].data_dir, moved.data_dir);
}
