//! Team mode inside [`Memories`]: memories, review records, rule statistics and profiles
//! shared through one SurrealDB server, while the code graph stays in each working copy's
//! local store. Shared writes go to the server as idempotent entries (queued in the
//! [`outbox`] while it is away), and the server's changes are pulled into the state and the
//! local copy ([`link`]), so answers never wait for the network and survive it being away.
//! The rest of `Memories` decides writes as in solo mode.
//!
//! - [`link`] — a team store in use: server, outbox, local copy, sync record.
//! - [`outbox`] — writes kept durably on disk while the server is away, replayed in order.
//! - [`server`] — the server in memory's terms (entries out, memories in).
//! - [`skipped`] — pulled rows skipped past (undecodable, invalid or over the import limits),
//!   recorded for `cairn doctor`.

pub mod link;
pub mod outbox;
pub mod server;
pub mod skipped;

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

pub use link::{Link, SyncRecord, TeamStatus};
pub use server::Server;

use super::guidelines::GuidelineChange;
use super::reviews::ReviewRecord;
use super::store::{MemoryStore, StoredMemory};
use super::{Memories, MemoryError, Result, State, store_error, write};
use crate::storage::remote::{PRIVATE_KINDS, RemoteError};
use outbox::{Entry, Row, Tombstone};
use skipped::Skipped;

/// Entries per replay transaction.
pub const REPLAY_BATCH: usize = 100;
/// Rows per entry: a large import is sent as several transactions.
const ROWS_PER_ENTRY: usize = 500;
/// Tries for one entry whose memories changed on the server meanwhile, or that met a busy
/// server.
const TRIES: usize = 5;

fn team_error(error: RemoteError) -> MemoryError {
    MemoryError::Store(anyhow::Error::new(error))
}

/// What a process knows of the team server.
#[derive(Default)]
pub(super) struct Sync {
    /// The revision of each memory as the server (or a queued write) has it.
    pub(super) revs: std::collections::HashMap<String, String>,
    /// The outbox file as last overlaid.
    pub(super) outbox_stamp: Option<outbox::Stamp>,
    /// Why the last exchange with the server failed (answers are then from the last synced
    /// copy).
    pub(super) offline: Option<String>,
    /// The local copy holds the server's rows only up to this number: writing a pull into it
    /// failed (another process held it). The next pull starts here, so the copy has no hole.
    pub(super) mirror_behind: Option<u64>,
}

/// Whether an entry is sent now (its failure is the caller's) or replayed from the outbox
/// (a write the server refuses for good is set aside, never retried forever).
#[derive(Clone, Copy, PartialEq)]
enum Mode {
    Online,
    Replay,
}

impl Memories {
    /// Team mode: replays queued writes, pulls the server's changes, overlays what is still
    /// queued. An unreachable server leaves the state as it is, with a note; other failures
    /// (credentials refused, a broken server) are errors.
    pub(super) async fn sync(&self, store: Option<&MemoryStore>, state: &mut State) -> Result<()> {
        let Some(link) = self.team.clone() else {
            return Ok(());
        };
        let mut pulled = false;
        if link.server.recently_away() {
            if state.team.offline.is_none() {
                state.team.offline = Some(
                    link.sync_record()
                        .error
                        .unwrap_or_else(|| format!("{} is unreachable", link.server.url())),
                );
            }
        } else {
            let pending = link.outbox.pending().map_err(|e| {
                MemoryError::Store(anyhow::anyhow!(
                    "cannot read {}: {e}",
                    link.outbox.path().display()
                ))
            })?;
            match self.exchange(&link, store, state, pending.entries).await {
                Ok(changed) => {
                    pulled = changed;
                    if state.team.offline.take().is_some() {
                        tracing::info!("the team server at {} answers again", link.server.url());
                    }
                    link.record_sync(None);
                }
                // A server that stays busy (write conflicts on the sequence, past the tries)
                // is answered for like one away: the queue waits for the next sync.
                Err(error @ (RemoteError::Unreachable { .. } | RemoteError::Busy(_))) => {
                    let message = error.to_string();
                    // Once per outage, not on every question.
                    if state.team.offline.is_none() {
                        tracing::warn!("{message}; answering from the local copy");
                    }
                    link.record_sync(Some(&message));
                    state.team.offline = Some(message);
                    if store.is_none() {
                        return self.local_then_queue(&link, state).await;
                    }
                }
                Err(error) => return Err(team_error(error)),
            }
        }
        self.overlay(&link, state, pulled)
    }

