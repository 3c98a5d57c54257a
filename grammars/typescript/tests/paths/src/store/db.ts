export function open(path: string): Store {
  return new Store(path);
}

export class Store {
  constructor(private path: string) {}

  get(key: string): string {
    return this.row(key);
  }

  private row(key: string): string {
    return this.path + key;
  }
}
