pub fn normalise(account: &str) -> String {
    account.to_lowercase()
}

pub fn open(account: &str) -> String {
    super::open(account)
}
