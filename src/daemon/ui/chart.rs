//! The two drawings, as SVG written by hand with maud (text escaped by construction, no
//! script, no style attribute so the page's policy holds): a line chart of each category's
//! rejection rate per period, and a symbol's neighbourhood (callers on the left, callees on
//! the right, each a link to its own page).

use maud::{Markup, html};

use crate::context::Link;
use crate::graph::short_name;
use crate::review::records::{CategoryTrend, Trend};

/// Line colours, one per category in turn (readable on white, told apart without colour by
/// the legend's order and each point's title).
const COLOURS: &[&str] = &[
    "#1f5fae", "#b42318", "#116329", "#8a5a00", "#6f42c1", "#0b7285", "#c2255c", "#495057",
];

/// The colour of the `i`th category.
pub(crate) fn colour(i: usize) -> &'static str {
    COLOURS[i % COLOURS.len()]
}

const WIDTH: f64 = 760.0;
const HEIGHT: f64 = 240.0;
const LEFT: f64 = 48.0;
const RIGHT: f64 = 16.0;
const TOP: f64 = 12.0;
const BOTTOM: f64 = 44.0;

/// Each category's rejection rate per period, as lines over a 0–100 % axis.
pub fn trend(trend: &Trend) -> Markup {
    let periods = trend.periods.len();
    let plot_w = WIDTH - LEFT - RIGHT;
    let plot_h = HEIGHT - TOP - BOTTOM;
    let x = |i: usize| {
        if periods <= 1 {
            LEFT + plot_w / 2.0
        } else {
            LEFT + plot_w * i as f64 / (periods - 1) as f64
        }
    };
    let y = |rate: f64| TOP + plot_h * (1.0 - rate.clamp(0.0, 1.0));
    html! {
        svg.chart xmlns="http://www.w3.org/2000/svg" viewBox=(format!("0 0 {WIDTH} {HEIGHT}"))
            role="img" aria-labelledby="trend-title" {
            title #trend-title { "Rejection rate per period, by category" }
            @for tick in [0.0, 0.25, 0.5, 0.75, 1.0] {
                line x1=(LEFT) x2=(WIDTH - RIGHT) y1=(y(tick)) y2=(y(tick))
                    stroke="#d9dee3" stroke-width="1" {}
                text x=(LEFT - 6.0) y=(y(tick) + 4.0) text-anchor="end" font-size="11" fill="#5b6570" {
                    (format!("{:.0}%", tick * 100.0))
                }
            }
            line x1=(LEFT) x2=(LEFT) y1=(TOP) y2=(TOP + plot_h) stroke="#5b6570" stroke-width="1" {}
            line x1=(LEFT) x2=(WIDTH - RIGHT) y1=(TOP + plot_h) y2=(TOP + plot_h) stroke="#5b6570" stroke-width="1" {}
            @for (i, period) in trend.periods.iter().enumerate() {
                text x=(x(i)) y=(TOP + plot_h + 16.0) text-anchor="middle" font-size="11" fill="#5b6570" {
                    title { (period.reviews) " reviews, " (crate::clock::time_of_ms(period.from)) " to " (crate::clock::time_of_ms(period.to)) }
                    (i + 1)
                }
            }
            text x=(LEFT + plot_w / 2.0) y=(HEIGHT - 6.0) text-anchor="middle" font-size="12" fill="#1d2329" {
                "period (runs of consecutive reviews, oldest → newest)"
            }
            text x="12" y=(TOP + plot_h / 2.0) text-anchor="middle" font-size="12" fill="#1d2329"
                transform=(format!("rotate(-90 12 {})", TOP + plot_h / 2.0)) {
                "rejected"
            }
            @for (c, CategoryTrend { category, windows }) in trend.categories.iter().enumerate() {
                @let points: Vec<(usize, f64)> = windows.iter().enumerate()
                    .filter_map(|(i, w)| w.as_ref().map(|w| (i, w.rejection_rate))).collect();
                g.series data-category=(category) {
                    @if points.len() > 1 {
                        polyline fill="none" stroke=(colour(c)) stroke-width="2.5"
                            points=(points.iter().map(|(i, r)| format!("{:.1},{:.1}", x(*i), y(*r))).collect::<Vec<_>>().join(" ")) {}
                    }
                    @for (i, rate) in &points {
                        @let window = windows[*i].as_ref().expect("a point has a window");
                        circle cx=(format!("{:.1}", x(*i))) cy=(format!("{:.1}", y(*rate))) r="4" fill=(colour(c)) {
                            title {
                                (category) ", period " (i + 1) ": " (window.rejected) " of "
                                (window.flagged) " rejected (" (percent(*rate)) ")"
                            }
                        }
                    }
                }
            }
        }
    }
}

/// A rate as a whole percentage.
pub fn percent(rate: f64) -> String {
    format!("{:.0}%", rate * 100.0)
}

