//! Per-client rate limiting: a token bucket per client (GCRA, from `governor`), charged by
//! what a request costs, so that no client can take more than its share of a public server.
//!
//! A client is its address, an IPv6 address grouped by its /64 (one subscriber's prefix).
//! `X-Forwarded-For` and `X-Real-IP` are believed only when the connection comes from a
//! trusted proxy, and then the client is the right-most address that is not itself trusted:
//! everything left of it could have been written by the client. The buckets' memory is
//! bounded: past `--rate-clients` buckets, the least recently used one is forgotten. A client
//! that keeps asking stays among the recent ones, so however many other addresses an attacker
//! brings, an exhausted client stays limited (forgetting every bucket at once, as an earlier
//! version did, let one refill its burst at will).

use std::hash::{BuildHasher, RandomState};
use std::net::{IpAddr, Ipv6Addr, SocketAddr};
use std::num::NonZeroU32;
use std::sync::Mutex;
use std::time::Duration;

use axum::http::HeaderMap;
use governor::clock::{Clock, DefaultClock};
use governor::{DefaultDirectRateLimiter, Quota, RateLimiter};
use ipnet::IpNet;
use lru::LruCache;

use crate::error::ApiError;

/// What requests cost, in tokens. A table probe is the unit: one index and a dozen byte reads,
/// tens of microseconds.
pub mod cost {
    /// `GET /probe` answered by a table; each table position of a `POST /probe`.
    pub const TABLE_PROBE: u32 = 1;
    /// `GET /mainline` answered by a table: it probes every position of the line (up to `dtw`
    /// of them, dozens in long wins), so it costs as much as a handful of probes.
    pub const TABLE_MAINLINE: u32 = 5;
    /// Any answer by search (probe, batch entry or mainline): it holds a search worker, one of
    /// a few, for up to the whole search budget (300 ms by default), thousands of times what a
    /// table probe takes; charged so that one client cannot keep the workers to itself.
    pub const SEARCH: u32 = 10;
}

/// How clients are limited.
#[derive(Clone, Debug)]
pub struct RateSettings {
    /// Tokens a client gains per second; 0 turns rate limiting off.
    pub per_second: u32,
    /// Tokens a client can hold: the largest burst, and the dearest request it can afford.
    pub burst: u32,
    /// Clients tracked at most (memory bound).
    pub max_clients: usize,
    /// Proxies whose `X-Forwarded-For` / `X-Real-IP` are believed.
    pub trusted_proxies: Vec<IpNet>,
}

impl Default for RateSettings {
    fn default() -> RateSettings {
        RateSettings { per_second: 50, burst: 250, max_clients: 100_000, trusted_proxies: Vec::new() }
    }
}

/// The buckets of every client.
pub struct RateLimit {
    settings: RateSettings,
    quota: Option<Quota>,
    /// One bucket per client, in shards (by a hash of the client) so that requests of
    /// different clients rarely wait for one lock; each shard forgets its least recently used
    /// bucket past its share of the cap.
    shards: Vec<Mutex<LruCache<IpAddr, Bucket>>>,
    /// Clients each shard tracks at most.
    per_shard: usize,
    hasher: RandomState,
    clock: DefaultClock,
}

/// One client's tokens: the bucket, and tokens given back for work not done (spent first).
struct Bucket {
    limiter: DefaultDirectRateLimiter,
    credit: u32,
}

/// Shards of the buckets.
const SHARDS: usize = 16;

impl RateLimit {
    /// Buckets for these settings.
    pub fn new(settings: RateSettings) -> RateLimit {
        let quota = NonZeroU32::new(settings.per_second)
            .map(|rate| Quota::per_second(rate).allow_burst(NonZeroU32::new(settings.burst).unwrap_or(rate)));
        let per_shard = settings.max_clients.div_ceil(SHARDS).max(1);
        // Unbounded maps that grow as clients arrive (a bounded one would allocate its whole
        // capacity now), each held to its share of the cap by `charge`.
        let shards = (0..SHARDS).map(|_| Mutex::new(LruCache::unbounded())).collect();
        RateLimit { settings, quota, shards, per_shard, hasher: RandomState::new(), clock: DefaultClock::default() }
    }

