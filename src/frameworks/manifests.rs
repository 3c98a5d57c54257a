//! Reading a manifest's dependencies: one parser per format, real parsers for TOML and JSON,
//! line reading for the rest. A parser never panics; a file it cannot read is an error naming
//! what is wrong (never quoting the file's text).

use std::sync::OnceLock;

use regex::Regex;
use serde_json::Value as Json;
use toml::Value as Toml;

use super::{Dependency, Ecosystem};

/// The manifest formats cairn reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// `pyproject.toml`: PEP 621 `[project]`, PEP 735 `[dependency-groups]`, Poetry.
    Pyproject,
    /// `requirements*.txt`, and `.txt` files in a `requirements/` folder.
    Requirements,
    /// `setup.cfg`: `[options] install_requires`.
    SetupCfg,
    /// `package.json`.
    PackageJson,
    /// `go.mod`.
    GoMod,
    /// `Cargo.toml`.
    Cargo,
    /// `pom.xml`.
    Pom,
    /// `build.gradle`, `build.gradle.kts`.
    Gradle,
    /// `composer.json`.
    Composer,
    /// `Gemfile`.
    Gemfile,
}

impl Format {
    /// The format of a repository-relative path, when it names a manifest.
    pub fn of(path: &str) -> Option<Format> {
        let (folder, name) = match path.rsplit_once('/') {
            Some((folder, name)) => (folder, name),
            None => ("", path),
        };
        let in_requirements = folder == "requirements" || folder.ends_with("/requirements");
        Some(match name {
            "pyproject.toml" => Format::Pyproject,
            "setup.cfg" => Format::SetupCfg,
            "package.json" => Format::PackageJson,
            "go.mod" => Format::GoMod,
            "Cargo.toml" => Format::Cargo,
            "pom.xml" => Format::Pom,
            "build.gradle" | "build.gradle.kts" => Format::Gradle,
            "composer.json" => Format::Composer,
            "Gemfile" => Format::Gemfile,
            _ if name.ends_with(".txt")
                && (name.starts_with("requirements") || in_requirements) =>
            {
                Format::Requirements
            }
            _ => return None,
        })
    }

    /// The ecosystem whose packages the format names.
    pub fn ecosystem(self) -> Ecosystem {
        match self {
            Format::Pyproject | Format::Requirements | Format::SetupCfg => Ecosystem::Python,
            Format::PackageJson => Ecosystem::Npm,
            Format::GoMod => Ecosystem::Go,
            Format::Cargo => Ecosystem::Cargo,
            Format::Pom | Format::Gradle => Ecosystem::Maven,
            Format::Composer => Ecosystem::Composer,
            Format::Gemfile => Ecosystem::Rubygems,
        }
    }

    /// The dependencies the manifest declares, in file order, or what makes it unreadable.
    pub fn parse(self, text: &str) -> Result<Vec<Dependency>, String> {
        let found = match self {
            Format::Pyproject => pyproject(text)?,
            Format::Requirements => requirements(text),
            Format::SetupCfg => setup_cfg(text),
            Format::PackageJson => package_json(text)?,
            Format::GoMod => go_mod(text),
            Format::Cargo => cargo(text)?,
            Format::Pom => pom(text)?,
            Format::Gradle => gradle(text),
            Format::Composer => composer(text)?,
            Format::Gemfile => gemfile(text),
        };
        let ecosystem = self.ecosystem();
        Ok(found
            .into_iter()
            .filter(|(name, _)| !name.is_empty())
            .map(|(name, version)| Dependency {
                name: ecosystem.normalise(&name),
                version: version.map(|v| bounded(v.trim())).filter(|v| !v.is_empty()),
            })
            .collect())
    }
}

/// Longest version specification kept, in characters.
const MAX_VERSION_CHARS: usize = 100;

fn bounded(text: &str) -> String {
    text.chars().take(MAX_VERSION_CHARS).collect()
}

/// A name and its version specification.
type Found = Vec<(String, Option<String>)>;

