//! The search workers, shared fairly among clients: a worker that comes free goes to the
//! waiting request whose client holds the fewest workers, the longest waiting among those,
//! instead of to whoever asked first. A client that floods the server with searches then
//! waits behind its own requests, and one that sends a search now and then gets the next
//! free worker.
//!
//! Invariant: `free` plus the workers held (the sum of `holding`) is the pool's size, and a
//! request waits only while no worker is free.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::oneshot;

/// A pool of `size` workers.
pub(crate) struct FairPool {
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    free: usize,
    /// Workers held, by client (clients holding none are not listed).
    holding: HashMap<IpAddr, usize>,
    waiting: Vec<Waiter>,
    /// The order of arrival, for ties.
    arrivals: u64,
}

struct Waiter {
    client: IpAddr,
    arrival: u64,
    wake: oneshot::Sender<Worker>,
}

/// One worker, held by a client until dropped.
pub(crate) struct Worker {
    pool: Arc<FairPool>,
    client: IpAddr,
}

impl Drop for Worker {
    fn drop(&mut self) {
        self.pool.release(self.client);
    }
}

impl FairPool {
    /// A pool of `size` workers, all free.
    pub(crate) fn new(size: usize) -> Arc<FairPool> {
        Arc::new(FairPool { state: Mutex::new(State { free: size, ..State::default() }) })
    }

    /// A worker for `client`, once one is free and no client holding fewer is waiting, or
    /// `None` after `wait`.
    pub(crate) async fn take(self: &Arc<Self>, client: IpAddr, wait: Duration) -> Option<Worker> {
        let receiver = {
            let mut state = self.state.lock().expect("not poisoned");
            if state.free > 0 {
                state.free -= 1;
                *state.holding.entry(client).or_insert(0) += 1;
                return Some(Worker { pool: Arc::clone(self), client });
            }
            let (wake, receiver) = oneshot::channel();
            state.arrivals += 1;
            let arrival = state.arrivals;
            state.waiting.push(Waiter { client, arrival, wake });
            receiver
        };
        // A worker handed over just as the wait ends is dropped with the receiver, and so
        // given back: nothing is lost either way.
        let worker = tokio::time::timeout(wait, receiver).await.ok()?.ok();
        if worker.is_none() {
            self.state.lock().expect("not poisoned").waiting.retain(|w| !w.wake.is_closed());
        }
        worker
    }

    /// Hands `client`'s worker to the fairest waiter, or frees it.
    fn release(self: &Arc<Self>, client: IpAddr) {
        let mut state = self.state.lock().expect("not poisoned");
        if let Some(held) = state.holding.get_mut(&client) {
            *held -= 1;
            if *held == 0 {
                state.holding.remove(&client);
            }
        }
        loop {
            let holding = &state.holding;
            let fairest = (0..state.waiting.len()).min_by_key(|&i| {
                (holding.get(&state.waiting[i].client).copied().unwrap_or(0), state.waiting[i].arrival)
            });
            let Some(index) = fairest else {
                state.free += 1;
                return;
            };
            let waiter = state.waiting.swap_remove(index);
            *state.holding.entry(waiter.client).or_insert(0) += 1;
            match waiter.wake.send(Worker { pool: Arc::clone(self), client: waiter.client }) {
                Ok(()) => return,
                Err(worker) => {
                    // Its request has gone: the worker goes to the next, not through `drop`,
                    // which would take the lock held here.
                    std::mem::forget(worker);
                    if let Some(held) = state.holding.get_mut(&waiter.client) {
                        *held -= 1;
                        if *held == 0 {
                            state.holding.remove(&waiter.client);
                        }
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn client(n: u8) -> IpAddr {
        IpAddr::from([10, 0, 0, n])
    }

    /// A freed worker goes to the client holding none before the one holding some, whatever
    /// the order they asked in; a waiter that gave up does not swallow a worker.
    #[tokio::test]
    async fn a_freed_worker_goes_to_the_client_holding_fewest() {
        let pool = FairPool::new(2);
        let heavy =
            [pool.take(client(1), Duration::ZERO).await.unwrap(), pool.take(client(1), Duration::ZERO).await.unwrap()];
        assert!(pool.take(client(3), Duration::from_millis(10)).await.is_none(), "no worker is free");
        let (first, second) = (Arc::clone(&pool), Arc::clone(&pool));
        let heavy_again =
            tokio::spawn(async move { first.take(client(1), Duration::from_secs(5)).await.map(|w| w.client) });
        tokio::time::sleep(Duration::from_millis(20)).await;
        let light = tokio::spawn(async move { second.take(client(2), Duration::from_secs(5)).await.map(|w| w.client) });
        tokio::time::sleep(Duration::from_millis(20)).await;
        let [one, two] = heavy;
        drop(one);
        assert_eq!(light.await.unwrap(), Some(client(2)), "the client holding none came first");
        drop(two);
        assert_eq!(heavy_again.await.unwrap(), Some(client(1)));
        let state = pool.state.lock().unwrap();
        assert_eq!((state.free, state.holding.len(), state.waiting.len()), (2, 0, 0));
    }
}
