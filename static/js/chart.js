// chart.js — the two charts, drawn as SVG by our own code: the step-time
// chart (one stacked bar per step, categories in a fixed order) and a
// horizontal bar chart (top kernels by total time). Bars are focusable and
// carry data attributes (data-step, data-value) so keyboards, screen readers
// and tests can read them. Charts are drawn at their box's pixel width, so
// pages redraw them with resizeObserve when that width changes.

import { h, fmtDur, fmtN } from './format.js';
import { fitName } from './kernel_name.js';
import { niceStep, xAxis, yAxis } from './axes.js';

const SVG = 'http://www.w3.org/2000/svg';

export const CATEGORIES = [
  { key: 'compute', label: 'Compute', color: '--c-compute' },
  { key: 'collective', label: 'Collectives', color: '--c-collective' },
  { key: 'memcpy', label: 'Memcpy', color: '--c-memcpy' },
  { key: 'memset', label: 'Memset', color: '--c-memset' },
  { key: 'autotune', label: 'Autotuning', color: '--c-autotune' },
  { key: 'idle', label: 'Idle (kernel wait, other)', color: '--c-idle' },
  { key: 'compile', label: 'Compile', color: '--c-compile' },
  { key: 'host', label: 'Host wait', color: '--c-host' },
];
const DEVICE_KEYS = ['compute', 'collective', 'memcpy', 'memset', 'autotune'];

function s(tag, attrs, ...kids) {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) if (v !== undefined && v !== null) el.setAttribute(k, v);
  for (const k of kids) if (k) el.append(k);
  return el;
}

export { niceStep };

// The category times of one step, from the steps API. Memcpy may come as one
// field or split by direction.
export function stepParts(st) {
  const memcpy = st.memcpy_us ?? sumKnown([st.memcpy_h2d_us, st.memcpy_d2h_us, st.memcpy_d2d_us, st.memcpy_other_us]);
  return {
    compute: st.compute_us ?? null,
    collective: st.collective_us ?? null,
    memcpy,
    memset: st.memset_us ?? null,
    autotune: st.autotune_us ?? null,
    idle: st.idle_us ?? null,
    compile: st.compile_us ?? null,
    host: st.host_wait_us ?? null,
    kernelWait: st.kernel_wait_us ?? null,
    idleOther: st.idle_other_us ?? null,
  };
}

function sumKnown(vals) {
  const known = vals.filter((v) => v !== null && v !== undefined);
  return known.length ? known.reduce((a, b) => a + b, 0) : null;
}

// How a step's bar is divided, in µs: exactly the API's numbers, which
// partition the step (each instant of a device in one category; the combined
// row is the mean over the devices that ran work). Idle is drawn as its parts:
// host wait (nothing launched; the part host compile spans cover is shown as
// compile) and the rest of idle (kernel wait: launched, not started; other).
export function stepSegments(st) {
  const p = stepParts(st);
  const dur = st.duration_us || 0;
  const seg = { compute: 0, collective: 0, memcpy: 0, memset: 0, autotune: 0, idle: 0, compile: 0, host: 0, other: 0 };
  for (const k of DEVICE_KEYS) seg[k] = p[k] || 0;
  if (p.idle === null) {
    seg.other = Math.max(0, dur - DEVICE_KEYS.reduce((a, k) => a + seg[k], 0));
    return seg;
  }
  const host = Math.min(p.idle, p.host ?? 0);
  seg.compile = Math.min(host, Math.max(0, p.compile || 0));
  seg.host = host - seg.compile;
  seg.idle = p.idle - host;
  return seg;
}

