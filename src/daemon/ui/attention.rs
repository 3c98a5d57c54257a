//! The "needs attention" page: what the `attention` use case finds — near-duplicates,
//! anchors the index no longer has, anchored code changed since, memories never read —
//! each memory linked, with its edit and forget buttons. A GET: nothing changes.

use axum::extract::{Query, State};
use axum::response::Response;
use maud::{Markup, html};

use super::edit::edit_url;
use super::pages::{count, memory_url, page, path_segment, title_of};
use super::{Shared, failure, html, status_of};
use crate::app::{Attention, AttentionRequest, Listed};
use crate::clock::time_of_ms;
use crate::memory::Memory;
use crate::memory::duplicates::{NEAR_MEANING, NEAR_TERMS};

/// What the page's form asks for.
#[derive(Debug, Default, serde::Deserialize)]
pub(crate) struct AttentionForm {
    /// A developer whose memories are looked at too.
    #[serde(default)]
    developer: String,
    /// Days after which a memory never read is listed (empty: `[ui] stale_days`).
    #[serde(default)]
    days: String,
}

/// The page's address, for a developer if one is chosen.
pub fn url(developer: &str) -> String {
    let developer = developer.trim();
    if developer.is_empty() {
        "/ui/attention".to_string()
    } else {
        format!("/ui/attention?developer={}", path_segment(developer))
    }
}

/// How long the page waits for near-duplicates being compared after a change; past it, it
/// shows those found before and says the comparison goes on.
const PATIENCE: std::time::Duration = std::time::Duration::from_millis(100);

/// The memories that need attention.
pub(super) async fn attention(
    State(shared): State<Shared>,
    Query(form): Query<AttentionForm>,
) -> Response {
    let days = form.days.trim();
    let stale_days = if days.is_empty() {
        None
    } else {
        match days.parse::<u32>() {
            Ok(days) => Some(days),
            Err(_) => {
                return failure(
                    &shared,
                    axum::http::StatusCode::BAD_REQUEST,
                    &format!("`days` must be a whole number of days, not `{days}`"),
                );
            }
        }
    };
    let developer = form.developer.trim();
    let request = AttentionRequest {
        developer: (!developer.is_empty()).then(|| developer.to_string()),
        stale_days,
        patience: Some(PATIENCE),
    };
    match shared.cairn.attention(request).await {
        Ok(found) => html(page_of(&shared.repository, &form, &found)),
        Err(e) => failure(&shared, status_of(&e), &e.to_string()),
    }
}

/// The page: the form, then each kind of memory that needs attention.
fn page_of(repository: &str, form: &AttentionForm, found: &Attention) -> Markup {
    let body = html! {
        p.back { a href="/ui/" { "← Search" } }
        h1 { "Needs attention" }
        (choice(form, found))
        (near_duplicates(found))
        (gone(found))
        (changed(found))
        (never_read(found))
        (contradicted(found))
    };
    page("Needs attention", repository, body)
}

/// The form that chooses the developer and the days, and whose memories are shown.
fn choice(form: &AttentionForm, found: &Attention) -> Markup {
    html! {
        form.search method="get" action="/ui/attention" {
            div.field {
                label for="developer" { "Developer" }
                input #developer type="text" name="developer" value=(form.developer) placeholder="alice";
            }
            div.field {
                label for="days" { "Never read after (days)" }
                input #days type="number" min="0" name="days" value=(found.stale_days);
            }
            button type="submit" { "Show" }
        }
        p.note {
            "Project memories"
            @if let Some(developer) = &found.developer { " and @" (developer) "'s" }
            "; a developer's own memories show only when that developer is chosen."
        }
    }
}

/// Pairs of live memories that say nearly the same thing.
fn near_duplicates(found: &Attention) -> Markup {
    html! {
        section.attention #duplicates {
            h2 { "Near-duplicates " span.count { "(" (total(&found.near_duplicates)) ")" } }
            p.note {
                "Live memories of one type that say nearly the same thing: cosine "
                (format!("{NEAR_MEANING:.2}")) " or more by meaning, or "
                (format!("{NEAR_TERMS:.2}")) " or more of their terms in common — a little below where a write is merged. Edit one to supersede the other, or forget one."
            }
            @if found.comparing {
                p.comparing {
                    "The memories changed since these were found: they are being compared again"
                    @if found.near_duplicates.items.is_empty() { " (a first comparison of many memories takes seconds)" }
                    ". Reload to see the new list."
                }
            } @else if found.near_duplicates.items.is_empty() { p.empty { "None." } }
            ol.attention {
                @for pair in &found.near_duplicates.items {
                    li.pair {
                        p.facts { (format!("{:.2}", pair.similarity)) " by " (pair.by) }
                        div.two {
                            (row(&pair.older, html! {}))
                            (row(&pair.newer, html! {}))
                        }
                    }
                }
            }
            (more(&found.near_duplicates))
        }
    }
}

