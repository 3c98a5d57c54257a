package com.shop;

import java.io.IOException;

abstract class BaseRepository {
    protected void log(String message) {
        System.out.println(message + System.getenv("LOG_PREFIX"));
    }

    protected void flush() throws IOException {
        Runtime.getRuntime().exec("sync");
    }
}
