//! The daemon's page for people at `/ui`: search the memories, read one, forget one. A browser
//! logs in with a one-time code that `cairn ui` asks for over the token-guarded API
//! (`POST /login-code`) and exchanges at `/ui/login` for a session cookie (`HttpOnly;
//! SameSite=Strict; Path=/ui`) named for this daemon ([`cookie_name`]); every other `/ui` route
//! needs that session, and every POST its CSRF token. The cookie opens nothing outside `/ui`.
//! Answers come from the same use cases as the MCP tools; the HTML is written in [`pages`].

pub mod approval;
pub mod attention;
pub mod chart;
pub mod code;
pub mod edit;
pub mod health;
pub mod pages;
pub mod reviews;
pub mod session;

use std::sync::Arc;

use axum::Router;
use axum::extract::{Extension, Form, Path, Query, Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::get;
use maud::Markup;

use crate::app::{
    AddressedRequest, AskError, Cairn, ContextRequest, ExpandRequest, Expanded, ForgetRequest,
    MemoryRequest, Registrations, RulesRequest, SearchRequest,
};
use crate::context::TargetError;
use crate::memory::MemoryError;
use crate::review::stats::is_high_rejection;
use pages::SearchForm;
pub use session::{Session, Sessions};

/// The start of every session cookie's name; [`cookie_name`] adds the daemon's own part.
pub(crate) const COOKIE_PREFIX: &str = "cairn_ui_";
/// How many memories a search shows.
const SEARCH_LIMIT: usize = 50;
/// The search's token budget (the most a search answers).
const SEARCH_TOKENS: usize = 16_000;
/// Periods of the reviews page's chart.
const TREND_PERIODS: usize = 8;
/// Latest reviews the reviews page lists.
const LATEST_REVIEWS: usize = 20;
/// Rejection patterns shown per high-rejection category.
const PATTERNS_SHOWN: usize = 10;
/// The token budget of the code pages' answers (their text is not shown; the lists are).
const CODE_TOKENS: usize = 16_000;
/// The stylesheet, embedded.
const STYLE: &str = include_str!("style.css");
/// What a page may load: its own stylesheet, nothing else; no frames, forms only to itself.
const POLICY: &str = "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

#[derive(Clone)]
struct Shared {
    cairn: Arc<Cairn>,
    /// The checks the health page makes besides cairn's own.
    registrations: Registrations,
    sessions: Arc<Sessions>,
    repository: String,
    /// This daemon's session cookie name ([`cookie_name`]).
    cookie: Arc<str>,
}

/// The session cookie's name for the daemon of the data directory `data_dir`. A browser
/// sends a `127.0.0.1` cookie to every port there, so each daemon (one per data directory,
/// which its lock holds) names its own: two repositories' pages keep their logins apart,
/// and a page reads only the cookie it set.
pub fn cookie_name(data_dir: &std::path::Path) -> String {
    let hash = xxhash_rust::xxh3::xxh3_64(data_dir.as_os_str().as_encoded_bytes());
    format!("{COOKIE_PREFIX}{hash:016x}")
}

/// The `/ui` routes. The caller adds the Host and Origin checks.
pub fn router(cairn: Arc<Cairn>, registrations: Registrations, sessions: Arc<Sessions>) -> Router {
    let repository = cairn.repo.root.file_name().map_or_else(
        || cairn.repo.root.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    let shared = Shared {
        cookie: cookie_name(&cairn.repo.data_dir).into(),
        cairn,
        registrations,
        sessions,
        repository,
    };
    let pages = Router::new()
        .route("/ui", get(|| async { Redirect::to("/ui/") }))
        .route("/ui/", get(home))
        .route("/ui/style.css", get(style))
        .route("/ui/memories/{id}", get(memory))
        .route("/ui/memories/{id}/forget", get(confirm_forget).post(forget))
        .route(
            "/ui/memories/{id}/edit",
            get(edit::edit_form)
                .post(edit::save_edit)
                .layer(axum::extract::DefaultBodyLimit::max(edit::FORM_BYTES)),
        )
        .route("/ui/attention", get(attention::attention))
        .route("/ui/reviews", get(reviews))
        .route("/ui/reviews/addressed", axum::routing::post(addressed))
        .route("/ui/code", get(code))
        .route("/ui/symbol", get(symbol))
        .route("/ui/health", get(health::health))
        .merge(approval::routes())
        .route_layer(axum::middleware::from_fn_with_state(
            shared.clone(),
            require_session,
        ));
    Router::new()
        .route("/ui/login", get(login))
        .merge(pages)
        .with_state(shared)
        .route_layer(axum::middleware::from_fn(protect))
}

/// Headers every `/ui` answer carries: not cached, not framed, nothing loaded from elsewhere.
async fn protect(request: Request, next: Next) -> Response {
    let mut response = next.run(request).await;
    let headers = response.headers_mut();
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(POLICY),
    );
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    // Not `no-referrer`: under it a browser sends `Origin: null` with a form's POST, which the
    // Origin check refuses.
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("same-origin"),
    );
    response
}