    /// Answers from the local copy and the queue with the server away, reading the queue
    /// before the copy: another process moves a write from the queue only once its copy holds
    /// it, so a write this process read neither in the copy (read earlier) nor in the queue
    /// is in the copy now. (A process holding the store needs none of this: nothing else
    /// writes the copy meanwhile.)
    async fn local_then_queue(&self, link: &Link, state: &mut State) -> Result<()> {
        let stamp = link.outbox.stamp();
        let pending = link.outbox.pending().map_err(|e| {
            MemoryError::Store(anyhow::anyhow!(
                "cannot read {}: {e}",
                link.outbox.path().display()
            ))
        })?;
        self.refresh_local(state).await?;
        for entry in &pending.entries {
            apply_entry(state, entry);
        }
        state.team.outbox_stamp = stamp;
        Ok(())
    }

    /// Replays the queued entries and pulls; true when anything was pulled.
    async fn exchange(
        &self,
        link: &Link,
        store: Option<&MemoryStore>,
        state: &mut State,
        queued: Vec<Entry>,
    ) -> std::result::Result<bool, RemoteError> {
        let mut pulled = false;
        let mut done = HashSet::new();
        let mut outcome = Ok(());
        if !queued.is_empty() {
            (done, outcome) = match self.deliver(link, store, state, queued, Mode::Replay).await {
                Ok(done) => (done, Ok(())),
                Err((done, error)) => (done, Err(error)),
            };
            if !done.is_empty() {
                tracing::info!("replayed {} queued memory writes", done.len());
                pulled = true;
            }
        }
        let outcome = match outcome {
            Ok(()) => self.pull(link, store, state).await.map(|p| pulled | p),
            Err(error) => Err(error),
        };
        // A delivered write leaves the queue once the local copy holds it: until then
        // another process reading the copy with the server away finds it in the queue (a
        // replay of an applied entry is a no-op).
        if !done.is_empty()
            && outcome.is_ok()
            && state.team.mirror_behind.is_none()
            && let Err(e) = link.outbox.remove(&done)
        {
            tracing::warn!("cannot rewrite {}: {e}", link.outbox.path().display());
        }
        outcome
    }

    /// Reads what changed on the server since the state's sequence number, applies it and
    /// keeps it in the local copy. Rows that do not decode or fail the import checks are
    /// skipped past (warned about and recorded for `cairn doctor`): the cursor moves to the
    /// newest row read either way. True when anything changed.
    async fn pull(
        &self,
        link: &Link,
        store: Option<&MemoryStore>,
        state: &mut State,
    ) -> std::result::Result<bool, RemoteError> {
        // After a pull the local copy could not hold, from where the copy stops.
        let from = state.team.mirror_behind.unwrap_or(state.seq).min(state.seq);
        let mut changes = link.server.changes_since(from).await?;
        let restored = changes.server_head < state.seq;
        if restored {
            let fresh = link.server.changes_since(0).await?;
            self.restored(link, store, state, changes.server_head, &fresh)
                .await
                .map_err(|e| RemoteError::Query {
                    doing: "catching up with a team server restored from a backup".to_string(),
                    message: e.to_string(),
                })?;
            changes = fresh;
        }
        let from = if restored { 0 } else { from };
        let Some(head) = changes.head.filter(|head| *head > from) else {
            // Nothing past where the copy stops: it lacks nothing.
            state.team.mirror_behind = None;
            return Ok(restored);
        };
        let (rows, reviews, mut skipped) = clean_pulled(changes.memories, changes.reviews);
        let guidelines = clean_pulled_changes(changes.guidelines, &mut skipped);
        skipped.extend(changes.skipped);
        link.skip(skipped);
        let mirrored = match store {
            Some(store) => mirror(store, &rows, &reviews, &guidelines, head).await,
            // A reader waits only briefly for the local store (`create: false`); the
            // directory is made first so the copy can start.
            None => {
                let _ = crate::fsutil::private_dir(&link.mirror_dir());
                self.with_store(false, async |store| {
                    mirror(store, &rows, &reviews, &guidelines, head).await
                })
                .await
                .map(|_| ())
            }
        };
        for row in rows {
            state.apply(row);
        }
        state.apply_reviews(reviews);
        state.seq = head;
        match mirrored {
            Ok(()) => {
                state.team.mirror_behind = None;
                self.backend.set_marker(head);
            }
            // The local copy is a cache: the next pull writes it from where it stops.
            Err(e) => {
                tracing::warn!("the local copy of the team memories is behind: {e}");
                state.team.mirror_behind = Some(from);
            }
        }
        Ok(true)
    }

