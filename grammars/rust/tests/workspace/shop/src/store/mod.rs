mod close;

use std::fs;

pub struct Store {
    path: String,
    items: Vec<String>,
}

pub fn open(path: &str) -> Store {
    let _text = fs::read_to_string(path);
    Store { path: path.to_string(), items: Vec::new() }
}

impl Store {
    pub fn get(&self, key: &str) -> String {
        self::normalise(key)
    }
}

fn normalise(key: &str) -> String {
    key.to_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn get_normalises() {
        let store = open("test.db");
        let value = store.get("A");
        assert_eq!(value, "a");
    }
}
