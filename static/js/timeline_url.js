// timeline_url.js — the timeline's address and its "this window" exports.
// The address (timeline_link.js) follows the view: the visible window, the
// selected event's ref, the pinned tracks and the highlighted step, written
// with history.replaceState (debounced) so reload or a shared link restores
// the view without the router mounting the page again or the history filling
// up. restoreSelection() selects an event named by its ref in such a link.
// The toolbar's "Download window" link and "Window in Perfetto" button ask
// the trace route for the events that overlap the visible window.
//
// Invariants: nothing is written before start() (the view a link asks for
// is applied first), and only while the address is this profile's timeline
// (the TensorBoard view mounts the timeline under its own address).

import { api, query } from './api.js';
import { timelineHash } from './timeline_link.js';
import { openInPerfetto } from './perfetto.js';

const WRITE_DEBOUNCE_MS = 250;

export function createUrl(tl) {
  const { st } = tl;
  const { windowDownload, windowPerfetto } = tl.dom;
  let timer = 0;
  let started = false;

  function start() {
    started = true;
    write();
  }

  function schedule() {
    if (!started) return;
    clearTimeout(timer);
    timer = setTimeout(write, WRITE_DEBOUNCE_MS);
  }

  function write() {
    windowDownload.href = windowTraceUrl();
    windowDownload.setAttribute('download', fileName());
    const base = `#/p/${encodeURIComponent(tl.id)}/timeline`;
    if (location.hash !== base && !location.hash.startsWith(`${base}?`)) return;
    const sel = st.selected && !st.selected.ev.summary ? st.selected.ev.ref : null;
    const hash = timelineHash(tl.id, {
      start_us: st.viewStart,
      end_us: st.viewEnd,
      sel: sel || undefined,
      pins: st.pins,
      step: st.stepSel ? st.stepSel.step : undefined,
    });
    if (hash !== location.hash) history.replaceState(history.state, '', hash);
  }

  // The window to export: the view, inside the profile.
  function windowTraceUrl() {
    const s = Math.max(st.viewStart, st.t0);
    const e = Math.max(Math.min(st.viewEnd, st.t1), s + 0.001);
    return api.traceUrl(tl.id) + query({ start_us: Math.floor(s * 1e3) / 1e3, end_us: Math.ceil(e * 1e3) / 1e3 });
  }

  function fileName() {
    const p = tl.profile;
    const base = (p.host || p.run || p.id || 'trace').replace(/[^\w.-]+/g, '_');
    return `${base}.window.trace.json.gz`;
  }

  // Selects the event `ref` names (asked of the server: it may be outside
  // the loaded window; `pending` is that answer when already asked for);
  // `focus` also moves the view to it. Resolves true once it is selected
  // (its details may still be on their way), false when it cannot be.
  async function restoreSelection(ref, focus, pending = null) {
    let r;
    try {
      const res = await (pending || api.event(tl.id, ref, { signal: tl.signal }));
      r = res.event || res;
    } catch (e) {
      if (e.name !== 'AbortError') tl.notify(`The linked event ${ref} is not in this profile: ${e.message}`);
      return false;
    }
    if (tl.signal.aborted || typeof r.track !== 'number' || typeof r.start_us !== 'number') return false;
    const hasDur = typeof r.dur_us === 'number';
    const ev = {
      s: r.start_us,
      e: r.start_us + (hasDur ? r.dur_us : 0),
      name: String(r.name ?? ''),
      ref,
      depth: -1,
      summary: false,
      count: 1,
      instant: !hasDur,
    };
    const t = st.byId.get(r.track);
    if (t && t.group.collapsed && !st.pins.includes(t.id)) {
      t.group.collapsed = false;
      tl.draw.layout();
      tl.tracks.updateCollapseButton();
    }
    if (focus) tl.view.focusEvent(ev);
    else tl.view.scheduleFetch(true);
    tl.details.select({ ev, track: r.track });
    if (st.data) tl.search.adoptSelected(st.data);
    return true;
  }

  windowPerfetto.addEventListener('click', () => {
    const p = tl.profile;
    openInPerfetto(windowTraceUrl(), `${p.host || p.run || p.id} (window)`, fileName(), tl.notify);
  });

  function stop() {
    clearTimeout(timer);
  }

  return { start, schedule, restoreSelection, windowTraceUrl, stop };
}
