// live.js — one connection to the server's event stream (/api/stream,
// Server-Sent Events) shared by every page: `profile-added`,
// `profile-updated`, `profile-removed`, `index-progress`, and `hello` /
// `reset` (refetch: on connecting, and when events were missed). The
// browser reconnects by itself and sends Last-Event-ID, so nothing is lost.
// Without EventSource, or when the stream keeps failing, it falls back to
// asking /api/health every few seconds and says `reset` when it changed.

const TYPES = ['hello', 'reset', 'profile-added', 'profile-updated', 'profile-removed', 'index-progress'];
const FALLBACK_MS = 3000;
const RETRY_STREAM_MS = 30000;

const listeners = new Set();
let source = null;
let fallbackTimer = null;
let failures = 0;

// Calls fn(type, data) for every event until the returned function is called.
export function onLive(fn) {
  listeners.add(fn);
  connect();
  return () => listeners.delete(fn);
}

// 'stream', 'polling' or 'off' (for tests and the status line).
export function liveMode() {
  return source ? 'stream' : fallbackTimer ? 'polling' : 'off';
}

function emit(type, data) {
  for (const fn of [...listeners]) {
    try {
      fn(type, data);
    } catch (e) {
      console.error(e);
    }
  }
}

function connect() {
  if (source || fallbackTimer) return;
  if (typeof EventSource === 'undefined') return fallback();
  source = new EventSource('/api/stream');
  for (const type of TYPES) {
    source.addEventListener(type, (ev) => {
      failures = 0;
      let data = null;
      try {
        data = JSON.parse(ev.data);
      } catch {
        /* an event without data still means "look again" */
      }
      emit(type, data);
    });
  }
  source.onerror = () => {
    // EventSource retries by itself (readyState CONNECTING); give up on it
    // when the server refuses the stream or it fails again and again.
    failures++;
    if (source.readyState === EventSource.CLOSED || failures > 5) {
      source.close();
      source = null;
      fallback();
    }
  };
}

function fallback() {
  let last = null;
  const started = Date.now();
  const tick = async () => {
    try {
      const res = await fetch('/api/health');
      const h = await res.json();
      const key = JSON.stringify([h.profiles, h.status_counts, h.indexing && h.indexing.runs]);
      if (last !== null && key !== last) emit('reset', null);
      if (h.indexing && h.indexing.active) emit('index-progress', h.indexing);
      last = key;
    } catch {
      /* server away: try again */
    }
    if (typeof EventSource !== 'undefined' && Date.now() - started > RETRY_STREAM_MS) {
      fallbackTimer = null;
      failures = 0;
      if (listeners.size) connect();
      return;
    }
    fallbackTimer = setTimeout(tick, FALLBACK_MS);
  };
  fallbackTimer = setTimeout(tick, FALLBACK_MS);
}
