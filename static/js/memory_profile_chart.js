// memory_profile_chart.js — the TensorBoard view's chart for memory_profile:
// one allocator's bytes in use over the profile (line_chart.js: a y axis in
// MB/GB, a time axis in ms/s from the profile's start, the peak marked),
// from /api/profiles/{id}/memory_profile. It opens on the allocator with
// the highest peak (the answer's peak_allocator), as the Memory page does;
// a selector shows the others.

import { api } from './api.js';
import { h, fmtBytes, UNKNOWN } from './format.js';
import { lineChart } from './line_chart.js';

// The figure, or null when the profile has no allocator events (or the
// answer cannot be had: the table above says what there is).
export async function memoryProfileFigure(profile, signal) {
  const ans = await api.memoryProfile(profile.id, { signal }).catch(() => null);
  const all = (ans && ans.allocators) || [];
  if (!all.length) return null;
  const t0 = profile.start_us || 0;
  let chosen = all.find((a) => a.name === ans.peak_allocator) || all[0];
  const box = h('div.chart.memory-chart');
  const note = h('p.sub');
  const pick = h(
    'select',
    { 'aria-label': 'Allocator', 'data-memory-allocator': '' },
    all.map((a) =>
      h(
        'option',
        { value: a.name, selected: a === chosen },
        `${a.name} · peak ${fmtBytes(a.summary?.peak_bytes_in_use) || UNKNOWN}`,
      ),
    ),
  );
  const fig = h(
    'figure.panel.tool-chart',
    { 'data-chart': 'memory-profile', 'aria-label': 'Memory in use over time' },
    h(
      'figcaption',
      null,
      h('h2', null, 'Memory in use over time'),
      h('p.sub', null, 'Bytes in use by the allocator after each allocation and deallocation; the peak is marked.'),
      h('label.inline.sub.chart-controls', null, 'Allocator ', pick),
    ),
    box,
    note,
  );
  let ctrl = null;
  const draw = () => {
    if (ctrl) ctrl.abort();
    ctrl = new AbortController();
    signal.addEventListener('abort', () => ctrl.abort(), { once: true });
    const pts = chosen.timeline || [];
    const peakBytes = chosen.summary?.peak_bytes_in_use;
    let mark = pts.findIndex((p) => p[1] === peakBytes);
    if (mark < 0 && pts.length) mark = pts.reduce((m, p, i) => (p[1] > pts[m][1] ? i : m), 0);
    fig.dataset.allocator = chosen.name;
    fig.dataset.peakBytes = String(peakBytes ?? 'null');
    note.textContent = `${chosen.name}: ${pts.length} points, peak ${fmtBytes(peakBytes)} · in use from ${
      chosen.in_use_source === 'stat' ? 'the events' : 'a replay of the blocks (relative to the capture’s start)'
    }`;
    lineChart(box, pts, {
      mark,
      xOrigin: t0,
      label: `${chosen.name}: bytes in use over time`,
      signal: ctrl.signal,
    });
  };
  pick.addEventListener('change', () => {
    chosen = all.find((a) => a.name === pick.value) || chosen;
    draw();
  });
  // Drawn once attached, at the box's width.
  requestAnimationFrame(() => {
    if (!signal.aborted) draw();
  });
  return fig;
}
