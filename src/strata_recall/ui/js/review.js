// The review queue: candidates with their evidence, approve (tags, topic, importance 0-4),
// reject with a reason, undo an applied decision; bulk actions and keyboard shortcuts.
import { api, may, scopeQuery } from './api.js';
import { confirmDialog, fmtTime, h, replace, toast } from './dom.js';
import { act, later, memoryLink, run, tagChips, witnessChip } from './common.js';
import { reviewItemsSection } from './review_items.js';

const path = (id, action) => `/v1/memories/${encodeURIComponent(id)}/${action}`;

export async function reviewPage(root) {
  const queue = await api('GET', '/v1/review', { query: { ...scopeQuery(), limit: 100 } });
  const reload = () => window.dispatchEvent(new HashChangeEvent('hashchange'));
  root.append(h('h1', {}, 'Review queue'),
    h('p', { class: 'muted' }, `${queue.items.length} candidate(s). Keys: `,
      h('kbd', {}, 'j'), '/', h('kbd', {}, 'k'), ' move, ', h('kbd', {}, 'x'), ' select, ',
      h('kbd', {}, 'a'), ' approve, ', h('kbd', {}, 'r'), ' reject.'));
  const cards = queue.items.map((m) => candidateCard(m, reload));
  if (may('write') && cards.length) root.append(bulkBar(cards, reload));
  root.append(h('section', { 'aria-label': 'Candidates', id: 'queue' },
    cards.length ? cards.map((c) => c.el) : h('p', { class: 'muted' }, 'Nothing to review.')));
  root.append(reviewItemsSection(reload));
  const applied = h('section', { 'aria-labelledby': 'applied-title' },
    h('h2', { id: 'applied-title' }, 'Recently applied decisions'));
  root.append(applied);
  keyboard(cards);
  later(applied, () => appliedDecisions(applied, reload));
}

function fields(m) {
  return {
    tags: h('input', { name: 'tags', size: 16, 'aria-label': 'Tags to add (comma-separated)', placeholder: 'tags, comma-separated' }),
    topic: h('input', { name: 'topic', size: 10, 'aria-label': 'Topic', placeholder: 'topic' }),
    importance: h('select', { name: 'importance', 'aria-label': 'Importance 0-4' },
      [0, 1, 2, 3, 4].map((n) => h('option', { value: n, selected: n === Math.round(m.importance * 4) }, `importance ${n}`))),
  };
}

function approveBody(f, reason = 'approved in review') {
  const body = { reason, importance: Number(f.importance.value) };
  const tags = f.tags.value.split(',').map((t) => t.trim()).filter(Boolean);
  if (tags.length) body.tags = tags;
  if (f.topic.value.trim()) body.topic = f.topic.value.trim();
  return body;
}

function candidateCard(m, reload) {
  const f = fields(m);
  const q = scopeQuery();
  const proposed = m.meta && m.meta.proposed;
  const check = may('write') ? h('input', { type: 'checkbox', 'aria-label': `Select ${m.content.slice(0, 40)}` }) : null;
  const card = { id: m.id, memory: m, fields: f, check };
  card.approve = () => run(async () => {
    await api('POST', path(m.id, 'approve'), { query: q, body: approveBody(f) });
    toast('Approved'); reload();
  });
  card.reject = () => run(async () => {
    const reason = await confirmDialog({ title: 'Reject this candidate?', confirmLabel: 'Reject', danger: true });
    if (reason === null) return;
    await api('POST', path(m.id, 'reject'), { query: q, body: { reason } });
    toast('Rejected'); reload();
  });
  card.el = h('article', { class: 'item candidate', tabindex: '0', dataset: { id: m.id }, 'aria-label': m.content.slice(0, 80) },
    h('div', { class: 'row' }, check, memoryLink(m, m.content)),
    h('div', { class: 'muted' }, `${m.type} · ${(m.provenance || {}).source || ''} · ${(m.provenance || {}).extractor || ''} · ${fmtTime(m.created_at)}`,
      ' ', tagChips(m.tags)),
    proposed ? h('div', {}, 'Proposes: ', h('code', {}, JSON.stringify(proposed))) : null,
    h('div', {}, 'Evidence: ', ((m.provenance || {}).event_ids || []).map((id) => witnessChip(m.id, id))),
    may('write') ? h('div', { class: 'row' }, f.tags, f.topic, f.importance,
      h('button', { type: 'button', class: 'primary approve', onclick: card.approve }, 'Approve'),
      h('button', { type: 'button', class: 'danger reject', onclick: card.reject }, 'Reject…')) : null);
  return card;
}

