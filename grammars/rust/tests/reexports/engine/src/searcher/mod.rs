pub struct Searcher {
    hits: usize,
}

impl Searcher {
    pub fn new() -> Searcher {
        Searcher { hits: 0 }
    }

    pub fn with_hits(self, hits: usize) -> Searcher {
        Searcher { hits }
    }

    pub fn search(&mut self, kind: Kind) -> usize {
        self.hits += 1;
        kind.cost()
    }
}

pub enum Kind {
    Fast,
    Slow,
}

impl Kind {
    pub fn cost(&self) -> usize {
        match self {
            Kind::Fast => 1,
            Kind::Slow => 2,
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::testutil::probe;

    #[test]
    fn probes() {
        assert!(probe() > 0);
        let n = probe();
    }
}
