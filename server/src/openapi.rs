//! The OpenAPI 3.1 description, generated from the handlers and response types.

use utoipa::OpenApi;

use shogi4_api::{
    BatchEntry, BatchRequest, BatchResponse, Category, Estimate, FileEntry, FilesResponse, LongestWin, MainlineMove,
    MainlineResponse, Manifest, ManifestEntry, MoveInfo, ProbeResponse, Problem, ProblemType, SearchStats, Side,
    Source, TableInfo, TablesResponse,
};

use crate::model::{Health, RejectedTable};
use crate::routes;

#[derive(OpenApi)]
#[openapi(
    info(
        title = "Shogi4 tablebase",
        description = "Solved values of Shogi4 (4×4 drop shogi) positions: from the solved tables of closed games, \
            and by proof search for every other legal position, the real game included.\n\n\
            **Conventions.** `category` and `dtw` of a position are for its **side to move**. `dtw` (distance to \
            win) counts plies until a royal is captured under perfect play: the winner makes it as short as \
            possible, the loser as long as possible. A win always has an odd `dtw` (1 = the royal can be captured \
            now), a loss an even one (0 = no legal move: lost). Draws have `dtw: null`. There are no signs: the \
            category says who wins.\n\n\
            Each move is valued for the **player making it**: `category: win` means the move keeps a forced win, \
            and its `dtw` counts plies from the probed position, this move included, so the best move's `dtw` \
            equals the position's.\n\n\
            **Where answers come from.** `source: table` means the position's closed game is solved: every value \
            is exact, draws included. Every position of a real game holds all ten pieces, a game no table holds, \
            so it gets `source: search`: a proof search within a budget (`search` says how many positions it \
            examined and how long it took), or `source: store` when an earlier search (in the background, by \
            `shogi4 prove`, or from an imported file) had already proven the value. A search's `win` or `loss` is proven, as sure as a table's. Its \
            `dtw` is exact where the search established it (every shorter distance was searched to the end); \
            otherwise `dtw` is null and `dtw_at_least` and `dtw_at_most` bound the distance. Otherwise the answer is `category: \
            unknown` with `no_result_within: D`: neither side can force the royal capture within D plies; the \
            game may be longer or drawn. A search's `draw` is proven as well: every attempt of either side to \
            force the capture was refuted, each line ending in that side's defeat or in a repetition (rare in \
            real games). Each move carries its own answer the same \
            way. `GET /mainline` gives the line for proven search results (for a bounded one a forced line, \
            not necessarily the shortest), and an empty one otherwise. Searches \
            run a fixed number at a time; when every search worker stays busy for a whole search budget the \
            answer is `/problems/search-busy` (503, with `Retry-After`).\n\n\
            **Rate limits.** Each client (an IPv4 address, or an IPv6 /64) has a token bucket: {rate}. A table probe costs 1 token (each table position of a batch too), a \
            table mainline 5, any search (probe, batch entry or mainline) 10; `/health`, `/metrics` and the docs \
            are free. A spent budget gets 429 `/problems/rate-limited` with `Retry-After` (seconds until the \
            request's whole cost is available), `X-RateLimit-Limit` and `X-RateLimit-Remaining`. For bulk use, \
            download the tables or run the `shogi4` CLI.\n\n\
            **Positions** are SFEN (`trfk/3c/C3/KFRT b - 1`, side `b` = first player) or Fairy-Stockfish FEN \
            (`trfk/3p/P3/KFRT[] w - - 0 1`, side `w` = first player). `_` may replace spaces; in a query string send \
            `+` as `%2B`.\n\n\
            **Downloads.** `GET /files` lists every served table file with its size and SHA-256, then \
            `SHA256SUMS` and `manifest.json`, which describe the set; `GET /files/{name}` sends one, whole or one \
            byte range (`Range`, `If-Range`), with its SHA-256 as a strong `ETag` (`If-None-Match` gets 304). \
            Downloads are limited by bytes, not requests: {downloads}; a full house gets 503 \
            `/problems/downloads-busy` with `Retry-After`, and {cut}. `scripts/mirror-tables.sh URL DIR` fetches a set, resuming and verifying every file.\n\n\
            **Errors** are `application/problem+json` (RFC 9457) with a stable `type`, one of:\n\n",
        license(name = "MIT OR Apache-2.0")
    ),
    paths(
        routes::probe::probe,
        routes::probe::probe_batch,
        routes::probe::mainline,
        routes::info::tables,
        routes::info::health,
        routes::info::metrics,
        routes::files::list,
        routes::files::download
    ),
    components(schemas(
        ProbeResponse, MoveInfo, Category, Source, SearchStats, Estimate, Side, MainlineResponse, MainlineMove, BatchRequest,
        BatchResponse,
        BatchEntry, TablesResponse, TableInfo, LongestWin, Health, RejectedTable, Problem, FilesResponse,
        FileEntry, Manifest, ManifestEntry
    )),
    tags(
        (name = "probe", description = "Solved values of positions"),
        (name = "service", description = "Tables, health and metrics"),
        (name = "files", description = "Table files for mirrors")
    )
)]
struct ApiDoc;

