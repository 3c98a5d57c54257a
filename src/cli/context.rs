//! `cairn context` and `cairn expand`: what `get_context` and `expand` answer.

use std::process::ExitCode;

use cairn::app::{Cairn, ContextRequest, ExpandRequest};

use super::{ContextArgs, ExpandArgs, output};

/// `cairn context`.
pub async fn context(cairn: &Cairn, args: ContextArgs) -> anyhow::Result<ExitCode> {
    let request = ContextRequest {
        focus: args.focus,
        max_tokens: args.max_tokens,
    };
    output::answer(&cairn.context(request).await?, args.json)?;
    Ok(ExitCode::SUCCESS)
}

/// `cairn expand`.
pub async fn expand(cairn: &Cairn, args: ExpandArgs) -> anyhow::Result<ExitCode> {
    let request = ExpandRequest {
        target: args.target,
        include: args.include,
        max_tokens: args.max_tokens,
    };
    output::answer(&cairn.expand(request).await?, args.json)?;
    Ok(ExitCode::SUCCESS)
}
