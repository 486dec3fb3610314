// Memories: search and list (filters, sorting, paging) and one memory's page (properties,
// versions side by side with witness chips, history with rollback and recover).
import { api, may, scopeBody, scopeQuery } from './api.js';
import { confirmDialog, fmtTime, h, replace, short, table, toast } from './dom.js';
import { act, evidenceTable, later, LIFECYCLES, memoryLink, run, select, tagChips, TIERS, TYPES,
  witnessChip } from './common.js';

const FILTER_KEYS = ['q', 'type', 'lifecycle', 'tags', 'tier', 'pinned', 'after', 'before',
  'preset', 'sort', 'dir', 'cursor'];

function filterForm(params) {
  const get = (key) => params.get(key) || '';
  const form = h('form', { class: 'row', role: 'search', 'aria-label': 'Search and filter memories' },
    h('label', {}, 'Search (same recall as the API)',
      h('input', { name: 'q', type: 'search', value: get('q'), size: 30 })),
    select('type', 'Type', [['', 'any'], ...TYPES.map((t) => [t, t])], get('type')),
    select('lifecycle', 'Lifecycle', [['', 'active + disputed'], ...LIFECYCLES.map((l) => [l, l])],
      get('lifecycle')),
    h('label', {}, 'Tags (any, comma-separated)', h('input', { name: 'tags', value: get('tags'), size: 14 })),
    select('tier', 'Tier', [['', 'any'], ...TIERS.map((t) => [t, t])], get('tier')),
    select('pinned', 'Pinned', [['', 'any'], ['true', 'pinned'], ['false', 'not pinned']], get('pinned')),
    h('label', {}, 'Created from', h('input', { name: 'after', type: 'date', value: get('after') })),
    h('label', {}, 'Created before', h('input', { name: 'before', type: 'date', value: get('before') })),
    select('preset', 'Recall preset', [['', 'default'], ['hybrid', 'hybrid'], ['rrf', 'rrf'],
      ['vector', 'vector'], ['lexical', 'lexical']], get('preset')),
    h('button', { type: 'submit', class: 'primary' }, 'Search'));
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const next = new URLSearchParams();
    for (const [key, value] of new FormData(form)) if (value) next.set(key, value);
    window.location.hash = `#/memories?${next}`;
  });
  return form;
}

function filters(params) {
  const out = {};
  if (params.get('type')) out.types = [params.get('type')];
  if (params.get('lifecycle')) out.lifecycles = [params.get('lifecycle')];
  const tags = (params.get('tags') || '').split(',').map((t) => t.trim()).filter(Boolean);
  if (tags.length) out.tags_any = tags;
  if (params.get('pinned')) out.pinned = params.get('pinned') === 'true';
  if (params.get('after')) out.created_after = `${params.get('after')}T00:00:00Z`;
  if (params.get('before')) out.created_before = `${params.get('before')}T00:00:00Z`;
  return out;
}

const byTier = (params) => (memory) => !params.get('tier') || memory.tier === params.get('tier');

export async function memoriesPage(root, { params }) {
  root.append(h('h1', {}, 'Memories'), filterForm(params));
  const results = h('section', { 'aria-label': 'Results', 'aria-live': 'polite' }, h('p', { class: 'muted' }, 'Loading…'));
  root.append(results);
  if (params.get('q')) return searchResults(results, params);
  return listResults(results, params);
}

async function searchResults(results, params) {
  const body = { query: params.get('q'), scope: scopeBody(), k: 50, filters: filters(params) };
  if (params.get('preset')) body.preset = params.get('preset');
  const answer = await api('POST', '/v1/recall', { body });
  const hits = answer.hits.filter((hit) => byTier(params)(hit.memory));
  const top = Math.max(1e-9, ...hits.flatMap((hit) => Object.values(hit.signals || {})));
  replace(results, h('p', { class: 'muted' }, `${hits.length} hits · ${Math.round(answer.timings_ms?.total ?? 0)} ms`),
    table(['#', 'memory', 'score', 'signals', 'type', 'lifecycle', 'tier'], hits.map((hit, i) =>
      h('tr', { class: 'hit' },
        h('td', {}, i + 1),
        h('td', {}, memoryLink(hit.memory, hit.memory.content.slice(0, 160))),
        h('td', { class: 'mono score' }, hit.score.toFixed(4)),
        h('td', {}, signalBars(hit.signals || {}, top)),
        h('td', {}, hit.memory.type), h('td', {}, hit.memory.lifecycle),
        h('td', {}, hit.memory.tier)))));
}

