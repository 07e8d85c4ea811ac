// compare.js — two profiles side by side (#/compare/<a>/<b>): did B get
// faster than A, and what moved. Summary cards, both step charts on one
// time scale, the per-step breakdown, and the kernel / XLA-op / memcpy /
// memset tables joined by name, in the server's order (largest absolute
// change in total time first), filterable, with links into each profile's
// timeline. #/compare/<a> asks which profile to compare with.
//
// Every number comes from /api/compare (and /steps for the charts); a delta
// the server does not know is shown as unknown, never as 0. When both sides
// have steps, times are shown per step (a 6-step capture against a 5-step
// one of the same work reads ~0, not −17%); otherwise as totals, with the
// server's note. The pickers offer only profiles that can be compared:
// read, not empty, with device work; the rest are greyed out with why.

import { api, getJSON, query } from './api.js';
import { h, fmtDur, fmtCount, fmtPct, fmtFrac, isKnown, UNKNOWN } from './format.js';
import { stepChart, resizeObserve, legend } from './chart.js';
import { stateView, showAllButton } from './states.js';
import { timelineHash, longestOccurrence, hashForMatch } from './timeline_link.js';
import { shortName, shortNames, nameNodes } from './kernel_name.js';

const PAGE_ROWS = 200;
const TABLES = [
  ['kernels', 'GPU kernels'],
  ['ops', 'XLA ops'],
  ['memcpy', 'Memcpy'],
  ['memset', 'Memset'],
];
const PARTS = [
  ['compute_us', 'Compute'],
  ['collective_us', 'Collectives'],
  ['memcpy_us', 'Memcpy'],
  ['memset_us', 'Memset'],
  ['idle_us', 'Idle'],
  ['host_wait_us', 'Idle: host wait'],
  ['kernel_wait_us', 'Idle: kernel wait'],
  ['idle_other_us', 'Idle: other'],
];

function label(p) {
  const parts = [p.run, p.host].filter((x) => x && x !== '.');
  return parts.length ? parts.join(' / ') : (p.path || p.id || '').split('/').pop();
}

// Why a profile cannot be compared, or '' when it can (the server refuses
// the same sides with a 4xx; kernel_count counts kernels and XLA ops).
export function whyNotComparable(p) {
  if (p.status !== 'ok') return p.status === 'pending' ? 'not indexed yet' : 'could not be read';
  if (p.events === 0) return 'empty';
  if (p.kernel_count === 0) return 'no device work';
  return '';
}

function compareHash(a, b) {
  return `#/compare/${encodeURIComponent(a)}${b ? '/' + encodeURIComponent(b) : ''}`;
}

// "+1.2 ms", "−300 µs", "0".
function fmtDelta(us) {
  if (!isKnown(us)) return UNKNOWN;
  return (us > 0 ? '+' : us < 0 ? '−' : '') + fmtDur(Math.abs(us));
}

function fmtRel(d) {
  if (!d || !isKnown(d.relative)) return UNKNOWN;
  const p = 100 * d.relative;
  return (p > 0 ? '+' : p < 0 ? '−' : '') + fmtPct(Math.abs(p), Math.abs(p) < 10 ? 2 : 1);
}

function dirClass(d) {
  return d && d.direction ? `.${d.direction}` : '.unknown';
}

export function mount(view, { parts, notify }) {
  const life = new AbortController();
  const [a, b] = parts;
  const pickA = h('select', { 'aria-label': 'Profile A (before)', id: 'cmp-a' });
  const pickB = h('select', { 'aria-label': 'Profile B (after)', id: 'cmp-b' });
  const go = () => {
    if (pickA.value && pickB.value) location.hash = compareHash(pickA.value, pickB.value);
  };
  pickA.onchange = go;
  pickB.onchange = go;
  const swap = h('button.btn', { type: 'button', onclick: () => b && (location.hash = compareHash(b, a)) }, 'Swap A ↔ B');
  const body = h('div.compare-body', null, stateView('Loading comparison…', '', 'loading'));
  view.replaceChildren(
    h(
      'div.compare-layout',
      null,
      h(
        'div.toolbar',
        null,
        h('div.grow', null, h('h1', null, 'Compare profiles')),
        h('label.inline', null, 'A (before)', pickA),
        h('label.inline', null, 'B (after)', pickB),
        swap,
      ),
      body,
    ),
  );
  fillPickers(pickA, pickB, a, b, life.signal);
  if (!b) {
    swap.disabled = true;
    body.replaceChildren(stateView('Compare with…', 'Pick profile B, the one to compare with A.', 'empty'));
  } else {
    load(body, a, b, life.signal, notify);
  }
  return () => life.abort();
}

