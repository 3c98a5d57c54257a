//! Text as memory search and deduplication see it: words and code identifiers split into
//! terms (snake_case, camelCase, paths, `path::Symbol`), lightly stemmed, stop words dropped,
//! a few review-vocabulary synonyms folded together.
//!
//! The same function feeds the index and the query, so `select_related`, `send_file`,
//! `token_service.py` and `QuerySet.select_related` match whether they are written whole or
//! in parts.

use std::collections::BTreeSet;

use crate::words::is_stop_word;

/// Words that flip a statement's meaning: two near-identical learnings that differ in these
/// contradict each other.
const NEGATIONS: &[&str] = &[
    "not",
    "no",
    "never",
    "don't",
    "dont",
    "doesn't",
    "doesnt",
    "didn't",
    "isn't",
    "aren't",
    "shouldn't",
    "mustn't",
    "won't",
    "cannot",
    "can't",
    "avoid",
    "avoids",
    "stop",
    "without",
    "instead",
    "rather",
];

/// Words of opposite sense: two texts that differ by one of these pairs are different
/// learnings however close their wording (`before`/`after` deploying, `add`/`drop` a column).
const OPPOSITES: &[(&str, &str)] = &[
    ("add", "drop"),
    ("add", "remove"),
    ("after", "before"),
    ("allow", "deny"),
    ("allow", "forbid"),
    ("async", "sync"),
    ("asynchronous", "synchronous"),
    ("asynchronously", "synchronously"),
    ("client", "server"),
    ("disable", "enable"),
    ("eager", "lazy"),
    ("exclude", "include"),
    ("external", "internal"),
    ("fewer", "more"),
    ("first", "last"),
    ("less", "more"),
    ("lower", "upper"),
    ("max", "min"),
    ("maximum", "minimum"),
    ("private", "public"),
    ("read", "write"),
    ("false", "true"),
];

/// Review vocabulary written two ways.
const SYNONYMS: &[(&str, &str)] = &[
    ("db", "database"),
    ("repo", "repository"),
    ("repos", "repository"),
    ("codebase", "repository"),
    ("fn", "function"),
    ("func", "function"),
    ("funcs", "function"),
    ("cfg", "config"),
    ("configuration", "config"),
    ("txn", "transaction"),
    ("tx", "transaction"),
    ("pr", "pull"),
    ("prs", "pull"),
    ("deps", "dependency"),
    ("dep", "dependency"),
    ("perf", "performance"),
    ("args", "argument"),
    ("arg", "argument"),
    ("params", "parameter"),
    ("param", "parameter"),
    ("msg", "message"),
    ("err", "error"),
    ("errors", "error"),
    ("impl", "implementation"),
];

/// Folds review vocabulary written two ways, then stems ([`crate::words::stem`]).
fn stem(word: &str) -> String {
    let word = SYNONYMS
        .iter()
        .find(|(from, _)| *from == word)
        .map_or(word, |(_, to)| to);
    crate::words::stem(word)
}

fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Raw tokens: runs of word characters, joined by `.`, `/`, `:` or `-` when those stand
/// between word characters (so paths and dotted names stay whole).
fn raw_tokens(text: &str) -> Vec<&str> {
    let mut tokens = Vec::new();
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let mut i = 0;
    while i < chars.len() {
        if !is_word_char(chars[i].1) {
            i += 1;
            continue;
        }
        let start = chars[i].0;
        let mut end = i;
        while end + 1 < chars.len() {
            let c = chars[end + 1].1;
            let joins = matches!(c, '.' | '/' | ':' | '-')
                && chars
                    .get(end + 2)
                    .is_some_and(|(_, n)| is_word_char(*n) || (c == ':' && *n == ':'));
            if is_word_char(c) || joins {
                end += 1;
            } else {
                break;
            }
        }
        let stop = chars.get(end + 1).map_or(text.len(), |(at, _)| *at);
        tokens.push(&text[start..stop]);
        i = end + 1;
    }
    tokens
}

