//! Passwords on command lines: the flags and arguments through which programs take a password
//! or a token.
//!
//! Covered, for any program:
//! - long flags naming a secret, `--password SECRET` and `--password=SECRET`: the last word
//!   of the flag is `password`, `passwd`, `passphrase`, `pass`, `pwd`, `token`, `secret` or
//!   `apikey`, or `key` after `api`, `secret`, `access`, `auth`, `master`, `encryption`,
//!   `signing`, `account`, `client`, `license` or `app` (`--http-password`, `--api-key`,
//!   `--client-secret`, `--auth-token`); `--no-…` flags take no value, and `--password-file`
//!   or `--password-stdin` do not end in a secret word. Go-style single-dash flags
//!   (`-password`, `-token`) count too;
//! - settings handed as `KEY=VALUE` where `KEY` names a secret, glued to or after `-D`, `-P`,
//!   `--set`, `--set-string`, `--from-literal`, `--build-arg`, `-e`, `--env`, `-c`,
//!   `--config`, `-var`, `--var`, `--extra-vars` (`-Ddb.password=…`,
//!   `--from-literal=password=…`, `--set auth.rootPassword=…`);
//! - libpq connection strings (`psql "host=db user=app password=SECRET"`) and `.npmrc`
//!   credentials (`//registry/:_authToken=SECRET`, `_auth=`, `_password=`).
//!
//! And for the clients of [`CLIENTS`], their own flags: MySQL and MariaDB `-pSECRET` (glued
//! only: `-p` alone prompts, and the next word is the database), 7-Zip and RAR `-pSECRET`,
//! sshpass, twine and the MongoDB tools `-p SECRET`, SQL Server tools and zip `-P SECRET`,
//! redis-cli `-a SECRET`, OpenLDAP `-w SECRET`, ssh-keygen `-N`/`-P`, keytool and jarsigner
//! `-storepass`/`-keypass`/…, openssl `-passin pass:SECRET` and `enc -k SECRET`, curl
//! `-u user:SECRET`, lftp `-u user,SECRET`, Samba `-U user%SECRET`, `docker`/`podman`/`helm`/
//! `az`/… `login -p SECRET`, `htpasswd -b [FILE] USER SECRET`, `rabbitmqctl add_user USER
//! SECRET` and `ngrok authtoken SECRET`.
//!
//! Environment prefixes (`PGPASSWORD=… psql`, `MYSQL_PWD=…`, `SSHPASS=…`) are `.env`-style
//! assignments, found by the tier before this one; passwords in URLs likewise.
//!
//! A value given as the next word must stand as one: not another flag, a template (`$PASS`,
//! `<password>`), a placeholder (`PASSWORD`) or an English word that carries the sentence on
//! ("`sshpass -p is insecure`"); a lower-case word counts only where the command ends or a flag
//! follows.

use std::collections::HashMap;
use std::ops::Range;
use std::sync::LazyLock;

use super::{is_env_var_name, is_placeholder, is_template, names_a_secret};
use crate::words::is_stop_word;

