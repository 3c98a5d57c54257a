pub mod ledger;

use self::ledger::normalise;
use chrono::Utc;

pub fn open(account: &str) -> String {
    let _stamp = Utc::now();
    normalise(account)
}
