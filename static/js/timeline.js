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
import { h, fmtDur, fmtCount, nameHue, isKnown } from './format.js';
import { niceStep, cssVar, stepStartUs } from './chart.js';
import { stateView } from './states.js';
import { normalizeTracks, EventFetcher } from './timeline_data.js';
import { ProfileSearch } from './search.js';
import { createView } from './timeline_view.js';
import { createDetails } from './timeline_details.js';
import { createSearch } from './timeline_search.js';

const LABEL_W = 240;
const PROC_H = 24;
const LEVEL_H = 18;
const TRACK_PAD = 3;
const MAX_LEVELS = 24;
const MIN_EVENT_PX = 2; // instants and zero-length slices are drawn at least this wide
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
  let raf = 0;

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
  const dom = { details, canvas, scroller, searchBox: search, hitsLabel, prevBtn, nextBtn };
  const tl = { id, st, fetcher, searcher, signal: life.signal, dom };
  tl.draw = { request: requestDraw, setStatus, growRows: growDepths, layout, rowOfTrack };
  tl.view = createView(tl);
  const { span, cssWidth, xOf, tOf, focusEvent, scheduleFetch } = tl.view;
  const setView = tl.view.set;
  tl.details = createDetails(tl);
  tl.search = createSearch(tl);

  // --- layout --------------------------------------------------------------
  function trackHeight(t) {
    return TRACK_PAD * 2 + LEVEL_H * (Math.min(t.maxDepth, MAX_LEVELS - 1) + 1);
  }

  function layout() {
    st.rows = [];
    let y = 0;
    labels.replaceChildren();
    for (const g of st.groups) {
      st.rows.push({ type: 'process', group: g, y, h: PROC_H });
      const btn = h(
        'button',
        {
          type: 'button',
          'aria-expanded': String(!g.collapsed),
          'aria-label': `${g.name}: ${g.tracks.length} tracks, ${g.collapsed ? 'collapsed' : 'expanded'}`,
          onclick: () => {
            g.collapsed = !g.collapsed;
            layout();
            scheduleFetch(true);
          },
        },
        h('span', null, g.name),
        h('span.count', null, `${g.tracks.length}`),
      );
      labels.append(h('div.tl-label.process', { style: { top: `${y}px`, height: `${PROC_H}px` } }, btn));
      y += PROC_H;
      if (g.collapsed) continue;
      for (const t of g.tracks) {
        const th = trackHeight(t);
        st.rows.push({ type: 'thread', track: t, y, h: th });
        labels.append(
          h(
            'div.tl-label.thread',
            {
              style: { top: `${y}px`, height: `${th}px` },
              title: `${g.name} / ${t.name}${t.events !== null ? ` · ${fmtCount(t.events)} events` : ''}`,
            },
            h('span', null, t.name),
          ),
        );
        y += th;
      }
    }
    st.totalH = y;
    resize();
  }

  function resize() {
    const w = Math.max(100, scroller.clientWidth - LABEL_W);
    const hgt = Math.max(60, scroller.clientHeight);
    st.dpr = window.devicePixelRatio || 1;
    content.style.height = `${Math.max(st.totalH, hgt)}px`;
    canvas.style.width = `${w}px`;
    canvas.style.height = `${hgt}px`;
    canvas.style.marginLeft = `${LABEL_W}px`;
    canvas.style.marginBottom = `${-hgt}px`;
    canvas.width = Math.round(w * st.dpr);
    canvas.height = Math.round(hgt * st.dpr);
    axis.style.width = `${w}px`;
    axis.width = Math.round(w * st.dpr);
    axis.height = Math.round(28 * st.dpr);
    requestDraw();
  }

  // --- zoom and pan ---------------------------------------------------------
  function zoomAt(factor, tAnchor) {
    const a = tAnchor ?? (st.viewStart + st.viewEnd) / 2;
    setView(a - (a - st.viewStart) * factor, a + (st.viewEnd - a) * factor);
  }

  function pan(fraction) {
    const d = span() * fraction;
    setView(st.viewStart + d, st.viewEnd + d);
  }

  // Rows only grow (never shrink) so tracks do not jump while zooming.
  function growDepths(data) {
    let grew = false;
    for (const [tid, list] of data.byTrack) {
      const t = st.byId.get(tid);
      if (!t) continue;
      let m = Math.max(t.maxDepth, data.depths.get(tid) ?? 0);
      for (const x of list) if (x.depth > m) m = x.depth;
      if (m > t.maxDepth) {
        t.maxDepth = Math.min(m, MAX_LEVELS - 1);
        grew = true;
      }
    }
    if (grew) {
      const top = scroller.scrollTop;
      layout();
      scroller.scrollTop = top;
    }
  }

  function setStatus() {
    if (st.error) {
      status.hidden = false;
      status.textContent = `Events: ${st.error}`;
      return;
    }
    if (st.loading) {
      status.hidden = false;
      status.textContent = 'Loading events…';
      return;
    }
    status.hidden = false;
    status.textContent =
      `${fmtCount(st.drawn)} events · ${fmtCount(st.summaries)} merged spans in view` +
      (st.data && st.data.truncated ? ' (truncated by server)' : '');
  }

  // --- drawing -------------------------------------------------------------
  function requestDraw() {
    if (raf) return;
    raf = requestAnimationFrame(() => {
      raf = 0;
      draw();
      drawAxis();
      updateWindowLabel();
    });
  }

  let colors = {};
  let hatch = null;
  function readColors() {
    const dark = matchMedia('(prefers-color-scheme: dark)').matches;
    colors = {
      text: cssVar('--text'),
      muted: cssVar('--muted'),
      border: cssVar('--border'),
      surface: cssVar('--surface'),
      surface2: cssVar('--surface-2'),
      summary: cssVar('--c-summary'),
      step: cssVar('--c-step'),
      select: cssVar('--c-select'),
      search: cssVar('--c-search'),
      accent: cssVar('--accent'),
      dark,
    };
    hatch = null;
    nameColors.clear();
  }
  const nameColors = new Map();
  function colorFor(name) {
    let c = nameColors.get(name);
    if (!c) {
      if (nameColors.size > 4000) nameColors.clear();
      const hue = nameHue(name);
      c = colors.dark ? `hsl(${hue} 42% 46%)` : `hsl(${hue} 58% 68%)`;
      nameColors.set(name, c);
    }
    return c;
  }
  function hatchPattern(ctx) {
    if (hatch) return hatch;
    const p = document.createElement('canvas');
    const n = Math.max(6, Math.round(6 * st.dpr));
    p.width = p.height = n;
    const c = p.getContext('2d');
    c.fillStyle = colors.summary;
    c.globalAlpha = 0.35;
    c.fillRect(0, 0, n, n);
    c.globalAlpha = 0.9;
    c.strokeStyle = colors.summary;
    c.lineWidth = Math.max(1, st.dpr);
    c.beginPath();
    c.moveTo(0, n);
    c.lineTo(n, 0);
    c.moveTo(-n / 2, n / 2);
    c.lineTo(n / 2, -n / 2);
    c.moveTo(n / 2, n + n / 2);
    c.lineTo(n + n / 2, n / 2);
    c.stroke();
    hatch = ctx.createPattern(p, 'repeat');
    return hatch;
  }

  function draw() {
    const ctx = canvas.getContext('2d');
    const W = cssWidth(),
      H = canvas.height / st.dpr;
    ctx.setTransform(st.dpr, 0, 0, st.dpr, 0, 0);
    ctx.fillStyle = colors.surface;
    ctx.fillRect(0, 0, W, H);
    const top = scroller.scrollTop;
    drawGrid(ctx, W, H);
    if (st.stepSel) {
      const x0 = xOf(st.stepSel.start_us),
        x1 = xOf(st.stepSel.start_us + (st.stepSel.duration_us || 0));
      ctx.fillStyle = colors.step;
      ctx.fillRect(x0, 0, Math.max(1, x1 - x0), H);
    }
    ctx.font = '11px system-ui, sans-serif';
    ctx.textBaseline = 'middle';
    let drawn = 0,
      summaries = 0;
    const hitSet = st.hits.length ? new Set(st.hits.map((x) => x.ev)) : null;
    for (const row of st.rows) {
      const y = row.y - top;
      if (y > H || y + row.h < 0) continue;
      ctx.fillStyle = colors.border;
      ctx.fillRect(0, y + row.h - 1, W, 1);
      if (row.type === 'process') {
        ctx.fillStyle = colors.surface2;
        ctx.fillRect(0, y, W, row.h - 1);
        continue;
      }
      const list = st.data && st.data.byTrack.get(row.track.id);
      if (!list) continue;
      for (const ev of list) {
        if (ev.e < st.viewStart || ev.s > st.viewEnd) continue;
        const lvl = Math.min(ev.depth, MAX_LEVELS - 1);
        const ey = y + TRACK_PAD + lvl * LEVEL_H;
        if (ey + LEVEL_H < 0 || ey > H) continue;
        let x0 = xOf(ev.s),
          x1 = xOf(ev.e);
        if (x0 < -2) x0 = -2;
        if (x1 > W + 2) x1 = W + 2;
        // Instants and zero-length slices (Kineto's sub-µs kernels) stay visible.
        const w = Math.max(ev.instant || ev.e === ev.s ? MIN_EVENT_PX : 1, x1 - x0);
        if (ev.summary) {
          ctx.fillStyle = hatchPattern(ctx);
          ctx.fillRect(x0, ey + 1, w, LEVEL_H - 2);
          summaries++;
          continue;
        }
        ctx.fillStyle = colorFor(ev.name);
        ctx.fillRect(x0, ey + 1, w, LEVEL_H - 2);
        drawn++;
        if (w > 28) {
          ctx.save();
          ctx.beginPath();
          ctx.rect(x0 + 3, ey, w - 6, LEVEL_H);
          ctx.clip();
          ctx.fillStyle = colors.dark ? '#f1f4f8' : '#15191f';
          ctx.fillText(ev.name, Math.max(x0, 0) + 4, ey + LEVEL_H / 2);
          ctx.restore();
        }
        if (hitSet && hitSet.has(ev)) {
          ctx.strokeStyle = colors.search;
          ctx.lineWidth = 2;
          ctx.strokeRect(x0 + 1, ey + 2, Math.max(1, w - 2), LEVEL_H - 4);
        }
      }
    }
    if (st.selected) {
      const r = rowOfTrack(st.selected.track);
      if (r) {
        const ev = st.selected.ev;
        // A search match not loaded yet has no depth: outline the whole track.
        const ey = ev.depth < 0 ? r.y - top + 1 : r.y - top + TRACK_PAD + Math.min(ev.depth, MAX_LEVELS - 1) * LEVEL_H;
        const eh = ev.depth < 0 ? r.h - 2 : LEVEL_H;
        const x0 = xOf(ev.s),
          x1 = xOf(ev.e);
        ctx.strokeStyle = colors.select;
        ctx.lineWidth = 2;
        ctx.strokeRect(x0, ey + 1, Math.max(2, x1 - x0), eh - 2);
      }
    }
    if (!st.rows.length) return;
    if (st.error && !st.data) {
      ctx.fillStyle = colors.muted;
      ctx.font = '13px system-ui, sans-serif';
      ctx.fillText(`Cannot load events: ${st.error}`, 16, 40);
    }
    st.drawn = drawn;
    st.summaries = summaries;
    canvas.dataset.eventsDrawn = String(drawn);
    canvas.dataset.summariesDrawn = String(summaries);
    if (st.firstPaint === null && st.data && (drawn || summaries || !st.data.byTrack.size)) {
      st.firstPaint = performance.now() - mountedAt;
      canvas.dataset.firstPaintMs = st.firstPaint.toFixed(1);
      performance.mark('xpv-timeline-first-paint');
    }
    if (!st.loading) setStatus();
  }

  function ticks(W) {
    const step = niceStep(span(), Math.max(2, Math.floor(W / 110)));
    const first = Math.ceil((st.viewStart - st.t0) / step) * step;
    const out = [];
    for (let rel = first; st.t0 + rel <= st.viewEnd; rel += step) out.push({ rel, x: xOf(st.t0 + rel) });
    return { out, step };
  }

  function drawGrid(ctx, W, H) {
    ctx.fillStyle = colors.border;
    for (const t of ticks(W).out) ctx.fillRect(Math.round(t.x), 0, 1, H);
  }

  function drawAxis() {
    const ctx = axis.getContext('2d');
    const W = axis.width / st.dpr;
    ctx.setTransform(st.dpr, 0, 0, st.dpr, 0, 0);
    ctx.fillStyle = colors.surface;
    ctx.fillRect(0, 0, W, 28);
    if (st.stepSel) {
      const x0 = xOf(st.stepSel.start_us),
        x1 = xOf(st.stepSel.start_us + (st.stepSel.duration_us || 0));
      ctx.fillStyle = colors.step;
      ctx.fillRect(x0, 0, Math.max(1, x1 - x0), 28);
      ctx.fillStyle = colors.accent;
      ctx.fillRect(x0, 24, Math.max(1, x1 - x0), 4);
    }
    ctx.font = '11px system-ui, sans-serif';
    ctx.textBaseline = 'middle';
    const { out, step } = ticks(cssWidth());
    for (const t of out) {
      const x = t.x;
      ctx.fillStyle = colors.border;
      ctx.fillRect(Math.round(x), 16, 1, 12);
      const label = fmtTick(t.rel, step, Math.max(Math.abs(st.viewStart - st.t0), Math.abs(st.viewEnd - st.t0)));
      if (x + 3 + ctx.measureText(label).width > W) continue; // would be clipped at the edge
      ctx.fillStyle = colors.muted;
      ctx.fillText(label, x + 3, 10);
    }
  }

  function updateWindowLabel() {
    windowLabel.textContent = `${fmtDur(st.viewStart - st.t0)} – ${fmtDur(st.viewEnd - st.t0)}  (${fmtDur(span())} shown)`;
  }

  // --- interaction ---------------------------------------------------------
  function rowOfTrack(trackId) {
    return st.rows.find((r) => r.type === 'thread' && r.track.id === trackId);
  }

  function hitTest(cx, cy) {
    const y = cy + scroller.scrollTop;
    const row = st.rows.find((r) => y >= r.y && y < r.y + r.h);
    if (!row || row.type !== 'thread' || !st.data) return null;
    const lvl = Math.floor((y - row.y - TRACK_PAD) / LEVEL_H);
    const list = st.data.byTrack.get(row.track.id) || [];
    const tol = span() * (3 / cssWidth());
    const t = tOf(cx);
    let best = null;
    for (const ev of list) {
      if (Math.min(ev.depth, MAX_LEVELS - 1) !== lvl) continue;
      if (t < ev.s - tol || t > ev.e + tol) continue;
      if (!best || ev.e - ev.s < best.e - best.s) best = ev;
    }
    return best ? { ev: best, track: row.track.id } : null;
  }

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
    const hit = hitTest(e.clientX - r.left, e.clientY - r.top);
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
  scroller.addEventListener('scroll', requestDraw, { passive: true });
  const ro = new ResizeObserver(() => resize());
  ro.observe(scroller);
  const mq = matchMedia('(prefers-color-scheme: dark)');
  mq.addEventListener(
    'change',
    () => {
      readColors();
      requestDraw();
    },
    { signal: life.signal },
  );
  const dprWatch = () => {
    const m = matchMedia(`(resolution: ${window.devicePixelRatio}dppx)`);
    m.addEventListener(
      'change',
      () => {
        resize();
        dprWatch();
      },
      { once: true, signal: life.signal },
    );
  };
  dprWatch();

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
    requestDraw();
  }
  stepSel.addEventListener('change', () => selectStep(stepSel.value));

  // --- start -------------------------------------------------------------------
  readColors();
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
    layout();
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
    ro.disconnect();
    tl.view.stop();
    tl.search.stop();
    cancelAnimationFrame(raf);
    tl.details.stop();
    if (window.__xpvTimeline && window.__xpvTimeline.state === st) delete window.__xpvTimeline;
  };
}

function num(v) {
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
}

// Axis labels: time from the profile's start, in one unit for the whole
// axis (picked by the largest value shown) with as many decimals as the tick
// step needs, e.g. "57.8 s" rather than "57800 ms".
function fmtTick(rel, step, maxAbs) {
  const units = [
    [1e6, 's'],
    [1e3, 'ms'],
    [1, 'µs'],
    [1e-3, 'ns'],
  ];
  const [div, unit] = units.find(([d]) => Math.max(maxAbs, step) >= d) || units[units.length - 1];
  const decimals = Math.max(0, Math.min(6, Math.ceil(-Math.log10(step / div) - 1e-9)));
  return `${(rel / div).toFixed(decimals)} ${unit}`;
}
