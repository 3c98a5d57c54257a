//! The page's log-in, held in memory: one-time codes that `cairn ui` asks for with the bearer
//! token, and the sessions a browser exchanges them for (a cookie value and a CSRF token each).
//! Codes and session ids are compared in constant time, one by one, never looked up by value.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::fsutil::random_hex;

/// How long a one-time code can be exchanged.
pub const CODE_LIFETIME: Duration = Duration::from_secs(60);
/// How long a session lasts from its log-in.
pub(crate) const SESSION_LIFETIME: Duration = Duration::from_secs(12 * 3600);
/// Most codes waiting at once (the oldest goes first).
const MAX_CODES: usize = 16;
/// Most sessions at once (the oldest goes first).
const MAX_SESSIONS: usize = 64;
/// Random bytes in a code, a session id and a CSRF token.
const SECRET_BYTES: usize = 32;

/// A logged-in browser: the CSRF token its forms carry.
#[derive(Debug, Clone, PartialEq)]
pub struct Session {
    pub csrf: String,
}

/// A fresh session: the cookie's value and the session.
#[derive(Debug, Clone)]
pub struct LoggedIn {
    pub id: String,
    pub session: Session,
}

/// The daemon's codes and sessions.
#[derive(Default)]
pub struct Sessions {
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    codes: Vec<Expiring<String>>,
    sessions: Vec<Expiring<LoggedIn>>,
}

struct Expiring<T> {
    value: T,
    expires: Instant,
}

impl Sessions {
    /// A new one-time code, valid for [`CODE_LIFETIME`].
    pub fn issue_code(&self) -> std::io::Result<String> {
        self.issue_code_at(Instant::now())
    }

    /// Exchanges a one-time code for a new session; a code works once, before it expires.
    pub fn exchange(&self, code: &str) -> std::io::Result<Option<LoggedIn>> {
        self.exchange_at(code, Instant::now())
    }

    /// The session whose id the cookie holds, while it lasts.
    pub fn session(&self, id: &str) -> Option<Session> {
        self.session_at(id, Instant::now())
    }

    /// Whether `code` is one of these codes, unused and unexpired (the code is not used up).
    pub fn holds_code(&self, code: &str) -> bool {
        let mut inner = self.lock();
        inner.prune(Instant::now());
        position(&inner.codes, |c| same(c.as_bytes(), code.as_bytes())).is_some()
    }

    /// When the session whose id the cookie holds logged in, while it lasts.
    pub fn logged_in_at(&self, id: &str) -> Option<Instant> {
        let mut inner = self.lock();
        inner.prune(Instant::now());
        let at = position(&inner.sessions, |s| same(s.id.as_bytes(), id.as_bytes()))?;
        inner.sessions[at].expires.checked_sub(SESSION_LIFETIME)
    }

    fn issue_code_at(&self, now: Instant) -> std::io::Result<String> {
        let code = random_hex(SECRET_BYTES)?;
        let mut inner = self.lock();
        inner.prune(now);
        if inner.codes.len() >= MAX_CODES {
            inner.codes.remove(0);
        }
        inner.codes.push(Expiring {
            value: code.clone(),
            expires: now + CODE_LIFETIME,
        });
        Ok(code)
    }

    fn exchange_at(&self, code: &str, now: Instant) -> std::io::Result<Option<LoggedIn>> {
        let mut inner = self.lock();
        inner.prune(now);
        let Some(at) = position(&inner.codes, |c| same(c.as_bytes(), code.as_bytes())) else {
            return Ok(None);
        };
        inner.codes.remove(at);
        let logged_in = LoggedIn {
            id: random_hex(SECRET_BYTES)?,
            session: Session {
                csrf: random_hex(SECRET_BYTES)?,
            },
        };
        if inner.sessions.len() >= MAX_SESSIONS {
            inner.sessions.remove(0);
        }
        inner.sessions.push(Expiring {
            value: logged_in.clone(),
            expires: now + SESSION_LIFETIME,
        });
        Ok(Some(logged_in))
    }

    fn session_at(&self, id: &str, now: Instant) -> Option<Session> {
        let mut inner = self.lock();
        inner.prune(now);
        let at = position(&inner.sessions, |s| same(s.id.as_bytes(), id.as_bytes()))?;
        Some(inner.sessions[at].value.session.clone())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        // The lists stay consistent whatever panicked while holding them.
        self.inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl Inner {
    fn prune(&mut self, now: Instant) {
        self.codes.retain(|c| c.expires > now);
        self.sessions.retain(|s| s.expires > now);
    }
}

/// The index of the entry `matches` accepts, every entry compared (no early exit).
fn position<T>(entries: &[Expiring<T>], matches: impl Fn(&T) -> bool) -> Option<usize> {
    let mut found = None;
    for (i, entry) in entries.iter().enumerate() {
        if matches(&entry.value) && found.is_none() {
            found = Some(i);
        }
    }
    found
}

/// Compares in time independent of where the inputs differ.
pub fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_compare_whole() {
        assert!(same(b"abc", b"abc"));
        assert!(!same(b"abc", b"abd"));
        assert!(!same(b"abc", b"abcd"));
        assert!(!same(b"", b"abc"));
    }

    #[test]
    fn a_code_works_once() {
        let sessions = Sessions::default();
        let code = sessions.issue_code().unwrap();
        assert_eq!(code.len(), 2 * SECRET_BYTES);
        let logged_in = sessions.exchange(&code).unwrap().expect("a fresh code");
        assert_eq!(sessions.session(&logged_in.id), Some(logged_in.session));
        assert!(sessions.exchange(&code).unwrap().is_none(), "used");
        assert!(sessions.exchange("").unwrap().is_none());
        assert!(sessions.exchange(&"0".repeat(64)).unwrap().is_none());
    }

    #[test]
    fn codes_and_sessions_expire() {
        let sessions = Sessions::default();
        let start = Instant::now();
        let late = sessions.issue_code_at(start).unwrap();
        let after = start + CODE_LIFETIME + Duration::from_millis(1);
        assert!(sessions.exchange_at(&late, after).unwrap().is_none());
        let code = sessions.issue_code_at(start).unwrap();
        let logged_in = sessions.exchange_at(&code, start).unwrap().unwrap();
        let before_end = start + SESSION_LIFETIME - Duration::from_secs(1);
        assert!(sessions.session_at(&logged_in.id, before_end).is_some());
        let after_end = start + SESSION_LIFETIME + Duration::from_secs(1);
        assert!(sessions.session_at(&logged_in.id, after_end).is_none());
    }

    #[test]
    fn each_session_has_its_own_secrets() {
        let sessions = Sessions::default();
        let a = sessions
            .exchange(&sessions.issue_code().unwrap())
            .unwrap()
            .unwrap();
        let b = sessions
            .exchange(&sessions.issue_code().unwrap())
            .unwrap()
            .unwrap();
        assert_ne!(a.id, b.id);
        assert_ne!(a.session.csrf, b.session.csrf);
        assert_ne!(a.id, a.session.csrf);
    }

    #[test]
    fn the_oldest_code_makes_room() {
        let sessions = Sessions::default();
        let first = sessions.issue_code().unwrap();
        for _ in 0..MAX_CODES {
            sessions.issue_code().unwrap();
        }
        assert!(sessions.exchange(&first).unwrap().is_none());
    }
}
