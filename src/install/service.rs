//! The user service that keeps `cairn daemon` running for a repository: a systemd user unit
//! on Linux, a launchd agent on macOS, both rendered from the templates in `install/`, and
//! the commands that enable and disable them.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde::{Deserialize, Serialize};

use super::clients::Target;
use super::launch::{Launch, path_dirs};
use super::manifest::hash;
use super::piece::Piece;
use super::shell::shell_quote;
use super::{Error, Item, Setup, files};

const UNIT_TEMPLATE: &str = include_str!("../../install/cairn.service");
const PLIST_TEMPLATE: &str = include_str!("../../install/cairn.plist");

/// The service manager a service file is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(super) enum Manager {
    Systemd,
    Launchd,
}

/// Whether the service manager's commands are run, or shown for the user to run and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Commands {
    Run,
    Show(String),
}

/// The installed service, as the install record keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct ServiceRecord {
    pub manager: Manager,
    /// The systemd unit name or the launchd label.
    pub name: String,
    pub path: PathBuf,
    /// The user's daemon (`cairn daemon --user`), shared by every registered repository,
    /// rather than this repository's own.
    #[serde(default)]
    pub user: bool,
}

impl Manager {
    /// The manager of the platform cairn runs on.
    pub fn current() -> Manager {
        if cfg!(target_os = "macos") {
            Manager::Launchd
        } else {
            Manager::Systemd
        }
    }

    fn program(self) -> &'static str {
        match self {
            Manager::Systemd => "systemctl",
            Manager::Launchd => "launchctl",
        }
    }
}

/// Whether the manager's commands can be run here: not when `CAIRN_SERVICE_MANAGER=none`,
/// when its program is not on PATH, or when there is no systemd user session.
pub(super) fn commands(manager: Manager) -> Commands {
    if std::env::var_os("CAIRN_SERVICE_MANAGER").is_some_and(|v| v == "none") {
        return Commands::Show("CAIRN_SERVICE_MANAGER=none".into());
    }
    let program = manager.program();
    if !on_path(program) {
        return Commands::Show(format!("{program} is not on PATH"));
    }
    if manager == Manager::Systemd
        && !Command::new(program)
            .args(["--user", "show-environment"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|status| status.success())
    {
        return Commands::Show("no systemd user session (`systemctl --user` fails)".into());
    }
    Commands::Run
}

/// The service file for this repository, or for the user's daemon (`user`).
pub(super) fn target(setup: &Setup, manager: Manager, user: bool) -> Result<Target, Error> {
    let (record, runs) = if user {
        (ServiceRecord::user(setup, manager), Runs::user(setup)?)
    } else {
        (ServiceRecord::new(setup, manager), Runs::repository(setup))
    };
    let text = match manager {
        Manager::Systemd => render_unit_of(&runs)?,
        Manager::Launchd => render_plist_of(&runs, &record.name),
    };
    Ok(Target {
        client: None,
        item: Item::Service,
        within: record.within(),
        path: record.path,
        piece: Piece::File(text),
    })
}

impl ServiceRecord {
    /// This repository's own daemon's service.
    pub fn new(setup: &Setup, manager: Manager) -> Self {
        ServiceRecord::named(setup, manager, &service_id(&setup.repo_root), false)
    }

    /// The one service of the user's daemon, whichever repository installs it.
    pub fn user(setup: &Setup, manager: Manager) -> Self {
        ServiceRecord::named(setup, manager, "user", true)
    }

    /// The service `cairn-<id>.service` / `dev.cairn.<id>`, in the manager's directory.
    fn named(setup: &Setup, manager: Manager, id: &str, user: bool) -> Self {
        let (name, path) = match manager {
            Manager::Systemd => {
                let unit = format!("cairn-{id}.service");
                let path = setup.home.join(".config/systemd/user").join(&unit);
                (unit, path)
            }
            Manager::Launchd => {
                let label = format!("dev.cairn.{id}");
                let path = setup
                    .home
                    .join("Library/LaunchAgents")
                    .join(format!("{label}.plist"));
                (label, path)
            }
        };
        ServiceRecord {
            manager,
            name,
            path,
            user,
        }
    }

    /// The directory the service file must stay inside: the manager's own.
    pub fn within(&self) -> PathBuf {
        self.path.parent().unwrap_or(&self.path).to_path_buf()
    }

    fn enable_commands(&self) -> Vec<Vec<String>> {
        match self.manager {
            Manager::Systemd => vec![
                words(&["systemctl", "--user", "daemon-reload"]),
                words(&["systemctl", "--user", "enable", "--now", &self.name]),
            ],
            Manager::Launchd => vec![words(&["launchctl", "load", "-w", &self.plist()])],
        }
    }

    fn disable_commands(&self) -> Vec<Vec<String>> {
        match self.manager {
            Manager::Systemd => vec![words(&[
                "systemctl",
                "--user",
                "disable",
                "--now",
                &self.name,
            ])],
            Manager::Launchd => vec![words(&["launchctl", "unload", "-w", &self.plist()])],
        }
    }

    /// What starts the service, as one shell line.
    pub(crate) fn enable_command(&self) -> String {
        shell_line(&self.enable_commands())
    }

    /// What stops and disables the service, as one shell line.
    pub(crate) fn disable_command(&self) -> String {
        shell_line(&self.disable_commands())
    }

    /// Starts the service now and at every login.
    pub fn enable(&self) -> Result<(), String> {
        run_all(&self.enable_commands())
    }

    /// Stops the service and keeps it from starting again.
    pub fn disable(&self) -> Result<(), String> {
        run_all(&self.disable_commands())
    }

    /// Tells systemd its unit file is gone (launchd needs nothing).
    pub(crate) fn forget_removed(&self) {
        if self.manager == Manager::Systemd {
            // The unit is already stopped and disabled; a stale entry only lingers in
            // `systemctl --user list-units` until the next reload.
            let _ = run_all(&[words(&["systemctl", "--user", "daemon-reload"])]);
        }
    }

    fn plist(&self) -> String {
        self.path.to_string_lossy().into_owned()
    }
}

/// `<repository name>-<8 hex digits of its path's hash>`: readable, and distinct for two
/// checkouts with the same name.
pub(super) fn service_id(repo: &Path) -> String {
    let name: String = repo
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "root".into())
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .collect();
    format!("{name}-{}", &hash(repo.to_string_lossy().as_bytes())[..8])
}

