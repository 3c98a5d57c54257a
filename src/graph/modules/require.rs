//! Ruby's `require_relative` and `require`: a relative path names a file next to the requiring
//! one (`.rb` added), a `require` name is looked up on the load paths — every `lib/` directory
//! of the repository (a gem's, the application's) — and is outside the repository (the
//! standard library, a gem) when no `lib/` has it. Ruby's constants are global once loaded: every
//! file sees the top-level classes and modules of every other (one package), and a constant no
//! file defines is outside.

use rustc_hash::FxHashMap as HashMap;

use super::{ModuleSystem, SystemFile, SystemFiles, Target, normalise, parent};
use crate::languages::ModuleKind;

/// The one package every Ruby file is in: constants are global.
const GLOBAL: &str = "";

/// Where every Ruby file lives.
pub(crate) struct RequireModules<'a> {
    by_path: HashMap<&'a str, usize>,
    paths: HashMap<usize, &'a str>,
    /// A `require` name (`mygem/client`) -> the `lib/` directories holding it, with the file.
    on_load_paths: HashMap<&'a str, Vec<(&'a str, usize)>>,
    files: Vec<usize>,
}

impl<'a> RequireModules<'a> {
    pub fn new(input: SystemFiles<'a>) -> Self {
        let files = input.sorted_by_path();
        let mut on_load_paths: HashMap<&'a str, Vec<(&'a str, usize)>> = HashMap::default();
        for &SystemFile { index, path } in &files {
            let Some(stem) = path.strip_suffix(".rb") else {
                continue;
            };
            let (lib, name) = match stem.rfind("/lib/") {
                Some(at) => (&stem[..at + 4], &stem[at + 5..]),
                None => match stem.strip_prefix("lib/") {
                    Some(name) => ("lib", name),
                    None => continue,
                },
            };
            on_load_paths.entry(name).or_default().push((lib, index));
        }
        RequireModules {
            by_path: input.by_path(),
            paths: input.paths(),
            on_load_paths,
            files: files.iter().map(|f| f.index).collect(),
        }
    }

    /// `require_relative 'x'`: `x.rb` (or `x` as written) next to the requiring file.
    fn relative(&self, from: usize, spec: &str) -> Option<Target> {
        let dir = parent(self.paths.get(&from)?);
        let path = normalise(dir, spec)?;
        let file = self
            .by_path
            .get(format!("{path}.rb").as_str())
            .or_else(|| self.by_path.get(path.as_str()))?;
        Some(Target::File(*file))
    }

    /// `require 'a/b'`: `lib/a/b.rb` on a load path; of several, the one whose project (the
    /// directory above `lib/`) holds the requiring file, else none.
    fn on_load_path(&self, from: usize, spec: &str) -> Option<Option<Target>> {
        let candidates = self
            .on_load_paths
            .get(spec.strip_suffix(".rb").unwrap_or(spec))?;
        if let [(_, only)] = candidates.as_slice() {
            return Some(Some(Target::File(*only)));
        }
        let path = self.paths.get(&from).copied().unwrap_or_default();
        let own = candidates.iter().find(|(lib, _)| {
            let project = parent(lib);
            project.is_empty() || path.starts_with(&format!("{project}/"))
        });
        Some(own.map(|&(_, file)| Target::File(file)))
    }
}

impl ModuleSystem for RequireModules<'_> {
    /// A quoted spec is `require_relative`'s (the query keeps its quotes); a bare one is
    /// `require`'s.
    fn resolve(&self, from: usize, spec: &str) -> Option<Target> {
        let unquoted = spec
            .strip_prefix(['\'', '"'])
            .and_then(|s| s.strip_suffix(['\'', '"']));
        if let Some(relative) = unquoted {
            return self.relative(from, relative);
        }
        match self.on_load_path(from, spec) {
            Some(found) => found,
            None => Some(Target::External(spec.to_string())),
        }
    }

    fn package_files(&self, package: &str) -> &[usize] {
        if package == GLOBAL { &self.files } else { &[] }
    }

    fn own_package(&self, _file: usize) -> Option<Target> {
        Some(Target::Package(ModuleKind::Require, GLOBAL.to_string()))
    }

    /// A constant no repository file defines (`File`, `Net`, `Redis`) is outside; a method
    /// name is not (an undefined one stays unresolved).
    fn undefined_is_outside(&self, name: &str) -> bool {
        name.starts_with(|c: char| c.is_ascii_uppercase())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn modules<'a>(paths: &[&'a str]) -> RequireModules<'a> {
        RequireModules::new(SystemFiles {
            files: SystemFile::numbered(paths),
            languages: Vec::new(),
            roots: Vec::new(),
            extracts: Default::default(),
        })
    }

    #[test]
    fn relative_requires_are_next_to_the_file() {
        let m = modules(&["app/main.rb", "app/storage/disk.rb", "lib/x.rb"]);
        assert_eq!(m.resolve(0, "'storage/disk'"), Some(Target::File(1)));
        assert_eq!(m.resolve(1, "\"../main.rb\""), Some(Target::File(0)));
        assert_eq!(m.resolve(0, "'missing'"), None);
        assert_eq!(m.resolve(0, "'../../../etc/passwd'"), None);
    }

    #[test]
    fn requires_are_found_on_lib_load_paths() {
        let m = modules(&[
            "lib/shop.rb",
            "lib/shop/cart.rb",
            "gems/a/lib/util.rb",
            "gems/b/lib/util.rb",
            "gems/a/spec/util_spec.rb",
            "bin/run.rb",
        ]);
        assert_eq!(m.resolve(5, "shop/cart"), Some(Target::File(1)));
        assert_eq!(m.resolve(5, "shop"), Some(Target::File(0)));
        assert_eq!(m.resolve(4, "util"), Some(Target::File(2)));
        assert_eq!(m.resolve(5, "util"), None);
        assert_eq!(
            m.resolve(5, "net/http"),
            Some(Target::External("net/http".to_string()))
        );
        assert!(m.undefined_is_outside("Redis"));
        assert!(!m.undefined_is_outside("open"));
    }
}
