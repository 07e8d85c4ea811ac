// app.js — entry point: the hash router, the header (profile tabs, Perfetto
// hand-off, download link) and the start page chosen by the server's --ui
// mode. Routes:
//   #/profiles                 every profile
//   #/p/<id>/overview          summary cards and step chart
//   #/p/<id>/kernels           kernel table
//   #/p/<id>/timeline[?step=N] trace viewer
//   #/p/<id>/tools[/<tool>]    XProf's tools of the profile
//   #/tb[/<run>[/<tool>[/<host>]]]  the TensorBoard view (parts URL-encoded)
//   #/compare/<a>[/<b>]        profile b against profile a ("Compare with…")
// Each page module exports mount(container, ctx) and returns a cleanup
// function that stops its timers and requests. Pages import shared modules
// (api, format, chart, states, ...), never one another, so that changing one
// page cannot break another; the TensorBoard view shows the timeline as its
// Trace Viewer because this router hands it the page (ctx.toolPages).
// The server's event stream (live.js) drives "Follow latest" and
// --ui=perfetto's wait for a first capture; a pending profile's page
// reloads when its indexing ends.

import { api, ApiError } from './api.js';
import { h, fmtBytes, fmtCount, fmtN } from './format.js';
import { openInPerfetto } from './perfetto.js';
import { stateView, pendingView } from './states.js';
import { onLive } from './live.js';
import * as profilesPage from './profiles.js';
import * as overviewPage from './overview.js';
import * as kernelsPage from './kernels.js';
import * as timelinePage from './timeline.js';
import * as toolsPage from './tools.js';
import * as tensorboardPage from './tensorboard.js';
import * as memoryPage from './memory.js';
import * as hloPage from './hlo.js';
import * as comparePage from './compare.js';

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
let currentPage = null;
let uiModeValue = null; // once known
let waitingForFirst = false; // --ui=perfetto landed on the list: no capture yet

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
  uiModeValue = mode;
  document.getElementById('tb-link').hidden = mode === 'perfetto';
  const saved = localStorage.getItem(FOLLOW_KEY);
  followBox.checked = saved === null ? mode === 'perfetto' : saved === '1';
});

// "Follow latest": while a profile is open, each new capture of the same
// run and host replaces it, on the same page. Remembered in the browser;
// on by default under --ui=perfetto, whose view is "the latest trace".
const FOLLOW_KEY = 'xpv-follow-latest';
const followBox = document.getElementById('follow-latest');
followBox.addEventListener('change', () => localStorage.setItem(FOLLOW_KEY, followBox.checked ? '1' : '0'));

// The series a capture belongs to: its folder, with JAX's per-capture
// plugins/profile/<timestamp>/ level set aside (each capture is a new one).
function seriesOf(p) {
  const path = p.path || '';
  const jax = path.match(/^(.*?)(?:^|\/)plugins\/profile\/[^/]+\/[^/]+$/);
  if (jax) return 'jax:' + jax[1];
  return 'dir:' + path.replace(/\/?[^/]*$/, '');
}

// Hosts match by name; names carrying a pid or a timestamp (PyTorch's
// <host>_<pid>.<ms>) match with those numbers set aside.
function sameHost(a, b) {
  if (a === b) return true;
  const key = (h) => String(h || '').replace(/\d{5,}/g, '#');
  return /\d{5,}/.test(a || '') && key(a) === key(b);
}

