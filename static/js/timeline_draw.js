// timeline_draw.js — what the timeline shows: the rows (one per process,
// one per thread or stream track, each as tall as its deepest nesting), their
// DOM labels, the events on the canvas, the time axis, the window label and
// the status line; and the reverse, which event is under a point.
//
// Invariants: labels are DOM (focusable, scroll natively); events are drawn
// on one sticky canvas sized to the visible area, at devicePixelRatio, so
// only what is on screen is ever drawn. Drawing happens at most once per
// animation frame (request()), from the state alone. Rows only grow, never
// shrink, so tracks do not jump while zooming. The canvas carries
// data-events-drawn, data-summaries-drawn and data-first-paint-ms for the
// tests and the performance figures.

import { h, fmtDur, fmtCount, fmtN, nameHue } from './format.js';
import { niceStep, cssVar } from './chart.js';
import { pinnedTracks, shownTracks } from './timeline_tracks.js';
import { drawCounterRow, seriesLabel, COUNTER_H } from './timeline_counters.js';
import { firstEndingAfter } from './timeline_data.js';

export const LABEL_W = 240;
const PROC_H = 24;
const LEVEL_H = 18;
const TRACK_PAD = 3;
const MAX_LEVELS = 24;
const AXIS_H = 28;
const MIN_EVENT_PX = 2; // instants and zero-length slices are drawn at least this wide
const MIN_LABEL_PX = 28; // narrower events get no name written in them
const RUN_PX = 1.5; // narrower events merge with those starting in the same pixel column

