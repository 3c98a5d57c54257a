package com.shop;

import com.shop.store.Store;
import static com.shop.billing.Accounts.open;

public class App {
    private final Store store;
    private final Repository repository;

    public App(Store store, Repository repository) {
        this.store = store;
        this.repository = repository;
    }

    public String handle(String key) {
        repository.save(key);
        this.repository.save(key);
        String value = store.get(key);
        return this.store.get(value) + this.charge(key);
    }

    String charge(String owner) {
        audit(owner);
        return open(owner);
    }

    private void audit(String owner) {
        long now = System.currentTimeMillis();
        missing(owner);
    }

    public static void main(String[] args) {
        var store = Store.open("jdbc:h2:mem:shop");
        Repository disk = new DiskRepository();
        App app = new App(store, new MemoryRepository());
        app.handle("k");
        disk.save("k");
    }
}
