// One run, live: state and counters, progress and ETA, rate and queue charts, queues, busiest
// hosts, response codes and MIME types, alerts, a followed log with a filter, the reports, what
// changed since the earlier crawl (a recrawl's change report), and the steering buttons (the same verbs as `crawler pause|unpause|terminate|block`).

import { api, runPath, ApiError } from './api.js';
import { h, int, num, bytes, clock, duration, badge, table, bar } from './dom.js';
import { LineChart } from './chart.js';
import { poll } from './poller.js';

const LIVE = new Set(['PREPARING', 'RUNNING', 'PAUSING', 'PAUSED', 'STOPPING', 'LAUNCHING']);
const LOG_LINES = 200;
const COUNTERS = [
  ['elapsed', 'Elapsed'], ['discovered', 'Discovered'], ['queued', 'Queued'],
  ['downloaded', 'Downloaded'], ['failed', 'Failed'], ['uris', 'URIs/s (avg)'],
  ['kb', 'KB/s (avg)'], ['threads', 'Busy threads'], ['bytes', 'Data'],
];

function counters(doc, run) {
  const s = doc || {}, r = s.rates || {}, t = s.threads || {};
  return {
    elapsed: duration(s.elapsed_s), discovered: int(s.discovered), queued: int(s.queued),
    downloaded: int(s.downloaded), failed: int(s.failed),
    uris: `${num(r.uris_per_s)} (${num(r.avg_uris_per_s)})`,
    kb: `${num(r.kb_per_s, 0)} (${num(r.avg_kb_per_s, 0)})`,
    threads: t.total ? `${t.busy} / ${t.total}` : '–', bytes: bytes(s.bytes),
    _state: run.state,
  };
}

function section(title, ...kids) {
  return h('section', { className: 'card' }, h('h2', null, title), ...kids);
}

