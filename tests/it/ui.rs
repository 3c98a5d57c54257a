//! The page for people at `/ui`: its defences over plain HTTP (the one-time code, the session
//! cookie and what it opens, Host and Origin, the CSRF token), and a person's whole visit in a
//! real Chromium driven over WebDriver — logged in through the address `cairn ui` prints.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::{Value, json};

use crate::daemon::Daemon;
use crate::support::TestRepo;

/// How long the test waits for a daemon, a driver or a page.
pub(crate) const DEADLINE: Duration = Duration::from_secs(60);

/// A one-time code's life in the daemon (`daemon::ui::session::CODE_LIFETIME`).
const CODE_LIFETIME: Duration = Duration::from_secs(60);

/// The memories a person looks at, stored with the CLI.
pub(crate) struct Stored {
    pub(crate) cents: String,
    pub(crate) storage: String,
    pub(crate) rounding: String,
}

/// Stores a memory through `cairn memory add ARGS` and gives its id (the write must add).
pub(crate) fn add_memory(repo: &TestRepo, args: &[&str]) -> String {
    let mut full = vec!["memory", "add", "--json"];
    full.extend_from_slice(args);
    let out: Value = serde_json::from_str(&repo.cairn_ok(&full)).unwrap();
    assert_eq!(out["event"], "ADD", "{out}");
    out["id"].as_str().unwrap().to_string()
}

/// The `mixed` fixture, indexed, with three memories stored through `cairn memory add`.
pub(crate) fn repository_with_memories() -> (TestRepo, Stored) {
    let repo = TestRepo::with_fixture("mixed");
    repo.index();
    let add = |args: &[&str]| add_memory(&repo, args);
    let cents = add(&[
        "-t",
        "decision",
        "--title",
        "Cart totals are cents",
        "--path",
        "src/shop/cart.py",
        "--source",
        "review",
        "--source-ref",
        "PR #42",
        "Cart totals are integers of cents, never floats: rounding drifted on refunds.",
    ]);
    let storage = add(&[
        "-t",
        "project_pattern",
        "--path",
        "src/shop/storage.py",
        "Every write to the shop's storage goes through one save function so retries stay in one place.",
    ]);
    let rounding = add(&[
        "-t",
        "risk_module",
        "--path",
        "src/shop/pricing.py",
        "Discount rounding in pricing is fragile; a second reviewer signs off every change.",
    ]);
    (
        repo,
        Stored {
            cents,
            storage,
            rounding,
        },
    )
}

/// `cairn ui --no-open`: the one-time log-in address it prints.
pub(crate) fn log_in_address(repo: &TestRepo) -> String {
    let url = repo.cairn_ok(&["ui", "--no-open"]).trim().to_string();
    assert!(
        url.starts_with("http://127.0.0.1:") && url.contains("/ui/login?code="),
        "{url}"
    );
    url
}

pub(crate) fn code_of(url: &str) -> String {
    url.split_once("code=").unwrap().1.to_string()
}

/// A client that shows redirects instead of following them and keeps no cookies.
pub(crate) fn http() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
}

pub(crate) fn base(daemon: &Daemon) -> String {
    format!("http://127.0.0.1:{}", daemon.port)
}

/// GETs `path` from the daemon with these headers.
pub(crate) async fn fetch(
    daemon: &Daemon,
    path: &str,
    headers: &[(&str, &str)],
) -> reqwest::Response {
    let mut request = http().get(format!("{}{path}", base(daemon)));
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    request.send().await.unwrap()
}

/// Logs in with `code`; the session cookie (`name=value`) and its attributes.
pub(crate) async fn log_in(daemon: &Daemon, code: &str) -> (String, Vec<String>) {
    let response = fetch(daemon, &format!("/ui/login?code={code}"), &[]).await;
    assert_eq!(response.status(), 303);
    assert_eq!(response.headers()["location"], "/ui/");
    let set = response.headers()["set-cookie"]
        .to_str()
        .unwrap()
        .to_string();
    let mut parts = set.split(';').map(|p| p.trim().to_string());
    let cookie = parts.next().unwrap();
    (cookie, parts.collect())
}

pub(crate) async fn get_with(daemon: &Daemon, path: &str, cookie: Option<&str>) -> (u16, String) {
    let headers: Vec<(&str, &str)> = cookie.map(|c| ("cookie", c)).into_iter().collect();
    let response = fetch(daemon, path, &headers).await;
    let status = response.status().as_u16();
    (status, response.text().await.unwrap())
}

/// POSTs a form body to `path` with the session cookie and an `Origin`: the status.
pub(crate) async fn post_form(
    daemon: &Daemon,
    path: &str,
    cookie: &str,
    origin: &str,
    body: &str,
) -> u16 {
    post_page(daemon, path, cookie, origin, body).await.0
}

/// POSTs a form body to `path` with the session cookie and an `Origin`: status and page.
pub(crate) async fn post_page(
    daemon: &Daemon,
    path: &str,
    cookie: &str,
    origin: &str,
    body: &str,
) -> (u16, String) {
    let response = http()
        .post(format!("{}{path}", base(daemon)))
        .header("cookie", cookie)
        .header("origin", origin)
        .header("content-type", "application/x-www-form-urlencoded")
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    (status, response.text().await.unwrap())
}

