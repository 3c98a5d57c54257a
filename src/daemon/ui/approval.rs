//! The approval gate's page (`/ui/pending`): the memories assistants wrote and the proposals
//! `cairn learn` made, waiting for a person, each with an approve and a reject button, the
//! whole list with an approve-all and a reject-all (POSTs carrying the session's CSRF token),
//! a proposal with its evidence, and what a decision did. Decisions go through the same use cases as `cairn memory
//! approve` and `reject`.

use axum::Router;
use axum::extract::{Extension, Form, Path, State};
use axum::response::Response;
use axum::routing::{get, post};
use maud::{Markup, html};

use super::pages::{count, memory_summary, memory_url, page, path_segment};
use super::{Session, Shared, csrf_refused, failure, html, status_of};
use crate::app::{DecideManyRequest, DecideRequest, Decided};
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
        .route("/ui/pending/approve", post(approve_all))
        .route("/ui/pending/reject", post(reject_all))
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

/// The ids of the memories a bulk form was rendered with, space-separated: only those are
/// decided, never one that arrived since.
#[derive(serde::Deserialize)]
struct BulkForm {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    ids: String,
    #[serde(default)]
    reason: String,
}

async fn approve_all(
    State(shared): State<Shared>,
    Extension(session): Extension<Session>,
    Form(form): Form<BulkForm>,
) -> Response {
    decide_all(&shared, &session, form, Decision::Approve).await
}

async fn reject_all(
    State(shared): State<Shared>,
    Extension(session): Extension<Session>,
    Form(form): Form<BulkForm>,
) -> Response {
    decide_all(&shared, &session, form, Decision::Reject).await
}

/// Approves or rejects every memory the list showed, as one decision.
async fn decide_all(
    shared: &Shared,
    session: &Session,
    form: BulkForm,
    decision: Decision,
) -> Response {
    let nothing = "nothing was decided. Open the pending list again and retry.";
    if let Some(refused) = csrf_refused(shared, session, &form.csrf, nothing) {
        return refused;
    }
    let request = DecideManyRequest {
        ids: form.ids.split_whitespace().map(str::to_string).collect(),
        by: Some(decided_by()),
        reason: Some(form.reason).filter(|r| !r.trim().is_empty()),
        approve: decision == Decision::Approve,
    };
    match shared.cairn.decide_many(request).await {
        Ok(decided) => html(decided_all_page(&shared.repository, &decided, decision)),
        Err(e) => failure(shared, status_of(&e), &e.to_string()),
    }
}

/// What a decision on the whole list did.
fn decided_all_page(repository: &str, decided: &[Decided], decision: Decision) -> Markup {
    let title = match decision {
        Decision::Approve => "Approved",
        Decision::Reject => "Rejected",
    };
    let body = html! {
        h1 { (title) }
        p.count { (title) " " (count(decided.len(), "memory", "memories")) "." }
        ul {
            @for d in decided {
                li { a href=(memory_url(&d.memory.id)) { code { (d.memory.id) } } " " (d.memory.content) }
            }
        }
        p { a href="/ui/pending" { "Back to the pending list" } }
    };
    page(title, repository, body)
}

/// The evidence a proposal cairn learned carries: from the review history its counts and the
/// findings it quotes; from the repository (decision records, guides, history) where it comes
/// from and what it quotes.
fn evidence(memory: &Memory) -> Markup {
    let meta = &memory.metadata;
    let number = |key: &str| {
        meta.get(key)
            .and_then(serde_json::Value::as_u64)
            .unwrap_or(0)
    };
    let examples: Vec<&str> = meta
        .get("examples")
        .and_then(serde_json::Value::as_array)
        .map(|list| list.iter().filter_map(serde_json::Value::as_str).collect())
        .unwrap_or_default();
    let learned_from = meta.get("learned_from").and_then(serde_json::Value::as_str);
    html! {
        @if learned_from == Some("review history") {
            div.evidence {
                p.note {
                    "Learned from the review history: " (number("findings")) " findings in "
                    (number("reviews")) " reviews, " (number("rejected")) " rejected."
                }
                ul.examples { @for e in examples { li { (e) } } }
            }
        } @else if let Some(source) = learned_from {
            div.evidence {
                p.note { "Learned from the repository's " (source) ":" }
                ul.examples { @for e in examples { li { (e) } } }
            }
        }
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
            @if memories.len() > 1 {
                @let ids = memories.iter().map(|m| m.id.as_str()).collect::<Vec<_>>().join(" ");
                div.decide.bulk {
                    form.inline method="post" action="/ui/pending/approve" {
                        input type="hidden" name="csrf" value=(csrf);
                        input type="hidden" name="ids" value=(ids);
                        button.approve-all type="submit" { "Approve all " (memories.len()) }
                    }
                    form.inline method="post" action="/ui/pending/reject" {
                        input type="hidden" name="csrf" value=(csrf);
                        input type="hidden" name="ids" value=(ids);
                        label { "Reason " input type="text" name="reason" maxlength="500" placeholder="optional"; }
                        button.danger.reject-all type="submit" { "Reject all " (memories.len()) }
                    }
                }
            }
            ol.results.pending {
                @for memory in memories {
                    li.result {
                        (memory_summary(memory))
                        (evidence(memory))
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
        let html = pending_page("repo", &[memory.clone()], "c5rf").into_string();
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

        let mut learned = memory.clone();
        learned.id = "m_00000000000000bb".to_string();
        learned
            .metadata
            .insert("learned_from".into(), "review history".into());
        learned.metadata.insert("findings".into(), 4.into());
        learned
            .metadata
            .insert("examples".into(), vec!["pr-1 (rejected): <b>no</b>"].into());
        let mut decided = learned.clone();
        let html = pending_page("repo", &[memory, learned], "c5rf").into_string();
        assert!(
            html.contains(
                r#"<input type="hidden" name="ids" value="m_00000000000000aa m_00000000000000bb">"#
            ),
            "{html}"
        );
        assert!(html.contains("Approve all 2") && html.contains("Reject all 2"));
        assert!(html.contains("Learned from the review history: 4 findings"));
        assert!(html.contains("pr-1 (rejected): &lt;b&gt;no&lt;/b&gt;"));
        assert_eq!(html.matches("Learned from the review history").count(), 1);

        decided.metadata = crate::memory::model::Metadata::from([
            ("learned_from".to_string(), "decision record".into()),
            (
                "examples".to_string(),
                vec!["docs/adr/0002-db.md: Use PostgreSQL"].into(),
            ),
        ]);
        let html = evidence(&decided).into_string();
        assert!(
            html.contains("Learned from the repository's decision record:"),
            "{html}"
        );
        assert!(html.contains("<li>docs/adr/0002-db.md: Use PostgreSQL</li>"));
        assert!(
            notice(2)
                .into_string()
                .contains("2 memories await approval")
        );
    }
}
