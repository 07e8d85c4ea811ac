// tool_charts.js — the charts above an XProf tool's table, drawn as SVG by
// our own code from the table the tool answered (tool_view.js hands it
// over as {columns, rows, properties}), so the chart and the table always
// show the same numbers:
//   overview_page            the step-time graph, stacked by category
//   roofline_model           ops on log-log axes (FLOP/byte vs GFLOP/s), with
//                            the device's roof only where the answer gives peaks
//   pod_viewer               host × step heat map of a chosen component,
//                            the slowest host of each step outlined
//   input_pipeline_analyzer  per step, input wait stacked on the rest
//   op_profile               the category → module → op tree (op_tree.js)
//   hlo_stats                self time by HLO category
// A tool without a chart here, or an answer without the columns a chart
// needs, draws none. Every mark carries data-mark (and the values it
// shows), is focusable and tells its numbers on hover and focus.

import { h, fmtDur, fmtPct, fmtCount, fmtN, isKnown, nameHue } from './format.js';
import { stepChart, legend, cssVar } from './chart.js';
import { xAxis, yAxis } from './axes.js';
import { opTree } from './op_tree.js';

const SVG = 'http://www.w3.org/2000/svg';

function s(tag, attrs, ...kids) {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) if (v !== undefined && v !== null) el.setAttribute(k, v);
  for (const k of kids) if (k) el.append(k);
  return el;
}

function text(x, y, str, attrs = {}) {
  const t = s('text', { x, y, ...attrs });
  t.textContent = str;
  return t;
}

// 1234567 -> "1.23M": axis ticks and tooltips of rates.
export function fmtSi(v) {
  if (!isKnown(v) || typeof v !== 'number') return '—';
  const a = Math.abs(v);
  const units = [
    [1e15, 'P'],
    [1e12, 'T'],
    [1e9, 'G'],
    [1e6, 'M'],
    [1e3, 'k'],
  ];
  for (const [f, u] of units) if (a >= f) return `${+(v / f).toPrecision(3)}${u}`;
  return a >= 1 || a === 0 ? `${+v.toPrecision(3)}` : v.toPrecision(2);
}

