//! The framework knowledge cairn ships: one `frameworks/<name>.toml` per framework (its
//! packages and its memories) and `frameworks/known.toml` (frameworks recognised without
//! knowledge), embedded at build time and checked when first read.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

use super::Ecosystem;

include!(concat!(env!("OUT_DIR"), "/framework_files.rs"));

/// The file listing frameworks recognised without shipped knowledge.
const KNOWN_FILE: &str = "known.toml";

/// A shipped data file that does not hold together: always a bug in the file, named.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("frameworks/{file}: {message}")]
pub struct CatalogueError {
    pub file: String,
    pub message: String,
}

/// Where a shipped memory belongs: the organisation (every repository of it) or this
/// repository.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    Org,
    Repository,
}

impl Scope {
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Org => "org",
            Scope::Repository => "repository",
        }
    }
}

/// One shipped memory: a review-relevant fact from the framework's documentation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Shipped {
    pub title: String,
    /// The fact, 1–3 sentences.
    pub content: String,
    /// The official documentation it comes from (`https://…`).
    pub source: String,
    /// The files it applies to, a gitignore-style glob (`**/*.py`, `**/migrations/*.py`).
    pub file_pattern: String,
    pub scope: Scope,
}

/// A framework cairn recognises: the packages that name it and what it ships about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Framework {
    pub name: String,
    pub ecosystem: Ecosystem,
    /// The dependency names that detect it, normalised; a trailing `*` matches any rest
    /// (`org.springframework.boot:*`).
    pub packages: Vec<String>,
    /// Empty for a framework recognised without knowledge.
    pub memories: Vec<Shipped>,
    /// The data file it comes from.
    pub file: String,
}

