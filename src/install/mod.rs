//! `cairn install` / `cairn uninstall`: registers cairn with coding assistants (MCP server
//! entries, Claude Code hooks, instruction blocks) and as a user service, backing up every
//! file it changes so that uninstall gives back exactly what was there.
//!
//! Every change is planned before anything is written: a config that does not parse stops the
//! whole install with an error naming the file, and nothing is touched.

mod block;
mod clients;
mod codex;
mod doctor;
mod files;
mod jsonc;
mod launch;
mod manifest;
mod outcome;
mod piece;
mod service;
mod shell;

use std::path::{Path, PathBuf};

use launch::Launch;

pub use clients::{Client, detect_clients, parse_clients};
pub use doctor::{Check, check};
pub use outcome::{Action, Item, Outcome, Step};

use crate::datadir::DataDir;
use crate::running::ensure_token;
use clients::Target;
use manifest::{Manifest, Record, hash};
use piece::{Kind, Piece};
use service::{Commands, Manager, ServiceRecord};

/// Where cairn is installed from and to.
#[derive(Debug, Clone)]
pub struct Setup {
    /// The repository's root.
    pub repo_root: PathBuf,
    /// The user's home directory (user-level configs and the service file live under it).
    pub home: PathBuf,
    /// The absolute path of the running cairn binary: what the assistants and the service
    /// run, or, when it runs from a package runner's cache, the runner ([`launch::Launch`]).
    pub binary: PathBuf,
    /// cairn's data directory for this repository (outside it): the token, the install
    /// manifest and the backups.
    pub data_dir: PathBuf,
    /// cairn's data home (`$XDG_DATA_HOME/cairn`): the registry of the repositories the
    /// user's daemon serves, and that daemon's log. `None`: the repository is not registered.
    pub data_home: Option<PathBuf>,
}

/// What to install or uninstall.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// The assistants; empty means the ones detected (install) or everything recorded
    /// (uninstall).
    pub clients: Vec<Client>,
    /// Also install (or uninstall) the user service that runs `cairn daemon`.
    pub service: bool,
    /// Also install the user service that runs the user's daemon (`cairn daemon --user`) for
    /// every registered repository; uninstall keeps it while other repositories are registered.
    pub user_service: bool,
    /// Compute and report the changes without making them.
    pub dry_run: bool,
}

/// Why an install or uninstall could not go ahead.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A config does not parse; nothing was written.
    #[error("{} is not valid {format} (line {line}, column {column}: {message})", path.display())]
    Syntax {
        path: PathBuf,
        format: &'static str,
        line: usize,
        column: usize,
        message: String,
    },
    /// A config parses but holds something other than expected where cairn writes.
    #[error("{}: `{key}` is not {expected}", path.display())]
    Shape {
        path: PathBuf,
        key: String,
        expected: &'static str,
    },
    /// An instruction file has a begin marker and no end marker.
    #[error("{}: a `<!-- cairn:begin -->` marker has no `<!-- cairn:end -->` after it", path.display())]
    OpenBlock { path: PathBuf },
    /// A file cairn would edit is not text.
    #[error("{} is not UTF-8 text", path.display())]
    NotText { path: PathBuf },
    /// A file could not be read.
    #[error("cannot read {}: {source}", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    /// A file could not be written or removed.
    #[error("cannot write {}: {source}", path.display())]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    /// A file cairn would write is a symbolic link; cairn never writes through one.
    #[error(
        "{} is a symbolic link (to {}): cairn does not write through links, which a repository can ship pointing anywhere; replace it with a regular file, or add cairn's entry by hand",
        path.display(),
        target.display()
    )]
    Link { path: PathBuf, target: PathBuf },
    /// A file cairn would write resolves outside the directory it belongs to.
    #[error(
        "{} resolves to {}, outside {}: a directory on the way is a link out; cairn writes only inside it",
        path.display(),
        resolved.display(),
        within.display()
    )]
    Escapes {
        path: PathBuf,
        resolved: PathBuf,
        within: PathBuf,
    },
    /// A path the systemd unit needs holds a character systemd cannot take there.
    #[error(
        "{:?} holds a control character (a newline, say), which a systemd unit cannot express in a path; move it to a path without one, or install without --service",
        path
    )]
    ServicePath { path: PathBuf },
    /// The repository has the other kind of service installed.
    #[error(
        "the service {installed} is installed for this repository; `cairn uninstall --service` first, then install the other kind"
    )]
    ServiceSwitch { installed: String },
    /// The user's daemon needs cairn's data home, and the system has none.
    #[error("this system has no data directory (no $XDG_DATA_HOME or home) for the user daemon")]
    NoDataHome,
    /// The registry of the user daemon's repositories could not be read or written.
    #[error("{0:#}")]
    Registry(anyhow::Error),
    /// `install.json` in the data directory does not parse.
    #[error("the install record {} is unreadable: {message}", path.display())]
    Manifest { path: PathBuf, message: String },
    /// A `--client` name cairn does not know.
    #[error("unknown client `{0}` (expected claude, cursor, codex, windsurf, gemini or all)")]
    UnknownClient(String),
    /// No client was named and none was found in use.
    #[error(
        "no assistant found in this repository or home directory; name one with --client \
         (claude, cursor, codex, windsurf, gemini or all)"
    )]
    NoClient,
}

