// format.js — how numbers, times and sizes are written on screen, and a tiny
// DOM builder. Every page writes durations (fmtDur: ns, µs, ms, s; never
// "us"), percentages (fmtPct of a percent, fmtFrac of a fraction: a raw
// fraction is never shown) and counts with their noun (fmtN: "1 step",
// "2 steps") through these functions. Unknown values (null/undefined/NaN)
// always render as "—" (UNKNOWN, with UNKNOWN_TITLE as its title), never 0.

export const UNKNOWN = '—';
// The title of an UNKNOWN cell: the figure is missing, not zero.
export const UNKNOWN_TITLE = 'unknown: the profile does not record this';

export function isKnown(v) {
  return v !== null && v !== undefined && !(typeof v === 'number' && Number.isNaN(v));
}

// A duration given in microseconds, with a unit chosen for readability.
export function fmtDur(us, digits = 3) {
  if (!isKnown(us)) return UNKNOWN;
  const a = Math.abs(us);
  if (a === 0) return '0';
  if (a < 1) return trim((us * 1000).toPrecision(digits)) + ' ns';
  if (a < 1000) return trim(us.toPrecision(digits)) + ' µs';
  if (a < 1e6) return trim((us / 1000).toPrecision(digits)) + ' ms';
  return trim((us / 1e6).toPrecision(Math.max(digits, 4))) + ' s';
}

// Microseconds with fixed decimals, for tables where columns line up.
export function fmtUs(us, decimals = 3) {
  if (!isKnown(us)) return UNKNOWN;
  return us.toLocaleString('en-US', { minimumFractionDigits: decimals, maximumFractionDigits: decimals });
}

function trim(s) {
  return s.includes('e') ? Number(s).toString() : s.replace(/(\.\d*?)0+$/, '$1').replace(/\.$/, '');
}

export function fmtCount(n) {
  if (!isKnown(n)) return UNKNOWN;
  return Number(n).toLocaleString('en-US');
}

export function fmtPct(p, decimals = 1) {
  if (!isKnown(p) || !Number.isFinite(Number(p))) return UNKNOWN;
  return Number(p).toFixed(decimals) + '%';
}

// A fraction (0.734) as a percentage ("73.4%").
export function fmtFrac(f, decimals = 1) {
  if (!isKnown(f) || !Number.isFinite(Number(f))) return UNKNOWN;
  return fmtPct(Number(f) * 100, decimals);
}

// A count with its noun, singular for exactly 1: fmtN(1, 'step') is
// "1 step", fmtN(1200, 'copy', 'copies') is "1,200 copies".
export function fmtN(n, one, many = one + 's') {
  if (!isKnown(n)) return `${UNKNOWN} ${many}`;
  return `${fmtCount(n)} ${Number(n) === 1 ? one : many}`;
}

export function fmtBytes(b) {
  if (!isKnown(b)) return UNKNOWN;
  const u = ['B', 'KB', 'MB', 'GB', 'TB'];
  let i = 0,
    v = b;
  while (v >= 1000 && i < u.length - 1) {
    v /= 1000;
    i++;
  }
  return (i === 0 ? v : v.toFixed(v < 10 ? 2 : v < 100 ? 1 : 0)) + ' ' + u[i];
}

export function fmtDate(iso) {
  if (!iso) return UNKNOWN;
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return String(iso);
  const pad = (x) => String(x).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

// Launch dimensions: [x,y,z] arrays, "x,y,z" strings or null.
export function fmtDims(v) {
  if (!isKnown(v) || v === '') return UNKNOWN;
  if (Array.isArray(v)) return v.join('×');
  return String(v).replace(/[, ]+/g, '×');
}

export function fmtValue(v) {
  if (!isKnown(v)) return UNKNOWN;
  if (typeof v === 'number') return Number.isInteger(v) ? fmtCount(v) : String(v);
  return String(v);
}

// h('tag.class', {attrs}, ...children): a compact way to build DOM safely
// (text children become text nodes, so names from traces are never parsed as HTML).
export function h(spec, attrs, ...kids) {
  const [tag, ...classes] = spec.split('.');
  const el = document.createElement(tag || 'div');
  if (classes.length) el.className = classes.join(' ');
  if (attrs) {
    for (const [k, v] of Object.entries(attrs)) {
      if (v === undefined || v === null || v === false) continue;
      if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
      else if (k === 'dataset') Object.assign(el.dataset, v);
      else if (k === 'text') el.textContent = v;
      else if (k === 'style' && typeof v === 'object') {
        for (const [sk, sv] of Object.entries(v)) {
          if (sk.startsWith('--')) el.style.setProperty(sk, sv);
          else el.style[sk] = sv;
        }
      } else el.setAttribute(k, v === true ? '' : v);
    }
  }
  for (const kid of kids.flat()) {
    if (kid === null || kid === undefined || kid === false) continue;
    el.append(kid instanceof Node ? kid : document.createTextNode(String(kid)));
  }
  return el;
}

// Device names: the API may give numbers, strings or objects.
export function deviceLabel(d) {
  if (d === null || d === undefined) return UNKNOWN;
  if (typeof d === 'object') return d.name || (isKnown(d.id) ? `Device ${d.id}` : JSON.stringify(d));
  return typeof d === 'number' ? `Device ${d}` : String(d);
}

export function deviceId(d) {
  if (d && typeof d === 'object') return isKnown(d.id) ? d.id : d.device_id;
  return d;
}

// A stable colour for an event name (same name, same colour, everywhere).
export function nameHue(name) {
  let x = 2166136261;
  for (let i = 0; i < name.length; i++) {
    x ^= name.charCodeAt(i);
    x = Math.imul(x, 16777619);
  }
  return (x >>> 0) % 360;
}
