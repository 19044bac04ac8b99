// A tiny element builder and the number formats of the reports (1024-based sizes, H:MM:SS).

const SVG_NS = 'http://www.w3.org/2000/svg';

export function h(tag, props, ...kids) {
  const svg = tag.startsWith('svg:');
  const el = svg ? document.createElementNS(SVG_NS, tag.slice(4)) : document.createElement(tag);
  for (const [k, v] of Object.entries(props || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else if (k === 'text') el.textContent = v;
    else el.setAttribute(k === 'className' ? 'class' : k, v === true ? '' : v);
  }
  for (const kid of kids.flat()) {
    if (kid === undefined || kid === null || kid === false) continue;
    el.append(kid instanceof Node ? kid : String(kid));
  }
  return el;
}

export const dash = '–';

export function int(n) {
  return n === undefined || n === null ? dash : Math.round(n).toLocaleString('en-US');
}

export function num(n, digits = 1) {
  return n === undefined || n === null ? dash : Number(n).toFixed(digits);
}

const UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
export function bytes(n) {
  if (n === undefined || n === null) return dash;
  let v = n, p = 0;
  while (v >= 1024 && p < UNITS.length - 1) { v /= 1024; p++; }
  return `${v < 10 && p ? v.toFixed(1) : Math.round(v)} ${UNITS[p]}`;
}

export function clock(s) {
  if (s === undefined || s === null) return dash;
  s = Math.max(0, Math.round(s));
  const d = Math.floor(s / 86400), hh = Math.floor(s % 86400 / 3600);
  const mm = String(Math.floor(s % 3600 / 60)).padStart(2, '0');
  const ss = String(s % 60).padStart(2, '0');
  return `${d ? d + 'd ' : ''}${hh}:${mm}:${ss}`;
}

// An elapsed time: under a minute in seconds (a sample-site crawl takes less than one), else
// as clock() does.
export function duration(s) {
  return s !== undefined && s !== null && s < 60 ? `${num(s, s < 10 ? 1 : 0)} s` : clock(s);
}

export function badge(state) {
  return h('span', { className: `badge st-${String(state).toLowerCase()}`, text: state });
}

// A table from rows of cells; `cols` are header labels ("#" prefix = numeric column).
export function table(cols, rows, empty = 'none yet') {
  const head = h('tr', null, cols.map((c) => h('th', { className: c.startsWith('#') ? 'n' : null }, c.replace(/^#/, ''))));
  const body = rows.length
    ? rows.map((r) => h('tr', null, r.map((cell, i) => h('td', { className: cols[i].startsWith('#') ? 'n' : null }, cell))))
    : [h('tr', null, h('td', { colspan: cols.length, className: 'muted' }, empty))];
  return h('table', null, h('thead', null, head), h('tbody', null, body));
}

export function bar(fraction) {
  const fill = h('span');
  fill.style.width = `${Math.max(0, Math.min(1, fraction)) * 100}%`;
  return h('span', { className: 'minibar' }, fill);
}
