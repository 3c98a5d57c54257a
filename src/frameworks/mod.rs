//! Frameworks in use and what cairn knows about them: detection from manifests (pure: a
//! manifest's path and text in, the frameworks among its dependencies out) and the framework
//! knowledge shipped as data files (`frameworks/*.toml`, embedded at build time).

use serde::{Deserialize, Serialize};

mod catalogue;
mod manifests;

pub use catalogue::{Catalogue, CatalogueError, Framework, Scope, Shipped};
pub use manifests::Format;

/// A package registry: the namespace a manifest's dependency names live in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Ecosystem {
    /// PyPI: `pyproject.toml`, `requirements*.txt`, `setup.cfg`.
    Python,
    /// npm: `package.json`.
    Npm,
    /// Go modules: `go.mod`.
    Go,
    /// crates.io: `Cargo.toml`.
    Cargo,
    /// Maven coordinates `group:artifact`: `pom.xml`, `build.gradle(.kts)`.
    Maven,
    /// Packagist: `composer.json`.
    Composer,
    /// RubyGems: `Gemfile`.
    Rubygems,
}

impl Ecosystem {
    pub fn as_str(self) -> &'static str {
        match self {
            Ecosystem::Python => "python",
            Ecosystem::Npm => "npm",
            Ecosystem::Go => "go",
            Ecosystem::Cargo => "cargo",
            Ecosystem::Maven => "maven",
            Ecosystem::Composer => "composer",
            Ecosystem::Rubygems => "rubygems",
        }
    }

    /// A package name as the registry compares names: PyPI folds case and runs of `-_.`
    /// (PEP 503), crates.io folds case and `_`/`-`, npm, Packagist and RubyGems fold case; Go
    /// module paths and Maven coordinates are kept as written.
    pub fn normalise(self, name: &str) -> String {
        let name = name.trim();
        match self {
            Ecosystem::Python => {
                let mut out = String::with_capacity(name.len());
                for c in name.chars() {
                    if matches!(c, '-' | '_' | '.') {
                        if !out.ends_with('-') {
                            out.push('-');
                        }
                    } else {
                        out.push(c.to_ascii_lowercase());
                    }
                }
                out
            }
            Ecosystem::Cargo => name.to_ascii_lowercase().replace('_', "-"),
            Ecosystem::Npm | Ecosystem::Composer | Ecosystem::Rubygems => name.to_ascii_lowercase(),
            Ecosystem::Go | Ecosystem::Maven => name.to_string(),
        }
    }
}

impl std::fmt::Display for Ecosystem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One dependency a manifest declares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dependency {
    /// Normalised for its ecosystem.
    pub name: String,
    /// The version specification as written (`>=4.2,<5`, `^18.2.0`, `v1.9.1`), if any.
    pub version: Option<String>,
}

/// A framework found in a manifest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Detection {
    /// The framework's name (`Django`, `Next.js`).
    pub framework: String,
    pub ecosystem: Ecosystem,
    /// The dependency that names it.
    pub package: String,
    /// Its version specification, if the manifest gives one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// Repository-relative path of the manifest.
    pub manifest: String,
}

/// A manifest passed over, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ManifestNote {
    pub manifest: String,
    pub reason: String,
}

/// The frameworks among a manifest's dependencies, each once (its first declaration), or why
/// the manifest cannot be read. `manifest` is repository-relative; its file name says the
/// format.
pub fn detect(
    catalogue: &Catalogue,
    manifest: &str,
    text: &str,
) -> Result<Vec<Detection>, ManifestNote> {
    let note = |reason: String| ManifestNote {
        manifest: manifest.to_string(),
        reason,
    };
    let format = Format::of(manifest).ok_or_else(|| note("not a known manifest".to_string()))?;
    let ecosystem = format.ecosystem();
    let mut found: Vec<Detection> = Vec::new();
    for dependency in format.parse(text).map_err(note)? {
        let Some(framework) = catalogue.framework_for(ecosystem, &dependency.name) else {
            continue;
        };
        if found.iter().any(|d| d.framework == framework.name) {
            continue;
        }
        found.push(Detection {
            framework: framework.name.clone(),
            ecosystem,
            package: dependency.name,
            version: dependency.version,
            manifest: manifest.to_string(),
        });
    }
    Ok(found)
}
