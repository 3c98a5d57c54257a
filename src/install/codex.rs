//! cairn's `[mcp_servers.cairn]` table in Codex CLI's `config.toml`, edited with `toml_edit`
//! so comments, key order and other tables survive.

use std::path::Path;

use serde_json::Value;
use toml_edit::{Array, DocumentMut, Item, Table, value};

use super::Error;
use super::launch::Launch;
use super::piece::Stripped;

const SERVERS: &str = "mcp_servers";
const NAME: &str = "cairn";

/// `text` with `[mcp_servers.cairn]` running `cairn serve` as `launch` says, in place of any
/// older one.
pub(super) fn set_server(
    path: &Path,
    current: Option<&str>,
    launch: &Launch,
) -> Result<String, Error> {
    let text = current.unwrap_or_default();
    let mut doc = parse(path, text)?;
    if doc
        .get(SERVERS)
        .and_then(|servers| servers.get(NAME))
        .is_some_and(|entry| runs(entry, launch))
    {
        return Ok(text.to_string());
    }
    let mut implicit = Table::new();
    implicit.set_implicit(true);
    match doc.entry(SERVERS).or_insert(Item::Table(implicit)) {
        Item::Table(servers) => {
            let mut entry = server_table(launch);
            if let Some(Item::Table(old)) = servers.get(NAME) {
                if let Some(position) = old.position() {
                    entry.set_position(position);
                }
                *entry.decor_mut() = old.decor().clone();
            }
            servers.insert(NAME, Item::Table(entry));
        }
        Item::Value(toml_edit::Value::InlineTable(servers)) => {
            servers.insert(
                NAME,
                toml_edit::Value::InlineTable(server_table(launch).into_inline_table()),
            );
        }
        _ => {
            return Err(Error::Shape {
                path: path.to_path_buf(),
                key: SERVERS.to_string(),
                expected: "a table",
            });
        }
    }
    Ok(doc.to_string())
}

/// `text` without `[mcp_servers.cairn]` (and without `mcp_servers` if nothing else was in it
/// and it had no header of its own).
pub(super) fn remove_server(path: &Path, text: &str) -> Result<Stripped, Error> {
    let mut doc = parse(path, text)?;
    let Some(servers) = doc.get_mut(SERVERS).and_then(Item::as_table_like_mut) else {
        return Ok(stripped(text.to_string()));
    };
    if servers.remove(NAME).is_none() {
        return Ok(stripped(text.to_string()));
    }
    if doc
        .get(SERVERS)
        .and_then(Item::as_table)
        .is_some_and(|servers| servers.is_implicit() && servers.is_empty())
    {
        doc.remove(SERVERS);
    }
    Ok(stripped(doc.to_string()))
}

/// The `mcp_servers.cairn` entry's `command` and `args`, if there is an entry.
pub(super) fn server(path: &Path, text: &str) -> Result<Option<Value>, Error> {
    let doc = parse(path, text)?;
    let Some(entry) = doc
        .get(SERVERS)
        .and_then(|servers| servers.get(NAME))
        .and_then(Item::as_table_like)
    else {
        return Ok(None);
    };
    let mut fields = serde_json::Map::new();
    if let Some(command) = entry.get("command").and_then(Item::as_str) {
        fields.insert("command".into(), command.into());
    }
    if let Some(args) = entry.get("args").and_then(Item::as_array) {
        let args: Option<Vec<Value>> = args.iter().map(|a| a.as_str().map(Value::from)).collect();
        let args = args.map(Value::Array);
        fields.insert("args".into(), args.unwrap_or(Value::Null));
    }
    Ok(Some(Value::Object(fields)))
}

/// Whether an entry is exactly `command` and `args` as `launch` runs `cairn serve`.
fn runs(entry: &Item, launch: &Launch) -> bool {
    let Some(entry) = entry.as_table_like() else {
        return false;
    };
    let wanted = launch.args(&["serve"]);
    let args = entry.get("args").and_then(Item::as_array);
    entry.len() == 2
        && entry.get("command").and_then(Item::as_str) == Some(launch.program_text().as_str())
        && args.is_some_and(|a| {
            a.len() == wanted.len() && a.iter().zip(&wanted).all(|(v, w)| v.as_str() == Some(w))
        })
}

fn server_table(launch: &Launch) -> Table {
    let mut table = Table::new();
    table.insert("command", value(launch.program_text()));
    table.insert("args", value(Array::from_iter(launch.args(&["serve"]))));
    table
}

fn parse(path: &Path, text: &str) -> Result<DocumentMut, Error> {
    text.parse::<DocumentMut>().map_err(|e| {
        let offset = e.span().map_or(0, |span| span.start);
        let before = text.get(..offset).unwrap_or(text);
        let line = before.matches('\n').count() + 1;
        let column = before.rsplit('\n').next().unwrap_or("").chars().count() + 1;
        Error::Syntax {
            path: path.to_path_buf(),
            format: "TOML",
            line,
            column,
            message: e.message().to_string(),
        }
    })
}

fn stripped(text: String) -> Stripped {
    let empty = text.trim().is_empty();
    Stripped { text, empty }
}
