// timeline.js — the canvas trace viewer. Tracks are grouped by process (the
// host, each device) and thread/stream; process groups collapse. Zoom and pan
// with the wheel, drag and W/A/S/D; click an event for its details; search
// by name across the whole profile (search.js; the loaded window only when
// the server cannot search); highlight a step.
//
// Invariants: the view is [viewStart, viewEnd] in the profile's microsecond
// clock. Only the visible window (plus a margin) is ever fetched, at about
// one event per device pixel (the server merges shorter events into summary
// spans, drawn hatched); stale requests are aborted, and besides the current
// window only a 4-entry LRU is kept, so memory does not grow with zooming.
// Labels are DOM (focusable, scroll natively); events are drawn on one
// sticky canvas sized to the visible area, at devicePixelRatio.

import { api } from './api.js';
import { h, fmtDur, isKnown } from './format.js';
import { stepStartUs } from './chart.js';
import { stateView } from './states.js';
import { normalizeTracks, EventFetcher } from './timeline_data.js';
import { ProfileSearch } from './search.js';
import { createView } from './timeline_view.js';
import { createDrawing, LABEL_W } from './timeline_draw.js';
import { createDetails } from './timeline_details.js';
import { createSearch } from './timeline_search.js';

const COLLAPSE_OVER = 12; // processes with more threads start collapsed when the trace is big

