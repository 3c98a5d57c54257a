//! A repository's links, special files and configuration never lead cairn out of it: sources
//! under review, `cairn.toml` and the index are read through the one repository reader, so a
//! link to `/dev/zero`, to the user's files or up to `/` is refused, a FIFO never blocks, and
//! a configuration that does not parse is never quoted back.

use std::os::unix::fs::symlink;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::support::TestRepo;

/// Longer than any of these commands takes; a read of `/dev/zero` or a FIFO would not end.
const DEADLINE: Duration = Duration::from_secs(90);

/// A function that exists only outside the repository.
const CANARY_FUNCTION: &str = "outside_canary_function";
/// A second one, which no diff below names either.
const UNNAMED_FUNCTION: &str = "second_outside_only";

/// Runs `command`, killing it (and failing) if it outlives [`DEADLINE`].
fn bounded(mut command: Command) -> Output {
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > DEADLINE {
            child.kill().unwrap();
            panic!("{command:?} did not finish: it read what it should have refused");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.wait_with_output().unwrap()
}

fn said(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// A repository with `src/app.py` committed, and a directory outside it holding a Python file
/// with [`CANARY_FUNCTION`].
fn repository_and_outside() -> (TestRepo, tempfile::TempDir) {
    let repo = TestRepo::new();
    repo.write(
        "src/app.py",
        "def handler():\n    return helper()\n\n\ndef helper():\n    return 1\n",
    );
    repo.write("src/other.py", "def other():\n    return 2\n");
    repo.commit("app");
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(
        outside.path().join("outside.py"),
        format!(
            "def {CANARY_FUNCTION}():\n    return 'private'\n\n\ndef {UNNAMED_FUNCTION}():\n    return 'only-outside-7731'\n"
        ),
    )
    .unwrap();
    (repo, outside)
}

#[test]
fn a_review_and_an_index_never_read_through_links_out_of_the_repository() {
    let (repo, outside) = repository_and_outside();
    // Links committed pointing inside, then pointed out of the repository in the working tree:
    // the working-tree review reads each one's new side.
    for name in ["zero", "home"] {
        symlink("app.py", repo.path().join(format!("src/{name}.py"))).unwrap();
    }
    repo.commit("links");
    for name in ["zero", "home"] {
        std::fs::remove_file(repo.path().join(format!("src/{name}.py"))).unwrap();
    }
    symlink("/dev/zero", repo.path().join("src/zero.py")).unwrap();
    symlink(
        outside.path().join("outside.py"),
        repo.path().join("src/home.py"),
    )
    .unwrap();
    symlink("/", repo.path().join("src/up")).unwrap();
    repo.write(
        "src/app.py",
        "def handler():\n    return helper() + 1\n\n\ndef helper():\n    return 1\n",
    );

    let index = bounded({
        let mut c = repo.cairn_command(repo.data_dir());
        c.args(["index", "--json"]);
        c
    });
    assert!(index.status.success(), "{}", said(&index));
    assert!(!said(&index).contains(CANARY_FUNCTION));

    let review = bounded({
        let mut c = repo.cairn_command(repo.data_dir());
        c.args(["review", "--json"]);
        c
    });
    assert!(review.status.success(), "{}", said(&review));
    let text = said(&review);
    assert!(text.contains("src/app.py"), "{text}");
    assert!(!text.contains(CANARY_FUNCTION), "{text}");

    // A pasted diff naming a path through the directory link up to `/`, and one through the
    // link to the outside file: neither is read.
    let through_root = format!(
        "src/up{}",
        outside.path().join("outside.py").to_string_lossy()
    );
    for path in [through_root.as_str(), "src/home.py", "src/zero.py"] {
        let diff = format!(
            "diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n@@ -1,2 +1,3 @@\n def {CANARY_FUNCTION}():\n+    pass\n     return 'private'\n"
        );
        let mut command = repo.cairn_command(repo.data_dir());
        command.args(["review", "--json", "--diff"]).arg({
            let file = repo.data_dir().join("pasted.diff");
            std::fs::write(&file, &diff).unwrap();
            file
        });
        let output = bounded(command);
        let text = said(&output);
        // The diff's own lines may be named; what only the outside file holds never is.
        assert!(!text.contains(UNNAMED_FUNCTION), "{path}: {text}");
        assert!(!text.contains("only-outside-7731"), "{path}: {text}");
    }

    let expand = repo.cairn(&["expand", &format!("src/home.py::{CANARY_FUNCTION}")]);
    assert!(!expand.status.success(), "{}", said(&expand));
}

#[test]
fn a_linked_cairn_toml_is_refused_without_printing_what_it_points_to() {
    let (repo, outside) = repository_and_outside();
    let canary = "canary-value-5f1d2a9c";
    let credentials = outside.path().join("credentials");
    std::fs::write(
        &credentials,
        format!("[default]\naws_secret_access_key = wJalrXUtnFEMI/K7MDENG/{canary}\n"),
    )
    .unwrap();
    let targets = [
        "/proc/self/environ".to_string(),
        credentials.to_string_lossy().into_owned(),
        "/dev/zero".to_string(),
    ];
    for target in &targets {
        let config = repo.path().join("cairn.toml");
        let _ = std::fs::remove_file(&config);
        symlink(target, &config).unwrap();
        for args in [["status", "--json"], ["index", "--json"]] {
            let mut command = repo.cairn_command(repo.data_dir());
            command.args(args).env("CAIRN_CANARY_SECRET", canary);
            let output = bounded(command);
            let text = said(&output);
            assert!(!output.status.success(), "{target}: {text}");
            assert!(!text.contains(canary), "{target} leaked: {text}");
            assert!(
                text.contains("cairn.toml") && text.contains("outside the repository"),
                "{target}: {text}"
            );
        }
    }
}

#[test]
fn a_cairn_toml_that_is_a_fifo_or_does_not_parse_is_a_clear_error_without_its_values() {
    let (repo, _outside) = repository_and_outside();
    let config = repo.path().join("cairn.toml");
    let name = std::ffi::CString::new(config.to_string_lossy().as_bytes()).unwrap();
    // SAFETY: mkfifo on a path the test owns.
    assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o600) }, 0);
    let output = bounded({
        let mut c = repo.cairn_command(repo.data_dir());
        c.args(["status"]);
        c
    });
    assert!(!output.status.success());
    assert!(said(&output).contains("a FIFO"), "{}", said(&output));

    std::fs::remove_file(&config).unwrap();
    let secret = "sk_live_4eC39HqLyjWDarjtT1zdp7dc";
    repo.write(
        "cairn.toml",
        format!("[index]\nexclude = []\nmax_file_bytes = \"{secret}\"\n"),
    );
    let output = repo.cairn(&["status"]);
    let text = said(&output);
    assert!(!output.status.success());
    assert!(!text.contains(secret), "{text}");
    assert!(
        text.contains("cairn.toml is not valid cairn configuration: line 3, column 18")
            && text.contains("expected u64"),
        "{text}"
    );

    repo.write("cairn.toml", format!("[index]\n{secret} = 1\n"));
    let text = said(&repo.cairn(&["status"]));
    assert!(!text.contains(secret), "{text}");
    assert!(text.contains("unknown field"), "{text}");

    repo.write("cairn.toml", vec![b'#'; 300 * 1024]);
    let text = said(&repo.cairn(&["status"]));
    assert!(
        text.contains("larger than the limit for cairn.toml"),
        "{text}"
    );
}