/// How a client takes its secret.
#[derive(Clone, Copy)]
enum Takes {
    /// Glued to the flag only: `-pSECRET`.
    Glued(&'static str),
    /// As the next word, or glued for a one-letter flag: `-p SECRET`, `-pSECRET`.
    Flag(&'static str),
    /// As the next word only (the program has single-dash long flags that start alike:
    /// openssl's `-k SECRET` beside `-key FILE`).
    Next(&'static str),
    /// `USER<separator>SECRET`, as the next word or glued: `-u user:SECRET`.
    AfterUser(&'static str, char),
    /// `pass:SECRET` as the next word: `-passin pass:SECRET`.
    PassPrefixed(&'static str),
    /// The argument at this index after the subcommand: `add_user USER SECRET` is 1.
    Argument(usize),
    /// `htpasswd -b FILE USER SECRET`, or `-nb USER SECRET`.
    BatchPassword,
}

use Takes::*;

/// A program and the ways it takes a secret.
struct Client {
    /// Program names, as the command line spells them (path and `.exe` left out).
    programs: &'static [&'static str],
    /// A word that must come after the program (`docker login`), if any.
    subcommand: Option<&'static str>,
    takes: &'static [Takes],
}

/// The clients whose own flags carry a secret.
const CLIENTS: &[Client] = &[
    Client {
        programs: &[
            "mysql",
            "mysqldump",
            "mysqladmin",
            "mysqlimport",
            "mysqlcheck",
            "mysqlshow",
            "mysqlslap",
            "mysqlpump",
            "mysqlbinlog",
            "mysqlsh",
            "mariadb",
            "mariadb-dump",
            "mariadb-admin",
            "mariadb-import",
            "mariadb-check",
            "mariadb-show",
            "mariadb-slap",
            "mariadb-binlog",
            "7z",
            "7za",
            "7zr",
            "7zz",
            "rar",
            "unrar",
        ],
        subcommand: None,
        takes: &[Glued("-p")],
    },
    Client {
        programs: &[
            "sshpass",
            "twine",
            "mongo",
            "mongosh",
            "mongodump",
            "mongorestore",
            "mongoexport",
            "mongoimport",
            "mongostat",
            "mongotop",
            "mongofiles",
        ],
        subcommand: None,
        takes: &[Flag("-p")],
    },
    Client {
        programs: &["sqlcmd", "bcp", "osql", "zip", "unzip", "zipcloak"],
        subcommand: None,
        takes: &[Flag("-P")],
    },
    Client {
        programs: &["redis-cli", "valkey-cli", "keydb-cli"],
        subcommand: None,
        takes: &[Flag("-a")],
    },
    Client {
        programs: &[
            "ldapsearch",
            "ldapadd",
            "ldapmodify",
            "ldapdelete",
            "ldapmodrdn",
            "ldappasswd",
            "ldapwhoami",
            "ldapcompare",
            "ldapexop",
        ],
        subcommand: None,
        takes: &[Flag("-w")],
    },
    Client {
        programs: &["ssh-keygen"],
        subcommand: None,
        takes: &[Flag("-N"), Flag("-P")],
    },
    Client {
        programs: &["keytool", "jarsigner"],
        subcommand: None,
        takes: &[
            Flag("-storepass"),
            Flag("-keypass"),
            Flag("-srcstorepass"),
            Flag("-deststorepass"),
            Flag("-srckeypass"),
            Flag("-destkeypass"),
            Flag("-new"),
        ],
    },
    Client {
        programs: &["openssl"],
        subcommand: None,
        takes: &[
            PassPrefixed("-passin"),
            PassPrefixed("-passout"),
            PassPrefixed("-pass"),
            PassPrefixed("-password"),
            Next("-k"),
        ],
    },
    Client {
        programs: &["curl"],
        subcommand: None,
        takes: &[
            AfterUser("-u", ':'),
            AfterUser("--user", ':'),
            AfterUser("-U", ':'),
            AfterUser("--proxy-user", ':'),
        ],
    },
    Client {
        programs: &["lftp"],
        subcommand: None,
        takes: &[AfterUser("-u", ',')],
    },
    Client {
        programs: &[
            "smbclient",
            "rpcclient",
            "smbcacls",
            "smbget",
            "smbmap",
            "net",
        ],
        subcommand: None,
        takes: &[AfterUser("-U", '%'), AfterUser("--user", '%')],
    },
    Client {
        programs: &[
            "docker", "podman", "buildah", "skopeo", "nerdctl", "helm", "oras", "crane", "az",
        ],
        subcommand: Some("login"),
        takes: &[Flag("-p")],
    },
    Client {
        programs: &["htpasswd"],
        subcommand: None,
        takes: &[BatchPassword],
    },
    Client {
        programs: &["rabbitmqctl"],
        subcommand: Some("add_user"),
        takes: &[Argument(1)],
    },
    Client {
        programs: &["rabbitmqctl"],
        subcommand: Some("change_password"),
        takes: &[Argument(1)],
    },
    Client {
        programs: &["ngrok"],
        subcommand: Some("authtoken"),
        takes: &[Argument(0)],
    },
    Client {
        programs: &["ngrok"],
        subcommand: Some("add-authtoken"),
        takes: &[Argument(0)],
    },
];

/// [`CLIENTS`] by program name.
static CLIENTS_BY_PROGRAM: LazyLock<HashMap<&'static str, Vec<&'static Client>>> =
    LazyLock::new(|| {
        let mut by_program: HashMap<&str, Vec<&Client>> = HashMap::new();
        for client in CLIENTS {
            for program in client.programs {
                by_program.entry(program).or_default().push(client);
            }
        }
        by_program
    });

/// Flags after which (or glued to which, `-Dkey=value`) a word holds `KEY=VALUE` settings.
const SETTINGS_FLAGS: &[&str] = &[
    "-D",
    "-P",
    "--set",
    "--set-string",
    "--from-literal",
    "--build-arg",
    "-e",
    "--env",
    "-c",
    "--config",
    "-var",
    "--var",
    "--extra-vars",
];

/// Keywords of a libpq connection string (`host=db user=app password=…`).
const CONNINFO_KEYS: &[&str] = &["host", "hostaddr", "port", "dbname", "user", "sslmode"];

/// Words that carry a sentence about a flag on rather than give its value, besides the
/// function words search leaves out.
const FLAG_PROSE: &[&str] = &[
    "flag",
    "flags",
    "option",
    "options",
    "argument",
    "arguments",
    "parameter",
    "parameters",
    "switch",
    "value",
    "instead",
    "only",
    "first",
    "again",
    "now",
    "prompts",
    "asks",
    "works",
];

/// Longest command scanned after a program's name, in words.
const MAX_COMMAND_WORDS: usize = 40;

/// The secrets on the command lines in `text`, by position (they may overlap).
pub(super) fn passwords(text: &str) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        let end = at + line.trim_end_matches(['\n', '\r']).len();
        scan(text, at..end, 0, &mut out);
        at += line.len();
    }
    out
}

/// How deep commands quoted in commands are read (`ssh web1 "sh -c 'mysql -p…'"`).
const MAX_QUOTING: usize = 2;

/// The secrets of the command line in `range` (one line), and of the commands quoted in it
/// (`sh -c 'mysql -pSECRET'`).
fn scan(text: &str, range: Range<usize>, depth: usize, out: &mut Vec<Range<usize>>) {
    let words = words(text, range);
    for (i, w) in words.iter().enumerate() {
        generic(text, &words, i, out);
        let bare = trimmed(text, w.clone());
        if let Some(clients) = CLIENTS_BY_PROGRAM.get(program_name(&text[bare.clone()])) {
            let args = &words[i + 1..command_end(text, &words, i)];
            for client in clients {
                client_secrets(text, args, client, out);
            }
        }
        let inner = unquoted(text, bare.clone());
        if depth < MAX_QUOTING && inner != bare && text[inner.clone()].contains(' ') {
            scan(text, inner, depth + 1, out);
        }
    }
}

/// The words of a line as a shell splits them (quotes group, `\` escapes one character), as
/// byte ranges of `text`. A quote opens a group only at the start of a word, after `=` or
/// `:`, or after a flag (`-p'…'`), so an apostrophe in prose (`don't`) is a letter; so is a
/// quote that is not closed on the line.
fn words(text: &str, line: Range<usize>) -> Vec<Range<usize>> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = line.start;
    while i < line.end {
        if bytes[i].is_ascii_whitespace() {
            i += 1;
            continue;
        }
        let start = i;
        while i < line.end && !bytes[i].is_ascii_whitespace() {
            let b = bytes[i];
            if matches!(b, b'"' | b'\'')
                && opens_group(&text[start..i])
                && let Some(close) = text[i + 1..line.end].find(b as char)
            {
                i += close + 2;
                continue;
            }
            i += if b == b'\\' { 2 } else { 1 };
        }
        out.push(start..i.min(line.end));
    }
    out
}

/// Whether a quote after `prefix` (the word so far) opens a group.
fn opens_group(prefix: &str) -> bool {
    prefix.is_empty()
        || prefix.ends_with(['=', ':'])
        || (prefix.starts_with('-')
            && prefix
                .bytes()
                .all(|b| b == b'-' || b.is_ascii_alphanumeric()))
}

/// Where the command that `words[program]` starts ends: at a separator word (`;`, `|`, `&&`,
/// …), after a word that closes it (`…;`, `` …` ``, `…)`), or after [`MAX_COMMAND_WORDS`].
fn command_end(text: &str, words: &[Range<usize>], program: usize) -> usize {
    let last = words.len().min(program + 1 + MAX_COMMAND_WORDS);
    for (j, w) in words.iter().enumerate().take(last).skip(program + 1) {
        let word = &text[w.clone()];
        if matches!(word, ";" | "|" | "||" | "&&" | "&" | "then" | "do") {
            return j;
        }
        if word.ends_with([';', '`', ')']) {
            return j + 1;
        }
    }
    last
}

/// A word without the markup around it in prose: leading `` ` `` and `(`, trailing
/// `` ` ``, `(`, `)`, `;`, `,` and `.`.
fn trimmed(text: &str, w: Range<usize>) -> Range<usize> {
    let word = &text[w.clone()];
    let start = w.start + (word.len() - word.trim_start_matches(['`', '(']).len());
    let rest = &text[start..w.end];
    start..start + rest.trim_end_matches(['`', '(', ')', ';', ',', '.']).len()
}

/// `range` without one pair of quotes around it.
fn unquoted(text: &str, range: Range<usize>) -> Range<usize> {
    let s = &text[range.clone()];
    let quoted = s.len() >= 2
        && ((s.starts_with('"') && s.ends_with('"')) || (s.starts_with('\'') && s.ends_with('\'')));
    if quoted {
        range.start + 1..range.end - 1
    } else {
        range
    }
}

/// A word's value: trimmed, then unquoted.
fn value_of(text: &str, w: &Range<usize>) -> Range<usize> {
    unquoted(text, trimmed(text, w.clone()))
}

/// The program a word names: its last path segment, without `.exe`.
fn program_name(word: &str) -> &str {
    let word = word.trim_start_matches(['"', '\'', '$', '(']);
    let name = word.rsplit(['/', '\\']).next().unwrap_or(word);
    name.strip_suffix(".exe").unwrap_or(name)
}

/// A secret, whatever it looks like, unless it is empty, a template or a placeholder.
fn is_given(v: &str) -> bool {
    !v.is_empty()
        && !v.starts_with('`')
        && !is_template(v)
        && !is_placeholder(v)
        && !is_env_var_name(v)
}

/// A value given as the word after a flag (see the module's documentation); `next` is the
/// word after it in the command, if any.
fn stands_as_value(v: &str, next: Option<&str>) -> bool {
    let lower = v.to_ascii_lowercase();
    if !is_given(v)
        || v.starts_with('-')
        || is_stop_word(&lower)
        || FLAG_PROSE.contains(&lower.as_str())
    {
        return false;
    }
    let word = v.bytes().all(|b| b.is_ascii_lowercase());
    !word || next.is_none_or(|n| n.starts_with('-'))
}

/// The value glued to a one-letter flag: `-pSECRET`.
fn glued_value(text: &str, w: Range<usize>, flag: &str) -> Option<Range<usize>> {
    let word = &text[w.clone()];
    let glued =
        flag.len() == 2 && word.len() > 2 && word.starts_with(flag) && !word.starts_with("--");
    if !glued {
        return None;
    }
    let v = unquoted(text, w.start + flag.len()..w.end);
    is_given(&text[v.clone()]).then_some(v)
}

/// The word after `flag` at `args[k]`, if it stands as a value.
fn next_value(text: &str, args: &[Range<usize>], k: usize, flag: &str) -> Option<Range<usize>> {
    if text[trimmed(text, args[k].clone())] != *flag {
        return None;
    }
    let v = value_of(text, args.get(k + 1)?);
    let next = args.get(k + 2).map(|n| &text[n.clone()]);
    stands_as_value(&text[v.clone()], next).then_some(v)
}

/// The part of `range` after the first `separator` (`user:SECRET` → `SECRET`), if any.
fn after_separator(text: &str, range: Range<usize>, separator: char) -> Option<Range<usize>> {
    let at = text[range.clone()].find(separator)?;
    let v = unquoted(text, range.start + at + 1..range.end);
    is_given(&text[v.clone()]).then_some(v)
}

/// The secrets a client's own flags and arguments carry in `args`.
fn client_secrets(text: &str, args: &[Range<usize>], client: &Client, out: &mut Vec<Range<usize>>) {
    let word = |w: &Range<usize>| &text[trimmed(text, w.clone())];
    let after_subcommand = match client.subcommand {
        Some(sub) => match args.iter().position(|w| word(w) == sub) {
            Some(at) => at + 1,
            None => return,
        },
        None => 0,
    };
    let positional: Vec<&Range<usize>> = args[after_subcommand..]
        .iter()
        .filter(|w| !word(w).starts_with('-'))
        .collect();
    for takes in client.takes {
        match *takes {
            Argument(index) => {
                if let Some(w) = positional.get(index) {
                    let v = value_of(text, w);
                    if is_given(&text[v.clone()]) {
                        out.push(v);
                    }
                }
            }
            BatchPassword => {
                let clusters: Vec<&str> = args
                    .iter()
                    .map(&word)
                    .filter(|w| w.starts_with('-') && !w.starts_with("--"))
                    .collect();
                if clusters.iter().any(|c| c.contains('b')) {
                    let index = if clusters.iter().any(|c| c.contains('n')) {
                        1
                    } else {
                        2
                    };
                    if let Some(w) = positional.get(index) {
                        let v = value_of(text, w);
                        if is_given(&text[v.clone()]) {
                            out.push(v);
                        }
                    }
                }
            }
            _ => {
                for k in 0..args.len() {
                    if let Some(v) = flag_secret(text, args, k, *takes) {
                        out.push(v);
                    }
                }
            }
        }
    }
}

/// The secret a flag of kind `takes` at `args[k]` carries, if it is that flag.
fn flag_secret(text: &str, args: &[Range<usize>], k: usize, takes: Takes) -> Option<Range<usize>> {
    let w = trimmed(text, args[k].clone());
    let word = &text[w.clone()];
    match takes {
        Glued(flag) => glued_value(text, w, flag),
        Flag(flag) => next_value(text, args, k, flag).or_else(|| glued_value(text, w, flag)),
        Next(flag) => next_value(text, args, k, flag),
        AfterUser(flag, separator) => {
            let given = if word == flag {
                value_of(text, args.get(k + 1)?)
            } else if let Some(rest) = word.strip_prefix(flag) {
                let glued = rest.strip_prefix('=').unwrap_or(rest);
                if rest.is_empty() || (flag.len() > 2 && !rest.starts_with('=')) {
                    return None;
                }
                unquoted(text, w.end - glued.len()..w.end)
            } else {
                return None;
            };
            after_separator(text, given, separator)
        }
        PassPrefixed(flag) => {
            if word != flag {
                return None;
            }
            let v = value_of(text, args.get(k + 1)?);
            text[v.clone()]
                .starts_with("pass:")
                .then(|| unquoted(text, v.start + 5..v.end))
                .filter(|v| is_given(&text[v.clone()]))
        }
        Argument(_) | BatchPassword => None,
    }
}

/// The secrets any program's word at `words[i]` carries: a long flag naming a secret, `KEY=VALUE`
/// settings, a libpq connection string, `.npmrc` credentials.
fn generic(text: &str, words: &[Range<usize>], i: usize, out: &mut Vec<Range<usize>>) {
    let w = trimmed(text, words[i].clone());
    let word = &text[w.clone()];
    // Every form below has a flag's dash or a setting's `=`.
    if !word.contains(['-', '=']) {
        return;
    }
    if let Some(v) = secret_flag_value(text, words, i) {
        out.push(v);
    }
    let previous = i
        .checked_sub(1)
        .map(|p| &text[trimmed(text, words[p].clone())]);
    let after_settings_flag = previous.is_some_and(|p| SETTINGS_FLAGS.contains(&p));
    let glued_settings = SETTINGS_FLAGS.iter().find_map(|flag| {
        let rest = word.strip_prefix(flag)?;
        let rest = if flag.starts_with("--") {
            rest.strip_prefix('=')?
        } else {
            rest
        };
        (!rest.is_empty() && !rest.starts_with('-')).then_some(w.end - rest.len())
    });
    if after_settings_flag || glued_settings.is_some() {
        let start = glued_settings.unwrap_or(w.start);
        let settings = unquoted(text, start..w.end);
        for (key, value) in pairs(text, settings) {
            if names_a_secret(&text[key]) && is_given(&text[value.clone()]) {
                out.push(value);
            }
        }
    }
    let inner = unquoted(text, w.clone());
    let pieces = pairs(text, inner);
    if pieces.len() >= 2
        && pieces
            .iter()
            .any(|(k, _)| CONNINFO_KEYS.contains(&&text[k.clone()]))
    {
        for (key, value) in &pieces {
            if &text[key.clone()] == "password" && is_given(&text[value.clone()]) {
                out.push(value.clone());
            }
        }
    }
    for key in ["_authToken=", "_auth=", "_password="] {
        if let Some(at) = word.find(key) {
            let v = unquoted(text, w.start + at + key.len()..w.end);
            if is_given(&text[v.clone()]) {
                out.push(v);
            }
        }
    }
}

/// `KEY=VALUE` pieces of a word, split at blanks and commas: the key's and the value's ranges.
fn pairs(text: &str, range: Range<usize>) -> Vec<(Range<usize>, Range<usize>)> {
    let mut out = Vec::new();
    let mut at = range.start;
    for piece in text[range].split([' ', '\t', ',']) {
        if let Some(eq) = piece.find('=')
            && eq > 0
        {
            let value = unquoted(text, at + eq + 1..at + piece.len());
            out.push((at..at + eq, value));
        }
        at += piece.len() + 1;
    }
    out
}

/// The value of a flag naming a secret at `words[i]`: `--password=SECRET`, or
/// `--password SECRET` when the next word stands as a value.
fn secret_flag_value(text: &str, words: &[Range<usize>], i: usize) -> Option<Range<usize>> {
    let w = trimmed(text, words[i].clone());
    let word = &text[w.clone()];
    let (name, glued) = match word.split_once('=') {
        Some((name, _)) => (name, true),
        None => (word, false),
    };
    let dashes = name.len() - name.trim_start_matches('-').len();
    let flag = &name[dashes..];
    let single_dash_ok = dashes == 1 && flag.len() >= 5;
    if !(dashes == 2 || single_dash_ok) || !names_a_secret_flag(flag, dashes == 2) {
        return None;
    }
    if glued {
        let v = unquoted(text, w.start + name.len() + 1..w.end);
        let value = &text[v.clone()];
        let listing = value.split_once('=').is_some_and(|(k, _)| {
            !k.is_empty() && k.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
        });
        return (is_given(value) && !listing && !looks_like_file(value)).then_some(v);
    }
    let v = value_of(text, words.get(i + 1)?);
    let value = &text[v.clone()];
    let next = words.get(i + 2).map(|n| &text[n.clone()]);
    (stands_as_value(value, next) && !looks_like_file(value) && !value.contains('=')).then_some(v)
}

/// Whether a flag's name (without dashes) names a secret it takes as its value.
fn names_a_secret_flag(flag: &str, long: bool) -> bool {
    const LAST: &[&str] = &[
        "password",
        "passwd",
        "passphrase",
        "pass",
        "pwd",
        "token",
        "secret",
        "apikey",
    ];
    const BEFORE_KEY: &[&str] = &[
        "api",
        "secret",
        "access",
        "auth",
        "master",
        "encryption",
        "signing",
        "account",
        "client",
        "license",
        "app",
    ];
    let words: Vec<String> = flag
        .split(['-', '_'])
        .map(str::to_ascii_lowercase)
        .collect();
    if words.first().is_some_and(|w| w == "no") {
        return false;
    }
    match words.as_slice() {
        [.., before, last] if last == "key" => BEFORE_KEY.contains(&before.as_str()),
        [.., last] => {
            LAST.contains(&last.as_str()) && (long || !matches!(last.as_str(), "pass" | "pwd"))
        }
        [] => false,
    }
}

/// A file the value is read from (`key.pem`, `./token.txt`, `/run/secrets/db`), not the value.
fn looks_like_file(v: &str) -> bool {
    const EXTENSIONS: &[&str] = &[
        "pem", "key", "crt", "cer", "der", "p12", "pfx", "json", "txt", "env", "yaml", "yml",
        "toml", "ini", "conf", "asc", "gpg",
    ];
    v.contains('/')
        || v.rsplit_once('.')
            .is_some_and(|(stem, ext)| !stem.is_empty() && EXTENSIONS.contains(&ext))
}

#[cfg(test)]
mod tests {
    use super::super::{SecretKind, redact};