export function mount(view, { id, profile, params, notify }) {
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
    dpr: window.devicePixelRatio || 1,
  };
  st.viewStart = st.t0;
  st.viewEnd = st.t1;
  const fetcher = new EventFetcher(id);
  const searcher = new ProfileSearch(id);
  const life = new AbortController();
  const mountedAt = performance.now();

  // --- DOM -----------------------------------------------------------------
  const search = h('input', { type: 'search', placeholder: 'Search event names…', 'aria-label': 'Search events by name' });
  const hitsLabel = h('span.hits', { 'aria-live': 'polite' });
  const prevBtn = h('button.btn', { type: 'button', 'aria-label': 'Previous match', title: 'Previous match (Shift+Enter)' }, '‹');
  const nextBtn = h('button.btn', { type: 'button', 'aria-label': 'Next match', title: 'Next match (Enter)' }, '›');
  const stepSel = h('select', { 'aria-label': 'Highlight a step', disabled: true }, h('option', { value: '' }, 'Steps: none'));
  const windowLabel = h('span.window', { 'aria-live': 'off' });
  const zoomIn = h('button.btn', { type: 'button', 'aria-label': 'Zoom in', title: 'Zoom in (W)' }, '+');
  const zoomOut = h('button.btn', { type: 'button', 'aria-label': 'Zoom out', title: 'Zoom out (S)' }, '−');
  const resetBtn = h('button.btn', { type: 'button', title: 'Show the whole profile (0)' }, 'Reset zoom');
  const axis = h('canvas', { 'aria-hidden': 'true' });
  const canvas = h('canvas.tl-canvas', {
    tabindex: '0',
    role: 'img',
    'aria-label': 'Trace timeline. W and S zoom, A and D pan, click an event for details.',
  });
  const labels = h('div.tl-labels', { style: { width: `${LABEL_W}px` } });
  const content = h('div.tl-content', null, canvas, labels);
  const scroller = h('div.tl-scroll', null, content);
  const status = h('div.tl-status', { role: 'status' }, 'Loading tracks…');
  const details = h('aside.tl-details', { 'aria-label': 'Event details' });
  view.replaceChildren(
    h(
      'div.tl',
      null,
      h(
        'div.tl-toolbar',
        null,
        search,
        prevBtn,
        nextBtn,
        hitsLabel,
        h('span.sep'),
        stepSel,
        h('span.sep'),
        zoomOut,
        zoomIn,
        resetBtn,
        h('span.grow'),
        windowLabel,
      ),
      h(
        'div.tl-body',
        null,
        h(
          'div.tl-main',
          null,
          h('div.tl-axis-row', null, h('div.corner', { style: { width: `${LABEL_W}px` } }, 'time from start'), axis),
          scroller,
          status,
        ),
        details,
      ),
    ),
  );
  // What the modules split out of this closure share; the rest moves out next.
  const dom = {
    details,
    canvas,
    axis,
    labels,
    content,
    scroller,
    status,
    windowLabel,
    searchBox: search,
    hitsLabel,
    prevBtn,
    nextBtn,
  };
  const tl = { id, st, fetcher, searcher, signal: life.signal, mountedAt, dom };
  tl.view = createView(tl);
  const { span, cssWidth, tOf, focusEvent } = tl.view;
  const setView = tl.view.set;
  tl.draw = createDrawing(tl);
  tl.details = createDetails(tl);
  tl.search = createSearch(tl);

  // --- zoom and pan ---------------------------------------------------------
  function zoomAt(factor, tAnchor) {
    const a = tAnchor ?? (st.viewStart + st.viewEnd) / 2;
    setView(a - (a - st.viewStart) * factor, a + (st.viewEnd - a) * factor);
  }

  function pan(fraction) {
    const d = span() * fraction;
    setView(st.viewStart + d, st.viewEnd + d);
  }

  // --- interaction ---------------------------------------------------------
  let drag = null;
  canvas.addEventListener('mousedown', (e) => {
    if (e.button !== 0) return;
    drag = { x: e.clientX, y: e.clientY, s: st.viewStart, e: st.viewEnd, top: scroller.scrollTop, moved: false };
    canvas.focus({ preventScroll: true });
  });
  const onMove = (e) => {
    if (!drag) return;
    const dx = e.clientX - drag.x,
      dy = e.clientY - drag.y;
    if (!drag.moved && Math.abs(dx) + Math.abs(dy) < 4) return;
    drag.moved = true;
    canvas.classList.add('dragging');
    const d = (dx / cssWidth()) * (drag.e - drag.s);
    scroller.scrollTop = drag.top - dy;
    setView(drag.s - d, drag.e - d);
  };
  const onUp = (e) => {
    if (!drag) return;
    const wasDrag = drag.moved;
    drag = null;
    canvas.classList.remove('dragging');
    if (wasDrag) return;
    const r = canvas.getBoundingClientRect();
    const hit = tl.draw.eventAt(e.clientX - r.left, e.clientY - r.top);
    tl.details.select(hit);
  };
  window.addEventListener('mousemove', onMove, { signal: life.signal });
  window.addEventListener('mouseup', onUp, { signal: life.signal });

  canvas.addEventListener(
    'wheel',
    (e) => {
      e.preventDefault();
      const unit = e.deltaMode === 1 ? 16 : e.deltaMode === 2 ? 400 : 1;
      const r = canvas.getBoundingClientRect();
      const t = tOf(e.clientX - r.left);
      if (e.shiftKey || Math.abs(e.deltaX) > Math.abs(e.deltaY)) {
        pan(((e.deltaX || e.deltaY) * unit) / cssWidth());
      } else {
        zoomAt(Math.exp(e.deltaY * unit * 0.0015), t);
      }
    },
    { passive: false },
  );

  let mouseX = null;
  canvas.addEventListener('mousemove', (e) => {
    mouseX = e.clientX - canvas.getBoundingClientRect().left;
  });
  canvas.addEventListener('mouseleave', () => {
    mouseX = null;
  });

  const onKey = (e) => {
    if (e.target instanceof HTMLInputElement || e.target instanceof HTMLSelectElement || e.metaKey || e.ctrlKey || e.altKey)
      return;
    const anchor = mouseX === null ? undefined : tOf(mouseX);
    switch (e.key.toLowerCase()) {
      case 'w':
        zoomAt(0.8, anchor);
        break;
      case 's':
        zoomAt(1.25, anchor);
        break;
      case 'a':
        pan(-0.1);
        break;
      case 'd':
        pan(0.1);
        break;
      case '0':
        setView(st.t0, st.t1);
        break;
      case 'escape':
        tl.details.select(null);
        break;
      case 'f':
        if (st.selected) focusEvent(st.selected.ev);
        break;
      case '/':
        e.preventDefault();
        search.focus();
        return;
      default:
        return;
    }
    e.preventDefault();
  };
  window.addEventListener('keydown', onKey, { signal: life.signal });

  zoomIn.addEventListener('click', () => zoomAt(0.5));
  zoomOut.addEventListener('click', () => zoomAt(2));
  resetBtn.addEventListener('click', () => setView(st.t0, st.t1));
  // --- steps ---------------------------------------------------------------------
  function selectStep(n) {
    const step = st.steps.find((s) => String(s.step) === String(n)) || null;
    const start = step ? stepStartUs(step, profile) : null;
    stepSel.value = step ? String(step.step) : '';
    st.stepSel = step && start !== null ? { ...step, start_us: start } : null;
    if (step && start === null) {
      notify(`Step ${step.step} starts at ${step.start_us} µs, outside this profile's time range, so it cannot be shown.`);
    }
    if (st.stepSel) {
      const d = st.stepSel.duration_us || span();
      setView(start - d * 0.05, start + d * 1.05, { fetchNow: true });
    } else if (!st.data) {
      setView(st.t0, st.t1, { fetchNow: true });
    }
    tl.draw.request();
  }
  stepSel.addEventListener('change', () => selectStep(stepSel.value));

  // --- start -------------------------------------------------------------------
  (async () => {
    const stepsP = api.steps(id, { signal: life.signal }).catch(() => null);
    let tracksRes;
    try {
      tracksRes = await api.tracks(id, { signal: life.signal });
    } catch (e) {
      if (e.name === 'AbortError') return;
      scroller.replaceChildren(stateView('Cannot load the tracks of this profile', e.message, 'error'));
      status.hidden = true;
      return;
    }
    st.groups = normalizeTracks(tracksRes);
    for (const g of st.groups) for (const t of g.tracks) st.byId.set(t.id, t);
    const nTracks = st.byId.size;
    if (!nTracks) {
      scroller.replaceChildren(stateView('No tracks', 'This profile has no events to draw.', 'empty'));
      status.hidden = true;
      return;
    }
    if (nTracks > 30) for (const g of st.groups) if (g.tracks.length > COLLAPSE_OVER) g.collapsed = true;
    const tMin = num(tracksRes.start_us),
      tMax = num(tracksRes.end_us);
    if (!isKnown(profile.start_us) && isKnown(tMin)) {
      st.t0 = tMin;
      st.t1 = isKnown(tMax) ? tMax : tMin + (profile.duration_us || 1);
    }
    st.viewStart = st.t0;
    st.viewEnd = st.t1;
    tl.draw.layout();
    const stepsRes = await stepsP;
    if (life.signal.aborted) return;
    st.steps = (stepsRes && stepsRes.steps) || [];
    if (st.steps.length) {
      stepSel.disabled = false;
      stepSel.replaceChildren(
        h('option', { value: '' }, `Steps: ${st.steps.length} (none selected)`),
        ...st.steps.map((s) => h('option', { value: String(s.step) }, `Step ${s.step} · ${fmtDur(s.duration_us)}`)),
      );
    }
    const want = params.get('step');
    if (want !== null && st.steps.length) selectStep(want);
    else setView(st.t0, st.t1, { fetchNow: true });
  })();

  window.__xpvTimeline = { state: st, fetcher, searcher };
  return () => {
    life.abort();
    fetcher.clear();
    tl.draw.stop();
    tl.view.stop();
    tl.search.stop();
    tl.details.stop();
    if (window.__xpvTimeline && window.__xpvTimeline.state === st) delete window.__xpvTimeline;
  };
}

function num(v) {
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
}
