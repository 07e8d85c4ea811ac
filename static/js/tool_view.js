// tool_view.js — one XProf tool's answer drawn from its shape alone, so that
// a tool the server adds shows up without a change here: the table's
// properties (a verdict, a recommendation, a summary, then the rest) above a
// sortable, filterable table with a CSV download link. Shared by the
// TensorBoard shell (tensorboard.js, DataTable answers) and the profile's
// Tools tab (tools.js, our JSON), which is why it is a helper and not a page.
//
// Numbers are formatted by the column id, the one thing both answers share:
//   *_us                      microseconds (µs, fixed decimals so they align)
//   *_fraction                a share from 0 to 1, shown as a percentage
//   *_percent, *_pct, percent already a percentage (0–100)
//   *_bytes                   a size (the exact count in the tooltip)
//   *_dim, *_dims (text)      launch dimensions, 256×1×1
// Every cell keeps the answer's raw value in data-value ("null" when
// unknown), so what is shown can be checked against the API.

import { h, fmtUs, fmtPct, fmtFrac, fmtCount, fmtBytes, fmtDims, fmtDur, isKnown, UNKNOWN } from './format.js';
import { stateView, showAllButton } from './states.js';
import { toolCharts } from './tool_charts.js';
import { shortName, nameNodes } from './kernel_name.js';
import { summaryCards, figuresFromTool } from './summary_cards.js';

const PAGE_ROWS = 500;
const FOLDED = { op_profile: 'The same rows as a flat table', overview_page: 'All the figures as a table' };

// XProf's names for its tools; a tool not named here shows its tag in words.
const TOOL_LABELS = {
  overview_page: 'Overview Page',
  input_pipeline_analyzer: 'Input Pipeline Analyzer',
  kernel_stats: 'Kernel Stats',
  memory_profile: 'Memory Profile',
  memory_viewer: 'Memory Viewer',
  pod_viewer: 'Pod Viewer',
  framework_op_stats: 'Framework Op Stats',
  trace_viewer: 'Trace Viewer',
  op_profile: 'HLO Op Profile',
  hlo_stats: 'HLO Op Stats',
  roofline_model: 'Roofline Model',
  graph_viewer: 'Graph Viewer',
};

export function toolLabel(tag) {
  if (TOOL_LABELS[tag]) return TOOL_LABELS[tag];
  const words = String(tag).replace(/@$/, '').split('_').filter(Boolean);
  return words.map((w) => w[0].toUpperCase() + w.slice(1)).join(' ') || String(tag);
}

// Tools that have a page of their own in the profile view, and its name:
// the shell and the Tools tab link to it.
const DEDICATED = {
  trace_viewer: 'timeline',
  kernel_stats: 'kernels',
  memory_profile: 'memory',
  memory_viewer: 'memory?view=viewer',
};
export function dedicatedPage(tag) {
  return DEDICATED[tag] || null;
}

export const ALL_HOSTS = 'ALL_HOSTS';
export function hostLabel(host) {
  return host === ALL_HOSTS ? 'All hosts' : host;
}

// Both answers as one shape: {columns, rows: [[v, ...]], properties}.
export function fromDataTable(dt) {
  const columns = (dt.cols || []).map((c, i) => ({ id: c.id || `col${i}`, label: c.label || c.id || '', type: c.type }));
  const rows = (dt.rows || []).map((r) => columns.map((_, i) => (r.c && r.c[i] ? (r.c[i].v ?? null) : null)));
  return { columns, rows, properties: dt.p || {} };
}

export function fromToolJson(res) {
  const columns = (res.columns || []).map((c) => ({ id: c.id, label: c.label || c.id, type: c.type }));
  const rows = (res.rows || []).map((r) => columns.map((c) => r[c.id] ?? null));
  return { columns, rows, properties: res.properties || {} };
}

export function columnKind(col) {
  const id = String(col.id).toLowerCase();
  if (col.type === 'boolean') return 'bool';
  if (col.type !== 'number') return /(^|_)dims?$/.test(id) ? 'dims' : 'text';
  if (/(^|_)us$/.test(id)) return 'us';
  if (/(^|_)fraction$/.test(id)) return 'fraction';
  if (/(^|_)(percent|pct)$/.test(id)) return 'pct';
  if (/(^|_)bytes$/.test(id)) return 'bytes';
  return 'num';
}

export function fmtNumber(v) {
  if (!isKnown(v)) return UNKNOWN;
  if (typeof v !== 'number') return String(v);
  if (Number.isInteger(v)) return fmtCount(v);
  const a = Math.abs(v);
  if (a < 1e-4) return v.toPrecision(3);
  return v.toLocaleString('en-US', { maximumFractionDigits: a >= 100 ? 2 : a >= 1 ? 3 : 4 });
}

export function cellText(kind, v) {
  if (!isKnown(v)) return UNKNOWN;
  if (kind === 'dims') return fmtDims(v);
  if (typeof v !== 'number') return kind === 'bool' ? (v ? 'yes' : 'no') : String(v);
  switch (kind) {
    case 'us':
      return fmtUs(v);
    case 'fraction':
      return fmtFrac(v, 2);
    case 'pct':
      return fmtPct(v, 2);
    case 'bytes':
      return fmtBytes(v);
    default:
      return fmtNumber(v);
  }
}

