//! One handler per mem0 call: the body read and checked, mapped onto cairn's use cases, the
//! answer put in mem0's shape.

use std::collections::HashMap;
use std::sync::Arc;

use axum::extract::{Path, Query, Request, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::wire::{
    self, AddBody, Change, EntityItem, Ids, Item, ListBody, Message, Page, Ping, Results,
    SearchBody, UpdateBody, Updated,
};
use super::{MAX_BODY_BYTES, Refusal, WRITER};
use crate::app::{
    Cairn, Condition, FindRequest, ForgetRequest, LabelFilter, LearnRequest, MAX_FOUND,
    MemoryRequest, MetadataCondition, RememberRequest, RewriteRequest, SelectRequest,
};
use crate::memory::model::Metadata;
use crate::memory::{Action, MemoryType, WriteOutcome};
use crate::secrets::{self, json_error, quoted};

type Answer = Result<Response, Refusal>;

/// How many memories a search answers unless asked (mem0's default).
const DEFAULT_TOP_K: usize = 20;
/// How many memories a listing answers unless asked, and at most.
const DEFAULT_LISTED: usize = 100;
const MAX_LISTED: usize = 1_000;
/// A search hit's relevance is its score times this, at most 1: first in both the keyword and
/// the meaning ranking (2/60 in reciprocal-rank fusion) is 1.
const RELEVANCE_SCALE: f64 = 30.0;

fn json(value: &impl Serialize) -> Answer {
    let body = serde_json::to_string(value)
        .map_err(|e| Refusal::new(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))?;
    Ok((
        [(axum::http::header::CONTENT_TYPE, "application/json")],
        body,
    )
        .into_response())
}

/// The body as `T`: 413 over the size limit, 422 when it is not JSON or not `T`'s shape.
async fn body<T: DeserializeOwned>(request: Request, empty: Option<T>) -> Result<T, Refusal> {
    let bytes = axum::body::to_bytes(request.into_body(), MAX_BODY_BYTES)
        .await
        .map_err(|_| {
            Refusal::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                format!(
                    "the body is over {} KiB: send fewer or shorter messages",
                    MAX_BODY_BYTES / 1024
                ),
            )
        })?;
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return empty.ok_or_else(|| Refusal::shape("the body is empty: send a JSON object"));
    }
    serde_json::from_slice(&bytes).map_err(|e| {
        let why = json_error(&String::from_utf8_lossy(&bytes), &e);
        if e.is_data() {
            Refusal::shape(format!("the body does not have this call's shape: {why}"))
        } else {
            Refusal::shape(format!("the body is not valid JSON: {why}"))
        }
    })
}

/// The memories a request addresses: the ids mem0 scopes by, and metadata conditions.
#[derive(Debug, Default)]
struct Selection {
    user: Option<String>,
    agent: Option<String>,
    run: Option<String>,
    metadata: Vec<MetadataCondition>,
}

/// Operators of mem0's filters; cairn answers `eq` and `in` (and `"*"`), and refuses the
/// others rather than ignore them.
const OPERATORS: [&str; 10] = [
    "eq",
    "ne",
    "in",
    "nin",
    "gt",
    "gte",
    "lt",
    "lte",
    "contains",
    "icontains",
];

impl Selection {
    /// The ids given at the top of a body or in a query, then those of `filters`.
    fn of(ids: Ids) -> Result<Selection, Refusal> {
        let mut selection = Selection::default();
        let filters = ids.filters.as_ref();
        for (name, value) in [
            ("user_id", ids.user_id),
            ("agent_id", ids.agent_id),
            ("run_id", ids.run_id),
        ] {
            if let Some(value) = value.filter(|v| !v.trim().is_empty()) {
                selection.id(name, &Value::String(value))?;
            }
        }
        if let Some(filters) = filters.filter(|f| !f.is_null()) {
            selection.read(filters)?;
        }
        Ok(selection)
    }

    /// From a query string's `user_id`, `agent_id` and `run_id`.
    fn of_query(params: &HashMap<String, String>) -> Result<Selection, Refusal> {
        let get = |name: &str| params.get(name).cloned();
        Selection::of(Ids {
            user_id: get("user_id"),
            agent_id: get("agent_id"),
            run_id: get("run_id"),
            filters: None,
        })
    }

