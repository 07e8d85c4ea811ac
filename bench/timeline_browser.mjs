// timeline_browser.mjs — the timeline's interaction figures in headless
// Chromium (driven by bench/run_timeline_browser.sh, which starts the
// server): first paint, then 100 scripted interactions (zoom, pan, select an
// event, Shift+drag an area), each timed in the page from the input event to
//   frame:   the next painted frame (what the user sees move), and
//   settled: the frame after everything the input asked for has arrived
//            (the view's events, the selection's details and links, the
//            area's table),
// and the JS heap at the end. Prints figures; asserts nothing.
//   XPV_URL (required), XPV_PROFILE (id, default latest), XPV_CHROMIUM.

import { createRequire } from 'node:module';
import path from 'node:path';

const here = path.dirname(new URL(import.meta.url).pathname);
const require = createRequire(path.join(here, '..', 'tests', 'browser', 'package.json'));
const { chromium } = require('playwright-core');

const BASE = process.env.XPV_URL;
const N = 100;
if (!BASE) {
  console.error('XPV_URL is not set (run bench/run_timeline_browser.sh)');
  process.exit(2);
}

const browser = await chromium.launch({
  executablePath: process.env.XPV_CHROMIUM || '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--enable-precise-memory-info', '--disable-background-networking'],
});
const ctx = await browser.newContext({ viewport: { width: 1600, height: 900 } });
const page = await ctx.newPage();
const errors = [];
page.on('pageerror', (e) => errors.push(String(e)));
const cdp = await ctx.newCDPSession(page);
await cdp.send('Performance.enable');

const prof = await (await fetch(`${BASE}/api/profiles/${process.env.XPV_PROFILE || 'latest'}`)).json();
const t0 = Date.now();
await page.goto(`${BASE}/#/p/${prof.id}/timeline`);
await page.waitForFunction(() => document.querySelector('canvas.tl-canvas')?.dataset.firstPaintMs, null, { timeout: 120000 });
const wall = Date.now() - t0;
const nav = await page.evaluate(() => performance.getEntriesByName('xpv-timeline-first-paint')[0]?.startTime);
const mounted = await page.$eval('canvas.tl-canvas', (c) => Number(c.dataset.firstPaintMs));

