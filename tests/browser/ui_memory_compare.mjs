// ui_memory_compare.mjs — the Memory and HLO tabs on the TPU and MI300X
// xplanes, first paint and heap on a big profile (printed, never asserted),
// and the compare view.

import path from 'node:path';
import { BASE, test, assert, eq, api, browser, newPage, shot, profiles, ready } from './harness.mjs';

// Memory tab (memory.js) and HLO tab (hlo.js) on the TPU and MI300X xplanes.
const byFile = (name) => ready.find((p) => (p.path || '').endsWith(name));
const tpuProfile = byFile('jax-tpu-v6e-inference.xplane.pb');
const gemmProfile = byFile('jax-rocm-mi300x-gemm.xplane.pb');
if (tpuProfile && gemmProfile) {
  await test('memory profile: opens on the highest peak, every allocator to pick, peaks as the API gives them', async () => {
    const want = await api(`/api/profiles/${tpuProfile.id}/memory_profile`);
    const page = await newPage();
    await page.goto(`${BASE}/#/p/${tpuProfile.id}/memory`);
    await page.waitForSelector('section.allocator');
    const options = await page.$$eval('#memory-allocator option', (els) => els.map((e) => e.value));
    eq(options.join('|'), want.allocators.map((a) => a.name).join('|'), 'allocators, highest peak first');
    const a0 = want.allocators[0];
    eq(a0.name, want.peak_allocator, 'the first allocator has the highest peak');
    const panels = await page.$$eval('section.allocator', (els) => els.map((e) => e.dataset.allocator));
    eq(panels.join('|'), a0.name, 'opens on the highest peak');
    const peak = await page.$eval('section.allocator [data-fact="peak_bytes_in_use"]', (e) => e.textContent);
    assert(peak.length > 0 && peak !== '—', `peak shown: ${peak}`);
    const rows = await page.$eval('section.allocator table.data', (t) => Number(t.dataset.rows));
    eq(rows, a0.live_at_peak.allocations.length, 'live allocations rows');
    const first = await page.$eval('section.allocator table.data tbody tr td[data-key="size_bytes"]', (e) =>
      Number(e.dataset.value),
    );
    eq(first, a0.live_at_peak.allocations[0].bytes, 'largest live allocation first');
    await page.waitForSelector('section.allocator svg.line-chart path[data-line]');
    const drawn = await page.$eval('section.allocator svg.line-chart', (svg) => ({
      len: svg.querySelector('path[data-line]').getTotalLength(),
      yTicks: svg.querySelectorAll('g.axis[data-axis="y"] text').length,
      yTitle: svg.querySelector('text.axis-title[data-axis="y"]')?.textContent || '',
    }));
    assert(drawn.len > 100, `the bytes-in-use line is drawn (${drawn.len} px long)`);
    assert(drawn.yTicks >= 2 && /\((B|KB|MB|GB|TB)\)/.test(drawn.yTitle), `a y axis in bytes: ${JSON.stringify(drawn)}`);
    await shot(page, 'memory-profile');
    const other = want.allocators[want.allocators.length - 1].name;
    await page.selectOption('#memory-allocator', other);
    await page.waitForSelector(`section.allocator[data-allocator="${other}"]`);
    assert(page.url().endsWith(`allocator=${encodeURIComponent(other)}`), `the address names it: ${page.url()}`);
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

  await test('HLO tab: opens on the module that ran the most device time', async () => {
    const [list, ran] = await Promise.all([
      api(`/api/profiles/${tpuProfile.id}/hlo`),
      api(`/api/profiles/${tpuProfile.id}/modules`),
    ]);
    const busiest = ran.modules.filter((m) => m.program_id).sort((a, b) => b.total_time_us - a.total_time_us)[0];
    const want = list.modules.find((m) => m.program_id === busiest.program_id);
    assert(want && want.name !== list.modules[0].name, "the TPU capture's busiest module is not the first by name");
    const page = await newPage();
    await page.goto(`${BASE}/#/p/${tpuProfile.id}/hlo`);
    await page.waitForSelector('.hlo-line');
    eq(await page.$eval('select[aria-label="Module"]', (e) => e.value), want.name, 'module shown first');
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
  // The picker greys out what cannot be compared (unread, empty, host only).
  // It lists the profiles of its own moment: a live capture from an earlier
  // part may land between its answer and ours, so only the profiles it
  // lists are checked, once the remounted picker holds the pair.
  await page.waitForSelector(`#cmp-b option[value="${B.id}"]:checked`, { state: 'attached' });
  const refused = (await api('/api/profiles')).profiles.filter(
    (p) => p.status !== 'ok' || p.events === 0 || p.kernel_count === 0,
  );
  const greyed = new Map(await page.$$eval('#cmp-b option', (os) => os.map((o) => [o.value, o.disabled])));
  for (const p of refused)
    if (p.id !== A.id && p.id !== B.id && greyed.has(p.id)) eq(greyed.get(p.id), true, `${p.path} greyed out`);
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
  // The diff table: the API's rows in the API's order, largest |Δ| first of
  // the time per step when both sides have steps (of the total otherwise).
  const table = ['kernels', 'ops', 'memcpy', 'memset'].find((k) => cmp[k].rows.length);
  const rows = cmp[table].rows;
  const per = cmp.per_step.normalised;
  const fig = per ? 'per_step_us' : 'total_us';
  const deltas = rows.map((r) => Math.abs(r[fig].delta ?? -1));
  eq(
    deltas.join(','),
    deltas
      .slice()
      .sort((x, y) => y - x)
      .join(','),
    'API rows by |Δ|',
  );
  await page.waitForSelector('table.compare-diff tbody tr');
  const shown = await page.$$eval(
    'table.compare-diff tbody tr',
    (trs, k) => trs.map((tr) => [tr.dataset.name, tr.dataset.status, tr.querySelector(`[data-key="${k}"]`).dataset.value]),
    per ? 'per_step_delta' : 'total_delta',
  );
  eq(shown.length, Math.min(rows.length, 200), 'diff rows');
  shown.forEach(([name, status, delta], i) => {
    eq(name, rows[i].name, `row ${i} name`);
    eq(status, rows[i].status, `row ${i} status`);
    eq(delta, String(rows[i][fig].delta), `row ${i} Δ`);
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
