// timeline_browser.mjs — the timeline's interaction figures in headless
// Chromium (driven by bench/run_timeline_browser.sh, which starts the
// servers): for every profile a server lists, first paint, then scripted
// interactions, each timed in the page from the input event to
//   frame:   the next painted frame (what the user sees move), and
//   settled: the frame after everything the input asked for has arrived
//            (the view's events, the selection's details, the area's table);
// kinds: zoom (wheel at the pointer), drag (drag-to-pan: every mousemove of
// a drag is one input), pan (A/D keys), select (click an event), area
// (Shift+drag), and evidence (a findings evidence link on the overview
// clicked, to the frame that shows its event selected in the timeline).
// With XPV_REF_URL (the same profiles served by a reference binary, e.g.
// main's static files) each profile runs on both, interleaved, and the
// report gives the ratio reference/new of each p95. Prints figures (and the
// load average, since the machine may be shared); asserts nothing.
//   XPV_URL (required), XPV_REF_URL, XPV_ROUNDS (default 2), XPV_N
//   (interactions per round and server, default 40), XPV_CHROMIUM.

import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';

const here = path.dirname(new URL(import.meta.url).pathname);
const require = createRequire(path.join(here, '..', 'tests', 'browser', 'package.json'));
const { chromium } = require('playwright-core');

const NEW = process.env.XPV_URL;
const REF = process.env.XPV_REF_URL || null;
const ROUNDS = Number(process.env.XPV_ROUNDS || 2);
const N = Number(process.env.XPV_N || 40);
const KINDS = ['zoom', 'drag', 'pan', 'select', 'area'];
if (!NEW) {
  console.error('XPV_URL is not set (run bench/run_timeline_browser.sh)');
  process.exit(2);
}

const browser = await chromium.launch({
  executablePath: process.env.XPV_CHROMIUM || '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--enable-precise-memory-info', '--disable-background-networking'],
});
const errors = [];

// One interaction, run in the page: returns {frames: [ms], settled: ms} or null.
const interact = (page, kind, i) =>
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
      const frames = [];
      // Dispatches one input and times it to the next frame.
      const timed = async (fire) => {
        const t = performance.now();
        fire();
        await frame();
        frames.push(performance.now() - t);
      };
      let done;
      const start = performance.now();
      if (kind === 'zoom') {
        // Out now and then (every third), so zooming also reveals what was outside the loaded window.
        const x = r.left + r.width * (0.3 + (0.4 * ((i * 37) % 10)) / 10);
        const deltaY = i % 3 === 2 ? 250 : -300;
        await timed(() =>
          canvas.dispatchEvent(
            new WheelEvent('wheel', { bubbles: true, cancelable: true, clientX: x, clientY: r.top + 50, deltaY }),
          ),
        );
        done = covers;
      } else if (kind === 'drag') {
        const dir = i % 2 ? 1 : -1;
        const x0 = r.left + r.width / 2,
          y0 = r.top + 30;
        mouse(canvas, 'mousedown', x0, y0, false);
        for (let k = 1; k <= 6; k++) await timed(() => mouse(window, 'mousemove', x0 + dir * 60 * k, y0, false));
        mouse(window, 'mouseup', x0 + dir * 360, y0, false);
        done = covers;
      } else if (kind === 'pan') {
        await timed(() => window.dispatchEvent(new KeyboardEvent('keydown', { key: i % 2 ? 'd' : 'a', bubbles: true })));
        done = covers;
      } else if (kind === 'select') {
        const p = visibleEvent();
        if (!p) return null;
        await timed(() => {
          mouse(canvas, 'mousedown', p[0], p[1], false);
          mouse(window, 'mouseup', p[0], p[1], false);
        });
        done = () => st.selected && !document.querySelector('.tl-details .skeleton');
      } else {
        const x0 = r.left + r.width * 0.3,
          x1 = r.left + r.width * 0.6;
        await timed(() => {
          mouse(canvas, 'mousedown', x0, r.top + 20, true);
          mouse(window, 'mousemove', x1, r.top + r.height * 0.6, true);
          mouse(window, 'mouseup', x1, r.top + r.height * 0.6, true);
        });
        done = () => canvas.dataset.areaState === 'done' || canvas.dataset.areaState === 'error';
      }
      while (!done()) {
        await frame();
        if (performance.now() - start > 30000) break;
      }
      await frame();
      return { frames, settled: performance.now() - start };
    },
    { kind, i },
  );

// Clicks evidence link `k` of the overview's findings: ms from the click to
// the frame that shows the linked event selected, or null.
async function evidence(page, base, id, k) {
  await page.goto(`${base}/#/p/${encodeURIComponent(id)}/overview`);
  try {
    await page.waitForSelector('a.evidence[href*="sel="]', { timeout: 60000 });
  } catch {
    return null;
  }
  return page.evaluate(async (k) => {
    const links = [...document.querySelectorAll('a.evidence[href*="sel="]')];
    const a = links[k % links.length];
    const ref = new URLSearchParams(a.getAttribute('href').split('?')[1]).get('sel');
    const frame = () => new Promise((res) => requestAnimationFrame(() => res()));
    const t = performance.now();
    a.click();
    for (;;) {
      await frame();
      const tl = window.__xpvTimeline;
      const sel = tl && tl.state.selected;
      if (sel && sel.ev.ref === ref && tl.state.rows.length) break;
      if (performance.now() - t > 30000) return null;
    }
    return performance.now() - t;
  }, k);
}

