//! Declared namespaces (Java packages, C# namespaces): each file says which namespace its
//! top-level types belong to (`package a.b;`, `namespace A.B;`), wherever the file is. An
//! import names a namespace (`import a.b.*`, `using A.B;`) or a type in one (`import a.b.C`,
//! `import static a.b.C.m`, `using X = A.B.C;`); a namespace no file declares is outside the
//! repository, and a file sees its own namespace's types without importing them.

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use super::{ModuleSystem, SystemFiles, Target};
use crate::extract::{FileExtract, SymbolKind};
use crate::languages::ModuleKind;

/// Every declared namespace and its files.
pub struct Namespaces<'a> {
    /// Namespace -> the files declaring it, ascending (`""`: files that declare none).
    files: HashMap<&'a str, Vec<usize>>,
    /// Each file's namespace; a file declaring several is in none.
    of: HashMap<usize, &'a str>,
    /// Namespaces with declared namespaces below them (`a`, `a.b` for `a.b.c`).
    ancestors: HashSet<&'a str>,
    extracts: HashMap<usize, &'a FileExtract>,
}

impl<'a> Namespaces<'a> {
    pub fn new(input: SystemFiles<'a>) -> Self {
        let mut files: HashMap<&'a str, Vec<usize>> = HashMap::default();
        let mut of = HashMap::default();
        let mut indexes: Vec<usize> = input.files.iter().map(|&(i, _)| i).collect();
        indexes.sort_unstable();
        for index in indexes {
            let Some(namespace) = input.extracts.get(&index).copied().and_then(declared) else {
                continue;
            };
            files.entry(namespace).or_default().push(index);
            of.insert(index, namespace);
        }
        let ancestors = files
            .keys()
            .flat_map(|&n| n.match_indices('.').map(move |(dot, _)| &n[..dot]))
            .collect();
        Namespaces {
            files,
            of,
            ancestors,
            extracts: input.extracts,
        }
    }

    /// A namespace's top-level types of that name, one per file defining one.
    fn top_level_types(&self, namespace: &str, name: &str) -> Vec<Target> {
        let files = self.files.get(namespace).map_or(&[][..], Vec::as_slice);
        files
            .iter()
            .filter_map(|&f| {
                let symbols = &self.extracts.get(&f)?.symbols;
                let s = symbols.iter().position(|s| {
                    s.parent.is_none() && s.receiver.is_none() && s.name == name && is_type(s.kind)
                })?;
                Some(Target::Symbol(f, s))
            })
            .collect()
    }

    /// Whether a type is one part of a type declared in parts.
    fn is_part(&self, target: &Target) -> bool {
        matches!(target, Target::Symbol(f, s)
            if self.extracts.get(f).is_some_and(|e| e.parts.contains(s)))
    }

    /// A type nested in another (`Outer.Inner`).
    fn nested_type(&self, file: usize, outer: usize, name: &str) -> Option<Target> {
        let symbols = &self.extracts.get(&file)?.symbols;
        let s = symbols
            .iter()
            .position(|s| s.parent == Some(outer) && s.name == name && is_type(s.kind))?;
        Some(Target::Symbol(file, s))
    }

    /// `a.b.C.Inner` with `a.b` declared: the type `C` of `a.b`, then `Inner` in it. A first
    /// name that is no type of the namespace is outside (another project's package below the
    /// same prefix); a missing nested type is not there.
    fn type_path(&self, namespace: &str, path: &str) -> Option<Target> {
        let mut parts = path.split('.');
        let first = parts.next()?;
        let types = self.top_level_types(namespace, first);
        let mut target = match types.as_slice() {
            [] => return Some(Target::External(format!("{namespace}.{path}"))),
            [one] => one.clone(),
            // A type declared in parts (C#'s `partial class`) is named by its first part.
            [first, ..] if types.iter().all(|t| self.is_part(t)) => first.clone(),
            _ => return None,
        };
        for part in parts {
            let Target::Symbol(f, s) = target else {
                return None;
            };
            target = self.nested_type(f, s, part)?;
        }
        Some(target)
    }
}

