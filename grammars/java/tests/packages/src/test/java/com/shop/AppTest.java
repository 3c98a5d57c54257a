package com.shop;

import com.shop.store.*;

class AppTest {
    void handlesAKey() {
        App app = new App(new Store("url"), new MemoryRepository());
        app.handle("k");
    }
}
