//! The code pages: the ranked files and symbols of the context pack with their score's parts,
//! and one symbol's page — what `expand` answers, with its neighbourhood drawn.

use maud::{Markup, html};

use super::chart;
use super::pages::{count, memory_url, page_in, path_segment};
use crate::context::{ContextReport, ExpandReport};
use crate::context::{Link, PossibleCaller};
use crate::graph::short_name;

/// What the code page's form holds.
#[derive(Debug, Default, Clone, serde::Deserialize)]
pub struct FocusForm {
    #[serde(default)]
    pub focus: String,
}

/// The path of a file's or symbol's page.
pub(crate) fn symbol_url(id: &str) -> String {
    format!("/ui/symbol?id={}", path_segment(id))
}

/// The ranked files and symbols, with their score's parts.
pub fn code(repository: &str, form: &FocusForm, report: &ContextReport) -> Markup {
    let body = html! {
        h1 { "Code" }
        form.search method="get" action="/ui/code" role="search" {
            div.field.grow {
                label for="focus" { "Focus" }
                input #focus type="search" name="focus" value=(form.focus)
                    placeholder="a task, paths or symbols to rank first";
            }
            button type="submit" { "Rank" }
        }
        @for note in &report.notes { p.note { (note) } }
        p.count {
            (count(report.files, "file", "files")) ", " (count(report.symbols, "symbol", "symbols"))
            @if let Some(commit) = &report.freshness.indexed_commit { ", indexed at " code { (commit.chars().take(10).collect::<String>()) } }
            @if report.freshness.changed_count > 0 { ", " (count(report.freshness.changed_count, "file", "files")) " changed since" }
            " — " a href="/ui/health" { "health" }
        }
        section {
            h2 { "Top files" }
            (ranked(&report.top_files))
        }
        section {
            h2 { "Top symbols" }
            (ranked(&report.top_symbols))
        }
        @if !report.hot_spots.is_empty() {
            section {
                h2 { "Hot spots" }
                (ranked(&report.hot_spots))
            }
        }
    };
    page_in("Code", "Code", repository, body)
}

