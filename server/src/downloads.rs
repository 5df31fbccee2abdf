//! Table files for mirrors: `GET /files/{name}` sends a served table's verified bytes (or
//! the set's `SHA256SUMS` and `manifest.json`), whole or one byte range, and no client can
//! take more than its share of the server's bandwidth or download slots.
//!
//! - **Bytes, not requests, are rate-limited.** Each client has a token bucket counted in
//!   KiB (`--download-kib-per-second`); every chunk waits for its tokens before it is sent,
//!   so a client downloads at its rate whatever it asks for, and asking again does not help.
//! - **Slots are bounded and shared.** At most `--max-downloads` transfers run at once, and at
//!   most `--max-downloads-per-client` of one client; a client's second (or later) transfer
//!   starts only while it leaves a slot free for a client holding none, so that a few clients
//!   cannot take every slot. More are refused with `downloads-busy` (503, `Retry-After`)
//!   before any byte is read.
//! - **A slow reader gives its slot up.** Chunks go through a channel of one; a client that
//!   takes none for [`DownloadSettings::stall`] has its transfer cut, and so has one whose
//!   reading falls below [`DownloadSettings::min_kib_per_second`]: the time a transfer waits
//!   for its reader may not pass the stall time plus what its bytes take at that rate.
//! - **Only verified bytes leave.** A table is sent from the memory the server verified and
//!   serves probes from; a mapped file that changes on disk is caught after each chunk's copy
//!   (the same check as a probe's), and the transfer is cut rather than finished with bytes
//!   nobody verified. A mirror's SHA-256 check then fails and its next run resumes.

use std::collections::HashMap;
use std::net::IpAddr;
use std::ops::Range;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Body;
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};

use crate::error::ApiError;
use crate::rate_limit::{RateLimit, RateSettings};
use crate::tables::ServedTable;

/// How downloads are bounded.
#[derive(Clone, Debug)]
pub struct DownloadSettings {
    /// KiB a client may download per second (its burst is one second's worth); 0 for no limit.
    pub kib_per_second: u32,
    /// Transfers at once, all clients together.
    pub max_downloads: usize,
    /// Transfers at once of one client.
    pub max_per_client: usize,
    /// How long a transfer waits for its client to take the next chunk before it is cut.
    pub stall: Duration,
    /// The slowest reading a transfer is sent to, in KiB/s; 0 for none. The time it waits for
    /// its reader, all chunks together, may not pass [`DownloadSettings::stall`] plus the time
    /// its bytes take at this rate (the server's own pacing is not waiting for the reader).
    pub min_kib_per_second: u32,
}

impl Default for DownloadSettings {
    fn default() -> DownloadSettings {
        DownloadSettings {
            kib_per_second: 16 * 1024,
            max_downloads: 8,
            max_per_client: 2,
            stall: Duration::from_secs(30),
            min_kib_per_second: 64,
        }
    }
}

/// Bytes sent per chunk (and KiB charged per chunk: [`CHUNK`] / 1024).
const CHUNK: usize = 64 * 1024;

/// The download slots and every client's byte bucket.
pub struct Downloads {
    settings: DownloadSettings,
    bytes: RateLimit,
    running: Mutex<Running>,
}

#[derive(Default)]
struct Running {
    total: usize,
    by_client: HashMap<IpAddr, usize>,
}

/// One running transfer; dropping it frees its slot.
pub struct Slot {
    downloads: Arc<Downloads>,
    client: IpAddr,
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut running = self.downloads.running.lock().expect("not poisoned");
        running.total -= 1;
        if let Some(n) = running.by_client.get_mut(&self.client) {
            *n -= 1;
            if *n == 0 {
                running.by_client.remove(&self.client);
            }
        }
    }
}

impl Downloads {
    /// Slots and buckets for these settings; clients are grouped and tracked as the request
    /// rate limiter's `rate` says (the same bound on remembered clients).
    pub fn new(settings: DownloadSettings, rate: &RateSettings) -> Downloads {
        // The burst must hold a chunk, or a chunk could never be paid for.
        let per_second = settings.kib_per_second;
        let burst = per_second.max((CHUNK / 1024) as u32);
        let bytes = RateLimit::new(RateSettings { per_second, burst, ..rate.clone() });
        Downloads { settings, bytes, running: Mutex::new(Running::default()) }
    }

    /// A slot for `client`'s transfer, or `downloads-busy`.
    pub fn start(self: &Arc<Self>, client: IpAddr) -> Result<Slot, ApiError> {
        let mut running = self.running.lock().expect("not poisoned");
        let mine = running.by_client.get(&client).copied().unwrap_or(0);
        let free = self.settings.max_downloads.saturating_sub(running.total);
        // A further transfer of a client that has one must leave a slot for one that has none.
        let refused = if mine >= self.settings.max_per_client {
            Some(format!("you have {mine} downloads running, the most one client may"))
        } else if free == 0 {
            Some(format!("{} downloads are running, the most this server allows at once", running.total))
        } else if mine > 0 && free < 2 {
            Some(format!(
                "you have {mine} downloads running, and the last free slot is kept for a client that has none"
            ))
        } else {
            None
        };
        if let Some(reason) = refused {
            return Err(ApiError::DownloadsBusy(reason));
        }
        running.total += 1;
        *running.by_client.entry(client).or_default() += 1;
        Ok(Slot { downloads: Arc::clone(self), client })
    }

