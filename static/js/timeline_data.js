// timeline_data.js — the timeline's data side: turns the tracks and events
// API answers into the shapes the renderer draws, and fetches windows of
// events with a small LRU (so memory stays bounded however long one zooms
// around) and cancellation of stale requests.
//
// Tracks become groups (one per process: the host, each device) of thread
// or stream tracks. Events become, per track, arrays of spans
// {s, e, name, ref, depth, summary, count} in microseconds, sorted by start;
// depth is computed here when the server does not send it.

import { api } from './api.js';

const LRU_SIZE = 4;

const num = (...vals) => vals.find((v) => typeof v === 'number' && Number.isFinite(v));
const str = (...vals) => vals.find((v) => typeof v === 'string' && v !== '');

// Accepts {tracks: [flat rows]} or {processes: [{..., threads: [...]}]}.
export function normalizeTracks(res) {
  const groups = new Map();
  const addTrack = (proc, t) => {
    const pid = num(proc.pid, t.pid) ?? str(proc.pid, t.pid) ?? 0;
    const key = String(pid);
    let g = groups.get(key);
    if (!g) {
      const deviceId = num(proc.device_id, t.device_id, proc.device);
      // title: the server's name that tells processes apart (Kineto calls host and GPUs "python")
      g = {
        key,
        pid,
        name: str(proc.title, proc.name, proc.process_name, t.process_name) || `Process ${pid}`,
        sort: num(proc.sort, proc.sort_index, proc.process_sort, t.process_sort) ?? Number(pid) ?? 0,
        device: deviceId ?? null,
        labels: proc.labels || null,
        tracks: [],
        events: 0,
        collapsed: false,
      };
      groups.set(key, g);
    }
    const id = num(t.id, t.track, t.track_id);
    if (id === undefined) return;
    const tid = num(t.tid) ?? str(t.tid);
    const track = {
      id,
      tid,
      group: g,
      name: str(t.name, t.thread_name) || (tid !== undefined ? `Thread ${tid}` : `Track ${id}`),
      sort: num(t.sort, t.sort_index, t.thread_sort) ?? 0,
      events: num(t.events, t.event_count) ?? null,
      maxDepth: Math.max(0, (num(t.max_depth, t.depth) ?? 1) - 1),
      kind: t.kind || null,
      // 'steps' | 'xla_modules' | 'xla_ops': a row the server derives from the device's kernels
      derived: t.derived || null,
    };
    g.tracks.push(track);
    g.events += track.events || 0;
  };
  if (Array.isArray(res.processes)) {
    for (const p of res.processes) for (const t of p.threads || p.tracks || []) addTrack(p, t);
  } else {
    for (const t of res.tracks || []) addTrack({}, t);
  }
  const list = [...groups.values()];
  const order = (a, b) => a.sort - b.sort || String(a.name).localeCompare(String(b.name), undefined, { numeric: true });
  // The processes shape comes in display order already; flat rows are sorted here.
  if (!Array.isArray(res.processes)) {
    list.sort(order);
    for (const g of list) g.tracks.sort(order);
  }
  return list;
}

