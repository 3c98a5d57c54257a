//! What became of a review comment, decided from its thread and the pull request's later
//! commits, and the rule category its words put it in. Plain functions over the model:
//! whether the commented lines changed is asked of git by the caller.
//!
//! How each outcome is decided, first match wins:
//! 1. **implemented**: a later commit of the pull request changed the commented lines (git
//!    has the comment's commit and the request's head), or, when git cannot tell, the host
//!    marked the comment outdated (GitHub) or noted "changed this line" (GitLab);
//! 2. **deferred**: a reply links an issue (`#123`, `…/issues/123`, `PROJ-123`) or defers in
//!    words ("follow-up", "separate PR", "later");
//! 3. **rejected**: someone other than the reviewer replied in disagreement ("won't fix",
//!    "intentional", "by design", …), the lines did not change, and the thread was resolved
//!    or the request closed or merged;
//! 4. **implemented**: the request's author replied it was done ("done", "fixed", "good
//!    catch", …) and the request was merged;
//! 5. otherwise **unknown**: not counted in the rule statistics (it would say nothing of the
//!    rule), counted in the import's answer.

use super::{Request, RequestState, Thread};
use crate::review::records::Disposition;

/// A comment's outcome and the rule that decided it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decided {
    /// `None`: unknown.
    pub disposition: Option<Disposition>,
    /// Which of the rules above decided it, in words.
    pub why: &'static str,
    /// The reply that decided it (an index into the thread's replies).
    pub reply: Option<usize>,
}

/// Replies that disagree with the comment.
const DISAGREE: &[&str] = &[
    "won't fix",
    "wont fix",
    "wontfix",
    "will not fix",
    "not going to",
    "disagree",
    "intentional",
    "intentionally",
    "on purpose",
    "by design",
    "prefer to keep",
    "rather keep",
    "keep it as is",
    "keep as is",
    "leave it as is",
    "not necessary",
    "unnecessary",
    "not needed",
    "no need",
    "works as intended",
    "i don't think so",
    "not a problem",
    "not an issue",
    "that's fine as is",
    "it's fine as is",
];

/// Replies of the author that say the comment was acted on.
const AGREE: &[&str] = &[
    "done",
    "fixed",
    "good catch",
    "nice catch",
    "addressed",
    "updated",
    "changed it",
    "changed",
    "good point",
    "will fix",
    "resolved",
];

/// Replies that leave the comment for later.
const DEFER: &[&str] = &[
    "follow-up",
    "follow up",
    "followup",
    "separate pr",
    "separate mr",
    "separate pull request",
    "another pr",
    "later pr",
    "future pr",
    "out of scope",
    "will do later",
    "in a later",
    "tracked in",
    "filed",
];

/// Whether `text` holds `phrase` as whole words (case and apostrophe style ignored).
pub(crate) fn says(text: &str, phrase: &str) -> bool {
    let words = |t: &str| -> Vec<String> {
        t.to_lowercase()
            .replace(['\u{2019}', '`'], "'")
            .split(|c: char| !(c.is_alphanumeric() || c == '\'' || c == '-'))
            .filter(|w| !w.is_empty())
            .map(|w| w.trim_matches('\'').to_string())
            .collect()
    };
    let text = words(text);
    let phrase = words(phrase);
    !phrase.is_empty() && text.windows(phrase.len()).any(|w| w == phrase.as_slice())
}

fn says_any(text: &str, phrases: &[&str]) -> bool {
    phrases.iter().any(|p| says(text, p))
}

/// Whether `text` links an issue: `#123`, a `/issues/123` URL, or a tracker key `PROJ-123`.
pub(crate) fn links_issue(text: &str) -> bool {
    let bytes = text.as_bytes();
    let digits_after = |at: usize| bytes.get(at).is_some_and(u8::is_ascii_digit);
    let hash = bytes.iter().enumerate().any(|(i, &b)| {
        b == b'#' && digits_after(i + 1) && (i == 0 || !bytes[i - 1].is_ascii_alphanumeric())
    });
    let url = text
        .match_indices("/issues/")
        .any(|(i, m)| digits_after(i + m.len()));
    let key = text
        .split(|c: char| !(c.is_alphanumeric() || c == '-'))
        .any(|word| {
            word.split_once('-').is_some_and(|(project, number)| {
                project.len() >= 2
                    && project
                        .chars()
                        .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit())
                    && project.starts_with(|c: char| c.is_ascii_uppercase())
                    && !number.is_empty()
                    && number.chars().all(|c| c.is_ascii_digit())
            })
        });
    hash || url || key
}

