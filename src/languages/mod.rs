//! The registry of languages: each is a tree-sitter grammar plus the data under `grammars/<lang>/`
//! (a `language.toml` table and the query files). This is the only per-language Rust in cairn.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};
use serde::{Deserialize, Serialize};
use tree_sitter::Query;
use tree_sitter_language::LanguageFn;

include!(concat!(env!("OUT_DIR"), "/grammar_files.rs"));

/// The grammars cairn is built with: adding a language is one line here and a folder under
/// `grammars/`.
const GRAMMARS: &[(&str, LanguageFn)] = &[
    ("c", tree_sitter_c::LANGUAGE),
    ("cpp", tree_sitter_cpp::LANGUAGE),
    ("csharp", tree_sitter_c_sharp::LANGUAGE),
    ("go", tree_sitter_go::LANGUAGE),
    ("java", tree_sitter_java::LANGUAGE),
    ("php", tree_sitter_php::LANGUAGE_PHP),
    ("python", tree_sitter_python::LANGUAGE),
    ("ruby", tree_sitter_ruby::LANGUAGE),
    ("rust", tree_sitter_rust::LANGUAGE),
    ("typescript", tree_sitter_typescript::LANGUAGE_TYPESCRIPT),
    ("tsx", tree_sitter_typescript::LANGUAGE_TSX),
];

/// A failure to load a grammar folder: always a bug in the folder, reported with its name.
#[derive(Debug, thiserror::Error)]
pub enum GrammarError {
    #[error("grammars/{lang}: missing file {file}")]
    Missing { lang: String, file: String },
    #[error("grammars/{lang}/language.toml: {message}")]
    Table { lang: String, message: String },
    #[error("grammars/{lang}/{file}.scm: {message}")]
    Query {
        lang: String,
        file: String,
        message: String,
    },
}

/// Which module system resolves a language's imports (`module_system` in `language.toml`;
/// the systems live in `graph::modules`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ModuleKind {
    /// Dotted packages: `a.b.c` and relative `..c` (Python).
    Dotted,
    /// Relative and absolute paths with extension probing and aliases (TypeScript, JavaScript).
    Paths,
    /// Package directories under a `go.mod` module path (Go).
    Go,
    /// Namespaces mapped to directories by `composer.json` PSR-4 prefixes (PHP).
    Psr4,
    /// `require_relative` paths and `require` names on `lib/` load paths; constants global (Ruby).
    Require,
    /// Crates of `Cargo.toml` packages: `mod` files and `crate::`/`super::`/`self::` paths (Rust).
    Crate,
    /// `#include` paths beside the including file and in include roots; the program's names
    /// are one namespace (C, C++).
    Includes,
    /// Namespaces each file declares (`package a.b;`, `namespace A.B`), wherever the file is
    /// (Java, C#).
    Namespaces,
}

/// One side-effect category's triggers.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SideEffectRule {
    #[serde(default)]
    pub modules: Vec<String>,
    #[serde(default)]
    pub calls: Vec<String>,
}

/// Which files are tests (`[tests]`): globs matched against the repository-relative path.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct TestsTable {
    #[serde(default)]
    files: Vec<String>,
    /// Of `files`, those a test runner collects; empty when the language does not say (all).
    #[serde(default)]
    runs: Vec<String>,
    /// Fixture trees: nothing under them is a test to run, whatever its name.
    #[serde(default)]
    fixtures: Vec<String>,
    /// Files (by name) whose test fixtures the tests of their folder and the folders under it
    /// name as parameters (pytest's `conftest.py`).
    #[serde(default)]
    fixtures_from: Vec<String>,
}

/// Names that are always defined (`[builtins]`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct BuiltinsTable {
    #[serde(default)]
    pub names: Vec<String>,
    /// Builtins whose call makes a value of the language's own types (`dict()`, `new Map()`).
    #[serde(default)]
    pub values: Vec<String>,
}

