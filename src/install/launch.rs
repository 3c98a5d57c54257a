//! How the assistants and the service start cairn: the running binary's absolute path when it
//! was installed in place (cargo, pip, pipx, a release archive, npm's global prefix), or the
//! package runner that fetched it when it runs from that runner's cache (`uvx`, `npx`,
//! `pipx run`), whose paths change on every upgrade.

use std::path::{Path, PathBuf};

use super::shell::shell_quote;

/// The command that runs cairn: a program and the arguments before cairn's own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Launch {
    /// The program: cairn's absolute path, or a runner by name (`npx`, `uvx`, `pipx`) as
    /// assistants' configs name them.
    pub program: PathBuf,
    /// What the runner needs before cairn's arguments (`-y cairn-mcp` for npx).
    pub prefix: Vec<String>,
}

/// Where cairn runs from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// A binary installed in place.
    Installed,
    /// npx's cache (`…/_npx/<hash>/node_modules/…`).
    Npx,
    /// uv's cache, as `uvx cairn-mcp` runs it (`…/uv/archive-v0/<hash>/bin/cairn`).
    Uvx,
    /// `pipx run`'s cache (`…/pipx/.cache/<hash>/bin/cairn`).
    PipxRun,
}

impl Origin {
    /// Where a binary at `exe` (symbolic links resolved) comes from.
    pub fn of(exe: &Path) -> Origin {
        let path = exe.to_string_lossy().replace('\\', "/");
        if path.contains("/_npx/") {
            Origin::Npx
        } else if path.contains("/uv/archive-v") || path.contains("/uv/cache/archive-v") {
            Origin::Uvx
        } else if path.contains("/pipx/.cache/") {
            Origin::PipxRun
        } else {
            Origin::Installed
        }
    }
}

impl Launch {
    /// The command for the binary at `exe`: itself when installed in place, else its runner.
    pub(crate) fn for_binary(exe: &Path) -> Launch {
        let runner = |program: &str, prefix: &[&str]| Launch {
            program: PathBuf::from(program),
            prefix: prefix.iter().map(|s| s.to_string()).collect(),
        };
        match Origin::of(exe) {
            Origin::Installed => Launch::binary(exe),
            Origin::Npx => runner("npx", &["-y", "cairn-mcp"]),
            Origin::Uvx => runner("uvx", &["--from", "cairn-mcp", "cairn"]),
            Origin::PipxRun => runner("pipx", &["run", "--spec", "cairn-mcp", "cairn"]),
        }
    }

    /// A binary run directly.
    pub fn binary(path: &Path) -> Launch {
        Launch {
            program: path.to_path_buf(),
            prefix: Vec::new(),
        }
    }

    /// Whether this runs a package runner rather than a binary path.
    pub(crate) fn is_runner(&self) -> bool {
        !self.prefix.is_empty()
    }

    /// The program as configs write it.
    pub(crate) fn program_text(&self) -> String {
        self.program.to_string_lossy().into_owned()
    }

    /// The arguments for cairn's subcommand `args`, after the runner's own.
    pub fn args(&self, args: &[&str]) -> Vec<String> {
        self.prefix
            .iter()
            .cloned()
            .chain(args.iter().map(|a| a.to_string()))
            .collect()
    }

    /// One shell command line running cairn's `args` (each word quoted when it needs it).
    pub fn command_line(&self, args: &[&str]) -> String {
        std::iter::once(self.program_text())
            .chain(self.args(args))
            .map(|word| shell_quote(&word))
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// This launch with its runner found on `path_dirs` (a service has no shell to search
    /// `PATH`); `None` when the runner is not there. A binary is returned as it is.
    pub fn resolved(&self, path_dirs: &[PathBuf]) -> Option<Launch> {
        if !self.is_runner() || self.program.is_absolute() {
            return Some(self.clone());
        }
        let found = path_dirs
            .iter()
            .map(|dir| dir.join(&self.program))
            .find(|candidate| super::files::is_executable(candidate))?;
        Some(Launch {
            program: found,
            prefix: self.prefix.clone(),
        })
    }

    /// Whether the program this launch names is there: an existing binary, or a runner found
    /// on `path_dirs`.
    pub fn exists(&self, path_dirs: &[PathBuf]) -> bool {
        match self.resolved(path_dirs) {
            Some(launch) => super::files::is_executable(&launch.program),
            None => false,
        }
    }
}

/// The directories of `PATH`.
pub(crate) fn path_dirs() -> Vec<PathBuf> {
    std::env::var_os("PATH")
        .map(|path| std::env::split_paths(&path).collect())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_binary_in_a_runners_cache_is_started_through_the_runner() {
        let cases = [
            ("/usr/local/bin/cairn", Origin::Installed),
            (
                "/home/a/.local/share/uv/tools/cairn-mcp/bin/cairn",
                Origin::Installed,
            ),
            (
                "/home/a/.local/pipx/venvs/cairn-mcp/bin/cairn",
                Origin::Installed,
            ),
            (
                "/home/a/.npm/_npx/1f2e/node_modules/@cairn-mcp/linux-x64-gnu/bin/cairn",
                Origin::Npx,
            ),
            ("/home/a/.cache/uv/archive-v0/Xy12/bin/cairn", Origin::Uvx),
            ("/home/a/.local/pipx/.cache/9a8b/bin/cairn", Origin::PipxRun),
        ];
        for (path, origin) in cases {
            assert_eq!(Origin::of(Path::new(path)), origin, "{path}");
        }
        let npx = Launch::for_binary(Path::new(cases[3].0));
        assert_eq!(npx.command_line(&["serve"]), "npx -y cairn-mcp serve");
        let uvx = Launch::for_binary(Path::new(cases[4].0));
        assert_eq!(
            uvx.args(&["hook"]),
            ["--from", "cairn-mcp", "cairn", "hook"]
        );
        let direct = Launch::for_binary(Path::new("/opt/my tools/cairn"));
        assert_eq!(direct.command_line(&["hook"]), "'/opt/my tools/cairn' hook");
        assert!(!direct.is_runner());
    }

    #[test]
    fn a_runner_is_resolved_on_the_path_and_a_missing_one_is_not() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let npx = dir.path().join("npx");
        std::fs::write(&npx, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&npx, std::fs::Permissions::from_mode(0o755)).unwrap();
        let launch = Launch::for_binary(Path::new("/x/_npx/1/node_modules/a/bin/cairn"));
        let dirs = vec![PathBuf::from("/nonexistent"), dir.path().to_path_buf()];
        assert_eq!(launch.resolved(&dirs).unwrap().program, npx);
        assert!(launch.exists(&dirs));
        assert!(!launch.exists(&[PathBuf::from("/nonexistent")]));
        let gone = Launch::binary(&dir.path().join("cairn"));
        assert!(!gone.exists(&dirs));
    }
}