// steps: array from the steps API. Bars stack the categories; when a step has
// no breakdown at all the bar shows its duration as one neutral block.
// maxUs: the top of the scale at least (the compare view draws two charts on one).
export function stepChart(container, steps, { onSelect, height = 260, maxUs = 0 } = {}) {
  const width = Math.max(320, container.clientWidth || 800);
  const pad = { l: 64, r: 12, t: 10, b: 40 };
  const plotW = width - pad.l - pad.r;
  const segs = steps.map(stepSegments);
  const totals = steps.map((st) => st.duration_us || 0);
  const maxV = Math.max(...totals, maxUs, 1e-9);
  const svg = s('svg', {
    viewBox: `0 0 ${width} ${height}`,
    width,
    height,
    role: 'group',
    'aria-label': `Step time chart: ${fmtN(steps.length, 'step')}, stacked by category`,
  });
  const y = yAxis(svg, { pad, width, height, max: maxV, kind: 'time', title: 'Step time' });
  const plotH = height - pad.t - pad.b;
  const axis = svg.querySelector('g.axis');
  svg.append(
    s('text', { class: 'axis-title', 'data-axis': 'x', x: pad.l + plotW / 2, y: height - 4, 'text-anchor': 'middle' }, 'Step'),
  );
  const slot = plotW / steps.length;
  const barW = Math.max(1, Math.min(48, slot * 0.72));
  const colors = Object.fromEntries(CATEGORIES.map((c) => [c.key, cssVar(c.color)]));
  const bars = s('g', { role: 'list', 'aria-label': 'Steps' });
  const labelEvery = Math.ceil(steps.length / Math.max(1, Math.floor(plotW / 44)));
  steps.forEach((st, i) => {
    const x = pad.l + i * slot + (slot - barW) / 2;
    const p = stepParts(st);
    const seg = segs[i];
    const g = s('g', {
      class: 'bar',
      tabindex: '0',
      role: 'listitem',
      'data-step': st.step,
      'data-step-bar': '',
      'data-duration-us': st.duration_us,
      'aria-label':
        `Step ${st.step}: ${fmtDur(st.duration_us)}` +
        CATEGORIES.filter((c) => seg[c.key])
          .map((c) => `, ${c.label} ${fmtDur(seg[c.key])}`)
          .join(''),
    });
    let acc = 0;
    for (const c of [...CATEGORIES, { key: 'other' }]) {
      const v = seg[c.key];
      if (!v) continue;
      g.append(
        s('rect', {
          x,
          width: barW,
          y: y(acc + v),
          height: Math.max(0, y(acc) - y(acc + v)),
          fill: c.key === 'other' ? cssVar('--c-summary') : colors[c.key],
          'data-category': c.key,
          'data-us': v,
        }),
      );
      acc += v;
    }
    // An invisible full-height target makes thin bars easy to hover and click.
    g.append(s('rect', { class: 'hit', x: pad.l + i * slot, width: slot, y: pad.t, height: plotH, fill: 'transparent' }));
    bars.append(g);
    if (i % labelEvery === 0) {
      const t = s('text', { x: x + barW / 2, y: height - pad.b + 16, 'text-anchor': 'middle' });
      t.textContent = st.step;
      axis.append(t);
    }
  });
  svg.append(bars);
  const tip = h('div.tooltip', { hidden: true, role: 'tooltip' });
  const showTip = (g, clientX, clientY) => {
    const st = steps.find((x) => String(x.step) === g.getAttribute('data-step'));
    if (!st) return;
    // The rows state what the bar draws: idle less host wait, host wait less compile.
    const p = stepParts(st);
    const seg = stepSegments(st);
    tip.replaceChildren(
      h(
        'div',
        { style: { fontWeight: 600, marginBottom: '4px' } },
        `Step ${st.step}`,
        st.name && st.name !== String(st.step) ? h('span.muted', null, ` · ${st.name}`) : null,
      ),
      h(
        'table',
        null,
        h(
          'tbody',
          null,
          h('tr', null, h('td', null, 'Duration'), h('td.num', null, fmtDur(st.duration_us))),
          // devices with their own step windows: the combined step is their mean
          st.slowest_device != null
            ? h('tr', null, h('td', null, 'Slowest device'), h('td.num', null, `device ${st.slowest_device}`))
            : null,
          ...CATEGORIES.map((c) =>
            h(
              'tr',
              { dataset: { category: c.key } },
              h('td', null, h('span.sw', { style: { background: colors[c.key] } }), c.label),
              h('td.num', null, p[c.key] === null ? '—' : fmtDur(seg[c.key])),
            ),
          ),
          seg.other > 0
            ? h(
                'tr',
                { dataset: { category: 'other' } },
                h('td', null, h('span.sw', { style: { background: cssVar('--c-summary') } }), 'Not broken down'),
                h('td.num', null, fmtDur(seg.other)),
              )
            : null,
        ),
      ),
      h(
        'div.muted',
        { style: { marginTop: '4px', maxWidth: '260px', whiteSpace: 'normal' } },
        'Each instant counts once (collectives > compute > copies > memset); all devices: the mean' +
          ' of the devices that ran work. Host wait = idle with nothing launched; compile = host' +
          ' compile spans (the part of host wait they cover).',
      ),
      onSelect ? h('div.muted', { style: { marginTop: '2px' } }, 'Click to open this step in the timeline') : null,
    );
    tip.hidden = false;
    const box = container.getBoundingClientRect();
    const tw = tip.offsetWidth;
    let left = clientX - box.left + 14;
    if (left + tw > box.width) left = clientX - box.left - tw - 14;
    tip.style.left = `${Math.max(0, left)}px`;
    tip.style.top = `${Math.max(0, clientY - box.top - 20)}px`;
  };
  bars.addEventListener('mousemove', (e) => {
    const g = e.target.closest('.bar');
    if (g) showTip(g, e.clientX, e.clientY);
  });
  bars.addEventListener('mouseleave', () => {
    tip.hidden = true;
  });
  bars.addEventListener('focusin', (e) => {
    const g = e.target.closest('.bar');
    if (!g) return;
    const r = g.getBoundingClientRect();
    showTip(g, r.left + r.width / 2, r.top + 40);
  });
  bars.addEventListener('focusout', () => {
    tip.hidden = true;
  });
  if (onSelect) {
    const pick = (g) => g && onSelect(Number(g.getAttribute('data-step')));
    bars.addEventListener('click', (e) => pick(e.target.closest('.bar')));
    bars.addEventListener('keydown', (e) => {
      if (e.key === 'Enter' || e.key === ' ') {
        e.preventDefault();
        pick(e.target.closest('.bar'));
      }
    });
    bars.style.cursor = 'pointer';
  }
  container.replaceChildren(svg, tip);
}