    /// The client a request comes from: the peer, or, behind a trusted proxy, the right-most
    /// untrusted address it forwarded; IPv6 grouped by /64.
    pub fn client(&self, peer: Option<SocketAddr>, headers: &HeaderMap) -> IpAddr {
        let peer = peer.map_or(IpAddr::from([0, 0, 0, 0]), |p| canonical(p.ip()));
        let trusted = |ip: &IpAddr| self.settings.trusted_proxies.iter().any(|net| net.contains(ip));
        if !trusted(&peer) {
            return group(peer);
        }
        let forwarded: Vec<IpAddr> = headers
            .get_all("x-forwarded-for")
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(','))
            .filter_map(|hop| hop.trim().parse::<IpAddr>().ok())
            .map(canonical)
            .collect();
        let client = match forwarded.iter().rev().find(|ip| !trusted(ip)) {
            Some(ip) => *ip,
            None => forwarded
                .first()
                .copied()
                .or_else(|| {
                    let real = headers.get("x-real-ip")?.to_str().ok()?;
                    real.trim().parse::<IpAddr>().ok().map(canonical)
                })
                .unwrap_or(peer),
        };
        group(client)
    }

    /// Takes `cost` tokens from `client`'s bucket, or says when to come back.
    pub fn charge(&self, client: IpAddr, cost: u32) -> Result<(), ApiError> {
        let Some(quota) = self.quota else { return Ok(()) };
        let Some(tokens) = NonZeroU32::new(cost) else { return Ok(()) };
        let mut buckets = self.shard(client).lock().expect("not poisoned");
        // A new client's bucket is full; adding it past the cap forgets the least recent.
        if !buckets.contains(&client) && buckets.len() >= self.per_shard {
            buckets.pop_lru();
        }
        let bucket = buckets.get_or_insert_mut(client, || Bucket {
            limiter: RateLimiter::direct_with_clock(quota, self.clock.clone()),
            credit: 0,
        });
        let from_credit = bucket.credit.min(cost);
        let Some(tokens) = NonZeroU32::new(tokens.get() - from_credit) else {
            bucket.credit -= from_credit;
            return Ok(());
        };
        match bucket.limiter.check_n(tokens) {
            Ok(Ok(())) => {
                bucket.credit -= from_credit;
                Ok(())
            }
            Ok(Err(not_until)) => {
                let wait = not_until.wait_time_from(self.clock.now());
                // The whole cost must be available, not just the next token.
                let per_token = quota.replenish_interval();
                let wait = wait + per_token * (cost - 1);
                Err(ApiError::RateLimited { cost, retry_after: wait, limit: self.settings.burst, remaining: 0 })
            }
            Err(_) => Err(ApiError::RateLimited {
                cost,
                retry_after: Duration::ZERO,
                limit: self.settings.burst,
                remaining: self.settings.burst,
            }),
        }
    }

    /// Gives `tokens` back to `client` for work charged but not done (a batch's searches that
    /// its deadline left no time for); never more than a burst is held back this way.
    pub fn refund(&self, client: IpAddr, tokens: u32) {
        if self.quota.is_none() || tokens == 0 {
            return;
        }
        if let Some(bucket) = self.shard(client).lock().expect("not poisoned").get_mut(&client) {
            bucket.credit = bucket.credit.saturating_add(tokens).min(self.settings.burst);
        }
    }

    fn shard(&self, client: IpAddr) -> &Mutex<LruCache<IpAddr, Bucket>> {
        &self.shards[self.hasher.hash_one(client) as usize % SHARDS]
    }

    /// Clients tracked now.
    #[cfg(test)]
    fn clients(&self) -> usize {
        self.shards.iter().map(|s| s.lock().expect("not poisoned").len()).sum()
    }
}

/// The client an address counts as: IPv4-mapped addresses as IPv4, IPv6 by its /64.
pub(crate) fn client_group(ip: IpAddr) -> IpAddr {
    group(canonical(ip))
}

/// IPv4-mapped IPv6 addresses are their IPv4 address.
fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 => v4,
    }
}

/// One bucket per IPv4 address, one per IPv6 /64.
fn group(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => {
            let s = v6.segments();
            IpAddr::V6(Ipv6Addr::new(s[0], s[1], s[2], s[3], 0, 0, 0, 0))
        }
        v4 => v4,
    }
}

/// Reads `--trusted-proxies`: comma-separated CIDRs or single addresses.
pub fn parse_trusted_proxies(text: &str) -> Result<Vec<IpNet>, InvalidProxy> {
    text.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| {
            let net = s.parse::<IpNet>().or_else(|_| s.parse::<IpAddr>().map(IpNet::from)).map_err(|_| {
                InvalidProxy(format!("invalid trusted proxy {s:?}: expected an address or CIDR, e.g. 10.0.0.0/8"))
            })?;
            // Trusting every address lets every client name any address as its own, and so
            // escape its rate limit and its connection share.
            if net.prefix_len() == 0 {
                return Err(InvalidProxy(format!(
                    "trusted proxy {s:?} covers every address: name the proxies' own addresses or networks"
                )));
            }
            Ok(net)
        })
        .collect()
}

