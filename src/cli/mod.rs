//! The command line: its shape (the clap definitions here) and one file per command group,
//! each mapping arguments to a use case's request and its answer to output.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use cairn::context::Include;

pub mod bootstrap;
pub mod context;
pub mod doctor;
pub mod index;
pub mod install;
pub mod learn;
pub mod memory;
pub mod output;
pub mod review;
pub mod team;
pub mod ui;

/// cairn: repository and code-review memory for coding assistants, over MCP.
#[derive(Debug, Parser)]
#[command(name = "cairn", version, about)]
pub struct Cli {
    #[command(flatten)]
    pub global: Global,
    #[command(subcommand)]
    pub command: Command,
}

/// Options every command takes.
#[derive(Debug, Args)]
pub struct Global {
    /// Repository to work on (default: the current directory's repository).
    #[arg(long, global = true, env = "CAIRN_REPO")]
    pub repo: Option<PathBuf>,
    /// Where cairn keeps this repository's data (default: $XDG_DATA_HOME/cairn/repos/…).
    #[arg(long, global = true, env = "CAIRN_DATA_DIR")]
    pub data_dir: Option<PathBuf>,
    /// all-MiniLM-L6-v2 model directory for semantic memory search (default: cairn.toml's
    /// [memory] model_dir, else ~/.cache/cairn/models/all-MiniLM-L6-v2 if present).
    #[arg(long, global = true, env = "CAIRN_MODEL_DIR")]
    pub model_dir: Option<PathBuf>,
    /// Where memories live: `embedded` (the default) or a team server, `ws://host:port` or
    /// `wss://host` (credentials come from CAIRN_TEAM_DEVELOPER / CAIRN_TEAM_PASSWORD or a
    /// 0600 credentials file, never from the command line).
    #[arg(long, global = true, env = "CAIRN_DB")]
    pub db: Option<String>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Index the repository (incremental: only changed files are parsed again).
    Index {
        /// Print the summary as JSON.
        #[arg(long)]
        json: bool,
        /// Seconds to wait for another index run to finish before giving up.
        #[arg(long, default_value_t = 60)]
        wait: u64,
        /// No progress line (it is drawn only on a terminal, for runs over a second).
        #[arg(long, short)]
        quiet: bool,
        /// Discard the graph store and index afresh (for a damaged store); memories and
        /// reviews are kept.
        #[arg(long)]
        rebuild: bool,
    },
    /// Serve MCP over stdio (for an assistant to spawn).
    Serve,
    /// Print the context pack (what `get_context` answers).
    Context(ContextArgs),
    /// Print everything known about a file or symbol (what `expand` answers).
    Expand(ExpandArgs),
    /// Review memories: add, search, list, forget, show, history, export, import.
    Memory {
        #[command(subcommand)]
        action: Box<MemoryCommand>,
    },
    /// Review briefing for a change (what `review_diff` answers): the working tree against
    /// HEAD by default, `--base/--head` revisions, or a unified diff (`--diff FILE`, `-` for
    /// stdin).
    Review(ReviewArgs),
    /// Store a review outcome from JSON (the `record_review` arguments; a file or `-`).
    RecordReview {
        file: PathBuf,
        #[arg(long)]
        json: bool,
    },
    /// Detect the frameworks the manifests name (pyproject.toml, requirements*.txt, setup.cfg,
    /// package.json, go.mod, Cargo.toml, pom.xml, build.gradle, composer.json, Gemfile) and
    /// seed the framework knowledge cairn ships about them; a second run writes nothing.
    Bootstrap {
        /// List what would be written, write nothing.
        #[arg(long)]
        dry_run: bool,
        #[arg(long)]
        json: bool,
    },
    /// Learn what the team already knows: `cairn learn reviews FILE…` records the review
    /// history a code host's CLI exported; `cairn learn repo` proposes what the repository
    /// holds (decision records, guides, reverts).
    Learn {
        #[command(subcommand)]
        what: LearnCommand,
    },
    /// Rule effectiveness: findings per category, how many were rejected, and the
    /// high-rejection categories with their rejection patterns.
    Rules(RulesArgs),
    /// Check the store, the index, the daemon, the token and the client registrations, and
    /// say what to fix.
    Doctor,
    /// Keep the index in step with the working tree and serve MCP over streamable HTTP on
    /// 127.0.0.1 (one daemon per repository; runs until SIGTERM/SIGINT).
    Daemon {
        /// TCP port (default: cairn.toml's [daemon] port, else a free one).
        #[arg(long)]
        port: Option<u16>,
        /// One daemon for every repository registered by `cairn install` (listed in
        /// `$XDG_DATA_HOME/cairn/repositories.json`), each loaded when first asked for.
        #[arg(long)]
        user: bool,
        /// With --user: past this resident size (MB), the least recently used repositories
        /// without an open session are unloaded.
        #[arg(long, default_value_t = 1536, requires = "user")]
        memory_mb: u64,
        /// With --user: a repository without an open session unused this long is unloaded.
        #[arg(long, default_value_t = 30, requires = "user")]
        idle_minutes: u64,
        /// With --user: cairn's data home, where the registry is (default
        /// `$XDG_DATA_HOME/cairn`; the user service names it).
        #[arg(long, requires = "user")]
        data_home: Option<PathBuf>,
    },
    /// Open the memories page in the browser, logged in (starts the daemon if none runs).
    Ui {
        /// Print the one-time log-in address instead of opening it.
        #[arg(long)]
        no_open: bool,
    },
    /// Whether the daemon runs, where it listens, and how fresh the index is.
    Status {
        #[arg(long)]
        json: bool,
    },
    /// Register cairn with assistants (MCP server, session-start hooks, instructions) and
    /// optionally run the daemon as a user service. Backs up what it changes; re-runs are
    /// idempotent.
    Install(InstallArgs),
    /// Remove exactly what `cairn install` added (restoring files byte for byte when they
    /// were not edited since).
    Uninstall(UninstallArgs),
    /// Record a Claude Code hook event read from stdin; on SessionStart print the context.
    /// Always exits 0.
    Hook,
    /// Team mode: set up the team server, manage members, sync now.
    Team {
        #[command(subcommand)]
        action: TeamCommand,
    },
}

