use super::server::Server;

impl Server {
    pub fn handle(&mut self, key: &str) -> String {
        self.hits += 1;
        self.log.log(key);
        self.store.get(key)
    }

    pub fn close(&mut self) {
        self.store.close();
        open();
    }
}
