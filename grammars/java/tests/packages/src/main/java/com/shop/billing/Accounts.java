package com.shop.billing;

import java.util.UUID;

public class Accounts {
    public static String open(String owner) {
        Store ledger = new Store();
        ledger.get(owner);
        return normalise(owner) + UUID.randomUUID();
    }

    static String normalise(String owner) {
        return owner.trim();
    }
}
