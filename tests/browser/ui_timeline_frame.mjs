// ui_timeline_frame.mjs — the timeline redraws from what it has: a wheel
// zoom's first frame, with the server's answer held back, already shows
// the loaded events moved to the new view (not a blank canvas), zooming
// out shows the widest window loaded so far beyond the loaded one, and once
// the answer comes every loaded event in view is drawn and the window is the
// server's answer for it; a findings evidence link lands with its event
// selected, and a link to an unknown event with a step on the step; an event
// drawn from that widest window can be clicked; a merged span and an event
// in one pixel column keep their own fills. Correctness only: the timings
// are bench/run_timeline_browser.sh's.

import { BASE, test, assert, eq, api, newPage, ready, byKernels, bySteps, waitDrawn, canvasInk, viewOf } from './harness.mjs';

const forTimeline = ready.find((p) => p.id === process.env.XPV_TIMELINE_PROFILE) || byKernels;

// Holds back every events request until release() (the page keeps drawing).
function holdEvents(page) {
  let open = null;
  const held = [];
  page.route('**/events?**', async (route) => {
    if (!open) held.push(route);
    else await route.continue().catch(() => {});
  });
  return {
    count: () => held.length,
    release: async () => {
      open = true;
      // A request the page aborted meanwhile cannot be continued; the others must be.
      for (const r of held.splice(0)) await r.continue().catch(() => {});
    },
    hold: () => {
      open = null;
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
  const gate = holdEvents(page);
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
  assert(gate.count() > 0, 'the zoomed window was asked for');
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
      return (
        !st.loading &&
        d &&
        d.params.start_us <= Math.max(st.viewStart, st.t0) + Math.max(1e-3, Math.abs(st.t1) * Number.EPSILON * 4) &&
        d.params.end_us >= Math.min(st.viewEnd, st.t1) - Math.max(1e-3, Math.abs(st.t1) * Number.EPSILON * 4)
      );
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

await test('a link to an unknown event with a step lands on the step', async () => {
  const p = bySteps;
  const steps = (await api(`/api/profiles/${p.id}/steps`)).steps || [];
  const s = steps[Math.floor(steps.length / 2)];
  if (!s || !(s.start_us >= p.start_us && s.start_us <= p.start_us + p.duration_us)) return;
  const page = await newPage();
  // A well-formed ref that names no event: the server says so, and the step's window stands.
  await page.goto(`${BASE}/#/p/${p.id}/timeline?step=${s.step}&sel=999999999:0`);
  await page
    .waitForFunction(() => Number(document.querySelector('canvas.tl-canvas')?.dataset.viewEnd) > 0, null, { timeout: 15000 })
    .catch(() => {});
  const [v0, v1] = await viewOf(page);
  assert(v0 <= s.start_us && v1 >= s.start_us + s.duration_us, `view ${v0}..${v1} shows step ${s.step}`);
  assert(v1 - v0 < (s.span_us || s.duration_us) * 1.5, 'the view is zoomed to the step');
  await waitDrawn(page);
  const errs = page.errors.filter((e) => !/status of 4\d\d/.test(e));
  eq(errs.length, 0, `console errors: ${errs.join(' | ')}`);
  await page.context().close();
});

await test('timeline: an event drawn from the backdrop can be clicked while the fetch is out', async () => {
  const p = forTimeline;
  const page = await newPage();
  await page.goto(`${BASE}/#/p/${p.id}/timeline`);
  await waitDrawn(page);
  await page.waitForFunction(() => !window.__xpvTimeline.state.loading);
  // In (the whole profile stays the backdrop), then out past the loaded window with its answer held.
  const zoomIn = page.getByRole('button', { name: 'Zoom in' });
  for (let i = 0; i < 3; i++) await zoomIn.click();
  await page.waitForFunction(
    () => {
      const st = window.__xpvTimeline.state;
      return !st.loading && st.data && st.data !== st.backdrop && st.data.params.start_us <= st.viewStart;
    },
    null,
    { timeout: 20000 },
  );
  const gate = holdEvents(page);
  const zoomOut = page.getByRole('button', { name: 'Zoom out' });
  for (let i = 0; i < 2; i++) await zoomOut.click();
  await page.waitForFunction(() => window.__xpvTimeline.state.loading, null, { timeout: 5000 });
  // A backdrop event outside the loaded window, wide, alone at its point in its row.
  const pick = await page.evaluate(() => {
    const st = window.__xpvTimeline.state;
    const c = document.querySelector('canvas.tl-canvas');
    const top = document.querySelector('.tl-scroll').scrollTop;
    const W = c.width / st.dpr,
      H = c.height / st.dpr;
    const span = st.viewEnd - st.viewStart;
    const xOf = (t) => ((t - st.viewStart) / span) * W;
    const tol = (span * 4) / W;
    const { start_us: a, end_us: b } = st.data.params;
    for (const row of st.rows) {
      if (row.type !== 'thread') continue;
      const list = st.backdrop.byTrack.get(row.track.id) || [];
      const loaded = st.data.byTrack.get(row.track.id) || [];
      for (const ev of list) {
        const d = Math.min(ev.depth, 23);
        const y = row.y - top + 3 + d * 18 + 9;
        if (y < 5 || y > H - 5) continue;
        const x0 = Math.max(xOf(ev.s), 0),
          x1 = Math.min(xOf(ev.e), W);
        if (x1 - x0 < 8) continue;
        const t = st.viewStart + (((x0 + x1) / 2) * span) / W;
        if (t > a - tol && t < b + tol) continue;
        const near = (x) => x !== ev && Math.min(x.depth, 23) === d && x.s <= t + tol && x.e >= t - tol;
        if (list.some(near) || loaded.some(near)) continue;
        return { x: (x0 + x1) / 2, y, s: ev.s, e: ev.e, name: ev.name };
      }
    }
    return null;
  });
  assert(pick, 'a backdrop event in view outside the loaded window');
  const box = await page.locator('canvas.tl-canvas').boundingBox();
  await page.mouse.click(box.x + pick.x, box.y + pick.y);
  const sel = await page.evaluate(() => {
    const st = window.__xpvTimeline.state;
    return st.selected && { s: st.selected.ev.s, e: st.selected.ev.e, name: st.selected.ev.name, loading: st.loading };
  });
  assert(sel, `clicking ${pick.name} (drawn from the backdrop) selects it`);
  eq(`${sel.name}|${sel.s}|${sel.e}`, `${pick.name}|${pick.s}|${pick.e}`, 'the clicked event is the one selected');
  assert(sel.loading, 'while the fetch was still held');
  await gate.release();
  eq(page.errors.length, 0, `console errors: ${page.errors.join(' | ')}`);
  await page.context().close();
});

await test('timeline: a merged span and an event in one pixel column keep their own fills', async () => {
  const p = forTimeline;
  const page = await newPage({ scale: 2 });
  await page.goto(`${BASE}/#/p/${p.id}/timeline`);
  await waitDrawn(page);
  await page.waitForFunction(() => !window.__xpvTimeline.state.loading);
  holdEvents(page);
  // One row's events replaced by known ones: at css x 100 a merged span
  // (0.5 px) then a kernel (0.8 px) in the same column, at x 200 the reverse,
  // and at x 300 the same kernel 20 px wide, for its colour.
  const px = await page.evaluate(
    () =>
      new Promise((res) => {
        const st = window.__xpvTimeline.state;
        const c = document.querySelector('canvas.tl-canvas');
        const scroller = document.querySelector('.tl-scroll');
        const W = c.width / st.dpr,
          H = c.height / st.dpr;
        const tOf = (x) => st.viewStart + (x / W) * (st.viewEnd - st.viewStart);
        const row = st.rows.find((r) => r.type === 'thread' && r.y - scroller.scrollTop > 0 && r.y - scroller.scrollTop + 30 < H);
        const y = row.y - scroller.scrollTop + 3 + 9;
        const span = (x0, x1, summary) => ({
          s: tOf(x0),
          e: tOf(x1),
          name: 'probe_kernel',
          ref: summary ? null : '0:0',
          depth: 0,
          summary,
          count: summary ? 5 : 1,
          instant: false,
        });
        const list = [
          span(100, 100.5, true),
          span(100.6, 101.4, false),
          span(200, 200.5, false),
          span(200.6, 201.4, true),
          span(300, 320, false),
        ];
        const data = { params: st.data.params, byTrack: new Map([[row.track.id, list]]), depths: new Map(), truncated: false };
        st.data = st.backdrop = data;
        scroller.dispatchEvent(new Event('scroll'));
        requestAnimationFrame(() =>
          requestAnimationFrame(() => {
            const ctx = c.getContext('2d');
            const at = (x) => [...ctx.getImageData(Math.round(x * st.dpr), Math.round(y * st.dpr), 1, 1).data].slice(0, 3);
            // css 101.0-101.4 is device px 202 (dpr 2): the second span's alone.
            res({ dpr: st.dpr, kernelAfterSummary: at(101), summaryAfterKernel: at(201), kernel: at(310) });
          }),
        );
      }),
  );
  eq(px.dpr, 2, 'drawn at devicePixelRatio 2');
  const diff = (a, b) => Math.abs(a[0] - b[0]) + Math.abs(a[1] - b[1]) + Math.abs(a[2] - b[2]);
  assert(
    diff(px.kernelAfterSummary, px.kernel) < 12,
    `the kernel after a merged span has its colour: ${px.kernelAfterSummary} vs ${px.kernel}`,
  );
  assert(
    diff(px.summaryAfterKernel, px.kernel) > 30,
    `the merged span after a kernel is not in its colour: ${px.summaryAfterKernel}`,
  );
  eq(page.errors.length, 0, `console errors: ${page.errors.join(' | ')}`);
  await page.context().close();
});
