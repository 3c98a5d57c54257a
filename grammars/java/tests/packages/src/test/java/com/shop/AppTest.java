package com.shop;

import com.shop.store.Store;

class AppTest {
    void handlesAKey() {
        App app = new App(new Store("url"), new MemoryRepository());
        app.handle("k");
    }
}
