//! cairn's entries in JSON and JSONC configs, edited through a concrete syntax tree so that
//! comments, trailing commas and formatting around them survive byte for byte.

use std::path::Path;

use jsonc_parser::ast;
use jsonc_parser::common::Ranged;
use jsonc_parser::cst::{CstArray, CstInputValue, CstNode, CstObject, CstRootNode};
use jsonc_parser::tokens::Token;
use jsonc_parser::{CollectOptions, CommentCollectionStrategy, ParseOptions};
use serde_json::Value;

use super::Error;
use super::launch::Launch;
use super::piece::Stripped;
use super::shell::shell_unquote;

/// The key MCP clients keep their servers under.
const SERVERS: &str = "mcpServers";
/// cairn's name among them.
const NAME: &str = "cairn";
/// What a config cairn creates starts from.
const EMPTY: &str = "{}\n";

/// The Claude Code hook events cairn listens to, with the tool matcher where one applies.
/// `PreToolUse` is left out: `cairn hook` records a tool use once it ran (`PostToolUse`), so a
/// pre-hook would cost a process per tool call for nothing.
pub(super) const HOOK_EVENTS: [(&str, Option<&str>); 3] = [
    ("SessionStart", None),
    ("PostToolUse", Some(TOOL_MATCHER)),
    ("Stop", None),
];

/// The tools whose use cairn records as episodic events.
const TOOL_MATCHER: &str = "Read|Edit|MultiEdit|Write|NotebookEdit|Bash|Grep|Glob";

/// Seconds Claude Code gives `cairn hook` before moving on.
const HOOK_TIMEOUT: u32 = 10;

/// `text` with `mcpServers.cairn` set to `entry` (other servers untouched).
pub(super) fn set_server(
    path: &Path,
    current: Option<&str>,
    entry: &CstInputValue,
) -> Result<String, Error> {
    let root = parse(path, current)?;
    let servers = object_in(path, &root_object(path, &root)?, SERVERS)?;
    let wanted = input_to_json(entry);
    match servers.get(NAME) {
        Some(prop) if prop.value().as_ref().and_then(to_json).as_ref() == Some(&wanted) => {}
        Some(prop) => prop.set_value(entry.clone()),
        None => {
            servers.append(NAME, entry.clone());
        }
    }
    Ok(root.to_string())
}

/// `text` without `mcpServers.cairn` (and without `mcpServers` if that leaves it empty).
pub(super) fn remove_server(path: &Path, text: &str) -> Result<Stripped, Error> {
    let root = parse(path, Some(text))?;
    if let Some(object) = root.object_value()
        && let Some(servers) = object.object_value(SERVERS)
        && let Some(prop) = servers.get(NAME)
    {
        prop.remove();
        remove_if_empty(&object, SERVERS);
    }
    Ok(stripped(root.to_string()))
}

/// The `mcpServers.cairn` entry, if there is one.
pub(super) fn server(path: &Path, text: &str) -> Result<Option<Value>, Error> {
    let root = parse(path, Some(text))?;
    Ok(root
        .object_value()
        .and_then(|object| object.object_value(SERVERS))
        .and_then(|servers| servers.get(NAME))
        .and_then(|prop| prop.value())
        .and_then(|value| to_json(&value)))
}

/// `text` with one cairn hook entry per event in [`HOOK_EVENTS`], replacing any older cairn
/// hook and leaving other hooks alone.
pub(super) fn set_hooks(
    path: &Path,
    current: Option<&str>,
    launch: &Launch,
) -> Result<String, Error> {
    let root = parse(path, current)?;
    let hooks = object_in(path, &root_object(path, &root)?, "hooks")?;
    let command = hook_command(launch);
    for (event, matcher) in HOOK_EVENTS {
        let entries = hooks
            .array_value_or_create(event)
            .ok_or_else(|| shape(path, &format!("hooks.{event}"), "an array"))?;
        let wanted = hook_entry(matcher, &command);
        if holds_only(&entries, &input_to_json(&wanted), launch) {
            continue;
        }
        remove_cairn_hooks(&entries, launch);
        entries.append(wanted);
    }
    Ok(root.to_string())
}

/// `text` without cairn's hooks; entries, events and `hooks` they leave empty go too.
pub(super) fn remove_hooks(path: &Path, text: &str, launch: &Launch) -> Result<Stripped, Error> {
    let root = parse(path, Some(text))?;
    if let Some(object) = root.object_value()
        && let Some(hooks) = object.object_value("hooks")
    {
        let mut removed = false;
        for event in hooks.properties() {
            if let Some(entries) = event.array_value()
                && remove_cairn_hooks(&entries, launch)
            {
                removed = true;
                if entries.elements().is_empty() {
                    event.remove();
                }
            }
        }
        if removed {
            remove_if_empty(&object, "hooks");
        }
    }
    Ok(stripped(root.to_string()))
}

