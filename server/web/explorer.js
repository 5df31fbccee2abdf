// The explorer page: a board, the value of the position and of every move, a line to play
// through, and a position editor. Every value, every legal move and the board after a royal
// capture come from the API (see shogi4.js); the page knows notation, not rules. This module
// shows a position and wires the page; the others draw its parts:
// - state.js: what is shown;           - probe.js: the server, cached and debounced;
// - line.js: the line played, the URL; - board.js: the board and the hands;
// - verdict.js: the value, problems;   - moves.js: the moves and the line;
// - editor.js: the position editor.

import { ProblemError, START_SFEN, parseSfen } from './shogi4.js';
import { $, state, current, embed, sideName } from './state.js';
import { probe, probeNow, mainline } from './probe.js';
import { extendLine, moveTo, newLine, positionInUrl, restoreLine, saveHistory } from './line.js';
import { bindBoard, redrawShown, renderBoard } from './board.js';
import { hideProblem, preferredMove, renderEstimate, renderVerdict, setVerdict, showProblem } from './verdict.js';
import { bindMoves, renderLine, renderMoves } from './moves.js';
import { bindEditor, closeEditor, editSquare, editorSfen, openEditor, renderEditor } from './editor.js';

/** One ply every this many milliseconds when playing the best line. */
const STEP_MS = 450;

// ---------------------------------------------------------------- showing a position

function show() {
  const entry = current();
  state.selected = null;
  state.shown = null;
  hideProblem();
  renderEstimate({});
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
    state.shown = result;
    redrawShown();
    renderVerdict(result);
    renderEstimate(result);
    renderMoves(result);
    if (state.replyPending) {
      state.replyPending = false;
      const reply = preferredMove(result);
      if (reply) setTimeout(() => current() === entry && play(reply, { byUser: false }), 300);
    }
  }, (error) => {
    if (error.name === 'AbortError' || current() !== entry) return;
    setVerdict({ category: '', dtw: '', source: '' }, 'No answer for this position');
    showProblem(error, sfen);
  });
}

/** The position just after a royal capture, as the API described it: the game is over. */
function showCapture(entry) {
  const data = parseSfen(entry.captured.after);
  renderBoard(data, entry.last);
  const winner = sideName(entry.captured.winner);
  const loser = sideName(data.toMove);
  setVerdict({ category: 'loss', dtw: '0', source: 'game' }, `${winner} captured the Royal: ${loser.toLowerCase()} has lost`);
  $('moves').replaceChildren();
}

// ---------------------------------------------------------------- moving along the line

function startLine(sfen, push = true) {
  stopAutoplay();
  newLine(sfen, push);
  show();
}

function goTo(index) {
  if (moveTo(index)) show();
}

/** Plays a move of the current position's list (an entry of `moves` in the probe). */
function play(move, { byUser = true } = {}) {
  if (!current()?.sfen) return;
  if (byUser) stopAutoplay();
  state.replyPending = byUser && $('auto-reply').checked;
  extendLine(move);
  show();
}

function playBest() {
  const move = state.shown && preferredMove(state.shown);
  if (move) play(move);
}

/** Plays the line of best play, one ply every `STEP_MS`; pressed again, stops. */
async function playLine() {
  if (state.autoplay) {
    stopAutoplay();
    return;
  }
  const start = current();
  if (!start?.sfen) return;
  let line;
  try {
    line = await mainline(start.sfen);
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
    extendLine(steps[k++]);
    show();
    state.autoplay = k < steps.length ? setTimeout(step, STEP_MS) : null;
    if (!state.autoplay) stopAutoplay();
  };
  state.autoplay = setTimeout(step, 0);
}

function stopAutoplay() {
  clearTimeout(state.autoplay);
  state.autoplay = null;
  $('play-line').textContent = 'Play best line';
  $('play-line').setAttribute('aria-pressed', 'false');
}

function flip() {
  state.flipped = !state.flipped;
  saveHistory(false);
  if (state.editor) renderEditor();
  else if (state.shown) redrawShown();
  else show();
}

// ---------------------------------------------------------------- the editor and the form

/** Analyses `text` (the editor's SFEN, the form's input) and starts a line there. */
async function analyse(text) {
  hideProblem();
  try {
    const result = await probeNow(text);
    if (state.editor) closeEditor();
    startLine(result.sfen);
  } catch (error) {
    showProblem(error, text);
  }
}

function toggleEditor() {
  if (!state.editor) {
    stopAutoplay();
    openEditor();
    return;
  }
  closeEditor();
  show();
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
  bindBoard({ play, edit: editSquare });
  bindMoves({ play, goTo });
  bindEditor({ done: () => analyse(editorSfen()), cancel: () => { closeEditor(); show(); } });
  $('new-game').addEventListener('click', () => startLine(START_SFEN));
  $('back').addEventListener('click', () => goTo(state.index - 1));
  $('forward').addEventListener('click', () => goTo(state.index + 1));
  $('best').addEventListener('click', playBest);
  $('play-line').addEventListener('click', playLine);
  $('flip').addEventListener('click', flip);
  $('edit').addEventListener('click', toggleEditor);
  $('pos-form').addEventListener('submit', (event) => {
    event.preventDefault();
    analyse($('pos-input').value.trim());
  });
  $('copy-sfen').addEventListener('click', () => copy(state.shown?.sfen ?? current().sfen ?? '', 'SFEN'));
  $('copy-fen').addEventListener('click', () => copy(state.shown?.fen ?? '', 'FEN'));
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
    stopAutoplay();
    if (state.editor) closeEditor();
    if (event.state?.line) {
      restoreLine(event.state);
      show();
    } else {
      startLine(positionInUrl() ?? START_SFEN, false);
    }
  });
}

if (embed) document.body.classList.add('embed');
wire();
if (history.state?.line) {
  restoreLine(history.state);
  show();
} else {
  startLine(positionInUrl() ?? START_SFEN, false);
}