/// Lets a request through only with a live session's cookie; the session goes along with it.
async fn require_session(
    State(shared): State<Shared>,
    mut request: Request,
    next: Next,
) -> Response {
    let session =
        cookie_value(request.headers(), &shared.cookie).and_then(|id| shared.sessions.session(&id));
    let Some(session) = session else {
        return (StatusCode::UNAUTHORIZED, pages::log_in_first()).into_response();
    };
    request.extensions_mut().insert(session);
    next.run(request).await
}

/// The value of the cookie named `name` among the request's cookies.
fn cookie_value(headers: &axum::http::HeaderMap, name: &str) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|h| h.to_str().ok())
        .flat_map(|h| h.split(';'))
        .find_map(|pair| {
            let (key, value) = pair.trim().split_once('=')?;
            (key == name).then(|| value.to_string())
        })
}

#[derive(serde::Deserialize)]
struct LoginQuery {
    #[serde(default)]
    code: String,
}

/// Exchanges a one-time code for the session cookie, then shows the search.
async fn login(State(shared): State<Shared>, Query(query): Query<LoginQuery>) -> Response {
    match shared.sessions.exchange(query.code.trim()) {
        Ok(Some(logged_in)) => {
            let cookie = format!(
                "{}={}; HttpOnly; SameSite=Strict; Path=/ui; Max-Age={}",
                shared.cookie,
                logged_in.id,
                session::SESSION_LIFETIME.as_secs()
            );
            let mut response = Redirect::to("/ui/").into_response();
            response.headers_mut().insert(
                header::SET_COOKIE,
                HeaderValue::from_str(&cookie).expect("hex is a valid header value"),
            );
            response
        }
        Ok(None) => (
            StatusCode::UNAUTHORIZED,
            pages::problem(
                &shared.repository,
                "This log-in link does not work",
                "It was used already, has expired (after a minute) or is wrong. Run `cairn ui` again.",
            ),
        )
            .into_response(),
        Err(e) => failure(&shared, StatusCode::INTERNAL_SERVER_ERROR, &e.to_string()),
    }
}

async fn style() -> Response {
    ([(header::CONTENT_TYPE, "text/css; charset=utf-8")], STYLE).into_response()
}

/// The search: the same use case as `search_project_memory`.
async fn home(State(shared): State<Shared>, Query(form): Query<SearchForm>) -> Response {
    let request = SearchRequest {
        text: form.q.clone(),
        // A developer's memories only when one is chosen, as `search_developer_memory`.
        developer: nonempty(&form.developer).pop(),
        types: nonempty(&form.kind),
        paths: nonempty(&form.path),
        limit: Some(SEARCH_LIMIT),
        include_superseded: false,
        max_tokens: Some(SEARCH_TOKENS),
        // A person looking is not an assistant reading: "never read" stays true.
        browsing: true,
    };
    let waiting = shared
        .cairn
        .pending_memories()
        .await
        .map_or(0, |pending| pending.len());
    match shared.cairn.search_memories(request).await {
        Ok(answer) => html(pages::search(
            &shared.repository,
            &form,
            Ok(&answer),
            waiting,
        )),
        Err(e) => (
            status_of(&e),
            pages::search(&shared.repository, &form, Err(&e.to_string()), waiting),
        )
            .into_response(),
    }
}