/// A table of ranked nodes: the score and its parts, reach and dependents.
fn ranked(nodes: &[crate::context::Ranked]) -> Markup {
    html! {
        @if nodes.is_empty() {
            p.empty { "Nothing ranked." }
        } @else {
            div.scroll {
                table.ranked {
                    thead { tr {
                        th scope="col" { "file or symbol" }
                        th.number scope="col" title="the score: the sum of the parts" { "score" }
                        th.number scope="col" { "recency" }
                        th.number scope="col" { "frequency" }
                        th.number scope="col" { "centrality" }
                        th.number scope="col" { "side effects" }
                        th.number scope="col" title="nodes a change here can reach" { "reach" }
                        th.number scope="col" { "dependents" }
                    } }
                    tbody {
                        @for node in nodes {
                            tr {
                                th scope="row" {
                                    a href=(symbol_url(&node.id)) { code { (node.id) } }
                                    " " span.kind { (node.kind) } " " span.lines { (node.lines) }
                                }
                                td.number { strong { (format!("{:.3}", node.score.total)) } }
                                td.number { (format!("{:.3}", node.score.recency)) }
                                td.number { (format!("{:.3}", node.score.frequency)) }
                                td.number { (format!("{:.3}", node.score.centrality)) }
                                td.number { (format!("{:.3}", node.score.side_effect_cost)) }
                                td.number { (node.reach) }
                                td.number { (node.dependents) }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// A file's or symbol's page: its signature, score, neighbourhood, tests, side effects, blast
/// radius and the memories anchored to it.
pub fn symbol(repository: &str, report: &ExpandReport) -> Markup {
    let body = html! {
        p.back { a href="/ui/code" { "← Code" } }
        h1 { code { (short_name(&report.id)) } }
        p.facts {
            span.kind { (report.kind) }
            " " span { (report.path) ":" (report.start_line) "–" (report.end_line) }
            @if report.is_test { " " span { "test" } }
        }
        @if let Some(signature) = &report.signature { pre.signature { code { (signature) } } }
        @if let Some(doc) = &report.doc { p.content { (doc) } }
        @for note in &report.notes { p.note { (note) } }
        section {
            h2 { "Neighbourhood" }
            figure.graph {
                (chart::neighbourhood(&report.id, &report.callers, &report.callees))
                figcaption { "Callers on the left (above on a phone), callees on the right (below); each opens its own page." }
            }
        }
        div.columns {
            (links("Callers", &report.callers))
            @if !report.possible_callers.is_empty() { (possible_callers(&report.possible_callers)) }
            (links("Callees", &report.callees))
            (links("Tests", &report.tests))
            @if !report.members.is_empty() { (links("Members", &report.members)) }
            @if !report.importers.is_empty() { (links("Imported by", &report.importers)) }
            @if !report.imports.is_empty() { (links("Imports", &report.imports)) }
            @if !report.bases.is_empty() { (links("Bases", &report.bases)) }
            @if !report.subclasses.is_empty() { (links("Subclasses", &report.subclasses)) }
        }
        section {
            h2 { "Impact" }
            dl {
                dt { "id" } dd { code { (report.id) } }
                dt { "blast radius" } dd { (count(report.blast_radius, "node", "nodes")) " a change here can reach" }
                dt { "side effects" } dd {
                    @if report.side_effects.is_empty() { "none found" }
                    @else { (report.side_effects.join(", ")) }
                    @if report.state_writes > 0 { "; " (report.state_writes) " state writes" }
                }
                dt { "score" } dd {
                    (format!("{:.3}", report.score.total)) " = recency " (format!("{:.3}", report.score.recency))
                    " + frequency " (format!("{:.3}", report.score.frequency))
                    " + centrality " (format!("{:.3}", report.score.centrality))
                    " + side effects " (format!("{:.3}", report.score.side_effect_cost))
                }
                @if !report.top_dependents.is_empty() {
                    dt { "top dependents" } dd {
                        @for (i, link) in report.top_dependents.iter().enumerate() {
                            @if i > 0 { ", " }
                            a href=(symbol_url(&link.id)) { code { (short_name(&link.id)) } }
                        }
                    }
                }
            }
        }
        section {
            h2 { "Memories" }
            @if report.memories.is_empty() {
                p.empty { "No memory is anchored here." }
            } @else {
                ul.plain {
                    @for note in &report.memories {
                        li {
                            span.kind { (note.kind) } " "
                            a href=(memory_url(&note.id)) { (note.content) }
                            @if let Some(changed) = &note.code_changed_since { p.flag { (changed.fact()) } }
                        }
                    }
                }
            }
        }
        @if !report.history.is_empty() {
            section {
                h2 { "History" }
                ul.plain { @for line in &report.history { li { (line) } } }
            }
        }
    };
    page_in("Code", &report.id, repository, body)
}

/// Calls of the method's name on receivers of unknown type, each with its evidence.
fn possible_callers(callers: &[PossibleCaller]) -> Markup {
    html! {
        section.links {
            h2 { "Possible callers " span.count { "(" (callers.len()) ")" } }
            p.note { "Calls of this name on a receiver of unknown type: they may reach this method or another of its name." }
            ul.plain {
                @for caller in callers {
                    li {
                        a href=(symbol_url(&caller.id)) { code { (caller.id) } }
                        " " code { (caller.call) }
                        @if !caller.evidence.is_empty() { " " span.kind { (caller.evidence.join(" · ")) } }
                    }
                }
            }
        }
    }
}

/// A titled list of neighbours, each linked to its page.
fn links(title: &str, links: &[Link]) -> Markup {
    html! {
        section.links {
            h2 { (title) " " span.count { "(" (links.len()) ")" } }
            @if links.is_empty() {
                p.empty { "None." }
            } @else {
                ul.plain {
                    @for link in links {
                        li { a href=(symbol_url(&link.id)) { code { (link.id) } } " " span.kind { (link.kind) } }
                    }
                }
            }
        }
    }
}
