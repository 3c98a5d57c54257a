//! Secrets never reach the memory store, whichever way text comes in (`memory add`,
//! `record-review`, `memory import`): free text is redacted, an id holding a secret is
//! refused without the error quoting it, and ordinary code and prose survive byte for byte.

use std::path::Path;

use serde_json::{Value, json};

use crate::support::TestRepo;

/// A secret as people paste it: the text holding it, and the value that must never be stored.
struct Secret {
    text: String,
    value: String,
}

/// `template` with `{}` replaced by `pieces` joined (tokens are assembled at run time, so this
/// file does not look like a leak to secret scanners).
fn secret(template: &str, pieces: &[&str]) -> Secret {
    let value = pieces.concat();
    Secret {
        text: template.replacen("{}", &value, 1),
        value,
    }
}

/// The values issue 13 found stored verbatim, and the formats redaction must know.
fn secrets() -> Vec<Secret> {
    let key_body = "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW";
    vec![
        secret("DB_PASSWORD={}", &["hunter2"]),
        secret("SMTP_PASS={}", &["Tr0ub4dor&3"]),
        secret("PASSWORD={}", &["correcthorsebatterystaple"]),
        secret("postgres://app:{}@db/prod", &["p@ss/w0rd"]),
        secret("the cache is redis://:{}@cache:6379", &["r3dis-only"]),
        secret(
            "refresh token {}",
            &["xox", "e-1-My0xLTI2NTA5NjM5NjA1NjItNjI3NzE4OTk2"],
        ),
        secret(
            "bot token {}",
            &[
                "xox",
                "b-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
            ],
        ),
        secret(
            "PAT {}",
            &[
                "github",
                "_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUV",
            ],
        ),
        secret(
            "session {}",
            &[
                "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9",
                ".eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIn0",
                ".dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
            ],
        ),
        secret(
            "Server=db;User ID=sa;Password={};Encrypt=true",
            &["Sq1-pass"],
        ),
        secret(
            "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey={};EndpointSuffix=core.windows.net",
            &[
                "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==",
            ],
        ),
        secret("api_key {}", &["5f4dcc3b5aa765d6", "1d8327deb882cf99"]),
        Secret {
            text: format!(
                "deploy key:\n-----BEGIN OPENSSH {}-----\n{key_body}\n-----END OPENSSH PRIVATE KEY-----",
                ["PRIVATE", "KEY"].join(" ")
            ),
            value: key_body.to_string(),
        },
    ]
}

/// Secrets that fit in an id (letters, digits, `_`, `-`): a GitHub token, a Slack refresh
/// token, an AWS access key id.
fn id_secrets() -> Vec<String> {
    vec![
        ["gh", "p_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"].concat(),
        ["xox", "e-1-My0xLTI2NTA5NjM5NjA1NjItNjI3NzE4OTk2"].concat(),
        ["AKIA", "IOSFODNN7EXAMPLE"].concat(),
    ]
}

/// Ordinary code, lockfile lines and prose that look a little like secrets.
const ORDINARY: &str = "\
Reverted by 9fceb02d0ae598e95dc970b74767f19372d61af8 last week.
checksum = \"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\"
integrity = \"sha512-z4PhNX7vuL3xVChQ1m2AB9Yg5AULVxXcg/SpIdNs6c5H0NE8XYXysP+DGNKHfuwvY7kxvUdBeoGlODJ6+SfaPg==\"
request 123e4567-e89b-12d3-a456-426614174000 failed
password_hash = bcrypt.hashpw(password, salt)
token_count = 3
max_tokens = 4096
password_field = form.password
if not password:
def reset_password(user):
api_key_header = \"X-Api-Key\"
SECRET_KEY_SETTING_NAME is read at startup
postgres://db.internal:5432/prod";

/// A repository with one committed file.
fn repo() -> TestRepo {
    let repo = TestRepo::new();
    repo.write("src/app.py", "def main():\n    return 0\n");
    repo.commit("init");
    repo
}

/// What cairn printed: its standard output, and both streams (the check looks for secrets in
/// everything printed).
struct Printed {
    stdout: String,
    all: String,
}

/// Runs cairn, expecting it to succeed or fail.
fn run(repo: &TestRepo, args: &[&str], succeeds: bool) -> Printed {
    let output = repo.cairn(args);
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let all = format!("{stdout}{}", String::from_utf8_lossy(&output.stderr));
    assert_eq!(output.status.success(), succeeds, "cairn {args:?}:\n{all}");
    Printed { stdout, all }
}

