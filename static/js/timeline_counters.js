// timeline_counters.js — counter tracks: each counter series of the profile
// (Chrome `C` events, PyTorch's memory totals; the /counters answer) is a
// row at the top of its process, drawn as a step area chart of its values
// with the min–max of each pixel as a bar, so a million samples read the
// same at any zoom. Hovering shows the value at the pointer.
//
// Invariants: the series are asked for the view's window at the canvas's
// width in pixels, debounced, a newer request aborting the older; a profile
// whose whole span has no series is never asked again. A series keeps its
// row once seen (st.counterSeries only grows), so rows do not jump.

import { api } from './api.js';
import { h, fmtCount } from './format.js';

export const COUNTER_H = 40;
const FETCH_DEBOUNCE_MS = 80;

export function seriesKey(s) {
  return `${s.track}|${s.name}|${s.series}|${s.device ?? ''}`;
}

export function seriesLabel(s) {
  return `${s.name} · ${s.series}${s.device !== null && s.device !== undefined ? ` (device ${s.device})` : ''}`;
}

export function createCounters(tl) {
  const { st } = tl;
  st.counterSeries = []; // [{key, track, name, series, device}] in first-seen order
  st.counters = null; // the latest answer: {start_us, end_us, byKey: Map}
  let none = false;
  let timer = 0;
  let ctrl = null;
  const tip = h('div.tl-tip', { role: 'tooltip', hidden: true });
  tl.dom.canvas.parentElement.append(tip);

  function schedule() {
    if (none) return;
    clearTimeout(timer);
    timer = setTimeout(fetchNow, FETCH_DEBOUNCE_MS);
  }

  async function fetchNow() {
    if (ctrl) ctrl.abort();
    ctrl = new AbortController();
    const params = {
      start_us: st.viewStart,
      end_us: st.viewEnd,
      resolution: Math.max(1, Math.min(20000, Math.round(tl.view.cssWidth()))),
    };
    let res;
    try {
      res = await api.counters(tl.id, params, { signal: ctrl.signal });
    } catch (e) {
      return; // aborted, or a server without counters: the tracks stay as they are
    }
    adopt(res);
  }

  function adopt(res) {
    const byKey = new Map();
    let added = false;
    for (const s of res.counters || []) {
      const key = seriesKey(s);
      byKey.set(key, s);
      if (!st.counterSeries.some((x) => x.key === key)) {
        st.counterSeries.push({ key, track: s.track, name: s.name, series: s.series, device: s.device });
        added = true;
      }
    }
    if (!st.counterSeries.length && res.start_us <= st.t0 && res.end_us >= st.t1) none = true;
    st.counters = { start_us: res.start_us, end_us: res.end_us, byKey };
    if (added) tl.draw.layout();
    tl.draw.request();
  }

  // The value under canvas point (cx, y in content coordinates), as text.
  function hover(cx, cy, clientX, clientY) {
    const row = tl.draw.rowAt(cy);
    const s = row && row.type === 'counter' && st.counters && st.counters.byKey.get(row.series.key);
    if (!s) {
      tip.hidden = true;
      return;
    }
    const t = tl.view.tOf(cx);
    const v = valueAt(s, t);
    tip.textContent = `${seriesLabel(s)}: ${v.text}`;
    tip.style.left = `${clientX + 12}px`;
    tip.style.top = `${clientY + 12}px`;
    tip.hidden = false;
  }

  function hideTip() {
    tip.hidden = true;
  }

  function stop() {
    clearTimeout(timer);
    if (ctrl) ctrl.abort();
    tip.remove();
  }

  return { schedule, hover, hideTip, stop };
}

// The series' value at time t: the last sample at or before it (with the
// pixel's min–max when it holds several).
function valueAt(s, t) {
  let p = null;
  for (const q of s.points) {
    if (q[0] > t) break;
    p = q;
  }
  if (!p) return { text: s.initial === null ? 'no sample yet' : fmtValue(s.initial) };
  const range = p[4] > 1 ? ` (${fmtValue(p[1])} – ${fmtValue(p[2])} over ${fmtCount(p[4])} samples)` : '';
  return { text: `${fmtValue(p[3])}${range}` };
}

function fmtValue(v) {
  if (!Number.isFinite(v)) return String(v);
  if (Number.isInteger(v)) return v.toLocaleString('en-US');
  return v.toPrecision(6);
}

// One counter row of a frame (f: the painters' shared frame).
export function drawCounterRow(f, row, y) {
  const { ctx, st, view } = f;
  const s = st.counters && st.counters.byKey.get(row.series.key);
  if (!s) return 0;
  let lo = s.initial ?? Infinity,
    hi = s.initial ?? -Infinity;
  for (const p of s.points) {
    if (p[1] < lo) lo = p[1];
    if (p[2] > hi) hi = p[2];
  }
  if (!(hi >= lo)) return 0;
  if (lo > 0) lo = 0;
  const top = y + 4,
    hgt = row.h - 8;
  const yOf = (v) => top + hgt - (hi > lo ? ((v - lo) / (hi - lo)) * hgt : hgt);
  const color = f.palette.eventColor(row.series.key);
  ctx.save();
  ctx.beginPath();
  let prev = s.initial ?? (s.points.length ? s.points[0][3] : lo);
  ctx.moveTo(0, yOf(lo));
  ctx.lineTo(0, yOf(prev));
  for (const p of s.points) {
    const x = view.xOf(p[0]);
    ctx.lineTo(x, yOf(prev));
    ctx.lineTo(x, yOf(p[3]));
    prev = p[3];
  }
  ctx.lineTo(f.W, yOf(prev));
  ctx.lineTo(f.W, yOf(lo));
  ctx.closePath();
  ctx.globalAlpha = 0.45;
  ctx.fillStyle = color;
  ctx.fill();
  ctx.globalAlpha = 1;
  ctx.fillStyle = color;
  for (const p of s.points) {
    if (p[4] < 2) continue;
    const x = view.xOf(p[0]);
    ctx.fillRect(x, yOf(p[2]), 1, Math.max(1, yOf(p[1]) - yOf(p[2])));
  }
  ctx.fillStyle = f.c.muted;
  ctx.fillText(fmtValue(hi), 4, top + 6);
  ctx.restore();
  return 1;
}