export function createDrawing(tl) {
  const { st } = tl;
  const { canvas, axis, labels, content, scroller, status, windowLabel } = tl.dom;
  const palette = createPalette(st);
  let frame = 0;
  let resizeObserver = null;

  function request() {
    if (frame) return;
    frame = requestAnimationFrame(() => {
      frame = 0;
      drawCanvas();
      drawAxis();
      updateWindowLabel();
    });
  }

  // --- rows and labels -------------------------------------------------------
  function trackHeight(t) {
    return TRACK_PAD * 2 + LEVEL_H * (Math.min(t.maxDepth, MAX_LEVELS - 1) + 1);
  }

  // Pinned tracks first, then every process the track filter leaves
  // (timeline_tracks.js decides which tracks show where).
  function layout() {
    st.rows = [];
    let y = 0;
    labels.replaceChildren();
    const addTrack = (t, pinned) => {
      const th = trackHeight(t);
      st.rows.push({ type: 'thread', track: t, y, h: th, pinned });
      labels.append(threadLabel(t, y, th, pinned));
      y += th;
    };
    const pinned = pinnedTracks(st);
    if (pinned.length) {
      st.rows.push({ type: 'process', group: null, y, h: PROC_H });
      labels.append(pinnedLabel(pinned.length, y));
      y += PROC_H;
      for (const t of pinned) addTrack(t, true);
    }
    for (const g of st.groups) {
      const shown = shownTracks(st, g);
      if (!shown) continue;
      st.rows.push({ type: 'process', group: g, y, h: PROC_H });
      labels.append(processLabel(g, y, shown.length));
      y += PROC_H;
      if (g.collapsed) continue;
      for (const s of st.counterSeries) {
        if (!shown.some((t) => t.id === s.track)) continue;
        st.rows.push({ type: 'counter', series: s, y, h: COUNTER_H });
        labels.append(counterLabel(s, y));
        y += COUNTER_H;
      }
      for (const t of shown) addTrack(t, false);
    }
    st.totalH = y;
    resize();
  }

  function processLabel(g, y, n) {
    const toggle = () => {
      g.collapsed = !g.collapsed;
      layout();
      tl.view.scheduleFetch(true);
      tl.tracks.updateCollapseButton();
    };
    const btn = h(
      'button',
      {
        type: 'button',
        'aria-expanded': String(!g.collapsed),
        'aria-label': `${g.name}: ${fmtN(n, 'track')}, ${g.collapsed ? 'collapsed' : 'expanded'}`,
        onclick: toggle,
      },
      h('span', null, g.name),
      h('span.count', null, `${n}`),
    );
    return h('div.tl-label.process', { style: { top: `${y}px`, height: `${PROC_H}px` } }, btn);
  }

  function counterLabel(s, y) {
    const text = seriesLabel(s);
    return h(
      'div.tl-label.counter',
      { style: { top: `${y}px`, height: `${COUNTER_H}px` }, title: `Counter: ${text}` },
      h('span', null, text),
    );
  }

  function pinnedLabel(n, y) {
    return h(
      'div.tl-label.process.pinned',
      { style: { top: `${y}px`, height: `${PROC_H}px` } },
      h('span', null, 'Pinned'),
      h('span.count', null, `${n}`),
    );
  }

  function threadLabel(t, y, th, pinned) {
    const events =
      t.events !== null ? ` · ${fmtCount(t.events)} ${t.derived ? 'spans, derived from the kernels' : 'events'}` : '';
    const pin = h(
      'button.tl-pin',
      {
        type: 'button',
        'aria-pressed': String(pinned),
        'aria-label': `${pinned ? 'Unpin' : 'Pin'} ${t.group.name} / ${t.name}`,
        title: pinned ? 'Unpin this track' : 'Pin this track to the top',
        onclick: () => tl.tracks.togglePin(t.id),
      },
      pinned ? '×' : '↑',
    );
    return h(
      t.derived ? 'div.tl-label.thread.derived' : 'div.tl-label.thread',
      {
        style: { top: `${y}px`, height: `${th}px` },
        title: `${t.group.name} / ${t.name}${events}`,
        dataset: { trackId: String(t.id) },
      },
      h('span', null, pinned ? `${t.group.name} / ${t.name}` : t.name),
      pin,
    );
  }

  // Sizes the canvases to the visible area at the current devicePixelRatio.
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
    axis.height = Math.round(AXIS_H * st.dpr);
    request();
  }

  // Deepens the rows of tracks whose loaded events nest deeper than shown.
  function growRows(data) {
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

  function rowOfTrack(trackId) {
    return st.rows.find((r) => r.type === 'thread' && r.track.id === trackId);
  }

  // The row at content y (canvas y + scroll), or undefined.
  function rowAt(y) {
    return st.rows.find((r) => y >= r.y && y < r.y + r.h);
  }

  // The ids of the track rows that [y0, y1] (content y) crosses.
  function tracksBetween(y0, y1) {
    const ids = [];
    for (const r of st.rows)
      if (r.type === 'thread' && r.y < y1 && r.y + r.h > y0 && !ids.includes(r.track.id)) ids.push(r.track.id);
    return ids;
  }

  // The drawn event at canvas point (cx, cy) as {ev, track}, or null; the
  // shortest one within 3 pixels, so tiny events can be clicked. As drawn
  // (drawRow): the loaded window's events, and outside that window the
  // backdrop's under them.
  function eventAt(cx, cy) {
    const y = cy + scroller.scrollTop;
    const row = st.rows.find((r) => y >= r.y && y < r.y + r.h);
    const data = st.data;
    if (!row || row.type !== 'thread' || !data) return null;
    const lvl = Math.floor((y - row.y - TRACK_PAD) / LEVEL_H);
    const tol = tl.view.span() * (3 / tl.view.cssWidth());
    const t = tl.view.tOf(cx);
    let best = nearest(data.byTrack.get(row.track.id), lvl, t, tol);
    const back = st.backdrop !== data ? st.backdrop : null;
    if (!best && back && (t < data.params.start_us || t > data.params.end_us))
      best = nearest(back.byTrack.get(row.track.id), lvl, t, tol);
    return best ? { ev: best, track: row.track.id } : null;
  }

  // --- the canvas ------------------------------------------------------------
  function drawCanvas() {
    const ctx = canvas.getContext('2d');
    const c = palette.colors;
    const f = {
      ctx,
      c,
      st,
      view: tl.view,
      palette,
      W: tl.view.cssWidth(),
      H: canvas.height / st.dpr,
      top: scroller.scrollTop,
      hitSet: st.hits.length ? new Set(st.hits.map((x) => x.ev)) : null,
      highlight: st.highlightName,
      drawn: 0,
      summaries: 0,
      counters: 0,
      counted: true,
      // the run of narrow spans being merged, per nesting level (drawSpans)
      runX0: new Float64Array(MAX_LEVELS),
      runX1: new Float64Array(MAX_LEVELS),
      runY: new Float64Array(MAX_LEVELS),
      runFill: new Array(MAX_LEVELS),
      runSummary: new Uint8Array(MAX_LEVELS),
    };
    ctx.setTransform(st.dpr, 0, 0, st.dpr, 0, 0);
    ctx.fillStyle = c.surface;
    ctx.fillRect(0, 0, f.W, f.H);
    drawGrid(f);
    const band = stepBand(st, tl.view);
    if (band) {
      ctx.fillStyle = c.step;
      ctx.fillRect(band.x, 0, band.w, f.H);
    }
    ctx.font = '11px system-ui, sans-serif';
    ctx.textBaseline = 'middle';
    for (const row of st.rows) drawRow(f, row);
    if (st.selected) outlineSelected(f, rowOfTrack(st.selected.track));
    tl.area.draw(f);
    tl.flows.draw(f, rowOfTrack, levelY);
    canvas.dataset.countersDrawn = String(f.counters);
    if (!st.rows.length) return;
    if (st.error && !st.data) {
      ctx.fillStyle = c.muted;
      ctx.font = '13px system-ui, sans-serif';
      ctx.fillText(`Cannot load events: ${st.error}`, 16, 40);
    }
    recordCounts(f.drawn, f.summaries);
    if (!st.loading) setStatus();
  }

  function recordCounts(drawn, summaries) {
    st.drawn = drawn;
    st.summaries = summaries;
    canvas.dataset.eventsDrawn = String(drawn);
    canvas.dataset.summariesDrawn = String(summaries);
    if (st.firstPaint === null && st.data && (drawn || summaries || !st.data.byTrack.size)) {
      st.firstPaint = performance.now() - tl.mountedAt;
      canvas.dataset.firstPaintMs = st.firstPaint.toFixed(1);
      performance.mark('xpv-timeline-first-paint');
    }
  }

  // --- the axis and the labels around the canvas ----------------------------
  function drawAxis() {
    const ctx = axis.getContext('2d');
    const c = palette.colors;
    const W = axis.width / st.dpr;
    ctx.setTransform(st.dpr, 0, 0, st.dpr, 0, 0);
    ctx.fillStyle = c.surface;
    ctx.fillRect(0, 0, W, AXIS_H);
    const band = stepBand(st, tl.view);
    if (band) {
      ctx.fillStyle = c.step;
      ctx.fillRect(band.x, 0, band.w, AXIS_H);
      ctx.fillStyle = c.accent;
      ctx.fillRect(band.x, AXIS_H - 4, band.w, 4);
    }
    ctx.font = '11px system-ui, sans-serif';
    ctx.textBaseline = 'middle';
    const { out, step } = ticks(st, tl.view, tl.view.cssWidth());
    const maxAbs = Math.max(Math.abs(st.viewStart - st.t0), Math.abs(st.viewEnd - st.t0));
    for (const { rel, x } of out) {
      ctx.fillStyle = c.border;
      ctx.fillRect(Math.round(x), 16, 1, 12);
      const label = fmtTick(rel, step, maxAbs);
      if (x + 3 + ctx.measureText(label).width > W) continue; // would be clipped at the edge
      ctx.fillStyle = c.muted;
      ctx.fillText(label, x + 3, 10);
    }
  }

  function updateWindowLabel() {
    const shown = fmtDur(tl.view.span());
    windowLabel.textContent = `${fmtDur(st.viewStart - st.t0)} – ${fmtDur(st.viewEnd - st.t0)}  (${shown} shown)`;
  }

  function setStatus() {
    status.hidden = false;
    if (st.error) status.textContent = `Events: ${st.error}`;
    else if (st.loading) status.textContent = 'Loading events…';
    else
      status.textContent =
        `${fmtCount(st.drawn)} events · ${fmtCount(st.summaries)} merged spans in view` +
        (st.data && st.data.truncated ? ' (truncated by server)' : '');
  }

  // --- redrawing when the page changes around the canvas ---------------------
  function watchPage() {
    scroller.addEventListener('scroll', request, { passive: true });
    resizeObserver = new ResizeObserver(() => resize());
    resizeObserver.observe(scroller);
    const theme = matchMedia('(prefers-color-scheme: dark)');
    theme.addEventListener(
      'change',
      () => {
        palette.read();
        request();
      },
      { signal: tl.signal },
    );
    watchPixelRatio();
  }

  // A media query matches one ratio only, so each change re-arms it.
  function watchPixelRatio() {
    const m = matchMedia(`(resolution: ${window.devicePixelRatio}dppx)`);
    m.addEventListener(
      'change',
      () => {
        resize();
        watchPixelRatio();
      },
      { once: true, signal: tl.signal },
    );
  }

  function stop() {
    resizeObserver.disconnect();
    cancelAnimationFrame(frame);
  }

  palette.read();
  watchPage();
  return { request, layout, growRows, rowOfTrack, rowAt, tracksBetween, eventAt, setStatus, stop };
}

