// The explorer page: a board, the value of the position and of every move, a line to play
// through, and a position editor. Every value and every legal move comes from the API (see
// shogi4.js); this file knows notation, not rules.

import {
  Shogi4Client, ProblemError, START_SFEN, HAND_KINDS, KINDS, PIECE_NAMES,
  parseSfen, toSfen, emptyHand, positionParameter, squareName, squareIndex, parseMove,
} from './shogi4.js';

const api = new Shogi4Client('');
const $ = (id) => document.getElementById(id);

/** Wait this long for a position to stay on the board before asking for its value. */
const DEBOUNCE_MS = 120;
/** One ply every this many milliseconds when playing the best line. */
const STEP_MS = 450;
/** Probes kept per page, so that going back and forth asks the server nothing again. */
const CACHE_ENTRIES = 500;

const embed = new URLSearchParams(location.search).get('embed') === '1';

const state = {
  // The line played: entries {sfen, move, last: {from, to}}; after a royal capture the last
  // entry has sfen null and `captured: {before, winner}`.
  line: [],
  index: 0,
  flipped: false,
  selected: null, // {square: i} or {hand: kind}
  editor: null, // {board, toMove, hands, brush}
  replyPending: false,
};

// ---------------------------------------------------------------- probing, cached

const cache = new Map();
let inflight = null;
let debounce = null;

function remember(key, value) {
  cache.delete(key);
  cache.set(key, value);
  if (cache.size > CACHE_ENTRIES) cache.delete(cache.keys().next().value);
}

/** The probe of `sfen`, from the cache or (after the debounce, cancelling any older request) the server. */
function probe(sfen) {
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

// ---------------------------------------------------------------- the line and the URL

const current = () => state.line[state.index];

function urlFor(entry) {
  const sfen = entry.sfen ?? entry.captured.before;
  return `${location.pathname}?pos=${positionParameter(sfen)}${embed ? '&embed=1' : ''}`;
}

function saveHistory(push) {
  const snapshot = { line: state.line, index: state.index, flipped: state.flipped };
  const url = urlFor(current());
  if (push) history.pushState(snapshot, '', url);
  else history.replaceState(snapshot, '', url);
}

/** Starts a new line at `sfen` (the editor, the form, New game, a link). */
function startLine(sfen, push = true) {
  stopAutoplay();
  state.line = [{ sfen, move: null, last: null }];
  state.index = 0;
  saveHistory(push);
  show();
}

/** Moves along the line played. */
function goTo(index) {
  if (index < 0 || index >= state.line.length || index === state.index) return;
  state.index = index;
  saveHistory(true);
  show();
}

/** Plays a move of the current position's list (an entry of `moves` in the probe). */
function play(move, { byUser = true } = {}) {
  if (!current()?.sfen) return;
  if (byUser) stopAutoplay();
  state.replyPending = byUser && $('auto-reply').checked;
  extendLine(move.move, move.sfen);
}

/** Adds the move `notation`, leading to `sfen` (null after a royal capture), after the
 * position shown, dropping whatever the line held beyond it, and shows it. */
function extendLine(notation, sfen) {
  const before = current();
  const parsed = parseMove(notation);
  const last = { from: parsed.from, to: parsed.to };
  const entry = sfen
    ? { sfen, move: notation, last }
    : { sfen: null, move: notation, last, captured: { before: before.sfen, winner: parseSfen(before.sfen).toMove } };
  state.line = state.line.slice(0, state.index + 1).concat([entry]);
  state.index += 1;
  saveHistory(true);
  show();
}

function playBest() {
  const result = shownResult;
  if (result?.moves?.length) play(result.moves[0]);
}

// ---------------------------------------------------------------- showing a position

let shownResult = null;

function show() {
  const entry = current();
  state.selected = null;
  shownResult = null;
  hideProblem();
  renderLine();
  if (!entry.sfen) {
    showCapture(entry);
    return;
  }
  let data = null;
  try {
    data = parseSfen(entry.sfen);
  } catch {
    // A FEN or a malformed position from a link: the server's answer decides.
  }
  renderBoard(data, entry.last);
  setVerdict({ category: '', dtw: '', source: '' }, 'Loading…');
  $('moves').replaceChildren();
  const sfen = entry.sfen;
  probe(sfen).then((result) => {
    if (current() !== entry) return;
    if (result.sfen !== entry.sfen) {
      // Canonical SFEN in the URL, whatever form the position came in.
      entry.sfen = result.sfen;
      saveHistory(false);
    }
    shownResult = result;
    renderBoard(parseSfen(result.sfen), entry.last);
    renderVerdict(result);
    renderMoves(result);
    if (state.replyPending) {
      state.replyPending = false;
      if (result.moves.length) setTimeout(() => current() === entry && play(result.moves[0], { byUser: false }), 300);
    }
  }, (error) => {
    if (error.name === 'AbortError' || current() !== entry) return;
    setVerdict({ category: '', dtw: '', source: '' }, 'No answer for this position');
    showProblem(error, sfen);
  });
}

/** The position just after a royal capture: the game is over. */
function showCapture(entry) {
  const data = parseSfen(entry.captured.before);
  const { from, to } = entry.last;
  const piece = data.board[from];
  data.board[to] = { ...piece, promoted: piece.promoted || entry.move.endsWith('+') };
  data.board[from] = null;
  data.toMove = entry.captured.winner === 'first' ? 'second' : 'first';
  renderBoard(data, entry.last);
  const winner = sideName(entry.captured.winner);
  const loser = sideName(data.toMove);
  setVerdict({ category: 'loss', dtw: '0', source: 'game' }, `${winner} captured the Royal: ${loser.toLowerCase()} has lost`);
  $('moves').replaceChildren();
}

const sideName = (side) => (side === 'first' ? 'First player' : 'Second player');

// ---------------------------------------------------------------- board

function renderBoard(data, last) {
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
  const editing = !!state.editor;
  const position = editing ? state.editor : data;
  const targets = new Set(editing ? [] : selectionTargets());
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
    button.addEventListener('click', () => (editing ? editSquare(i) : clickSquare(i)));
    return button;
  }));
  renderHands(position);
  const toMove = position?.toMove;
  $('turn').textContent = toMove ? `${sideName(toMove)} to move` : '';
  $('turn').dataset.side = toMove ?? '';
}