/// A memory's page: what `cairn memory show` and `history` answer, and its supersession
/// chain.
async fn memory(State(shared): State<Shared>, Path(id): Path<String>) -> Response {
    let chain = match shared.cairn.supersession_chain(&id).await {
        Ok(chain) => chain,
        Err(e) => return failure(&shared, status_of(&e), &e.to_string()),
    };
    let memory = &chain.memories[chain.at];
    let verdicts = shared
        .cairn
        .memory_verdicts(&memory.id)
        .await
        .unwrap_or_default();
    html(pages::memory(
        &shared.repository,
        memory,
        verdicts,
        &chain.memories,
        chain.at,
    ))
}

/// Asks before forgetting (a GET: nothing changes).
async fn confirm_forget(
    State(shared): State<Shared>,
    Extension(session): Extension<Session>,
    Path(id): Path<String>,
) -> Response {
    match shared.cairn.show(MemoryRequest { id }).await {
        Ok(memory) => html(pages::confirm_forget(
            &shared.repository,
            &memory,
            &session.csrf,
        )),
        Err(e) => failure(&shared, status_of(&e), &e.to_string()),
    }
}

#[derive(serde::Deserialize)]
struct CsrfForm {
    #[serde(default)]
    csrf: String,
}

/// A 403 page unless a form's CSRF token is the session's (compared in constant time);
/// `outcome` says what did not happen.
fn csrf_refused(shared: &Shared, session: &Session, csrf: &str, outcome: &str) -> Option<Response> {
    (!session::same(csrf.as_bytes(), session.csrf.as_bytes())).then(|| {
        failure(
            shared,
            StatusCode::FORBIDDEN,
            &format!("The form's CSRF token is missing or wrong: {outcome}"),
        )
    })
}

/// Forgets a memory through the same use case as the `forget` tool, if the form carries the
/// session's CSRF token.
async fn forget(
    State(shared): State<Shared>,
    Extension(session): Extension<Session>,
    Path(id): Path<String>,
    Form(form): Form<CsrfForm>,
) -> Response {
    if let Some(refused) = csrf_refused(
        &shared,
        &session,
        &form.csrf,
        "nothing was forgotten. Open the memory again and retry.",
    ) {
        return refused;
    }
    let request = ForgetRequest {
        id: Some(id),
        ..ForgetRequest::default()
    };
    match shared.cairn.forget(request).await {
        Ok(forgotten) => {
            let id = forgotten
                .memories
                .first()
                .map(|m| m.id.clone())
                .unwrap_or_default();
            html(pages::forgotten(&shared.repository, &id))
        }
        Err(e) => failure(&shared, status_of(&e), &e.to_string()),
    }
}

/// Rule effectiveness, its trend, the patterns behind high rejection rates and the latest
/// reviews: the use cases behind `cairn rules` and `record_review`.
async fn reviews(State(shared): State<Shared>, Extension(session): Extension<Session>) -> Response {
    let cairn = &shared.cairn;
    let rules = match cairn.rules(RulesRequest::default()).await {
        Ok(rules) => rules,
        Err(e) => return failure(&shared, status_of(&e), &e.to_string()),
    };
    let history = match cairn.review_history(TREND_PERIODS, LATEST_REVIEWS).await {
        Ok(history) => history,
        Err(e) => return failure(&shared, status_of(&e), &e.to_string()),
    };
    let mut patterns = Vec::new();
    for stat in &rules.stats {
        if !is_high_rejection(stat, rules.min_sample, rules.min_rate) || stat.memories.is_empty() {
            continue;
        }
        let mut memories = Vec::new();
        for id in stat.memories.iter().take(PATTERNS_SHOWN) {
            // A pattern forgotten since the statistics were read is left out.
            if let Ok(memory) = cairn.show(MemoryRequest { id: id.clone() }).await {
                memories.push(memory);
            }
        }
        patterns.push(reviews::Patterns {
            category: stat.category.clone(),
            memories,
        });
    }
    html(reviews::reviews(
        &shared.repository,
        &rules,
        &history,
        &patterns,
        &session.csrf,
    ))
}

#[derive(serde::Deserialize)]
struct AddressedForm {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    category: String,
}

/// Marks a category's rejection patterns addressed (`cairn rules --addressed`), if the form
/// carries the session's CSRF token.
async fn addressed(
    State(shared): State<Shared>,
    Extension(session): Extension<Session>,
    Form(form): Form<AddressedForm>,
) -> Response {
    if let Some(refused) = csrf_refused(
        &shared,
        &session,
        &form.csrf,
        "nothing was marked. Open the reviews again and retry.",
    ) {
        return refused;
    }
    let request = AddressedRequest {
        category: form.category,
    };
    match shared.cairn.mark_addressed(request).await {
        Ok(done) => html(reviews::addressed(
            &shared.repository,
            &done.category,
            &done.ids,
        )),
        Err(e) => failure(&shared, status_of(&e), &e.to_string()),
    }
}

