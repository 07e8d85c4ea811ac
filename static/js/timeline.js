// timeline.js — the canvas trace viewer page. Tracks are grouped by process
// (the host, each device) and thread/stream; process groups collapse. Zoom
// and pan with the wheel, drag and W/A/S/D; click an event for its details;
// search by name across the whole profile (search.js; the loaded window only
// when the server cannot search); highlight a step.
//
// mount() builds the page, the state `st` and the context `tl` the modules
// share, loads the tracks and the steps, and ties the rest together:
//   timeline_view.js     the view [viewStart, viewEnd] and fetching its events
//   timeline_draw.js     rows, labels, canvas, axis, status; hit testing
//   timeline_input.js    mouse, wheel and keys: zoom, pan, select
//   timeline_details.js  the selected event's details panel
//   timeline_search.js   the toolbar search
//   timeline_tracks.js   pinned tracks, the track filter, collapse/expand all
//   timeline_url.js      the address (deep links) and "this window" exports
//   timeline_flows.js    the selected event's links (launch, device work, flows)
//   timeline_counters.js counter tracks (Chrome C events, memory totals)
//   timeline_area.js     Shift+drag area selection and its aggregate table
//   timeline_data.js     the API's tracks and events, fetched with an LRU
//
// The address holds the view (timeline_link.js): ?start_us=&end_us= the
// window, sel= the selected event's ref, pins= the pinned tracks, step= the
// highlighted step; load() applies it, timeline_url.js keeps it current.
//
// Invariants: `st` is the one state every module reads and writes, and what
// window.__xpvTimeline.state shows the browser tests. Modules reach one
// another only through tl (tl.view, tl.draw, tl.details, tl.search,
// tl.tracks, tl.url, tl.flows, tl.counters, tl.area), and
// only from event handlers and timers, never while being created, so the
// order they are created in does not matter. Unmounting aborts tl.signal and
// stops every module's timers and requests.

import { api } from './api.js';
import { h, fmtDur, isKnown } from './format.js';
import { stepStartUs } from './chart.js';
import { stateView } from './states.js';
import { normalizeTracks, EventFetcher } from './timeline_data.js';
import { ProfileSearch } from './search.js';
import { createView } from './timeline_view.js';
import { createDrawing, LABEL_W } from './timeline_draw.js';
import { attachInput } from './timeline_input.js';
import { createDetails } from './timeline_details.js';
import { createSearch } from './timeline_search.js';
import { createTracks, orderDevicesFirst } from './timeline_tracks.js';
import { createUrl } from './timeline_url.js';
import { parseTimelineLink } from './timeline_link.js';
import { createFlows } from './timeline_flows.js';
import { createCounters } from './timeline_counters.js';
import { createArea } from './timeline_area.js';

const BIG_TRACE_TRACKS = 30; // more tracks than this: big processes start collapsed
const COLLAPSE_OVER = 12; // threads in a process for it to count as big

export function mount(view, { id, profile, params, notify }) {
  const st = newState(profile);
  const fetcher = new EventFetcher(id);
  const searcher = new ProfileSearch(id);
  const life = new AbortController();
  const tl = { id, profile, notify, st, fetcher, searcher, signal: life.signal, mountedAt: performance.now() };
  tl.dom = buildPage(view);
  tl.view = createView(tl);
  tl.draw = createDrawing(tl);
  tl.details = createDetails(tl);
  tl.search = createSearch(tl);
  tl.tracks = createTracks(tl);
  tl.url = createUrl(tl);
  tl.flows = createFlows(tl);
  tl.counters = createCounters(tl);
  tl.area = createArea(tl);
  attachInput(tl);
  tl.dom.stepSel.addEventListener('change', () => selectStep(tl, tl.dom.stepSel.value));
  load(tl, params);

  window.__xpvTimeline = { state: st, fetcher, searcher, area: tl.area };
  return () => {
    life.abort();
    fetcher.clear();
    tl.draw.stop();
    tl.view.stop();
    tl.search.stop();
    tl.details.stop();
    tl.tracks.stop();
    tl.url.stop();
    tl.counters.stop();
    tl.area.stop();
    if (window.__xpvTimeline && window.__xpvTimeline.state === st) delete window.__xpvTimeline;
  };
}

