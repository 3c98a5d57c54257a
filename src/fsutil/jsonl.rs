//! Append-only JSON-lines files read back byte by byte (the team outbox and the writes its
//! server refused, the event log): a line cut short by a crash, a byte that is not UTF-8 or a
//! line that is not the expected JSON spoils that line alone, never the file. Writes start on
//! a fresh line, so a cut line never swallows the next one.

use std::borrow::Cow;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::Path;

use serde::de::DeserializeOwned;

/// One piece of an append-only JSON-lines file; blank lines are no pieces.
#[derive(Debug, PartialEq)]
pub enum Segment<'a, T> {
    /// A line holding a record (`bytes` without the newline). The last line counts even
    /// without its newline when it holds a whole record: the crash came between the two.
    Record { bytes: &'a [u8], record: T },
    /// A complete line that holds no record (line numbers start at 1).
    Unreadable {
        bytes: &'a [u8],
        line: usize,
        flaw: Flaw,
    },
    /// What follows the last newline and is no record: a line cut short by a crash, or one
    /// being written at this moment by a writer that holds no lock against the reader.
    Torn { bytes: &'a [u8] },
}

/// Why a line holds no record. Never quotes the line, which may hold anything.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Flaw {
    #[error("not UTF-8 from byte {0}")]
    NotUtf8(usize),
    #[error("not JSON")]
    NotJson,
    #[error("JSON of another shape")]
    OtherShape,
}

/// The record on one line (given without its newline); `None` for a blank line.
pub fn decode<T: DeserializeOwned>(line: &[u8]) -> Option<Result<T, Flaw>> {
    if line.iter().all(u8::is_ascii_whitespace) {
        return None;
    }
    if let Err(e) = std::str::from_utf8(line) {
        return Some(Err(Flaw::NotUtf8(e.valid_up_to())));
    }
    Some(
        serde_json::from_slice(line).map_err(|e| match e.classify() {
            serde_json::error::Category::Data => Flaw::OtherShape,
            _ => Flaw::NotJson,
        }),
    )
}

/// The pieces of a file's bytes, in order.
pub fn segments<T: DeserializeOwned>(bytes: &[u8]) -> Vec<Segment<'_, T>> {
    let (complete, tail) = match bytes.iter().rposition(|&b| b == b'\n') {
        Some(last) => (Some(&bytes[..last]), &bytes[last + 1..]),
        None => (None, bytes),
    };
    let lines = complete
        .into_iter()
        .flat_map(|complete| complete.split(|&b| b == b'\n'))
        .enumerate();
    let mut pieces = Vec::new();
    for (index, bytes) in lines {
        match decode(bytes) {
            None => {}
            Some(Ok(record)) => pieces.push(Segment::Record { bytes, record }),
            Some(Err(flaw)) => pieces.push(Segment::Unreadable {
                bytes,
                line: index + 1,
                flaw,
            }),
        }
    }
    match decode(tail) {
        None => {}
        Some(Ok(record)) => pieces.push(Segment::Record {
            bytes: tail,
            record,
        }),
        Some(Err(_)) => pieces.push(Segment::Torn { bytes: tail }),
    }
    pieces
}

/// The whole file at `path`; nothing when there is none.
pub fn read_if_present(path: &Path) -> std::io::Result<Vec<u8>> {
    match std::fs::read(path) {
        Ok(bytes) => Ok(bytes),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(e) => Err(e),
    }
}

/// `line` as it is to be appended to `file` (open for reading): after a newline when the
/// file ends inside a line, so that line stays apart and the new one reads whole.
pub fn on_fresh_line<'a>(file: &File, line: &'a [u8]) -> std::io::Result<Cow<'a, [u8]>> {
    if !ends_inside_a_line(file)? {
        return Ok(Cow::Borrowed(line));
    }
    let mut fresh = Vec::with_capacity(line.len() + 1);
    fresh.push(b'\n');
    fresh.extend_from_slice(line);
    Ok(Cow::Owned(fresh))
}

/// Whether `file` is not empty and its last byte is not a newline.
fn ends_inside_a_line(mut file: &File) -> std::io::Result<bool> {
    if file.metadata()?.len() == 0 {
        return Ok(false);
    }
    let mut last = [0u8];
    file.seek(SeekFrom::End(-1))?;
    file.read_exact(&mut last)?;
    Ok(last[0] != b'\n')
}

/// Appends `line` (newline included) to `path` in one write, on a fresh line, created 0600,
/// and syncs it to disk.
pub fn append_line(path: &Path, line: &[u8]) -> std::io::Result<()> {
    let mut file = super::append(path)?;
    file.write_all(&on_fresh_line(&file, line)?)?;
    file.sync_data()
}

#[cfg(test)]
mod tests;
