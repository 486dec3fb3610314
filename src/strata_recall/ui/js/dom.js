// Tiny DOM helpers. Data is only ever inserted as text (never as HTML), so nothing a memory
// says can run as script.

export function h(tag, attrs = {}, ...children) {
  const svg = ['svg', 'polyline', 'text', 'line', 'g'].includes(tag);
  const el = svg ? document.createElementNS('http://www.w3.org/2000/svg', tag)
    : document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key.startsWith('on')) el.addEventListener(key.slice(2), value);
    else if (key === 'class') el.setAttribute('class', value);
    else if (key === 'dataset') Object.assign(el.dataset, value);
    else if (key === 'value' && !svg) el.value = value;
    else if (key === 'checked' || key === 'selected') el[key] = true;
    else el.setAttribute(key, value === true ? '' : String(value));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : String(child));
  }
}

export function replace(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

export function fmtTime(iso) {
  return iso ? new Date(iso).toLocaleString() : '';
}

export function short(id) {
  return id ? id.slice(0, 8) + '…' + id.slice(-4) : '';
}

export function toast(message, isError = false) {
  const el = document.getElementById('toast');
  el.textContent = message;
  el.className = isError ? 'toast error' : 'toast';
  el.hidden = false;
  clearTimeout(toast.timer);
  toast.timer = setTimeout(() => { el.hidden = true; }, isError ? 8000 : 3000);
}

// A modal confirmation (a real <dialog>: focus moves in and comes back, Escape cancels).
// Resolves to the reason typed (or '' when none is asked), or null when cancelled.
export function confirmDialog({ title, message, reason = true, confirmLabel = 'Confirm',
  danger = false, fields = [] }) {
  return new Promise((resolve) => {
    const opener = document.activeElement;
    const reasonInput = reason ? h('textarea', { name: 'reason', rows: 2, cols: 40, required: true }) : null;
    const form = h('form', { method: 'dialog' },
      h('h2', { id: 'dialog-title' }, title),
      message ? h('p', {}, message) : null,
      fields,
      reason ? h('p', {}, h('label', {}, 'Reason (recorded in the history)', reasonInput)) : null,
      h('div', { class: 'row' },
        h('button', { type: 'button', value: 'cancel', onclick: () => close(null) }, 'Cancel'),
        h('button', { type: 'submit', class: danger ? 'danger' : 'primary' }, confirmLabel)));
    const dialog = h('dialog', { 'aria-labelledby': 'dialog-title' }, form);
    function close(value) {
      dialog.close();
      dialog.remove();
      if (opener && opener.focus) opener.focus();
      resolve(value);
    }
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      const text = reasonInput ? reasonInput.value.trim() : '';
      if (reason && !text) { reasonInput.focus(); return; }
      close(text);
    });
    dialog.addEventListener('cancel', (event) => { event.preventDefault(); close(null); });
    document.body.append(dialog);
    dialog.showModal();
    (reasonInput || form.querySelector('button[type=submit]')).focus();
  });
}

// A popover anchored under `anchor`; closes on Escape, outside click or the close button.
export function popover(anchor, label, body) {
  document.querySelectorAll('.popover').forEach((p) => p.remove());
  const closer = h('button', { type: 'button', 'aria-label': 'Close' }, '×');
  const box = h('div', { class: 'popover', role: 'dialog', 'aria-label': label, tabindex: '-1' },
    h('div', { class: 'row' }, h('strong', {}, label), closer), body);
  const rect = anchor.getBoundingClientRect();
  box.style.top = Math.min(rect.bottom + 4, window.innerHeight - 120) + 'px';
  box.style.left = Math.max(4, Math.min(rect.left, window.innerWidth - 660)) + 'px';
  function close() {
    box.remove();
    document.removeEventListener('keydown', onKey);
    document.removeEventListener('mousedown', onOutside);
    anchor.focus();
  }
  function onKey(event) { if (event.key === 'Escape') close(); }
  function onOutside(event) { if (!box.contains(event.target)) close(); }
  closer.addEventListener('click', close);
  document.addEventListener('keydown', onKey);
  setTimeout(() => document.addEventListener('mousedown', onOutside), 0);
  document.body.append(box);
  box.focus();
  return box;
}

export function table(headers, rows, { caption } = {}) {
  return h('div', { class: 'table-wrap' }, h('table', {},
    caption ? h('caption', { class: 'muted' }, caption) : null,
    h('thead', {}, h('tr', {}, headers.map((x) => h('th', { scope: 'col',
      'aria-sort': x instanceof Element ? x.dataset.ariaSort : null }, x)))),
    h('tbody', {}, rows)));
}
