//! Indexing a mixed Python/TypeScript repository: what resolves, what does not, what is
//! promoted and measured.

use crate::support::{TestRepo, has_edge, stored_graph};

#[tokio::test(flavor = "multi_thread")]
async fn python_and_typescript_resolve_to_repository_files() {
    let repo = TestRepo::with_fixture("mixed");
    let summary = repo.index();
    assert_eq!(summary["files"], 12, "{summary:#}");
    assert!(
        summary["skipped"].as_array().unwrap().is_empty(),
        "{summary:#}"
    );
    let graph = stored_graph(repo.data_dir()).await;

    // Python: relative imports, `src/` layout, packages, submodules, re-exports.
    assert!(has_edge(
        &graph,
        "imports",
        "src/shop/cart.py",
        "src/shop/pricing.py"
    ));
    assert!(has_edge(
        &graph,
        "imports",
        "src/shop/cart.py",
        "src/shop/storage.py"
    ));
    assert!(has_edge(
        &graph,
        "imports",
        "tests/test_cart.py",
        "src/shop/__init__.py"
    ));
    assert!(has_edge(
        &graph,
        "imports",
        "tests/test_cart.py",
        "src/shop/cart.py::GiftCart"
    ));
    assert!(has_edge(
        &graph,
        "imports",
        "scripts/report.py",
        "src/shop/storage.py"
    ));
    // External modules are their own nodes, never mixed with repository files.
    assert!(has_edge(
        &graph,
        "imports",
        "scripts/report.py",
        "ext:requests"
    ));
    assert!(has_edge(
        &graph,
        "imports",
        "src/shop/cart.py",
        "ext:itertools"
    ));
    assert_eq!(
        graph.node("ext:requests").unwrap().kind.as_str(),
        "external"
    );

    // Calls: imported names, same-module functions, self methods, inherited methods, super().
    assert!(has_edge(
        &graph,
        "calls",
        "src/shop/cart.py::Cart.total",
        "src/shop/pricing.py::price_of"
    ));
    assert!(has_edge(
        &graph,
        "calls",
        "src/shop/cart.py::Cart.save",
        "src/shop/storage.py::write_cart"
    ));
    assert!(has_edge(
        &graph,
        "calls",
        "src/shop/cart.py::GiftCart.wrap",
        "src/shop/cart.py::GiftCart.total"
    ));
    assert!(has_edge(
        &graph,
        "calls",
        "src/shop/cart.py::GiftCart.total",
        "src/shop/cart.py::Cart.total"
    ));
    assert!(has_edge(
        &graph,
        "calls",
        "tests/test_cart.py::test_total",
        "src/shop/cart.py::Cart"
    ));
    assert!(has_edge(
        &graph,
        "calls",
        "scripts/report.py::run",
        "src/shop/storage.py::backup"
    ));
    assert!(has_edge(
        &graph,
        "inherits",
        "src/shop/cart.py::GiftCart",
        "src/shop/cart.py::Cart"
    ));
    // Receivers whose class is known: constructed locals and `Class()` itself.
    for (src, dst) in [
        (
            "tests/test_cart.py::test_total",
            "src/shop/cart.py::Cart.total",
        ),
        (
            "tests/test_cart.py::test_gift",
            "src/shop/cart.py::GiftCart.wrap",
        ),
        (
            "web/src/components/Basket.tsx::Basket",
            "web/src/lib/api.ts::ApiClient.items",
        ),
    ] {
        assert!(has_edge(&graph, "calls", src, dst), "{src} -> {dst}");
    }
    // `count()` from itertools is not QuerySet.count: no guessed edge.
    assert!(
        !graph
            .edges
            .iter()
            .any(|e| e.kind.table() != "contains"
                && &*e.dst == "src/shop/queryset.py::QuerySet.count"),
        "a call was bound to a guess"
    );

    // TypeScript: relative paths, index files, re-exports, tsconfig paths, `new`, `this`.
    assert!(has_edge(
        &graph,
        "imports",
        "web/src/components/Basket.tsx",
        "web/src/lib/index.ts"
    ));
    assert!(has_edge(
        &graph,
        "imports",
        "web/src/main.ts",
        "web/src/lib/api.ts"
    ));
    assert!(has_edge(
        &graph,
        "imports",
        "web/src/lib/index.ts",
        "web/src/lib/api.ts"
    ));
    assert!(has_edge(
        &graph,
        "calls",
        "web/src/components/Basket.tsx::Basket",
        "web/src/lib/api.ts::ApiClient"
    ));
    assert!(has_edge(
        &graph,
        "calls",
        "web/src/components/Basket.tsx::Basket",
        "web/src/lib/api.ts::total"
    ));
    assert!(has_edge(
        &graph,
        "calls",
        "web/src/components/Basket.tsx::Basket",
        "web/src/lib/format.ts::money"
    ));
    assert!(has_edge(
        &graph,
        "calls",
        "web/src/lib/api.ts::ApiClient.items",
        "web/src/lib/api.ts::ApiClient.normalise"
    ));
    assert!(has_edge(
        &graph,
        "imports",
        "web/src/lib/api.ts",
        "ext:axios"
    ));

    // Side effects from the grammar tables, per file and per symbol.
    let effects = |id: &str| graph.node(id).unwrap().side_effects.clone();
    assert_eq!(effects("src/shop/storage.py"), ["database", "subprocess"]);
    assert_eq!(effects("src/shop/storage.py::backup"), ["subprocess"]);
    assert_eq!(effects("src/shop/pricing.py::discount_from_env"), ["env"]);
    assert_eq!(effects("scripts/report.py::run"), ["network"]);
    assert!(effects("web/src/lib/api.ts").contains(&"network".to_string()));

    // Promotions: test imports assert, state writes drive importers.
    assert!(has_edge(
        &graph,
        "asserts_on",
        "tests/test_cart.py",
        "src/shop/cart.py::GiftCart"
    ));
    assert!(has_edge(
        &graph,
        "asserts_on",
        "tests/test_cart.py",
        "src/shop/pricing.py::price_of"
    ));
    assert!(
        has_edge(&graph, "drives", "src/shop/cart.py", "src/shop/__init__.py"),
        "Cart.add writes state"
    );
    assert!(graph.node("tests/test_cart.py").unwrap().is_test);
    assert_eq!(
        graph.node("src/shop/cart.py::Cart.add").unwrap().mutations,
        1
    );
    assert_eq!(
        graph
            .node("src/shop/cart.py::Cart.__init__")
            .unwrap()
            .mutations,
        0
    );

    // Reach: pricing reaches cart, the package, the tests and the script.
    let pricing = graph.node("src/shop/pricing.py::price_of").unwrap();
    assert!(pricing.reach >= 4, "reach {}", pricing.reach);
    // A file reaches its own definitions; nobody uses queryset.py, so that is all.
    assert_eq!(graph.node("src/shop/queryset.py").unwrap().reach, 1);
    let radius = |id: &str| cairn::context::blast_radius(&graph, id);
    assert_eq!(
        radius("src/shop/storage.py::backup"),
        ["scripts/report.py::run"]
    );
    let price_of = radius("src/shop/pricing.py::price_of");
    assert!(price_of.contains(&"tests/test_cart.py"), "{price_of:?}");
    assert!(
        price_of.contains(&"src/shop/cart.py::Cart.total"),
        "{price_of:?}"
    );
    assert_eq!(
        price_of.len() as u32,
        pricing.reach,
        "blast radius and reach agree"
    );

    // The summary counts what could not be resolved rather than guessing.
    let stats = &summary["stats"];
    assert!(stats["calls_unresolved"].as_u64().unwrap() > 0);
    assert!(stats["calls_resolved"].as_u64().unwrap() >= 10);
    assert!(summary["edges"]["calls"].as_u64().unwrap() >= 10);
}