/// What `cairn learn` learns from.
#[derive(Debug, Subcommand)]
pub enum LearnCommand {
    /// Record the review history of pull or merge requests from the JSON `gh api --paginate`
    /// or `glab api --paginate` wrote (pull requests, review comments and reviews; merge
    /// requests and their discussions), files in any order. Each finished request becomes a
    /// recorded review; learning the same files again changes nothing.
    Reviews {
        /// The export files.
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// Read and decide, write nothing.
        #[arg(long)]
        dry_run: bool,
        #[arg(long)]
        json: bool,
    },
    /// Propose what the repository holds as pending memories, with their evidence: decision
    /// records as decisions, contributing and style guide sections as project patterns, files
    /// whose changes were reverted or quickly fixed again as risky modules. Nothing is served
    /// until a person approves it; a second run proposes nothing already proposed, approved or
    /// rejected.
    Repo {
        /// Read and decide, write nothing.
        #[arg(long)]
        dry_run: bool,
        #[arg(long)]
        json: bool,
    },
    /// Print the brief that asks an assistant to phrase what `cairn learn` proposed (what the
    /// `phrase_learnings` prompt gives): each waiting proposal with its evidence, to be written
    /// with `remember`, superseding the quote; the phrased memory waits for a person too.
    Phrase {
        #[arg(long)]
        json: bool,
    },
}

// The arguments of the larger commands (their help text is the command's, above).

