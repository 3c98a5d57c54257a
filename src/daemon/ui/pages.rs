//! The page's HTML, written server-side with maud (escaped by construction): the search, a
//! memory, the forget confirmation and what it answered, and the page that asks to log in.

use crate::review::records::MemoryVerdicts;
use maud::{DOCTYPE, Markup, html};

use crate::app::SearchAnswer;
use crate::clock::time_of_ms;
use crate::memory::{Memory, MemoryType};

/// What the search form holds.
#[derive(Debug, Default, Clone, serde::Deserialize)]
pub struct SearchForm {
    #[serde(default)]
    pub q: String,
    #[serde(default, rename = "type")]
    pub kind: String,
    #[serde(default)]
    pub path: String,
    /// A developer: their memories and profile instead of the project's.
    #[serde(default)]
    pub developer: String,
}

/// A page of the memories' section.
pub(super) fn page(title: &str, repository: &str, body: Markup) -> Markup {
    page_in("Memories", title, repository, body)
}

/// The frame every page shares; `section` (one of [`SECTIONS`]' names) is marked in the header.
pub(super) fn page_in(section: &str, title: &str, repository: &str, body: Markup) -> Markup {
    html! {
        (DOCTYPE)
        html lang="en" {
            (head(title, true))
            body {
                header.top {
                    a.brand href="/ui/" { "cairn" }
                    span.repository title="repository" { (repository) }
                    nav.sections aria-label="sections" {
                        @for (href, name) in SECTIONS {
                            @let here = section == name;
                            a href=(href) aria-current=[here.then_some("page")] { (name) }
                        }
                    }
                }
                main { (body) }
            }
        }
    }
}

/// The header's sections: address and name.
const SECTIONS: [(&str, &str); 4] = [
    ("/ui/", "Memories"),
    ("/ui/reviews", "Reviews"),
    ("/ui/code", "Code"),
    ("/ui/health", "Health"),
];

/// A page's head: its title, and the stylesheet for those a session may load.
fn head(title: &str, styled: bool) -> Markup {
    html! {
        head {
            meta charset="utf-8";
            meta name="viewport" content="width=device-width, initial-scale=1";
            title { (title) " · cairn" }
            @if styled {
                link rel="stylesheet" href="/ui/style.css";
            }
        }
    }
}

/// The home page: the search form and what it found.
pub fn search(
    repository: &str,
    form: &SearchForm,
    answer: Result<&SearchAnswer, &str>,
    waiting: usize,
) -> Markup {
    let body = html! {
        h1 { "Memories" }
        (super::approval::notice(waiting))
        p.see { a href=(super::attention::url(&form.developer)) { "Needs attention" } ": near-duplicates, code gone or changed, never read" }
        form.search method="get" action="/ui/" role="search" {
            div.field.grow {
                label for="q" { "Search" }
                input #q type="search" name="q" value=(form.q)
                    placeholder="words, identifiers or paths" autofocus;
            }
            div.field {
                label for="type" { "Type" }
                select #type name="type" {
                    option value="" selected[form.kind.is_empty()] { "any type" }
                    @for kind in MemoryType::ALL {
                        option value=(kind.as_str()) selected[form.kind == kind.as_str()] {
                            (kind.as_str())
                            @if kind.developer_scoped() { " (with a developer)" }
                        }
                    }
                }
            }
            div.field {
                label for="developer" { "Developer" }
                input #developer type="text" name="developer" value=(form.developer) placeholder="alice";
            }
            div.field {
                label for="path" { "Path" }
                input #path type="text" name="path" value=(form.path) placeholder="src/api/";
            }
            button type="submit" { "Search" }
        }
        @match answer {
            Err(error) => p.error role="alert" { (error) },
            Ok(answer) => {
                @for note in &answer.notes {
                    p.note { (note) }
                }
                @if let Some(profile) = &answer.profile {
                    div.card.profile {
                        h2 { "Profile of @" (profile.owner.developer.as_deref().unwrap_or("?")) }
                        p.content { (profile.content) }
                    }
                }
                @if answer.memories.is_empty() {
                    p.empty { "No memory matches." }
                } @else {
                    p.count { (count(answer.memories.len(), "memory", "memories")) ", best first" }
                    ol.results {
                        @for found in &answer.memories {
                            li.result {
                                (memory_summary(&found.memory))
                                @if let Some(changed) = &found.code_changed_since {
                                    p.flag { (changed.fact()) }
                                }
                            }
                        }
                    }
                }
            }
        }
    };
    page("Memories", repository, body)
}

/// A memory in a list: its title as a link, its type, text and anchors.
pub(super) fn memory_summary(memory: &Memory) -> Markup {
    html! {
        h2.title {
            a href=(memory_url(&memory.id)) { (title_of(memory)) }
        }
        p.facts {
            span.kind { (memory.kind.as_str()) }
            " " span.scope { (memory.scope.label()) }
            @if !memory.status.is_approved() { " " span.status { (memory.status.as_str()) } }
            @else if !memory.is_live() { " " span.superseded { "superseded" } }
        }
        p.content { (memory.content) }
        @let anchors: Vec<&String> = memory.anchors.all().collect();
        @if !anchors.is_empty() {
            ul.anchors {
                @for anchor in anchors { li { code { (anchor) } } }
            }
        }
    }
}

