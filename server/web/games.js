// The tables page: every served table's statistics from GET /tables, with an SVG histogram.

import { Shogi4Client, positionParameter } from './shogi4.js';

const api = new Shogi4Client('');
const SVG = 'http://www.w3.org/2000/svg';

const percent = (part, whole) => (whole ? `${((100 * part) / whole).toFixed(1)}%` : '–');
const grouped = (n) => n.toLocaleString('en');

function bytes(n) {
  const units = ['B', 'kB', 'MB', 'GB', 'TB'];
  let i = 0;
  while (n >= 1000 && i < units.length - 1) {
    n /= 1000;
    i += 1;
  }
  return `${i ? n.toFixed(1) : n} ${units[i]}`;
}

function cell(text, className) {
  const td = document.createElement('td');
  if (text instanceof Node) td.append(text);
  else td.textContent = text;
  if (className) td.className = className;
  return td;
}

function explorerLink(sfen, text) {
  const a = document.createElement('a');
  a.href = `/?pos=${positionParameter(sfen)}`;
  a.textContent = text;
  return a;
}

function svg(name, attributes) {
  const element = document.createElementNS(SVG, name);
  for (const [key, value] of Object.entries(attributes)) element.setAttribute(key, String(value));
  return element;
}

/** Bars of positions per distance; wins and losses coloured apart. */
function histogram(table) {
  const counts = table.histogram;
  const width = 640;
  const height = 160;
  const left = 8;
  const bottom = 20;
  const top = 16;
  const highest = Math.max(1, ...counts);
  const bar = (width - left) / Math.max(1, counts.length);
  const chart = svg('svg', { viewBox: `0 0 ${width} ${height}`, class: 'histogram', role: 'img' });
  chart.setAttribute('aria-label', `${table.material}: positions by distance to win, 0 to ${counts.length - 1} plies; the most at one distance: ${grouped(highest)}`);
  chart.append(svg('line', { x1: left, x2: width, y1: height - bottom, y2: height - bottom }));
  counts.forEach((count, d) => {
    if (!count) return;
    const h = ((height - bottom - top) * count) / highest;
    const rect = svg('rect', {
      x: left + d * bar + 0.5, y: height - bottom - h, width: Math.max(1, bar - 1), height: h, class: d % 2 ? 'win' : 'loss',
    });
    const title = svg('title', {});
    title.textContent = `${d % 2 ? 'win' : 'loss'} in ${d}: ${grouped(count)} positions`;
    rect.append(title);
    chart.append(rect);
  });
  const step = Math.max(1, Math.ceil(counts.length / 12));
  for (let d = 0; d < counts.length; d += step) {
    const label = svg('text', { x: left + d * bar + bar / 2, y: height - 5, 'text-anchor': 'middle' });
    label.textContent = String(d);
    chart.append(label);
  }
  const peak = svg('text', { x: width, y: 11, 'text-anchor': 'end' });
  peak.textContent = `highest bar ${grouped(highest)}`;
  chart.append(peak);
  return chart;
}

async function main() {
  let answer;
  try {
    answer = await api.tables();
  } catch (error) {
    const box = document.getElementById('problem');
    box.textContent = `${error.title ?? 'Error'}: ${error.detail ?? error.message}`;
    box.hidden = false;
    return;
  }
  if (answer.solving?.length) {
    const note = document.getElementById('solving');
    note.textContent = `Still being solved: ${answer.solving.join(', ')}. Reload to see them join.`;
    note.hidden = false;
  }
  const rows = answer.tables.map((table) => {
    const tr = document.createElement('tr');
    tr.dataset.material = table.material;
    const name = document.createElement('a');
    name.href = `#histogram-${table.material}`;
    name.textContent = table.material;
    tr.append(
      cell(name),
      cell(grouped(table.positions)),
      cell(percent(table.wins, table.positions)),
      cell(percent(table.draws, table.positions)),
      cell(percent(table.losses, table.positions)),
      cell(table.longest_win ? explorerLink(table.longest_win.sfen, `${table.longest_win.dtw} ${table.longest_win.dtw === 1 ? "ply" : "plies"}`) : '–', 'longest'),
      cell(bytes(table.file_size)),
      cell(table.checksum, 'checksum'),
    );
    return tr;
  });
  document.querySelector('#games tbody').replaceChildren(...rows);
  document.getElementById('histograms').replaceChildren(...answer.tables.map((table) => {
    const card = document.createElement('section');
    card.className = 'game-card';
    card.id = `histogram-${table.material}`;
    const title = document.createElement('h3');
    title.textContent = table.material;
    const facts = document.createElement('p');
    facts.className = 'legend';
    facts.textContent = `${grouped(table.positions)} positions; longest distance ${table.max_dtw} plies`;
    card.append(title, facts, histogram(table));
    return card;
  }));
}

main();
