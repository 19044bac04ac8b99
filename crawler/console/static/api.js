// Calls to the console's REST API. The login cookie authenticates them; a 401 sends the
// browser back to the login page. Errors carry the API's message and issues.

export class ApiError extends Error {
  constructor(status, body) {
    super(body.message || `HTTP ${status}`);
    this.status = status;
    this.issues = body.issues || [];
  }
}

export async function api(path, { method = 'GET', body, query } = {}) {
  const url = new URL('/api' + path, location.origin);
  for (const [k, v] of Object.entries(query || {})) {
    if (v !== undefined && v !== null && v !== '') url.searchParams.set(k, v);
  }
  const init = { method, credentials: 'same-origin', headers: {} };
  if (body !== undefined) {
    init.headers['content-type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  const res = await fetch(url, init);
  if (res.status === 401) {
    location.assign('/login');
    throw new ApiError(401, { message: 'please log in' });
  }
  const data = await res.json().catch(() => ({ message: res.statusText }));
  if (!res.ok) throw new ApiError(res.status, data);
  return data;
}

export const runPath = (id) => '/runs/' + encodeURIComponent(id);
