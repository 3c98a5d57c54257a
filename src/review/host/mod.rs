//! Review history from a code host, read from the host's own CLI exports (cairn makes no
//! network call): GitHub's REST JSON as `gh api --paginate` writes it and GitLab's as
//! `glab api --paginate` writes it. Files come in any order and any mix; each item is known
//! by its shape. What is read is one model for both hosts: requests (pull or merge
//! requests), comment threads on their lines, and reviews with their states.
//!
//! Reading is pure and bounded; [`outcome`] decides what became of each comment.

pub mod assemble;
pub mod github;
pub mod gitlab;
pub mod outcome;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use serde::de::{self, SeqAccess, Visitor};

use crate::review::records::Verdict;

/// Largest export file read, in bytes.
pub const MAX_EXPORT_BYTES: u64 = 1 << 30;
/// Most export files one run reads.
pub const MAX_EXPORT_FILES: usize = 1_000;
/// Most items (requests, comments, reviews, discussions) one run reads.
pub const MAX_ITEMS: usize = 2_000_000;
/// Longest comment or reply kept, in bytes (longer ones are cut at a character boundary).
pub const MAX_TEXT: usize = 2_000;
/// Most replies kept per thread (the first ones: they carry the answer).
pub const MAX_REPLIES: usize = 20;

/// An export that cannot be read, and why. Messages name the file and the item, never
/// their text.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error("{file}: {message}")]
    Malformed { file: String, message: String },
    #[error("{file} is {bytes} bytes; an export file may be at most {MAX_EXPORT_BYTES}")]
    TooLarge { file: String, bytes: u64 },
    #[error("the exports hold more than {MAX_ITEMS} items; learn from fewer at a time")]
    TooManyItems,
}

/// Which code host a request lives on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Host {
    GitHub,
    GitLab,
}

/// A repository on a host: `github.com` and `octo/shop`, both lowercase.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RepoId {
    pub host: String,
    pub path: String,
}

impl RepoId {
    pub fn new(host: &str, path: &str) -> RepoId {
        RepoId {
            host: host.trim().to_lowercase(),
            path: path
                .trim()
                .trim_matches('/')
                .trim_end_matches(".git")
                .to_lowercase(),
        }
    }

    /// The repository a web or API URL names: `https://github.com/o/r/pull/1`,
    /// `https://api.github.com/repos/o/r/pulls/1`, `https://gitlab.com/g/p/-/merge_requests/2`.
    pub fn of_url(url: &str) -> Option<RepoId> {
        let rest = url.split_once("://")?.1;
        let (host, path) = rest.split_once('/')?;
        let host = host.rsplit('@').next()?;
        if let Some((_, after)) = path.split_once("repos/") {
            let mut parts = after.split('/');
            let (owner, name) = (parts.next()?, parts.next()?);
            let host = host.strip_prefix("api.").unwrap_or(host);
            return Some(RepoId::new(host, &format!("{owner}/{name}")));
        }
        let path = match path.split_once("/-/") {
            Some((project, _)) => project,
            None => {
                let mut parts = path.split('/');
                &format!("{}/{}", parts.next()?, parts.next()?)
            }
        };
        Some(RepoId::new(host, path))
    }

    /// The repository a git remote URL names: `git@github.com:o/r.git`,
    /// `ssh://git@host:22/o/r`, `https://host/o/r.git`.
    pub fn of_remote(url: &str) -> Option<RepoId> {
        let url = url.trim();
        if let Some((_, rest)) = url.split_once("://") {
            let (host, path) = rest.split_once('/')?;
            let host = host.rsplit('@').next()?;
            let host = host.split(':').next()?;
            return Some(RepoId::new(host, path)).filter(|r| !r.path.is_empty());
        }
        let (host, path) = url.split_once(':')?;
        let host = host.rsplit('@').next()?;
        Some(RepoId::new(host, path)).filter(|r| !r.path.is_empty() && !r.host.is_empty())
    }
}

impl fmt::Display for RepoId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.host, self.path)
    }
}

/// Where a request stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RequestState {
    Open,
    Merged,
    Closed,
}

/// A pull request (GitHub) or merge request (GitLab).
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    pub host: Host,
    pub repo: RepoId,
    pub number: u64,
    pub author: String,
    /// Opened by a bot account.
    pub bot: bool,
    pub state: RequestState,
    /// When it was merged or closed, else last updated (milliseconds since the epoch).
    pub at: Option<i64>,
    /// Its head commit.
    pub head: Option<String>,
}

impl Request {
    /// The review id it is recorded under: `github:octo/shop#12`, `gitlab:group/app!7`.
    pub fn review_id(&self) -> String {
        match self.host {
            Host::GitHub => format!("github:{}#{}", self.repo.path, self.number),
            Host::GitLab => format!("gitlab:{}!{}", self.repo.path, self.number),
        }
    }
}