/// A memory's page: text, type, anchors, provenance, validity, its supersession chain
/// (`chain`, oldest first, the memory at `at`), history, and the edit and forget buttons.
pub fn memory(
    repository: &str,
    memory: &Memory,
    verdicts: MemoryVerdicts,
    chain: &[Memory],
    at: usize,
) -> Markup {
    let body = html! {
        p.back { a href="/ui/" { "← Search" } }
        h1 { (title_of(memory)) }
        p.facts {
            span.kind { (memory.kind.as_str()) }
            " " span.scope { (memory.scope.label()) }
            @if !memory.status.is_approved() { " " span.status { (memory.status.as_str()) } }
            @else if memory.is_live() { " " span.live { "live" } }
            @else { " " span.superseded { "superseded" } }
        }
        @if memory.status == crate::memory::Status::Pending && memory.is_live() {
            p.note { "Awaits approval: not served until a person approves it on the " a href="/ui/pending" { "pending list" } "." }
        }
        p.content.lead { (memory.content) }
        (anchors_of(memory))
        (provenance(memory, verdicts))
        (validity(memory))
        (revisions(memory))
        (super::edit::chain(chain, at))
        (memory_actions(memory))
    };
    page(&title_of(memory), repository, body)
}

/// What a memory is anchored to: files, symbols (each marked if gone), a file pattern.
fn anchors_of(memory: &Memory) -> Markup {
    html! {
        section {
            h2 { "Anchors" }
            @if memory.anchors.all().next().is_none() && memory.rule.file_pattern.is_none() {
                p.empty { "Not anchored to code." }
            }
            ul.anchors {
                @for path in &memory.anchors.paths { li { "file " a href=(super::code::symbol_url(path)) { code { (path) } } (gone(memory, path)) } }
                @for symbol in &memory.anchors.symbols { li { "symbol " a href=(super::code::symbol_url(symbol)) { code { (symbol) } } (gone(memory, symbol)) } }
                @if let Some(pattern) = &memory.rule.file_pattern { li { "files matching " code { (pattern) } } }
            }
        }
    }
}

/// Where a memory came from, who wrote it, and how often it was read.
fn provenance(memory: &Memory, verdicts: MemoryVerdicts) -> Markup {
    html! {
        section {
            h2 { "Provenance" }
            dl {
                dt { "id" } dd { code { (memory.id) } }
                dt { "source" } dd { (format!("{:?}", memory.provenance.source).to_lowercase()) }
                @if let Some(source_ref) = &memory.provenance.source_ref { dt { "from" } dd { (source_ref) } }
                @if let Some(by) = &memory.provenance.written_by { dt { "written by" } dd { (by) } }
                @if let Some(developer) = &memory.owner.developer { dt { "developer" } dd { "@" (developer) } }
                @if let Some(agent) = &memory.owner.agent { dt { "agent" } dd { (agent) } }
                @if let Some(run) = &memory.owner.run { dt { "run" } dd { (run) } }
                @if let Some(org) = &memory.owner.org { dt { "organisation" } dd { (org) } }
                @if let Some(origin) = &memory.anchors.origin { dt { "written in" } dd { (origin) } }
                @if let Some(category) = &memory.rule.category { dt { "category" } dd { (category) } }
                dt { "confidence" } dd { (format!("{:.2}", memory.confidence)) }
                dt { "read" } dd {
                    (memory.reads.access_count) " times"
                    @if let Some(last) = memory.reads.last_access { ", last " (time_of_ms(last)) }
                }
                @if verdicts != MemoryVerdicts::default() {
                    dt { "in reviews" } dd.verdicts {
                        "applied " (verdicts.applied) ", contradicted " (verdicts.contradicted)
                        @if verdicts.to_retire() { " — " a href="/ui/attention#contradicted" { "listed to retire" } }
                    }
                }
                @if !memory.redacted.is_empty() {
                    dt { "redacted" } dd { (memory.redacted.join(", ")) }
                }
            }
        }
    }
}

/// When a memory was made and changed, how long it holds, and what it supersedes or is
/// superseded by.
fn validity(memory: &Memory) -> Markup {
    html! {
        section {
            h2 { "Validity" }
            dl {
                dt { "created" } dd { (time_of_ms(memory.validity.created_at)) }
                dt { "updated" } dd { (time_of_ms(memory.validity.updated_at)) }
                dt { "valid from" } dd { (time_of_ms(memory.validity.valid_from)) }
                @if let Some(until) = memory.validity.invalidated_at { dt { "valid until" } dd { (time_of_ms(until)) } }
                @if let Some(older) = &memory.validity.supersedes {
                    dt { "supersedes" } dd { a href=(memory_url(older)) { code { (older) } } }
                }
                @if let Some(newer) = &memory.validity.superseded_by {
                    dt { "superseded by" } dd { a href=(memory_url(newer)) { code { (newer) } } }
                }
            }
        }
    }
}

