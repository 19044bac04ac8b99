// A line chart drawn as SVG: one series against time, with its maximum, the latest value and
// the elapsed time on the axis. Long series are reduced to at most MAX_POINTS (bucket maxima).

import { h, clock } from './dom.js';

const W = 340, H = 116, PAD_L = 4, PAD_R = 4, PAD_T = 16, PAD_B = 16;
const MAX_POINTS = 300;

function reduce(points) {
  if (points.length <= MAX_POINTS) return points;
  const size = points.length / MAX_POINTS, out = [];
  for (let i = 0; i < MAX_POINTS; i++) {
    const bucket = points.slice(Math.floor(i * size), Math.floor((i + 1) * size));
    out.push(bucket.reduce((a, b) => (b[1] > a[1] ? b : a)));
  }
  return out;
}

export class LineChart {
  constructor(title, color, format) {
    this.format = format;
    this.value = h('span', { className: 'chart-value' });
    this.area = h('svg:path', { fill: color, 'fill-opacity': '0.15', stroke: 'none' });
    this.line = h('svg:path', { fill: 'none', stroke: color, 'stroke-width': '2', 'vector-effect': 'non-scaling-stroke' });
    this.max = h('svg:text', { x: PAD_L + 2, y: 11, className: 'axis' });
    this.start = h('svg:text', { x: PAD_L, y: H - 4, className: 'axis' });
    this.end = h('svg:text', { x: W - PAD_R, y: H - 4, 'text-anchor': 'end', className: 'axis' });
    const grid = [0.25, 0.5, 0.75].map((f) => h('svg:line', {
      x1: PAD_L, x2: W - PAD_R, y1: PAD_T + f * (H - PAD_T - PAD_B), y2: PAD_T + f * (H - PAD_T - PAD_B), className: 'grid',
    }));
    const svg = h('svg:svg', { viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-label': title, className: 'chart' },
      grid, this.area, this.line, this.max, this.start, this.end);
    this.el = h('figure', { className: 'card chart-card' },
      h('figcaption', null, h('span', null, title), this.value), svg);
  }

  update(points) {
    const pts = reduce(points);
    if (!pts.length) { this.value.textContent = '–'; return; }
    const t0 = pts[0][0], t1 = Math.max(pts[pts.length - 1][0], t0 + 1);
    const top = Math.max(...pts.map((p) => p[1])) * 1.1 || 1;
    const x = (t) => PAD_L + (t - t0) / (t1 - t0) * (W - PAD_L - PAD_R);
    const y = (v) => H - PAD_B - v / top * (H - PAD_T - PAD_B);
    const d = pts.map((p, i) => `${i ? 'L' : 'M'}${x(p[0]).toFixed(1)},${y(p[1]).toFixed(1)}`).join('');
    this.line.setAttribute('d', d);
    this.area.setAttribute('d', `${d}L${x(pts[pts.length - 1][0]).toFixed(1)},${H - PAD_B}L${x(t0).toFixed(1)},${H - PAD_B}Z`);
    this.max.textContent = `max ${this.format(top / 1.1)}`;
    this.start.textContent = '0:00:00';
    this.end.textContent = `+${clock(t1 - t0)}`;
    this.value.textContent = this.format(points[points.length - 1][1]);
  }
}