// GFLOP/s and GB/s as FLOP/s and B/s with a prefix: 918000 -> "918 TFLOP/s".
const fmtFlops = (gflops) => `${fmtSi(gflops * 1e9).replace(/([a-zA-Z])$/, ' $1')}FLOP/s`.replace(/(\d)FLOP/, '$1 FLOP');
const fmtBw = (gbps) => `${fmtSi(gbps * 1e9).replace(/([a-zA-Z])$/, ' $1')}B/s`.replace(/(\d)B\//, '$1 B/');

// The table's column `id` as a function of a row (undefined when absent).
function getter(table, id) {
  const i = table.columns.findIndex((c) => c.id === id);
  return i < 0 ? null : (r) => r[i];
}
const num = (v) => (typeof v === 'number' && Number.isFinite(v) ? v : null);

// A figure with a title, a line saying what it shows, the drawing box and
// notes under it; draw(box) fills the box at its width.
function figure(name, title, sub, draw, ...notes) {
  const box = h('div.chart.tool-chart-box');
  const controls = notes.filter((n) => n && n.classList && n.classList.contains('chart-controls'));
  const el = h(
    'figure.panel.tool-chart',
    { 'data-chart': name, 'aria-label': title },
    h('figcaption', null, h('h2', null, title), sub ? h('p.sub', null, sub) : null, ...controls),
    box,
    ...notes.filter((n) => !controls.includes(n)),
  );
  return { el, draw: () => draw(box) };
}

// A tooltip inside box, shown beside the pointer or the focused mark.
function tooltip(box) {
  const tip = h('div.tooltip', { hidden: true, role: 'tooltip' });
  box.append(tip);
  return {
    show(lines, clientX, clientY) {
      tip.replaceChildren(
        h('div', { style: { fontWeight: 600, marginBottom: '4px' } }, lines[0]),
        h(
          'table',
          null,
          h(
            'tbody',
            null,
            lines.slice(1).map(([k, v]) => h('tr', null, h('td', null, k), h('td.num', null, v))),
          ),
        ),
      );
      tip.hidden = false;
      const r = box.getBoundingClientRect();
      let left = clientX - r.left + 14;
      if (left + tip.offsetWidth > r.width) left = clientX - r.left - tip.offsetWidth - 14;
      tip.style.left = `${Math.max(0, left)}px`;
      tip.style.top = `${Math.max(0, clientY - r.top - 20)}px`;
    },
    hide() {
      tip.hidden = true;
    },
  };
}

// Hover and focus on the marks of `layer` show lines(mark) in the tooltip.
function hoverMarks(layer, tip, lines) {
  const at = (e) => e.target.closest('[data-mark]');
  layer.addEventListener('mousemove', (e) => {
    const m = at(e);
    if (m) tip.show(lines(m), e.clientX, e.clientY);
    else tip.hide();
  });
  layer.addEventListener('mouseleave', () => tip.hide());
  layer.addEventListener('focusin', (e) => {
    const m = at(e);
    if (!m) return;
    const r = m.getBoundingClientRect();
    tip.show(lines(m), r.left + r.width / 2, r.top + r.height / 2);
  });
  layer.addEventListener('focusout', () => tip.hide());
}

function svgOf(width, height, label) {
  const svg = s('svg', { viewBox: `0 0 ${width} ${height}`, width, height, role: 'group', 'aria-label': label });
  svg.append(s('title', null, label));
  return svg;
}

function axisTitles(svg, { width, height, pad, x, y }) {
  const mid = pad.t + (height - pad.t - pad.b) / 2;
  if (x) svg.append(text(pad.l + (width - pad.l - pad.r) / 2, height - 4, x, { class: 'axis-title', 'text-anchor': 'middle' }));
  if (y) svg.append(text(12, mid, y, { class: 'axis-title', 'text-anchor': 'middle', transform: `rotate(-90 12 ${mid})` }));
}

// ---- overview_page: the step-time graph ----

function overviewChart(table) {
  const sec = getter(table, 'section');
  const cols = ['step', 'value', 'compute_us', 'collective_us', 'memcpy_us', 'memset_us', 'idle_us', 'host_wait_us'].map((c) =>
    getter(table, c),
  );
  if (!sec || cols.some((g) => !g)) return null;
  const [step, value, compute, collective, memcpy, memset, idle, host] = cols;
  const steps = table.rows
    .filter((r) => sec(r) === 'step time graph' && num(step(r)) !== null)
    .map((r) => ({
      step: step(r),
      duration_us: num(value(r)) ?? 0,
      compute_us: num(compute(r)),
      collective_us: num(collective(r)),
      memcpy_us: num(memcpy(r)),
      memset_us: num(memset(r)),
      idle_us: num(idle(r)),
      host_wait_us: num(host(r)),
    }));
  if (!steps.length) return null;
  return figure(
    'step-time',
    'Step-time graph',
    `${fmtN(steps.length, 'step')}; each bar is a step's time averaged over the devices (hosts aligned by step number), stacked by where it goes. Hover a bar for its numbers.`,
    (box) => {
      stepChart(box, steps, { height: 240 });
      const svg = box.querySelector('svg');
      svg?.prepend(s('title', null, svg.getAttribute('aria-label')));
      box.querySelectorAll('[data-step-bar]').forEach((g) => g.setAttribute('data-mark', ''));
    },
    legend(),
  );
}

// ---- roofline_model ----

const log10 = Math.log10;

function rooflinePeaks(props) {
  const tflops = Number(props.peak_teraflops_per_second);
  const gbps = Number(props.peak_hbm_bw_gigabytes_per_second);
  const peak = tflops > 0 ? tflops * 1000 : null; // GFLOP/s
  const bw = gbps > 0 ? gbps : null; // GB/s = GFLOP/s per FLOP/byte
  return { peak, bw, ridge: peak && bw ? peak / bw : null };
}

function rooflineChart(table, { onPick }) {
  const g = Object.fromEntries(
    [
      'hlo_op_name',
      'category',
      'operational_intensity',
      'measured_flop_rate',
      'total_time',
      'roofline_efficiency_percent',
      'bound_by',
    ].map((c) => [c, getter(table, c)]),
  );
  if (!g.operational_intensity || !g.measured_flop_rate || !g.hlo_op_name) return null;
  const pts = table.rows
    .map((r) => ({
      name: String(g.hlo_op_name(r)),
      category: g.category ? g.category(r) : null,
      x: num(g.operational_intensity(r)),
      y: num(g.measured_flop_rate(r)),
      time: g.total_time ? num(g.total_time(r)) : null,
      eff: g.roofline_efficiency_percent ? num(g.roofline_efficiency_percent(r)) : null,
      bound: g.bound_by ? g.bound_by(r) : null,
    }))
    .filter((p) => p.x > 0 && p.y > 0);
  const left = table.rows.length - pts.length;
  const props = table.properties || {};
  const roof = rooflinePeaks(props);
  const notes = [
    h(
      'p.sub.roof-note',
      { 'data-roof': roof.peak || roof.bw ? (roof.peak && roof.bw ? 'full' : 'partial') : 'none' },
      roof.peak || roof.bw
        ? `Roof from ${props.peaks_source || 'the profile'}: ` +
            [
              roof.bw ? `memory-bound slope at ${fmtBw(roof.bw)}` : 'no memory bandwidth stated (no slope)',
              roof.peak ? `compute-bound ceiling at ${fmtFlops(roof.peak)}` : 'no peak FLOP/s stated (no ceiling)',
              roof.ridge ? `ridge point at ${fmtSi(roof.ridge)} FLOP/byte` : null,
            ]
              .filter(Boolean)
              .join('; ') +
            '.'
        : `No roof drawn: the peak figures are ${props.peaks_source || 'not stated by the profile'}.`,
    ),
    props.measured ? h('p.sub', { 'data-prop': 'measured' }, h('b', null, 'Measured: '), props.measured) : null,
    props.derived ? h('p.sub', { 'data-prop': 'derived' }, h('b', null, 'Derived: '), props.derived) : null,
    left
      ? h(
          'p.sub',
          null,
          `${fmtCount(left)} op${left === 1 ? '' : 's'} with no FLOPs or no time cannot sit on log axes and are not drawn.`,
        )
      : null,
  ];
  if (!pts.length && !roof.peak && !roof.bw) return null;
  return figure(
    'roofline',
    'Roofline',
    `${fmtN(pts.length, 'op')} by operational intensity (FLOP/byte) against achieved GFLOP/s, both on log scales. Hover a point for the op; click it to filter the table to it.`,
    (box) => drawRoofline(box, pts, roof, onPick),
    ...notes,
  );
}

// Log axis bounds: whole decades around every value given.
function decades(values) {
  const v = values.filter((x) => x > 0);
  if (!v.length) return [0, 1];
  const lo = Math.floor(log10(Math.min(...v)));
  const hi = Math.ceil(log10(Math.max(...v)));
  return [lo, hi > lo ? hi : lo + 1];
}

function drawRoofline(box, pts, roof, onPick) {
  const width = Math.max(360, box.clientWidth || 800);
  const height = 360;
  const pad = { l: 72, r: 18, t: 14, b: 46 };
  const plotW = width - pad.l - pad.r,
    plotH = height - pad.t - pad.b;
  // A decade past the ridge, so the compute ceiling shows as a line.
  const [x0, x1] = decades([...pts.map((p) => p.x), roof.ridge, roof.ridge && roof.ridge * 10].filter(Boolean));
  const [y0, y1] = decades([...pts.map((p) => p.y), roof.peak, roof.bw && roof.bw * 10 ** x0].filter(Boolean));
  const X = (v) => pad.l + ((log10(v) - x0) / (x1 - x0)) * plotW;
  const Y = (v) => pad.t + plotH - ((log10(v) - y0) / (y1 - y0)) * plotH;
  const svg = svgOf(
    width,
    height,
    `Roofline: ${fmtN(pts.length, 'op')}, operational intensity against achieved GFLOP/s, log scales`,
  );
  const grid = s('g', { class: 'grid' });
  const axis = s('g', { class: 'axis' });
  for (let k = x0; k <= x1; k++) {
    grid.append(s('line', { x1: X(10 ** k), x2: X(10 ** k), y1: pad.t, y2: pad.t + plotH }));
    axis.append(text(X(10 ** k), pad.t + plotH + 16, fmtSi(10 ** k), { 'text-anchor': 'middle' }));
  }
  for (let k = y0; k <= y1; k++) {
    grid.append(s('line', { x1: pad.l, x2: pad.l + plotW, y1: Y(10 ** k), y2: Y(10 ** k) }));
    axis.append(text(pad.l - 8, Y(10 ** k) + 4, fmtSi(10 ** k), { 'text-anchor': 'end' }));
  }
  svg.append(grid, axis);
  axisTitles(svg, { width, height, pad, x: 'Operational intensity (FLOP/byte, log)', y: 'Achieved GFLOP/s (log)' });
  svg.append(roofLines(roof, { X, Y, x0, x1, y0, y1 }));
  const layer = s('g', { class: 'points', role: 'list', 'aria-label': 'Ops' });
  let picked = null;
  for (const p of pts) {
    const c = s('circle', {
      cx: X(p.x),
      cy: Y(p.y),
      r: 4,
      tabindex: '0',
      role: 'listitem',
      fill: `hsl(${nameHue(String(p.category || ''))} 60% 48%)`,
      'data-mark': '',
      'data-op': p.name,
      'data-x': p.x,
      'data-y': p.y,
      'aria-label': `${p.name}: ${fmtSi(p.x)} FLOP/byte, ${fmtSi(p.y)} GFLOP/s`,
    });
    c.point = p;
    layer.append(c);
  }
  const pick = (m) => {
    if (!m) return;
    if (picked) picked.classList.remove('picked');
    picked = m;
    m.classList.add('picked');
    if (onPick) onPick(m.point.name);
  };
  layer.addEventListener('click', (e) => pick(e.target.closest('[data-mark]')));
  layer.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' || e.key === ' ') {
      e.preventDefault();
      pick(e.target.closest('[data-mark]'));
    }
  });
  svg.append(layer);
  box.replaceChildren(svg);
  const tip = tooltip(box);
  hoverMarks(layer, tip, (m) => {
    const p = m.point;
    return [
      p.name,
      ['Category', p.category ?? '—'],
      ['Intensity', `${fmtSi(p.x)} FLOP/byte`],
      ['Achieved', fmtFlops(p.y)],
      ['Total time', p.time === null ? '—' : fmtDur(p.time)],
      ['Of the roof', p.eff === null ? '—' : fmtPct(p.eff, 1)],
      ['Bound by', p.bound ?? '—'],
    ];
  });
}

