//! `cairn learn`: what the team already knows, learned from the history that holds it.

use std::io::IsTerminal as _;
use std::process::ExitCode;
use std::sync::Arc;

use cairn::app::{Cairn, LearnProgress, LearnRepoRequest, LearnReviewsRequest};
use cairn::review::repo_knowledge::Progress;

use super::LearnCommand;
use super::index::ProgressLine;
use super::output;

pub async fn run(cairn: &Cairn, what: LearnCommand) -> anyhow::Result<ExitCode> {
    match what {
        LearnCommand::Reviews {
            files,
            dry_run,
            json,
        } => {
            let progress = Arc::new(LearnProgress::default());
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
        }
        LearnCommand::Repo { dry_run, json } => {
            let progress = Arc::new(Progress::default());
            let line = std::io::stderr().is_terminal().then(|| {
                let progress = progress.clone();
                ProgressLine::of(move |width| progress.line(width))
            });
            let result = cairn
                .learn_repo(LearnRepoRequest { dry_run, progress })
                .await;
            drop(line);
            output::answer(&result?, json)?;
        }
        LearnCommand::Phrase { json } => output::answer(&cairn.phrase_brief().await?, json)?,
    }
    Ok(ExitCode::SUCCESS)
}