/// A TOML document, or the parser's message and line (never the offending text).
fn toml_document(text: &str) -> Result<Toml, String> {
    text.parse::<toml::Table>().map(Toml::Table).map_err(|e| {
        let line = e
            .span()
            .and_then(|span| text.get(..span.start))
            .map(|before| before.matches('\n').count() + 1);
        match line {
            Some(line) => format!(
                "malformed TOML at line {line}: {}",
                crate::fsutil::repo::without_values(e.message())
            ),
            None => format!(
                "malformed TOML: {}",
                crate::fsutil::repo::without_values(e.message())
            ),
        }
    })
}

/// A JSON object, or what is wrong with it.
fn json_object(text: &str) -> Result<serde_json::Map<String, Json>, String> {
    match serde_json::from_str::<Json>(text) {
        Ok(Json::Object(object)) => Ok(object),
        Ok(_) => Err("not a JSON object".to_string()),
        Err(e) => Err(format!(
            "malformed JSON: {}",
            crate::fsutil::repo::without_values(&e.to_string())
        )),
    }
}

/// A PEP 508 requirement (`name[extra] >=1.0 ; marker`, `name @ url`): its name and version
/// specification.
fn pep508(requirement: &str) -> Option<(String, Option<String>)> {
    let requirement = requirement.split(';').next()?.trim();
    let end = requirement
        .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')))
        .unwrap_or(requirement.len());
    let name = &requirement[..end];
    if name.is_empty() {
        return None;
    }
    let mut rest = requirement[end..].trim_start();
    if rest.starts_with('[') {
        rest = rest.find(']').map_or("", |close| &rest[close + 1..]).trim();
    }
    let version = if rest.starts_with('@') {
        None
    } else {
        let spec = rest.trim_start_matches('(').trim_end_matches(')').trim();
        (!spec.is_empty()).then(|| spec.to_string())
    };
    Some((name.to_string(), version))
}

fn pyproject(text: &str) -> Result<Found, String> {
    let document = toml_document(text)?;
    let mut found = Found::new();
    let strings = |value: Option<&Toml>, found: &mut Found| {
        for item in value.and_then(Toml::as_array).into_iter().flatten() {
            if let Some(requirement) = item.as_str().and_then(pep508) {
                found.push(requirement);
            }
        }
    };
    let project = document.get("project");
    strings(project.and_then(|p| p.get("dependencies")), &mut found);
    let groups = [
        project.and_then(|p| p.get("optional-dependencies")),
        document.get("dependency-groups"),
    ];
    for group in groups.into_iter().flatten().filter_map(Toml::as_table) {
        for list in group.values() {
            strings(Some(list), &mut found);
        }
    }
    let poetry = document.get("tool").and_then(|t| t.get("poetry"));
    let mut tables = vec![
        poetry.and_then(|p| p.get("dependencies")),
        poetry.and_then(|p| p.get("dev-dependencies")),
    ];
    if let Some(groups) = poetry.and_then(|p| p.get("group")).and_then(Toml::as_table) {
        tables.extend(groups.values().map(|g| g.get("dependencies")));
    }
    for table in tables.into_iter().flatten().filter_map(Toml::as_table) {
        for (name, spec) in table {
            if name != "python" {
                found.push((name.clone(), poetry_version(spec)));
            }
        }
    }
    Ok(found)
}

/// A Poetry constraint: `"^1.0"`, `{ version = "^1.0", … }`, or a list of such tables.
fn poetry_version(spec: &Toml) -> Option<String> {
    match spec {
        Toml::String(version) => Some(version.clone()),
        Toml::Table(table) => table.get("version")?.as_str().map(str::to_string),
        Toml::Array(list) => list.first().and_then(poetry_version),
        _ => None,
    }
}

/// Requirement lines: comments, options (`-r`, `-e`, `--hash`), and bare URLs are passed over;
/// a trailing `\` continues a line.
fn requirements(text: &str) -> Found {
    let joined = text.replace("\\\r\n", " ").replace("\\\n", " ");
    joined
        .lines()
        .map(without_comment)
        .map(|line| line.split(" --").next().unwrap_or("").trim())
        .filter(|line| !line.is_empty() && !line.starts_with('-'))
        .filter(|line| !line.contains("://") || line.contains(" @ "))
        .filter_map(pep508)
        .collect()
}

/// A line without its `#` comment (at the start, or after whitespace).
fn without_comment(line: &str) -> &str {
    if line.trim_start().starts_with('#') {
        return "";
    }
    match line.find(" #").or_else(|| line.find("\t#")) {
        Some(at) => &line[..at],
        None => line,
    }
}

