//! GitLab's REST JSON as `glab api --paginate` writes it: merge requests
//! (`projects/:id/merge_requests?state=all`) and their discussions
//! (`projects/:id/merge_requests/:iid/discussions`). A discussion names its merge request
//! only by id, so discussions become threads once every file is read.

use std::collections::HashMap;

use serde::Deserialize;

use super::{Exports, Host, Reply, RepoId, Request, RequestState, Skip, Span, Thread, bounded};
use crate::clock::ms_of_rfc3339;

#[derive(Debug, Deserialize)]
pub(crate) struct User {
    username: String,
    #[serde(default)]
    bot: bool,
}

impl User {
    fn is_bot(&self) -> bool {
        self.bot || self.username.ends_with("-bot") || self.username.ends_with("_bot")
    }
}

fn username(user: &Option<User>) -> String {
    user.as_ref()
        .map_or_else(|| "ghost".to_string(), |u| u.username.clone())
}

/// A merge request.
#[derive(Debug, Deserialize)]
pub(crate) struct MergeRequest {
    id: u64,
    iid: u64,
    #[serde(default)]
    project_id: Option<u64>,
    state: String,
    #[serde(default)]
    merged_at: Option<String>,
    #[serde(default)]
    closed_at: Option<String>,
    #[serde(default)]
    updated_at: Option<String>,
    #[serde(default)]
    author: Option<User>,
    #[serde(default)]
    web_url: Option<String>,
    #[serde(default)]
    sha: Option<String>,
}

impl MergeRequest {
    pub(crate) fn into_request(self) -> (Request, GitLabIds) {
        let state = match self.state.as_str() {
            "merged" => RequestState::Merged,
            "closed" => RequestState::Closed,
            _ => RequestState::Open,
        };
        let at = [&self.merged_at, &self.closed_at, &self.updated_at]
            .into_iter()
            .flatten()
            .find_map(|t| ms_of_rfc3339(t));
        let ids = GitLabIds {
            id: self.id,
            project: self.project_id,
            iid: self.iid,
        };
        let request = Request {
            host: Host::GitLab,
            repo: self
                .web_url
                .as_deref()
                .and_then(RepoId::of_url)
                .unwrap_or_else(|| RepoId::new("", "")),
            number: self.iid,
            bot: self.author.as_ref().is_some_and(User::is_bot),
            author: username(&self.author),
            state,
            at,
            head: self.sha,
        };
        (request, ids)
    }
}

/// How GitLab's notes name a merge request: its global id, or its project and number.
#[derive(Debug, Clone, Copy)]
pub(crate) struct GitLabIds {
    id: u64,
    project: Option<u64>,
    iid: u64,
}

#[derive(Debug, Deserialize)]
struct Point {
    #[serde(default)]
    new_line: Option<u32>,
    #[serde(default)]
    old_line: Option<u32>,
}

#[derive(Debug, Deserialize)]
struct LineRange {
    start: Point,
    end: Point,
}

/// Where a diff note sits.
#[derive(Debug, Deserialize)]
struct Position {
    #[serde(default)]
    head_sha: Option<String>,
    #[serde(default)]
    new_path: Option<String>,
    #[serde(default)]
    old_path: Option<String>,
    #[serde(default)]
    new_line: Option<u32>,
    #[serde(default)]
    old_line: Option<u32>,
    #[serde(default)]
    line_range: Option<LineRange>,
}

#[derive(Debug, Deserialize)]
struct Note {
    id: u64,
    #[serde(default)]
    body: String,
    #[serde(default)]
    author: Option<User>,
    #[serde(default)]
    system: bool,
    #[serde(default)]
    resolved: Option<bool>,
    #[serde(default)]
    position: Option<Position>,
    #[serde(default)]
    noteable_id: Option<u64>,
    #[serde(default)]
    noteable_iid: Option<u64>,
    #[serde(default)]
    project_id: Option<u64>,
}

/// A discussion: a thread of notes.
#[derive(Debug, Deserialize)]
pub(crate) struct Discussion {
    id: String,
    notes: Vec<Note>,
}

/// The lines a diff note is on, and whether on the new side.
fn lines_of(position: &Position) -> (Option<Span>, bool) {
    let right = position.new_line.is_some() || position.old_line.is_none();
    let pick = |p: &Point| if right { p.new_line } else { p.old_line };
    let end = if right {
        position.new_line
    } else {
        position.old_line
    };
    let span = match &position.line_range {
        Some(range) => pick(&range.start).zip(pick(&range.end)),
        None => end.map(|e| (e, e)),
    };
    let span = span.map(|(a, b)| Span {
        start: a.min(b),
        end: a.max(b),
    });
    (span, right)
}

/// The thread a discussion holds for `request`, or why it holds none.
fn thread_of(discussion: Discussion, request: &Request) -> Result<Thread, &'static str> {
    let mut notes = discussion.notes.into_iter();
    let first = notes.next().ok_or("it has no notes")?;
    let position = match (&first.position, first.system) {
        (Some(position), false) => position,
        _ => return Err("it is not on lines of the change"),
    };
    let (lines, right_side) = lines_of(position);
    let path = position
        .new_path
        .clone()
        .or_else(|| position.old_path.clone())
        .ok_or("its position names no file")?;
    let mut thread = Thread {
        repo: request.repo.clone(),
        request: request.number,
        id: first.id.to_string(),
        bot: first.author.as_ref().is_some_and(User::is_bot),
        reviewer: username(&first.author),
        path,
        lines,
        right_side,
        commit: position.head_sha.clone(),
        outdated: false,
        body: bounded(&first.body),
        replies: Vec::new(),
        resolved: first.resolved,
    };
    for note in notes {
        if note.system {
            // GitLab notes a later push that changed the commented lines.
            thread.outdated |= note.body.starts_with("changed this line");
        } else if thread.replies.len() < super::MAX_REPLIES {
            thread.replies.push(Reply {
                author: username(&note.author),
                body: bounded(&note.body),
            });
        }
    }
    Ok(thread)
}

/// Turns the discussions read into threads of the merge requests read.
pub(crate) fn attach(exports: &mut Exports) {
    let mut by_id = HashMap::new();
    let mut by_number = HashMap::new();
    for (at, ids) in &exports.gitlab_ids {
        by_id.insert(ids.id, *at);
        if let Some(project) = ids.project {
            by_number.insert((project, ids.iid), *at);
        }
    }
    for discussion in std::mem::take(&mut exports.discussions) {
        let item = format!("GitLab discussion {}", discussion.id);
        let Some(first) = discussion.notes.first() else {
            continue;
        };
        let found = first
            .noteable_id
            .and_then(|id| by_id.get(&id))
            .or_else(|| by_number.get(&(first.project_id?, first.noteable_iid?)));
        let Some(request) = found.map(|&at| &exports.requests[at]) else {
            exports.skipped.push(Skip {
                item,
                why: "its merge request is not in the exports",
            });
            continue;
        };
        // A discussion that is no thread is a general comment, not on code: no finding.
        if let Ok(thread) = thread_of(discussion, request) {
            exports.threads.push(thread);
        }
    }
}