/// Registers cairn with the chosen assistants (and as a service), backing up what it changes.
/// Running it again changes nothing.
pub fn install(setup: &Setup, options: &Options) -> anyhow::Result<Outcome> {
    Ok(install_with(
        setup,
        options,
        Manager::current(),
        service::commands,
    )?)
}

/// Takes out what [`install`] put in: a file as cairn left it gets its original bytes back (or
/// goes, if cairn created it); a file edited since loses only cairn's entries.
pub fn uninstall(setup: &Setup, options: &Options) -> anyhow::Result<Outcome> {
    Ok(uninstall_with(setup, options, service::commands)?)
}

/// A file install will write, worked out before anything is written.
struct Change {
    target: Target,
    before: Option<Vec<u8>>,
    after: Vec<u8>,
    action: Action,
}

/// A file uninstall will put back, clean or delete, worked out before anything is written.
struct Undo {
    client: Option<Client>,
    item: Item,
    path: PathBuf,
    /// The directory the file must stay inside.
    within: PathBuf,
    /// The bytes to leave in the file; `None` deletes it.
    after: Option<Vec<u8>>,
    action: Action,
    /// What the manifest says about the file, if anything.
    record: Option<Record>,
}

fn install_with(
    setup: &Setup,
    options: &Options,
    manager: Manager,
    commands: impl FnOnce(Manager) -> Commands,
) -> Result<Outcome, Error> {
    let clients = if options.clients.is_empty() {
        detect_clients(setup)
    } else {
        unique(&options.clients)
    };
    if clients.is_empty() && !options.service && !options.user_service {
        return Err(Error::NoClient);
    }
    let mut targets: Vec<Target> = clients
        .iter()
        .flat_map(|&client| clients::targets(setup, client))
        .collect();
    let service = chosen_service(setup, options, manager);
    if let Some(service) = &service {
        targets.push(service::target(setup, manager, service.user)?);
    }
    let mut manifest = Manifest::load(&setup.data_dir)?;
    if let (Some(installed), Some(wanted)) = (&manifest.service, &service)
        && installed.user != wanted.user
    {
        return Err(Error::ServiceSwitch {
            installed: installed.name.clone(),
        });
    }
    if options.user_service
        && let Some(home) = &setup.data_home
    {
        // The user's daemon serves from the registry: one that cannot be read stops this
        // install before anything is written.
        crate::running::registry::registered(home).map_err(Error::Registry)?;
    }
    let changes = targets
        .into_iter()
        .map(plan_change)
        .collect::<Result<Vec<_>, _>>()?;

    let mut outcome = Outcome::new(options.dry_run);
    let token = DataDir::at(&setup.data_dir).token();
    let token_action = if token.exists() {
        Action::Unchanged
    } else {
        Action::Created
    };
    if options.dry_run {
        outcome.steps.extend(changes.into_iter().map(Change::step));
        outcome
            .steps
            .push(Step::file(None, Item::Token, token, token_action));
        outcome
            .steps
            .extend(registered_step(setup, options, true, true)?);
        if let Some(service) = &service {
            outcome
                .steps
                .push(Step::command(Action::Ran, service.enable_command(), None));
        }
        return Ok(outcome);
    }

    for change in changes {
        write_change(setup, &mut manifest, &change)?;
        outcome.steps.push(change.step());
    }
    ensure_token(&setup.data_dir).map_err(|source| Error::Write {
        path: token.clone(),
        source,
    })?;
    outcome
        .steps
        .push(Step::file(None, Item::Token, token, token_action));
    outcome
        .steps
        .extend(registered_step(setup, options, true, false)?);
    if let Some(service) = service {
        let command = service.enable_command();
        let step = match commands(manager) {
            Commands::Run => match service.enable() {
                Ok(()) => Step::command(Action::Ran, command, None),
                Err(why) => Step::command(Action::Failed, command, Some(why)),
            },
            Commands::Show(why) => Step::command(Action::Manual, command, Some(why)),
        };
        outcome.steps.push(step);
        if manifest.service.as_ref() != Some(&service) {
            manifest.service = Some(service);
            manifest.save(&setup.data_dir)?;
        }
    }
    Ok(outcome)
}

