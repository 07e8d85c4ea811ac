// timeline_details.js — the details panel beside the timeline: the selected
// event's name, times and arguments (asked of the server by its ref), what a
// merged span stands for, a derived device row's span (an XLA op, module or
// step: its keys read from its first device event), or, with nothing
// selected, the keyboard help.
//
// Invariants: st.selected is only assigned by select() (the search selects
// through it too, and later only swaps a match for its loaded twin), and is
// assigned before the panel fills, so the canvas outlines the event at once.
// At most one argument request is in flight; a newer selection aborts it, so
// a slow answer never fills the panel of another event.

import { api } from './api.js';
import { h, fmtDur, fmtCount, isKnown, UNKNOWN } from './format.js';

// The event record fields shown besides the arguments, in this order.
const RECORD_KEYS = [
  'kind',
  'cat',
  'ph',
  'process',
  'thread',
  'device',
  'pid',
  'tid',
  'start_us',
  'dur_us',
  'step',
  'correlation',
];

// The args of its first device event that a derived row's span shows.
const DERIVED_KEYS = {
  xla_ops: ['hlo_op', 'hlo_module', 'program_id', 'jax_op', 'source'],
  xla_modules: ['hlo_module', 'program_id'],
  steps: [],
};

const HELP_KEYS = [
  ['W / S', 'zoom in / out'],
  ['A / D', 'pan left / right'],
  ['Wheel', 'zoom at the pointer'],
  ['Shift+Wheel', 'pan'],
  ['Drag', 'pan and scroll'],
  ['0', 'show everything'],
  ['F', 'zoom to the selected event'],
  ['/', 'search'],
  ['Shift+Drag', 'sum an area by name'],
  ['Esc', 'clear selection'],
];

