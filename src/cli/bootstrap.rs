//! `cairn bootstrap`: framework detection and the shipped framework knowledge.

use std::process::ExitCode;

use cairn::app::{BootstrapRequest, Cairn};

use super::output;

/// Seeds (or, `dry_run`, lists) the shipped framework knowledge and prints the report.
pub async fn run(cairn: &Cairn, dry_run: bool, json: bool) -> anyhow::Result<ExitCode> {
    let request = BootstrapRequest {
        dry_run,
        written_by: std::env::var("USER").ok(),
    };
    output::answer(&cairn.bootstrap(request).await?, json)?;
    Ok(ExitCode::SUCCESS)
}
