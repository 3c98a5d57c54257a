//! Exports in the hosts' documented shapes (tests/fixtures/host), read and put together.

use super::assemble::{Assembly, assemble};
use super::*;
use crate::review::records::Disposition;

const PULLS: &str = include_str!("../../../tests/fixtures/host/github-pulls.json");
const COMMENTS: &str = include_str!("../../../tests/fixtures/host/github-comments.json");
const REVIEWS: &str = include_str!("../../../tests/fixtures/host/github-reviews.json");
const MERGE_REQUESTS: &str =
    include_str!("../../../tests/fixtures/host/gitlab-merge-requests.json");
const DISCUSSIONS: &str = include_str!("../../../tests/fixtures/host/gitlab-discussions.json");

fn exports(files: &[(&str, &str)]) -> Result<Exports, ExportError> {
    let mut exports = Exports::default();
    for (name, text) in files {
        read(name, text.as_bytes(), &mut exports)?;
    }
    Ok(exports)
}

fn learned(files: &[(&str, &str)], changed: Option<bool>) -> Assembly {
    assemble(exports(files).unwrap(), |_, _| changed)
}

fn by_message<'a>(assembly: &'a Assembly, start: &str) -> &'a crate::review::records::Finding {
    assembly
        .learned
        .iter()
        .flat_map(|l| &l.findings)
        .find(|f| f.message.starts_with(start))
        .unwrap_or_else(|| panic!("no finding {start:?}"))
}

#[test]
fn github_exports_in_any_order_become_one_review_per_finished_request() {
    let forward = learned(
        &[
            ("pulls", PULLS),
            ("comments", COMMENTS),
            ("reviews", REVIEWS),
        ],
        None,
    );
    let backward = learned(
        &[
            ("reviews", REVIEWS),
            ("comments", COMMENTS),
            ("pulls", PULLS),
        ],
        None,
    );
    assert_eq!(forward.learned, backward.learned);
    let ids: Vec<String> = forward
        .learned
        .iter()
        .map(|l| l.request.review_id())
        .collect();
    assert_eq!(ids, ["github:octo-org/shop#1", "github:octo-org/shop#2"]);
    let first = &forward.learned[0];
    assert_eq!(first.request.author, "alice");
    assert_eq!(first.request.state, RequestState::Merged);
    assert_eq!(
        first.verdict,
        Verdict::Approve,
        "carol approved after asking for changes"
    );
    assert_eq!(forward.learned[1].verdict, Verdict::RequestChanges);
    assert_eq!(first.reviewer.as_deref(), Some("carol"));
    assert_eq!(first.findings.len(), 4);
    assert_eq!(forward.learned[1].findings.len(), 0);
    assert_eq!(forward.learned[1].unknown, 1);
}

#[test]
fn each_github_outcome_is_decided_as_documented() {
    let assembly = learned(&[("p", PULLS), ("c", COMMENTS), ("r", REVIEWS)], None);
    let outdated = by_message(&assembly, "What if `items` is empty?");
    assert_eq!(outdated.disposition, Disposition::Implemented);
    assert_eq!((outdated.line, outdated.end_line), (Some(10), Some(12)));
    assert_eq!(outdated.category, "error-handling");
    assert_eq!(outdated.reviewer.as_deref(), Some("carol"));
    let renamed = by_message(&assembly, "Please rename");
    assert_eq!(renamed.disposition, Disposition::Rejected);
    assert_eq!(renamed.category, "naming");
    assert!(renamed.reason.as_deref().unwrap().starts_with("Won't fix"));
    let rounding = by_message(&assembly, "Rounding should");
    assert_eq!(rounding.disposition, Disposition::Deferred);
    assert_eq!(rounding.file.as_deref(), Some("src/tax.py"));
    let tested = by_message(&assembly, "Add a test");
    assert_eq!(tested.disposition, Disposition::Implemented);
    assert_eq!(tested.category, "tests");

    // Git's word wins: the lines did not change, so the outdated mark proves nothing.
    let unchanged = learned(&[("p", PULLS), ("c", COMMENTS)], Some(false));
    assert!(
        unchanged.learned[0]
            .findings
            .iter()
            .all(|f| !f.message.starts_with("What if"))
    );
}

