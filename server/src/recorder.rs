//! The proof store's one writer for what searches establish: a search hands its facts over
//! and its worker is free at once, instead of waiting for the commit's fsync; the writer
//! commits whatever has gathered meanwhile in one transaction. Other writes a search asks for
//! (queueing positions for the background) are handed over the same way, and run in order.
//! The backlog is bounded, so a slow disk slows the searches down rather than filling the
//! memory.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{sync_channel, SyncSender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use shogi4_proofs::{Origin, ProofStore};
use shogi4_search::Outcome;

/// Facts of one search, by position key.
type Facts = Vec<(u128, Outcome)>;

/// A write other than facts, run by the writer on the store.
pub(crate) type Job = Box<dyn FnOnce(&ProofStore) + Send>;

/// What the writer is handed.
enum Work {
    Facts(Facts),
    Job(Job),
}

/// Searches' hand-overs waiting for the writer at most; past it, a search waits.
const BACKLOG: usize = 64;

/// Facts committed at most in one transaction (a few searches' worth).
const MOST_PER_COMMIT: usize = 4096;

/// Hands facts to the writer thread, or records them itself where there is none (it could
/// not be started, or it has finished).
pub(crate) struct Recorder {
    store: Arc<ProofStore>,
    sender: Mutex<Option<SyncSender<Work>>>,
    writer: Mutex<Option<JoinHandle<()>>>,
    health: Arc<StoreHealth>,
}

impl Recorder {
    /// A recorder into `store`, its writer started.
    pub(crate) fn start(store: Arc<ProofStore>) -> Recorder {
        let health = Arc::new(StoreHealth::default());
        let (sender, receiver) = sync_channel::<Work>(BACKLOG);
        let (writing_store, writing_health) = (Arc::clone(&store), Arc::clone(&health));
        let writer = std::thread::Builder::new().name("proof-store-writer".into()).spawn(move || {
            // Ends when every sender is gone and the backlog is done, in the order handed over.
            let mut next = receiver.recv().ok();
            while let Some(work) = next.take() {
                match work {
                    Work::Job(job) => job(&writing_store),
                    Work::Facts(mut facts) => {
                        while facts.len() < MOST_PER_COMMIT {
                            match receiver.try_recv() {
                                Ok(Work::Facts(more)) => facts.extend(more),
                                Ok(job) => {
                                    next = Some(job);
                                    break;
                                }
                                Err(_) => break,
                            }
                        }
                        commit(&writing_store, &writing_health, &facts);
                    }
                }
                if next.is_none() {
                    next = receiver.recv().ok();
                }
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
        if let Some(Work::Facts(facts)) = self.hand_over(Work::Facts(facts)) {
            commit(&self.store, &self.health, &facts);
        }
    }

    /// Runs `job` on the store after what was handed over before it.
    pub(crate) fn later(&self, job: Job) {
        if let Some(Work::Job(job)) = self.hand_over(Work::Job(job)) {
            job(&self.store);
        }
    }

    /// Hands `work` to the writer; gives it back where there is none.
    fn hand_over(&self, work: Work) -> Option<Work> {
        // A clone, so that no lock is held while the backlog is full.
        let sender = self.sender.lock().expect("not poisoned").clone();
        match sender {
            None => Some(work),
            Some(sender) => sender.send(work).err().map(|returned| returned.0),
        }
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
    let (conflicts, overruled) = (store.conflicts(), store.overruled());
    match store.record(facts, Origin::Search) {
        Ok(_) => health.fine(),
        Err(error) => health.failed(&error, "proof store unwritable; results are kept in memory only"),
    }
    let (conflicts, overruled) = (store.conflicts() - conflicts, store.overruled() - overruled);
    if conflicts > 0 {
        metrics::counter!("proof_conflicts_total", "at" => "record").increment(conflicts);
        metrics::counter!("proof_conflicts_overruled_total").increment(overruled);
        tracing::warn!(
            conflicts,
            overruled,
            "search results contradict the proof store's records: those of a lesser origin (an import, the \
             published export) replaced, the others kept"
        );
    }
}

/// Whether the proof store's last operation failed.
#[derive(Default)]
pub(crate) struct StoreHealth(AtomicBool);

impl StoreHealth {
    pub(crate) fn failed(&self, error: &shogi4_proofs::StoreError, what: &str) {
        if !self.0.swap(true, Ordering::Relaxed) {
            tracing::warn!(%error, "{what} (logged once until it recovers)");
        }
    }

    pub(crate) fn fine(&self) {
        if self.0.swap(false, Ordering::Relaxed) {
            tracing::info!("proof store working again");
        }
    }
}
