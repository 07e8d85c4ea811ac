// timeline_view.js — the timeline's view [st.viewStart, st.viewEnd] in the
// profile's microsecond clock, the mapping between that clock and canvas
// pixels, and fetching the window of events that covers the view.
//
// Invariants: the view is only changed through set(), which clamps it (at
// least MIN_SPAN_US wide, at most 1.2 times the profile, never more than 10%
// of the profile past either end) and mirrors it in the canvas's
// data-view-start/-end. Only the visible window (plus a margin) is ever
// fetched, at about one event per device pixel (the server merges shorter
// events into summary spans); no request goes out while the loaded window
// still covers the view finely enough, requests are debounced, and a newer
// one aborts the older (EventFetcher, which also keeps the small LRU), as
// does a view that the loaded window covers again. The widest window loaded
// so far stays as st.backdrop, drawn where the view reaches past st.data, so
// a gesture redraws in its own frame from what the page has and the
// server's answer only refines it.

export const MIN_SPAN_US = 0.001;
const FETCH_DEBOUNCE_MS = 60;
const WINDOW_MARGIN = 0.25; // fetch 25% beyond each edge so small pans need no request
const MAX_RESOLUTION = 20000; // the events API's limit
const MAX_TRACKS_PARAM = 6000; // characters: the server caps URLs at 8 KB

// How far a loaded window's end may sit inside the view's and still cover
// it: 1 ns, or 4 ulps of the time where that is coarser.
function edgeSlack(t) {
  return Math.max(1e-3, Math.abs(t) * 4 * Number.EPSILON);
}

export function createView(tl) {
  const { st, fetcher, signal } = tl;
  const { canvas } = tl.dom;
  let fetchTimer = 0;

  const span = () => st.viewEnd - st.viewStart;
  const cssWidth = () => canvas.width / st.dpr;
  const xOf = (t) => ((t - st.viewStart) / span()) * cssWidth();
  const tOf = (x) => st.viewStart + (x / cssWidth()) * span();

  function set(s, e, { fetchNow = false } = {}) {
    const full = st.t1 - st.t0 || 1;
    let w = Math.min(Math.max(e - s, MIN_SPAN_US), full * 1.2);
    if (s < st.t0 - full * 0.1) s = st.t0 - full * 0.1;
    if (s + w > st.t1 + full * 0.1) s = st.t1 + full * 0.1 - w;
    st.viewStart = s;
    st.viewEnd = s + w;
    canvas.dataset.viewStart = String(st.viewStart);
    canvas.dataset.viewEnd = String(st.viewEnd);
    tl.draw.request();
    scheduleFetch(fetchNow);
    tl.counters.schedule();
    tl.url.schedule();
  }

  // Centres the event, zoomed so that it is clearly visible but keeps context.
  function focusEvent(ev) {
    const d = ev.e - ev.s;
    const w = Math.max(d * 3, span() > d * 50 ? d * 20 : span(), MIN_SPAN_US * 20);
    const mid = (ev.s + ev.e) / 2;
    set(mid - w / 2, mid + w / 2, { fetchNow: true });
  }

  // Is the loaded window enough for the current view (covers it, fine enough)?
  function dataCovers() {
    const d = st.data;
    if (!d) return false;
    const p = d.params;
    // The window's ends are rounded to the ns (round6): at the profile's edges they may sit within 1 ns inside,
    // or within a few ulps where times are epoch µs (1.7e15: a double holds them to 0.25 µs).
    const lo = Math.max(st.viewStart, st.t0);
    const hi = Math.min(st.viewEnd, st.t1);
    if (p.start_us > lo + edgeSlack(lo) || p.end_us < hi - edgeSlack(hi)) return false;
    const need = canvas.width / span();
    const have = p.resolution / (p.end_us - p.start_us);
    return have >= need * 0.9 && p.tracks === trackParam();
  }

  // The events API's `tracks`: the ones laid out (pinned, or in an expanded
  // process the filter shows), or undefined for all.
  function trackParam() {
    const ids = [];
    for (const r of st.rows) if (r.type === 'thread') ids.push(r.track.id);
    if (ids.length === st.byId.size) return undefined;
    const s = ids.join(',');
    return s.length > MAX_TRACKS_PARAM ? undefined : s;
  }

  // `now` skips the debounce (a jump, not a gesture in progress).
  function scheduleFetch(now) {
    clearTimeout(fetchTimer);
    if (!st.groups.length) return;
    if (dataCovers()) {
      // Back inside the loaded window: a request still out is for a view left behind.
      if (st.loading) {
        fetcher.abort();
        st.loading = false;
        tl.draw.setStatus();
      }
      return;
    }
    fetchTimer = setTimeout(fetchWindow, now ? 0 : FETCH_DEBOUNCE_MS);
  }

  async function fetchWindow() {
    const w = span();
    const s = Math.max(st.t0, st.viewStart - w * WINDOW_MARGIN);
    const e = Math.min(st.t1, st.viewEnd + w * WINDOW_MARGIN);
    if (!(e > s)) return;
    const params = {
      start_us: round6(s),
      end_us: round6(e),
      tracks: trackParam(),
      resolution: Math.min(MAX_RESOLUTION, Math.max(1, Math.round((canvas.width * (e - s)) / w))),
    };
    st.loading = true;
    tl.draw.setStatus();
    try {
      const data = await fetcher.fetch(params);
      if (signal.aborted) return;
      windowLoaded(data);
    } catch (e) {
      if (e.name === 'AbortError' || signal.aborted) return;
      st.loading = false;
      st.error = e.message;
      tl.draw.request();
    }
    tl.draw.setStatus();
    canvas.dataset.requests = String(fetcher.requests);
  }

  function windowLoaded(data) {
    st.data = data;
    const wide = (d) => d.params.end_us - d.params.start_us;
    if (!st.backdrop || wide(data) >= wide(st.backdrop)) st.backdrop = data;
    st.error = null;
    st.loading = false;
    tl.draw.growRows(data);
    tl.search.adoptSelected(data);
    if (st.query) tl.search.computeHits(false);
    tl.draw.request();
  }

  function stop() {
    clearTimeout(fetchTimer);
  }

  return { span, cssWidth, xOf, tOf, set, focusEvent, scheduleFetch, stop };
}

function round6(x) {
  return Math.round(x * 1e3) / 1e3;
}