// The painters of one frame. `f` holds what they share: the 2D context, the
// colours, the state, the view and the palette, the canvas size in CSS
// pixels (W, H), the tracks' scroll offset (top), the events the search
// outlines (hitSet) and the counts of events and merged spans drawn so far.

function drawRow(f, row) {
  const { ctx, c, st } = f;
  const y = row.y - f.top;
  if (y > f.H || y + row.h < 0) return;
  ctx.fillStyle = c.border;
  ctx.fillRect(0, y + row.h - 1, f.W, 1);
  if (row.type === 'process') {
    ctx.fillStyle = c.surface2;
    ctx.fillRect(0, y, f.W, row.h - 1);
    return;
  }
  if (row.type === 'counter') {
    f.counters += drawCounterRow(f, row, y);
    return;
  }
  const data = st.data;
  if (!data) return;
  const base = y + TRACK_PAD;
  // Where the view reaches past the loaded window (zoomed or panned out of
  // it, its answer not in yet), the widest window loaded so far fills in,
  // coarser: the frame never waits for the server.
  const back = st.backdrop !== data ? st.backdrop : null;
  const under = back && back.byTrack.get(row.track.id);
  if (under) {
    const a = data.params.start_us,
      b = data.params.end_us;
    if (st.viewStart < a) drawClipped(f, under, base, y, row.h, st.viewStart, a);
    if (st.viewEnd > b) drawClipped(f, under, base, y, row.h, b, st.viewEnd);
  }
  const list = data.byTrack.get(row.track.id);
  if (list) drawSpans(f, list, base, st.viewStart, st.viewEnd, true);
}

