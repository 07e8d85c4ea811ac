// op_tree.js — XProf's op profile as an expandable tree: category, then
// module (the HLO program), then op, each level sorted by self time, most
// first. Each row has a time bar: the dark part is the row's share of all
// ops' self time, the light part its share of its parent (a category's
// parent is the whole, so both agree there).
//
// The tree is rebuilt from the op_profile table's order and `level`
// column (tool_op_profile.c writes each group before its children); rows
// are drawn when their parent is first opened, so a profile with
// thousands of ops costs nothing until asked. Keyboard: the tree is one
// tab stop (a roving tabindex); arrows move, Right/Left open and close or
// go to the child / parent, Enter and Space toggle, Home/End jump.
//
// Each row carries data-level, data-name, data-self-us, data-share-total
// and data-share-parent (0..1), and its bars' widths are those shares, so
// tests compare them with the API.

import { h, fmtDur, fmtPct, fmtCount, isKnown } from './format.js';

// table: {columns, rows}; null when it is not op_profile's shape.
export function buildOpTree(table) {
  const at = (id) => table.columns.findIndex((c) => c.id === id);
  const c = Object.fromEntries(
    [
      'level',
      'name',
      'category',
      'hlo_module',
      'occurrences',
      'total_time',
      'total_self_time',
      'percent',
      'percent_of_parent',
    ].map((k) => [k, at(k)]),
  );
  if (c.level < 0 || c.name < 0 || c.total_self_time < 0) return null;
  const root = { level: 0, children: [], self: 0 };
  const stack = [root];
  for (const r of table.rows) {
    const level = r[c.level];
    if (!(level >= 1 && level <= 3)) continue;
    const get = (k) => (c[k] >= 0 ? r[c[k]] : null);
    const node = {
      level,
      name: String(get('name') ?? ''),
      category: get('category'),
      module: get('hlo_module'),
      count: get('occurrences'),
      total: get('total_time'),
      self: typeof get('total_self_time') === 'number' ? get('total_self_time') : 0,
      pct: get('percent'),
      pctParent: get('percent_of_parent'),
      children: [],
    };
    while (stack.length > level) stack.pop();
    const parent = stack[stack.length - 1];
    parent.children.push(node);
    stack.push(node);
  }
  const sortRec = (n) => {
    n.children.sort((a, b) => b.self - a.self);
    n.children.forEach(sortRec);
  };
  sortRec(root);
  root.self = root.children.reduce((a, n) => a + n.self, 0);
  return root.children.length ? root : null;
}

const LEVEL_NAMES = ['', 'category', 'module', 'op'];

// A share from the answer's percentage, else from the times.
function shareOf(pct, self, whole) {
  if (isKnown(pct) && typeof pct === 'number') return Math.max(0, Math.min(1, pct / 100));
  return whole > 0 ? Math.max(0, Math.min(1, self / whole)) : 0;
}