    /// The server's write sequence went back below this copy's cursor: it was restored from
    /// a backup older than what this copy pulled. What this copy holds from after the backup
    /// (rows numbered beyond the server's head: memories, forgets, review records) is offered
    /// again through the outbox, each keyed by its id and old number so that the same version
    /// offered by several members is applied once (a memory the backup holds in an older
    /// version is rebased on it, as any write); then the copy is cleared, to be pulled again
    /// from the start with `fresh`, the server's whole content.
    async fn restored(
        &self,
        link: &Link,
        store: Option<&MemoryStore>,
        state: &mut State,
        server_head: u64,
        fresh: &server::Changes,
    ) -> Result<()> {
        tracing::warn!(
            "the team server at {} numbers its writes from {server_head}, below this copy's {} (restored from a backup?): offering again what this copy holds from after it, then pulling everything",
            link.server.url(),
            state.seq
        );
        let read = async |store: &MemoryStore| -> Result<(Vec<StoredMemory>, Vec<ReviewRecord>)> {
            let rows = store
                .changes_since(server_head)
                .await
                .map_err(store_error)?;
            let reviews = store
                .reviews_since(server_head)
                .await
                .map_err(store_error)?;
            Ok((rows, reviews))
        };
        let (rows, reviews) = match store {
            Some(store) => read(store).await?,
            None => self.with_store(true, read).await?.unwrap_or_default(),
        };
        let entries = offered_again(
            &link.config.credentials.developer,
            rows,
            reviews,
            &fresh.memories,
        );
        if !entries.is_empty() {
            link.outbox.append(&entries).map_err(|e| {
                MemoryError::Store(anyhow::anyhow!(
                    "cannot queue the writes the restored team server lacks in {}: {e}",
                    link.outbox.path().display()
                ))
            })?;
            tracing::warn!(
                "{} writes made after the backup are queued to be sent again",
                entries.len()
            );
        }
        let clear = async |store: &MemoryStore| store.clear_mirror().await.map_err(store_error);
        match store {
            Some(store) => clear(store).await?,
            None => {
                self.with_store(true, clear).await?;
            }
        }
        self.backend.reset_marker(0);
        let here = state.here.take();
        *state = State {
            loaded: true,
            here,
            ..State::default()
        };
        Ok(())
    }

    /// Applies queued writes over the state (they are the newest intent of this working
    /// copy), when the outbox changed or the state was just refreshed from the server.
    pub(super) fn overlay(&self, link: &Link, state: &mut State, force: bool) -> Result<()> {
        let stamp = link.outbox.stamp();
        if !force && stamp == state.team.outbox_stamp {
            return Ok(());
        }
        let pending = link.outbox.pending().map_err(|e| {
            MemoryError::Store(anyhow::anyhow!(
                "cannot read {}: {e}",
                link.outbox.path().display()
            ))
        })?;
        for entry in &pending.entries {
            apply_entry(state, entry);
        }
        state.team.outbox_stamp = stamp;
        Ok(())
    }

