//! Extraction fixtures: source in, a one-line-per-fact rendering out.

use super::*;
use crate::languages::Registry;
use tree_sitter::Query;

fn render(extract: &FileExtract) -> String {
    let scope = |s: Option<At>| {
        widen(s).map_or("<module>".to_string(), |i| {
            extract.symbols[i].qualname.to_string()
        })
    };
    let mut lines = Vec::new();
    for s in &extract.symbols {
        lines.push(format!(
            "def {} {} L{}-{}",
            s.kind.as_str(),
            s.qualname,
            s.start_line,
            s.end_line
        ));
    }
    for i in &extract.imports {
        let mut parts = vec![format!(
            "import L{} {} {}",
            i.line,
            scope(i.scope),
            i.module
        )];
        for (label, value) in [
            ("name", &i.name),
            ("as", &i.alias),
            ("default", &i.default),
            ("ns", &i.namespace),
        ] {
            if let Some(v) = value {
                parts.push(format!("{label}={v}"));
            }
        }
        if i.wildcard {
            parts.push("*".into());
        }
        if i.reexport {
            parts.push("reexport".into());
        }
        if i.whole_module {
            parts.push("whole".into());
        }
        lines.push(parts.join(" "));
    }
    for c in &extract.calls {
        lines.push(format!(
            "call L{} {} {}{}{}",
            c.line,
            scope(c.scope),
            c.receiver
                .as_ref()
                .map(|r| format!("{r}."))
                .unwrap_or_default(),
            c.name,
            if c.is_new { " new" } else { "" }
        ));
    }
    for b in &extract.bases {
        lines.push(format!(
            "base {} <- {}",
            extract.symbols[b.class].qualname, b.expr
        ));
    }
    for m in &extract.mutations {
        lines.push(format!("write L{} {} {}", m.line, scope(m.scope), m.target));
    }
    let held_text = |held: &Held| match held {
        Held::Declared(class) => format!(": {class}"),
        Held::Returned(callee) => format!("= {callee}()"),
        Held::Same(expression) => format!("= {expression}"),
        Held::Builtin => "= builtin".to_string(),
        Held::Fixture(name) => format!("= fixture {name}"),
        Held::Unknown => "?".to_string(),
    };
    for t in &extract.types {
        let held = held_text(&t.held);
        lines.push(format!(
            "type {}{} {held}",
            if t.attribute { "attr " } else { "" },
            match widen(t.scope) {
                Some(s) => format!("{}.{}", extract.symbols[s].qualname, t.name),
                None => t.name.to_string(),
            },
        ));
    }
    for r in &extract.returns {
        lines.push(format!(
            "returns {} -> {}{}{}",
            extract.symbols[r.symbol].qualname,
            r.class,
            r.carrier
                .as_ref()
                .map(|c| format!(" in {c}"))
                .unwrap_or_default(),
            if r.property { " property" } else { "" }
        ));
    }
    for r in &extract.returned {
        let values: Vec<String> = r.values.iter().map(held_text).collect();
        lines.push(format!(
            "returned {} {}{}",
            extract.symbols[r.symbol].qualname,
            values.join(" | "),
            if r.property { " property" } else { "" }
        ));
    }
    for &f in &extract.fixtures {
        lines.push(format!("fixture {}", extract.symbols[f].qualname));
    }
    for (f, name) in &extract.takes {
        lines.push(format!("takes {} {name}", extract.symbols[*f].qualname));
    }
    for (m, extends) in &extract.extensions {
        lines.push(format!(
            "extends {} {extends}",
            extract.symbols[*m].qualname
        ));
    }
    for d in &extract.diagnostics {
        lines.push(format!("diagnostic {d}"));
    }
    lines.join("\n")
}

fn check(language: &str, source: &str, expected: &str) {
    let language = Registry::get().by_name(language).unwrap();
    let actual = render(&extract(language, source));
    let expected: String = expected
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("\n");
    assert_eq!(actual, expected, "\n--- actual ---\n{actual}\n");
}

