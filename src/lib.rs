//! cairn: the memory of a repository for coding assistants — a scored code graph in SurrealDB,
//! served over MCP.

pub mod answer;
pub mod app;
pub mod clock;
pub mod config;
pub mod context;
pub mod daemon;
pub mod datadir;
pub mod events;
pub mod extract;
pub mod frameworks;
pub mod fsutil;
pub mod graph;
pub mod history;
pub mod hook;
pub mod index;
pub mod install;
pub mod languages;
pub mod lock;
pub mod mcp;
pub mod memory;
pub mod review;
pub mod running;
pub mod secrets;
pub mod storage;
pub mod tokens;
pub mod words;