// The backdrop's spans in [t0, t1] only, uncounted.
function drawClipped(f, list, base, y, h, t0, t1) {
  const { ctx, view } = f;
  const x0 = Math.max(0, view.xOf(t0)),
    x1 = Math.min(f.W, view.xOf(t1));
  if (!(x1 > x0)) return;
  ctx.save();
  ctx.beginPath();
  ctx.rect(x0, y, x1 - x0, h);
  ctx.clip();
  drawSpans(f, list, base, t0, t1, false);
  ctx.restore();
}

// The spans of `list` (sorted by start) that overlap [t0, t1]: found by a
// binary search, not a pass over the list, and at most one fill per pixel
// column and level for the narrow ones (a run of them takes its first one's
// colour), so a frame costs the pixels shown, not the events loaded. A run
// holds merged spans only or events only: a hatched summary never paints a
// real event's pixels, nor an event's colour a summary's.
function drawSpans(f, list, base, t0, t1, counted) {
  f.counted = counted;
  f.runX1.fill(-Infinity);
  for (let i = firstEndingAfter(list, t0); i < list.length; i++) {
    const ev = list[i];
    if (ev.s > t1) break;
    if (ev.e < t0) continue;
    const lvl = Math.min(ev.depth, MAX_LEVELS - 1);
    drawEvent(f, ev, base + lvl * LEVEL_H, lvl);
  }
  for (let lvl = 0; lvl < MAX_LEVELS; lvl++) flushRun(f, lvl);
}

