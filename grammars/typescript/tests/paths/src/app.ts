import * as db from "@/store/db";
import { open as openAccount } from "./billing/accounts";
import { Store } from "@/store/db";

export class App {
  store: Store;

  constructor() {
    this.store = db.open("shop.db");
  }

  handle(key: string): string {
    return this.store.get(key);
  }

  charge(account: string): string {
    return openAccount(account);
  }
}

export function main(): void {
  const app = new App();
  app.handle("apple");
  app.missing();
}