function signalBars(signals, top) {
  return h('div', { class: 'signals', role: 'list', 'aria-label': 'Per-signal scores' },
    Object.entries(signals).map(([name, value]) => {
      const bar = h('span', { class: 'bar', 'aria-hidden': 'true' });
      bar.style.width = `${Math.max(1, Math.round(76 * Math.min(1, Math.abs(value) / top)))}px`;
      return [h('span', { role: 'listitem' }, name), bar, h('span', { class: 'mono' }, Number(value).toFixed(3))];
    }));
}

const SORTS = { created: (m) => m.created_at, importance: (m) => m.importance, type: (m) => m.type,
  lifecycle: (m) => m.lifecycle, tier: (m) => m.tier };

async function listResults(results, params) {
  const page = await api('GET', '/v1/memories', { query: { ...scopeQuery(), ...filters(params),
    limit: 50, cursor: params.get('cursor') } });
  let items = page.items.filter(byTier(params));
  const sort = params.get('sort') || 'created';
  const dir = params.get('dir') || 'desc';
  const key = SORTS[sort] || SORTS.created;
  items = [...items].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0) * (dir === 'asc' ? 1 : -1));
  const header = (name, label) => {
    const next = new URLSearchParams(params);
    next.set('sort', name);
    next.set('dir', sort === name && dir === 'desc' ? 'asc' : 'desc');
    const state = sort === name ? (dir === 'asc' ? 'ascending' : 'descending') : 'none';
    return h('a', { href: `#/memories?${next}`, dataset: { ariaSort: state } }, label,
      sort === name ? (dir === 'asc' ? ' ▲' : ' ▼') : '');
  };
  const nextParams = new URLSearchParams(params);
  if (page.next_cursor) nextParams.set('cursor', page.next_cursor);
  replace(results,
    table([header('created', 'created'), 'content', header('type', 'type'), header('lifecycle', 'lifecycle'),
      header('tier', 'tier'), header('importance', 'importance'), 'tags'], items.map((m) =>
      h('tr', { class: 'memory-row' },
        h('td', { class: 'muted' }, fmtTime(m.created_at)),
        h('td', {}, memoryLink(m, m.content.slice(0, 140)), m.pinned ? ' 📌' : ''),
        h('td', {}, m.type), h('td', {}, m.lifecycle), h('td', {}, m.tier),
        h('td', {}, m.importance.toFixed(2)), h('td', {}, tagChips(m.tags))))),
    h('div', { class: 'row' },
      params.get('cursor') ? h('button', { type: 'button', onclick: () => window.history.back() }, '← Previous page') : null,
      page.next_cursor ? h('a', { href: `#/memories?${nextParams}`, id: 'next-page' }, 'Next page →') : null,
      h('span', { class: 'muted' }, `${items.length} on this page`)));
}

// -- one memory ---------------------------------------------------------------------------

function path(id, suffix = '') {
  return `/v1/memories/${encodeURIComponent(id)}${suffix}`;
}

export async function memoryPage(root, { arg }) {
  const memory = await api('GET', path(arg), { query: { ...scopeQuery(), include_deleted: true } });
  const reload = () => window.dispatchEvent(new HashChangeEvent('hashchange'));
  root.append(
    h('h1', {}, `Memory ${short(memory.id)}`),
    h('p', { class: 'content', id: 'memory-content' }, memory.content),
    properties(memory),
    h('div', { class: 'row', role: 'group', 'aria-label': 'Actions' }, memoryActions(memory, reload)));
  const levels = h('section', { 'aria-labelledby': 'levels-title' }, h('h2', { id: 'levels-title' }, 'Versions and evidence'));
  const history = h('section', { 'aria-labelledby': 'history-title' }, h('h2', { id: 'history-title' }, 'History'));
  const neighbours = h('section', { 'aria-labelledby': 'graph-title' }, h('h2', { id: 'graph-title' }, 'Graph neighbours'));
  root.append(levels, history, neighbours);
  later(neighbours, () => renderNeighbours(neighbours, memory));
  await Promise.all([renderLevels(levels, memory, reload), renderHistory(history, memory, reload)]);
}

function properties(m) {
  const p = m.provenance || {};
  const rows = [
    ['type', m.type], ['lifecycle', m.lifecycle], ['tier', m.tier],
    ['importance', m.importance.toFixed(2)], ['pinned', m.pinned ? `yes${m.pinned_min_level ? ` (min R${m.pinned_min_level})` : ''}` : 'no'],
    ['version', m.version], ['tags', tagChips(m.tags)],
    ['scope', Object.entries(m.scope).filter(([, v]) => v).map(([k, v]) => `${k}=${v}`).join(' ')],
    ['provenance', `${p.source || ''} · ${p.extractor || ''}${p.model ? ` · ${p.model}` : ''}`],
    ['source events', (p.event_ids || []).map((id) => witnessChip(m.id, id))],
    ['created', fmtTime(m.created_at)], ['updated', fmtTime(m.updated_at)],
    ['deleted', m.deleted_at ? fmtTime(m.deleted_at) : '—'],
  ];
  return h('dl', { class: 'props' }, rows.map(([k, v]) => [h('dt', {}, k), h('dd', { dataset: { prop: k } }, v)]));
}

