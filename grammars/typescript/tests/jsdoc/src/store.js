export class Store {
  get(key) {
    return key;
  }

  save(item) {
    return item;
  }
}

export class Other {
  get(key) {
    return key;
  }

  save(item) {
    return item;
  }
}

export function lookup(found) {
  return found;
}
