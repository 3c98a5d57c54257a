use std::env;

pub struct Logger;

impl Logger {
    pub fn log(&self, message: &str) {
        if env::var("QUIET").is_err() {
            eprintln!("{message}");
        }
    }
}
