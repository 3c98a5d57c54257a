export function normalise(account: string): string {
  return account.toLowerCase();
}