/// The service an install adds: the user's daemon's, this repository's own, or none.
fn chosen_service(setup: &Setup, options: &Options, manager: Manager) -> Option<ServiceRecord> {
    if options.user_service {
        Some(ServiceRecord::user(setup, manager))
    } else if options.service {
        Some(ServiceRecord::new(setup, manager))
    } else {
        None
    }
}

/// The registration with the user's daemon (`add`) or its removal. A registry that cannot be
/// read or written fails only an install of the user's daemon; otherwise it is left as it
/// is, said.
fn registered_step(
    setup: &Setup,
    options: &Options,
    add: bool,
    planned: bool,
) -> Result<Option<Step>, Error> {
    match registration(setup, add, planned) {
        Err(Error::Registry(e)) if !options.user_service => {
            let home = setup.data_home.clone().unwrap_or_default();
            let mut step = Step::file(
                None,
                Item::Registry,
                home.join(crate::running::registry::FILE),
                Action::Kept,
            );
            step.detail = Some(format!("left as it is: {e:#}"));
            Ok(Some(step))
        }
        other => other,
    }
}

/// Registers the repository with the user's daemon (`add`) or removes it, as a step (none
/// without a data home). A dry run (`planned`) only says what it would do.
fn registration(setup: &Setup, add: bool, planned: bool) -> Result<Option<Step>, Error> {
    use crate::running::registry;
    let Some(home) = &setup.data_home else {
        return Ok(None);
    };
    let path = home.join(registry::FILE);
    // The daemon reading the registry runs elsewhere: a data directory given relative to
    // this command's directory is written whole.
    let data_dir = std::path::absolute(&setup.data_dir).map_err(|source| Error::Write {
        path: setup.data_dir.clone(),
        source,
    })?;
    let entries = registry::registered(home).map_err(Error::Registry)?;
    let listed = entries.iter().find(|r| r.root == setup.repo_root);
    let changes = match listed {
        Some(entry) => !add || entry.data_dir != data_dir,
        None => add,
    };
    if !planned && changes {
        let changed = if add {
            registry::register(home, &setup.repo_root, &data_dir)
        } else {
            registry::unregister(home, &setup.repo_root)
        };
        changed.map_err(Error::Registry)?;
    }
    let action = match (changes, add) {
        (false, _) => Action::Unchanged,
        (true, true) if listed.is_some() => Action::Updated,
        (true, true) => Action::Created,
        (true, false) => Action::Removed,
    };
    Ok(Some(Step::file(None, Item::Registry, path, action)))
}

