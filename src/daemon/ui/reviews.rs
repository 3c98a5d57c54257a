//! The reviews page: each rule category's findings and rejection rate with its sample, the
//! rejection rate over time as a chart, the rejection patterns behind a high-rejection
//! category (with the button that marks them addressed), and the latest recorded reviews.

use maud::{Markup, html};

use super::chart::{self, percent};
use super::pages::{count, memory_url, page_in};
use crate::app::{AuthorRecord, ReviewHistory, Rules};
use crate::clock::time_of_ms;
use crate::memory::Memory;
use crate::review::stats::{ChangeEffect, Window, is_high_rejection};

/// The rejection patterns shown for one category.
pub struct Patterns {
    pub category: String,
    pub memories: Vec<Memory>,
}

/// The reviews page.
pub fn reviews(
    repository: &str,
    rules: &Rules,
    history: &ReviewHistory,
    patterns: &[Patterns],
    csrf: &str,
) -> Markup {
    let body = html! {
        h1 { "Reviews" }
        @if rules.stats.is_empty() {
            p.empty { "No review has been recorded yet. Record one with " code { "cairn record-review" } " or the " code { "record_review" } " tool." }
        } @else {
            p.count {
                (count(history.reviews, "recorded review", "recorded reviews")) "; a category counts as high-rejection from "
                (percent(rules.min_rate)) " rejected over at least " (rules.min_sample) " findings."
            }
            (rule_effectiveness(rules, history))
            (rejection_trend(history))
            (rejection_patterns(patterns, csrf))
            (guideline_changes(rules))
            (authors(history))
            (latest_reviews(history))
        }
    };
    page_in("Reviews", "Reviews", repository, body)
}