/// The events among [`HOOK_EVENTS`] that lack cairn's hook as install writes it.
pub(super) fn missing_hook_events(
    path: &Path,
    text: &str,
    launch: &Launch,
) -> Result<Vec<&'static str>, Error> {
    let root = parse(path, Some(text))?;
    let hooks = root.object_value().and_then(|o| o.object_value("hooks"));
    let command = hook_command(launch);
    Ok(HOOK_EVENTS
        .into_iter()
        .filter(|(event, matcher)| {
            let wanted = input_to_json(&hook_entry(*matcher, &command));
            let entries = hooks.as_ref().and_then(|h| h.array_value(event));
            !entries.is_some_and(|e| {
                e.elements()
                    .iter()
                    .any(|n| to_json(n) == Some(wanted.clone()))
            })
        })
        .map(|(event, _)| event)
        .collect())
}

/// The shell command Claude Code runs for a hook: `cairn hook` as `launch` runs it (each word
/// quoted if it needs to be).
pub(super) fn hook_command(launch: &Launch) -> String {
    launch.command_line(&["hook"])
}

/// Whether a hook command is cairn's: `… hook` run as `launch` runs cairn, by any binary named
/// like it (an install from another path), or through a package runner running cairn.
fn is_cairn_hook(command: &str, launch: &Launch) -> bool {
    let command = command.trim_end();
    if command == hook_command(launch) {
        return true;
    }
    let Some(program) = command.strip_suffix(" hook") else {
        return false;
    };
    let single = shell_unquote(program.trim());
    let name = Path::new(&single).file_name();
    let named_like = name.is_some_and(|n| Some(n) == launch.program.file_name() || n == "cairn");
    let words: Vec<&str> = program.split_whitespace().collect();
    let through_runner = words.len() > 1
        && ["npx", "uvx", "pipx"].contains(&words[0])
        && words
            .last()
            .is_some_and(|w| *w == "cairn" || *w == "cairn-mcp");
    named_like || through_runner
}

fn hook_entry(matcher: Option<&str>, command: &str) -> CstInputValue {
    let hook = CstInputValue::Object(vec![
        ("type".into(), "command".into()),
        ("command".into(), command.into()),
        ("timeout".into(), HOOK_TIMEOUT.into()),
    ]);
    let mut entry = Vec::new();
    if let Some(matcher) = matcher {
        entry.push(("matcher".to_string(), matcher.into()));
    }
    entry.push(("hooks".to_string(), CstInputValue::Array(vec![hook])));
    CstInputValue::Object(entry)
}

/// Whether the event's entries hold `wanted` and no other cairn hook.
fn holds_only(entries: &CstArray, wanted: &Value, launch: &Launch) -> bool {
    let elements = entries.elements();
    let cairn_hooks: usize = elements
        .iter()
        .map(|element| cairn_hooks_in(element, launch).len())
        .sum();
    cairn_hooks == 1 && elements.iter().any(|e| to_json(e).as_ref() == Some(wanted))
}

/// Takes cairn's hooks out of an event's entries, and entries left with no hooks; whether it
/// took any.
fn remove_cairn_hooks(entries: &CstArray, launch: &Launch) -> bool {
    let mut removed = false;
    for element in entries.elements() {
        let found = cairn_hooks_in(&element, launch);
        if found.is_empty() {
            continue;
        }
        removed = true;
        for hook in found {
            hook.remove();
        }
        let inner = element.as_object().and_then(|o| o.array_value("hooks"));
        if inner.is_some_and(|hooks| hooks.elements().is_empty()) {
            element.remove();
        }
    }
    removed
}

/// The hooks of one entry (`{"matcher": …, "hooks": [{"command": …}]}`) that are cairn's.
fn cairn_hooks_in(entry: &CstNode, launch: &Launch) -> Vec<CstNode> {
    let Some(hooks) = entry.as_object().and_then(|o| o.array_value("hooks")) else {
        return Vec::new();
    };
    hooks
        .elements()
        .into_iter()
        .filter(|hook| {
            hook.as_object()
                .and_then(|o| o.get("command"))
                .and_then(|prop| prop.value())
                .and_then(|value| value.as_string_lit())
                .and_then(|s| s.decoded_value().ok())
                .is_some_and(|command| is_cairn_hook(&command, launch))
        })
        .collect()
}

