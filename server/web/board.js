// The board and the hands: drawn from a position's data (see `parseSfen`), the squares a
// selected piece can move to taken from the moves the API listed. Listeners are bound once,
// on the containers, and find the square or hand piece clicked from its data attributes.

import { HAND_KINDS, PIECE_NAMES, PROMOTED_NAMES, TILE_MARKS, emptyHand, parseMove, parseSfen, squareIndex, squareName } from './shogi4.js';
import { $, state, current, sideName } from './state.js';

/** Draws `data` (or the editor's position while editing), `last` the squares of the move that led to it. */
export function renderBoard(data, last) {
  const board = $('board');
  board.classList.toggle('flipped', state.flipped);
  board.dataset.flipped = state.flipped ? '1' : '0';
  const squares = [];
  for (let row = 0; row < 4; row++) {
    for (let col = 0; col < 4; col++) {
      const rank = state.flipped ? row + 1 : 4 - row;
      const file = state.flipped ? 3 - col : col;
      squares.push(file + 4 * (rank - 1));
    }
  }
  const position = state.editor ?? data;
  const targets = new Set(state.editor ? [] : selectionMoves().map((move) => parseMove(move.move).to));
  board.replaceChildren(...squares.map((i) => {
    const piece = position?.board[i] ?? null;
    const button = document.createElement('button');
    button.type = 'button';
    button.className = 'square';
    button.dataset.square = squareName(i);
    if ((i % 4 + Math.floor(i / 4)) % 2) button.classList.add('alt');
    if (last && (last.from === i || last.to === i)) button.classList.add('last');
    if (state.selected?.square === i) button.classList.add('selected');
    if (targets.has(i)) button.classList.add('target');
    button.setAttribute('aria-label', `${squareName(i)}: ${piece ? pieceLabel(piece) : 'empty'}${targets.has(i) ? ', move here' : ''}`);
    if (piece) button.append(pieceElement(piece));
    return button;
  }));
  renderHands(position);
  const toMove = position?.toMove;
  $('turn').textContent = toMove ? `${sideName(toMove)} to move` : '';
  $('turn').dataset.side = toMove ?? '';
}

/** Draws the shown answer's position again (the selection or the orientation changed). */
export function redrawShown() {
  renderBoard(parseSfen(state.shown.sfen), current().last);
}

export function pieceLabel(piece) {
  return `${piece.owner === 'first' ? 'first' : 'second'} player's ${piece.promoted ? 'promoted ' : ''}${PIECE_NAMES[piece.kind]}`;
}

/** The animal's name: the promoted tile's own name beside the kind's. */
export function pieceName(piece) {
  return piece.promoted ? `${PROMOTED_NAMES[piece.kind]} (promoted ${PIECE_NAMES[piece.kind]})` : PIECE_NAMES[piece.kind];
}

const SVG = 'http://www.w3.org/2000/svg';
/** Where each direction's mark sits on a tile drawn in a 100 × 100 box, pointing up. */
const MARK_AT = {
  F: [50, 9], B: [50, 93], L: [9, 55], R: [91, 55], FL: [16, 20], FR: [84, 20], BL: [10, 92], BR: [90, 92],
};

/** The tile's marks: a small wedge toward every square the piece steps to (see `TILE_MARKS`). */
function marksElement(piece) {
  const svg = document.createElementNS(SVG, 'svg');
  svg.setAttribute('viewBox', '0 0 100 100');
  svg.setAttribute('class', 'marks');
  const directions = TILE_MARKS[piece.kind][piece.promoted ? 1 : 0];
  svg.dataset.marks = directions.join(' ');
  for (const direction of directions) {
    const [x, y] = MARK_AT[direction];
    const mark = document.createElementNS(SVG, 'circle');
    mark.setAttribute('cx', String(x));
    mark.setAttribute('cy', String(y));
    mark.setAttribute('r', '5.5');
    mark.setAttribute('class', `mark ${direction}`);
    svg.append(mark);
  }
  return svg;
}