    fn has_ids(&self) -> bool {
        self.user.is_some() || self.agent.is_some() || self.run.is_some()
    }

    /// Reads a filter object: ids, `AND` (and a one-condition `OR`), `metadata`, and any
    /// other key as a metadata condition (as mem0 reads them).
    fn read(&mut self, filters: &Value) -> Result<(), Refusal> {
        let Value::Object(fields) = filters else {
            return Err(Refusal::shape("`filters` is an object"));
        };
        for (key, value) in fields {
            match key.as_str() {
                "user_id" | "agent_id" | "run_id" => self.id(key, value)?,
                // One daemon serves one project.
                "app_id" | "project_id" | "org_id" => {}
                "AND" | "and" => {
                    for part in list_of(key, value)? {
                        self.read(part)?;
                    }
                }
                "OR" | "or" => match list_of(key, value)? {
                    [one] => self.read(one)?,
                    _ => {
                        return Err(Refusal::bad(
                            "`OR` over several conditions is not supported by cairn: search for each on its own",
                        ));
                    }
                },
                "NOT" | "not" => {
                    return Err(Refusal::bad("`NOT` filters are not supported by cairn"));
                }
                "metadata" => {
                    let Value::Object(metadata) = value else {
                        return Err(Refusal::shape("`filters.metadata` is an object"));
                    };
                    for (key, value) in metadata {
                        self.metadata.push(condition(key, value)?);
                    }
                }
                _ => self.metadata.push(condition(key, value)?),
            }
        }
        Ok(())
    }

    /// Sets one id (a text, or `{"eq": text}`); the same id twice must agree.
    fn id(&mut self, name: &str, value: &Value) -> Result<(), Refusal> {
        let text = match value {
            Value::String(text) => Some(text.as_str()),
            Value::Object(ops) if ops.len() == 1 => ops.get("eq").and_then(Value::as_str),
            _ => None,
        }
        .map(str::trim)
        .ok_or_else(|| Refusal::shape(format!("`{name}` is a text")))?;
        if text == "*" {
            return Err(Refusal::bad(format!(
                "`{name}: \"*\"` is not supported: cairn reads one {name} at a time"
            )));
        }
        let slot = match name {
            "user_id" => &mut self.user,
            "agent_id" => &mut self.agent,
            _ => &mut self.run,
        };
        match slot {
            Some(held) if held != text => Err(Refusal::bad(format!(
                "two different `{name}`s in one request: {} and {}",
                quoted(held),
                quoted(text)
            ))),
            _ => {
                *slot = Some(text.to_string());
                Ok(())
            }
        }
    }

    /// The app's filter, for the memories `written_by` wrote when given.
    fn filter(self, written_by: Option<&str>) -> LabelFilter {
        LabelFilter {
            developer: self.user,
            agent: self.agent,
            run: self.run,
            written_by: written_by.map(str::to_string),
            metadata: self.metadata,
        }
    }
}

fn list_of<'a>(key: &str, value: &'a Value) -> Result<&'a [Value], Refusal> {
    value
        .as_array()
        .map(Vec::as_slice)
        .ok_or_else(|| Refusal::shape(format!("`{key}` is a list of filters")))
}

/// A metadata key's condition: a value, `"*"` (any), `{"eq": v}` or `{"in": [..]}`.
fn condition(key: &str, value: &Value) -> Result<MetadataCondition, Refusal> {
    let condition = match value {
        Value::String(text) if text == "*" => Condition::Present,
        Value::Object(ops)
            if !ops.is_empty() && ops.keys().all(|op| OPERATORS.contains(&op.as_str())) =>
        {
            match ops.iter().next() {
                Some((op, value)) if ops.len() == 1 && op == "eq" => Condition::Is(value.clone()),
                Some((op, Value::Array(values))) if ops.len() == 1 && op == "in" => {
                    Condition::OneOf(values.clone())
                }
                _ => {
                    return Err(Refusal::bad(format!(
                        "the filter on {} is not supported by cairn: use a value, \"*\", {{\"eq\": value}} or {{\"in\": [values]}}",
                        quoted(key)
                    )));
                }
            }
        }
        other => Condition::Is(other.clone()),
    };
    Ok(MetadataCondition {
        key: key.to_string(),
        condition,
    })
}

