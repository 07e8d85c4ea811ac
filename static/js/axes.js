// axes.js — the axes every SVG chart draws, in one place: nice ticks, grid
// lines, tick labels as bare numbers and an axis title that names the unit
// once ("Time (ms)", "Memory (GB)"), so a reader never has to guess what a
// number on an axis means. The unit follows the largest value on the axis:
// time in µs, ms or s, sizes in B, KB, MB or GB (decimal, as fmtBytes
// writes them), other numbers with SI prefixes.
//
// Invariants: an axis maps [min, max] onto its pixel range with max rounded
// up to a tick (so the top tick is always labelled); a chart's scale is the
// function returned, and its ticks carry data-value (the raw value) so tests
// and screen readers can read them. Axis groups have class "axis", grid
// lines class "grid", titles class "axis-title".

import { isKnown } from './format.js';

const SVG = 'http://www.w3.org/2000/svg';

export function svgEl(tag, attrs, ...kids) {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) if (v !== undefined && v !== null) el.setAttribute(k, v);
  for (const k of kids) if (k) el.append(k);
  return el;
}

export function svgText(x, y, str, attrs = {}) {
  const t = svgEl('text', { x, y, ...attrs });
  t.textContent = str;
  return t;
}

// A "nice" axis step (1, 2 or 5 times a power of ten) giving about n ticks.
export function niceStep(range, n) {
  const raw = range / Math.max(1, n);
  if (!(raw > 0) || !Number.isFinite(raw)) return 1;
  const pow = Math.pow(10, Math.floor(Math.log10(raw)));
  const m = raw / pow;
  return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * pow;
}

const TIME_UNITS = [
  [1e6, 's'],
  [1e3, 'ms'],
  [1, 'µs'],
];
const BYTE_UNITS = [
  [1e12, 'TB'],
  [1e9, 'GB'],
  [1e6, 'MB'],
  [1e3, 'KB'],
  [1, 'B'],
];
const SI_UNITS = [
  [1e12, 'T'],
  [1e9, 'G'],
  [1e6, 'M'],
  [1e3, 'k'],
  [1, ''],
];

// The unit an axis up to `max` is labelled in: {div, name}. kind: 'time'
// (values in µs), 'bytes', 'count' or 'num'.
export function axisUnit(kind, max) {
  const a = Math.abs(max) || 0;
  const table = kind === 'time' ? TIME_UNITS : kind === 'bytes' ? BYTE_UNITS : kind === 'num' ? SI_UNITS : null;
  if (!table) return { div: 1, name: '' };
  const [div, name] = table.find(([f]) => a >= f) || table[table.length - 1];
  return { div, name };
}

// A tick value in the axis's unit, as few digits as tell ticks apart.
function tickText(v, div, step) {
  const x = v / div;
  const d = Math.max(0, Math.min(6, -Math.floor(Math.log10(step / div) + 1e-9)));
  return x.toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d });
}

// "Memory" + unit -> "Memory (GB)"; a bare count axis keeps its title.
export function axisTitle(title, unit) {
  return unit.name ? `${title} (${unit.name})` : title;
}

// Ticks from min to max (max rounded up to a tick) about n of them, in the
// unit's own steps so that 0.5 GB or 200 ms come out round.
export function ticks(kind, min, max, n) {
  const unit = axisUnit(kind, Math.max(Math.abs(min), Math.abs(max)));
  const span = max - min > 0 ? max - min : Math.abs(max) || 1;
  let step = niceStep(span / unit.div, n) * unit.div;
  if (kind === 'count') step = Math.max(1, Math.round(step));
  const lo = Math.floor(min / step) * step;
  const hi = Math.max(lo + step, Math.ceil(max / step - 1e-9) * step);
  const values = [];
  for (let v = lo; v <= hi + step / 2; v += step) values.push(+v.toPrecision(12));
  return { unit, step, lo, hi, values, label: (v) => tickText(v, unit.div, step) };
}

// A y axis at the plot's left: grid lines across it and labelled ticks.
// o: {pad: {l, r, t, b}, width, height, max, min = 0, kind, title, n = 5}.
// Returns the scale v -> pixel y, with .top (the value at the top).
export function yAxis(svg, o) {
  const plotH = o.height - o.pad.t - o.pad.b;
  const t = ticks(o.kind, o.min || 0, Math.max(o.max, 1e-9), o.n || 5);
  const y = (v) => o.pad.t + plotH - ((v - t.lo) / (t.hi - t.lo)) * plotH;
  const grid = svgEl('g', { class: 'grid' });
  const axis = svgEl('g', { class: 'axis', 'data-axis': 'y', 'data-unit': t.unit.name });
  for (const v of t.values) {
    grid.append(svgEl('line', { x1: o.pad.l, x2: o.width - o.pad.r, y1: y(v), y2: y(v) }));
    axis.append(svgText(o.pad.l - 8, y(v) + 4, t.label(v), { 'text-anchor': 'end', 'data-value': v }));
  }
  svg.append(grid, axis);
  if (o.title) {
    const mid = o.pad.t + plotH / 2;
    svg.append(
      svgText(12, mid, axisTitle(o.title, t.unit), {
        class: 'axis-title',
        'data-axis': 'y',
        'text-anchor': 'middle',
        transform: `rotate(-90 12 ${mid})`,
      }),
    );
  }
  y.top = t.hi;
  y.unit = t.unit;
  return y;
}

// An x axis under the plot: ticks and labels from min to max (not rounded
// out: the data's range is the axis's), and its title under them.
// o: {pad, width, height, min, max, kind, title, n}. Returns v -> pixel x.
export function xAxis(svg, o) {
  const plotW = o.width - o.pad.l - o.pad.r;
  const min = o.min,
    max = o.max > o.min ? o.max : o.min + 1;
  const x = (v) => o.pad.l + ((v - min) / (max - min)) * plotW;
  const t = ticks(o.kind, min, max, o.n || Math.max(2, Math.floor(plotW / 90)));
  const axis = svgEl('g', { class: 'axis', 'data-axis': 'x', 'data-unit': t.unit.name });
  const base = o.height - o.pad.b;
  axis.append(svgEl('line', { class: 'axis-line', x1: o.pad.l, x2: o.width - o.pad.r, y1: base, y2: base }));
  for (const v of t.values) {
    if (v < min - 1e-9 * Math.abs(max) || v > max + 1e-9 * Math.abs(max)) continue;
    axis.append(
      svgEl('line', { class: 'tick', x1: x(v), x2: x(v), y1: base, y2: base + 4 }),
      svgText(x(v), base + 16, t.label(v), { 'text-anchor': 'middle', 'data-value': v }),
    );
  }
  svg.append(axis);
  if (o.title)
    svg.append(
      svgText(o.pad.l + plotW / 2, o.height - 4, axisTitle(o.title, t.unit), {
        class: 'axis-title',
        'data-axis': 'x',
        'text-anchor': 'middle',
      }),
    );
  x.unit = t.unit;
  return x;
}

// A value in an axis's unit with the unit: for tooltips beside an axis.
export function withUnit(kind, v) {
  if (!isKnown(v)) return '—';
  const u = axisUnit(kind, v);
  const x = v / u.div;
  return `${+x.toPrecision(3)}${u.name ? ` ${u.name}` : ''}`;
}