    /// A shared write: sent to the server now; queued durably (and applied locally) if the
    /// server is away.
    pub(super) async fn team_write(
        &self,
        link: &Arc<Link>,
        store: &MemoryStore,
        state: &mut State,
        rows: Vec<Row>,
        tombstones: Vec<Tombstone>,
        attached: Attached,
    ) -> Result<()> {
        refuse_others(&link.config.credentials.developer, &rows, &tombstones)?;
        let entries = entries(rows, tombstones, attached);
        // Writes queued earlier go first, so the server sees this copy's writes in order.
        let queued = link.outbox.pending().map_or(0, |p| p.entries.len());
        let sent = if queued > 0 || link.server.recently_away() {
            Err(RemoteError::Unreachable {
                url: link.server.url().to_string(),
                message: if queued > 0 {
                    format!("{queued} earlier writes wait for it")
                } else {
                    "it did not answer a moment ago".to_string()
                },
            })
        } else {
            self.deliver(link, Some(store), state, entries.clone(), Mode::Online)
                .await
                .map(|_| ())
                .map_err(|(_, e)| e)
        };
        match sent {
            Ok(()) => {
                link.record_sync(None);
                state.team.offline = None;
                let away = match self.pull(link, Some(store), state).await {
                    Ok(_) if state.team.mirror_behind.is_none() => return Ok(()),
                    Ok(_) => None,
                    // The server going away (or staying busy) before the rows came back does
                    // not undo the write (an error would tell the writer it failed); the next
                    // sync pulls them.
                    Err(error @ (RemoteError::Unreachable { .. } | RemoteError::Busy(_))) => {
                        Some(error.to_string())
                    }
                    Err(error) => return Err(team_error(error)),
                };
                // The write is on the server but not in the local copy: it is queued as well,
                // so another process reading the copy with the server away finds it (the
                // replay is a no-op).
                link.outbox.append(&entries).map_err(|e| {
                    MemoryError::Store(anyhow::anyhow!(
                        "the write was applied on the team server but cannot be noted in {}: {e}",
                        link.outbox.path().display()
                    ))
                })?;
                state.team.outbox_stamp = link.outbox.stamp();
                if let Some(note) = away {
                    tracing::warn!("{note}; the write was applied on the server");
                    link.record_sync(Some(&note));
                    state.team.offline = Some(note);
                    // Answers given meanwhile show it, as the server has it.
                    for entry in &entries {
                        apply_entry(state, entry);
                    }
                }
                Ok(())
            }
            // Queued as for a server away, also when it stayed busy: a write of several
            // entries may have been applied in part, and its answer must not say it failed.
            Err(error @ (RemoteError::Unreachable { .. } | RemoteError::Busy(_))) => {
                // Entries already applied by the server are skipped when replayed.
                link.outbox.append(&entries).map_err(|e| {
                    MemoryError::Store(anyhow::anyhow!(
                        "the team server is away and the write cannot be queued in {}: {e}",
                        link.outbox.path().display()
                    ))
                })?;
                let note = error.to_string();
                link.record_sync(Some(&note));
                state.team.offline = Some(note);
                for entry in &entries {
                    apply_entry(state, entry);
                }
                state.team.outbox_stamp = link.outbox.stamp();
                Ok(())
            }
            Err(error) => Err(team_error(error)),
        }
    }

    /// Sends entries in order, in batches; returns the keys applied (or already applied).
    /// Stops at the first failure, returning what was delivered before it.
    async fn deliver(
        &self,
        link: &Link,
        store: Option<&MemoryStore>,
        state: &mut State,
        entries: Vec<Entry>,
        mode: Mode,
    ) -> std::result::Result<HashSet<String>, (HashSet<String>, RemoteError)> {
        let mut done = HashSet::new();
        for batch in entries.chunks(REPLAY_BATCH) {
            match link.server.push(batch).await {
                Ok(()) => {
                    done.extend(batch.iter().map(|e| e.key.clone()));
                    continue;
                }
                Err(error @ RemoteError::Unreachable { .. }) => return Err((done, error)),
                // One entry spoils the batch: send them one by one.
                Err(_) => {}
            }
            for entry in batch {
                match self.deliver_one(link, store, state, entry.clone()).await {
                    Ok(()) => {
                        done.insert(entry.key.clone());
                    }
                    Err(
                        error @ (RemoteError::Refused(_)
                        | RemoteError::Query { .. }
                        | RemoteError::Conflict(_)),
                    ) if mode == Mode::Replay => {
                        // Kept aside, reported by `cairn status`; the rest goes on.
                        tracing::warn!("a queued memory write was refused and set aside: {error}");
                        // Out of the queue at once: it never reaches the local copy.
                        if link.reject(entry, &error.to_string()).is_ok()
                            && link
                                .outbox
                                .remove(&HashSet::from([entry.key.clone()]))
                                .is_ok()
                        {
                            done.insert(entry.key.clone());
                        }
                    }
                    Err(error) => return Err((done, error)),
                }
            }
        }
        Ok(done)
    }

    /// Sends one entry; when a memory changed on the server since this write read it, the
    /// write is rebased on the server's version (which is kept in the memory's history).
    async fn deliver_one(
        &self,
        link: &Link,
        store: Option<&MemoryStore>,
        state: &mut State,
        mut entry: Entry,
    ) -> std::result::Result<(), RemoteError> {
        let mut last = None;
        for attempt in 0..TRIES {
            match link.server.push(std::slice::from_ref(&entry)).await {
                Ok(()) => return Ok(()),
                Err(RemoteError::Conflict(id)) => {
                    let current = link.server.row(&id).await?;
                    rebase(&mut entry, &id, current.as_ref());
                    self.pull(link, store, state).await?;
                    last = Some(RemoteError::Conflict(id));
                }
                Err(RemoteError::Busy(message)) => {
                    let pause = 20 * (attempt as u64 + 1) + jitter();
                    tokio::time::sleep(std::time::Duration::from_millis(pause)).await;
                    last = Some(RemoteError::Busy(message));
                }
                Err(error) => return Err(error),
            }
        }
        Err(last.expect("at least one try"))
    }

