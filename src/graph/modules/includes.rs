//! Include paths (C and C++): `#include "x/y.h"` names a file beside the including file, else
//! below an include root (`include/`, `src/` or the directory itself, at the including file's
//! directory and each one above it), else the one file of the repository at that path's end (a
//! build's `-I` directory); `#include <x/y.h>` is looked up in the roots only; anything else is
//! outside (the C library, the STL, a dependency, a generated header). An include binds no name:
//! C's and C++'s names are the program's, one namespace at link time, so every file sees the one
//! definition of a name and a name no file defines is outside.

use rustc_hash::FxHashMap as HashMap;

use super::{ModuleSystem, SystemFiles, Target, normalise, parent};
use crate::languages::ModuleKind;

/// Directories that hold headers below a project or library directory, and the directory itself.
const INCLUDE_ROOTS: &[&str] = &["include", "src", ""];

/// Where every file of the C and C++ sources lives.
pub(crate) struct IncludeModules<'a> {
    by_path: HashMap<&'a str, usize>,
    paths: HashMap<usize, &'a str>,
    /// File name -> the paths with that name, for an include found on a build's include path.
    by_name: HashMap<&'a str, Vec<&'a str>>,
}

impl<'a> IncludeModules<'a> {
    pub fn new(input: SystemFiles<'a>) -> Self {
        let mut by_name: HashMap<&'a str, Vec<&'a str>> = HashMap::default();
        for file in &input.files {
            let name = file.path.rsplit('/').next().unwrap_or(file.path);
            by_name.entry(name).or_default().push(file.path);
        }
        IncludeModules {
            by_path: input.by_path(),
            paths: input.paths(),
            by_name,
        }
    }

    fn file(&self, dir: &str, path: &str) -> Option<Target> {
        let joined = normalise(dir, path)?;
        self.by_path.get(joined.as_str()).map(|&i| Target::File(i))
    }

    /// The include roots a file sees, nearest first: `dir/include`, `dir/src`, `dir`, then the
    /// same for every directory above it up to the repository root.
    fn in_roots(&self, dir: &str, path: &str) -> Option<Target> {
        let mut current = Some(dir);
        while let Some(dir) = current {
            for root in INCLUDE_ROOTS {
                let root_dir = match (dir.is_empty(), root.is_empty()) {
                    (_, true) => dir.to_string(),
                    (true, false) => root.to_string(),
                    (false, false) => format!("{dir}/{root}"),
                };
                if let Some(found) = self.file(&root_dir, path) {
                    return Some(found);
                }
            }
            current = (!dir.is_empty()).then(|| parent(dir));
        }
        None
    }

    /// The one file whose path ends with the include's path (`"hiredis.h"` found on `-I
    /// deps/hiredis`); none when two files could be meant.
    fn by_suffix(&self, path: &str) -> Option<Target> {
        if path.split('/').any(|part| part == ".." || part == ".") {
            return None;
        }
        let name = path.rsplit('/').next()?;
        let suffix = format!("/{path}");
        let mut found = self
            .by_name
            .get(name)?
            .iter()
            .filter(|p| **p == path || p.ends_with(&suffix));
        let only = found.next()?;
        if found.next().is_some() {
            return None;
        }
        self.by_path.get(only).map(|&i| Target::File(i))
    }
}

impl ModuleSystem for IncludeModules<'_> {
    /// A repository file, or an outside header (by its path, without brackets).
    fn resolve(&self, from: usize, spec: &str) -> Option<Target> {
        let (path, angled) = match spec.strip_prefix('<').and_then(|s| s.strip_suffix('>')) {
            Some(inner) => (inner.trim(), true),
            None => (spec.trim(), false),
        };
        if path.is_empty() {
            return None;
        }
        let dir = parent(self.paths.get(&from)?);
        let found = if angled {
            self.in_roots(dir, path)
        } else {
            self.file(dir, path)
                .or_else(|| self.in_roots(dir, path))
                .or_else(|| self.by_suffix(path))
        };
        Some(found.unwrap_or_else(|| Target::External(path.to_string())))
    }

    /// Every file sees the program's names: one package for all of them.
    fn own_package(&self, _file: usize) -> Option<Target> {
        Some(Target::Package(ModuleKind::Includes, String::new()))
    }

    fn undefined_is_outside(&self, _name: &str) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::modules::SystemFile;

    fn check(paths: &[&str], from: usize, spec: &str) -> Option<Target> {
        IncludeModules::new(SystemFiles {
            files: SystemFile::numbered(paths),
            languages: Vec::new(),
            roots: Vec::new(),
            extracts: Default::default(),
        })
        .resolve(from, spec)
    }

    #[test]
    fn quoted_includes_look_beside_the_file_then_in_the_roots() {
        let paths = [
            "src/main.c",
            "src/store.h",
            "include/lib/x.h",
            "libfoo/src/foo.c",
            "libfoo/include/foo/api.h",
            "deps/hiredis/hiredis.h",
            "util.h",
        ];
        let file = |i| Some(Target::File(i));
        assert_eq!(check(&paths, 0, "store.h"), file(1));
        assert_eq!(check(&paths, 0, "lib/x.h"), file(2));
        assert_eq!(check(&paths, 0, "../include/lib/x.h"), file(2));
        assert_eq!(check(&paths, 3, "foo/api.h"), file(4));
        assert_eq!(check(&paths, 3, "util.h"), file(6));
        assert_eq!(check(&paths, 0, "hiredis.h"), file(5));
        assert_eq!(
            check(&paths, 0, "../../etc/passwd"),
            Some(Target::External("../../etc/passwd".to_string()))
        );
    }

    #[test]
    fn angled_includes_skip_the_file_directory_and_fall_outside() {
        let paths = [
            "src/main.c",
            "src/string.h",
            "include/lib/x.h",
            "a/hiredis.h",
        ];
        assert_eq!(check(&paths, 0, "<lib/x.h>"), Some(Target::File(2)));
        // `<string.h>` from src/main.c: src/ is a root of the repository, so it is found…
        assert_eq!(check(&paths, 0, "<string.h>"), Some(Target::File(1)));
        // …but a header of another directory is not taken on its name alone.
        assert_eq!(
            check(&paths, 0, "<hiredis.h>"),
            Some(Target::External("hiredis.h".to_string()))
        );
        assert_eq!(
            check(&paths, 0, "<stdio.h>"),
            Some(Target::External("stdio.h".to_string()))
        );
    }

    #[test]
    fn a_name_two_files_end_with_is_not_guessed() {
        let paths = ["main.c", "a/config.h", "b/config.h"];
        assert_eq!(
            check(&paths, 0, "config.h"),
            Some(Target::External("config.h".to_string()))
        );
    }
}