function newState(profile) {
  const st = {
    groups: [],
    rows: [],
    byId: new Map(),
    totalH: 0,
    t0: profile.start_us ?? 0,
    t1: (profile.start_us ?? 0) + (profile.duration_us || 1),
    viewStart: 0,
    viewEnd: 1,
    data: null,
    backdrop: null, // the widest window loaded so far (timeline_view.js)
    loading: false,
    error: null,
    selected: null,
    steps: [],
    stepSel: null,
    hits: [],
    hitIdx: -1,
    query: '',
    found: null,
    foundIdx: -1,
    searchNote: '',
    firstPaint: null,
    drawn: 0,
    summaries: 0,
    pins: [],
    trackFilter: '',
    dpr: window.devicePixelRatio || 1,
  };
  st.viewStart = st.t0;
  st.viewEnd = st.t1;
  return st;
}

// The page's elements, by name; the class names are what the CSS and the
// browser tests know them by.
function buildPage(view) {
  const button = (attrs, text) => h('button.btn', { type: 'button', ...attrs }, text);
  const dom = {
    searchBox: h('input', { type: 'search', placeholder: 'Search event names…', 'aria-label': 'Search events by name' }),
    hitsLabel: h('span.hits', { 'aria-live': 'polite' }),
    prevBtn: button({ 'aria-label': 'Previous match', title: 'Previous match (Shift+Enter)' }, '‹'),
    nextBtn: button({ 'aria-label': 'Next match', title: 'Next match (Enter)' }, '›'),
    stepSel: h('select', { 'aria-label': 'Highlight a step', disabled: true }, h('option', { value: '' }, 'Steps: none')),
    windowLabel: h('span.window', { 'aria-live': 'off' }),
    zoomIn: button({ 'aria-label': 'Zoom in', title: 'Zoom in (W)' }, '+'),
    zoomOut: button({ 'aria-label': 'Zoom out', title: 'Zoom out (S)' }, '−'),
    resetBtn: button({ title: 'Show the whole profile (0)', 'aria-label': 'Reset zoom' }, 'Reset'),
    trackFilter: h('input.tl-track-filter', {
      type: 'search',
      placeholder: 'Filter tracks…',
      'aria-label': 'Filter tracks by name',
    }),
    collapseAll: button({ class: 'btn tl-collapse-all', title: 'Collapse or expand every process' }, 'Collapse all'),
    windowDownload: h(
      'a.btn.tl-window-download',
      {
        href: '#',
        download: '',
        'aria-label': 'Download window',
        title: 'Download the events that overlap the visible window (Chrome trace JSON)',
      },
      'Download',
    ),
    windowPerfetto: button(
      {
        class: 'btn tl-window-perfetto',
        'aria-label': 'Window in Perfetto',
        title: 'Open the visible window in ui.perfetto.dev (needs internet)',
      },
      'Perfetto',
    ),
    axis: h('canvas', { 'aria-hidden': 'true' }),
    canvas: h('canvas.tl-canvas', {
      tabindex: '0',
      role: 'img',
      'aria-label': 'Trace timeline. W and S zoom, A and D pan, click an event for details.',
    }),
    labels: h('div.tl-labels', { style: { width: `${LABEL_W}px` } }),
    status: h('div.tl-status', { role: 'status' }, 'Loading tracks…'),
    details: h('aside.tl-details', { 'aria-label': 'Event details' }),
  };
  dom.content = h('div.tl-content', null, dom.canvas, dom.labels);
  dom.scroller = h('div.tl-scroll', null, dom.content);
  const toolbar = h(
    'div.tl-toolbar',
    null,
    [dom.searchBox, dom.prevBtn, dom.nextBtn, dom.hitsLabel],
    h('span.sep'),
    dom.stepSel,
    h('span.sep'),
    [dom.zoomOut, dom.zoomIn, dom.resetBtn],
    h('span.sep'),
    [dom.trackFilter, dom.collapseAll],
    h('span.sep'),
    [dom.windowDownload, dom.windowPerfetto],
    h('span.grow'),
    dom.windowLabel,
  );
  const axisRow = h('div.tl-axis-row', null, h('div.corner', { style: { width: `${LABEL_W}px` } }, 'time from start'), dom.axis);
  const main = h('div.tl-main', null, axisRow, dom.scroller, dom.status);
  view.replaceChildren(h('div.tl', null, toolbar, h('div.tl-body', null, main, dom.details)));
  return dom;
}

