// The line played and the URL: every change of the line is a history entry, so that the
// browser's back button, a reload and a shared link all show the same position. These
// functions change the state only; the caller shows the result.

import { parseMove, parseSfen, positionParameter } from './shogi4.js';
import { state, current, embed } from './state.js';

function urlFor(entry) {
  const sfen = entry.sfen ?? entry.captured.before;
  return `${location.pathname}?pos=${positionParameter(sfen)}${embed ? '&embed=1' : ''}`;
}

/** Writes the line into the history: a new entry, or in place of the current one. */
export function saveHistory(push) {
  const snapshot = { line: state.line, index: state.index, flipped: state.flipped };
  const url = urlFor(current());
  if (push) history.pushState(snapshot, '', url);
  else history.replaceState(snapshot, '', url);
}

/** A new line at `sfen` (the editor, the form, New game, a link). */
export function newLine(sfen, push = true) {
  state.line = [{ sfen, move: null, last: null }];
  state.index = 0;
  saveHistory(push);
}

/** Moves along the line played; false if `index` is not on it or already shown. */
export function moveTo(index) {
  if (index < 0 || index >= state.line.length || index === state.index) return false;
  state.index = index;
  saveHistory(true);
  return true;
}

/** Adds `move` (a move of the API's answer: its notation, its SFEN, null after a royal
 * capture, and then `after_capture`) after the position shown, dropping whatever the line held
 * beyond it. */
export function extendLine(move) {
  const before = current();
  const { from, to } = parseMove(move.move);
  const last = { from, to };
  const entry = move.sfen
    ? { sfen: move.sfen, move: move.move, last }
    : {
      sfen: null,
      move: move.move,
      last,
      captured: { before: before.sfen, after: move.after_capture, winner: parseSfen(before.sfen).toMove },
    };
  state.line = state.line.slice(0, state.index + 1).concat([entry]);
  state.index += 1;
  saveHistory(true);
}

/** `pos` from the query, read raw: a `+` typed into a link is a promotion, never a space. */
export function positionInUrl() {
  for (const pair of location.search.slice(1).split('&')) {
    const [key, value = ''] = pair.split('=');
    if (key !== 'pos') continue;
    try {
      return decodeURIComponent(value).replaceAll('_', ' ');
    } catch {
      return value;
    }
  }
  return null;
}

/** The line saved in a history entry (see `saveHistory`). */
export function restoreLine(saved) {
  state.line = saved.line;
  state.index = saved.index;
  state.flipped = !!saved.flipped;
}