function flushRun(f, lvl) {
  if (f.runX1[lvl] === -Infinity) return;
  f.ctx.fillStyle = f.runFill[lvl];
  f.ctx.fillRect(f.runX0[lvl], f.runY[lvl] + 1, f.runX1[lvl] - f.runX0[lvl], LEVEL_H - 2);
  f.runX1[lvl] = -Infinity;
}

function drawEvent(f, ev, ey, lvl) {
  const { ctx, c, view, palette } = f;
  if (ey + LEVEL_H < 0 || ey > f.H) return;
  const x0 = Math.max(view.xOf(ev.s), -2);
  const x1 = Math.min(view.xOf(ev.e), f.W + 2);
  // Instants and zero-length slices (Kineto's sub-µs kernels) stay visible.
  const w = Math.max(ev.instant || ev.e === ev.s ? MIN_EVENT_PX : 1, x1 - x0);
  if (f.counted) {
    if (ev.summary) f.summaries++;
    else f.drawn++;
  }
  const marked = (f.hitSet && f.hitSet.has(ev)) || (f.highlight !== null && ev.name === f.highlight);
  const fill = ev.summary ? palette.hatch(ctx) : palette.eventColor(ev.name);
  if (w < RUN_PX && !marked) {
    const kind = ev.summary ? 1 : 0;
    if (x0 < f.runX0[lvl] + 1 && f.runX1[lvl] !== -Infinity && f.runSummary[lvl] === kind) {
      f.runX1[lvl] = Math.max(f.runX1[lvl], x0 + w);
      return;
    }
    flushRun(f, lvl);
    f.runX0[lvl] = x0;
    f.runX1[lvl] = x0 + w;
    f.runY[lvl] = ey;
    f.runFill[lvl] = fill;
    f.runSummary[lvl] = kind;
    return;
  }
  flushRun(f, lvl);
  ctx.fillStyle = fill;
  ctx.fillRect(x0, ey + 1, w, LEVEL_H - 2);
  if (ev.summary) return;
  if (w > MIN_LABEL_PX) {
    ctx.save();
    ctx.beginPath();
    ctx.rect(x0 + 3, ey, w - 6, LEVEL_H);
    ctx.clip();
    ctx.fillStyle = c.dark ? '#f1f4f8' : '#15191f';
    ctx.fillText(ev.name, Math.max(x0, 0) + 4, ey + LEVEL_H / 2);
    ctx.restore();
  }
  if (marked) {
    ctx.strokeStyle = c.search;
    ctx.lineWidth = 2;
    ctx.strokeRect(x0 + 1, ey + 2, Math.max(1, w - 2), LEVEL_H - 4);
  }
}

// The shortest span of `list` at nesting level `lvl` within `tol` of time
// `t`, or null.
function nearest(list, lvl, t, tol) {
  if (!list) return null;
  let best = null;
  for (let i = firstEndingAfter(list, t - tol); i < list.length && list[i].s <= t + tol; i++) {
    const ev = list[i];
    if (Math.min(ev.depth, MAX_LEVELS - 1) !== lvl) continue;
    if (t > ev.e + tol) continue;
    if (!best || ev.e - ev.s < best.e - best.s) best = ev;
  }
  return best;
}

