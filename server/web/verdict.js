// The verdict (the position's value, in words a player reads, and where it came from) and
// the server's problems, shown inline.

import { ProblemError } from './shogi4.js';
import { $, sideName } from './state.js';

export const DTW_MEANING = 'Distance to win: plies (single moves of one player) until the Royal is captured '
  + 'when both play perfectly, the capturing move included. The winner takes the shortest way, the loser the longest.';

const plies = (n) => `${n} ${n === 1 ? 'ply' : 'plies'}`;

/** The verdict's text and detail, with its data attributes for scripts and tests. */
export function setVerdict({ category, dtw, source, sfen = '' }, text, detail = '') {
  const verdict = $('verdict');
  verdict.dataset.sfen = sfen;
  verdict.dataset.category = category;
  verdict.dataset.dtw = dtw;
  verdict.dataset.source = source;
  const main = document.createElement('p');
  main.className = 'verdict-text';
  main.textContent = text;
  const children = [main];
  if (detail) {
    const small = document.createElement('p');
    small.className = 'verdict-source';
    small.textContent = detail;
    children.push(small);
  }
  verdict.replaceChildren(...children);
}

/** The verdict of a probe's answer: exact, bounded or unknown, and its source. */
export function renderVerdict(result) {
  const side = sideName(result.side_to_move);
  let text;
  const bounded = result.dtw == null && result.dtw_at_most != null;
  const range = bounded ? `at most ${plies(result.dtw_at_most)} and at least ${plies(result.dtw_at_least)}` : '';
  switch (result.category) {
    case 'win': text = bounded ? `${side} to move wins: proven; the win takes ${range}`
      : result.dtw === 1 ? `${side} to move wins: the Royal can be captured now` : `${side} to move wins in ${plies(result.dtw)}`; break;
    case 'loss': text = bounded ? `${side} to move loses: proven; the loss takes ${range}`
      : result.dtw === 0 ? `${side} to move has no legal move: lost` : `${side} to move loses in ${plies(result.dtw)}`; break;
    case 'draw': text = 'Draw: neither player can force a Royal capture'; break;
    default: text = `Unknown: no forced result within ${plies(result.no_result_within)}`;
  }
  let detail;
  if (result.source === 'table') {
    detail = `From the ${result.material} table (exact).`;
  } else {
    const stats = result.search ? ` (${result.search.nodes.toLocaleString('en')} nodes, ${result.search.millis} ms)` : '';
    const proven = result.source === 'certificate'
      ? `Proven by the published certificate ${result.certificate} (checked by the rules alone; \`shogi4 verify-proof\` checks it anywhere); moves searched now${stats}`
      : result.source === 'store' ? `Proven by an earlier search, kept in the proof store; moves searched now${stats}` : `Proven by search${stats}`;
    detail = result.category === 'unknown'
      ? `Proof search${stats}: neither side can force a Royal capture within ${plies(result.no_result_within)}; `
        + `beyond that, the full game ${result.material} is not solved.`
      : result.category === 'draw'
        ? `${proven}: every attempt of either player to force a Royal capture ends in its own defeat or in a repeated position.`
      : bounded ? `${proven}: the value is exact; the distance is only bounded (every shorter one was refuted, a forced Royal capture within the longer one was proven).`
      : `${proven}: exact, no shorter win exists.`;
  }
  const dtw = result.dtw == null ? '' : String(result.dtw);
  setVerdict({ category: result.category, dtw, source: result.source, sfen: result.sfen }, text, detail);
  $('verdict').firstChild.title = DTW_MEANING;
}

/**
 * The engine's estimate of an unproven position, drawn apart from the verdict: a bar for the
 * first player's expected score, the score in carps for the side to move, the engine's best
 * move and line. Hidden for proven answers, which carry none.
 */
export function renderEstimate(result) {
  const box = $('estimate');
  const estimate = result.estimate;
  if (!estimate) {
    box.hidden = true;
    box.replaceChildren();
    delete box.dataset.expectedScore;
    delete box.dataset.bestMove;
    return;
  }
  const firstShare = result.side_to_move === 'first' ? estimate.expected_score : 1 - estimate.expected_score;
  box.dataset.expectedScore = String(estimate.expected_score);
  box.dataset.bestMove = estimate.best_move;
  const side = sideName(result.side_to_move);
  const score = estimate.centipawns != null
    ? `${estimate.centipawns >= 0 ? '+' : '−'}${(Math.abs(estimate.centipawns) / 100).toFixed(2)} for ${side.toLowerCase()}`
    : estimate.engine_sees_capture_in > 0
      ? `${side.toLowerCase()} captures the Royal in ${plies(estimate.engine_sees_capture_in)} on every line it searched`
      : `${side.toLowerCase()}'s Royal falls in ${plies(-estimate.engine_sees_capture_in)} on every line it searched`;
  const title = document.createElement('p');
  title.className = 'estimate-text';
  title.textContent = `Engine estimate: ${score}; it plays ${estimate.best_move}`;
  const bar = document.createElement('div');
  bar.className = 'estimate-bar';
  bar.setAttribute('role', 'img');
  bar.setAttribute('aria-label', `First player's expected score ${Math.round(firstShare * 100)}%`);
  const fill = document.createElement('div');
  fill.className = 'estimate-fill';
  fill.style.width = `${(firstShare * 100).toFixed(1)}%`;
  bar.append(fill);
  const note = document.createElement('p');
  note.className = 'estimate-note';
  note.textContent = `Not proven: an alpha-beta search to depth ${estimate.depth} (${estimate.nodes.toLocaleString('en')} nodes) `
    + `over a learned evaluation. Expected line: ${estimate.line.join(' ')}`;
  box.replaceChildren(title, bar, note);
  box.hidden = false;
}

/**
 * The move to play for the side to move: the best proven move, unless nothing better than a
 * draw is proven and the engine prefers a move not proven lost.
 */
export function preferredMove(result) {
  const best = result.moves[0];
  if (!best || best.category === 'win' || !result.estimate) return best ?? null;
  const engine = result.moves.find((move) => move.move === result.estimate.best_move);
  return engine && engine.category !== 'loss' ? engine : best;
}

export function hideProblem() {
  $('problem').hidden = true;
  $('problem').replaceChildren();
}

/** The server's problem, inline and precise: its title, its detail, and where in the text. */
export function showProblem(error, text) {
  const box = $('problem');
  const title = document.createElement('strong');
  const detail = document.createElement('p');
  if (error instanceof ProblemError) {
    box.dataset.type = error.type;
    box.dataset.status = String(error.status);
    title.textContent = error.title;
    detail.textContent = error.detail + (error.retryAfter ? ` Try again in ${error.retryAfter} s.` : '');
  } else {
    box.dataset.type = 'network';
    title.textContent = 'The server could not be reached';
    detail.textContent = String(error.message || error);
  }
  const children = [title, detail];
  if (error instanceof ProblemError && error.offset != null && text) {
    const pre = document.createElement('pre');
    pre.className = 'offset';
    pre.textContent = `${text}\n${' '.repeat(error.offset)}^ character ${error.offset + 1}`;
    children.push(pre);
  }
  box.replaceChildren(...children);
  box.hidden = false;
}