    /// Waits until `client` may send `kib` more KiB.
    async fn pay(&self, client: IpAddr, kib: u32) {
        while let Err(ApiError::RateLimited { retry_after, .. }) = self.bytes.charge(client, kib) {
            tokio::time::sleep(retry_after.max(Duration::from_millis(1))).await;
        }
    }
}

/// What a download sends.
pub enum Source {
    /// A served table's file.
    Table(Arc<ServedTable>),
    /// A small file made from the served set (`SHA256SUMS`, `manifest.json`).
    Made(Arc<Vec<u8>>),
}

impl Source {
    fn len(&self) -> u64 {
        match self {
            Source::Table(table) => table.file_size(),
            Source::Made(bytes) => bytes.len() as u64,
        }
    }

    fn copy(&self, range: Range<usize>) -> Result<Vec<u8>, ApiError> {
        match self {
            Source::Table(table) => table.copy_file_bytes(range),
            Source::Made(bytes) => Ok(bytes[range].to_vec()),
        }
    }
}

/// The response to `GET /files/{name}` for `source`: 304 when `If-None-Match` names its
/// ETag, 206 for one satisfiable `Range` (honoured only while `If-Range`, if sent, names the
/// ETag), 416 for an unsatisfiable one, else 200 with the whole file. Several ranges in one
/// request are answered with the whole file, as RFC 9110 allows.
pub fn respond(
    downloads: &Arc<Downloads>,
    client: IpAddr,
    headers: &HeaderMap,
    source: Source,
    sha256: &str,
    content_type: &'static str,
) -> Result<Response, ApiError> {
    let etag = HeaderValue::from_str(&format!("\"{sha256}\"")).expect("hex");
    if crate::conditional::etag_matches(headers, &etag) {
        return Ok((StatusCode::NOT_MODIFIED, [(header::ETAG, etag)]).into_response());
    }
    let len = source.len();
    let if_range_holds = headers.get(header::IF_RANGE).is_none_or(|v| v == etag);
    let range = match headers.get(header::RANGE) {
        Some(value) if if_range_holds => match parse_range(value.to_str().unwrap_or(""), len) {
            Ranged::One(range) => Some(range),
            Ranged::Whole => None,
            Ranged::Unsatisfiable => return Err(ApiError::RangeNotSatisfiable(len)),
        },
        _ => None,
    };
    let slot = downloads.start(client)?;
    let (status, sent) = match &range {
        Some(range) => (StatusCode::PARTIAL_CONTENT, range.clone()),
        None => (StatusCode::OK, 0..len),
    };
    let mut response = Response::new(stream(downloads, client, source, sent.clone(), slot));
    *response.status_mut() = status;
    let h = response.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    h.insert(header::CONTENT_LENGTH, HeaderValue::from(sent.end - sent.start));
    h.insert(header::ACCEPT_RANGES, HeaderValue::from_static("bytes"));
    h.insert(header::ETAG, etag);
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    if range.is_some() {
        let value = format!("bytes {}-{}/{len}", sent.start, sent.end - 1);
        h.insert(header::CONTENT_RANGE, HeaderValue::from_str(&value).expect("ASCII"));
    }
    Ok(response)
}

/// The body: a task copies chunk after chunk, each paid for in the client's byte bucket,
/// into a channel of one; it ends when the range is sent, the client stalls past the limit,
/// the connection goes, or the table's file changed (the transfer is then cut short).
fn stream(downloads: &Arc<Downloads>, client: IpAddr, source: Source, range: Range<u64>, slot: Slot) -> Body {
    let (sender, receiver) = tokio::sync::mpsc::channel::<Result<Vec<u8>, std::io::Error>>(1);
    let downloads = Arc::clone(downloads);
    tokio::spawn(async move {
        let _slot = slot;
        let settings = &downloads.settings;
        let mut at = range.start as usize;
        // The time spent waiting for the reader so far, and what its bytes allow.
        let mut waited = Duration::ZERO;
        let allowed = |sent: usize| match settings.min_kib_per_second {
            0 => Duration::MAX,
            rate => settings.stall + Duration::from_secs_f64(sent as f64 / 1024.0 / f64::from(rate)),
        };
        while at < range.end as usize {
            let end = (at + CHUNK).min(range.end as usize);
            downloads.pay(client, (end - at).div_ceil(1024) as u32).await;
            let chunk = source.copy(at..end).map_err(|e| std::io::Error::other(e.problem().detail));
            let failed = chunk.is_err();
            if let Err(e) = &chunk {
                tracing::warn!(%client, error = %e, "download cut: its table changed on disk");
            }
            let left = allowed(at - range.start as usize).saturating_sub(waited);
            let started = std::time::Instant::now();
            let sent = sender.send_timeout(chunk, settings.stall.min(left)).await;
            waited += started.elapsed();
            if sent.is_err() {
                if left < settings.stall {
                    tracing::debug!(%client, "download cut: its reader took less than the minimum rate");
                }
                return;
            }
            if failed {
                return;
            }
            at = end;
        }
    });
    let chunks = futures_util::stream::unfold(receiver, |mut receiver| async move {
        receiver.recv().await.map(|chunk| (chunk, receiver))
    });
    Body::from_stream(chunks)
}