// The tree's element. The first category starts open.
export function opTree(table) {
  const root = buildOpTree(table);
  if (!root) return null;
  const list = h('div.op-tree-rows', { role: 'tree', 'aria-label': 'Op profile: category, module, op' });
  const el = h(
    'section.panel.op-tree.tool-chart',
    { 'data-chart': 'op-tree', 'aria-label': 'Op profile' },
    h(
      'div.op-tree-head',
      null,
      h('h2', null, 'Op profile'),
      h(
        'p.sub',
        null,
        `${fmtCount(root.children.length)} categories by self time; open a row (click, or Right and Enter) for its modules and ops. ` +
          'Bar: dark = share of all ops, light = share of its parent.',
      ),
    ),
    h(
      'div.op-tree-cols',
      { 'aria-hidden': 'true' },
      h('span', null, 'Name'),
      h('span.num', null, 'Self time'),
      h('span', null, 'Share of total / of parent'),
      h('span.num', null, 'Occurrences'),
    ),
    list,
  );
  let current = null;

  function rowOf(n, parent) {
    const shareTotal = shareOf(n.pct, n.self, root.self);
    const shareParent = shareOf(n.pctParent, n.self, parent.self);
    const leaf = !n.children.length;
    const row = h(
      'div.op-row',
      {
        role: 'treeitem',
        tabindex: '-1',
        'aria-level': n.level,
        'aria-expanded': leaf ? undefined : 'false',
        'aria-label': `${n.name}: ${fmtDur(n.self)}, ${fmtPct(100 * shareTotal)} of total, ${fmtPct(100 * shareParent)} of parent`,
        dataset: {
          level: n.level,
          kind: LEVEL_NAMES[n.level],
          name: n.name,
          selfUs: n.self,
          shareTotal,
          shareParent,
        },
      },
      h(
        'span.op-name',
        { style: { paddingLeft: `${(n.level - 1) * 18}px` }, title: n.name },
        h('span.op-toggle', { 'aria-hidden': 'true' }, leaf ? '' : '▸'),
        h('span.op-label', null, n.name || '(unnamed)'),
      ),
      h('span.num.op-time', null, fmtDur(n.self)),
      h(
        'span.op-bar',
        { title: `${fmtPct(100 * shareTotal, 2)} of all ops' self time · ${fmtPct(100 * shareParent, 2)} of its parent` },
        h('span.op-bar-parent', { style: { width: `${(100 * shareParent).toFixed(3)}%` } }),
        h('span.op-bar-total', { style: { width: `${(100 * shareTotal).toFixed(3)}%` } }),
        h('span.op-bar-text', null, `${fmtPct(100 * shareTotal)} · ${fmtPct(100 * shareParent)}`),
      ),
      h('span.num.op-count', null, isKnown(n.count) ? fmtCount(n.count) : '—'),
    );
    row.node = n;
    row.parentRow = null;
    row.kids = null; // the group holding its children, once drawn
    return row;
  }

  // Draws parent's children into box (after parentRow) once.
  function drawChildren(box, parent, parentRow) {
    for (const n of parent.children) {
      const r = rowOf(n, parent);
      r.parentRow = parentRow;
      box.append(r);
      if (n.children.length) {
        r.kids = h('div.op-group', { role: 'group', hidden: true });
        box.append(r.kids);
      }
    }
  }

  function setOpen(row, open) {
    if (!row.kids) return;
    if (open && !row.kids.childElementCount) drawChildren(row.kids, row.node, row);
    row.kids.hidden = !open;
    row.setAttribute('aria-expanded', String(open));
    row.querySelector('.op-toggle').textContent = open ? '▾' : '▸';
  }
  const isOpen = (row) => row.getAttribute('aria-expanded') === 'true';

  function focusRow(row) {
    if (!row) return;
    if (current) current.tabIndex = -1;
    current = row;
    row.tabIndex = 0;
    row.focus();
  }

  // The rows a reader can see, in order.
  const visible = () => [...list.querySelectorAll('.op-row')].filter((r) => !r.closest('.op-group[hidden]'));

  list.addEventListener('click', (e) => {
    const row = e.target.closest('.op-row');
    if (!row) return;
    setOpen(row, !isOpen(row));
    focusRow(row);
  });
  list.addEventListener('keydown', (e) => {
    const row = e.target.closest('.op-row');
    if (!row) return;
    const rows = visible();
    const i = rows.indexOf(row);
    const keys = {
      ArrowDown: () => focusRow(rows[i + 1]),
      ArrowUp: () => focusRow(rows[i - 1]),
      Home: () => focusRow(rows[0]),
      End: () => focusRow(rows[rows.length - 1]),
      ArrowRight: () => (row.kids && !isOpen(row) ? setOpen(row, true) : row.kids ? focusRow(rows[i + 1]) : null),
      ArrowLeft: () => (row.kids && isOpen(row) ? setOpen(row, false) : focusRow(row.parentRow)),
      Enter: () => setOpen(row, !isOpen(row)),
      ' ': () => setOpen(row, !isOpen(row)),
    };
    if (!keys[e.key]) return;
    e.preventDefault();
    keys[e.key]();
  });

  drawChildren(list, root, null);
  const first = list.querySelector('.op-row');
  if (first) {
    first.tabIndex = 0;
    current = first;
    setOpen(first, true);
  }
  return { el, draw: () => {} };
}
