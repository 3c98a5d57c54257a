//! Trust boundaries: what an untrusted repository, a hostile teammate or careless text can and
//! cannot do to the user — each test here failed before the defence it checks.

mod corpus;
mod files;
mod install;
mod links;
mod redaction;
mod resources;
mod team;
