//! mem0's REST surface on the daemon's port, so mem0 clients work against cairn unchanged:
//! the self-hosted server's paths at the root (`/memories`, `/search`, `/reset`, …) and the
//! hosted API's paths that the `mem0ai` SDK's `MemoryClient` calls (`/v1/ping/`,
//! `/v3/memories/add/`, `/v3/memories/search/`, `/v1/memories/{id}/`, …), with or without
//! their trailing slash.
//!
//! What mem0 does with an LLM, cairn does with its own write path: the user's turns are the
//! candidate memories, deduplicated against their scope (events ADD, UPDATE, NONE, and a
//! supersede told as ADD plus DELETE), redacted, scoped (`user_id` is the developer), and
//! labelled (`agent_id`, `run_id`, `metadata`). Assistant, system and tool turns are not
//! stored. Removals in bulk (`DELETE /memories`, `POST /reset`, an entity's deletion) take
//! only memories written through this surface.
//!
//! Every route needs the daemon's token, sent as mem0 clients send keys (`Authorization:
//! Token …`, `Authorization: Bearer …`, or `X-API-Key`), unless the user's own
//! configuration lets clients without a header in; errors answer `{"detail": …}` as mem0's
//! FastAPI server does.

mod calls;
mod wire;

use std::sync::Arc;

use axum::Router;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::{MethodRouter, delete, get, post};

use super::ui::session::same;
use crate::app::{AskError, Cairn};
use crate::memory::MemoryError;

/// Who memories written through this surface are written by (`written_by`): what bulk
/// removals are limited to.
pub(crate) const WRITER: &str = "mem0";

/// The largest body a mem0 call may send.
pub(crate) const MAX_BODY_BYTES: usize = 256 * 1024;

/// The routes, each also served with a trailing slash.
fn routes() -> Vec<(&'static str, MethodRouter<Arc<Cairn>>)> {
    let memories = || {
        post(calls::add)
            .get(calls::list)
            .delete(calls::delete_written)
    };
    let memory = || {
        get(calls::get_one)
            .put(calls::update)
            .delete(calls::delete_one)
    };
    vec![
        // The self-hosted server.
        ("/memories", memories()),
        ("/memories/{id}", memory()),
        ("/memories/{id}/history", get(calls::history)),
        ("/search", post(calls::search)),
        ("/reset", post(calls::reset)),
        // The hosted API, as the `mem0ai` SDK calls it.
        ("/v1/ping", get(calls::ping)),
        ("/v1/memories", memories()),
        ("/v1/memories/search", post(calls::search)),
        ("/v1/memories/{id}", memory()),
        ("/v1/memories/{id}/history", get(calls::history)),
        ("/v2/memories", post(calls::list_page)),
        ("/v2/memories/search", post(calls::search)),
        ("/v3/memories", post(calls::list_page)),
        ("/v3/memories/add", post(calls::add)),
        ("/v3/memories/search", post(calls::search)),
        ("/v1/entities", get(calls::entities)),
        ("/v2/entities/{kind}/{name}", delete(calls::delete_entity)),
    ]
}

/// True for a path this surface serves (the daemon's gate answers its refusals in mem0's
/// error shape there).
pub fn serves(path: &str) -> bool {
    let path = path.trim_end_matches('/');
    ["/memories", "/search", "/reset"].contains(&path)
        || path.starts_with("/memories/")
        || ["/v1/", "/v2/", "/v3/"]
            .iter()
            .any(|version| path.starts_with(version))
}

/// What a call must present.
struct Keys {
    token: String,
    /// The user's own configuration lets calls without any key in.
    without_token: bool,
}

/// The mem0 routes of a daemon holding `token`.
pub fn router(cairn: Arc<Cairn>, token: String) -> Router {
    let keys = Arc::new(Keys {
        token,
        without_token: cairn.repo.user.mem0.allow_without_token,
    });
    let mut router = Router::new();
    for (path, method) in routes() {
        router = router
            .route(path, method.clone())
            .route(&format!("{path}/"), method);
    }
    router
        .with_state(cairn)
        .route_layer(axum::middleware::from_fn_with_state(keys, key))
}

