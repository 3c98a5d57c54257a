//! Words of English text and of code identifiers, as the searches see them: a light suffix
//! stemmer and camelCase splitting, shared by memory search and deduplication
//! (`memory::text`) and the lexical focus of the context pack (`context::lexical`), so the two
//! fold the same forms together.

/// A light suffix stemmer for a lowercase word: enough to fold `wraps`/`wrapped`/`wrapping`
/// and `queries`/`query` together, conservative enough not to mangle identifiers' parts.
/// Words that are not all ASCII lowercase are returned as they are.
pub fn stem(word: &str) -> String {
    if !word.chars().all(|c| c.is_ascii_lowercase()) {
        return word.to_string();
    }
    let n = word.len();
    let strip = |suffix: &str, min_stem: usize| {
        word.strip_suffix(suffix)
            .filter(|stem| stem.len() >= min_stem)
            .map(str::to_string)
    };
    let stemmed = if let Some(stem) = strip("ies", 2) {
        format!("{stem}y")
    } else if word.ends_with("sses") {
        word[..n - 2].to_string()
    } else if let Some(stem) = strip("ing", 3) {
        undouble(stem)
    } else if let Some(stem) = strip("ed", 3) {
        undouble(stem)
    } else if word.ends_with("ss") || word.ends_with("us") || word.ends_with("is") {
        word.to_string()
    } else if let Some(stem) = strip("es", 3)
        .filter(|s| s.ends_with("ch") || s.ends_with("sh") || s.ends_with('x') || s.ends_with('z'))
    {
        stem
    } else if let Some(stem) = strip("s", 3) {
        stem
    } else {
        word.to_string()
    };
    // `wrapped` → `wrapp` → `wrap`; `caching` → `cach` stays as it is on both sides.
    match stemmed.strip_suffix('e') {
        Some(stem) if stem.len() >= 4 => stem.to_string(),
        _ => stemmed,
    }
}

fn undouble(stem: String) -> String {
    let bytes = stem.as_bytes();
    let n = bytes.len();
    // `wrapp` → `wrap`, but `add` (from `adding`) stays whole.
    if n >= 4 && bytes[n - 1] == bytes[n - 2] && !matches!(bytes[n - 1], b'l' | b's' | b'z') {
        stem[..n - 1].to_string()
    } else {
        stem
    }
}

/// Splits a camelCase or PascalCase word at its humps (`sendFile` → `send`, `File`;
/// `HTTPServer` → `HTTP`, `Server`).
pub fn humps(word: &str) -> Vec<&str> {
    let chars: Vec<(usize, char)> = word.char_indices().collect();
    let mut parts = Vec::new();
    let mut start = 0;
    for i in 1..chars.len() {
        let (at, c) = chars[i];
        let prev = chars[i - 1].1;
        let next_lower = chars.get(i + 1).is_some_and(|(_, n)| n.is_lowercase());
        let boundary = (c.is_uppercase() && prev.is_lowercase())
            || (c.is_uppercase() && prev.is_uppercase() && next_lower)
            || (c.is_ascii_digit() != prev.is_ascii_digit() && c.is_alphanumeric());
        if boundary {
            parts.push(&word[start..at]);
            start = at;
        }
    }
    parts.push(&word[start..]);
    parts
}

/// Words that carry no meaning for search or deduplication: function words, quantifiers
/// (`every`, `all`, `each`) and the ways of saying "by means of" (`via`, `through`, `using`),
/// so "every X through Y" and "all Xs via Y" have one fingerprint.
const STOP_WORDS: &[&str] = &[
    "a", "about", "all", "also", "always", "an", "and", "any", "are", "aren", "as", "at", "be",
    "been", "being", "but", "by", "can", "could", "did", "didn", "do", "does", "doesn", "doing",
    "don", "each", "every", "for", "from", "had", "has", "have", "having", "here", "how", "i",
    "if", "in", "into", "is", "isn", "it", "its", "itself", "just", "may", "might", "must",
    "mustn", "my", "never", "no", "not", "of", "on", "or", "other", "our", "ours", "out", "own",
    "per", "s", "same", "shall", "should", "shouldn", "so", "some", "such", "t", "than", "that",
    "the", "their", "them", "then", "there", "these", "they", "this", "those", "through", "to",
    "too", "up", "using", "very", "via", "was", "wasn", "we", "were", "weren", "what", "when",
    "where", "which", "while", "who", "whom", "why", "will", "with", "won", "would", "you", "your",
];

/// Whether a lower-case word is a function word ([`STOP_WORDS`]).
pub fn is_stop_word(word: &str) -> bool {
    STOP_WORDS.binary_search(&word).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stop_words_are_sorted_for_binary_search() {
        let mut sorted = STOP_WORDS.to_vec();
        sorted.sort_unstable();
        assert_eq!(sorted, STOP_WORDS);
    }
}
