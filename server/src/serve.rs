//! Serving connections as a public server must: a cap on open connections, and a smaller one
//! per client address (IPv6 by /64; trusted proxies exempt), so that one client cannot hold
//! every slot (those beyond either cap are closed at once, the refusals logged once a second
//! with their count; but when every slot is taken, an idle connection of the client holding
//! the most is closed for a newcomer from a client that holds fewer); a bounded number of requests per keep-alive connection; a deadline for
//! a request's headers that also closes idle keep-alive connections; and graceful shutdown
//! with a deadline, so that no silent client holds a socket, a file descriptor or the
//! shutdown for long.
//!
//! hyper measures the header deadline from the moment a connection starts waiting for a
//! request, whether it is new or has just answered one: one timer covers slow senders and
//! idle keep-alive connections alike.

use std::collections::HashMap;
use std::future::Future;
use std::net::IpAddr;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::extract::ConnectInfo;
use axum::Router;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use ipnet::IpNet;
use tokio::net::TcpListener;
use tokio::sync::{watch, Semaphore};
use tower::ServiceExt;

use crate::rate_limit::client_group;

/// How connections are bounded.
#[derive(Clone, Debug)]
pub struct ConnectionLimits {
    /// Time a client has to send a request's headers, from connecting or from the end of its
    /// previous response: also the idle keep-alive timeout.
    pub header_timeout: Duration,
    /// Connections open at once; more are closed as soon as they are accepted.
    pub max_connections: usize,
    /// Connections one client address (IPv6: one /64) may hold open at once.
    pub per_client: usize,
    /// Requests served on one keep-alive connection; the last answer closes it.
    pub max_requests: u32,
    /// Peers exempt from the per-client cap: proxies that carry many clients' connections.
    pub trusted: Vec<IpNet>,
    /// Time connections get to finish after a shutdown signal before they are dropped.
    pub shutdown_grace: Duration,
}

impl Default for ConnectionLimits {
    fn default() -> ConnectionLimits {
        ConnectionLimits {
            header_timeout: Duration::from_secs(10),
            max_connections: 4096,
            per_client: 64,
            max_requests: 1000,
            trusted: Vec::new(),
            shutdown_grace: Duration::from_secs(10),
        }
    }
}