onLive((type, data) => {
  const p = data && data.profile;
  if (type === 'profile-removed' && currentProfile && data && data.id === currentProfile.id) {
    notify('The file of this profile was removed or replaced.');
    return;
  }
  if ((type !== 'profile-added' && type !== 'profile-updated') || !p || p.status !== 'ok') return;
  if (!currentProfile) {
    if (waitingForFirst && uiModeValue === 'perfetto' && data.latest === p.id && location.hash === '#/profiles') {
      waitingForFirst = false;
      location.hash = `#/p/${encodeURIComponent(p.id)}/timeline`;
    }
    return;
  }
  if (!followBox.checked || p.id === currentProfile.id) return;
  if (seriesOf(p) !== seriesOf(currentProfile) || !sameHost(p.host, currentProfile.host)) return;
  if ((p.mtime_ns || 0) <= (currentProfile.mtime_ns || 0)) return;
  notify(`Following the latest capture: ${profileName(p)}`);
  location.hash = `#/p/${encodeURIComponent(p.id)}/${currentPage || 'overview'}`;
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
  currentPage = profile ? page : null;
  tabs.hidden = !profile;
  actions.hidden = !profile;
  document.getElementById('profile-bar').hidden = !profile;
  setBanner(profile);
  title.replaceChildren();
  title.removeAttribute('title');
  titleText = null;
  if (!profile) return;
  for (const a of tabs.querySelectorAll('a')) {
    a.href = `#/p/${encodeURIComponent(profile.id)}/${a.dataset.page}`;
    if (a.dataset.page === page) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
  showDataTabs(profile, page);
  titleText = {
    name: profileName(profile),
    meta: [profile.format, profile.producer, fmtBytes(profile.size_bytes)].filter(Boolean).join(' · '),
  };
  fitTitle();
  title.title = profile.path || '';
  document.getElementById('compare-with').href = `#/compare/${encodeURIComponent(profile.id)}`;
  const dl = document.getElementById('download-trace');
  dl.href = api.traceUrl(profile.id);
  dl.setAttribute('download', traceFileName(profile));
}

// The Memory and HLO tabs appear only when the profile's tool list says
// there is something to show (or when one is the page open).
const toolsOf = new Map(); // profile id -> its tools, asked once
async function showDataTabs(profile, page) {
  const tabs = document.getElementById('tabs');
  const set = (tools) => {
    const has = { memory: tools.some((t) => t.startsWith('memory_')), hlo: tools.includes('hlo_stats') };
    for (const name of ['memory', 'hlo']) tabs.querySelector(`a[data-page="${name}"]`).hidden = !(has[name] || page === name);
  };
  set(toolsOf.get(profile.id) || []);
  if (toolsOf.has(profile.id) || !viewable(profile)) return;
  try {
    const tools = await api.tools(profile.id);
    toolsOf.set(profile.id, tools);
    if (currentProfile && currentProfile.id === profile.id) set(tools);
  } catch {
    /* no tool list: the tabs stay hidden */
  }
}

// The header title: the profile's name, then its format and size, fitted to
// the width it has: the details go first, then the middle of the name.
let titleText = null;
let measureCtx = null;
function fitTitle() {
  const title = document.getElementById('profile-title');
  if (!titleText) return;
  const room = title.clientWidth;
  measureCtx = measureCtx || document.createElement('canvas').getContext('2d');
  const style = getComputedStyle(title);
  const width = (text, bold) => {
    measureCtx.font = `${bold ? 600 : style.fontWeight} ${style.fontSize} ${style.fontFamily}`;
    return measureCtx.measureText(text).width;
  };
  const { name, meta } = titleText;
  const sep = '  ·  ';
  let shown = name;
  let tail = meta ? sep + meta : '';
  if (width(name, true) + width(tail) > room) tail = '';
  if (width(name, true) > room) shown = middleCut(name, (s) => width(s, true) <= room);
  title.replaceChildren(h('b', null, shown), tail);
}
new ResizeObserver(() => fitTitle()).observe(document.getElementById('profile-title'));

// The longest "start…end" of text that fits (by fits()), as even as can be.
function middleCut(text, fits) {
  let lo = 0,
    hi = text.length;
  const cut = (k) => text.slice(0, Math.ceil(k / 2)) + '…' + text.slice(text.length - Math.floor(k / 2));
  while (lo < hi) {
    const k = Math.ceil((lo + hi) / 2);
    if (fits(cut(k))) lo = k;
    else hi = k - 1;
  }
  return cut(lo);
}

// A profile whose pages show something: indexed, or read in part.
function viewable(p) {
  return p.status === 'ok' || (p.status === 'error' && p.partial && p.events > 0);
}

// The banner over a partly read profile's pages: what was read, and where
// and why reading stopped.
function setBanner(profile) {
  const banner = document.getElementById('profile-banner');
  const partial = profile && profile.status !== 'ok' && viewable(profile);
  banner.hidden = !partial;
  if (!partial) return banner.replaceChildren();
  const steps = profile.step_count ? ` and ${fmtN(profile.step_count, 'step')}` : '';
  banner.replaceChildren(
    h('strong', null, 'Partial profile. '),
    `Read ${fmtN(profile.events, 'event')}${steps} before reading stopped: ${profile.error || 'the file ends early'}. `,
    'Every page shows what was read.',
  );
}

// An unreadable profile's page: why, and for an Nsight Systems report the
// exact command that exports the SQLite file xprof-view reads.
function unreadableView(profile) {
  const msg = profile.error || 'Unknown error';
  const cmd = msg.match(/(nsys export --type sqlite\b.*?)\s*(?:\(|$)/);
  const back = h('a', { href: '#/profiles' }, 'Go to all profiles');
  if (!cmd) return stateView('This profile could not be read', msg, 'error', back);
  const copy = h('button.btn', { type: 'button' }, 'Copy command');
  copy.addEventListener('click', () =>
    navigator.clipboard?.writeText(cmd[1]).then(
      () => notify('Command copied'),
      () => notify('Select the command to copy it'),
    ),
  );
  return stateView(
    'Export this Nsight Systems report to SQLite',
    'xprof-view reads the SQLite export of a .nsys-rep. Run this where nsys is installed, and the export appears in the list:',
    'empty',
    h('pre.command', { 'data-command': '' }, cmd[1]),
    h('div', null, copy, ' ', back),
  );
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
      /* no profile yet: fall through to the list, and open the first capture when it comes */
      waitingForFirst = true;
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
  if (parts[0] === 'compare' && parts[1]) {
    setHeader(null);
    document.title = 'Compare · xprof-view';
    cleanup = comparePage.mount(view, { parts: parts.slice(1), notify });
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
  let pending = false;
  // A pending profile's page reloads as soon as the stream says it changed.
  const unsubscribe = onLive((type, data) => {
    if (pending && data && data.profile && data.profile.id === id && data.profile.status !== 'pending') {
      clearTimeout(timer);
      load();
    }
  });
  cleanup = () => {
    stopped = true;
    unsubscribe();
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
    pending = false;
    setHeader(profile, pageName);
    document.title = `${pageName[0].toUpperCase()}${pageName.slice(1)} · ${profileName(profile)} · xprof-view`;
    if (profile.status === 'pending' || profile.status === 'indexing') {
      view.replaceChildren(await pendingView(profile));
      pending = true;
      timer = setTimeout(load, 5000); // in case the stream is down
      return;
    }
    if (!viewable(profile) && profile.status !== undefined) {
      view.replaceChildren(unreadableView(profile));
      return;
    }
    if (pageName === 'timeline') view.classList.add('fill');
    const ui = pageName === 'tools' ? await uiModeOnce() : null;
    if (stopped || seq !== routeSeq) return;
    const pageCleanup = PAGES[pageName].mount(view, { id, profile, params, notify, sub, ui });
    cleanup = () => {
      stopped = true;
      unsubscribe();
      clearTimeout(timer);
      if (pageCleanup) pageCleanup();
    };
  };
  await load();
}

window.addEventListener('hashchange', route);
route();