/// Lets a call in with the daemon's token as any of the headers mem0 clients send it in;
/// without a header only when the user's configuration says so.
async fn key(State(keys): State<Arc<Keys>>, request: Request, next: Next) -> Response {
    let presented = presented(request.headers());
    let valid = presented
        .iter()
        .any(|key| same(key.as_bytes(), keys.token.as_bytes()));
    if valid || (presented.is_empty() && keys.without_token) {
        return next.run(request).await;
    }
    let detail = if presented.is_empty() {
        "authentication required: send the daemon's token as `Authorization: Token …`, `Authorization: Bearer …` or `X-API-Key: …`"
    } else {
        "invalid API key: use the daemon's token (`cairn status` says where it is)"
    };
    let mut response = Refusal::new(StatusCode::UNAUTHORIZED, detail).into_response();
    response
        .headers_mut()
        .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Token"));
    response
}

/// The keys a call presents: the credential of an `Authorization` header (`Token` or
/// `Bearer`; another scheme presents an empty key) and an `X-API-Key` header.
pub(crate) fn presented(headers: &HeaderMap) -> Vec<String> {
    let mut keys = Vec::new();
    for value in headers.get_all(header::AUTHORIZATION) {
        let value = value.to_str().unwrap_or_default().trim();
        let key = value.split_once(' ').and_then(|(scheme, key)| {
            (scheme.eq_ignore_ascii_case("token") || scheme.eq_ignore_ascii_case("bearer"))
                .then(|| key.trim())
        });
        keys.push(key.unwrap_or_default().to_string());
    }
    for value in headers.get_all("x-api-key") {
        keys.push(value.to_str().unwrap_or_default().trim().to_string());
    }
    keys
}

/// A refused call: its status and `{"detail": …}`.
#[derive(Debug)]
pub(crate) struct Refusal {
    status: StatusCode,
    detail: String,
}

impl Refusal {
    pub fn new(status: StatusCode, detail: impl Into<String>) -> Refusal {
        Refusal {
            status,
            detail: detail.into(),
        }
    }

    /// A request cairn cannot act on (400).
    pub fn bad(detail: impl Into<String>) -> Refusal {
        Refusal::new(StatusCode::BAD_REQUEST, detail)
    }

    /// A body that does not have the call's shape (422, as FastAPI answers).
    pub fn shape(detail: impl Into<String>) -> Refusal {
        Refusal::new(StatusCode::UNPROCESSABLE_ENTITY, detail)
    }
}

impl IntoResponse for Refusal {
    fn into_response(self) -> Response {
        let body = serde_json::json!({ "detail": self.detail });
        (
            self.status,
            [(header::CONTENT_TYPE, "application/json")],
            body.to_string(),
        )
            .into_response()
    }
}

impl From<AskError> for Refusal {
    fn from(error: AskError) -> Refusal {
        let status = match &error {
            AskError::Memory(MemoryError::NotFound(_)) => StatusCode::NOT_FOUND,
            AskError::Memory(MemoryError::Store(_)) | AskError::Store(_) => {
                StatusCode::SERVICE_UNAVAILABLE
            }
            _ => StatusCode::BAD_REQUEST,
        };
        Refusal::new(status, error.to_string())
    }
}

impl From<MemoryError> for Refusal {
    fn from(error: MemoryError) -> Refusal {
        AskError::from(error).into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_come_as_mem0_clients_send_them() {
        let keys = |pairs: &[(&'static str, &'static str)]| {
            let mut headers = HeaderMap::new();
            for (name, value) in pairs {
                headers.append(*name, HeaderValue::from_static(value));
            }
            presented(&headers)
        };
        assert_eq!(keys(&[("authorization", "Token abc")]), ["abc"]);
        assert_eq!(keys(&[("authorization", "bearer abc ")]), ["abc"]);
        assert_eq!(keys(&[("x-api-key", "abc")]), ["abc"]);
        assert_eq!(keys(&[("authorization", "Basic abc")]), [""]);
        assert!(keys(&[]).is_empty());
    }

    #[test]
    fn the_surface_is_the_mem0_paths() {
        for path in [
            "/memories",
            "/memories/m_1/history",
            "/search/",
            "/reset",
            "/v1/ping/",
        ] {
            assert!(serves(path), "{path}");
        }
        for path in ["/mcp", "/health", "/ui/memories", "/searching"] {
            assert!(!serves(path), "{path}");
        }
    }
}
