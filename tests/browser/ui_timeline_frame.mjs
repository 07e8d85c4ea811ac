// ui_timeline_frame.mjs — the timeline redraws from what it has: a wheel
// zoom's first frame, with the server's answer held back, already shows
// the loaded events moved to the new view (not a blank canvas), zooming
// out shows the widest window loaded so far beyond the loaded one, and once
// the answer comes every loaded event in view is drawn and the window is the
// server's answer for it; a findings evidence link lands with its event
// selected. Correctness only: the timings are bench/run_timeline_browser.sh's.

import { BASE, test, assert, eq, api, newPage, ready, byKernels, waitDrawn, canvasInk } from './harness.mjs';

const forTimeline = ready.find((p) => p.id === process.env.XPV_TIMELINE_PROFILE) || byKernels;

// Holds back every events request until release() (the page keeps drawing).
// The route is in place when this resolves; Playwright calls its handler
// asynchronously, so a request the page sent shows in count() a moment later.
async function holdEvents(page) {
  let open = false;
  const held = [];
  await page.route('**/events?**', async (route) => {
    if (!open) held.push(route);
    else await route.continue().catch(() => {});
  });
  return {
    // Waits until the page's request has reached the route (or the timeout).
    asked: async (timeoutMs) => {
      const end = Date.now() + timeoutMs;
      while (held.length === 0 && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
      return held.length > 0;
    },
    release: async () => {
      open = true;
      // A request the page aborted meanwhile cannot be continued; the others must be.
      for (const r of held.splice(0)) await r.continue().catch(() => {});
    },
  };
}

// A wide loaded event in view, and whether its middle pixel is inked now.
const probe = (page) =>
  page.evaluate(() => {
    const st = window.__xpvTimeline.state;
    const c = document.querySelector('canvas.tl-canvas');
    const top = document.querySelector('.tl-scroll').scrollTop;
    const w = c.width / st.dpr;
    const ctx = c.getContext('2d');
    const bg = ctx.getImageData(1, c.height - 2, 1, 1).data;
    for (const row of st.rows) {
      if (row.type !== 'thread' || !st.data) continue;
      const y = row.y - top + 3 + 9;
      if (y < 5 || y > c.clientHeight - 5) continue;
      for (const ev of st.data.byTrack.get(row.track.id) || []) {
        if (ev.depth !== 0) continue;
        const x0 = ((ev.s - st.viewStart) / (st.viewEnd - st.viewStart)) * w;
        const x1 = ((ev.e - st.viewStart) / (st.viewEnd - st.viewStart)) * w;
        if (x1 - x0 < 8 || x0 < 0 || x1 > w) continue;
        const px = ctx.getImageData(Math.round(((x0 + x1) / 2) * st.dpr), Math.round(y * st.dpr), 1, 1).data;
        const diff = Math.abs(px[0] - bg[0]) + Math.abs(px[1] - bg[1]) + Math.abs(px[2] - bg[2]);
        return { inked: diff > 30, name: ev.name };
      }
    }
    return null;
  });

await test('timeline: a wheel zoom redraws the loaded events at once, and the answer refines it', async () => {
  const p = forTimeline;
  const page = await newPage();
  await page.goto(`${BASE}/#/p/${p.id}/timeline`);
  await waitDrawn(page);
  await page.waitForFunction(() => !window.__xpvTimeline.state.loading);
  const gate = await holdEvents(page);
  const box = await page.locator('canvas.tl-canvas').boundingBox();
  await page.mouse.move(box.x + box.width / 2, box.y + 40);
  // In: the first frame after the wheel draws the loaded events, moved.
  const first = await page.evaluate(
    ({ x, y }) =>
      new Promise((res) => {
        const c = document.querySelector('canvas.tl-canvas');
        const st = window.__xpvTimeline.state;
        const span0 = st.viewEnd - st.viewStart;
        c.dispatchEvent(new WheelEvent('wheel', { bubbles: true, cancelable: true, clientX: x, clientY: y, deltaY: -400 }));
        requestAnimationFrame(() =>
          requestAnimationFrame(() =>
            res({
              zoomed: st.viewEnd - st.viewStart < span0 * 0.9,
              drawn: Number(c.dataset.eventsDrawn) + Number(c.dataset.summariesDrawn),
              dataStart: st.data.params.start_us,
            }),
          ),
        );
      }),
    { x: box.x + box.width / 2, y: box.y + 40 },
  );
  assert(first.zoomed, 'the wheel zoomed in');
  assert(first.drawn > 0, 'the first frame draws the loaded events, not a blank canvas');
  assert((await canvasInk(page)) > 200, 'the canvas has ink before the answer');
  const pr = await probe(page);
  if (pr) assert(pr.inked, `the loaded event ${pr.name} is drawn where the new view puts it`);
  await page.waitForFunction(() => window.__xpvTimeline.state.loading, null, { timeout: 5000 });
  assert(await gate.asked(5000), 'the zoomed window was asked for');
  // Out, past the loaded window, with the answer still held: the widest window loaded fills in.
  await page.evaluate(() => {
    const c = document.querySelector('canvas.tl-canvas');
    const r = c.getBoundingClientRect();
    for (let i = 0; i < 2; i++)
      c.dispatchEvent(
        new WheelEvent('wheel', { bubbles: true, cancelable: true, clientX: r.left + 5, clientY: r.top + 40, deltaY: 300 }),
      );
  });
  await page.evaluate(() => new Promise((res) => requestAnimationFrame(() => requestAnimationFrame(res))));
  assert((await canvasInk(page)) > 200, 'zoomed out past the loaded window: still drawn');
  // The answer refines the view; it then matches a page opened on that window.
  await gate.release();
  await page.waitForFunction(
    () => {
      const st = window.__xpvTimeline.state;
      const d = st.data;
      // 1 ns, or 4 ulps where times are epoch µs (timeline_view.js's edgeSlack)
      const slack = (t) => Math.max(1e-3, Math.abs(t) * 4 * Number.EPSILON);
      const lo = Math.max(st.viewStart, st.t0);
      const hi = Math.min(st.viewEnd, st.t1);
      return !st.loading && d && d.params.start_us <= lo + slack(lo) && d.params.end_us >= hi - slack(hi);
    },
    null,
    { timeout: 20000 },
  );
  // Every loaded event in view is counted as drawn (a plain pass over the
  // lists, against the drawing's binary search and pixel runs), and the
  // loaded window is what the server answers for it.
  const check = await page.evaluate(() => {
    const st = window.__xpvTimeline.state;
    const c = document.querySelector('canvas.tl-canvas');
    const top = document.querySelector('.tl-scroll').scrollTop;
    const H = c.height / st.dpr;
    let drawn = 0,
      summaries = 0,
      loaded = 0;
    for (const list of st.data.byTrack.values()) loaded += list.length;
    for (const row of st.rows) {
      if (row.type !== 'thread' || row.y - top > H || row.y - top + row.h < 0) continue;
      for (const ev of st.data.byTrack.get(row.track.id) || []) {
        if (ev.e < st.viewStart || ev.s > st.viewEnd) continue;
        const ey = row.y - top + 3 + Math.min(ev.depth, 23) * 18;
        if (ey + 18 < 0 || ey > H) continue;
        if (ev.summary) summaries++;
        else drawn++;
      }
    }
    return {
      want: [drawn, summaries],
      got: [Number(c.dataset.eventsDrawn), Number(c.dataset.summariesDrawn)],
      params: st.data.params,
      loaded,
    };
  });
  eq(check.got.join(','), check.want.join(','), 'events and merged spans drawn = those of the loaded window in view');
  const q = new URLSearchParams(Object.entries(check.params).filter(([, v]) => v !== undefined && v !== null)).toString();
  const res = await api(`/api/profiles/${p.id}/events?${q}`);
  const n = (res.tracks || []).reduce((a, t) => a + (t.events || []).length + (t.spans || []).length, 0);
  eq(check.loaded, n, 'the loaded window holds what the server answers for it');
  eq(page.errors.length, 0, `console errors: ${page.errors.join(' | ')}`);
  await page.context().close();
});

await test('findings evidence link opens the timeline with its event selected', async () => {
  let target = null;
  for (const p of ready) {
    const f = await api(`/api/profiles/${p.id}/findings`).catch(() => null);
    const ev = f && (f.findings || []).flatMap((x) => x.evidence || []).find((e) => e.ref);
    if (ev) {
      target = { p, ev };
      break;
    }
  }
  assert(target, 'a profile with a findings evidence link to an event');
  const page = await newPage();
  await page.goto(`${BASE}/#/p/${target.p.id}/overview`);
  const link = page.locator(`a.evidence[href*="sel=${encodeURIComponent(target.ev.ref)}"]`).first();
  await link.waitFor({ timeout: 20000 });
  await link.click();
  await page.waitForFunction(
    (ref) => window.__xpvTimeline && window.__xpvTimeline.state.selected?.ev.ref === ref,
    target.ev.ref,
    { timeout: 20000 },
  );
  await page.waitForFunction(() => !document.querySelector('.tl-details .skeleton'), null, { timeout: 20000 });
  const [s, e] = await page.$eval('canvas.tl-canvas', (c) => [Number(c.dataset.viewStart), Number(c.dataset.viewEnd)]);
  assert(s <= target.ev.start_us + 1 && e >= target.ev.end_us - 1, `the view ${s}..${e} shows the evidence's window`);
  eq(page.errors.length, 0, `console errors: ${page.errors.join(' | ')}`);
  await page.context().close();
});
