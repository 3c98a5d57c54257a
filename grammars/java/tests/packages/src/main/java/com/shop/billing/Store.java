package com.shop.billing;

/** Billing's own ledger store: same simple name as com.shop.store.Store. */
public class Store {
    public String get(String key) {
        return key;
    }

    public static Store open(String url) {
        return new Store();
    }
}
