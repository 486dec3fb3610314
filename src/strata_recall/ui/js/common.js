// Pieces several pages share: role-aware action buttons, witness chips, memory links.
import { api, may, scopeQuery } from './api.js';
import { fmtTime, h, popover, short, table, toast } from './dom.js';

// A button shown only when the caller's role allows `operation` (the server checks anyway).
export function act(operation, label, handler, attrs = {}) {
  if (!may(operation)) return null;
  return h('button', { type: 'button', dataset: { needs: operation }, ...attrs,
    onclick: (event) => run(() => handler(event)) }, label);
}

// Runs an action, reporting its error (with the server's code) as a toast.
export async function run(action, done) {
  try {
    const result = await action();
    if (done) toast(done);
    return result;
  } catch (error) {
    toast(`${error.code ? error.code + ': ' : ''}${error.message}`, true);
    return undefined;
  }
}

export function memoryLink(memory, text) {
  return h('a', { href: `#/memory/${encodeURIComponent(memory.id)}` }, text || short(memory.id));
}

export function evidenceTable(events) {
  return table(['seq', 'author', 'time', 'text'], events.map((event) => h('tr', { class: 'evidence-row' },
    h('td', { class: 'mono' }, `${event.conversation_id}#${event.seq}`),
    h('td', { class: 'ev-author' }, event.author || event.role || ''),
    h('td', { class: 'ev-ts', title: event.ts }, fmtTime(event.ts)),
    h('td', { class: 'ev-text content' }, event.text))));
}

// A chip for one witness (an event id or a conversation slice): opens the raw turns.
export function witnessChip(memoryId, witness, label) {
  const chip = h('button', { type: 'button', class: 'chip witness', dataset: { witness },
    'aria-haspopup': 'dialog', title: 'Show the raw turns behind this' }, label || short(witness));
  chip.addEventListener('click', () => run(async () => {
    const data = await api('GET', `/v1/memories/${encodeURIComponent(memoryId)}/evidence`,
      { query: { ...scopeQuery(), witness } });
    popover(chip, `Evidence ${witness}`, evidenceTable(data.items));
  }));
  return chip;
}

export function tagChips(tags) {
  return (tags || []).map((tag) => h('span', { class: 'badge' }, tag));
}

export const LIFECYCLES = ['candidate', 'active', 'disputed', 'superseded', 'archived', 'expired',
  'deleted', 'deprecated'];
export const TYPES = ['semantic', 'episodic', 'procedural', 'identity', 'user_profile', 'shared',
  'agent_private', 'policy', 'controller_policy', 'org_identity', 'relational_contract',
  'person_core', 'narrative', 'texture', 'inside_joke'];
export const TIERS = ['hot', 'warm', 'cold'];

export function select(name, label, options, value, attrs = {}) {
  return h('label', {}, label, h('select', { name, ...attrs },
    options.map(([v, text]) => h('option', { value: v, selected: v === value }, text))));
}

// Fills a section below the first screen once its data arrives, without holding the first
// screen back (it is marked busy until then; a failure is shown in place).
export function later(section, fill) {
  section.setAttribute('aria-busy', 'true');
  fill().catch((error) => section.append(h('p', { class: 'error-text' }, `Could not load: ${error.message}`)))
    .finally(() => section.removeAttribute('aria-busy'));
}
