// The web explorer in a real browser: Debian's Chromium, headless, driven by playwright-core.
// Every check compares the page with the API it is built on, asked directly.
//
// Run by scripts/browser-tests.sh, which provides:
//   SHOGI4_SERVER_BIN  the shogi4-server binary
//   SHOGI4_TABLES      a table directory (the server solves what is missing of the 2-piece set)
//   SHOGI4_ARTIFACTS   where screenshots go
//   CHROMIUM           the browser (default /usr/bin/chromium)

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, openSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';

const ARTIFACTS = process.env.SHOGI4_ARTIFACTS ?? 'target/browser';
const KKC_WIN = 'k3/4/4/K3 b C 1';
const START = 'trfk/3c/C3/KFRT b - 1';
const underscored = (sfen) => sfen.replaceAll(' ', '_');

let server;
let origin;
let browser;
const foreign = [];

function startServer() {
  const bin = process.env.SHOGI4_SERVER_BIN;
  const tables = process.env.SHOGI4_TABLES;
  assert.ok(bin && tables, 'SHOGI4_SERVER_BIN and SHOGI4_TABLES must be set (scripts/browser-tests.sh does)');
  const child = spawn(bin, [
    '--bind', '127.0.0.1:0', '--tables', tables, '--solve-missing', '2',
    '--proof-store', join(mkdtempSync(join(tmpdir(), 'shogi4-browser-')), 'proofs.redb'),
  ], { stdio: ['ignore', 'pipe', openSync(join(ARTIFACTS, 'server.log'), 'w')] });
  return new Promise((resolve, reject) => {
    let output = '';
    child.on('exit', (code) => reject(new Error(`server exited with ${code}: ${output}`)));
    child.stdout.on('data', (chunk) => {
      output += chunk;
      const found = output.match(/listening on (http:\/\/[0-9.]+:\d+)/);
      if (found) resolve({ child, origin: found[1] });
    });
  });
}

async function api(path, init) {
  const response = await fetch(origin + path, init);
  return { status: response.status, body: await response.json() };
}

const probe = async (sfen) => (await api(`/probe?pos=${encodeURIComponent(sfen)}`)).body;

before(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  server = await startServer();
  origin = server.origin;
  // Ready once the 2-piece tables are solved.
  for (let i = 0; ; i++) {
    const health = await fetch(`${origin}/health`);
    if (health.status === 200) break;
    assert.ok(i < 600, 'the server was not ready within 5 minutes');
    await new Promise((r) => setTimeout(r, 500));
  }
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync'],
  });
});

after(async () => {
  await browser?.close();
  server?.child.kill();
});

/** A fresh page (its own context, so no shared history or cache) that records every request. */
async function open(path, { width = 1100, height = 900, colorScheme = 'light' } = {}) {
  const context = await browser.newContext({ viewport: { width, height }, colorScheme });
  const page = await context.newPage();
  const requests = [];
  page.on('request', (request) => {
    requests.push(request.url());
    if (new URL(request.url()).origin !== origin) foreign.push(request.url());
  });
  const errors = [];
  page.on('pageerror', (error) => errors.push(error));
  page.requests = requests;
  page.errors = errors;
  await page.goto(origin + path);
  return page;
}

/** Waits until the verdict describes `sfen`, and returns the page's verdict and move rows. */
async function shown(page, sfen) {
  await page.waitForSelector(`#verdict[data-sfen="${sfen}"]`);
  return page.evaluate(() => {
    const verdict = document.getElementById('verdict');
    return {
      category: verdict.dataset.category,
      dtw: verdict.dataset.dtw,
      source: verdict.dataset.source,
      text: verdict.textContent,
      moves: [...document.querySelectorAll('[data-move]')].map((row) => ({
        move: row.dataset.move, category: row.dataset.category, dtw: row.dataset.dtw,
      })),
    };
  });
}

const expectedRows = (result) => result.moves.map((m) => ({ move: m.move, category: m.category, dtw: m.dtw == null ? '' : String(m.dtw) }));
const posParameter = (page) => new URL(page.url()).searchParams.get('pos');

/** The piece on a square, as the board's accessible label says it. */
const squareLabel = (page, square) => page.getAttribute(`[data-square="${square}"]`, 'aria-label');