function memoryActions(m, reload) {
  const q = scopeQuery();
  const deleted = m.lifecycle === 'deleted';
  return [
    !deleted && act('write', m.pinned ? 'Unpin' : 'Pin', async () => {
      await api('PUT', path(m.id, '/pin'), { query: q, body: { pinned: !m.pinned, reason: m.pinned ? 'unpinned in the UI' : 'pinned in the UI' } });
      toast(m.pinned ? 'Unpinned' : 'Pinned'); reload();
    }),
    !deleted && act('moderate', 'Compress now', async () => {
      await api('POST', path(m.id, '/compress'), { query: q, body: { reason: 'compress now (UI)' } });
      toast('Compressed'); reload();
    }),
    !deleted && act('write', 'Forget…', async () => {
      const reason = await confirmDialog({ title: 'Forget this memory?', danger: true, confirmLabel: 'Forget',
        message: 'It is soft-deleted: out of recall, recoverable from its history.' });
      if (reason === null) return;
      await api('DELETE', path(m.id), { query: q, body: { reason } });
      toast('Forgotten'); reload();
    }, { class: 'danger' }),
    deleted && act('write', 'Recover…', async () => {
      const reason = await confirmDialog({ title: 'Recover this memory?', confirmLabel: 'Recover',
        message: 'It comes back as it was before it was forgotten.' });
      if (reason === null) return;
      await api('POST', path(m.id, '/recover'), { query: q, body: { reason } });
      toast('Recovered'); reload();
    }, { id: 'recover' }),
  ];
}

const LEVELS = ['R1', 'R3', 'R4', 'R5'];

async function representation(m, level, have) {
  try {
    const got = await api('GET', path(m.id), { query: { ...scopeQuery(), include_deleted: true, level, have } });
    return got.representation;
  } catch (error) {
    if (error.status === 404) return null;
    throw error;
  }
}

function witnessName(w) {
  return w.event_id || `${w.conversation_id}:${w.seq_from}-${w.seq_to}`;
}

function levelBody(m, rep) {
  if (rep.level === 'R3') {
    const bullets = rep.content.split('\n').filter((line) => line.trim());
    const perBullet = rep.witnesses.length === bullets.filter((b) => b.trim().startsWith('-')).length;
    let next = 0;
    return h('div', {}, bullets.map((line) => h('div', { class: 'content' }, line,
      perBullet && line.trim().startsWith('-') ? witnessChip(m.id, witnessName(rep.witnesses[next]), `witness ${++next}`) : null)),
    perBullet ? null : h('div', {}, rep.witnesses.map((w, i) => witnessChip(m.id, witnessName(w), `witness ${i + 1}`))));
  }
  if (rep.level === 'R5' && rep.events.length) return evidenceTable(rep.events);
  return h('div', { class: 'content' }, rep.content);
}

async function renderLevels(section, m, reload) {
  const [versions, ...reps] = await Promise.all([
    api('GET', path(m.id, '/versions'), { query: scopeQuery() }),
    ...LEVELS.map((level) => representation(m, level))]);
  const byId = Object.fromEntries(versions.items.map((v) => [v.id, v]));
  const columns = [h('article', { class: `level${m.active_version_id ? '' : ' is-active'}`, dataset: { level: 'content' } },
    h('h3', {}, 'Content ', m.active_version_id ? null : h('span', { class: 'badge active' }, 'active')),
    h('div', { class: 'content' }, m.content))];
  reps.forEach((rep, i) => {
    if (!rep) return;
    const active = rep.version_id && rep.version_id === m.active_version_id;
    const version = rep.version_id ? byId[rep.version_id] : null;
    columns.push(h('article', { class: `level${active ? ' is-active' : ''}`, dataset: { level: LEVELS[i] } },
      h('h3', {}, LEVELS[i], ' ', active ? h('span', { class: 'badge active' }, 'active') : null,
        h('span', { class: 'muted' }, ` ${rep.tokens} tokens${version ? ` · ${version.provider}` : ''}`)),
      levelBody(m, rep),
      rep.version_id && !active ? act('moderate', `Promote ${LEVELS[i]}`, async () => {
        const reason = await confirmDialog({ title: `Make ${LEVELS[i]} what recall injects?`, confirmLabel: 'Promote' });
        if (reason === null) return;
        await api('PUT', path(m.id, `/active/${encodeURIComponent(rep.version_id)}`), { query: scopeQuery(), body: { reason } });
        toast(`${LEVELS[i]} promoted`); reload();
      }) : null));
  });
  section.append(h('div', { class: 'levels' }, columns));
  if (!reps.some(Boolean)) section.append(h('p', { class: 'muted' }, 'No compressed versions yet.'));
  section.append(h('div', { class: 'row' }, pinLevel(m, reload), rerollPreview(m)));
}

