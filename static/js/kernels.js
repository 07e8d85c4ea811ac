// kernels.js — the kernel summary of one profile: a sortable, filterable
// table with every column of /api/profiles/{id}/kernels, a device selector,
// CSV download and a top-N chart of total time. Unknown values (null) show
// as "—", never 0. Each numeric cell keeps the API's raw value in
// data-value, so what is shown can be checked against the API. The device
// work of compilation inside the capture (XLA autotuning) is left out unless
// "Include compile-time kernels" is checked; the summary says how much
// there is either way, and with it checked those rows are marked.

import { api } from './api.js';
import {
  h,
  fmtUs,
  fmtPct,
  fmtCount,
  fmtN,
  fmtDims,
  fmtDur,
  deviceLabel,
  deviceId,
  isKnown,
  UNKNOWN,
  UNKNOWN_TITLE,
} from './format.js';
import { barChart, resizeObserve } from './chart.js';
import { stateView, showAllButton } from './states.js';
import { timelineHash, longestOccurrence, hashForMatch } from './timeline_link.js';
import { shortName, shortNames, nameNodes } from './kernel_name.js';

// "secondary" columns fold into the name cell's detail line below 1300 px,
// "tertiary" ones below 1700 px (app.css), so the table fits its box at
// 1024 px and up without scrolling sideways; `short` is how the detail
// line names the value.
const COLUMNS = [
  { key: 'name', label: 'Name', type: 'text' },
  { key: 'count', label: 'Count', type: 'int' },
  { key: 'total_us', label: 'Total (µs)', type: 'us' },
  { key: 'avg_us', label: 'Avg (µs)', type: 'us' },
  { key: 'median_us', label: 'Median (µs)', type: 'us', cls: 'secondary', short: 'median' },
  { key: 'min_us', label: 'Min (µs)', type: 'us', cls: 'secondary', short: 'min' },
  { key: 'max_us', label: 'Max (µs)', type: 'us', cls: 'secondary', short: 'max' },
  { key: 'percent', label: 'Percent', type: 'pct' },
  { key: 'grid', label: 'Grid', type: 'dims', cls: 'tertiary', short: 'grid' },
  { key: 'block', label: 'Block', type: 'dims', cls: 'tertiary', short: 'block' },
  { key: 'registers_per_thread', label: 'Registers', type: 'int', cls: 'secondary', short: 'registers' },
  { key: 'occupancy_pct', label: 'Occupancy', type: 'pct', cls: 'secondary', short: 'occupancy' },
  { key: 'op', label: 'Op', type: 'text', cls: 'tertiary', short: 'op' },
];
const PAGE_ROWS = 500;
const TOP_N = 10;

// Columns left empty when one name ran with several launch shapes.
const SHAPE_KEYS = new Set(['grid', 'block', 'registers_per_thread']);

/* What a cell says: the value, "N shapes" where the API left a launch-shape
 * column empty because the kernel ran with several, or "—" when unknown. */
export function kernelCellText(col, k) {
  const v = k[col.key];
  if (!isKnown(v) && SHAPE_KEYS.has(col.key) && k.shapes > 1) return `${fmtCount(k.shapes)} shapes`;
  return cellText(col, v);
}

export function cellText(col, v) {
  if (!isKnown(v)) return UNKNOWN;
  switch (col.type) {
    case 'us':
      return fmtUs(v);
    case 'int':
      return fmtCount(v);
    case 'pct':
      return fmtPct(v, 2);
    case 'dims':
      return fmtDims(v);
    default:
      return String(v);
  }
}