#[test]
fn python_definitions_imports_calls_bases_and_writes() {
    check(
        "python",
        r#"import os
import os.path as osp
from . import views
from ..core import Engine as E, helpers
from .models import *
MAX_SIZE = 10

class App(Base, mixins.Logged):
    """The application."""
    def __init__(self):
        self.ready = False

    def run(self, path):
        from itertools import count
        self.ready = True
        data = helpers.load(osp.join(path, "x"))
        return self.dispatch(count())

def main():
    def inner():
        return App()
    inner()
    os.system("ls")
"#,
        "
        def constant MAX_SIZE L6-6
        def class App L8-17
        def method App.__init__ L10-11
        def method App.run L13-17
        def function main L19-23
        def function main.inner L20-21
        import L1 <module> os whole
        import L2 <module> os.path as=osp whole
        import L3 <module> . name=views
        import L4 <module> ..core name=Engine as=E
        import L4 <module> ..core name=helpers
        import L5 <module> .models *
        import L14 App.run itertools name=count
        call L16 App.run helpers.load
        call L16 App.run osp.join
        call L17 App.run self.dispatch
        call L17 App.run count
        call L21 main.inner App
        call L22 main inner
        call L23 main os.system
        base App <- Base
        base App <- mixins.Logged
        write L15 App.run ready
        type MAX_SIZE = builtin
        type attr App.ready = builtin
        type App.run.path ?
        type attr App.ready = builtin
        type App.run.data = helpers.load()
        returned App.run = self.dispatch()
        returned main.inner = App()
        ",
    );
}

#[test]
fn python_docstrings_signatures_and_duplicate_names() {
    let language = Registry::get().by_name("python").unwrap();
    let extract = extract(
        language,
        "class C:\n    @property\n    def x(self):\n        \"\"\"The x.\n\n        More.\"\"\"\n        return 1\n\n    @x.setter\n    def x(self, value):\n        pass\n",
    );
    let names: Vec<&str> = extract
        .symbols
        .iter()
        .map(|s| s.qualname.as_str())
        .collect();
    assert_eq!(names, ["C", "C.x", "C.x#2"]);
    assert_eq!(extract.symbols[1].doc.as_deref(), Some("The x."));
    assert_eq!(extract.symbols[1].signature, "def x(self)");
    assert_eq!(extract.symbols[2].signature, "def x(self, value)");
}

/// Extractions stay resident in the daemon: their lists hold no spare room, whether just
/// extracted or read back, and each name is held once (interned).
#[test]
fn extractions_are_held_compactly() {
    let language = Registry::get().by_name("python").unwrap();
    let source: String = (0..40)
        .map(|i| format!("def f{i}(x: Store):\n    y = g{i}(x)\n    x.save(y)\n    h(y)\n"))
        .collect();
    let fresh = extract(language, &source);
    let json = serde_json::to_vec(&fresh).unwrap();
    let read: FileExtract = serde_json::from_slice(&json).unwrap();
    assert_eq!(read, fresh);
    for extract in [&fresh, &read] {
        assert_eq!(extract.calls.len(), 120);
        assert_eq!(extract.calls.capacity(), extract.calls.len());
        assert_eq!(extract.symbols.capacity(), extract.symbols.len());
        assert!(!extract.types.is_empty());
        assert_eq!(extract.types.capacity(), extract.types.len());
        // Each name is held once, however many calls and extractions hold it.
        let saves: std::collections::HashSet<*const u8> = extract
            .calls
            .iter()
            .filter(|c| c.name == "save")
            .map(|c| c.name.as_ptr())
            .collect();
        assert_eq!(saves.len(), 1);
    }
    assert_eq!(fresh.calls[1].name, "save");
    assert_eq!(fresh.calls[1].name.as_ptr(), read.calls[1].name.as_ptr());
}

#[test]
fn python_syntax_errors_keep_what_parsed() {
    let language = Registry::get().by_name("python").unwrap();
    let extract = extract(
        language,
        "def ok():\n    pass\n\ndef broken(:\n    pass\n\nclass Fine:\n    pass\n",
    );
    assert!(extract.symbols.iter().any(|s| s.qualname == "ok"));
    assert!(extract.symbols.iter().any(|s| s.qualname == "Fine"));
    assert_eq!(extract.diagnostics.len(), 1);
    assert!(extract.diagnostics[0].starts_with("syntax errors at line"));
}

