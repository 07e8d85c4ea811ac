// app.js — entry point: the hash router, the header (profile tabs, Perfetto
// hand-off, download link) and the start page chosen by the server's --ui
// mode. Routes:
//   #/profiles                 every profile
//   #/p/<id>/overview          summary cards and step chart
//   #/p/<id>/kernels           kernel table
//   #/p/<id>/timeline[?step=N] trace viewer
//   #/p/<id>/tools[/<tool>]    XProf's tools of the profile
//   #/tb[/<run>[/<tool>[/<host>]]]  the TensorBoard view (parts URL-encoded)
// Each page module exports mount(container, ctx) and returns a cleanup
// function that stops its timers and requests. Pages import shared modules
// (api, format, chart, states, ...), never one another, so that changing one
// page cannot break another; the TensorBoard view shows the timeline as its
// Trace Viewer because this router hands it the page (ctx.toolPages).

import { api, ApiError } from './api.js';
import { h, fmtBytes } from './format.js';
import { openInPerfetto } from './perfetto.js';
import { stateView, pendingView } from './states.js';
import * as profilesPage from './profiles.js';
import * as overviewPage from './overview.js';
import * as kernelsPage from './kernels.js';
import * as timelinePage from './timeline.js';
import * as toolsPage from './tools.js';
import * as tensorboardPage from './tensorboard.js';
import * as memoryPage from './memory.js';
import * as hloPage from './hlo.js';

const PAGES = {
  overview: overviewPage,
  kernels: kernelsPage,
  timeline: timelinePage,
  tools: toolsPage,
  memory: memoryPage,
  hlo: hloPage,
};
const TOOL_PAGES = { trace_viewer: timelinePage };
const view = document.getElementById('view');
let cleanup = null;
let routeSeq = 0;
let currentProfile = null;

// The server's --ui mode, asked once: it picks the start page, and whether
// the TensorBoard routes (and so the TensorBoard view) exist.
let uiMode = null;
function uiModeOnce() {
  if (!uiMode)
    uiMode = api.health().then(
      (hl) => hl.ui || hl.ui_mode || 'both',
      () => {
        uiMode = null; // the server may come back: ask again next time
        return 'both';
      },
    );
  return uiMode;
}
uiModeOnce().then((mode) => {
  document.getElementById('tb-link').hidden = mode === 'perfetto';
});

export function notify(msg, ms = 6000) {
  const t = document.getElementById('toast');
  t.textContent = msg;
  t.hidden = false;
  clearTimeout(notify.timer);
  notify.timer = setTimeout(() => {
    t.hidden = true;
  }, ms);
}