function pinLevel(m, reload) {
  if (!may('write') || m.lifecycle === 'deleted') return null;
  const chooser = h('select', { name: 'min_level' }, [1, 2, 3, 4, 5].map((n) =>
    h('option', { value: n, selected: n === (m.pinned_min_level || 3) }, `R${n}`)));
  return h('span', { class: 'row' }, h('label', {}, 'Pin at or above', chooser),
    act('write', 'Pin level', async () => {
      await api('PUT', path(m.id, '/pin'), { query: scopeQuery(), body: { pinned: true, min_level: Number(chooser.value), reason: 'pin level (UI)' } });
      toast(`Pinned at R${chooser.value}+`); reload();
    }));
}

function rerollPreview(m) {
  const out = h('div', { class: 'content', 'aria-live': 'polite' });
  const count = h('input', { type: 'number', min: 0, max: 5, value: 1, name: 'reroll', size: 3 });
  const show = async () => {
    let rep = await representation(m, 'auto');
    for (let i = 0; rep && i < Number(count.value); i += 1) {
      const next = await representation(m, 'more', rep.level);
      if (!next) break;
      rep = next;
    }
    replace(out, rep ? h('div', {}, h('strong', {}, `Reroll ${count.value} serves ${rep.level}: `), rep.content) : 'Nothing above.');
  };
  return h('span', {}, h('label', {}, 'Reroll preview', count),
    h('button', { type: 'button', onclick: () => run(show) }, 'Preview'), out);
}

function diff(before, after) {
  if (!before && after) return h('div', { class: 'diff' }, 'created: ', h('ins', {}, after.content));
  const keys = new Set([...Object.keys(before || {}), ...Object.keys(after || {})]);
  const skip = new Set(['updated_at', 'version', 'content_hash']);
  const changed = [...keys].filter((k) => !skip.has(k) &&
    JSON.stringify((before || {})[k]) !== JSON.stringify((after || {})[k]));
  const show = (v) => (typeof v === 'string' ? v : JSON.stringify(v));
  return h('ul', { class: 'diff' }, changed.map((k) => h('li', {}, h('strong', {}, k), ': ',
    before && k in before ? h('del', {}, show(before[k])) : null, ' → ',
    after && k in after ? h('ins', {}, show(after[k])) : null)));
}

async function renderHistory(section, m, reload) {
  const history = await api('GET', path(m.id, '/history'), { query: scopeQuery() });
  section.append(h('ol', { class: 'timeline', id: 'timeline' }, history.items.map((row) => {
    const version = row.after && row.after.version;
    const canRoll = version && version !== m.version && m.lifecycle !== 'deleted' && row.kind !== 'DELETE';
    return h('li', { class: 'history-row', dataset: { kind: row.kind } },
      h('div', {}, h('strong', {}, row.kind), ' ', h('span', { class: 'muted' }, fmtTime(row.ts)),
        ' · by ', h('span', { class: 'mono' }, row.actor), version ? ` · v${version}` : ''),
      h('div', {}, 'reason: ', row.reason || '—'),
      diff(row.before, row.after),
      canRoll ? act('rollback', `Roll back to v${version}`, async () => {
        const reason = await confirmDialog({ title: `Roll back to version ${version}?`, confirmLabel: 'Roll back',
          message: 'Its contents are written back as a new version (audited as ROLLBACK).' });
        if (reason === null) return;
        await api('POST', `/v1/memories/${encodeURIComponent(m.id)}/rollback`, { query: scopeQuery(), body: { to_version: version, reason } });
        toast(`Rolled back to v${version}`); reload();
      }) : null);
  })));
}

async function renderNeighbours(section, m) {
  const entities = await api('GET', '/v1/graph/entities', { query: { ...scopeQuery(), limit: 500 } });
  const text = m.content.toLowerCase();
  const mentioned = entities.items.filter((e) => text.includes(e.canonical_name.toLowerCase()));
  if (!mentioned.length) { section.append(h('p', { class: 'muted' }, 'No graph entity mentioned.')); return; }
  const lists = await Promise.all(mentioned.slice(0, 5).map((e) =>
    api('GET', `/v1/graph/entities/${encodeURIComponent(e.id)}/neighbors`, { query: scopeQuery() })));
  section.append(h('ul', {}, lists.map((n) => h('li', {}, h('a', { href: `#/graph/${encodeURIComponent(n.entity.id)}` }, n.entity.name),
    ' → ', n.neighbors.map((x) => x.name).join(', ') || 'no neighbours'))));
}
