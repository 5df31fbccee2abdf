//! The work queue kept beside the facts: positions whose answers were unknown or only bounded
//! when they were served, waiting for a background search to go further.
//!
//! Two tables in the same database, so an entry is queued, taken and its result recorded with
//! the same atomic commits as the facts: `queue_v1` orders the work (lowest level first, then
//! first come), `queued_v1` finds an entry by position key, so that a position is queued once.
//! The level is how often the position was searched in the background already; each level
//! doubles the budget, so fresh questions come first and hard ones get longer and longer
//! searches. The number of entries is capped by the caller's `capacity`: past it, nothing is
//! added (the queue is full, never grown).

use redb::{ReadableTable, ReadableTableMetadata, TableDefinition};

use crate::{guarded, ProofStore, StoreError};

/// (level, sequence number) → (position key, SFEN, owner).
const QUEUE: TableDefinition<(u32, u64), (u128, &str, u128)> = TableDefinition::new("queue_v1");
/// Position key → (level, sequence number) of its entry.
const QUEUED: TableDefinition<u128, (u32, u64)> = TableDefinition::new("queued_v1");
/// The next sequence number, under [`NEXT`].
const COUNTERS: TableDefinition<&str, u64> = TableDefinition::new("queue_counters_v1");
const NEXT: &str = "next";

/// One queued position.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Queued {
    /// Its key (`Position::key`).
    pub key: u128,
    /// Its SFEN (keys cannot be turned back into positions).
    pub sfen: String,
    /// How often it was searched in the background already.
    pub level: u32,
    /// Whose query queued it (the caller's own client number, so that it can count each
    /// client's entries).
    pub owner: u128,
}

impl ProofStore {
    /// Queues positions (key, SFEN) at `level` for `owner`, those not queued already, while
    /// the queue holds fewer than `capacity` entries; one atomic commit. Returns how many were
    /// added.
    pub fn enqueue(
        &self,
        entries: &[(u128, &str)],
        level: u32,
        owner: u128,
        capacity: u64,
    ) -> Result<usize, StoreError> {
        if self.fullness() != crate::Fullness::Room {
            return Ok(0);
        }
        guarded(&self.path, || {
            let write = self.writer()?;
            let mut added = 0;
            {
                let mut queue = write.open_table(QUEUE).map_err(|e| self.error(e))?;
                let mut queued = write.open_table(QUEUED).map_err(|e| self.error(e))?;
                let mut counters = write.open_table(COUNTERS).map_err(|e| self.error(e))?;
                let mut length = queued.len().map_err(|e| self.error(e))?;
                let mut next = counters.get(NEXT).map_err(|e| self.error(e))?.map_or(0, |n| n.value());
                for &(key, sfen) in entries {
                    if length >= capacity {
                        break;
                    }
                    if queued.get(key).map_err(|e| self.error(e))?.is_some() {
                        continue;
                    }
                    queue.insert((level, next), (key, sfen, owner)).map_err(|e| self.error(e))?;
                    queued.insert(key, (level, next)).map_err(|e| self.error(e))?;
                    next += 1;
                    length += 1;
                    added += 1;
                }
                counters.insert(NEXT, next).map_err(|e| self.error(e))?;
            }
            self.commit(write)?;
            Ok(added)
        })
    }

    /// Takes the first entry (lowest level, then first queued) off the queue.
    pub fn take_queued(&self) -> Result<Option<Queued>, StoreError> {
        guarded(&self.path, || {
            let write = self.writer()?;
            let taken = {
                let mut queue = write.open_table(QUEUE).map_err(|e| self.error(e))?;
                let mut queued = write.open_table(QUEUED).map_err(|e| self.error(e))?;
                let first = queue.pop_first().map_err(|e| self.error(e))?;
                match first {
                    Some((place, entry)) => {
                        let ((level, _), (key, sfen, owner)) = (place.value(), entry.value());
                        let sfen = sfen.to_string();
                        queued.remove(key).map_err(|e| self.error(e))?;
                        Some(Queued { key, sfen, level, owner })
                    }
                    None => None,
                }
            };
            // An empty queue changes nothing: no commit (an idle server asks several times a
            // second, and each commit is a write and a sync of the file).
            if taken.is_none() {
                write.abort().map_err(|e| self.error(e))?;
                return Ok(None);
            }
            self.commit(write)?;
            Ok(taken)
        })
    }

    /// Entries waiting, counted by owner: what a server that restarts over this store counts
    /// against each client's share (one pass over the queue).
    pub fn queued_by_owner(&self) -> Result<std::collections::HashMap<u128, u32>, StoreError> {
        let read = self.reader()?;
        let queue = read.open_table(QUEUE).map_err(|e| self.error(e))?;
        let mut counts = std::collections::HashMap::new();
        for entry in queue.iter().map_err(|e| self.error(e))? {
            let (_, entry) = entry.map_err(|e| self.error(e))?;
            let (_, _, owner) = entry.value();
            *counts.entry(owner).or_insert(0) += 1;
        }
        Ok(counts)
    }

    /// Entries waiting.
    pub fn queue_len(&self) -> Result<u64, StoreError> {
        let read = self.reader()?;
        read.open_table(QUEUED).map_err(|e| self.error(e))?.len().map_err(|e| self.error(e))
    }

    /// Creates the queue's tables if missing, so that readers never see "no such table".
    pub(crate) fn create_queue(&self) -> Result<(), StoreError> {
        let write = self.writer()?;
        write.open_table(QUEUE).map_err(|e| self.error(e))?;
        write.open_table(QUEUED).map_err(|e| self.error(e))?;
        write.open_table(COUNTERS).map_err(|e| self.error(e))?;
        self.commit(write)
    }
}
