//! An edge's source lines: one held inline (most edges are one call or one import), more in
//! a list of their own. 16 bytes either way, so at 50,000 files the 2M edges of one line
//! need no allocation each (32 bytes with the allocator's header).

use std::cmp::Ordering;
use std::hash::{Hash, Hasher};
use std::ops::Deref;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Source lines, read as a slice; a single line is always held inline.
#[derive(Clone)]
pub struct Lines(Held);

#[derive(Clone)]
enum Held {
    One(u32),
    /// None or more than one.
    List(Box<[u32]>),
}

impl Lines {
    pub fn as_slice(&self) -> &[u32] {
        match &self.0 {
            Held::One(line) => std::slice::from_ref(line),
            Held::List(lines) => lines,
        }
    }
}

impl Default for Lines {
    fn default() -> Lines {
        Lines(Held::List(Box::default()))
    }
}

impl Deref for Lines {
    type Target = [u32];

    fn deref(&self) -> &[u32] {
        self.as_slice()
    }
}

impl From<Vec<u32>> for Lines {
    fn from(lines: Vec<u32>) -> Lines {
        match lines[..] {
            [line] => Lines(Held::One(line)),
            _ => Lines(Held::List(lines.into_boxed_slice())),
        }
    }
}

impl<const N: usize> From<[u32; N]> for Lines {
    fn from(lines: [u32; N]) -> Lines {
        Lines::from(lines.to_vec())
    }
}

impl std::fmt::Debug for Lines {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.as_slice().fmt(f)
    }
}

impl PartialEq for Lines {
    fn eq(&self, other: &Lines) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl Eq for Lines {}

impl PartialOrd for Lines {
    fn partial_cmp(&self, other: &Lines) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Lines {
    fn cmp(&self, other: &Lines) -> Ordering {
        self.as_slice().cmp(other.as_slice())
    }
}

impl Hash for Lines {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.as_slice().hash(state)
    }
}

impl Serialize for Lines {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.as_slice().serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Lines {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Lines, D::Error> {
        Vec::<u32>::deserialize(deserializer).map(Lines::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_read_as_the_list_they_were_made_from_and_one_is_held_inline() {
        assert_eq!(std::mem::size_of::<Lines>(), 16);
        for list in [vec![], vec![7], vec![3, 7], vec![1, 2, 9, 40]] {
            let lines = Lines::from(list.clone());
            assert_eq!(&*lines, &list[..]);
            assert_eq!(format!("{lines:?}"), format!("{list:?}"));
            let json = serde_json::to_string(&lines).unwrap();
            assert_eq!(json, serde_json::to_string(&list).unwrap());
            assert_eq!(serde_json::from_str::<Lines>(&json).unwrap(), lines);
            assert_eq!(matches!(lines.0, Held::One(_)), list.len() == 1);
        }
        // Ordered and equal as their lists are, whichever way each is held.
        let (one, two) = (Lines::from([5]), Lines::from([5, 6]));
        assert!(one < two && Lines::from([6]) > two);
        assert_eq!(Lines::default(), Lines::from(Vec::new()));
    }
}