// The middle of nesting level `depth` of a track row, in content y.
function levelY(row, depth) {
  return row.y + TRACK_PAD + Math.min(depth, MAX_LEVELS - 1) * LEVEL_H + LEVEL_H / 2;
}

// `r` is the selected event's row, undefined while its process is collapsed.
function outlineSelected(f, r) {
  if (!r) return;
  const ev = f.st.selected.ev;
  // A search match not loaded yet has no depth: outline the whole track.
  const ey = ev.depth < 0 ? r.y - f.top + 1 : r.y - f.top + TRACK_PAD + Math.min(ev.depth, MAX_LEVELS - 1) * LEVEL_H;
  const eh = ev.depth < 0 ? r.h - 2 : LEVEL_H;
  const x0 = f.view.xOf(ev.s),
    x1 = f.view.xOf(ev.e);
  f.ctx.strokeStyle = f.c.select;
  f.ctx.lineWidth = 2;
  f.ctx.strokeRect(x0, ey + 1, Math.max(2, x1 - x0), eh - 2);
}

// The highlighted step as {x, w} in canvas pixels, or null.
function stepBand(st, view) {
  if (!st.stepSel) return null;
  const x0 = view.xOf(st.stepSel.start_us);
  const x1 = view.xOf(st.stepSel.start_us + (st.stepSel.span_us || st.stepSel.duration_us || 0));
  return { x: x0, w: Math.max(1, x1 - x0) };
}

// Time ticks about every 110 pixels, at round steps from the profile's start.
function ticks(st, view, W) {
  const step = niceStep(view.span(), Math.max(2, Math.floor(W / 110)));
  const first = Math.ceil((st.viewStart - st.t0) / step) * step;
  const out = [];
  for (let rel = first; st.t0 + rel <= st.viewEnd; rel += step) out.push({ rel, x: view.xOf(st.t0 + rel) });
  return { out, step };
}

function drawGrid(f) {
  f.ctx.fillStyle = f.c.border;
  for (const t of ticks(f.st, f.view, f.W).out) f.ctx.fillRect(Math.round(t.x), 0, 1, f.H);
}

// Colours come from the stylesheet's custom properties, so they follow the
// light or dark theme; read() takes them again when the theme changes. Event
// colours are cached per name (bounded), the summary hatch per theme.
function createPalette(st) {
  const byName = new Map();
  let hatchFill = null;
  const palette = { colors: {}, read, eventColor, hatch };

  function read() {
    palette.colors = {
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
      dark: matchMedia('(prefers-color-scheme: dark)').matches,
    };
    hatchFill = null;
    byName.clear();
  }

  function eventColor(name) {
    let c = byName.get(name);
    if (!c) {
      if (byName.size > 4000) byName.clear();
      const hue = nameHue(name);
      c = palette.colors.dark ? `hsl(${hue} 42% 46%)` : `hsl(${hue} 58% 68%)`;
      byName.set(name, c);
    }
    return c;
  }

  // Diagonal stripes: merged spans must not read as one long event.
  function hatch(ctx) {
    if (hatchFill) return hatchFill;
    const color = palette.colors.summary;
    const p = document.createElement('canvas');
    const n = Math.max(6, Math.round(6 * st.dpr));
    p.width = p.height = n;
    const c = p.getContext('2d');
    c.fillStyle = color;
    c.globalAlpha = 0.35;
    c.fillRect(0, 0, n, n);
    c.globalAlpha = 0.9;
    c.strokeStyle = color;
    c.lineWidth = Math.max(1, st.dpr);
    c.beginPath();
    c.moveTo(0, n);
    c.lineTo(n, 0);
    c.moveTo(-n / 2, n / 2);
    c.lineTo(n / 2, -n / 2);
    c.moveTo(n / 2, n + n / 2);
    c.lineTo(n + n / 2, n / 2);
    c.stroke();
    hatchFill = ctx.createPattern(p, 'repeat');
    return hatchFill;
  }

  return palette;
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