/// The ranked files and symbols of the context pack (`get_context`).
async fn code(State(shared): State<Shared>, Query(form): Query<code::FocusForm>) -> Response {
    let focus = form.focus.trim();
    let request = ContextRequest {
        focus: (!focus.is_empty()).then(|| focus.to_string()),
        max_tokens: Some(CODE_TOKENS),
    };
    match shared.cairn.context(request).await {
        Ok(report) => html(code::code(&shared.repository, &form, &report)),
        Err(e) => failure(&shared, status_of(&e), &e.to_string()),
    }
}

#[derive(serde::Deserialize)]
struct SymbolQuery {
    #[serde(default)]
    id: String,
}

/// A file's or symbol's page (`expand`); a memory id goes to the memory's page.
async fn symbol(State(shared): State<Shared>, Query(query): Query<SymbolQuery>) -> Response {
    // A person may read any memory, a pending one too: its page, not `expand`'s answer.
    if crate::memory::model::is_memory_id(query.id.trim()) {
        return Redirect::to(&pages::memory_url(query.id.trim())).into_response();
    }
    let request = ExpandRequest {
        target: query.id,
        include: Vec::new(),
        max_tokens: Some(CODE_TOKENS),
    };
    match shared.cairn.expand(request).await {
        Ok(Expanded::Code(report)) => html(code::symbol(&shared.repository, &report)),
        Ok(Expanded::Memory(memory)) => {
            Redirect::to(&pages::memory_url(&memory.id)).into_response()
        }
        Err(e) => failure(&shared, status_of(&e), &e.to_string()),
    }
}

fn nonempty(text: &str) -> Vec<String> {
    let text = text.trim();
    if text.is_empty() {
        Vec::new()
    } else {
        vec![text.to_string()]
    }
}

fn status_of(error: &AskError) -> StatusCode {
    match error {
        AskError::Memory(MemoryError::NotFound(_))
        | AskError::Target(
            TargetError::Empty | TargetError::OutsideRepository(_) | TargetError::Unknown { .. },
        )
        | AskError::NotIndexed(_) => StatusCode::NOT_FOUND,
        AskError::Target(TargetError::Ambiguous { .. }) => StatusCode::BAD_REQUEST,
        AskError::Memory(MemoryError::Invalid(_) | MemoryError::UnknownType(_))
        | AskError::Budget(_) => StatusCode::BAD_REQUEST,
        _ => StatusCode::INTERNAL_SERVER_ERROR,
    }
}

fn failure(shared: &Shared, status: StatusCode, message: &str) -> Response {
    let title = match status {
        StatusCode::NOT_FOUND => "Not found",
        StatusCode::FORBIDDEN => "Refused",
        StatusCode::BAD_REQUEST => "Not understood",
        _ => "Something went wrong",
    };
    (status, pages::problem(&shared.repository, title, message)).into_response()
}

fn html(markup: Markup) -> Response {
    markup.into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_session_cookie_is_found_among_others() {
        let mut headers = axum::http::HeaderMap::new();
        headers.insert(
            header::COOKIE,
            HeaderValue::from_static("a=1; cairn_ui_1=abc; cairn_ui_12=no"),
        );
        assert_eq!(cookie_value(&headers, "cairn_ui_1").as_deref(), Some("abc"));
        headers.insert(header::COOKIE, HeaderValue::from_static("cairn_ui_12=no"));
        assert_eq!(cookie_value(&headers, "cairn_ui_1"), None);
    }

    #[test]
    fn each_data_directory_names_its_own_cookie() {
        let one = cookie_name(std::path::Path::new("/data/repos/one-1"));
        let two = cookie_name(std::path::Path::new("/data/repos/two-2"));
        assert_ne!(one, two);
        assert_eq!(one, cookie_name(std::path::Path::new("/data/repos/one-1")));
        assert!(one.starts_with(COOKIE_PREFIX), "{one}");
        // A cookie name is a token: letters, digits and `_` only.
        assert!(
            one.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'),
            "{one}"
        );
    }
}