/// Values of the language's own types that carry one of another type (Rust's `Result<T, _>`,
/// `Option<T>`, named where a function declares what it returns).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CarriersTable {
    /// The carrier types a declaration names with the carried type first (`Option<T>`,
    /// `Result<T, E>`).
    #[serde(default)]
    pub types: Vec<String>,
    /// Methods that give the carried value (`unwrap`, `expect`).
    #[serde(default)]
    pub unwrap: Vec<String>,
    /// Postfix operators that give the carried value (`?`).
    #[serde(default)]
    pub suffixes: Vec<String>,
    /// Postfix operators that give the value itself (`.await` on an `async fn`'s call).
    #[serde(default)]
    pub passes: Vec<String>,
}

/// Attributes a framework's metaclass gives every subclass of one of its classes (Django's
/// models get a default manager, `objects`): what no assignment in the source shows. Classes
/// are named as nodes are, `path::Qualified.name`, the path being how the repository's file
/// path ends (`django/db/models/base.py::Model`).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MadeAttributes {
    /// The class whose subclasses (and itself) have the attributes.
    pub class: String,
    pub attributes: Vec<String>,
    /// The class the attributes' values are instances of.
    pub instance_of: String,
}

/// A language's `language.toml`, parsed strictly: a key cairn does not know is an error, so a
/// misspelled switch is refused instead of ignored. A language with `config_from` holds its
/// base's table under its own name, extensions and `queries_from`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct LanguageSpec {
    pub name: String,
    pub extensions: Vec<String>,
    /// The language whose query files this one reads (TSX reads TypeScript's).
    pub queries_from: Option<String>,
    /// The language whose table this one takes, but for its name, extensions and
    /// `queries_from`.
    pub config_from: Option<String>,
    /// Required, from the table itself or from `config_from`'s: [`Language::module_system`]
    /// holds it once loaded.
    pub module_system: Option<ModuleKind>,
    /// Config files (by name, or `*.ext` for any name so ending) that define the module
    /// system's roots: `tsconfig.json`, `go.mod`, `*.csproj`.
    #[serde(default)]
    pub roots_from: Vec<String>,
    #[serde(default)]
    pub source_roots: Vec<String>,
    /// What the language writes between the parts of a name or a member access besides `.`
    /// (PHP's `\`, `->`, `::`): extraction reads each as `.`, so names stay dotted.
    #[serde(default)]
    pub separators: Vec<String>,
    #[serde(default)]
    pub self_names: Vec<String>,
    /// Members of any instance that hold its class (Python's `__class__`, Ruby's `class`):
    /// `self.class.build` calls the class's `build`.
    #[serde(default)]
    pub class_members: Vec<String>,
    /// Whether a bare name inside a class reaches the class's members without `this.` (Java,
    /// C#, C++, Ruby): `save()` calls the class's method, `store.get()` reads its field.
    #[serde(default)]
    pub implicit_self: bool,
    /// Whether that reaches the innermost class only (Ruby: a class nested in a module does
    /// not call the module's methods by name), not the classes enclosing it (Java's inner
    /// classes).
    #[serde(default)]
    pub implicit_self_innermost: bool,
    /// Whether a call by name never calls a local (Ruby: `env("X")` calls the method `env`
    /// even where a local `env` is bound; a block held in a local is called with `.call`).
    #[serde(default)]
    pub locals_uncallable: bool,
    /// Where a name captured as a bare call (`@call.bare`) reads as a value: parent node kinds,
    /// or `kind.field` for one field of the parent (Ruby's `call.receiver`).
    #[serde(default)]
    pub bare_calls_in: Vec<String>,
    /// Whether naming a method calls it (Ruby: `make_store.load` calls `load` on what
    /// `make_store` returns, where Python's `self.make_store` is the method itself).
    #[serde(default)]
    pub calls_without_parentheses: bool,
    /// Whether a namespace sees the types of the namespaces enclosing it (C#: code in `A.B.C`
    /// names `A.B`'s and `A`'s types without a `using`).
    #[serde(default)]
    pub enclosing_namespaces: bool,
    /// Whether a name that no file of the repository defines is outside it (C#: the SDK's
    /// implicit and project-wide `global using`s bring the platform's and packages' types in
    /// unseen, so a name nothing declares is theirs).
    #[serde(default)]
    pub undeclared_is_outside: bool,
    /// Whether names of definitions are read without regard to case (PHP's classes,
    /// functions and methods: `PhpUnitTestCase` names the import `PHPUnitTestCase`).
    #[serde(default)]
    pub names_ignore_case: bool,
    /// Methods that answer a call of any name their class does not declare (PHP's `__call`
    /// and `__callStatic`): such a call is the class's, not outside code.
    #[serde(default)]
    pub catch_all_methods: Vec<String>,
    /// Whether a method called on a value or a path (`x.len()`, `T::from()`) that no file of
    /// the repository declares is outside it (Rust: a method is declared by an `fn`, in the
    /// source or in a macro's tokens, so one nothing declares is std's or a dependency's).
    #[serde(default)]
    pub undeclared_methods_are_outside: bool,
    /// Those of `self_names` that mean the enclosing class itself (`cls`), not an instance.
    #[serde(default)]
    pub class_names: Vec<String>,
    /// Receivers that mean the base class, as `super` does (PHP's `parent::`).
    #[serde(default)]
    pub super_names: Vec<String>,
    /// A prefix that makes a name a member of `self` (Ruby's `@store` is `self.@store`).
    pub member_prefix: Option<String>,
    /// A class declared again is the same class, wherever it is (Ruby's reopened classes and
    /// modules): its methods are those of every declaration.
    #[serde(default)]
    pub open_classes: bool,
    /// Classes and constants nested in an enclosing class or module are seen from inside it
    /// (Ruby's lexical constant lookup).
    #[serde(default)]
    pub lexical_constants: bool,
    /// Whether `x.name()` calls a method, never what a field of that name holds (Rust: fields
    /// and methods are apart, a field's closure is called as `(x.name)()`).
    #[serde(default)]
    pub calls_name_methods: bool,
    #[serde(default)]
    pub constructors: Vec<String>,
    /// Methods of a class that make an instance of it (Ruby's `new`): `Foo.new(x).save` calls
    /// a Foo's `save`.
    #[serde(default)]
    pub instance_makers: Vec<String>,
    /// Test file globs, compiled into the [`Language`] at load.
    #[serde(default)]
    pub tests: TestsTable,
    #[serde(default)]
    pub builtins: BuiltinsTable,
    #[serde(default)]
    pub carriers: CarriersTable,
    /// Attributes a framework gives every subclass of one of its classes at run time, read
    /// where the repository holds the framework itself.
    #[serde(default)]
    pub made_attributes: Vec<MadeAttributes>,
    #[serde(default)]
    pub side_effects: BTreeMap<String, SideEffectRule>,
}