#[test]
fn typescript_imports_exports_classes_and_calls() {
    check(
        "typescript",
        r#"import fs from "fs";
import * as path from "node:path";
import { Store, helper as h } from "./store";
export { Router } from "./router";
export * from "./types";
const lodash = require("lodash");

export interface Repo extends Base { id: string }

export class Service extends BaseService implements Repo {
  constructor(private store: Store) {
    super();
    this.count = 0;
  }
  load(id: string) {
    this.count += 1;
    const s = new Store();
    return h(this.fetch(id), path.join("a", id));
  }
}

export const handler = async (x: number) => Service.create(x);
"#,
        r#"
        def interface Repo L8-8
        def class Service L10-20
        def method Service.constructor L11-14
        def method Service.load L15-19
        def function handler L22-22
        import L1 <module> fs
        import L1 <module> fs default=fs
        import L2 <module> node:path
        import L2 <module> node:path ns=path
        import L3 <module> ./store
        import L3 <module> ./store name=Store
        import L3 <module> ./store name=helper as=h
        import L4 <module> ./router name=Router reexport
        import L5 <module> ./types * reexport
        import L6 <module> lodash default=lodash
        import L6 <module> lodash
        call L6 <module> require
        call L17 Service.load Store new
        call L18 Service.load h
        call L18 Service.load this.fetch
        call L18 Service.load path.join
        call L22 handler Service.create
        base Repo <- Base
        base Service <- BaseService
        base Service <- Repo
        write L16 Service.load count
        type lodash = require()
        type Service.constructor.store : Store
        type attr Service.store : Store
        type attr Service.count = builtin
        type Service.load.id ?
        type Service.load.s = Store()
        type handler.x ?
        returned Service.load = h()
        "#,
    );
}

#[test]
fn what_functions_without_a_declared_type_return() {
    check(
        "python",
        r#"class Query:
    def where(self, flag):
        if flag:
            return None
        if not flag:
            return
        return self

    @cached_property
    def engine(self):
        return Engine()

    def size(self):
        return 3

    def rows(self):
        yield Row()

    async def fetch(self):
        return Row()

    def typed(self) -> Row:
        return make()

    def nested(self):
        def inner():
            return Row()
        return inner
"#,
        r#"
        def class Query L1-28
        def method Query.where L2-7
        def method Query.engine L10-11
        def method Query.size L13-14
        def method Query.rows L16-17
        def method Query.fetch L19-20
        def method Query.typed L22-23
        def method Query.nested L25-28
        def function Query.nested.inner L26-27
        call L11 Query.engine Engine
        call L17 Query.rows Row
        call L20 Query.fetch Row
        call L23 Query.typed make
        call L27 Query.nested.inner Row
        type Query.where.flag ?
        returns Query.typed -> Row
        returned Query.where = self
        returned Query.engine = Engine() property
        returned Query.size = builtin
        returned Query.nested = inner
        returned Query.nested.inner = Row()
        "#,
    );
}

/// pytest's fixtures: what a fixture returns or yields (its declared generator type aside,
/// `async` or not), and the parameters of tests and fixtures, which the runner fills by name;
/// a parameter with a default, a helper's parameter and `self` are no fixture.
#[test]
fn pytest_fixtures_and_the_parameters_that_take_them() {
    check(
        "python",
        r#"import pytest

@pytest.fixture
def app(tmp_path):
    return App(tmp_path)

@pytest.fixture(scope="module")
def client(app) -> Iterator[Client]:
    yield app.test_client()
    cleanup()

@fixture
async def session():
    yield Session()

@pytest.fixture
def rows():
    yield from make_rows()

def helper(client):
    return client

def test_get(client, n=3, db: Store):
    client.get()

class TestApi:
    def test_post(self, client):
        pass

@pytest.mark.parametrize("client, n", [(1, 2)])
def test_listed(client, n, app):
    pass
"#,
        r#"
        def function app L4-5
        def function client L8-10
        def function session L13-14
        def function rows L17-18
        def function helper L20-21
        def function test_get L23-24
        def class TestApi L26-28
        def method TestApi.test_post L27-28
        def function test_listed L31-32
        import L1 <module> pytest whole
        call L5 app App
        call L7 <module> pytest.fixture
        call L9 client app.test_client
        call L10 client cleanup
        call L14 session Session
        call L18 rows make_rows
        call L24 test_get client.get
        call L30 <module> pytest.mark.parametrize
        type app.tmp_path = fixture tmp_path
        type client.app = fixture app
        type helper.client ?
        type test_get.client = fixture client
        type test_get.n ?
        type test_get.db : Store
        type TestApi.test_post.client = fixture client
        type test_listed.client ?
        type test_listed.n ?
        type test_listed.app = fixture app
        returned app = App()
        returned client = app.test_client()
        returned session = Session()
        returned helper = client
        fixture app
        fixture client
        fixture session
        fixture rows
        takes app tmp_path
        takes client app
        takes test_get client
        takes test_get db
        takes TestApi.test_post client
        takes test_listed app
        "#,
    );
}