    /// The text with its secrets redacted.
    fn redacted(text: &str) -> String {
        redact(text).text
    }

    const M: &str = "[REDACTED:command-password]";

    #[test]
    fn client_flags_give_their_password() {
        for (command, secret) in [
            ("mysql -u root -pS3cretPass mydb", "S3cretPass"),
            ("mysql -uroot -p'my pass' db", "my pass"),
            (
                "run `mariadb-dump -u app -phunter2 shop > dump.sql` nightly",
                "hunter2",
            ),
            ("/usr/bin/mysqladmin -u root -pchangeme status", "changeme"),
            ("7z x backup.7z -pArch1ve!", "Arch1ve!"),
            ("sshpass -p hunter2 ssh deploy@web1", "hunter2"),
            ("sshpass -pT0ps3cret scp a b", "T0ps3cret"),
            (
                "mongosh -u admin -p Mongo#99 --authenticationDatabase admin",
                "Mongo#99",
            ),
            ("sqlcmd -S db -U sa -P 'P@ssw0rd' -Q 'select 1'", "P@ssw0rd"),
            ("zip -P zipSecret9 out.zip a.txt", "zipSecret9"),
            ("redis-cli -h cache -a R3disPass ping", "R3disPass"),
            ("redis-cli -a changeme", "changeme"),
            (
                "ldapsearch -x -D cn=admin,dc=ex -w LdapPw1 -b dc=ex",
                "LdapPw1",
            ),
            (
                "ssh-keygen -t ed25519 -N 'correct horse' -f key",
                "correct horse",
            ),
            (
                "keytool -list -keystore ks.jks -storepass changeit -keypass k3ypass",
                "changeit",
            ),
            (
                "openssl pkcs12 -export -passout pass:Exp0rtPw -out a.p12",
                "Exp0rtPw",
            ),
            ("openssl enc -aes-256-cbc -k EncK3y -in a -out b", "EncK3y"),
            ("curl -u admin:Adm1nPw https://api.example.com", "Adm1nPw"),
            ("curl --user=bob:b0bpass https://x.example", "b0bpass"),
            ("curl -ualice:Al1cePw https://x.example", "Al1cePw"),
            ("lftp -u deploy,Ftp4ss ftp.example.com", "Ftp4ss"),
            ("smbclient //fs/share -U alice%Smb4ss", "Smb4ss"),
            (
                "docker login -u ci -p D0ckerPw registry.example.com",
                "D0ckerPw",
            ),
            (
                "helm registry login reg.example.com -u ci -p HelmPw1",
                "HelmPw1",
            ),
            ("az login -u a@b.io -p AzurePw1", "AzurePw1"),
            ("htpasswd -bc .htpasswd admin Htp4ss", "Htp4ss"),
            ("htpasswd -nb admin Htp4ss2", "Htp4ss2"),
            ("rabbitmqctl add_user app Rabb1tPw", "Rabb1tPw"),
            (
                "ngrok config add-authtoken 2abcDEFghi3JKL",
                "2abcDEFghi3JKL",
            ),
            ("twine upload -u __token__ -p Tw1nePw dist/*", "Tw1nePw"),
            ("docker exec db sh -c 'mysql -uroot -pQu0ted db'", "Qu0ted"),
            ("ssh web1 \"redis-cli -a N3sted ping\"", "N3sted"),
        ] {
            let r = redact(command);
            assert!(!r.text.contains(secret), "{command:?} → {:?}", r.text);
            assert_eq!(r.kinds, vec![SecretKind::CommandPassword], "{command:?}");
        }
        assert_eq!(
            redacted("keytool -storepass changeit -keypass k3ypass"),
            format!("keytool -storepass {M} -keypass {M}")
        );
        assert_eq!(
            redacted("mysql -u root -p'S3cret' db"),
            format!("mysql -u root -p'{M}' db")
        );
    }