/// The user's turns of `messages` (cairn stores the user's own words) and the roles of the
/// turns left out.
fn said(messages: &Value) -> Result<(Vec<String>, Vec<String>), Refusal> {
    let turns: Vec<&Value> = match messages {
        Value::Array(turns) => turns.iter().collect(),
        Value::String(_) | Value::Object(_) => vec![messages],
        _ => {
            return Err(Refusal::shape(
                "`messages` is a list of {role, content} turns, one turn, or a text",
            ));
        }
    };
    if turns.is_empty() {
        return Err(Refusal::bad("`messages` is empty: nothing was stored"));
    }
    let (mut texts, mut skipped) = (Vec::new(), Vec::new());
    for (n, turn) in turns.into_iter().enumerate() {
        let (role, content) = match turn {
            Value::String(text) => ("user", Some(text.as_str())),
            Value::Object(fields) => (
                fields
                    .get("role")
                    .and_then(Value::as_str)
                    .ok_or_else(|| Refusal::shape(format!("messages[{n}] has no `role`")))?,
                fields.get("content").and_then(Value::as_str),
            ),
            _ => {
                return Err(Refusal::shape(format!(
                    "messages[{n}] is not a {{role, content}} turn"
                )));
            }
        };
        match role.trim().to_ascii_lowercase().as_str() {
            "user" => {
                let content = content.ok_or_else(|| {
                    Refusal::bad(format!(
                        "messages[{n}].content is not text: cairn stores text only"
                    ))
                })?;
                if content.trim().is_empty() {
                    return Err(Refusal::bad(format!(
                        "messages[{n}].content is empty: nothing was stored"
                    )));
                }
                refuse_secrets(&format!("messages[{n}].content"), content)?;
                texts.push(content.to_string());
            }
            "assistant" | "system" | "tool" | "function" | "developer" => {
                skipped.push(role.trim().to_ascii_lowercase());
            }
            _ => {
                return Err(Refusal::bad(format!(
                    "messages[{n}].role {} is not user, assistant, system or tool",
                    quoted(role.trim())
                )));
            }
        }
    }
    if texts.is_empty() {
        return Err(Refusal::bad(
            "no user turn in `messages`: cairn stores the user's own words only (assistant, system and tool turns are not stored), so nothing was stored",
        ));
    }
    Ok((texts, skipped))
}

/// Refuses a text that holds what looks like a secret, naming its kinds, never its value.
/// Through mem0 the whole request is refused rather than stored redacted: a client sending
/// conversation turns by the batch would never see the redaction.
fn refuse_secrets(what: &str, text: &str) -> Result<(), Refusal> {
    let kinds = secrets::redact(text).kinds;
    if kinds.is_empty() {
        return Ok(());
    }
    let kinds: Vec<&str> = kinds.iter().map(|k| k.as_str()).collect();
    Err(Refusal::bad(format!(
        "{what} holds what looks like a secret ({}): nothing was stored; take it out and send again",
        kinds.join(", ")
    )))
}

/// The type of memories written through mem0: the cairn type `metadata.type` (or
/// `metadata.memory_type`) names, else a developer pattern for a user, a project pattern
/// otherwise.
fn kind_of(metadata: &Metadata, for_user: bool) -> Result<MemoryType, Refusal> {
    let named = ["type", "memory_type"]
        .iter()
        .find_map(|key| metadata.get(*key)?.as_str()?.parse::<MemoryType>().ok());
    let kind = named.unwrap_or(if for_user {
        MemoryType::DeveloperPattern
    } else {
        MemoryType::ProjectPattern
    });
    if kind.developer_scoped() && !for_user {
        return Err(Refusal::bad(format!(
            "metadata names the type {kind}, which belongs to a developer: pass user_id"
        )));
    }
    Ok(kind)
}