#[test]
fn what_javascript_functions_return() {
    check(
        "tsx",
        r#"export function open() {
  return new Store();
}

export function* rows() {
  yield new Store();
}

export async function later() {
  return new Store();
}

class Jobs {
  static async next() {
    return new Store();
  }
}

export function nothing(flag) {
  if (flag) {
    return null;
  }
  return open();
}
"#,
        r#"
        def function open L1-3
        def function rows L5-7
        def function later L9-11
        def class Jobs L13-17
        def method Jobs.next L14-16
        def function nothing L19-24
        call L2 open Store new
        call L6 rows Store new
        call L10 later Store new
        call L15 Jobs.next Store new
        call L23 nothing open
        type nothing.flag ?
        returned open = Store()
        returned nothing = open()
        "#,
    );
}

#[test]
fn known_types_of_names() {
    check(
        "python",
        r#"from typing import Optional
app = Flask(__name__)

class Service:
    def __init__(self, store: "Store", cache: Optional[Cache] = None):
        self.client = http.Client()
        self.store = store

    def run(self, items: list[int], user: User | None):
        total: Decimal = compute()
        return self.client.get()
"#,
        r#"
        def class Service L4-11
        def method Service.__init__ L5-7
        def method Service.run L9-11
        import L1 <module> typing name=Optional
        call L2 <module> Flask
        call L6 Service.__init__ http.Client
        call L10 Service.run compute
        call L11 Service.run self.client.get
        type app = Flask()
        type Service.__init__.store : Store
        type Service.__init__.cache : Cache
        type attr Service.client = http.Client()
        type attr Service.store = store
        type Service.run.items : list[int]
        type Service.run.user : User
        type Service.run.total : Decimal
        returned Service.run = self.client.get()
        "#,
    );
    check(
        "typescript",
        r#"class Repo {
  private cache: Cache;
  constructor(private store: Store, name?: Name) {
    this.http = new HttpClient();
  }
  load(id: Id) {
    const query = new Query(id);
    return query.run();
  }
}
"#,
        r#"
        def class Repo L1-10
        def method Repo.constructor L3-5
        def method Repo.load L6-9
        call L4 Repo.constructor HttpClient new
        call L7 Repo.load Query new
        call L8 Repo.load query.run
        type attr Repo.cache : Cache
        type Repo.constructor.store : Store
        type attr Repo.store : Store
        type Repo.constructor.name : Name
        type attr Repo.http = HttpClient()
        type Repo.load.id : Id
        type Repo.load.query = Query()
        returned Repo.load = query.run()
        "#,
    );
}

#[test]
fn called_expressions() {
    assert_eq!(called("Foo()"), Some("Foo"));
    assert_eq!(called("pkg.Foo(a, (b))"), Some("pkg.Foo"));
    assert_eq!(called("Foo(a)(b)"), None);
    assert_eq!(called("é.f(x)"), Some("é.f"));
    assert_eq!(called("foo"), None);
    assert_eq!(called("a)(b)"), None);
}

#[test]
fn chained_calls() {
    assert_eq!(
        chained_call("A.new().b(x).c(f(y))"),
        Some(("A.new().b(x)", "c"))
    );
    assert_eq!(chained_call("A.new().b"), None);
    assert_eq!(chained_call("a.b(x)"), None);
    assert_eq!(chained_call("f(x)(y)"), None);
    assert_eq!(chained_call("a)(b.c()"), None);
}

