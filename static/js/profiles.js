// profiles.js — the profile list: every run and host, newest first (the
// server's order), the latest highlighted, a filter box that matches paths,
// formats, status and findings, headers that sort, rows that open the
// profile's overview on a click. The table fits 1024 px: secondary columns
// fold into each row's detail line on narrow screens. It is fetched again
// when the server's event stream (live.js) says a profile was added, updated
// or removed, or indexing moved on, so new captures appear without a reload
// and without polling. The table is rebuilt only when the answer changes,
// and keeps its scroll and focus.

import { api } from './api.js';
import { h, fmtBytes, fmtCount, fmtDate, fmtDur, UNKNOWN } from './format.js';
import { stateView, indexingProgress } from './states.js';
import { fetchFindings, topFinding, severityBadge } from './findings.js';
import { onLive } from './live.js';

const RETRY_MS = 3000; // when the server cannot be reached
const BATCH_MS = 150; // events in a burst become one fetch

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
  let sortKey = null; // null: the server's order, newest first
  let sortDir = 'descending';

  const filter = h('input', {
    type: 'search',
    placeholder: 'Filter by path, format, status, finding…',
    'aria-label': 'Filter profiles',
    oninput: () => render(),
  });
  const count = h('span.sub', { 'aria-live': 'polite' });
  const body = h('div', { style: { minHeight: '300px' } });
  view.replaceChildren(h('div.page-head', null, h('div.grow', null, h('h1', null, 'Profiles'), count), filter), body);
  body.append(skeletonTable());

  let fetching = false;
  let again = false;
  async function poll() {
    clearTimeout(timer);
    timer = null;
    if (fetching) {
      again = true; // an event came while fetching: fetch once more after
      return;
    }
    fetching = true;
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
      if (!stopped) timer = setTimeout(poll, RETRY_MS);
    } finally {
      fetching = false;
    }
    if (again && !stopped) {
      again = false;
      soon();
    }
  }

  function soon() {
    if (!timer && !stopped) timer = setTimeout(poll, BATCH_MS);
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
    if (f === undefined) return h('td.finding-cell', null, viewable(p) && p.status === 'ok' ? '…' : '');
    if (f === null) return h('td.finding-cell.muted', null, 'none');
    return h(
      'td.finding-cell',
      { title: f.title },
      h('a', { href: `#/p/${encodeURIComponent(p.id)}/overview` }, severityBadge(f.severity), ' ', f.kind),
    );
  }

  // What the filter box matches: names, path, format, status and findings.
  function haystack(p) {
    const f = top.get(findingKey(p));
    const words = [p.run, p.host, p.path, p.format, p.producer, p.status, p.error, p.partial ? 'partial' : null];
    if (f) words.push(f.kind, f.title, f.severity);
    return words.filter(Boolean).join('\n').toLowerCase();
  }

  function sorted(list) {
    const col = COLUMNS.find((c) => c.key === sortKey);
    if (!col) return list;
    const dir = sortDir === 'ascending' ? 1 : -1;
    const val = (p) => col.sort(p, top.get(findingKey(p)));
    return list
      .map((p, i) => [p, val(p), i])
      .sort((a, b) => {
        const x = a[1],
          y = b[1];
        if (x === y || (x === null && y === null)) return a[2] - b[2];
        if (x === null) return 1; // unknowns last, either way
        if (y === null) return -1;
        return (x < y ? -1 : 1) * dir;
      })
      .map((r) => r[0]);
  }

  function header(c) {
    const th = h(`th${c.num ? '.num' : ''}${c.cls ? '.' + c.cls : ''}`, { scope: 'col', dataset: { col: c.key } });
    if (!c.sort) {
      th.append(c.label);
      return th;
    }
    if (sortKey === c.key) th.setAttribute('aria-sort', sortDir);
    th.append(
      h(
        'button.sort',
        {
          type: 'button',
          title: `Sort by ${c.label.toLowerCase()}`,
          onclick: () => {
            if (sortKey === c.key) sortDir = sortDir === 'ascending' ? 'descending' : 'ascending';
            else ((sortKey = c.key), (sortDir = c.num || c.key === 'mtime' ? 'descending' : 'ascending'));
            render();
            body.querySelector(`th[data-col="${c.key}"] button`)?.focus();
          },
        },
        c.label,
      ),
    );
    return th;
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
    const shown = sorted(q ? profiles.filter((p) => haystack(p).includes(q)) : profiles);
    count.textContent = q
      ? `${shown.length} of ${profiles.length} profiles`
      : `${profiles.length} profile${profiles.length === 1 ? '' : 's'}${sortKey ? '' : ', newest first'}`;
    // As the server picks /api/profiles/latest: a broken newer capture never hides a readable one.
    const latestId = (profiles.find(readableProfile) ?? profiles[0]).id;
    const wrap = body.querySelector('.table-wrap');
    const scroll = wrap ? wrap.scrollTop : 0;
    const focusedId = document.activeElement && document.activeElement.closest('tbody tr')?.dataset.id;
    const table = h(
      'table.data.profiles',
      { 'aria-label': 'Profiles' },
      h(
        'colgroup',
        null,
        COLUMNS.map((c) => h(`col.c-${c.key}${c.cls ? '.' + c.cls : ''}`)),
      ),
      h('thead', null, h('tr', null, COLUMNS.map(header))),
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
      'td.c-status',
      { title: p.error || '' },
      h(
        `span.badge.${ok ? 'ok' : pending ? 'pending' : p.status === 'error' ? 'error' : 'x'}`,
        null,
        pending && progress !== null ? `indexing ${Math.round(progress * 100)}%` : p.status || UNKNOWN,
      ),
    );
    if (p.partial)
      status.append(' ', h('span.badge.pending', { title: 'The file was truncated or partly unreadable' }, 'partial'));
    const devs = Array.isArray(p.devices) ? p.devices.length : p.devices;
    const devText = devs === undefined || devs === null || (!ok && !devs) ? UNKNOWN : fmtCount(devs);
    // The second line of the name cell: the host, then what the narrow
    // layout leaves out of the columns (CSS shows those parts only there).
    const detail = h(
      'div.row-detail',
      { title: p.path || '' },
      h('span', null, p.host || (p.path || '').split('/').pop()),
      h('span.narrow', null, ` · ${fmtBytes(p.size_bytes)} · ${fmtCount(p.events)} events · ${devText} devices`),
      h('span.narrower', null, ` · ${fmtDate(p.mtime)}`),
    );
    const name = h(
      'td.c-name',
      { title: p.path || '' },
      h(
        'div.row-name',
        null,
        h('a', { href: `${base}/overview`, title: p.path || '' }, p.run || UNKNOWN),
        latest ? h('span.badge.latest', null, 'latest') : null,
      ),
      detail,
      p.error ? h('div.err-msg', { title: p.error }, p.error) : null,
    );
    const links = viewable(p)
      ? [
          h('a', { href: `${base}/kernels` }, 'Kernels'),
          h('a', { href: `${base}/timeline` }, 'Timeline'),
          h('a', { href: `${base}/tools` }, 'Tools'),
        ]
      : pending
        ? h('span.muted', null, 'waiting…')
        : h('a', { href: `${base}/overview` }, 'Details');
    return h(
      `tr.clickable${latest ? '.latest' : ''}`,
      { dataset: { id: p.id }, onclick: (e) => openRow(e, base, pending) },
      name,
      h(
        'td',
        null,
        h(
          'div.clip',
          { title: [p.format, p.producer].filter(Boolean).join(' · ') },
          [p.format, p.producer].filter(Boolean).join(' · ') || UNKNOWN,
        ),
      ),
      h('td.num.secondary', null, fmtBytes(p.size_bytes)),
      h('td.num.secondary', null, fmtCount(p.events)),
      h('td.num.secondary', null, devText),
      h('td.num', null, fmtCount(p.step_count)),
      h('td.num', null, fmtDur(p.duration_us)),
      h('td.tertiary', null, fmtDate(p.mtime)),
      status,
      findingCell(p),
      h('td.links', null, links),
    );
  }

  // A click anywhere on a row opens its overview; links and buttons in it
  // keep their own target, and selecting text opens nothing.
  function openRow(e, base, pending) {
    if (pending || e.target.closest('a, button') || String(window.getSelection() || '')) return;
    location.hash = `${base}/overview`;
  }

  const unsubscribe = onLive(() => soon());
  poll();
  return () => {
    stopped = true;
    unsubscribe();
    clearTimeout(timer);
    ctrl.abort();
  };
}