fn parse(path: &Path, current: Option<&str>) -> Result<CstRootNode, Error> {
    let text = current.filter(|t| !t.trim().is_empty()).unwrap_or(EMPTY);
    require_commas(path, text)?;
    CstRootNode::parse(text, &ParseOptions::default()).map_err(|e| syntax_error(path, &e))
}

/// Refuses what the lenient JSONC parser lets through but clients would not read: two
/// members or elements with no comma between them.
fn require_commas(path: &Path, text: &str) -> Result<(), Error> {
    let collect = CollectOptions {
        comments: CommentCollectionStrategy::Off,
        tokens: true,
    };
    let parsed = jsonc_parser::parse_to_ast(text, &collect, &ParseOptions::default())
        .map_err(|e| syntax_error(path, &e))?;
    let commas: Vec<usize> = parsed
        .tokens
        .unwrap_or_default()
        .iter()
        .filter(|t| t.token == Token::Comma)
        .map(|t| t.range.start)
        .collect();
    let Some(at) = parsed
        .value
        .as_ref()
        .and_then(|v| missing_comma(v, &commas))
    else {
        return Ok(());
    };
    let before = &text[..at];
    Err(Error::Syntax {
        path: path.to_path_buf(),
        format: "JSON",
        line: before.matches('\n').count() + 1,
        column: before.rsplit('\n').next().unwrap_or("").chars().count() + 1,
        message: "expected a comma before this".into(),
    })
}

/// Where the first member or element without a comma before it starts.
fn missing_comma(value: &ast::Value, commas: &[usize]) -> Option<usize> {
    let (ranges, children): (Vec<_>, Vec<_>) = match value {
        ast::Value::Object(object) => object
            .properties
            .iter()
            .map(|p| (p.range, &p.value))
            .unzip(),
        ast::Value::Array(array) => array.elements.iter().map(|e| (e.range(), e)).unzip(),
        _ => return None,
    };
    for pair in ranges.windows(2) {
        let next_comma = commas.partition_point(|&c| c < pair[0].end);
        if commas.get(next_comma).is_none_or(|&c| c >= pair[1].start) {
            return Some(pair[1].start);
        }
    }
    children
        .into_iter()
        .find_map(|child| missing_comma(child, commas))
}

fn syntax_error(path: &Path, error: &jsonc_parser::errors::ParseError) -> Error {
    Error::Syntax {
        path: path.to_path_buf(),
        format: "JSON",
        line: error.line_display(),
        column: error.column_display(),
        message: error.kind().to_string(),
    }
}

fn root_object(path: &Path, root: &CstRootNode) -> Result<CstObject, Error> {
    match root.value() {
        None => Ok(root.object_value_or_set()),
        Some(value) => value
            .as_object()
            .ok_or_else(|| shape(path, "(top level)", "an object")),
    }
}

fn object_in(path: &Path, parent: &CstObject, key: &str) -> Result<CstObject, Error> {
    parent
        .object_value_or_create(key)
        .ok_or_else(|| shape(path, key, "an object"))
}

fn remove_if_empty(parent: &CstObject, key: &str) {
    if let Some(prop) = parent.get(key)
        && prop
            .object_value()
            .is_some_and(|o| o.properties().is_empty())
    {
        prop.remove();
    }
}

fn shape(path: &Path, key: &str, expected: &'static str) -> Error {
    Error::Shape {
        path: path.to_path_buf(),
        key: key.to_string(),
        expected,
    }
}

fn stripped(text: String) -> Stripped {
    let empty = text.split_whitespace().collect::<String>() == "{}";
    Stripped { text, empty }
}

/// The JSON value of a node; `None` for what JSON has no value for (bare words).
pub(super) fn to_json(node: &CstNode) -> Option<Value> {
    if let Some(object) = node.as_object() {
        let mut map = serde_json::Map::new();
        for prop in object.properties() {
            let name = prop.name()?.decoded_value().ok()?;
            map.insert(name, to_json(&prop.value()?)?);
        }
        Some(Value::Object(map))
    } else if let Some(array) = node.as_array() {
        array.elements().iter().map(to_json).collect()
    } else if let Some(string) = node.as_string_lit() {
        string.decoded_value().ok().map(Value::String)
    } else if let Some(number) = node.as_number_lit() {
        serde_json::from_str(&number.to_string()).ok()
    } else if let Some(boolean) = node.as_boolean_lit() {
        Some(Value::Bool(boolean.value()))
    } else {
        node.as_null_keyword().map(|_| Value::Null)
    }
}