export function runView(main, id) {
  const base = runPath(id);
  const el = {};
  const stateBadge = h('span', { id: 'state' });
  const message = h('p', { className: 'message', 'aria-live': 'polite' });
  const button = (name, label, onclick, cls) => (el[name] = h('button', { id: `btn-${name}`, type: 'button', className: cls, onclick }, label));
  let run = null;

  const act = async (what, body, done) => {
    try {
      const res = await api(`${base}/${what}`, { method: 'POST', body });
      message.className = 'message ok';
      message.textContent = res.message;
      if (done) done();
      ticker.now();
    } catch (err) {
      message.className = 'message error';
      message.textContent = err instanceof ApiError ? err.message : String(err);
    }
  };

  const cards = h('div', { className: 'counters' }, COUNTERS.map(([k, label]) => h('div', { className: 'counter' },
    h('div', { className: 'label' }, label), (el[`c_${k}`] = h('div', { className: 'value', 'data-k': k }, '–')))));
  const progressFill = h('div', { className: 'fill' });
  const progressText = h('span');
  const charts = {
    uris: new LineChart('URIs/s', '#1f6feb', (v) => num(v)),
    kb: new LineChart('KB/s', '#d97706', (v) => num(v, 0)),
    queued: new LineChart('Queued URIs', '#16a34a', int),
  };
  const panels = {
    queues: h('div'), hosts: h('div'), codes: h('div'), mimes: h('div'),
    alerts: h('div'), rules: h('div'), reports: h('div', { className: 'report-list' }),
    archive: h('div', { id: 'archive' }),
    changes: h('div', { id: 'changes' }),
  };

  const seeds = h('textarea', { id: 'seeds', rows: 2, spellcheck: 'false', placeholder: 'http://example.com/  (one per line)' });
  const regex = h('input', { id: 'regex', type: 'text', spellcheck: 'false', placeholder: '\\.pdf$' });
  const sheet = h('textarea', { id: 'sheet', rows: 3, spellcheck: 'false', placeholder: '{"name": "slow", "hosts": ["example.org"], "settings": {"frontier.politeness.min_delay_ms": 10000}}' });
  const sendSheet = () => {
    let doc;
    try { doc = JSON.parse(sheet.value); } catch (err) {
      message.className = 'message error';
      message.textContent = `the sheet is not JSON: ${err.message}`;
      return;
    }
    const body = Array.isArray(doc) ? { sheets: doc } : ('sheets' in doc || 'remove' in doc) ? doc : { sheets: [doc] };
    act('sheets', body, () => { sheet.value = ''; });
  };
  const steering = section('Steer',
    h('form', { className: 'inline', onsubmit: (e) => { e.preventDefault(); act('seeds', { seeds: seeds.value }, () => { seeds.value = ''; }); } },
      h('label', { for: 'seeds' }, 'Add seeds'), seeds, button('seeds', 'Add seeds', null, 'primary')),
    h('form', { className: 'inline', onsubmit: (e) => { e.preventDefault(); act('block', { regex: regex.value }, () => { regex.value = ''; }); } },
      h('label', { for: 'regex' }, 'Block URIs matching'), regex, button('block', 'Block')),
    h('form', { className: 'inline', onsubmit: (e) => { e.preventDefault(); sendSheet(); } },
      h('label', { for: 'sheet' }, 'Add or replace a sheet (JSON)'), sheet, button('sheet', 'Apply sheet')),
    h('h3', null, 'Block rules'), panels.rules);
  el.seeds.type = 'submit';
  el.block.type = 'submit';
  el.sheet.type = 'submit';

  // the followed log
  const logSelect = h('select', { id: 'log-name', 'aria-label': 'log' },
    ['crawl.log', 'alerts.log', 'uri-errors.log', 'runtime-errors.log', 'nonfatal-errors.log', 'progress-statistics.log', 'launch.log']
      .map((n) => h('option', { value: n }, n)));
  const filter = h('input', { id: 'log-filter', type: 'search', placeholder: 'filter (text in the line)', spellcheck: 'false' });
  const logBox = h('pre', { id: 'log', className: 'log' });
  let logLines = [], logEnd = null;
  const resetLog = () => { logLines = []; logEnd = null; logBox.textContent = ''; ticker.now(); };
  logSelect.addEventListener('change', resetLog);
  let filterTimer = null;
  filter.addEventListener('input', () => { clearTimeout(filterTimer); filterTimer = setTimeout(resetLog, 250); });

  // reports open in a dialog
  const reportTitle = h('h2');
  const reportText = h('pre', { id: 'report-text', className: 'report' });
  const dialog = h('dialog', { id: 'report' },
    h('div', { className: 'dialog-head' }, reportTitle, h('form', { method: 'dialog' }, h('button', { id: 'report-close' }, 'Close'))),
    reportText);
  const openReport = async (name) => {
    const rep = await api(`${base}/reports/${encodeURIComponent(name)}`);
    reportTitle.textContent = `${rep.name} (written ${new Date(rep.mtime_s * 1000).toLocaleTimeString()})`;
    reportText.textContent = rep.text;
    if (!dialog.open) dialog.showModal();
  };

  const title = h('h1', null, id.replace('~', ' / '));
  main.append(
    h('div', { className: 'run-head' }, h('div', null, h('a', { href: '#/' }, '← Jobs'), title), stateBadge,
      h('div', { className: 'buttons' },
        button('pause', 'Pause', () => act('pause')),
        button('unpause', 'Unpause', () => act('unpause')),
        button('terminate', 'Terminate', () => { if (confirm('End this crawl? URIs in process finish, reports are written.')) act('terminate'); }, 'danger'),
        button('reports', 'Write reports', () => act('reports', undefined, () => setTimeout(refreshReports, 1500))))),
    message,
    h('div', { className: 'progress card' }, h('div', { className: 'track' }, progressFill), progressText),
    cards,
    h('div', { className: 'charts' }, charts.uris.el, charts.kb.el, charts.queued.el),
    h('div', { className: 'grid' },
      section('Queues', panels.queues), section('Busiest hosts', panels.hosts),
      section('Response codes', panels.codes), section('MIME types', panels.mimes)),
    h('div', { className: 'grid two' }, steering, section('Alerts', panels.alerts)),
    section('Log', h('div', { className: 'log-bar' }, logSelect, filter), logBox),
    section('Reports', panels.reports),
    section('Changes since the earlier crawl', panels.changes),
    section('Replay', panels.archive),
    dialog);

  const render = (data) => {
    run = data;
    const s = data.status || {};
    stateBadge.replaceChildren(badge(data.state));
    const c = counters(data.status, data);
    for (const [k] of COUNTERS) el[`c_${k}`].textContent = c[k];
    const live = data.running;
    el.pause.disabled = !(live && ['RUNNING', 'PREPARING'].includes(data.state));
    el.unpause.disabled = !(live && ['PAUSED', 'PAUSING'].includes(data.state));
    el.terminate.disabled = !live;
    el.seeds.disabled = !live;
    el.block.disabled = !data.status;
    el.sheet.disabled = !data.status;
    const p = data.progress;
    progressFill.style.width = `${p === null ? 0 : Math.round(p * 1000) / 10}%`;
    progressText.textContent = p === null ? 'no URIs discovered yet'
      : `${num(p * 100)}% of ${int(s.discovered)} discovered URIs done` + (live && s.eta_s != null ? ` · ETA ${clock(s.eta_s)}` : '');
    if (data.launch && data.launch.exit_code !== null && data.launch.exit_code !== 0 && !data.status) {
      message.className = 'message error';
      message.textContent = `the crawl exited with code ${data.launch.exit_code}: see launch.log below`;
      logSelect.value = 'launch.log';
    }
    const queues = (s.frontier || {}).queues || {};
    panels.queues.replaceChildren(table(['State', '#Queues'], Object.entries(queues).map(([k, v]) => [k, int(v)])),
      h('p', { className: 'muted' }, `in process ${int((s.frontier || {}).in_process)} · congestion ${num((s.frontier || {}).congestion, 2)}`));
    const hosts = (s.busiest_hosts && s.busiest_hosts.length ? s.busiest_hosts : data.tally.hosts).slice(0, 10);
    panels.hosts.replaceChildren(table(['Host', '#URIs', '#Data', '#Failed'],
      hosts.map((x) => [x.host, int(x.urls), bytes(x.bytes), int(x.failed)])));
    const t = data.tally, total = Math.max(1, t.lines);
    panels.codes.replaceChildren(table(['Code', '#URIs', ''], t.codes.map((x) => [String(x.code), int(x.count), bar(x.count / total)])));
    panels.mimes.replaceChildren(table(['MIME type', '#URIs', '#Data'], t.mimes.map((x) => [x.mime, int(x.count), bytes(x.bytes)])));
    const rules = s.block_rules || [];
    panels.rules.replaceChildren(rules.length ? h('ul', null, rules.map((r) => h('li', null, h('code', null, r)))) : h('p', { className: 'muted' }, 'none'));
  };

  let seriesSince = 0, series = [];
  // Each load* fetches, then returns a function that updates the page: a tick applies them all
  // at once, so the counters, charts and log never show different moments.
  const loadSeries = async () => {
    const res = await api(`${base}/series`, { query: { since: seriesSince } });
    return () => {
      if (res.points.length) { series = series.concat(res.points).slice(-4000); seriesSince = series[series.length - 1][0]; }
      const col = (k) => { const i = res.keys.indexOf(k); return series.map((p) => [p[0], p[i]]); };
      charts.uris.update(col('uris_per_s'));
      charts.kb.update(col('kb_per_s'));
      charts.queued.update(col('queued'));
    };
  };

  const loadLog = async () => {
    const name = logSelect.value, text = filter.value;
    const res = await api(`${base}/logs/${name}`, { query: { lines: LOG_LINES, filter: text, after: logEnd } });
    return () => {
      if (name !== logSelect.value || text !== filter.value) return; // changed meanwhile
      const follow = logBox.scrollTop + logBox.clientHeight >= logBox.scrollHeight - 20;
      logEnd = res.end;
      if (!res.lines.length && logLines.length) return;
      logLines = logLines.concat(res.lines).slice(-LOG_LINES);
      logBox.textContent = logLines.length ? logLines.join('\n') : (filter.value ? '(no line matches the filter)' : '(empty)');
      if (follow) logBox.scrollTop = logBox.scrollHeight;
    };
  };

  const loadAlerts = async () => {
    const res = await api(`${base}/alerts`, { query: { lines: 20 } });
    return () => {
      const errors = ((run && run.status) || {}).recent_errors || [];
      panels.alerts.replaceChildren(
        table(['Time', 'Level', 'Event', 'Details'], res.alerts.slice().reverse().map((a) => [a.time, a.level, a.event, h('span', { className: 'details' }, a.details)]), 'no alerts'),
        h('h3', null, 'Recent failed URIs'),
        table(['Time', '#Status', 'URI'], errors.slice().reverse().map((e) => [e.time, String(e.status), h('span', { className: 'details' }, e.uri)]), 'none'));
    };
  };

  const loadReports = async () => {
    const res = await api(`${base}/reports`);
    return () => panels.reports.replaceChildren(...(res.reports.length
      ? res.reports.map((r) => h('button', { type: 'button', className: 'report-link', onclick: () => openReport(r.name) }, r.name, h('small', null, bytes(r.size))))
      : [h('p', { className: 'muted' }, 'No reports yet: “Write reports” asks the crawl for them.')]));
  };

  const refreshReports = async () => (await loadReports())();

  // the replay command (or link, while `crawler replay` serves this run) and WACZ downloads
  const loadArchive = async () => {
    const res = await api(`${base}/archive`);
    return () => panels.archive.replaceChildren(
      res.replay_url
        ? h('p', null, 'Replay: ', h('a', { id: 'replay-link', href: res.replay_url, target: '_blank', rel: 'noopener' }, res.replay_url))
        : h('p', null, 'Replay it through pywb: ', h('code', { id: 'replay-command' }, res.replay_command)),
      h('p', { className: 'muted' }, `${res.indexes} CDXJ index file(s)`),
      ...(res.wacz.length
        ? res.wacz.map((w) => h('p', null, h('a', { className: 'wacz-link', href: w.url, download: w.name }, `Download ${w.name}`), ' ', h('small', null, bytes(w.size))))
        : [h('p', { className: 'muted' }, 'No WACZ package: `crawler wacz RUN_DIR -o FILE.wacz` makes one (in the run directory to list it here).')]));
  };

  // the change report of a recrawl: counts overall and per host, the first URIs of each list
  const CHANGE_KINDS = ['new', 'changed', 'unchanged', 'gone'];
  const status = (v) => (v === null || v === undefined ? '–' : String(v));
  const loadChanges = async () => {
    const res = await api(`${base}/changes`, { query: { limit: 50 } });
    return () => {
      const r = res.report;
      if (!r) {
        panels.changes.replaceChildren(h('p', { className: 'muted' }, 'No change report: it is written when a crawl that imports an earlier crawl’s history (history.import_from) ends.'));
        return;
      }
      const hosts = Object.entries(r.hosts);
      panels.changes.replaceChildren(
        h('p', null, 'Earlier crawl: ', h('code', null, r.earlier)),
        table(CHANGE_KINDS.map((k) => `#${k}`), [CHANGE_KINDS.map((k) => int(r.counts[k]))]),
        h('h3', null, 'Per host'),
        table(['Host', ...CHANGE_KINDS.map((k) => `#${k}`)], hosts.map(([host, c]) => [host, ...CHANGE_KINDS.map((k) => int(c[k]))]), 'none'),
        ...CHANGE_KINDS.filter((k) => r.counts[k]).map((k) => h('details', { className: `changes-${k}` },
          h('summary', null, `${k} (${int(r.counts[k])}${r.counts[k] > r[k].length ? `, first ${r[k].length}` : ''})`),
          table(['#Now', '#Earlier', 'URI'], r[k].map((e) => [status(e.status), status(e.earlier_status), h('span', { className: 'details' }, e.uri)])))),
        h('p', null, ...Object.entries(res.files).map(([name, url]) => h('a', { className: 'changes-link', href: url, download: name }, `Download ${name} `))));
    };
  };

  let ticks = 0, lastState = null;
  const tick = async () => {
    let updates;
    try {
      const data = await api(base);
      // Reports, alerts, replay and changes are read every 4th tick, and at once when the state
      // changes (a crawl that has just finished has written its reports).
      const slow = ticks++ % 4 === 0 || data.state !== lastState;
      lastState = data.state;
      updates = await Promise.all([() => render(data), loadSeries(), loadLog(),
        slow ? loadAlerts() : null, slow ? loadReports() : null, slow ? loadArchive() : null, slow ? loadChanges() : null]);
    } catch (err) {
      if (err instanceof ApiError && err.status === 404) { main.replaceChildren(h('p', { className: 'error' }, err.message)); ticker.stop(); return; }
      throw err;
    }
    for (const update of updates) if (update) update();
  };
  const ticker = poll(tick, () => (run && !LIVE.has(run.state) ? 10000 : 1500));
  return ticker;
}
