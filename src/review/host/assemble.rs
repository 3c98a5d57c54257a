//! Requests and their threads put together as reviews to record: one per finished request,
//! a finding per reviewer's comment thread whose outcome is decided.

use std::collections::{BTreeMap, HashMap};

use super::outcome::{self, Decided};
use super::{Exports, Host, RepoId, Request, RequestState, Skip, Thread, verdict_of};
use crate::review::records::{Disposition, Finding, Verdict};

/// Most findings one learned review keeps (the recorded review's limit).
pub const MAX_FINDINGS: usize = 200;

/// A request as a review to record.
#[derive(Debug, Clone, PartialEq)]
pub struct Learned {
    pub request: Request,
    pub verdict: Verdict,
    /// The reviewer with the most threads.
    pub reviewer: Option<String>,
    /// Decided findings, in the order the host numbered their comments.
    pub findings: Vec<Finding>,
    /// Threads whose outcome nothing decides (not recorded).
    pub unknown: usize,
}

/// What the exports add up to.
#[derive(Debug, Default)]
pub struct Assembly {
    pub learned: Vec<Learned>,
    pub skipped: Vec<Skip>,
    /// How many findings each rule of [`outcome`] decided, unknown ones included.
    pub decided_by: BTreeMap<&'static str, usize>,
}

/// A finding's path as the host wrote it, when it stays inside the repository.
fn inside(path: &str) -> Option<String> {
    let path = path.trim().trim_start_matches("./").replace('\\', "/");
    let escapes = path.is_empty()
        || path.starts_with('/')
        || path.contains(':')
        || path.split('/').any(|p| p == "..");
    (!escapes).then_some(path)
}

fn thread_item(request: &Request, thread: &Thread) -> String {
    match request.host {
        Host::GitHub => format!("GitHub comment {}", thread.id),
        Host::GitLab => format!("GitLab note {}", thread.id),
    }
}

/// Puts the exports together; `lines_changed` answers whether a later commit of a request
/// changed a thread's lines (`None`: git cannot tell).
pub fn assemble(
    mut exports: Exports,
    mut lines_changed: impl FnMut(&Thread, &Request) -> Option<bool>,
) -> Assembly {
    exports.finish();
    let mut assembly = Assembly {
        skipped: std::mem::take(&mut exports.skipped),
        ..Assembly::default()
    };
    let mut threads: HashMap<(RepoId, u64), Vec<Thread>> = HashMap::new();
    for thread in exports.threads {
        threads
            .entry((thread.repo.clone(), thread.request))
            .or_default()
            .push(thread);
    }
    let mut reviews: HashMap<(RepoId, u64), Vec<super::HostReview>> = HashMap::new();
    for review in exports.reviews {
        reviews
            .entry((review.repo.clone(), review.request))
            .or_default()
            .push(review);
    }
    let mut requests = exports.requests;
    requests.sort_by(|a, b| (&a.repo, a.number).cmp(&(&b.repo, b.number)));
    requests.dedup_by(|a, b| a.repo == b.repo && a.number == b.number);
    for request in requests {
        let key = (request.repo.clone(), request.number);
        let mine = threads.remove(&key).unwrap_or_default();
        let skip = match (request.state, request.bot) {
            (RequestState::Open, _) => Some("still open: its outcome is not known yet"),
            (_, true) => Some("opened by a bot"),
            _ => None,
        };
        if let Some(why) = skip {
            let item = request.review_id();
            assembly.skipped.push(Skip { item, why });
            continue;
        }
        let verdict = verdict_of(&request, reviews.get(&key).into_iter().flatten());
        let learned = learn(request, verdict, mine, &mut lines_changed, &mut assembly);
        assembly.learned.push(learned);
    }
    for thread in threads.into_values().flatten() {
        assembly.skipped.push(Skip {
            item: format!("comment {} on {}", thread.id, thread.repo),
            why: "its request is not in the exports",
        });
    }
    assembly
}

/// One finished request as a review: its threads decided, the undecided counted.
fn learn(
    request: Request,
    verdict: Verdict,
    mut threads: Vec<Thread>,
    lines_changed: &mut impl FnMut(&Thread, &Request) -> Option<bool>,
    assembly: &mut Assembly,
) -> Learned {
    threads.sort_by_key(|t| (t.id.len(), t.id.clone()));
    let mut findings = Vec::new();
    let mut unknown = 0;
    let mut by_reviewer: BTreeMap<String, usize> = BTreeMap::new();
    for thread in threads {
        if thread.bot || thread.reviewer == request.author {
            continue;
        }
        let Some(file) = inside(&thread.path) else {
            let item = thread_item(&request, &thread);
            let why = "its path is outside the repository";
            assembly.skipped.push(Skip { item, why });
            continue;
        };
        let changed = lines_changed(&thread, &request);
        let decided = outcome::decide(&thread, &request, changed);
        *assembly.decided_by.entry(decided.why).or_default() += 1;
        *by_reviewer.entry(thread.reviewer.clone()).or_default() += 1;
        let Some(disposition) = decided.disposition else {
            unknown += 1;
            continue;
        };
        if findings.len() == MAX_FINDINGS {
            let item = thread_item(&request, &thread);
            let why = "its request has more findings than one review holds";
            assembly.skipped.push(Skip { item, why });
            continue;
        }
        findings.push(finding(thread, file, disposition, &decided));
    }
    let reviewer = by_reviewer
        .into_iter()
        .max_by_key(|(name, count)| (*count, std::cmp::Reverse(name.clone())))
        .map(|(name, _)| name);
    Learned {
        request,
        verdict,
        reviewer,
        findings,
        unknown,
    }
}

/// A decided thread as a finding: its reason is the reply that decided it.
fn finding(thread: Thread, file: String, disposition: Disposition, decided: &Decided) -> Finding {
    // A rejected or deferred finding keeps the reply that decided it as its reason.
    let reason = match disposition {
        Disposition::Implemented => None,
        _ => decided
            .reply
            .and_then(|at| thread.replies.get(at))
            .map(|r| r.body.clone())
            .or_else(|| Some(decided.why.to_string())),
    };
    Finding {
        category: outcome::category_of(&thread.body).to_string(),
        file: Some(file),
        line: thread.lines.map(|s| s.start),
        end_line: thread
            .lines
            .map(|s| s.end)
            .filter(|end| thread.lines.is_some_and(|s| *end > s.start)),
        message: thread.body,
        disposition,
        reason,
        file_pattern: None,
        reviewer: Some(thread.reviewer),
    }
}
