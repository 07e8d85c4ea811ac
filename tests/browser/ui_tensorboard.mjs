// ui_tensorboard.mjs — the TensorBoard view (runs, tools, hosts, deep links,
// All hosts), the profile's Tools tab and the tools' charts, against the
// data routes.

import fs from 'node:fs';
import path from 'node:path';
import { BASE, test, assert, eq, api, newPage, shot, profiles, ready, byKernels, waitDrawn } from './harness.mjs';

// ---- the TensorBoard view (#/tb/<run>/<tool>/<host>) ----

const tbq = (route, params) => `/data/plugin/profile/${route}?${new URLSearchParams(params)}`;
const tbHash = (...parts) => `#/tb/${parts.map(encodeURIComponent).join('/')}`;
// The view says which (run, tool, host) it shows once it has drawn it; the
// parts not given may be any.
// Where the view lands without a run in the address: the newest run holding
// a readable profile (whole, or partial with events), as `latest` picks.
async function newestReadableRun(runs) {
  const list = (await api('/api/profiles')).profiles;
  const readable = (p) => p.events > 0 && (p.status === 'ok' || p.partial === true);
  return runs.find((r) => list.some((p) => p.run === r && readable(p))) ?? runs[0];
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
  const landingRun = await newestReadableRun(runs);
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
    // attached: overview_page's and op_profile's tables are folded under their cards and tree
    await page.waitForSelector(`.tool-main[data-tool="${tool}"] table.data`, { timeout: 15000, state: 'attached' });
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
    case 'op_profile': {
      // the tree (op_tree.js; ui_xprof_screens.mjs checks its rows): one top row per category
      const n = dt.rows.filter((r) => v(r, 'level') === 1).length;
      return n ? { chart: 'op-tree', marks: 0, rows: n } : null;
    }
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
      treeRows: f.querySelectorAll('.op-tree-rows > .op-row').length,
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
        if (want.chart === 'op-tree') eq(c.treeRows, want.rows, `${what}: one top row per category`);
        else assert(c.title && c.svgTitle && c.label, `${what}: titled (${JSON.stringify(c)})`);
        if (!['step-time', 'categories', 'op-tree'].includes(want.chart))
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