// One interaction, run in the page: returns {frame, settled} in ms.
const interact = (kind, i) =>
  page.evaluate(
    async ({ kind, i }) => {
      const tl = window.__xpvTimeline;
      const st = tl.state;
      const canvas = document.querySelector('canvas.tl-canvas');
      const scroller = document.querySelector('.tl-scroll');
      const r = canvas.getBoundingClientRect();
      const frame = () => new Promise((res) => requestAnimationFrame(() => res()));
      const covers = () => {
        const d = st.data;
        if (!d || st.loading) return false;
        return d.params.start_us <= Math.max(st.viewStart, st.t0) && d.params.end_us >= Math.min(st.viewEnd, st.t1);
      };
      // A visible, loaded event: [clientX, clientY].
      const visibleEvent = () => {
        const rows = st.rows.filter((row) => row.type === 'thread' && row.y - scroller.scrollTop + 40 < r.height);
        for (const row of rows.sort((a, b) => (i % 2 ? a.y - b.y : b.y - a.y))) {
          const list = (st.data && st.data.byTrack.get(row.track.id)) || [];
          const evs = list.filter((e) => !e.summary && e.ref && e.s >= st.viewStart && e.e <= st.viewEnd && e.depth < 3);
          if (!evs.length) continue;
          const ev = evs[(i * 7919) % evs.length];
          const y = row.y - scroller.scrollTop + 3 + ev.depth * 18 + 9;
          if (y < 5 || y > r.height - 5) continue;
          const x =
            ((Math.max(ev.s, st.viewStart) + Math.min(ev.e, st.viewEnd)) / 2 - st.viewStart) / (st.viewEnd - st.viewStart);
          return [r.left + x * r.width, r.top + y];
        }
        return null;
      };
      const mouse = (target, type, x, y, shift) =>
        target.dispatchEvent(new MouseEvent(type, { bubbles: true, clientX: x, clientY: y, button: 0, shiftKey: shift }));
      let done;
      const start = performance.now();
      if (kind === 'zoom') {
        const x = r.left + r.width * (0.3 + (0.4 * ((i * 37) % 10)) / 10);
        const deltaY = i % 3 === 2 ? 250 : -300;
        canvas.dispatchEvent(
          new WheelEvent('wheel', { bubbles: true, cancelable: true, clientX: x, clientY: r.top + 50, deltaY }),
        );
        done = covers;
      } else if (kind === 'pan') {
        window.dispatchEvent(new KeyboardEvent('keydown', { key: i % 2 ? 'd' : 'a', bubbles: true }));
        done = covers;
      } else if (kind === 'select') {
        const p = visibleEvent();
        if (!p) return null;
        mouse(canvas, 'mousedown', p[0], p[1], false);
        mouse(window, 'mouseup', p[0], p[1], false);
        done = () => st.selected && !document.querySelector('.tl-details .skeleton');
      } else {
        const x0 = r.left + r.width * 0.3,
          x1 = r.left + r.width * 0.6;
        mouse(canvas, 'mousedown', x0, r.top + 20, true);
        mouse(window, 'mousemove', x1, r.top + r.height * 0.6, true);
        mouse(window, 'mouseup', x1, r.top + r.height * 0.6, true);
        done = () => canvas.dataset.areaState === 'done' || canvas.dataset.areaState === 'error';
      }
      await frame();
      const first = performance.now() - start;
      while (!done()) {
        await frame();
        if (performance.now() - start > 30000) break;
      }
      await frame();
      return { frame: first, settled: performance.now() - start };
    },
    { kind, i },
  );

const kinds = ['zoom', 'pan', 'select', 'area'];
const times = { all: [], frame: [] };
for (const k of kinds) times[k] = [];
for (let i = 0; i < N; i++) {
  const kind = kinds[i % 4];
  const t = await interact(kind, i);
  if (!t) continue;
  times[kind].push(t.settled);
  times.all.push(t.settled);
  times.frame.push(t.frame);
  await page.waitForTimeout(30);
}
const m = Object.fromEntries((await cdp.send('Performance.getMetrics')).metrics.map((x) => [x.name, x.value]));

const pct = (a, p) => {
  const s = [...a].sort((x, y) => x - y);
  return s.length ? s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)] : NaN;
};
const f = (x) => x.toFixed(1);
console.log(`profile: ${prof.path}, ${prof.events} events, ${(prof.size_bytes / 1e6).toFixed(0)} MB`);
console.log(
  `first paint: ${f(nav)} ms from navigation start (${f(mounted)} ms after the page mounted; ${wall} ms wall incl. browser start of the page)`,
);
console.log(`interactions: ${times.all.length} (target p95 < 100 ms)`);
console.log(
  `  input -> next frame:       p50 ${f(pct(times.frame, 50))} ms, p95 ${f(pct(times.frame, 95))} ms, max ${f(Math.max(...times.frame))} ms`,
);
console.log(
  `  input -> settled (all):    p50 ${f(pct(times.all, 50))} ms, p95 ${f(pct(times.all, 95))} ms, max ${f(Math.max(...times.all))} ms`,
);
for (const k of kinds)
  console.log(
    `    ${k.padEnd(7)} n=${String(times[k].length).padStart(3)}  p50 ${f(pct(times[k], 50))} ms, p95 ${f(pct(times[k], 95))} ms`,
  );
console.log(
  `JS heap used at the end: ${(m.JSHeapUsedSize / 1e6).toFixed(1)} MB (total ${(m.JSHeapTotalSize / 1e6).toFixed(1)} MB; target < 300 MB)`,
);
if (errors.length) console.log(`page errors: ${errors.slice(0, 3).join(' | ')}`);
await browser.close();
