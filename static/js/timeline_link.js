// timeline_link.js — addresses of timeline views, shared by the pages that
// link into the timeline (overview, kernels) and by the timeline itself,
// which keeps its address up to date (timeline_url.js).
//
// A view is #/p/<id>/timeline?start_us=&end_us=&sel=&pins=&step= where every
// part is optional: start_us/end_us the visible window in the profile's
// clock (the events API's), sel the selected event's ref ("block:index"),
// pins the pinned track ids (comma-separated, in pin order), step the
// highlighted step. Unknown or malformed parts are ignored, never an error.

import { getJSON, query } from './api.js';

export function timelineHash(id, { start_us, end_us, sel, pins, step } = {}) {
  const q = query({
    step,
    start_us: isNum(start_us) ? roundUs(start_us) : undefined,
    end_us: isNum(end_us) ? roundUs(end_us) : undefined,
    sel,
    pins: pins && pins.length ? pins.join(',') : undefined,
  });
  return `#/p/${encodeURIComponent(id)}/timeline${q}`;
}

// The parts of a timeline address (URLSearchParams) that are well formed.
export function parseTimelineLink(params) {
  const s = Number(params.get('start_us'));
  const e = Number(params.get('end_us'));
  const hasWindow = params.has('start_us') && params.has('end_us') && Number.isFinite(s) && Number.isFinite(e) && e > s;
  const sel = params.get('sel');
  const pins = (params.get('pins') || '')
    .split(',')
    .filter((x) => /^\d+$/.test(x))
    .map(Number);
  return {
    start_us: hasWindow ? s : null,
    end_us: hasWindow ? e : null,
    sel: sel && /^\d+:\d+$/.test(sel) ? sel : null,
    pins: [...new Set(pins)],
    step: params.get('step'),
  };
}

// The longest occurrence of the event named exactly `name` among the first
// 1000 the search finds ({ref, start_us, dur_us, track, name}), or null.
// Names of any length: the search holds its text, so a name too long for a
// URL is searched by its longest prefix that fits, and matched exactly here.
export async function longestOccurrence(id, name, opts) {
  const q = searchText(name);
  const res = await getJSON(`/api/profiles/${encodeURIComponent(id)}/search${query({ q, limit: 1000 })}`, opts);
  let best = null;
  for (const m of res.matches || []) {
    if (m.name !== name || !isNum(m.start_us)) continue;
    if (!best || (m.dur_us ?? -1) > (best.dur_us ?? -1)) best = m;
  }
  return best;
}

// The timeline address that shows match `m` (from longestOccurrence) selected,
// with a margin of its own length on either side.
export function hashForMatch(id, m) {
  const d = Math.max(m.dur_us || 0, 0.01);
  return timelineHash(id, { start_us: m.start_us - d, end_us: m.start_us + 2 * d, sel: m.ref });
}

// The server takes URLs of up to 8192 bytes (server/http.h): leave room for
// the path and the other parameters.
const QUERY_BYTES = 7000;

// `name`, or its longest prefix (whole code points) whose URL form fits.
export function searchText(name) {
  if (encodeURIComponent(name).length <= QUERY_BYTES) return name;
  let n = 0,
    end = 0;
  for (const ch of name) {
    n += encodeURIComponent(ch).length;
    if (n > QUERY_BYTES) break;
    end += ch.length;
  }
  return name.slice(0, end);
}

function isNum(v) {
  return typeof v === 'number' && Number.isFinite(v);
}

// Nanosecond precision is what the events carry; more digits only lengthen the URL.
function roundUs(x) {
  return Math.round(x * 1e3) / 1e3;
}