// The share a cell's bar shows (0..1), for percentage columns.
function share(kind, v) {
  if (typeof v !== 'number') return null;
  const f = kind === 'fraction' ? v : kind === 'pct' ? v / 100 : null;
  return f === null ? null : Math.max(0, Math.min(1, f));
}

// Figures computed from an HLO op's FLOPs or bytes, and the columns that
// say where those came from: a cell is marked "derived" (italic, with a
// tooltip) when its row says they were derived from the module's HLO shapes
// rather than carried by the profile (hlo_stats, op_profile, roofline_model).
const COST_SOURCES = {
  flops: ['flops_source'],
  normalized_flop_rate: ['flops_source'],
  measured_flop_rate: ['flops_source'],
  flop_rate: ['flops_source'],
  roofline_efficiency_percent: ['flops_source'],
  operational_intensity: ['flops_source', 'bytes_source'],
  bytes_accessed: ['bytes_source'],
  measured_memory_bw: ['bytes_source'],
  memory_bw: ['bytes_source'],
};

function derivedCell(colId, valueOf) {
  return (COST_SOURCES[colId] || []).some((src) => String(valueOf(src) ?? '').includes('derived'));
}

// The properties XProf's pages put first, in this order; the rest follow.
const LEAD_PROPS = ['verdict', 'summary', 'recommendation'];

function propLabel(key) {
  const s = String(key).replace(/_/g, ' ');
  return s[0].toUpperCase() + s.slice(1);
}

// The HLO tools leave compile-time device work (XLA autotuning) out, as
// /kernels does by default: say how much, and where it is.
function compileNote(props) {
  if (!isKnown(props.compile_excluded_us)) return null;
  return h(
    'p.sub',
    { 'data-prop': 'compile_excluded' },
    `${props.compile_excluded_us} µs of compile-time work left out; /kernels?compile=include shows it.`,
  );
}

function propertiesPanel(props) {
  const keys = Object.keys(props).filter((k) => isKnown(props[k]) && props[k] !== '');
  if (!keys.length) return null;
  const lead = LEAD_PROPS.filter((k) => keys.includes(k));
  const rest = keys.filter((k) => !LEAD_PROPS.includes(k));
  const text = (v) => (typeof v === 'object' ? JSON.stringify(v) : String(v));
  return h(
    'section.panel.tool-props',
    { 'aria-label': 'Summary' },
    compileNote(props),
    lead.map((k) =>
      k === 'verdict'
        ? h('p.verdict', { 'data-prop': k }, text(props[k]))
        : h('p', { 'data-prop': k }, h('b', null, `${propLabel(k)}: `), text(props[k])),
    ),
    rest.length
      ? h(
          'dl.facts',
          null,
          rest.flatMap((k) => [h('dt', null, propLabel(k)), h('dd', { 'data-prop': k }, text(props[k]))]),
        )
      : null,
  );
}

