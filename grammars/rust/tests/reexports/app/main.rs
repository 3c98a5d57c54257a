mod flags;

use facade::engine::Searcher;

use crate::flags::Flags;

fn main() {
    let options: Flags = flags::parse();
    let mut searcher = Searcher::new();
    searcher.search(options.kind());
    Searcher::new()
        .with_hits(1)
        .search(options.kind());
}