// The memory slope and the compute ceiling, each only where its peak is known.
function roofLines(roof, { X, Y, x0, x1, y0, y1 }) {
  const g = s('g', { class: 'roof', 'aria-hidden': 'true' });
  const stroke = cssVar('--danger');
  const xa = 10 ** x0,
    xb = 10 ** x1;
  if (roof.bw) {
    // y = bw * x, clipped to the plot's y range and, with a ceiling, to the ridge.
    let a = Math.max(xa, 10 ** y0 / roof.bw);
    let b = Math.min(roof.ridge ?? xb, xb, 10 ** y1 / roof.bw);
    if (b > a)
      g.append(
        s('line', {
          x1: X(a),
          y1: Y(roof.bw * a),
          x2: X(b),
          y2: Y(roof.bw * b),
          stroke,
          'stroke-width': 2,
          'data-roof': 'memory',
        }),
      );
  }
  if (roof.peak && roof.peak <= 10 ** y1) {
    const a = Math.max(xa, roof.ridge ?? xa);
    g.append(
      s('line', { x1: X(a), y1: Y(roof.peak), x2: X(xb), y2: Y(roof.peak), stroke, 'stroke-width': 2, 'data-roof': 'compute' }),
    );
  }
  if (roof.ridge && roof.ridge >= xa && roof.ridge <= xb) {
    g.append(
      s('circle', { cx: X(roof.ridge), cy: Y(roof.peak), r: 4, fill: stroke, 'data-roof': 'ridge' }),
      text(X(roof.ridge) - 6, Y(roof.peak) - 8, `ridge point ${fmtSi(roof.ridge)} FLOP/byte`, {
        class: 'roof-label',
        'text-anchor': 'end',
      }),
    );
  }
  return g;
}

