// profiles.js — the profile list: every run and host, newest first (the
// server's order), the latest highlighted, a filter box, and a poll every
// few seconds so new or finished profiles appear without a reload. The table
// is rebuilt only when the answer changes, and keeps its scroll and focus.

import { api } from './api.js';
import { h, fmtBytes, fmtCount, fmtDate, fmtDur, UNKNOWN } from './format.js';
import { stateView, indexingProgress } from './states.js';
import { fetchFindings, topFinding, severityBadge } from './findings.js';

const POLL_MS = 3000;

export function mount(view) {
  let stopped = false;
  let timer = null;
  let lastText = '';
  let profiles = null;
  let progress = null;
  const ctrl = new AbortController();
  // The most severe finding of each indexed profile, by id, mtime and size:
  // null none, undefined not asked yet. Asked one at a time, newest first.
  const top = new Map();
  let asking = false;

  const filter = h('input', {
    type: 'search',
    placeholder: 'Filter by run, host, format…',
    'aria-label': 'Filter profiles',
    oninput: () => render(),
  });
  const count = h('span.sub', { 'aria-live': 'polite' });
  const body = h('div', { style: { minHeight: '300px' } });
  view.replaceChildren(h('div.page-head', null, h('div.grow', null, h('h1', null, 'Profiles'), count), filter), body);
  body.append(skeletonTable());

  async function poll() {
    try {
      const res = await api.profiles({ signal: ctrl.signal });
      const list = res.profiles || [];
      const pending = list.some((p) => p.status === 'pending' || p.status === 'indexing');
      const prog = pending ? (await indexingProgress()).frac : null;
      const text = JSON.stringify(list) + '|' + prog;
      if (stopped) return;
      if (text !== lastText) {
        lastText = text;
        profiles = list;
        progress = prog;
        render();
        askFindings();
      }
    } catch (e) {
      if (stopped || e.name === 'AbortError') return;
      lastText = '';
      profiles = null;
      body.replaceChildren(stateView('Cannot reach the xprof-view server', e.message + ' Retrying every few seconds.', 'error'));
      count.textContent = '';
    }
    if (!stopped) timer = setTimeout(poll, POLL_MS);
  }

  function findingKey(p) {
    return `${p.id}@${p.mtime_ns}@${p.size_bytes}`;
  }

  async function askFindings() {
    if (asking) return;
    asking = true;
    try {
      for (const p of profiles || []) {
        if (stopped || p.status !== 'ok' || top.has(findingKey(p))) continue;
        let f = null;
        try {
          f = topFinding(await fetchFindings(p.id, { signal: ctrl.signal }));
        } catch (e) {
          if (e.name === 'AbortError') return;
        }
        top.set(findingKey(p), f);
        if (!stopped) render();
      }
    } finally {
      asking = false;
    }
  }

  function findingCell(p) {
    const f = top.get(findingKey(p));
    if (f === undefined) return h('td.finding-cell', null, p.status === 'ok' ? '…' : '');
    if (f === null) return h('td.finding-cell.muted', null, 'none');
    return h(
      'td.finding-cell',
      { title: f.title },
      h('a', { href: `#/p/${encodeURIComponent(p.id)}/overview` }, severityBadge(f.severity), ' ', f.kind),
    );
  }

  function render() {
    if (!profiles) return;
    if (profiles.length === 0) {
      count.textContent = 'No profiles yet';
      body.replaceChildren(
        stateView(
          'No profiles found',
          'xprof-view looks for *.xplane.pb, *.trace.json(.gz) and Nsight Systems *.sqlite files under --profile-dir. ' +
            'This list updates by itself when profiles appear.',
          'empty',
        ),
      );
      return;
    }
    const q = filter.value.trim().toLowerCase();
    const shown = q
      ? profiles.filter((p) =>
          [p.run, p.host, p.path, p.format, p.producer, p.status].some((s) => s && String(s).toLowerCase().includes(q)),
        )
      : profiles;
    count.textContent = q
      ? `${shown.length} of ${profiles.length} profiles`
      : `${profiles.length} profile${profiles.length === 1 ? '' : 's'}, newest first`;
    // As the server picks /api/profiles/latest: a broken newer capture never hides a good one.
    const latestId = (profiles.find((p) => p.status === 'ok') ?? profiles.find((p) => p.partial) ?? profiles[0]).id;
    const wrap = body.querySelector('.table-wrap');
    const scroll = wrap ? wrap.scrollTop : 0;
    const focusedId = document.activeElement && document.activeElement.closest('tr')?.dataset.id;
    const table = h(
      'table.data',
      { 'aria-label': 'Profiles' },
      h(
        'thead',
        null,
        h(
          'tr',
          null,
          ...['Run', 'Host', 'Format'].map((t) => h('th', { scope: 'col' }, t)),
          ...['Size', 'Events', 'Devices', 'Steps', 'Duration'].map((t) => h('th.num', { scope: 'col' }, t)),
          h('th', { scope: 'col' }, 'Modified'),
          h('th', { scope: 'col' }, 'Status'),
          h('th', { scope: 'col' }, 'Top finding'),
          h('th', { scope: 'col' }, 'Open'),
        ),
      ),
      h(
        'tbody',
        null,
        shown.map((p) => row(p, p.id === latestId)),
      ),
    );
    const newWrap = h('div.table-wrap', null, table);
    body.replaceChildren(newWrap);
    newWrap.scrollTop = scroll;
    if (shown.length === 0) body.append(stateView('No profile matches the filter', '', 'empty'));
    if (focusedId) newWrap.querySelector(`tr[data-id="${CSS.escape(focusedId)}"] a`)?.focus();
  }

  function row(p, latest) {
    const base = `#/p/${encodeURIComponent(p.id)}`;
    const ok = p.status === 'ok' || p.status === 'ready' || p.status === 'indexed';
    const pending = p.status === 'pending' || p.status === 'indexing';
    const status = h(
      'td',
      null,
      h(
        `span.badge.${ok ? 'ok' : pending ? 'pending' : p.status === 'error' ? 'error' : 'x'}`,
        null,
        pending && progress !== null ? `indexing ${Math.round(progress * 100)}%` : p.status || UNKNOWN,
      ),
    );
    if (p.partial)
      status.append(' ', h('span.badge.pending', { title: 'The file was truncated or partly unreadable' }, 'partial'));
    if (p.error) status.append(h('span.err-msg', null, p.error));
    const devs = Array.isArray(p.devices) ? p.devices.length : p.devices;
    const tr = h(
      `tr${latest ? '.latest' : ''}`,
      { dataset: { id: p.id } },
      h(
        'td',
        { title: p.path || '' },
        p.run || UNKNOWN,
        latest ? h('span', null, ' ', h('span.badge.latest', null, 'latest')) : null,
      ),
      h('td', { title: p.path || '' }, p.host || (p.path || '').split('/').pop()),
      h('td', null, [p.format, p.producer].filter(Boolean).join(' · ') || UNKNOWN),
      h('td.num', null, fmtBytes(p.size_bytes)),
      h('td.num', null, fmtCount(p.events)),
      h('td.num', null, devs === undefined || devs === null || (!ok && !devs) ? UNKNOWN : fmtCount(devs)),
      h('td.num', null, fmtCount(p.step_count)),
      h('td.num', null, fmtDur(p.duration_us)),
      h('td', null, fmtDate(p.mtime)),
      status,
      findingCell(p),
      h(
        'td.links',
        null,
        ok || p.status === undefined
          ? [
              h('a', { href: `${base}/overview` }, 'Overview'),
              h('a', { href: `${base}/kernels` }, 'Kernels'),
              h('a', { href: `${base}/timeline` }, 'Timeline'),
              h('a', { href: `${base}/tools` }, 'Tools'),
            ]
          : pending
            ? h('span.muted', null, 'waiting…')
            : h('a', { href: `${base}/overview` }, 'Details'),
      ),
    );
    return tr;
  }

  poll();
  return () => {
    stopped = true;
    clearTimeout(timer);
    ctrl.abort();
  };
}

function skeletonTable() {
  const wrap = h('div.table-wrap', { 'aria-busy': 'true' });
  for (let i = 0; i < 4; i++) wrap.append(h('div.skeleton', { style: { height: '22px', margin: '12px' } }));
  return wrap;
}