/// `POST /memories`: the user's turns learnt, one result per memory the writes touched.
pub(super) async fn add(State(cairn): State<Arc<Cairn>>, request: Request) -> Answer {
    let body: AddBody = body(request, None).await?;
    let selection = Selection::of(body.ids)?;
    if !selection.has_ids() {
        return Err(Refusal::bad(
            "at least one identifier (user_id, agent_id, run_id) is required",
        ));
    }
    let (texts, skipped) = said(&body.messages)?;
    let metadata = body.metadata.unwrap_or_default();
    refuse_secrets(
        "`metadata`",
        &Value::from_iter(metadata.clone()).to_string(),
    )?;
    let kind = kind_of(&metadata, selection.user.is_some())?;
    let outcomes = cairn
        .learn(LearnRequest {
            texts,
            split: body.infer != Some(false),
            memory: RememberRequest {
                developer: selection.user,
                agent: selection.agent,
                run: selection.run,
                metadata,
                written_by: Some(WRITER.to_string()),
                by_assistant: true,
                ..RememberRequest::new(kind, String::new())
            },
        })
        .await?;
    let mut notes = Vec::new();
    if !skipped.is_empty() {
        notes.push(format!(
            "{} turn(s) not stored ({}): cairn stores the user's own words only",
            skipped.len(),
            skipped.join(", ")
        ));
    }
    json(&Results {
        results: results_of(&cairn, outcomes).await,
        notes,
    })
}

/// The results of writes: each memory a write landed in with its event, and for a
/// supersede the memory it replaced, as DELETE.
async fn results_of(cairn: &Cairn, outcomes: Vec<WriteOutcome>) -> Vec<Item> {
    let mut items = Vec::new();
    for outcome in outcomes {
        let memory = match outcome.memory {
            Some(memory) => memory,
            None => match cairn
                .show(MemoryRequest {
                    id: outcome.id.clone(),
                })
                .await
            {
                Ok(memory) => memory,
                Err(e) => {
                    tracing::warn!("a written memory could not be read back: {e}");
                    continue;
                }
            },
        };
        let mut item = Item::of(&memory).with_event(wire::event_name(outcome.event));
        if outcome.event == Action::Update {
            item.previous_memory = memory
                .history
                .last()
                .map(|r| r.content.clone())
                .filter(|before| *before != memory.content);
        }
        item.notes = outcome.notes;
        items.push(item);
        if let Some(old) = outcome.superseded
            && let Ok(old) = cairn.show(MemoryRequest { id: old }).await
        {
            items.push(Item::of(&old).with_event("DELETE"));
        }
    }
    items
}

/// `POST /search`: a search narrowed by ids and metadata, with mem0's relevance.
pub(super) async fn search(State(cairn): State<Arc<Cairn>>, request: Request) -> Answer {
    let body: SearchBody = body(request, None).await?;
    let text = body.query.trim();
    if text.is_empty() {
        return Err(Refusal::bad("`query` is empty"));
    }
    let threshold = body.threshold.unwrap_or(0.0);
    if !(0.0..=1.0).contains(&threshold) {
        return Err(Refusal::bad("`threshold` is between 0 and 1"));
    }
    let limit = body.top_k.or(body.limit).unwrap_or(DEFAULT_TOP_K);
    if limit == 0 {
        return Err(Refusal::bad("`top_k` is at least 1"));
    }
    let selection = Selection::of(body.ids)?;
    let found = cairn
        .find(FindRequest {
            text: text.to_string(),
            filter: selection.filter(None),
            limit: limit.min(MAX_FOUND),
        })
        .await?;
    let results = found
        .into_iter()
        .map(|f| {
            let relevance = ((f.score * RELEVANCE_SCALE).min(1.0) * 10_000.0).round() / 10_000.0;
            Item {
                score: Some(relevance),
                ..Item::of(&f.memory)
            }
        })
        .filter(|item| item.score.unwrap_or_default() >= threshold)
        .collect();
    json(&Results {
        results,
        notes: Vec::new(),
    })
}

/// A number from a query string.
fn number(params: &HashMap<String, String>, names: &[&str]) -> Result<Option<usize>, Refusal> {
    for name in names {
        if let Some(text) = params.get(*name) {
            return text
                .trim()
                .parse()
                .map(Some)
                .map_err(|_| Refusal::bad(format!("`{name}` is a whole number")));
        }
    }
    Ok(None)
}

