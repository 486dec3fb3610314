// Overview, time travel, forget by query, jobs and the graph.
import { api, may, scopeBody, scopeQuery, session } from './api.js';
import { confirmDialog, fmtTime, h, replace, short, table, toast } from './dom.js';
import { later, memoryLink, run, select } from './common.js';

// -- overview -----------------------------------------------------------------------------

const SAMPLE = 200;
const SERIES_KEY = 'strata.metrics';

function countBy(items, key) {
  const counts = {};
  for (const item of items) counts[item[key]] = (counts[item[key]] || 0) + 1;
  return counts;
}

function cards(title, counts) {
  return h('section', { 'aria-label': title }, h('h2', {}, title), h('div', { class: 'cards' },
    Object.entries(counts).map(([name, n]) => h('div', { class: 'card', dataset: { count: name } },
      h('div', { class: 'n' }, n.toLocaleString()), h('div', { class: 'muted' }, name)))));
}

export async function overviewPage(root) {
  root.append(h('h1', {}, 'Overview'));
  // The store's totals are a count over every memory: they arrive after the first screen.
  const totals = h('section', { 'aria-label': 'Store' }, h('h2', {}, 'Store'));
  root.append(totals);
  later(totals, async () => {
    const s = (await api('GET', '/healthz')).stats;
    totals.replaceWith(cards('Store', { memories: s.memories, live: s.live_memories,
      deleted: s.deleted_memories, events: s.events, 'history rows': s.history_rows }));
  });
  const page = await api('GET', '/v1/memories', { query: { ...scopeQuery(), limit: SAMPLE,
    lifecycles: ['candidate', 'active', 'disputed', 'archived', 'expired', 'deprecated'] } });
  const sample = page.items;
  const note = page.next_cursor ? ` (the newest ${SAMPLE} in this scope)` : '';
  root.append(cards(`By type${note}`, countBy(sample, 'type')), cards(`By lifecycle${note}`, countBy(sample, 'lifecycle')),
    cards(`By tier${note}`, countBy(sample, 'tier')));
  root.append(h('section', { 'aria-labelledby': 'recent-title' }, h('h2', { id: 'recent-title' }, 'Recent activity'),
    table(['updated', 'memory', 'lifecycle', 'version'], [...sample]
      .sort((a, b) => (a.updated_at < b.updated_at ? 1 : -1)).slice(0, 10)
      .map((m) => h('tr', {}, h('td', { class: 'muted' }, fmtTime(m.updated_at)),
        h('td', {}, memoryLink(m, m.content.slice(0, 100))), h('td', {}, m.lifecycle), h('td', {}, `v${m.version}`))))));
  if (may('metrics')) {
    const section = h('section', { 'aria-labelledby': 'metrics-title' }, h('h2', { id: 'metrics-title' }, 'Growth and recall latency'));
    root.append(section);
    later(section, () => metricsCharts(section));
  }
}

// Growth and recall latency, sampled from /metrics each time the overview is shown and every
// 10 s while it is (kept in sessionStorage, so the chart grows over a session).
async function metricsCharts(section) {
  const draw = async () => {
    const text = await api('GET', '/metrics', { text: true });
    const series = JSON.parse(sessionStorage.getItem(SERIES_KEY) || '[]');
    series.push({ t: Date.now(), ...parseMetrics(text) });
    const kept = series.slice(-120);
    sessionStorage.setItem(SERIES_KEY, JSON.stringify(kept));
    const latency = kept.map((p, i) => {
      const prev = kept[i - 1];
      const count = prev ? p.recallCount - prev.recallCount : 0;
      return count > 0 ? (1000 * (p.recallSum - prev.recallSum)) / count : null;
    });
    replace(section, h('h2', { id: 'metrics-title' }, 'Growth and recall latency'),
      h('div', { class: 'row' },
        chart('Live memories', kept.map((p) => p.live)),
        chart('Mean recall latency, ms (per sample)', latency)),
      h('p', { class: 'muted' }, `${kept.length} samples of /metrics; recalls served by this process: ${kept.at(-1).recallCount}`));
  };
  await draw();
  const timer = setInterval(() => {
    if (!document.body.contains(section)) { clearInterval(timer); return; }
    draw().catch(() => clearInterval(timer));
  }, 10000);
}

