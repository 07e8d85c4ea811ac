// timeline_tracks.js — which tracks the timeline shows, and in what order:
// pinned tracks first (in pin order, under a "Pinned" header, and no longer
// in their own process), then the processes with devices ahead of the host,
// each with the tracks that match the toolbar's track filter. The toolbar's
// filter box and collapse/expand-all button live here.
//
// Invariants: st.pins (track ids, in pin order) and st.trackFilter (lower
// case) are only changed here; every change lays the rows out again, asks
// for the window of the tracks now shown and updates the address (tl.url).
// A process whose name matches the filter shows all its tracks; one with no
// matching track is hidden.

const FILTER_DEBOUNCE_MS = 150;

// Devices first, the rest in the server's order (the sort is stable).
export function orderDevicesFirst(groups) {
  return groups.sort((a, b) => (a.device === null ? 1 : 0) - (b.device === null ? 1 : 0));
}

export function pinnedTracks(st) {
  return st.pins.map((id) => st.byId.get(id)).filter(Boolean);
}

// The tracks of process `g` shown in it, or null when the filter hides it.
export function shownTracks(st, g) {
  const f = st.trackFilter;
  const groupMatches = !f || g.name.toLowerCase().includes(f);
  const list = g.tracks.filter((t) => !st.pins.includes(t.id) && (groupMatches || t.name.toLowerCase().includes(f)));
  if (f && !list.length) return null;
  return list;
}

export function createTracks(tl) {
  const { st } = tl;
  const { trackFilter, collapseAll } = tl.dom;
  let timer = 0;

  function relayout() {
    tl.draw.layout();
    tl.view.scheduleFetch(true);
    updateCollapseButton();
    tl.url.schedule();
  }

  function setPins(ids) {
    st.pins = ids.filter((id) => st.byId.has(id));
  }

  function togglePin(id) {
    st.pins = st.pins.includes(id) ? st.pins.filter((x) => x !== id) : st.pins.concat(id);
    relayout();
  }

  // Collapses every shown process when any is expanded, else expands them all.
  function toggleAll() {
    const shown = st.groups.filter((g) => shownTracks(st, g));
    const collapse = shown.some((g) => !g.collapsed);
    for (const g of st.groups) g.collapsed = collapse;
    relayout();
  }

  function updateCollapseButton() {
    const shown = st.groups.filter((g) => shownTracks(st, g));
    const anyOpen = shown.some((g) => !g.collapsed);
    collapseAll.textContent = anyOpen ? 'Collapse all' : 'Expand all';
    collapseAll.dataset.action = anyOpen ? 'collapse' : 'expand';
  }

  trackFilter.addEventListener('input', () => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      st.trackFilter = trackFilter.value.trim().toLowerCase();
      relayout();
    }, FILTER_DEBOUNCE_MS);
  });
  trackFilter.addEventListener('keydown', (e) => {
    if (e.key !== 'Escape') return;
    e.preventDefault();
    trackFilter.value = '';
    trackFilter.dispatchEvent(new Event('input'));
  });
  collapseAll.addEventListener('click', toggleAll);

  function stop() {
    clearTimeout(timer);
  }

  return { setPins, togglePin, toggleAll, updateCollapseButton, stop };
}