/// Serves `router` on `listener` until `shutdown` resolves, then lets connections finish
/// for at most the grace period.
pub async fn serve(
    listener: TcpListener,
    router: Router,
    limits: ConnectionLimits,
    shutdown: impl Future<Output = ()>,
) {
    let open = Arc::new(Semaphore::new(limits.max_connections));
    let per_client: Holders = Arc::default();
    let refusals = Refusals::new();
    let (stop, stopping) = watch::channel(false);
    tokio::pin!(shutdown);
    loop {
        let (stream, peer) = tokio::select! {
            () = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(error) => {
                    // Out of file descriptors, or a connection reset before it was accepted:
                    // wait a little rather than spin.
                    tracing::warn!(%error, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        let client = client_group(peer.ip());
        let permit = match Arc::clone(&open).try_acquire_owned() {
            Ok(permit) => permit,
            // Full: an idle connection of the client holding the most is closed for the
            // newcomer, if that client holds more than the newcomer's does.
            Err(_) => match shed_for(&per_client, client) {
                true => match tokio::time::timeout(SHED_WAIT, Arc::clone(&open).acquire_owned()).await {
                    Ok(Ok(permit)) => permit,
                    _ => {
                        refusals.note("too many open");
                        continue;
                    }
                },
                false => {
                    refusals.note("too many open");
                    drop(stream);
                    continue;
                }
            },
        };
        let exempt = limits.trusted.iter().any(|net| net.contains(&peer.ip()));
        let Some(held) = (!exempt).then(|| PerClient::enter(&per_client, client, limits.per_client)) else {
            // A trusted proxy: only the global cap applies.
            serve_connection(stream, peer, router.clone(), &limits, stopping.clone(), (permit, None));
            continue;
        };
        let Some(held) = held else {
            refusals.note("too many from one client");
            drop(stream);
            continue;
        };
        serve_connection(stream, peer, router.clone(), &limits, stopping.clone(), (permit, Some(held)));
    }
    drop(listener);
    let _ = stop.send(true);
    // Every connection returns its permit when it ends: wait for all, or the deadline.
    let all = u32::try_from(limits.max_connections).unwrap_or(u32::MAX);
    if tokio::time::timeout(limits.shutdown_grace, open.acquire_many(all)).await.is_err() {
        tracing::warn!(grace = ?limits.shutdown_grace, "connections still open at the shutdown deadline: dropped");
    }
}

/// Serves one accepted connection on a task of its own; `held` (its slots) is returned when
/// it ends.
fn serve_connection(
    stream: tokio::net::TcpStream,
    peer: std::net::SocketAddr,
    router: Router,
    limits: &ConnectionLimits,
    mut stopping: watch::Receiver<bool>,
    held: (tokio::sync::OwnedSemaphorePermit, Option<PerClient>),
) {
    // Answers are small and complete: send them at once rather than wait on Nagle.
    if let Err(error) = stream.set_nodelay(true) {
        tracing::warn!(%error, "cannot set TCP_NODELAY");
    }
    let header_timeout = limits.header_timeout;
    let max_requests = limits.max_requests;
    let served = Arc::new(AtomicU32::new(0));
    let handle = held.1.as_ref().map_or_else(|| Arc::new(Handle::default()), |held| Arc::clone(&held.handle));
    tokio::spawn(async move {
        let busy = Arc::clone(&handle);
        let service = hyper::service::service_fn(move |mut request: hyper::Request<Incoming>| {
            request.extensions_mut().insert(ConnectInfo(peer));
            let last = served.fetch_add(1, Ordering::Relaxed) + 1 >= max_requests;
            let answer = router.clone().oneshot(request);
            let busy = Busy::enter(&busy);
            async move {
                let response = answer.await;
                drop(busy);
                let mut response = response?;
                if last {
                    // hyper closes the connection after an answer that says so.
                    response
                        .headers_mut()
                        .insert(hyper::header::CONNECTION, hyper::header::HeaderValue::from_static("close"));
                }
                Ok::<_, std::convert::Infallible>(response)
            }
        });
        let mut builder = hyper::server::conn::http1::Builder::new();
        builder.timer(TokioTimer::new()).header_read_timeout(header_timeout);
        let connection = builder.serve_connection(TokioIo::new(stream), service);
        tokio::pin!(connection);
        tokio::select! {
            _ = connection.as_mut() => {}
            _ = stopping.changed() => {
                connection.as_mut().graceful_shutdown();
                let _ = connection.as_mut().await;
            }
            () = handle.shed.notified() => {
                // Idle when chosen: closed at once (an answer begun since is finished first).
                connection.as_mut().graceful_shutdown();
                let _ = connection.as_mut().await;
            }
        }
        drop(held);
    });
}

/// Open connections by client; an entry lives while its client holds one.
type Holders = Arc<Mutex<HashMap<IpAddr, Vec<Arc<Handle>>>>>;

/// What the accept loop knows of an open connection: whether it is answering a request, and
/// the signal that closes it.
#[derive(Default)]
struct Handle {
    /// Requests being answered (HTTP/1.1: one at a time, but counted to be safe).
    busy: AtomicU32,
    shed: tokio::sync::Notify,
}

/// A request being answered on a connection.
struct Busy(Arc<Handle>);

impl Busy {
    fn enter(handle: &Arc<Handle>) -> Busy {
        handle.busy.fetch_add(1, Ordering::Relaxed);
        Busy(Arc::clone(handle))
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        self.0.busy.fetch_sub(1, Ordering::Relaxed);
    }
}

/// How long a newcomer waits for the slot of a connection closed for it.
const SHED_WAIT: Duration = Duration::from_millis(200);

/// With every slot taken: signals an idle connection of the client that holds the most to
/// close, if that client holds more than `newcomer`'s does. Whether one was signalled.
fn shed_for(holders: &Holders, newcomer: IpAddr) -> bool {
    let open = holders.lock().expect("not poisoned");
    let own = open.get(&newcomer).map_or(0, Vec::len);
    let Some((_, heaviest)) = open.iter().max_by_key(|(_, handles)| handles.len()) else { return false };
    if heaviest.len() <= own + 1 {
        return false;
    }
    match heaviest.iter().find(|handle| handle.busy.load(Ordering::Relaxed) == 0) {
        Some(idle) => {
            idle.shed.notify_one();
            true
        }
        None => false,
    }
}

/// One connection counted to its client, uncounted when dropped.
struct PerClient {
    holders: Holders,
    client: IpAddr,
    handle: Arc<Handle>,
}

impl PerClient {
    /// Counts a connection to `client`, unless it holds `cap` already.
    fn enter(holders: &Holders, client: IpAddr, cap: usize) -> Option<PerClient> {
        let mut open = holders.lock().expect("not poisoned");
        let handles = open.entry(client).or_default();
        if handles.len() >= cap {
            return None;
        }
        let handle = Arc::new(Handle::default());
        handles.push(Arc::clone(&handle));
        Some(PerClient { holders: Arc::clone(holders), client, handle })
    }
}

impl Drop for PerClient {
    fn drop(&mut self) {
        let mut open = self.holders.lock().expect("not poisoned");
        if let Some(handles) = open.get_mut(&self.client) {
            handles.retain(|handle| !Arc::ptr_eq(handle, &self.handle));
            if handles.is_empty() {
                open.remove(&self.client);
            }
        }
    }
}

/// Refused connections, logged at most once a second with how many there were: a flood of
/// refusals must not become a flood of log lines.
struct Refusals {
    since_logged: AtomicU64,
    logged: Mutex<Instant>,
}

impl Refusals {
    fn new() -> Refusals {
        Refusals { since_logged: AtomicU64::new(0), logged: Mutex::new(Instant::now() - Duration::from_secs(1)) }
    }

    fn note(&self, reason: &'static str) {
        let count = self.since_logged.fetch_add(1, Ordering::Relaxed) + 1;
        let mut logged = self.logged.lock().expect("not poisoned");
        if logged.elapsed() >= Duration::from_secs(1) {
            *logged = Instant::now();
            self.since_logged.fetch_sub(count, Ordering::Relaxed);
            tracing::warn!(reason, refused = count, "connections refused since the last report");
        }
    }
}