function parseMetrics(text) {
  const value = (pattern) => {
    const match = text.match(pattern);
    return match ? Number(match[1]) : 0;
  };
  return {
    live: value(/^strata_memories\{state="live"\} (\S+)/m),
    recallSum: value(/^strata_http_request_duration_seconds_sum\{method="POST",route="\/v1\/recall"\} (\S+)/m),
    recallCount: value(/^strata_http_request_duration_seconds_count\{method="POST",route="\/v1\/recall"\} (\S+)/m),
  };
}

function chart(label, values) {
  const points = values.map((v, i) => [i, v]).filter(([, v]) => v !== null && v !== undefined);
  const max = Math.max(1, ...points.map(([, v]) => v));
  const width = 320;
  const step = values.length > 1 ? width / (values.length - 1) : 0;
  const svg = h('svg', { class: 'chart', viewBox: `0 0 ${width} 160`, role: 'img', 'aria-label': `${label}: latest ${points.length ? Math.round(points.at(-1)[1]) : 'none'}` },
    h('polyline', { points: points.map(([i, v]) => `${(i * step).toFixed(1)},${(150 - (140 * v) / max).toFixed(1)}`).join(' ') }),
    h('text', { x: 4, y: 12 }, `${label} (max ${Math.round(max)})`));
  return h('figure', {}, svg);
}

// -- time travel --------------------------------------------------------------------------

const DAY = 86400000;

export async function timeTravelPage(root, { params }) {
  const now = Date.now();
  const asked = Date.parse(params.get('from') || '');
  const from = Number.isNaN(asked) ? now - Number(params.get('days') || 7) * DAY : asked;
  const initial = params.get('at') || new Date(now).toISOString();
  const at = h('input', { id: 'at', name: 'at', value: initial, size: 28 });
  const slider = h('input', { id: 'slider', type: 'range', min: 0, max: 1000, step: 1,
    value: Math.round(((Date.parse(initial) - from) / (now - from)) * 1000), 'aria-label': `Moment between ${new Date(from).toISOString()} and now` });
  const include = h('input', { type: 'checkbox', name: 'deleted' });
  const out = h('section', { 'aria-label': 'State at that moment', 'aria-live': 'polite', id: 'state' });
  const show = () => run(async () => {
    const moment = new Date(at.value);
    if (Number.isNaN(moment.getTime())) { toast('Not a time: use ISO 8601', true); return; }
    const state = await api('GET', '/v1/state', { query: { ...scopeQuery(), at: moment.toISOString(), include_deleted: include.checked, limit: 100 } });
    replace(out, h('p', { class: 'muted' }, `${state.items.length} memories at ${fmtTime(state.at)}${state.next_cursor ? ' (the first 100)' : ''}`),
      table(['memory', 'content then', 'lifecycle', 'version'], state.items.map((m) => h('tr', { class: 'state-row' },
        h('td', {}, memoryLink(m)), h('td', { class: 'content' }, m.content), h('td', {}, m.lifecycle), h('td', {}, `v${m.version}`)))));
  });
  slider.addEventListener('input', () => { at.value = new Date(from + ((now - from) * Number(slider.value)) / 1000).toISOString(); });
  slider.addEventListener('change', show);
  root.append(h('h1', {}, 'Time travel'),
    h('p', { class: 'muted' }, 'The scope as it was at a past moment (from the history). Drag the slider (the last 7 days, or from the time in ?from=) or type a time.'),
    h('form', { class: 'row', onsubmit: (e) => { e.preventDefault(); show(); } },
      h('label', {}, 'Moment (ISO 8601, UTC)', at), h('label', {}, 'Slider', slider),
      h('label', {}, 'include forgotten', include), h('button', { type: 'submit', class: 'primary' }, 'Show')),
    out);
  await show();
}