// ---- pod_viewer: host × step heat map ----

const POD_COMPONENTS = [
  ['step_time_us', 'Step time'],
  ['compute_us', 'Compute'],
  ['collective_us', 'Collectives'],
  ['memcpy_us', 'Memcpy'],
  ['idle_us', 'Idle'],
];

function podChart(table) {
  const step = getter(table, 'step');
  const host = getter(table, 'host');
  if (!step || !host || !getter(table, 'step_time_us')) return null;
  const comps = POD_COMPONENTS.filter(([id]) => getter(table, id));
  const slowest = getter(table, 'slowest');
  const cells = table.rows
    .filter((r) => num(step(r)) !== null && isKnown(host(r)))
    .map((r) => ({
      step: step(r),
      host: String(host(r)),
      slowest: slowest ? slowest(r) === true : false,
      v: Object.fromEntries(comps.map(([id]) => [id, num(getter(table, id)(r))])),
    }));
  if (!cells.length) return null;
  let comp = comps[0][0];
  const select = h(
    'select',
    { 'aria-label': 'Heat map value', 'data-heat-component': '' },
    comps.map(([id, label]) => h('option', { value: id }, label)),
  );
  const hosts = [...new Set(cells.map((c) => c.host))];
  const steps = [...new Set(cells.map((c) => c.step))].sort((a, b) => a - b);
  const fig = figure(
    'pod-heatmap',
    'Step time by host and step',
    `${fmtN(hosts.length, 'host')} × ${fmtN(steps.length, 'step')}; darker is longer. The slowest host of each step is outlined. Hover a cell for its numbers.`,
    (box) => drawHeat(box, cells, hosts, steps, comp, comps),
    h('label.inline.sub.chart-controls', null, 'Colour by ', select),
  );
  select.addEventListener('change', () => {
    comp = select.value;
    fig.draw();
  });
  return fig;
}

