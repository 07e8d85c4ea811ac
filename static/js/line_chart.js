// line_chart.js — bytes over time (or over program order) as a step line in
// SVG, drawn at the box's pixel width, with a y axis in bytes (MB, GB as
// the peak needs), an x axis in time (ms, s) or in event numbers, and one
// point marked (the peak) with its value beside it. Shared by the memory
// pages and the TensorBoard view's memory_profile chart.

import { fmtBytes } from './format.js';
import { cssVar, resizeObserve } from './chart.js';
import { svgEl, svgText, xAxis, yAxis, withUnit } from './axes.js';

// points: [[x, y], ...] with x increasing; mark: index of the marked point.
// opts: height, xKind ('time': x in µs, or 'count'), xOrigin (subtracted
// from x: the profile's start), xTitle, yTitle, label (aria), signal.
export function lineChart(container, points, opts = {}) {
  const { mark = -1, height = 200, xKind = 'time', xOrigin = 0, signal } = opts;
  const xTitle = opts.xTitle || (xKind === 'time' ? 'Time from the profile’s start' : 'Event');
  const yTitle = opts.yTitle || 'Memory in use';
  const draw = () => {
    const w = Math.max(240, container.clientWidth || 600);
    const svg = svgEl('svg', {
      class: 'line-chart',
      viewBox: `0 0 ${w} ${height}`,
      width: w,
      height,
      role: 'img',
      'aria-label': opts.label || '',
      'data-points': points.length,
    });
    container.replaceChildren(svg);
    if (!points.length) return;
    const pad = { l: 64, r: 14, t: 22, b: 40 };
    const xs = points.map((p) => p[0] - xOrigin);
    const ymax = Math.max(1, ...points.map((p) => p[1]));
    const y = yAxis(svg, { pad, width: w, height, max: ymax, kind: 'bytes', title: yTitle });
    const x = xAxis(svg, { pad, width: w, height, min: xs[0], max: xs[xs.length - 1], kind: xKind, title: xTitle });
    let d = `M${x(xs[0]).toFixed(1)},${y(points[0][1]).toFixed(1)}`;
    for (let i = 1; i < points.length; i++) d += `H${x(xs[i]).toFixed(1)}V${y(points[i][1]).toFixed(1)}`;
    svg.append(svgEl('path', { d, fill: 'none', stroke: cssVar('--c-compute'), 'stroke-width': 1.5, 'data-line': '' }));
    if (mark >= 0 && mark < points.length) {
      const mx = x(xs[mark]),
        my = y(points[mark][1]);
      const t = `peak ${fmtBytes(points[mark][1])} at ${xKind === 'time' ? withUnit('time', xs[mark]) : `#${xs[mark]}`}`;
      const tw = t.length * 6.4;
      const tx = Math.min(Math.max(pad.l, mx - tw / 2), w - pad.r - tw);
      svg.append(
        svgEl('circle', { cx: mx, cy: my, r: 4, fill: cssVar('--danger'), 'data-peak': points[mark][1] }),
        svgText(tx, Math.max(12, my - 8), t, { class: 'peak-label', fill: cssVar('--danger') }),
      );
    }
  };
  draw();
  if (signal) resizeObserve(container, draw, signal);
  return { redraw: draw };
}
