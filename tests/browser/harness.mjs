// harness.mjs — what the browser test parts (ui_*.mjs, run in order by
// ui.test.mjs) share: the server address, the test runner and its asserts,
// one headless Chromium with pages that record console errors and every
// request, the fixture profiles once indexed, and helpers that read what the
// timeline shows.

import { chromium } from 'playwright-core';
import fs from 'node:fs';
import path from 'node:path';

export const BASE = process.env.XPV_URL;
// Whether run.sh copied ../shared/fixtures in (its own test): checks that
// need data the fixtures are known to have fail, not skip, when it did.
export const FIXTURES = !!process.env.XPV_FIXTURES && fs.existsSync(path.join(process.env.XPV_FIXTURES, 'chrome-json'));
if (!BASE) {
  console.error('XPV_URL is not set (run tests/browser/run.sh)');
  process.exit(2);
}
const ART = process.env.XPV_ARTIFACTS || path.join(path.dirname(new URL(import.meta.url).pathname), 'artifacts');
fs.mkdirSync(ART, { recursive: true });
const CHROMIUM = process.env.XPV_CHROMIUM || '/usr/bin/chromium';

let passed = 0,
  failed = 0;
const results = [];
export async function test(name, fn) {
  const t = Date.now();
  try {
    await fn();
    passed++;
    results.push(`ok   ${name} (${Date.now() - t} ms)`);
    console.log(`ok   ${name}`);
  } catch (e) {
    failed++;
    console.log(
      `FAIL ${name}\n     ${String((e && e.stack) || e)
        .split('\n')
        .slice(0, 6)
        .join('\n     ')}`,
    );
  }
}
export function assert(cond, msg) {
  if (!cond) throw new Error(msg || 'assertion failed');
}
export function eq(a, b, msg) {
  if (a !== b) throw new Error(`${msg || 'not equal'}: got ${JSON.stringify(a)}, want ${JSON.stringify(b)}`);
}

export async function api(p) {
  const res = await fetch(BASE + p);
  if (!res.ok) throw new Error(`${p}: HTTP ${res.status}`);
  return res.json();
}

export const browser = await chromium.launch({
  executablePath: CHROMIUM,
  args: [
    '--headless',
    '--no-sandbox',
    '--disable-gpu',
    '--disable-background-networking',
    // playwright itself gives every launch a fresh, temporary --user-data-dir.
    '--disable-component-update',
    '--disable-sync',
    '--no-first-run',
    '--enable-precise-memory-info',
  ],
});

// Every request any page makes, to prove nothing leaves 127.0.0.1.
export const allRequests = [];
export async function newPage({ dark = false, viewport = { width: 1280, height: 720 }, scale = 1 } = {}) {
  const ctx = await browser.newContext({ viewport, deviceScaleFactor: scale, colorScheme: dark ? 'dark' : 'light' });
  const page = await ctx.newPage();
  const errors = [];
  page.on('console', (m) => {
    // A failed load's text does not name the resource; its location does.
    const at = m.location().url;
    if (m.type() === 'error') errors.push(at ? `${m.text()} [${at}]` : m.text());
  });
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('request', (r) => allRequests.push(r.url()));
  page.errors = errors;
  return page;
}
export async function shot(page, name) {
  await page.screenshot({ path: path.join(ART, `${name}.png`) });
}

// Pick the fixture profiles to test: one with kernels, one with steps.
export const { profiles } = await api('/api/profiles');
export let ready = profiles.filter((p) => p.status === 'ok');
const deadline = Date.now() + 120000;
while (profiles.some((p) => p.status === 'pending') && Date.now() < deadline) {
  await new Promise((r) => setTimeout(r, 500));
  const again = (await api('/api/profiles')).profiles;
  profiles.splice(0, profiles.length, ...again);
  ready = profiles.filter((p) => p.status === 'ok');
}
export const byKernels = ready.slice().sort((a, b) => (b.kernel_count || 0) - (a.kernel_count || 0))[0];
export const bySteps = ready.slice().sort((a, b) => (b.step_count || 0) - (a.step_count || 0))[0];
console.log(
  `profiles: ${profiles.length} (${ready.length} ready); kernels test on ${byKernels && byKernels.path}; steps test on ${bySteps && bySteps.path}`,
);

// ---- what the timeline shows ----

export async function canvasInk(page) {
  // Counts canvas pixels that differ from the background, inside track rows.
  return page.$eval('canvas.tl-canvas', (c) => {
    const ctx = c.getContext('2d');
    const d = ctx.getImageData(0, 0, c.width, c.height).data;
    const bg = [d[0], d[1], d[2]];
    let ink = 0;
    for (let i = 0; i < d.length; i += 4 * 3) {
      if (Math.abs(d[i] - bg[0]) + Math.abs(d[i + 1] - bg[1]) + Math.abs(d[i + 2] - bg[2]) > 60) ink++;
    }
    return ink;
  });
}

export const viewOf = (page) => page.$eval('canvas.tl-canvas', (c) => [Number(c.dataset.viewStart), Number(c.dataset.viewEnd)]);
export async function waitDrawn(page) {
  await page.waitForFunction(
    () =>
      Number(document.querySelector('canvas.tl-canvas')?.dataset.eventsDrawn || 0) +
        Number(document.querySelector('canvas.tl-canvas')?.dataset.summariesDrawn || 0) >
      0,
    null,
    { timeout: 20000 },
  );
}
export const hitsState = (page) =>
  page.$eval('.tl-toolbar .hits', (e) => ({
    text: e.textContent,
    mode: e.dataset.mode,
    index: e.dataset.index,
    total: e.dataset.total,
  }));

// Deep links, tracks and window export (issue 21). `tlState` reads what the
// page shows: the view, the selection, the pins and the labels in order.
export const tlState = (page) =>
  page.evaluate(() => {
    const st = window.__xpvTimeline.state;
    return {
      view: [st.viewStart, st.viewEnd],
      sel: st.selected ? st.selected.ev.ref : null,
      selDepth: st.selected ? st.selected.ev.depth : null,
      pins: st.pins.slice(),
      labels: [...document.querySelectorAll('.tl-label.thread')].map((l) => ({
        id: Number(l.dataset.trackId),
        text: l.querySelector('span').textContent,
        group: l.title.split(' / ')[0],
      })),
      hash: location.hash,
    };
  });
export const hashParams = (hash) => new URLSearchParams(hash.split('?')[1] || '');

export function escapeRe(s) {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

// Closes the browser, prints "N passed, N failed" and exits (non-zero when
// anything failed).
export async function finish() {
  await browser.close();
  console.log(`${passed} passed, ${failed} failed`);
  process.exit(failed ? 1 : 0);
}
