// The console's single page: #/ lists the jobs and their runs, #/runs/<id> shows one run.
// Each view returns an object whose stop() ends its polling.

import { jobsView } from './jobs.js';
import { runView } from './run.js';

let current = null;

function route() {
  if (current) current.stop();
  const main = document.getElementById('view');
  main.replaceChildren();
  const m = location.hash.match(/^#\/runs\/([^/?]+)/);
  current = m ? runView(main, decodeURIComponent(m[1])) : jobsView(main);
}

addEventListener('hashchange', route);
route();
