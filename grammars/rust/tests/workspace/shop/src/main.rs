mod handlers;
mod logger;
mod server;
mod shapes;
mod store;

use server::Server;
use shapes::{Circle, Shape, Square};

fn main() {
    let db = store::open("shop.db");
    let mut server = Server::new(db);
    server.handle("apple");
    server.close();
    let _total = billing_core::open("acct");
    let _client = reqwest::Client::new();
    describe_all();
}

fn describe_all() -> f64 {
    let circle = Circle::new(1.0);
    let square = Square { side: 2.0 };
    let _text = circle.describe();
    square.area() + circle.area()
}

fn describe_square(square: &Square) -> String {
    square.describe()
}

fn total(shape: &dyn Shape) -> f64 {
    shape.area()
}