async function fillPickers(pickA, pickB, a, b, signal) {
  let list = [];
  try {
    list = (await api.profiles({ signal })).profiles || [];
  } catch (e) {
    if (e.name === 'AbortError') return;
  }
  for (const [sel, want] of [
    [pickA, a],
    [pickB, b],
  ]) {
    const opts = list.map((p) => {
      const why = whyNotComparable(p);
      const text = `${label(p)} · ${p.format || ''} · ${p.id.slice(0, 6)}${why ? ` (${why})` : ''}`;
      // the picker cuts a long name: the whole path (and why not) on hover
      return h('option', { value: p.id, disabled: !!why && p.id !== want, title: why ? `${p.path} (${why})` : p.path }, text);
    });
    if (!want) opts.unshift(h('option', { value: '' }, 'Choose a profile…'));
    else if (!list.some((p) => p.id === want)) opts.unshift(h('option', { value: want }, want));
    sel.replaceChildren(...opts);
    sel.value = want || '';
    sel.title = sel.selectedOptions[0]?.title || '';
  }
}

async function load(body, a, b, signal, notify) {
  let cmp, stepsA, stepsB;
  try {
    [cmp, stepsA, stepsB] = await Promise.all([
      getJSON(`/api/compare${query({ a, b })}`, { signal }),
      api.steps(a, { signal }).catch(() => null),
      api.steps(b, { signal }).catch(() => null),
    ]);
  } catch (e) {
    if (e.name === 'AbortError') return;
    body.replaceChildren(stateView('Cannot compare these profiles', e.message, 'error'));
    return;
  }
  const ids = { a: cmp.a.id, b: cmp.b.id };
  const charts = h('section.panel', { 'aria-labelledby': 'cmp-steps-h' }, h('h2', { id: 'cmp-steps-h' }, 'Step time'));
  const per = cmp.per_step || {};
  const note = per.normalised ? null : h('p.note.cmp-note', { role: 'note' }, per.note || '');
  body.replaceChildren(...[note, cards(cmp), charts, breakdown(cmp), diffTables(cmp, ids, signal, notify)].filter(Boolean));
  drawCharts(charts, cmp, stepsA, stepsB, signal);
}

function card(title, d, fmt = fmtDur, fmtD = fmtDelta) {
  return h(
    'div.card.cmp-card',
    { dataset: { card: title } },
    h('div.label', null, title),
    h('div.value', null, `${fmt(d && d.a)} → ${fmt(d && d.b)}`),
    h(
      `div.sub.delta${dirClass(d)}`,
      { dataset: { direction: (d && d.direction) || 'unknown' } },
      d && isKnown(d.delta) ? `${fmtD(d.delta)} (${fmtRel(d)}) ${d.direction}` : 'unknown',
    ),
  );
}

function cards(cmp) {
  const pct = (v) => fmtFrac(v);
  const pts = (v) => (v > 0 ? '+' : v < 0 ? '−' : '') + Math.abs(100 * v).toFixed(1) + ' pt';
  const k = cmp.kernels || {};
  const names = h(
    'div.card.cmp-card',
    { dataset: { card: 'Kernel names' } },
    h('div.label', null, 'Kernel names'),
    h('div.value', null, `${fmtCount(k.names && k.names.a)} → ${fmtCount(k.names && k.names.b)}`),
    h('div.sub', null, `${fmtCount(k.new)} new · ${fmtCount(k.vanished)} vanished`),
  );
  const st = cmp.step_time || {};
  return h(
    'div.cards',
    null,
    card('Step time · median', st.median_us),
    card('Step time · mean', st.mean_us),
    (cmp.per_step || {}).normalised
      ? card('Device time per step', cmp.device_time_per_step_us)
      : card('Device time', cmp.device_time_us),
    card('Device busy', cmp.device_busy_fraction, pct, pts),
    names,
  );
}