function bulkBar(cards, reload) {
  const q = scopeQuery();
  const chosen = () => cards.filter((c) => c.check && c.check.checked);
  const all = h('input', { type: 'checkbox', 'aria-label': 'Select all', onchange: () => cards.forEach((c) => { c.check.checked = all.checked; }) });
  return h('div', { class: 'row', role: 'group', 'aria-label': 'Bulk actions' },
    h('label', {}, 'all', all),
    h('button', { type: 'button', id: 'bulk-approve', onclick: () => run(async () => {
      const picked = chosen();
      for (const c of picked) await api('POST', path(c.id, 'approve'), { query: q, body: approveBody(c.fields) });
      toast(`Approved ${picked.length}`); reload();
    }) }, 'Approve selected'),
    h('button', { type: 'button', id: 'bulk-reject', class: 'danger', onclick: () => run(async () => {
      const picked = chosen();
      if (!picked.length) return;
      const reason = await confirmDialog({ title: `Reject ${picked.length} candidate(s)?`, confirmLabel: 'Reject', danger: true });
      if (reason === null) return;
      for (const c of picked) await api('POST', path(c.id, 'reject'), { query: q, body: { reason } });
      toast(`Rejected ${picked.length}`); reload();
    }) }, 'Reject selected…'));
}

function keyboard(cards) {
  let current = -1;
  const focus = (i) => {
    if (!cards.length) return;
    current = Math.max(0, Math.min(cards.length - 1, i));
    cards.forEach((c, j) => c.el.classList.toggle('current', j === current));
    cards[current].el.focus();
  };
  const onKey = (event) => {
    if (!document.getElementById('queue')) { document.removeEventListener('keydown', onKey); return; }
    if (event.target.closest('input, textarea, select, dialog') || event.ctrlKey || event.metaKey || event.altKey) return;
    const card = cards[current];
    const actions = { j: () => focus(current + 1), k: () => focus(current - 1),
      x: () => card && card.check && (card.check.checked = !card.check.checked),
      a: () => card && may('write') && card.approve(), r: () => card && may('write') && card.reject() };
    if (actions[event.key]) { event.preventDefault(); actions[event.key](); }
  };
  document.addEventListener('keydown', onKey);
}

async function appliedDecisions(section, reload) {
  const page = await api('GET', '/v1/memories', { query: { ...scopeQuery(), limit: 100 } });
  const applied = page.items.filter((m) => (m.provenance || {}).source !== 'remember' || (m.meta && m.meta.review)).slice(0, 20);
  if (!applied.length) { section.append(h('p', { class: 'muted' }, 'None.')); return; }
  section.append(h('ul', {}, applied.map((m) => h('li', { class: 'applied', dataset: { id: m.id } },
    memoryLink(m, m.content.slice(0, 120)), ' ',
    h('span', { class: 'muted' }, `${m.lifecycle} · ${(m.provenance || {}).source || ''}${m.meta && m.meta.review ? ` · ${m.meta.review.decision} by ${m.meta.review.reviewed_by}` : ''}`), ' ',
    (m.provenance.event_ids || []).map((id) => witnessChip(m.id, id)),
    act('rollback', 'Undo', async () => {
      const reason = await confirmDialog({ title: 'Undo the pipeline\'s decision about this memory?', confirmLabel: 'Undo' });
      if (reason === null) return;
      await api('POST', path(m.id, 'undo'), { query: scopeQuery(), body: { reason } });
      toast('Undone'); reload();
    }, { class: 'undo' })))));
}