#[test]
fn literal_receivers() {
    for literal in ["\"a\"", "'…", "f\"{x}\"", "rb'x'", "[1, [2]]", "`t`", "42"] {
        assert!(is_literal(literal), "{literal}");
    }
    for other in [
        "foo", "bar[1]", "fr", "self.x", "b", "…", "(a)", "[a][0]", "'a'[0]", "\"",
    ] {
        assert!(!is_literal(other), "{other}");
    }
}

#[test]
fn bindings_that_make_a_type_unknown() {
    check(
        "python",
        r#"import m
current = m.Engine()

class Car:
    engine: "Engine"
    label = CharField()

    @classmethod
    def build(cls, parts, size=1) -> "Car":
        made = cls()
        for part in parts:
            pass
        with open(parts) as f:
            a, self.b = f
        names = [n for n in parts]
        other.wheel = m.Wheel()
        empty = None
        return made

def swap():
    global current
    current = {}
    alias = m.Engine
"#,
        r#"
        def class Car L4-18
        def method Car.build L9-18
        def function swap L20-23
        import L1 <module> m whole
        call L2 <module> m.Engine
        call L6 Car CharField
        call L10 Car.build cls
        call L13 Car.build open
        call L16 Car.build m.Wheel
        write L21 swap current
        type current = m.Engine()
        type attr Car.engine : Engine
        type Car.build.parts ?
        type Car.build.size ?
        type Car.build.made = cls()
        type Car.build.part ?
        type Car.build.f ?
        type Car.build.a ?
        type attr Car.b ?
        type Car.build.names = builtin
        type Car.build.n ?
        type attr wheel ?
        type current ?
        type swap.current = builtin
        type swap.alias = m.Engine
        returns Car.build -> Car
        "#,
    );
}

#[test]
fn an_extraction_stored_by_an_earlier_version_loads_and_is_stale() {
    // The shape version 1 stored: type hints named a class, there was no version field.
    let old = r#"{"lines":3,"symbols":[],"imports":[],"calls":[],"bases":[],"mutations":[],
        "types":[{"scope":null,"name":"app","class":"Flask","attribute":true}],
        "returns":[{"symbol":0,"class":"Flask"}],"diagnostics":[]}"#;
    let extract: FileExtract = serde_json::from_str(old).expect("an old record loads");
    assert_ne!(
        extract.version, VERSION,
        "so the index parses the file again"
    );
    assert_eq!(extract.types[0].held, Held::Unknown);
    assert!(!extract.returns[0].property);
}

#[test]
fn receiver_types_keep_names_that_start_with_mut() {
    use super::receiver_type;
    assert_eq!(receiver_type("*mutexMap").as_deref(), Some("mutexMap"));
    assert_eq!(receiver_type("mutation").as_deref(), Some("mutation"));
    assert_eq!(receiver_type("&mut Server<T>").as_deref(), Some("Server"));
    assert_eq!(receiver_type("* Server [T]").as_deref(), Some("Server"));
    assert_eq!(receiver_type("pkg.Server").as_deref(), Some("Server"));
}

#[test]
fn separators_and_member_prefixes_make_names_dotted() {
    check(
        "php",
        r#"<?php
use App\Models\{User, Post as Article};
class Invoice extends \App\Base {
    private ?Store $store;
    public function pay() {
        parent::boot();
        \App\Models\User::find(1);
        $this->store->get();
        $this->paid = true;
    }
}
"#,
        "def class Invoice L3-11
         def method Invoice.pay L5-10
         import L2 <module> App.Models name=User
         import L2 <module> App.Models name=Post as=Article
         call L6 Invoice.pay super.boot
         call L7 Invoice.pay App.Models.User.find
         call L8 Invoice.pay $this.store.get
         base Invoice <- App.Base
         write L9 Invoice.pay paid
         type attr Invoice.store : Store
         type attr Invoice.paid = builtin",
    );
    check(
        "ruby",
        r#"class Cart < Shop::Base
  def add
    @store.write(Storage::Disk.new)
    @total = 1
  end
end
"#,
        "def class Cart L1-6
         def method Cart.add L2-5
         call L3 Cart.add self.@store.write
         call L3 Cart.add Storage.Disk new
         base Cart <- Shop.Base
         write L4 Cart.add @total
         type attr Cart.@total = builtin",
    );
}

