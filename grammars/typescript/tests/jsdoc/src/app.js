import { Store, Other, lookup } from "./store.js";

/**
 * @param {Store} store
 * @param {Other} [unrelated]
 * @returns {Store}
 */
export function pick(store, item) {
  store.get(1);
  item.save(2);
  return lookup(store);
}

export class App {
  constructor(store, either) {
    /** @type {Store|null} */
    this.store = store;
    /** @type {Store|Other} */
    this.either = either;
  }

  run() {
    this.store.save(3);
    this.either.get(4);
    pick(this.store).save(5);
    /** @type {Store} */
    const found = lookup();
    found.get(6);
  }
}
