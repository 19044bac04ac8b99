// The jobs page: every job of the jobs directory with its runs, and a form to launch a job's
// order with --set overrides (validated first; problems are listed by YAML path).

import { api, ApiError } from './api.js';
import { h, int, bytes, duration, badge, table } from './dom.js';
import { poll } from './poller.js';

function runsTable(runs) {
  return table(['Run', 'State', 'Started', '#Elapsed', '#Downloaded', '#Queued', '#Failed', '#Data'],
    runs.map((r) => [
      h('a', { href: `#/runs/${encodeURIComponent(r.id)}` }, r.name),
      badge(r.state), r.started || '–', duration(r.elapsed_s), int(r.downloaded), int(r.queued),
      int(r.failed), bytes(r.bytes),
    ]), 'no runs yet');
}

// A scheduled job's line: its cron expression, next run, runs started and skipped.
function scheduleLine(schedule) {
  if (!schedule) return [];
  const parts = [h('code', null, schedule.expression), ` · next run ${schedule.next || '–'}`,
    ` · runs started ${int(schedule.launched)}, skipped ${int(schedule.skipped)}`];
  if (schedule.scheduler_running === false) parts.push(' · no scheduler is running');
  if (schedule.last_error) parts.push(h('div', { className: 'error' }, schedule.last_error));
  return [h('span', { className: 'muted' }, 'Schedule (UTC): '), ...parts];
}

function issuesList(result, issues) {
  result.replaceChildren(
    h('p', { className: 'error', role: 'alert' }, result.dataset.message),
    table(['YAML path', 'Problem'], issues.map((i) => [
      h('code', null, i.path || '(order)'),
      [i.message, i.value ? h('span', { className: 'muted' }, ` (got ${i.value})`) : null,
        i.hint ? h('div', { className: 'muted' }, i.hint) : null],
    ])));
}

function launchForm(job) {
  const sets = h('textarea', { name: 'sets', rows: 3, spellcheck: 'false', placeholder: 'toe_threads=5\nfrontier.politeness.min_delay_ms=0' });
  const result = h('div', { className: 'launch-result', 'aria-live': 'polite' });
  const lines = () => sets.value.split('\n').map((s) => s.trim()).filter(Boolean);
  const show = (message, cls) => result.replaceChildren(h('p', { className: cls }, message));
  const validate = async () => {
    const res = await api(`/jobs/${encodeURIComponent(job.name)}/validate`, { method: 'POST', body: { sets: lines() } });
    if (res.valid) show(`The order is valid.${res.warnings.length ? ' Warnings: ' + res.warnings.join('; ') : ''}`, 'ok');
    else { result.dataset.message = `${res.issues.length} problem(s):`; issuesList(result, res.issues); }
  };
  const launch = async () => {
    try {
      const res = await api(`/jobs/${encodeURIComponent(job.name)}/launch`, { method: 'POST', body: { sets: lines() } });
      location.hash = `#/runs/${encodeURIComponent(res.run.id)}`;
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      result.dataset.message = err.message;
      if (err.issues.length) issuesList(result, err.issues); else show(err.message, 'error');
    }
  };
  return h('form', { className: 'launch', onsubmit: (e) => { e.preventDefault(); launch(); } },
    h('label', null, 'Overrides (', h('code', null, '--set KEY=VALUE'), ', one per line)'), sets,
    h('div', { className: 'buttons' },
      h('button', { type: 'button', onclick: validate }, 'Validate'),
      h('button', { type: 'submit', className: 'primary' }, `Launch ${job.name}`)),
    result);
}

export function jobsView(main) {
  const list = h('div', { className: 'jobs' });
  const dirLine = h('p', { className: 'muted' });
  main.append(h('h1', null, 'Jobs'), dirLine, list);
  const tables = new Map();
  const refresh = async () => {
    const data = await api('/jobs');
    dirLine.textContent = `Jobs directory: ${data.jobs_dir}`;
    if (!data.jobs.length) list.replaceChildren(h('p', { className: 'muted' }, 'No jobs: add a directory with an order.yaml.'));
    for (const job of data.jobs) {
      let slot = tables.get(job.name);
      if (!slot) {
        slot = h('div', { className: 'runs' });
        slot.schedule = h('p', { className: 'schedule' });
        tables.set(job.name, slot);
        list.append(h('section', { className: 'card job', id: `job-${job.name}` },
          h('h2', null, job.name),
          job.description ? h('p', { className: 'muted' }, job.description) : null,
          slot.schedule,
          slot,
          job.has_order ? h('details', { className: 'launch-box' }, h('summary', null, 'Launch a new run'), launchForm(job))
            : h('p', { className: 'muted' }, 'No order.yaml: runs only.')));
      }
      slot.schedule.replaceChildren(...scheduleLine(job.schedule));
      slot.replaceChildren(runsTable(job.runs));
    }
  };
  return poll(refresh, 3000);
}