/// The OpenAPI document of a server with the default limits (the checked-in form).
pub fn spec() -> utoipa::openapi::OpenApi {
    spec_with(&crate::ServiceLimits::default())
}

/// The OpenAPI document of a server with these limits: its text states the limits as
/// configured, and lists the problem types from the catalogue ([`ProblemType`]), the one place
/// that says which exist and which carry `Retry-After`.
pub fn spec_with(limits: &crate::ServiceLimits) -> utoipa::openapi::OpenApi {
    let mut spec = ApiDoc::openapi();
    let rate = match limits.rate.per_second {
        0 => "none on this server (rate limiting is off)".to_string(),
        per_second => format!("{per_second} tokens a second, {} at most", limits.rate.burst),
    };
    let d = &limits.downloads;
    let bandwidth = match d.kib_per_second {
        0 => "any bandwidth".to_string(),
        kib => format!("{kib} KiB/s of bandwidth"),
    };
    let downloads = format!(
        "each client gets {bandwidth} and {} of the server's {} download slots (a second one only while a slot \
         stays free for a client that has none)",
        d.max_per_client, d.max_downloads
    );
    let stall = d.stall.as_secs();
    let cut = match d.min_kib_per_second {
        0 => format!("a transfer whose reader takes nothing for {stall} s is cut"),
        kib => format!(
            "a transfer whose reader takes nothing for {stall} s, or reads slower than {kib} KiB/s beyond that, is cut"
        ),
    };
    let description = spec.info.description.get_or_insert_with(String::new);
    *description = description.replace("{rate}", &rate).replace("{downloads}", &downloads).replace("{cut}", &cut);
    description.push_str(&ProblemType::served_catalogue());
    document_problems(&mut spec);
    spec
}

/// The problems every route can answer, whatever it does: the layers around the router (the
/// request's URI and body checked, the concurrency limit, the timeout, a handler's panic).
pub const EVERY_ROUTE: [ProblemType; 6] = [
    ProblemType::BodyTimeout,
    ProblemType::BodyTooLarge,
    ProblemType::UriTooLong,
    ProblemType::Overloaded,
    ProblemType::Timeout,
    ProblemType::Internal,
];

/// What a position's answer can be refused with: its notation, its legality, the rate limit,
/// no table (search off), a busy search, a table being solved or changed under its mapping.
const POSITION_ANSWER: [ProblemType; 8] = [
    ProblemType::UnparsablePosition,
    ProblemType::BadRequest,
    ProblemType::IllegalPosition,
    ProblemType::NoTable,
    ProblemType::RateLimited,
    ProblemType::SearchBusy,
    ProblemType::TableBeingSolved,
    ProblemType::TableChanged,
];

