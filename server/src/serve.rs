//! Serving connections as a public server must: a cap on open connections (those beyond it
//! are closed at once), a deadline for a request's headers that also closes idle keep-alive
//! connections, and graceful shutdown with a deadline, so that no silent client holds a
//! socket, a file descriptor or the shutdown for long.
//!
//! hyper measures the header deadline from the moment a connection starts waiting for a
//! request, whether it is new or has just answered one: one timer covers slow senders and
//! idle keep-alive connections alike.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::ConnectInfo;
use axum::Router;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::TcpListener;
use tokio::sync::{watch, Semaphore};
use tower::ServiceExt;

/// How connections are bounded.
#[derive(Clone, Debug)]
pub struct ConnectionLimits {
    /// Time a client has to send a request's headers, from connecting or from the end of its
    /// previous response: also the idle keep-alive timeout.
    pub header_timeout: Duration,
    /// Connections open at once; more are closed as soon as they are accepted.
    pub max_connections: usize,
    /// Time connections get to finish after a shutdown signal before they are dropped.
    pub shutdown_grace: Duration,
}

impl Default for ConnectionLimits {
    fn default() -> ConnectionLimits {
        ConnectionLimits {
            header_timeout: Duration::from_secs(10),
            max_connections: 4096,
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
        let Ok(permit) = Arc::clone(&open).try_acquire_owned() else {
            tracing::warn!(%peer, max = limits.max_connections, "connection refused: too many open");
            drop(stream);
            continue;
        };
        // Answers are small and complete: send them at once rather than wait on Nagle.
        if let Err(error) = stream.set_nodelay(true) {
            tracing::warn!(%error, "cannot set TCP_NODELAY");
        }
        let router = router.clone();
        let mut stopping = stopping.clone();
        let header_timeout = limits.header_timeout;
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |mut request: hyper::Request<Incoming>| {
                request.extensions_mut().insert(ConnectInfo(peer));
                router.clone().oneshot(request)
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
            }
            drop(permit);
        });
    }
    drop(listener);
    let _ = stop.send(true);
    // Every connection returns its permit when it ends: wait for all, or the deadline.
    let all = u32::try_from(limits.max_connections).unwrap_or(u32::MAX);
    if tokio::time::timeout(limits.shutdown_grace, open.acquire_many(all)).await.is_err() {
        tracing::warn!(grace = ?limits.shutdown_grace, "connections still open at the shutdown deadline: dropped");
    }
}