    /// Team mode's state now: sync first (replaying what is queued).
    pub async fn team_sync(&self) -> Result<Option<TeamStatus>> {
        let Some(link) = self.team.clone() else {
            return Ok(None);
        };
        let mut state = self.state.lock().await;
        self.refresh(&mut state).await?;
        Ok(Some(link.status()))
    }

    /// A note for answers given while the team server is away.
    pub async fn staleness(&self) -> Option<String> {
        let link = self.team.as_ref()?;
        let offline = self.state.lock().await.team.offline.clone()?;
        let record = link.sync_record();
        let since = match record.synced_at {
            Some(at) => format!("the copy synced at {}", crate::clock::time_of_ms(at)),
            None => "this working copy's own writes (never synced)".to_string(),
        };
        let queued = link.outbox.pending().map_or(0, |p| p.entries.len());
        Some(format!(
            "team memories may be stale: {offline}; answering from {since}{}",
            if queued > 0 {
                format!("; {queued} writes queued for replay")
            } else {
                String::new()
            }
        ))
    }
}

/// Refuses a write of another developer's private memory (only that developer's own cairn
/// may write or forget it).
fn refuse_others(me: &str, rows: &[Row], tombstones: &[Tombstone]) -> Result<()> {
    let private = |kind: &str, developer: Option<&String>| {
        PRIVATE_KINDS.contains(&kind) && developer.map(String::as_str) != Some(me)
    };
    for row in rows {
        if private(
            row.memory.kind.as_str(),
            row.memory.owner.developer.as_ref(),
        ) {
            let kind = row.memory.kind.as_str();
            let owner = row.memory.owner.developer.as_deref().unwrap_or("nobody");
            return Err(MemoryError::Invalid(format!(
                "in team mode a {kind} memory of {owner} can only be written by {owner}'s own cairn (this one signs in as {me})"
            )));
        }
    }
    if let Some(t) = tombstones
        .iter()
        .find(|t| private(&t.kind, t.developer.as_ref()))
    {
        return Err(MemoryError::Invalid(format!(
            "in team mode only its developer can forget {}",
            t.id
        )));
    }
    Ok(())
}

/// What a shared write carries besides memories and tombstones.
#[derive(Default)]
pub(super) struct Attached {
    pub(super) review: Option<ReviewRecord>,
    pub(super) guidelines: Vec<GuidelineChange>,
}

/// A write as outbox entries: rows in entries of a bounded size, then one entry for the
/// tombstones, the review record and the guideline changes.
fn entries(rows: Vec<Row>, tombstones: Vec<Tombstone>, attached: Attached) -> Vec<Entry> {
    let mut entries: Vec<Entry> = Vec::new();
    let mut rows = rows.into_iter().peekable();
    while rows.peek().is_some() {
        entries.push(Entry::new(
            rows.by_ref().take(ROWS_PER_ENTRY).collect(),
            Vec::new(),
            None,
        ));
    }
    let Attached { review, guidelines } = attached;
    if !tombstones.is_empty() || review.is_some() || !guidelines.is_empty() {
        let mut entry = Entry::new(Vec::new(), tombstones, review);
        entry.guidelines = guidelines;
        entries.push(entry);
    }
    entries
}

/// Keeps pulled rows in the local copy: memories and review records in one transaction, then
/// the guideline changes, each merged with this copy's own ([`super::guidelines::pulled_wins`]).
async fn mirror(
    store: &MemoryStore,
    rows: &[StoredMemory],
    reviews: &[ReviewRecord],
    guidelines: &[GuidelineChange],
    head: u64,
) -> Result<()> {
    store
        .write_mirror(rows, reviews, head)
        .await
        .map_err(store_error)?;
    if guidelines.is_empty() {
        return Ok(());
    }
    let held = store.guideline_changes().await.map_err(store_error)?;
    for change in guidelines {
        let local = held.iter().find(|c| c.id == change.id);
        if super::guidelines::pulled_wins(local, change) {
            store
                .write_guideline_change(change)
                .await
                .map_err(store_error)?;
        }
    }
    Ok(())
}

