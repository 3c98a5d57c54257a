package com.shop;

public class MemoryRepository implements Repository {
    private int saved;

    public void save(String key) {
        saved++;
        this.saved = this.saved + 1;
    }
}
