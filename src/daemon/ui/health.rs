//! The health page: `cairn doctor`'s checks, made again on each visit — the data files, the
//! store and the index's freshness, the memories, the approval gate, team mode, the daemon
//! and the assistants' registrations — each with what fixes a problem.

use axum::extract::State;
use axum::response::Response;
use maud::{Markup, html};

use super::pages::{count, page_in};
use super::{Shared, html as page};
use crate::app::{Check, Doctor, DoctorRequest, Verdict};

/// The health page.
pub(super) async fn health(State(shared): State<Shared>) -> Response {
    let doctor = shared
        .cairn
        .doctor(DoctorRequest {
            registrations: shared.registrations.clone(),
            in_daemon: true,
        })
        .await;
    page(render(&shared.repository, &doctor))
}

/// The checks as a table, problems first counted.
fn render(repository: &str, doctor: &Doctor) -> Markup {
    let problems = doctor
        .checks
        .iter()
        .filter(|c| c.verdict == Verdict::Problem)
        .count();
    let body = html! {
        h1 { "Health" }
        p.count {
            @if problems == 0 { "No problem found" } @else { strong.problems { (count(problems, "problem", "problems")) } " found" }
            " — what " code { "cairn doctor" } " checks, checked now."
        }
        div.scroll {
            table.checks {
                thead { tr {
                    th scope="col" { "check" }
                    th scope="col" { "verdict" }
                    th scope="col" { "found" }
                    th scope="col" { "what to do" }
                } }
                tbody {
                    @for check in &doctor.checks {
                        (row(check))
                    }
                }
            }
        }
    };
    page_in("Health", "Health", repository, body)
}

fn row(check: &Check) -> Markup {
    let (class, word) = match check.verdict {
        Verdict::Ok => ("ok", "ok"),
        Verdict::Problem => ("problem", "problem"),
        Verdict::Warning => ("warning", "warning"),
        Verdict::Note => ("note", "note"),
    };
    html! {
        tr class=(class) data-check=(check.name) {
            th scope="row" { (check.name) }
            td.verdict { (word) }
            td { (check.detail) }
            td { @if let Some(fix) = &check.fix { (fix) } }
        }
    }
}
