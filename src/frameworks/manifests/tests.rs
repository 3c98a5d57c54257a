//! Each manifest format: what it declares, in file order, and what a broken one says.

use super::*;

/// The manifest's dependencies as `name version` lines (`name` alone without a version), in
/// any order (TOML tables may come back sorted).
fn check(path: &str, text: &str, expected: &[&str]) {
    let format = Format::of(path).unwrap_or_else(|| panic!("{path} is a manifest"));
    let mut found: Vec<String> = format
        .parse(text)
        .unwrap_or_else(|e| panic!("{path}: {e}"))
        .into_iter()
        .map(|d| match d.version {
            Some(v) => format!("{} {v}", d.name),
            None => d.name,
        })
        .collect();
    found.sort();
    let mut expected = expected.to_vec();
    expected.sort();
    assert_eq!(found, expected, "{path}");
}

fn refused(path: &str, text: &str) -> String {
    Format::of(path)
        .unwrap()
        .parse(text)
        .expect_err("a broken manifest is refused")
}

#[test]
fn manifest_names_say_the_format() {
    assert_eq!(Format::of("pyproject.toml"), Some(Format::Pyproject));
    assert_eq!(
        Format::of("svc/requirements-dev.txt"),
        Some(Format::Requirements)
    );
    assert_eq!(
        Format::of("requirements/base.txt"),
        Some(Format::Requirements)
    );
    assert_eq!(Format::of("docs/notes.txt"), None);
    assert_eq!(Format::of("web/package.json"), Some(Format::PackageJson));
    assert_eq!(Format::of("app/build.gradle.kts"), Some(Format::Gradle));
    assert_eq!(Format::of("Gemfile"), Some(Format::Gemfile));
    assert_eq!(Format::of("Gemfile.lock"), None);
    assert_eq!(Format::of("package-lock.json"), None);
}

#[test]
fn pyproject_pep621_groups_and_poetry() {
    check(
        "pyproject.toml",
        r#"
[project]
name = "shop"
dependencies = ["Django>=4.2,<5.0", "psycopg[binary] (>=3.1)", "requests ; python_version < '3.12'", "pkg @ https://example.com/pkg.zip"]
[project.optional-dependencies]
dev = ["pytest==8.0"]
[dependency-groups]
lint = ["ruff", {include-group = "dev"}]
[tool.poetry.dependencies]
python = "^3.11"
Flask = "^3.0"
SQLAlchemy = { version = "2.0.25", extras = ["asyncio"] }
[tool.poetry.group.test.dependencies]
Fast_API = [{ version = "0.110", python = "<3.12" }]
"#,
        &[
            "django >=4.2,<5.0",
            "psycopg >=3.1",
            "requests",
            "pkg",
            "pytest ==8.0",
            "ruff",
            "flask ^3.0",
            "sqlalchemy 2.0.25",
            "fast-api 0.110",
        ],
    );
    let error = refused("pyproject.toml", "[project]\ndependencies = [\"django\"\n");
    assert!(error.starts_with("malformed TOML at line"), "{error}");
    // Unexpected shapes are passed over, not refused.
    check(
        "pyproject.toml",
        "[project]\ndependencies = \"django\"\n",
        &[],
    );
}

#[test]
fn requirements_lines() {
    check(
        "requirements.txt",
        "# pinned\nDjango==5.0.1  # web\n-r base.txt\n-e ./local\n--index-url https://pypi.org/simple\n\
         fastapi[all]>=0.100 \\\n    --hash=sha256:abc\nhttps://example.com/x.whl\nzope.interface\n\
         uvicorn ; sys_platform != 'win32'\n",
        &[
            "django ==5.0.1",
            "fastapi >=0.100",
            "zope-interface",
            "uvicorn",
        ],
    );
}

#[test]
fn setup_cfg_install_requires() {
    check(
        "setup.cfg",
        "[metadata]\nname = x\ninstall_requires = nothing\n[options]\npackages = find:\ninstall_requires =\n    flask>=2\n    # comment\n    SQLAlchemy\nzip_safe = False\n[options.extras_require]\ntest =\n    pytest\n",
        &["flask >=2", "sqlalchemy"],
    );
}

#[test]
fn package_json_dependency_tables() {
    check(
        "package.json",
        r#"{"name": "web", "dependencies": {"react": "^18.2.0", "next": "14.1.0"},
            "devDependencies": {"Jest": "^29"}, "peerDependencies": {"react-dom": "*"},
            "optionalDependencies": {"odd": 3}}"#,
        &[
            "react ^18.2.0",
            "next 14.1.0",
            "jest ^29",
            "react-dom *",
            "odd",
        ],
    );
    assert!(refused("package.json", "{\"dependencies\": {").starts_with("malformed JSON"));
    assert_eq!(refused("package.json", "[1, 2]"), "not a JSON object");
}

#[test]
fn go_mod_requires() {
    check(
        "go.mod",
        "module example.com/svc\n\ngo 1.22\n\nrequire github.com/gin-gonic/gin v1.9.1\nrequirement x\n\
         require (\n\tgorm.io/gorm v1.25.5 // indirect\n\t// a comment\n\tgithub.com/labstack/echo/v4 v4.11.4\n)\n\
         replace gorm.io/gorm => ../gorm\n",
        &[
            "github.com/gin-gonic/gin v1.9.1",
            "gorm.io/gorm v1.25.5",
            "github.com/labstack/echo/v4 v4.11.4",
        ],
    );
}