function parseHash() {
  const raw = location.hash.replace(/^#\/?/, '');
  const [path, qs] = raw.split('?');
  const parts = path.split('/').filter(Boolean).map(decodeURIComponent);
  return { parts, params: new URLSearchParams(qs || '') };
}

function setHeader(profile, page) {
  const tabs = document.getElementById('tabs');
  const actions = document.getElementById('profile-actions');
  const title = document.getElementById('profile-title');
  currentProfile = profile;
  tabs.hidden = !profile;
  actions.hidden = !profile;
  title.replaceChildren();
  if (!profile) return;
  for (const a of tabs.querySelectorAll('a')) {
    a.href = `#/p/${encodeURIComponent(profile.id)}/${a.dataset.page}`;
    if (a.dataset.page === page) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
  title.append(
    h('b', null, profileName(profile)),
    '  ·  ',
    [profile.format, profile.producer, fmtBytes(profile.size_bytes)].filter(Boolean).join(' · '),
  );
  title.title = profile.path || '';
  const dl = document.getElementById('download-trace');
  dl.href = api.traceUrl(profile.id);
  dl.setAttribute('download', traceFileName(profile));
}

export function profileName(p) {
  const parts = [p.run, p.host].filter((x) => x && x !== '.');
  if (parts.length) return parts.join(' / ');
  return (p.path || p.id || '').split('/').pop();
}

function traceFileName(p) {
  const base = (p.host || p.run || p.id || 'trace').replace(/[^\w.-]+/g, '_');
  return `${base}.trace.json.gz`;
}

document.getElementById('open-perfetto').addEventListener('click', () => {
  if (!currentProfile) return;
  const p = currentProfile;
  openInPerfetto(api.traceUrl(p.id), profileName(p), traceFileName(p), notify);
});

async function startPage(seq) {
  // --ui decides where a bare URL lands: perfetto -> the latest profile's
  // timeline, tensorboard -> the TensorBoard view (it picks the newest run),
  // both -> the profile list. A health error lands on the list, which shows it.
  const mode = await uiModeOnce();
  if (seq !== routeSeq) return;
  if (mode === 'tensorboard') {
    location.replace('#/tb');
    return;
  }
  const page = mode === 'perfetto' ? 'timeline' : null;
  if (page) {
    try {
      const latest = await api.latest();
      if (seq !== routeSeq) return;
      location.replace(`#/p/${encodeURIComponent(latest.id)}/${page}`);
      return;
    } catch {
      /* no profile yet: fall through to the list */
    }
  }
  if (seq === routeSeq) location.replace('#/profiles');
}

async function route() {
  const seq = ++routeSeq;
  if (cleanup) {
    cleanup();
    cleanup = null;
  }
  const { parts, params } = parseHash();
  view.classList.remove('fill');
  const tbLink = document.getElementById('tb-link');
  if (parts[0] === 'tb') tbLink.setAttribute('aria-current', 'page');
  else tbLink.removeAttribute('aria-current');
  if (parts.length === 0) {
    setHeader(null);
    view.replaceChildren();
    return startPage(seq);
  }
  if (parts[0] === 'profiles') {
    setHeader(null);
    document.title = 'Profiles · xprof-view';
    cleanup = profilesPage.mount(view, { notify });
    return;
  }
  if (parts[0] === 'tb') {
    setHeader(null);
    document.title = 'TensorBoard · xprof-view';
    view.classList.add('fill');
    const ui = await uiModeOnce();
    if (seq !== routeSeq) return;
    cleanup = tensorboardPage.mount(view, { parts: parts.slice(1), notify, toolPages: TOOL_PAGES, ui });
    return;
  }
  if (parts[0] === 'p' && parts[1]) {
    const id = parts[1];
    const pageName = PAGES[parts[2]] ? parts[2] : 'overview';
    return mountProfilePage(seq, id, pageName, params, parts[3]);
  }
  setHeader(null);
  view.replaceChildren(
    stateView(
      'Page not found',
      'There is no page at this address.',
      'error',
      h('a', { href: '#/profiles' }, 'Go to all profiles'),
    ),
  );
}

async function mountProfilePage(seq, id, pageName, params, sub) {
  let stopped = false;
  let timer = null;
  cleanup = () => {
    stopped = true;
    clearTimeout(timer);
  };
  if (!currentProfile || currentProfile.id !== id) view.replaceChildren(stateView('Loading profile…', '', 'loading'));
  const load = async () => {
    let profile;
    try {
      profile = await api.profile(id);
    } catch (e) {
      if (stopped || seq !== routeSeq) return;
      setHeader(null);
      const status = e instanceof ApiError ? e.status : 0;
      const missing = status === 404 || status === 400;
      view.replaceChildren(
        stateView(
          missing ? 'No such profile' : 'Cannot load this profile',
          e.message,
          'error',
          h('a', { href: '#/profiles' }, 'Go to all profiles'),
        ),
      );
      // Retry only when the server may come back (down, or a server error).
      if (status === 0 || status >= 500) timer = setTimeout(load, 3000);
      return;
    }
    if (stopped || seq !== routeSeq) return;
    setHeader(profile, pageName);
    document.title = `${pageName[0].toUpperCase()}${pageName.slice(1)} · ${profileName(profile)} · xprof-view`;
    if (profile.status === 'pending' || profile.status === 'indexing') {
      view.replaceChildren(await pendingView(profile));
      timer = setTimeout(load, 1500);
      return;
    }
    if (profile.status === 'error') {
      view.replaceChildren(
        stateView(
          'This profile could not be read',
          profile.error || 'Unknown error',
          'error',
          h('a', { href: '#/profiles' }, 'Go to all profiles'),
        ),
      );
      return;
    }
    if (pageName === 'timeline') view.classList.add('fill');
    const ui = pageName === 'tools' ? await uiModeOnce() : null;
    if (stopped || seq !== routeSeq) return;
    const pageCleanup = PAGES[pageName].mount(view, { id, profile, params, notify, sub, ui });
    cleanup = () => {
      stopped = true;
      clearTimeout(timer);
      if (pageCleanup) pageCleanup();
    };
  };
  await load();
}

window.addEventListener('hashchange', route);
route();
