package com.shop;

public interface Repository {
    void save(String key);
}
