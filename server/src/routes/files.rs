//! `GET /files` and `GET /files/{name}`: the served table files, for mirrors (see
//! [`crate::downloads`] for how transfers are bounded).

use std::sync::Arc;

use axum::extract::{Path, State};
use axum::http::HeaderMap;
use axum::response::Response;
use axum::Json;
use sha2::Digest;
use shogi4_api::{FileEntry, FilesResponse, Manifest, ManifestEntry};
use shogi4_tablebase::file_name;

use super::Client;
use crate::downloads::{self, Source};
use crate::error::ApiError;
use crate::rate_limit::cost;
use crate::state::{AppState, TableSet};
use crate::tables::hex;

/// The checksum list's name, as `sha256sum -c` reads it.
const SHA256SUMS: &str = "SHA256SUMS";
/// The manifest's name.
const MANIFEST: &str = "manifest.json";

/// Every file a mirror needs.
#[utoipa::path(get, path = "/files", tag = "files",
    responses((status = 200, description = "Every served table file with its size and SHA-256, then `SHA256SUMS` \
        and `manifest.json`. The hashes are of the bytes this server verified and serves.", body = FilesResponse)))]
pub async fn list(State(state): State<Arc<AppState>>, Client(client): Client) -> Result<Json<FilesResponse>, ApiError> {
    state.rate.charge(client, cost::TABLE_PROBE)?;
    let set = hashed(state.tables()).await?;
    let mut files: Vec<FileEntry> = set
        .tables
        .tables()
        .map(|(material, table)| FileEntry {
            name: file_name(*material),
            bytes: table.file_size(),
            sha256: table.sha256().to_string(),
            material: Some(material.to_string()),
        })
        .collect();
    for (name, bytes) in [(SHA256SUMS, sha256sums(&set)), (MANIFEST, manifest(&set))] {
        files.push(FileEntry {
            name: name.to_string(),
            bytes: bytes.len() as u64,
            sha256: hex(&sha2::Sha256::digest(&bytes)),
            material: None,
        });
    }
    Ok(Json(FilesResponse { files }))
}

/// One file, whole or one byte range.
#[utoipa::path(get, path = "/files/{name}", tag = "files",
    params(("name" = String, Path, description = "A name from `GET /files`: `KKCF.s4tb`, `SHA256SUMS` or \
        `manifest.json`.")),
    responses(
        (status = 200, description = "The whole file: a table, `SHA256SUMS` (text) or `manifest.json`. `ETag` is its \
            SHA-256 in quotes; `Accept-Ranges: bytes`.", content(
            (Vec<u8> = "application/octet-stream"), (String = "text/plain; charset=utf-8"),
            (Manifest = "application/json"))),
        (status = 206, description = "One byte range (`Range: bytes=a-b`, `a-` or `-n`; `If-Range` with the ETag \
            is honoured), with `Content-Range`.", content(
            (Vec<u8> = "application/octet-stream"), (String = "text/plain; charset=utf-8"),
            (String = "application/json"))),
        (status = 304, description = "`If-None-Match` names the file's ETag.")))]
pub async fn download(
    State(state): State<Arc<AppState>>,
    Client(client): Client,
    Path(name): Path<String>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    // Each request, a one-byte range too, costs a token: its bytes are paced by the download
    // slots, but its answer's work (a hash, a header, a slot) is not free.
    state.rate.charge(client, cost::TABLE_PROBE)?;
    let set = state.tables();
    let set = if [SHA256SUMS, MANIFEST].contains(&name.as_str()) { hashed(set).await? } else { set };
    let made = match name.as_str() {
        SHA256SUMS => Some((sha256sums(&set), "text/plain; charset=utf-8")),
        MANIFEST => Some((manifest(&set), "application/json")),
        _ => None,
    };
    if let Some((bytes, content_type)) = made {
        let sha256 = hex(&sha2::Sha256::digest(&bytes));
        return downloads::respond(
            &state.downloads,
            client,
            &headers,
            Source::Made(Arc::new(bytes)),
            &sha256,
            content_type,
        );
    }
    let table = set
        .tables
        .tables()
        .find(|(&material, _)| file_name(material) == name)
        .map(|(_, table)| Arc::clone(table))
        .ok_or_else(|| ApiError::NoFile(name.chars().take(64).collect()))?;
    let hashing = Arc::clone(&table);
    let sha256 = tokio::task::spawn_blocking(move || hashing.sha256().to_string())
        .await
        .map_err(|e| ApiError::Internal(format!("hashing failed: {e}")))?;
    downloads::respond(&state.downloads, client, &headers, Source::Table(table), &sha256, "application/octet-stream")
}

/// The set, each table's SHA-256 computed (off the async workers; once per loaded table).
async fn hashed(set: Arc<TableSet>) -> Result<Arc<TableSet>, ApiError> {
    tokio::task::spawn_blocking(move || {
        set.tables.tables().for_each(|(_, table)| {
            table.sha256();
        });
        set
    })
    .await
    .map_err(|e| ApiError::Internal(format!("hashing failed: {e}")))
}

/// `SHA256SUMS` of the served tables, in `sha256sum`'s own format.
fn sha256sums(set: &TableSet) -> Vec<u8> {
    manifest_of(set).sha256sums()
}

/// `manifest.json` of the served tables, as `shogi4 publish` writes it for a directory.
fn manifest(set: &TableSet) -> Vec<u8> {
    manifest_of(set).to_bytes()
}

fn manifest_of(set: &TableSet) -> Manifest {
    let tables = set
        .tables
        .tables()
        .map(|(material, table)| ManifestEntry {
            info: table.info.clone(),
            file: file_name(*material),
            sha256: table.sha256().to_string(),
        })
        .collect();
    Manifest { tables }
}