/// A monorepo's packages import each other (and themselves, in their tests) by the name in
/// their `package.json`, through `exports` whose build outputs are not in the repository; a
/// package of a similar name stays outside.
#[tokio::test(flavor = "multi_thread")]
async fn workspace_packages_are_reached_by_their_names() {
    let repo = TestRepo::new();
    repo.write(
        "package.json",
        r#"{"name": "acme", "private": true, "workspaces": ["packages/*"]}"#,
    );
    repo.write(
        "packages/core/package.json",
        r#"{"name": "@acme/core", "exports": {
            ".": {"types": "./dist/index.d.ts", "source": "./src/index.ts", "default": "./dist/index.js"},
            "./money": "./src/money.ts"}}"#,
    );
    repo.write("packages/core/src/index.ts", "export * from \"./money\";\n");
    repo.write(
        "packages/core/src/money.ts",
        "export function money(cents: number): string {\n  return (cents / 100).toFixed(2);\n}\n",
    );
    repo.write(
        "packages/core/tests/money.test.ts",
        "import { money } from \"@acme/core\";\n\ntest(\"money\", () => {\n  expect(money(150)).toBe(\"1.50\");\n});\n",
    );
    repo.write(
        "packages/app/src/cart.ts",
        "import { money } from \"@acme/core/money\";\nimport { cost } from \"@acme/corex\";\n\n\
         export function total(cents: number): string {\n  return money(cents) + cost(cents);\n}\n",
    );
    repo.commit("packages");
    repo.index();
    let graph = stored_graph(repo.data_dir()).await;
    let money = "packages/core/src/money.ts::money";
    assert!(has_edge(
        &graph,
        "calls",
        "packages/app/src/cart.ts::total",
        money
    ));
    assert!(has_edge(
        &graph,
        "imports",
        "packages/core/tests/money.test.ts",
        "packages/core/src/index.ts"
    ));
    assert!(has_edge(
        &graph,
        "imports",
        "packages/app/src/cart.ts",
        "ext:@acme/corex"
    ));

    // So a change to the package's code names the test that imports it by the package's name.
    repo.write(
        "packages/core/src/money.ts",
        "export function money(cents: number): string {\n  return (cents / 100).toFixed(3);\n}\n",
    );
    let report: serde_json::Value =
        serde_json::from_str(&repo.cairn_ok(&["review", "--json"])).unwrap();
    let tests: Vec<&str> = report["tests_to_run"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_str().unwrap())
        .collect();
    assert!(
        tests
            .iter()
            .any(|t| t.starts_with("packages/core/tests/money.test.ts")),
        "{report:#}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_second_index_without_changes_parses_nothing() {
    let repo = TestRepo::with_fixture("mixed");
    let first = repo.index();
    assert_eq!(first["parsed"], 12);
    let second = repo.index();
    assert_eq!(second["parsed"], 0);
    assert_eq!(second["nodes_written"], 0);
    assert_eq!(second["edges_written"], 0);
    repo.write(
        "src/shop/pricing.py",
        repo.read("src/shop/pricing.py") + "\n\ndef extra():\n    return price_of(None)\n",
    );
    let third = repo.index();
    assert_eq!(third["parsed"], 1);
    let graph = stored_graph(repo.data_dir()).await;
    assert!(has_edge(
        &graph,
        "calls",
        "src/shop/pricing.py::extra",
        "src/shop/pricing.py::price_of"
    ));
}