function pieceLabel(piece) {
  return `${piece.owner === 'first' ? 'first' : 'second'} player's ${piece.promoted ? 'promoted ' : ''}${PIECE_NAMES[piece.kind]}`;
}

function pieceElement(piece) {
  const span = document.createElement('span');
  const bottomOwner = state.flipped ? 'second' : 'first';
  span.className = `piece ${piece.owner} ${piece.owner === bottomOwner ? 'up' : 'down'}${piece.promoted ? ' promoted' : ''}`;
  span.textContent = piece.kind;
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
  const targets = state.editor ? null : dropsByKind();
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
    const canDrop = targets && position.toMove === owner && targets.has(kind);
    button.disabled = !state.editor && !canDrop;
    button.addEventListener('click', () => {
      if (state.editor) return; // the editor sets hands with its own counters
      state.selected = state.selected?.hand === kind ? null : { hand: kind };
      renderBoard(parseSfen(shownResult.sfen), current().last);
    });
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
  for (const move of shownResult?.moves ?? []) {
    const parsed = parseMove(move.move);
    if (parsed.drop) kinds.add(parsed.drop);
  }
  return kinds;
}

/** Moves of the shown position that start from the selection. */
function selectionMoves() {
  const selected = state.selected;
  if (!selected || !shownResult) return [];
  return shownResult.moves.filter((move) => {
    const parsed = parseMove(move.move);
    return selected.hand ? parsed.drop === selected.hand : parsed.from === selected.square;
  });
}

function selectionTargets() {
  return selectionMoves().map((move) => parseMove(move.move).to);
}