/// The CSRF token a confirmation page's form carries.
pub(crate) fn csrf_in(page: &str) -> String {
    let start = page
        .find(r#"name="csrf" value=""#)
        .unwrap_or_else(|| panic!("no CSRF field in {page}"))
        + r#"name="csrf" value=""#.len();
    page[start..].split('"').next().unwrap().to_string()
}

/// Whether `cairn memory show ID` still finds the memory.
pub(crate) fn exists(repo: &TestRepo, id: &str) -> bool {
    let output = repo.cairn(&["memory", "show", id]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success() || stderr.contains("no memory with id"),
        "{stderr}"
    );
    output.status.success()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_one_time_code_logs_in_once_before_it_expires_and_nothing_opens_without_it() {
    let (repo, stored) = repository_with_memories();
    let daemon = Daemon::start(&repo);
    let late = code_of(&log_in_address(&repo));
    let issued = Instant::now();

    let memory = format!("/ui/memories/{}", stored.cents);
    for path in [
        "/ui",
        "/ui/",
        "/ui/style.css",
        memory.as_str(),
        "/ui/?q=cents",
    ] {
        let (status, body) = get_with(&daemon, path, None).await;
        assert_eq!(status, 401, "{path}");
        assert!(body.contains("cairn ui"), "{path}: {body}");
        assert!(!body.contains("Cart totals"), "{path}: {body}");
    }
    let wrong = fetch(&daemon, &format!("/ui/login?code={}", "0".repeat(64)), &[]).await;
    assert_eq!(wrong.status(), 401);
    assert!(wrong.headers().get("set-cookie").is_none());
    let (status, _) = get_with(&daemon, "/ui/login", None).await;
    assert_eq!(status, 401, "no code at all");

    let code = code_of(&log_in_address(&repo));
    let (cookie, attributes) = log_in(&daemon, &code).await;
    assert!(cookie.starts_with("cairn_ui_"), "{cookie}");
    for wanted in ["HttpOnly", "SameSite=Strict", "Path=/ui"] {
        assert!(
            attributes.iter().any(|a| a == wanted),
            "{wanted} missing from {attributes:?}"
        );
    }
    assert!(
        !attributes.iter().any(|a| a.starts_with("Domain")),
        "{attributes:?}"
    );
    let again = fetch(&daemon, &format!("/ui/login?code={code}"), &[]).await;
    assert_eq!(again.status(), 401, "a used code");
    assert!(again.headers().get("set-cookie").is_none());

    let (status, page) = get_with(&daemon, "/ui/", Some(&cookie)).await;
    assert_eq!(status, 200, "{page}");
    assert!(page.contains("Cart totals are cents"), "{page}");
    let (status, css) = get_with(&daemon, "/ui/style.css", Some(&cookie)).await;
    assert_eq!(status, 200);
    assert!(css.contains("font-family"), "{css}");
    let (name, _) = cookie.split_once('=').unwrap();
    let forged = format!("{name}={}", "a".repeat(64));
    let (status, _) = get_with(&daemon, "/ui/", Some(&forged)).await;
    assert_eq!(status, 401, "a made-up session");

    // The first code, never used, is refused once its minute is over.
    let left = (CODE_LIFETIME + Duration::from_secs(2)).saturating_sub(issued.elapsed());
    tokio::time::sleep(left).await;
    let expired = fetch(&daemon, &format!("/ui/login?code={late}"), &[]).await;
    assert_eq!(expired.status(), 401, "an expired code");
    assert!(daemon.stop().success());
}

#[tokio::test(flavor = "multi_thread")]
async fn two_daemons_name_their_cookies_apart_and_each_reads_only_its_own() {
    let (one, _) = repository_with_memories();
    let two = TestRepo::with_fixture("mixed");
    two.index();
    let (first, second) = (Daemon::start(&one), Daemon::start(&two));
    let (cookie_one, _) = log_in(&first, &code_of(&log_in_address(&one))).await;
    let (cookie_two, _) = log_in(&second, &code_of(&log_in_address(&two))).await;
    let name_of = |cookie: &str| cookie.split_once('=').unwrap().0.to_string();
    let value_of = |cookie: &str| cookie.split_once('=').unwrap().1.to_string();
    assert_ne!(name_of(&cookie_one), name_of(&cookie_two));

    // A browser sends both `127.0.0.1` cookies to either port: each page keeps its login.
    let both = format!("{cookie_one}; {cookie_two}");
    let (status, page) = get_with(&first, "/ui/", Some(&both)).await;
    assert_eq!(status, 200, "{page}");
    assert!(page.contains("Cart totals are cents"), "{page}");
    let (status, page) = get_with(&second, "/ui/", Some(&both)).await;
    assert_eq!(status, 200, "{page}");
    assert!(!page.contains("Cart totals are cents"), "{page}");

    // A daemon reads no cookie but its own: not the other's, not its own session under the
    // other's name or the old shared name.
    for cookie in [
        cookie_two.clone(),
        format!("{}={}", name_of(&cookie_two), value_of(&cookie_one)),
        format!("cairn_ui={}", value_of(&cookie_one)),
    ] {
        let (status, _) = get_with(&first, "/ui/", Some(&cookie)).await;
        assert_eq!(status, 401, "{cookie}");
    }
    assert!(first.stop().success());
    assert!(second.stop().success());
}

#[tokio::test(flavor = "multi_thread")]
async fn the_session_cookie_opens_only_the_page_and_hosts_and_origins_are_checked() {
    let (repo, _) = repository_with_memories();
    let daemon = Daemon::start(&repo);
    let (cookie, _) = log_in(&daemon, &code_of(&log_in_address(&repo))).await;
    let with_cookie = |method: reqwest::Method, path: &str| {
        http()
            .request(method, format!("{}{path}", base(&daemon)))
            .header("cookie", cookie.clone())
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
    };
    let initialize = json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "probe", "version": "1"}}
    });
    let mcp = with_cookie(reqwest::Method::POST, "/mcp")
        .body(initialize.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(mcp.status(), 401);
    for (method, path) in [
        (reqwest::Method::POST, "/index"),
        (reqwest::Method::GET, "/health"),
        (reqwest::Method::GET, "/context"),
        (reqwest::Method::POST, "/hook"),
        (reqwest::Method::POST, "/login-code"),
    ] {
        let status = with_cookie(method, path).send().await.unwrap().status();
        assert_eq!(status, 401, "{path} with only the page's cookie");
    }
    // The bearer token still opens the API.
    let bearer = format!("Bearer {}", daemon.token);
    let health = fetch(&daemon, "/health", &[("authorization", &bearer)]).await;
    assert_eq!(health.status(), 200);

    let evil = "http://evil.example";
    let foreign = fetch(&daemon, "/ui/", &[("cookie", &cookie), ("origin", evil)]).await;
    assert_eq!(foreign.status(), 403);
    let rebound = fetch(
        &daemon,
        "/ui/",
        &[("cookie", &cookie), ("host", "evil.example")],
    )
    .await;
    assert_eq!(rebound.status(), 403);
    let code = code_of(&log_in_address(&repo));
    let login = format!("/ui/login?code={code}");
    let foreign_login = fetch(&daemon, &login, &[("origin", evil)]).await;
    assert_eq!(foreign_login.status(), 403);
    assert!(foreign_login.headers().get("set-cookie").is_none());
    // Pages say what they may load, and are not cached or framed.
    let page = fetch(&daemon, "/ui/", &[("cookie", &cookie)]).await;
    assert_eq!(page.status(), 200);
    let headers = page.headers();
    assert_eq!(headers["cache-control"], "no-store");
    assert_eq!(headers["x-frame-options"], "DENY");
    // A form's POST must carry its Origin (`no-referrer` would make it `null`).
    assert_eq!(headers["referrer-policy"], "same-origin");
    let policy = headers["content-security-policy"].to_str().unwrap();
    assert!(policy.contains("default-src 'none'") && policy.contains("frame-ancestors 'none'"));
    assert!(daemon.stop().success());
}

