// shogi4.js: a small client for the Shogi4 tablebase API, for any front-end.
//
//   import { Shogi4Client, ProblemError } from 'https://your-host/static/shogi4.js';
//   const api = new Shogi4Client('https://your-host');
//   const result = await api.probe('k3/4/4/K3 b C 1');   // { category: 'win', dtw: 9, moves: [...] }
//
// Every method returns the API's JSON (documented at /docs) and throws a ProblemError, which
// carries the server's problem document (type, title, status, detail, offset), when the
// server refuses. Positions are SFEN or Fairy-Stockfish FEN strings. Besides the API, the
// module reads and writes SFEN as plain data (for drawing and editing boards); it knows
// nothing of the rules: legal moves always come from the server.

/** SFEN of the start position of a real game. */
export const START_SFEN = 'trfk/3c/C3/KFRT b - 1';

/** Piece letters, royal first, then the order closed games are named in. */
export const KINDS = ['K', 'C', 'F', 'R', 'T'];

/** Piece kinds that can be held in a hand (a captured Royal ends the game). */
export const HAND_KINDS = ['C', 'F', 'R', 'T'];

/** Names of the pieces, by letter. */
export const PIECE_NAMES = { K: 'Royal', C: 'Carp', F: 'Fox', R: 'Raccoon-dog', T: 'Tapir' };

/** Promoted pieces' names, as the game's evolved tiles call them. */
export const PROMOTED_NAMES = { C: 'Koi', F: 'Kitsune', R: 'Tanuki', T: 'Baku' };

const SILVER = ['F', 'FL', 'FR', 'BL', 'BR'];
const GOLD = ['F', 'FL', 'FR', 'L', 'R', 'B'];

/**
 * The marks printed on each tile, as on the game's own tiles: one toward every direction the
 * piece steps in, in its owner's frame (F forward, B back, L left, R right), unpromoted and
 * promoted. A drawing of the tiles, for a player to read; the legal moves themselves always
 * come from the API.
 */
export const TILE_MARKS = {
  K: [['F', 'B', 'L', 'R', 'FL', 'FR', 'BL', 'BR'], []],
  C: [['F'], SILVER],
  T: [['F', 'FL', 'FR'], SILVER],
  R: [['FL', 'FR', 'BL', 'BR'], SILVER],
  F: [['F', 'B', 'L', 'R'], GOLD],
};

/**
 * A refusal by the server, with its RFC 9457 problem document.
 * `offset` is the character (0-based) where an unparsable position went wrong, when known;
 * `retryAfter` the seconds to wait after a 429 or 503.
 */
export class ProblemError extends Error {
  constructor(problem, status, retryAfter) {
    super(problem.detail || problem.title || `HTTP ${status}`);
    this.name = 'ProblemError';
    this.type = problem.type || 'about:blank';
    this.title = problem.title || `HTTP ${status}`;
    this.status = problem.status || status;
    this.detail = problem.detail || '';
    this.offset = typeof problem.offset === 'number' ? problem.offset : null;
    this.retryAfter = retryAfter;
  }
}

/** A position as the URL query carries it: spaces become `_`. */
export function sfenForUrl(sfen) {
  return sfen.replaceAll(' ', '_');
}

/** The `pos` value of an explorer link (`/?pos=…`): `_` for spaces, `+` escaped, `/` kept readable. */
export function positionParameter(sfen) {
  return encodeURIComponent(sfenForUrl(sfen)).replaceAll('%2F', '/');
}

/** The client. `baseUrl` is the server's origin ('' for the page's own). */
export class Shogi4Client {
  constructor(baseUrl = '') {
    this.baseUrl = baseUrl.replace(/\/$/, '');
  }

  /**
   * The value of a position and of each of its moves, best first:
   * `{sfen, fen, material, side_to_move, category, dtw, no_result_within?, source, certificate?, search?, moves}`.
   */
  probe(position, { signal } = {}) {
    return this.#get('/probe', position, signal);
  }

  /** Best play to the royal capture: `{sfen, category, dtw, source, winner, mainline: [{move, sfen, dtw}]}`. */
  mainline(position, { signal } = {}) {
    return this.#get('/mainline', position, signal);
  }

  /** Every served table with its statistics: `{tables: [...], solving?: [...]}`. */
  async tables({ signal } = {}) {
    return this.#fetch(`${this.baseUrl}/tables`, signal);
  }

  #get(path, position, signal) {
    const query = new URLSearchParams({ pos: sfenForUrl(position) });
    return this.#fetch(`${this.baseUrl}${path}?${query}`, signal);
  }

  async #fetch(url, signal) {
    const response = await fetch(url, { signal, headers: { accept: 'application/json' } });
    const body = await response.json().catch(() => ({}));
    if (!response.ok) {
      const retry = Number(response.headers.get('retry-after'));
      throw new ProblemError(body, response.status, Number.isFinite(retry) && retry > 0 ? retry : null);
    }
    return body;
  }
}