// The server's answer (api/api.h): {tracks: [{id, max_depth,
//   events: [[start_us, dur_us, name, depth, ref]],
//   spans:  [[start_us, end_us, count, name|-1, depth]]}], names: [...]}.
// Object-shaped events ({ts_us, dur_us, name, ref, ...}) are accepted too.
// Returns Map(trackId -> spans[]) and each track's max_depth.
export function normalizeEvents(res) {
  const out = new Map();
  const depths = new Map();
  const names = Array.isArray(res.names) ? res.names : Array.isArray(res.strings) ? res.strings : null;
  const nameOf = (v) => (typeof v === 'number' ? (v >= 0 && names ? (names[v] ?? '') : '') : (v ?? ''));
  const listOf = (id) => {
    let list = out.get(id);
    if (!list) out.set(id, (list = []));
    return list;
  };
  const pushObj = (trackId, ev, summary) => {
    const s = num(ev.ts_us, ev.start_us, ev.ts, ev.s);
    if (s === undefined) return;
    let e = num(ev.end_us, ev.e);
    const dur = num(ev.dur_us, ev.dur, ev.duration_us);
    if (e === undefined) e = s + Math.max(0, dur ?? 0);
    const isSummary = summary || ev.summary === true || ev.type === 'summary';
    listOf(trackId).push({
      s,
      e,
      name: String(nameOf(ev.name)),
      ref: ev.ref ?? null,
      depth: num(ev.depth) ?? -1,
      summary: isSummary,
      count: num(ev.count) ?? 1,
      instant: !isSummary && e === s && dur === undefined,
    });
  };
  if (Array.isArray(res.tracks)) {
    for (const t of res.tracks) {
      const id = num(t.id, t.track, t.track_id);
      if (id === undefined) continue;
      if (typeof t.max_depth === 'number') depths.set(id, t.max_depth);
      const list = listOf(id);
      for (const ev of t.events || []) {
        if (!Array.isArray(ev)) {
          pushObj(id, ev, false);
          continue;
        }
        const [s, dur, name, depth, ref] = ev;
        list.push({
          s,
          e: s + Math.max(0, dur ?? 0),
          name: String(nameOf(name)),
          ref: ref ?? null,
          depth: typeof depth === 'number' ? depth : -1,
          summary: false,
          count: 1,
          instant: dur === null || dur === undefined,
        });
      }
      for (const sp of t.spans || t.summaries || []) {
        if (!Array.isArray(sp)) {
          pushObj(id, sp, true);
          continue;
        }
        const [s, e, count, name, depth] = sp;
        list.push({
          s,
          e,
          name: String(nameOf(name)),
          ref: null,
          depth: typeof depth === 'number' ? depth : -1,
          summary: true,
          count: count ?? 1,
          instant: false,
        });
      }
    }
  }
  const trackOf = (ev) => num(ev.track, ev.track_id);
  for (const ev of res.events || []) pushObj(trackOf(ev), ev, false);
  for (const ev of res.summaries || res.spans || []) pushObj(trackOf(ev), ev, true);
  for (const list of out.values()) assignDepths(list);
  return { byTrack: out, depths };
}

// Sorts by start (longer first on ties) and gives each span the nesting depth
// it would have on a stack, unless the server already sent one.
function assignDepths(list) {
  list.sort((a, b) => a.s - b.s || b.e - a.e);
  if (list.every((x) => x.depth >= 0)) return;
  const stack = [];
  for (const x of list) {
    while (stack.length && stack[stack.length - 1] <= x.s) stack.pop();
    if (x.depth < 0) x.depth = stack.length;
    if (x.e > x.s) stack.push(x.e);
  }
}

// Fetches event windows; keeps the last few answers (LRU) and cancels any
// request a newer one replaces.
export class EventFetcher {
  constructor(profileId) {
    this.id = profileId;
    this.lru = new Map();
    this.ctrl = null;
    this.requests = 0;
  }

  key(p) {
    return `${p.start_us}|${p.end_us}|${p.resolution}|${p.tracks || ''}`;
  }

  async fetch(params) {
    const k = this.key(params);
    if (this.lru.has(k)) {
      const hit = this.lru.get(k);
      this.lru.delete(k);
      this.lru.set(k, hit);
      return hit;
    }
    if (this.ctrl) this.ctrl.abort();
    const ctrl = (this.ctrl = new AbortController());
    this.requests++;
    const res = await api.events(this.id, params, { signal: ctrl.signal });
    if (this.ctrl === ctrl) this.ctrl = null;
    const { byTrack, depths } = normalizeEvents(res);
    const data = { params, byTrack, depths, truncated: !!res.truncated };
    this.lru.set(k, data);
    while (this.lru.size > LRU_SIZE) this.lru.delete(this.lru.keys().next().value);
    return data;
  }

  abort() {
    if (this.ctrl) this.ctrl.abort();
    this.ctrl = null;
  }
  clear() {
    this.abort();
    this.lru.clear();
  }
}

// The index of the first span of `list` (sorted by start) that ends at or
// after `t`: a binary search over the running maximum of the ends, kept on
// the list (lists are never changed once loaded), so a frame skips what lies
// before the view without a pass over it.
export function firstEndingAfter(list, t) {
  let ends = list.endMax;
  if (!ends || ends.length !== list.length) {
    ends = new Float64Array(list.length);
    let m = -Infinity;
    for (let i = 0; i < list.length; i++) ends[i] = m = Math.max(m, list[i].e);
    list.endMax = ends;
  }
  let lo = 0,
    hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (ends[mid] < t) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