/// Records a review given as JSON.
fn record_review(repo: &TestRepo, review: &Value, succeeds: bool) -> Printed {
    let path = repo.path().join("review.json");
    std::fs::write(&path, review.to_string()).unwrap();
    run(
        repo,
        &["record-review", "--json", path.to_str().unwrap()],
        succeeds,
    )
}

/// Imports JSON Lines.
fn import(repo: &TestRepo, lines: &[Value], succeeds: bool) -> Printed {
    let path = repo.path().join("import.jsonl");
    let text: Vec<String> = lines.iter().map(Value::to_string).collect();
    std::fs::write(&path, text.join("\n") + "\n").unwrap();
    run(
        repo,
        &["memory", "import", path.to_str().unwrap()],
        succeeds,
    )
}

/// A refused write: it failed, says which field holds a secret, and does not quote it.
fn assert_refused(printed: &str, field: &str, secret: &str) {
    assert!(printed.contains("looks like a secret"), "{printed}");
    assert!(printed.contains(field), "{field} not named: {printed}");
    assert!(
        !printed.contains(secret),
        "the error quotes the secret: {printed}"
    );
}

/// Every file under `dir`, read whole.
fn files_under(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(files_under(&path));
        } else if let Ok(bytes) = std::fs::read(&path) {
            files.push((path.display().to_string(), bytes));
        }
    }
    files
}

fn holds(haystack: &[u8], needle: &str) -> bool {
    haystack
        .windows(needle.len())
        .any(|w| w == needle.as_bytes())
}

/// No secret value is in what cairn printed, in what it reads back (`memory export`,
/// `memory list`, `rules`), or anywhere in its data directory; `stored` (text the writes did
/// keep) is found in the data directory, so the byte scan can see stored text.
fn check(repo: &TestRepo, printed: &str, secrets: &[String], stored: &str) {
    let read_back = [
        repo.cairn_ok(&["memory", "export"]),
        repo.cairn_ok(&["memory", "list", "--all", "--json"]),
        repo.cairn_ok(&["rules", "--json"]),
    ]
    .concat();
    let files = files_under(repo.data_dir());
    assert!(
        files.iter().any(|(_, bytes)| holds(bytes, stored)),
        "{stored:?} is not in the data directory: the scan cannot see stored text"
    );
    for secret in secrets {
        assert!(!printed.contains(secret.as_str()), "printed {secret:?}");
        assert!(!read_back.contains(secret.as_str()), "stored {secret:?}");
        for (path, bytes) in &files {
            assert!(!holds(bytes, secret), "{secret:?} is in {path}");
        }
    }
}

fn values(secrets: &[Secret]) -> Vec<String> {
    secrets.iter().map(|s| s.value.clone()).collect()
}

#[test]
fn remember_redacts_text_and_refuses_a_developer_holding_a_secret() {
    let repo = repo();
    let secrets = secrets();
    let mut printed = String::new();
    for (i, s) in secrets.iter().enumerate() {
        let content = format!(
            "Deploy note {i} for the payments service: {} (rotate it).",
            s.text
        );
        let mut args = vec![
            "memory",
            "add",
            "--json",
            "--type",
            "decision",
            content.as_str(),
        ];
        if s.text.len() < 150 {
            args.extend(["--source-ref", s.text.as_str(), "--title", s.text.as_str()]);
        }
        printed += &run(&repo, &args, true).all;
    }
    for token in id_secrets() {
        let out = run(
            &repo,
            &[
                "memory",
                "add",
                "--type",
                "developer_strength",
                "--developer",
                token.as_str(),
                "Writes thorough tests.",
            ],
            false,
        );
        assert_refused(&out.all, "`developer`", &token);
        printed += &out.all;
    }
    let mut all = values(&secrets);
    all.extend(id_secrets());
    check(
        &repo,
        &printed,
        &all,
        "Deploy note 0 for the payments service",
    );
}

