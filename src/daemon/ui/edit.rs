//! Editing a memory by superseding it: the form (a GET, prefilled, changes nothing), the
//! write (a POST with the session's CSRF token, through the `revise` use case: the write
//! path of `remember` with `supersedes`), the answer that links the new memory, and the
//! supersession chain a memory's page shows.

use axum::extract::rejection::FormRejection;
use axum::extract::{Extension, Form, Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use maud::{Markup, html};

use super::pages::{memory_url, page, title_of};
use super::{Session, Shared, csrf_refused, failure, html, status_of};
use crate::app::{MemoryRequest, ReviseRequest};
use crate::memory::model::{MAX_CONTENT_BYTES, MAX_TITLE_BYTES};
use crate::memory::{Memory, WriteOutcome};

/// The largest edit form accepted: the largest text and title a memory holds, its anchors,
/// and room for encoding (a memory's text is at most 4 KiB).
pub(crate) const FORM_BYTES: usize = 64 * 1024;

/// What the edit form sends.
#[derive(Debug, Default, serde::Deserialize)]
pub(crate) struct EditForm {
    #[serde(default)]
    csrf: String,
    /// The memory's `updated_at` when the form was shown.
    #[serde(default)]
    seen: Option<i64>,
    #[serde(default)]
    title: String,
    #[serde(default)]
    content: String,
    /// Anchored files, one a line.
    #[serde(default)]
    paths: String,
    /// Anchored symbols, one a line.
    #[serde(default)]
    symbols: String,
}

/// The edit form of a live memory, prefilled (a GET: nothing changes).
pub(super) async fn edit_form(
    State(shared): State<Shared>,
    Extension(session): Extension<Session>,
    Path(id): Path<String>,
) -> Response {
    match shared.cairn.show(MemoryRequest { id }).await {
        Ok(memory) if !memory.is_live() => failure(
            &shared,
            StatusCode::CONFLICT,
            &format!(
                "{} was superseded by {} already: edit the newer one.",
                memory.id,
                memory
                    .validity
                    .superseded_by
                    .as_deref()
                    .unwrap_or("another memory")
            ),
        ),
        Ok(memory) => html(form_page(
            &shared.repository,
            &memory,
            &session.csrf,
            &filled(&memory),
            None,
        )),
        Err(e) => failure(&shared, status_of(&e), &e.to_string()),
    }
}

/// Writes the edit as a memory that supersedes the old one, if the form carries the
/// session's CSRF token; a refusal shows the form again with what was typed and stores
/// nothing.
pub(super) async fn save_edit(
    State(shared): State<Shared>,
    Extension(session): Extension<Session>,
    Path(id): Path<String>,
    form: Result<Form<EditForm>, FormRejection>,
) -> Response {
    let form = match form {
        Ok(Form(form)) => form,
        Err(rejection) => return refused_form(&shared, &rejection),
    };
    if let Some(refused) = csrf_refused(
        &shared,
        &session,
        &form.csrf,
        "nothing was stored. Open the memory again and retry.",
    ) {
        return refused;
    }
    let request = ReviseRequest {
        id: id.clone(),
        content: form.content.clone(),
        title: Some(form.title.clone()),
        paths: lines(&form.paths),
        symbols: lines(&form.symbols),
        written_by: std::env::var("USER").ok(),
        seen: form.seen,
    };
    match shared.cairn.revise(request).await {
        Ok(outcome) => html(saved(&shared.repository, &id, &outcome)),
        Err(e) => {
            let status = status_of(&e);
            // The form again, as typed, when the memory is still there to edit.
            match shared.cairn.show(MemoryRequest { id }).await {
                Ok(memory) if status == StatusCode::BAD_REQUEST && memory.is_live() => (
                    status,
                    form_page(
                        &shared.repository,
                        &memory,
                        &session.csrf,
                        &form,
                        Some(&e.to_string()),
                    ),
                )
                    .into_response(),
                _ => failure(&shared, status, &e.to_string()),
            }
        }
    }
}

/// A form that could not be read: too large, or not a form.
fn refused_form(shared: &Shared, rejection: &FormRejection) -> Response {
    let status = rejection.status();
    let message = if status == StatusCode::PAYLOAD_TOO_LARGE {
        format!(
            "The form is larger than {} KiB: nothing was stored. A memory holds at most {MAX_CONTENT_BYTES} bytes of text.",
            FORM_BYTES / 1024
        )
    } else {
        format!("The form could not be read ({rejection}): nothing was stored.")
    };
    failure(shared, status, &message)
}

/// The form's fields as the memory has them.
fn filled(memory: &Memory) -> EditForm {
    EditForm {
        csrf: String::new(),
        seen: Some(memory.validity.updated_at),
        title: memory.title.clone(),
        content: memory.content.clone(),
        paths: memory.anchors.paths.join("\n"),
        symbols: memory.anchors.symbols.join("\n"),
    }
}

/// The non-empty trimmed lines of a field.
fn lines(text: &str) -> Vec<String> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(str::to_string)
        .collect()
}

