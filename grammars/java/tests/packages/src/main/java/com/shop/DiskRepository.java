package com.shop;

import java.nio.file.Files;
import java.nio.file.Path;

public class DiskRepository extends BaseRepository implements Repository {
    public void save(String key) {
        log(key);
        Files.writeString(Path.of(key), key);
    }
}
