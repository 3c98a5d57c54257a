//! The daemon's HTTP face on 127.0.0.1: MCP over streamable HTTP at `/mcp`, the session-start
//! context at `/context`, Claude Code hook events at `/hook`, `cairn index` runs handed over
//! at `/index` (POST), `/health`, the page's one-time log-in codes at `/login-code` (POST), and
//! the page itself under `/ui` ([`super::ui`]), and mem0's REST surface ([`super::mem0`]).
//! Every request must carry a loopback `Host` naming the daemon's port (DNS rebinding), no
//! foreign `Origin`, and a body under the size limit; the API routes need the bearer token,
//! the page's routes its session cookie instead, the mem0 routes the token as mem0 clients
//! send keys.

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;

use super::handoff::Reindex;
use super::mem0;
use super::ui::session::same;
use super::ui::{self, Sessions};
use crate::app::{Cairn, Registrations};
use crate::mcp::Server;

/// The largest request body accepted (a `review_diff` of a large pasted diff fits).
pub(crate) const MAX_BODY_BYTES: usize = 8 * 1024 * 1024 + 64 * 1024;

/// The largest hook event accepted.
const MAX_HOOK_BYTES: usize = 1024 * 1024;

struct Guard {
    token: String,
    hosts: Vec<String>,
    origins: Vec<String>,
}

#[derive(Clone)]
struct Shared {
    cairn: Arc<Cairn>,
    reindex: Reindex,
    sessions: Arc<Sessions>,
}

/// How long a handed-over index run waits for its write (another writer may hold the store).
const INDEX_PATIENCE: Duration = Duration::from_secs(600);

/// The router for a daemon listening on `port`; `sessions` are the page's log-ins (a user's
/// daemon keeps them while it unloads and reloads the repository).
pub fn router(
    cairn: Arc<Cairn>,
    registrations: Registrations,
    reindex: Reindex,
    token: String,
    port: u16,
    cancel: CancellationToken,
    sessions: Arc<Sessions>,
) -> Router {
    let hosts = vec![
        format!("127.0.0.1:{port}"),
        format!("localhost:{port}"),
        format!("[::1]:{port}"),
    ];
    let origins = vec![
        format!("http://127.0.0.1:{port}"),
        format!("http://localhost:{port}"),
        format!("http://[::1]:{port}"),
    ];
    let config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(hosts.clone())
        .with_allowed_origins(origins.clone())
        .with_max_request_body_bytes(MAX_BODY_BYTES)
        .with_cancellation_token(cancel);
    let serving = cairn.clone();
    let mcp = StreamableHttpService::new(
        move || Ok(Server::new(serving.clone())),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    let mem0 = mem0::router(cairn.clone(), token.clone());
    let guard = Arc::new(Guard {
        token,
        hosts,
        origins,
    });
    let shared = Shared {
        cairn: cairn.clone(),
        reindex,
        sessions: sessions.clone(),
    };
    let api = Router::new()
        .route_service("/mcp", mcp)
        .route("/context", get(context))
        .route("/hook", post(hook))
        .route("/index", post(index))
        .route("/health", get(health))
        // Outside `/ui`: the page's cookie is never sent here, and no page shares its path.
        .route("/login-code", post(ui_code))
        .with_state(shared)
        .route_layer(axum::middleware::from_fn_with_state(guard.clone(), bearer));
    api.merge(ui::router(cairn, registrations, sessions))
        .merge(mem0)
        .layer(axum::middleware::from_fn_with_state(guard, gate))
}

/// Every request: a served Host, no foreign Origin, a body under the limit. Refusals on the
/// mem0 routes come in mem0's error shape.
async fn gate(State(guard): State<Arc<Guard>>, request: Request, next: Next) -> Response {
    let refuse = |status: StatusCode, message: &str| {
        if mem0::serves(request.uri().path()) {
            mem0::Refusal::new(status, message).into_response()
        } else {
            refuse(status, message)
        }
    };
    let headers = request.headers();
    let host = headers.get(header::HOST).and_then(|h| h.to_str().ok());
    if !host.is_some_and(|h| guard.hosts.iter().any(|allowed| allowed == h)) {
        return refuse(StatusCode::FORBIDDEN, "this Host is not served");
    }
    if let Some(origin) = headers.get(header::ORIGIN)
        && !origin
            .to_str()
            .is_ok_and(|o| guard.origins.iter().any(|allowed| allowed == o))
    {
        return refuse(StatusCode::FORBIDDEN, "this Origin is not served");
    }
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|h| h.to_str().ok())
        .and_then(|h| h.parse::<usize>().ok());
    if declared.is_some_and(|n| n > MAX_BODY_BYTES) {
        return refuse(
            StatusCode::PAYLOAD_TOO_LARGE,
            &format!(
                "the request body is larger than the limit of {} KiB",
                MAX_BODY_BYTES / 1024
            ),
        );
    }
    next.run(request).await
}