// What `latest` may be (store/profiles.c READABLE): events read, whole or
// in part (tensorboard.js lands on the newest run holding one alike).
function readableProfile(p) {
  return p.events > 0 && (p.status === 'ok' || p.partial === true);
}

// A profile whose pages have something to show: indexed, or partly read.
function viewable(p) {
  return p.status === 'ok' || p.status === undefined || (p.partial && p.events > 0);
}

const SEVERITY = { critical: 3, warning: 2, info: 1 };
// The columns, with how each sorts (null: unknown, kept last). "secondary"
// columns fold into the name cell's detail line below 1500 px, "tertiary"
// ones below 1200 px, so that the table fits 1024 px without scrolling.
const COLUMNS = [
  { key: 'name', label: 'Run', sort: (p) => `${p.run || ''}\n${p.host || ''}`.toLowerCase() },
  { key: 'format', label: 'Format', sort: (p) => `${p.format || ''} ${p.producer || ''}`.toLowerCase() },
  { key: 'size', label: 'Size', num: true, cls: 'secondary', sort: (p) => p.size_bytes ?? null },
  { key: 'events', label: 'Events', num: true, cls: 'secondary', sort: (p) => p.events ?? null },
  {
    key: 'devices',
    label: 'Devices',
    num: true,
    cls: 'secondary',
    sort: (p) => (Array.isArray(p.devices) ? p.devices.length : (p.devices ?? null)),
  },
  { key: 'steps', label: 'Steps', num: true, sort: (p) => p.step_count ?? null },
  { key: 'duration', label: 'Duration', num: true, sort: (p) => p.duration_us ?? null },
  { key: 'mtime', label: 'Modified', cls: 'tertiary', sort: (p) => p.mtime_ns ?? null },
  { key: 'status', label: 'Status', sort: (p) => `${p.status || ''}${p.partial ? ' partial' : ''}` },
  { key: 'finding', label: 'Top finding', sort: (p, f) => (f ? SEVERITY[f.severity] || 0 : null) },
  { key: 'links', label: 'Open' },
];

function skeletonTable() {
  const wrap = h('div.table-wrap', { 'aria-busy': 'true' });
  for (let i = 0; i < 4; i++) wrap.append(h('div.skeleton', { style: { height: '22px', margin: '12px' } }));
  return wrap;
}