/// The queries a language has, one file each, in the order extraction reads their matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QueryKind {
    Definitions,
    Imports,
    Calls,
    Inheritance,
    Mutations,
    Types,
}

impl QueryKind {
    pub const ALL: [QueryKind; 6] = [
        QueryKind::Definitions,
        QueryKind::Imports,
        QueryKind::Calls,
        QueryKind::Inheritance,
        QueryKind::Mutations,
        QueryKind::Types,
    ];

    /// The query's file name, without `.scm`.
    pub fn file(self) -> &'static str {
        match self {
            QueryKind::Definitions => "definitions",
            QueryKind::Imports => "imports",
            QueryKind::Calls => "calls",
            QueryKind::Inheritance => "inheritance",
            QueryKind::Mutations => "mutations",
            QueryKind::Types => "types",
        }
    }
}

/// Compiled queries of one language: its query files as one query, so extraction walks a
/// file's tree once instead of once per file (the walk, not the patterns, is most of a
/// query's cost). Each pattern still belongs to one kind.
pub struct Queries {
    pub all: Query,
    /// The first pattern of each kind in `all`, in [`QueryKind::ALL`] order.
    starts: [usize; 6],
}

impl Queries {
    /// The kind a pattern of `all` comes from.
    pub fn kind_of(&self, pattern: usize) -> QueryKind {
        let k = self.starts.partition_point(|&start| start <= pattern);
        QueryKind::ALL[k.saturating_sub(1)]
    }