/// Lines a comment is on (1-based, inclusive).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    pub start: u32,
    pub end: u32,
}

/// A reply in a thread.
#[derive(Debug, Clone, PartialEq)]
pub struct Reply {
    pub author: String,
    pub body: String,
}

/// A comment on lines of a request's change, with its replies.
#[derive(Debug, Clone, PartialEq)]
pub struct Thread {
    pub repo: RepoId,
    pub request: u64,
    /// The host's id of the first comment.
    pub id: String,
    pub reviewer: String,
    /// As the host wrote it (checked when the thread becomes a finding).
    pub path: String,
    pub lines: Option<Span>,
    /// On the new side of the change (GitHub's `RIGHT`): git can tell whether the lines
    /// changed later.
    pub right_side: bool,
    /// The commit the comment was made on.
    pub commit: Option<String>,
    /// The host marks the commented lines changed since (GitHub: outdated; GitLab: a "changed
    /// this line" note).
    pub outdated: bool,
    pub body: String,
    pub replies: Vec<Reply>,
    /// GitLab's resolved mark (GitHub's REST exports do not carry it).
    pub resolved: Option<bool>,
    /// Written by a bot account.
    pub bot: bool,
}

/// A review's state as the host records it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReviewState {
    Approved,
    ChangesRequested,
    Commented,
    Dismissed,
}

/// One submitted review (GitHub) or approval (GitLab).
#[derive(Debug, Clone, PartialEq)]
pub struct HostReview {
    pub repo: RepoId,
    pub request: u64,
    pub reviewer: String,
    pub state: ReviewState,
    pub at: Option<i64>,
}

/// Everything read from the exports.
#[derive(Debug, Default)]
pub struct Exports {
    pub requests: Vec<Request>,
    pub threads: Vec<Thread>,
    pub reviews: Vec<HostReview>,
    /// GitLab discussions wait for their merge request to be known (their notes name it by
    /// id); `gitlab::attach` turns them into threads.
    pub(crate) discussions: Vec<gitlab::Discussion>,
    /// GitHub replies wait for their threads (`github::join_replies`).
    pub(crate) github_replies: Vec<github::PendingReply>,
    /// The GitLab ids of the requests read (by index in `requests`).
    pub(crate) gitlab_ids: Vec<(usize, gitlab::GitLabIds)>,
    /// Items skipped as they were read, with the reason.
    pub skipped: Vec<Skip>,
}

/// An item left out, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skip {
    /// What it is: `GitHub comment 12`, `GitLab discussion 6a9c…`, `github:o/r#4`.
    pub item: String,
    pub why: &'static str,
}

/// One item of an export, known by its shape.
enum Item {
    Pull(Box<github::Pull>),
    Comment(Box<github::Comment>),
    Review(Box<github::Review>),
    MergeRequest(Box<gitlab::MergeRequest>),
    Discussion(Box<gitlab::Discussion>),
}

/// The shape of one exported item, by the keys only its kind has.
fn item_of(value: serde_json::Value) -> Result<Item, String> {
    let has = |key: &str| value.get(key).is_some();
    fn parse<T: serde::de::DeserializeOwned>(
        what: &str,
        value: serde_json::Value,
    ) -> Result<T, String> {
        serde_json::from_value(value)
            .map_err(|e| format!("not a {what} as the host writes it: {e}"))
    }
    if !value.is_object() {
        return Err("an item is not a JSON object".into());
    }
    if has("diff_hunk") && has("pull_request_url") {
        parse("GitHub review comment", value).map(|c| Item::Comment(Box::new(c)))
    } else if has("pull_request_url") && has("state") {
        parse("GitHub review", value).map(|r| Item::Review(Box::new(r)))
    } else if has("number") && has("head") && has("base") {
        parse("GitHub pull request", value).map(|p| Item::Pull(Box::new(p)))
    } else if has("iid") && has("source_branch") {
        parse("GitLab merge request", value).map(|m| Item::MergeRequest(Box::new(m)))
    } else if has("notes") && has("individual_note") {
        parse("GitLab discussion", value).map(|d| Item::Discussion(Box::new(d)))
    } else {
        Err(
            "an item is none of: a pull request, a review, a review comment, a merge request, \
             a discussion"
                .into(),
        )
    }
}

/// The items of one top-level JSON value: an array of items, or (`--slurp`) an array of
/// such arrays. Each item is typed as it is read, so a page's raw JSON is never all held.
struct Items<'a> {
    sink: &'a mut Vec<Item>,
    room: usize,
}

