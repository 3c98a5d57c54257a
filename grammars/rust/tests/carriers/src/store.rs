use std::io;
use std::path::Path;

pub enum Kind {
    Plain,
    Tagged(u8),
}

pub struct Store {
    hits: u32,
}

pub struct Builder {
    hits: u32,
}

macro_rules! counter {
    ($t:ident) => {
        impl $t {
            pub fn counted(&self) -> u32 {
                self.hits
            }
        }
    };
}

counter!(Store);

pub trait Context {
    fn context(self, what: &str) -> Self;
}

impl Builder {
    pub fn new() -> Builder {
        Builder { hits: 0 }
    }

    pub fn hits(&mut self, hits: u32) -> &mut Self {
        self.hits = hits;
        self
    }

    pub fn build(&self) -> io::Result<Store> {
        Ok(Store { hits: self.hits })
    }

    pub fn root(&self) -> &Path {
        Path::new("/")
    }
}

impl Store {
    pub fn get(&self) -> u32 {
        self.hits
    }

    pub fn map(&self) -> u32 {
        self.hits
    }

    pub fn join(&self) -> u32 {
        self.hits
    }
}

pub fn open() -> Result<Store, io::Error> {
    Builder::new().build()
}

pub async fn fetch() -> Option<Store> {
    open().ok()
}
