//! `cairn learn`: what the team already knows, learned from the history that holds it.

use std::process::ExitCode;

use std::io::IsTerminal as _;

use cairn::app::{Cairn, LearnProgress, LearnReviewsRequest};

use super::index::ProgressLine;

use super::LearnCommand;
use super::output;

pub async fn run(cairn: &Cairn, what: LearnCommand) -> anyhow::Result<ExitCode> {
    match what {
        LearnCommand::Reviews {
            files,
            dry_run,
            json,
        } => {
            let progress = std::sync::Arc::new(LearnProgress::default());
            let request = LearnReviewsRequest {
                files,
                anywhere: true,
                dry_run,
                progress: progress.clone(),
            };
            let line = std::io::stderr()
                .is_terminal()
                .then(|| ProgressLine::of(move |width| progress.line(width)));
            let learned = cairn.learn_reviews(request).await;
            drop(line);
            output::answer(&learned?, json)?;
            Ok(ExitCode::SUCCESS)
        }
    }
}