function drawHeat(box, cells, hosts, steps, comp, comps) {
  const width = Math.max(360, box.clientWidth || 800);
  const labelW = Math.min(180, Math.max(80, ...hosts.map((x) => x.length * 7 + 12)));
  const pad = { l: labelW + 24, r: 12, t: 8, b: 44 };
  const cellH = 24;
  const height = pad.t + hosts.length * cellH + pad.b;
  const cw = (width - pad.l - pad.r) / steps.length;
  const label = (POD_COMPONENTS.find(([id]) => id === comp) || [comp, comp])[1];
  const vals = cells.map((c) => c.v[comp]).filter((v) => v !== null);
  const lo = vals.length ? Math.min(...vals) : 0,
    hi = vals.length ? Math.max(...vals) : 1;
  const hot = cssVar('--c-host'),
    cold = cssVar('--surface-2');
  const fill = (v) =>
    v === null
      ? 'transparent'
      : `color-mix(in srgb, ${hot} ${hi > lo ? Math.round(12 + (88 * (v - lo)) / (hi - lo)) : 60}%, ${cold})`;
  const svg = svgOf(width, height, `Heat map of ${label} by host (rows) and step (columns)`);
  const axis = s('g', { class: 'axis' });
  hosts.forEach((x, i) => axis.append(text(pad.l - 8, pad.t + i * cellH + cellH / 2 + 4, x, { 'text-anchor': 'end' })));
  const every = Math.ceil(steps.length / Math.max(1, Math.floor((width - pad.l) / 40)));
  steps.forEach((st, j) => {
    if (j % every === 0)
      axis.append(text(pad.l + j * cw + cw / 2, pad.t + hosts.length * cellH + 14, String(st), { 'text-anchor': 'middle' }));
  });
  svg.append(axis);
  axisTitles(svg, { width, height, pad: { ...pad, l: 0 }, x: 'Step', y: 'Host' });
  const layer = s('g', { role: 'list', 'aria-label': 'Cells' });
  const hi_ = new Map(hosts.map((x, i) => [x, i]));
  const si = new Map(steps.map((x, j) => [x, j]));
  for (const c of cells) {
    const v = c.v[comp];
    const r = s('rect', {
      x: pad.l + si.get(c.step) * cw + 0.5,
      y: pad.t + hi_.get(c.host) * cellH + 0.5,
      width: Math.max(1, cw - 1),
      height: cellH - 1,
      class: c.slowest ? 'cell slowest' : 'cell',
      tabindex: '0',
      role: 'listitem',
      style: `fill: ${fill(v)}`,
      'data-mark': '',
      'data-host': c.host,
      'data-step': c.step,
      'data-value': v === null ? 'null' : v,
      'data-slowest': c.slowest ? '' : undefined,
      'aria-label': `${c.host}, step ${c.step}: ${label} ${v === null ? 'unknown' : fmtDur(v)}${c.slowest ? ', slowest host' : ''}`,
    });
    r.cell = c;
    layer.append(r);
  }
  svg.append(layer);
  box.replaceChildren(
    svg,
    h(
      'div.heat-scale.sub',
      null,
      `${label}: `,
      h('span', null, fmtDur(lo)),
      h('i', { style: { background: `linear-gradient(90deg, ${fill(lo)}, ${fill(hi)})` } }),
      h('span', null, fmtDur(hi)),
    ),
  );
  const tip = tooltip(box);
  hoverMarks(layer, tip, (m) => {
    const c = m.cell;
    return [
      `${c.host} · step ${c.step}${c.slowest ? ' · slowest host' : ''}`,
      ...comps.map(([id, l]) => [l, c.v[id] === null ? '—' : fmtDur(c.v[id])]),
    ];
  });
}