// -- forget by query ----------------------------------------------------------------------

export async function forgetPage(root) {
  root.append(h('h1', {}, 'Forget by query'));
  if (!may('write')) { root.append(h('p', { class: 'muted' }, 'Your role may not forget.')); return; }
  const query = h('input', { name: 'query', type: 'search', size: 40, required: true });
  const out = h('section', { 'aria-live': 'polite', id: 'forget-preview' });
  root.append(h('p', { class: 'muted' }, 'Step 1 previews the candidates and changes nothing; step 2 forgets the ones you keep ticked (recoverable).'),
    h('form', { class: 'row', onsubmit: (e) => { e.preventDefault(); run(() => preview(query.value, out)); } },
      h('label', {}, 'Query', query), h('button', { type: 'submit', class: 'primary' }, 'Preview')), out);
}

async function preview(query, out) {
  const scope = scopeBody();
  const p = await api('POST', '/v1/forget', { body: { mode: 'preview', query, scope, limit: 50 } });
  const checks = p.candidates.map((c) => h('input', { type: 'checkbox', checked: true, 'aria-label': `Forget ${c.memory.content.slice(0, 40)}` }));
  replace(out, table(['forget', 'memory', 'score', 'lifecycle'], p.candidates.map((c, i) => h('tr', { class: 'candidate-row' },
    h('td', {}, checks[i]), h('td', {}, memoryLink(c.memory, c.memory.content.slice(0, 140))),
    h('td', { class: 'mono' }, c.score.toFixed(3)), h('td', {}, c.memory.lifecycle)))),
  p.candidates.length ? h('button', { type: 'button', class: 'danger', id: 'forget-execute', onclick: () => run(async () => {
    const ids = p.candidates.filter((c, i) => checks[i].checked).map((c) => c.id);
    if (!ids.length) return;
    const reason = await confirmDialog({ title: `Forget ${ids.length} memories?`, danger: true, confirmLabel: 'Forget',
      message: 'They leave recall at once and can be recovered from their history.' });
    if (reason === null) return;
    const result = await api('POST', '/v1/forget', { body: { mode: 'execute', ids, reason, scope,
      preview_token: p.preview_token, confirm_token: p.confirm_token || undefined } });
    replace(out, h('p', { role: 'status' }, `Forgot ${result.succeeded}; ${result.failed} failed.`),
      result.items.filter((x) => !x.ok).map((x) => h('p', { class: 'error-text' }, `${short(x.id)}: ${x.error.code}`)));
  }) }, 'Forget selected…') : h('p', { class: 'muted' }, 'No candidates.'));
}

// -- jobs ---------------------------------------------------------------------------------

export async function jobsPage(root) {
  root.append(h('h1', {}, 'Jobs'));
  if (!session.me.job_desk) {
    root.append(h('p', { class: 'muted' }, 'The job desk spans every team: it answers the local user only (or use `strata jobs`).'));
    return;
  }
  const reload = () => window.dispatchEvent(new HashChangeEvent('hashchange'));
  const [all, dead] = await Promise.all([api('GET', '/v1/jobs', { query: { limit: 20 } }),
    api('GET', '/v1/jobs', { query: { status: 'dead', limit: 100 } })]);
  root.append(cards('Queue by status', all.counts),
    h('h2', {}, 'Open and dead jobs by kind'),
    table(['kind', 'status', 'count'], all.by_kind.map((r) => h('tr', {}, h('td', {}, r.kind), h('td', {}, r.status), h('td', {}, r.count)))),
    h('h2', {}, 'Dead letter'),
    dead.items.length ? table(['job', 'kind', 'attempts', 'error', ''], dead.items.map((j) => h('tr', { class: 'dead-job' },
      h('td', { class: 'mono' }, short(j.id)), h('td', {}, j.kind), h('td', {}, `${j.attempts}/${j.max_attempts}`),
      h('td', {}, `${j.last_error_code || ''}: ${j.last_error || ''}`),
      h('td', {}, h('button', { type: 'button', onclick: () => run(async () => {
        await api('POST', `/v1/jobs/${encodeURIComponent(j.id)}/retry`); toast('Sent back to pending'); reload();
      }) }, 'Retry'))))) : h('p', { class: 'muted' }, 'Empty.'),
    h('h2', {}, 'Purge finished jobs'), purgeForm(reload),
    h('h2', {}, 'Newest jobs'),
    table(['job', 'kind', 'status', 'attempts', 'updated'], all.items.map((j) => h('tr', {},
      h('td', { class: 'mono' }, short(j.id)), h('td', {}, j.kind), h('td', {}, j.status),
      h('td', {}, `${j.attempts}/${j.max_attempts}`), h('td', { class: 'muted' }, fmtTime(j.updated_at || j.created_at))))));
}

