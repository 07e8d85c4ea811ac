// search.js — the timeline's search across the whole profile: asks the
// server's /search for events whose name holds the query and keeps the
// answer so next/previous can step through every match in time order, a
// page of `limit` at a time (the server's `offset`).
//
// Invariants: one request at a time (a newer query or page aborts the older
// one); matches are {s, e, name, ref, track, depth: -1, instant, summary:
// false}, the same shape timeline_data.js gives loaded events, sorted by
// start; a page is {query, offset, matches, total, truncated}, match i of the
// whole search being page.matches[i - page.offset]. When the server has no
// /search (404) the session remembers it, and the caller falls back to
// searching the loaded window; other failures are reported per query and
// the next query tries the server again.

import { getJSON, query } from './api.js';

export const SEARCH_LIMIT = 1000; // the server's maximum page

export class ProfileSearch {
  constructor(profileId, { limit = SEARCH_LIMIT } = {}) {
    this.id = profileId;
    this.limit = limit;
    this.ctrl = null;
    this.unsupported = false; // the server answered 404: no /search route
    this.result = null; // the last page: {query, offset, matches, total, truncated}
    this.pending = null; // the request in flight: {query, offset, promise}
  }

  // The offset of a page that holds match `index` and the ones after it (dir
  // >= 0) or before it (dir < 0), where next/previous will go from there.
  pageOf(index, dir = 1) {
    return dir >= 0 ? index : Math.max(0, index - this.limit + 1);
  }

  // Resolves to the page of `q` from `offset` (cached when it is the last one
  // asked). Rejects with AbortError when a newer run replaced it, or with the
  // server's error (err.status 404 also sets `unsupported`).
  run(q, offset = 0) {
    const same = (x) => x && x.query === q && x.offset === offset;
    if (same(this.result)) return Promise.resolve(this.result);
    if (same(this.pending)) return this.pending.promise;
    this.abort();
    const promise = this.fetch(q, offset);
    this.pending = { query: q, offset, promise };
    return promise;
  }

  async fetch(q, offset) {
    const ctrl = (this.ctrl = new AbortController());
    try {
      const params = offset ? { q, limit: this.limit, offset } : { q, limit: this.limit };
      const res = await getJSON(`/api/profiles/${encodeURIComponent(this.id)}/search${query(params)}`, { signal: ctrl.signal });
      this.result = normalizeSearch(q, res);
      return this.result;
    } catch (e) {
      if (e.status === 404) this.unsupported = true; // the profile itself exists: the timeline loaded it
      throw e;
    } finally {
      if (this.ctrl === ctrl) {
        this.ctrl = null;
        this.pending = null;
      }
    }
  }

  abort() {
    if (this.ctrl) this.ctrl.abort();
    this.ctrl = null;
    this.pending = null;
  }
  clear() {
    this.abort();
    this.result = null;
  }
}

// The server's answer: {match_count, offset, truncated, matches: [{start_us,
// dur_us, track, name, ref}]}. Sorted here too, so stepping never depends on it.
export function normalizeSearch(q, res) {
  const matches = [];
  for (const m of Array.isArray(res.matches) ? res.matches : []) {
    const s = Number(m.start_us);
    if (!Number.isFinite(s) || typeof m.track !== 'number') continue;
    const hasDur = typeof m.dur_us === 'number' && m.dur_us >= 0;
    matches.push({
      s,
      e: s + (hasDur ? m.dur_us : 0),
      name: String(m.name ?? ''),
      ref: m.ref ?? null,
      track: m.track,
      depth: -1,
      summary: false,
      count: 1,
      instant: !hasDur,
    });
  }
  matches.sort((a, b) => a.s - b.s || a.track - b.track);
  const offset = typeof res.offset === 'number' && res.offset > 0 ? res.offset : 0;
  const total = typeof res.match_count === 'number' ? res.match_count : offset + matches.length;
  return { query: q, offset, matches, total, truncated: !!res.truncated || total > offset + matches.length };
}

// The view [start, end] that shows a match: centred on it, the current width
// kept when the match already fits and is at least `minPx` pixels wide;
// zoomed in until it is when it is tiny, out when it is longer than the view.
export function viewForMatch(m, viewStart, viewEnd, widthPx, { minPx = 6, minSpanUs = 0.001 } = {}) {
  const w = viewEnd - viewStart;
  const d = m.e - m.s;
  let nw = w;
  if (d > w * 0.9)
    nw = d / 0.8; // longer than the view: zoom out so it fits with a margin
  else if (d > 0 && (d / w) * widthPx < minPx) nw = (d * widthPx) / minPx; // too thin to see
  nw = Math.max(nw, minSpanUs);
  const mid = m.s + d / 2;
  return [mid - nw / 2, mid + nw / 2];
}