// ---- input_pipeline_analyzer: input wait per step ----

function inputChart(table) {
  const step = getter(table, 'stepnum');
  const total = getter(table, 'step_time_us');
  const input = getter(table, 'input_time_us');
  if (!step || !total || !input) return null;
  const bars = table.rows
    .filter((r) => num(step(r)) !== null && num(total(r)) !== null)
    .map((r) => {
      const t = num(total(r)),
        w = num(input(r));
      return { step: step(r), total: t, input: w, rest: w === null ? null : Math.max(0, t - w) };
    });
  if (!bars.length) return null;
  const colors = { input: '--c-host', rest: '--c-compute' };
  return figure(
    'input-bars',
    'Input wait per step',
    `${fmtN(bars.length, 'step')}: the time the device waits for input, stacked under the rest of the step (compute and everything else). Hover a bar for its numbers.`,
    (box) => drawInputBars(box, bars, colors),
    h(
      'div.legend',
      { 'aria-hidden': 'true' },
      h('span', { style: { '--sw': `var(${colors.input})` } }, 'Waiting for input'),
      h('span', { style: { '--sw': `var(${colors.rest})` } }, 'Rest of the step'),
    ),
  );
}

function drawInputBars(box, bars, colors) {
  const width = Math.max(360, box.clientWidth || 800);
  const height = 240;
  const pad = { l: 72, r: 12, t: 10, b: 44 };
  const plotW = width - pad.l - pad.r,
    plotH = height - pad.t - pad.b;
  const svg = svgOf(width, height, `Input wait per step: ${fmtN(bars.length, 'step')}`);
  const y = yAxis(svg, { pad, width, height, max: Math.max(...bars.map((b) => b.total), 1e-9), kind: 'time', title: 'Time' });
  axisTitles(svg, { width, height, pad, x: 'Step' });
  const slot = plotW / bars.length;
  const bw = Math.max(1, Math.min(48, slot * 0.72));
  const every = Math.ceil(bars.length / Math.max(1, Math.floor(plotW / 44)));
  const layer = s('g', { role: 'list', 'aria-label': 'Steps' });
  const axis = s('g', { class: 'axis' });
  bars.forEach((b, i) => {
    const x = pad.l + i * slot + (slot - bw) / 2;
    const g = s('g', {
      class: 'bar',
      tabindex: '0',
      role: 'listitem',
      'data-mark': '',
      'data-step': b.step,
      'aria-label': `Step ${b.step}: ${fmtDur(b.total)}, waiting for input ${b.input === null ? 'unknown' : fmtDur(b.input)}`,
    });
    const parts =
      b.input === null
        ? [['rest', b.total, '--c-summary']]
        : [
            ['input', b.input],
            ['rest', b.rest],
          ];
    let acc = 0;
    for (const [k, v, c] of parts) {
      g.append(
        s('rect', {
          x,
          width: bw,
          y: y(acc + v),
          height: Math.max(0, y(acc) - y(acc + v)),
          fill: cssVar(c || colors[k]),
          'data-part': k,
        }),
      );
      acc += v;
    }
    g.append(s('rect', { class: 'hit', x: pad.l + i * slot, width: slot, y: pad.t, height: plotH, fill: 'transparent' }));
    g.bar = b;
    layer.append(g);
    if (i % every === 0) axis.append(text(x + bw / 2, height - pad.b + 16, String(b.step), { 'text-anchor': 'middle' }));
  });
  svg.append(axis, layer);
  box.replaceChildren(svg);
  const tip = tooltip(box);
  hoverMarks(layer, tip, (m) => {
    const b = m.bar;
    return [
      `Step ${b.step}`,
      ['Step time', fmtDur(b.total)],
      ['Waiting for input', b.input === null ? '—' : fmtDur(b.input)],
      ['Share', b.input === null || !b.total ? '—' : fmtPct((100 * b.input) / b.total, 1)],
    ];
  });
}