test('a position shows the verdict and the moves GET /probe gives, best first', async () => {
  // The last one has a bare `+` in its link: the page reads it as a promotion, not a space.
  for (const sfen of [KKC_WIN, 'k3/4/4/K2C w - 1', '1k2/4/4/K2C b - 1', 'k3/1+F2/4/K3 w - 1']) {
    const page = await open(`/?pos=${underscored(sfen)}`);
    const expected = await probe(sfen);
    const seen = await shown(page, expected.sfen);
    assert.equal(seen.category, expected.category, sfen);
    assert.equal(seen.dtw, expected.dtw == null ? '' : String(expected.dtw), sfen);
    assert.equal(seen.source, 'table');
    assert.deepEqual(seen.moves, expectedRows(expected), sfen);
    const words = { win: 'wins in', loss: 'loses in', draw: 'Draw' }[expected.category];
    assert.ok(seen.text.includes(words) || (expected.dtw <= 1), `${sfen}: "${seen.text}"`);
    if (expected.dtw > 1) assert.ok(seen.text.includes(`${expected.dtw} plies`), seen.text);
    assert.deepEqual(page.errors, []);
    await page.context().close();
  }
});

test('a FEN in the URL is rewritten to the canonical SFEN', async () => {
  const page = await open('/?pos=k3/4/4/K3%5BC%5D_w_0_1');
  await shown(page, KKC_WIN);
  assert.equal(posParameter(page), underscored(KKC_WIN));
  await page.context().close();
});

test('the start position is answered by search, and New game returns to it', async () => {
  const page = await open('/?pos=k3/4/4/K3_b_C_1');
  await shown(page, KKC_WIN);
  await page.click('#new-game');
  const seen = await shown(page, START);
  assert.equal(seen.source, 'search');
  assert.ok(['win', 'loss', 'unknown'].includes(seen.category), seen.category);
  const expected = await probe(START);
  assert.deepEqual(seen.moves.map((m) => m.move).sort(), expected.moves.map((m) => m.move).sort());
  if (seen.category === 'unknown') assert.match(seen.text, /no forced result within \d+ plies/);
  assert.equal(posParameter(page), underscored(START));
  await page.context().close();
});

test('a value proven with distance bounds is shown as proven, with its range', async () => {
  // A real-game position whose win the search proves within a deep bound long before it
  // finds the exact distance; the first probe leaves the range in the proof store, so the
  // page's own answer is at least as good.
  const sfen = '+C1fk/4/1r1c/KF1T b RT 1';
  const first = await probe(sfen);
  const page = await open(`/?pos=${encodeURIComponent(sfen)}`);
  const seen = await shown(page, sfen);
  if (first.category === 'win') assert.equal(seen.category, 'win', 'a proven value stays proven');
  if (seen.category === 'win' && seen.dtw === '') {
    assert.match(seen.text, /First player to move wins: proven; the win takes at most \d+ plies and at least \d+ plies/);
    assert.match(seen.text, /the distance is only bounded/);
  }
  const rows = await page.evaluate(() => [...document.querySelectorAll('[data-move] .value')].map((v) => v.textContent));
  assert.ok(rows.length > 0);
  for (const text of rows) assert.match(text, /^(win in \d+(–\d+)?|loss in \d+(–\d+)?|no result within \d+)$/, text);
  assert.deepEqual(page.errors, []);
  await page.context().close();
});

