use engine_core::Kind;

pub struct Flags {
    fast: bool,
}

impl Flags {
    pub fn kind(&self) -> Kind {
        use engine_core::Kind::*;
        if self.fast { Fast } else { Slow }
    }
}

pub fn parse() -> Flags {
    Flags { fast: true }
}