/// Most neighbours drawn on each side.
pub(crate) const SIDE: usize = 12;
const BOX_W: f64 = 200.0;
const BOX_H: f64 = 30.0;
const ROW: f64 = 40.0;
const GRAPH_W: f64 = 760.0;

/// The symbol's neighbourhood drawn twice: wide (callers on the left, callees on the right)
/// and narrow (callers above, callees below, two to a row), the stylesheet showing the one
/// that fits the screen.
pub fn neighbourhood(id: &str, callers: &[Link], callees: &[Link]) -> Markup {
    html! {
        (wide(id, callers, callees))
        (narrow(id, callers, callees))
    }
}

/// A symbol in the middle, its callers on the left and callees on the right; each a link to
/// its page. Neighbours beyond [`SIDE`] are counted under their column.
fn wide(id: &str, callers: &[Link], callees: &[Link]) -> Markup {
    let rows = callers.len().min(SIDE).max(callees.len().min(SIDE)).max(1);
    let height = rows as f64 * ROW + 60.0;
    let centre_y = 30.0 + rows as f64 * ROW / 2.0;
    let column_y =
        |i: usize, n: usize| 30.0 + (rows - n) as f64 * ROW / 2.0 + i as f64 * ROW + ROW / 2.0;
    let left_x = 8.0;
    let mid_x = (GRAPH_W - BOX_W) / 2.0;
    let right_x = GRAPH_W - BOX_W - 8.0;
    let side = |links: &[Link], x: f64, edge_x: f64, centre_edge_x: f64, heading: &str| {
        let shown = links.len().min(SIDE);
        html! {
            (heading_text(x + BOX_W / 2.0, 16.0, heading, links.len(), false))
            @for (i, link) in links.iter().take(SIDE).enumerate() {
                @let cy = column_y(i, shown);
                (edge(edge_x, cy, centre_edge_x, centre_y))
                (node(link.id.as_str(), x, BOX_W, cy, "node", &link.kind))
            }
            (more(x + BOX_W / 2.0, height - 8.0, links.len()))
        }
    };
    html! {
        svg.graph.wide xmlns="http://www.w3.org/2000/svg" viewBox=(format!("0 0 {GRAPH_W} {height}"))
            role="img" aria-labelledby="graph-title" {
            title #graph-title { "Callers and callees of " (id) }
            (side(callers, left_x, left_x + BOX_W, mid_x, "callers"))
            (side(callees, right_x, right_x, mid_x + BOX_W, "callees"))
            (node(id, mid_x, BOX_W, centre_y, "node centre", "symbol"))
        }
    }
}

const NARROW_W: f64 = 360.0;
const NARROW_BOX_W: f64 = 170.0;

/// The same neighbourhood for a phone: callers above the symbol and callees below, two to a
/// row.
fn narrow(id: &str, callers: &[Link], callees: &[Link]) -> Markup {
    let rows_of = |n: usize| n.min(SIDE).div_ceil(2);
    let x_of = |i: usize| 6.0 + (i % 2) as f64 * (NARROW_BOX_W + 8.0);
    let block = |n: usize| 24.0 + rows_of(n) as f64 * ROW + if n > SIDE { 16.0 } else { 0.0 };
    let callers_top = 0.0;
    let centre_y = callers_top + block(callers.len()) + 20.0 + BOX_H / 2.0;
    let callees_top = centre_y + BOX_H / 2.0 + 20.0;
    let height = callees_top + block(callees.len()) + 4.0;
    let mid_x = (NARROW_W - NARROW_BOX_W) / 2.0;
    let side = |links: &[Link], top: f64, heading: &str, above: bool| {
        html! {
            (heading_text(6.0, top + 16.0, heading, links.len(), true))
            @for (i, link) in links.iter().take(SIDE).enumerate() {
                @let cy = top + 24.0 + (i / 2) as f64 * ROW + ROW / 2.0;
                @let x = x_of(i) + NARROW_BOX_W / 2.0;
                @if above {
                    (edge(x, cy + BOX_H / 2.0, NARROW_W / 2.0, centre_y - BOX_H / 2.0))
                } @else {
                    (edge(x, cy - BOX_H / 2.0, NARROW_W / 2.0, centre_y + BOX_H / 2.0))
                }
                (node(link.id.as_str(), x_of(i), NARROW_BOX_W, cy, "node", &link.kind))
            }
            (more(NARROW_W / 2.0, top + block(links.len()) - 4.0, links.len()))
        }
    };
    html! {
        svg.graph.narrow xmlns="http://www.w3.org/2000/svg" viewBox=(format!("0 0 {NARROW_W} {height:.1}"))
            role="img" aria-labelledby="graph-title-narrow" {
            title #graph-title-narrow { "Callers and callees of " (id) }
            (side(callers, callers_top, "callers", true))
            (side(callees, callees_top, "callees", false))
            (node(id, mid_x, NARROW_BOX_W, centre_y, "node centre", "symbol"))
        }
    }
}

