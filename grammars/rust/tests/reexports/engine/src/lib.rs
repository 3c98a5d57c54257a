mod searcher;

pub use crate::searcher::{Kind, Searcher};

#[cfg(test)]
pub mod testutil {
    pub fn probe() -> usize {
        1
    }
}
