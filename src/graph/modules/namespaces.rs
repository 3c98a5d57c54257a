//! Declared namespaces (Java packages, C# namespaces): each file says which namespace its
//! top-level types belong to (`package a.b;`, `namespace A.B;`), wherever the file is. An
//! import names a namespace (`import a.b.*`, `using A.B;`) or a type in one (`import a.b.C`,
//! `import static a.b.C.m`, `using X = A.B.C;`); a namespace no file declares is outside the
//! repository, and a file sees its own namespace's types without importing them.

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use super::{ModuleSystem, Property, Roots, SystemFiles, Target, Using, parent};
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
    /// What each file's project imports for all its files, by the file's directory.
    implicit: HashMap<&'a str, Vec<String>>,
    /// Each file's directory.
    dirs: HashMap<usize, &'a str>,
}

impl<'a> Namespaces<'a> {
    pub fn new(input: SystemFiles<'a>) -> Self {
        let mut files: HashMap<&'a str, Vec<usize>> = HashMap::default();
        let mut of = HashMap::default();
        let mut indexes: Vec<usize> = input.files.iter().map(|f| f.index).collect();
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
        let dirs: HashMap<usize, &'a str> = input
            .files
            .iter()
            .map(|f| (f.index, parent(f.path)))
            .collect();
        let projects: Vec<&str> = input
            .roots
            .iter()
            .filter(|r| r.project)
            .map(|&r| r.dir.as_str())
            .collect();
        let global = global_usings(&input, &projects);
        let mut implicit = HashMap::default();
        for &dir in dirs.values() {
            implicit.entry(dir).or_insert_with(|| {
                let mut usings = project_usings(&input.roots, dir);
                for namespace in global.get(project_of(&projects, dir)).into_iter().flatten() {
                    if !usings.contains(namespace) {
                        usings.push(namespace.clone());
                    }
                }
                usings
            });
        }
        Namespaces {
            files,
            of,
            ancestors,
            extracts: input.extracts,
            implicit,
            dirs,
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

/// The project a directory's files belong to: the directory of the nearest project file
/// (`.csproj`) at or above it, else the repository's root (`""`).
fn project_of<'p>(projects: &[&'p str], dir: &str) -> &'p str {
    projects
        .iter()
        .copied()
        .filter(|&p| {
            p.is_empty() || dir == p || dir.strip_prefix(p).is_some_and(|r| r.starts_with('/'))
        })
        .max_by_key(|p| p.len())
        .unwrap_or("")
}

/// The namespaces source files import for their whole project (`global using A.B;`), by
/// project (see [`project_of`]), in the order the files and their lines give them.
fn global_usings<'a>(
    input: &SystemFiles<'a>,
    projects: &[&'a str],
) -> HashMap<&'a str, Vec<String>> {
    let mut files: Vec<_> = input.files.iter().collect();
    files.sort_by_key(|f| f.path);
    let mut global: HashMap<&'a str, Vec<String>> = HashMap::default();
    for file in files {
        let Some(extract) = input.extracts.get(&file.index) else {
            continue;
        };
        for import in extract.imports.iter().filter(|i| i.global && i.wildcard) {
            let usings = global
                .entry(project_of(projects, parent(file.path)))
                .or_default();
            if !usings.iter().any(|u| *u == *import.module) {
                usings.push(import.module.to_string());
            }
        }
    }
    global
}

/// The usings the MSBuild files above a directory give every file in it: each one's items,
/// those under a condition only where the properties of those files (the deepest setting one
/// wins) make it hold.
fn project_usings(roots: &[&Roots], dir: &str) -> Vec<String> {
    let mut above: Vec<&Roots> = roots
        .iter()
        .copied()
        .filter(|r| r.dir == dir || r.covers(dir))
        .collect();
    above.sort_by_key(|r| r.dir.len());
    let mut properties: HashMap<String, &str> = HashMap::default();
    for roots in &above {
        for property in &roots.properties {
            properties.insert(property.name.to_ascii_lowercase(), &property.value);
        }
    }
    let mut usings: Vec<String> = Vec::new();
    for using in above.iter().flat_map(|r| &r.usings) {
        let holds = using.condition.as_ref().is_none_or(|test| {
            properties
                .get(&test.name.to_ascii_lowercase())
                .is_some_and(|set| set.eq_ignore_ascii_case(&test.value))
        });
        if holds && !usings.contains(&using.namespace) {
            usings.push(using.namespace.clone());
        }
    }
    usings
}