// Draws `table` (fromDataTable or fromToolJson) into `box`, with the
// tool's charts (tool_charts.js) above it. opts: title, tag (the tool),
// sub (a line under it), csvUrl, csvName, links (elements beside the CSV
// link), cellLink(columnId, valueOf(columnId)) -> an href for that cell or null.
export function renderToolTable(box, table, opts) {
  const cols = table.columns.map((c, i) => ({ ...c, i, kind: columnKind(c) }));
  const isText = (c) => c.kind === 'text' || c.kind === 'dims';
  const textCols = cols.filter(isText);
  let sortCol = null; // the server's order until a header is clicked
  let sortDesc = true;
  let limit = PAGE_ROWS;

  const filter = h('input', {
    type: 'search',
    placeholder: 'Filter rows…',
    'aria-label': 'Filter rows',
    disabled: textCols.length === 0,
    oninput: () => {
      limit = PAGE_ROWS;
      renderRows();
    },
  });
  const count = h('span.sub', { 'aria-live': 'polite' });
  const csv = opts.csvUrl ? h('a.btn.csv', { href: opts.csvUrl, download: opts.csvName || 'table.csv' }, 'Download CSV') : null;
  const tableBox = h('div.table-wrap.tool-table', null);
  const more = h('div');
  // A roofline point picked: the table shows that op.
  const charts = toolCharts(opts.tag, table, {
    onPick: (name) => {
      filter.value = name;
      limit = PAGE_ROWS;
      renderRows();
    },
  });
  box.replaceChildren(
    h(
      'div.tool-view',
      null,
      h(
        'div.toolbar',
        null,
        h('div.grow', null, h('h1', null, opts.title), opts.sub ? h('span.sub', null, opts.sub, ' · ') : null, count),
        filter,
        opts.links || null,
        csv,
      ),
      opts.tag === 'overview_page' ? summaryCards(figuresFromTool(table), null) : null,
      propertiesPanel(table.properties),
      charts ? charts.el : null,
      // The tree and the cards show these tools' rows; the table stays, folded, for filter, sort and CSV.
      FOLDED[opts.tag] && charts
        ? h('details.op-flat', null, h('summary', null, FOLDED[opts.tag]), tableBox, more)
        : [tableBox, more],
    ),
  );
  if (charts) {
    charts.draw();
    redrawOnResize(charts.el, charts.draw);
  }

  function visibleRows() {
    const q = filter.value.trim().toLowerCase();
    const rows = q
      ? table.rows.filter((r) => textCols.some((c) => isKnown(r[c.i]) && String(r[c.i]).toLowerCase().includes(q)))
      : table.rows.slice();
    if (!sortCol) return rows;
    const dir = sortDesc ? -1 : 1;
    const i = sortCol.i;
    return rows.sort((a, b) => {
      const x = a[i],
        y = b[i];
      if (!isKnown(x) && !isKnown(y)) return 0;
      if (!isKnown(x)) return 1; // unknowns last whatever the direction
      if (!isKnown(y)) return -1;
      if (typeof x === 'number' && typeof y === 'number') return dir * (x - y);
      return dir * String(x).localeCompare(String(y));
    });
  }

  function header() {
    return h(
      'thead',
      null,
      h(
        'tr',
        null,
        cols.map((c) =>
          h(
            `th${isText(c) ? '' : '.num'}`,
            { scope: 'col', 'aria-sort': sortCol === c ? (sortDesc ? 'descending' : 'ascending') : 'none' },
            h(
              'button.sort',
              {
                type: 'button',
                'data-key': c.id,
                title: c.id,
                onclick: () => {
                  if (sortCol === c) sortDesc = !sortDesc;
                  else {
                    sortCol = c;
                    sortDesc = !isText(c);
                  }
                  renderRows();
                  tableBox.querySelector(`button[data-key="${CSS.escape(c.id)}"]`)?.focus();
                },
              },
              c.label,
            ),
          ),
        ),
      ),
    );
  }

  function cell(c, v, r) {
    const href = opts.cellLink && isKnown(v) ? opts.cellLink(c.id, (id) => r[cols.find((x) => x.id === id)?.i]) : null;
    const known = isKnown(v);
    // A long name (a C++ kernel's) reads short, whole on hover (kernel_name.js).
    const long = c.kind === 'text' && known && String(v).length > 40;
    const shown = long ? nameNodes(shortName(String(v))) : cellText(c.kind, v);
    const text = href ? h('a', { href }, shown) : shown;
    const f = share(c.kind, v);
    let cls = isText(c) ? 'td.mono' : 'td.num';
    if (long) cls += '.name';
    if (!known) cls += '.unknown';
    if (f !== null) cls += '.share';
    const derived = known && derivedCell(c.id, (id) => r[cols.find((x) => x.id === id)?.i]);
    if (derived) cls += '.derived';
    return h(
      cls,
      {
        'data-key': c.id,
        'data-value': known ? (typeof v === 'object' ? JSON.stringify(v) : String(v)) : 'null',
        title: derived
          ? "derived from the HLO module's shapes, not carried by the profile"
          : c.kind === 'text'
            ? cellText(c.kind, v)
            : c.kind === 'us' && known
              ? fmtDur(v)
              : c.kind === 'bytes' && known
                ? `${fmtCount(v)} bytes`
                : undefined,
        style: f !== null ? { '--share': `${(f * 100).toFixed(2)}%` } : undefined,
      },
      text,
    );
  }

  function renderRows() {
    const rows = visibleRows();
    const n = table.rows.length;
    count.textContent =
      `${fmtCount(n)} row${n === 1 ? '' : 's'}` + (rows.length !== n ? ` · ${fmtCount(rows.length)} match the filter` : '');
    more.replaceChildren();
    if (!cols.length || !n) {
      tableBox.replaceChildren(stateView('No rows', 'This tool answered with an empty table.', 'empty'));
      return;
    }
    const tbody = h(
      'tbody',
      null,
      rows.slice(0, limit).map((r) =>
        h(
          'tr',
          null,
          cols.map((c) => cell(c, r[c.i], r)),
        ),
      ),
    );
    const el = h('table.data', { 'aria-label': opts.title, 'aria-rowcount': rows.length + 1, 'data-rows': n }, header(), tbody);
    tableBox.replaceChildren(el);
    if (!rows.length) tableBox.append(stateView('No row matches the filter', '', 'empty'));
    if (rows.length > limit) {
      more.append(
        showAllButton(rows.length, limit, () => {
          limit = rows.length;
          renderRows();
        }),
      );
    }
  }

  renderRows();
}

// Charts are drawn at their box's width: redraw when it changes, until the
// chart leaves the page (a new tool or view replaces it).
function redrawOnResize(el, draw) {
  let w = el.clientWidth;
  let raf = 0;
  const ro = new ResizeObserver(() => {
    if (!el.isConnected) {
      ro.disconnect();
      return;
    }
    if (el.clientWidth === w) return;
    w = el.clientWidth;
    cancelAnimationFrame(raf);
    raf = requestAnimationFrame(draw);
  });
  ro.observe(el);
}