/// A memory's earlier changes.
fn revisions(memory: &Memory) -> Markup {
    html! {
        section {
            h2 { "History" }
            @if memory.history.is_empty() {
                p.empty { "No earlier changes." }
            } @else {
                ol.history {
                    @for revision in &memory.history {
                        li {
                            span.when { (time_of_ms(revision.at)) }
                            " " span.event { (format!("{:?}", revision.event).to_uppercase()) }
                            @if let Some(by) = &revision.by { " by " (by) }
                            p { (revision.content) }
                            @if let Some(note) = &revision.note { p.note { (note) } }
                        }
                    }
                }
            }
        }
    }
}

/// The edit (for a live memory) and forget buttons.
fn memory_actions(memory: &Memory) -> Markup {
    html! {
        div.actions {
            @if memory.is_live() {
                form.inline method="get" action=(super::edit::edit_url(&memory.id)) {
                    button type="submit" { "Edit…" }
                }
            }
            form.danger method="get" action=(format!("{}/forget", memory_url(&memory.id))) {
                button type="submit" { "Forget this memory…" }
            }
        }
    }
}

/// Asks before a memory is forgotten; the form carries the session's CSRF token.
pub(crate) fn confirm_forget(repository: &str, memory: &Memory, csrf: &str) -> Markup {
    let body = html! {
        h1 { "Forget this memory?" }
        div.card { (memory_summary(memory)) }
        p { "It is removed for good, for every assistant and teammate that reads these memories." }
        form.confirm method="post" action=(format!("{}/forget", memory_url(&memory.id))) {
            input type="hidden" name="csrf" value=(csrf);
            button.danger type="submit" { "Forget for good" }
            " "
            a href=(memory_url(&memory.id)) { "Keep it" }
        }
    };
    page("Forget a memory", repository, body)
}

/// What was forgotten.
pub fn forgotten(repository: &str, id: &str) -> Markup {
    let body = html! {
        h1 { "Forgotten" }
        p { "Memory " code { (id) } " was removed." }
        p { a href="/ui/" { "Back to the search" } }
    };
    page("Forgotten", repository, body)
}

/// A page that says what went wrong.
pub fn problem(repository: &str, title: &str, message: &str) -> Markup {
    let body = html! {
        h1 { (title) }
        p.error role="alert" { (message) }
        p { a href="/ui/" { "Back to the search" } }
    };
    page(title, repository, body)
}

/// The answer to a request without a session: how to get one (no stylesheet: it needs one).
pub(crate) fn log_in_first() -> Markup {
    html! {
        (DOCTYPE)
        html lang="en" {
            (head("Log in", false))
            body {
                h1 { "Log in with cairn ui" }
                p { "This page needs a session. Run " code { "cairn ui" } " in the repository: it opens the page logged in." }
            }
        }
    }
}

/// `n thing` or `n things`.
pub(super) fn count(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// The path of a memory's page.
pub(crate) fn memory_url(id: &str) -> String {
    format!("/ui/memories/{}", path_segment(id))
}

/// A memory's title, or the start of its text when it has none.
pub(super) fn title_of(memory: &Memory) -> String {
    if !memory.title.trim().is_empty() {
        return memory.title.clone();
    }
    let words: Vec<&str> = memory.content.split_whitespace().take(10).collect();
    words.join(" ")
}

fn gone(memory: &Memory, anchor: &str) -> Markup {
    html! {
        @if memory.anchors.unknown_anchors.iter().any(|a| a == anchor) {
            " " span.flag { "not in the code graph" }
        }
    }
}

/// `text` percent-encoded for one path segment.
pub(super) fn path_segment(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || b"-_.~".contains(&byte) {
            out.push(byte as char);
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_stay_one_path_segment() {
        assert_eq!(memory_url("m_00ff"), "/ui/memories/m_00ff");
        assert_eq!(memory_url("../x y"), "/ui/memories/..%2Fx%20y");
    }

    #[test]
    fn text_is_escaped() {
        let memory = Memory::new(
            "m_1".to_string(),
            MemoryType::Decision,
            "<b>bold</b>".to_string(),
            "a <script>alert(1)</script> & more".to_string(),
            1_700_000_000_000,
        );
        let html = self::memory("repo", &memory, MemoryVerdicts::default(), &[], 0).into_string();
        assert!(!html.contains("<script>"), "{html}");
        assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt; &amp; more"));
        assert!(html.contains("&lt;b&gt;bold&lt;/b&gt;"));
    }

    #[test]
    fn the_confirmation_carries_the_csrf_token() {
        let memory = Memory::new(
            "m_1".to_string(),
            MemoryType::Decision,
            String::new(),
            "Totals are integers of cents".to_string(),
            1_700_000_000_000,
        );
        let html = confirm_forget("repo", &memory, "c5rf").into_string();
        assert!(
            html.contains(r#"<input type="hidden" name="csrf" value="c5rf">"#),
            "{html}"
        );
        assert!(
            html.contains(r#"method="post" action="/ui/memories/m_1/forget""#),
            "{html}"
        );
    }
}
