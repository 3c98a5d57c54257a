//! `cairn learn`: what the team already knows, learned from the history that holds it.

use std::process::ExitCode;

use cairn::app::{Cairn, LearnReviewsRequest};

use super::LearnCommand;
use super::output;

pub async fn run(cairn: &Cairn, what: LearnCommand) -> anyhow::Result<ExitCode> {
    match what {
        LearnCommand::Reviews {
            files,
            dry_run,
            json,
        } => {
            let request = LearnReviewsRequest {
                files,
                anywhere: true,
                dry_run,
            };
            output::answer(&cairn.learn_reviews(request).await?, json)?;
            Ok(ExitCode::SUCCESS)
        }
    }
}
