mod store;

use store::{fetch, open, Builder, Context, Kind, Store};

fn main() -> std::io::Result<()> {
    let store = open()?;
    store.get();
    open().unwrap().get();
    Builder::new().hits(1).build()?.get();
    let built = Builder::new().hits(2).build();
    built.map(|s| s.get());
    open().map(|s| s.get());
    Builder::new().root().join("x");
    open().context("opening");
    store.counted();
    store.frobnicate();
    Kind::Tagged(1);
    Ok(())
}

async fn later() {
    fetch().await.unwrap().get();
    fetch().await.map(|s| s.join());
}

struct Holder {
    store: Option<Store>,
}

fn declared(given: Option<Store>, holder: Holder) {
    given.unwrap().get();
    given.map(drop);
    holder.store.expect("held").get();
    let kept: Result<Store, std::io::Error> = open();
    kept.unwrap_or_default().get();
}