/// `page` (from 1) and `page_size` of a listing, and the offset they start at (a page past any
/// listing starts past its end, never wraps).
fn paging(params: &HashMap<String, String>) -> Result<(usize, usize, usize), Refusal> {
    let page = number(params, &["page"])?.unwrap_or(1);
    let size = number(params, &["page_size", "top_k", "limit"])?.unwrap_or(DEFAULT_LISTED);
    if page == 0 || size == 0 {
        return Err(Refusal::bad("`page` and `page_size` are at least 1"));
    }
    let size = size.min(MAX_LISTED);
    Ok((page, size, (page - 1).saturating_mul(size)))
}

/// `GET /memories`: the served memories the ids select, newest first (the project's when
/// no user is named).
pub(super) async fn list(
    State(cairn): State<Arc<Cairn>>,
    Query(params): Query<HashMap<String, String>>,
) -> Answer {
    let (_, size, offset) = paging(&params)?;
    let selected = cairn
        .select(SelectRequest {
            filter: Selection::of_query(&params)?.filter(None),
            offset,
            limit: size,
        })
        .await?;
    json(&Results {
        results: selected.memories.iter().map(Item::of).collect(),
        notes: Vec::new(),
    })
}

/// The hosted API's listing: filters in the body, a page at a time.
pub(super) async fn list_page(
    State(cairn): State<Arc<Cairn>>,
    Query(params): Query<HashMap<String, String>>,
    request: Request,
) -> Answer {
    let path = request.uri().path().to_string();
    let body: ListBody = body(request, Some(ListBody::default())).await?;
    let (page, size, offset) = paging(&params)?;
    let selection = Selection::of(body.ids)?;
    let selected = cairn
        .select(SelectRequest {
            filter: selection.filter(None),
            offset,
            limit: size,
        })
        .await?;
    let link = |page: usize| format!("{path}?page={page}&page_size={size}");
    json(&Page {
        count: selected.total,
        next: (page.saturating_mul(size) < selected.total).then(|| link(page + 1)),
        previous: (page > 1).then(|| link(page - 1)),
        results: selected.memories.iter().map(Item::of).collect(),
    })
}

/// `GET /memories/{id}`.
pub(super) async fn get_one(State(cairn): State<Arc<Cairn>>, Path(id): Path<String>) -> Answer {
    let memory = cairn.show(MemoryRequest { id }).await?;
    json(&Item::of(&memory))
}

/// `PUT /memories/{id}`: a new text or metadata written in place.
pub(super) async fn update(
    State(cairn): State<Arc<Cairn>>,
    Path(id): Path<String>,
    request: Request,
) -> Answer {
    let body: UpdateBody = body(request, None).await?;
    let text = body.text.or(body.data).or(body.memory);
    if text.is_none() && body.metadata.is_none() {
        return Err(Refusal::bad(
            "at least one of text or metadata must be provided",
        ));
    }
    if text.as_deref().is_some_and(|t| t.trim().is_empty()) {
        return Err(Refusal::bad("`text` is empty: nothing was changed"));
    }
    if let Some(text) = &text {
        refuse_secrets("`text`", text)?;
    }
    if let Some(metadata) = &body.metadata {
        refuse_secrets(
            "`metadata`",
            &Value::from_iter(metadata.clone()).to_string(),
        )?;
    }
    let outcome = cairn
        .rewrite(RewriteRequest {
            id,
            content: text,
            metadata: body.metadata,
            written_by: Some(WRITER.to_string()),
        })
        .await?;
    let event = wire::event_name(outcome.event);
    let mut items = results_of(&cairn, vec![outcome]).await;
    if items.is_empty() {
        return Err(Refusal::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "the memory was changed but could not be read back",
        ));
    }
    json(&Updated {
        message: "Memory updated successfully!",
        item: items.remove(0).with_event(event),
    })
}

