//! The approval gate's page (`/ui/pending`): the memories assistants wrote that wait for a
//! person, each with an approve and a reject button (POSTs carrying the session's CSRF
//! token), and what a decision did. Decisions go through the same use cases as `cairn memory
//! approve` and `reject`.

use axum::Router;
use axum::extract::{Extension, Form, Path, State};
use axum::response::Response;
use axum::routing::{get, post};
use maud::{Markup, html};

use super::pages::{count, memory_summary, memory_url, page, path_segment};
use super::{Session, Shared, csrf_refused, failure, html, status_of};
use crate::app::{DecideRequest, Decided};
use crate::memory::{Memory, Status};

/// Who decides on the page, as the memory's history records it.
const DECIDED_ON_THE_PAGE: &str = "the project's pages";

/// Who decided on the page: the daemon's user (only they can read the token that opens a
/// session), named as on the page.
fn decided_by() -> String {
    match std::env::var("USER").ok().filter(|u| !u.trim().is_empty()) {
        Some(user) => format!("{} on {DECIDED_ON_THE_PAGE}", user.trim()),
        None => DECIDED_ON_THE_PAGE.to_string(),
    }
}

/// The pending list and its two actions.
pub(super) fn routes() -> Router<Shared> {
    Router::new()
        .route("/ui/pending", get(pending))
        .route("/ui/pending/{id}/approve", post(approve))
        .route("/ui/pending/{id}/reject", post(reject))
}

/// The memories waiting for approval, oldest first.
async fn pending(State(shared): State<Shared>, Extension(session): Extension<Session>) -> Response {
    match shared.cairn.pending_memories().await {
        Ok(memories) => html(pending_page(&shared.repository, &memories, &session.csrf)),
        Err(e) => failure(&shared, status_of(&e), &e.to_string()),
    }
}

#[derive(serde::Deserialize)]
struct DecisionForm {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    reason: String,
}

async fn approve(
    State(shared): State<Shared>,
    Extension(session): Extension<Session>,
    Path(id): Path<String>,
    Form(form): Form<DecisionForm>,
) -> Response {
    decide(&shared, &session, id, form, Decision::Approve).await
}

async fn reject(
    State(shared): State<Shared>,
    Extension(session): Extension<Session>,
    Path(id): Path<String>,
    Form(form): Form<DecisionForm>,
) -> Response {
    decide(&shared, &session, id, form, Decision::Reject).await
}

#[derive(Clone, Copy, PartialEq)]
enum Decision {
    Approve,
    Reject,
}

/// Approves or rejects a pending memory, if the form carries the session's CSRF token.
async fn decide(
    shared: &Shared,
    session: &Session,
    id: String,
    form: DecisionForm,
    decision: Decision,
) -> Response {
    let nothing = match decision {
        Decision::Approve => "nothing was approved. Open the pending list again and retry.",
        Decision::Reject => "nothing was rejected. Open the pending list again and retry.",
    };
    if let Some(refused) = csrf_refused(shared, session, &form.csrf, nothing) {
        return refused;
    }
    let request = DecideRequest {
        id,
        by: Some(decided_by()),
        reason: (decision == Decision::Reject).then_some(form.reason),
    };
    let decided = match decision {
        Decision::Approve => shared.cairn.approve(request).await,
        Decision::Reject => shared.cairn.reject(request).await,
    };
    match decided {
        Ok(decided) => html(decided_page(&shared.repository, &decided)),
        Err(e) => failure(shared, status_of(&e), &e.to_string()),
    }
}

/// The path of a pending memory's action (`approve` or `reject`).
fn action_url(id: &str, action: &str) -> String {
    format!("/ui/pending/{}/{action}", path_segment(id))
}

/// The pending list: each memory with its approve and reject forms.
pub(crate) fn pending_page(repository: &str, memories: &[Memory], csrf: &str) -> Markup {
    let body = html! {
        p.back { a href="/ui/" { "← Search" } }
        h1 { "Pending approval" }
        p.note {
            "Memories assistants wrote under " code { "[memory] approval" }
            ". None is served (search, context, review) until it is approved; a rejected one is kept for the record and never served."
        }
        @if memories.is_empty() {
            p.empty { "No memory awaits approval." }
        } @else {
            p.count { (count(memories.len(), "memory awaits", "memories await")) " approval, oldest first" }
            ol.results.pending {
                @for memory in memories {
                    li.result {
                        (memory_summary(memory))
                        @if let Some(old) = &memory.validity.supersedes {
                            p.note { "Approving it supersedes " a href=(memory_url(old)) { code { (old) } } "." }
                        }
                        div.decide {
                            form.inline method="post" action=(action_url(&memory.id, "approve")) {
                                input type="hidden" name="csrf" value=(csrf);
                                button.approve type="submit" { "Approve" }
                            }
                            form.inline method="post" action=(action_url(&memory.id, "reject")) {
                                input type="hidden" name="csrf" value=(csrf);
                                label { "Reason " input type="text" name="reason" maxlength="500" placeholder="optional"; }
                                button.danger type="submit" { "Reject" }
                            }
                        }
                    }
                }
            }
        }
    };
    page("Pending approval", repository, body)
}

/// What a decision did.
pub(crate) fn decided_page(repository: &str, decided: &Decided) -> Markup {
    let memory = &decided.memory;
    let (title, what) = match memory.status {
        Status::Approved => ("Approved", "is approved: it is served from now on."),
        _ => (
            "Rejected",
            "is rejected: it is kept for the record and never served.",
        ),
    };
    let body = html! {
        h1 { (title) }
        p { "Memory " a href=(memory_url(&memory.id)) { code { (memory.id) } } " " (what) }
        @if let Some(old) = &decided.superseded {
            p { "It supersedes " a href=(memory_url(old)) { code { (old) } } "." }
        }
        p { a href="/ui/pending" { "Back to the pending list" } }
    };
    page(title, repository, body)
}

/// The home page's line about the pending list, when memories wait.
pub(crate) fn notice(waiting: usize) -> Markup {
    html! {
        @if waiting > 0 {
            p.waiting {
                a href="/ui/pending" { (count(waiting, "memory awaits", "memories await")) " approval" }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::MemoryType;

    #[test]
    fn every_decision_form_posts_the_csrf_token() {
        let mut memory = Memory::new(
            "m_00000000000000aa".to_string(),
            MemoryType::Decision,
            String::new(),
            "Money is <cents>".to_string(),
            1_700_000_000_000,
        );
        memory.status = Status::Pending;
        let html = pending_page("repo", &[memory], "c5rf").into_string();
        assert_eq!(
            html.matches(r#"<input type="hidden" name="csrf" value="c5rf">"#)
                .count(),
            2,
            "{html}"
        );
        assert!(html.contains(r#"method="post" action="/ui/pending/m_00000000000000aa/approve""#));
        assert!(html.contains(r#"method="post" action="/ui/pending/m_00000000000000aa/reject""#));
        assert!(html.contains("Money is &lt;cents&gt;"), "{html}");
        assert!(notice(0).into_string().is_empty());
        assert!(
            notice(2)
                .into_string()
                .contains("2 memories await approval")
        );
    }
}
