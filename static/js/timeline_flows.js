// timeline_flows.js — the selected event's links (the event answer's
// "flows": its host launch, its device work, the trace's own flows), drawn
// as arrows from the event a link comes from to the one it goes to, each
// labelled with its latency, and listed in the details panel, where a click
// selects the linked event.
//
// Invariants: st.flows belongs to st.selected: set() is called only with
// the answer for the event selected now, clear() whenever the selection
// changes. Drawing reads the state alone (a linked event not loaded yet is
// drawn at its track's first level).

import { h, fmtDur } from './format.js';

const ARROW_HEAD = 7;

export function createFlows(tl) {
  const { st } = tl;
  st.flows = [];

  function set(flows) {
    st.flows = Array.isArray(flows) ? flows : [];
    tl.dom.canvas.dataset.flowsDrawn = '0';
    tl.draw.request();
  }

  function clear() {
    if (st.flows.length) set([]);
  }

  // The link as an event the timeline can select.
  function asHit(f) {
    const loaded = findLoaded(st, f.track, f.ref);
    const ev = loaded || {
      s: f.start_us,
      e: f.start_us + (f.dur_us ?? 0),
      name: f.name,
      ref: f.ref,
      depth: -1,
      summary: false,
      count: 1,
      instant: f.dur_us === null,
    };
    return { ev, track: f.track };
  }

  function follow(f) {
    const hit = asHit(f);
    tl.details.select(hit);
    if (hit.ev.s < st.viewStart || hit.ev.e > st.viewEnd) tl.view.focusEvent(hit.ev);
  }

  // The "Linked events" part of the details panel.
  function list(flows) {
    if (!flows.length) return null;
    const rows = flows.map((f) =>
      h(
        'li',
        null,
        h(
          'button.linklike.tl-flow',
          { type: 'button', dataset: { ref: f.ref, direction: f.direction }, onclick: () => follow(f) },
          `${f.direction === 'in' ? '← from' : '→ to'} ${f.name}`,
        ),
        h('span.hint.tl-flow-latency', null, ` ${latencyWord(f)} ${fmtDur(f.latency_us)}`),
      ),
    );
    return h('div.tl-flows', null, h('h2', { style: { marginTop: '14px' } }, 'Linked events'), h('ul', null, rows));
  }

  // Arrows of one frame (f: the painters' shared frame, see timeline_draw.js).
  function draw(f, rowOfTrack, levelY) {
    if (!st.selected || !st.flows.length) return;
    const sel = endpoint(f, rowOfTrack, levelY, st.selected.track, st.selected.ev);
    let n = 0;
    for (const fl of st.flows) {
      const other = endpoint(f, rowOfTrack, levelY, fl.track, findLoaded(st, fl.track, fl.ref) || flowEvent(fl));
      if (!sel || !other) continue;
      const [from, to] = fl.direction === 'in' ? [other, sel] : [sel, other];
      arrow(f, from, to, `${latencyWord(fl)} ${fmtDur(fl.latency_us)}`);
      n++;
    }
    tl.dom.canvas.dataset.flowsDrawn = String(n);
  }

  return { set, clear, list, draw };
}

function latencyWord(f) {
  return f.via === 'correlation' ? 'launch latency' : 'latency';
}

function flowEvent(fl) {
  return { s: fl.start_us, e: fl.start_us + (fl.dur_us ?? 0), depth: 0 };
}

export function findLoaded(st, track, ref) {
  const list = st.data && st.data.byTrack.get(track);
  return (list && list.find((x) => x.ref === ref)) || null;
}

// Where an arrow meets an event: its start, at the middle of its level.
function endpoint(f, rowOfTrack, levelY, track, ev) {
  const row = rowOfTrack(track);
  if (!row) return null;
  return { x: f.view.xOf(ev.s), y: levelY(row, Math.max(0, ev.depth)) - f.top };
}

function arrow(f, from, to, label) {
  const { ctx, c } = f;
  ctx.save();
  ctx.strokeStyle = c.select;
  ctx.fillStyle = c.select;
  ctx.lineWidth = 1.5;
  const midY = (from.y + to.y) / 2;
  ctx.beginPath();
  ctx.moveTo(from.x, from.y);
  ctx.bezierCurveTo(from.x, midY, to.x, midY, to.x, to.y);
  ctx.stroke();
  const dir = to.y >= from.y ? 1 : -1;
  ctx.beginPath();
  ctx.moveTo(to.x, to.y);
  ctx.lineTo(to.x - ARROW_HEAD / 2, to.y - ARROW_HEAD * dir);
  ctx.lineTo(to.x + ARROW_HEAD / 2, to.y - ARROW_HEAD * dir);
  ctx.closePath();
  ctx.fill();
  ctx.font = '11px system-ui, sans-serif';
  const w = ctx.measureText(label).width + 8;
  const lx = Math.min(Math.max((from.x + to.x) / 2 + 6, 2), f.W - w - 2);
  ctx.fillStyle = c.surface;
  ctx.fillRect(lx, midY - 8, w, 16);
  ctx.fillStyle = c.text;
  ctx.fillText(label, lx + 4, midY);
  ctx.restore();
}
