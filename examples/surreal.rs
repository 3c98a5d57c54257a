#![recursion_limit = "256"]
//! `surreal` for cairn's team-mode tests: the stock server CLI (`surreal start …`) of the
//! surrealdb-server crate with the community composer, storage engines `memory` and `surrealkv`.
//! `cargo test` builds it with the tests (`target/<profile>/examples/surreal`).

fn main() -> std::process::ExitCode {
    surrealdb_server::init(surrealdb_server::core::CommunityComposer())
}
