// The JSON API, called with the signed-in token as a bearer header (token mode) or none
// (local mode). The token lives in sessionStorage only: no cookie is ever set or sent, so a
// cross-site request cannot act as the moderator (CSRF-safe by construction).

const TOKEN_KEY = 'strata.token';
const SCOPE_KEY = 'strata.scope';

export const session = {
  get token() { return sessionStorage.getItem(TOKEN_KEY); },
  set token(value) {
    if (value) sessionStorage.setItem(TOKEN_KEY, value);
    else sessionStorage.removeItem(TOKEN_KEY);
  },
  get scope() {
    try { return JSON.parse(sessionStorage.getItem(SCOPE_KEY)) || {}; } catch { return {}; }
  },
  set scope(value) { sessionStorage.setItem(SCOPE_KEY, JSON.stringify(value)); },
  me: null,
};

export class ApiError extends Error {
  constructor(status, body) {
    const error = (body && body.error) || {};
    super(error.message || `HTTP ${status}`);
    this.status = status;
    this.code = error.code || 'http_error';
    this.details = error.details || {};
  }
}

function url(path, query) {
  const target = new URL(path, window.location.origin);
  for (const [key, value] of Object.entries(query || {})) {
    if (value === undefined || value === null || value === '') continue;
    if (Array.isArray(value)) value.forEach((v) => target.searchParams.append(key, v));
    else target.searchParams.set(key, value);
  }
  return target;
}

export async function api(method, path, { query, body, text = false } = {}) {
  const headers = { Accept: text ? 'text/plain' : 'application/json' };
  if (session.token) headers.Authorization = `Bearer ${session.token}`;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const response = await fetch(url(path, query), {
    method, headers, credentials: 'omit', cache: 'no-store',
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const raw = await response.text();
  if (text && response.ok) return raw;
  let data = null;
  try { data = raw ? JSON.parse(raw) : null; } catch { data = null; }
  if (!response.ok) throw new ApiError(response.status, data);
  return data;
}

// The scope dimensions the scope bar names (query parameters for /v1/memories... routes).
export function scopeQuery() {
  const out = {};
  for (const [key, value] of Object.entries(session.scope)) if (value) out[key] = value;
  return out;
}

// The same as a JSON body's "scope" (team defaults server-side to the token's or default).
export function scopeBody() {
  const scope = scopeQuery();
  if (!scope.team) delete scope.team;
  return scope;
}

export function may(operation) {
  return Boolean(session.me && session.me.may && session.me.may[operation]);
}