/// `GET /memories/{id}/history`.
pub(super) async fn history(State(cairn): State<Arc<Cairn>>, Path(id): Path<String>) -> Answer {
    let memory = cairn.memory_history(MemoryRequest { id }).await?;
    let changes: Vec<Change> = wire::history(&memory.0);
    json(&changes)
}

/// `DELETE /memories/{id}`: 404 when it is not there (already gone).
pub(super) async fn delete_one(State(cairn): State<Arc<Cairn>>, Path(id): Path<String>) -> Answer {
    cairn
        .forget(ForgetRequest {
            id: Some(id),
            ..ForgetRequest::default()
        })
        .await?;
    json(&Message {
        message: "Memory deleted successfully!",
        deleted: None,
    })
}

/// `DELETE /memories?user_id=…`: the memories written through mem0 for the ids named.
pub(super) async fn delete_written(
    State(cairn): State<Arc<Cairn>>,
    Query(params): Query<HashMap<String, String>>,
) -> Answer {
    let selection = Selection::of_query(&params)?;
    if !selection.has_ids() {
        return Err(Refusal::bad(
            "at least one identifier (user_id, agent_id, run_id) is required",
        ));
    }
    let removed = cairn.forget_written(selection.filter(Some(WRITER))).await?;
    json(&Message {
        message: "All relevant memories deleted",
        deleted: Some(removed.len()),
    })
}

/// `POST /reset`: every memory written through mem0, and nothing else.
pub(super) async fn reset(State(cairn): State<Arc<Cairn>>) -> Answer {
    let removed = cairn
        .forget_written(Selection::default().filter(Some(WRITER)))
        .await?;
    json(&Message {
        message: "All memories reset",
        deleted: Some(removed.len()),
    })
}

/// `GET /v1/ping/`: the SDK's key check on start-up. The SDK needs an organisation and a
/// project: the repository's organisation (`local` without one) and the repository.
pub(super) async fn ping(State(cairn): State<Arc<Cairn>>) -> Answer {
    json(&Ping {
        status: "ok",
        org_id: Some(cairn.repo.org().unwrap_or_else(|| "local".to_string())),
        project_id: Some(cairn.repo.name()),
        user_email: None,
    })
}

/// `GET /v1/entities/`: the users (developers), agents and runs of served memories.
pub(super) async fn entities(State(cairn): State<Arc<Cairn>>) -> Answer {
    let entities = cairn.entities().await?;
    json(&Results {
        results: entities.iter().map(EntityItem::of).collect(),
        notes: Vec::new(),
    })
}