/// What a service runs, where, and where its output goes.
struct Runs {
    /// The program first.
    args: Vec<String>,
    working_directory: PathBuf,
    log: PathBuf,
    /// Whom it serves, for the unit's description.
    serves: String,
}

impl Runs {
    /// `cairn daemon` for this repository and its data directory.
    fn repository(setup: &Setup) -> Runs {
        let path = |p: &Path| p.to_string_lossy().into_owned();
        Runs {
            args: daemon_args(
                setup,
                &[
                    "daemon",
                    "--repo",
                    &path(&setup.repo_root),
                    "--data-dir",
                    &path(&setup.data_dir),
                ],
            ),
            working_directory: setup.repo_root.clone(),
            log: crate::datadir::DataDir::at(&setup.data_dir).daemon_log(),
            serves: systemd_description(&setup.repo_root),
        }
    }

    /// `cairn daemon --user` on the data home install registered in (a service does not see
    /// the login shell's `XDG_DATA_HOME`), its log there.
    fn user(setup: &Setup) -> Result<Runs, Error> {
        let data_home = setup.data_home.clone().ok_or(Error::NoDataHome)?;
        Ok(Runs {
            args: daemon_args(
                setup,
                &[
                    "daemon",
                    "--user",
                    "--data-home",
                    &data_home.to_string_lossy(),
                ],
            ),
            working_directory: setup.home.clone(),
            // Where the user's daemon rolls its log over (as a repository's daemon does in its
            // data directory).
            log: crate::datadir::DataDir::at(&data_home).daemon_log(),
            serves: "this user's registered repositories".into(),
        })
    }
}

/// The systemd user unit for this repository.
#[cfg(test)]
pub(super) fn render_unit(setup: &Setup) -> Result<String, Error> {
    render_unit_of(&Runs::repository(setup))
}

/// The systemd user unit that runs `runs`.
fn render_unit_of(runs: &Runs) -> Result<String, Error> {
    let working_directory = systemd_path(&runs.working_directory)?;
    let log = systemd_path(&runs.log)?;
    let mut exec_start = runs.args.iter();
    let program = systemd_word(exec_start.next().map_or("", String::as_str));
    let args = exec_start.map(|arg| systemd_word(&arg.replace('$', "$$")));
    Ok(fill(
        UNIT_TEMPLATE,
        &[
            ("description", runs.serves.clone()),
            (
                "exec_start",
                std::iter::once(program)
                    .chain(args)
                    .collect::<Vec<_>>()
                    .join(" "),
            ),
            ("working_directory", working_directory),
            ("log", log),
        ],
    ))
}

/// The launchd agent for this repository.
#[cfg(test)]
pub(super) fn render_plist(setup: &Setup, label: &str) -> String {
    render_plist_of(&Runs::repository(setup), label)
}