#[test]
fn use_trees_collapse_to_the_path_of_each_item() {
    let rust = &Registry::get().by_name("rust").unwrap().spec.separators;
    let grouped_path = |text| super::grouped_path(text, rust);
    assert_eq!(grouped_path("crate::store::"), "crate.store");
    assert_eq!(
        grouped_path("crate::{graph::Graph, store::{self, "),
        "crate.store"
    );
    assert_eq!(grouped_path("a::{b::{c, d}, e::{"), "a.e");
    assert_eq!(grouped_path("::std::"), "std");
    assert_eq!(grouped_path("super::"), "super");
    let php = &Registry::get().by_name("php").unwrap().spec.separators;
    assert_eq!(super::grouped_path("App\\{Models\\", php), "App.Models");
}

#[test]
fn rust_impls_use_trees_paths_and_writes() {
    check(
        "rust",
        r#"use crate::{store::{self, Store as Db}, shapes::*};
mod close;

pub struct Server { store: Db, hits: u32 }

impl Server {
    pub fn new(store: Db) -> Self { Self { store, hits: 0 } }
    fn handle(&mut self) -> Result<u32, String> { self.hits += 1; self.store.get(); store::open(); Ok(self.hits) }
}

impl Shape for Circle {
    fn area(&self) -> f64 { let s = Circle::new().unwrap(); super::pi() + s.r }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs::{self as f};
    fn helper() { self::inner::run(); }
}
"#,
        "
        def class Server L4-4
        def method Server.new L7-7
        def method Server.handle L8-8
        def method Circle.area L12-12
        def function helper L19-19
        import L1 <module> crate.store whole
        import L1 <module> crate.store name=Store as=Db
        import L1 <module> crate.shapes *
        import L2 <module> close whole
        import L18 <module> std.fs as=f whole
        call L8 Server.handle self.store.get
        call L8 Server.handle store.open
        call L8 Server.handle Ok
        call L12 Circle.area Circle.new
        call L12 Circle.area Circle.new().unwrap
        call L12 Circle.area super.pi
        call L19 helper inner.run
        base Circle.area <- Shape
        write L8 Server.handle hits
        type attr Server.store : Db
        type attr Server.hits : u32
        type Server.new.store : Db
        type Circle.area.s = Circle.new().unwrap()
        returns Server.new -> Server
        returns Server.handle -> u32 in Result
        returns Circle.area -> f64
        ",
    );
}

/// PHP docblocks type what declares no type: a parameter by its `@param` (not another's, not
/// one declared in code), a property by its `@var`, an assignment by the `@var` before it, a
/// method by its `@return`; `?T`, `T|null` and `$this` read as one class, arrays and other
/// unions as none.
#[test]
fn php_docblocks_type_what_declares_no_type() {
    check(
        "php",
        r#"<?php
class Service {
    /** @var Store */
    private $store;
    /**
     * @param Client|null $client the client
     * @param int $n
     * @return Result
     */
    public function run($client, $n, $other) {
        /** @var Cache $cache */
        $cache = $this->make();
        return $client->get();
    }
    /** @return $this */
    public function again() { return $this; }
    /** @return Store[] */
    public function all() { return []; }
    /** @param Other $typed */
    public function typed(Declared $typed) {}
}
"#,
        "
        def class Service L2-21
        def method Service.run L10-14
        def method Service.again L16-16
        def method Service.all L18-18
        def method Service.typed L20-20
        call L12 Service.run $this.make
        call L13 Service.run $client.get
        type attr Service.store : Store
        type Service.run.$client : Client
        type Service.run.$n : int
        type Service.run.$other ?
        type Service.run.$cache : Cache
        type Service.typed.$typed : Declared
        returns Service.run -> Result
        returns Service.again -> static
        ",
    );
}