/// The search terms of `text`, in order, with repeats (term frequency matters to ranking).
///
/// A compound token yields itself whole (lowercased) and its parts: `src/auth/token_service.py`
/// gives `src/auth/token_service.py`, `token_service.py`, `token_service`, `token`, `service`,
/// `src`, `auth`, `py`.
pub fn terms(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for token in raw_tokens(text) {
        let token = token.trim_matches(|c: char| matches!(c, '.' | ':' | '-' | '/'));
        if token.is_empty() {
            continue;
        }
        let lower = token.to_lowercase();
        let compound = token.contains(['.', '/', ':', '-', '_'])
            || crate::words::humps(token).len() > 1 && token.chars().any(|c| c.is_lowercase());
        if !compound {
            let number = lower.chars().all(|c| c.is_ascii_digit());
            if (number || lower.chars().count() > 1) && !is_stop_word(&lower) {
                out.push(stem(&lower));
            }
            continue;
        }
        // The whole token, its path segments and dotted/`::` parts, then their word parts;
        // each term once per token.
        let mut emitted = BTreeSet::new();
        let mut emit = |term: String, out: &mut Vec<String>| {
            if term.chars().count() > 1 && emitted.insert(term.clone()) {
                out.push(term);
            }
        };
        emit(lower.clone(), &mut out);
        let mut pieces: Vec<&str> = Vec::new();
        for segment in token.split(['/', ':']).filter(|s| !s.is_empty()) {
            pieces.push(segment);
            if segment.contains('.') {
                pieces.extend(segment.split('.').filter(|s| !s.is_empty()));
            }
        }
        for piece in pieces {
            emit(piece.to_lowercase(), &mut out);
            if piece.contains('.') {
                continue;
            }
            for word in piece.split(['_', '-']).flat_map(crate::words::humps) {
                let word = word.to_lowercase();
                if !is_stop_word(&word) {
                    emit(stem(&word), &mut out);
                }
            }
        }
    }
    out
}

/// The distinct terms of a text, for near-duplicate detection.
pub fn fingerprint(text: &str) -> BTreeSet<String> {
    terms(text).into_iter().collect()
}

/// Jaccard similarity of two fingerprints (0 when both are empty).
pub(crate) fn jaccard(a: &BTreeSet<String>, b: &BTreeSet<String>) -> f64 {
    let union = a.union(b).count();
    if union == 0 {
        return 0.0;
    }
    a.intersection(b).count() as f64 / union as f64
}

/// True when two fingerprints say different things in near-identical words: both hold
/// numbers and the numbers differ (`at most 3` / `at most 5`), or one holds a word the other
/// holds the opposite of (`before` / `after`).
pub(crate) fn conflicts(a: &BTreeSet<String>, b: &BTreeSet<String>) -> bool {
    let numbers = |terms: &BTreeSet<String>| -> BTreeSet<String> {
        terms
            .iter()
            .filter(|t| t.chars().all(|c| c.is_ascii_digit()))
            .cloned()
            .collect()
    };
    let (na, nb) = (numbers(a), numbers(b));
    if !na.is_empty() && !nb.is_empty() && na != nb {
        return true;
    }
    OPPOSITES.iter().any(|(x, y)| {
        let (x, y) = (stem(x), stem(y));
        let only =
            |t: &BTreeSet<String>, w: &String, not: &String| t.contains(w) && !t.contains(not);
        (only(a, &x, &y) && only(b, &y, &x)) || (only(a, &y, &x) && only(b, &x, &y))
    })
}

/// A fingerprint without the negating words it holds (`avoid`, `without`…), to compare two
/// texts of opposite polarity by what they are about.
pub(crate) fn without_negations(terms: &BTreeSet<String>) -> BTreeSet<String> {
    let negations: BTreeSet<String> = NEGATIONS.iter().map(|w| stem(w)).collect();
    terms
        .iter()
        .filter(|t| !negations.contains(*t))
        .cloned()
        .collect()
}

/// True when the text says something is not so (`do not`, `never`, `avoid`…).
pub(crate) fn negated(text: &str) -> bool {
    let text = text.replace(['\u{2019}', '\u{2018}', '`'], "'");
    text.split(|c: char| !(c.is_alphanumeric() || c == '\''))
        .map(|w| w.to_lowercase())
        .any(|w| NEGATIONS.contains(&w.as_str()) || w.ends_with("n't"))
}