/// Memories anchored to code the index no longer has.
fn gone(found: &Attention) -> Markup {
    html! {
        section.attention #gone {
            h2 { "Anchored to code that is gone " span.count { "(" (total(&found.gone)) ")" } }
            @if !found.indexed {
                p.note { "The repository has not been indexed: anchors cannot be checked. Run " code { "cairn index" } "." }
            } @else if found.gone.items.is_empty() { p.empty { "None." } }
            ol.attention {
                @for gone in &found.gone.items {
                    li { (row(&gone.memory, html! {
                        p.flag { "not in the index: " @for (i, a) in gone.anchors.iter().enumerate() { @if i > 0 { ", " } code { (a) } } }
                    })) }
                }
            }
            (more(&found.gone))
        }
    }
}

/// Memories whose anchored code changed since they were written.
fn changed(found: &Attention) -> Markup {
    html! {
        section.attention #changed {
            h2 { "Code changed since written " span.count { "(" (total(&found.changed)) ")" } }
            p.note { "The newest commit that changed an anchored file after the memory's text was written (uncommitted edits do not count)." }
            @if found.changed.items.is_empty() { p.empty { "None." } }
            ol.attention {
                @for changed in &found.changed.items {
                    li { (row(&changed.memory, html! {
                        p.flag {
                            "changed in " code { (changed.change.commit) } " on "
                            (time_of_ms(changed.change.time * 1000)) " (" code { (changed.change.path) } ")"
                        }
                    })) }
                }
            }
            (more(&found.changed))
        }
    }
}

/// Memories never read since they were written, past the days chosen.
fn never_read(found: &Attention) -> Markup {
    html! {
        section.attention #never-read {
            h2 { "Never read in " (found.stale_days) " days " span.count { "(" (total(&found.never_read)) ")" } }
            @if found.never_read.items.is_empty() { p.empty { "None." } }
            ol.attention {
                @for memory in &found.never_read.items {
                    li { (row(memory, html! {
                        p.flag { "written " (time_of_ms(memory.validity.created_at)) ", never read" }
                    })) }
                }
            }
            (more(&found.never_read))
        }
    }
}

/// Memories reviews found wrong more often than they applied them.
fn contradicted(found: &Attention) -> Markup {
    html! {
        section.attention #contradicted {
            h2 { "Contradicted by reviews " span.count { "(" (total(&found.contradicted)) ")" } }
            @if found.contradicted.items.is_empty() { p.empty { "None." } }
            ol.attention {
                @for c in &found.contradicted.items {
                    li { (row(&c.memory, html! {
                        p.flag {
                            "contradicted by " (c.verdicts.contradicted) " reviews, applied by "
                            (c.verdicts.applied) ": retire it, or say why it still holds"
                        }
                    })) }
                }
            }
            (more(&found.contradicted))
        }
    }
}

/// A memory in a list: its title linked, type, text, why it is listed, edit and forget.
fn row(memory: &Memory, why: Markup) -> Markup {
    html! {
        div.card {
            h3.title { a href=(memory_url(&memory.id)) { (title_of(memory)) } }
            p.facts { span.kind { (memory.kind.as_str()) } " " span.scope { (memory.scope.label()) } " " code { (memory.id) } }
            p.content { (memory.content) }
            (why)
            p.actions {
                a href=(edit_url(&memory.id)) { "Edit…" }
                " · "
                a.danger href=(format!("{}/forget", memory_url(&memory.id))) { "Forget…" }
            }
        }
    }
}

fn total<T>(listed: &Listed<T>) -> usize {
    listed.items.len() + listed.more
}

fn more<T>(listed: &Listed<T>) -> Markup {
    html! {
        @if listed.more > 0 {
            p.note { "and " (count(listed.more, "more", "more")) " not shown" }
        }
    }
}