fn input_to_json(input: &CstInputValue) -> Value {
    match input {
        CstInputValue::Null => Value::Null,
        CstInputValue::Bool(b) => Value::Bool(*b),
        CstInputValue::Number(n) => serde_json::from_str(n).unwrap_or(Value::Null),
        CstInputValue::String(s) => Value::String(s.clone()),
        CstInputValue::Array(items) => Value::Array(items.iter().map(input_to_json).collect()),
        CstInputValue::Object(props) => Value::Object(
            props
                .iter()
                .map(|(k, v)| (k.clone(), input_to_json(v)))
                .collect(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hook_commands_quote_paths_with_spaces_and_are_recognised() {
        let plain = Launch::binary(Path::new("/usr/local/bin/cairn"));
        assert_eq!(hook_command(&plain), "/usr/local/bin/cairn hook");
        let spaced = Launch::binary(Path::new("/Users/me/My Tools/cairn"));
        let command = hook_command(&spaced);
        assert_eq!(command, "'/Users/me/My Tools/cairn' hook");
        assert!(is_cairn_hook(&command, &spaced));
        assert!(is_cairn_hook("/old/place/cairn hook", &spaced));
        assert!(!is_cairn_hook("/usr/bin/other hook", &plain));
        assert!(!is_cairn_hook("/usr/local/bin/cairn serve", &plain));
        let quote = Launch::binary(Path::new("/tmp/it's/cairn"));
        assert!(is_cairn_hook(&hook_command(&quote), &quote));
        // Through a runner, and an install through a runner seen by a binary install.
        let npx = Launch::for_binary(Path::new("/h/.npm/_npx/1/node_modules/x/bin/cairn"));
        assert_eq!(hook_command(&npx), "npx -y cairn-mcp hook");
        assert!(is_cairn_hook("npx -y cairn-mcp hook", &plain));
        assert!(is_cairn_hook("uvx --from cairn-mcp cairn hook", &npx));
        assert!(!is_cairn_hook("npx -y other-tool hook", &plain));
    }

    #[test]
    fn a_changed_entry_is_replaced_in_place_and_an_equal_one_left_alone() {
        let path = Path::new("mcp.json");
        let entry = CstInputValue::Object(vec![
            ("command".into(), "/bin/cairn".into()),
            ("args".into(), CstInputValue::Array(vec!["serve".into()])),
        ]);
        let same = "{ \"mcpServers\": { \"cairn\": {\"args\": [\"serve\"], \"command\": \"/bin/cairn\"} } }";
        assert_eq!(set_server(path, Some(same), &entry).unwrap(), same);
        let old = "{\n  \"mcpServers\": {\n    \"cairn\": { \"command\": \"/old/cairn\" },\n    \"x\": {}\n  }\n}\n";
        let new = set_server(path, Some(old), &entry).unwrap();
        let value: Value = serde_json::from_str(&new).unwrap();
        assert_eq!(value["mcpServers"]["cairn"]["command"], "/bin/cairn");
        assert!(new.find("cairn").unwrap() < new.find("\"x\"").unwrap());
    }

    #[test]
    fn a_missing_comma_is_a_syntax_error_with_its_line() {
        let path = Path::new("mcp.json");
        let entry = CstInputValue::Null;
        for (text, line) in [
            ("{\n  \"a\": {}\n  \"b\": {}\n}", 3),
            ("{\"x\": [1, 2,\n 3 4]}", 2),
            ("{\"x\": {\"y\": 1 /* c */ \"z\": 2}}", 1),
        ] {
            let err = set_server(path, Some(text), &entry).unwrap_err();
            assert!(
                err.to_string().contains(&format!("(line {line},")),
                "{text}: {err}"
            );
        }
        let fine = "{\"a\": 1, // c\n \"b\": [1, 2,], }";
        assert!(set_server(path, Some(fine), &entry).is_ok());
    }

    #[test]
    fn a_config_that_is_not_an_object_is_refused() {
        let path = Path::new("settings.json");
        let err = set_hooks(
            path,
            Some("[1, 2]"),
            &Launch::binary(Path::new("/bin/cairn")),
        )
        .unwrap_err();
        assert!(err.to_string().contains("not an object"), "{err}");
        let err = set_hooks(
            path,
            Some("{\"hooks\": []}"),
            &Launch::binary(Path::new("/bin/cairn")),
        )
        .unwrap_err();
        assert!(
            err.to_string().contains("`hooks` is not an object"),
            "{err}"
        );
    }
}