/// Text compared for exact repeats: lowercase words, single spaces.
pub fn normalised(text: &str) -> String {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn has(text: &str, term: &str) -> bool {
        terms(text).iter().any(|t| t == term)
    }

    #[test]
    fn identifiers_match_whole_and_in_parts() {
        let text = "Prefer select_related over N+1 loops in src/auth/token_service.py; see QuerySet.select_related and sendFile.";
        for term in [
            "select_related",
            "src/auth/token_service.py",
            "token_service.py",
            "token_service",
            "queryset.select_related",
            "queryset",
            "sendfile",
        ]
        .into_iter()
        .chain(
            terms("select related token service send file")
                .iter()
                .map(String::as_str),
        ) {
            assert!(has(text, term), "{term} missing from {:?}", terms(text));
        }
        // A query written in parts meets the identifier.
        for query in ["select related", "token service", "send file", "SendFile"] {
            let q = terms(query);
            assert!(
                q.iter().all(|t| terms(text).contains(t)),
                "{query}: {q:?} not all in {:?}",
                terms(text)
            );
        }
    }

    #[test]
    fn each_term_once_per_token_and_no_single_letters() {
        let t = terms("src/auth/auth.py N+1");
        assert_eq!(t.iter().filter(|x| *x == "auth").count(), 1, "{t:?}");
        assert!(
            t.iter()
                .all(|x| x.chars().count() > 1 || x.chars().all(|c| c.is_ascii_digit())),
            "{t:?}"
        );
    }

    #[test]
    fn rewordings_share_a_fingerprint() {
        let a = fingerprint("This repo wraps every database mutation in a transaction.");
        let b = fingerprint("Every DB mutation in this repository is wrapped in a transaction");
        let c = fingerprint("The codebase wraps each db mutation inside a transaction.");
        assert!(jaccard(&a, &b) >= 0.8, "{a:?} vs {b:?}");
        assert!(jaccard(&a, &c) >= 0.7, "{a:?} vs {c:?}");
        let other = fingerprint("Templates are rendered with autoescape on.");
        assert!(jaccard(&a, &other) < 0.2);
    }

    #[test]
    fn numbers_and_order_words_tell_learnings_apart() {
        assert_ne!(
            fingerprint("Retry payments at most 3 times"),
            fingerprint("Retry payments at most 5 times")
        );
        assert_ne!(
            fingerprint("Run migrations before deploy"),
            fingerprint("Run migrations after deploy")
        );
    }

    #[test]
    fn paraphrase_words_fold_together() {
        let a = fingerprint(
            "Every database mutation is wrapped in a transaction through the session_scope helper.",
        );
        let b = fingerprint(
            "All database mutations are wrapped in a transaction via the session_scope helper.",
        );
        assert_eq!(a, b);
        assert_eq!(
            fingerprint("Read config using settings.get"),
            fingerprint("Read config through settings.get")
        );
    }

    #[test]
    fn numbers_and_opposites_conflict() {
        let conflict = |a: &str, b: &str| conflicts(&fingerprint(a), &fingerprint(b));
        assert!(conflict(
            "Retry payments at most 3 times",
            "Retry payments at most 5 times"
        ));
        assert!(conflict(
            "Run migrations before deploying",
            "Run migrations after deploying"
        ));
        assert!(conflict(
            "Enable strict mode in tsconfig",
            "Disable strict mode in tsconfig"
        ));
        assert!(!conflict(
            "Retry payments with backoff",
            "Retry payments with backoff, at most 3 times"
        ));
        assert!(!conflict(
            "Run migrations before and after deploying",
            "Run migrations after deploying"
        ));
        assert!(!conflict(
            "Cache user profiles",
            "Avoid caching user profiles"
        ));
    }

    #[test]
    fn negating_words_are_left_out_when_asked() {
        let plain = fingerprint("Cache user profiles in Redis.");
        let avoided = fingerprint("Avoid caching user profiles in Redis.");
        assert_ne!(plain, avoided);
        assert_eq!(without_negations(&plain), without_negations(&avoided));
    }

    #[test]
    fn negation_is_seen() {
        assert!(negated("Do not use eager loading here"));
        assert!(negated("We don't retry payments"));
        assert!(negated("Avoid select_related on large joins"));
        assert!(!negated("Use select_related for author lookups"));
        assert!(negated("Don\u{2019}t use eager loading in feed views"));
    }

    #[test]
    fn stemming_folds_forms() {
        assert_eq!(stem("queries"), stem("query"));
        assert_eq!(stem("wrapped"), stem("wraps"));
        assert_eq!(stem("wrapping"), stem("wrap"));
        assert_eq!(stem("adding"), stem("add"));
        assert_eq!(stem("logged"), stem("log"));
        assert_eq!(stem("caches"), stem("cache"));
        assert_eq!(stem("class"), "class");
        assert_eq!(stem("status"), "status");
    }
}