impl<'de> de::DeserializeSeed<'de> for Items<'_> {
    type Value = ();

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for Items<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON array of exported items")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while let Some(value) = seq.next_element::<serde_json::Value>()? {
            let values = match value {
                serde_json::Value::Array(page) => page,
                single => vec![single],
            };
            for value in values {
                if self.sink.len() >= self.room {
                    return Err(de::Error::custom("too many items"));
                }
                let number = self.sink.len() + 1;
                let item =
                    item_of(value).map_err(|e| de::Error::custom(format!("item {number}: {e}")))?;
                self.sink.push(item);
            }
        }
        Ok(())
    }
}

/// Reads one export (`name` names it in errors): one or more JSON arrays one after another,
/// as `gh api --paginate` and `glab api --paginate` write pages.
pub fn read(
    name: &str,
    reader: impl std::io::Read,
    exports: &mut Exports,
) -> Result<(), ExportError> {
    let malformed = |message: String| ExportError::Malformed {
        file: name.to_string(),
        message,
    };
    let room = MAX_ITEMS.saturating_sub(exports.count());
    let mut items = Vec::new();
    let mut de = serde_json::Deserializer::from_reader(std::io::BufReader::new(reader));
    if de.end().is_ok() {
        return Err(malformed("the export is empty".into()));
    }
    loop {
        let page = Items {
            sink: &mut items,
            room,
        };
        match de::DeserializeSeed::deserialize(page, &mut de) {
            Ok(()) => {}
            Err(e) if e.to_string().starts_with("too many items") => {
                return Err(ExportError::TooManyItems);
            }
            Err(e) if e.is_eof() => {
                return Err(malformed(format!(
                    "the export ends early (cut short?): {e}"
                )));
            }
            Err(e) => return Err(malformed(e.to_string())),
        }
        // Pages follow one another until only whitespace is left.
        if de.end().is_ok() {
            break;
        }
    }
    for item in items {
        exports.add(item);
    }
    Ok(())
}

impl Exports {
    fn count(&self) -> usize {
        self.requests.len() + self.threads.len() + self.reviews.len() + self.discussions.len()
    }

    fn add(&mut self, item: Item) {
        match item {
            Item::Pull(p) => self.requests.push(p.into_request()),
            Item::Comment(c) => github::add_comment(*c, self),
            Item::Review(r) => {
                if let Some(review) = r.into_review() {
                    self.reviews.push(review);
                }
            }
            Item::MergeRequest(m) => {
                let (request, ids) = m.into_request();
                self.gitlab_ids.push((self.requests.len(), ids));
                self.requests.push(request);
            }
            Item::Discussion(d) => self.discussions.push(*d),
        }
    }

    /// Completes what reading left open: GitHub replies joined to their threads, GitLab
    /// discussions turned into threads of their requests.
    pub fn finish(&mut self) {
        github::join_replies(self);
        gitlab::attach(self);
    }

    /// The repositories the exports name.
    pub fn repositories(&self) -> BTreeSet<RepoId> {
        let requests = self.requests.iter().map(|r| r.repo.clone());
        let threads = self.threads.iter().map(|t| t.repo.clone());
        requests.chain(threads).collect()
    }
}

/// Text cut to at most [`MAX_TEXT`] bytes at a character boundary, trimmed.
pub(crate) fn bounded(text: &str) -> String {
    let text = text.trim();
    if text.len() <= MAX_TEXT {
        return text.to_string();
    }
    let mut end = MAX_TEXT - '…'.len_utf8();
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

/// The verdict of a request from its reviews: changes requested by a reviewer who did not
/// approve later, else approved by someone, else a comment. A request without reviews in
/// the exports (GitLab's approvals are not in them) is approved when it was merged.
pub fn verdict_of<'a>(
    request: &Request,
    reviews: impl IntoIterator<Item = &'a HostReview>,
) -> Verdict {
    let reviews: Vec<&HostReview> = reviews.into_iter().collect();
    if reviews.is_empty() {
        return if request.state == RequestState::Merged {
            Verdict::Approve
        } else {
            Verdict::Comment
        };
    }
    let mut latest: BTreeMap<&str, (Option<i64>, ReviewState)> = BTreeMap::new();
    for review in reviews {
        if matches!(review.state, ReviewState::Commented) {
            continue;
        }
        let entry = latest
            .entry(review.reviewer.as_str())
            .or_insert((review.at, review.state));
        if review.at >= entry.0 {
            *entry = (review.at, review.state);
        }
    }
    let states: Vec<ReviewState> = latest.values().map(|(_, s)| *s).collect();
    if states.contains(&ReviewState::ChangesRequested) {
        Verdict::RequestChanges
    } else if states.contains(&ReviewState::Approved) {
        Verdict::Approve
    } else {
        Verdict::Comment
    }
}

#[cfg(test)]
mod tests;