/// `install_requires` of the `[options]` section: on its line and the indented lines after.
fn setup_cfg(text: &str) -> Found {
    let mut found = Found::new();
    let (mut in_options, mut in_value) = (false, false);
    for line in text.lines() {
        let trimmed = line.trim();
        if trimmed.starts_with('[') {
            in_options = trimmed == "[options]";
            in_value = false;
            continue;
        }
        let continued = line.starts_with([' ', '\t']);
        if in_value && continued {
            if let Some(requirement) = pep508(without_comment(trimmed).trim_start_matches(';')) {
                found.push(requirement);
            }
            continue;
        }
        in_value = false;
        if !in_options || continued {
            continue;
        }
        if let Some((key, value)) = trimmed.split_once(['=', ':'])
            && key.trim() == "install_requires"
        {
            in_value = true;
            found.extend(value.split(',').filter_map(|v| pep508(without_comment(v))));
        }
    }
    found
}

/// A JSON object's string values by key.
fn string_entries(object: Option<&Json>, found: &mut Found) {
    for (name, spec) in object.and_then(Json::as_object).into_iter().flatten() {
        found.push((name.clone(), spec.as_str().map(str::to_string)));
    }
}

fn package_json(text: &str) -> Result<Found, String> {
    let document = json_object(text)?;
    let mut found = Found::new();
    for key in [
        "dependencies",
        "devDependencies",
        "peerDependencies",
        "optionalDependencies",
    ] {
        string_entries(document.get(key), &mut found);
    }
    Ok(found)
}

/// `require path version` lines and `require ( … )` blocks; `// indirect` and other comments
/// are passed over.
fn go_mod(text: &str) -> Found {
    let mut found = Found::new();
    let mut in_block = false;
    for line in text.lines() {
        let line = line.split("//").next().unwrap_or("").trim();
        let entry = if in_block {
            if line == ")" {
                in_block = false;
                continue;
            }
            line
        } else if let Some(rest) = line.strip_prefix("require") {
            let rest = rest.trim();
            if rest == "(" {
                in_block = true;
                continue;
            }
            if !line[7..].starts_with([' ', '\t']) {
                continue;
            }
            rest
        } else {
            continue;
        };
        let mut parts = entry.split_whitespace();
        if let Some(module) = parts.next() {
            found.push((module.to_string(), parts.next().map(str::to_string)));
        }
    }
    found
}

fn cargo(text: &str) -> Result<Found, String> {
    let document = toml_document(text)?;
    const TABLES: [&str; 3] = ["dependencies", "dev-dependencies", "build-dependencies"];
    let mut tables: Vec<&Toml> = TABLES.iter().filter_map(|t| document.get(*t)).collect();
    if let Some(workspace) = document.get("workspace") {
        tables.extend(workspace.get("dependencies"));
    }
    for target in document
        .get("target")
        .and_then(Toml::as_table)
        .into_iter()
        .flat_map(|t| t.values())
    {
        tables.extend(TABLES.iter().filter_map(|t| target.get(*t)));
    }
    let mut found = Found::new();
    for (key, spec) in tables.into_iter().filter_map(Toml::as_table).flatten() {
        let (name, version) = match spec {
            Toml::String(version) => (key.clone(), Some(version.clone())),
            Toml::Table(table) => (
                table
                    .get("package")
                    .and_then(Toml::as_str)
                    .unwrap_or(key)
                    .to_string(),
                table
                    .get("version")
                    .and_then(Toml::as_str)
                    .map(str::to_string),
            ),
            _ => (key.clone(), None),
        };
        found.push((name, version));
    }
    Ok(found)
}