    /// How many patterns a kind has.
    #[cfg(test)]
    pub fn pattern_count(&self, kind: QueryKind) -> usize {
        let k = kind as usize;
        let end = self
            .starts
            .get(k + 1)
            .copied()
            .unwrap_or(self.all.pattern_count());
        end - self.starts[k]
    }
}

/// Everything cairn knows about one language: its grammar, its `language.toml` and what is
/// compiled from them.
pub struct Language {
    pub grammar: tree_sitter::Language,
    /// The language's table, as written (or as its `config_from` base wrote it).
    pub(crate) spec: LanguageSpec,
    /// The table's `module_system`, which loading requires.
    pub module_system: ModuleKind,
    /// Compiled on first use: compiling every language's queries takes about a second and a
    /// half of CPU, and a repository uses few of the languages.
    queries: OnceLock<Queries>,
    /// The folder the query files are read from.
    query_dir: String,
    test_files: GlobSet,
    /// Test files a runner collects; `None` when the language does not say (all of them).
    test_runs: Option<GlobSet>,
    test_fixtures: GlobSet,
    /// The name, one copy that every file of the language holds ([`Language::shared_name`]).
    shared_name: std::sync::Arc<str>,
}

impl Language {
    /// The language's name as the files of the language hold it: one copy for all of them,
    /// so a pass over every file that asks each one's language (each patch makes one) reads
    /// the same few bytes rather than a copy in each file's own allocation.
    pub fn shared_name(&self) -> std::sync::Arc<str> {
        self.shared_name.clone()
    }

    /// The compiled queries, compiled by the first caller (others wait for it). Panics only
    /// if a built-in query is broken, which `every_query_of_every_language_compiles` catches.
    pub fn queries(&self) -> &Queries {
        self.queries.get_or_init(|| {
            compile_queries(&self.spec.name, &self.query_dir, &self.grammar)
                .unwrap_or_else(|e| panic!("built-in queries compile: {e}"))
        })
    }

    /// The text of one of the language's query files.
    pub fn query_text(&self, kind: QueryKind) -> &'static str {
        grammar_file(&self.query_dir, &format!("{}.scm", kind.file()))
            .expect("a loaded language's query files exist")
    }

    /// Whether a repository-relative path is a test file of this language.
    pub fn is_test_path(&self, path: &str) -> bool {
        self.test_files.is_match(path)
    }

    /// Whether a test file is one a test runner collects, rather than a fixture or helper in
    /// the test tree (`conftest.py`, a test app, a factory).
    pub(crate) fn is_test_to_run(&self, path: &str) -> bool {
        self.is_test_path(path)
            && self
                .test_runs
                .as_ref()
                .is_none_or(|runs| runs.is_match(path))
            && !self.test_fixtures.is_match(path)
    }

    /// Names of the files whose fixtures the tests of their folder and the folders under it
    /// take by parameter name (`[tests] fixtures_from`).
    pub(crate) fn fixtures_from(&self) -> &[String] {
        &self.spec.tests.fixtures_from
    }

    /// Whether `name` is always defined in this language.
    pub fn is_builtin(&self, name: &str) -> bool {
        // `List<Store>` (C#'s `new List<Store>()`) is the builtin `List`.
        let name = name.split('<').next().unwrap_or(name);
        self.spec.builtins.names.iter().any(|b| b == name)
    }
}

/// All registered languages, loaded once.
pub struct Registry {
    languages: Vec<Language>,
}

