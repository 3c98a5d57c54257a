use super::Store;

impl Store {
    pub fn close(&mut self) {
        self.items.clear();
        self.path = String::new();
    }
}
