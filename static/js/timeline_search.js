// timeline_search.js — the toolbar search of the timeline: the query box,
// previous/next, and the label saying where in the matches one is.
//
// The server finds matches anywhere in the profile (st.found, one page of
// ProfileSearch at a time, st.foundIdx counting over the whole search);
// loaded events whose name matches (st.hits) are outlined either way.
// Without a server search (404, error) next/previous step through st.hits,
// and the label says so.
//
// Invariants: st.query is the query the label and outlines describe; an
// answer for an older query, or one arriving after unmount, is dropped.
// The label's data-mode ("profile" or "window"), data-index (1-based, 0
// before the first step) and data-total are what the browser tests read.

import { fmtCount } from './format.js';
import { viewForMatch } from './search.js';
import { MIN_SPAN_US } from './timeline_view.js';

const SEARCH_DEBOUNCE_MS = 300;
const MATCH_MIN_PX = 6; // a match shown by search is zoomed to at least this wide
const NO_SERVER_SEARCH = 'This server cannot search the whole profile.';

export function createSearch(tl) {
  const { st, searcher, signal } = tl;
  const { searchBox, hitsLabel } = tl.dom;
  let typingTimer = 0;
  const stale = (q) => signal.aborted || st.query !== q;

  // Outlines the loaded events that match; `reset` forgets the current one.
  function computeHits(reset) {
    const q = st.query.toLowerCase();
    const keep = !reset && st.hitIdx >= 0 ? st.hits[st.hitIdx] : null;
    st.hits = [];
    if (q && st.data) {
      for (const [track, list] of st.data.byTrack) {
        for (const ev of list) if (!ev.summary && ev.name.toLowerCase().includes(q)) st.hits.push({ ev, track });
      }
      st.hits.sort((a, b) => a.ev.s - b.ev.s);
    }
    st.hitIdx = keep ? st.hits.findIndex((x) => x.ev.s === keep.ev.s && x.track === keep.track) : -1;
    if (!st.found) showHitsLabel();
    tl.draw.request();
  }

  function showHitsLabel() {
    const f = st.found;
    hitsLabel.dataset.mode = f ? 'profile' : 'window';
    hitsLabel.dataset.total = f ? String(f.total) : String(st.hits.length);
    hitsLabel.dataset.index = String(f ? st.foundIdx + 1 : st.hitIdx + 1);
    hitsLabel.title = st.searchNote;
    hitsLabel.textContent = !st.query ? '' : f ? profileHitsText(f) : windowHitsText();
  }

  function profileHitsText(f) {
    if (!f.total) return 'no match';
    return st.foundIdx >= 0
      ? `${fmtCount(st.foundIdx + 1)} of ${fmtCount(f.total)}`
      : `${fmtCount(f.total)} ${f.total === 1 ? 'match' : 'matches'}`;
  }

  function windowHitsText() {
    if (!st.hits.length) return 'no match in the loaded window';
    return `${st.hitIdx >= 0 ? st.hitIdx + 1 : 0} of ${fmtCount(st.hits.length)} (loaded window only)`;
  }

  // Makes `q` the current query; resolves once the server answered (or
  // failed, leaving the loaded-window search).
  async function runSearch(q) {
    if (q === st.query && (st.found || !searcher.pending)) return;
    st.query = q;
    st.found = null;
    st.foundIdx = -1;
    st.searchNote = '';
    computeHits(true);
    if (!q) {
      searcher.clear();
      return;
    }
    if (searcher.unsupported) {
      st.searchNote = NO_SERVER_SEARCH;
      showHitsLabel();
      return;
    }
    hitsLabel.textContent = 'Searching…';
    try {
      const res = await searcher.run(q);
      if (stale(q)) return;
      st.found = res;
    } catch (e) {
      if (e.name === 'AbortError' || stale(q)) return;
      st.searchNote = searcher.unsupported ? NO_SERVER_SEARCH : `Search across the profile failed: ${e.message}`;
    }
    showHitsLabel();
  }

  // Steps to the next (dir 1) or previous (dir -1) match of what is typed.
  async function gotoHit(dir) {
    const q = searchBox.value.trim();
    clearTimeout(typingTimer);
    await runSearch(q);
    if (stale(q)) return;
    if (st.found) await gotoFound(q, dir);
    else gotoLoadedHit(dir);
  }

  async function gotoFound(q, dir) {
    const n = st.found.total;
    if (!n) return;
    const idx = st.foundIdx < 0 && dir < 0 ? n - 1 : (st.foundIdx + dir + n) % n;
    const page = await pageHolding(q, idx, dir);
    if (!page) return;
    st.foundIdx = idx;
    showHitsLabel();
    showMatch(page.matches[idx - page.offset]);
  }

  function gotoLoadedHit(dir) {
    if (!st.hits.length) return;
    st.hitIdx = (st.hitIdx + dir + st.hits.length) % st.hits.length;
    showHitsLabel();
    const hit = st.hits[st.hitIdx];
    revealTrack(hit.track);
    if (hit.ev.s < st.viewStart || hit.ev.e > st.viewEnd) tl.view.focusEvent(hit.ev);
    tl.details.select(hit);
  }

  // The page of the search that holds match `idx` (asked of the server when it
  // is not the one loaded), or null when the query changed or the page failed.
  async function pageHolding(q, idx, dir) {
    const holds = (page) => idx >= page.offset && idx < page.offset + page.matches.length;
    if (holds(st.found)) return st.found;
    hitsLabel.textContent = 'Searching…';
    try {
      let page = await searcher.run(q, searcher.pageOf(idx, dir));
      // A server with a smaller page than ours: ask from the match itself.
      if (!holds(page) && page.offset !== idx && !stale(q)) page = await searcher.run(q, idx);
      if (stale(q)) return null;
      if (!holds(page)) throw new Error('the server did not send it');
      st.found = page;
      return page;
    } catch (e) {
      if (e.name === 'AbortError' || stale(q)) return null;
      showHitsLabel();
      hitsLabel.title = `Loading match ${fmtCount(idx + 1)} failed: ${e.message}`;
      return null;
    }
  }

  // Expands the track's process group when collapsed and scrolls it into view.
  function revealTrack(trackId) {
    const { scroller } = tl.dom;
    const t = st.byId.get(trackId);
    if (t && t.group.collapsed) {
      t.group.collapsed = false;
      tl.draw.layout();
      tl.view.scheduleFetch(true);
    }
    const row = tl.draw.rowOfTrack(trackId);
    if (row && (row.y < scroller.scrollTop || row.y > scroller.scrollTop + scroller.clientHeight - row.h))
      scroller.scrollTop = row.y - 40;
  }

  function showMatch(m) {
    revealTrack(m.track);
    const [s, e] = viewForMatch(m, st.viewStart, st.viewEnd, tl.view.cssWidth(), { minPx: MATCH_MIN_PX, minSpanUs: MIN_SPAN_US });
    tl.view.set(s, e, { fetchNow: true });
    tl.details.select({ ev: { ...m }, track: m.track });
    if (st.data) adoptSelected(st.data); // the loaded window may hold it already
  }

  // A selected search match has no depth; once the window holding it has
  // loaded, its drawn twin (with its depth) takes its place.
  function adoptSelected(data) {
    const sel = st.selected;
    if (!sel || sel.ev.depth >= 0) return;
    const list = data.byTrack.get(sel.track) || [];
    const twin = list.find(
      (x) => !x.summary && (sel.ev.ref !== null ? x.ref === sel.ev.ref : x.s === sel.ev.s && x.name === sel.ev.name),
    );
    if (twin) sel.ev = twin;
  }

  function clearSearch() {
    clearTimeout(typingTimer);
    searchBox.value = '';
    runSearch('');
  }

  searchBox.addEventListener('input', () => {
    clearTimeout(typingTimer);
    typingTimer = setTimeout(() => runSearch(searchBox.value.trim()), SEARCH_DEBOUNCE_MS);
  });
  searchBox.addEventListener('keydown', (e) => {
    if (e.key === 'Enter') {
      e.preventDefault();
      gotoHit(e.shiftKey ? -1 : 1);
    } else if (e.key === 'Escape') {
      e.preventDefault();
      clearSearch();
    }
  });
  tl.dom.nextBtn.addEventListener('click', () => gotoHit(1));
  tl.dom.prevBtn.addEventListener('click', () => gotoHit(-1));

  function stop() {
    clearTimeout(typingTimer);
    searcher.abort();
  }

  return { computeHits, adoptSelected, stop };
}