    #[test]
    fn generic_flags_and_settings_give_their_secret() {
        for (command, secret) in [
            ("mysql --user=root --password=hunter2 db", "hunter2"),
            (
                "wget --http-password=W3tPass https://x.example/f",
                "W3tPass",
            ),
            ("vault-cli --token T0k3nValue9 read", "T0k3nValue9"),
            ("tool --api-key=abc123 sync", "abc123"),
            ("gh-like --client-secret 'Cl13nt S3cret'", "Cl13nt S3cret"),
            (
                "influx -username admin -password Infl0x! -execute 'show'",
                "Infl0x!",
            ),
            ("java -Ddb.password=jdbcpw9 -jar app.jar", "jdbcpw9"),
            (
                "kubectl create secret generic db --from-literal=password=kub3pw",
                "kub3pw",
            ),
            (
                "helm install x --set auth.rootPassword=helmroot1",
                "helmroot1",
            ),
            ("gradle publish -Psigning.password=gradl3pw", "gradl3pw"),
            (
                "psql \"host=db user=app password=PgPw42 dbname=shop\"",
                "PgPw42",
            ),
            (
                "npm config set //registry.example.com/:_authToken=npmT0k3n",
                "npmT0k3n",
            ),
            ("terraform apply -var 'db_password=tfpass1'", "tfpass1"),
        ] {
            let out = redacted(command);
            assert!(!out.contains(secret), "{command:?} → {out:?}");
        }
    }