#[test]
fn record_review_redacts_findings_and_refuses_ids_holding_a_secret() {
    let repo = repo();
    let secrets = secrets();
    let findings: Vec<Value> = secrets
        .iter()
        .map(|s| {
            json!({"category": "security", "file": "src/app.py", "line": 1,
                   "message": format!("a credential is committed: {}", s.text),
                   "disposition": "rejected", "reason": format!("it was a test value: {}", s.text)})
        })
        .chain([
            json!({"category": "security", "file": "config/DB_PASSWORD=hunter2.env",
                       "message": "the env file is committed", "disposition": "implemented"}),
        ])
        .collect();
    let review = json!({
        "verdict": "request_changes", "author": "bob@example.com", "reviewer": "alice@example.com",
        "review_id": "PR-7", "findings": findings,
        "learnings": [{"type": "project_pattern",
                       "content": format!("Credentials live in the vault, never in code: {}", secrets[0].text)}]
    });
    let recorded = record_review(&repo, &review, true);
    let answer: Value = serde_json::from_str(&recorded.stdout).unwrap();
    let redacted = answer["redacted"].as_array().unwrap();
    assert!(redacted.contains(&json!("assigned-secret")), "{answer}");
    let mut printed = recorded.all;

    // Ids holding a secret: the review id, the people, a finding's category.
    for token in id_secrets() {
        let finding = |category: &str| json!([{"category": category, "message": "m", "disposition": "implemented"}]);
        for (field, patch) in [
            ("`review_id`", json!({"review_id": format!("PR-8:{token}")})),
            ("`author`", json!({"author": token})),
            ("`reviewer`", json!({"reviewer": token})),
            ("`category`", json!({"findings": finding(&token)})),
        ] {
            let mut bad = json!({"verdict": "approve", "author": "bob@example.com",
                                 "review_id": "PR-8", "findings": finding("naming")});
            for (k, v) in patch.as_object().unwrap() {
                bad[k] = v.clone();
            }
            let out = record_review(&repo, &bad, false);
            assert_refused(&out.all, field, &token);
            printed += &out.all;
        }
    }
    let mut all = values(&secrets);
    all.extend(id_secrets());
    check(&repo, &printed, &all, "a credential is committed");
}

#[test]
fn import_redacts_text_and_refuses_ids_holding_a_secret() {
    let repo = repo();
    let exported = {
        repo.cairn_ok(&[
            "memory",
            "add",
            "--type",
            "decision",
            "Payments use idempotency keys.",
        ]);
        let line = repo.cairn_ok(&["memory", "export"]);
        let template: Value = serde_json::from_str(line.lines().next().unwrap()).unwrap();
        run(
            &repo,
            &["memory", "forget", template["id"].as_str().unwrap()],
            true,
        );
        template
    };
    let secrets = secrets();
    let lines: Vec<Value> = secrets
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let mut line = exported.clone();
            line["id"] = json!(format!("m_{i:016x}"));
            line["content"] = json!(format!("Imported note {i}: {}", s.text));
            line["title"] = json!(format!("note {i}: {}", s.text));
            line["source_ref"] = json!(s.text);
            line["written_by"] = json!(s.text);
            line["history"] = json!([{"at": exported["created_at"], "event": "ADD",
                                      "title": s.text, "content": s.text, "note": s.text}]);
            line
        })
        .collect();
    let mut printed = import(&repo, &lines, true).all;
    assert!(
        printed.contains(&format!("imported {}", secrets.len())),
        "{printed}"
    );

    for token in id_secrets() {
        for (field, key) in [("`category`", "category"), ("`developer`", "developer")] {
            let mut bad = exported.clone();
            bad["id"] = json!("m_00000000000000ff");
            bad[key] = json!(token);
            let out = import(&repo, &[bad], false);
            assert_refused(&out.all, field, &token);
            printed += &out.all;
        }
    }
    let mut all = values(&secrets);
    all.extend(id_secrets());
    check(&repo, &printed, &all, "Imported note 0");
}

#[test]
fn ordinary_text_survives_byte_for_byte() {
    let repo = repo();
    let added: Value = serde_json::from_str(&repo.cairn_ok(&[
        "memory",
        "add",
        "--json",
        "--type",
        "framework_knowledge",
        ORDINARY,
    ]))
    .unwrap();
    assert_eq!(added["memory"]["content"], ORDINARY, "{added}");
    let review = json!({
        "verdict": "comment", "author": "bob@example.com", "reviewer": "alice@example.com",
        "review_id": "org/repo#42", "findings": [
            {"category": "error-handling", "file": "src/auth/token_service.py", "line": 3,
             "message": "token_count = 3 is off by one", "disposition": "rejected",
             "reason": "max_tokens = 4096 caps it"}]
    });
    let recorded: Value =
        serde_json::from_str(&record_review(&repo, &review, true).stdout).unwrap();
    assert_eq!(recorded["review_id"], "org/repo#42");
    assert!(recorded.get("redacted").is_none(), "{recorded}");
    let exported = repo.cairn_ok(&["memory", "export"]);
    let memories: Vec<Value> = exported
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(
        memories.iter().any(|m| m["content"] == ORDINARY),
        "{exported}"
    );
    let rejection = memories
        .iter()
        .find(|m| m["type"] == "rejection_pattern")
        .expect("the rejected finding is remembered");
    assert_eq!(
        rejection["content"],
        "Rejected error-handling finding on src/auth/token_service.py: token_count = 3 is off \
         by one — reason: max_tokens = 4096 caps it"
    );
    assert!(
        memories.iter().all(|m| m.get("redacted").is_none()),
        "{exported}"
    );
}

