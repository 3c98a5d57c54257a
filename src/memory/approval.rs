//! The approval gate's decisions: a person approves a pending memory (it is served from then
//! on, superseding the memory it was written to replace) or rejects it (it stays, invalid
//! and never served, so the same learning written again is recognised and not re-proposed).

use std::collections::HashMap;

use super::model::{Action, Memory, MemoryError, Revision, Status};
use super::{Memories, Result};

/// What a person decided about a pending memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    Approve,
    Reject,
}

/// Longest reason kept with a rejection, in bytes.
pub(crate) const MAX_REASON_BYTES: usize = 500;

impl Memories {
    /// Approves a pending memory: it is served from now on. When it was written to replace
    /// an approved memory (`supersedes`) that is still live, that one is superseded now.
    /// Returns the memories changed, the approved one first.
    pub async fn approve(&self, id: &str, by: Option<&str>) -> Result<Vec<Memory>> {
        self.decide_pending(id, Decision::Approve, by, None).await
    }

    /// Rejects a pending memory: it is kept for the record, invalid and never served.
    pub async fn reject(
        &self,
        id: &str,
        by: Option<&str>,
        reason: Option<&str>,
    ) -> Result<Vec<Memory>> {
        self.decide_pending(id, Decision::Reject, by, reason).await
    }

    /// The memories waiting for approval, oldest first.
    pub async fn pending(&self) -> Result<Vec<Memory>> {
        Ok(self
            .all()
            .await?
            .into_iter()
            .filter(|m| m.status == Status::Pending && m.is_live())
            .collect())
    }

    async fn decide_pending(
        &self,
        id: &str,
        decision: Decision,
        by: Option<&str>,
        reason: Option<&str>,
    ) -> Result<Vec<Memory>> {
        let id = id.trim().to_string();
        if !super::model::is_memory_id(&id) {
            return Err(MemoryError::Invalid(format!(
                "{} is not a memory id (ids look like m_0123456789abcdef)",
                crate::secrets::quoted(&id)
            )));
        }
        let reason = reason.map(str::trim).filter(|r| !r.is_empty());
        if let Some(reason) = reason
            && reason.len() > MAX_REASON_BYTES
        {
            return Err(MemoryError::Invalid(format!(
                "the reason is {} bytes; at most {MAX_REASON_BYTES}",
                reason.len()
            )));
        }
        // A reason is kept in the history: no secret in it reaches the store.
        let reason = reason.map(|r| crate::secrets::redact(r).text);
        let by = self.decider(by);
        let by = by.as_deref();
        let mut state = self.state.lock().await;
        let state = &mut *state;
        self.with_store(true, async |store| {
            self.catch_up(store, state).await?;
            let changed = decided(&state.memories, &id, decision, by, reason.as_deref())?;
            self.commit(store, state, changed.clone(), &HashMap::new())
                .await?;
            Ok(changed
                .iter()
                .map(|m| state.memories.get(&m.id).cloned().unwrap_or(m.clone()))
                .collect())
        })
        .await
        .map(|changed| changed.expect("the store is created for writes"))
    }
}

impl Memories {
    /// Who a decision names: in team mode the member signed in to the server (every
    /// teammate reads the decision), with the local name when it differs; else `by`.
    fn decider(&self, by: Option<&str>) -> Option<String> {
        let Some(link) = &self.team else {
            return by.map(str::to_string);
        };
        let member = &link.config.credentials.developer;
        Some(match by {
            Some(by) if by != member => format!("{member} ({by})"),
            _ => member.clone(),
        })
    }
}

