// The shell: sign-in, the scope bar, navigation and a hash router over the pages.
import { api, ApiError, session } from './api.js';
import { h, replace, toast } from './dom.js';
import { memoriesPage, memoryPage } from './memories.js';
import { reviewPage } from './review.js';
import { forgetPage, graphPage, jobsPage, overviewPage, timeTravelPage } from './ops.js';

const PAGES = [
  ['overview', 'Overview', overviewPage],
  ['memories', 'Memories', memoriesPage],
  ['review', 'Review', reviewPage],
  ['history', 'Time travel', timeTravelPage],
  ['forget', 'Forget', forgetPage],
  ['jobs', 'Jobs', jobsPage],
  ['graph', 'Graph', graphPage],
];

const main = () => document.getElementById('main');

function parseHash() {
  const [path, search] = (window.location.hash.slice(1) || '/overview').split('?');
  const parts = path.split('/').filter(Boolean);
  return { name: parts[0] || 'overview', arg: parts[1] ? decodeURIComponent(parts[1]) : null,
    params: new URLSearchParams(search || '') };
}

async function route() {
  const { name, arg, params } = parseHash();
  delete document.body.dataset.rendered;
  document.querySelectorAll('.popover').forEach((p) => p.remove());
  document.querySelectorAll('#nav a').forEach((a) => {
    if (a.dataset.page === name) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  });
  const page = name === 'memory' ? memoryPage : (PAGES.find((p) => p[0] === name) || PAGES[0])[2];
  const root = replace(main());
  const started = performance.now();
  try {
    await page(root, { arg, params });
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) return signIn();
    root.append(h('p', { class: 'error-text', role: 'alert' }, `Could not load: ${error.message}`));
  }
  // First screen rendered: recorded for `scripts/ui_pages.py` (and curious people).
  document.body.dataset.renderStart = String(started);
  document.body.dataset.rendered = name;
  document.body.dataset.renderMs = String(Math.round(performance.now() - started));
}

function renderNav() {
  replace(document.getElementById('nav'), PAGES.map(([name, label]) =>
    h('a', { href: `#/${name}`, dataset: { page: name } }, label)));
}

function renderWho() {
  const me = session.me;
  const who = document.getElementById('who');
  replace(who, `${me.auth_mode} mode · ${me.role}`,
    me.kind === 'token' ? h('span', {}, ' · ', h('button', { type: 'button', id: 'signout',
      onclick: () => { session.token = null; session.me = null; sessionStorage.clear(); signIn(); } },
      'Sign out')) : null);
}

function setupScopeBar() {
  const form = document.getElementById('scopebar');
  const pinned = (session.me && session.me.scope) || {};
  const scope = { ...session.scope };
  for (const [key, value] of Object.entries(pinned)) if (value) scope[key] = value;
  if (!scope.team) scope.team = pinned.team || 'default';
  session.scope = scope;
  for (const input of form.querySelectorAll('input')) {
    input.value = scope[input.name] || '';
    input.disabled = Boolean(pinned[input.name]);
    input.title = input.disabled ? 'pinned by your token' : '';
  }
  form.onsubmit = (event) => {
    event.preventDefault();
    const next = {};
    for (const input of form.querySelectorAll('input')) {
      if (input.value.trim()) next[input.name] = input.value.trim();
    }
    session.scope = next;
    route();
  };
}

function signIn(message) {
  document.getElementById('scopebar').hidden = true;
  replace(document.getElementById('who'));
  const input = h('input', { id: 'token', name: 'token', type: 'password', autocomplete: 'off',
    required: true, size: 40 });
  const error = h('p', { class: 'error-text', role: 'alert' }, message || '');
  const form = h('form', { class: 'signin', 'aria-labelledby': 'signin-title' },
    h('h1', { id: 'signin-title' }, 'Sign in'),
    h('p', { class: 'muted' }, 'This server runs in token mode. Paste a token from ',
      h('code', {}, 'strata token create'), '. It is kept in this tab only (sessionStorage) and ',
      'sent as a bearer header; no cookie is set.'),
    h('label', {}, 'API token', input), error,
    h('p', {}, h('button', { type: 'submit', class: 'primary' }, 'Sign in')));
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    session.token = input.value.trim();
    if (!(await start())) { error.textContent = 'That token was refused (unknown or revoked).'; }
  });
  replace(main(), form);
  input.focus();
  document.body.dataset.rendered = 'signin';
}

async function start() {
  try {
    session.me = await api('GET', '/v1/whoami');
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) {
      session.token = null;
      signIn();
      return false;
    }
    replace(main(), h('p', { class: 'error-text', role: 'alert' }, `Server unavailable: ${error.message}`));
    return false;
  }
  document.getElementById('scopebar').hidden = false;
  renderNav();
  renderWho();
  setupScopeBar();
  await route();
  return true;
}

window.addEventListener('hashchange', () => { if (session.me) route(); });
window.addEventListener('unhandledrejection', (event) => {
  toast(event.reason && event.reason.message ? event.reason.message : String(event.reason), true);
});
start();
