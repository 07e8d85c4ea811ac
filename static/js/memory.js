// memory.js — the profile's Memory tab, two views:
//   #/p/<id>/memory[?allocator=]        Memory Profile: one allocator at a time
//                                       (the highest peak unless named): bytes in
//                                       use over time with the peak marked, the
//                                       summary, and the blocks live at the peak
//   #/p/<id>/memory?view=viewer&module= Memory Viewer: one compiled module's
//                                       peak, its heap over program order, and
//                                       the buffers live at the peak by kind
// Both from /api/profiles/{id}/memory_profile and /memory_viewer; a profile
// without the data says so (404 "No Data").

import { api, ApiError } from './api.js';
import { h, fmtBytes, fmtCount, fmtUs, isKnown, UNKNOWN } from './format.js';
import { stateView } from './states.js';
import { lineChart } from './line_chart.js';
import { renderToolTable } from './tool_view.js';

const fact = (k, v, key) => [h('dt', null, k), h('dd', { 'data-fact': key }, isKnown(v) ? String(v) : UNKNOWN)];
const KIND_LABELS = { parameter: 'Parameters', output: 'Outputs', constant: 'Constants', temporary: 'Temporaries' };
const bytes = (v) => (isKnown(v) ? fmtBytes(v) : null);

export function mount(view, { id, profile, params }) {
  const ctrl = new AbortController();
  const base = `#/p/${encodeURIComponent(id)}/memory`;
  const which = params.get('view') === 'viewer' ? 'viewer' : 'profile';
  const nav = h(
    'nav.subtabs',
    { 'aria-label': 'Memory views' },
    h('a', { href: base, 'aria-current': which === 'profile' ? 'page' : undefined }, 'Memory Profile'),
    h('a', { href: `${base}?view=viewer`, 'aria-current': which === 'viewer' ? 'page' : undefined }, 'Memory Viewer'),
  );
  const main = h('div.memory-main', null, stateView('Loading…', '', 'loading'));
  view.replaceChildren(h('div.tools-layout', null, nav, main));
  const fail = (what, e) => {
    if (e.name === 'AbortError') return;
    const none = e instanceof ApiError && e.status === 404;
    main.replaceChildren(
      none
        ? stateView(
            `No ${what} data`,
            `This profile carries no ${what === 'memory profile' ? 'allocator events' : 'compiled modules (HLO protos)'}.`,
            'empty',
          )
        : stateView(`Cannot load the ${what}`, e.message, 'error'),
    );
  };
  if (which === 'profile') {
    api.memoryProfile(id, { signal: ctrl.signal }).then(
      (a) => showProfile(main, a, id, profile, params.get('allocator'), ctrl.signal),
      (e) => fail('memory profile', e),
    );
  } else {
    showViewer(main, id, params.get('module'), ctrl.signal).catch((e) => fail('memory viewer', e));
  }
  return () => ctrl.abort();
}

// The allocators come highest peak first; the page opens on the one named
// in the address, else on the highest peak (a GPU's allocator, not a
// 256-byte host one), as XProf's default memory id.
function showProfile(main, ans, id, profile, want, signal) {
  const t0 = profile.start_us || 0;
  const all = ans.allocators;
  const chosen = all.find((a) => a.name === want) || all.find((a) => a.name === ans.peak_allocator) || all[0];
  const pick = h(
    'select',
    {
      id: 'memory-allocator',
      'aria-label': 'Allocator',
      onchange: () => {
        const a = all.find((x) => x.name === pick.value);
        history.replaceState(null, '', `#/p/${encodeURIComponent(id)}/memory?allocator=${encodeURIComponent(a.name)}`);
        panel.replaceChildren(allocatorPanel(a, t0, signal));
      },
    },
    all.map((a) =>
      h('option', { value: a.name, selected: a === chosen }, `${a.name} · peak ${bytes(a.summary.peak_bytes_in_use) || UNKNOWN}`),
    ),
  );
  const panel = h('div', null, allocatorPanel(chosen, t0, signal));
  main.replaceChildren(
    h(
      'div.toolbar',
      null,
      h('label', null, 'Allocator ', pick),
      h('span.sub', null, `${all.length} allocator${all.length === 1 ? '' : 's'} · highest peak: ${ans.peak_allocator}`),
    ),
    panel,
  );
}