#[tokio::test(flavor = "multi_thread")]
async fn forgetting_needs_the_sessions_csrf_token_and_a_post() {
    let (repo, stored) = repository_with_memories();
    let daemon = Daemon::start(&repo);
    let (cookie, _) = log_in(&daemon, &code_of(&log_in_address(&repo))).await;
    let (other, _) = log_in(&daemon, &code_of(&log_in_address(&repo))).await;
    let forget = format!("/ui/memories/{}/forget", stored.rounding);

    let (status, confirm) = get_with(&daemon, &forget, Some(&cookie)).await;
    assert_eq!(status, 200, "{confirm}");
    assert!(confirm.contains("Discount rounding"), "{confirm}");
    let csrf = csrf_in(&confirm);
    let (_, others_page) = get_with(&daemon, &forget, Some(&other)).await;
    let others_csrf = csrf_in(&others_page);
    assert_ne!(csrf, others_csrf, "each session has its own token");
    assert!(exists(&repo, &stored.rounding), "a GET changes nothing");

    let origin = base(&daemon);
    for body in [
        String::new(),
        "csrf=".to_string(),
        format!("csrf={}", "0".repeat(csrf.len())),
        format!("csrf={others_csrf}"),
        format!("csrf={}", &csrf[..csrf.len() - 1]),
    ] {
        let status = post_form(&daemon, &forget, &cookie, &origin, &body).await;
        assert_eq!(status, 403, "{body:?}");
    }
    let status = post_form(
        &daemon,
        &forget,
        &cookie,
        "http://evil.example",
        &format!("csrf={csrf}"),
    )
    .await;
    assert_eq!(status, 403, "a foreign Origin with the right token");
    let status = post_form(
        &daemon,
        &forget,
        "cairn_ui=none",
        &origin,
        &format!("csrf={csrf}"),
    )
    .await;
    assert_eq!(status, 401, "the right token without the session");
    assert!(exists(&repo, &stored.rounding), "nothing was forgotten");

    let status = post_form(&daemon, &forget, &cookie, &origin, &format!("csrf={csrf}")).await;
    assert_eq!(status, 200);
    assert!(
        !exists(&repo, &stored.rounding),
        "forgotten through the page"
    );
    assert!(exists(&repo, &stored.cents) && exists(&repo, &stored.storage));
    let (status, _) = get_with(
        &daemon,
        &format!("/ui/memories/{}", stored.rounding),
        Some(&cookie),
    )
    .await;
    assert_eq!(status, 404);
    assert!(daemon.stop().success());
}

/// The `mixed` fixture, indexed, with four reviews recorded through `cairn record-review`:
/// `naming` flagged four times and rejected three (75 %), `security` flagged twice and
/// implemented both times.
fn repository_with_reviews() -> TestRepo {
    let repo = TestRepo::with_fixture("mixed");
    repo.index();
    let naming = |disposition: &str, message: &str, reason: &str| {
        json!({"category": "naming", "file": "src/shop/cart.py", "line": 9,
               "message": message, "disposition": disposition, "reason": reason})
    };
    let security = json!({"category": "security", "file": "src/shop/storage.py", "line": 3,
                          "message": "Escape the cart id before it reaches the query",
                          "disposition": "implemented"});
    let reviews = [
        (
            "PR-1",
            vec![
                naming(
                    "rejected",
                    "Cart should be ShoppingBasket",
                    "Cart is what the business says",
                ),
                security.clone(),
            ],
        ),
        (
            "PR-2",
            vec![naming(
                "rejected",
                "qty should be quantity",
                "qty is the accepted short form",
            )],
        ),
        (
            "PR-3",
            vec![naming("implemented", "tmp says nothing", ""), security],
        ),
        (
            "PR-4",
            vec![naming(
                "rejected",
                "GiftCart should be PresentCart",
                "GiftCart is the product's name",
            )],
        ),
    ];
    let file = tempfile::NamedTempFile::new().unwrap();
    for (id, findings) in reviews {
        let outcome = json!({"verdict": "comment", "author": "bob", "reviewer": "alice",
                             "review_id": id, "findings": findings});
        std::fs::write(file.path(), outcome.to_string()).unwrap();
        repo.cairn_ok(&["record-review", file.path().to_str().unwrap()]);
    }
    repo
}

/// The part of `page` from `from` to the next `to` after it.
pub(crate) fn part<'a>(page: &'a str, from: &str, to: &str) -> &'a str {
    let start = page
        .find(from)
        .unwrap_or_else(|| panic!("no {from} in {page}"));
    let end = start
        + page[start..]
            .find(to)
            .unwrap_or_else(|| panic!("no {to} after {from}"));
    &page[start..end]
}