/// The other repositories the user's daemon serves: while there are any, its service stays.
fn others_registered(setup: &Setup) -> Result<usize, Error> {
    let Some(home) = &setup.data_home else {
        return Ok(0);
    };
    Ok(crate::running::registry::registered(home)
        .map_err(Error::Registry)?
        .iter()
        // A registered repository that is gone keeps nothing running.
        .filter(|r| r.root != setup.repo_root && r.root.is_dir())
        .count())
}

fn plan_change(target: Target) -> Result<Change, Error> {
    files::confine(&target.path, &target.within)?;
    let before = files::read(&target.path)?;
    let text = before
        .as_deref()
        .map(|bytes| files::text(&target.path, bytes))
        .transpose()?;
    let after = target.piece.apply(&target.path, text)?.into_bytes();
    let action = match &before {
        Some(bytes) if *bytes == after => Action::Unchanged,
        Some(_) if target.piece.kind() == Kind::File => Action::Updated,
        Some(_) => Action::Merged,
        None => Action::Created,
    };
    Ok(Change {
        target,
        before,
        after,
        action,
    })
}

/// Records the file (backing up its original bytes the first time), then writes it.
fn write_change(setup: &Setup, manifest: &mut Manifest, change: &Change) -> Result<(), Error> {
    let data_dir = &setup.data_dir;
    let path = &change.target.path;
    if change.action == Action::Unchanged {
        // Already as cairn would write it; if the user changed it since cairn last wrote it,
        // an uninstall must keep their change.
        if let (Some(record), Some(before)) = (manifest.record_mut(path), &change.before) {
            let current = hash(before);
            if record.written != current {
                record.written = current;
                record.edited_since = true;
                manifest.save(data_dir)?;
            }
        }
        return Ok(());
    }
    manifest.prepare(data_dir, &change.target, change.before.as_deref())?;
    manifest.save(data_dir)?;
    let within = &change.target.within;
    let created = files::write(path, &change.after, within, readers(setup, within))?;
    let record = manifest.record_mut(path).expect("prepare records the file");
    record.written = hash(&change.after);
    record.created_dirs.extend(created);
    manifest.save(data_dir)
}

impl Change {
    fn step(self) -> Step {
        Step::file(
            self.target.client,
            self.target.item,
            self.target.path,
            self.action,
        )
    }
}

fn uninstall_with(
    setup: &Setup,
    options: &Options,
    commands: impl FnOnce(Manager) -> Commands,
) -> Result<Outcome, Error> {
    let mut manifest = Manifest::load(&setup.data_dir)?;
    let everything = options.clients.is_empty();
    let with_service = everything || options.service || options.user_service;
    let mut undos = plan_undos(setup, &manifest, options, with_service)?;
    let mut service = manifest.service.clone().filter(|_| with_service);
    let mut outcome = Outcome::new(options.dry_run);

    // The user's daemon's service is shared: it stays while other repositories are
    // registered, and goes with the last one even if another repository's install wrote it
    // (when it is exactly as cairn writes it).
    if let Some(user) = service.clone().filter(|s| s.user) {
        let others = others_registered(setup)?;
        if others > 0 {
            undos.retain(|undo| undo.path != user.path);
            if !options.dry_run {
                manifest.forget(&setup.data_dir, &user.path)?;
                manifest.service = None;
            }
            let mut kept = Step::file(None, Item::Service, user.path.clone(), Action::Kept);
            kept.detail = Some(format!(
                "the user's daemon serves {others} other registered repositor{}",
                if others == 1 { "y" } else { "ies" }
            ));
            outcome.steps.push(kept);
            service = None;
        } else if !undos.iter().any(|undo| undo.path == user.path)
            && let Some(undo) =
                plan_untracked_undo(setup, service::target(setup, user.manager, true)?)?
        {
            undos.push(undo);
        }
    } else if everything && service.is_none() && setup.data_home.is_some() {
        // The last registered repository goes: the user's daemon, installed by another
        // repository's install, goes with it when it is exactly as cairn writes it.
        let user = ServiceRecord::user(setup, Manager::current());
        let last = others_registered(setup)? == 0;
        if last
            && let Some(undo) =
                plan_untracked_undo(setup, service::target(setup, user.manager, true)?)?
            && undo.action == Action::Removed
        {
            undos.push(undo);
            service = Some(user);
        }
    }
    if options.dry_run {
        if let Some(service) = &service {
            outcome
                .steps
                .push(Step::command(Action::Ran, service.disable_command(), None));
        }
        outcome.steps.extend(undos.into_iter().map(Undo::step));
        if everything {
            outcome
                .steps
                .extend(registered_step(setup, options, false, true)?);
        }
        return Ok(outcome);
    }

    let how = service.as_ref().map(|s| commands(s.manager));
    if let (Some(service), Some(how)) = (&service, &how) {
        outcome.steps.push(disable(service, how));
    }
    let mut created_dirs = Vec::new();
    for undo in undos {
        apply_undo(setup, &mut manifest, &undo, &mut created_dirs)?;
        outcome.steps.push(undo.step());
    }
    files::remove_empty_dirs(created_dirs);
    if let Some(service) = service {
        if how == Some(Commands::Run) {
            service.forget_removed();
        }
        manifest.service = None;
    }
    manifest.save(&setup.data_dir)?;
    if everything {
        outcome
            .steps
            .extend(registered_step(setup, options, false, false)?);
    }
    Ok(outcome)
}