    #[test]
    fn flags_without_a_secret_value_survive() {
        for text in [
            "mysql -u root -p shop",
            "mysql -p prompts for the password",
            "mysqldump -p --single-transaction shop",
            "mysql -P 3306 -h db",
            "docker run -p 8080:80 nginx",
            "sshpass -p is insecure: use -f with a file",
            "redis-cli -a leaks the password to ps",
            "use the --password flag only in CI",
            "pass --token when calling the API",
            "docker login --password-stdin < token.txt",
            "gh auth login --with-token < token.txt",
            "--token-file ~/.config/token",
            "curl -u alice https://x.example asks for the password",
            "docker build --secret id=npmrc,src=$HOME/.npmrc .",
            "mysql --password=$DB_PASSWORD",
            "mysql -u root -p\"$MYSQL_PWD\"",
            "sqlcmd -S db -U sa -P <password>",
            "tool --no-password --token-limit 40",
            "cargo test --all-features -p cairn",
            "pip install -r requirements.txt",
            "openssl enc -passin env:PASSPHRASE -in a",
            "keytool -storepass:file pw.txt",
            "ssh-keygen -t ed25519 -N '' -f key",
            "kubectl get pods -o wide --token-ttl 3600",
            "htpasswd -c .htpasswd admin",
            "the --api-key header goes to the proxy instead",
        ] {
            let r = redact(text);
            assert_eq!(r.text, text, "false positive: {:?}", r.kinds);
        }
    }
}
