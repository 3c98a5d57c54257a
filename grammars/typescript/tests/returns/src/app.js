import { open, either, rows, later, nothing } from "./store.js";

export function main() {
  open().get(1);
  open().clone().get(2);
  nothing(true).get(3);
  either(true).get(4);
  rows().get(5);
  later().get(6);
}