/// Reads an MSBuild file (a `.csproj`, `Directory.Build.props`): its `<Using Include=…/>`
/// items and the properties it sets. A condition is read only in the form `'$(Name)' ==
/// 'value'`; an item under any other is left out, as is a property under one. `None` when the
/// file says neither and is not a `project`'s own file (a `.csproj`, which bounds a project).
pub(crate) fn read_msbuild(text: &str, dir: &str, project: bool) -> Option<Roots> {
    let mut roots = Roots::new(ModuleKind::Namespaces, dir);
    roots.project = project;
    // The open groups, innermost last: whether each holds properties, and its condition
    // (`<ItemGroup Condition=…>`).
    let mut groups: Vec<(bool, Option<&str>)> = Vec::new();
    let mut rest = text;
    while let Some(open) = rest.find('<') {
        rest = &rest[open + 1..];
        if let Some(comment) = rest.strip_prefix("!--") {
            rest = comment.split_once("-->").map_or("", |(_, after)| after);
            continue;
        }
        let Some(close) = rest.find('>') else { break };
        let tag = &rest[..close];
        rest = &rest[close + 1..];
        let name = tag.split(|c: char| c.is_whitespace() || c == '/').next();
        let self_closing = tag.ends_with('/');
        match name {
            Some(group @ ("ItemGroup" | "PropertyGroup")) if !self_closing => {
                groups.push((group == "PropertyGroup", attribute(tag, "Condition")));
            }
            Some("") if tag.starts_with("/ItemGroup") || tag.starts_with("/PropertyGroup") => {
                groups.pop();
            }
            Some("Using") => {
                let (Some(include), None) = (attribute(tag, "Include"), attribute(tag, "Alias"))
                else {
                    continue;
                };
                let conditions: Vec<&str> = groups
                    .iter()
                    .filter_map(|&(_, condition)| condition)
                    .chain(attribute(tag, "Condition"))
                    .collect();
                let condition = match conditions.as_slice() {
                    [] => None,
                    [one] => match property_test(one) {
                        Some(test) => Some(test),
                        None => continue,
                    },
                    _ => continue,
                };
                for namespace in include.split(';').map(str::trim) {
                    if !namespace.is_empty() && crate::extract::is_dotted_name(namespace) {
                        roots.usings.push(Using {
                            namespace: namespace.to_string(),
                            condition: condition.clone(),
                        });
                    }
                }
            }
            Some(property)
                if !self_closing
                    && groups.last() == Some(&(true, None))
                    && attribute(tag, "Condition").is_none()
                    && !property.is_empty()
                    && property.chars().all(|c| c.is_alphanumeric() || c == '_') =>
            {
                // The text up to the next tag, measured untrimmed: a slice at the trimmed
                // length could fall inside a character.
                let text = rest.split('<').next().unwrap_or_default();
                let value = text.trim();
                if !value.is_empty() && rest[text.len()..].starts_with("</") {
                    roots.properties.push(Property {
                        name: property.to_string(),
                        value: value.to_string(),
                    });
                }
            }
            _ => {}
        }
    }
    (project || !roots.usings.is_empty() || !roots.properties.is_empty()).then_some(roots)
}

/// An attribute's value in a tag's text (`Include="A.B"`).
fn attribute<'t>(tag: &'t str, name: &str) -> Option<&'t str> {
    let mut from = 0;
    while let Some(at) = tag[from..].find(name) {
        let start = from + at;
        from = start + name.len();
        let before = tag[..start].chars().next_back();
        if !before.is_some_and(char::is_whitespace) {
            continue;
        }
        let after = tag[from..].trim_start().strip_prefix('=')?.trim_start();
        let quote = after.chars().next().filter(|&q| q == '"' || q == '\'')?;
        let value = &after[1..];
        return value.find(quote).map(|end| &value[..end]);
    }
    None
}