/// The outcome of `thread` on `request`; `lines_changed` is git's answer to whether a later
/// commit of the request changed the commented lines (`None`: git cannot tell).
pub fn decide(thread: &Thread, request: &Request, lines_changed: Option<bool>) -> Decided {
    let decided = |disposition, why, reply| Decided {
        disposition: Some(disposition),
        why,
        reply,
    };
    match lines_changed {
        Some(true) => {
            let why = "a later commit of the request changed the commented lines";
            return decided(Disposition::Implemented, why, None);
        }
        None if thread.outdated => {
            let why = "the host marked the commented lines changed since";
            return decided(Disposition::Implemented, why, None);
        }
        _ => {}
    }
    let replies = || thread.replies.iter().enumerate();
    let deferring = replies().find(|(_, r)| links_issue(&r.body) || says_any(&r.body, DEFER));
    if let Some((at, _)) = deferring {
        let why = "a reply links an issue or defers it";
        return decided(Disposition::Deferred, why, Some(at));
    }
    let finished = thread.resolved == Some(true) || request.state != RequestState::Open;
    let disagreeing =
        replies().find(|(_, r)| r.author != thread.reviewer && says_any(&r.body, DISAGREE));
    if let Some((at, _)) = disagreeing.filter(|_| finished) {
        let why = "a reply disagrees and the lines stayed as they were";
        return decided(Disposition::Rejected, why, Some(at));
    }
    let agreeing = replies().find(|(_, r)| r.author == request.author && says_any(&r.body, AGREE));
    if let Some((at, _)) = agreeing.filter(|_| request.state == RequestState::Merged) {
        let why = "the author replied it was done and the request was merged";
        return decided(Disposition::Implemented, why, Some(at));
    }
    Decided {
        disposition: None,
        why: "nothing in the thread or the commits decides it",
        reply: None,
    }
}

/// Categories by the words of a comment, most specific first; a comment matching none is
/// `general`.
const CATEGORIES: &[(&str, &[&str])] = &[
    (
        "security",
        &[
            "security",
            "secure",
            "insecure",
            "injection",
            "xss",
            "csrf",
            "sanitize",
            "sanitise",
            "escape",
            "escaping",
            "vulnerability",
            "vulnerable",
            "secret",
            "credential",
            "password",
            "token",
            "auth",
            "authentication",
            "authorization",
            "permission",
            "permissions",
        ],
    ),
    (
        "concurrency",
        &[
            "race",
            "race condition",
            "deadlock",
            "thread-safe",
            "thread safe",
            "mutex",
            "lock",
            "locking",
            "atomic",
            "concurrent",
            "concurrency",
        ],
    ),
    (
        "error-handling",
        &[
            "error",
            "errors",
            "exception",
            "exceptions",
            "panic",
            "unwrap",
            "raise",
            "raises",
            "catch",
            "rescue",
            "try",
            "except",
            "handle",
            "handling",
            "fail",
            "fails",
            "failure",
        ],
    ),
    (
        "performance",
        &[
            "performance",
            "slow",
            "slower",
            "faster",
            "allocation",
            "allocate",
            "allocates",
            "n+1",
            "quadratic",
            "complexity",
            "cache",
            "caching",
            "memory",
            "expensive",
            "inefficient",
            "o(n",
        ],
    ),
    (
        "tests",
        &[
            "test",
            "tests",
            "testing",
            "coverage",
            "assert",
            "assertion",
            "fixture",
            "mock",
            "spec",
            "unit test",
        ],
    ),
    (
        "documentation",
        &[
            "doc",
            "docs",
            "docstring",
            "documentation",
            "document",
            "comment",
            "comments",
            "readme",
            "changelog",
            "typo",
            "spelling",
        ],
    ),
    (
        "naming",
        &[
            "name",
            "names",
            "naming",
            "rename",
            "renamed",
            "call it",
            "variable name",
        ],
    ),
    (
        "api",
        &[
            "breaking",
            "backwards",
            "backward",
            "compatibility",
            "compatible",
            "deprecate",
            "deprecated",
            "deprecation",
            "public api",
            "signature",
        ],
    ),
    (
        "types",
        &[
            "type",
            "types",
            "typing",
            "annotation",
            "annotations",
            "nullable",
            "null",
            "none",
            "optional",
            "cast",
        ],
    ),
    (
        "style",
        &[
            "nit",
            "nitpick",
            "style",
            "format",
            "formatting",
            "whitespace",
            "indentation",
            "lint",
            "linter",
            "import order",
            "unused",
            "simplify",
            "readability",
            "readable",
        ],
    ),
];

