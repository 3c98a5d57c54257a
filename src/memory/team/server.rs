//! The team server in the memory layer's terms: outbox entries go out, stored memories and
//! review records come in. The connection and the queries are `storage::remote`'s; this
//! file turns entries into pushed rows and pulled rows into memories.

use crate::config::team::Credentials;
use crate::memory::reviews::ReviewRecord;
use crate::memory::store::{self, StoredMemory};
use crate::storage::StoreError;
use crate::storage::remote::{Connection, Push, Pushed, RemoteError};

use super::outbox::Entry;

/// The team server, signed in as a developer.
pub struct Server {
    connection: Connection,
}

impl Server {
    pub fn new(url: &str, namespace: &str, database: &str, credentials: Credentials) -> Server {
        Server {
            connection: Connection::new(url, namespace, database, credentials),
        }
    }

    pub fn url(&self) -> &str {
        self.connection.url()
    }

    /// Whether the server was found away less than a few seconds ago.
    pub fn recently_away(&self) -> bool {
        self.connection.recently_away()
    }

    /// Memories changed after `after`, and review records, in write order (only what the
    /// server lets this developer read). A row that does not decode is skipped with a
    /// warning, so a bad row any member's client wrote does not stop everyone's pull.
    pub async fn changes_since(
        &self,
        after: u64,
    ) -> Result<(Vec<StoredMemory>, Vec<ReviewRecord>), RemoteError> {
        let doing = "reading shared memories";
        let (rows, reviews) = self.connection.changes_since(after).await?;
        let memories = rows
            .into_iter()
            .filter_map(|row| decoded(store::from_row(row, doing)))
            .collect();
        let reviews = reviews
            .into_iter()
            .filter_map(|row| decoded(crate::storage::decode(vec![row], doing)))
            .flatten()
            .collect();
        Ok((memories, reviews))
    }

    /// One memory as the server holds it now (`None` if it does not exist or is not this
    /// developer's to read).
    pub async fn row(&self, id: &str) -> Result<Option<StoredMemory>, RemoteError> {
        let doing = "reading a shared memory";
        self.connection
            .row(id)
            .await?
            .map(|row| store::from_row(row, doing))
            .transpose()
            .map_err(|e| RemoteError::Query {
                doing: doing.to_string(),
                message: e.to_string(),
            })
    }

    /// Applies entries in one transaction: an entry already applied is skipped, a memory
    /// changed since the entry's base is a `Conflict`.
    pub async fn push(&self, entries: &[Entry]) -> Result<(), RemoteError> {
        let writes: Vec<Push> = entries.iter().map(push).collect();
        self.connection.push(&writes).await
    }

    /// Whether an entry's key is recorded as applied (for status and tests).
    pub async fn applied(&self, key: &str) -> Result<bool, RemoteError> {
        self.connection.applied(key).await
    }
}

/// A pulled row that decodes; one that does not is skipped with a warning (redacted:
/// decoding errors quote values).
fn decoded<T>(row: Result<T, StoreError>) -> Option<T> {
    row.inspect_err(|e| {
        let message = crate::secrets::redact(&e.to_string()).text;
        tracing::warn!("skipped a row from the team server that does not decode: {message}");
    })
    .ok()
}

/// An entry as the server stores it: memories as rows of the `memory` table (numbered and
/// stamped with the entry's key by the server), forgotten memories as tombstones that keep
/// their kind and developer (so the server's permissions still know whose they were), the
/// review record as its row.
fn push(entry: &Entry) -> Push {
    let memories = entry
        .memories
        .iter()
        .map(|row| {
            let vector = row.vector.as_deref().and_then(store::decode_vector);
            let mut body = store::to_row(&row.memory, vector.as_deref());
            body.remove("id");
            body.remove("seq");
            Pushed {
                key: row.memory.id.clone(),
                base: row.base.clone(),
                body,
            }
        })
        .collect();
    let tombstones = entry
        .tombstones
        .iter()
        .map(|t| {
            let mut body = crate::storage::Row::new();
            body.insert("forgotten".to_string(), true.into());
            body.insert("kind".to_string(), t.kind.as_str().into());
            if let Some(developer) = &t.developer {
                body.insert("developer".to_string(), developer.as_str().into());
            }
            Pushed {
                key: t.id.clone(),
                base: None,
                body,
            }
        })
        .collect();
    let reviews = entry
        .review
        .iter()
        .map(|record| {
            let mut body = store::review_body(record);
            body.remove("seq");
            Pushed {
                key: record.id.clone(),
                base: None,
                body,
            }
        })
        .collect();
    Push {
        key: entry.key.clone(),
        memories,
        tombstones,
        reviews,
    }
}