/// Passwords given on command lines or stated in prose, and tokens of the shapes added with
/// them: never stored, whether written with `memory add` or typed as a shell command the hook
/// records; an import line with a token where a memory type goes is refused without the error
/// quoting it.
#[test]
fn commands_and_stated_passwords_never_reach_the_store_or_the_event_log() {
    let repo = repo();
    let twilio = ["SK", "2f6d1c8e9b0a47f3a5e4d2c1b0f9e8d7"].concat();
    let discord = [
        "MTk4NjIyNDgzNDcxOTI1MjQ4",
        ".GbQxYz.k3j9x0q2m8v7n1b5z4l6p0w2r8t3y7u1abc",
    ]
    .concat();
    let secrets = vec![
        secret(
            "Ops note: the password is {} for the staging db.",
            &["hunter2"],
        ),
        secret(
            "Restore with mysql -u root -p{} shop < dump.sql",
            &["S3cr3tPass"],
        ),
        secret("The passphrase was '{}' until May.", &["correct horse"]),
        secret("Sends SMS with {} (Twilio).", &[twilio.as_str()]),
        secret("The release bot runs as {}.", &[discord.as_str()]),
    ];
    let mut printed = String::new();
    for s in &secrets {
        let added = run(
            &repo,
            &[
                "memory",
                "add",
                "--json",
                "--type",
                "decision",
                s.text.as_str(),
            ],
            true,
        );
        let answer: Value = serde_json::from_str(&added.stdout).unwrap();
        assert!(
            answer["memory"]["content"]
                .as_str()
                .unwrap()
                .contains("[REDACTED:"),
            "{answer}"
        );
        printed += &added.all;
    }
    let listed = run(&repo, &["memory", "list", "--json"], true);
    assert!(
        listed
            .stdout
            .contains("Ops note: the password is [REDACTED:stated-secret]")
    );
    assert!(
        listed
            .stdout
            .contains("mysql -u root -p[REDACTED:command-password] shop")
    );
    printed += &listed.all;

    let token = ["gh", "p_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"].concat();
    let url_password = "Pg-s3cret";
    for command in [
        token.clone(),
        format!("postgres://app:{url_password}@db.internal/prod"),
        format!("{token} --verbose"),
    ] {
        let event = json!({
            "hook_event_name": "PostToolUse", "session_id": "s1", "cwd": repo.path(),
            "tool_name": "Bash", "tool_input": {"command": command}
        });
        let hook = repo.cairn_with_stdin(&["hook"], event.to_string().as_bytes());
        assert!(hook.status.success());
    }
    let events = std::fs::read_to_string(repo.data_dir().join("events.jsonl")).unwrap();
    assert_eq!(events.lines().count(), 3, "{events}");
    assert!(events.contains("[REDACTED:github-token]"), "{events}");
    assert!(
        events.contains("postgres://app:[REDACTED:url-password]@db.internal/prod"),
        "{events}"
    );

    let exported: Value =
        serde_json::from_str(repo.cairn_ok(&["memory", "export"]).lines().next().unwrap()).unwrap();
    let mut bad = exported.clone();
    bad["id"] = json!("m_00000000000000fe");
    bad["type"] = json!(token);
    let refused = import(&repo, &[bad], false);
    assert!(refused.all.contains("field `type`"), "{}", refused.all);
    printed += &refused.all;
    let review = json!({"verdict": token, "author": "bob@example.com", "review_id": "PR-9",
                        "findings": []});
    let refused = record_review(&repo, &review, false);
    assert!(refused.all.contains("verdict"), "{}", refused.all);
    printed += &refused.all;

    let mut all = values(&secrets);
    all.extend([token, url_password.to_string()]);
    check(&repo, &printed, &all, "Ops note: the password is");
}
