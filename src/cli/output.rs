//! Everything the binary prints on stdout goes through here. A reader that goes away early
//! (`cairn memory search … | head -5`) ends the run quietly and successfully, as with other
//! well-behaved command-line tools; any other failure to write is an error.

use std::fmt::Display;
use std::io::{self, Write as _};

use cairn::app::Text;
use serde::Serialize;

/// stdout's reader went away: nothing more can be said, and nothing went wrong.
#[derive(Debug, thiserror::Error)]
#[error("stdout was closed")]
pub struct Closed;

/// Prints `text` and a newline.
pub fn line(text: impl Display) -> anyhow::Result<()> {
    write(format_args!("{text}\n"))
}

/// Prints `text` as it is.
pub fn text(text: impl Display) -> anyhow::Result<()> {
    write(format_args!("{text}"))
}

/// Prints `value` as pretty JSON.
pub fn json(value: &impl Serialize) -> anyhow::Result<()> {
    line(serde_json::to_string_pretty(value)?)
}

/// Prints an answer as JSON, or as the text the MCP tools answer with.
pub fn answer(answer: &(impl Serialize + Text), as_json: bool) -> anyhow::Result<()> {
    if as_json {
        json(answer)
    } else {
        line(answer.to_text())
    }
}

/// Whether a run failed only because stdout's reader went away.
pub fn closed(error: &anyhow::Error) -> bool {
    error.chain().any(|cause| cause.is::<Closed>())
}

fn write(text: std::fmt::Arguments) -> anyhow::Result<()> {
    let mut stdout = io::stdout().lock();
    match stdout.write_fmt(text).and_then(|()| stdout.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Err(Closed.into()),
        Err(e) => Err(anyhow::Error::new(e).context("cannot write to stdout")),
    }
}