/// `DELETE /v2/entities/{type}/{name}/`: the memories written through mem0 for that user,
/// agent or run (the SDK's `delete_users` and `reset`).
pub(super) async fn delete_entity(
    State(cairn): State<Arc<Cairn>>,
    Path((kind, name)): Path<(String, String)>,
) -> Answer {
    let (user, agent, run) = match kind.as_str() {
        "user" => (Some(name), None, None),
        "agent" => (None, Some(name), None),
        "run" => (None, None, Some(name)),
        // Nothing is stored for an app: one daemon serves one project.
        "app" => {
            return json(&Message {
                message: "Entity deleted successfully.",
                deleted: Some(0),
            });
        }
        other => {
            return Err(Refusal::bad(format!(
                "unknown entity type {}: use user, agent, run or app",
                quoted(other)
            )));
        }
    };
    let selection = Selection::of(Ids {
        user_id: user,
        agent_id: agent,
        run_id: run,
        filters: None,
    })?;
    let removed = cairn.forget_written(selection.filter(Some(WRITER))).await?;
    json(&Message {
        message: "Entity deleted successfully.",
        deleted: Some(removed.len()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_users_turns_are_kept_and_the_others_named() {
        let (texts, skipped) = said(&json!([
            {"role": "system", "content": "You are helpful."},
            {"role": "user", "content": "I prefer tabs."},
            {"role": "assistant", "content": "Noted."},
        ]))
        .unwrap();
        assert_eq!(texts, ["I prefer tabs."]);
        assert_eq!(skipped, ["system", "assistant"]);
        assert_eq!(said(&json!("Tabs.")).unwrap().0, ["Tabs."]);
        assert_eq!(
            said(&json!({"role": "user", "content": "Tabs."}))
                .unwrap()
                .0,
            ["Tabs."]
        );
        for (messages, status) in [
            (json!([]), 400),
            (json!([{"role": "assistant", "content": "Noted."}]), 400),
            (json!([{"role": "user", "content": "  "}]), 400),
            (json!([{"role": "robot", "content": "beep"}]), 400),
            (
                json!([{"role": "user", "content": [{"type": "image_url"}]}]),
                400,
            ),
            (json!([{"content": "no role"}]), 422),
            (
                json!([{"role": "user", "content": format!("The key is {}.", ["AKIA", "Z7Q4K2M9XW3TR8PB"].concat())}]),
                400,
            ),
            (json!(3), 422),
        ] {
            let refusal = said(&messages).unwrap_err();
            assert_eq!(refusal.status.as_u16(), status, "{messages}: {refusal:?}");
        }
    }

    #[test]
    fn filters_read_ids_metadata_and_refuse_what_cairn_cannot_honour() {
        let read = |filters: Value| {
            Selection::of(Ids {
                filters: Some(filters),
                ..Ids::default()
            })
        };
        let selection = read(json!({
            "AND": [{"user_id": "alice"}, {"agent_id": {"eq": "nectr"}}],
            "project_id": "acme/app",
            "metadata": {"pr": {"in": [1, 2]}},
            "kind": "*",
        }))
        .unwrap();
        assert_eq!(selection.user.as_deref(), Some("alice"));
        assert_eq!(selection.agent.as_deref(), Some("nectr"));
        assert_eq!(
            selection.metadata,
            [
                MetadataCondition {
                    key: "kind".to_string(),
                    condition: Condition::Present,
                },
                MetadataCondition {
                    key: "pr".to_string(),
                    condition: Condition::OneOf(vec![json!(1), json!(2)]),
                },
            ]
        );
        assert_eq!(
            read(json!({"OR": [{"user_id": "bob"}]}))
                .unwrap()
                .user
                .as_deref(),
            Some("bob")
        );
        for refused in [
            json!({"OR": [{"user_id": "a"}, {"user_id": "b"}]}),
            json!({"NOT": [{"user_id": "a"}]}),
            json!({"created_at": {"gte": "2024-01-01"}}),
            json!({"user_id": "*"}),
            json!({"AND": [{"user_id": "a"}, {"user_id": "b"}]}),
        ] {
            assert_eq!(read(refused.clone()).unwrap_err().status, 400, "{refused}");
        }
        assert_eq!(read(json!([1])).unwrap_err().status, 422);
        let top = Selection::of(Ids {
            user_id: Some("alice".into()),
            filters: Some(json!({"user_id": "bob"})),
            ..Ids::default()
        });
        assert!(top.is_err(), "the ids of a body and its filters must agree");
    }

    #[test]
    fn a_page_past_every_listing_starts_past_its_end() {
        let params = |page: &str| HashMap::from([("page".to_string(), page.to_string())]);
        assert_eq!(
            paging(&params("3")).unwrap(),
            (3, DEFAULT_LISTED, 2 * DEFAULT_LISTED)
        );
        let last = paging(&params(&usize::MAX.to_string())).unwrap();
        assert_eq!(last.2, usize::MAX);
        assert_eq!(paging(&params("0")).unwrap_err().status, 400);
    }

    #[test]
    fn the_type_is_named_in_metadata_or_follows_the_user() {
        let metadata = |pairs: Value| -> Metadata { serde_json::from_value(pairs).unwrap() };
        assert_eq!(
            kind_of(&metadata(json!({})), true).unwrap(),
            MemoryType::DeveloperPattern
        );
        assert_eq!(
            kind_of(&metadata(json!({})), false).unwrap(),
            MemoryType::ProjectPattern
        );
        assert_eq!(
            kind_of(&metadata(json!({"memory_type": "decision"})), true).unwrap(),
            MemoryType::Decision
        );
        assert_eq!(
            kind_of(&metadata(json!({"type": "preference"})), false).unwrap(),
            MemoryType::ProjectPattern
        );
        assert!(kind_of(&metadata(json!({"type": "developer_strength"})), false).is_err());
    }
}
