//! Incremental indexing equals a fresh build: random edits, renames, deletions and additions,
//! with the stored graph compared after every round.

use crate::support::{TestRepo, graph_lines, stored_graph};

const PYTHON_DIR: &str = "src/shop";

fn python_files(repo: &TestRepo) -> Vec<String> {
    let mut files: Vec<String> = std::fs::read_dir(repo.path().join(PYTHON_DIR))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".py") && n != "__init__.py")
        .map(|n| format!("{PYTHON_DIR}/{n}"))
        .collect();
    files.sort();
    files
}

fn module_of(path: &str) -> String {
    path.rsplit('/')
        .next()
        .unwrap()
        .trim_end_matches(".py")
        .to_string()
}

/// One random change to the working tree.
fn mutate(repo: &TestRepo, rng: &mut fastrand::Rng, serial: usize) {
    let files = python_files(repo);
    let pick = |rng: &mut fastrand::Rng| files[rng.usize(0..files.len())].clone();
    match rng.u8(0..6) {
        0 if files.len() > 2 => {
            let (from, to) = (pick(rng), pick(rng));
            let name = format!("added_{serial}");
            let text = format!(
                "{}\n\nfrom .{} import *\n\ndef {name}(x):\n    return {name}(x) if x else len([x])\n",
                repo.read(&from),
                module_of(&to)
            );
            repo.write(&from, text);
        }
        1 if files.len() > 3 => {
            let from = pick(rng);
            let to = format!("{PYTHON_DIR}/renamed_{serial}.py");
            std::fs::rename(repo.path().join(&from), repo.path().join(to)).unwrap();
        }
        2 if files.len() > 3 => {
            std::fs::remove_file(repo.path().join(pick(rng))).unwrap();
        }
        3 => {
            let target = pick(rng);
            repo.write(
                &format!("{PYTHON_DIR}/new_{serial}.py"),
                format!(
                    "from . import {m}\nfrom .{m} import *\n\nclass New{serial}:\n    def go(self):\n        self.state = 1\n        return {m}\n",
                    m = module_of(&target)
                ),
            );
        }
        4 => {
            let file = pick(rng);
            repo.write(&file, repo.read(&file) + "\ndef broken(:\n");
        }
        _ => {
            repo.write(
                "web/src/lib/format.ts",
                format!(
                    "{}\nexport function fmt{serial}(n: number) {{ return money(n); }}\nimport {{ money }} from \"./format\";\n",
                    repo.read("web/src/lib/format.ts")
                ),
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn incremental_index_equals_a_fresh_build() {
    for seed in [1u64, 2] {
        let repo = TestRepo::with_fixture("mixed");
        repo.index();
        let mut rng = fastrand::Rng::with_seed(seed);
        for round in 0..4 {
            for step in 0..3 {
                mutate(&repo, &mut rng, round * 10 + step);
            }
            let report = repo.index();
            assert!(
                report["parsed"].as_u64().unwrap() <= 4,
                "only changed files are parsed: {report:#}"
            );
            let fresh = tempfile::tempdir().unwrap();
            let output = repo
                .cairn_command(fresh.path())
                .args(["index", "--json"])
                .output()
                .unwrap();
            assert!(
                output.status.success(),
                "{}",
                String::from_utf8_lossy(&output.stderr)
            );
            let incremental = graph_lines(&stored_graph(repo.data_dir()).await);
            let rebuilt = graph_lines(&stored_graph(fresh.path()).await);
            if incremental != rebuilt {
                let only_incremental: Vec<_> = incremental
                    .iter()
                    .filter(|l| !rebuilt.contains(l))
                    .collect();
                let only_fresh: Vec<_> = rebuilt
                    .iter()
                    .filter(|l| !incremental.contains(l))
                    .collect();
                panic!(
                    "seed {seed} round {round}: incremental differs from fresh\nonly incremental: {only_incremental:#?}\nonly fresh: {only_fresh:#?}"
                );
            }
        }
    }
}

/// The repository's settings and its index as the store holds it.
async fn stored_live(repo: &TestRepo) -> (cairn::config::Repo, cairn::index::Live) {
    let settings = cairn::config::Repo::discover(repo.path(), Some(repo.data_dir())).unwrap();
    let store = cairn::storage::Store::open(&settings.store_dir())
        .await
        .unwrap();
    let live = cairn::index::Live::load(&store).await.unwrap();
    store.close().await;
    (settings, live)
}

/// The daemon's quick patch shows a changed file's new symbols and calls at once; the exact
/// rebuild that follows equals a fresh index.
#[tokio::test(flavor = "multi_thread")]
async fn a_patch_shows_the_change_and_the_rebuild_equals_fresh() {
    use crate::support::has_edge;
    let repo = TestRepo::new();
    repo.write("a.py", "def f():\n    return 1\n");
    repo.write("b.py", "from a import f\n\n\ndef g():\n    return f()\n");
    repo.commit("two modules");
    repo.index();
    let (settings, mut live) = stored_live(&repo).await;

    repo.write(
        "b.py",
        "from a import f\n\n\ndef g():\n    return f()\n\n\ndef h():\n    return f() + g()\n",
    );
    let reading = live.read(&settings, Some(&["b.py".to_string()]));
    assert_eq!(reading.changed, ["b.py"]);
    live.patch(&reading.changed);
    let patched = live.graph();
    assert!(patched.node("b.py::h").is_some());
    assert!(has_edge(&patched, "calls", "b.py::h", "b.py::g"));
    assert!(has_edge(&patched, "calls", "b.py::h", "a.py::f"));
    assert!(has_edge(&patched, "calls", "b.py::g", "a.py::f"));
    assert!(patched.node("a.py::f").is_some_and(|n| n.reach > 0));

    live.rebuild();
    let update = live.take_pending().into_update();
    assert!(!update.delta.is_empty());
    assert_eq!(
        graph_lines(&live.graph()),
        graph_lines(&repo.fresh_graph().await)
    );
}

/// Each exact rebuild after a quick patch checks it and counts what the patch missed: nothing
/// for a new function, nothing for a name that only now resolves in a file that calls into
/// the saved one or imports a new module (the patch reads that file again), the edges a new
/// test's assertions promote (which only an exact build makes). A rebuild of no patch is no
/// check.
#[tokio::test(flavor = "multi_thread")]
async fn the_exact_rebuild_counts_what_the_patch_missed() {
    let repo = TestRepo::new();
    repo.write("a.py", "def f():\n    return 1\n");
    repo.write("b.py", "from a import f\n\n\ndef g():\n    return f()\n");
    repo.write("c.py", "import b\n\n\ndef use():\n    return b.k()\n");
    repo.commit("three modules");
    repo.index();
    let (settings, mut live) = stored_live(&repo).await;
    let mut edit = |path: &str, text: &str| {
        repo.write(path, text);
        let reading = live.read(&settings, Some(&[path.to_string()]));
        assert_eq!(reading.changed, [path]);
        live.patch(&reading.changed);
        let patched = live.graph();
        live.rebuild();
        (patched, live.graph(), live.checks())
    };
    let (_, _, checks) = edit(
        "a.py",
        "def f():\n    return 1\n\n\ndef f2():\n    return 2\n",
    );
    assert_eq!((checks.rebuilds, checks.found), (1, 0), "{checks:?}");
    // `c.py` calls `b.k`, which only now exists: the patch of b.py binds the call.
    let (patched, _, checks) = edit(
        "b.py",
        "from a import f\n\n\ndef g():\n    return f()\n\n\ndef k():\n    return g()\n",
    );
    assert!(crate::support::has_edge(
        &patched,
        "calls",
        "c.py::use",
        "b.py::k"
    ));
    assert_eq!((checks.rebuilds, checks.found), (2, 0), "{checks:?}");
    // A new test: what it asserts on is promoted by exact builds only.
    let (patched, exact, checks) = edit(
        "test_a.py",
        "from a import f\n\n\ndef test_f():\n    assert f() == 1\n",
    );
    let asserts = |g: &cairn::graph::Graph| {
        g.edges
            .iter()
            .filter(|e| e.kind.table() == "asserts_on" && e.src.starts_with("test_a.py"))
            .count()
    };
    assert_eq!(asserts(&patched), 0);
    assert!(asserts(&exact) > 0);
    assert_eq!((checks.rebuilds, checks.found), (3, 1), "{checks:?}");
    let found = checks.last_found.expect("the difference is kept");
    assert_eq!(
        (found.nodes_added, found.nodes_removed),
        (0, 0),
        "{found:?}"
    );
    assert!(found.edges_added >= asserts(&exact), "{found:?}");
    // A module imported and called before it exists: the patch that adds it binds the call.
    edit(
        "user.py",
        "from helpers import h\n\n\ndef run():\n    return h()\n",
    );
    let (patched, _, _) = edit("helpers.py", "def h():\n    return 1\n");
    assert!(crate::support::has_edge(
        &patched,
        "calls",
        "user.py::run",
        "helpers.py::h"
    ));
    // The last import of an outside module taken away: the patch drops the module too, so
    // the exact rebuild after it finds nothing.
    let outside = |g: &cairn::graph::Graph| g.node("ext:requests").is_some();
    let (patched, _, before) = edit(
        "net.py",
        "import requests\n\n\ndef get():\n    return requests.get('x')\n",
    );
    assert!(outside(&patched));
    let (patched, exact, checks) = edit("net.py", "def get():\n    return 1\n");
    assert!(!outside(&exact));
    assert!(
        !outside(&patched),
        "the patch kept an outside module nothing imports"
    );
    assert_eq!(
        (checks.rebuilds, checks.found),
        (7, before.found),
        "{checks:?}"
    );
    live.rebuild();
    assert_eq!(
        live.checks().rebuilds,
        7,
        "a rebuild of no patch checks none"
    );
}

/// The daemon's path: edits are read file by file and patched in, exact rebuilds run away
/// from the index and finish late, a rebuild of an older state is refused, and the graph
/// taken after every round equals a fresh index of the same files.
#[tokio::test(flavor = "multi_thread")]
async fn the_daemons_path_with_late_rebuilds_equals_fresh() {
    let repo = TestRepo::with_fixture("mixed");
    repo.index();
    let (settings, mut live) = stored_live(&repo).await;
    // As the daemon starts: a whole walk (which reads the module roots) and its rebuild.
    assert!(live.read(&settings, None).whole);
    live.rebuild();
    live.take_pending();
    let mut rng = fastrand::Rng::with_seed(7);
    let mut known = python_files(&repo);
    known.push("web/src/lib/format.ts".to_string());
    for round in 0..6 {
        // A rebuild taken before the edits finishes after them.
        let late = live.rebuild_later();
        mutate(&repo, &mut rng, 100 + round);
        known.extend(python_files(&repo));
        known.sort();
        known.dedup();
        let reading = live.read(&settings, Some(&known));
        assert!(
            !reading.whole,
            "round {round}: a file edit is no whole walk"
        );
        if reading.changed.is_empty() {
            continue;
        }
        assert!(!live.is_exact());
        live.patch(&reading.changed);
        let current = live.rebuild_later();
        let late = std::thread::spawn(move || late.run()).join().unwrap();
        assert!(
            !live.install(late),
            "round {round}: a rebuild of the files before {:?} is refused",
            reading.changed
        );
        assert!(!live.is_exact());
        assert!(live.install(current.run()), "round {round}");
        assert!(live.is_exact());
        let update = live.take_pending().into_update();
        assert!(
            !update.delta.is_empty(),
            "round {round}: {:?} changed",
            reading.changed
        );
        let ours = graph_lines(&live.graph());
        let fresh = graph_lines(&repo.fresh_graph().await);
        assert!(
            ours == fresh,
            "round {round}: the daemon's graph differs from fresh\nonly ours: {:#?}\nonly fresh: {:#?}",
            ours.iter()
                .filter(|l| !fresh.contains(l))
                .collect::<Vec<_>>(),
            fresh
                .iter()
                .filter(|l| !ours.contains(l))
                .collect::<Vec<_>>()
        );
    }
}

/// A run that finds no file changed keeps the stored graph, built by this cairn with the same
/// module roots, and reports the statistics it was built with; a changed file or changed
/// module roots build it again.
#[test]
fn an_unchanged_tree_keeps_the_stored_graph() {
    let repo = TestRepo::new();
    repo.write("a.py", "def f():\n    return 1\n");
    repo.write(
        "b.py",
        "from a import f\n\n\ndef g():\n    return f() + h()\n",
    );
    repo.commit("two modules");
    let first = repo.index();
    assert_eq!(first["rebuilt"], true, "{first:#}");
    let again = repo.index();
    assert_eq!(again["rebuilt"], false, "{again:#}");
    assert_eq!(again["stats"], first["stats"]);
    assert_eq!(again["edges"], first["edges"]);
    assert_eq!(again["stats"]["calls_unresolved"], 1);

    repo.write(
        "tsconfig.json",
        r#"{"compilerOptions": {"baseUrl": "src", "paths": {"@/*": ["lib/*"]}}}"#,
    );
    let roots = repo.index();
    assert_eq!(roots["rebuilt"], true, "new module roots: {roots:#}");
    assert_eq!(repo.index()["rebuilt"], false);

    repo.write("a.py", "def f():\n    return 2\n");
    let edited = repo.index();
    assert_eq!(edited["rebuilt"], true, "{edited:#}");
    assert_eq!(edited["parsed"], 1);
}
