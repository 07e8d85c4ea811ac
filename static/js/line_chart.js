// line_chart.js — bytes over time (or over program order) as a step line on
// a canvas, drawn at the box's pixel width, with one point marked (the
// peak) and its value written beside it. Shared by the memory pages.

import { h, fmtBytes } from './format.js';
import { cssVar, resizeObserve } from './chart.js';

// points: [[x, y], ...] with x increasing; mark: index of the marked point.
// opts: height, xLabel(x) for the axis ends, label (aria), signal.
export function lineChart(container, points, { mark = -1, height = 180, xLabel = String, label = '', signal } = {}) {
  const canvas = h('canvas.line-chart', { role: 'img', 'aria-label': label });
  container.replaceChildren(canvas);
  const draw = () => {
    const w = Math.max(200, container.clientWidth || 600);
    const dpr = window.devicePixelRatio || 1;
    canvas.width = w * dpr;
    canvas.height = height * dpr;
    canvas.style.width = `${w}px`;
    canvas.style.height = `${height}px`;
    const g = canvas.getContext('2d');
    g.scale(dpr, dpr);
    g.clearRect(0, 0, w, height);
    if (!points.length) return;
    const pad = { l: 8, r: 8, t: 18, b: 18 };
    const x0 = points[0][0],
      x1 = points[points.length - 1][0];
    const ymax = Math.max(1, ...points.map((p) => p[1]));
    const X = (x) => pad.l + (x1 > x0 ? ((x - x0) / (x1 - x0)) * (w - pad.l - pad.r) : 0);
    const Y = (y) => height - pad.b - (y / ymax) * (height - pad.t - pad.b);
    g.strokeStyle = cssVar('--border');
    g.beginPath();
    g.moveTo(pad.l, Y(0));
    g.lineTo(w - pad.r, Y(0));
    g.stroke();
    g.strokeStyle = cssVar('--c-compute');
    g.lineWidth = 1.5;
    g.beginPath();
    points.forEach((p, i) => {
      if (i === 0) g.moveTo(X(p[0]), Y(p[1]));
      else {
        g.lineTo(X(p[0]), Y(points[i - 1][1]));
        g.lineTo(X(p[0]), Y(p[1]));
      }
    });
    g.stroke();
    g.fillStyle = cssVar('--muted');
    g.font = `11px ${cssVar('--sans')}`;
    g.textBaseline = 'alphabetic';
    g.fillText(xLabel(x0), pad.l, height - 4);
    const end = xLabel(x1);
    g.fillText(end, w - pad.r - g.measureText(end).width, height - 4);
    if (mark >= 0 && mark < points.length) {
      const [mx, my] = points[mark];
      g.fillStyle = cssVar('--danger');
      g.beginPath();
      g.arc(X(mx), Y(my), 4, 0, Math.PI * 2);
      g.fill();
      const t = `peak ${fmtBytes(my)}`;
      const tw = g.measureText(t).width;
      g.fillText(t, Math.min(Math.max(pad.l, X(mx) - tw / 2), w - pad.r - tw), 12);
    }
  };
  draw();
  if (signal) resizeObserve(container, draw, signal);
}
