//! cairn: the memory of a repository for coding assistants — a scored code graph in SurrealDB,
//! served over MCP.

pub mod app;
pub mod config;
pub mod context;
pub mod daemon;
pub mod events;
pub mod extract;
pub mod graph;
pub mod hook;
pub mod index;
pub mod install;
pub mod languages;
pub mod lock;
pub mod mcp;
pub mod memory;
pub mod private;
pub mod review;
pub mod rotation;
pub mod storage;
pub mod tokens;