/// What a `Range` header asks of a file of `len` bytes.
#[derive(Debug, PartialEq, Eq)]
enum Ranged {
    /// One range, clipped to the file.
    One(Range<u64>),
    /// The whole file: several ranges, or a header this server does not read.
    Whole,
    /// A range wholly past the end (416).
    Unsatisfiable,
}

/// Reads `bytes=a-b`, `bytes=a-` and `bytes=-n` (RFC 9110 §14.1.2).
fn parse_range(text: &str, len: u64) -> Ranged {
    let Some(spec) = text.trim().strip_prefix("bytes=") else { return Ranged::Whole };
    if spec.contains(',') {
        return Ranged::Whole;
    }
    let Some((first, last)) = spec.trim().split_once('-') else { return Ranged::Whole };
    let number = |s: &str| if s.is_empty() { Ok(None) } else { s.parse::<u64>().map(Some) };
    let (Ok(first), Ok(last)) = (number(first.trim()), number(last.trim())) else { return Ranged::Whole };
    match (first, last) {
        (Some(first), last) => {
            if last.is_some_and(|last| last < first) {
                Ranged::Whole
            } else if first >= len {
                Ranged::Unsatisfiable
            } else {
                Ranged::One(first..last.map_or(len, |last| last.saturating_add(1).min(len)))
            }
        }
        (None, Some(0)) => Ranged::Unsatisfiable,
        (None, Some(_)) if len == 0 => Ranged::Unsatisfiable,
        (None, Some(suffix)) => Ranged::One(len.saturating_sub(suffix)..len),
        (None, None) => Ranged::Whole,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_are_read_as_rfc_9110_says() {
        assert_eq!(parse_range("bytes=0-9", 100), Ranged::One(0..10));
        assert_eq!(parse_range("bytes=90-", 100), Ranged::One(90..100));
        assert_eq!(parse_range("bytes=90-500", 100), Ranged::One(90..100));
        assert_eq!(parse_range("bytes=-10", 100), Ranged::One(90..100));
        assert_eq!(parse_range("bytes=-500", 100), Ranged::One(0..100));
        assert_eq!(parse_range("bytes=100-", 100), Ranged::Unsatisfiable);
        assert_eq!(parse_range("bytes=-0", 100), Ranged::Unsatisfiable);
        assert_eq!(parse_range("bytes=0-1,5-6", 100), Ranged::Whole);
        assert_eq!(parse_range("bytes=9-3", 100), Ranged::Whole);
        assert_eq!(parse_range("items=0-9", 100), Ranged::Whole);
        assert_eq!(parse_range("bytes=x-9", 100), Ranged::Whole);
    }

    #[test]
    fn slots_are_bounded_per_client_and_in_all() {
        let settings = DownloadSettings { max_downloads: 3, max_per_client: 2, ..DownloadSettings::default() };
        let downloads = Arc::new(Downloads::new(settings, &RateSettings::default()));
        let a: IpAddr = "192.0.2.1".parse().unwrap();
        let b: IpAddr = "192.0.2.2".parse().unwrap();
        let c: IpAddr = "192.0.2.3".parse().unwrap();
        let first = downloads.start(a).unwrap();
        let _second = downloads.start(a).unwrap();
        assert!(matches!(downloads.start(a), Err(ApiError::DownloadsBusy(_))), "a third of one client");
        let _third = downloads.start(b).unwrap();
        assert!(matches!(downloads.start(c), Err(ApiError::DownloadsBusy(_))), "a fourth in all");
        drop(first);
        assert!(downloads.start(c).is_ok(), "a finished transfer frees its slot");
    }

    #[test]
    fn a_further_slot_leaves_one_for_a_client_holding_none() {
        let settings = DownloadSettings { max_downloads: 4, max_per_client: 2, ..DownloadSettings::default() };
        let downloads = Arc::new(Downloads::new(settings, &RateSettings::default()));
        let [a, b, c]: [IpAddr; 3] = ["192.0.2.1", "192.0.2.2", "192.0.2.3"].map(|ip| ip.parse().unwrap());
        let _a1 = downloads.start(a).unwrap();
        let _b1 = downloads.start(b).unwrap();
        let _a2 = downloads.start(a).unwrap();
        // One slot left: not for a client that has one, for one that has none.
        assert!(matches!(downloads.start(b), Err(ApiError::DownloadsBusy(_))), "b's second took the last slot");
        let _c1 = downloads.start(c).unwrap();
        assert!(matches!(downloads.start(c), Err(ApiError::DownloadsBusy(_))), "every slot is taken");
    }
}