/// The edit form: the fields as `form` holds them, what went wrong if anything.
fn form_page(
    repository: &str,
    memory: &Memory,
    csrf: &str,
    form: &EditForm,
    error: Option<&str>,
) -> Markup {
    let body = html! {
        p.back { a href=(memory_url(&memory.id)) { "← " (title_of(memory)) } }
        h1 { "Edit this memory" }
        p {
            "Saving writes a new " code { (memory.kind.as_str()) } " memory that supersedes "
            code { (memory.id) } ", as " code { "remember" } " with " code { "supersedes" }
            " does: the old one stays in the chain, no longer valid. A text holding a secret is refused."
        }
        @if let Some(error) = error {
            p.error role="alert" { (error) }
        }
        form.edit method="post" action=(edit_url(&memory.id)) {
            input type="hidden" name="csrf" value=(csrf);
            @if let Some(seen) = form.seen {
                input type="hidden" name="seen" value=(seen);
            }
            div.field {
                label for="title" { "Title" }
                input #title type="text" name="title" value=(form.title)
                    maxlength=(MAX_TITLE_BYTES) placeholder="the first sentence when empty";
            }
            div.field {
                label for="content" { "Text" }
                textarea #content name="content" rows="6" required maxlength=(MAX_CONTENT_BYTES) {
                    (form.content)
                }
            }
            div.field {
                label for="paths" { "Files and folders, one a line" }
                textarea #paths name="paths" rows="3" { (form.paths) }
            }
            div.field {
                label for="symbols" { "Symbols, one a line" }
                textarea #symbols name="symbols" rows="3" { (form.symbols) }
            }
            div.actions {
                button type="submit" { "Save as a new version" }
                " "
                a href=(memory_url(&memory.id)) { "Cancel" }
            }
        }
    };
    page("Edit a memory", repository, body)
}

/// What an edit wrote: the new memory, linked, and the one it superseded.
fn saved(repository: &str, old: &str, outcome: &WriteOutcome) -> Markup {
    let body = html! {
        h1 { "Saved" }
        p {
            "Memory " a.new href=(memory_url(&outcome.id)) { code { (outcome.id) } }
            @if let Some(superseded) = &outcome.superseded {
                " supersedes " a href=(memory_url(superseded)) { code { (superseded) } } "."
            } @else {
                " was written (" (format!("{:?}", outcome.event).to_uppercase()) "); "
                code { (old) } " is unchanged."
            }
        }
        @if let Some(memory) = &outcome.memory {
            div.card { p.content { (memory.content) } }
        }
        @for note in &outcome.notes { p.note { (note) } }
        @if !outcome.unknown_anchors.is_empty() {
            p.flag { "Not in the code graph: " (outcome.unknown_anchors.join(", ")) }
        }
        p { a href=(memory_url(&outcome.id)) { "Open the new memory" } " · " a href="/ui/" { "Back to the search" } }
    };
    page("Saved", repository, body)
}

/// The path of a memory's edit form.
pub(crate) fn edit_url(id: &str) -> String {
    format!("{}/edit", memory_url(id))
}

/// A memory's supersession chain, oldest first, the memory itself marked; nothing when it
/// neither supersedes nor was superseded.
pub(super) fn chain(chain: &[Memory], at: usize) -> Markup {
    html! {
        @if chain.len() > 1 {
            section.chain {
                h2 { "Supersession chain" }
                ol.chain {
                    @for (i, memory) in chain.iter().enumerate() {
                        li aria-current=[(i == at).then_some("true")] {
                            @if i == at {
                                strong { (title_of(memory)) }
                            } @else {
                                a href=(memory_url(&memory.id)) { (title_of(memory)) }
                            }
                            " " code { (memory.id) }
                            " " span.when { (crate::clock::time_of_ms(memory.validity.created_at)) }
                            @if memory.is_live() { " " span.live { "live" } }
                            @else { " " span.superseded { "superseded" } }
                        }
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::MemoryType;

    fn memory(id: &str, content: &str) -> Memory {
        Memory::new(
            id.to_string(),
            MemoryType::Decision,
            String::new(),
            content.to_string(),
            1_700_000_000_000,
        )
    }

    #[test]
    fn the_form_is_prefilled_escaped_and_carries_the_tokens() {
        let mut old = memory("m_1", "Totals are <b>cents</b>");
        old.anchors.paths = vec!["src/cart.py".to_string(), "src/pay.py".to_string()];
        let page = form_page("repo", &old, "c5rf", &filled(&old), None).into_string();
        for text in [
            r#"<input type="hidden" name="csrf" value="c5rf">"#,
            r#"<input type="hidden" name="seen" value="1700000000000">"#,
            r#"method="post" action="/ui/memories/m_1/edit""#,
            "Totals are &lt;b&gt;cents&lt;/b&gt;</textarea>",
            "src/cart.py\nsrc/pay.py</textarea>",
        ] {
            assert!(page.contains(text), "{text}: {page}");
        }
    }

    #[test]
    fn the_chain_marks_the_memory_and_links_the_others() {
        let mut old = memory("m_1", "Totals are floats");
        old.validity.invalidated_at = Some(1_700_000_100_000);
        let new = memory("m_2", "Totals are cents");
        let html = chain(&[old.clone(), new.clone()], 1).into_string();
        assert!(html.contains(r#"<a href="/ui/memories/m_1">"#), "{html}");
        assert!(!html.contains(r#"<a href="/ui/memories/m_2">"#), "{html}");
        assert!(html.contains("<strong>Totals are cents</strong>"), "{html}");
        assert!(chain(&[new], 0).into_string().is_empty());
    }

    #[test]
    fn anchors_are_one_a_line() {
        assert_eq!(lines(" a.py \n\n b/ \r\n"), ["a.py", "b/"]);
    }
}
