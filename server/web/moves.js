// The moves of the shown position, grouped and in the API's order (best first), and the
// line played. Listeners are bound once, on the lists, and find the move or the ply from the
// row's data attributes.

import { $, state } from './state.js';
import { highlightMove } from './board.js';
import { DTW_MEANING } from './verdict.js';

// A search's unknown move may still win, so it comes before a proven draw, as in the API.
const GROUPS = [
  ['win', 'Winning moves'],
  ['unknown', 'Moves without a proven result'],
  ['draw', 'Drawing moves'],
  ['loss', 'Losing moves'],
];

const BADGES = [
  ['royal_capture', 'Royal capture'],
  ['capture', 'capture'],
  ['drop', 'drop'],
  ['promotion', 'promotes'],
  ['jump', 'jump'],
];

function moveValueText(move) {
  switch (move.category) {
    case 'win': return move.dtw == null ? `win in ${move.dtw_at_least}–${move.dtw_at_most}` : `win in ${move.dtw}`;
    case 'loss': return move.dtw == null ? `loss in ${move.dtw_at_least}–${move.dtw_at_most}` : `loss in ${move.dtw}`;
    case 'draw': return 'draw';
    default: return `no result within ${move.no_result_within}`;
  }
}

function moveRow(move, engineBest) {
  const row = document.createElement('button');
  row.type = 'button';
  row.className = 'move';
  row.dataset.move = move.move;
  row.dataset.category = move.category;
  row.dataset.dtw = move.dtw == null ? '' : String(move.dtw);
  const notation = document.createElement('span');
  notation.className = 'notation';
  notation.textContent = move.move;
  const value = document.createElement('span');
  value.className = 'value';
  value.textContent = moveValueText(move);
  value.title = DTW_MEANING;
  const badges = document.createElement('span');
  badges.className = 'badges';
  for (const [flag, label] of BADGES) {
    if (!move[flag] || (flag === 'capture' && move.royal_capture)) continue;
    const badge = document.createElement('span');
    badge.className = `badge ${flag}`;
    badge.textContent = label;
    badges.append(badge);
  }
  if (move.move === engineBest) {
    row.dataset.engineBest = '1';
    const badge = document.createElement('span');
    badge.className = 'badge engine';
    badge.textContent = "engine's choice";
    badge.title = 'The move the engine plays here: an estimate, not a proof';
    badges.append(badge);
  }
  row.append(notation, value, badges);
  row.setAttribute('aria-label', `${move.move}: ${moveValueText(move)}${[...badges.children].map((b) => `, ${b.textContent}`).join('')}`);
  return row;
}

/** The moves of a probe's answer, by group. */
export function renderMoves(result) {
  const sections = [];
  if (!result.moves.length) {
    const none = document.createElement('p');
    none.textContent = 'No legal move.';
    sections.push(none);
  }
  for (const [category, title] of GROUPS) {
    const moves = result.moves.filter((m) => m.category === category);
    if (!moves.length) continue;
    const section = document.createElement('section');
    section.className = `move-group ${category}`;
    const heading = document.createElement('h2');
    heading.textContent = `${title} (${moves.length})`;
    section.append(heading, ...moves.map((move) => moveRow(move, result.estimate?.best_move)));
    sections.push(section);
  }
  $('moves').replaceChildren(...sections);
}

/** The line played, the current ply marked, and the back and forward buttons' state. */
export function renderLine() {
  const items = state.line.map((entry, i) => {
    const li = document.createElement('li');
    const button = document.createElement('button');
    button.type = 'button';
    button.dataset.ply = String(i);
    button.textContent = i === 0 ? 'start' : entry.move;
    if (i === state.index) button.setAttribute('aria-current', 'step');
    li.append(button);
    return li;
  });
  $('line').replaceChildren(...items);
  $('back').disabled = state.index === 0;
  $('forward').disabled = state.index >= state.line.length - 1;
}

/** Binds the lists' events, once: `play` a move of the shown answer, `goTo` a ply of the line. */
export function bindMoves({ play, goTo }) {
  const list = $('moves');
  const moveOf = (event) => {
    const row = event.target.closest('button.move');
    return row && state.shown?.moves.find((m) => m.move === row.dataset.move);
  };
  list.addEventListener('click', (event) => {
    const move = moveOf(event);
    if (move) play(move);
  });
  // Hover and focus mark the move's squares; `mouseover` and `focusin` bubble, their
  // `enter` and `focus` counterparts do not.
  const mark = (on) => (event) => {
    const row = event.target.closest('button.move');
    if (!row || (event.relatedTarget && row.contains(event.relatedTarget))) return;
    highlightMove(row.dataset.move, on);
  };
  list.addEventListener('mouseover', mark(true));
  list.addEventListener('mouseout', mark(false));
  list.addEventListener('focusin', mark(true));
  list.addEventListener('focusout', mark(false));
  $('line').addEventListener('click', (event) => {
    const ply = event.target.closest('button[data-ply]');
    if (ply) goTo(Number(ply.dataset.ply));
  });
}