/**
 * A SFEN read into plain data: `board[i]` for square i = file + 4 * (rank - 1) (a1 = 0,
 * d4 = 15) is null or `{owner: 'first'|'second', kind: 'K'|'C'|'F'|'R'|'T', promoted}`;
 * `hands.first` / `hands.second` map kinds to counts; `toMove` is 'first' or 'second'.
 * Throws an Error naming the character for text that is not SFEN.
 */
export function parseSfen(text) {
  const fields = text.trim().replaceAll('_', ' ').split(/\s+/);
  if (fields.length < 2) throw new Error('a SFEN has a board, a side to move, hands and a move number');
  const [board, side, hands = '-'] = fields;
  const ranks = board.split('/');
  if (ranks.length !== 4) throw new Error(`the board has ${ranks.length} ranks, not 4`);
  const squares = new Array(16).fill(null);
  ranks.forEach((row, r) => {
    const rank = 4 - r;
    let file = 0;
    let promoted = false;
    for (const ch of row) {
      if (/[1-4]/.test(ch)) {
        file += Number(ch);
      } else if (ch === '+') {
        promoted = true;
      } else if (KINDS.includes(ch.toUpperCase())) {
        if (file > 3) throw new Error(`rank ${rank} has more than 4 squares`);
        const owner = ch === ch.toUpperCase() ? 'first' : 'second';
        squares[file + 4 * (rank - 1)] = { owner, kind: ch.toUpperCase(), promoted };
        promoted = false;
        file += 1;
      } else {
        throw new Error(`unknown character '${ch}' in rank ${rank}`);
      }
    }
    if (file !== 4) throw new Error(`rank ${rank} has ${file} squares, not 4`);
  });
  if (side !== 'b' && side !== 'w') throw new Error(`side to move is '${side}', not b or w`);
  const counts = { first: emptyHand(), second: emptyHand() };
  if (hands !== '-') {
    let count = '';
    for (const ch of hands) {
      if (/[0-9]/.test(ch)) {
        count += ch;
        continue;
      }
      const kind = ch.toUpperCase();
      if (!HAND_KINDS.includes(kind)) throw new Error(`'${ch}' cannot be in a hand`);
      counts[ch === kind ? 'first' : 'second'][kind] += count === '' ? 1 : Number(count);
      count = '';
    }
  }
  return { board: squares, toMove: side === 'b' ? 'first' : 'second', hands: counts };
}

/** An empty hand: every droppable kind at zero. */
export function emptyHand() {
  return Object.fromEntries(HAND_KINDS.map((k) => [k, 0]));
}

/** Plain position data (as `parseSfen` returns) written as SFEN, move number 1. */
export function toSfen({ board, toMove, hands }) {
  const ranks = [];
  for (let rank = 4; rank >= 1; rank--) {
    let row = '';
    let empty = 0;
    for (let file = 0; file < 4; file++) {
      const piece = board[file + 4 * (rank - 1)];
      if (!piece) {
        empty += 1;
        continue;
      }
      if (empty) row += empty;
      empty = 0;
      const letter = piece.owner === 'first' ? piece.kind : piece.kind.toLowerCase();
      row += (piece.promoted ? '+' : '') + letter;
    }
    ranks.push(row + (empty ? empty : ''));
  }
  let held = '';
  for (const owner of ['first', 'second']) {
    for (const kind of HAND_KINDS) {
      const n = hands[owner][kind];
      const letter = owner === 'first' ? kind : kind.toLowerCase();
      if (n > 0) held += (n > 1 ? n : '') + letter;
    }
  }
  return `${ranks.join('/')} ${toMove === 'first' ? 'b' : 'w'} ${held || '-'} 1`;
}

/** Square name (`a1` … `d4`) of index i, and back. */
export function squareName(i) {
  return 'abcd'[i % 4] + (Math.floor(i / 4) + 1);
}
export function squareIndex(name) {
  return 'abcd'.indexOf(name[0]) + 4 * (Number(name[1]) - 1);
}

/**
 * A move in the API's notation, read as squares: `{from, to, drop}` where `from` is a square
 * index (null for a drop), `to` a square index, `drop` the dropped kind (or null).
 */
export function parseMove(text) {
  if (text[1] === '@' || text[1] === '*') {
    return { from: null, to: squareIndex(text.slice(2, 4)), drop: text[0].toUpperCase() };
  }
  return { from: squareIndex(text.slice(0, 2)), to: squareIndex(text.slice(2, 4)), drop: null };
}