/// JSDoc types JavaScript's parameters, variables, `this.x` and what functions return, as
/// docblocks do PHP's; a tag naming another parameter types none.
#[test]
fn jsdoc_types_javascript() {
    check(
        "tsx",
        r#"/**
 * @param {Store} store
 * @param {Other} [unrelated]
 * @returns {?Result}
 */
export function run(store, item) {
  /** @type {Cache} */
  const cache = make();
  return store.get();
}

class Service {
  constructor(db) {
    /** @type {Client|null} */
    this.client = connect(db);
  }

  /** @returns {Promise<Store>} */
  load() {}
}
"#,
        "
        def function run L6-10
        def class Service L12-20
        def method Service.constructor L13-16
        def method Service.load L19-19
        call L8 run make
        call L9 run store.get
        call L15 Service.constructor connect
        type run.store : Store
        type run.item ?
        type run.cache : Cache
        type Service.constructor.db ?
        type attr Service.client : Client
        returns run -> Result
        ",
    );
}

/// A macro's arguments are tokens to the grammar: the calls written in them are read at their
/// lines, macros in macros too; a macro given braces (items) or no parenthesis is not read.
#[test]
fn rust_calls_in_macro_arguments() {
    check(
        "rust",
        r#"fn check(store: Store) {
    assert_eq!(parse("1"), Ok(1));
    info!("{} {x}", store.name());
    let v = vec![make(), 2];
    assert!(matches!(kind(
        v), Kind::A), "{}", format!("{}", crate::util::show(&v)));
    log!("no calls here {x}");
    thread_local! { static X: u8 = init(); }
    other(1)
}
"#,
        "
        def function check L1-10
        call L2 check parse
        call L2 check Ok
        call L3 check store.name
        call L4 check make
        call L5 check kind
        call L6 check crate.util.show
        call L9 check other
        type check.store : Store
        type check.v ?
        ",
    );
}

#[test]
fn rust_carried_and_referenced_results_variants_and_macro_functions() {
    check(
        "rust",
        r#"enum Kind { Plain, Tagged(u8) }

impl Builder {
    fn hits(&mut self, n: u32) -> &mut Self { self }
    fn build(&self) -> io::Result<Searcher> { todo() }
    fn root(&self) -> &Path { todo() }
    fn find(&self) -> Option<&Entry> { todo() }
}

macro_rules! getter { ($t:ident) => { impl $t { fn made(&self) -> u8 { 1 } } } }

fn run() { let s = Builder::new().hits(1).build()?; let w = s.wait().await; }
"#,
        "
        def class Kind L1-1
        def method Builder.hits L4-4
        def method Builder.build L5-5
        def method Builder.root L6-6
        def method Builder.find L7-7
        def function run L12-12
        call L5 Builder.build todo
        call L6 Builder.root todo
        call L7 Builder.find todo
        call L12 run Builder.new
        call L12 run Builder.new().hits
        call L12 run Builder.new().hits(1).build
        call L12 run s.wait
        type attr Kind.Plain ?
        type attr Kind.Tagged ?
        type Builder.hits.n : u32
        type attr made ?
        type run.s = Builder.new().hits(1).build()?
        type run.w = s.wait().await
        returns Builder.hits -> Builder
        returns Builder.build -> Searcher in io.Result
        returns Builder.root -> Path
        returns Builder.find -> Entry in Option
        ",
    );
}

#[test]
fn declared_namespaces_types_in_parts_and_constructors_named_as_their_class() {
    let registry = Registry::get();
    let java = extract(
        registry.by_name("java").unwrap(),
        "package com.shop;\nclass A {\n  A() { this.x = 1; }\n  void m() { this.x = 2; }\n}\n",
    );
    assert_eq!(java.packages, ["com.shop"]);
    let writes: Vec<u32> = java.mutations.iter().map(|m| m.line).collect();
    assert_eq!(writes, [4], "a constructor's writes are not state writes");
    let csharp = extract(
        registry.by_name("csharp").unwrap(),
        "namespace Shop.Web;\npublic partial class App { }\ninternal sealed class Other { }\n",
    );
    assert_eq!(csharp.packages, ["Shop.Web"]);
    assert_eq!(csharp.parts, [0]);
    assert_eq!(csharp.symbols.len(), 2);
}

