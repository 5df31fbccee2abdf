// Asking the server: probes cached per page (going back and forth asks nothing again),
// debounced while a position changes quickly, and an older request aborted by a newer one.

import { Shogi4Client } from './shogi4.js';

export const api = new Shogi4Client('');

/** Wait this long for a position to stay on the board before asking for its value. */
const DEBOUNCE_MS = 120;
/** Answers kept per page. */
const CACHE_ENTRIES = 500;

const cache = new Map();
let inflight = null;
let debounce = null;

/** Keeps `value` under `key`, the oldest entry dropped past the limit. */
export function remember(key, value) {
  cache.delete(key);
  cache.set(key, value);
  if (cache.size > CACHE_ENTRIES) cache.delete(cache.keys().next().value);
}

/** The probe of `sfen`, from the cache or (after the debounce, cancelling any older request) the server. */
export function probe(sfen) {
  clearTimeout(debounce);
  inflight?.abort();
  const cached = cache.get(sfen);
  if (cached) return Promise.resolve(cached);
  return new Promise((resolve, reject) => {
    debounce = setTimeout(() => {
      const controller = new AbortController();
      inflight = controller;
      api.probe(sfen, { signal: controller.signal }).then((result) => {
        remember(sfen, result);
        remember(result.sfen, result);
        resolve(result);
      }, reject);
    }, DEBOUNCE_MS);
  });
}

/** A probe asked at once (the editor, the form): its answer is cached under its canonical SFEN. */
export async function probeNow(text) {
  const result = await api.probe(text);
  remember(result.sfen, result);
  return result;
}

/** The line of best play from `sfen`, fetched once per page. */
export async function mainline(sfen) {
  const key = `mainline ${sfen}`;
  const line = cache.get(key) ?? await api.mainline(sfen);
  remember(key, line);
  return line;
}