impl Registry {
    /// The built-in registry, each language's queries compiled when first used; panics only
    /// if a built-in grammar folder is broken, which the query-compilation test catches.
    pub fn get() -> &'static Registry {
        static REGISTRY: OnceLock<Registry> = OnceLock::new();
        REGISTRY.get_or_init(|| Registry::tables().expect("built-in grammars load"))
    }

    /// Loads every registered grammar from its folder and compiles all their queries.
    pub fn load() -> Result<Registry, GrammarError> {
        let registry = Registry::tables()?;
        for language in &registry.languages {
            let queries =
                compile_queries(&language.spec.name, &language.query_dir, &language.grammar)?;
            let _ = language.queries.set(queries);
        }
        Ok(registry)
    }

    /// Loads every registered grammar's tables, leaving the queries to their first use.
    fn tables() -> Result<Registry, GrammarError> {
        let languages = GRAMMARS
            .iter()
            .map(|(name, grammar)| load_language(name, tree_sitter::Language::new(*grammar)))
            .collect::<Result<_, _>>()?;
        Ok(Registry { languages })
    }

    /// Whether a path has the extension of a registered language. Reads only the language
    /// tables (compiling every grammar's queries, as [`Registry::get`] does, takes a while):
    /// for callers that only need to tell paths from words.
    pub fn is_source_path(path: &str) -> bool {
        static EXTENSIONS: OnceLock<Vec<String>> = OnceLock::new();
        let extensions = EXTENSIONS.get_or_init(|| {
            GRAMMARS
                .iter()
                .filter_map(|(name, _)| parse_table(name).ok())
                .flat_map(|table| table.extensions)
                .collect()
        });
        path.rsplit_once('.')
            .is_some_and(|(_, ext)| extensions.iter().any(|e| e.eq_ignore_ascii_case(ext)))
    }

    /// Whether `path` is a test file (`None`: it is not) and, if so, whether a test runner
    /// collects it (`Some(true)`) or it is a fixture or helper of the test tree (`Some(false)`).
    pub fn test_kind(&self, path: &str) -> Option<bool> {
        let language = self.for_path(path)?;
        language
            .is_test_path(path)
            .then(|| language.is_test_to_run(path))
    }

    /// The language a file belongs to, by its extension.
    pub fn for_path(&self, path: &str) -> Option<&Language> {
        let extension = path.rsplit_once('.')?.1;
        self.languages.iter().find(|l| {
            l.spec
                .extensions
                .iter()
                .any(|e| e.eq_ignore_ascii_case(extension))
        })
    }

    /// A language's name as files hold it: the language's shared copy, or a copy of its own
    /// for a name no language has.
    pub fn shared_name(&self, name: &str) -> std::sync::Arc<str> {
        self.by_name(name)
            .map_or_else(|| name.into(), Language::shared_name)
    }

    /// A language by name.
    pub fn by_name(&self, name: &str) -> Option<&Language> {
        self.languages.iter().find(|l| l.spec.name == name)
    }

    pub fn all(&self) -> &[Language] {
        &self.languages
    }
}

fn grammar_file(lang: &str, file: &str) -> Result<&'static str, GrammarError> {
    let key = format!("{lang}/{file}");
    GRAMMAR_FILES
        .iter()
        .find(|(k, _)| *k == key)
        .map(|(_, text)| *text)
        .ok_or_else(|| GrammarError::Missing {
            lang: lang.to_string(),
            file: file.to_string(),
        })
}

fn parse_table(lang: &str) -> Result<LanguageSpec, GrammarError> {
    toml::from_str(grammar_file(lang, "language.toml")?).map_err(|e| GrammarError::Table {
        lang: lang.to_string(),
        message: e.to_string(),
    })
}