function clickSquare(i) {
  if (!shownResult) return;
  const move = selectionMoves().find((m) => parseMove(m.move).to === i);
  if (move) {
    play(move);
    return;
  }
  const fromHere = shownResult.moves.some((m) => parseMove(m.move).from === i);
  state.selected = fromHere && state.selected?.square !== i ? { square: i } : null;
  renderBoard(parseSfen(shownResult.sfen), current().last);
}

function highlightMove(move, on) {
  const parsed = parseMove(move);
  for (const element of $('board').children) {
    const i = squareIndex(element.dataset.square);
    element.classList.toggle('hover-from', on && i === parsed.from);
    element.classList.toggle('hover-to', on && i === parsed.to);
  }
}

// ---------------------------------------------------------------- verdict and moves

function setVerdict({ category, dtw, source, sfen = '' }, text, detail = '') {
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

const DTW_MEANING = 'Distance to win: plies (single moves of one player) until the Royal is captured '
  + 'when both play perfectly, the capturing move included. The winner takes the shortest way, the loser the longest.';

function renderVerdict(result) {
  const side = sideName(result.side_to_move);
  const plies = (n) => `${n} ${n === 1 ? 'ply' : 'plies'}`;
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
      : bounded ? `${proven}: the value is exact; the distance is only bounded (every shorter one was refuted, a forced Royal capture within the longer one was proven).`
      : `${proven}: exact, no shorter win exists.`;
  }
  const dtw = result.dtw == null ? '' : String(result.dtw);
  setVerdict({ category: result.category, dtw, source: result.source, sfen: result.sfen }, text, detail);
  const main = $('verdict').firstChild;
  main.title = DTW_MEANING;
}

const GROUPS = [
  ['win', 'Winning moves'],
  ['draw', 'Drawing moves'],
  ['unknown', 'Moves without a proven result'],
  ['loss', 'Losing moves'],
];

function moveValueText(move) {
  switch (move.category) {
    case 'win': return move.dtw == null ? `win in ${move.dtw_at_least}–${move.dtw_at_most}` : `win in ${move.dtw}`;
    case 'loss': return move.dtw == null ? `loss in ${move.dtw_at_least}–${move.dtw_at_most}` : `loss in ${move.dtw}`;
    case 'draw': return 'draw';
    default: return `no result within ${move.no_result_within}`;
  }
}

const BADGES = [
  ['royal_capture', 'Royal capture'],
  ['capture', 'capture'],
  ['drop', 'drop'],
  ['promotion', 'promotes'],
  ['jump', 'jump'],
];

function renderMoves(result) {
  const container = $('moves');
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
    section.append(heading);
    for (const move of moves) {
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
      row.append(notation, value, badges);
      row.setAttribute('aria-label', `${move.move}: ${moveValueText(move)}${[...badges.children].map((b) => `, ${b.textContent}`).join('')}`);
      row.addEventListener('click', () => play(move));
      row.addEventListener('mouseenter', () => highlightMove(move.move, true));
      row.addEventListener('mouseleave', () => highlightMove(move.move, false));
      row.addEventListener('focus', () => highlightMove(move.move, true));
      row.addEventListener('blur', () => highlightMove(move.move, false));
      section.append(row);
    }
    sections.push(section);
  }
  container.replaceChildren(...sections);
}

function renderLine() {
  const items = state.line.map((entry, i) => {
    const li = document.createElement('li');
    const button = document.createElement('button');
    button.type = 'button';
    button.dataset.ply = String(i);
    button.textContent = i === 0 ? 'start' : entry.move;
    if (i === state.index) button.setAttribute('aria-current', 'step');
    button.addEventListener('click', () => goTo(i));
    li.append(button);
    return li;
  });
  $('line').replaceChildren(...items);
  $('back').disabled = state.index === 0;
  $('forward').disabled = state.index >= state.line.length - 1;
}

// ---------------------------------------------------------------- problems

function hideProblem() {
  $('problem').hidden = true;
  $('problem').replaceChildren();
}