impl Framework {
    /// Whether `package` (normalised) names this framework.
    pub(crate) fn named_by(&self, package: &str) -> bool {
        self.packages.iter().any(|p| match p.strip_suffix('*') {
            Some(prefix) => package.starts_with(prefix),
            None => p == package,
        })
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FrameworkFile {
    name: String,
    ecosystem: Ecosystem,
    packages: Vec<String>,
    #[serde(default, rename = "memory")]
    memories: Vec<Shipped>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct KnownFile {
    framework: Vec<KnownEntry>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct KnownEntry {
    name: String,
    ecosystem: Ecosystem,
    packages: Vec<String>,
}

/// Every framework cairn recognises, those with shipped knowledge first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Catalogue {
    pub frameworks: Vec<Framework>,
}

impl Catalogue {
    /// The catalogue built into this binary.
    pub fn shipped() -> Result<&'static Catalogue, CatalogueError> {
        static SHIPPED: OnceLock<Result<Catalogue, CatalogueError>> = OnceLock::new();
        SHIPPED
            .get_or_init(|| Catalogue::parse(FRAMEWORK_FILES))
            .as_ref()
            .map_err(Clone::clone)
    }

    /// Reads data files (`(<file name>, text)`): each framework file, then `known.toml`.
    pub fn parse(files: &[(&str, &str)]) -> Result<Catalogue, CatalogueError> {
        let mut with_knowledge = Vec::new();
        let mut known = Vec::new();
        for (file, text) in files {
            let error = |message: String| CatalogueError {
                file: file.to_string(),
                message,
            };
            if *file == KNOWN_FILE {
                let parsed: KnownFile = toml::from_str(text).map_err(|e| error(e.to_string()))?;
                for entry in parsed.framework {
                    known.push(framework(file, entry.name, entry.ecosystem, entry.packages));
                }
            } else {
                let parsed: FrameworkFile =
                    toml::from_str(text).map_err(|e| error(e.to_string()))?;
                if parsed.memories.is_empty() {
                    return Err(error(format!(
                        "ships no memory; list {} in {KNOWN_FILE} instead",
                        parsed.name
                    )));
                }
                let mut entry = framework(file, parsed.name, parsed.ecosystem, parsed.packages);
                for memory in &parsed.memories {
                    check_memory(memory).map_err(error)?;
                }
                entry.memories = parsed.memories;
                with_knowledge.push(entry);
            }
        }
        with_knowledge.extend(known);
        let catalogue = Catalogue {
            frameworks: with_knowledge,
        };
        catalogue.check()?;
        Ok(catalogue)
    }

    /// The framework a dependency names, if cairn recognises one.
    pub(crate) fn framework_for(&self, ecosystem: Ecosystem, package: &str) -> Option<&Framework> {
        self.frameworks
            .iter()
            .find(|f| f.ecosystem == ecosystem && f.named_by(package))
    }

    /// The framework of this name.
    pub fn named(&self, name: &str) -> Option<&Framework> {
        self.frameworks.iter().find(|f| f.name == name)
    }

    /// Every framework has a name and packages, names are unique, and no package names two
    /// frameworks of one ecosystem.
    fn check(&self) -> Result<(), CatalogueError> {
        let mut names = BTreeMap::new();
        let mut packages: BTreeMap<(Ecosystem, &str), &Framework> = BTreeMap::new();
        for f in &self.frameworks {
            let error = |message: String| CatalogueError {
                file: f.file.clone(),
                message,
            };
            if f.name.trim().is_empty() {
                return Err(error("a framework without a name".to_string()));
            }
            if f.packages.is_empty() || f.packages.iter().any(|p| p.trim().is_empty()) {
                return Err(error(format!("{}: no packages, or an empty one", f.name)));
            }
            if let Some(other) = names.insert(f.name.as_str(), f) {
                return Err(error(format!(
                    "{} is also named in frameworks/{}",
                    f.name, other.file
                )));
            }
            for package in &f.packages {
                if let Some(other) = packages.insert((f.ecosystem, package), f) {
                    return Err(error(format!(
                        "package {package} of {} also names {}",
                        f.name, other.name
                    )));
                }
            }
        }
        Ok(())
    }
}

fn framework(file: &str, name: String, ecosystem: Ecosystem, packages: Vec<String>) -> Framework {
    Framework {
        name: name.trim().to_string(),
        ecosystem,
        packages: packages
            .iter()
            .map(|p| match p.strip_suffix('*') {
                Some(prefix) => format!("{}*", ecosystem.normalise(prefix)),
                None => ecosystem.normalise(p),
            })
            .collect(),
        memories: Vec::new(),
        file: file.to_string(),
    }
}

/// A shipped memory has its text, an `https://` source without spaces, and a valid glob.
fn check_memory(memory: &Shipped) -> Result<(), String> {
    let what = || format!("memory \"{}\"", memory.title);
    if memory.title.trim().is_empty() || memory.content.trim().is_empty() {
        return Err(format!("{}: empty title or content", what()));
    }
    let source = memory.source.trim();
    if !source.starts_with("https://")
        || source.len() <= "https://".len()
        || source.contains(char::is_whitespace)
    {
        return Err(format!(
            "{}: source {source:?} is not an https link",
            what()
        ));
    }
    globset::GlobBuilder::new(&memory.file_pattern)
        .literal_separator(true)
        .build()
        .map_err(|e| format!("{}: file_pattern: {e}", what()))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const DJANGO: &str = r#"
name = "Django"
ecosystem = "python"
packages = ["Django"]

[[memory]]
title = "t"
content = "c"
source = "https://docs.djangoproject.com/"
file_pattern = "**/*.py"
scope = "org"
"#;

    #[test]
    fn the_shipped_catalogue_parses() {
        let catalogue = Catalogue::shipped().expect("shipped data files hold together");
        for name in [
            "Django",
            "Flask",
            "FastAPI",
            "SQLAlchemy",
            "React",
            "Next.js",
            "Express",
        ] {
            let framework = catalogue.named(name).expect(name);
            assert!(
                (3..=6).contains(&framework.memories.len()),
                "{name}: {} memories",
                framework.memories.len()
            );
        }
        assert!(
            catalogue
                .named("Vue")
                .is_some_and(|f| f.memories.is_empty())
        );
        assert_eq!(FRAMEWORK_FILES.len(), 8, "every data file is embedded");
    }

    #[test]
    fn packages_match_normalised_and_by_prefix() {
        let catalogue = Catalogue::shipped().unwrap();
        let django = catalogue
            .framework_for(Ecosystem::Python, "django")
            .unwrap();
        assert_eq!(django.name, "Django");
        assert!(catalogue.framework_for(Ecosystem::Npm, "django").is_none());
        let spring = catalogue
            .framework_for(
                Ecosystem::Maven,
                "org.springframework.boot:spring-boot-starter-web",
            )
            .unwrap();
        assert_eq!(spring.name, "Spring Boot");
        let parsed = Catalogue::parse(&[("django.toml", DJANGO)]).unwrap();
        assert_eq!(parsed.frameworks[0].packages, ["django"]);
    }

    #[test]
    fn broken_data_files_are_named() {
        let cases = [
            (
                DJANGO.replace("https://docs", "http://docs"),
                "not an https link",
            ),
            (DJANGO.replace("**/*.py", "**/[.py"), "file_pattern"),
            (DJANGO.replace("\"org\"", "\"team\""), "unknown variant"),
            (
                DJANGO.replace("content = \"c\"", "content = \" \""),
                "empty",
            ),
            (
                DJANGO.replace("title = \"t\"", "titel = \"t\""),
                "unknown field",
            ),
            (
                DJANGO.split("[[memory]]").next().unwrap().to_string(),
                "ships no memory",
            ),
        ];
        for (text, expected) in cases {
            let error = Catalogue::parse(&[("django.toml", text.as_str())]).unwrap_err();
            assert_eq!(error.file, "django.toml");
            assert!(error.message.contains(expected), "{expected}: {error}");
        }
        let twice = Catalogue::parse(&[("a.toml", DJANGO), ("b.toml", DJANGO)]).unwrap_err();
        assert!(twice.message.contains("also named"), "{twice}");
        let known =
            "[[framework]]\nname = \"Other\"\necosystem = \"python\"\npackages = [\"django\"]\n";
        let shared =
            Catalogue::parse(&[("django.toml", DJANGO), ("known.toml", known)]).unwrap_err();
        assert!(shared.message.contains("also names Django"), "{shared}");
    }
}
