package com.shop;

abstract class BaseRepository {
    protected void log(String message) {
        System.out.println(message + System.getenv("LOG_PREFIX"));
    }
}
