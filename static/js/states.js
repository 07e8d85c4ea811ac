// states.js — the empty, loading, pending and error panels every page uses,
// so they look and read the same everywhere.

import { api } from './api.js';
import { h, fmtCount, fmtN } from './format.js';

export function stateView(title, message, kind = 'empty', ...extra) {
  const el = h('div.state.' + kind, { role: kind === 'error' ? 'alert' : 'status' }, h('h2', null, title));
  if (message) el.append(kind === 'error' && message.length > 80 ? h('pre', null, message) : h('p', null, message));
  if (kind === 'loading') el.append(h('div.progress.skeleton', { 'aria-hidden': 'true' }));
  el.append(...extra);
  return el;
}

// Indexing progress from /api/health; tolerant of the exact field names.
export async function indexingProgress() {
  try {
    const hl = await api.health();
    const ix = hl.indexing || hl.progress || {};
    let frac = null;
    if (typeof ix === 'number') frac = ix > 1 ? ix / 100 : ix;
    else if (typeof ix.fraction === 'number') frac = ix.fraction;
    else if (typeof ix.percent === 'number') frac = ix.percent / 100;
    else if (ix.total && typeof ix.done === 'number') frac = ix.done / ix.total;
    else if (ix.bytes_total && typeof ix.bytes_done === 'number') frac = ix.bytes_done / ix.bytes_total;
    return { frac, health: hl };
  } catch {
    return { frac: null, health: null };
  }
}

export async function pendingView(profile) {
  const { frac } = await indexingProgress();
  const bar = h(
    'div.progress',
    {
      role: 'progressbar',
      'aria-label': 'Indexing progress',
      'aria-valuemin': '0',
      'aria-valuemax': '100',
      'aria-valuenow': frac === null ? undefined : Math.round(frac * 100),
    },
    h('i', { style: { width: frac === null ? '30%' : `${Math.round(frac * 100)}%` } }),
  );
  if (frac === null) bar.classList.add('skeleton');
  return stateView(
    'Indexing this profile…',
    `${profile.path || profile.id} is being read. This page updates by itself when it is ready.`,
    'pending',
    bar,
    frac === null ? null : h('p.muted', null, `${Math.round(frac * 100)}% of all pending profiles done`),
  );
}

// The button under a long table that shows the rows held back.
export function showAllButton(total, shown, onShow) {
  return h('button.btn', { type: 'button', onclick: onShow }, `Show all ${fmtN(total, 'row')} (${fmtCount(shown)} shown)`);
}
