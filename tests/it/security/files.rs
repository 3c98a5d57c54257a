//! cairn's data directory is the user's alone: directories 0700 and files 0600 whatever the
//! umask, the stores included; `cairn doctor` narrows anything wider and says so.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use serde_json::json;

use crate::support::TestRepo;

/// Every entry under `dir` that group or others can reach, with its mode.
fn open_to_others(dir: &Path) -> Vec<(PathBuf, u32)> {
    let mut open = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(path) = pending.pop() {
        let metadata = std::fs::symlink_metadata(&path).unwrap();
        let mode = metadata.permissions().mode() & 0o777;
        if mode & 0o077 != 0 {
            open.push((path.clone(), mode));
        }
        if metadata.is_dir() {
            pending.extend(std::fs::read_dir(&path).unwrap().map(|e| e.unwrap().path()));
        }
    }
    open
}

#[test]
fn everything_cairn_keeps_is_private_and_doctor_narrows_what_is_not() {
    let repo = TestRepo::with_fixture("mixed");
    let data = repo.data_dir();
    // The data directory as a careless tool or an old cairn left it.
    std::fs::set_permissions(data, std::fs::Permissions::from_mode(0o755)).unwrap();
    repo.index();
    repo.cairn_ok(&[
        "memory",
        "add",
        "-t",
        "decision",
        "Prices are Decimal, never float.",
    ]);
    let read = json!({
        "hook_event_name": "PostToolUse", "session_id": "s1", "cwd": repo.path(),
        "tool_name": "Read",
        "tool_input": {"file_path": repo.path().join("src/shop/pricing.py")}
    });
    let hook = repo.cairn_with_stdin(&["hook"], read.to_string().as_bytes());
    assert!(hook.status.success());
    for expected in [
        "store",
        "memory",
        "events.jsonl",
        "generation",
        "memory.seq",
    ] {
        assert!(data.join(expected).exists(), "{expected} was not written");
    }
    assert_eq!(open_to_others(data), vec![], "entries others can reach");

    // Widened by hand: doctor reports and narrows them.
    let store_file = std::fs::read_dir(data.join("store"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.is_file())
        .unwrap_or_else(|| data.join("memory.seq"));
    std::fs::set_permissions(&store_file, std::fs::Permissions::from_mode(0o644)).unwrap();
    std::fs::set_permissions(data.join("memory"), std::fs::Permissions::from_mode(0o755)).unwrap();
    let doctor = repo.cairn(&["doctor"]);
    let said = String::from_utf8_lossy(&doctor.stdout);
    assert!(
        said.lines()
            .any(|l| l.starts_with("data files") && l.contains("narrowed")),
        "{said}"
    );
    assert_eq!(open_to_others(data), vec![]);
    let again = repo.cairn(&["doctor"]);
    let said = String::from_utf8_lossy(&again.stdout);
    assert!(
        said.lines()
            .any(|l| l.starts_with("data files") && l.contains("ok")),
        "{said}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn serve_relays_only_to_a_socket_of_this_user() {
    use std::os::unix::net::UnixListener;
    let repo = TestRepo::with_fixture("mixed");
    repo.index();
    let data = repo.data_dir();
    // Another user's socket, named by a daemon record, with the daemon lock held.
    let socket = data.join("theirs.sock");
    let listener = UnixListener::bind(&socket).unwrap();
    listener.set_nonblocking(true).unwrap();
    if std::os::unix::fs::chown(&socket, Some(65534), Some(65534)).is_err() {
        // Only root can hand a socket to another user; there is nothing to check without one.
        eprintln!(
            "note: not root, so no socket of another user can be made; the check ran only as root"
        );
        return;
    }
    let record = cairn::daemon::DaemonRecord {
        pid: std::process::id(),
        url: "http://127.0.0.1:9/mcp".to_string(),
        port: 9,
        socket: socket.clone(),
        root: repo.path().to_path_buf(),
        version: "0".to_string(),
        started_at: 0,
    };
    record.write(data).unwrap();
    let lock = std::fs::File::create(data.join("daemon.lock")).unwrap();
    lock.lock().unwrap();

    let client = crate::mcp::connect(&repo).await;
    let tools = tokio::time::timeout(std::time::Duration::from_secs(30), client.list_all_tools())
        .await
        .expect("served from the store, not relayed to a socket that never answers")
        .unwrap();
    assert!(tools.iter().any(|t| t.name == "get_context"));
    assert!(
        listener.accept().is_err(),
        "cairn serve connected to another user's socket"
    );
    client.cancel().await.unwrap();
    drop(lock);
}
