//! GitHub's REST JSON as `gh api --paginate` writes it: pull requests
//! (`repos/{owner}/{repo}/pulls?state=all`), review comments
//! (`repos/{owner}/{repo}/pulls/comments`, or per pull request) and reviews
//! (`repos/{owner}/{repo}/pulls/{n}/reviews`). Only the fields cairn reads are declared; the
//! rest of each payload is skipped.

use serde::Deserialize;

use super::{
    Exports, Host, HostReview, Reply, RepoId, Request, RequestState, ReviewState, Skip, Span,
    Thread, bounded,
};
use crate::clock::ms_of_rfc3339;

#[derive(Debug, Deserialize)]
pub(crate) struct User {
    login: String,
    #[serde(rename = "type", default)]
    kind: Option<String>,
}

impl User {
    fn is_bot(&self) -> bool {
        self.kind.as_deref() == Some("Bot") || self.login.ends_with("[bot]")
    }
}

/// Who wrote an item: its user's login, `ghost` for a deleted account.
fn login(user: &Option<User>) -> String {
    user.as_ref()
        .map_or_else(|| "ghost".to_string(), |u| u.login.clone())
}

#[derive(Debug, Deserialize)]
pub(crate) struct Commit {
    #[serde(default)]
    sha: Option<String>,
}

/// A pull request.
#[derive(Debug, Deserialize)]
pub(crate) struct Pull {
    number: u64,
    #[serde(default)]
    user: Option<User>,
    state: String,
    #[serde(default)]
    merged_at: Option<String>,
    #[serde(default)]
    closed_at: Option<String>,
    #[serde(default)]
    updated_at: Option<String>,
    #[serde(default)]
    html_url: Option<String>,
    #[serde(default)]
    url: Option<String>,
    head: Commit,
}

impl Pull {
    pub(crate) fn into_request(self) -> Request {
        let repo = [&self.html_url, &self.url]
            .into_iter()
            .flatten()
            .find_map(|u| RepoId::of_url(u))
            .unwrap_or_else(|| RepoId::new("", ""));
        let state = match (self.state.as_str(), &self.merged_at) {
            (_, Some(_)) => RequestState::Merged,
            ("closed", None) => RequestState::Closed,
            _ => RequestState::Open,
        };
        let at = [&self.merged_at, &self.closed_at, &self.updated_at]
            .into_iter()
            .flatten()
            .find_map(|t| ms_of_rfc3339(t));
        Request {
            host: Host::GitHub,
            repo,
            number: self.number,
            bot: self.user.as_ref().is_some_and(User::is_bot),
            author: login(&self.user),
            state,
            at,
            head: self.head.sha,
        }
    }
}

/// A review comment: on lines of a pull request's diff, or a reply to one.
#[derive(Debug, Deserialize)]
pub(crate) struct Comment {
    id: u64,
    pull_request_url: String,
    #[serde(default)]
    path: String,
    #[serde(default)]
    line: Option<u32>,
    #[serde(default)]
    original_line: Option<u32>,
    #[serde(default)]
    original_start_line: Option<u32>,
    #[serde(default)]
    side: Option<String>,
    #[serde(default)]
    original_commit_id: Option<String>,
    #[serde(default)]
    in_reply_to_id: Option<u64>,
    #[serde(default)]
    user: Option<User>,
    #[serde(default)]
    body: String,
    #[serde(default)]
    created_at: Option<String>,
}

/// A reply waiting for its thread: the first comment's id, when it was written, the reply.
#[derive(Debug)]
pub(crate) struct PendingReply {
    root: u64,
    at: Option<i64>,
    reply: Reply,
}

/// The request number a pull request URL ends with.
fn number_of(url: &str) -> Option<u64> {
    url.trim_end_matches('/').rsplit('/').next()?.parse().ok()
}

pub(crate) fn add_comment(comment: Comment, exports: &mut Exports) {
    let (Some(repo), Some(request)) = (
        RepoId::of_url(&comment.pull_request_url),
        number_of(&comment.pull_request_url),
    ) else {
        exports.skipped.push(Skip {
            item: format!("GitHub comment {}", comment.id),
            why: "its pull_request_url names no pull request",
        });
        return;
    };
    let author = login(&comment.user);
    if let Some(root) = comment.in_reply_to_id {
        exports.github_replies.push(PendingReply {
            root,
            at: comment.created_at.as_deref().and_then(ms_of_rfc3339),
            reply: Reply {
                author,
                body: bounded(&comment.body),
            },
        });
        return;
    }
    let lines = comment.original_line.map(|end| Span {
        start: comment.original_start_line.unwrap_or(end).min(end),
        end,
    });
    exports.threads.push(Thread {
        repo,
        request,
        id: comment.id.to_string(),
        bot: comment.user.as_ref().is_some_and(User::is_bot),
        reviewer: author,
        path: comment.path,
        lines,
        right_side: comment.side.as_deref() != Some("LEFT"),
        commit: comment.original_commit_id,
        // GitHub drops `line` once later commits changed the commented lines.
        outdated: comment.line.is_none() && comment.original_line.is_some(),
        body: bounded(&comment.body),
        replies: Vec::new(),
        resolved: None,
    });
}

/// Joins replies to their threads, oldest first, at most [`super::MAX_REPLIES`] each.
pub(crate) fn join_replies(exports: &mut Exports) {
    let mut replies = std::mem::take(&mut exports.github_replies);
    replies.sort_by_key(|r| (r.root, r.at));
    let mut by_root: std::collections::HashMap<u64, Vec<Reply>> = std::collections::HashMap::new();
    for pending in replies {
        let thread = by_root.entry(pending.root).or_default();
        if thread.len() < super::MAX_REPLIES {
            thread.push(pending.reply);
        }
    }
    for thread in &mut exports.threads {
        if let Some(replies) = thread.id.parse().ok().and_then(|id| by_root.remove(&id)) {
            thread.replies.extend(replies);
        }
    }
}

/// A submitted review.
#[derive(Debug, Deserialize)]
pub(crate) struct Review {
    #[serde(default)]
    user: Option<User>,
    state: String,
    #[serde(default)]
    submitted_at: Option<String>,
    pull_request_url: String,
}

impl Review {
    /// The review as the model holds it; pending (unsubmitted) reviews are none.
    pub(crate) fn into_review(self) -> Option<HostReview> {
        let state = match self.state.as_str() {
            "APPROVED" => ReviewState::Approved,
            "CHANGES_REQUESTED" => ReviewState::ChangesRequested,
            "COMMENTED" => ReviewState::Commented,
            "DISMISSED" => ReviewState::Dismissed,
            _ => return None,
        };
        Some(HostReview {
            repo: RepoId::of_url(&self.pull_request_url)?,
            request: number_of(&self.pull_request_url)?,
            reviewer: login(&self.user),
            state,
            at: self.submitted_at.as_deref().and_then(ms_of_rfc3339),
        })
    }
}