#[test]
fn cargo_tables_renames_and_targets() {
    check(
        "Cargo.toml",
        r#"
[package]
name = "svc"
[dependencies]
axum = "0.7"
web = { package = "actix_web", version = "4" }
tokio = { workspace = true }
[dev-dependencies]
proptest = "1"
[target.'cfg(unix)'.dependencies]
libc = "0.2"
[workspace.dependencies]
sqlx = { version = "0.7", features = ["postgres"] }
"#,
        &[
            "axum 0.7",
            "actix-web 4",
            "tokio",
            "proptest 1",
            "sqlx 0.7",
            "libc 0.2",
        ],
    );
    assert!(refused("Cargo.toml", "[dependencies\naxum = 1").starts_with("malformed TOML"));
}

#[test]
fn pom_dependencies_parent_and_plugins() {
    check(
        "pom.xml",
        r#"<?xml version="1.0"?>
<project>
  <parent>
    <groupId>org.springframework.boot</groupId>
    <artifactId>spring-boot-starter-parent</artifactId>
    <version>3.2.1</version>
  </parent>
  <!-- <dependency><groupId>old</groupId><artifactId>gone</artifactId></dependency> -->
  <dependencies>
    <dependency>
      <groupId>org.hibernate.orm</groupId>
      <artifactId>hibernate-core</artifactId>
    </dependency>
  </dependencies>
  <build><plugins><plugin><artifactId>maven-surefire-plugin</artifactId><version>${surefire.version}</version></plugin></plugins></build>
</project>"#,
        &[
            "org.springframework.boot:spring-boot-starter-parent 3.2.1",
            "org.hibernate.orm:hibernate-core",
            "org.apache.maven.plugins:maven-surefire-plugin ${surefire.version}",
        ],
    );
    assert!(refused("pom.xml", "<html></html>").contains("not a Maven POM"));
}

#[test]
fn gradle_groovy_and_kotlin() {
    check(
        "build.gradle",
        "plugins {\n    id 'org.springframework.boot' version '3.2.0'\n    id 'java'\n}\n\
         dependencies {\n    implementation 'org.springframework.boot:spring-boot-starter-web'\n\
         testImplementation \"junit:junit:4.13.2\"\n    implementation libs.guava\n}\n",
        &[
            "org.springframework.boot:org.springframework.boot.gradle.plugin 3.2.0",
            "java:java.gradle.plugin",
            "org.springframework.boot:spring-boot-starter-web",
            "junit:junit 4.13.2",
        ],
    );
    check(
        "build.gradle.kts",
        "plugins { kotlin(\"jvm\") }\nplugins {\n  id(\"io.ktor.plugin\") version \"2.3.7\"\n}\ndependencies {\n  implementation(platform(\"org.hibernate.orm:hibernate-platform:6.4.1.Final\"))\n  api(\"io.ktor:ktor-server-core:2.3.7\")\n}\n",
        &[
            "io.ktor.plugin:io.ktor.plugin.gradle.plugin 2.3.7",
            "org.hibernate.orm:hibernate-platform 6.4.1.Final",
            "io.ktor:ktor-server-core 2.3.7",
        ],
    );
}

#[test]
fn composer_requires_without_platform_packages() {
    check(
        "composer.json",
        r#"{"require": {"php": "^8.2", "ext-json": "*", "Laravel/Framework": "^11.0"},
            "require-dev": {"phpunit/phpunit": "^10"}}"#,
        &["laravel/framework ^11.0", "phpunit/phpunit ^10"],
    );
    assert!(refused("composer.json", "").starts_with("malformed JSON"));
}

#[test]
fn gemfile_gems_and_constraints() {
    check(
        "Gemfile",
        "source 'https://rubygems.org'\ngem 'rails', '~> 7.1', '>= 7.1.2'\ngem \"sinatra\"\n  gem('puma', '6.4')\n# gem 'old'\ngroup :test do\n  gem 'rspec-rails', require: false\nend\n",
        &[
            "rails ~> 7.1, >= 7.1.2",
            "sinatra",
            "puma 6.4",
            "rspec-rails",
        ],
    );
}

#[test]
fn version_specifications_are_bounded() {
    let long = format!("django=={}", "1".repeat(500));
    let parsed = Format::Requirements.parse(&long).unwrap();
    assert_eq!(parsed[0].version.as_ref().unwrap().chars().count(), 100);
}

#[test]
fn garbage_never_panics() {
    let inputs = [
        "",
        "\u{0}\u{1}\u{2}",
        "[[[[",
        "{\"dependencies\": null}",
        "require (",
        "<project><dependency><artifactId>",
        "gem '",
        "install_requires =\n  ",
        "é\u{301}=\\\n",
    ];
    for path in [
        "pyproject.toml",
        "requirements.txt",
        "setup.cfg",
        "package.json",
        "go.mod",
        "Cargo.toml",
        "pom.xml",
        "build.gradle",
        "composer.json",
        "Gemfile",
    ] {
        for input in inputs {
            let _ = Format::of(path).unwrap().parse(input);
        }
    }
}
