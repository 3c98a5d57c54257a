//! Token counting with a real tokenizer (o200k_base) and the budgets every served answer keeps.

/// Tokens in a text, as current OpenAI-family tokenizers count them.
pub fn count(text: &str) -> usize {
    tiktoken_rs::o200k_base_singleton()
        .encode_ordinary(text)
        .len()
}

/// Lines added until a token budget is spent; remembers what did not fit.
#[derive(Debug)]
pub struct Budget {
    max: usize,
    used: usize,
    lines: Vec<String>,
    /// Items that did not fit.
    pub dropped: usize,
}

impl Budget {
    pub fn new(max: usize) -> Budget {
        Budget {
            max,
            used: 0,
            lines: Vec::new(),
            dropped: 0,
        }
    }

    /// Adds a line if it fits; returns whether it did.
    pub fn push(&mut self, line: impl Into<String>) -> bool {
        self.push_until(line, usize::MAX)
    }

    /// Adds a line if it fits both the budget and a running-total limit (a section's share).
    pub fn push_until(&mut self, line: impl Into<String>, limit: usize) -> bool {
        let line = line.into();
        let cost = count(&line) + 1;
        self.push_costed(line, cost, limit)
    }

    /// Adds a line whose cost (tokens + 1 for the line break) is already known.
    pub fn push_costed(&mut self, line: String, cost: usize, limit: usize) -> bool {
        if self.used + cost > self.max.min(limit) {
            self.dropped += 1;
            return false;
        }
        self.used += cost;
        self.lines.push(line);
        true
    }

    pub fn max(&self) -> usize {
        self.max
    }

    /// Adds a line even over budget (headers and the truncation note).
    pub fn force(&mut self, line: impl Into<String>) {
        let line = line.into();
        self.used += count(&line) + 1;
        self.lines.push(line);
    }

    pub fn used(&self) -> usize {
        self.used
    }

    pub fn remaining(&self) -> usize {
        self.max.saturating_sub(self.used)
    }

    pub fn into_text(self) -> String {
        self.lines.join("\n")
    }
}

/// Cuts a string to at most `max` bytes on a character boundary, marking the cut.
pub fn truncate(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_with_a_real_tokenizer() {
        assert_eq!(count(""), 0);
        assert!(count("hello world") <= 3);
        let identifier = "django/db/models/query.py::QuerySet.select_related";
        assert!(count(identifier) > identifier.len() / 8);
    }

    #[test]
    fn budget_stops_at_its_limit() {
        let mut budget = Budget::new(20);
        let mut added = 0;
        for i in 0..100 {
            if budget.push(format!("line number {i} of many")) {
                added += 1;
            }
        }
        assert!(added > 0 && added < 100);
        assert!(budget.used() <= 20);
        assert_eq!(budget.dropped, 100 - added);
    }
}