/// The launchd agent that runs `runs`.
fn render_plist_of(runs: &Runs, label: &str) -> String {
    let text = |path: &Path| xml_escape(&path.to_string_lossy());
    fill(
        PLIST_TEMPLATE,
        &[
            ("label", xml_escape(label)),
            (
                "program_arguments",
                runs.args
                    .iter()
                    .map(|arg| format!("<string>{}</string>", xml_escape(arg)))
                    .collect::<Vec<_>>()
                    .join("\n\t\t"),
            ),
            ("repo", text(&runs.working_directory)),
            ("log", text(&runs.log)),
        ],
    )
}

/// cairn with `args`: the program first. A service has no shell to search `PATH`, so a
/// package runner (cairn running from npx's or uvx's cache) is written as the absolute path
/// `PATH` gives it now.
fn daemon_args(setup: &Setup, args: &[&str]) -> Vec<String> {
    let launch = Launch::for_binary(&setup.binary);
    let launch = launch.resolved(&path_dirs()).unwrap_or(launch);
    let args = launch.args(args);
    std::iter::once(launch.program_text()).chain(args).collect()
}

/// The template with each `{{name}}` replaced.
fn fill(template: &str, values: &[(&str, String)]) -> String {
    let mut text = template.to_string();
    for (name, value) in values {
        text = text.replace(&format!("{{{{{name}}}}}"), value);
    }
    debug_assert!(!text.contains("{{"), "a template value is missing");
    text
}

/// One word of a systemd command line: quoted (C-style escapes, control characters
/// included) when it holds anything but plain path characters, with `%` escaped so systemd
/// does not expand it. (`$` is the caller's: arguments escape it, the program path takes it
/// literally.)
fn systemd_word(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+:@=,".contains(c));
    let word = systemd_specifiers(word);
    if plain {
        return word;
    }
    let mut quoted = String::from("\"");
    for c in word.chars() {
        match c {
            '\\' => quoted.push_str(r"\\"),
            '"' => quoted.push_str("\\\""),
            '\n' => quoted.push_str(r"\n"),
            '\t' => quoted.push_str(r"\t"),
            '\r' => quoted.push_str(r"\r"),
            c if c.is_ascii_control() => quoted.push_str(&format!("\\x{:02x}", c as u32)),
            c if c.is_control() => quoted.push_str(&format!("\\u{:04x}", c as u32)),
            c => quoted.push(c),
        }
    }
    quoted.push('"');
    quoted
}

/// A path as a systemd setting takes it (whole line, no quoting): `%` is escaped; a control
/// character (a newline would start a new setting) cannot be written at all, so such a path
/// is refused.
fn systemd_path(path: &Path) -> Result<String, Error> {
    let text = path.to_string_lossy();
    if text.chars().any(char::is_control) {
        return Err(Error::ServicePath {
            path: path.to_path_buf(),
        });
    }
    Ok(systemd_specifiers(&text))
}

/// The repository for the unit's description: free text, so control characters become spaces.
fn systemd_description(root: &Path) -> String {
    let text: String = root
        .to_string_lossy()
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    systemd_specifiers(text.trim_end_matches('\\'))
}

fn systemd_specifiers(text: &str) -> String {
    text.replace('%', "%%")
}

fn xml_escape(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => escaped.push_str("&amp;"),
            '<' => escaped.push_str("&lt;"),
            '>' => escaped.push_str("&gt;"),
            '"' => escaped.push_str("&quot;"),
            '\'' => escaped.push_str("&apos;"),
            c => escaped.push(c),
        }
    }
    escaped
}

fn words(words: &[&str]) -> Vec<String> {
    words.iter().map(|w| w.to_string()).collect()
}

fn shell_line(commands: &[Vec<String>]) -> String {
    commands
        .iter()
        .map(|command| {
            command
                .iter()
                .map(|word| shell_quote(word))
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect::<Vec<_>>()
        .join(" && ")
}

/// Runs the commands in turn, stopping at the first that fails.
fn run_all(commands: &[Vec<String>]) -> Result<(), String> {
    for command in commands {
        let output = Command::new(&command[0])
            .args(&command[1..])
            .stdin(Stdio::null())
            .output()
            .map_err(|e| format!("cannot run {}: {e}", command[0]))?;
        if !output.status.success() {
            let stderr = String::from_utf8_lossy(&output.stderr);
            return Err(format!("`{}` failed: {}", command.join(" "), stderr.trim()));
        }
    }
    Ok(())
}

fn on_path(program: &str) -> bool {
    std::env::var_os("PATH").is_some_and(|paths| {
        std::env::split_paths(&paths).any(|dir| files::is_executable(&dir.join(program)))
    })
}