/// Each rule category's findings and rejection rate, high-rejection ones marked.
fn rule_effectiveness(rules: &Rules, history: &ReviewHistory) -> Markup {
    html! {
        section {
            h2 { "Rule effectiveness" }
            div.scroll {
                table.rules {
                    thead { tr {
                        th scope="col" { "category" }
                        th.number scope="col" { "rejection rate" }
                        th.number scope="col" { "findings" }
                        th.number scope="col" { "implemented" }
                        th.number scope="col" { "rejected" }
                        th.number scope="col" { "deferred" }
                    } }
                    tbody {
                        @for (i, stat) in rules.stats.iter().enumerate() {
                            @let high = is_high_rejection(stat, rules.min_sample, rules.min_rate);
                            tr.high[high] data-category=(stat.category) {
                                th scope="row" {
                                    svg.swatch xmlns="http://www.w3.org/2000/svg" viewBox="0 0 10 10" aria-hidden="true" {
                                        circle cx="5" cy="5" r="5" fill=(colour_of(history, &stat.category, i)) {}
                                    }
                                    " " code { (stat.category) }
                                    @if high { " " span.badge { "high rejection" } }
                                }
                                td.number.rate {
                                    strong { (percent(stat.rejection_rate)) }
                                    " " span.sample { "(" (stat.rejected) " of " (stat.flagged) ")" }
                                }
                                td.number { (stat.flagged) }
                                td.number { (stat.implemented) }
                                td.number { (stat.rejected) }
                                td.number { (stat.deferred) }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// The rejection rate of each category per period, as a chart with its legend.
fn rejection_trend(history: &ReviewHistory) -> Markup {
    html! {
        section {
            h2 { "Rejection rate over time" }
            @if history.trend.periods.is_empty() {
                p.empty { "No recorded review to draw." }
            } @else {
                figure.chart {
                    (chart::trend(&history.trend))
                    figcaption {
                        ul.legend {
                            @for (i, category) in history.trend.categories.iter().map(|c| &c.category).enumerate() {
                                li {
                                    svg.swatch xmlns="http://www.w3.org/2000/svg" viewBox="0 0 10 10" aria-hidden="true" {
                                        circle cx="5" cy="5" r="5" fill=(chart::colour(i)) {}
                                    }
                                    " " code { (category) }
                                }
                            }
                        }
                        "Each point is the share of a category's findings rejected in one period; its title says how many."
                    }
                }
            }
        }
    }
}

/// The open rejection patterns of high-rejection categories, each group with the button
/// that marks it addressed.
fn rejection_patterns(patterns: &[Patterns], csrf: &str) -> Markup {
    html! {
        section {
            h2 { "Rejection patterns" }
            @if patterns.is_empty() {
                p.empty { "No high-rejection category has open rejection patterns." }
            }
            @for group in patterns {
                div.card.patterns {
                    h3 { code { (group.category) } }
                    ul {
                        @for memory in &group.memories {
                            li {
                                a href=(memory_url(&memory.id)) { (memory.content) }
                                @if let Some(pattern) = &memory.rule.file_pattern { " " span.flag { "files " code { (pattern) } } }
                            }
                        }
                    }
                    form.inline method="post" action="/ui/reviews/addressed" {
                        input type="hidden" name="csrf" value=(csrf);
                        input type="hidden" name="category" value=(group.category);
                        button type="submit" { "Mark addressed" }
                        " " span.hint { "once the review guidelines cover them: briefings stop raising them" }
                    }
                }
            }
        }
    }
}

/// The latest recorded reviews with their findings.
fn latest_reviews(history: &ReviewHistory) -> Markup {
    html! {
        section {
            h2 { "Latest reviews" }
            ol.reviews {
                @for review in &history.latest {
                    li {
                        span.when { (time_of_ms(review.at)) }
                        " " span.verdict { (review.verdict.as_str()) }
                        " " code { (review.id) }
                        " by " a href=(developer_url(&review.author)) { "@" (review.author) }
                        @if let Some(reviewer) = &review.reviewer { ", reviewed by " (reviewer) }
                        ul.findings {
                            @for finding in &review.findings {
                                li {
                                    code { (finding.category) } " "
                                    span.disposition { (finding.disposition.as_str()) } ": "
                                    (finding.message)
                                    @if let Some(file) = &finding.file { " " code.where { (file) @if let Some(line) = finding.line { ":" (line) } } }
                                    @if let Some(reason) = finding.reason.as_deref().filter(|r| !r.is_empty()) { " — " span.reason { (reason) } }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// The guideline changes recorded per category: an accepted one with the category's rejection
/// rate in the reviews before and after it (what `cairn rules` lists).
fn guideline_changes(rules: &Rules) -> Markup {
    let changes: Vec<(&str, &ChangeEffect)> = rules
        .stats
        .iter()
        .flat_map(|s| s.changes.iter().map(|c| (s.category.as_str(), c)))
        .collect();
    html! {
        section {
            h2 { "Guideline changes" }
            @if changes.is_empty() {
                p.empty { "No guideline change has been recorded. " code { "cairn rules --propose" } " asks an assistant for them." }
            } @else {
                div.scroll {
                    table.changes {
                        thead { tr {
                            th scope="col" { "change" }
                            th scope="col" { "category" }
                            th scope="col" { "guideline" }
                            th scope="col" { "outcome" }
                            th.number scope="col" { "rejected before" }
                            th.number scope="col" { "rejected after" }
                        } }
                        tbody {
                            @for (category, change) in &changes {
                                tr data-change=(change.id) {
                                    th scope="row" { code { (change.id) } }
                                    td { code { (category) } }
                                    td { code { (change.file) } @if let Some(section) = &change.section { " § " (section) } }
                                    td { (change.outcome) " " span.when { (time_of_ms(change.at)) } }
                                    td.number.before { (window(change.before.as_ref())) }
                                    td.number.after { (window(change.after.as_ref())) }
                                }
                            }
                        }
                    }
                }
                p.hint { "Before and after: the category's findings rejected in the reviews recorded before the change was accepted, and since." }
            }
        }
    }
}

/// `40% (2 of 5 in 3 reviews)`, or a dash for a change not accepted.
fn window(window: Option<&Window>) -> Markup {
    html! {
        @match window {
            None => span.sample { "—" },
            Some(w) if w.flagged == 0 => span.sample { "no finding yet" },
            Some(w) => {
                strong { (percent(w.rejection_rate)) }
                " " span.sample { "(" (w.rejected) " of " (w.flagged) " in " (count(w.reviews as usize, "review", "reviews")) ")" }
            }
        }
    }
}

/// Each author's record over the recorded reviews, linking to their developer view.
fn authors(history: &ReviewHistory) -> Markup {
    html! {
        section {
            h2 { "Authors" }
            div.scroll {
                table.authors {
                    thead { tr {
                        th scope="col" { "author" }
                        th.number scope="col" { "reviews" }
                        th.number scope="col" { "approved" }
                        th.number scope="col" title="changes requested" { "changes" }
                        th.number scope="col" { "findings" }
                        th.number scope="col" { "implemented" }
                        th.number scope="col" { "rejected" }
                        th.number scope="col" { "deferred" }
                        th scope="col" { "most flagged" }
                    } }
                    tbody {
                        @for AuthorRecord { author, stats } in &history.authors {
                            tr data-author=(author) {
                                th scope="row" { a href=(developer_url(author)) { "@" (author) } }
                                td.number { (stats.reviews) }
                                td.number { (stats.approved) }
                                td.number { (stats.changes_requested) }
                                td.number { (stats.findings) }
                                td.number { (stats.implemented) }
                                td.number { (stats.rejected) }
                                td.number { (stats.deferred) }
                                td {
                                    @for (i, top) in stats.top_categories.iter().enumerate() {
                                        @if i > 0 { ", " }
                                        code { (top.category) } " " span.sample { "×" (top.count) }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// The memories page's view of a developer.
fn developer_url(developer: &str) -> String {
    format!("/ui/?developer={}", super::pages::path_segment(developer))
}

/// The chart's colour of a category, so the table's swatch matches its line.
fn colour_of(history: &ReviewHistory, category: &str, fallback: usize) -> &'static str {
    let at = history
        .trend
        .categories
        .iter()
        .position(|c| c.category == category);
    chart::colour(at.unwrap_or(fallback))
}

/// What marking addressed did.
pub fn addressed(repository: &str, category: &str, ids: &[String]) -> Markup {
    let body = html! {
        h1 { "Marked addressed" }
        p { (count(ids.len(), "rejection pattern", "rejection patterns")) " of " code { (category) } " marked addressed." }
        p { a href="/ui/reviews" { "Back to the reviews" } }
    };
    page_in("Reviews", "Marked addressed", repository, body)
}