/** The server's problem, inline and precise: its title, its detail, and where in the text. */
function showProblem(error, text) {
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

// ---------------------------------------------------------------- the best line

let autoplay = null;

async function playLine() {
  if (autoplay) {
    stopAutoplay();
    return;
  }
  const start = current();
  if (!start?.sfen) return;
  let line;
  try {
    line = cache.get(`mainline ${start.sfen}`) ?? await api.mainline(start.sfen);
    remember(`mainline ${start.sfen}`, line);
  } catch (error) {
    showProblem(error, start.sfen);
    return;
  }
  if (!line.mainline.length || current() !== start) {
    if (!line.mainline.length) showProblem(new ProblemError({ title: 'No line to play', detail: line.category === 'draw' ? 'A drawn position has no line to a Royal capture.' : 'No win is proven here, so there is no line to play.' }, 200), null);
    return;
  }
  const steps = line.mainline;
  let k = 0;
  $('play-line').textContent = 'Stop';
  $('play-line').setAttribute('aria-pressed', 'true');
  const step = () => {
    const next = steps[k++];
    extendLine(next.move, next.sfen);
    autoplay = k < steps.length ? setTimeout(step, STEP_MS) : null;
    if (!autoplay) stopAutoplay();
  };
  autoplay = setTimeout(step, 0);
}

function stopAutoplay() {
  clearTimeout(autoplay);
  autoplay = null;
  $('play-line').textContent = 'Play best line';
  $('play-line').setAttribute('aria-pressed', 'false');
}

// ---------------------------------------------------------------- the editor

function openEditor() {
  stopAutoplay();
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

function closeEditor() {
  state.editor = null;
  $('editor').hidden = true;
  $('edit').setAttribute('aria-pressed', 'false');
  document.body.classList.remove('editing');
}

function renderEditor() {
  const editor = state.editor;
  const brushes = [];
  for (const owner of ['first', 'second']) {
    for (const kind of KINDS) {
      brushes.push({ owner, kind, promoted: false });
      if (kind !== 'K') brushes.push({ owner, kind, promoted: true });
    }
  }
  brushes.push(null);
  $('palette').replaceChildren(...brushes.map((brush) => {
    const button = document.createElement('button');
    button.type = 'button';
    button.className = 'brush';
    const active = brush === null ? editor.brush === null
      : editor.brush && editor.brush.owner === brush.owner && editor.brush.kind === brush.kind && editor.brush.promoted === brush.promoted;
    button.setAttribute('aria-pressed', active ? 'true' : 'false');
    if (brush) {
      button.dataset.brush = `${brush.owner}-${brush.promoted ? '+' : ''}${brush.kind}`;
      button.append(pieceElement(brush));
      button.setAttribute('aria-label', `Place ${pieceLabel(brush)}`);
    } else {
      button.dataset.brush = 'erase';
      button.textContent = 'Erase';
    }
    button.addEventListener('click', () => {
      editor.brush = brush;
      renderEditor();
    });
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
      minus.addEventListener('click', () => { editor.hands[owner][kind] = Math.max(0, editor.hands[owner][kind] - 1); renderEditor(); });
      const plus = document.createElement('button');
      plus.type = 'button';
      plus.textContent = '+';
      plus.setAttribute('aria-label', `One ${PIECE_NAMES[kind]} more in the ${owner} player's hand`);
      plus.dataset.action = 'plus';
      plus.addEventListener('click', () => { editor.hands[owner][kind] = Math.min(2, editor.hands[owner][kind] + 1); renderEditor(); });
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

function editSquare(i) {
  const editor = state.editor;
  const old = editor.board[i];
  const brush = editor.brush;
  const same = old && brush && old.owner === brush.owner && old.kind === brush.kind && old.promoted === brush.promoted;
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

async function finishEditing() {
  const sfen = toSfen(state.editor);
  hideProblem();
  try {
    const result = await api.probe(sfen);
    remember(result.sfen, result);
    closeEditor();
    startLine(result.sfen);
  } catch (error) {
    showProblem(error, sfen);
  }
}

// ---------------------------------------------------------------- copy

async function copy(text, what) {
  try {
    await navigator.clipboard.writeText(text);
  } catch {
    // Not a secure context (plain http to another host): copy through a selection.
    const area = document.createElement('textarea');
    area.value = text;
    document.body.append(area);
    area.select();
    document.execCommand('copy');
    area.remove();
  }
  $('copied').textContent = `Copied ${what}`;
  setTimeout(() => { $('copied').textContent = ''; }, 2000);
}

// ---------------------------------------------------------------- wiring

function wire() {
  $('new-game').addEventListener('click', () => startLine(START_SFEN));
  $('back').addEventListener('click', () => goTo(state.index - 1));
  $('forward').addEventListener('click', () => goTo(state.index + 1));
  $('best').addEventListener('click', playBest);
  $('play-line').addEventListener('click', playLine);
  $('flip').addEventListener('click', flip);
  $('edit').addEventListener('click', () => {
    if (!state.editor) {
      openEditor();
      return;
    }
    closeEditor();
    show();
  });
  $('editor-side').addEventListener('change', (e) => { state.editor.toMove = e.target.value; renderEditor(); });
  $('editor-clear').addEventListener('click', () => {
    Object.assign(state.editor, { board: new Array(16).fill(null), hands: { first: emptyHand(), second: emptyHand() } });
    renderEditor();
  });
  $('editor-start').addEventListener('click', () => { Object.assign(state.editor, parseSfen(START_SFEN)); renderEditor(); });
  $('editor-swap').addEventListener('click', swapColours);
  $('editor-mirror').addEventListener('click', mirror);
  $('editor-done').addEventListener('click', finishEditing);
  $('editor-cancel').addEventListener('click', () => { closeEditor(); show(); });
  $('pos-form').addEventListener('submit', async (event) => {
    event.preventDefault();
    const text = $('pos-input').value.trim();
    hideProblem();
    try {
      const result = await api.probe(text);
      remember(result.sfen, result);
      if (state.editor) closeEditor();
      startLine(result.sfen);
    } catch (error) {
      showProblem(error, text);
    }
  });
  $('copy-sfen').addEventListener('click', () => copy(shownResult?.sfen ?? current().sfen ?? '', 'SFEN'));
  $('copy-fen').addEventListener('click', () => copy(shownResult?.fen ?? '', 'FEN'));
  $('copy-link').addEventListener('click', () => copy(location.href, 'link'));
  document.addEventListener('keydown', (event) => {
    if (event.target.closest('input, select, textarea') || event.ctrlKey || event.metaKey || event.altKey) return;
    const actions = {
      ArrowLeft: () => goTo(state.index - 1),
      ArrowRight: () => goTo(state.index + 1),
      ' ': playBest,
      f: flip,
      Home: () => goTo(0),
    };
    const action = actions[event.key];
    if (!action || state.editor) return;
    // Space would also press the focused button; the page's meaning wins.
    event.preventDefault();
    action();
  });
  window.addEventListener('popstate', (event) => {
    if (event.state?.line) {
      stopAutoplay();
      if (state.editor) closeEditor();
      restore(event.state);
    } else {
      startFromUrl();
    }
  });
}

function flip() {
  state.flipped = !state.flipped;
  saveHistory(false);
  if (state.editor) renderEditor();
  else if (shownResult) renderBoard(parseSfen(shownResult.sfen), current().last);
  else show();
}

/** `pos` from the query, read raw: a `+` typed into a link is a promotion, never a space. */
function positionInUrl() {
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

/** Shows the line saved in a history entry (see `saveHistory`). */
function restore(saved) {
  state.line = saved.line;
  state.index = saved.index;
  state.flipped = !!saved.flipped;
  show();
}

function startFromUrl() {
  startLine(positionInUrl() ?? START_SFEN, false);
}

if (embed) document.body.classList.add('embed');
wire();
if (history.state?.line) {
  restore(history.state);
} else {
  startFromUrl();
}