export function createDetails(tl) {
  const { st } = tl;
  const panel = tl.dom.details;
  let argsRequest = null;

  // `hit` is {ev, track} or null; resolves once the panel is filled.
  // keepArea: an area selection is being made (timeline_area.js), so keep it.
  async function select(hit, { keepArea = false } = {}) {
    st.selected = hit;
    tl.flows.clear();
    if (!keepArea) tl.area.clear();
    tl.draw.request();
    tl.url.schedule();
    if (argsRequest) argsRequest.abort();
    if (!hit) {
      showHelp();
      return;
    }
    const rows = timeRows(hit);
    const derived = st.byId.get(hit.track)?.derived;
    if (hit.ev.summary) showSummary(hit.ev, rows);
    else if (derived) await showDerived(hit.ev, rows, derived);
    else await showEvent(hit.ev, rows);
  }

  function timeRows({ ev, track }) {
    const t = st.byId.get(track);
    const where = t ? `${t.group.name} / ${t.name}` : `track ${track}`;
    return [
      ['Where', where],
      ['Start', `${fmtDur(ev.s - st.t0)} from profile start`],
      ['Duration', ev.instant ? 'instant' : fmtDur(ev.e - ev.s)],
      ['End', `${fmtDur(ev.e - st.t0)} from profile start`],
    ];
  }

  function showSummary(ev, rows) {
    const margin = (ev.e - ev.s) * 0.1;
    panel.replaceChildren(
      h('h2', null, `${fmtCount(ev.count)} merged events`),
      h('p.hint', null, 'Events shorter than a pixel are merged into one span. Zoom in to see them one by one.'),
      kvTable(rows.concat(ev.busy !== null ? [['Busy', fmtDur(ev.busy)]] : [], ev.name ? [['Example', ev.name]] : [])),
      h(
        'button.btn',
        { type: 'button', onclick: () => tl.view.set(ev.s - margin, ev.e + margin, { fetchNow: true }) },
        'Zoom to this span',
      ),
    );
  }

  async function showEvent(ev, rows) {
    const argsBox = h('div', { style: { minHeight: '80px' } }, h('div.skeleton', { style: { height: '60px' } }));
    const flowsBox = h('div');
    panel.replaceChildren(
      h('h2', null, ev.name || '(unnamed)'),
      kvTable(rows),
      flowsBox,
      h('h2', { style: { marginTop: '14px' } }, 'Arguments'),
      argsBox,
    );
    if (ev.ref === null || ev.ref === undefined) {
      argsBox.replaceChildren(h('p.hint', null, 'No details available for this event.'));
      return;
    }
    argsRequest = new AbortController();
    try {
      const res = await api.event(tl.id, ev.ref, { signal: argsRequest.signal });
      const record = res.event || res;
      const argRows = Object.entries(record.args || {}).map(([k, v]) => [k, argText(v)]);
      const extra = recordRows(record);
      const flows = Array.isArray(record.flows) ? record.flows : [];
      if (st.selected && st.selected.ev.ref === ev.ref) tl.flows.set(flows);
      flowsBox.replaceChildren(tl.flows.list(flows) || '');
      argsBox.replaceChildren(
        argRows.length ? kvTable(argRows) : h('p.hint', null, 'This event has no arguments.'),
        extra.length ? h('div', null, h('h2', { style: { marginTop: '14px' } }, 'Event record'), kvTable(extra)) : null,
      );
    } catch (err) {
      if (err.name === 'AbortError') return;
      argsBox.replaceChildren(h('p.hint', null, `Details unavailable: ${err.message}`));
    }
  }

  // A span of a derived row: its own name and times, the op's keys from
  // its first device event (whose ref it carries), no flows of its own.
  async function showDerived(ev, rows, derived) {
    const keysBox = h('div', { style: { minHeight: '40px' } }, h('div.skeleton', { style: { height: '30px' } }));
    panel.replaceChildren(
      h('h2', null, ev.name || '(unnamed)'),
      h('p.hint', null, 'Derived from the device events, as XProf derives its Steps, XLA Modules and XLA Ops rows.'),
      kvTable(rows),
      keysBox,
    );
    if (ev.ref === null || ev.ref === undefined) {
      keysBox.replaceChildren();
      return;
    }
    argsRequest = new AbortController();
    try {
      const res = await api.event(tl.id, ev.ref, { signal: argsRequest.signal });
      const args = (res.event || res).args || {};
      const keyRows = (DERIVED_KEYS[derived] || []).filter((k) => isKnown(args[k])).map((k) => [k, argText(args[k])]);
      keysBox.replaceChildren(
        keyRows.length ? kvTable(keyRows) : '',
        h('p.hint', null, `First device event: ${(res.event || res).name ?? UNKNOWN}`),
      );
    } catch (err) {
      if (err.name === 'AbortError') return;
      keysBox.replaceChildren(h('p.hint', null, `Details unavailable: ${err.message}`));
    }
  }

  function showHelp() {
    const keyRows = HELP_KEYS.map(([k, v]) =>
      h('tr', null, h('th', { scope: 'row' }, h('kbd', null, k)), h('td', { style: { fontFamily: 'inherit' } }, v)),
    );
    panel.replaceChildren(
      h('h2', null, 'Event details'),
      h('p.hint', null, 'Click an event to see its name, times and arguments.'),
      h('div.help', null, h('table', null, h('tbody', null, keyRows))),
      h(
        'p.hint',
        { style: { marginTop: '12px' } },
        'Hatched spans are many short events merged at this zoom level; zoom in to see them.',
      ),
    );
  }

  function stop() {
    if (argsRequest) argsRequest.abort();
  }

  showHelp();
  return { select, stop };
}

function recordRows(record) {
  const rows = [];
  for (const k of RECORD_KEYS) {
    if (isKnown(record[k]) && typeof record[k] !== 'object') rows.push([k, String(record[k])]);
  }
  if (record.launch && typeof record.launch === 'object') {
    for (const [k, v] of Object.entries(record.launch))
      rows.push([k, typeof v === 'object' ? JSON.stringify(v) : String(v ?? UNKNOWN)]);
  }
  return rows;
}

function argText(v) {
  return typeof v === 'object' && v !== null ? JSON.stringify(v) : String(v);
}

function kvTable(rows) {
  return h(
    'table',
    null,
    h(
      'tbody',
      null,
      rows.map(([k, v]) => h('tr', null, h('th', { scope: 'row' }, k), h('td', null, v))),
    ),
  );
}