// One round of one profile on one server: {kind: {frame: [], settled: []}, paint}.
async function runOne(base, prof) {
  const ctx = await browser.newContext({ viewport: { width: 1600, height: 900 } });
  const page = await ctx.newPage();
  page.on('pageerror', (e) => errors.push(String(e)));
  const out = { paint: null };
  for (const k of [...KINDS, 'evidence']) out[k] = { frame: [], settled: [] };
  await page.goto(`${base}/#/p/${encodeURIComponent(prof.id)}/timeline`);
  await page.waitForFunction(() => document.querySelector('canvas.tl-canvas')?.dataset.firstPaintMs, null, {
    timeout: 120000,
  });
  out.paint = await page.$eval('canvas.tl-canvas', (c) => Number(c.dataset.firstPaintMs));
  for (let i = 0; i < N; i++) {
    const kind = KINDS[i % KINDS.length];
    const t = await interact(page, kind, i);
    if (!t) continue;
    out[kind].frame.push(...t.frames);
    out[kind].settled.push(t.settled);
    await page.waitForTimeout(30);
  }
  const fa = await (await fetch(`${base}/api/profiles/${encodeURIComponent(prof.id)}/findings`)).json().catch(() => ({}));
  const linked = (fa.findings || []).some((x) => (x.evidence || []).some((e) => e.ref));
  for (let k = 0; linked && k < 3; k++) {
    const ms = await evidence(page, base, prof.id, k);
    if (ms !== null) out.evidence.settled.push(ms);
  }
  await ctx.close();
  return out;
}

const pct = (a, p) => {
  const s = [...a].sort((x, y) => x - y);
  return s.length ? s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)] : NaN;
};
const f = (x) => (Number.isFinite(x) ? x.toFixed(1) : '-');
const merge = (acc, one) => {
  for (const k of Object.keys(one)) {
    if (k === 'paint') acc.paint.push(one.paint);
    else for (const m of ['frame', 'settled']) acc[k][m].push(...one[k][m]);
  }
};
const empty = () => {
  const o = { paint: [] };
  for (const k of [...KINDS, 'evidence']) o[k] = { frame: [], settled: [] };
  return o;
};

const profiles = (await (await fetch(`${NEW}/api/profiles`)).json()).profiles || [];
const refProfiles = REF ? (await (await fetch(`${REF}/api/profiles`)).json()).profiles || [] : [];
console.log(
  `load average at start: ${os
    .loadavg()
    .map((x) => x.toFixed(2))
    .join(' ')} (${os.cpus().length} CPUs)`,
);
for (const prof of profiles) {
  const refProf = refProfiles.find((p) => p.path === prof.path);
  const res = { new: empty(), ref: empty() };
  for (let r = 0; r < ROUNDS; r++) {
    // Interleaved, and in alternating order, so load changes hit both alike.
    const order = refProf ? (r % 2 ? ['new', 'ref'] : ['ref', 'new']) : ['new'];
    for (const which of order) merge(res[which], await runOne(which === 'new' ? NEW : REF, which === 'new' ? prof : refProf));
  }
  console.log(`\nprofile: ${prof.path}, ${prof.events} events, ${(prof.size_bytes / 1e6).toFixed(1)} MB`);
  console.log(
    `  load average now: ${os
      .loadavg()
      .map((x) => x.toFixed(2))
      .join(' ')}`,
  );
  const line = (label, a, b) =>
    `  ${label.padEnd(26)} new p50 ${f(pct(a, 50)).padStart(7)} p95 ${f(pct(a, 95)).padStart(7)} ms (n=${a.length})` +
    (refProf
      ? `   ref p50 ${f(pct(b, 50)).padStart(7)} p95 ${f(pct(b, 95)).padStart(7)} ms   ref/new p95 ${f(pct(b, 95) / pct(a, 95))}x`
      : '');
  console.log(line('first paint', res.new.paint, res.ref.paint));
  for (const k of KINDS) {
    console.log(line(`${k} input -> next frame`, res.new[k].frame, res.ref[k].frame));
    console.log(line(`${k} input -> settled`, res.new[k].settled, res.ref[k].settled));
  }
  console.log(line('evidence link -> selected', res.new.evidence.settled, res.ref.evidence.settled));
  const all = (o) => KINDS.flatMap((k) => o[k].frame);
  console.log(line('ALL input -> next frame', all(res.new), all(res.ref)) + '   (target p95 < 50 ms)');
}
if (errors.length) console.log(`page errors: ${[...new Set(errors)].slice(0, 3).join(' | ')}`);
await browser.close();