/// The part of `page` from the `<svg` with `class` to its `</svg>`.
fn svg_in<'a>(page: &'a str, class: &str) -> &'a str {
    part(page, &format!(r#"<svg class="{class}""#), "</svg>")
}

#[tokio::test(flavor = "multi_thread")]
async fn the_reviews_and_code_pages_show_rates_rankings_and_neighbourhoods() {
    let repo = repository_with_reviews();
    let daemon = Daemon::start(&repo);
    let symbol = "/ui/symbol?id=src%2Fshop%2Fpricing.py%3A%3Aprice_of";
    for path in ["/ui/reviews", "/ui/code", symbol] {
        let (status, body) = get_with(&daemon, path, None).await;
        assert_eq!(status, 401, "{path}");
        assert!(body.contains("cairn ui"), "{path}: {body}");
        assert!(
            !body.contains("naming") && !body.contains("price_of"),
            "{path}: {body}"
        );
    }
    let status = post_form(
        &daemon,
        "/ui/reviews/addressed",
        "cairn_ui=none",
        &base(&daemon),
        "category=naming",
    )
    .await;
    assert_eq!(status, 401, "marking without a session");
    let (cookie, _) = log_in(&daemon, &code_of(&log_in_address(&repo))).await;

    // Reviews: each category's rate with its sample, the chart, the patterns, the reviews.
    let (status, page) = get_with(&daemon, "/ui/reviews", Some(&cookie)).await;
    assert_eq!(status, 200, "{page}");
    for text in [
        r#"<tr class="high" data-category="naming">"#,
        "<strong>75%</strong> <span class=\"sample\">(3 of 4)</span>",
        "<strong>0%</strong> <span class=\"sample\">(0 of 2)</span>",
        "high rejection",
        "4 recorded reviews",
        "Cart is what the business says",
        "PR-4",
        "GiftCart should be PresentCart",
        r#"<a href="/ui/reviews" aria-current="page">Reviews</a>"#,
        r#"<a href="/ui/code">Code</a>"#,
    ] {
        assert!(page.contains(text), "{text}: {page}");
    }
    assert!(!page.contains(r#"<tr class="high" data-category="security">"#));
    // Four reviews, four periods: `naming` has a point in each, `security` in two.
    let chart = svg_in(&page, "chart");
    assert_eq!(chart.matches("<circle").count(), 6, "{chart}");
    assert_eq!(chart.matches("<polyline").count(), 2, "{chart}");
    assert!(
        chart.contains("naming, period 2: 1 of 1 rejected (100%)"),
        "{chart}"
    );
    assert!(
        chart.contains("naming, period 3: 0 of 1 rejected (0%)"),
        "{chart}"
    );

    // Marking the patterns addressed needs the session's CSRF token.
    let origin = base(&daemon);
    let status = post_form(
        &daemon,
        "/ui/reviews/addressed",
        &cookie,
        &origin,
        "category=naming&csrf=0",
    )
    .await;
    assert_eq!(status, 403);
    let (_, still) = get_with(&daemon, "/ui/reviews", Some(&cookie)).await;
    assert!(still.contains("Mark addressed"), "{still}");
    let body = format!("category=naming&csrf={}", csrf_in(&page));
    let status = post_form(&daemon, "/ui/reviews/addressed", &cookie, &origin, &body).await;
    assert_eq!(status, 200);
    let (_, after) = get_with(&daemon, "/ui/reviews", Some(&cookie)).await;
    assert!(!after.contains("Mark addressed"), "{after}");
    let rules = repo.cairn_ok(&["rules", "--json"]);
    let rules: Value = serde_json::from_str(&rules).unwrap();
    assert!(
        rules[0]["memories"].is_null(),
        "addressed for the CLI too: {rules}"
    );

    // Code: the ranked files and symbols with their score's parts.
    let (status, page) = get_with(&daemon, "/ui/code", Some(&cookie)).await;
    assert_eq!(status, 200, "{page}");
    for text in [
        "Top files",
        "Top symbols",
        "centrality",
        "src/shop/cart.py",
        symbol,
    ] {
        assert!(page.contains(text), "{text}: {page}");
    }

    // A symbol's page: what `cairn expand` answers, its neighbourhood drawn, the memories
    // anchored to it.
    let anchored: Value = serde_json::from_str(&repo.cairn_ok(&[
        "memory",
        "add",
        "--json",
        "-t",
        "decision",
        "--symbol",
        "src/shop/pricing.py::price_of",
        "Prices include <b>tax</b> at TAX_RATE; callers never add it again.",
    ]))
    .unwrap();
    let anchored = anchored["id"].as_str().unwrap();
    let expanded: Value = serde_json::from_str(&repo.cairn_ok(&[
        "expand",
        "src/shop/pricing.py::price_of",
        "--json",
    ]))
    .unwrap();
    let callers = expanded["callers"].as_array().unwrap().len();
    let callees = expanded["callees"].as_array().unwrap().len();
    assert!(callers >= 1, "{expanded}");
    let (status, page) = get_with(&daemon, symbol, Some(&cookie)).await;
    assert_eq!(status, 200, "{page}");
    for text in [
        "src/shop/cart.py::Cart.total",
        "Blast radius",
        "Price of one item with tax.",
    ] {
        assert!(
            page.to_lowercase().contains(&text.to_lowercase()),
            "{text}: {page}"
        );
    }
    assert!(
        page.contains(&format!(
            r#"<a href="/ui/memories/{anchored}">Prices include &lt;b&gt;tax&lt;/b&gt;"#
        )),
        "{page}"
    );
    let (_, memory_page) =
        get_with(&daemon, &format!("/ui/memories/{anchored}"), Some(&cookie)).await;
    assert!(
        memory_page.contains(r#"<a href="/ui/symbol?id=src%2Fshop%2Fpricing.py%3A%3Aprice_of">"#),
        "{memory_page}"
    );
    let graph = svg_in(&page, "graph wide");
    assert_eq!(
        graph.matches(r#"<g class="node"#).count(),
        1 + callers.min(12) + callees.min(12),
        "{graph}"
    );
    assert!(
        graph.contains(r#"<a href="/ui/symbol?id=src%2Fshop%2Fcart.py%3A%3ACart.total">"#),
        "{graph}"
    );
    // A memory anchored to a file links to the file's page.
    let (status, file_page) =
        get_with(&daemon, "/ui/symbol?id=src/shop/cart.py", Some(&cookie)).await;
    assert_eq!(status, 200, "{file_page}");

    // A method's page lists the calls of its name on receivers of unknown type apart, each
    // with its evidence and a link.
    repo.write(
        "src/shop/report.py",
        "def summary(qs, label):\n    return qs.count(), label.count(\"-\")\n",
    );
    repo.index();
    let (status, count_page) = get_with(
        &daemon,
        "/ui/symbol?id=src/shop/queryset.py::QuerySet.count",
        Some(&cookie),
    )
    .await;
    assert_eq!(status, 200, "{count_page}");
    let possible = part(&count_page, "Possible callers", "</section>");
    assert!(
        possible.contains(r#"<a href="/ui/symbol?id=src%2Fshop%2Freport.py%3A%3Asummary">"#)
            && possible.contains("qs.count()")
            && possible.contains("receiver named like QuerySet")
            && possible.contains("label.count()"),
        "{possible}"
    );

    // Unknown, escaping and hostile ids: a clear 404, the id escaped.
    for (id, says) in [
        ("src%2Fshop%2Fpricing.py%3A%3Anothing", "no file or symbol"),
        ("..%2F..%2Fetc%2Fpasswd", "outside the repository"),
        ("%2Fetc%2Fpasswd", "outside the repository"),
        ("", "empty"),
        (
            "%3Cscript%3Ealert(1)%3C%2Fscript%3E",
            "&lt;script&gt;alert(1)&lt;/script&gt;",
        ),
    ] {
        let (status, page) = get_with(&daemon, &format!("/ui/symbol?id={id}"), Some(&cookie)).await;
        assert_eq!(status, 404, "{id}: {page}");
        assert!(
            page.contains("Not found") && page.contains(says),
            "{id}: {page}"
        );
        assert!(!page.contains("<script>"), "{id}: {page}");
    }
    assert!(daemon.stop().success());
}

/// A program on PATH, or the test fails saying what to install.
pub(crate) fn required(program: &str) -> PathBuf {
    std::env::var_os("PATH")
        .iter()
        .flat_map(std::env::split_paths)
        .map(|dir| dir.join(program))
        .find(|path| path.is_file())
        .unwrap_or_else(|| {
            panic!(
                "`{program}` is not installed: the browser test needs Debian's chromium and \
                 chromium-driver (apt-get install chromium chromium-driver)"
            )
        })
}

/// A process ended when the test ends, however it ends.
pub(crate) struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The daemon `cairn ui` started (not this test's child): stopped with SIGTERM at the end.
pub(crate) struct StartedDaemon<'a>(pub(crate) &'a Path);

impl Drop for StartedDaemon<'_> {
    fn drop(&mut self) {
        let Some(record) = cairn::running::DaemonRecord::running(self.0) else {
            return;
        };
        let _ = Command::new("kill")
            .args(["-TERM", &record.pid.to_string()])
            .status();
        let started = Instant::now();
        while cairn::running::DaemonRecord::running(self.0).is_some() {
            if started.elapsed() > DEADLINE {
                let _ = Command::new("kill")
                    .args(["-KILL", &record.pid.to_string()])
                    .status();
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

pub(crate) fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// chromedriver on a free loopback port, once it answers.
pub(crate) async fn chromedriver() -> (Killed, String) {
    let driver = required("chromedriver");
    let port = free_port();
    let child = Command::new(driver)
        .arg(format!("--port={port}"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut driver = Killed(child);
    let url = format!("http://127.0.0.1:{port}");
    let started = Instant::now();
    loop {
        if let Ok(response) = reqwest::get(format!("{url}/status")).await
            && response.status() == 200
        {
            return (driver, url);
        }
        if let Some(status) = driver.0.try_wait().unwrap() {
            panic!("chromedriver exited: {status}");
        }
        assert!(started.elapsed() < DEADLINE, "chromedriver did not answer");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A headless Chromium session with a fresh profile, at 1280×800.
pub(crate) async fn browser(driver: &str, profile: &Path) -> Client {
    let chromium = required("chromium");
    let mut capabilities = serde_json::Map::new();
    capabilities.insert(
        "goog:chromeOptions".to_string(),
        json!({
            "binary": chromium,
            "args": [
                "--headless=new",
                "--no-sandbox",
                "--disable-dev-shm-usage",
                "--disable-gpu",
                "--no-first-run",
                "--window-size=1280,800",
                format!("--user-data-dir={}", profile.display()),
            ],
        }),
    );
    let connector = hyper_util::client::legacy::connect::HttpConnector::new();
    ClientBuilder::new(connector)
        .capabilities(capabilities)
        .connect(driver)
        .await
        .expect("a Chromium session through chromedriver")
}

/// The element `locator` finds once the page shows it; on failure, what the page said.
pub(crate) async fn wait_for(
    client: &Client,
    locator: Locator<'_>,
) -> fantoccini::elements::Element {
    let what = format!("{locator:?}");
    match client.wait().at_most(DEADLINE).for_element(locator).await {
        Ok(element) => element,
        Err(e) => {
            let page = client.source().await.unwrap_or_default();
            panic!("no {what} ({e}) on {page}")
        }
    }
}

pub(crate) async fn find(client: &Client, css: &str) -> fantoccini::elements::Element {
    wait_for(client, Locator::Css(css)).await
}

/// Waits until the browser's address is one `arrived` accepts.
pub(crate) async fn arrive(client: &Client, what: &str, arrived: impl Fn(&str) -> bool) {
    let started = Instant::now();
    while !arrived(client.current_url().await.unwrap().as_str()) {
        assert!(started.elapsed() < DEADLINE, "gave up waiting for {what}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

pub(crate) async fn body_text(client: &Client) -> String {
    find(client, "body").await.text().await.unwrap()
}

/// Saves a screenshot as `name`.png in CAIRN_UI_SCREENSHOTS when it is set; checks it is a PNG.
pub(crate) async fn screenshot(client: &Client, name: &str) {
    let png = client.screenshot().await.unwrap();
    assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"), "a PNG screenshot");
    if let Some(dir) = std::env::var_os("CAIRN_UI_SCREENSHOTS") {
        let dir = PathBuf::from(dir);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(format!("{name}.png")), png).unwrap();
    }
}

/// Types `text` into `field` and presses Enter; waits for an address holding `arrived`.
pub(crate) async fn submit(
    client: &Client,
    field: &fantoccini::elements::Element,
    text: &str,
    arrived: &str,
) {
    field.send_keys(&format!("{text}\u{E007}")).await.unwrap();
    arrive(client, arrived, |url| url.contains(arrived)).await;
}

/// Follows the link with this text.
pub(crate) async fn click_link(client: &Client, text: &str) {
    client
        .find(Locator::LinkText(text))
        .await
        .unwrap_or_else(|e| panic!("no link {text}: {e}"))
        .click()
        .await
        .unwrap();
}

/// Records `outcome` (JSON) through `cairn rules --record`: its output.
fn record_change(repo: &TestRepo, outcome: &Value) -> String {
    let file = repo.data_dir().join("change.json");
    std::fs::write(&file, outcome.to_string()).unwrap();
    repo.cairn_ok(&["rules", "--record", file.to_str().unwrap()])
}

/// The part of `page` from the table row marked `data-NAME="VALUE"` to its end.
fn row_of<'a>(page: &'a str, name: &str, value: &str) -> &'a str {
    part(page, &format!(r#"data-{name}="{value}""#), "</tr>")
}

#[tokio::test(flavor = "multi_thread")]
async fn the_reviews_page_shows_each_authors_record_and_what_a_guideline_change_did() {
    let repo = repository_with_reviews();
    let rules: Value = serde_json::from_str(&repo.cairn_ok(&["rules", "--json"])).unwrap();
    let naming = crate::support::rule_of(&rules, "naming");
    let proposal = json!({"file": "CLAUDE.md", "section": "Naming",
        "current_text": "Spell names out.", "proposed_text": "Use the domain's words.",
        "rationale": "Three naming findings were rejected.", "category": "naming",
        "memory_ids": naming["memories"], "confidence": 0.8});
    let recorded = record_change(&repo, &proposal);
    let id = recorded
        .split_whitespace()
        .find(|w| w.starts_with("g_"))
        .unwrap_or_else(|| panic!("{recorded}"))
        .to_string();
    record_change(
        &repo,
        &json!({"id": id, "outcome": "accepted", "by": "alice"}),
    );
    // After the change, carol's review has its naming finding implemented.
    let file = repo.data_dir().join("review.json");
    let review = json!({"verdict": "approve", "author": "carol", "review_id": "PR-5",
        "findings": [{"category": "naming", "file": "src/shop/cart.py", "line": 2,
                      "message": "tmp2 says nothing", "disposition": "implemented"}]});
    std::fs::write(&file, review.to_string()).unwrap();
    repo.cairn_ok(&["record-review", file.to_str().unwrap()]);

    let daemon = Daemon::start(&repo);
    let (cookie, _) = log_in(&daemon, &code_of(&log_in_address(&repo))).await;
    let (status, page) = get_with(&daemon, "/ui/reviews", Some(&cookie)).await;
    assert_eq!(status, 200, "{page}");

    // The change: the category's rate in the four reviews before it, and in the one after.
    let change = row_of(&page, "change", &id);
    for text in ["naming", "CLAUDE.md", "§ Naming", "accepted"] {
        assert!(change.contains(text), "{text}: {change}");
    }
    assert!(
        change.contains(
            r#"<td class="number before"><strong>75%</strong> <span class="sample">(3 of 4 in 4 reviews)</span>"#
        ),
        "{change}"
    );
    assert!(
        change.contains(
            r#"<td class="number after"><strong>0%</strong> <span class="sample">(0 of 1 in 1 review)</span>"#
        ),
        "{change}"
    );

    // Authors, most reviewed first, each linking to their developer view: bob's four reviews
    // hold six findings (naming four times, security twice), three of them rejected.
    let bob = row_of(&page, "author", "bob");
    let cells: Vec<&str> = bob
        .split(r#"<td class="number">"#)
        .skip(1)
        .map(|cell| cell.split('<').next().unwrap())
        .collect();
    assert_eq!(cells, ["4", "0", "0", "6", "3", "3", "0"], "{bob}");
    assert!(bob.contains(r#"href="/ui/?developer=bob""#), "{bob}");
    assert!(
        bob.contains(
            r#"<code>naming</code> <span class="sample">×4</span>, <code>security</code>"#
        ),
        "{bob}"
    );
    let carol = row_of(&page, "author", "carol");
    assert!(
        carol.contains(r#"<td class="number">1</td><td class="number">1</td>"#),
        "{carol}"
    );
    assert!(
        page.find(r#"data-author="bob""#) < page.find(r#"data-author="carol""#),
        "most reviewed first"
    );
    // The developer view it links to answers.
    let (status, view) = get_with(&daemon, "/ui/?developer=bob", Some(&cookie)).await;
    assert_eq!(status, 200, "{view}");
    assert!(daemon.stop().success());
}

/// The health page makes `cairn doctor`'s checks again on each visit, a broken approval
/// setting among them, and needs the session like every page.
#[tokio::test(flavor = "multi_thread")]
async fn the_health_page_shows_doctors_checks_as_they_are_now() {
    let repo = TestRepo::with_fixture("mixed");
    repo.index();
    let daemon = Daemon::start(&repo);
    let (status, body) = get_with(&daemon, "/ui/health", None).await;
    assert_eq!(status, 401);
    assert!(!body.contains("data files"), "{body}");
    let (cookie, _) = log_in(&daemon, &code_of(&log_in_address(&repo))).await;

    // A data file others could read is shown, not narrowed (a visit changes nothing), until
    // `cairn doctor` narrows it.
    let exposed = repo.data_dir().join("exposed.txt");
    std::fs::write(&exposed, "x").unwrap();
    std::fs::set_permissions(
        &exposed,
        std::os::unix::fs::PermissionsExt::from_mode(0o644),
    )
    .unwrap();
    let (status, page) = get_with(&daemon, "/ui/health", Some(&cookie)).await;
    assert_eq!(status, 200, "{page}");
    let data = row_of(&page, "check", "data files");
    assert!(
        page.contains(r#"<tr class="problem" data-check="data files""#)
            && data.contains("can be read by others")
            && data.contains("exposed.txt (644)"),
        "{data}"
    );
    let (_, again) = get_with(&daemon, "/ui/health", Some(&cookie)).await;
    assert!(
        row_of(&again, "check", "data files").contains("exposed.txt (644)"),
        "{again}"
    );
    repo.cairn(&["doctor"]);
    let (_, page) = get_with(&daemon, "/ui/health", Some(&cookie)).await;
    for (check, verdict) in [
        ("data files", "ok"),
        ("store", "ok"),
        ("index", "ok"),
        ("memories", "ok"),
        ("approval", "note"),
        ("daemon", "ok"),
    ] {
        let row = row_of(&page, "check", check);
        assert!(
            row.starts_with(&format!(r#"data-check="{check}""#))
                && page.contains(&format!(r#"<tr class="{verdict}" data-check="{check}""#)),
            "{check} should be {verdict}: {row}"
        );
    }
    assert!(
        row_of(&page, "check", "daemon").contains("answering this page"),
        "{page}"
    );
    assert!(page.contains("No problem found"), "{page}");
    assert!(page.contains(r#"<a href="/ui/health" aria-current="page">Health</a>"#));

    assert!(daemon.stop().success());

    // An approval setting that does not parse is a problem with its fix, on the page as in
    // the CLI's doctor; a list of types is what it gates.
    std::fs::write(
        repo.path().join("cairn.toml"),
        "[memory]\napproval = \"sometimes\"\n",
    )
    .unwrap();
    let daemon = Daemon::start(&repo);
    let (cookie, _) = log_in(&daemon, &code_of(&log_in_address(&repo))).await;
    let (_, page) = get_with(&daemon, "/ui/health", Some(&cookie)).await;
    let approval = row_of(&page, "check", "approval");
    assert!(
        page.contains(r#"<tr class="problem" data-check="approval""#)
            && approval.contains("sometimes")
            && approval.contains("refused until it is mended"),
        "{approval}"
    );
    assert!(page.contains("1 problem"), "{page}");
    assert!(daemon.stop().success());
    let doctor = String::from_utf8_lossy(&repo.cairn(&["doctor"]).stdout).into_owned();
    assert!(
        doctor.contains("approval:   PROBLEM") && doctor.contains("sometimes"),
        "{doctor}"
    );
    std::fs::write(
        repo.path().join("cairn.toml"),
        "[memory]\napproval = [\"decision\"]\n",
    )
    .unwrap();
    let doctor = repo.cairn_ok(&["doctor"]);
    assert!(
        doctor.contains("approval:   ok — required for decision; 0 waiting"),
        "{doctor}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_person_searches_opens_and_forgets_memories_in_chromium() {
    let (repo, stored) = repository_with_memories();
    // No daemon runs: `cairn ui` starts one.
    assert!(cairn::running::DaemonRecord::running(repo.data_dir()).is_none());
    let address = log_in_address(&repo);
    let _daemon = StartedDaemon(repo.data_dir());
    assert!(cairn::running::DaemonRecord::running(repo.data_dir()).is_some());
    let (_driver, driver_url) = chromedriver().await;
    let profile = tempfile::tempdir().unwrap();
    let client = browser(&driver_url, profile.path()).await;

    // The printed address logs in and lands on the search, its field focused.
    client.goto(&address).await.unwrap();
    let field = find(&client, "input#q").await;
    assert!(client.current_url().await.unwrap().path() == "/ui/");
    let focused = client.active_element().await.unwrap();
    assert_eq!(focused.attr("id").await.unwrap().as_deref(), Some("q"));

    // Typed and submitted from the keyboard.
    field.send_keys("cents refunds").await.unwrap();
    submit(&client, &field, "", "?q=cents").await;
    let results = body_text(&client).await;
    assert!(results.contains("Cart totals are cents"), "{results}");
    assert!(!results.contains("Discount rounding"), "{results}");
    screenshot(&client, "search").await;
    // The whole list, unfiltered, for a second look at the layout.
    client
        .goto(&format!("{}/ui/", origin_of(&address)))
        .await
        .unwrap();
    let everything = body_text(&client).await;
    for text in [
        "Cart totals are cents",
        "one save function",
        "Discount rounding",
    ] {
        assert!(everything.contains(text), "{text}: {everything}");
    }

    // A memory's page: text, type, anchors, provenance, validity.
    click_link(&client, "Cart totals are cents").await;
    find(&client, "p.content.lead").await;
    let page = body_text(&client).await;
    assert!(
        client
            .current_url()
            .await
            .unwrap()
            .path()
            .ends_with(&stored.cents)
    );
    for text in [
        "Cart totals are integers of cents, never floats",
        "decision",
        "src/shop/cart.py",
        "PR #42",
        "review",
        "valid from",
        &stored.cents,
    ] {
        assert!(page.contains(text), "{text}: {page}");
    }
    screenshot(&client, "memory").await;

    // Forgetting another one asks first, then removes it.
    client
        .goto(&format!("{}/ui/?q=rounding", origin_of(&address)))
        .await
        .unwrap();
    wait_for(
        &client,
        Locator::XPath("//a[contains(., 'Discount rounding')]"),
    )
    .await
    .click()
    .await
    .unwrap();
    find(&client, "form.danger button")
        .await
        .click()
        .await
        .unwrap();
    let confirm_button = find(&client, "form.confirm button").await;
    let confirm = body_text(&client).await;
    assert!(confirm.contains("Forget this memory?"), "{confirm}");
    assert!(exists(&repo, &stored.rounding), "asking changes nothing");
    confirm_button.click().await.unwrap();
    wait_for(&client, Locator::XPath("//h1[.='Forgotten']")).await;
    assert!(!exists(&repo, &stored.rounding), "gone for the CLI too");
    let search = repo.cairn_ok(&["memory", "search", "rounding"]);
    assert!(!search.contains(&stored.rounding), "{search}");
    assert!(exists(&repo, &stored.cents) && exists(&repo, &stored.storage));

    // At a phone's width the search still reads.
    client.set_window_size(390, 844).await.unwrap();
    client
        .goto(&format!("{}/ui/?q=storage", origin_of(&address)))
        .await
        .unwrap();
    let phone = body_text(&client).await;
    assert!(phone.contains("one save function"), "{phone}");
    screenshot(&client, "search-phone").await;
    client.close().await.unwrap();
}

/// `http://127.0.0.1:PORT` of an address.
pub(crate) fn origin_of(address: &str) -> String {
    let rest = address.strip_prefix("http://").unwrap();
    format!("http://{}", rest.split('/').next().unwrap())
}

#[tokio::test(flavor = "multi_thread")]
async fn a_person_reads_the_reviews_and_walks_a_symbols_neighbourhood_in_chromium() {
    let repo = repository_with_reviews();
    let address = log_in_address(&repo);
    let _daemon = StartedDaemon(repo.data_dir());
    let (_driver, driver_url) = chromedriver().await;
    let profile = tempfile::tempdir().unwrap();
    let client = browser(&driver_url, profile.path()).await;
    client.goto(&address).await.unwrap();
    find(&client, "input#q").await;

    // The header leads to the reviews.
    click_link(&client, "Reviews").await;
    find(&client, "svg.chart").await;
    let page = body_text(&client).await;
    for text in [
        "Rule effectiveness",
        "naming",
        "75% (3 of 4)",
        "0% (0 of 2)",
        "PR-4",
    ] {
        assert!(page.contains(text), "{text}: {page}");
    }
    let points = client
        .find_all(Locator::Css("svg.chart circle"))
        .await
        .unwrap();
    assert_eq!(points.len(), 6);
    screenshot(&client, "reviews").await;
    client
        .execute("window.scrollTo(0, document.body.scrollHeight)", Vec::new())
        .await
        .unwrap();
    find(&client, "form.inline button").await;
    screenshot(&client, "reviews-end").await;

    // The code page ranks files and symbols; a symbol opens its page.
    click_link(&client, "Code").await;
    find(&client, "table.ranked").await;
    screenshot(&client, "code").await;

    // The health page: doctor's checks, each with its verdict.
    click_link(&client, "Health").await;
    find(&client, r#"table.checks tr[data-check="daemon"]"#).await;
    let page = body_text(&client).await;
    assert!(page.contains("answering this page"), "{page}");
    screenshot(&client, "health").await;
    client
        .goto(&format!(
            "{}/ui/symbol?id=src/shop/pricing.py::price_of",
            origin_of(&address)
        ))
        .await
        .unwrap();
    find(&client, "svg.graph.wide").await;
    let page = body_text(&client).await;
    assert!(page.contains("src/shop/cart.py::Cart.total"), "{page}");

    // A caller's box in the drawing is a link to the caller's page.
    find(
        &client,
        r#"svg.graph.wide g[data-id="src/shop/cart.py::Cart.total"] a"#,
    )
    .await
    .click()
    .await
    .unwrap();
    arrive(&client, "the caller's page", |url| {
        url.contains("Cart.total")
    })
    .await;
    let centre = find(&client, "svg.graph.wide g.centre").await;
    assert_eq!(
        centre.attr("data-id").await.unwrap().as_deref(),
        Some("src/shop/cart.py::Cart.total")
    );
    let page = body_text(&client).await;
    assert!(
        page.contains("src/shop/pricing.py::price_of"),
        "a callee: {page}"
    );
    screenshot(&client, "symbol").await;

    // At a phone's width both still read.
    client.set_window_size(390, 844).await.unwrap();
    client
        .goto(&format!("{}/ui/reviews", origin_of(&address)))
        .await
        .unwrap();
    find(&client, "svg.chart").await;
    screenshot(&client, "reviews-phone").await;
    client
        .goto(&format!(
            "{}/ui/symbol?id=src/shop/cart.py::Cart.total",
            origin_of(&address)
        ))
        .await
        .unwrap();
    // The neighbourhood is drawn for the narrow screen: callers above, callees below.
    let narrow = find(&client, "svg.graph.narrow").await;
    assert!(narrow.is_displayed().await.unwrap());
    let wide = find(&client, "svg.graph.wide").await;
    assert!(!wide.is_displayed().await.unwrap());
    screenshot(&client, "symbol-phone").await;
    for path in [
        "/ui/reviews",
        "/ui/symbol?id=src/shop/cart.py::Cart.total",
        "/ui/code",
        "/ui/health",
    ] {
        client
            .goto(&format!("{}{path}", origin_of(&address)))
            .await
            .unwrap();
        find(&client, "main").await;
        assert_fits_the_width(&client, path).await;
    }
    screenshot(&client, "health-phone").await;
    client.close().await.unwrap();
}

/// The page does not scroll sideways as a whole: only tables and drawings scroll, in their
/// frames.
async fn assert_fits_the_width(client: &Client, path: &str) {
    let widths = client
        .execute(
            "return [document.documentElement.scrollWidth, window.innerWidth]",
            Vec::new(),
        )
        .await
        .unwrap();
    let widths: Vec<u64> = serde_json::from_value(widths).unwrap();
    assert!(
        widths[0] <= widths[1],
        "{path} is {} px wide in a {} px window",
        widths[0],
        widths[1]
    );
}