function allocatorPanel(a, t0, signal) {
  const when = (us) => fmtUs(us - t0);
  const s = a.summary;
  const chart = h('div.memory-chart');
  const live = h('div');
  const panel = h(
    'section.panel.allocator',
    { 'data-allocator': a.name },
    h(
      'h2',
      null,
      a.name,
      h('span.sub', null, ` · ${a.source} · in use from ${a.in_use_source === 'stat' ? 'the events' : 'a replay of the blocks'}`),
    ),
    h(
      'dl.facts',
      null,
      fact('Peak in use', bytes(s.peak_bytes_in_use), 'peak_bytes_in_use'),
      fact('Peak at', `${when(s.peak_time_us)} µs from the profile's start`, 'peak_time'),
      fact('Peak step', s.peak_step, 'peak_step'),
      fact('Reserved at the peak', bytes(s.peak_reserved_bytes), 'peak_reserved_bytes'),
      fact(
        'Fragmentation at the peak',
        isKnown(s.peak_fragmentation) ? `${(s.peak_fragmentation * 100).toFixed(2)}%` : null,
        'peak_fragmentation',
      ),
      fact('Lifetime peak (allocator)', bytes(s.lifetime_peak_bytes), 'lifetime_peak_bytes'),
      fact('Allocations / deallocations', `${fmtCount(s.allocations)} / ${fmtCount(s.deallocations)}`, 'events'),
    ),
    chart,
    live,
  );
  const peak = a.timeline.findIndex((p) => p[1] === s.peak_bytes_in_use);
  requestAnimationFrame(() =>
    lineChart(chart, a.timeline, {
      mark: peak,
      xOrigin: t0,
      label: `${a.name}: bytes in use over time`,
      signal,
    }),
  );
  const lp = a.live_at_peak;
  const cols = [
    ['size_bytes', 'Size'],
    ['requested_bytes', 'Requested'],
    ['op', 'Op'],
    ['shape', 'Shape'],
    ['data_type', 'Data type'],
    ['region_type', 'Region'],
    ['allocated_at_us', 'Allocated at (µs)'],
    ['address', 'Address'],
  ].map(([id, label]) => ({ id, label, type: /bytes|_us$/.test(id) ? 'number' : 'string' }));
  const rows = lp.allocations.map((r) => [
    r.bytes,
    r.requested_bytes,
    r.op,
    r.shape,
    r.data_type,
    r.region_type,
    r.time_us - t0,
    r.address,
  ]);
  const props = {
    summary: lp.known
      ? `${fmtCount(lp.count)} allocation(s) made in the capture are live at the peak: ${fmtBytes(lp.bytes)}` +
        (isKnown(lp.unattributed_bytes) ? `; ${fmtBytes(lp.unattributed_bytes)} were in use before the capture began.` : '.')
      : 'The events carry no addresses: the allocations live at the peak cannot be told apart.',
  };
  renderToolTable(live, { columns: cols, rows, properties: props }, { title: 'Allocations live at the peak' });
  return panel;
}

async function showViewer(main, id, want, signal) {
  const list = await api.memoryViewer(id, null, { signal });
  const mods = list.modules;
  const best = mods.reduce((b, m) => (b === null || (m.peak_memory_bytes ?? -1) > (b.peak_memory_bytes ?? -1) ? m : b), null);
  const name = want || (best && best.name);
  const pick = h(
    'select',
    {
      'aria-label': 'Module',
      onchange: () =>
        (location.hash = `#/p/${encodeURIComponent(id)}/memory?view=viewer&module=${encodeURIComponent(pick.value)}`),
    },
    mods.map((m) =>
      h('option', { value: m.name, selected: m.name === name }, `${m.name} · ${bytes(m.peak_memory_bytes) || UNKNOWN}`),
    ),
  );
  const body = h('div', null, stateView('Loading the module…', '', 'loading'));
  main.replaceChildren(
    h(
      'div.toolbar',
      null,
      h('label', null, 'Module ', pick),
      h('a.btn', { href: `#/p/${encodeURIComponent(id)}/hlo?module=${encodeURIComponent(name)}` }, 'HLO text'),
    ),
    body,
  );
  const ans = await api.memoryViewer(id, name, { signal });
  showModule(body, ans, signal);
}

function showModule(body, ans, signal) {
  const m = ans.module;
  const chart = h('div.memory-chart');
  const table = h('div');
  body.replaceChildren(
    h(
      'section.panel',
      { 'data-module': m.name },
      h('h2', null, m.name),
      h(
        'dl.facts',
        null,
        fact('Peak memory', bytes(m.peak_memory_bytes), 'peak_memory_bytes'),
        fact('Peak heap (temporaries)', bytes(m.peak_heap_bytes), 'peak_heap_bytes'),
        ans.groups.flatMap((g) =>
          fact(
            `${g.kind[0].toUpperCase()}${g.kind.slice(1)}s`,
            `${fmtBytes(g.allocation_bytes)} allocated · ${fmtCount(g.buffers)} buffer(s) live at the peak, ${fmtBytes(g.live_bytes)}`,
            `group_${g.kind}`,
          ),
        ),
        fact(
          'At the peak',
          ans.heap
            ? `event ${ans.heap.peak_event} of ${ans.heap.events}: ${ans.heap.peak_instruction ?? UNKNOWN}`
            : 'no heap-simulator trace',
          'peak_event',
        ),
      ),
      chart,
    ),
    table,
  );
  if (ans.heap) {
    const pts = ans.heap.points;
    const peak = pts.findIndex((p) => p[1] === m.peak_heap_bytes);
    requestAnimationFrame(() =>
      lineChart(chart, pts, {
        mark: peak,
        xKind: 'count',
        xTitle: 'Heap event (program order)',
        yTitle: 'Heap in use',
        label: 'heap bytes over program order',
        signal,
      }),
    );
  }
  const cols = [
    ['size_bytes', 'Size'],
    ['kind', 'Kind'],
    ['shape', 'Shape'],
    ['instruction', 'Defined by'],
    ['opcode', 'Opcode'],
    ['op_name', 'Op name'],
    ['source', 'Source'],
    ['allocation', 'Allocation'],
    ['offset_bytes', 'Offset'],
  ].map(([id, label]) => ({
    id,
    label,
    type: id === 'size_bytes' || id === 'allocation' || id === 'offset_bytes' ? 'number' : 'string',
  }));
  const rows = ans.buffers.map((b) => [
    b.size_bytes,
    b.kind,
    b.shape,
    b.instruction,
    b.opcode,
    b.op_name,
    b.source,
    b.allocation,
    b.offset,
  ]);
  renderToolTable(table, { columns: cols, rows, properties: {} }, { title: 'Buffers live at the peak' });
}