/// Pulled guideline changes that pass the checks a recorded change passes, scrubbed; the rest
/// are added to `skipped`.
fn clean_pulled_changes(
    changes: Vec<GuidelineChange>,
    skipped: &mut Vec<Skipped>,
) -> Vec<GuidelineChange> {
    changes
        .into_iter()
        .filter_map(|change| {
            let id = change.id.clone();
            super::guidelines::clean_pulled(change)
                .inspect_err(|e| {
                    skipped.push(Skipped::new(
                        "guideline_change",
                        Some(&id),
                        0,
                        &e.to_string(),
                    ));
                })
                .ok()
        })
        .collect()
}

/// The writes that bring a restored server up to what this copy holds from after its backup:
/// each memory row and review record as its own entry, a forget as a tombstone of the
/// memory the server holds alive again; only what this developer may write (another's
/// private memory is theirs to offer). Keys are derived from the id and old number, the same
/// on every member's copy.
fn offered_again(
    me: &str,
    rows: Vec<StoredMemory>,
    reviews: Vec<ReviewRecord>,
    on_server: &[StoredMemory],
) -> Vec<Entry> {
    let mine = |kind: &str, developer: Option<&String>| {
        !PRIVATE_KINDS.contains(&kind) || developer.map(String::as_str) == Some(me)
    };
    let keyed = |what: &str, id: &str, seq: u64, mut entry: Entry| {
        let hash = xxhash_rust::xxh3::xxh3_128(format!("{what}\n{id}\n{seq}").as_bytes());
        entry.key = format!("restore-{hash:032x}");
        entry
    };
    let on_server: HashMap<&str, &StoredMemory> = on_server
        .iter()
        .map(|r| (r.memory.id.as_str(), r))
        .collect();
    let mut entries = Vec::new();
    for row in rows {
        let (id, seq) = (row.memory.id.clone(), row.memory.seq);
        if row.forgotten {
            let Some(alive) = on_server.get(id.as_str()).filter(|r| !r.forgotten) else {
                continue;
            };
            let memory = &alive.memory;
            if !mine(memory.kind.as_str(), memory.owner.developer.as_ref()) {
                continue;
            }
            let tombstone = Tombstone {
                id: id.clone(),
                kind: memory.kind.as_str().to_string(),
                developer: memory.owner.developer.clone(),
            };
            let entry = Entry::new(Vec::new(), vec![tombstone], None);
            entries.push(keyed("forget", &id, seq, entry));
            continue;
        }
        if !mine(
            row.memory.kind.as_str(),
            row.memory.owner.developer.as_ref(),
        ) {
            continue;
        }
        let base = on_server.get(id.as_str()).and_then(|r| r.rev.clone());
        let vector = row.vector.as_deref().map(super::store::encode_vector);
        let memory = Row {
            memory: row.memory,
            vector,
            base,
        };
        entries.push(keyed(
            "memory",
            &id,
            seq,
            Entry::new(vec![memory], Vec::new(), None),
        ));
    }
    for review in reviews {
        let (id, seq) = (review.id.clone(), review.seq);
        entries.push(keyed(
            "review",
            &id,
            seq,
            Entry::new(Vec::new(), Vec::new(), Some(review)),
        ));
    }
    entries
}

/// Rows pulled from the server, checked, bounded and scrubbed as `cairn memory import` does
/// (any member's client can write any row), and review records as `record_review` checks
/// them. A row that fails is left out and returned as skipped, with a reason that never
/// quotes a value that could hold a secret.
fn clean_pulled(
    rows: Vec<StoredMemory>,
    reviews: Vec<ReviewRecord>,
) -> (Vec<StoredMemory>, Vec<ReviewRecord>, Vec<Skipped>) {
    let mut skipped = Vec::new();
    let rows = rows
        .into_iter()
        .filter_map(|mut row| match check_pulled(&mut row) {
            Ok(()) => {
                if !row.forgotten {
                    write::scrub(&mut row.memory);
                }
                Some(row)
            }
            Err(e) => {
                let memory = &row.memory;
                skipped.push(Skipped::new(
                    "memory",
                    Some(&memory.id),
                    memory.seq,
                    &e.to_string(),
                ));
                None
            }
        })
        .collect();
    let reviews = reviews
        .into_iter()
        .filter_map(|record| {
            let (id, seq) = (record.id.clone(), record.seq);
            super::reviews::clean_record(record)
                .inspect_err(|e| {
                    skipped.push(Skipped::new("review", Some(&id), seq, &e.to_string()));
                })
                .ok()
        })
        .collect();
    (rows, reviews, skipped)
}