// ---- op_profile, hlo_stats: self time by category ----

function categoryChart(tag, table) {
  const cat = getter(table, tag === 'op_profile' ? 'name' : 'category');
  const self = getter(table, 'total_self_time');
  const level = getter(table, 'level');
  if (!cat || !self || (tag === 'op_profile' && !level)) return null;
  const sums = new Map();
  for (const r of table.rows) {
    if (tag === 'op_profile' && level(r) !== 1) continue; // level 1 rows are the categories
    const v = num(self(r));
    if (v === null) continue;
    const k = isKnown(cat(r)) ? String(cat(r)) : '(no category)';
    sums.set(k, (sums.get(k) || 0) + v);
  }
  const items = [...sums].map(([label, value]) => ({ label, value })).sort((a, b) => b.value - a.value);
  if (!items.length) return null;
  const total = items.reduce((a, b) => a + b.value, 0);
  return figure(
    'categories',
    'Self time by HLO category',
    `${fmtCount(items.length)} categories, longest first; each bar is the summed self time of its ops, with its share of all ops' self time.`,
    (box) => drawCategoryBars(box, items, total),
  );
}

function drawCategoryBars(box, items, total) {
  const width = Math.max(360, box.clientWidth || 800);
  const rowH = 24;
  const labelW = Math.min(240, Math.floor(width * 0.3));
  const valueW = 150;
  const pad = { t: 4, b: 40 };
  const height = pad.t + items.length * rowH + pad.b;
  const plotW = width - labelW - valueW;
  const max = Math.max(...items.map((i) => i.value), 1e-9);
  const svg = svgOf(width, height, `Self time by HLO category: ${items.length} categories`);
  const layer = s('g', { role: 'list', 'aria-label': 'Categories' });
  items.forEach((it, i) => {
    const y = pad.t + i * rowH;
    const w = Math.max(1, (plotW * it.value) / max);
    const share = total > 0 ? (100 * it.value) / total : 0;
    const g = s('g', {
      class: 'bar',
      tabindex: '0',
      role: 'listitem',
      'data-mark': '',
      'data-category': it.label,
      'data-value': it.value,
      'aria-label': `${it.label}: ${fmtDur(it.value)}, ${fmtPct(share, 1)}`,
    });
    g.append(
      text(labelW - 8, y + rowH / 2 + 4, it.label.length > 34 ? `${it.label.slice(0, 33)}…` : it.label, { 'text-anchor': 'end' }),
      s('rect', { x: labelW, y: y + 3, width: w, height: rowH - 6, rx: 2, fill: `hsl(${nameHue(it.label)} 60% 48%)` }),
      text(labelW + w + 6, y + rowH / 2 + 4, `${fmtDur(it.value)} · ${fmtPct(share, 1)}`),
    );
    g.item = { ...it, share };
    layer.append(g);
  });
  svg.append(layer);
  xAxis(svg, {
    pad: { l: labelW, r: valueW, t: pad.t, b: pad.b },
    width,
    height,
    min: 0,
    max,
    kind: 'time',
    title: 'Total self time',
    n: 4,
  });
  box.replaceChildren(svg);
  const tip = tooltip(box);
  hoverMarks(layer, tip, (m) => [m.item.label, ['Self time', fmtDur(m.item.value)], ['Share', fmtPct(m.item.share, 2)]]);
}

// ---- entry ----

// The charts of `tag` for `table`, or null when it has none: {el, draw}; the
// caller attaches el, then calls draw() (and again when its width changes).
// opts.onPick(name): a roofline point was clicked.
export function toolCharts(tag, table, opts = {}) {
  const tag0 = String(tag || '').replace(/@$/, '');
  switch (tag0) {
    case 'overview_page':
      return overviewChart(table);
    case 'roofline_model':
      return rooflineChart(table, opts);
    case 'pod_viewer':
      return podChart(table);
    case 'input_pipeline_analyzer':
      return inputChart(table);
    case 'op_profile':
      return opTree(table) || categoryChart(tag0, table);
    case 'hlo_stats':
      return categoryChart(tag0, table);
    default:
      return null;
  }
}