#[test]
fn layout_goes_from_an_expression_but_words_stay_apart() {
    let plain = |text: &str| super::without_layout(text).collect::<String>();
    assert_eq!(plain("new Store ( )"), "new Store()");
    assert_eq!(
        plain("builder\n    .Add()\n    .Build()"),
        "builder.Add().Build()"
    );
    assert_eq!(plain("a . b"), "a.b");
}

#[test]
fn type_arguments_name_types_not_methods() {
    assert_eq!(
        generic_path("Policy<Result>.Handle"),
        Some(vec!["Policy<Result>", "Handle"])
    );
    assert_eq!(
        generic_path("A.Builder<Dictionary<string, int>, A.B>"),
        Some(vec!["A", "Builder<Dictionary<string, int>, A.B>"])
    );
    assert_eq!(generic_path("a < b"), None);
    assert_eq!(generic_path("f(x)"), None);
    assert_eq!(generic_path("A<B>C"), None);
    let erased = |text: &str| without_method_type_arguments(text).into_owned();
    assert_eq!(
        erased("Policy.Handle<E>().Retry<int>(3)"),
        "Policy.Handle().Retry(3)"
    );
    assert_eq!(erased("new Builder<int>()"), "new Builder<int>()");
    assert_eq!(
        erased("new A.Builder<int>().Add<T>()"),
        "new A.Builder<int>().Add()"
    );
    assert_eq!(erased("Policy<int>.Handle<E>()"), "Policy<int>.Handle()");
    assert_eq!(erased("f(a < b, c > (d))"), "f(a < b, c > (d))");
}

/// The matches of each query file run on its own, as extraction read them before the files
/// were joined into one query.
fn matches_query_by_query<'a>(
    queries: &'a [Query],
    tree: &'a Tree,
    source: &'a str,
) -> Matches<'a> {
    let mut matches: Matches<'a> = Default::default();
    for (k, query) in queries.iter().enumerate() {
        let names = query.capture_names();
        let mut cursor = QueryCursor::new();
        let mut found = cursor.matches(query, tree.root_node(), source.as_bytes());
        while let Some(m) = found.next() {
            matches[k].push(
                m.captures()
                    .iter()
                    .map(|c| (names[c.index as usize], c.node))
                    .collect(),
            );
        }
    }
    matches
}

/// Source files under a folder, with the language of each.
fn sources(dir: &std::path::Path, out: &mut Vec<(std::path::PathBuf, &'static Language)>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, out);
        } else if let Some(language) = Registry::get().for_path(&path.to_string_lossy()) {
            out.push((path, language));
        }
    }
}

/// One walk with the query files joined gives every file of every grammar's fixtures (and
/// `CAIRN_EXTRACT_CORPUS`'s, if set: a whole repository) exactly what one walk per query
/// file gave.
#[test]
fn one_pass_over_the_joined_queries_equals_one_pass_per_query() {
    let manifest = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    sources(&manifest.join("grammars"), &mut files);
    sources(&manifest.join("tests/fixtures"), &mut files);
    if let Some(corpus) = std::env::var_os("CAIRN_EXTRACT_CORPUS") {
        sources(std::path::Path::new(&corpus), &mut files);
    }
    assert!(files.len() > 100, "{} files", files.len());
    let mut separate: HashMap<String, Vec<Query>> = HashMap::new();
    for (path, language) in files {
        let Ok(source) = std::fs::read_to_string(&path) else {
            continue;
        };
        let queries = separate
            .entry(language.spec.name.clone())
            .or_insert_with(|| {
                QueryKind::ALL
                    .iter()
                    .map(|&kind| Query::new(&language.grammar, language.query_text(kind)).unwrap())
                    .collect()
            });
        let mut parser = Parser::new();
        parser.set_language(&language.grammar).unwrap();
        let tree = parser.parse(&source, None).unwrap();
        let one = Extractor::new(
            language,
            &source,
            &tree,
            all_matches(language.queries(), &tree, &source),
        )
        .run();
        let each = Extractor::new(
            language,
            &source,
            &tree,
            matches_query_by_query(queries, &tree, &source),
        )
        .run();
        assert!(one == each, "{}: the joined query differs", path.display());
    }
}