/// Each operation's own problems beyond [`EVERY_ROUTE`], by method and path: what its handler
/// and its extractors can answer. The OpenAPI document's problem responses are generated from
/// this list, and a test sends each route the requests that provoke its problems.
pub const ROUTE_PROBLEMS: [(&str, &str, &[ProblemType]); 8] = [
    ("get", "/probe", &POSITION_ANSWER),
    ("post", "/probe", &[ProblemType::BadRequest, ProblemType::BatchTooLarge, ProblemType::RateLimited]),
    ("get", "/mainline", &POSITION_ANSWER),
    ("get", "/tables", &[ProblemType::RateLimited]),
    ("get", "/health", &[]),
    ("get", "/metrics", &[]),
    ("get", "/files", &[ProblemType::RateLimited]),
    (
        "get",
        "/files/{name}",
        &[
            ProblemType::NoSuchFile,
            ProblemType::RangeNotSatisfiable,
            ProblemType::DownloadsBusy,
            ProblemType::RateLimited,
        ],
    ),
];

/// The problems `method path` can answer: its own and every route's, in the catalogue's order.
pub fn problems_of(method: &str, path: &str) -> Vec<ProblemType> {
    let own = ROUTE_PROBLEMS.iter().find(|(m, p, _)| *m == method && *p == path).map_or(&[][..], |(_, _, own)| own);
    ProblemType::ALL.iter().copied().filter(|kind| own.contains(kind) || EVERY_ROUTE.contains(kind)).collect()
}

/// Writes each operation's problem responses from [`problems_of`]: one response per status,
/// naming every problem type it may carry and whether it comes with `Retry-After`. A status
/// the handler also answers otherwise (`/health`'s 503) keeps its own description and body,
/// with the problems added beside them.
fn document_problems(spec: &mut utoipa::openapi::OpenApi) {
    use utoipa::openapi::{ContentBuilder, Ref, ResponseBuilder};
    for (path, item) in spec.paths.paths.iter_mut() {
        let operations = [("get", &mut item.get), ("post", &mut item.post)];
        for (method, operation) in operations {
            let Some(operation) = operation.as_mut() else { continue };
            let problems = problems_of(method, path);
            let mut statuses: Vec<u16> = problems.iter().map(|kind| kind.status()).collect();
            statuses.sort_unstable();
            statuses.dedup();
            for status in statuses {
                let listed: Vec<String> = problems
                    .iter()
                    .filter(|kind| kind.status() == status)
                    .map(|kind| {
                        let retry = if kind.retry_after() { ", with `Retry-After`" } else { "" };
                        format!("`{}` ({}{retry})", kind.uri(), kind.title())
                    })
                    .collect();
                let text = format!("A problem: {}.", listed.join("; "));
                let content = ContentBuilder::new().schema(Some(Ref::from_schema_name("Problem"))).build();
                let responses = &mut operation.responses.responses;
                let key = status.to_string();
                let response = match responses.remove(&key) {
                    Some(utoipa::openapi::RefOr::T(mut own)) => {
                        own.description = format!("{} {text}", own.description);
                        own.content.insert("application/problem+json".to_string(), content);
                        own
                    }
                    _ => ResponseBuilder::new().description(text).content("application/problem+json", content).build(),
                };
                responses.insert(key, response.into());
            }
        }
    }
}

/// The endpoints `spec` describes, as `GET /files, GET /files/{name}, …` (by path, then
/// method): what the answer to an unknown path points to, read off the document so that it
/// names every endpoint the router serves and no other.
pub fn endpoints(spec: &utoipa::openapi::OpenApi) -> String {
    spec.paths
        .paths
        .iter()
        .flat_map(|(path, item)| {
            [("GET", &item.get), ("POST", &item.post), ("PUT", &item.put), ("DELETE", &item.delete)]
                .into_iter()
                .filter(|(_, operation)| operation.is_some())
                .map(move |(method, _)| format!("{method} {path}"))
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The OpenAPI document as pretty JSON with a trailing newline (the checked-in form).
///
/// ```
/// let spec: serde_json::Value = serde_json::from_str(&shogi4_server::openapi::spec_json()).unwrap();
/// assert_eq!(spec["openapi"], "3.1.0");
/// assert!(spec["paths"]["/probe"]["get"].is_object());
/// ```
pub fn spec_json() -> String {
    let mut text = spec().to_pretty_json().expect("the spec serializes");
    text.push('\n');
    text
}