/// The queries of the language named `lang`, read from `query_dir`.
fn compile_queries(
    lang: &str,
    query_dir: &str,
    grammar: &tree_sitter::Language,
) -> Result<Queries, GrammarError> {
    let mut text = String::new();
    let mut offsets = [0usize; 6];
    for (k, kind) in QueryKind::ALL.iter().enumerate() {
        offsets[k] = text.len();
        text.push_str(grammar_file(query_dir, &format!("{}.scm", kind.file()))?);
        text.push('\n');
    }
    let all = Query::new(grammar, &text).map_err(|e| {
        // Name the file at fault: the one that does not compile alone.
        let file = QueryKind::ALL
            .iter()
            .find(|kind| {
                grammar_file(query_dir, &format!("{}.scm", kind.file()))
                    .is_ok_and(|text| Query::new(grammar, text).is_err())
            })
            .map_or("queries", |kind| kind.file());
        GrammarError::Query {
            lang: lang.to_string(),
            file: file.to_string(),
            message: e.to_string(),
        }
    })?;
    // A pattern is of the kind whose text it starts in.
    let mut starts = [0usize; 6];
    for (k, &offset) in offsets.iter().enumerate() {
        starts[k] = (0..all.pattern_count())
            .find(|&p| all.start_byte_for_pattern(p) >= offset)
            .unwrap_or(all.pattern_count());
    }
    Ok(Queries { all, starts })
}

/// The table of the language in folder `dir`: its own, or its `config_from` base's under its
/// own name, extensions and query folder.
fn load_spec(dir: &str) -> Result<LanguageSpec, GrammarError> {
    let own = parse_table(dir)?;
    let Some(base) = own.config_from.clone() else {
        return Ok(own);
    };
    Ok(LanguageSpec {
        name: own.name,
        extensions: own.extensions,
        queries_from: own.queries_from,
        config_from: own.config_from,
        ..parse_table(&base)?
    })
}