/// The undos an uninstall makes: of every recorded file of the chosen clients (all of
/// them when none is named) and of the service's files `with_service`, and, for named
/// clients, of cairn's pieces in their files that no record holds.
fn plan_undos(
    setup: &Setup,
    manifest: &Manifest,
    options: &Options,
    with_service: bool,
) -> Result<Vec<Undo>, Error> {
    let everything = options.clients.is_empty();
    let clients = if everything {
        manifest.clients()
    } else {
        unique(&options.clients)
    };
    let mut undos = Vec::new();
    for record in &manifest.files {
        let chosen = match record.client {
            Some(client) => clients.contains(&client),
            None => with_service,
        };
        if chosen {
            undos.push(plan_undo(setup, record)?);
        }
    }
    if !everything {
        for target in clients.iter().flat_map(|&c| clients::targets(setup, c)) {
            if manifest.record(&target.path).is_none()
                && let Some(undo) = plan_untracked_undo(setup, target)?
            {
                undos.push(undo);
            }
        }
    }
    Ok(undos)
}

/// Disables the service, or says how to: by running its manager's command (`how`), or by
/// showing it.
fn disable(service: &ServiceRecord, how: &Commands) -> Step {
    let command = service.disable_command();
    match how {
        Commands::Run => match service.disable() {
            Ok(()) => Step::command(Action::Ran, command, None),
            Err(why) => Step::command(Action::Failed, command, Some(why)),
        },
        Commands::Show(why) => Step::command(Action::Manual, command, Some(why.clone())),
    }
}

/// Makes one undo: writes the file back (or removes it), and forgets its record, keeping the
/// directories cairn created for it in `created_dirs`.
fn apply_undo(
    setup: &Setup,
    manifest: &mut Manifest,
    undo: &Undo,
    created_dirs: &mut Vec<PathBuf>,
) -> Result<(), Error> {
    if !matches!(undo.action, Action::Unchanged | Action::Kept) {
        match &undo.after {
            Some(bytes) => {
                files::write(
                    &undo.path,
                    bytes,
                    &undo.within,
                    readers(setup, &undo.within),
                )?;
            }
            None => files::remove(&undo.path)?,
        }
    }
    if let Some(record) = &undo.record {
        created_dirs.extend(record.created_dirs.iter().cloned());
        manifest.forget(&setup.data_dir, &record.path)?;
    }
    Ok(())
}