/// A pulled row is a valid memory within the import limits (a forgotten one only needs its
/// id), and its revision key holds no secret. What cairn itself lets grow (the history, a
/// revision's note) is cut as an import cuts it.
fn check_pulled(row: &mut StoredMemory) -> Result<()> {
    if let Some(rev) = &row.rev {
        write::refuse_secret("its revision key", rev)?;
    }
    if row.forgotten {
        write::refuse_secret("the id", &row.memory.id)?;
        if !super::model::is_memory_id(&row.memory.id) {
            return Err(MemoryError::Invalid(
                "a forgotten row's id is not a memory id".to_string(),
            ));
        }
        return Ok(());
    }
    write::validate_stored(&row.memory)?;
    super::model::bound_imported(&mut row.memory)
}

/// A queued write applied over the state: its rows carry the entry's key as revision, so a
/// later write of the same memory is based on it and replays in order.
fn apply_entry(state: &mut State, entry: &Entry) {
    for row in &entry.memories {
        state.apply(StoredMemory {
            memory: row.memory.clone(),
            vector: row.vector.as_deref().and_then(super::store::decode_vector),
            forgotten: false,
            rev: Some(entry.key.clone()),
        });
    }
    for t in &entry.tombstones {
        let mut memory = super::Memory::new(
            t.id.clone(),
            super::MemoryType::ProjectPattern,
            String::new(),
            String::new(),
            0,
        );
        memory.seq = 0;
        state.apply(StoredMemory {
            memory,
            vector: None,
            forgotten: true,
            rev: Some(entry.key.clone()),
        });
    }
    if let Some(review) = &entry.review {
        state.apply_reviews(vec![review.clone()]);
    }
}

/// Rebases memory `id` of `entry` on the server's current version: the server's text goes
/// into the memory's history, this write's text stays. A memory forgotten meanwhile stays
/// forgotten.
fn rebase(entry: &mut Entry, id: &str, current: Option<&StoredMemory>) {
    if current.is_some_and(|c| c.forgotten) {
        entry.memories.retain(|row| row.memory.id != id);
        return;
    }
    for row in entry.memories.iter_mut().filter(|row| row.memory.id == id) {
        row.base = current.and_then(|c| c.rev.clone());
        if let Some(current) = current {
            let current = &current.memory;
            let mut history = current.history.clone();
            history.push(super::Revision {
                at: crate::clock::now_ms(),
                event: super::Action::Update,
                title: current.title.clone(),
                content: current.content.clone(),
                by: None,
                note: Some(
                    "replaced by a write another working copy made from an older version"
                        .to_string(),
                ),
            });
            row.memory.history = history;
        }
    }
}

