//! `cairn daemon --user`: one daemon for every repository `cairn install` registered, over one
//! port, each repository reached with its own token and through its own socket, loaded on
//! demand and unloaded when idle or over the memory bound.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::mcp::{call, connect, text};
use crate::support::{TestRepo, run};

const DEADLINE: Duration = Duration::from_secs(60);

/// A user's home for the test: cairn's data home (the registry, the user daemon's record) and
/// the files install writes stay in it.
struct Home {
    dir: tempfile::TempDir,
}

impl Home {
    fn new() -> Home {
        Home {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    fn xdg_data(&self) -> PathBuf {
        self.dir.path().join("xdg")
    }

    /// cairn's data home.
    fn cairn(&self) -> PathBuf {
        self.xdg_data().join("cairn")
    }

    fn command(&self, repo: &TestRepo) -> Command {
        let mut command = repo.cairn_command(repo.data_dir());
        command
            .env("HOME", self.dir.path())
            .env("XDG_DATA_HOME", self.xdg_data())
            .env("XDG_CONFIG_HOME", self.dir.path().join("config"));
        command
    }

    /// `cairn install` for Cursor in `repo`: registers it.
    fn install(&self, repo: &TestRepo) {
        run(self.command(repo).args(["install", "--client", "cursor"]));
    }

    fn uninstall(&self, repo: &TestRepo) {
        run(self.command(repo).arg("uninstall"));
    }

    /// `cairn daemon --user` with these options; `repo` only gives the environment (the user
    /// daemon serves the registry, wherever it starts).
    fn start(&self, repo: &TestRepo, options: &[&str]) -> UserDaemon {
        self.start_with(repo, options, &[])
    }

    /// [`Home::start`] with these environment variables set.
    fn start_with(&self, repo: &TestRepo, options: &[&str], env: &[(&str, &Path)]) -> UserDaemon {
        let log_path = self
            .dir
            .path()
            .join(format!("user-daemon-{}.log", rand_suffix()));
        let log = std::fs::File::create(&log_path).unwrap();
        let child = self
            .command(repo)
            .env("CAIRN_LOG", "info")
            .envs(env.iter().copied())
            .args(["daemon", "--user"])
            .args(options)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .unwrap();
        let mut daemon = UserDaemon {
            child,
            port: 0,
            log: log_path,
        };
        let pid = daemon.child.id();
        let record = daemon.wait_for(|| record_of(&self.cairn()).filter(|r| pid_of(r) == pid));
        daemon.port = record["port"].as_u64().unwrap() as u16;
        daemon
    }
}

fn rand_suffix() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos()
}

fn record_of(dir: &Path) -> Option<Value> {
    let text = std::fs::read_to_string(dir.join("daemon.json")).ok()?;
    serde_json::from_str(&text).ok()
}

fn pid_of(record: &Value) -> u32 {
    record["pid"].as_u64().unwrap_or(0) as u32
}

fn token_of(repo: &TestRepo) -> String {
    std::fs::read_to_string(repo.data_dir().join("daemon.token"))
        .unwrap()
        .trim()
        .to_string()
}

struct UserDaemon {
    child: Child,
    port: u16,
    log: PathBuf,
}

impl UserDaemon {
    fn pid(&self) -> u32 {
        self.child.id()
    }

    fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Polls `probe` until it answers, failing if the daemon exits or the deadline passes.
    fn wait_for<T>(&mut self, mut probe: impl FnMut() -> Option<T>) -> T {
        let started = Instant::now();
        loop {
            if let Some(value) = probe() {
                return value;
            }
            if let Some(status) = self.child.try_wait().unwrap() {
                panic!("the user daemon exited early: {status}\n{}", self.log());
            }
            assert!(
                started.elapsed() < DEADLINE,
                "gave up waiting\n{}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(25));
        }
    }

    /// Waits until `repo`'s record names this daemon.
    fn serves(&mut self, repo: &TestRepo) -> Value {
        let pid = self.pid();
        self.wait_for(|| record_of(repo.data_dir()).filter(|r| pid_of(r) == pid))
    }

    /// How many times the log says `event` ("loaded", "unloaded") for `repo`.
    fn count(&self, event: &str, repo: &TestRepo) -> usize {
        count_in(&self.log, event, repo)
    }

    async fn get(&self, path: &str, token: Option<&str>) -> (u16, String) {
        let mut request =
            reqwest::Client::new().get(format!("http://127.0.0.1:{}{path}", self.port));
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        let response = request.send().await.unwrap();
        let status = response.status().as_u16();
        (status, response.text().await.unwrap())
    }

    fn stop(mut self) -> std::process::ExitStatus {
        let status = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
        let started = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(started.elapsed() < DEADLINE, "the user daemon did not stop");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for UserDaemon {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Two repositories, `alpha.py` and `beta.py`, installed (so registered) in `home`.
fn two_installed(home: &Home) -> (TestRepo, TestRepo) {
    let a = repo_with("alpha.py", "def alpha_only():\n    return 1\n");
    let b = repo_with("beta.py", "def beta_only():\n    return 2\n");
    home.install(&a);
    home.install(&b);
    (a, b)
}

/// `expand` of beta.py's function over a session.
async fn expand_beta(session: &rmcp::service::RunningService<rmcp::RoleClient, ()>) -> String {
    text(&call(session, "expand", json!({ "target": "beta.py::beta_only" })).await)
}

fn repo_with(file: &str, body: &str) -> TestRepo {
    let repo = TestRepo::new();
    repo.write(file, body);
    repo.commit("first");
    repo
}

#[tokio::test(flavor = "multi_thread")]
async fn one_daemon_serves_each_registered_repository_with_its_own_token_and_socket() {
    let home = Home::new();
    let (a, b) = two_installed(&home);
    let registry: Value = serde_json::from_str(
        &std::fs::read_to_string(home.cairn().join("repositories.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(registry["repositories"].as_array().unwrap().len(), 2);

    let mut daemon = home.start(&a, &[]);
    let (record_a, record_b) = (daemon.serves(&a), daemon.serves(&b));
    assert_eq!(record_a["port"], record_b["port"], "one port for both");
    assert_eq!(record_a["port"].as_u64(), Some(u64::from(daemon.port)));
    assert_eq!(
        daemon.count("loaded", &a),
        0,
        "nothing loaded before it is asked for"
    );

    // Each token opens its own repository: the answers differ, and a token opens no other.
    let (token_a, token_b) = (token_of(&a), token_of(&b));
    let (status, health_a) = daemon.get("/health", Some(&token_a)).await;
    assert_eq!(status, 200, "{health_a}");
    let health_a: Value = serde_json::from_str(&health_a).unwrap();
    assert_eq!(
        PathBuf::from(health_a["root"].as_str().unwrap()),
        a.path().canonicalize().unwrap()
    );
    // Asked whether it is served, the daemon answers without loading the index.
    assert_eq!(health_a["loaded"], json!(false), "{health_a}");
    assert_eq!(daemon.count("loaded", &a), 0, "{}", daemon.log());
    let (_, context_b) = daemon.get("/context?focus=beta_only", Some(&token_b)).await;
    assert!(context_b.contains("beta_only"), "{context_b}");
    assert!(!context_b.contains("alpha_only"), "{context_b}");
    assert_eq!(
        daemon.get("/health", Some("0".repeat(64).as_str())).await.0,
        401
    );
    assert_eq!(daemon.get("/health", None).await.0, 401);
    assert_eq!(daemon.get("/ui/", None).await.0, 401);

    // mem0 clients too: a memory written with one repository's key is that repository's.
    let mem0 = |method: reqwest::Method, path: &str, key: Option<&str>| {
        let mut call = reqwest::Client::new()
            .request(method, format!("http://127.0.0.1:{}{path}", daemon.port));
        if let Some(key) = key {
            call = call.header("authorization", format!("Token {key}"));
        }
        call
    };
    let added = mem0(reqwest::Method::POST, "/memories", Some(&token_a))
        .header("content-type", "application/json")
        .body(
            json!({"messages": [{"role": "user", "content": "Cart totals are integers of cents."}],
                   "user_id": "alice"})
            .to_string(),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(
        added.status().as_u16(),
        200,
        "{}",
        added.text().await.unwrap()
    );
    let listed = |key: Option<String>| {
        let call = mem0(
            reqwest::Method::GET,
            "/memories?user_id=alice",
            key.as_deref(),
        );
        async move {
            let response = call.send().await.unwrap();
            let status = response.status().as_u16();
            let body: Value = serde_json::from_str(&response.text().await.unwrap()).unwrap();
            (status, body)
        }
    };
    let (status, in_a) = listed(Some(token_a.clone())).await;
    assert_eq!(status, 200, "{in_a}");
    assert_eq!(in_a["results"].as_array().unwrap().len(), 1, "{in_a}");
    let (status, in_b) = listed(Some(token_b.clone())).await;
    assert_eq!(status, 200, "{in_b}");
    assert_eq!(in_b["results"], json!([]));
    let (status, refused) = listed(None).await;
    assert_eq!(status, 401);
    assert!(refused["detail"].is_string(), "{refused}");

    // `cairn serve` in a repository relays to the user daemon through the repository's
    // socket, and sees a save there.
    let relayed = connect(&b).await;
    let answer = expand_beta(&relayed).await;
    assert!(!answer.starts_with("error"), "{answer}");
    b.write(
        "beta.py",
        "def beta_only():\n    return 2\n\n\ndef beta_later():\n    return beta_only()\n",
    );
    let started = Instant::now();
    loop {
        let answer = expand_beta(&relayed).await;
        if answer.contains("beta_later") {
            break;
        }
        assert!(
            started.elapsed() < DEADLINE,
            "the save was not followed: {answer}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    relayed.cancel().await.unwrap();
    assert_eq!(daemon.count("loaded", &b), 1, "{}", daemon.log());

    // `cairn index` in a repository is handed to the user daemon, which stores the change.
    b.write(
        "beta.py",
        "def beta_only():\n    return 2\n\n\ndef beta_handed():\n    return 3\n",
    );
    let output = run(home.command(&b).args(["index", "--json"]));
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(
        report["daemon"].as_u64(),
        Some(u64::from(daemon.pid())),
        "{report:#}"
    );
    let graph = crate::support::stored_graph(b.data_dir()).await;
    assert!(graph.node("beta.py::beta_handed").is_some());

    // A repository's own daemon and a second user daemon refuse, naming the one that serves.
    let own = home.command(&a).arg("daemon").output().unwrap();
    let said = String::from_utf8_lossy(&own.stderr);
    assert!(own.status.success(), "{said}");
    assert!(said.contains(&format!("pid {}", daemon.pid())), "{said}");
    let second = home
        .command(&a)
        .args(["daemon", "--user"])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&second.stderr);
    assert!(second.status.success(), "{said}");
    assert!(
        said.contains("already running") && said.contains(&format!("pid {}", daemon.pid())),
        "{said}"
    );

    // Unregistered while it runs: no longer served, and its record goes.
    home.uninstall(&b);
    daemon.wait_for(|| (!b.data_dir().join("daemon.json").exists()).then_some(()));
    assert_eq!(daemon.get("/health", Some(&token_b)).await.0, 401);
    assert_eq!(daemon.get("/health", Some(&token_a)).await.0, 200);

    assert!(daemon.stop().success());
    assert!(!a.data_dir().join("daemon.json").exists());
    assert!(!home.cairn().join("daemon.json").exists());
}

#[tokio::test(flavor = "multi_thread")]
async fn idle_repositories_are_unloaded_and_load_again_with_what_changed() {
    let home = Home::new();
    let (a, b) = two_installed(&home);
    // Any repository not in use is over the bound: loading one unloads the other.
    let mut daemon = home.start(&a, &["--memory-mb", "1"]);
    daemon.serves(&a);
    daemon.serves(&b);
    let (token_a, token_b) = (token_of(&a), token_of(&b));

    assert_eq!(daemon.get("/context", Some(&token_a)).await.0, 200);
    assert_eq!(daemon.get("/context", Some(&token_b)).await.0, 200);
    let log = daemon.log.clone();
    daemon.wait_for(|| (count_in(&log, "unloaded", &a) == 1).then_some(()));
    assert_eq!(daemon.count("unloaded", &b), 0, "the one just loaded stays");

    // Edited while unloaded: the next load brings the index up to date.
    a.write(
        "alpha.py",
        "def alpha_only():\n    return 1\n\n\ndef alpha_added():\n    return 3\n",
    );
    let (status, context) = daemon
        .get("/context?focus=alpha_added", Some(&token_a))
        .await;
    assert_eq!(status, 200, "{context}");
    assert!(context.contains("alpha_added"), "{context}");
    assert_eq!(daemon.count("loaded", &a), 2, "{}", daemon.log());

    // A session open on a repository's socket keeps it loaded whatever the bound says.
    let relayed = connect(&b).await;
    let answer = expand_beta(&relayed).await;
    assert!(!answer.starts_with("error"), "{answer}");
    let unloaded_b = daemon.count("unloaded", &b);
    assert_eq!(daemon.count("loaded", &a), 2);
    assert_eq!(daemon.get("/context", Some(&token_a)).await.0, 200);
    assert_eq!(daemon.count("loaded", &a), 3, "{}", daemon.log());
    assert_eq!(daemon.count("unloaded", &b), unloaded_b, "{}", daemon.log());
    relayed.cancel().await.unwrap();

    // A registered repository that is gone answers with a clear error; the others still do.
    let gone = repo_with("gamma.py", "def gamma():\n    return 4\n");
    home.install(&gone);
    daemon.serves(&gone);
    let token_gone = token_of(&gone);
    let moved = gone.path().with_extension("moved");
    std::fs::rename(gone.path(), &moved).unwrap();
    let (status, said) = daemon.get("/context", Some(&token_gone)).await;
    std::fs::rename(&moved, gone.path()).unwrap();
    assert_eq!(status, 503, "{said}");
    assert!(said.contains("gone"), "{said}");
    assert_eq!(daemon.get("/health", Some(&token_b)).await.0, 200);
    assert!(daemon.stop().success());
}

#[tokio::test(flavor = "multi_thread")]
async fn the_repositories_loaded_at_a_stop_are_loaded_again_at_the_next_start() {
    let home = Home::new();
    let (a, b) = two_installed(&home);
    let mut daemon = home.start(&a, &[]);
    daemon.serves(&a);
    daemon.serves(&b);
    assert_eq!(daemon.get("/context", Some(&token_of(&a))).await.0, 200);
    assert!(daemon.stop().success());

    // Nothing asks for alpha: it is loaded because it was loaded at the stop; beta was not.
    let mut daemon = home.start(&a, &[]);
    let log = daemon.log.clone();
    daemon.wait_for(|| (count_in(&log, "preloaded", &a) == 1).then_some(()));
    let (status, health) = daemon.get("/health", Some(&token_of(&b))).await;
    assert_eq!(status, 200, "{health}");
    assert_eq!(
        serde_json::from_str::<Value>(&health).unwrap()["loaded"],
        false
    );
    assert_eq!(daemon.count("loaded", &b), 0, "{}", daemon.log());
    // Now beta is used, and last: it comes first in the next working set.
    assert_eq!(daemon.get("/context", Some(&token_of(&b))).await.0, 200);
    assert!(daemon.stop().success());
    let set: Value = serde_json::from_str(
        &std::fs::read_to_string(home.cairn().join("working-set.json")).unwrap(),
    )
    .unwrap();
    let roots: Vec<PathBuf> = (set["roots"].as_array().unwrap().iter())
        .map(|r| PathBuf::from(r.as_str().unwrap()))
        .collect();
    let canonical = |repo: &TestRepo| repo.path().canonicalize().unwrap();
    assert_eq!(roots, [canonical(&b), canonical(&a)]);

    // A damaged working set loads nothing ahead, and the daemon serves as ever.
    std::fs::write(home.cairn().join("working-set.json"), "{\"roots\": [").unwrap();
    let mut daemon = home.start(&a, &[]);
    daemon.serves(&b);
    let log = daemon.log.clone();
    daemon.wait_for(|| {
        let said = strip_colours(&std::fs::read_to_string(&log).unwrap_or_default());
        said.contains("no repository loaded ahead").then_some(())
    });
    assert_eq!(daemon.count("loaded", &a), 0, "{}", daemon.log());
    assert_eq!(daemon.get("/context", Some(&token_of(&a))).await.0, 200);
    assert!(daemon.stop().success());
}

/// How many times the log at `log` says `event` for `repo`.
fn count_in(log: &Path, event: &str, repo: &TestRepo) -> usize {
    let root = format!("root={}", repo.path().canonicalize().unwrap().display());
    let event = format!(": {event} ");
    strip_colours(&std::fs::read_to_string(log).unwrap_or_default())
        .lines()
        .filter(|line| line.contains(&event) && line.split(' ').any(|word| word == root))
        .count()
}

/// The text without its terminal colour sequences (`ESC [ … m`).
fn strip_colours(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            for c in chars.by_ref() {
                if c == 'm' {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread")]
async fn a_repository_unused_for_the_idle_time_is_unloaded() {
    let home = Home::new();
    let a = repo_with("alpha.py", "def alpha_only():\n    return 1\n");
    home.install(&a);
    // The data home named on the command line, as the user service names it, whatever
    // XDG_DATA_HOME says.
    let elsewhere = tempfile::tempdir().unwrap();
    let data_home = home.cairn();
    let mut daemon = home.start_with(
        &a,
        &[
            "--idle-minutes",
            "0",
            "--data-home",
            data_home.to_str().unwrap(),
        ],
        &[("XDG_DATA_HOME", elsewhere.path())],
    );
    daemon.serves(&a);
    assert_eq!(daemon.get("/context", Some(&token_of(&a))).await.0, 200);
    let log = daemon.log.clone();
    daemon.wait_for(|| (count_in(&log, "unloaded", &a) == 1).then_some(()));
    let said = strip_colours(&daemon.log());
    assert!(said.contains("why=\"idle\""), "{said}");
    // And loaded again when asked.
    assert_eq!(daemon.get("/context", Some(&token_of(&a))).await.0, 200);
    assert_eq!(daemon.count("loaded", &a), 2);
    assert!(daemon.stop().success());
}

/// `cairn ui --no-open` in `repo`: the log-in address, and the session cookie it sets.
async fn log_in(home: &Home, repo: &TestRepo) -> String {
    let output = run(home.command(repo).args(["ui", "--no-open"]));
    let url = String::from_utf8(output.stdout).unwrap().trim().to_string();
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let response = client.get(&url).send().await.unwrap();
    assert_eq!(response.status().as_u16(), 303, "{url}");
    let cookie = response.headers()[reqwest::header::SET_COOKIE]
        .to_str()
        .unwrap();
    cookie.split(';').next().unwrap().to_string()
}

async fn page(port: u16, cookies: &str) -> (u16, String) {
    let response = reqwest::Client::new()
        .get(format!("http://127.0.0.1:{port}/ui/"))
        .header(reqwest::header::COOKIE, cookies)
        .send()
        .await
        .unwrap();
    (response.status().as_u16(), response.text().await.unwrap())
}

#[tokio::test(flavor = "multi_thread")]
async fn each_repository_s_pages_open_with_its_own_log_in() {
    let home = Home::new();
    let (a, b) = two_installed(&home);
    let mut daemon = home.start(&a, &[]);
    daemon.serves(&a);
    daemon.serves(&b);
    let name = |repo: &TestRepo| {
        repo.path()
            .canonicalize()
            .unwrap()
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned()
    };

    let cookie_a = log_in(&home, &a).await;
    let (status, html) = page(daemon.port, &cookie_a).await;
    assert_eq!(status, 200, "{html}");
    assert!(
        html.contains(&name(&a)) && !html.contains(&name(&b)),
        "{html}"
    );

    // A browser holding both log-ins sees the latest one's pages.
    let cookie_b = log_in(&home, &b).await;
    let (status, html) = page(daemon.port, &format!("{cookie_a}; {cookie_b}")).await;
    assert_eq!(status, 200, "{html}");
    assert!(
        html.contains(&name(&b)) && !html.contains(&name(&a)),
        "{html}"
    );
    // One repository's session does not open the other's pages under its cookie name.
    let value_a = cookie_a.split_once('=').unwrap().1;
    let forged = format!("{}={value_a}", cookie_b.split_once('=').unwrap().0);
    assert_eq!(page(daemon.port, &forged).await.0, 401);
    assert!(daemon.stop().success());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_repository_its_own_daemon_serves_is_taken_on_when_that_daemon_stops() {
    let home = Home::new();
    let a = repo_with("alpha.py", "def alpha_only():\n    return 1\n");
    home.install(&a);
    let own =
        crate::daemon::Daemon::start_with(&a, &[("XDG_DATA_HOME", home.xdg_data().as_path())]);
    let mut daemon = home.start(&a, &[]);
    let log = daemon.log.clone();
    daemon.wait_for(|| {
        strip_colours(&std::fs::read_to_string(&log).unwrap_or_default())
            .contains("its own daemon serves it")
            .then_some(())
    });
    assert_ne!(pid_of(&record_of(a.data_dir()).unwrap()), daemon.pid());
    // Nothing changes meanwhile, so the registry is read once: the daemon's reads of it are
    // not changes to follow.
    std::thread::sleep(Duration::from_millis(300));
    let said = strip_colours(&daemon.log());
    assert_eq!(
        said.matches("its own daemon serves it").count(),
        1,
        "{said}"
    );
    assert!(own.stop().success());
    daemon.serves(&a);
    assert_eq!(daemon.get("/health", Some(&token_of(&a))).await.0, 200);
    assert!(daemon.stop().success());
}