// items: [{label, value, title}] drawn as horizontal bars, longest first.
export function barChart(container, items, { format = fmtDur, rowH = 22, onSelect } = {}) {
  const width = Math.max(320, container.clientWidth || 600);
  const labelW = Math.min(360, Math.floor(width * 0.42));
  const valueW = 90;
  // Durations get a time axis under the bars, its unit in its title.
  const timeAxis = format === fmtDur && items.length > 0;
  const height = items.length * rowH + 4 + (timeAxis ? 38 : 0);
  const maxV = Math.max(...items.map((i) => i.value || 0), 1e-9);
  const svg = s('svg', {
    viewBox: `0 0 ${width} ${height}`,
    width,
    height,
    role: 'list',
    'aria-label': 'Top kernels by total time',
  });
  if (timeAxis) {
    const pad = { l: labelW, r: valueW + 8, t: 0, b: 38 };
    xAxis(svg, { pad, width, height, min: 0, max: maxV, kind: 'time', title: 'Total time', n: 4 });
  }
  const color = cssVar('--c-compute');
  items.forEach((it, i) => {
    const yy = i * rowH + 2;
    const w = Math.max(1, ((width - labelW - valueW - 8) * (it.value || 0)) / maxV);
    const g = s('g', {
      class: 'bar',
      role: 'listitem',
      tabindex: onSelect ? '0' : undefined,
      'data-value': it.value,
      'aria-label': `${it.label}: ${format(it.value)}`,
    });
    const title = s('title');
    title.textContent = it.title || it.label;
    const label = s('text', { x: labelW - 8, y: yy + rowH / 2 + 4, 'text-anchor': 'end' });
    label.textContent = fitName(it.label, Math.floor(labelW / 6.6));
    const val = s('text', { x: labelW + w + 6, y: yy + rowH / 2 + 4 });
    val.textContent = format(it.value);
    g.append(title, label, s('rect', { x: labelW, y: yy + 3, width: w, height: rowH - 6, rx: 2, fill: color }), val);
    if (onSelect) {
      g.style.cursor = 'pointer';
      g.addEventListener('click', () => onSelect(it));
      g.addEventListener('keydown', (e) => {
        if (e.key === 'Enter') onSelect(it);
      });
    }
    svg.append(g);
  });
  container.replaceChildren(svg);
}

// Redraws a chart when its box changes width (charts are drawn at the
// box's pixel width so text never scales).
export function resizeObserve(el, fn, signal) {
  let w = el.clientWidth;
  let raf = 0;
  const ro = new ResizeObserver(() => {
    if (el.clientWidth === w) return;
    w = el.clientWidth;
    cancelAnimationFrame(raf);
    raf = requestAnimationFrame(fn);
  });
  ro.observe(el);
  signal.addEventListener('abort', () => ro.disconnect());
}

export function cssVar(name) {
  return getComputedStyle(document.documentElement).getPropertyValue(name).trim() || '#888';
}

export function legend() {
  return h(
    'div.legend',
    { 'aria-hidden': 'true' },
    CATEGORIES.map((c) => h('span', { style: { '--sw': `var(${c.color})` } }, c.label)),
  );
}

// A step's start in the profile's clock (the one the events API uses). The
// steps API may give it absolute or relative to the profile's start; a value
// that fits neither is returned as null rather than drawn in the wrong place.
export function stepStartUs(st, profile) {
  const s = st.start_us,
    t0 = profile.start_us,
    dur = profile.duration_us || 0;
  if (typeof s !== 'number' || typeof t0 !== 'number') return typeof s === 'number' ? s : null;
  const slack = dur * 0.01 + 1;
  if (s >= t0 - slack && s <= t0 + dur + slack) return s;
  if (s >= -slack && s <= dur + slack) return t0 + s;
  return null;
}