#[test]
fn the_cli_prints_a_summary_and_the_context() {
    let repo = TestRepo::with_fixture("mixed");
    let summary = repo.cairn_ok(&["index"]);
    assert!(summary.contains("files 12"), "{summary}");
    assert!(summary.contains("unresolved"), "{summary}");
    let context = repo.cairn_ok(&["context"]);
    assert!(context.contains("## Top files"), "{context}");
    assert!(context.contains("src/shop/"), "{context}");
    let expand = repo.cairn_ok(&["expand", "src/shop/pricing.py::price_of"]);
    assert!(expand.contains("## Callers"), "{expand}");
    assert!(expand.contains("src/shop/cart.py::Cart.total"), "{expand}");
}

/// Holds the repository's writer lock for 1.5 s, so that an index run started now lasts past
/// the progress line's first second.
fn hold_the_lock_briefly(repo: &TestRepo) -> std::thread::JoinHandle<()> {
    let held = cairn::lock::acquire(
        &repo.data_dir().join("index.lock"),
        std::time::Duration::ZERO,
        |_| {},
    )
    .unwrap();
    std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(1500));
        drop(held);
    })
}

/// `cairn index` with `extra` arguments on a pseudo-terminal (script(1)), while the lock is
/// held: what the terminal showed.
fn index_on_a_terminal(repo: &TestRepo, extra: &str) -> String {
    let release = hold_the_lock_briefly(repo);
    let line = format!(
        "'{}' --repo '{}' --data-dir '{}' index {extra}",
        env!("CARGO_BIN_EXE_cairn"),
        repo.path().display(),
        repo.data_dir().display()
    );
    let command = repo.cairn_command(repo.data_dir());
    let output = std::process::Command::new("script")
        .args(["-qfec", &line, "/dev/null"])
        .envs(command.get_envs().filter_map(|(k, v)| Some((k, v?))))
        .env_remove("CAIRN_REPO")
        .env_remove("CAIRN_DATA_DIR")
        .output()
        .expect("script(1) from util-linux runs the index on a pseudo-terminal");
    release.join().unwrap();
    assert!(output.status.success(), "{output:?}");
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[test]
fn a_terminal_sees_the_progress_line_a_pipe_and_quiet_do_not() {
    let repo = TestRepo::with_fixture("mixed");
    let shown = index_on_a_terminal(&repo, "");
    assert!(
        shown.contains("\r\x1b[2Kcairn: waiting for another index run…"),
        "{shown:?}"
    );
    assert!(shown.contains("indexed "), "{shown:?}");

    repo.write("src/shop/extra.py", "def extra():\n    return 2\n");
    let quiet = index_on_a_terminal(&repo, "--quiet");
    assert!(quiet.contains("indexed "), "{quiet:?}");
    assert!(!quiet.contains('\x1b'), "{quiet:?}");

    repo.write("src/shop/extra.py", "def extra():\n    return 3\n");
    let release = hold_the_lock_briefly(&repo);
    let piped = repo.cairn(&["index"]);
    release.join().unwrap();
    assert!(piped.status.success(), "{piped:?}");
    let stderr = String::from_utf8_lossy(&piped.stderr);
    assert!(stderr.contains("waiting for another index run"), "{stderr}");
    assert!(!stderr.contains('\x1b'), "{stderr}");
}