/// The rule category of a comment, by its words.
pub fn category_of(body: &str) -> &'static str {
    let head = body.trim_start().to_lowercase();
    // Conventional comments and the common "nit:" prefix name their kind first.
    if head.starts_with("nit") {
        return "style";
    }
    CATEGORIES
        .iter()
        .find(|(_, words)| {
            words.iter().any(|w| {
                if w.contains(['(', '+']) {
                    head.contains(w)
                } else {
                    says(&head, w)
                }
            })
        })
        .map_or("general", |(name, _)| name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::review::host::{Host, Reply, RepoId, Span};

    fn request(state: RequestState) -> Request {
        Request {
            host: Host::GitHub,
            repo: RepoId::new("github.com", "octo/shop"),
            number: 7,
            author: "alice".into(),
            bot: false,
            state,
            at: Some(0),
            head: Some("h".into()),
        }
    }

    fn thread(replies: &[(&str, &str)]) -> Thread {
        Thread {
            repo: RepoId::new("github.com", "octo/shop"),
            request: 7,
            id: "1".into(),
            reviewer: "bob".into(),
            path: "src/a.py".into(),
            lines: Some(Span { start: 3, end: 4 }),
            right_side: true,
            commit: Some("c".into()),
            outdated: false,
            body: "handle the error here".into(),
            replies: replies
                .iter()
                .map(|(author, body)| Reply {
                    author: (*author).into(),
                    body: (*body).into(),
                })
                .collect(),
            resolved: None,
            bot: false,
        }
    }

    fn outcome(thread: &Thread, state: RequestState, changed: Option<bool>) -> Option<Disposition> {
        decide(thread, &request(state), changed).disposition
    }

    #[test]
    fn changed_lines_mean_implemented_whatever_the_replies_say() {
        let argued = thread(&[("alice", "won't fix, this is intentional")]);
        assert_eq!(
            outcome(&argued, RequestState::Merged, Some(true)),
            Some(Disposition::Implemented)
        );
        let mut outdated = thread(&[]);
        outdated.outdated = true;
        assert_eq!(
            outcome(&outdated, RequestState::Merged, None),
            Some(Disposition::Implemented)
        );
        // Git's answer wins over the host's mark.
        assert_eq!(outcome(&outdated, RequestState::Merged, Some(false)), None);
    }

    #[test]
    fn a_linked_issue_defers_and_a_disagreeing_reply_rejects() {
        let linked = thread(&[("alice", "Good idea, tracked in #42")]);
        assert_eq!(
            outcome(&linked, RequestState::Merged, Some(false)),
            Some(Disposition::Deferred)
        );
        let jira = thread(&[("alice", "see SHOP-981 for that")]);
        assert_eq!(
            outcome(&jira, RequestState::Merged, None),
            Some(Disposition::Deferred)
        );
        let argued = thread(&[("alice", "I’d rather keep it: it's by design")]);
        assert_eq!(
            outcome(&argued, RequestState::Merged, Some(false)),
            Some(Disposition::Rejected)
        );
        // Still open and unresolved: not decided yet.
        assert_eq!(outcome(&argued, RequestState::Open, Some(false)), None);
        let mut resolved = argued.clone();
        resolved.resolved = Some(true);
        assert_eq!(
            outcome(&resolved, RequestState::Open, Some(false)),
            Some(Disposition::Rejected)
        );
        // The reviewer disagreeing with themselves is no rejection.
        let own = thread(&[("bob", "actually not needed")]);
        assert_eq!(outcome(&own, RequestState::Merged, Some(false)), None);
    }

    #[test]
    fn the_authors_word_counts_once_merged() {
        let done = thread(&[("alice", "Done, thanks!")]);
        assert_eq!(
            outcome(&done, RequestState::Merged, None),
            Some(Disposition::Implemented)
        );
        assert_eq!(outcome(&done, RequestState::Closed, None), None);
        let someone = thread(&[("carol", "done")]);
        assert_eq!(outcome(&someone, RequestState::Merged, None), None);
        assert_eq!(outcome(&thread(&[]), RequestState::Merged, None), None);
    }

    #[test]
    fn issue_links_and_phrases_are_whole_words() {
        assert!(links_issue("#12"));
        assert!(links_issue("see https://github.com/o/r/issues/5"));
        assert!(links_issue("ABC-12 covers it"));
        assert!(!links_issue("colour #fff and a#1"));
        assert!(!links_issue("utf-8 and x-1"));
        assert!(says("Won’t fix.", "won't fix"));
        assert!(!says("abandoned", "done"));
        assert!(!says("prefixed", "fixed"));
    }

    #[test]
    fn categories_follow_the_words() {
        assert_eq!(category_of("nit: trailing space"), "style");
        assert_eq!(category_of("This is open to SQL injection"), "security");
        assert_eq!(category_of("What if this raises?"), "error-handling");
        assert_eq!(category_of("Please add a test for the empty case"), "tests");
        assert_eq!(category_of("This is O(n^2) on big carts"), "performance");
        assert_eq!(category_of("Maybe rename this to total_cents"), "naming");
        assert_eq!(category_of("Looks odd to me"), "general");
    }
}
