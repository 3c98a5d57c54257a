export class Store {
  get(key) {
    return key;
  }

  clone() {
    return new Store();
  }
}

export class Other {
  get(key) {
    return key;
  }
}

export function open() {
  return new Store();
}

export function either(flag) {
  if (flag) {
    return new Store();
  }
  return new Other();
}

export function* rows() {
  yield new Store();
}

export async function later() {
  return new Store();
}

export function nothing(flag) {
  if (flag) {
    return null;
  }
  return open();
}
