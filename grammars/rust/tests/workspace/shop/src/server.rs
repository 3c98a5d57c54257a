use crate::{logger::Logger, store::{self, Store}};

/// Serves the shop.
pub struct Server {
    store: Store,
    log: Logger,
    hits: u32,
}

impl Server {
    pub fn new(store: Store) -> Self {
        Server { store, log: Logger, hits: 0 }
    }
}
