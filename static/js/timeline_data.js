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
      g = { key, pid, name: str(proc.name, proc.process_name, t.process_name) || `Process ${pid}`,
        sort: num(proc.sort, proc.sort_index, proc.process_sort, t.process_sort) ?? Number(pid) ?? 0,
        device: deviceId ?? null, tracks: [], events: 0, collapsed: false };
      groups.set(key, g);
    }
    const id = num(t.id, t.track, t.track_id);
    if (id === undefined) return;
    const tid = num(t.tid) ?? str(t.tid);
    const track = { id, tid, group: g, name: str(t.name, t.thread_name) || (tid !== undefined ? `Thread ${tid}` : `Track ${id}`),
      sort: num(t.sort, t.sort_index, t.thread_sort) ?? 0, events: num(t.events, t.event_count) ?? null,
      maxDepth: Math.max(0, (num(t.max_depth, t.depth) ?? 1) - 1), kind: t.kind || null };
    g.tracks.push(track);
    g.events += track.events || 0;
  };
  if (Array.isArray(res.processes)) {
    for (const p of res.processes) for (const t of p.threads || p.tracks || []) addTrack(p, t);
  } else {
    for (const t of res.tracks || []) addTrack({}, t);
  }
  const list = [...groups.values()];
  const order = (a, b) => (a.sort - b.sort) || String(a.name).localeCompare(String(b.name), undefined, { numeric: true });
  list.sort(order);
  for (const g of list) g.tracks.sort((a, b) => (a.sort - b.sort) || String(a.name).localeCompare(String(b.name), undefined, { numeric: true }));
  return list;
}

// Accepts {events: [...], summaries: [...]} with per-event track ids, or
// {tracks: [{track|id, events, summaries}]}; names may be strings or
// indices into a `strings` array. Returns Map(trackId -> spans[]).
export function normalizeEvents(res) {
  const out = new Map();
  const strings = Array.isArray(res.strings) ? res.strings : null;
  const nameOf = (v) => (typeof v === 'number' && strings ? strings[v] : v) ?? '';
  const push = (trackId, ev, summary) => {
    const s = num(ev.ts_us, ev.start_us, ev.ts, ev.s);
    if (s === undefined) return;
    let e = num(ev.end_us, ev.e);
    if (e === undefined) e = s + Math.max(0, num(ev.dur_us, ev.dur, ev.duration_us) ?? 0);
    const count = num(ev.count, ev.n) ?? 1;
    const isSummary = summary || ev.summary === true || ev.type === 'summary' || ev.ph === 'summary' || ev.merged === true;
    let list = out.get(trackId);
    if (!list) out.set(trackId, (list = []));
    list.push({ s, e, name: String(nameOf(ev.name) ?? ''), ref: ev.ref ?? ev.id ?? null, depth: num(ev.depth, ev.level) ?? -1,
      summary: isSummary, count, instant: num(ev.dur_us, ev.dur) === undefined && e === s && !isSummary,
      busy: num(ev.busy_us) ?? null, cat: ev.cat ?? null });
  };
  const trackOf = (ev, fallback) => num(ev.track, ev.track_id, ev.tid_track) ?? fallback;
  if (Array.isArray(res.tracks) && res.tracks.length && typeof res.tracks[0] === 'object') {
    for (const t of res.tracks) {
      const id = num(t.track, t.id, t.track_id);
      for (const ev of t.events || []) push(id, ev, false);
      for (const ev of t.summaries || t.spans || []) push(id, ev, true);
    }
  }
  for (const ev of res.events || []) push(trackOf(ev), ev, false);
  for (const ev of res.summaries || res.spans || []) push(trackOf(ev), ev, true);
  for (const list of out.values()) assignDepths(list);
  return out;
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

  key(p) { return `${p.start_us}|${p.end_us}|${p.resolution}|${p.tracks || ''}`; }

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
    const data = { params, byTrack: normalizeEvents(res), truncated: !!res.truncated, raw: { count: res.count ?? null } };
    this.lru.set(k, data);
    while (this.lru.size > LRU_SIZE) this.lru.delete(this.lru.keys().next().value);
    return data;
  }

  abort() { if (this.ctrl) this.ctrl.abort(); this.ctrl = null; }
  clear() { this.abort(); this.lru.clear(); }
}
