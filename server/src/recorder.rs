//! The proof store's one writer for what searches establish: a search hands its facts over
//! and its worker is free at once, instead of waiting for the commit's fsync; the writer
//! commits whatever has gathered meanwhile in one transaction. The backlog is bounded, so a
//! slow disk slows the searches down rather than filling the memory.

use std::sync::mpsc::{sync_channel, SyncSender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use shogi4_proofs::ProofStore;
use shogi4_search::Outcome;

use crate::search::StoreHealth;

/// Facts of one search, by position key.
type Facts = Vec<(u128, Outcome)>;

/// Searches' hand-overs waiting for the writer at most; past it, a search waits.
const BACKLOG: usize = 64;

/// Facts committed at most in one transaction (a few searches' worth).
const MOST_PER_COMMIT: usize = 4096;

/// Hands facts to the writer thread, or records them itself where there is none (it could
/// not be started, or it has finished).
pub(crate) struct Recorder {
    store: Arc<ProofStore>,
    sender: Mutex<Option<SyncSender<Facts>>>,
    writer: Mutex<Option<JoinHandle<()>>>,
    health: Arc<StoreHealth>,
}

impl Recorder {
    /// A recorder into `store`, its writer started.
    pub(crate) fn start(store: Arc<ProofStore>) -> Recorder {
        let health = Arc::new(StoreHealth::default());
        let (sender, receiver) = sync_channel::<Facts>(BACKLOG);
        let (writing_store, writing_health) = (Arc::clone(&store), Arc::clone(&health));
        let writer = std::thread::Builder::new().name("proof-store-writer".into()).spawn(move || {
            // Ends when every sender is gone and the backlog is committed.
            while let Ok(mut facts) = receiver.recv() {
                while facts.len() < MOST_PER_COMMIT {
                    let Ok(more) = receiver.try_recv() else { break };
                    facts.extend(more);
                }
                commit(&writing_store, &writing_health, &facts);
            }
        });
        let (sender, writer) = match writer {
            Ok(writer) => (Some(sender), Some(writer)),
            Err(error) => {
                tracing::warn!(%error, "no proof-store writer thread: searches commit their own results");
                (None, None)
            }
        };
        Recorder { store, sender: Mutex::new(sender), writer: Mutex::new(writer), health }
    }

    /// Keeps what a search established.
    pub(crate) fn keep(&self, facts: Facts) {
        // A clone, so that no lock is held while the backlog is full.
        let sender = self.sender.lock().expect("not poisoned").clone();
        let facts = match sender {
            None => facts,
            Some(sender) => match sender.send(facts) {
                Ok(()) => return,
                Err(returned) => returned.0,
            },
        };
        commit(&self.store, &self.health, &facts);
    }

    /// Commits the backlog and ends the writer; later facts are committed by their searches.
    pub(crate) fn finish(&self) {
        drop(self.sender.lock().expect("not poisoned").take());
        if let Some(writer) = self.writer.lock().expect("not poisoned").take() {
            let _ = writer.join();
        }
    }
}

impl Drop for Recorder {
    /// The store is closed only once the writer has committed all and let go of it.
    fn drop(&mut self) {
        self.finish();
    }
}

fn commit(store: &ProofStore, health: &StoreHealth, facts: &[(u128, Outcome)]) {
    match store.record(facts) {
        Ok(_) => health.fine(),
        Err(error) => health.failed(&error, "proof store unwritable; results are kept in memory only"),
    }
}
