// ui_pages.mjs — the profile pages: the list, the overview, the kernel table,
// the timeline (drawing, zoom, search, deep links, tracks, window export),
// downloads, dark theme and 4K, error and empty states, the start page.

import {
  BASE,
  test,
  assert,
  eq,
  api,
  newPage,
  shot,
  profiles,
  ready,
  byKernels,
  bySteps,
  canvasInk,
  viewOf,
  waitDrawn,
  hitsState,
  tlState,
  hashParams,
  escapeRe,
} from './harness.mjs';

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
    await page.locator('[data-step-bar] .hit').first().scrollIntoViewIfNeeded(); // below two rows of cards
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

// A JAX GPU capture (the MI300X GEMM xplane: kernels carry hlo_op) gets the
// rows the server derives (api/device_rows.c) ahead of its streams.
const forDerived = ready.find((p) => p.path.endsWith('jax-rocm-mi300x-gemm.xplane.pb'));
await test('timeline lists the derived XLA rows under the GPU', async () => {
  if (!forDerived) return console.log('  (no MI300X GEMM fixture: skipped)');
  const page = await newPage();
  await page.goto(`${BASE}/#/p/${forDerived.id}/timeline`);
  await waitDrawn(page);
  const s = await tlState(page);
  const derived = await page.$$eval('.tl-label.thread.derived', (ls) => ls.map((l) => l.querySelector('span').textContent));
  assert(derived.includes('XLA Ops') && derived.includes('XLA Modules'), `derived rows ${derived}`);
  const gpu = s.labels.filter((l) => l.group === s.labels.find((x) => x.text === 'XLA Ops').group);
  eq(
    gpu
      .slice(0, derived.length)
      .map((l) => l.text)
      .join(','),
    derived.join(','),
    'the derived rows come first in the GPU',
  );
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
  await waitDrawn(big);
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