// Both charts on the scale of the longer step, so bars compare by height.
function drawCharts(panel, cmp, stepsA, stepsB, signal) {
  const sides = [
    ['a', 'A', stepsA],
    ['b', 'B', stepsB],
  ];
  const all = [...((stepsA && stepsA.steps) || []), ...((stepsB && stepsB.steps) || [])];
  const maxUs = Math.max(0, ...all.map((s) => s.duration_us || 0));
  const grid = h('div.compare-charts');
  panel.append(grid, legend());
  for (const [key, name, res] of sides) {
    const p = cmp[key];
    const box = h('div.chart', { dataset: { side: key } });
    const head = h(
      'h3',
      null,
      `${name}: `,
      h('a', { href: `#/p/${encodeURIComponent(p.id)}/overview`, title: p.path }, label(p)),
      ' · ',
      h('a', { href: timelineHash(p.id) }, 'timeline'),
    );
    grid.append(h('div.compare-side', null, head, box));
    const steps = (res && res.steps) || [];
    if (!steps.length) {
      box.replaceChildren(stateView('No steps', 'This profile has no step markers.', 'empty'));
      continue;
    }
    const draw = () =>
      stepChart(box, steps, {
        maxUs,
        height: 220,
        onSelect: (n) => {
          location.hash = timelineHash(p.id, { step: n });
        },
      });
    draw();
    resizeObserve(box, draw, signal);
  }
}

function breakdown(cmp) {
  const rows = PARTS.map(([k, name]) => {
    const d = (cmp.breakdown || {})[k];
    return h(
      'tr',
      { dataset: { part: k } },
      h('th', { scope: 'row' }, name),
      h('td.num', null, fmtDur(d && d.a)),
      h('td.num', null, fmtDur(d && d.b)),
      h(`td.num.delta${dirClass(d)}`, null, fmtDelta(d && d.delta)),
      h(`td.num${dirClass(d)}`, null, fmtRel(d)),
    );
  });
  return h(
    'section.panel',
    { 'aria-labelledby': 'cmp-br-h' },
    h('h2', { id: 'cmp-br-h' }, 'Per step, by category (mean)'),
    h(
      'table.data.compare-breakdown',
      { 'aria-label': 'Step breakdown, A against B' },
      h(
        'thead',
        null,
        h(
          'tr',
          null,
          ['Category', 'A', 'B', 'B − A', 'Change'].map((t, i) => h(i ? 'th.num' : 'th', { scope: 'col' }, t)),
        ),
      ),
      h('tbody', null, rows),
    ),
  );
}

function diffTables(cmp, ids, signal, notify) {
  const present = TABLES.filter(([k]) => cmp[k] && cmp[k].rows && cmp[k].rows.length);
  const panel = h('section.panel', { 'aria-labelledby': 'cmp-diff-h' });
  if (!present.length) {
    panel.append(h('h2', { id: 'cmp-diff-h' }, 'Kernels'), stateView('No kernels or ops', 'Neither profile has any.', 'empty'));
    return panel;
  }
  let table = present[0][0];
  let limit = PAGE_ROWS;
  const perStep = !!(cmp.per_step && cmp.per_step.normalised);
  const kindSel = h(
    'select',
    {
      'aria-label': 'Which table',
      onchange: () => {
        table = kindSel.value;
        limit = PAGE_ROWS;
        render();
      },
    },
    present.map(([k, t]) => h('option', { value: k }, t)),
  );
  const filter = h('input', {
    type: 'search',
    placeholder: 'Filter by name…',
    'aria-label': 'Filter the compared names',
    oninput: () => {
      limit = PAGE_ROWS;
      render();
    },
  });
  const summary = h('span.sub', { 'aria-live': 'polite' });
  const box = h('div.table-wrap');
  const more = h('div');
  panel.append(
    h(
      'div.toolbar',
      null,
      h('div.grow', null, h('h2', { id: 'cmp-diff-h' }, 'What moved'), summary),
      h('label.inline', null, 'Show', kindSel),
      filter,
    ),
    box,
    more,
  );

  function render() {
    const t = cmp[table];
    const q = filter.value.trim().toLowerCase();
    const rows = q ? t.rows.filter((r) => r.name.toLowerCase().includes(q)) : t.rows;
    const tot = perStep ? t.per_step_us : t.total_us;
    summary.textContent =
      `${perStep ? 'per step' : 'total'} ${fmtDur(tot.a)} → ${fmtDur(tot.b)} (${fmtDelta(tot.delta)}) · ` +
      `${fmtCount(t.new)} new · ${fmtCount(t.vanished)} vanished` +
      (q ? ` · ${fmtCount(rows.length)} match the filter` : '');
    box.replaceChildren(diffTable(rows.slice(0, limit), ids, perStep, signal, notify));
    more.replaceChildren();
    if (rows.length > limit)
      more.append(
        showAllButton(rows.length, limit, () => {
          limit = rows.length;
          render();
        }),
      );
  }
  render();
  return panel;
}

