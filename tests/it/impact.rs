//! The impact measure as answers use it, through the real binary: `get_context` ranks the
//! code everything uses first, expansions and reviews list a changed method's real callers
//! before its class's other users and leave out what only a file import chain links, and the
//! `central` risk stands out only where the distribution does.

use serde_json::Value;

use crate::support::TestRepo;

/// A logging helper thirty modules call, an `Engine` whose `teardown` two methods call (one
/// through the class, one through an instance), a factory using the class, and a settings
/// module that imports a module that uses the class: linked to `teardown` only through its
/// class and a whole-module import.
fn service() -> TestRepo {
    let repo = TestRepo::new();
    repo.write("app/__init__.py", "");
    repo.write("app/log.py", "def log(msg):\n    return msg\n");
    repo.write(
        "app/core.py",
        "from app.log import log\n\n\nclass Engine:\n    def teardown(self):\n        return log(\"teardown\")\n\n    def start(self):\n        return 1\n",
    );
    repo.write(
        "app/context.py",
        "from app.core import Engine\n\n\nclass Context:\n    def __init__(self, engine: Engine) -> None:\n        self.engine = engine\n\n    def pop(self):\n        return Engine.teardown(self.engine)\n\n    def pop_new(self):\n        engine = Engine()\n        return engine.teardown()\n",
    );
    repo.write(
        "app/factory.py",
        "from app.core import Engine\n\n\ndef make_engine():\n    return Engine()\n",
    );
    repo.write(
        "app/registry.py",
        "from app.core import Engine\n\nengine_type = Engine\n",
    );
    repo.write(
        "app/settings.py",
        "import app.registry\n\n\ndef debug_flag():\n    return 1\n",
    );
    for i in 0..30 {
        repo.write(
            &format!("app/user_{i}.py"),
            format!("from app.log import log\n\n\ndef use_{i}():\n    return log(\"{i}\")\n"),
        );
    }
    repo.commit("service");
    repo.index();
    repo
}

fn json(repo: &TestRepo, args: &[&str]) -> Value {
    serde_json::from_str(&repo.cairn_ok(args)).unwrap()
}

fn ids(list: &Value) -> Vec<&str> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().or_else(|| v["id"].as_str()).unwrap())
        .collect()
}

/// The review of the working tree against HEAD, as JSON.
fn review(repo: &TestRepo) -> Value {
    json(repo, &["review", "--json"])
}

/// The reviewed symbol `id`.
fn reviewed<'a>(review: &'a Value, id: &str) -> &'a Value {
    review["files"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|f| f["symbols"].as_array().unwrap())
        .find(|s| s["id"] == id)
        .unwrap_or_else(|| panic!("{id} not in {review}"))
}

fn central(review: &Value) -> Vec<&str> {
    review["risks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["kind"] == "central")
        .map(|r| r["subject"].as_str().unwrap())
        .collect()
}

#[test]
fn impact_ranks_what_everything_uses_and_direct_callers_come_first() {
    let repo = service();
    let context = json(&repo, &["context", "--json"]);
    let top = &context["top_symbols"];
    assert_eq!(top[0]["id"], "app/log.py::log", "{top}");
    let best = top[0]["score"]["centrality"].as_f64().unwrap();
    let sharing = top
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["score"]["centrality"].as_f64() == Some(best))
        .count();
    assert_eq!(
        sharing, 1,
        "the top centrality is the helper's alone: {top}"
    );

    let expanded = json(&repo, &["expand", "--json", "app/core.py::Engine.teardown"]);
    let dependents = ids(&expanded["top_dependents"]);
    assert_eq!(
        dependents[..2],
        [
            "app/context.py::Context.pop",
            "app/context.py::Context.pop_new"
        ],
        "{dependents:?}"
    );
    let factory = dependents
        .iter()
        .position(|d| *d == "app/factory.py::make_engine");
    assert!(factory.is_some_and(|p| p >= 2), "{dependents:?}");
    assert!(
        !dependents.contains(&"app/settings.py::debug_flag"),
        "{dependents:?}"
    );

    repo.write(
        "app/core.py",
        repo.read("app/core.py")
            .replace("log(\"teardown\")", "log(\"teardown!\")"),
    );
    repo.write("app/log.py", "def log(msg):\n    return str(msg)\n");
    let review = review(&repo);
    let teardown = reviewed(&review, "app/core.py::Engine.teardown");
    let dependents = ids(&teardown["top_dependents"]);
    assert_eq!(
        dependents[..2],
        [
            "app/context.py::Context.pop",
            "app/context.py::Context.pop_new"
        ],
        "{dependents:?}"
    );
    assert!(
        !dependents.contains(&"app/settings.py::debug_flag"),
        "{dependents:?}"
    );
    // The helper thirty modules call is central; the method two call is not.
    assert_eq!(central(&review), ["app/log.py::log"], "{}", review["risks"]);
}

#[test]
fn a_flat_distribution_flags_nothing_central() {
    // Sixty functions in a ring, each calling the next: every one reaches all the others,
    // and none is used more than another.
    let repo = TestRepo::new();
    repo.write("ring/__init__.py", "");
    for i in 0..60 {
        let next = (i + 1) % 60;
        repo.write(
            &format!("ring/m_{i}.py"),
            format!("from ring.m_{next} import f_{next}\n\n\ndef f_{i}(x):\n    return f_{next}(x - 1) if x else 0\n"),
        );
    }
    repo.commit("ring");
    repo.index();
    repo.write(
        "ring/m_0.py",
        repo.read("ring/m_0.py").replace("x - 1", "x - 2"),
    );
    let review = review(&repo);
    let changed = reviewed(&review, "ring/m_0.py::f_0");
    assert!(changed["reach"].as_u64().unwrap() >= 59, "{changed}");
    assert_eq!(central(&review), Vec::<&str>::new(), "{}", review["risks"]);
}
