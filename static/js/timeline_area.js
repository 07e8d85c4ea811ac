// timeline_area.js — area selection: Shift+drag over the tracks marks a
// time range on the tracks it crosses; the server sums the slices there by
// name (/aggregate: clipped to the range, self time from nesting) and the
// bottom panel (timeline_area_panel.js, full width and resizable, as
// Perfetto's) shows the table, sortable by every column, with the range's
// duration. Names stay on one line, cut with an ellipsis, whole on hover.
// Clicking a row outlines that name's events in the view.
//
// Invariants: st.area is {s, e, tracks, y0, y1} (times in µs, content y)
// or null, set only here; the panel shows exactly while st.area is set; a
// newer selection aborts the older request, so a slow answer never fills
// the table of another area. Esc, a plain click or the panel's close button
// clears it (timeline_input.js).

import { api } from './api.js';
import { h, fmtDur, fmtCount } from './format.js';
import { createAreaPanel } from './timeline_area_panel.js';

// [key, label, cell text, numeric]
const COLUMNS = [
  ['name', 'Name', (r) => r.name, false],
  ['count', 'Count', (r) => fmtCount(r.count), true],
  ['total_us', 'Total', (r) => fmtDur(r.total_us), true],
  ['self_us', 'Self', (r) => fmtDur(r.self_us), true],
  ['avg_us', 'Avg', (r) => fmtDur(r.avg_us), true],
  ['min_us', 'Min', (r) => fmtDur(r.min_us), true],
  ['max_us', 'Max', (r) => fmtDur(r.max_us), true],
  ['percent', 'Share', (r) => (r.percent === null ? '—' : `${r.percent.toFixed(1)}%`), true],
];
const MAX_ROWS = 500;

export function createArea(tl) {
  const { st } = tl;
  st.area = null;
  st.highlightName = null;
  let drag = null;
  let ctrl = null;
  let answer = null;
  let sort = { key: 'total_us', desc: true };
  const panel = createAreaPanel(tl.dom.details.closest('.tl'), () => {
    clear();
    tl.dom.canvas.focus();
  });

  // Drag from (x, y) canvas points; y in content coordinates.
  function begin(cx, cy) {
    drag = { t: tl.view.tOf(cx), y: cy };
    st.area = { s: drag.t, e: drag.t, tracks: [], y0: cy, y1: cy };
    tl.draw.request();
  }

  function move(cx, cy) {
    if (!drag) return;
    const t = tl.view.tOf(cx);
    st.area = { s: Math.min(drag.t, t), e: Math.max(drag.t, t), tracks: [], y0: Math.min(drag.y, cy), y1: Math.max(drag.y, cy) };
    tl.draw.request();
  }

  function end() {
    if (!drag) return false;
    drag = null;
    const a = st.area;
    a.tracks = tl.draw.tracksBetween(a.y0, a.y1);
    if (!(a.e > a.s) || !a.tracks.length) {
      clear();
      return true;
    }
    tl.details.select(null, { keepArea: true });
    query(a);
    return true;
  }

  // Selects [s, e] on the given tracks (the tests and the benchmark use it too).
  function selectRange(s, e, tracks) {
    const ys = tracks.map((id) => tl.draw.rowOfTrack(id)).filter(Boolean);
    st.area = {
      s,
      e,
      tracks,
      y0: Math.min(...ys.map((r) => r.y)),
      y1: Math.max(...ys.map((r) => r.y + r.h)),
    };
    tl.details.select(null, { keepArea: true });
    return query(st.area);
  }

  async function query(a) {
    if (ctrl) ctrl.abort();
    ctrl = new AbortController();
    panel.show('Summing…', h('div.skeleton', { style: { height: '60px', margin: '8px 12px' } }));
    tl.dom.canvas.dataset.areaState = 'loading';
    try {
      const params = { start_us: a.s, end_us: a.e, tracks: a.tracks.join(',') };
      answer = await api.aggregate(tl.id, params, { signal: ctrl.signal });
    } catch (e) {
      if (e.name === 'AbortError') return;
      panel.show('', h('p.hint', null, `Cannot sum this area: ${e.message}`));
      tl.dom.canvas.dataset.areaState = 'error';
      return;
    }
    render();
    tl.dom.canvas.dataset.areaState = 'done';
  }

  function render() {
    const rows = [...answer.rows];
    const dir = sort.desc ? -1 : 1;
    rows.sort((x, y) => (x[sort.key] < y[sort.key] ? -dir : x[sort.key] > y[sort.key] ? dir : 0));
    const head = h(
      'tr',
      null,
      COLUMNS.map(([key, label, , num]) =>
        h(
          'th',
          {
            scope: 'col',
            class: num ? 'num' : 'name',
            'aria-sort': sort.key === key ? (sort.desc ? 'descending' : 'ascending') : 'none',
          },
          h(
            'button.linklike',
            { type: 'button', dataset: { key }, title: `Sort by ${label.toLowerCase()}`, onclick: () => resort(key) },
            label,
          ),
        ),
      ),
    );
    const body = rows.slice(0, MAX_ROWS).map((r) =>
      h(
        'tr',
        {
          class: r.name === st.highlightName ? 'picked' : null,
          dataset: { name: r.name },
          onclick: () => highlight(r.name),
        },
        COLUMNS.map(([, , fmt, num]) => (num ? h('td.num', null, fmt(r)) : h('td.name', { title: r.name }, fmt(r)))),
      ),
    );
    const names = `${fmtCount(answer.rows.length)} name${answer.rows.length === 1 ? '' : 's'}`;
    const scroll = panel.body.scrollTop;
    panel.show(
      `${fmtDur(answer.duration_us)} on ${answer.tracks} track${answer.tracks === 1 ? '' : 's'} · ${names}`,
      h('table.tl-area-table', null, h('thead', null, head), h('tbody', null, body)),
      rows.length > MAX_ROWS ? h('p.hint', null, `The first ${MAX_ROWS} rows are shown.`) : null,
    );
    panel.body.scrollTop = scroll;
  }

  function resort(key) {
    sort = { key, desc: sort.key === key ? !sort.desc : key !== 'name' };
    render();
  }

  function highlight(name) {
    st.highlightName = st.highlightName === name ? null : name;
    render();
    tl.draw.request();
  }

  function clear() {
    if (ctrl) ctrl.abort();
    drag = null;
    answer = null;
    const had = st.area !== null;
    st.area = null;
    st.highlightName = null;
    panel.hide();
    delete tl.dom.canvas.dataset.areaState;
    if (had) tl.draw.request();
    return had;
  }

  // The selected range over its rows (f: the painters' shared frame).
  function draw(f) {
    const a = st.area;
    if (!a) return;
    const x0 = f.view.xOf(a.s),
      x1 = f.view.xOf(a.e);
    f.ctx.save();
    f.ctx.fillStyle = f.c.step;
    f.ctx.fillRect(x0, a.y0 - f.top, Math.max(1, x1 - x0), a.y1 - a.y0);
    f.ctx.strokeStyle = f.c.accent;
    f.ctx.lineWidth = 1;
    f.ctx.strokeRect(x0 + 0.5, a.y0 - f.top + 0.5, Math.max(1, x1 - x0) - 1, a.y1 - a.y0 - 1);
    f.ctx.restore();
  }

  function stop() {
    if (ctrl) ctrl.abort();
  }

  return { begin, move, end, selectRange, clear, draw, stop, panel, dragging: () => drag !== null };
}