/// The one namespace a file declares (`""` for none); `None` when it declares several.
fn declared(extract: &FileExtract) -> Option<&str> {
    let mut packages = extract.packages.iter();
    let first = packages.next().map_or("", String::as_str);
    packages.all(|p| p == first).then_some(first)
}

/// Whether a definition is a type an import can name (a class, interface or enum).
fn is_type(kind: SymbolKind) -> bool {
    kind.is_class_like() || kind == SymbolKind::Enum
}

impl ModuleSystem for Namespaces<'_> {
    /// A declared namespace, a type in one, a namespace that only has namespaces below it, or
    /// something outside.
    fn resolve(&self, _from: usize, spec: &str) -> Option<Target> {
        if spec.is_empty() {
            return None;
        }
        if self.files.contains_key(spec) {
            return Some(Target::Package(ModuleKind::Namespaces, spec.to_string()));
        }
        let mut split = spec.len();
        while let Some(dot) = spec[..split].rfind('.') {
            let namespace = &spec[..dot];
            if self.files.contains_key(namespace) {
                return self.type_path(namespace, &spec[dot + 1..]);
            }
            split = dot;
        }
        Some(if self.ancestors.contains(spec) {
            Target::Package(ModuleKind::Namespaces, spec.to_string())
        } else {
            Target::External(spec.to_string())
        })
    }

    fn package_files(&self, package: &str) -> &[usize] {
        self.files.get(package).map_or(&[], Vec::as_slice)
    }

    fn own_package(&self, file: usize) -> Option<Target> {
        let namespace = self.of.get(&file)?;
        Some(Target::Package(
            ModuleKind::Namespaces,
            namespace.to_string(),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::extract::Symbol;

    fn file(packages: &[&str], types: &[(&str, Option<usize>)]) -> FileExtract {
        FileExtract {
            packages: packages.iter().map(|p| p.to_string()).collect(),
            symbols: types
                .iter()
                .map(|&(name, parent)| Symbol {
                    kind: SymbolKind::Class,
                    name: name.to_string(),
                    qualname: name.to_string(),
                    start_line: 1,
                    end_line: 1,
                    signature: String::new(),
                    doc: None,
                    parent,
                    receiver: None,
                })
                .collect(),
            ..FileExtract::default()
        }
    }

    #[test]
    fn imports_name_declared_namespaces_and_their_types() {
        let extracts = [
            file(&["com.shop.store"], &[("Store", None), ("Row", Some(0))]),
            file(&["com.shop.billing"], &[("Store", None)]),
            file(&["com.shop.billing"], &[("Accounts", None)]),
            file(&[], &[("Main", None)]),
            file(&["A", "B"], &[("Both", None)]),
        ];
        let m = Namespaces::new(SystemFiles {
            files: (0..extracts.len()).map(|i| (i, "")).collect(),
            languages: Vec::new(),
            roots: Vec::new(),
            extracts: extracts.iter().enumerate().collect(),
        });
        let package = |n: &str| Some(Target::Package(ModuleKind::Namespaces, n.to_string()));
        assert_eq!(
            m.resolve(0, "com.shop.billing"),
            package("com.shop.billing")
        );
        assert_eq!(m.resolve(0, "com.shop"), package("com.shop"));
        assert_eq!(
            m.resolve(0, "com.shop.store.Store"),
            Some(Target::Symbol(0, 0))
        );
        assert_eq!(
            m.resolve(0, "com.shop.store.Store.Row"),
            Some(Target::Symbol(0, 1))
        );
        assert_eq!(m.resolve(0, "com.shop.store.Store.Gone"), None);
        assert_eq!(
            m.resolve(0, "com.shop.store.util.Helper"),
            Some(Target::External("com.shop.store.util.Helper".to_string()))
        );
        assert_eq!(
            m.resolve(0, "java.util"),
            Some(Target::External("java.util".to_string()))
        );
        assert_eq!(m.package_files("com.shop.billing"), &[1, 2]);
        assert_eq!(m.own_package(2), package("com.shop.billing"));
        assert_eq!(m.own_package(3), package(""));
        assert_eq!(m.own_package(4), None);
    }
}
