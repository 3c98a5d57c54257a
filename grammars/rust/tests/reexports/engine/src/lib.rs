mod searcher;

pub use crate::searcher::{Kind, Searcher};