#[derive(Debug, Args)]
pub struct ContextArgs {
    /// Paths or a task sentence to rank first.
    #[arg(long)]
    pub focus: Option<String>,
    #[arg(long)]
    pub max_tokens: Option<usize>,
    /// Print the structured report as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct ExpandArgs {
    /// `path`, `path::Symbol` or `path::Class.method`.
    pub target: String,
    /// Sections: source, callers, callees, tests, history, memories.
    #[arg(long, value_delimiter = ',', value_parser = parse_include)]
    pub include: Vec<Include>,
    #[arg(long)]
    pub max_tokens: Option<usize>,
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct ReviewArgs {
    #[arg(long, conflicts_with = "diff")]
    pub base: Option<String>,
    #[arg(long, conflicts_with = "diff")]
    pub head: Option<String>,
    /// A unified diff file, or `-` to read it from stdin.
    #[arg(long)]
    pub diff: Option<PathBuf>,
    /// The change's author (default: from git).
    #[arg(long)]
    pub author: Option<String>,
    #[arg(long)]
    pub max_tokens: Option<usize>,
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct RulesArgs {
    /// Fewest findings before a category can count as high-rejection.
    #[arg(long, default_value_t = 3)]
    pub min_sample: u64,
    /// Lowest rejection rate (0–1) that counts as high.
    #[arg(long, default_value_t = 0.5)]
    pub min_rate: f64,
    /// Mark CATEGORY's rejection patterns as addressed (the guidelines were updated).
    #[arg(long, value_name = "CATEGORY", conflicts_with_all = ["propose", "record"])]
    pub addressed: Option<String>,
    /// Print the brief that asks for guideline changes (what the `refine_guidelines` prompt
    /// holds): high-rejection categories, their rejection patterns, the guideline sections.
    #[arg(long, conflicts_with = "record")]
    pub propose: bool,
    /// With --propose: a guideline file to consider (repeatable; default: those found).
    #[arg(long = "file", value_name = "PATH", requires = "propose")]
    pub files: Vec<String>,
    /// With --propose: token budget (default 6000, max 16000).
    #[arg(long, requires = "propose")]
    pub max_tokens: Option<usize>,
    /// Record a guideline change or its outcome from JSON (the `record_guideline_change`
    /// arguments; a file or `-`).
    #[arg(long, value_name = "FILE")]
    pub record: Option<PathBuf>,
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct InstallArgs {
    /// claude, cursor, codex, windsurf, gemini or all (repeatable; default: the
    /// assistants whose configuration folders exist).
    #[arg(long = "client")]
    pub clients: Vec<String>,
    /// Also install and start the daemon as a systemd user unit / launchd agent.
    #[arg(long)]
    pub service: bool,
    /// Instead, install and start one daemon for every registered repository
    /// (`cairn daemon --user`) as a user service, shared by every repository installed so.
    #[arg(long, conflicts_with = "service")]
    pub user_service: bool,
    /// Show the plan; write nothing.
    #[arg(long)]
    pub dry_run: bool,
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct UninstallArgs {
    /// Clients to remove (repeatable; default: everything installed).
    #[arg(long = "client")]
    pub clients: Vec<String>,
    #[arg(long)]
    pub dry_run: bool,
    #[arg(long)]
    pub json: bool,
}

/// `cairn team …`.
#[derive(Debug, Subcommand)]
pub enum TeamCommand {
    /// Create this repository's namespace and database on the team server and apply cairn's
    /// schema and permissions (idempotent). Signs in with CAIRN_TEAM_ADMIN_USER and
    /// CAIRN_TEAM_ADMIN_PASSWORD (the server's root user).
    Init {
        #[arg(long)]
        json: bool,
    },
    /// Add a developer to this repository's team and its organisation's database. One
    /// identity per developer per server: a new member gets a random password, written as
    /// their credentials file (mode 0600) to --output or printed; one who already signs in
    /// to this server keeps their password.
    AddMember {
        developer: String,
        #[arg(long, short = 'o')]
        output: Option<PathBuf>,
    },
    /// Give a member a new random password in every database of the server they belong to:
    /// writes their credentials file (mode 0600) to --output, or prints it.
    RotatePassword {
        developer: String,
        #[arg(long, short = 'o')]
        output: Option<PathBuf>,
    },
    /// Trust the team server this repository's cairn.toml names ([team] db, repository, org):
    /// until then cairn refuses to send credentials or memories there. Recorded outside the
    /// repository (~/.config/cairn/trusted.toml).
    Trust,
    /// Take back `cairn team trust` for this repository.
    Untrust,
    /// Remove a developer from this repository's database, and from its organisation's unless
    /// another repository keeps them there (their memories stay; says what stays readable).
    RemoveMember { developer: String },
    /// List the developers who can sign in.
    Members,
    /// Replay queued writes and pull teammates' changes now.
    Sync {
        #[arg(long)]
        json: bool,
    },
}

/// `cairn memory …`.
#[derive(Debug, Subcommand)]
pub enum MemoryCommand {
    /// Store a learning (deduplicated, secrets redacted); prints the write event.
    Add(Box<MemoryAddArgs>),
    /// Search memories (project scope, or one developer's with --developer).
    Search(MemorySearchArgs),
    /// List memories, newest first.
    List {
        #[arg(long = "type", short = 't')]
        kind: Option<String>,
        #[arg(long)]
        developer: Option<String>,
        /// Include superseded, pending and rejected memories.
        #[arg(long)]
        all: bool,
        /// Only the memories waiting for a person's approval.
        #[arg(long, conflicts_with = "all")]
        pending: bool,
        #[arg(long)]
        json: bool,
    },
    /// Approve memories waiting for approval (an assistant's under `[memory] approval`, or
    /// proposals `cairn learn` made): served from now on. Several ids are one decision: if
    /// one is not waiting, none is approved.
    Approve {
        #[arg(required = true)]
        ids: Vec<String>,
        #[arg(long)]
        json: bool,
    },
    /// Reject memories waiting for approval: kept for the record, never served (all or none,
    /// as for approve).
    Reject {
        #[arg(required = true)]
        ids: Vec<String>,
        /// Why (kept in the memory's history).
        #[arg(long)]
        reason: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// Remove a memory for good.
    Forget {
        id: String,
        #[arg(long)]
        json: bool,
    },
    /// Share one of your developer memories with the team (team mode: every member can read
    /// it; only you can change it).
    Share { id: String },
    /// Print one memory.
    Show {
        id: String,
        #[arg(long)]
        json: bool,
    },
    /// Print a memory's change history.
    History { id: String },
    /// Write every memory as JSON Lines (to stdout, or --output).
    Export {
        #[arg(long, short = 'o')]
        output: Option<PathBuf>,
    },
    /// Restore or seed memories from JSON Lines (a file, or `-` for stdin).
    Import { file: PathBuf },
}

// The arguments of the larger memory commands (their help text is the command's, above).

#[derive(Debug, Args)]
pub struct MemoryAddArgs {
    /// Memory type (project_pattern, decision, developer_pattern, developer_strength,
    /// risk_module, contributor_profile, rejection_pattern, framework_knowledge,
    /// review_outcome).
    #[arg(long = "type", short = 't')]
    pub kind: String,
    /// The learning, 1–3 sentences.
    pub content: String,
    #[arg(long)]
    pub title: Option<String>,
    /// Developer the memory belongs to (required for developer-scoped types).
    #[arg(long)]
    pub developer: Option<String>,
    /// Repo-relative path it is about (repeatable).
    #[arg(long = "path")]
    pub paths: Vec<String>,
    /// Symbol it is about, `path::Name` (repeatable).
    #[arg(long = "symbol")]
    pub symbols: Vec<String>,
    /// Id of the memory this one replaces.
    #[arg(long)]
    pub supersedes: Option<String>,
    /// review, manual, import or hook.
    #[arg(long, default_value = "manual")]
    pub source: String,
    /// PR, commit or review id.
    #[arg(long)]
    pub source_ref: Option<String>,
    /// Organisation, agent and run/session labels (optional scopes).
    #[arg(long)]
    pub org: Option<String>,
    #[arg(long)]
    pub agent: Option<String>,
    #[arg(long)]
    pub run: Option<String>,
    /// Files it applies to, a gitignore-style glob (`*.py`, `tests/**`): rejection patterns
    /// and framework knowledge.
    #[arg(long)]
    pub file_pattern: Option<String>,
    /// `repository` or `org` (default by type: cairn.toml's [memory] org_types).
    #[arg(long)]
    pub scope: Option<String>,
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct MemorySearchArgs {
    pub query: String,
    #[arg(long)]
    pub developer: Option<String>,
    /// Types to keep (repeatable).
    #[arg(long = "type", short = 't')]
    pub types: Vec<String>,
    /// Paths to favour (repeatable).
    #[arg(long = "path")]
    pub paths: Vec<String>,
    #[arg(long, default_value_t = 10)]
    pub limit: usize,
    /// Include superseded memories.
    #[arg(long)]
    pub all: bool,
    #[arg(long)]
    pub json: bool,
}

fn parse_include(text: &str) -> Result<Include, String> {
    serde_json::from_value(serde_json::Value::String(text.to_string())).map_err(|_| {
        format!(
            "unknown section {}: use source, callers, callees, tests, history, memories",
            cairn::secrets::quoted(text)
        )
    })
}
