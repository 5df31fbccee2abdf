// The position editor: a palette of pieces, hand counters, the side to move, and the
// symmetries that keep a position's value (swap colours, mirror). It builds a SFEN; the
// server judges it. Listeners are bound once, on the palette and the hands.

import { HAND_KINDS, KINDS, PIECE_NAMES, START_SFEN, emptyHand, parseSfen, toSfen } from './shogi4.js';
import { $, state, current, sideName } from './state.js';
import { pieceElement, pieceLabel, renderBoard } from './board.js';

const BRUSHES = [];
for (const owner of ['first', 'second']) {
  for (const kind of KINDS) {
    BRUSHES.push({ owner, kind, promoted: false });
    if (kind !== 'K') BRUSHES.push({ owner, kind, promoted: true });
  }
}
BRUSHES.push(null); // the eraser

const brushName = (brush) => (brush ? `${brush.owner}-${brush.promoted ? '+' : ''}${brush.kind}` : 'erase');

/** Opens the editor on the position shown (the start position if it cannot be read). */
export function openEditor() {
  const entry = current();
  let data;
  try {
    data = parseSfen(entry.sfen ?? entry.captured.before);
  } catch {
    data = parseSfen(START_SFEN);
  }
  state.editor = { ...data, brush: { owner: 'first', kind: 'K', promoted: false } };
  $('editor').hidden = false;
  $('edit').setAttribute('aria-pressed', 'true');
  document.body.classList.add('editing');
  renderEditor();
}

export function closeEditor() {
  state.editor = null;
  $('editor').hidden = true;
  $('edit').setAttribute('aria-pressed', 'false');
  document.body.classList.remove('editing');
}

/** The SFEN the editor holds. */
export const editorSfen = () => toSfen(state.editor);

export function renderEditor() {
  const editor = state.editor;
  const active = brushName(editor.brush);
  $('palette').replaceChildren(...BRUSHES.map((brush) => {
    const button = document.createElement('button');
    button.type = 'button';
    button.className = 'brush';
    button.dataset.brush = brushName(brush);
    button.setAttribute('aria-pressed', button.dataset.brush === active ? 'true' : 'false');
    if (brush) {
      button.append(pieceElement(brush));
      button.setAttribute('aria-label', `Place ${pieceLabel(brush)}`);
    } else {
      button.textContent = 'Erase';
    }
    return button;
  }));
  $('editor-hands').replaceChildren(...['first', 'second'].map((owner) => {
    const row = document.createElement('div');
    row.className = 'editor-hand';
    row.dataset.owner = owner;
    const label = document.createElement('span');
    label.textContent = `${sideName(owner)}'s hand:`;
    row.append(label);
    for (const kind of HAND_KINDS) {
      const group = document.createElement('span');
      group.className = 'hand-count';
      group.dataset.kind = kind;
      const minus = document.createElement('button');
      minus.type = 'button';
      minus.textContent = '−';
      minus.setAttribute('aria-label', `One ${PIECE_NAMES[kind]} fewer in the ${owner} player's hand`);
      minus.dataset.action = 'minus';
      const plus = document.createElement('button');
      plus.type = 'button';
      plus.textContent = '+';
      plus.setAttribute('aria-label', `One ${PIECE_NAMES[kind]} more in the ${owner} player's hand`);
      plus.dataset.action = 'plus';
      const value = document.createElement('span');
      value.textContent = `${kind} ${editor.hands[owner][kind]}`;
      group.append(minus, value, plus);
      row.append(group);
    }
    return row;
  }));
  $('editor-side').value = editor.toMove;
  $('editor-sfen').textContent = toSfen(editor);
  renderBoard(null, null);
}

/** Paints square `i` with the brush; the same piece again, or the eraser, empties it. */
export function editSquare(i) {
  const editor = state.editor;
  const old = editor.board[i];
  const brush = editor.brush;
  const same = old && brush && brushName(old) === brushName(brush);
  editor.board[i] = same || !brush ? null : { ...brush };
  renderEditor();
}

function swapColours() {
  const editor = state.editor;
  const other = (owner) => (owner === 'first' ? 'second' : 'first');
  const board = new Array(16).fill(null);
  editor.board.forEach((piece, i) => {
    if (piece) board[15 - i] = { ...piece, owner: other(piece.owner) };
  });
  editor.board = board;
  editor.hands = { first: editor.hands.second, second: editor.hands.first };
  editor.toMove = other(editor.toMove);
  renderEditor();
}

function mirror() {
  const editor = state.editor;
  const board = new Array(16).fill(null);
  editor.board.forEach((piece, i) => {
    board[(3 - (i % 4)) + 4 * Math.floor(i / 4)] = piece;
  });
  editor.board = board;
  renderEditor();
}

/** Binds the editor's controls, once; `done` and `cancel` are the page's. */
export function bindEditor({ done, cancel }) {
  $('palette').addEventListener('click', (event) => {
    const button = event.target.closest('.brush');
    if (!button) return;
    state.editor.brush = BRUSHES.find((brush) => brushName(brush) === button.dataset.brush);
    renderEditor();
  });
  $('editor-hands').addEventListener('click', (event) => {
    const button = event.target.closest('button[data-action]');
    if (!button) return;
    const owner = button.closest('.editor-hand').dataset.owner;
    const kind = button.closest('.hand-count').dataset.kind;
    const hand = state.editor.hands[owner];
    hand[kind] = button.dataset.action === 'plus' ? Math.min(2, hand[kind] + 1) : Math.max(0, hand[kind] - 1);
    renderEditor();
  });
  $('editor-side').addEventListener('change', (e) => { state.editor.toMove = e.target.value; renderEditor(); });
  $('editor-clear').addEventListener('click', () => {
    Object.assign(state.editor, { board: new Array(16).fill(null), hands: { first: emptyHand(), second: emptyHand() } });
    renderEditor();
  });
  $('editor-start').addEventListener('click', () => { Object.assign(state.editor, parseSfen(START_SFEN)); renderEditor(); });
  $('editor-swap').addEventListener('click', swapColours);
  $('editor-mirror').addEventListener('click', mirror);
  $('editor-done').addEventListener('click', done);
  $('editor-cancel').addEventListener('click', cancel);
}