fn regex(cell: &'static OnceLock<Regex>, pattern: &str) -> &'static Regex {
    cell.get_or_init(|| Regex::new(pattern).expect("built-in pattern is valid"))
}

/// `<dependency>`, `<parent>` and `<plugin>` elements as `groupId:artifactId` and version.
fn pom(text: &str) -> Result<Found, String> {
    static COMMENT: OnceLock<Regex> = OnceLock::new();
    static ELEMENT: OnceLock<Regex> = OnceLock::new();
    static FIELD: OnceLock<Regex> = OnceLock::new();
    let text = regex(&COMMENT, r"(?s)<!--.*?-->").replace_all(text, "");
    if !text.contains("<project") {
        return Err("not a Maven POM (no <project> element)".to_string());
    }
    let element = regex(
        &ELEMENT,
        r"(?s)<(?:dependency|parent|plugin)>(.*?)</(?:dependency|parent|plugin)>",
    );
    let field = regex(
        &FIELD,
        r"<(groupId|artifactId|version)>\s*([^<]*?)\s*</(?:groupId|artifactId|version)>",
    );
    let mut found = Found::new();
    for body in element.captures_iter(&text) {
        let (mut group, mut artifact, mut version) = (None, None, None);
        for f in field.captures_iter(&body[1]) {
            let value = f[2].to_string();
            match &f[1] {
                "groupId" => group = group.or(Some(value)),
                "artifactId" => artifact = artifact.or(Some(value)),
                _ => version = version.or(Some(value)),
            }
        }
        if let Some(artifact) = artifact {
            // A plugin without a groupId is one of Maven's own.
            let group = group.unwrap_or_else(|| "org.apache.maven.plugins".to_string());
            found.push((format!("{group}:{artifact}"), version));
        }
    }
    Ok(found)
}

/// Dependency declarations with a `"group:artifact:version"` string, and plugins by id (as
/// their marker artifact, `id:id.gradle.plugin`), in Groovy or Kotlin syntax.
fn gradle(text: &str) -> Found {
    static DEPENDENCY: OnceLock<Regex> = OnceLock::new();
    static PLUGIN: OnceLock<Regex> = OnceLock::new();
    let dependency = regex(
        &DEPENDENCY,
        r#"^\s*(?:implementation|api|compileOnly|runtimeOnly|testImplementation|testRuntimeOnly|testCompileOnly|annotationProcessor|kapt|ksp|developmentOnly|compile|testCompile|classpath)\s*\(?\s*(?:(?:platform|enforcedPlatform)\s*\(\s*)?["']([^"':\s]+):([^"':\s]+)(?::([^"'\s]+))?["']"#,
    );
    let plugin = regex(
        &PLUGIN,
        r#"^\s*id\s*\(?\s*["']([^"']+)["']\s*\)?(?:\s*version\s*\(?\s*["']([^"']+)["'])?"#,
    );
    let mut found = Found::new();
    for line in text.lines() {
        if let Some(c) = dependency.captures(line) {
            found.push((
                format!("{}:{}", &c[1], &c[2]),
                c.get(3).map(|v| v.as_str().to_string()),
            ));
        } else if let Some(c) = plugin.captures(line) {
            found.push((
                format!("{0}:{0}.gradle.plugin", &c[1]),
                c.get(2).map(|v| v.as_str().to_string()),
            ));
        }
    }
    found
}

/// `require` and `require-dev`, without the platform entries (`php`, `ext-*`, `lib-*`).
fn composer(text: &str) -> Result<Found, String> {
    let document = json_object(text)?;
    let mut found = Found::new();
    string_entries(document.get("require"), &mut found);
    string_entries(document.get("require-dev"), &mut found);
    found.retain(|(name, _)| name.contains('/'));
    Ok(found)
}

/// `gem "name", "constraint", …` lines; the constraints joined with `, `.
fn gemfile(text: &str) -> Found {
    static GEM: OnceLock<Regex> = OnceLock::new();
    static CONSTRAINT: OnceLock<Regex> = OnceLock::new();
    let gem = regex(
        &GEM,
        r#"^\s*gem\s*\(?\s*["']([^"']+)["']((?:\s*,\s*["'][^"']*["'])*)"#,
    );
    let constraint = regex(&CONSTRAINT, r#"["']([^"']*)["']"#);
    let mut found = Found::new();
    for line in text.lines() {
        if let Some(c) = gem.captures(line) {
            let constraints: Vec<&str> = constraint
                .captures_iter(&c[2])
                .map(|v| v.get(1).map_or("", |m| m.as_str()))
                .collect();
            let version = (!constraints.is_empty()).then(|| constraints.join(", "));
            found.push((c[1].to_string(), version));
        }
    }
    found
}

#[cfg(test)]
mod tests;