/// The rows a decision about pending memory `id` changes: the memory, and for an approval
/// the approved memory it supersedes. Only a live pending memory can be decided.
pub(super) fn decided(
    memories: &HashMap<String, Memory>,
    id: &str,
    decision: Decision,
    by: Option<&str>,
    reason: Option<&str>,
) -> Result<Vec<Memory>> {
    let memory = memories
        .get(id)
        .ok_or_else(|| MemoryError::NotFound(id.to_string()))?;
    if memory.status != Status::Pending {
        return Err(MemoryError::Invalid(format!(
            "{id} is {}, not awaiting approval",
            memory.status
        )));
    }
    if let Some(newer) = &memory.validity.superseded_by {
        return Err(MemoryError::Invalid(format!(
            "{id} was replaced by {newer} while it waited: decide that one"
        )));
    }
    let now = crate::clock::now_ms();
    let who = by.map(|b| format!(" by {b}")).unwrap_or_default();
    let mut decided = memory.clone();
    decided.validity.updated_at = now;
    let note = match decision {
        Decision::Approve => {
            decided.status = Status::Approved;
            format!("approved{who}")
        }
        Decision::Reject => {
            decided.status = Status::Rejected;
            decided.validity.invalidated_at = Some(now);
            match reason {
                Some(reason) => format!("rejected{who}: {reason}"),
                None => format!("rejected{who}"),
            }
        }
    };
    decided.history.push(Revision {
        at: now,
        event: Action::Update,
        title: memory.title.clone(),
        content: memory.content.clone(),
        by: by.map(str::to_string),
        note: Some(note),
    });
    let mut changed = vec![decided];
    if decision == Decision::Approve
        && let Some(old) = memory
            .validity
            .supersedes
            .as_deref()
            .and_then(|old| memories.get(old))
            .filter(|old| old.is_served() && old.partition() == memory.partition())
    {
        let mut old = old.clone();
        old.history.push(Revision {
            at: now,
            event: Action::Supersede,
            title: old.title.clone(),
            content: old.content.clone(),
            by: by.map(str::to_string),
            note: Some(format!("superseded by {id}, approved{who}")),
        });
        old.validity.invalidated_at = Some(now);
        old.validity.superseded_by = Some(id.to_string());
        old.validity.updated_at = now;
        changed.push(old);
    }
    Ok(changed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::model::MemoryType;

    fn memory(id: &str, status: Status) -> Memory {
        Memory {
            status,
            ..Memory::new(
                id.to_string(),
                MemoryType::Decision,
                "t".into(),
                format!("text of {id}"),
                1,
            )
        }
    }

    fn by_id(memories: Vec<Memory>) -> HashMap<String, Memory> {
        memories.into_iter().map(|m| (m.id.clone(), m)).collect()
    }

    #[test]
    fn only_a_live_pending_memory_is_decided() {
        let approved = "m_0000000000000001";
        let pending = "m_0000000000000002";
        let rejected = "m_0000000000000003";
        let mut replaced = memory("m_0000000000000004", Status::Pending);
        replaced.validity.superseded_by = Some(pending.to_string());
        replaced.validity.invalidated_at = Some(2);
        let memories = by_id(vec![
            memory(approved, Status::Approved),
            memory(pending, Status::Pending),
            memory(rejected, Status::Rejected),
            replaced,
        ]);
        for id in [approved, rejected, "m_0000000000000004"] {
            for decision in [Decision::Approve, Decision::Reject] {
                assert!(
                    decided(&memories, id, decision, None, None).is_err(),
                    "{id} {decision:?}"
                );
            }
        }
        assert!(matches!(
            decided(
                &memories,
                "m_00000000000000ff",
                Decision::Approve,
                None,
                None
            ),
            Err(MemoryError::NotFound(_))
        ));
        let approved_now = decided(&memories, pending, Decision::Approve, Some("ana"), None)
            .unwrap()
            .remove(0);
        assert_eq!(approved_now.status, Status::Approved);
        assert!(approved_now.is_served());
        assert_eq!(
            approved_now.history.last().unwrap().note.as_deref(),
            Some("approved by ana")
        );
        let rejected_now = decided(
            &memories,
            pending,
            Decision::Reject,
            Some("ana"),
            Some("wrong module"),
        )
        .unwrap()
        .remove(0);
        assert_eq!(rejected_now.status, Status::Rejected);
        assert!(!rejected_now.is_live() && !rejected_now.is_served());
        assert_eq!(
            rejected_now.history.last().unwrap().note.as_deref(),
            Some("rejected by ana: wrong module")
        );
    }

    #[test]
    fn an_approval_supersedes_the_memory_the_write_replaces() {
        let old = memory("m_0000000000000001", Status::Approved);
        let mut new = memory("m_0000000000000002", Status::Pending);
        new.validity.supersedes = Some(old.id.clone());
        let memories = by_id(vec![old.clone(), new.clone()]);
        let changed = decided(&memories, &new.id, Decision::Approve, None, None).unwrap();
        assert_eq!(changed.len(), 2);
        assert_eq!(changed[1].id, old.id);
        assert_eq!(
            changed[1].validity.superseded_by.as_deref(),
            Some(new.id.as_str())
        );
        assert!(!changed[1].is_live());
        // A rejection leaves the old memory served.
        let changed = decided(&memories, &new.id, Decision::Reject, None, None).unwrap();
        assert_eq!(changed.len(), 1);
    }
}