#[test]
fn what_is_not_learned_is_skipped_with_its_reason() {
    let assembly = learned(&[("p", PULLS), ("c", COMMENTS), ("r", REVIEWS)], None);
    let why = |item: &str| {
        assembly
            .skipped
            .iter()
            .find(|s| s.item == item)
            .map(|s| s.why)
    };
    assert_eq!(
        why("GitHub comment 105"),
        Some("its path is outside the repository")
    );
    assert_eq!(
        why("github:octo-org/shop#3"),
        Some("still open: its outcome is not known yet")
    );
    assert_eq!(why("github:octo-org/shop#4"), Some("opened by a bot"));
    assert_eq!(
        why("comment 109 on github.com/octo-org/shop"),
        Some("its request is not in the exports")
    );
    // The author's own note is no finding, and not a skip either.
    assert!(
        assembly
            .learned
            .iter()
            .flat_map(|l| &l.findings)
            .all(|f| !f.message.starts_with("Note to self"))
    );
    assert_eq!(
        exports(&[("c", COMMENTS)]).unwrap().repositories(),
        [RepoId::new("github.com", "octo-org/shop")].into()
    );
}

#[test]
fn gitlab_discussions_become_threads_of_their_merge_requests() {
    let assembly = learned(&[("d", DISCUSSIONS), ("m", MERGE_REQUESTS)], None);
    let ids: Vec<String> = assembly
        .learned
        .iter()
        .map(|l| l.request.review_id())
        .collect();
    assert_eq!(ids, ["gitlab:group/sub/app!7", "gitlab:group/sub/app!8"]);
    let first = &assembly.learned[0];
    assert_eq!(first.request.repo.host, "gitlab.example.com");
    assert_eq!(first.request.at, Some(1_714_636_800_000));
    assert_eq!(first.verdict, Verdict::Approve);
    let query = by_message(&assembly, "This query is an N+1");
    assert_eq!(query.disposition, Disposition::Implemented);
    assert_eq!((query.line, query.end_line), (Some(12), Some(14)));
    assert_eq!(query.category, "performance");
    let rescue = by_message(&assembly, "Should this rescue");
    assert_eq!(rescue.disposition, Disposition::Rejected);
    assert_eq!(
        rescue.reason.as_deref(),
        Some("No, this is by design: the job retries.")
    );
    assert_eq!(first.findings.len(), 2, "the general comment is no finding");
    assert!(
        assembly
            .skipped
            .iter()
            .any(|s| s.why == "its merge request is not in the exports")
    );
}

#[test]
fn malformed_exports_are_refused_by_file_and_item() {
    let cut = &PULLS[..PULLS.len() / 2];
    let error = exports(&[("pulls.json", cut)]).unwrap_err().to_string();
    assert!(
        error.starts_with("pulls.json: the export ends early"),
        "{error}"
    );
    let error = exports(&[("x.json", r#"[{"number": 1}]"#)])
        .unwrap_err()
        .to_string();
    assert!(error.contains("item 1: an item is none of"), "{error}");
    let error = exports(&[("x.json", r#"[{"number": "one", "head": {}, "base": {}}]"#)])
        .unwrap_err()
        .to_string();
    assert!(error.contains("not a GitHub pull request"), "{error}");
    for bad in [
        "",
        "  \n",
        "{\"message\": \"Not Found\"}",
        "[1, 2]",
        "[] garbage",
    ] {
        assert!(exports(&[("x.json", bad)]).is_err(), "{bad:?}");
    }
    assert!(
        exports(&[("x.json", "[]\n[]\n")])
            .unwrap()
            .requests
            .is_empty()
    );
}

#[test]
fn texts_are_bounded_at_a_character_boundary() {
    let long = "é".repeat(MAX_TEXT);
    let cut = bounded(&long);
    assert!(cut.len() <= MAX_TEXT && cut.ends_with('…'));
    assert_eq!(bounded("  short  "), "short");
}

#[test]
fn repositories_are_known_by_their_urls_and_remotes() {
    let shop = RepoId::new("github.com", "octo-org/shop");
    for url in [
        "https://github.com/octo-org/shop/pull/1",
        "https://api.github.com/repos/octo-org/shop/pulls/1",
        "https://github.com/Octo-Org/Shop",
    ] {
        assert_eq!(RepoId::of_url(url), Some(shop.clone()), "{url}");
    }
    for remote in [
        "git@github.com:octo-org/shop.git",
        "https://github.com/octo-org/shop.git",
        "ssh://git@github.com:22/octo-org/shop",
        "https://token@github.com/octo-org/shop",
    ] {
        assert_eq!(RepoId::of_remote(remote), Some(shop.clone()), "{remote}");
    }
    assert_eq!(
        RepoId::of_url("https://gitlab.example.com/group/sub/app/-/merge_requests/7"),
        Some(RepoId::new("gitlab.example.com", "group/sub/app"))
    );
    assert_eq!(RepoId::of_remote("/srv/git/shop"), None);
}
