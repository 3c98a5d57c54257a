//! Reading JSON lines back: whole records, lines that hold none, cut tails, and writes that
//! start on a fresh line.

use super::*;

#[derive(Debug, PartialEq, serde::Deserialize)]
struct Note {
    n: u32,
    text: String,
}

/// The file's pieces in a form to compare: `R<n>` a record, `U<line>` an unreadable line,
/// `T<bytes>` a torn tail.
fn check(bytes: &[u8], expected: &[&str]) {
    let found: Vec<String> = segments::<Note>(bytes)
        .into_iter()
        .map(|segment| match segment {
            Segment::Record { record, .. } => format!("R{}", record.n),
            Segment::Unreadable { line, .. } => format!("U{line}"),
            Segment::Torn { bytes } => format!("T{}", bytes.len()),
        })
        .collect();
    assert_eq!(found, expected, "{}", String::from_utf8_lossy(bytes));
}

#[test]
fn records_lines_that_hold_none_and_a_cut_tail_are_told_apart() {
    check(b"", &[]);
    check(b"\n\n  \n", &[]);
    check(b"{\"n\":1,\"text\":\"a\"}\n", &["R1"]);
    // A whole record whose newline never came is a record.
    check(
        b"{\"n\":1,\"text\":\"a\"}\n{\"n\":2,\"text\":\"b\"}",
        &["R1", "R2"],
    );
    check(b"{\"n\":1,\"text\":\"a\"}\n{\"n\":2,\"te", &["R1", "T10"]);
    check(
        b"junk\n{\"n\":2,\"text\":\"b\"}\n[1]\n{\"n\":3,\"text\":\"c\xff\"}\n",
        &["U1", "R2", "U3", "U4"],
    );
    // Cut inside the three bytes of one character.
    let line = "{\"n\":4,\"text\":\"✓\"}".as_bytes();
    let cut = line.iter().position(|&b| b >= 0x80).unwrap() + 1;
    check(&line[..cut], &["T16"]);
}

#[test]
fn flaws_say_what_is_wrong_without_quoting_the_line() {
    assert_eq!(decode::<Note>(b"  "), None);
    assert_eq!(decode::<Note>(b"ab\xc3"), Some(Err(Flaw::NotUtf8(2))));
    assert_eq!(
        decode::<Note>(b"password=hunter2"),
        Some(Err(Flaw::NotJson))
    );
    let other = decode::<Note>(b"{\"n\":\"hunter2\"}").unwrap().unwrap_err();
    assert_eq!(other, Flaw::OtherShape);
    assert!(!other.to_string().contains("hunter2"));
}

#[test]
fn a_write_after_a_cut_line_starts_on_a_fresh_one() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("log.jsonl");
    append_line(&path, b"{\"n\":1,\"text\":\"a\"}\n").unwrap();
    append_line(&path, b"{\"n\":2,\"text\":\"b\"}\n").unwrap();
    assert_eq!(
        std::fs::read(&path).unwrap(),
        b"{\"n\":1,\"text\":\"a\"}\n{\"n\":2,\"text\":\"b\"}\n"
    );
    let mut file = crate::fsutil::append(&path).unwrap();
    file.write_all(
        "{\"n\":3,\"text\":\"caf\u{e9}"
            .as_bytes()
            .split_last()
            .unwrap()
            .1,
    )
    .unwrap();
    append_line(&path, b"{\"n\":4,\"text\":\"d\"}\n").unwrap();
    check(&std::fs::read(&path).unwrap(), &["R1", "R2", "U3", "R4"]);
}