/// A few milliseconds of jitter so retrying writers do not collide again.
fn jitter() -> u64 {
    u64::from(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos())
            % 17,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::model::{MAX_ANCHORS, MAX_TITLE_BYTES};
    use crate::memory::reviews::{Disposition, Finding, Verdict};
    use crate::memory::{Memory, MemoryType};

    /// A GitHub token, built at run time so this file does not look like a leak.
    fn token() -> String {
        ["gh", "p_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"].concat()
    }

    fn row(id: &str, edit: impl FnOnce(&mut Memory)) -> StoredMemory {
        let mut memory = Memory::new(
            id.to_string(),
            MemoryType::Decision,
            "Staging".to_string(),
            "Staging deploys run at noon.".to_string(),
            1_700_000_000_000,
        );
        memory.seq = 7;
        edit(&mut memory);
        StoredMemory {
            memory,
            vector: None,
            forgotten: false,
            rev: None,
        }
    }

    fn record(id: &str, edit: impl FnOnce(&mut ReviewRecord)) -> ReviewRecord {
        let mut record = ReviewRecord {
            id: id.to_string(),
            at: 1_700_000_000_000,
            author: "bob@example.com".to_string(),
            reviewer: None,
            verdict: Verdict::Comment,
            findings: vec![Finding {
                category: "security".to_string(),
                file: Some("src/app.py".to_string()),
                line: Some(3),
                message: "the DSN is postgres://app:p@ss/w0rd@db/prod".to_string(),
                disposition: Disposition::Rejected,
                reason: Some("SMTP_PASS=Tr0ub4dor&3 is a test value".to_string()),
                file_pattern: None,
                end_line: None,
                reviewer: None,
            }],
            applied: Vec::new(),
            contradicted: Vec::new(),
            memory: None,
            seq: 7,
        };
        edit(&mut record);
        record
    }

    #[test]
    fn the_servers_private_kinds_are_developer_memory_types() {
        for kind in PRIVATE_KINDS {
            let parsed: MemoryType = kind.parse().unwrap();
            assert_eq!(parsed.as_str(), kind);
            assert!(parsed.developer_scoped(), "{kind}");
        }
    }

    #[test]
    fn pulled_rows_are_scrubbed_and_invalid_ones_skipped() {
        let rows = vec![
            row("m_0000000000000001", |m| {
                m.content = "Staging uses DB_PASSWORD=hunter2 for now.".to_string();
                m.provenance.written_by = Some(format!("bot {}", token()));
            }),
            row("m_0000000000000002", |m| m.owner.developer = Some(token())),
            row("m_0000000000000003", |m| m.rule.category = Some(token())),
            row("m_0000000000000004", |m| m.content = String::new()),
            row(&token(), |_| {}),
            StoredMemory {
                rev: Some(token()),
                ..row("m_0000000000000005", |_| {})
            },
            StoredMemory {
                forgotten: true,
                ..row("m_0000000000000006", |_| {})
            },
            // Over the import limits, as `cairn memory import` holds them.
            row("m_0000000000000007", |m| {
                m.title = format!("{} {}", token(), "t".repeat(MAX_TITLE_BYTES));
            }),
            row("m_0000000000000008", |m| {
                m.anchors.paths = (0..=MAX_ANCHORS).map(|i| format!("src/{i}.rs")).collect();
            }),
        ];
        let (rows, _, skipped) = clean_pulled(rows, Vec::new());
        let ids: Vec<&str> = rows.iter().map(|r| r.memory.id.as_str()).collect();
        assert_eq!(ids, ["m_0000000000000001", "m_0000000000000006"]);
        let skipped_ids: Vec<&str> = skipped.iter().map(|s| s.id.as_str()).collect();
        assert_eq!(
            skipped_ids,
            [
                "`m_0000000000000002`",
                "`m_0000000000000003`",
                "`m_0000000000000004`",
                "(value withheld)",
                "`m_0000000000000005`",
                "`m_0000000000000007`",
                "`m_0000000000000008`",
            ]
        );
        assert!(skipped.iter().all(|s| s.seq == 7 && s.table == "memory"));
        assert!(skipped[5].reason.contains("`title` is"), "{:?}", skipped[5]);
        for skipped in &skipped {
            assert!(!skipped.describe().contains(&token()), "{skipped:?}");
        }
        let kept = &rows[0].memory;
        assert_eq!(
            kept.content,
            "Staging uses DB_PASSWORD=[REDACTED:assigned-secret] for now."
        );
        assert_eq!(
            kept.provenance.written_by.as_deref(),
            Some("bot [REDACTED:github-token]")
        );
        assert_eq!(kept.redacted, ["assigned-secret", "github-token"]);
    }

    #[test]
    fn pulled_review_records_are_scrubbed_and_invalid_ones_skipped() {
        let reviews = vec![
            record("PR-1", |_| {}),
            record("PR-2", |r| r.author = token()),
            record("PR-3", |r| r.reviewer = Some(token())),
            record(&format!("PR-4:{}", token()), |_| {}),
            record("PR-5", |r| r.findings[0].category = token()),
            record("PR-6", |r| {
                r.findings[0].file = Some("../etc/passwd".to_string())
            }),
            record("PR-7", |r| {
                r.findings[0].file = Some("config/DB_PASSWORD=hunter2.env".to_string())
            }),
        ];
        let (_, reviews, skipped) = clean_pulled(Vec::new(), reviews);
        let ids: Vec<&str> = reviews.iter().map(|r| r.id.as_str()).collect();
        assert_eq!(ids, ["PR-1", "PR-7"]);
        let skipped_ids: Vec<&str> = skipped.iter().map(|s| s.id.as_str()).collect();
        assert_eq!(
            skipped_ids,
            ["`PR-2`", "`PR-3`", "(value withheld)", "`PR-5`", "`PR-6`"]
        );
        for skipped in &skipped {
            assert!(!skipped.describe().contains(&token()), "{skipped:?}");
        }
        let finding = &reviews[0].findings[0];
        assert_eq!(
            finding.message,
            "the DSN is postgres://app:[REDACTED:url-password]@db/prod"
        );
        assert_eq!(
            finding.reason.as_deref(),
            Some("SMTP_PASS=[REDACTED:assigned-secret] is a test value")
        );
        assert_eq!(reviews[1].findings[0].file, None);
    }
}