function purgeForm(reload) {
  const days = h('input', { type: 'number', min: 0, step: 'any', value: 7, name: 'days', size: 5 });
  const status = select('status', 'Status', [['', 'done and dead'], ['done', 'done'], ['dead', 'dead']], '');
  return h('form', { class: 'row', onsubmit: (e) => { e.preventDefault(); run(async () => {
    const ok = await confirmDialog({ title: 'Purge finished jobs?', reason: false, danger: true, confirmLabel: 'Purge',
      message: 'Pending and leased jobs are never purged.' });
    if (ok === null) return;
    const chosen = status.querySelector('select').value;
    const result = await api('POST', '/v1/jobs/purge', { body: { statuses: chosen ? [chosen] : [], older_than_days: Number(days.value) } });
    toast(`Purged ${result.purged}`); reload();
  }); } }, status, h('label', {}, 'Older than (days)', days), h('button', { type: 'submit', class: 'danger' }, 'Purge…'));
}

// -- graph --------------------------------------------------------------------------------

export async function graphPage(root, { arg, params }) {
  const prefix = h('input', { name: 'prefix', type: 'search', value: params.get('prefix') || '' });
  root.append(h('h1', {}, 'Graph'),
    h('form', { class: 'row', role: 'search', onsubmit: (e) => { e.preventDefault(); window.location.hash = `#/graph?prefix=${encodeURIComponent(prefix.value)}`; } },
      h('label', {}, 'Entity name starts with', prefix), h('button', { type: 'submit' }, 'Find')));
  const entities = await api('GET', '/v1/graph/entities', { query: { ...scopeQuery(), limit: 100, prefix: prefix.value.toLowerCase() || undefined } });
  const detail = h('section', { 'aria-live': 'polite', id: 'neighbours' });
  root.append(h('div', { class: 'levels' },
    table(['entity', 'type', 'mentions'], entities.items.map((e) => h('tr', {},
      h('td', {}, h('a', { href: `#/graph/${encodeURIComponent(e.id)}` }, e.name)), h('td', {}, e.type), h('td', {}, e.mentions)))),
    detail));
  if (arg) {
    const n = await api('GET', `/v1/graph/entities/${encodeURIComponent(arg)}/neighbors`, { query: { ...scopeQuery(), depth: 2 } });
    const names = Object.fromEntries([n.entity, ...n.neighbors].map((e) => [e.id, e.name]));
    replace(detail, h('h2', {}, n.entity.name), h('ul', {}, n.neighbors.map((x) => h('li', {},
      h('a', { href: `#/graph/${encodeURIComponent(x.id)}` }, x.name), ` (${x.type}, ${x.hops} hop${x.hops > 1 ? 's' : ''})`))),
    h('h3', {}, 'Relations'), h('ul', {}, n.relations.map((r) => h('li', {},
      `${names[r.source_id] || short(r.source_id)} — ${r.relation} → ${names[r.target_id] || short(r.target_id)} (${r.mentions})`))));
  }
}