export function pieceElement(piece) {
  const span = document.createElement('span');
  const bottomOwner = state.flipped ? 'second' : 'first';
  span.className = `piece ${piece.owner} ${piece.owner === bottomOwner ? 'up' : 'down'}${piece.promoted ? ' promoted' : ''}`;
  span.title = `${sideName(piece.owner)}'s ${pieceName(piece)}`;
  const letter = document.createElement('span');
  letter.className = 'letter';
  letter.textContent = piece.kind;
  span.append(marksElement(piece), letter);
  span.setAttribute('aria-hidden', 'true');
  return span;
}

function renderHands(position) {
  const top = state.flipped ? 'first' : 'second';
  const bottom = state.flipped ? 'second' : 'first';
  fillHand($('hand-top'), top, position);
  fillHand($('hand-bottom'), bottom, position);
}

function fillHand(element, owner, position) {
  element.dataset.owner = owner;
  const title = document.createElement('span');
  title.className = 'hand-title';
  title.textContent = `${sideName(owner)}'s hand`;
  const items = [title];
  const hand = position?.hands[owner] ?? emptyHand();
  const drops = state.editor ? null : dropsByKind();
  for (const kind of HAND_KINDS) {
    const count = hand[kind];
    if (!count) continue;
    const button = document.createElement('button');
    button.type = 'button';
    button.className = 'hand-piece';
    button.dataset.handKind = kind;
    button.dataset.count = String(count);
    if (state.selected?.hand === kind && position.toMove === owner) button.classList.add('selected');
    button.setAttribute('aria-label', `${sideName(owner)}'s hand: ${count} ${PIECE_NAMES[kind]}`);
    button.append(pieceElement({ owner, kind, promoted: false }));
    const n = document.createElement('span');
    n.className = 'count';
    n.textContent = `×${count}`;
    button.append(n);
    const canDrop = drops && position.toMove === owner && drops.has(kind);
    button.disabled = !state.editor && !canDrop;
    items.push(button);
  }
  if (items.length === 1) {
    const none = document.createElement('span');
    none.className = 'hand-empty';
    none.textContent = 'empty';
    items.push(none);
  }
  element.replaceChildren(...items);
}

/** Drop moves of the shown position by kind. */
function dropsByKind() {
  const kinds = new Set();
  for (const move of state.shown?.moves ?? []) {
    const parsed = parseMove(move.move);
    if (parsed.drop) kinds.add(parsed.drop);
  }
  return kinds;
}

/** Moves of the shown position that start from the selection. */
function selectionMoves() {
  const selected = state.selected;
  if (!selected || !state.shown) return [];
  return state.shown.moves.filter((move) => {
    const parsed = parseMove(move.move);
    return selected.hand ? parsed.drop === selected.hand : parsed.from === selected.square;
  });
}

/** A square clicked while playing: the selection's move to it, or a new selection. */
function clickSquare(i, play) {
  if (!state.shown) return;
  const move = selectionMoves().find((m) => parseMove(m.move).to === i);
  if (move) {
    play(move);
    return;
  }
  const fromHere = state.shown.moves.some((m) => parseMove(m.move).from === i);
  state.selected = fromHere && state.selected?.square !== i ? { square: i } : null;
  redrawShown();
}

/** Marks (or unmarks) the squares of the move `notation`. */
export function highlightMove(notation, on) {
  const parsed = parseMove(notation);
  for (const element of $('board').children) {
    const i = squareIndex(element.dataset.square);
    element.classList.toggle('hover-from', on && i === parsed.from);
    element.classList.toggle('hover-to', on && i === parsed.to);
  }
}

/** Binds the board's and the hands' clicks, once: `play` a move of the shown answer, `edit`
 * a square while the editor is open. */
export function bindBoard({ play, edit }) {
  $('board').addEventListener('click', (event) => {
    const square = event.target.closest('.square');
    if (!square) return;
    const i = squareIndex(square.dataset.square);
    if (state.editor) edit(i);
    else clickSquare(i, play);
  });
  for (const id of ['hand-top', 'hand-bottom']) {
    $(id).addEventListener('click', (event) => {
      const piece = event.target.closest('.hand-piece');
      // The editor sets hands with its own counters.
      if (!piece || piece.disabled || state.editor || !state.shown) return;
      const kind = piece.dataset.handKind;
      state.selected = state.selected?.hand === kind ? null : { hand: kind };
      redrawShown();
    });
  }
}