test('a position a published certificate proves says so, naming the certificate', async () => {
  // scripts/browser-tests.sh puts tables/certificates/a2a3.s4cert beside the tables; the
  // server checks it in the background after it listens.
  const sfen = 'trfk/C2c/4/KFRT w - 1';
  let expected = await probe(sfen);
  for (let i = 0; expected.source !== 'certificate'; i++) {
    assert.ok(i < 100, `never answered from the certificate: ${JSON.stringify(expected)}`);
    await new Promise((r) => setTimeout(r, 200));
    expected = await probe(sfen);
  }
  const page = await open(`/?pos=${underscored(sfen)}`);
  const seen = await shown(page, sfen);
  assert.equal(seen.source, 'certificate');
  assert.equal(seen.category, expected.category);
  assert.match(seen.text, /Second player to move wins/);
  assert.match(seen.text, /Proven by the published certificate a2a3\.s4cert \(checked by the rules alone/);
  assert.deepEqual(page.errors, []);
  await page.context().close();
});

test('a draw proven by search is shown as a draw, with how it was proven', async () => {
  // A closed game without a table here (KKFRT; the server holds the 2-piece set), whose
  // search refutes both sides' wins by defeats and repetitions within a few thousand nodes.
  const sfen = '4/K3/rT1F/k3 b - 1';
  const answer = await probe(sfen);
  assert.equal(answer.category, 'draw');
  assert.equal(answer.source, 'search');
  const page = await open(`/?pos=${encodeURIComponent(sfen)}`);
  const seen = await shown(page, sfen);
  assert.equal(seen.category, 'draw');
  assert.match(seen.text, /Draw: neither player can force a Royal capture/);
  assert.match(seen.text, /ends in its own defeat or in a repeated position/);
  assert.deepEqual(page.errors, []);
  await page.context().close();
});

test('clicking a move plays it, and back restores the position', async () => {
  const page = await open(`/?pos=${underscored(KKC_WIN)}`);
  const before = await probe(KKC_WIN);
  await shown(page, KKC_WIN);
  const best = before.moves[0];
  await page.click(`[data-move="${best.move}"]`);
  const after = await probe(best.sfen);
  const seen = await shown(page, best.sfen);
  assert.equal(posParameter(page), underscored(best.sfen));
  assert.equal(seen.category, after.category);
  assert.deepEqual(seen.moves, expectedRows(after));
  assert.match(await squareLabel(page, 'b2'), /first player's Royal/);
  assert.match(await squareLabel(page, 'a1'), /empty/);
  await page.goBack();
  const restored = await shown(page, KKC_WIN);
  assert.equal(posParameter(page), underscored(KKC_WIN));
  assert.deepEqual(restored.moves, expectedRows(before));
  assert.match(await squareLabel(page, 'a1'), /first player's Royal/);
  await page.goForward();
  await shown(page, best.sfen);
  await page.context().close();
});

test('the board plays by clicks: a piece then its target, a hand piece then an empty square', async () => {
  const page = await open(`/?pos=${underscored(KKC_WIN)}`);
  const moves = (await probe(KKC_WIN)).moves;
  await shown(page, KKC_WIN);
  // A drop: the Carp in the first player's hand, then c2.
  await page.click('#hand-bottom [data-hand-kind="C"]');
  const targets = await page.$$eval('.square.target', (squares) => squares.map((s) => s.dataset.square).sort());
  const drops = moves.filter((m) => m.move.startsWith('C@')).map((m) => m.move.slice(2)).sort();
  assert.deepEqual(targets, drops, 'the targets are exactly the legal drops');
  await page.click('[data-square="c2"]');
  const drop = moves.find((m) => m.move === 'C@c2');
  await shown(page, drop.sfen);
  assert.equal(posParameter(page), underscored(drop.sfen));
  assert.match(await squareLabel(page, 'c2'), /first player's Carp/);
  // A board move: the second player's Royal from a4 to b4.
  const reply = (await probe(drop.sfen)).moves.find((m) => m.move === 'a4b4');
  await page.click('[data-square="a4"]');
  await page.click('[data-square="b4"]');
  await shown(page, reply.sfen);
  assert.match(await squareLabel(page, 'b4'), /second player's Royal/);
  await page.context().close();
});

test('keys: space plays the best move, left goes back, Home returns to the start, f flips', async () => {
  const page = await open(`/?pos=${underscored(KKC_WIN)}`);
  const first = (await probe(KKC_WIN)).moves[0];
  await shown(page, KKC_WIN);
  await page.keyboard.press('Space');
  await shown(page, first.sfen);
  const second = (await probe(first.sfen)).moves[0];
  await page.keyboard.press('Space');
  await shown(page, second.sfen);
  await page.keyboard.press('ArrowLeft');
  await shown(page, first.sfen);
  await page.keyboard.press('ArrowRight');
  await shown(page, second.sfen);
  await page.keyboard.press('Home');
  await shown(page, KKC_WIN);
  const topLeft = () => page.$eval('#board .square', (s) => s.dataset.square);
  assert.equal(await topLeft(), 'a4');
  await page.keyboard.press('f');
  assert.equal(await topLeft(), 'd1');
  assert.equal(await page.getAttribute('#hand-bottom', 'data-owner'), 'second');
  await page.context().close();
});

test('hovering a move marks its squares; against the tablebase, the best reply follows', async () => {
  const page = await open(`/?pos=${underscored(KKC_WIN)}`);
  await shown(page, KKC_WIN);
  await page.hover('[data-move="a1b2"]');
  assert.equal(await page.getAttribute('[data-square="a1"]', 'class').then((c) => c.includes('hover-from')), true);
  assert.equal(await page.getAttribute('[data-square="b2"]', 'class').then((c) => c.includes('hover-to')), true);
  await page.check('#auto-reply');
  const mine = (await probe(KKC_WIN)).moves.find((m) => m.move === 'a1a2');
  const reply = (await probe(mine.sfen)).moves[0];
  await page.click('[data-move="a1a2"]');
  await shown(page, reply.sfen);
  const played = await page.$$eval('#line button', (buttons) => buttons.slice(1).map((b) => b.textContent));
  assert.deepEqual(played, ['a1a2', reply.move]);
  await page.context().close();
});

test('an unproven position shows the engine\'s estimate apart from the verdict, its move marked', async () => {
  const page = await open(`/?pos=${underscored(START)}`);
  const seen = await shown(page, START);
  assert.equal(seen.category, 'unknown', 'the start is not proven within the budget');
  await page.waitForSelector('#estimate:not([hidden])');
  const estimate = await page.evaluate(() => {
    const box = document.getElementById('estimate');
    return { best: box.dataset.bestMove, expected: Number(box.dataset.expectedScore), text: box.textContent };
  });
  assert.ok(seen.moves.some((m) => m.move === estimate.best), estimate.best);
  assert.ok(estimate.expected >= 0 && estimate.expected <= 1, String(estimate.expected));
  assert.match(estimate.text, /Not proven/);
  const marked = await page.$$eval('[data-engine-best="1"]', (rows) => rows.map((r) => r.dataset.move));
  assert.deepEqual(marked, [estimate.best]);
  // The verdict itself still says what is proven, and nothing more.
  assert.match(seen.text, /no forced result within \d+ plies/);
  // A proven answer has no estimate.
  await page.goto(`${origin}/?pos=${underscored(KKC_WIN)}`);
  await shown(page, KKC_WIN);
  assert.equal(await page.$eval('#estimate', (box) => box.hidden), true);
  assert.deepEqual(page.errors, []);
  await page.context().close();
});

test('each piece carries a mark toward every step it takes, and its name on hover', async () => {
  const page = await open(`/?pos=${underscored(START)}`);
  await shown(page, START);
  const piece = (square) => page.$eval(`[data-square="${square}"] .piece`, (p) => ({
    title: p.title, marks: p.querySelector('svg.marks').dataset.marks.split(' ').sort().join(' '),
  }));
  assert.deepEqual(await piece('a1'), { title: 'First player\'s Royal', marks: 'B BL BR F FL FR L R' });
  assert.deepEqual(await piece('c1'), { title: 'First player\'s Raccoon-dog', marks: 'BL BR FL FR' });
  assert.deepEqual(await piece('d3'), { title: 'Second player\'s Carp', marks: 'F' });
  assert.deepEqual(await piece('a4'), { title: 'Second player\'s Tapir', marks: 'F FL FR' });
  const promoted = await open('/?pos=k3/1%2BF2/4/K3_w_-_1');
  await shown(promoted, 'k3/1+F2/4/K3 w - 1');
  assert.deepEqual(await promoted.$eval('[data-square="b3"] .piece', (p) => ({
    title: p.title, marks: p.querySelector('svg.marks').dataset.marks.split(' ').sort().join(' '),
  })), { title: 'First player\'s Kitsune (promoted Fox)', marks: 'B F FL FR L R' });
  await promoted.context().close();
  await page.context().close();
});

test('a whole game against the engine, from the start to a royal capture', async () => {
  const page = await open(`/?pos=${underscored(START)}`);
  await shown(page, START);
  await page.check('#auto-reply');
  // The person plays the last move listed (the worst known) each turn; the engine answers.
  for (let turn = 0; ; turn++) {
    assert.ok(turn < 60, 'the game ended within 60 moves of each side');
    await page.waitForFunction(() => {
      const verdict = document.getElementById('verdict');
      const side = document.getElementById('turn').dataset.side;
      return verdict.dataset.source === 'game'
        || (side === 'first' && verdict.dataset.category !== '' && document.querySelector('[data-move]'));
    }, null, { timeout: 30_000 });
    if (await page.getAttribute('#verdict', 'data-source') === 'game') break;
    const moves = await page.$$eval('[data-move]', (rows) => rows.map((r) => r.dataset.move));
    await page.click(`[data-move="${moves.at(-1)}"]`);
    await page.waitForFunction(() => document.getElementById('turn').dataset.side !== 'first'
      || document.getElementById('verdict').dataset.source === 'game');
  }
  const verdict = await page.textContent('#verdict');
  assert.match(verdict, /Second player captured the Royal/);
  const played = await page.$$eval('#line button', (buttons) => buttons.length - 1);
  assert.ok(played >= 2 && played % 2 === 0, `${played} plies, the engine's capture last`);
  await page.screenshot({ path: join(ARTIFACTS, 'game-against-the-engine.png') });
  assert.deepEqual(page.errors, []);
  await page.context().close();
});

test('copy buttons put the SFEN, the FEN and the link on the clipboard', async () => {
  const page = await open(`/?pos=${underscored(KKC_WIN)}`);
  await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin });
  const expected = await probe(KKC_WIN);
  await shown(page, KKC_WIN);
  const clipboard = () => page.evaluate(() => navigator.clipboard.readText());
  await page.click('#copy-sfen');
  assert.equal(await clipboard(), expected.sfen);
  await page.click('#copy-fen');
  assert.equal(await clipboard(), expected.fen);
  await page.click('#copy-link');
  assert.equal(await clipboard(), page.url());
  assert.match(await page.textContent('#copied'), /Copied link/);
  await page.context().close();
});

test('the editor builds the expected SFEN, and its position is analysed', async () => {
  const page = await open(`/?pos=${underscored(KKC_WIN)}`);
  await shown(page, KKC_WIN);
  await page.click('#edit');
  await page.click('#editor-clear');
  await page.click('[data-brush="first-K"]');
  await page.click('[data-square="b1"]');
  await page.click('[data-brush="second-K"]');
  await page.click('[data-square="d4"]');
  await page.click('[data-brush="second-+F"]');
  await page.click('[data-square="c2"]');
  await page.click('.editor-hand[data-owner="first"] .hand-count[data-kind="T"] [data-action="plus"]');
  await page.selectOption('#editor-side', 'second');
  assert.equal(await page.textContent('#editor-sfen'), '3k/4/2+f1/1K2 w T 1');
  await page.click('#editor-mirror');
  assert.equal(await page.textContent('#editor-sfen'), 'k3/4/1+f2/2K1 w T 1');
  await page.click('#editor-swap');
  assert.equal(await page.textContent('#editor-sfen'), '1k2/2+F1/4/3K b t 1');
  await page.click('#editor-done');
  const expected = await probe('1k2/2+F1/4/3K b t 1');
  const seen = await shown(page, expected.sfen);
  assert.equal(seen.category, expected.category);
  assert.equal(posParameter(page), underscored(expected.sfen));
  // An illegal position stays in the editor, with the server's reason.
  await page.click('#edit');
  await page.click('#editor-clear');
  await page.click('#editor-done');
  await page.waitForSelector('#problem:not([hidden])');
  const refusal = await api(`/probe?pos=${encodeURIComponent('4/4/4/4 b - 1')}`);
  assert.equal(refusal.status, 422);
  assert.ok((await page.textContent('#problem')).includes(refusal.body.detail));
  assert.equal(await page.isVisible('#editor'), true);
  await page.context().close();
});

test('a bad position shows the server\'s problem inline, with the character', async () => {
  const page = await open(`/?pos=${underscored(KKC_WIN)}`);
  await shown(page, KKC_WIN);
  const bad = 'k3/4/4/K3 b Cx 1';
  await page.fill('#pos-input', bad);
  await page.click('#pos-form button[type="submit"]');
  await page.waitForSelector('#problem:not([hidden])');
  const refusal = await api(`/probe?pos=${encodeURIComponent(bad)}`);
  assert.equal(refusal.status, 400);
  const text = await page.textContent('#problem');
  assert.ok(text.includes(refusal.body.title) && text.includes(refusal.body.detail), text);
  assert.ok(text.includes(`${' '.repeat(refusal.body.offset)}^ character ${refusal.body.offset + 1}`), text);
  assert.equal(await page.getAttribute('#problem', 'data-status'), '400');
  // The page still shows the position it had.
  assert.equal(posParameter(page), underscored(KKC_WIN));
  await page.context().close();
});

test('the best line plays to the royal capture in exactly dtw plies, fetching the line once', async () => {
  const page = await open(`/?pos=${underscored(KKC_WIN)}`);
  const seen = await shown(page, KKC_WIN);
  const dtw = Number(seen.dtw);
  const line = (await api(`/mainline?pos=${encodeURIComponent(KKC_WIN)}`)).body.mainline;
  assert.equal(line.length, dtw);
  await page.click('#play-line');
  await page.waitForSelector('#verdict[data-source="game"]', { timeout: 30000 });
  assert.equal(await page.getAttribute('#verdict', 'data-dtw'), '0');
  assert.match(await page.textContent('#verdict'), /First player captured the Royal/);
  // The board after the capture is the one the API describes: the capturing piece on the
  // royal's square, its own square empty.
  const capture = line[line.length - 1];
  assert.match(capture.after_capture, / w /, 'the royal capture comes with the board after it');
  const [from, to] = [capture.move.slice(0, 2), capture.move.slice(2, 4)];
  assert.match(await page.getAttribute(`#board [data-square="${to}"]`, 'aria-label'), /first player's/);
  assert.match(await page.getAttribute(`#board [data-square="${from}"]`, 'aria-label'), /empty/);
  const played = await page.$$eval('#line button', (buttons) => buttons.slice(1).map((b) => b.textContent));
  assert.deepEqual(played, line.map((step) => step.move));
  const calls = page.requests.filter((url) => url.includes('/mainline'));
  assert.equal(calls.length, 1, 'the line is fetched once');
  const probes = page.requests.filter((url) => url.includes('/probe'));
  assert.ok(probes.length <= dtw + 1, `${probes.length} probes for ${dtw} plies`);
  await page.keyboard.press('Home');
  await shown(page, KKC_WIN);
  await page.context().close();
});

test('the tables page shows every table, and each longest win opens at that distance', async () => {
  const page = await open('/games');
  const { tables } = (await api('/tables')).body;
  await page.waitForSelector(`#games tbody tr[data-material="${tables.at(-1).material}"]`);
  assert.equal(await page.$$eval('#games tbody tr', (rows) => rows.length), tables.length);
  assert.equal(await page.$$eval('svg.histogram', (charts) => charts.length), tables.length);
  const kkc = tables.find((t) => t.material === 'KKC');
  const bars = await page.$$eval('#histogram-KKC rect', (rects) => rects.length);
  assert.equal(bars, kkc.histogram.filter((n) => n > 0).length);
  await page.click('tr[data-material="KKC"] td.longest a');
  const seen = await shown(page, kkc.longest_win.sfen);
  assert.equal(seen.category, 'win');
  assert.equal(seen.dtw, String(kkc.longest_win.dtw));
  await page.context().close();
});

test('embed=1 shows the board and the moves alone', async () => {
  const page = await open(`/?pos=${underscored(KKC_WIN)}&embed=1`);
  const seen = await shown(page, KKC_WIN);
  assert.ok(seen.moves.length > 0);
  assert.equal(await page.isVisible('header.site'), false);
  assert.equal(await page.isVisible('#pos-form'), false);
  assert.equal(await page.isVisible('#board'), true);
  await page.click(`[data-move="${seen.moves[0].move}"]`);
  await page.waitForURL(/embed=1/);
  await page.context().close();
});

test('a 360 px phone gets one column and no sideways scrolling; screenshots', async () => {
  for (const [name, options] of [
    ['explorer-360', { width: 360, height: 900 }],
    ['explorer-360-dark', { width: 360, height: 900, colorScheme: 'dark' }],
    ['explorer-desktop', { width: 1100, height: 760 }],
  ]) {
    // The desktop picture shows a real game: the start position, answered by search.
    const sfen = name === 'explorer-desktop' ? START : KKC_WIN;
    const page = await open(`/?pos=${underscored(sfen)}`, options);
    await shown(page, sfen);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(overflow <= 0, `${name}: ${overflow} px wider than the screen`);
    if (options.width === 360) {
      const [board, info] = await Promise.all([page.$eval('.board-panel', (e) => e.getBoundingClientRect().top),
        page.$eval('.info-panel', (e) => e.getBoundingClientRect().top)]);
      assert.ok(info > board, 'the values come below the board');
    }
    await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: options.width === 360 });
    await page.context().close();
  }
  const games = await open('/games', { width: 1100, height: 900 });
  await games.waitForSelector('svg.histogram');
  await games.screenshot({ path: join(ARTIFACTS, 'tables.png') });
  await games.context().close();
});

test('the about page publishes the limits, and robots.txt keeps crawlers off the API', async () => {
  const page = await open('/about');
  const text = await page.textContent('main');
  assert.match(text, /tokens per second/);
  assert.match(text, /Positions per batch\s*100/);
  const robots = await (await fetch(`${origin}/robots.txt`)).text();
  for (const path of ['/probe', '/mainline', '/?pos=']) assert.ok(robots.includes(`Disallow: ${path}`), path);
  await page.context().close();
});

test('no page asked another host for anything', () => {
  assert.deepEqual(foreign, []);
});