/// A trusted-proxy entry that is neither an address nor a network, in words.
#[derive(Debug)]
pub struct InvalidProxy(pub String);

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for &(name, value) in pairs {
            map.append(name, value.parse().unwrap());
        }
        map
    }

    #[test]
    fn a_trusted_range_that_covers_every_address_is_refused() {
        for every in ["0.0.0.0/0", "::/0", "10.0.0.1, 0.0.0.0/0"] {
            let refused = parse_trusted_proxies(every).unwrap_err();
            assert!(refused.0.contains("covers every address"), "{every}: {}", refused.0);
        }
        assert!(parse_trusted_proxies("0.0.0.0/1, 10.0.0.0/8, ::1").is_ok());
    }

    #[test]
    fn forwarded_addresses_are_believed_only_from_trusted_proxies() {
        let trusted = parse_trusted_proxies("10.0.0.0/8, 192.0.2.7").unwrap();
        let limit = RateLimit::new(RateSettings { trusted_proxies: trusted, ..RateSettings::default() });
        let proxy: SocketAddr = "10.1.2.3:5000".parse().unwrap();
        let stranger: SocketAddr = "203.0.113.9:5000".parse().unwrap();
        let spoofed = headers(&[("x-forwarded-for", "1.1.1.1, 198.51.100.4, 10.9.9.9")]);
        // From a stranger, the header is ignored.
        assert_eq!(limit.client(Some(stranger), &spoofed), "203.0.113.9".parse::<IpAddr>().unwrap());
        // From the proxy: the right-most untrusted hop, not the left-most (which the client wrote).
        assert_eq!(limit.client(Some(proxy), &spoofed), "198.51.100.4".parse::<IpAddr>().unwrap());
        let real = headers(&[("x-real-ip", "198.51.100.77")]);
        assert_eq!(limit.client(Some(proxy), &real), "198.51.100.77".parse::<IpAddr>().unwrap());
        assert_eq!(limit.client(Some(proxy), &HeaderMap::new()), "10.1.2.3".parse::<IpAddr>().unwrap());
        // IPv6 by /64; IPv4-mapped as IPv4.
        let v6: SocketAddr = "[2001:db8:1:2:aaaa:bbbb:cccc:dddd]:1".parse().unwrap();
        assert_eq!(limit.client(Some(v6), &HeaderMap::new()), "2001:db8:1:2::".parse::<IpAddr>().unwrap());
        let mapped: SocketAddr = "[::ffff:203.0.113.9]:1".parse().unwrap();
        assert_eq!(limit.client(Some(mapped), &HeaderMap::new()), "203.0.113.9".parse::<IpAddr>().unwrap());
        assert!(parse_trusted_proxies("10.0.0.0/33").is_err());
    }

    #[test]
    fn buckets_are_per_client_costed_and_bounded() {
        let limit =
            RateLimit::new(RateSettings { per_second: 1, burst: 20, max_clients: 50, ..RateSettings::default() });
        let a: IpAddr = "127.0.0.1".parse().unwrap();
        let b: IpAddr = "127.0.0.2".parse().unwrap();
        assert!(limit.charge(a, cost::SEARCH).is_ok());
        assert!(limit.charge(a, cost::SEARCH).is_ok());
        let Err(ApiError::RateLimited { retry_after, .. }) = limit.charge(a, cost::SEARCH) else {
            panic!("a third search")
        };
        assert!(retry_after >= Duration::from_secs(9), "{retry_after:?}");
        assert!(limit.charge(b, cost::SEARCH).is_ok(), "another client has its own bucket");
        assert!(matches!(limit.charge(b, 21), Err(ApiError::RateLimited { .. })), "dearer than the burst");
        for i in 0..200u32 {
            let _ = limit.charge(IpAddr::from(i.to_be_bytes()), 1);
            assert!(limit.clients() <= 50 + SHARDS);
        }
        let off = RateLimit::new(RateSettings { per_second: 0, ..RateSettings::default() });
        assert!((0..1000).all(|_| off.charge(a, cost::SEARCH).is_ok()));
    }

    #[test]
    fn an_exhausted_client_stays_limited_however_many_addresses_come_after() {
        let limit =
            RateLimit::new(RateSettings { per_second: 1, burst: 20, max_clients: 64, ..RateSettings::default() });
        let a: IpAddr = "198.51.100.1".parse().unwrap();
        while limit.charge(a, cost::SEARCH).is_ok() {}
        // Ten times the cap of other clients, each once, while the exhausted one keeps asking.
        for i in 0..640u32 {
            assert!(limit.charge(IpAddr::from((0x0A00_0000 + i).to_be_bytes()), 1).is_ok());
            assert!(limit.charge(a, cost::SEARCH).is_err(), "refilled after {i} other clients");
        }
        assert!(limit.clients() <= 64 + SHARDS);
    }

    #[test]
    fn refunded_tokens_are_spent_first_and_capped_at_a_burst() {
        let limit =
            RateLimit::new(RateSettings { per_second: 1, burst: 20, max_clients: 64, ..RateSettings::default() });
        let a: IpAddr = "198.51.100.1".parse().unwrap();
        assert!(limit.charge(a, 20).is_ok());
        assert!(limit.charge(a, cost::SEARCH).is_err());
        limit.refund(a, cost::SEARCH);
        assert!(limit.charge(a, cost::SEARCH).is_ok(), "the refund was not spendable");
        assert!(limit.charge(a, cost::SEARCH).is_err(), "a refund was spent twice");
        limit.refund(a, 1000);
        assert!(limit.charge(a, 20).is_ok());
        assert!(limit.charge(a, cost::SEARCH).is_err(), "more than a burst was held as credit");
    }
}