fn load_language(dir: &str, grammar: tree_sitter::Language) -> Result<Language, GrammarError> {
    let spec = load_spec(dir)?;
    let query_dir = spec.queries_from.clone().unwrap_or_else(|| dir.to_string());
    let table_error = |message: String| GrammarError::Table {
        lang: dir.to_string(),
        message,
    };
    // `*` stays within a path segment only where the table says which files run: a test
    // app's `tests/test_apps/cli/app.py` is not `test_*.py`.
    let globs = |patterns: &[String], within_segment: bool| -> Result<GlobSet, GrammarError> {
        let mut set = GlobSetBuilder::new();
        for pattern in patterns {
            let glob = GlobBuilder::new(pattern)
                .literal_separator(within_segment)
                .build()
                .map_err(|e| table_error(e.to_string()))?;
            set.add(glob);
        }
        set.build().map_err(|e| table_error(e.to_string()))
    };
    if spec.separators.iter().any(String::is_empty) {
        return Err(table_error("an empty separator".to_string()));
    }
    let tests = &spec.tests;
    Ok(Language {
        grammar,
        module_system: spec
            .module_system
            .ok_or_else(|| table_error("no module_system".to_string()))?,
        queries: OnceLock::new(),
        query_dir,
        test_files: globs(&tests.files, false)?,
        test_runs: if tests.runs.is_empty() {
            None
        } else {
            Some(globs(&tests.runs, true)?)
        },
        test_fixtures: globs(&tests.fixtures, true)?,
        shared_name: spec.name.as_str().into(),
        spec,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn source_paths_are_told_without_compiling_queries() {
        assert!(Registry::is_source_path("src/app.py"));
        assert!(Registry::is_source_path("web/App.TSX"));
        assert!(!Registry::is_source_path("README.md"));
        assert!(!Registry::is_source_path("select_related"));
        for path in ["a.py", "b.ts", "c.tsx", "d.js"] {
            assert_eq!(
                Registry::is_source_path(path),
                Registry::get().for_path(path).is_some(),
                "{path}"
            );
        }
    }

    #[test]
    fn every_query_of_every_language_compiles() {
        let registry = Registry::load().unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(registry.all().len(), GRAMMARS.len());
        for language in registry.all() {
            assert!(
                language.queries().pattern_count(QueryKind::Definitions) > 0,
                "{} has definitions",
                language.spec.name
            );
            assert!(
                !language.spec.side_effects.is_empty(),
                "{}",
                language.spec.name
            );
        }
    }

    #[test]
    fn queries_compile_on_first_use_and_only_for_that_language() {
        let registry = Registry::tables().unwrap_or_else(|e| panic!("{e}"));
        let compiled = |name: &str| registry.by_name(name).unwrap().queries.get().is_some();
        assert!(!compiled("python") && !compiled("go"));
        let python = registry.for_path("a.py").unwrap();
        assert!(python.queries().pattern_count(QueryKind::Calls) > 0);
        assert!(compiled("python"));
        assert!(!compiled("go"), "go's queries wait for a Go file");
    }

    #[test]
    fn a_misspelled_key_in_a_language_table_is_refused_by_name() {
        let misspelled = "name = \"x\"\nextensions = [\"x\"]\nmodule_sytem = \"dotted\"\n";
        let error = toml::from_str::<LanguageSpec>(misspelled)
            .unwrap_err()
            .to_string();
        assert!(error.contains("unknown field `module_sytem`"), "{error}");
        let nested = "name = \"x\"\nextensions = [\"x\"]\n[tests]\nglob = [\"*_test.x\"]\n";
        let error = toml::from_str::<LanguageSpec>(nested)
            .unwrap_err()
            .to_string();
        assert!(error.contains("unknown field `glob`"), "{error}");
    }

    #[test]
    fn a_language_with_config_from_takes_its_base_table_under_its_own_name() {
        let registry = Registry::get();
        let tsx = registry.by_name("tsx").unwrap();
        let typescript = registry.by_name("typescript").unwrap();
        assert!(tsx.spec.extensions.contains(&"jsx".to_string()));
        assert!(!typescript.spec.extensions.contains(&"jsx".to_string()));
        assert_eq!(tsx.module_system, typescript.module_system);
        assert!(!tsx.spec.builtins.names.is_empty());
        assert_eq!(tsx.spec.builtins.names, typescript.spec.builtins.names);
        assert_eq!(tsx.query_dir, "typescript");
    }

    #[test]
    fn every_grammar_folder_is_registered() {
        for (key, _) in GRAMMAR_FILES {
            let dir = key.split('/').next().unwrap();
            assert!(
                GRAMMARS.iter().any(|(name, _)| *name == dir),
                "grammars/{dir} has no registry line"
            );
        }
    }

    #[test]
    fn files_map_to_languages_by_extension() {
        let registry = Registry::get();
        assert_eq!(registry.for_path("a/b.py").unwrap().spec.name, "python");
        assert_eq!(registry.for_path("a/b.ts").unwrap().spec.name, "typescript");
        assert_eq!(registry.for_path("a/b.tsx").unwrap().spec.name, "tsx");
        assert_eq!(registry.for_path("a/b.mjs").unwrap().spec.name, "tsx");
        assert!(registry.for_path("README.md").is_none());
        assert_eq!(registry.for_path("cmd/main.go").unwrap().spec.name, "go");
        let go = registry.by_name("go").unwrap();
        assert!(go.is_test_to_run("store/store_test.go"));
        assert!(!go.is_test_path("store/store.go"));
        assert!(!go.is_test_to_run("store/testdata/fixture_test.go"));
        let php = registry.by_name("php").unwrap();
        assert_eq!(
            registry.for_path("src/Models/User.php").unwrap().spec.name,
            "php"
        );
        assert!(php.is_test_to_run("tests/Unit/UserTest.php"));
        assert!(!php.is_test_to_run("tests/Fixtures/UserTest.php"));
        assert!(php.is_test_path("tests/bootstrap.php"));
        assert!(!php.is_test_path("src/Models/User.php"));
        let ruby = registry.by_name("ruby").unwrap();
        assert_eq!(registry.for_path("shop.gemspec").unwrap().spec.name, "ruby");
        assert!(ruby.is_test_to_run("spec/models/user_spec.rb"));
        assert!(ruby.is_test_to_run("test/models/test_user.rb"));
        assert!(ruby.is_test_to_run("test/user_test.rb"));
        assert!(!ruby.is_test_to_run("spec/spec_helper.rb"));
        assert!(!ruby.is_test_path("lib/shop/cart.rb"));
        assert_eq!(registry.for_path("src/lib.rs").unwrap().spec.name, "rust");
        let rust = registry.by_name("rust").unwrap();
        assert!(rust.is_test_to_run("tests/api.rs"));
        assert!(rust.is_test_to_run("crates/core/tests/api/main.rs"));
        assert!(rust.is_test_to_run("src/store/tests.rs"));
        assert!(rust.is_test_path("tests/common/mod.rs"));
        assert!(!rust.is_test_to_run("tests/common/mod.rs"));
        assert!(!rust.is_test_to_run("benches/index.rs"));
        assert!(!rust.is_test_path("src/store.rs"));
        assert_eq!(registry.for_path("src/store.c").unwrap().spec.name, "c");
        for path in ["src/store.h", "src/a.cc", "b.cpp", "c.hpp", "d.hh", "e.ipp"] {
            assert_eq!(registry.for_path(path).unwrap().spec.name, "cpp", "{path}");
        }
        let c = registry.by_name("c").unwrap();
        assert!(c.is_test_to_run("tests/test_store.c"));
        assert!(c.is_test_to_run("src/store_test.c"));
        assert!(!c.is_test_path("src/store.c"));
        let cpp = registry.by_name("cpp").unwrap();
        for run in [
            "src/server_test.cc",
            "net/conn_unittest.cc",
            "test/server.cpp",
        ] {
            assert!(cpp.is_test_to_run(run), "{run}");
        }
        assert!(cpp.is_test_path("tests/helpers.h"));
        assert!(!cpp.is_test_to_run("tests/helpers.h"));
        assert!(!cpp.is_test_path("src/server.cpp"));
        let java = registry.by_name("java").unwrap();
        assert!(java.is_test_to_run("src/test/java/com/shop/AppTest.java"));
        assert!(java.is_test_path("core/src/test/java/com/shop/Fixtures.java"));
        assert!(!java.is_test_to_run("core/src/test/java/com/shop/Fixtures.java"));
        assert!(!java.is_test_path("src/main/java/com/shop/App.java"));
        let csharp = registry.by_name("csharp").unwrap();
        assert_eq!(registry.for_path("src/App.cs").unwrap().spec.name, "csharp");
        assert!(csharp.is_test_to_run("Shop.Tests/StoreTests.cs"));
        assert!(csharp.is_test_path("Shop.Tests/Helpers.cs"));
        assert!(!csharp.is_test_path("Shop/Store.cs"));
        let python = registry.by_name("python").unwrap();
        assert!(python.is_test_path("tests/test_app.py"));
        assert!(python.is_test_path("pkg/tests/helpers.py"));
        assert!(!python.is_test_path("src/app.py"));
    }

    #[test]
    fn fixtures_and_helpers_in_test_trees_are_not_tests_to_run() {
        let registry = Registry::get();
        let python = registry.by_name("python").unwrap();
        for run in [
            "tests/test_ctx.py",
            "test_app.py",
            "pkg/cart_test.py",
            "app/tests.py",
        ] {
            assert!(python.is_test_to_run(run), "{run}");
        }
        for fixture in [
            "tests/conftest.py",
            "tests/__init__.py",
            "tests/helpers.py",
            "tests/test_apps/cliapp/app.py",
            "tests/test_util/helpers.py",
            "tests/fixtures/test_data.py",
            "tests/factories.py",
            "src/app.py",
        ] {
            assert!(!python.is_test_to_run(fixture), "{fixture}");
        }
        let typescript = registry.by_name("typescript").unwrap();
        assert!(typescript.is_test_to_run("src/router.test.ts"));
        assert!(typescript.is_test_to_run("src/__tests__/router.ts"));
        assert!(!typescript.is_test_to_run("test/setup.ts"));
        assert!(!typescript.is_test_to_run("src/__tests__/__fixtures__/app.ts"));
    }
}
