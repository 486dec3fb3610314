// The review queue's other items (decision 0036): what review sources such as the agent
// runtime's dream hold for a human — the change as a diff, its evidence (the signals and
// feedback it was made from), approve / reject. GET /v1/review/items, POST .../approve or .../reject.
import { api, may, scopeQuery } from './api.js';
import { confirmDialog, h, toast } from './dom.js';
import { later, run } from './common.js';

const decide = (item, decision) => `/v1/review/items/${encodeURIComponent(item.source)}/${encodeURIComponent(item.id)}/${decision}`;

export function reviewItemsSection(reload) {
  const section = h('section', { 'aria-labelledby': 'review-items-title', id: 'review-items' },
    h('h2', { id: 'review-items-title' }, 'Proposals (agent runtime and other sources)'));
  later(section, async () => {
    const found = await api('GET', '/v1/review/items', { query: scopeQuery() });
    const cards = found.items.map((item) => itemCard(item, reload));
    section.append(...(cards.length ? cards : [h('p', { class: 'muted' }, 'No proposals.')]));
  });
  return section;
}

function diffLine(line) {
  if (line.startsWith('+') && !line.startsWith('+++')) return h('ins', {}, line);
  if (line.startsWith('-') && !line.startsWith('---')) return h('del', {}, line);
  return h('span', {}, line);
}

function itemCard(item, reload) {
  const q = scopeQuery();
  const approve = () => run(async () => {
    await api('POST', decide(item, 'approve'), { query: q, body: { reason: 'approved in review' } });
    toast('Approved'); reload();
  });
  const reject = () => run(async () => {
    const reason = await confirmDialog({ title: 'Reject this proposal?', confirmLabel: 'Reject', danger: true });
    if (reason === null) return;
    await api('POST', decide(item, 'reject'), { query: q, body: { reason } });
    toast('Rejected'); reload();
  });
  return h('article', { class: 'item review-item', dataset: { id: item.id, source: item.source }, 'aria-label': item.title },
    h('div', { class: 'row' }, h('strong', {}, item.title)),
    h('div', { class: 'muted' }, `${item.source} · ${item.status}`),
    h('pre', { class: 'diff content', 'aria-label': 'Proposed change' },
      item.body.split('\n').flatMap((line) => [diffLine(line), '\n'])),
    h('div', {}, 'Evidence:', h('ul', { class: 'evidence' }, item.evidence.map((line) => h('li', {}, line)))),
    may('write') ? h('div', { class: 'row' },
      h('button', { type: 'button', class: 'primary approve-item', onclick: approve }, 'Approve'),
      h('button', { type: 'button', class: 'danger reject-item', onclick: reject }, 'Reject…')) : null);
}
