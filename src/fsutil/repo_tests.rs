//! The repository reader against planted links, special files and oversized files.

use std::os::unix::fs::symlink;

use super::*;

/// A repository with `src/a.py` and a directory outside it holding a canary file.
fn planted() -> (tempfile::TempDir, tempfile::TempDir, RepoFiles) {
    let repo = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(repo.path().join("src")).unwrap();
    std::fs::write(repo.path().join("src/a.py"), "def inside():\n    pass\n").unwrap();
    std::fs::write(
        outside.path().join("canary.py"),
        "def outside_canary(): pass\n",
    )
    .unwrap();
    let files = RepoFiles::open(repo.path()).unwrap();
    (repo, outside, files)
}

#[test]
fn a_file_inside_is_read_and_a_link_inside_is_followed() {
    let (repo, _outside, files) = planted();
    assert_eq!(
        files.text("src/a.py", Limit::CONFIG).unwrap(),
        "def inside():\n    pass\n"
    );
    symlink("a.py", repo.path().join("src/b.py")).unwrap();
    symlink("src", repo.path().join("lib")).unwrap();
    assert!(
        files
            .text("src/b.py", Limit::CONFIG)
            .unwrap()
            .contains("inside")
    );
    assert!(
        files
            .text("lib/a.py", Limit::CONFIG)
            .unwrap()
            .contains("inside")
    );
    assert_eq!(files.stat("lib/b.py").unwrap().size, 23);
}

#[test]
fn links_and_paths_that_lead_out_are_refused() {
    let (repo, outside, files) = planted();
    let canary = outside.path().join("canary.py");
    symlink(&canary, repo.path().join("src/home.py")).unwrap();
    symlink("/dev/zero", repo.path().join("src/zero.py")).unwrap();
    symlink("/", repo.path().join("src/up")).unwrap();
    symlink("../..", repo.path().join("src/climb")).unwrap();
    let canary_relative = canary
        .strip_prefix("/")
        .unwrap()
        .to_string_lossy()
        .into_owned();
    for path in [
        "src/home.py".to_string(),
        "src/zero.py".to_string(),
        format!("src/up/{canary_relative}"),
        format!("src/climb/{canary_relative}"),
        "../x.py".to_string(),
        "src/../../x.py".to_string(),
        canary.to_string_lossy().into_owned(),
    ] {
        let error = files.read(&path, Limit::CONFIG).unwrap_err();
        assert!(
            matches!(error, RepoReadError::Outside { .. }),
            "{path}: {error}"
        );
        assert!(
            matches!(files.stat(&path), Err(RepoReadError::Outside { .. })),
            "{path}"
        );
    }
}

#[test]
fn special_files_are_refused_without_blocking() {
    let (repo, _outside, files) = planted();
    let fifo = repo.path().join("src/pipe.py");
    let name = std::ffi::CString::new(fifo.to_string_lossy().as_bytes()).unwrap();
    // SAFETY: mkfifo on a path the test owns.
    assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o600) }, 0);
    let error = files.read("src/pipe.py", Limit::CONFIG).unwrap_err();
    assert!(error.to_string().contains("a FIFO"), "{error}");
    let error = files.read("src", Limit::CONFIG).unwrap_err();
    assert!(error.to_string().contains("a directory"), "{error}");
    symlink("pipe.py", repo.path().join("src/to-pipe.py")).unwrap();
    assert!(matches!(
        files.stat("src/to-pipe.py"),
        Err(RepoReadError::NotFile { .. })
    ));
}

#[test]
fn a_file_over_its_limit_names_the_limit_and_a_missing_one_is_missing() {
    let (repo, _outside, files) = planted();
    std::fs::write(repo.path().join("big.toml"), vec![b'#'; 300 * 1024]).unwrap();
    let error = files.read("big.toml", Limit::CONFIG).unwrap_err();
    assert_eq!(
        error.to_string(),
        "big.toml: larger than the limit for cairn.toml (307200 > 262144 bytes); not read"
    );
    assert_eq!(
        error.reason(),
        "larger than the limit for cairn.toml (307200 > 262144 bytes); not read"
    );
    assert!(
        files
            .read("nothing.py", Limit::CONFIG)
            .unwrap_err()
            .is_missing()
    );
    std::fs::write(repo.path().join("latin1.txt"), b"caf\xe9").unwrap();
    let error = files.text("latin1.txt", Limit::CONFIG).unwrap_err();
    assert_eq!(
        error.reason(),
        "not UTF-8 text (invalid byte at offset 3); not read"
    );
}

#[test]
fn listing_shows_names_and_directories_and_refuses_links_out() {
    let (repo, _outside, files) = planted();
    std::fs::create_dir_all(repo.path().join("src/sub")).unwrap();
    symlink("/", repo.path().join("src/up")).unwrap();
    let mut listed: Vec<(String, bool)> = files
        .list("src", 100)
        .unwrap()
        .into_iter()
        .map(|entry| (entry.name, entry.is_dir))
        .collect();
    listed.sort();
    assert_eq!(
        listed,
        vec![
            ("a.py".to_string(), false),
            ("sub".to_string(), true),
            ("up".to_string(), false)
        ]
    );
    assert!(matches!(
        files.list("src/up", 100),
        Err(RepoReadError::Outside { .. })
    ));
    assert!(files.exists("src/up") && !files.exists("src/none"));
}

#[test]
fn parser_messages_keep_the_schema_and_lose_the_input() {
    assert_eq!(
        without_values("invalid type: string \"hunter2\", expected a boolean"),
        "invalid type: string \"…\", expected a boolean"
    );
    assert_eq!(
        without_values("unknown field `AKIAIOSFODNN7EXAMPLE`, expected one of `index`, `memory`"),
        "unknown field `…`, expected one of `index`, `memory`"
    );
    assert_eq!(
        without_values("invalid string\nexpected `\"`, `'`\n"),
        "invalid string; expected `\"`, `'`"
    );
    assert_eq!(without_values("unterminated \"secret"), "unterminated \"…");
    let text = "a = 1\nb = \"é\" x\n";
    assert_eq!(line_and_column(text, 0), (1, 1));
    assert_eq!(line_and_column(text, text.find('x').unwrap()), (2, 9));
}

#[test]
fn a_plain_file_is_one_reached_through_no_link() {
    let (repo, _outside, files) = planted();
    symlink("src", repo.path().join("lib")).unwrap();
    symlink("a.py", repo.path().join("src/b.py")).unwrap();
    symlink("/", repo.path().join("src/up")).unwrap();
    assert_eq!(files.plain_file("src/a.py").unwrap().unwrap().size, 23);
    for path in [
        "lib/a.py",
        "src/b.py",
        "src",
        "src/none.py",
        "src/up/etc/hostname",
    ] {
        assert_eq!(files.plain_file(path).unwrap(), None, "{path}");
    }
    assert!(matches!(
        files.plain_file("/etc/hostname"),
        Err(RepoReadError::Outside { .. })
    ));
}
