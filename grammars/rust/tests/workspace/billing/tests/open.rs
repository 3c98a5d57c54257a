use billing_core::open;

#[test]
fn opens_lowercase() {
    let account = open("ACCT");
    assert_eq!(account, "acct");
}