// Columns (of diffHead) folded into the name cell's detail line at 1024 px.
const FOLDED = [2, 3, 8, 9, 10];

// The time columns are per step when both sides have steps, else totals.
function diffHead(perStep) {
  const t = perStep ? 'Per step' : 'Total';
  return [
    'Name',
    'Status',
    'Calls A',
    'Calls B',
    `${t} A`,
    `${t} B`,
    `Δ ${t.toLowerCase()}`,
    'Change',
    'Avg A',
    'Avg B',
    'Δ avg',
    'Timeline',
  ];
}

function diffTable(rows, ids, perStep, signal, notify) {
  const tbody = h('tbody');
  const key = perStep ? 'per_step_delta' : 'total_delta';
  const shorts = shortNames(rows.map((r) => r.name).filter((n) => typeof n === 'string'));
  for (const r of rows) {
    const t = perStep ? r.per_step_us : r.total_us,
      avg = r.avg_us;
    tbody.append(
      h(
        `tr.${r.status}`,
        { dataset: { name: r.name, status: r.status, direction: t.direction || 'unknown' } },
        h(
          'td.name.mono',
          { title: r.name },
          typeof r.name === 'string' ? nameNodes(shorts.get(r.name)) : r.name,
          // the folded columns, read here below 1300 px (app.css)
          h(
            'div.row-detail',
            null,
            `calls ${fmtCount(r.count.a)} → ${fmtCount(r.count.b)} · avg ${fmtDur(avg.a)} → ${fmtDur(avg.b)} (${fmtDelta(avg.delta)})`,
          ),
        ),
        h('td', null, r.status),
        h('td.num.secondary', null, fmtCount(r.count.a)),
        h('td.num.secondary', null, fmtCount(r.count.b)),
        h('td.num', null, fmtDur(t.a)),
        h('td.num', null, fmtDur(t.b)),
        h(`td.num.delta${dirClass(t)}`, { dataset: { key, value: String(t.delta) } }, fmtDelta(t.delta)),
        h(`td.num${dirClass(t)}`, null, fmtRel(t)),
        h('td.num.secondary', null, fmtDur(avg.a)),
        h('td.num.secondary', null, fmtDur(avg.b)),
        h(`td.num.secondary${dirClass(avg)}`, null, fmtDelta(avg.delta)),
        h(
          'td.go',
          null,
          r.count.a ? timelineLink(ids.a, r.name, 'A', signal, notify) : null,
          r.count.a && r.count.b ? ' ' : null,
          r.count.b ? timelineLink(ids.b, r.name, 'B', signal, notify) : null,
        ),
      ),
    );
  }
  return h(
    'table.data.compare-diff',
    { 'aria-label': `Compared names, largest change in ${perStep ? 'time per step' : 'total time'} first` },
    h(
      'thead',
      null,
      h(
        'tr',
        null,
        diffHead(perStep).map((t, i) =>
          h(`${i > 1 && i < 11 ? 'th.num' : 'th'}${FOLDED.includes(i) ? '.secondary' : ''}`, { scope: 'col' }, t),
        ),
      ),
    ),
    tbody,
  );
}

// The profile's timeline at the longest occurrence of `name`, selected.
function timelineLink(id, name, side, signal, notify) {
  const go = async (e) => {
    e.preventDefault();
    let m = null;
    try {
      m = await longestOccurrence(id, name, { signal });
    } catch (err) {
      if (err.name === 'AbortError') return;
    }
    if (signal.aborted) return;
    if (!m && notify) notify(`No occurrence of ${shortName(name)} found in ${side}'s timeline.`);
    location.hash = m ? hashForMatch(id, m) : timelineHash(id);
  };
  return h(
    'a.tl-link',
    {
      href: timelineHash(id),
      dataset: { side },
      title: `Show the longest ${shortName(name)} in ${side}'s timeline`,
      onclick: go,
    },
    side,
  );
}
