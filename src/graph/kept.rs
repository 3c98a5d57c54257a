//! What the quick patches of one index keep between them (see [`super::build_focused`]), so
//! that a patch of one file does not read every file's extraction again: module tables made
//! from the files' paths, and the names that every file adds to the repository's.

use std::collections::BTreeSet;

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use super::modules;
use super::types::Bindings;
use crate::extract::{FileExtract, SymbolKind, Text, interned};

/// Kept between the quick patches of one index. Untracked (the default), it keeps module
/// tables by a key of the paths they were made from, and a build collects the names it needs
/// from every file. Tracked ([`Kept::track`]), its owner tells it of every change to the
/// files ([`Kept::file_changed`], [`Kept::paths_changed`]) and builds read the names from it.
/// At 50,000 files the names' passes over every extraction were a third of each patch.
#[derive(Default)]
pub struct Kept {
    pub(super) modules: modules::Kept,
    pub(super) names: Option<Names>,
}

impl Kept {
    /// From now on the owner tells of every change, starting from `files` (in path order, as
    /// the builds will be given them).
    pub fn track<'a>(&mut self, files: impl Iterator<Item = (&'a str, &'a FileExtract)>) {
        let mut names = Names::default();
        for (path, extract) in files {
            names.count(path, extract, Count::Add);
        }
        self.names = Some(names);
        self.paths_changed();
    }

    /// Whether the owner tells of every change.
    pub fn is_tracked(&self) -> bool {
        self.names.is_some()
    }

    /// A file's extraction gave way to another: `old` is none for a file new to the index,
    /// `new` none for a file gone. (A file new or gone changes the paths too.)
    pub fn file_changed(
        &mut self,
        path: &str,
        old: Option<&FileExtract>,
        new: Option<&FileExtract>,
    ) {
        let Some(names) = &mut self.names else {
            return;
        };
        if let Some(old) = old {
            names.count(path, old, Count::Remove);
        }
        if let Some(new) = new {
            names.count(path, new, Count::Add);
        }
        if old.is_none() || new.is_none() {
            self.paths_changed();
        }
    }

    /// The files' paths changed (a file new or gone, other module roots): tables made from
    /// them are made again.
    pub fn paths_changed(&mut self) {
        if self.is_tracked() {
            self.modules.paths_changed();
        }
    }
}

/// Whether an extraction's names are counted in or taken out.
#[derive(Clone, Copy)]
enum Count {
    Add,
    Remove,
}

/// How many files' extractions give each name, and which files declare methods outside
/// their type.
#[derive(Default)]
pub(super) struct Names {
    /// Names of methods.
    methods: HashMap<Text, u32>,
    /// Names of the methods interfaces declare.
    interface_methods: HashMap<Text, u32>,
    /// Attribute names assigned on something other than `self` (see [`Bindings::foreign`]).
    foreign: HashMap<Text, u32>,
    /// The files with a method declared outside its type's body (Go's, Rust's `impl`), by
    /// path.
    pub(super) receivers: BTreeSet<String>,
}

impl Names {
    fn count(&mut self, path: &str, extract: &FileExtract, count: Count) {
        tally(&mut self.methods, method_names(extract), count);
        tally(
            &mut self.interface_methods,
            interface_method_names(extract),
            count,
        );
        tally(&mut self.foreign, Bindings::foreign(extract), count);
        match count {
            Count::Add if extract.symbols.iter().any(|s| s.receiver.is_some()) => {
                self.receivers.insert(path.to_string());
            }
            Count::Add => {}
            Count::Remove => {
                self.receivers.remove(path);
            }
        }
    }

    pub(super) fn methods(&self) -> NameSet<'_> {
        NameSet::Counted(&self.methods)
    }

    pub(super) fn interface_methods(&self) -> NameSet<'_> {
        NameSet::Counted(&self.interface_methods)
    }

    pub(super) fn foreign(&self) -> NameSet<'_> {
        NameSet::Counted(&self.foreign)
    }
}

/// The names of a file's methods.
pub(super) fn method_names(extract: &FileExtract) -> impl Iterator<Item = &str> {
    extract
        .symbols
        .iter()
        .filter(|s| s.kind == SymbolKind::Method)
        .map(|s| s.name.as_str())
}

/// The names of the methods a file's interfaces declare.
pub(super) fn interface_method_names(extract: &FileExtract) -> impl Iterator<Item = &str> {
    let symbols = &extract.symbols;
    symbols
        .iter()
        .filter(|s| {
            s.parent
                .is_some_and(|p| symbols[p].kind == SymbolKind::Interface)
        })
        .map(|s| s.name.as_str())
}

/// Counts `names` in or out; a name counted out of every file is gone.
fn tally<'a>(counts: &mut HashMap<Text, u32>, names: impl Iterator<Item = &'a str>, count: Count) {
    for name in names {
        match count {
            Count::Add => *counts.entry(Text::from(name)).or_default() += 1,
            Count::Remove => {
                let Some(name) = interned(name) else { continue };
                if let Some(n) = counts.get_mut(&name) {
                    *n -= 1;
                    if *n == 0 {
                        counts.remove(&name);
                    }
                }
            }
        }
    }
}

/// A set of names: collected by one build, or counted by a tracked [`Kept`].
pub(super) enum NameSet<'a> {
    Collected(HashSet<&'a str>),
    Counted(&'a HashMap<Text, u32>),
}

impl NameSet<'_> {
    pub(super) fn contains(&self, name: &str) -> bool {
        match self {
            NameSet::Collected(names) => names.contains(name),
            NameSet::Counted(counts) => {
                interned(name).is_some_and(|name| counts.contains_key(&name))
            }
        }
    }
}