/// How to undo one recorded file: its original bytes back (or the file gone, if cairn created
/// it) when it is as cairn left it; otherwise only cairn's piece taken out.
fn plan_undo(setup: &Setup, record: &Record) -> Result<Undo, Error> {
    let within = boundary(setup, &record.path);
    files::confine(&record.path, &within)?;
    let undo = |after, action| Undo {
        client: record.client,
        item: record.item,
        path: record.path.clone(),
        within: within.clone(),
        after,
        action,
        record: Some(record.clone()),
    };
    let Some(current) = files::read(&record.path)? else {
        return Ok(undo(None, Action::Unchanged));
    };
    let as_left = !record.edited_since && hash(&current) == record.written;
    if record.kind == Kind::File && !as_left {
        // A whole file of cairn's that the user changed is theirs now.
        return Ok(undo(Some(current), Action::Kept));
    }
    let original = manifest::read_backup(&setup.data_dir, record)?;
    let (after, action) = match (as_left, record.existed, original) {
        (true, false, _) => (None, Action::Removed),
        (true, true, Some(original)) => (Some(original), Action::Restored),
        _ => {
            let text = files::text(&record.path, &current)?;
            let stripped =
                record
                    .kind
                    .strip(&record.path, text, &Launch::for_binary(&setup.binary))?;
            if stripped.empty && !record.existed {
                (None, Action::Removed)
            } else {
                (Some(stripped.text.into_bytes()), Action::Cleaned)
            }
        }
    };
    if after.as_deref() == Some(current.as_slice()) {
        return Ok(undo(after, Action::Unchanged));
    }
    Ok(undo(after, action))
}

/// cairn's piece taken out of a file the manifest does not know (installed by hand, or by a
/// cairn without a manifest). A whole file of cairn's goes only if it is exactly as cairn
/// writes it.
fn plan_untracked_undo(setup: &Setup, target: Target) -> Result<Option<Undo>, Error> {
    files::confine(&target.path, &target.within)?;
    let Some(current) = files::read(&target.path)? else {
        return Ok(None);
    };
    let text = files::text(&target.path, &current)?;
    let after = match &target.piece {
        Piece::File(text) if text.as_bytes() == current => None,
        Piece::File(_) => Some(current.clone()),
        piece => {
            let stripped =
                piece
                    .kind()
                    .strip(&target.path, text, &Launch::for_binary(&setup.binary))?;
            Some(stripped.text.into_bytes())
        }
    };
    let action = match &after {
        None => Action::Removed,
        Some(bytes) if *bytes == current => Action::Unchanged,
        Some(_) => Action::Cleaned,
    };
    Ok(Some(Undo {
        client: target.client,
        item: target.item,
        path: target.path,
        within: target.within,
        after,
        action,
        record: None,
    }))
}

/// Who reads the files written inside `within`: everyone for the repository's, the user
/// alone for those in the user's own configuration directories.
fn readers(setup: &Setup, within: &Path) -> files::Readers {
    if within == setup.repo_root {
        files::Readers::Everyone
    } else {
        files::Readers::Owner
    }
}

/// The directory a recorded file must stay inside: that of the target it was written for
/// (found among every client's and the service's), else its own directory.
fn boundary(setup: &Setup, path: &Path) -> PathBuf {
    Client::ALL
        .into_iter()
        .flat_map(|client| clients::targets(setup, client))
        .find(|target| target.path == path)
        .map(|target| target.within)
        .or_else(|| {
            [Manager::Systemd, Manager::Launchd]
                .into_iter()
                .flat_map(|manager| {
                    [
                        ServiceRecord::new(setup, manager),
                        ServiceRecord::user(setup, manager),
                    ]
                })
                .find(|service| service.path == path)
                .map(|service| service.within())
        })
        .unwrap_or_else(|| path.parent().unwrap_or(path).to_path_buf())
}

impl Undo {
    fn step(self) -> Step {
        Step::file(self.client, self.item, self.path, self.action)
    }
}

/// The clients, each once, in the order given.
fn unique(clients: &[Client]) -> Vec<Client> {
    let mut unique = Vec::new();
    for &client in clients {
        if !unique.contains(&client) {
            unique.push(client);
        }
    }
    unique
}

#[cfg(test)]
mod tests;
