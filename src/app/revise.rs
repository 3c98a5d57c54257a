//! Editing a memory by superseding it, and the chain of memories that superseded each other.
//!
//! An edit is a write like any other: it goes through [`Cairn::write_memory`] with the old
//! memory named in `supersedes`, so validation, anchor checks and the supersede rules are
//! those of `remember`. It keeps what the text does not say (type, developer, scope, file
//! pattern, category, metadata, where the learning came from) and refuses a text holding a secret
//! rather than storing it redacted: the person editing sees the refusal and can take it out.

use std::collections::HashSet;

use super::{AskError, Cairn};
use crate::memory::{self, Memory, MemoryError, WriteOutcome};

/// Most memories the chain walks on either side of a memory.
const CHAIN_STEPS: usize = 50;

/// A new text (and anchors) for a live memory, written as a memory that supersedes it.
#[derive(Debug, Clone, Default)]
pub struct ReviseRequest {
    /// The memory to supersede.
    pub id: String,
    pub content: String,
    /// Empty: the first sentence of the text.
    pub title: Option<String>,
    pub paths: Vec<String>,
    pub symbols: Vec<String>,
    /// Who writes.
    pub written_by: Option<String>,
    /// When the memory was last changed as the editor saw it (`updated_at`, ms): a memory
    /// changed since is not overwritten.
    pub seen: Option<i64>,
}

/// The memories that superseded each other, oldest first; `at` is the asked one's place.
#[derive(Debug, Clone)]
pub struct Chain {
    pub memories: Vec<Memory>,
    pub at: usize,
}

impl Cairn {
    /// Writes a new version of a live memory that supersedes it, through the write path of
    /// `remember`; refused (nothing stored) when the memory is gone, superseded or changed
    /// since `seen`, when nothing changed, or when the text holds a secret.
    pub async fn revise(&self, request: ReviseRequest) -> Result<WriteOutcome, AskError> {
        let old = self.memory_by_id(request.id.trim()).await?;
        if let Some(newer) = &old.validity.superseded_by {
            return Err(invalid(format!(
                "{} was superseded by {newer} already: nothing was stored; edit the newer one",
                old.id
            )));
        }
        if request
            .seen
            .is_some_and(|seen| seen != old.validity.updated_at)
        {
            return Err(invalid(format!(
                "{} changed since this form was opened: nothing was stored; open it again to see the change",
                old.id
            )));
        }
        let title = request
            .title
            .map(|t| t.trim().to_string())
            .filter(|t| !t.is_empty());
        let same_anchors =
            request.paths == old.anchors.paths && request.symbols == old.anchors.symbols;
        let unchanged = request.content.trim() == old.content
            && title.as_ref().is_none_or(|t| *t == old.title)
            && same_anchors;
        if unchanged {
            return Err(invalid(format!(
                "the text and anchors of {} are unchanged: nothing was stored",
                old.id
            )));
        }
        let new = memory::NewMemory {
            // A person's edit: never gated.
            pending: false,
            kind: Some(old.kind),
            title,
            content: request.content,
            developer: old.owner.developer.clone(),
            org: old.owner.org.clone(),
            agent: None,
            run: None,
            metadata: old.metadata.clone(),
            paths: request.paths,
            symbols: request.symbols,
            supersedes: Some(old.id.clone()),
            source: memory::Source::Manual,
            source_ref: old.provenance.source_ref.clone(),
            written_by: request.written_by,
            category: old.rule.category.clone(),
            file_pattern: old.rule.file_pattern.clone(),
            scope: old.scope,
            // Kept anchors still name the files of the repository they were written in;
            // anchors given anew are the editor's repository's.
            origin: old.anchors.origin.clone().filter(|_| same_anchors),
            refuse_secrets: true,
        };
        self.write_memory(new, Some(old.scope)).await
    }

    /// The memories that superseded each other through memory `id`, oldest first: the ones
    /// it supersedes, itself, the ones that superseded it (a forgotten link ends the walk).
    pub async fn supersession_chain(&self, id: &str) -> Result<Chain, AskError> {
        let start = self.memory_by_id(id.trim()).await?;
        let mut seen: HashSet<String> = HashSet::from([start.id.clone()]);
        let mut older = self
            .chain_from(
                start.validity.supersedes.clone(),
                |m| &m.validity.supersedes,
                &mut seen,
            )
            .await;
        let newer = self
            .chain_from(
                start.validity.superseded_by.clone(),
                |m| &m.validity.superseded_by,
                &mut seen,
            )
            .await;
        older.reverse();
        let at = older.len();
        let mut memories = older;
        memories.push(start);
        memories.extend(newer);
        Ok(Chain { memories, at })
    }

    /// The memories one link after another from `first` (`next` names the link), up to
    /// [`CHAIN_STEPS`]; a memory already `seen` or gone ends the walk.
    async fn chain_from(
        &self,
        first: Option<String>,
        next: impl Fn(&Memory) -> &Option<String>,
        seen: &mut HashSet<String>,
    ) -> Vec<Memory> {
        let mut chain = Vec::new();
        let mut link = first;
        while let Some(id) = link.take().filter(|id| seen.insert(id.clone())) {
            if chain.len() == CHAIN_STEPS {
                break;
            }
            let Ok(memory) = self.memory_by_id(&id).await else {
                break;
            };
            link = next(&memory).clone();
            chain.push(memory);
        }
        chain
    }
}

fn invalid(message: String) -> AskError {
    MemoryError::Invalid(message).into()
}