export function mount(view, { id, profile, params, notify }) {
  let ctrl = null;
  let kernels = null;
  let shorts = new Map(); // full name -> the name the table and chart show
  let kernelTime = null;
  let compileInfo = null;
  let sortKey = params.get('sort') || 'total_us';
  let sortDesc = true;
  let limit = PAGE_ROWS;
  const devices = Array.isArray(profile.devices) ? profile.devices : [];
  let devicesListed = false;

  // The device list comes from the kernels answer ("devices": ordinals with
  // rows); names from the profile's devices when they line up.
  const deviceSel = h('select', { 'aria-label': 'Device', onchange: () => load() }, h('option', { value: '' }, 'All devices'));
  const kindSel = h(
    'select',
    {
      'aria-label': 'What to summarize',
      onchange: () => {
        deviceSel.value = '';
        devicesListed = false;
        load();
      },
    },
    // No "Default" entry: it named the very kind of another entry ("GPU
    // kernels" twice). The server picks the kind (kernels, else XLA ops
    // on TPU) and its first answer selects that entry.
    [
      ['kernel', 'GPU kernels'],
      ['xla_op', 'XLA ops'],
      ['memcpy', 'Memcpy'],
      ['memset', 'Memset'],
    ].map(([v, t]) => h('option', { value: v }, t)),
  );
  kindSel.selectedIndex = -1; // until the server says which kind it shows
  const nameOfDevice = (ord) => {
    const d = devices[ord];
    return typeof d === 'string' && d ? `${ord}: ${d}` : d && typeof d === 'object' ? deviceLabel(d) : `Device ${ord}`;
  };
  const filter = h('input', {
    type: 'search',
    placeholder: 'Filter by kernel or op name…',
    'aria-label': 'Filter kernels',
    value: params.get('q') || '',
    oninput: () => {
      limit = PAGE_ROWS;
      renderTable();
    },
  });
  const compileBox = h('input', {
    type: 'checkbox',
    checked: params.get('compile') === 'include',
    onchange: () => load(),
  });
  // Sorts by any column, those folded away on narrow screens too.
  const sortSel = h(
    'select',
    {
      'aria-label': 'Sort by',
      onchange: () => {
        const c = COLUMNS.find((x) => x.key === sortSel.value);
        sortKey = c.key;
        sortDesc = c.type !== 'text' && c.type !== 'dims';
        renderTable();
      },
    },
    COLUMNS.map((c) => h('option', { value: c.key }, c.label)),
  );
  const csv = h('a.btn', { href: api.kernelsCsvUrl(id, {}), download: 'kernels.csv' }, 'Download CSV');
  const summary = h('span.sub', { 'aria-live': 'polite' }, '\u00a0');
  const chartBox = h('div.chart', { style: { minHeight: `${TOP_N * 19 + 4}px` } });
  const tableBox = h('div.table-wrap', null);
  const more = h('div', { style: { minHeight: '0' } });
  view.replaceChildren(
    h(
      'div.kernels-layout',
      null,
      h(
        'div.toolbar',
        null,
        h('div.grow', null, h('h1', null, 'Kernels'), summary),
        h('label.inline', null, 'Show', kindSel),
        h('label.inline', null, 'Device', deviceSel),
        h(
          'label.inline',
          { title: 'Kernels, copies and memsets XLA ran while compiling (GEMM autotuning) inside the capture' },
          compileBox,
          'Include compile-time kernels',
        ),
        h('label.inline.sort-by', null, 'Sort', sortSel),
        filter,
        csv,
      ),
      h(
        'section.panel',
        { 'aria-labelledby': 'topn-h' },
        h('h2', { id: 'topn-h' }, `Top ${TOP_N} kernels by total time`),
        chartBox,
      ),
      tableBox,
      more,
    ),
  );

  async function load() {
    if (ctrl) ctrl.abort();
    ctrl = new AbortController();
    const device = deviceSel.value;
    const kind = kindSel.value;
    const compile = compileBox.checked ? 'include' : '';
    csv.href = api.kernelsCsvUrl(id, { device, kind, compile });
    tableBox.setAttribute('aria-busy', 'true');
    if (!kernels)
      tableBox.replaceChildren(
        ...Array.from({ length: 6 }, () => h('div.skeleton', { style: { height: '22px', margin: '12px' } })),
      );
    try {
      const res = await api.kernels(id, { device, kind, compile }, { signal: ctrl.signal });
      kernels = res.kernels || [];
      shorts = shortNames(kernels.map((k) => k.name).filter((n) => typeof n === 'string'));
      kernelTime = res.kernel_time_us;
      compileInfo = res.compile || null;
      if (!kind && res.kind) kindSel.value = res.kind;
      if (!devicesListed && Array.isArray(res.devices)) {
        devicesListed = true;
        deviceSel.replaceChildren(
          h('option', { value: '' }, 'All devices'),
          ...res.devices.map((d) => h('option', { value: deviceId(d) }, nameOfDevice(deviceId(d)))),
        );
        deviceSel.disabled = res.devices.length < 2;
      }
    } catch (e) {
      if (e.name === 'AbortError') return;
      kernels = null;
      tableBox.replaceChildren(stateView('Cannot load kernels', e.message, 'error'));
      chartBox.replaceChildren();
      return;
    } finally {
      tableBox.removeAttribute('aria-busy');
    }
    renderChart();
    renderTable();
  }

  function renderChart() {
    const top = kernels
      .slice()
      .sort((a, b) => (b.total_us || 0) - (a.total_us || 0))
      .slice(0, TOP_N);
    if (!top.length) {
      chartBox.replaceChildren(stateView('No kernels', '', 'empty'));
      return;
    }
    const items = top.map((k) => ({
      label: shorts.get(k.name) ?? k.name,
      name: k.name,
      value: k.total_us,
      title: `${k.name}\n${fmtDur(k.total_us)} in ${fmtN(k.count, 'call')}`,
    }));
    barChart(chartBox, items, {
      rowH: 19,
      onSelect: (it) => {
        filter.value = it.name;
        renderTable();
      },
    });
  }

  function sorted() {
    const q = filter.value.trim().toLowerCase();
    let rows = q
      ? kernels.filter((k) => (k.name || '').toLowerCase().includes(q) || (k.op || '').toLowerCase().includes(q))
      : kernels.slice();
    const col = COLUMNS.find((c) => c.key === sortKey) || COLUMNS[2];
    const dir = sortDesc ? -1 : 1;
    rows.sort((a, b) => {
      const x = a[col.key],
        y = b[col.key];
      if (!isKnown(x) && !isKnown(y)) return 0;
      if (!isKnown(x)) return 1; // unknowns last whatever the direction
      if (!isKnown(y)) return -1;
      if (col.type === 'text' || col.type === 'dims') return dir * String(x).localeCompare(String(y));
      return dir * (x - y);
    });
    return rows;
  }

  function renderTable() {
    if (!kernels) return;
    if (!kernels.length) {
      summary.textContent = 'No kernels in this profile';
      tableBox.replaceChildren(stateView('No kernels', 'This profile (or device) has no device kernels.', 'empty'));
      more.replaceChildren();
      return;
    }
    const rows = sorted();
    const launches = kernels.reduce((a, k) => a + (k.count || 0), 0);
    const c = compileInfo;
    const compileText =
      c && c.rows > 0
        ? c.included
          ? ` · ${fmtDur(c.us)} of it compile-time (${fmtN(c.count, 'launch', 'launches')}, marked)`
          : ` · ${fmtDur(c.us)} of compile-time kernels (${fmtN(c.count, 'launch', 'launches')}) left out`
        : '';
    summary.textContent =
      `${fmtN(kernels.length, 'kernel')} · ${fmtN(launches, 'launch', 'launches')} · ${fmtDur(kernelTime)} kernel time` +
      compileText +
      (rows.length !== kernels.length ? ` · ${fmtCount(rows.length)} match the filter` : '');
    const thead = h(
      'thead',
      null,
      h(
        'tr',
        null,
        COLUMNS.map((c) => {
          const sortedHere = c.key === sortKey;
          return h(
            `th.c-${c.key}${c.type === 'text' || c.type === 'dims' ? '' : '.num'}${c.cls ? '.' + c.cls : ''}`,
            {
              scope: 'col',
              'aria-sort': sortedHere ? (sortDesc ? 'descending' : 'ascending') : 'none',
            },
            h(
              'button.sort',
              {
                type: 'button',
                'data-key': c.key,
                'aria-label': `Sort by ${c.label}`,
                onclick: () => {
                  if (sortKey === c.key) sortDesc = !sortDesc;
                  else {
                    sortKey = c.key;
                    sortDesc = c.type !== 'text' && c.type !== 'dims';
                  }
                  renderTable();
                  tableBox.querySelector(`button[data-key="${c.key}"]`)?.focus();
                },
              },
              c.label,
            ),
          );
        }),
        h('th.c-go', { scope: 'col' }, 'Timeline'),
      ),
    );
    const tbody = h('tbody');
    for (const k of rows.slice(0, limit)) {
      tbody.append(
        h(
          'tr',
          {
            dataset: k.compile ? { name: k.name, compile: '' } : { name: k.name },
            title: k.compile ? 'Compile-time: ran while XLA compiled (autotuning), not by the program' : undefined,
          },
          COLUMNS.map((c) => {
            const v = k[c.key];
            const text = c.key === 'name' && shorts.has(k.name) ? shorts.get(k.name) : kernelCellText(c, k);
            const several = !isKnown(v) && SHAPE_KEYS.has(c.key) && k.shapes > 1;
            const cls =
              c.key === 'name' ? 'td.name.mono' : c.type === 'text' ? 'td.mono' : c.type === 'dims' ? 'td.mono' : 'td.num';
            return h(
              cls + (c.cls ? '.' + c.cls : '') + (isKnown(v) ? '' : '.unknown'),
              {
                'data-key': c.key,
                'data-value': isKnown(v) ? (typeof v === 'object' ? JSON.stringify(v) : String(v)) : 'null',
                title:
                  c.key === 'name' || c.key === 'op'
                    ? isKnown(v)
                      ? String(v)
                      : text
                    : several
                      ? `Ran with ${k.shapes} different launch shapes: see the timeline for each launch`
                      : isKnown(v)
                        ? undefined
                        : UNKNOWN_TITLE,
              },
              c.key === 'name' ? [h('div.kname', null, nameNodes(text)), rowDetail(k)] : text,
            );
          }),
          h('td.go', null, timelineLink(k.name)),
        ),
      );
    }
    const cols = h('colgroup', null, [...COLUMNS.map((c) => h(`col.c-${c.key}${c.cls ? '.' + c.cls : ''}`)), h('col.c-go')]);
    const table = h(
      'table.data.kernels',
      { 'aria-label': 'Kernel summary', 'aria-rowcount': rows.length + 1 },
      cols,
      thead,
      tbody,
    );
    sortSel.value = sortKey;
    tableBox.replaceChildren(table);
    more.replaceChildren();
    if (rows.length > limit) {
      more.append(
        showAllButton(rows.length, limit, () => {
          limit = rows.length;
          renderTable();
        }),
      );
    }
  }

  // The name cell's second line: the folded columns' known values, each
  // part shown by app.css only at the widths where its column is hidden.
  function rowDetail(k) {
    const part = (cls) =>
      h(
        `span.${cls}`,
        null,
        COLUMNS.filter((c) => c.cls === cls && kernelCellText(c, k) !== UNKNOWN)
          .map((c) => `${c.short} ${kernelCellText(c, k)}`)
          .join(' · '),
      );
    return h('div.row-detail', null, part('tertiary'), part('secondary'));
  }

  // "Show": the timeline at the longest occurrence of `name` (among the
  // first 1000 the search finds), selected; the whole timeline when none is.
  function timelineLink(name) {
    const go = async (e) => {
      e.preventDefault();
      let m = null;
      try {
        m = await longestOccurrence(id, name, { signal: life.signal });
      } catch (err) {
        if (err.name === 'AbortError') return;
      }
      if (life.signal.aborted) return;
      if (!m && notify) notify(`No occurrence of ${shortName(name)} found in the timeline.`);
      location.hash = m ? hashForMatch(id, m) : timelineHash(id);
    };
    return h(
      'a.tl-link',
      { href: timelineHash(id), title: `Show the longest ${shortName(name)} in the timeline`, onclick: go },
      'Show',
    );
  }

  const life = new AbortController();
  load();
  resizeObserve(chartBox, () => kernels && renderChart(), life.signal);
  return () => {
    life.abort();
    if (ctrl) ctrl.abort();
  };
}
