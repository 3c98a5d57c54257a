//! Decisions on memories: many pending ones approved or rejected at once — the proposals a
//! `cairn learn` run made, or a day of an assistant's writes — as one decision (every id is
//! checked to be waiting before any is decided), and what the recorded reviews decided of a
//! memory (applied, contradicted).

use super::{AskError, Cairn, DecideRequest, Decided};
use crate::memory::MemoryError;

/// Most memories one decision takes.
pub const MAX_DECIDED: usize = 1_000;

/// Pending memories to approve or reject together.
#[derive(Debug, Clone, Default)]
pub struct DecideManyRequest {
    pub ids: Vec<String>,
    pub by: Option<String>,
    /// Why they were rejected (kept in each one's history); ignored for an approval.
    pub reason: Option<String>,
    pub approve: bool,
}

impl Cairn {
    /// What the recorded reviews say of a memory: how many applied it, how many found it
    /// wrong here (reviews are recorded in the repository's store, whichever store holds the
    /// memory).
    pub async fn memory_verdicts(
        &self,
        id: &str,
    ) -> Result<crate::review::records::MemoryVerdicts, AskError> {
        Ok(self.memories.verdicts(id).await?)
    }

    /// Approves or rejects every memory of `request`, none if one is not waiting.
    pub async fn decide_many(&self, request: DecideManyRequest) -> Result<Vec<Decided>, AskError> {
        if request.ids.is_empty() || request.ids.len() > MAX_DECIDED {
            return Err(MemoryError::Invalid(format!(
                "{} ids: decide on 1 to {MAX_DECIDED} memories at a time",
                request.ids.len()
            ))
            .into());
        }
        let waiting = self.pending_memories().await?;
        let waiting: std::collections::HashSet<&str> =
            waiting.iter().map(|m| m.id.as_str()).collect();
        if let Some(id) = request.ids.iter().find(|id| !waiting.contains(id.trim())) {
            return Err(MemoryError::Invalid(format!(
                "{} is not waiting for approval; nothing was decided",
                crate::secrets::quoted(id)
            ))
            .into());
        }
        let mut decided = Vec::with_capacity(request.ids.len());
        for id in request.ids {
            let one = DecideRequest {
                id: id.trim().to_string(),
                by: request.by.clone(),
                reason: request.reason.clone().filter(|_| !request.approve),
            };
            decided.push(if request.approve {
                self.approve(one).await?
            } else {
                self.reject(one).await?
            });
        }
        Ok(decided)
    }
}
