// ui.test.mjs — browser tests of the xprof-view frontend in real headless
// Chromium (Debian's /usr/bin/chromium driven by playwright-core; no browser
// download). run.sh starts the real binary and passes its address:
//   XPV_URL            base URL of a running xprof-view (required)
//   XPV_ARTIFACTS      folder for screenshots (default ./artifacts)
//   XPV_PERF_PROFILE   optional id of a big profile to measure first paint
//                      and JS heap on (figures printed, never asserted)
// Prints "N passed, N failed" and exits non-zero when anything failed.

import { chromium } from 'playwright-core';
import fs from 'node:fs';
import path from 'node:path';
import { spawn } from 'node:child_process';
import net from 'node:net';

const BASE = process.env.XPV_URL;
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
async function test(name, fn) {
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
function assert(cond, msg) {
  if (!cond) throw new Error(msg || 'assertion failed');
}
function eq(a, b, msg) {
  if (a !== b) throw new Error(`${msg || 'not equal'}: got ${JSON.stringify(a)}, want ${JSON.stringify(b)}`);
}

async function api(p) {
  const res = await fetch(BASE + p);
  if (!res.ok) throw new Error(`${p}: HTTP ${res.status}`);
  return res.json();
}

const browser = await chromium.launch({
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
const allRequests = [];
async function newPage({ dark = false, viewport = { width: 1280, height: 720 }, scale = 1 } = {}) {
  const ctx = await browser.newContext({ viewport, deviceScaleFactor: scale, colorScheme: dark ? 'dark' : 'light' });
  const page = await ctx.newPage();
  const errors = [];
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('request', (r) => allRequests.push(r.url()));
  page.errors = errors;
  return page;
}
async function shot(page, name) {
  await page.screenshot({ path: path.join(ART, `${name}.png`) });
}

// Pick the fixture profiles to test: one with kernels, one with steps.
const { profiles } = await api('/api/profiles');
let ready = profiles.filter((p) => p.status === 'ok');
const deadline = Date.now() + 120000;
while (profiles.some((p) => p.status === 'pending') && Date.now() < deadline) {
  await new Promise((r) => setTimeout(r, 500));
  const again = (await api('/api/profiles')).profiles;
  profiles.splice(0, profiles.length, ...again);
  ready = profiles.filter((p) => p.status === 'ok');
}
const byKernels = ready.slice().sort((a, b) => (b.kernel_count || 0) - (a.kernel_count || 0))[0];
const bySteps = ready.slice().sort((a, b) => (b.step_count || 0) - (a.step_count || 0))[0];
console.log(
  `profiles: ${profiles.length} (${ready.length} ready); kernels test on ${byKernels && byKernels.path}; steps test on ${bySteps && bySteps.path}`,
);

await test('profile list shows every profile, newest first, latest highlighted', async () => {
  assert(profiles.length > 0, 'the server lists no profiles');
  const page = await newPage();
  await page.goto(`${BASE}/#/profiles`);
  await page.waitForSelector('table.data tbody tr');
  const ids = await page.$$eval('table.data tbody tr', (trs) => trs.map((t) => t.dataset.id));
  eq(ids.join(','), profiles.map((p) => p.id).join(','), 'rows in API order');
  // The highlighted row is /api/profiles/latest: the newest that indexed, not a broken newer file.
  const latest = await api('/api/profiles/latest');
  eq(
    await page.$$eval('table.data tbody tr.latest', (trs) => trs.map((t) => t.dataset.id).join(',')),
    latest.id,
    'latest highlighted',
  );
  eq(latest.status, 'ok', 'latest indexed ok');
  // The filter box narrows the list.
  await page.fill('input[type="search"]', 'no-such-profile-name');
  await page.waitForFunction(() => document.querySelectorAll('table.data tbody tr').length === 0);
  await page.fill('input[type="search"]', '');
  await page.waitForSelector('table.data tbody tr');
  await shot(page, 'profiles');
  eq(page.errors.length, 0, `console errors: ${page.errors.join(' | ')}`);
  await page.context().close();
});

await test('overview: cards, one bar per step, step source shown', async () => {
  assert(bySteps, 'no ready profile');
  const steps = await api(`/api/profiles/${bySteps.id}/steps`);
  const page = await newPage();
  await page.goto(`${BASE}/#/p/${bySteps.id}/overview`);
  await page.waitForFunction(() => !document.querySelector('.cards .card[data-empty]'), null, { timeout: 15000 });
  if (steps.steps.length) {
    await page.waitForSelector('[data-step-bar]');
    const bars = await page.$$eval('[data-step-bar]', (gs) =>
      gs.map((g) => [g.getAttribute('data-step'), Number(g.getAttribute('data-duration-us'))]),
    );
    eq(bars.length, steps.steps.length, 'bars');
    eq(bars.map((b) => b[0]).join(','), steps.steps.map((s) => String(s.step)).join(','), 'bar step numbers');
    bars.forEach((b, i) => eq(b[1], steps.steps[i].duration_us, `duration of step ${b[0]}`));
    // Hover shows the details of that step.
    const box = await page.locator('[data-step-bar] .hit').first().boundingBox();
    await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
    await page.waitForSelector('.tooltip:not([hidden])');
    assert((await page.textContent('.tooltip')).includes(`Step ${steps.steps[0].step}`), 'tooltip names the step');
  }
  eq(await page.$eval('[data-source]', (e) => e.dataset.source), steps.source, 'step source');
  await shot(page, 'overview');
  eq(page.errors.length, 0, `console errors: ${page.errors.join(' | ')}`);
  await page.context().close();
});

await test('kernel table shows the same numbers as the API', async () => {
  assert(byKernels, 'no ready profile');
  const api_ = await api(`/api/profiles/${byKernels.id}/kernels`);
  const page = await newPage();
  await page.goto(`${BASE}/#/p/${byKernels.id}/kernels`);
  const want = api_.kernels.slice().sort((a, b) => (b.total_us ?? -1) - (a.total_us ?? -1));
  if (!want.length) {
    await page.waitForSelector('table.data[aria-label="Kernel summary"], .state');
    await shot(page, 'kernels');
    return;
  }
  // Rows, not any .state: a loading state can stand there before the table.
  await page.waitForSelector('table.data[aria-label="Kernel summary"] tbody tr');
  const rows = await page.$$eval('table.data tbody tr', (trs) =>
    trs.map((tr) =>
      Object.fromEntries([...tr.querySelectorAll('td')].map((td) => [td.dataset.key, [td.dataset.value, td.textContent]])),
    ),
  );
  eq(rows.length, Math.min(want.length, 500), 'rows');
  const cols = [
    'name',
    'count',
    'total_us',
    'avg_us',
    'median_us',
    'min_us',
    'max_us',
    'percent',
    'grid',
    'block',
    'registers_per_thread',
    'occupancy_pct',
    'op',
  ];
  // Ties in total time may come in either order: match rows by name and total.
  const key = (name, total) => `${name}\u0000${total}`;
  const apiByKey = new Map(want.map((k) => [key(k.name, String(k.total_us)), k]));
  for (const r of rows) {
    const k = apiByKey.get(key(r.name[0], r.total_us[0]));
    assert(k, `row ${r.name[0]} not in the API answer`);
    for (const c of cols) {
      const v = k[c];
      const shown = r[c][0];
      const expect = v === null || v === undefined ? 'null' : typeof v === 'object' ? JSON.stringify(v) : String(v);
      eq(shown, expect, `${k.name} ${c}`);
      const severalShapes = ['grid', 'block', 'registers_per_thread'].includes(c) && k.shapes > 1;
      if (v === null || v === undefined) {
        eq(
          r[c][1],
          severalShapes ? `${k.shapes.toLocaleString('en-US')} shapes` : '—',
          `${k.name} ${c} unknown shown as ${severalShapes ? 'a shape count' : '—'}`,
        );
      }
    }
    if (k.total_us !== null) {
      const shownTotal = Number(r.total_us[1].replace(/,/g, ''));
      assert(
        Math.abs(shownTotal - k.total_us) < 0.0005 + 1e-9 * k.total_us,
        `${k.name} total shown ${r.total_us[1]} vs ${k.total_us}`,
      );
    }
    eq(r.count[1].replace(/,/g, ''), String(k.count), `${k.name} count text`);
  }
  // Sorting by name puts rows in name order.
  await page.click('button.sort[data-key="name"]');
  const names = await page.$$eval('table.data tbody tr td[data-key="name"]', (tds) => tds.map((t) => t.dataset.value));
  const sortedNames = names.slice().sort((a, b) => a.localeCompare(b));
  eq(names.join('\n'), sortedNames.join('\n'), 'sorted by name');
  // The CSV link asks the API for CSV.
  const href = await page.$eval('a[download="kernels.csv"]', (a) => a.getAttribute('href'));
  assert(href.includes(`/api/profiles/${byKernels.id}/kernels`) && href.includes('format=csv'), `csv href ${href}`);
  await page.click('button.sort[data-key="total_us"]');
  await shot(page, 'kernels');
  eq(page.errors.length, 0, `console errors: ${page.errors.join(' | ')}`);
  await page.context().close();
});

async function canvasInk(page) {
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

// XPV_TIMELINE_PROFILE picks another profile for the timeline test (debugging).
const forTimeline = ready.find((p) => p.id === process.env.XPV_TIMELINE_PROFILE) || byKernels;
await test('timeline draws events, zooms with wheel and W, fetches new windows', async () => {
  const p = forTimeline;
  const page = await newPage();
  const eventReqs = [];
  page.on('request', (r) => {
    if (r.url().includes(`/api/profiles/${p.id}/events?`)) eventReqs.push(r.url());
  });
  await page.goto(`${BASE}/#/p/${p.id}/timeline`);
  await waitDrawn(page);
  assert((await canvasInk(page)) > 200, 'canvas has drawn pixels in the track area');
  const first = new URL(eventReqs[0]);
  for (const k of ['start_us', 'end_us', 'resolution']) assert(first.searchParams.has(k), `events request has ${k}`);
  const view0 = await page.$eval('canvas.tl-canvas', (c) => [Number(c.dataset.viewStart), Number(c.dataset.viewEnd)]);
  await shot(page, 'timeline');
  // Wheel zoom at the middle of the canvas.
  const box = await page.locator('canvas.tl-canvas').boundingBox();
  await page.mouse.move(box.x + box.width / 2, box.y + 40);
  const nReq = eventReqs.length;
  await page.mouse.wheel(0, -400);
  await page.waitForFunction(
    (v0) =>
      Number(document.querySelector('canvas.tl-canvas').dataset.viewEnd) -
        Number(document.querySelector('canvas.tl-canvas').dataset.viewStart) <
      (v0[1] - v0[0]) * 0.9,
    view0,
  );
  await page.waitForFunction((n) => window.__xpvTimeline.fetcher.requests > n, nReq, { timeout: 5000 }).catch(() => {});
  const view1 = await page.$eval('canvas.tl-canvas', (c) => [Number(c.dataset.viewStart), Number(c.dataset.viewEnd)]);
  assert(view1[1] - view1[0] < view0[1] - view0[0], 'wheel zoomed in');
  await page.waitForTimeout(400);
  assert(eventReqs.length > nReq, 'a new events request after zooming');
  const zr = new URL(eventReqs[eventReqs.length - 1]);
  assert(
    Number(zr.searchParams.get('end_us')) - Number(zr.searchParams.get('start_us')) <
      Number(first.searchParams.get('end_us')) - Number(first.searchParams.get('start_us')),
    'zoomed request asks for a narrower window',
  );
  // W zooms in further, S out, D pans.
  await page.locator('canvas.tl-canvas').focus();
  for (let i = 0; i < 3; i++) await page.keyboard.press('w');
  await page.waitForTimeout(100);
  const view2 = await page.$eval('canvas.tl-canvas', (c) => [Number(c.dataset.viewStart), Number(c.dataset.viewEnd)]);
  assert(view2[1] - view2[0] < (view1[1] - view1[0]) * 0.7, `W zoomed in: ${view1} -> ${view2}`);
  await page.keyboard.press('d');
  await page.waitForTimeout(50);
  const view3 = await page.$eval('canvas.tl-canvas', (c) => [Number(c.dataset.viewStart), Number(c.dataset.viewEnd)]);
  assert(view3[0] > view2[0], 'D panned right');
  await page.waitForTimeout(500);
  await shot(page, 'timeline-zoomed');
  // Click on an event opens its details.
  const target = await page.evaluate(() => {
    const tl = window.__xpvTimeline.state;
    const c = document.querySelector('canvas.tl-canvas');
    const w = c.width / tl.dpr;
    for (const row of tl.rows) {
      if (row.type !== 'thread' || !tl.data) continue;
      const list = tl.data.byTrack.get(row.track.id) || [];
      for (const ev of list) {
        if (ev.summary || ev.depth !== 0) continue;
        const x0 = ((ev.s - tl.viewStart) / (tl.viewEnd - tl.viewStart)) * w;
        const x1 = ((ev.e - tl.viewStart) / (tl.viewEnd - tl.viewStart)) * w;
        const y = row.y - document.querySelector('.tl-scroll').scrollTop + 3 + 9;
        if (x1 - x0 >= 3 && x0 > 0 && x1 < w && y > 0 && y < c.clientHeight) return { x: (x0 + x1) / 2, y, name: ev.name };
      }
    }
    return null;
  });
  if (target) {
    await page.mouse.click(box.x + target.x, box.y + target.y);
    await page.waitForFunction((n) => document.querySelector('.tl-details h2')?.textContent === n, target.name, {
      timeout: 5000,
    });
    await page.waitForFunction(() => !document.querySelector('.tl-details .skeleton'), null, { timeout: 5000 });
    await shot(page, 'timeline-selected');
  }
  eq(page.errors.length, 0, `console errors: ${page.errors.join(' | ')}`);
  await page.context().close();
});

const viewOf = (page) => page.$eval('canvas.tl-canvas', (c) => [Number(c.dataset.viewStart), Number(c.dataset.viewEnd)]);
async function waitDrawn(page) {
  await page.waitForFunction(
    () =>
      Number(document.querySelector('canvas.tl-canvas')?.dataset.eventsDrawn || 0) +
        Number(document.querySelector('canvas.tl-canvas')?.dataset.summariesDrawn || 0) >
      0,
    null,
    { timeout: 20000 },
  );
}
const hitsState = (page) =>
  page.$eval('.tl-toolbar .hits', (e) => ({
    text: e.textContent,
    mode: e.dataset.mode,
    index: e.dataset.index,
    total: e.dataset.total,
  }));

await test('timeline search finds a kernel outside the view, steps through matches, opens details', async () => {
  const p = forTimeline;
  const kernels = ((await api(`/api/profiles/${p.id}/kernels`)).kernels || [])
    .filter((k) => k.name && k.name.length <= 200)
    .sort((a, b) => a.count - b.count);
  if (!kernels.length) {
    console.log('     (no kernels in this profile: nothing to search for)');
    return;
  }
  const page = await newPage();
  await page.goto(`${BASE}/#/p/${p.id}/timeline`);
  await waitDrawn(page);
  // Zoom into the profile's first few percent, so most events lie outside the view.
  const box = await page.locator('canvas.tl-canvas').boundingBox();
  await page.mouse.move(box.x + 1, box.y + 40);
  await page.locator('canvas.tl-canvas').focus();
  for (let i = 0; i < 15; i++) await page.keyboard.press('w');
  await page.waitForTimeout(300);
  const view0 = await viewOf(page);
  // A kernel name whose every match starts after the view (asked of the API directly).
  let pick = null;
  for (const k of kernels.slice(0, 60)) {
    const r = await api(`/api/profiles/${p.id}/search?q=${encodeURIComponent(k.name)}&limit=1000`);
    if (r.matches.length && r.matches[0].start_us > view0[1]) {
      pick = r;
      if (r.match_count >= 2) break;
    }
  }
  assert(pick, `no kernel found whose matches all lie after the view ${view0}`);
  const m = pick.matches;
  eq(pick.match_count >= m.length, true, 'match_count counts at least the matches sent');
  // Collapse the first match's process group: the search must expand it.
  const groupName = await page.evaluate((t) => window.__xpvTimeline.state.byId.get(t).group.name, m[0].track);
  await page.locator('.tl-label.process button', { hasText: groupName }).first().click();
  await page.waitForFunction((t) => window.__xpvTimeline.state.byId.get(t).group.collapsed, m[0].track);
  // Pages of one match: every step below loads its page with an offset.
  await page.evaluate(() => {
    window.__xpvTimeline.searcher.limit = 1;
  });
  await page.fill('.tl-toolbar input[type="search"]', pick.query);
  await page.press('.tl-toolbar input[type="search"]', 'Enter');
  await page.waitForFunction(() => document.querySelector('.tl-toolbar .hits')?.dataset.index === '1', null, { timeout: 15000 });
  let hs = await hitsState(page);
  eq(hs.mode, 'profile', 'searched the whole profile');
  eq(Number(hs.total), pick.match_count, 'count shown = API match_count');
  assert(hs.text.startsWith(`1 of ${pick.match_count.toLocaleString('en-US')}`), `label "${hs.text}"`);
  eq(hs.text.includes('first'), false, `no "first N only" note: every match can be reached ("${hs.text}")`);
  const expectShown = async (i) => {
    const mi = m[i];
    const dur = mi.dur_us || 0;
    const v = await viewOf(page);
    assert(v[0] <= mi.start_us && v[1] >= mi.start_us + dur, `view ${v} shows match ${i} [${mi.start_us}, +${dur}]`);
    const w = v[1] - v[0];
    const mid = mi.start_us + dur / 2;
    const full = p.duration_us || w;
    // Centred, unless the view was clamped at the profile's edge.
    assert(
      Math.abs((v[0] + v[1]) / 2 - mid) < w * 0.02 || v[0] < p.start_us || v[1] > p.start_us + full,
      `match ${i} centred in ${v}`,
    );
    if (dur > 0) assert((dur / w) * box.width >= 3, `match ${i} is ${((dur / w) * box.width).toFixed(2)} px wide`);
    await page.waitForFunction((n) => document.querySelector('.tl-details h2')?.textContent === n, mi.name, { timeout: 5000 });
    await page.waitForFunction(() => !document.querySelector('.tl-details .skeleton'), null, { timeout: 5000 });
    const details = await page.textContent('.tl-details');
    assert(
      !details.includes('Details unavailable') && !details.includes('No details available'),
      `details of match ${i}: ${details.slice(0, 200)}`,
    );
    const sel = await page.evaluate(() => {
      const s = window.__xpvTimeline.state;
      const t = s.byId.get(s.selected.track);
      return { track: s.selected.track, ref: s.selected.ev.ref, collapsed: t ? t.group.collapsed : null };
    });
    eq(sel.track, mi.track, `selected track of match ${i}`);
    eq(sel.ref, mi.ref, `selected ref of match ${i}`);
    eq(sel.collapsed, false, `process group of match ${i} expanded`);
    // Once the window loads, the selection is the drawn event (same ref, with its depth).
    await page
      .waitForFunction(() => window.__xpvTimeline.state.selected?.ev.depth >= 0, null, { timeout: 10000 })
      .catch(async (e) => {
        console.log(
          JSON.stringify(
            await page.evaluate(() => {
              const s = window.__xpvTimeline.state;
              const sel = s.selected;
              const list = (s.data.byTrack.get(sel.track) || []).filter((x) => Math.abs(x.s - sel.ev.s) < 50);
              return { sel: sel.ev, params: s.data.params, view: [s.viewStart, s.viewEnd], near: list.slice(0, 10) };
            }),
          ),
        );
        throw e;
      });
    return w;
  };
  const w1 = await expectShown(0);
  if (m.length >= 2) {
    await page.press('.tl-toolbar input[type="search"]', 'Enter');
    await page.waitForFunction(() => document.querySelector('.tl-toolbar .hits')?.dataset.index === '2', null, { timeout: 5000 });
    assert((await hitsState(page)).text.startsWith(`2 of ${pick.match_count.toLocaleString('en-US')}`), 'label 2 of N');
    const w2 = await expectShown(1);
    // A match that already fits keeps the zoom.
    if (((m[1].dur_us || 0) / w1) * box.width >= 6 && (m[1].dur_us || 0) < w1 * 0.9)
      assert(Math.abs(w2 - w1) < w1 * 1e-6, `zoom kept: ${w1} -> ${w2}`);
    await page.press('.tl-toolbar input[type="search"]', 'Shift+Enter');
    await page.waitForFunction(() => document.querySelector('.tl-toolbar .hits')?.dataset.index === '1', null, { timeout: 5000 });
    await expectShown(0);
  }
  // Previous from the first match is the last of all, on a page of its own.
  const n = pick.match_count;
  const lastMatch = (await api(`/api/profiles/${p.id}/search?q=${encodeURIComponent(pick.query)}&limit=1&offset=${n - 1}`))
    .matches[0];
  await page.press('.tl-toolbar input[type="search"]', 'Shift+Enter');
  await page.waitForFunction((k) => document.querySelector('.tl-toolbar .hits')?.dataset.index === String(k), n, {
    timeout: 15000,
  });
  assert((await hitsState(page)).text.startsWith(`${n.toLocaleString('en-US')} of ${n.toLocaleString('en-US')}`), 'label N of N');
  await page.waitForFunction((ref) => window.__xpvTimeline.state.selected?.ev.ref === ref, lastMatch.ref, { timeout: 10000 });
  await page.waitForTimeout(400);
  await shot(page, 'timeline-search');
  await page.press('.tl-toolbar input[type="search"]', 'Escape');
  eq(await page.inputValue('.tl-toolbar input[type="search"]'), '', 'Escape clears the box');
  eq((await hitsState(page)).text, '', 'Escape clears the count');
  eq(page.errors.length, 0, `console errors: ${page.errors.join(' | ')}`);
  await page.context().close();
});

await test('timeline search: pages of a smaller server limit step through every match', async () => {
  const p = forTimeline;
  const kernels = ((await api(`/api/profiles/${p.id}/kernels`)).kernels || []).filter(
    (k) => k.name && k.name.length <= 200 && k.count > 4,
  );
  if (!kernels.length) return;
  const q = kernels[0].name;
  const page = await newPage();
  // The server's own answer, asked with limit=3 whatever the page asks for.
  await page.route('**/api/profiles/*/search?*', async (r) => {
    const u = new URL(r.request().url());
    u.searchParams.set('limit', '3');
    r.fulfill({ response: await r.fetch({ url: u.toString() }) });
  });
  const want = await api(`/api/profiles/${p.id}/search?q=${encodeURIComponent(q)}&limit=1000`);
  const n = want.match_count;
  const last = (await api(`/api/profiles/${p.id}/search?q=${encodeURIComponent(q)}&limit=1&offset=${n - 1}`)).matches[0];
  await page.goto(`${BASE}/#/p/${p.id}/timeline`);
  await waitDrawn(page);
  await page.fill('.tl-toolbar input[type="search"]', q);
  for (const [key, idx] of [
    ['Enter', 1],
    ['Enter', 2],
    ['Enter', 3],
    ['Enter', 4],
    ['Enter', 5],
    ['Shift+Enter', 4],
    ['Shift+Enter', 3],
    ['Shift+Enter', 2],
    ['Shift+Enter', 1],
    ['Shift+Enter', n],
  ]) {
    await page.press('.tl-toolbar input[type="search"]', key);
    await page.waitForFunction((i) => document.querySelector('.tl-toolbar .hits')?.dataset.index === String(i), idx, {
      timeout: 10000,
    });
    const hs = await hitsState(page);
    eq(hs.text, `${idx.toLocaleString('en-US')} of ${n.toLocaleString('en-US')}`, 'label');
    const ref = idx === n ? last.ref : want.matches[idx - 1].ref;
    await page.waitForFunction((r) => window.__xpvTimeline.state.selected?.ev.ref === r, ref, { timeout: 5000 });
  }
  eq(page.errors.length, 0, `console errors: ${page.errors.join(' | ')}`);
  await page.context().close();
});

await test('timeline search falls back to the loaded window when the server cannot search', async () => {
  const p = forTimeline;
  const page = await newPage();
  await page.route('**/api/profiles/*/search?*', (r) =>
    r.fulfill({ status: 404, contentType: 'application/json', body: '{"error": "no such API route"}' }),
  );
  await page.goto(`${BASE}/#/p/${p.id}/timeline`);
  await waitDrawn(page);
  const name = await page.evaluate(() => {
    for (const list of window.__xpvTimeline.state.data.byTrack.values())
      for (const ev of list) if (!ev.summary && ev.name) return ev.name;
    return null;
  });
  if (!name) {
    await page.context().close();
    return;
  }
  await page.fill('.tl-toolbar input[type="search"]', name);
  await page.press('.tl-toolbar input[type="search"]', 'Enter');
  await page.waitForFunction(
    () => document.querySelector('.tl-toolbar .hits')?.textContent.includes('loaded window only'),
    null,
    { timeout: 10000 },
  );
  const hs = await hitsState(page);
  eq(hs.mode, 'window', 'fell back to the loaded window');
  assert(/^1 of [\d,]+ \(loaded window only\)$/.test(hs.text), `label "${hs.text}"`);
  assert(/cannot search/.test(await page.getAttribute('.tl-toolbar .hits', 'title')), 'the reason is in the title');
  const loaded = await page.evaluate((q) => {
    let n = 0;
    const lq = q.toLowerCase();
    for (const list of window.__xpvTimeline.state.data.byTrack.values())
      for (const ev of list) if (!ev.summary && ev.name.toLowerCase().includes(lq)) n++;
    return n;
  }, name);
  eq(hs.text, `1 of ${loaded.toLocaleString('en-US')} (loaded window only)`, 'count = matching loaded events');
  await page.waitForFunction((n) => document.querySelector('.tl-details h2')?.textContent === n, name, { timeout: 5000 });
  await shot(page, 'timeline-search-fallback');
  // Only the (intended) 404 may show up in the console.
  const errs = page.errors.filter((e) => !/status of 404/.test(e));
  eq(errs.length, 0, `console errors: ${errs.join(' | ')}`);
  await page.context().close();
});

await test('timeline highlights a step chosen from the overview (?step=N)', async () => {
  const steps = (await api(`/api/profiles/${bySteps.id}/steps`)).steps;
  if (!steps.length) return;
  const st = steps[Math.floor(steps.length / 2)];
  const inSpan = st.start_us >= bySteps.start_us && st.start_us <= bySteps.start_us + bySteps.duration_us;
  const page = await newPage();
  await page.goto(`${BASE}/#/p/${bySteps.id}/timeline?step=${st.step}`);
  await page.waitForFunction((n) => document.querySelector('.tl-toolbar select')?.value === String(n), st.step, {
    timeout: 15000,
  });
  if (inSpan) {
    await page.waitForFunction(() => Number(document.querySelector('canvas.tl-canvas')?.dataset.viewEnd) > 0);
    const v = await page.$eval('canvas.tl-canvas', (c) => [Number(c.dataset.viewStart), Number(c.dataset.viewEnd)]);
    assert(
      v[0] <= st.start_us && v[1] >= st.start_us + st.duration_us,
      `view ${v} shows step ${st.step} [${st.start_us}, +${st.duration_us}]`,
    );
    assert(v[1] - v[0] < st.duration_us * 1.5, 'view zoomed to the step');
    await page.waitForTimeout(600);
    await shot(page, 'timeline-step');
  }
  eq(page.errors.length, 0, `console errors: ${page.errors.join(' | ')}`);
  await page.context().close();
});

// Deep links, tracks and window export (issue 21). `tlState` reads what the
// page shows: the view, the selection, the pins and the labels in order.
const tlState = (page) =>
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
const hashParams = (hash) => new URLSearchParams(hash.split('?')[1] || '');

await test('timeline deep link restores the window and the selection after reload', async () => {
  const p = forTimeline;
  const tracks = await api(`/api/profiles/${p.id}/tracks`);
  const trackIds = tracks.processes.flatMap((pr) => pr.threads.map((t) => t.id));
  // An event from the events API, in the middle of the profile.
  const mid = p.start_us + p.duration_us / 2;
  const ev = await api(`/api/profiles/${p.id}/events?start_us=${mid}&end_us=${p.start_us + p.duration_us}&resolution=20000`);
  const names = ev.names;
  let pick = null;
  for (const t of ev.tracks)
    for (const e of t.events || [])
      if (!pick && e[1] > 0 && e[4]) pick = { track: t.id, s: e[0], d: e[1], name: names[e[2]], ref: e[4] };
  assert(pick, 'an event with a ref in the second half');
  assert(trackIds.includes(pick.track), 'its track is listed');
  const start = pick.s - pick.d * 2,
    end = pick.s + pick.d * 3;
  const page = await newPage();
  await page.goto(`${BASE}/#/p/${p.id}/timeline?start_us=${start}&end_us=${end}&sel=${pick.ref}`);
  await page.waitForFunction((ref) => window.__xpvTimeline?.state.selected?.ev.ref === ref, pick.ref, { timeout: 15000 });
  await page.waitForFunction((n) => document.querySelector('.tl-details h2')?.textContent === n, pick.name, { timeout: 5000 });
  let s = await tlState(page);
  assert(
    Math.abs(s.view[0] - start) < 0.01 && Math.abs(s.view[1] - end) < 0.01,
    `view ${s.view} is the linked [${start}, ${end}]`,
  );
  // The loaded twin (with its depth) replaces the linked one.
  await page.waitForFunction(() => window.__xpvTimeline.state.selected.ev.depth >= 0, null, { timeout: 10000 });
  // Zoom with W: the address follows (replaceState, no new history entry).
  const histLen = await page.evaluate(() => history.length);
  await page.locator('canvas.tl-canvas').focus();
  await page.keyboard.press('w');
  await page.waitForFunction((e) => Number(new URLSearchParams(location.hash.split('?')[1]).get('end_us')) < e - 1e-6, end, {
    timeout: 5000,
  });
  s = await tlState(page);
  const q = hashParams(s.hash);
  eq(q.get('sel'), pick.ref, 'the address keeps the selection');
  assert(Math.abs(Number(q.get('start_us')) - s.view[0]) < 0.002, 'the address holds the view start');
  eq(await page.evaluate(() => history.length), histLen, 'no history entry per view change');
  // Reload: the same view and selection come back.
  const before = s.view;
  await page.reload();
  await page.waitForFunction((ref) => window.__xpvTimeline?.state.selected?.ev.ref === ref, pick.ref, { timeout: 15000 });
  s = await tlState(page);
  assert(
    Math.abs(s.view[0] - before[0]) < 0.002 && Math.abs(s.view[1] - before[1]) < 0.002,
    `reloaded view ${s.view} = ${before}`,
  );
  await shot(page, 'timeline-deeplink');
  eq(page.errors.length, 0, `console errors: ${page.errors.join(' | ')}`);
  await page.context().close();
});

await test('timeline tracks: pin to top (in the address), filter by name, collapse all', async () => {
  const p = forTimeline;
  const page = await newPage();
  await page.goto(`${BASE}/#/p/${p.id}/timeline`);
  await waitDrawn(page);
  let s = await tlState(page);
  assert(s.labels.length >= 2, 'at least two tracks shown');
  const last = s.labels[s.labels.length - 1];
  await page.click(`.tl-label.thread[data-track-id="${last.id}"] button.tl-pin`);
  await page.waitForFunction((id) => Number(document.querySelector('.tl-label.thread')?.dataset.trackId) === id, last.id);
  await page.waitForFunction((id) => new URLSearchParams(location.hash.split('?')[1]).get('pins') === String(id), last.id, {
    timeout: 5000,
  });
  eq(
    await page.getAttribute(`.tl-label.thread[data-track-id="${last.id}"] button.tl-pin`, 'aria-pressed'),
    'true',
    'pin pressed',
  );
  // Reload: still pinned and first.
  await page.reload();
  await waitDrawn(page);
  s = await tlState(page);
  eq(s.labels[0].id, last.id, 'the pinned track is first after reload');
  eq(s.pins.join(','), String(last.id), 'pins restored');
  // Filter: only matching tracks (or tracks of a matching process) stay.
  const word = (s.labels.find((l) => l.id !== last.id && l.text.length >= 3) || s.labels[0]).text.slice(0, 3).toLowerCase();
  await page.fill('input.tl-track-filter', word);
  await page.waitForFunction(() => window.__xpvTimeline.state.trackFilter !== '');
  s = await tlState(page);
  assert(s.labels.length > 0, 'something matches');
  for (const l of s.labels.filter((l) => !s.pins.includes(l.id)))
    assert(l.text.toLowerCase().includes(word) || l.group.toLowerCase().includes(word), `track "${l.text}" matches "${word}"`);
  await page.fill('input.tl-track-filter', 'no-such-track-name-xyz');
  await page.waitForFunction(() => window.__xpvTimeline.state.trackFilter === 'no-such-track-name-xyz');
  s = await tlState(page);
  eq(s.labels.filter((l) => !s.pins.includes(l.id)).length, 0, 'a filter that matches nothing hides every unpinned track');
  eq(await page.$$eval('.tl-label.process button', (b) => b.length), 0, 'and every process');
  await page.fill('input.tl-track-filter', '');
  await page.waitForFunction(() => window.__xpvTimeline.state.trackFilter === '');
  // Collapse all, then expand all.
  const action = await page.getAttribute('button.tl-collapse-all', 'data-action');
  if (action === 'expand') await page.click('button.tl-collapse-all');
  await page.click('button.tl-collapse-all');
  const expanded = await page.$$eval('.tl-label.process button', (bs) => bs.map((b) => b.getAttribute('aria-expanded')));
  assert(expanded.length > 0 && expanded.every((x) => x === 'false'), `every group collapsed: ${expanded}`);
  s = await tlState(page);
  eq(s.labels.map((l) => l.id).join(','), String(last.id), 'only the pinned track is left');
  await page.click('button.tl-collapse-all');
  const again = await page.$$eval('.tl-label.process button', (bs) => bs.map((b) => b.getAttribute('aria-expanded')));
  assert(
    again.every((x) => x === 'true'),
    'expand all expands every group',
  );
  // Devices first: no host process above a device.
  const groups = await page.evaluate(() => window.__xpvTimeline.state.groups.map((g) => g.device !== null));
  assert(groups.indexOf(false) === -1 || !groups.slice(groups.indexOf(false)).includes(true), `devices first: ${groups}`);
  eq(page.errors.length, 0, `console errors: ${page.errors.join(' | ')}`);
  await page.context().close();
});

await test('kernel table links to the timeline at the longest occurrence', async () => {
  const p = byKernels;
  const res = await api(`/api/profiles/${p.id}/kernels`);
  if (!(res.kernels || []).length) return;
  const page = await newPage();
  await page.goto(`${BASE}/#/p/${p.id}/kernels`);
  await page.waitForSelector('table.data tbody tr td.go a');
  const name = await page.$eval('table.data tbody tr', (tr) => tr.dataset.name);
  const k = res.kernels.find((x) => x.name === name);
  await page.click('table.data tbody tr td.go a');
  await page.waitForFunction(() => /\/timeline\?.*sel=/.test(location.hash), null, { timeout: 15000 });
  await page.waitForFunction(() => window.__xpvTimeline?.state.selected, null, { timeout: 15000 });
  const sel = await page.evaluate(() => {
    const e = window.__xpvTimeline.state.selected.ev;
    return { name: e.name, d: e.e - e.s };
  });
  eq(sel.name, name, 'the kernel is selected');
  if (k.count <= 1000 && k.max_us !== null)
    assert(Math.abs(sel.d - k.max_us) < 0.002 + 1e-6 * k.max_us, `longest: ${sel.d} vs max ${k.max_us}`);
  eq(page.errors.length, 0, `console errors: ${page.errors.join(' | ')}`);
  await page.context().close();
});

await test('timeline "Download window" carries the view and answers fewer events', async () => {
  const p = forTimeline;
  const page = await newPage();
  const mid = p.start_us + p.duration_us / 2;
  const w = p.duration_us / 20;
  await page.goto(`${BASE}/#/p/${p.id}/timeline?start_us=${mid - w}&end_us=${mid + w}`);
  await waitDrawn(page);
  await page.waitForFunction(() => /start_us=/.test(document.querySelector('a.tl-window-download')?.getAttribute('href') || ''));
  const href = await page.getAttribute('a.tl-window-download', 'href');
  const u = new URL(href, BASE);
  eq(u.pathname, `/api/profiles/${encodeURIComponent(p.id)}/trace`, 'the trace route');
  const [s, e] = [Number(u.searchParams.get('start_us')), Number(u.searchParams.get('end_us'))];
  assert(Math.abs(s - (mid - w)) < 0.01 && Math.abs(e - (mid + w)) < 0.01, `window [${s}, ${e}] is the view`);
  assert(await page.isVisible('button.tl-window-perfetto'), 'the Perfetto window button is there');
  const countX = async (url) => {
    const res = await fetch(url);
    eq(res.status, 200, `${url} answers`);
    const j = await res.json();
    const evs = Array.isArray(j) ? j : j.traceEvents;
    return { x: evs.filter((x) => x.ph === 'X').length, m: evs.filter((x) => x.ph === 'M').length };
  };
  const part = await countX(u.href);
  const whole = await countX(`${BASE}/api/profiles/${encodeURIComponent(p.id)}/trace`);
  assert(part.x > 0 && part.x < whole.x, `window has ${part.x} X events, the whole trace ${whole.x}`);
  eq(part.m, whole.m, 'metadata events kept');
  eq(page.errors.length, 0, `console errors: ${page.errors.join(' | ')}`);
  await page.context().close();
});

await test('Perfetto button and trace download link on every profile page', async () => {
  const p = byKernels;
  const page = await newPage();
  for (const tab of ['overview', 'kernels', 'timeline', 'tools']) {
    await page.goto(`${BASE}/#/p/${p.id}/${tab}`);
    await page.waitForSelector('#profile-actions:not([hidden])');
    assert(await page.isVisible('#open-perfetto'), `Perfetto button on ${tab}`);
    const href = await page.getAttribute('#download-trace', 'href');
    eq(href, `/api/profiles/${encodeURIComponent(p.id)}/trace`, `download link on ${tab}`);
  }
  const res = await fetch(`${BASE}/api/profiles/${p.id}/trace`, { method: 'HEAD' }).catch(() => null);
  assert(!res || res.status < 500, 'trace route answers');
  await page.context().close();
});

await test('dark theme and 4K: pages render with no console errors', async () => {
  const p = byKernels;
  const page = await newPage({ dark: true });
  for (const tab of [
    'profiles',
    `p/${bySteps.id}/overview`,
    `p/${p.id}/kernels`,
    `p/${forTimeline.id}/timeline`,
    `p/${p.id}/tools`,
    'tb',
  ]) {
    await page.goto(`${BASE}/#/${tab}`);
    await page.waitForTimeout(tab.endsWith('timeline') ? 1500 : 800);
    await shot(page, `dark-${tab.split('/').pop()}`);
  }
  const bg = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
  assert(/rgb\((\d+), (\d+), (\d+)\)/.test(bg) && Number(bg.match(/\d+/)[0]) < 60, `dark background, got ${bg}`);
  eq(page.errors.length, 0, `console errors: ${page.errors.join(' | ')}`);
  await page.context().close();
  const big = await newPage({ viewport: { width: 1920, height: 1080 }, scale: 2 });
  await big.goto(`${BASE}/#/p/${forTimeline.id}/timeline`);
  await big.waitForFunction(
    () =>
      Number(document.querySelector('canvas.tl-canvas')?.dataset.eventsDrawn || 0) +
        Number(document.querySelector('canvas.tl-canvas')?.dataset.summariesDrawn || 0) >
      0,
    null,
    { timeout: 20000 },
  );
  const dims = await big.$eval('canvas.tl-canvas', (c) => [c.width, c.clientWidth]);
  eq(dims[0], dims[1] * 2, 'canvas backing store at devicePixelRatio 2');
  const res = new URL(
    (await big.evaluate(() => performance.getEntriesByType('resource').map((e) => e.name)))
      .filter((u) => u.includes('/events?'))
      .pop(),
  );
  assert(Number(res.searchParams.get('resolution')) >= dims[0], 'resolution in device pixels');
  await shot(big, 'timeline-4k');
  eq(big.errors.length, 0, `console errors: ${big.errors.join(' | ')}`);
  await big.context().close();
});

await test('error and empty states: API down, unknown profile, profile with an error', async () => {
  const page = await newPage();
  await page.route('**/api/profiles', (r) => r.abort());
  await page.goto(`${BASE}/#/profiles`);
  await page.waitForSelector('.state.error');
  assert((await page.textContent('.state.error')).includes('not answering'), 'API down message');
  await shot(page, 'state-api-down');
  await page.unroute('**/api/profiles');
  await page.goto(`${BASE}/#/p/00000000deadbeef/overview`);
  await page.waitForSelector('.state.error');
  assert((await page.textContent('.state.error h2')).includes('No such profile'), 'unknown profile');
  const bad = profiles.find((p) => p.status === 'error');
  if (bad) {
    await page.goto(`${BASE}/#/p/${bad.id}/overview`);
    await page.waitForSelector('.state.error');
    assert((await page.textContent('.state.error')).includes(bad.error || ''), 'error message shown');
    await shot(page, 'state-profile-error');
  }
  await page.context().close();
});

await test('start page follows the server --ui mode', async () => {
  const health = await api('/api/health');
  const runs = await api('/data/plugin/profile/runs');
  let landingRun = runs[0]; // the newest run with a tool (a run of broken captures has none)
  for (const r of runs.slice(0, 10)) {
    if ((await api(`/data/plugin/profile/run_tools?run=${encodeURIComponent(r)}`)).length) {
      landingRun = r;
      break;
    }
  }
  // The real mode, then each mode as /api/health would say it: app.js
  // chooses the start page from that answer alone.
  for (const mode of [health.ui || 'both', 'both', 'perfetto', 'tensorboard']) {
    const page = await newPage();
    if (mode !== (health.ui || 'both'))
      await page.route('**/api/health', async (r) => {
        const res = await r.fetch();
        r.fulfill({ response: res, json: { ...(await res.json()), ui: mode } });
      });
    await page.goto(`${BASE}/`);
    const want =
      mode === 'perfetto'
        ? /^#\/p\/[0-9a-f]+\/timeline(\?.*)?$/ // the timeline may have put its view in the address
        : mode === 'tensorboard'
          ? new RegExp(`^#/tb/${escapeRe(encodeURIComponent(landingRun))}/[^/]+/[^/]+$`)
          : /^#\/profiles$/;
    await page.waitForFunction((re) => new RegExp(re).test(location.hash), want.source, { timeout: 15000 }).catch(() => {});
    const hash = await page.evaluate(() => location.hash);
    assert(want.test(hash), `mode ${mode} landed on ${hash}`);
    eq(await page.isHidden('#tb-link'), mode === 'perfetto', `TensorBoard link hidden only with --ui=perfetto (${mode})`);
    if (mode === 'perfetto') {
      // Its routes are off in this mode: the view says so and asks nothing.
      await page.goto(`${BASE}/#/tb`);
      await page.waitForSelector('.tb-main .state h2');
      eq(await page.textContent('.tb-main .state h2'), 'The TensorBoard view is off', 'TensorBoard view with --ui=perfetto');
    }
    eq(page.errors.length, 0, `console errors (${mode}): ${page.errors.join(' | ')}`);
    await page.context().close();
  }
});

// ---- the TensorBoard view (#/tb/<run>/<tool>/<host>) ----

function escapeRe(s) {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
const tbq = (route, params) => `/data/plugin/profile/${route}?${new URLSearchParams(params)}`;
const tbHash = (...parts) => `#/tb/${parts.map(encodeURIComponent).join('/')}`;
// The view says which (run, tool, host) it shows once it has drawn it; the
// parts not given may be any.
// Where the view lands without a run in the address: the newest run with a tool.
async function firstRunWithTools(runs) {
  for (const r of runs.slice(0, 10)) if ((await api(tbq('run_tools', { run: r }))).length) return r;
  return runs[0];
}
async function tbReady(page, ...parts) {
  const want = parts.join('|') + (parts.length < 3 ? '|' : '');
  await page.waitForFunction(
    ([w, exact]) => {
      const r = document.querySelector('.tb-main')?.dataset.ready;
      return r !== undefined && (exact ? r === w : r.startsWith(w));
    },
    [want, parts.length === 3],
    { timeout: 20000 },
  );
  return page.$eval('.tb-main', (m) => m.dataset.ready);
}
const optionsOf = (page, sel) =>
  page.$$eval(`${sel} option`, (os) => os.map((o) => ({ value: o.value, text: o.textContent, disabled: o.disabled })));
// What the table shows: its size, column ids and the raw values of its first row.
const shownTable = (page) =>
  page.$eval('.tb-main table.data, .tool-main table.data', (t) => ({
    rows: Number(t.dataset.rows),
    drawn: t.querySelectorAll('tbody tr').length,
    cols: [...t.querySelectorAll('thead button.sort')].map((b) => b.dataset.key),
    first: [...(t.querySelector('tbody tr')?.querySelectorAll('td') || [])].map((td) => td.dataset.value),
  }));
const rawText = (v) => (v === null || v === undefined ? 'null' : typeof v === 'object' ? JSON.stringify(v) : String(v));
const csvField = (s) => (/[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s);
async function expectCsv(href, labels, what) {
  const res = await fetch(new URL(href, BASE));
  eq(res.status, 200, `${what}: CSV status`);
  assert((res.headers.get('content-type') || '').startsWith('text/csv'), `${what}: CSV type ${res.headers.get('content-type')}`);
  const head = (await res.text()).split(/\r?\n/)[0];
  eq(head, labels.map(csvField).join(','), `${what}: CSV header`);
}
// The host's profile, as the data route picks it (indexed ok first, newest first).
function profileOf(run, host) {
  const all = profiles.filter((p) => p.run === run && p.host === host && !p.companion_of);
  return all.find((p) => p.status === 'ok') || all[0];
}

await test('TensorBoard view: walks runs, tools and hosts; tables equal the data route', async () => {
  const runs = await api(tbq('runs', {}));
  assert(runs.length > 0, 'the server lists no run');
  const landingRun = await firstRunWithTools(runs);
  const page = await newPage();
  await page.goto(`${BASE}/#/tb`);
  await tbReady(page, landingRun);
  eq((await optionsOf(page, '#tb-run')).map((o) => o.value).join('\n'), runs.join('\n'), 'runs, newest first');
  const shotTaken = new Set();
  let views = 0;
  for (const run of runs) {
    if ((await page.inputValue('#tb-run')) !== run) await page.selectOption('#tb-run', run);
    await tbReady(page, run);
    const tools = await api(tbq('run_tools', { run }));
    const offered = await optionsOf(page, '#tb-tool');
    eq(offered.map((o) => o.value).join(','), tools.join(','), `tools of ${run}`);
    for (const tool of tools) {
      if ((await page.inputValue('#tb-tool')) !== tool) await page.selectOption('#tb-tool', tool);
      await tbReady(page, run, tool);
      const hosts = (await api(tbq('hosts', { run, tag: tool }))).map((x) => x.hostname);
      const hostOpts = await optionsOf(page, '#tb-host');
      eq(hostOpts.map((o) => o.value).join(','), hosts.join(','), `hosts of ${run} for ${tool}`);
      for (const o of hostOpts) {
        if (o.value === 'ALL_HOSTS') eq(o.text, 'All hosts', 'ALL_HOSTS reads "All hosts"');
        // A host is offered exactly when the routes have its data.
        let status;
        if (tool === 'trace_viewer') {
          const p = profileOf(run, o.value);
          status = p && p.status === 'ok' && p.events > 0 ? 200 : 404;
        } else {
          status = (await fetch(BASE + tbq('data', { run, tag: tool, host: o.value }))).status;
        }
        eq(o.disabled, status === 404, `${run} ${tool} ${o.value}: disabled when the data route says No Data`);
        if (o.disabled) continue;
        if ((await page.inputValue('#tb-host')) !== o.value) await page.selectOption('#tb-host', o.value);
        await tbReady(page, run, tool, o.value);
        eq(await page.evaluate(() => location.hash), tbHash(run, tool, o.value), 'the address is the view');
        if (o.value !== 'ALL_HOSTS') {
          const side = await page.textContent('.tb-links');
          assert(side.startsWith('This host') && !side.includes('null'), `${run} ${tool} ${o.value}: host links read "${side}"`);
        }
        views++;
        if (tool === 'trace_viewer') {
          await waitDrawn(page);
          assert(await page.isVisible('.tb-main canvas.tl-canvas'), 'the timeline is drawn in the view');
        } else {
          const dt = await api(tbq('data', { run, tag: tool, host: o.value }));
          const t = await shownTable(page);
          eq(t.rows, dt.rows.length, `${run} ${tool} ${o.value}: rows`);
          eq(t.drawn, Math.min(dt.rows.length, 500), `${run} ${tool} ${o.value}: rows drawn`);
          eq(t.cols.join(','), dt.cols.map((c) => c.id).join(','), `${run} ${tool} ${o.value}: columns`);
          if (dt.rows.length)
            eq(
              t.first.join('\u0001'),
              dt.rows[0].c.map((c) => rawText(c.v)).join('\u0001'),
              `${run} ${tool} ${o.value}: first row`,
            );
          const href = await page.getAttribute('.tb-main a.csv', 'href');
          await expectCsv(
            href,
            dt.cols.map((c) => c.label),
            `${run} ${tool} ${o.value}`,
          );
        }
        if (!shotTaken.has(tool)) {
          shotTaken.add(tool);
          await page.waitForTimeout(300);
          await shot(page, `tb-${tool}`);
        }
      }
    }
  }
  assert(views > 0, 'no view was shown');
  console.log(`     walked ${views} views over ${runs.length} runs`);
  eq(page.errors.length, 0, `console errors: ${page.errors.join(' | ')}`);
  await page.context().close();
});

await test('TensorBoard view: deep links and reload restore the view; no tool without data offered', async () => {
  const runs = await api(tbq('runs', {}));
  // A run with kernel_stats on two hosts or more, to pick one that is not the default.
  let pick = null;
  for (const run of runs) {
    if (!(await api(tbq('run_tools', { run }))).includes('kernel_stats')) continue;
    const hosts = (await api(tbq('hosts', { run, tag: 'kernel_stats' }))).map((x) => x.hostname);
    const withData = [];
    const without = [];
    for (const host of hosts)
      ((await fetch(BASE + tbq('data', { run, tag: 'kernel_stats', host }))).ok ? withData : without).push(host);
    if (withData.length >= 2 || (!pick && withData.length)) pick = { run, withData, without };
    if (withData.length >= 2 && without.length) break;
  }
  assert(pick, 'no run has kernel_stats');
  const { run } = pick;
  const host = pick.withData[pick.withData.length - 1];
  const page = await newPage();
  const dataReqs = [];
  page.on('request', (r) => {
    if (r.url().includes('/data/plugin/profile/data?')) dataReqs.push(new URL(r.url()).searchParams);
  });
  await page.goto(`${BASE}/${tbHash(run, 'kernel_stats', host)}`);
  await tbReady(page, run, 'kernel_stats', host);
  const want = await api(tbq('data', { run, tag: 'kernel_stats', host }));
  for (const load of ['deep link', 'reload']) {
    if (load === 'reload') {
      await page.reload();
      await tbReady(page, run, 'kernel_stats', host);
    }
    eq(await page.inputValue('#tb-run'), run, `${load}: run`);
    eq(await page.inputValue('#tb-tool'), 'kernel_stats', `${load}: tool`);
    eq(await page.inputValue('#tb-host'), host, `${load}: host`);
    eq(await page.evaluate(() => location.hash), tbHash(run, 'kernel_stats', host), `${load}: address kept`);
    eq((await shownTable(page)).rows, want.rows.length, `${load}: rows`);
  }
  // A choice is a history entry: back returns to the host before it.
  if (pick.withData.length >= 2) {
    const other = pick.withData[0];
    await page.selectOption('#tb-host', other);
    await tbReady(page, run, 'kernel_stats', other);
    await page.goBack();
    await tbReady(page, run, 'kernel_stats', host);
    eq(await page.inputValue('#tb-host'), host, 'back restores the host');
  }
  // A host without the tool's data is listed but disabled, and its data is never asked for.
  if (pick.without.length) {
    const none = pick.without[0];
    const opt = (await optionsOf(page, '#tb-host')).find((o) => o.value === none);
    assert(opt && opt.disabled && /no data/.test(opt.text), `host ${none} is marked "no data"`);
    await page.goto(`${BASE}/${tbHash(run, 'kernel_stats', none)}`);
    await tbReady(page, run, 'kernel_stats', none);
    assert((await page.textContent('.tb-main .state h2')).includes('has no data'), 'no-data state for the host');
    assert(!dataReqs.some((q) => q.get('host') === none), 'no data request for a host without data');
    await shot(page, 'tb-host-without-data');
  }
  // A tool the run has no data for is not offered; a deep link to it says so.
  const tools = await api(tbq('run_tools', { run }));
  const XPROF_TOOLS = [
    'overview_page',
    'input_pipeline_analyzer',
    'framework_op_stats',
    'hlo_stats',
    'op_profile',
    'roofline_model',
    'pod_viewer',
    'memory_profile',
    'kernel_stats',
    'trace_viewer',
  ];
  const missing = XPROF_TOOLS.find((t) => !tools.includes(t));
  if (missing) {
    await page.goto(`${BASE}/${tbHash(run, missing, host)}`);
    await tbReady(page, run, missing);
    const offered = (await optionsOf(page, '#tb-tool')).filter((o) => !o.disabled).map((o) => o.value);
    eq(offered.join(','), tools.join(','), `only the run's tools are offered (not ${missing})`);
    assert((await page.textContent('.tb-main .state h2')).includes('has no data for this run'), `${missing}: no-data state`);
    assert(!dataReqs.some((q) => q.get('tag') === missing), `no data request for ${missing}`);
    await shot(page, 'tb-tool-without-data');
  }
  eq(page.errors.length, 0, `console errors: ${page.errors.join(' | ')}`);
  await page.context().close();
});

await test('TensorBoard view: All hosts, properties and number formats (answers mocked)', async () => {
  // No tool merges hosts yet on every branch: the hosts and data answers are
  // mocked from a real one, with the properties and columns a tool may add.
  const runs = await api(tbq('runs', {}));
  let run = null;
  let host = null;
  for (const r of runs) {
    if (!(await api(tbq('run_tools', { run: r }))).includes('kernel_stats')) continue;
    for (const x of await api(tbq('hosts', { run: r, tag: 'kernel_stats' })))
      if (!host && (await fetch(BASE + tbq('data', { run: r, tag: 'kernel_stats', host: x.hostname }))).ok) {
        run = r;
        host = x.hostname;
      }
    if (run) break;
  }
  if (!run) return;
  const real = await api(tbq('data', { run, tag: 'kernel_stats', host }));
  const merged = {
    cols: [...real.cols, { id: 'time_fraction', label: 'Time fraction', type: 'number' }],
    rows: real.rows.map((r, i) => ({ c: [...r.c, { v: i === 0 ? 0.1234 : null }] })),
    p: {
      verdict: 'Your program is not input-bound',
      recommendation: 'Look at the top kernels first.',
      summary: 'Merged from every host',
      hosts: '2',
    },
  };
  const page = await newPage();
  await page.route('**/data/plugin/profile/hosts?*', async (r) => {
    const res = await r.fetch();
    const hosts = await res.json();
    const tag = new URL(r.request().url()).searchParams.get('tag');
    r.fulfill({ response: res, json: tag === 'kernel_stats' ? [{ hostname: 'ALL_HOSTS' }, ...hosts] : hosts });
  });
  await page.route('**/data/plugin/profile/data?*', async (r) => {
    const q = new URL(r.request().url()).searchParams;
    if (q.get('host') === 'ALL_HOSTS') r.fulfill({ json: merged });
    else r.continue();
  });
  await page.goto(`${BASE}/${tbHash(run, 'kernel_stats')}`);
  await tbReady(page, run, 'kernel_stats', 'ALL_HOSTS');
  const first = (await optionsOf(page, '#tb-host'))[0];
  eq(`${first.value} ${first.text}`, 'ALL_HOSTS All hosts', 'All hosts leads the host list');
  eq(await page.evaluate(() => location.hash), tbHash(run, 'kernel_stats', 'ALL_HOSTS'), 'All hosts in the address');
  eq(await page.textContent('.tool-props .verdict'), merged.p.verdict, 'verdict shown');
  assert(
    (await page.textContent('.tool-props [data-prop="recommendation"]')).includes(merged.p.recommendation),
    'recommendation',
  );
  assert((await page.textContent('.tool-props [data-prop="summary"]')).includes(merged.p.summary), 'summary');
  eq(await page.textContent('.tool-props dd[data-prop="hosts"]'), '2', 'other properties listed');
  eq(await page.textContent('.tb-main tbody tr td[data-key="time_fraction"]'), '12.34%', 'a fraction reads as a percentage');
  const us = real.rows[0].c[real.cols.findIndex((c) => c.id === 'total_duration_us')].v;
  eq(
    await page.textContent('.tb-main tbody tr td[data-key="total_duration_us"]'),
    us.toLocaleString('en-US', { minimumFractionDigits: 3, maximumFractionDigits: 3 }),
    'microseconds with fixed decimals',
  );
  const csv = new URL(await page.getAttribute('.tb-main a.csv', 'href'), BASE);
  eq(csv.searchParams.get('host'), 'ALL_HOSTS', 'CSV of all hosts');
  // Sorting and filtering work on any table.
  await page.click('.tb-main button.sort[data-key="total_duration_us"]');
  const totals = await page.$$eval('.tb-main td[data-key="total_duration_us"]', (tds) => tds.map((t) => Number(t.dataset.value)));
  assert(
    totals.every((v, i) => i === 0 || totals[i - 1] >= v),
    'sorted by total, largest first',
  );
  const name = real.rows[0].c[real.cols.findIndex((c) => c.id === 'kernel_name')].v;
  await page.fill('.tb-main input[type="search"]', name);
  const names = await page.$$eval('.tb-main td[data-key="kernel_name"]', (tds) => tds.map((t) => t.dataset.value));
  assert(names.length >= 1 && names.every((n) => n.toLowerCase().includes(name.toLowerCase())), 'filtered by name');
  await page.fill('.tb-main input[type="search"]', '');
  await shot(page, 'tb-all-hosts');
  eq(page.errors.length, 0, `console errors: ${page.errors.join(' | ')}`);
  await page.context().close();
});

await test('profile Tools tab: every tool of the profile, drawn from our JSON', async () => {
  const p = byKernels;
  const tools = await api(`/api/profiles/${p.id}/tools`);
  const page = await newPage();
  await page.goto(`${BASE}/#/p/${p.id}/tools`);
  await page.waitForSelector('#tabs a[data-page="tools"][aria-current="page"]');
  await page.waitForSelector('.subtabs a');
  const listed = await page.$$eval('.subtabs a', (as) => as.map((a) => [a.dataset.tool, a.getAttribute('href')]));
  eq(listed.map((x) => x[0]).join(','), tools.join(','), 'tools listed as the API lists them');
  for (const [tool, href] of listed)
    eq(href, tool === 'trace_viewer' ? `#/p/${p.id}/timeline` : `#/p/${p.id}/tools/${tool}`, `${tool} link`);
  for (const tool of tools.filter((t) => t !== 'trace_viewer')) {
    // A fresh document each time: a hash change would leave the last tool on screen until the next one draws.
    await page.goto('about:blank');
    await page.goto(`${BASE}/#/p/${p.id}/tools/${tool}`);
    await page.waitForSelector(`.tool-main[data-tool="${tool}"] table.data`, { timeout: 15000 });
    const want = await api(`/api/profiles/${p.id}/tools/${tool}`);
    const t = await shownTable(page);
    eq(t.rows, want.rows.length, `${tool}: rows`);
    eq(t.cols.join(','), want.columns.map((c) => c.id).join(','), `${tool}: columns`);
    if (want.rows.length)
      eq(t.first.join('\u0001'), want.columns.map((c) => rawText(want.rows[0][c.id])).join('\u0001'), `${tool}: first row`);
    const href = await page.getAttribute('.tool-main a.csv', 'href');
    eq(href, `/api/profiles/${p.id}/tools/${tool}?format=csv`, `${tool}: CSV link`);
    await expectCsv(
      href,
      want.columns.map((c) => c.label),
      tool,
    );
    await shot(page, `profile-tools-${tool}`);
  }
  // A tool the profile has no data for says so instead of an empty table.
  await page.goto(`${BASE}/#/p/${p.id}/tools/no_such_tool`);
  // Wait for the answer's state, not the loading one that may stand there first.
  await page
    .waitForFunction(() => (document.querySelector('.tool-main .state h2')?.textContent || '').includes('has no data'), null, {
      timeout: 10000,
    })
    .catch(() => {});
  assert((await page.textContent('.tool-main .state h2')).includes('has no data'), 'unknown tool: no-data state');
  eq(page.errors.length, 0, `console errors: ${page.errors.join(' | ')}`);
  await page.context().close();
});

// ---- the tools' charts (tool_charts.js) ----

// The marks each chart should draw, worked out from the data route's table
// alone: {chart, marks, roof (roofline: which roof lines), slowest (pod)}.
function expectedChart(tool, dt) {
  const col = (id) => dt.cols.findIndex((c) => c.id === id);
  const v = (r, id) => (col(id) < 0 ? undefined : (r.c[col(id)]?.v ?? null));
  const isNum = (x) => typeof x === 'number' && Number.isFinite(x);
  const p = dt.p || {};
  switch (tool) {
    case 'overview_page': {
      const n = dt.rows.filter((r) => v(r, 'section') === 'step time graph' && isNum(v(r, 'step'))).length;
      return n ? { chart: 'step-time', marks: n } : null;
    }
    case 'roofline_model': {
      const n = dt.rows.filter((r) => v(r, 'operational_intensity') > 0 && v(r, 'measured_flop_rate') > 0).length;
      const peak = Number(p.peak_teraflops_per_second) > 0,
        bw = Number(p.peak_hbm_bw_gigabytes_per_second) > 0;
      const roof = [bw ? 'memory' : null, peak ? 'compute' : null, peak && bw ? 'ridge' : null].filter(Boolean);
      return n || roof.length ? { chart: 'roofline', marks: n, roof } : null;
    }
    case 'pod_viewer': {
      const rows = dt.rows.filter((r) => isNum(v(r, 'step')) && v(r, 'host') !== null);
      const hosts = new Set(rows.map((r) => v(r, 'host'))).size,
        steps = new Set(rows.map((r) => v(r, 'step'))).size;
      return rows.length
        ? { chart: 'pod-heatmap', marks: rows.length, hosts, steps, slowest: rows.filter((r) => v(r, 'slowest') === true).length }
        : null;
    }
    case 'input_pipeline_analyzer': {
      const n = dt.rows.filter((r) => isNum(v(r, 'stepnum')) && isNum(v(r, 'step_time_us'))).length;
      return n ? { chart: 'input-bars', marks: n } : null;
    }
    case 'op_profile':
    case 'hlo_stats': {
      const rows = dt.rows.filter((r) => isNum(v(r, 'total_self_time')) && (tool === 'hlo_stats' || v(r, 'level') === 1));
      const n = new Set(rows.map((r) => String(v(r, tool === 'op_profile' ? 'name' : 'category') ?? '(no category)'))).size;
      return n ? { chart: 'categories', marks: n } : null;
    }
    default:
      return null;
  }
}
const CHART_TOOLS = ['overview_page', 'roofline_model', 'pod_viewer', 'input_pipeline_analyzer', 'op_profile', 'hlo_stats'];
const shownChart = (page) =>
  page.$$eval('.tb-main .tool-chart, .tool-main .tool-chart', (fs) =>
    fs.map((f) => ({
      chart: f.dataset.chart,
      title: f.querySelector('figcaption h2')?.textContent || '',
      svgTitle: f.querySelector('svg > title')?.textContent || '',
      label: f.querySelector('svg')?.getAttribute('aria-label') || '',
      axes: [...f.querySelectorAll('svg .axis-title')].map((t) => t.textContent),
      marks: f.querySelectorAll('[data-mark]').length,
      focusable: f.querySelectorAll('[data-mark][tabindex="0"]').length,
      roof: [...f.querySelectorAll('[data-roof]:not(p)')].map((e) => e.dataset.roof),
      slowest: f.querySelectorAll('[data-mark][data-slowest]').length,
    })),
  );

await test('tool charts: every chart tool, run and host draws the marks its table implies', async () => {
  const runs = await api(tbq('runs', {}));
  const page = await newPage();
  const seen = {}; // chart -> views checked
  const shotTaken = new Set();
  let fullRoof = 0,
    fullPod = 0;
  for (const run of runs) {
    const tools = (await api(tbq('run_tools', { run }))).filter((t) => CHART_TOOLS.includes(t));
    for (const tool of tools) {
      for (const { hostname: host } of await api(tbq('hosts', { run, tag: tool }))) {
        const res = await fetch(BASE + tbq('data', { run, tag: tool, host }));
        if (!res.ok) continue; // a host without the tool's data is never drawn
        const dt = await res.json();
        const want = expectedChart(tool, dt);
        await page.goto('about:blank');
        await page.goto(`${BASE}/${tbHash(run, tool, host)}`);
        await tbReady(page, run, tool, host);
        const got = await shownChart(page);
        const what = `${run} ${tool} ${host}`;
        if (!want) {
          eq(got.length, 0, `${what}: no chart without its data`);
          continue;
        }
        eq(got.length, 1, `${what}: one chart`);
        const c = got[0];
        eq(c.chart, want.chart, `${what}: chart`);
        eq(c.marks, want.marks, `${what}: marks`);
        eq(c.focusable, want.marks, `${what}: every mark focusable`);
        assert(c.title && c.svgTitle && c.label, `${what}: titled (${JSON.stringify(c)})`);
        if (want.chart !== 'step-time' && want.chart !== 'categories')
          assert(c.axes.length === 2, `${what}: two axis titles ${c.axes}`);
        if (want.roof) {
          eq(c.roof.sort().join(','), want.roof.sort().join(','), `${what}: roof drawn only from the peaks the answer gives`);
          if (want.roof.length === 3 && want.marks) fullRoof++;
        }
        if (want.chart === 'pod-heatmap') {
          eq(c.slowest, want.slowest, `${what}: slowest host of each step outlined`);
          if (want.marks === want.hosts * want.steps && want.hosts > 1) fullPod++;
        }
        seen[want.chart] = (seen[want.chart] || 0) + 1;
        if (!shotTaken.has(tool)) {
          shotTaken.add(tool);
          await page.waitForTimeout(200);
          await shot(page, `chart-${tool}`);
        }
      }
    }
  }
  console.log(`     charts checked: ${JSON.stringify(seen)}`);
  assert(Object.keys(seen).length > 0, 'no chart was drawn at all');
  // The parts that need a given profile: the TPU v6e fixture gives peaks, xpv-gen a multi-host run.
  if (ready.some((p) => p.path.endsWith('jax-tpu-v6e-inference.xplane.pb')))
    assert(fullRoof > 0, 'the TPU v6e fixture draws a roofline with its roof, ridge and points');
  else console.log('     skip the full roofline check: no TPU v6e fixture (../shared/fixtures)');
  if (runs.some((r) => r.startsWith('pod/'))) assert(fullPod > 0, 'the generated pod run draws hosts × steps cells');
  else console.log('     skip the heat-map size check: no generated multi-host run (XPV_GEN)');
  eq(page.errors.length, 0, `console errors: ${page.errors.join(' | ')}`);
  await page.context().close();
});

await test('tool charts: hover tells a mark, a roofline click filters the table, the heat map recolours', async () => {
  const runs = await api(tbq('runs', {}));
  const page = await newPage({ viewport: { width: 1280, height: 1000 } });
  let did = 0;
  const pod = runs.find((r) => r.startsWith('pod/'));
  if (pod) {
    const dt = await api(tbq('data', { run: pod, tag: 'pod_viewer', host: 'ALL_HOSTS' }));
    await page.goto(`${BASE}/${tbHash(pod, 'pod_viewer', 'ALL_HOSTS')}`);
    await tbReady(page, pod, 'pod_viewer', 'ALL_HOSTS');
    await page.hover('.tool-chart [data-mark]');
    assert(await page.isVisible('.tool-chart .tooltip'), 'a cell tells its numbers on hover');
    await page.selectOption('.tool-chart select[data-heat-component]', 'compute_us');
    const ci = dt.cols.findIndex((c) => c.id === 'compute_us');
    const hi = dt.cols.findIndex((c) => c.id === 'host');
    const si = dt.cols.findIndex((c) => c.id === 'step');
    const want = Object.fromEntries(dt.rows.map((r) => [`${r.c[hi].v}|${r.c[si].v}`, String(r.c[ci].v ?? 'null')]));
    const cells = await page.$$eval('.tool-chart [data-mark]', (rs) =>
      rs.map((r) => [`${r.dataset.host}|${r.dataset.step}`, r.dataset.value]),
    );
    eq(cells.length, dt.rows.length, 'heat map cells after recolouring');
    for (const [k, val] of cells) eq(val, want[k], `compute of ${k}`);
    await shot(page, 'chart-pod-compute');
    did++;
  } else console.log('     skip the heat map: no generated multi-host run (XPV_GEN)');
  const tpu = ready.find((p) => p.path.endsWith('jax-tpu-v6e-inference.xplane.pb'));
  if (tpu) {
    await page.goto(`${BASE}/#/p/${tpu.id}/tools/roofline_model`);
    await page.waitForSelector('.tool-main[data-tool="roofline_model"] .tool-chart [data-mark]', { timeout: 15000 });
    // The last point drawn is on top of any it overlaps.
    const point = page.locator('.tool-chart [data-mark]').last();
    const op = await point.getAttribute('data-op');
    await point.hover();
    assert((await page.textContent('.tool-chart .tooltip')).includes(op), 'a point tells its op on hover');
    await point.click();
    eq(await page.inputValue('.tool-main input[type="search"]'), op, 'a click filters the table to the op');
    const names = await page.$$eval('.tool-main td[data-key="hlo_op_name"]', (tds) => tds.map((t) => t.dataset.value));
    assert(names.length >= 1 && names.every((n) => n.toLowerCase().includes(op.toLowerCase())), `table filtered to ${op}`);
    assert((await page.textContent('.tool-chart')).includes('Measured:'), 'the legend says what is measured');
    assert((await page.textContent('.tool-chart')).includes('Derived:'), 'the legend says what is derived');
    await shot(page, 'chart-roofline-picked');
    did++;
  } else console.log('     skip the roofline clicks: no TPU v6e fixture (../shared/fixtures)');
  if (!did) console.log('     nothing to click: neither fixture nor generated run');
  eq(page.errors.length, 0, `console errors: ${page.errors.join(' | ')}`);
  await page.context().close();
});

// Flows, counters and area selection (issue 21) on the PyTorch H100 fixture:
// its kernels have launches by correlation id, its [memory] instants carry totals.
const linked = ready.find((p) => p.path.endsWith('pytorch-h100-bert-small.json.gz'));
if (!linked) console.log('skip timeline links, area and counter tests: no PyTorch H100 fixture (../shared/fixtures)');

// A kernel of the profile whose launch the event answer links, with that answer.
async function kernelWithLaunch(p) {
  const found = await api(`/api/profiles/${p.id}/search?q=void&limit=200`);
  for (const m of found.matches) {
    const d = await api(`/api/profiles/${p.id}/event?ref=${encodeURIComponent(m.ref)}`);
    const launch = (d.flows || []).find((f) => f.direction === 'in' && f.via === 'correlation');
    if (d.kind === 'kernel' && launch) return { kernel: d, launch };
  }
  return null;
}

if (linked)
  await test('timeline: a kernel shows its launch arrow and latency; a deep link restores window, selection and pins', async () => {
    assert(linked, 'the PyTorch H100 fixture is indexed');
    const pick = await kernelWithLaunch(linked);
    assert(pick, 'a kernel with a linked launch');
    const { kernel, launch } = pick;
    const pad = (kernel.end_us - launch.start_us) * 0.5;
    const start = launch.start_us - pad,
      end = kernel.end_us + pad;
    const page = await newPage();
    await page.goto(`${BASE}/#/p/${linked.id}/timeline?start_us=${start}&end_us=${end}&sel=${kernel.ref}&pins=${launch.track}`);
    await page.waitForFunction((ref) => window.__xpvTimeline?.state.selected?.ev.ref === ref, kernel.ref, { timeout: 15000 });
    await page.waitForFunction(() => Number(document.querySelector('canvas.tl-canvas').dataset.flowsDrawn) >= 1, null, {
      timeout: 10000,
    });
    const s = await tlState(page);
    assert(Math.abs(s.view[0] - start) < 0.01 && Math.abs(s.view[1] - end) < 0.01, `view ${s.view} is the linked one`);
    eq(s.pins.join(','), String(launch.track), 'the linked pin is restored');
    eq(s.labels[0].id, launch.track, 'the pinned (launching) track is first');
    const flows = await page.evaluate(() => window.__xpvTimeline.state.flows);
    eq(flows.length, kernel.flows.length, 'the drawn links are the API answer');
    const shown = flows.find((f) => f.ref === launch.ref);
    eq(shown && shown.latency_us, launch.latency_us, 'the latency is the API one');
    const item = page.locator(`.tl-details button.tl-flow[data-ref="${launch.ref}"]`);
    assert((await item.textContent()).includes(launch.name), 'the details list the launch');
    const latencyText = await page.locator('.tl-details .tl-flow-latency').first().textContent();
    assert(/launch latency/.test(latencyText), `the details say the launch latency: ${latencyText}`);
    await shot(page, 'timeline-flow');
    // Following the link selects the launch, which links back out to the kernel.
    await item.click();
    await page.waitForFunction((ref) => window.__xpvTimeline.state.selected?.ev.ref === ref, launch.ref, { timeout: 10000 });
    await page.waitForFunction(
      (ref) => window.__xpvTimeline.state.flows.some((f) => f.direction === 'out' && f.ref === ref),
      kernel.ref,
      { timeout: 10000 },
    );
    eq(page.errors.length, 0, `console errors: ${page.errors.join(' | ')}`);
    await page.context().close();
  });

if (linked)
  await test('timeline area selection: Shift+drag sums the area as the API does; rows sort and highlight', async () => {
    assert(linked, 'the PyTorch H100 fixture is indexed');
    const page = await newPage();
    await page.goto(`${BASE}/#/p/${linked.id}/timeline`);
    await waitDrawn(page);
    const box = await page.locator('canvas.tl-canvas').boundingBox();
    await page.keyboard.down('Shift');
    await page.mouse.move(box.x + box.width * 0.2, box.y + 30);
    await page.mouse.down();
    await page.mouse.move(box.x + box.width * 0.5, box.y + 200, { steps: 5 });
    await page.mouse.move(box.x + box.width * 0.8, box.y + box.height - 40, { steps: 5 });
    await page.mouse.up();
    await page.keyboard.up('Shift');
    await page.waitForFunction(() => document.querySelector('canvas.tl-canvas').dataset.areaState === 'done', null, {
      timeout: 20000,
    });
    const area = await page.evaluate(() => {
      const a = window.__xpvTimeline.state.area;
      return { s: a.s, e: a.e, tracks: a.tracks };
    });
    assert(area.tracks.length >= 2, `the drag crossed several tracks: ${area.tracks}`);
    const q = new URLSearchParams({ start_us: area.s, end_us: area.e, tracks: area.tracks.join(',') });
    const want = await api(`/api/profiles/${linked.id}/aggregate?${q}`);
    assert(want.rows.length > 0, 'the area holds slices');
    const names = await page.$$eval('.tl-area-table tbody tr', (trs) => trs.map((t) => t.dataset.name));
    eq(names.join('\n'), want.rows.map((r) => r.name).join('\n'), 'rows in the API order (total, descending)');
    const counts = await page.$$eval('.tl-area-table tbody tr td:nth-child(2)', (tds) =>
      tds.map((t) => Number(t.textContent.replace(/[^0-9]/g, ''))),
    );
    eq(counts.join(','), want.rows.map((r) => r.count).join(','), 'counts equal the API');
    const cnt = await page.evaluate(() => window.__xpvTimeline.state.area.tracks.length);
    eq(cnt, want.tracks, 'tracks summed');
    // Sort by count, then click a row: its name is highlighted.
    await page.click('.tl-area-table thead button[data-key="count"]');
    const byCount = await page.$$eval('.tl-area-table tbody tr td:nth-child(2)', (tds) =>
      tds.map((t) => Number(t.textContent.replace(/[^0-9]/g, ''))),
    );
    assert(
      byCount.every((c, i) => i === 0 || byCount[i - 1] >= c),
      'sorted by count, descending',
    );
    const first = await page.$eval('.tl-area-table tbody tr', (t) => t.dataset.name);
    await page.click('.tl-area-table tbody tr');
    eq(await page.evaluate(() => window.__xpvTimeline.state.highlightName), first, 'the clicked name is highlighted');
    await shot(page, 'timeline-area');
    await page.keyboard.press('Escape');
    eq(await page.evaluate(() => window.__xpvTimeline.state.area), null, 'Esc clears the area');
    eq(page.errors.length, 0, `console errors: ${page.errors.join(' | ')}`);
    await page.context().close();
  });

if (linked)
  await test('timeline counter track draws the memory totals, with values on hover', async () => {
    assert(linked, 'the PyTorch H100 fixture is indexed');
    const c = await api(`/api/profiles/${linked.id}/counters?resolution=1000`);
    assert(c.counters.length > 0, 'the profile has counter series');
    const page = await newPage();
    await page.goto(`${BASE}/#/p/${linked.id}/timeline`);
    await page.waitForFunction((n) => document.querySelectorAll('.tl-label.counter').length === n, c.counters.length, {
      timeout: 15000,
    });
    await page.waitForFunction(() => Number(document.querySelector('canvas.tl-canvas').dataset.countersDrawn) > 0, null, {
      timeout: 10000,
    });
    const labels = await page.$$eval('.tl-label.counter', (ls) => ls.map((l) => l.textContent));
    assert(
      labels.some((l) => l.includes('Total Allocated')),
      `a Total Allocated track: ${labels}`,
    );
    // Hover the first counter row: the tooltip names the series and a value.
    const label = page.locator('.tl-label.counter').first();
    const lb = await label.boundingBox();
    const box = await page.locator('canvas.tl-canvas').boundingBox();
    await page.mouse.move(box.x + box.width * 0.9, lb.y + lb.height / 2);
    await page.waitForSelector('.tl-tip:not([hidden])', { timeout: 5000 });
    const tip = await page.textContent('.tl-tip');
    assert(tip.startsWith((await label.textContent()) + ':'), `the tooltip names the series: ${tip}`);
    assert(/[0-9]/.test(tip), `and gives a value: ${tip}`);
    await shot(page, 'timeline-counters');
    eq(page.errors.length, 0, `console errors: ${page.errors.join(' | ')}`);
    await page.context().close();
  });

await test('findings: the overview lists them; a click on evidence opens its timeline window', async () => {
  // The profile with the most findings that has evidence naming an event.
  let best = null;
  for (const p of ready) {
    const f = (await api(`/api/profiles/${p.id}/findings`)).findings;
    const ev = f.flatMap((x) => x.evidence).find((e) => e.ref);
    if (ev && (!best || f.length > best.findings.length)) best = { p, findings: f, ev };
  }
  assert(best, 'a profile with findings whose evidence names an event');
  const page = await newPage();
  await page.goto(`${BASE}/#/p/${best.p.id}/overview`);
  await page.waitForSelector('section.findings li.finding');
  const kinds = await page.$$eval('section.findings li.finding', (li) => li.map((x) => x.dataset.kind));
  eq(kinds.join(','), best.findings.map((f) => f.kind).join(','), 'one item per finding, most severe first');
  eq(await page.$eval('section.findings li.finding strong', (x) => x.textContent), best.findings[0].title, 'the first title');
  // The panel comes before the summary cards.
  assert(
    await page.evaluate(() => {
      const f = document.querySelector('section.findings'),
        c = document.querySelector('.cards');
      return !!(f.compareDocumentPosition(c) & Node.DOCUMENT_POSITION_FOLLOWING);
    }),
    'findings above the cards',
  );
  await shot(page, 'overview-findings');
  const link = page.locator('a.evidence', { hasText: best.ev.label }).first();
  await link.click();
  await page.waitForFunction((ref) => window.__xpvTimeline?.state.selected?.ev.ref === ref, best.ev.ref, {
    timeout: 15000,
  });
  const s = await tlState(page);
  assert(
    Math.abs(s.view[0] - best.ev.start_us) < 0.01 && Math.abs(s.view[1] - best.ev.end_us) < 0.01,
    `view ${s.view} is the evidence's [${best.ev.start_us}, ${best.ev.end_us}]`,
  );
  const named = await api(`/api/profiles/${best.p.id}/event?ref=${best.ev.ref}`);
  await page.waitForFunction((n) => document.querySelector('.tl-details h2')?.textContent === n, named.name, {
    timeout: 5000,
  });
  await shot(page, 'findings-evidence-timeline');
  // The profile list shows each profile's most severe finding.
  await page.goto(`${BASE}/#/profiles`);
  const row = `table.data tbody tr[data-id="${best.p.id}"] td.finding-cell a`;
  await page.waitForSelector(row, { timeout: 15000 });
  eq(await page.$eval(row, (a) => a.textContent), `${best.findings[0].severity} ${best.findings[0].kind}`, 'top finding');
  eq(await page.$eval(row, (a) => a.closest('td').title), best.findings[0].title, 'its title on hover');
  await shot(page, 'profiles-findings');
  eq(page.errors.length, 0, `console errors: ${page.errors.join(' | ')}`);
  await page.context().close();
});

// Live mode: the page follows the profile dir through /api/stream. The
// captures are written into the server's profile dir (run.sh passes it) as a
// profiler writes them, in pieces, and removed at the end.
const LIVE_DIR = process.env.XPV_PROFILE_DIR ? path.join(process.env.XPV_PROFILE_DIR, 'live', 'run') : null;
const liveRel = (n) => `live/run/livehost_12345.170000000000${n}.pt.trace.json`;
async function writeCapture(n, pieces = 3) {
  const ev = [{ ph: 'M', name: 'process_name', pid: 0, args: { name: 'GPU 0' } }];
  for (let i = 0; i < 50 * n; i++)
    ev.push({ ph: 'X', cat: 'kernel', name: `live_k${i % 5}`, pid: 0, tid: 7, ts: 100 + 10 * i, dur: 5 });
  const data = Buffer.from(JSON.stringify({ schemaVersion: 1, traceEvents: ev }));
  fs.mkdirSync(LIVE_DIR, { recursive: true });
  const fd = fs.openSync(path.join(process.env.XPV_PROFILE_DIR, liveRel(n)), 'w');
  const step = Math.ceil(data.length / pieces);
  for (let i = 0; i < data.length; i += step) {
    if (i) await new Promise((r) => setTimeout(r, 150));
    fs.writeSync(fd, data.subarray(i, i + step));
  }
  fs.closeSync(fd);
}

await test('live: a new capture appears in the list as latest, without a reload or polling', async () => {
  assert(LIVE_DIR, 'XPV_PROFILE_DIR is not set (run tests/browser/run.sh)');
  const page = await newPage();
  const listCalls = [];
  page.on('request', (r) => {
    if (new URL(r.url()).pathname === '/api/profiles') listCalls.push(r.url());
  });
  await page.goto(`${BASE}/#/profiles`);
  await page.waitForSelector('table[aria-label="Profiles"] tbody tr');
  await page.evaluate(() => (window.sameDocument = true));
  // Nothing changes for 4 s: no request (the list used to ask every 3 s).
  await page.waitForTimeout(1000);
  const idle = listCalls.length;
  await page.waitForTimeout(4000);
  eq(listCalls.length, idle, 'requests for /api/profiles while nothing changed');
  const t0 = Date.now();
  await writeCapture(1);
  const row = page.locator(`tr.latest td[title="${liveRel(1)}"]`).first();
  await row.waitFor({ timeout: 10000 });
  console.log(`     new capture listed as latest ${Date.now() - t0} ms after the first write`);
  assert(await page.evaluate(() => window.sameDocument === true), 'the page was reloaded');
  eq(await page.locator('tr.latest').count(), 1, 'rows marked latest');
  const p = (await api('/api/profiles/latest')).path;
  eq(p, liveRel(1), 'latest per the API');
  await shot(page, 'live-list');
  eq(page.errors.length, 0, `page errors: ${page.errors.join('; ')}`);
  await page.context().close();
});

await test('live: "Follow latest" switches the open view to the next capture; removal shows', async () => {
  assert(LIVE_DIR, 'XPV_PROFILE_DIR is not set');
  const page = await newPage();
  const first = (await api('/api/profiles/latest')).id;
  await page.goto(`${BASE}/#/p/${first}/kernels`);
  await page.waitForSelector('#follow-latest');
  eq(await page.isChecked('#follow-latest'), false, 'follow latest is off by default under --ui=both');
  await page.check('#follow-latest');
  await page.evaluate(() => (window.sameDocument = true));
  await writeCapture(2);
  await page.waitForFunction((rel) => document.getElementById('profile-title').title === rel, liveRel(2), {
    timeout: 10000,
  });
  const second = (await api('/api/profiles/latest')).id;
  assert(second !== first, 'a second profile');
  eq(page.url().split('#')[1], `/p/${second}/kernels`, 'the same page of the new capture');
  assert(await page.evaluate(() => window.sameDocument === true), 'the page was reloaded');
  await page.waitForSelector('table.data tbody tr');
  await shot(page, 'live-follow');
  // The choice is remembered; removing the captures empties them from the list.
  await page.goto(`${BASE}/#/profiles`);
  await page.waitForSelector(`td[title="${liveRel(2)}"]`);
  fs.rmSync(path.join(process.env.XPV_PROFILE_DIR, 'live'), { recursive: true });
  await page.waitForFunction(() => !document.querySelector('td[title^="live/run/"]'), null, { timeout: 10000 });
  eq(page.errors.length, 0, `page errors: ${page.errors.join('; ')}`);
  await page.context().close();
});

await test('live: --ui=perfetto on an empty dir opens the first capture, then follows the next', async () => {
  assert(process.env.XPV_BIN, 'XPV_BIN is not set');
  const work = fs.mkdtempSync('/tmp/xpv-live-perfetto-');
  const dir = path.join(work, 'profiles');
  fs.mkdirSync(dir);
  const port = await new Promise((resolve) => {
    const srv = net.createServer().listen(0, '127.0.0.1', () => {
      const p = srv.address().port;
      srv.close(() => resolve(p));
    });
  });
  const server = spawn(
    process.env.XPV_BIN,
    [`--profile-dir=${dir}`, `--port=${port}`, '--perfetto-port=0', '--ui=perfetto', `--db=${work}/i.sqlite`],
    { stdio: 'ignore' },
  );
  const base = `http://127.0.0.1:${port}`;
  try {
    for (let i = 0; i < 100; i++) {
      try {
        if ((await fetch(`${base}/api/health`)).ok) break;
      } catch {
        /* not up yet */
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    const page = await newPage();
    await page.goto(`${base}/`);
    await page.waitForFunction(() => location.hash === '#/profiles');
    await page.waitForSelector('text=No profiles found');
    const write = (name, n) => {
      // A new JAX-style run directory per capture, host h0 each time.
      const run = path.join(dir, 'job', 'plugins', 'profile', name);
      fs.mkdirSync(run, { recursive: true });
      const ev = [];
      for (let i = 0; i < n; i++) ev.push({ ph: 'X', cat: 'kernel', name: `pk${i}`, pid: 1, tid: 1, ts: 10 * i, dur: 4 });
      fs.writeFileSync(path.join(run, 'h0.trace.json'), JSON.stringify({ traceEvents: ev }));
    };
    write('2030_01_01_00_00_01', 10);
    // The path only: the timeline may have put its view (?start_us=...) in the address.
    const where = (p) => p.url().split('#')[1].split('?')[0];
    await page.waitForFunction(() => /^#\/p\/[0-9a-f]{16}\/timeline(\?|$)/.test(location.hash), null, {
      timeout: 10000,
    });
    const first = (await (await fetch(`${base}/api/profiles/latest`)).json()).id;
    eq(where(page), `/p/${first}/timeline`, 'the first capture opened on the timeline');
    eq(await page.isChecked('#follow-latest'), true, 'follow latest is on by default under --ui=perfetto');
    await page.waitForSelector('canvas.tl-canvas');
    write('2030_01_01_00_00_02', 20);
    await page.waitForFunction((id) => !location.hash.includes(id), first, { timeout: 10000 });
    const second = (await (await fetch(`${base}/api/profiles/latest`)).json()).id;
    assert(second !== first, 'a second capture');
    eq(where(page), `/p/${second}/timeline`, 'followed to the next capture');
    await page.waitForSelector('canvas.tl-canvas');
    await shot(page, 'live-perfetto-follow');
    // The one expected: /api/profiles/latest is 404 while the dir is empty.
    const errors = page.errors.filter((e) => !/status of 404/.test(e));
    eq(page.errors.length - errors.length, 1, 'the empty-dir 404 of /api/profiles/latest');
    eq(errors.length, 0, `page errors: ${errors.join('; ')}`);
    await page.context().close();
  } finally {
    // It may still write its index as it stops: remove the dir once it has exited.
    const exited = server.exitCode === null ? new Promise((r) => server.once('exit', r)) : null;
    server.kill('SIGTERM');
    await exited;
    fs.rmSync(work, { recursive: true, force: true });
  }
});

await test('offline: no request leaves 127.0.0.1', async () => {
  const outside = allRequests.filter((u) => !/^(https?:\/\/(127\.0\.0\.1|localhost)(:\d+)?\/|data:|blob:)/.test(u));
  assert(allRequests.length > 10, 'requests were recorded');
  eq(outside.length, 0, `requests to other hosts: ${outside.slice(0, 5).join(', ')}`);
});

// Memory tab (memory.js) and HLO tab (hlo.js) on the TPU and MI300X xplanes.
const byFile = (name) => ready.find((p) => (p.path || '').endsWith(name));
const tpuProfile = byFile('jax-tpu-v6e-inference.xplane.pb');
const gemmProfile = byFile('jax-rocm-mi300x-gemm.xplane.pb');
if (tpuProfile && gemmProfile) {
  await test('memory profile: an allocator panel per allocator, peaks as the API gives them', async () => {
    const want = await api(`/api/profiles/${tpuProfile.id}/memory_profile`);
    const page = await newPage();
    await page.goto(`${BASE}/#/p/${tpuProfile.id}/memory`);
    await page.waitForSelector('section.allocator');
    const panels = await page.$$eval('section.allocator', (els) => els.map((e) => e.dataset.allocator));
    eq(panels.join('|'), want.allocators.map((a) => a.name).join('|'), 'allocators');
    const a0 = want.allocators[0];
    const peak = await page.$eval('section.allocator [data-fact="peak_bytes_in_use"]', (e) => e.textContent);
    assert(peak.length > 0 && peak !== '—', `peak shown: ${peak}`);
    const rows = await page.$eval('section.allocator table.data', (t) => Number(t.dataset.rows));
    eq(rows, a0.live_at_peak.allocations.length, 'live allocations rows');
    const first = await page.$eval('section.allocator table.data tbody tr td[data-key="size_bytes"]', (e) =>
      Number(e.dataset.value),
    );
    eq(first, a0.live_at_peak.allocations[0].bytes, 'largest live allocation first');
    await page.waitForSelector('section.allocator canvas.line-chart');
    const ink = await page.$eval('section.allocator canvas.line-chart', (c) => {
      const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
      let n = 0;
      for (let i = 3; i < d.length; i += 4) n += d[i] > 0;
      return n;
    });
    assert(ink > 100, `the bytes-in-use chart is drawn (${ink} pixels)`);
    await shot(page, 'memory-profile');
    eq(page.errors.length, 0, `console errors: ${page.errors.join(' | ')}`);
    await page.context().close();
  });

  await test('memory viewer: a module, its peak and its buffers largest first', async () => {
    const list = await api(`/api/profiles/${tpuProfile.id}/memory_viewer`);
    const best = list.modules.reduce((b, m) => (m.peak_memory_bytes > b.peak_memory_bytes ? m : b));
    const want = await api(`/api/profiles/${tpuProfile.id}/memory_viewer?module=${encodeURIComponent(best.name)}`);
    const page = await newPage();
    await page.goto(`${BASE}/#/p/${tpuProfile.id}/memory?view=viewer`);
    await page.waitForSelector('section.panel[data-module] table.data, table.data');
    eq(await page.$eval('section.panel[data-module]', (e) => e.dataset.module), best.name, 'module with the highest peak first');
    const sizes = await page.$$eval('table.data tbody td[data-key="size_bytes"]', (els) =>
      els.map((e) => Number(e.dataset.value)),
    );
    eq(sizes.join(','), want.buffers.map((b) => b.size_bytes).join(','), 'buffer sizes');
    await shot(page, 'memory-viewer');
    eq(page.errors.length, 0, `console errors: ${page.errors.join(' | ')}`);
    await page.context().close();
  });

  await test('HLO tab: a module as text, searchable, an HLO op row links to its instruction', async () => {
    const want = await api(`/api/profiles/${gemmProfile.id}/hlo/79`);
    const page = await newPage();
    await page.goto(`${BASE}/#/p/${gemmProfile.id}/tools/hlo_stats`);
    const link = page.locator('table.data td[data-key="hlo_op_name"] a[href*="module=79"]').first();
    await link.waitFor();
    await link.click();
    await page.waitForSelector('.hlo-line.selected');
    eq(await page.$eval('.hlo-line.selected', (e) => e.dataset.name), 'custom-call.1', 'selected instruction');
    const cc = want.computations.flatMap((c) => c.instructions).find((i) => i.name === 'custom-call.1');
    eq(await page.$eval('.hlo-line.selected', (e) => Number(e.dataset.timeUs)), cc.device_time_us, 'device time');
    const n = await page.$$eval('.hlo-line', (els) => els.length);
    eq(
      n,
      want.computations.reduce((k, c) => k + c.instructions.length, 0),
      'one line per instruction',
    );
    await page.fill('input[aria-label="Search instructions"]', 'get-tuple');
    const shown = await page.$$eval('.hlo-line:not([hidden])', (els) => els.map((e) => e.dataset.name));
    eq(shown.join(','), 'get-tuple-element.1', 'search keeps the matching lines');
    await page.fill('input[aria-label="Search instructions"]', '');
    await shot(page, 'hlo-text');
    eq(page.errors.length, 0, `console errors: ${page.errors.join(' | ')}`);
    await page.context().close();
  });

  await test('Roofline on GPU: derived FLOPs marked in the table, peaks labelled', async () => {
    const want = await api(`/api/profiles/${gemmProfile.id}/tools/roofline_model`);
    const page = await newPage();
    await page.goto(`${BASE}/#/p/${gemmProfile.id}/tools/roofline_model`);
    await page.waitForSelector('table.data tbody td[data-key="flops"]');
    const cells = await page.$$eval('table.data tbody td[data-key="flops"]', (els) =>
      els.map((e) => [Number(e.dataset.value), e.classList.contains('derived'), e.title]),
    );
    eq(cells.map((c) => c[0]).join(','), want.rows.map((r) => r.flops).join(','), 'FLOPs as the API gives them');
    eq(
      want.rows.every((r) => r.flops_source === 'derived'),
      true,
      'GPU FLOPs are derived',
    );
    eq(
      cells.every((c) => c[1] && /derived/.test(c[2])),
      true,
      'every derived cell marked, with a tooltip',
    );
    const src = await page.$eval('[data-prop="peak_teraflops_per_second_source"]', (e) => e.textContent);
    eq(src, want.properties.peak_teraflops_per_second_source, 'the FLOP peak says where it comes from');
    await shot(page, 'roofline-gpu-derived');
    eq(page.errors.length, 0, `console errors: ${page.errors.join(' | ')}`);
    await page.context().close();
  });
}

if (process.env.XPV_PERF_PROFILE) {
  await test('measure: timeline first paint and JS heap on the big profile', async () => {
    const id = process.env.XPV_PERF_PROFILE;
    const prof = await api(`/api/profiles/${id}`);
    const page = await newPage();
    const cdp = await page.context().newCDPSession(page);
    await cdp.send('Performance.enable');
    const t0 = Date.now();
    await page.goto(`${BASE}/#/p/${id}/timeline`);
    await page.waitForFunction(() => document.querySelector('canvas.tl-canvas')?.dataset.firstPaintMs, null, { timeout: 60000 });
    const wall = Date.now() - t0;
    const inPage = await page.$eval('canvas.tl-canvas', (c) => Number(c.dataset.firstPaintMs));
    const nav = await page.evaluate(() => performance.getEntriesByName('xpv-timeline-first-paint')[0]?.startTime);
    // Zoom around to see memory stays bounded.
    const box = await page.locator('canvas.tl-canvas').boundingBox();
    await page.mouse.move(box.x + box.width / 3, box.y + 50);
    for (let i = 0; i < 30; i++) {
      await page.mouse.wheel(0, i < 20 ? -300 : 400);
      await page.waitForTimeout(120);
    }
    await page.waitForTimeout(1000);
    const m = Object.fromEntries((await cdp.send('Performance.getMetrics')).metrics.map((x) => [x.name, x.value]));
    console.log(`PERF profile=${prof.path} events=${prof.events} size=${prof.size_bytes}`);
    console.log(
      `PERF timeline first paint: ${nav?.toFixed(0)} ms from navigation start (${inPage.toFixed(0)} ms after the page mounted; ${wall} ms wall incl. browser)`,
    );
    console.log(
      `PERF JS heap used after 30 zooms: ${(m.JSHeapUsedSize / 1e6).toFixed(1)} MB (total ${(m.JSHeapTotalSize / 1e6).toFixed(1)} MB), DOM nodes ${m.Nodes}`,
    );
    await shot(page, 'timeline-big');
    await page.context().close();
  });
}

await test('compare view: "Compare with…", both step charts on one scale, diff table as the API', async () => {
  // Two real PyTorch traces when the fixtures are there, else any two profiles.
  const named = (s) => ready.find((p) => p.path.endsWith(s));
  const withSteps = ready.filter((p) => p.step_count > 0 && p.kernel_count > 0);
  const A = named('pytorch-gp100-user-annotations.json.gz') || withSteps[0] || ready[0];
  const B = named('pytorch-v100-resnet50.pt.trace.json.gz') || withSteps.find((p) => p !== A) || ready[ready.length - 1];
  assert(A && B, 'two ready profiles');
  const cmp = await api(`/api/compare?a=${A.id}&b=${B.id}`);
  const page = await newPage({ viewport: { width: 1400, height: 1000 } });
  await page.goto(`${BASE}/#/p/${A.id}/overview`);
  await page.click('#compare-with');
  await page.waitForFunction((id) => location.hash === `#/compare/${id}`, A.id);
  await page.waitForSelector(`#cmp-b option[value="${B.id}"]`, { state: 'attached' });
  await page.selectOption('#cmp-b', B.id);
  await page.waitForFunction((h) => location.hash === h, `#/compare/${A.id}/${B.id}`);
  // Cards say where the median went.
  await page.waitForSelector('.cmp-card[data-card="Step time · median"] .delta');
  eq(
    await page.$eval('.cmp-card[data-card="Step time · median"] .delta', (e) => e.dataset.direction),
    cmp.step_time.median_us.direction || 'unknown',
    'median direction',
  );
  // One chart per side with steps, one bar per step, and one y scale.
  const sides = [];
  for (const [key, prof] of [
    ['a', A],
    ['b', B],
  ]) {
    const steps = (await api(`/api/profiles/${prof.id}/steps`)).steps;
    if (!steps.length) continue;
    await page.waitForSelector(`.chart[data-side="${key}"] [data-step-bar]`);
    eq(await page.$$eval(`.chart[data-side="${key}"] [data-step-bar]`, (g) => g.length), steps.length, `${key} bars`);
    sides.push(
      await page.$$eval(`.chart[data-side="${key}"] g.axis text[text-anchor="end"]`, (ts) =>
        ts.map((t) => t.textContent).join('|'),
      ),
    );
  }
  if (sides.length === 2) eq(sides[0], sides[1], 'both charts on one scale');
  // The diff table: the API's rows in the API's order (largest |Δ total| first).
  const table = ['kernels', 'ops', 'memcpy', 'memset'].find((k) => cmp[k].rows.length);
  const rows = cmp[table].rows;
  const deltas = rows.map((r) => Math.abs(r.total_us.delta ?? -1));
  eq(
    deltas.join(','),
    deltas
      .slice()
      .sort((x, y) => y - x)
      .join(','),
    'API rows by |Δ total|',
  );
  await page.waitForSelector('table.compare-diff tbody tr');
  const shown = await page.$$eval('table.compare-diff tbody tr', (trs) =>
    trs.map((tr) => [tr.dataset.name, tr.dataset.status, tr.querySelector('[data-key="total_delta"]').dataset.value]),
  );
  eq(shown.length, Math.min(rows.length, 200), 'diff rows');
  shown.forEach(([name, status, delta], i) => {
    eq(name, rows[i].name, `row ${i} name`);
    eq(status, rows[i].status, `row ${i} status`);
    eq(delta, String(rows[i].total_us.delta), `row ${i} Δ total`);
  });
  // The filter narrows the rows to the names that hold it.
  const q = rows[0].name.slice(0, 12).toLowerCase();
  await page.fill('input[aria-label="Filter the compared names"]', q);
  const want = rows.filter((r) => r.name.toLowerCase().includes(q)).length;
  await page.waitForFunction((n) => document.querySelectorAll('table.compare-diff tbody tr').length === n, Math.min(want, 200));
  await shot(page, 'compare');
  await page.locator('table.compare-diff').scrollIntoViewIfNeeded();
  await shot(page, 'compare-table');
  // A row's side link opens that profile's timeline.
  const side = rows[0].count.a ? 'A' : 'B';
  await page.click(`table.compare-diff tbody tr:first-child a.tl-link[data-side="${side}"]`);
  const wantId = side === 'A' ? A.id : B.id;
  await page.waitForFunction((id) => location.hash.startsWith(`#/p/${id}/timeline`), wantId, { timeout: 15000 });
  eq(page.errors.length, 0, `console errors: ${page.errors.join(' | ')}`);
  await page.context().close();
});

await browser.close();
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