/// A column's heading with its count, centred on `x` (or starting there, `start`), haloed in
/// white where a line passes under it.
fn heading_text(x: f64, y: f64, heading: &str, n: usize, start: bool) -> Markup {
    html! {
        text x=(x) y=(y) text-anchor=(if start { "start" } else { "middle" }) font-size="12" font-weight="600"
            fill="#5b6570" stroke="#ffffff" stroke-width="3" paint-order="stroke" {
            (heading) " (" (n) ")"
        }
    }
}

/// "and N more" under a column that holds more than [`SIDE`].
fn more(x: f64, y: f64, n: usize) -> Markup {
    html! {
        @if n > SIDE {
            text x=(x) y=(format!("{y:.1}")) text-anchor="middle" font-size="11" fill="#5b6570" {
                "and " (n - SIDE) " more"
            }
        }
    }
}

/// A line from a neighbour to the symbol.
fn edge(x1: f64, y1: f64, x2: f64, y2: f64) -> Markup {
    html! {
        line x1=(format!("{x1:.1}")) y1=(format!("{y1:.1}")) x2=(format!("{x2:.1}")) y2=(format!("{y2:.1}"))
            stroke="#aab3bc" stroke-width="1.5" {}
    }
}

/// One box with the symbol's short name; a link to its page unless it is the centre.
fn node(id: &str, x: f64, width: f64, cy: f64, class: &str, kind: &str) -> Markup {
    let y = cy - BOX_H / 2.0;
    // About 7.5 units a character at the font's size.
    let fits = ((width - 12.0) / 7.5) as usize;
    let centre = class.contains("centre");
    let body = html! {
        rect x=(x) y=(format!("{y:.1}")) width=(width) height=(BOX_H) rx="6"
            fill=(if centre { "#1f5fae" } else { "#ffffff" }) stroke="#1f5fae" stroke-width="1.5" {}
        text x=(x + width / 2.0) y=(format!("{:.1}", cy + 4.5)) text-anchor="middle" font-size="13"
            fill=(if centre { "#ffffff" } else { "#1d2329" }) {
            title { (kind) " " (id) }
            (clip(short_name(id), fits))
        }
    };
    html! {
        g class=(class) data-id=(id) {
            @if centre { (body) } @else { a href=(super::code::symbol_url(id)) { (body) } }
        }
    }
}

/// At most `n` characters, an ellipsis marking the cut.
fn clip(text: &str, n: usize) -> String {
    if text.chars().count() <= n {
        text.to_string()
    } else {
        let mut out: String = text.chars().take(n - 1).collect();
        out.push('…');
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::review::records::Period;
    use crate::review::stats::Window;

    fn link(id: &str) -> Link {
        Link {
            id: id.to_string(),
            kind: "function".to_string(),
            lines: Vec::new(),
        }
    }

    #[test]
    fn the_neighbourhood_draws_one_node_each_and_escapes_names() {
        let callers = [link("a.py::<b>evil</b>"), link("b.py::f")];
        let callees = [link("c.py::g")];
        let svg = neighbourhood("x.py::centre", &callers, &callees).into_string();
        // Drawn twice, wide and narrow.
        assert_eq!(svg.matches("<svg class=\"graph wide\"").count(), 1, "{svg}");
        assert_eq!(
            svg.matches("<svg class=\"graph narrow\"").count(),
            1,
            "{svg}"
        );
        assert_eq!(svg.matches("<g class=\"node").count(), 2 * 4, "{svg}");
        assert!(!svg.contains("<b>"), "{svg}");
        assert!(svg.contains("&lt;b&gt;evil&lt;/b&gt;"), "{svg}");
        assert!(svg.contains("href=\"/ui/symbol?id=b.py%3A%3Af\""), "{svg}");
        let many: Vec<Link> = (0..20).map(|i| link(&format!("m.py::f{i}"))).collect();
        let svg = neighbourhood("x.py::c", &many, &[]).into_string();
        assert_eq!(svg.matches("<g class=\"node").count(), 2 * (SIDE + 1));
        assert_eq!(svg.matches("and 8 more").count(), 2, "{svg}");
    }

    #[test]
    fn the_trend_draws_a_point_per_flagged_period() {
        let window = |flagged, rejected| {
            Some(Window {
                reviews: 1,
                flagged,
                rejected,
                rejection_rate: rejected as f64 / flagged as f64,
            })
        };
        let trend = Trend {
            periods: vec![Period::default(), Period::default(), Period::default()],
            categories: vec![
                CategoryTrend {
                    category: "naming".to_string(),
                    windows: vec![window(2, 2), None, window(2, 1)],
                },
                CategoryTrend {
                    category: "security".to_string(),
                    windows: vec![None, window(1, 0), None],
                },
            ],
        };
        let svg = super::trend(&trend).into_string();
        assert_eq!(svg.matches("<circle").count(), 3, "{svg}");
        assert_eq!(svg.matches("<polyline").count(), 1, "{svg}");
        assert!(
            svg.contains("naming, period 3: 1 of 2 rejected (50%)"),
            "{svg}"
        );
    }
}