/// `'$(Name)' == 'value'` -> (`Name`, `value`): the one form of condition read.
fn property_test(condition: &str) -> Option<Property> {
    let (left, right) = condition.split_once("==")?;
    let unquote = |s: &str| s.trim().trim_matches('\'').trim().to_string();
    let name = unquote(left)
        .strip_prefix("$(")?
        .strip_suffix(')')?
        .to_string();
    let value = unquote(right);
    let plain = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_alphanumeric() || c == '_');
    (plain(&name) && plain(&value)).then_some(Property { name, value })
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

    fn implicit_imports(&self, file: usize) -> &[String] {
        self.dirs
            .get(&file)
            .and_then(|dir| self.implicit.get(dir))
            .map_or(&[], Vec::as_slice)
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
    use crate::graph::modules::SystemFile;

    fn file(packages: &[&str], types: &[(&str, Option<usize>)]) -> FileExtract {
        FileExtract {
            packages: packages.iter().map(|p| p.to_string()).collect(),
            symbols: types
                .iter()
                .map(|&(name, parent)| Symbol {
                    kind: SymbolKind::Class,
                    name: (*name).into(),
                    qualname: (*name).into(),
                    start_line: 1,
                    end_line: 1,
                    signature: Default::default(),
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
            files: SystemFile::numbered(&vec![""; extracts.len()]),
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

    #[test]
    fn msbuild_usings_are_read_with_the_conditions_they_hold_under() {
        let targets = r#"<Project>
  <!-- <Using Include="Commented.Out" /> -->
  <ItemGroup>
    <Using Include="Shop.Common" />
    <Using Remove="System.Net.Http" />
    <Using Include="Shop.Aliased" Alias="A" />
  </ItemGroup>
  <ItemGroup Condition="'$(ShopUsings)' == 'true'">
    <Using Include="Shop.Billing;Shop.Storage" />
  </ItemGroup>
  <ItemGroup Condition="Exists('x.props')">
    <Using Include="Shop.Unknowable" />
  </ItemGroup>
</Project>"#;
        let project = r#"<Project Sdk="Microsoft.NET.Sdk">
  <PropertyGroup>
    <ShopUsings>True</ShopUsings>
    <Nullable>enable</Nullable>
  </PropertyGroup>
  <ItemGroup>
    <PackageReference Include="Xunit"><Version>2.0</Version></PackageReference>
    <Using Include="Shop.Helpers" Static="true" />
  </ItemGroup>
</Project>"#;
        let root = read_msbuild(targets, "", false).unwrap();
        let property = |name: &str, value: &str| Property {
            name: name.to_string(),
            value: value.to_string(),
        };
        let plain = |n: &str| Using {
            namespace: n.to_string(),
            condition: None,
        };
        let when = |n: &str| Using {
            namespace: n.to_string(),
            condition: Some(property("ShopUsings", "true")),
        };
        assert_eq!(
            root.usings,
            vec![
                plain("Shop.Common"),
                when("Shop.Billing"),
                when("Shop.Storage")
            ]
        );
        let tests = read_msbuild(project, "Shop.Tests", false).unwrap();
        assert_eq!(tests.usings, vec![plain("Shop.Helpers")]);
        assert_eq!(
            tests.properties,
            vec![
                property("ShopUsings", "True"),
                property("Nullable", "enable")
            ]
        );
        let roots = [&root, &tests];
        assert_eq!(
            project_usings(&roots, "Shop.Tests/Unit"),
            [
                "Shop.Common",
                "Shop.Billing",
                "Shop.Storage",
                "Shop.Helpers"
            ]
        );
        assert_eq!(project_usings(&roots, "Shop"), ["Shop.Common"]);
        let empty = "<Project><PropertyGroup></PropertyGroup></Project>";
        assert!(read_msbuild(empty, "", false).is_none());
        // A project's own file bounds its project, though it says nothing.
        assert!(read_msbuild(empty, "App", true).is_some_and(|r| r.project));
        // A value with spaces and characters of several bytes around it is read whole.
        let spaced = read_msbuild(
            "<Project><PropertyGroup><Owner> é Équipe </Owner></PropertyGroup></Project>",
            "",
            false,
        )
        .unwrap();
        assert_eq!(spaced.properties, vec![property("Owner", "é Équipe")]);
    }
}
