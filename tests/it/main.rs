//! The integration tests: the real `cairn` binary, real git repositories, the real embedded
//! store and rmcp's own MCP client.

mod approval;
mod bad_input;
mod bootstrap;
mod briefing;
mod closed_pipe;
mod contract;
mod daemon;
mod dedup;
mod docs;
mod embed;
mod focus;
mod golden;
mod grammars;
mod guidelines;
mod impact;
mod incremental;
mod indexing;
mod install;
mod layers;
mod learn;
mod learn_repo;
mod mcp;
mod mem0;
mod memory;
mod org;
mod packaging;
mod resolution;
mod review;
mod security;
mod support;
mod team;
mod team_soak;
mod ui;
mod ui_memories;
mod worth;