/// The API routes: the bearer token (a session cookie opens none of them).
async fn bearer(State(guard): State<Arc<Guard>>, request: Request, next: Next) -> Response {
    let presented = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|h| h.to_str().ok())
        .and_then(|h| h.strip_prefix("Bearer "))
        .unwrap_or("");
    if !same(presented.trim().as_bytes(), guard.token.as_bytes()) {
        return unauthorized();
    }
    next.run(request).await
}

/// 401 for an API route without the token it needs.
pub(super) fn unauthorized() -> Response {
    let mut response = refuse(StatusCode::UNAUTHORIZED, "a valid bearer token is required");
    response.headers_mut().insert(
        header::WWW_AUTHENTICATE,
        header::HeaderValue::from_static("Bearer"),
    );
    response
}

/// The value of `name` in a query string, as written (not decoded).
pub(super) fn query_value<'q>(query: &'q str, name: &str) -> Option<&'q str> {
    query
        .split('&')
        .filter_map(|pair| pair.split_once('='))
        .find(|(key, _)| *key == name)
        .map(|(_, value)| value)
}

fn refuse(status: StatusCode, message: &str) -> Response {
    (status, format!("{message}\n")).into_response()
}

async fn health(State(shared): State<Shared>) -> Response {
    let snapshot = shared.cairn.snapshot().await.ok();
    let body = serde_json::json!({
        "root": shared.cairn.repo.root,
        "pid": std::process::id(),
        "version": env!("CARGO_PKG_VERSION"),
        "nodes": snapshot.as_ref().map(|s| s.graph.nodes.len()),
        "generation": snapshot.as_ref().map(|s| s.meta.generation),
        "commit": snapshot.as_ref().and_then(|s| s.meta.commit.clone()),
        // What the exact rebuilds after saves found in the quick patches answers came from.
        "checks": snapshot.as_ref().and_then(|s| s.meta.summary.get("checks").cloned()),
    });
    json(body)
}

/// A one-time code for `cairn ui` to log a browser in with (see [`super::ui`]).
async fn ui_code(State(shared): State<Shared>) -> Response {
    match shared.sessions.issue_code() {
        Ok(code) => (StatusCode::OK, code).into_response(),
        Err(e) => refuse(
            StatusCode::INTERNAL_SERVER_ERROR,
            &format!("cannot make a log-in code: {e}"),
        ),
    }
}

async fn index(State(shared): State<Shared>) -> Response {
    match shared.reindex.run(INDEX_PATIENCE).await {
        Ok(report) => json(serde_json::to_value(report).unwrap_or_default()),
        Err(e) => refuse(StatusCode::SERVICE_UNAVAILABLE, &format!("{e:#}")),
    }
}

async fn context(State(shared): State<Shared>, request: Request) -> Response {
    let focus = request
        .uri()
        .query()
        .and_then(|q| query_value(q, "focus"))
        .map(percent_decode);
    let request = crate::app::ContextRequest {
        focus,
        max_tokens: None,
    };
    match shared.cairn.context(request).await {
        Ok(report) => (StatusCode::OK, report.text).into_response(),
        Err(e) => refuse(StatusCode::SERVICE_UNAVAILABLE, &e.to_string()),
    }
}

async fn hook(State(shared): State<Shared>, request: Request) -> Response {
    let body = match axum::body::to_bytes(request.into_body(), MAX_HOOK_BYTES).await {
        Ok(body) => body,
        Err(_) => return refuse(StatusCode::PAYLOAD_TOO_LARGE, "the hook event is too large"),
    };
    match record_hook(&shared.cairn, &body).await {
        Ok(output) => (StatusCode::OK, output.unwrap_or_default()).into_response(),
        Err(e) => refuse(StatusCode::BAD_REQUEST, &format!("{e:#}")),
    }
}

/// The daemon's `/hook`: the same as `cairn hook`, with the daemon's own context.
async fn record_hook(cairn: &Cairn, bytes: &[u8]) -> anyhow::Result<Option<String>> {
    let input = crate::events::hook::HookInput::parse(bytes)?;
    if !crate::events::hook::record(&cairn.repo, &input)? {
        return Ok(None);
    }
    Ok(Some(cairn.context(Default::default()).await?.text))
}

fn json(value: serde_json::Value) -> Response {
    Response::builder()
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(value.to_string()))
        .expect("a static response builds")
}

fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len()
                && bytes[i + 1].is_ascii_hexdigit()
                && bytes[i + 2].is_ascii_hexdigit() =>
            {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).expect("hex digits are ASCII");
                out.push(u8::from_str_radix(hex, 16).expect("two hex digits"));
                i += 2;
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_values_are_found_by_name() {
        assert_eq!(query_value("a=1&code=ff00", "code"), Some("ff00"));
        assert_eq!(query_value("xcode=1", "code"), None);
        assert_eq!(query_value("", "code"), None);
    }

    #[test]
    fn queries_are_decoded() {
        assert_eq!(percent_decode("src%2Fa.py+b"), "src/a.py b");
        assert_eq!(percent_decode("100%"), "100%");
        assert_eq!(percent_decode("%zz"), "%zz");
    }
}