// Tracks first (the page is useless without them), then the steps, then the
// first window: the one the address asks for (start_us/end_us), else its
// selected event's (sel=) when the server finds it, else the step in
// ?step=N, else the whole profile.
async function load(tl, params) {
  const { st } = tl;
  const stepsP = api.steps(tl.id, { signal: tl.signal }).catch(() => null);
  const link = parseTimelineLink(params);
  // The linked event is asked for now, beside the tracks, not after them
  // and the steps: an evidence link shows its event when the slower of the
  // two answers arrives.
  const linked = link.sel ? api.event(tl.id, link.sel, { signal: tl.signal }) : null;
  if (linked) linked.catch(() => {}); // handled where it is awaited
  let tracksRes;
  try {
    tracksRes = await api.tracks(tl.id, { signal: tl.signal });
  } catch (e) {
    if (e.name === 'AbortError') return;
    showEmpty(tl, stateView('Cannot load the tracks of this profile', e.message, 'error'));
    return;
  }
  if (!adoptTracks(tl, tracksRes)) {
    showEmpty(tl, stateView('No tracks', 'This profile has no events to draw.', 'empty'));
    return;
  }
  tl.tracks.setPins(link.pins);
  tl.draw.layout();
  tl.tracks.updateCollapseButton();
  if (link.start_us !== null) tl.view.set(link.start_us, link.end_us, { fetchNow: true });
  const restored = linked ? tl.url.restoreSelection(link.sel, link.start_us === null, linked) : false;
  const stepsRes = await stepsP;
  if (tl.signal.aborted) return;
  st.steps = (stepsRes && stepsRes.steps) || [];
  if (st.steps.length) fillStepMenu(tl);
  // The link's window, or its event once found, wins over the step's
  // window; a linked event that is not found leaves the view to the step,
  // else to the whole profile.
  const found = await restored;
  if (tl.signal.aborted) return;
  const keepView = link.start_us !== null || found;
  if (link.step !== null && st.steps.length) selectStep(tl, link.step, { keepView });
  if (!keepView && !st.stepSel) tl.view.set(st.t0, st.t1, { fetchNow: true });
  tl.url.start();
}

function showEmpty(tl, panel) {
  tl.dom.scroller.replaceChildren(panel);
  tl.dom.status.hidden = true;
}

// Takes the tracks answer into st; false when the profile has no track.
function adoptTracks(tl, tracksRes) {
  const { st, profile } = tl;
  st.groups = orderDevicesFirst(normalizeTracks(tracksRes));
  for (const g of st.groups) for (const t of g.tracks) st.byId.set(t.id, t);
  if (!st.byId.size) return false;
  // The derived device rows (Steps, XLA Modules, XLA Ops) do not make a process big: XProf shows them open.
  const stored = (g) => g.tracks.filter((t) => !t.derived).length;
  if (st.byId.size > BIG_TRACE_TRACKS) for (const g of st.groups) if (stored(g) > COLLAPSE_OVER) g.collapsed = true;
  // Without a start in the profile's facts, the tracks' own span is the clock.
  const tMin = finite(tracksRes.start_us),
    tMax = finite(tracksRes.end_us);
  if (!isKnown(profile.start_us) && isKnown(tMin)) {
    st.t0 = tMin;
    st.t1 = isKnown(tMax) ? tMax : tMin + (profile.duration_us || 1);
  }
  st.viewStart = st.t0;
  st.viewEnd = st.t1;
  return true;
}

function fillStepMenu(tl) {
  const { stepSel } = tl.dom;
  stepSel.disabled = false;
  stepSel.replaceChildren(
    h('option', { value: '' }, `Steps: ${tl.st.steps.length} (none selected)`),
    ...tl.st.steps.map((s) => h('option', { value: String(s.step) }, `Step ${s.step} · ${fmtDur(s.duration_us)}`)),
  );
  stepSel.title = stepSel.selectedOptions[0]?.text || ''; // the box is narrower than its text
}

// Highlights step `n` (a number or its text; anything else clears it) and
// zooms to it with a 5% margin (unless keepView). A step the devices ran at
// different times spans span_us (to the latest device's end); duration_us is
// their mean.
function selectStep(tl, n, { keepView = false } = {}) {
  const { st } = tl;
  const step = st.steps.find((s) => String(s.step) === String(n)) || null;
  const start = step ? stepStartUs(step, tl.profile) : null;
  tl.dom.stepSel.value = step ? String(step.step) : '';
  tl.dom.stepSel.title = tl.dom.stepSel.selectedOptions[0]?.text || '';
  st.stepSel = step && start !== null ? { ...step, start_us: start } : null;
  if (step && start === null) {
    tl.notify(`Step ${step.step} starts at ${step.start_us} µs, outside this profile's time range, so it cannot be shown.`);
  }
  if (keepView) {
    // highlighted only
  } else if (st.stepSel) {
    const d = st.stepSel.span_us || st.stepSel.duration_us || tl.view.span();
    tl.view.set(start - d * 0.05, start + d * 1.05, { fetchNow: true });
  } else if (!st.data) {
    tl.view.set(st.t0, st.t1, { fetchNow: true });
  }
  tl.draw.request();
  tl.url.schedule();
}

function finite(v) {
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
}
