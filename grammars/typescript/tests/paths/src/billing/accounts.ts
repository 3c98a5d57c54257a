import { normalise } from "./rules.js";

export function open(account: string): string {
  return normalise(account);
}
