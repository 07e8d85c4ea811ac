// kernel_name.js — readable short names for the tables and charts that list
// kernels: a C++ template name of thousands of characters becomes its
// qualified name with the template and argument lists elided, as profilers'
// UIs show them: `void Eigen::internal::EigenMetaKernel<…>(…)`.
//
// Invariants: the full name is always kept (callers show it as the title and
// in details; links find a kernel by its full name); a name short enough to
// read, or one that does not parse as balanced brackets, is left whole; and
// shortNames gives distinct full names distinct short names, numbering the
// ones that would shorten the same in the order of their full names, so the
// numbers do not change with a table's sort. Where even a short name does
// not fit, a table cell wraps it between its parts (nameNodes) and a chart
// label drops leading qualifiers (fitName): neither cuts a token.

// Names up to this many characters are shown whole.
const SHORT_ENOUGH = 64;

// Text that opens with a bracket but is part of a name, not a list.
const LITERAL = [
  '(anonymous namespace)',
  '{lambda',
  'operator<<=',
  'operator>>=',
  'operator<<',
  'operator>>',
  'operator<=>',
  'operator<=',
  'operator>=',
  'operator->*',
  'operator->',
  'operator()',
  'operator<',
  'operator>',
];

// The name with every outermost <...> and (...) list elided to <…> and (…)
// (empty lists stay "()"); the name itself when it is short or unbalanced.
export function shortName(name) {
  if (typeof name !== 'string' || name.length <= SHORT_ENOUGH) return name;
  let out = '';
  let i = 0;
  while (i < name.length) {
    const lit = LITERAL.find((t) => name.startsWith(t, i));
    if (lit) {
      out += lit;
      i += lit.length;
      continue;
    }
    const c = name[i];
    if (c === '<' || c === '(') {
      const end = closing(name, i);
      if (end < 0) return name;
      out += end === i + 1 ? name.slice(i, end + 1) : c === '<' ? '<…>' : '(…)';
      i = end + 1;
    } else {
      out += c;
      i++;
    }
  }
  return out;
}

// The index of the bracket closing the one at `open`, or -1. "->" is an
// arrow, not a closing bracket.
function closing(s, open) {
  const stack = [];
  for (let i = open; i < s.length; i++) {
    const c = s[i];
    if (c === '<' || c === '(' || c === '[' || c === '{') stack.push(c);
    else if (c === '>' && s[i - 1] === '-') continue;
    else if (c === '>' || c === ')' || c === ']' || c === '}') {
      const want = { '>': '<', ')': '(', ']': '[', '}': '{' }[c];
      if (stack.pop() !== want) return -1;
      if (!stack.length) return i;
    }
  }
  return -1;
}

// Map from each of `names` to its short name, distinct for distinct names:
// names that shorten the same get " #1", " #2", ... in the order of their
// full names.
export function shortNames(names) {
  const groups = new Map();
  for (const n of new Set(names)) {
    const s = shortName(n);
    if (!groups.has(s)) groups.set(s, []);
    groups.get(s).push(n);
  }
  const taken = new Set(groups.keys());
  const out = new Map();
  for (const [s, full] of groups) {
    if (full.length === 1) {
      out.set(full[0], s);
      continue;
    }
    full.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    // A name shown whole among them keeps its text; the others are numbered.
    let k = 0;
    for (const n of full) {
      if (n === s) {
        out.set(n, n);
        continue;
      }
      let label;
      do label = `${s} #${++k}`;
      while (taken.has(label));
      taken.add(label);
      out.set(n, label);
    }
  }
  return out;
}

// The short text as nodes for a table cell: a line may break after each
// "::" and ", ", so a long qualified name wraps between its parts.
export function nameNodes(text) {
  const out = [];
  for (const part of String(text).split(/(?<=::|, )/)) {
    if (out.length) out.push(document.createElement('wbr'));
    out.push(document.createTextNode(part));
  }
  return out;
}

// `text` in at most n characters for a chart label: leading qualifiers are
// dropped at a "::" or a space ("…::kernel<…>(…)"), so what is left is
// whole tokens; only a single token longer than n is cut at its end.
export function fitName(text, n) {
  if (typeof text !== 'string' || text.length <= n) return text;
  const cuts = [...text.matchAll(/::| /g)].map((m) => m.index + m[0].length);
  for (const at of cuts) if (text.length - at + 1 <= n) return '…' + text.slice(at);
  return text.slice(0, Math.max(1, n - 1)) + '…';
}
