// ui_xprof_screens.mjs — XProf's first screens: the overview's summary cards
// (TensorBoard view and the profile's Overview) against the overview_page
// and steps answers, op_profile's tree (expand, collapse, keyboard, bar
// widths against the shares), memory_profile's chart with its axes, and
// nothing past the viewport on these pages at 1024 and 1400 px.

import { BASE, FIXTURES, test, assert, eq, api, newPage, shot, profiles } from './harness.mjs';

const tbq = (route, params) => `/data/plugin/profile/${route}?${new URLSearchParams(params)}`;
const tbHash = (...parts) => `#/tb/${parts.map(encodeURIComponent).join('/')}`;
const near = (a, b, what, rel = 1e-6) =>
  assert(Math.abs(a - b) <= rel * Math.max(1, Math.abs(a), Math.abs(b)), `${what}: got ${a}, want ${b}`);

async function tbReady(page, run, tool, host) {
  await page.waitForFunction((w) => document.querySelector('.tb-main')?.dataset.ready === w, `${run}|${tool}|${host}`, {
    timeout: 30000,
  });
}

// The first (run, host) whose `tool` answer satisfies ok(DataTable).
async function findTool(tool, ok) {
  for (const run of await api(tbq('runs', {}))) {
    if (!(await api(tbq('run_tools', { run }))).includes(tool)) continue;
    for (const { hostname } of await api(tbq('hosts', { run, tag: tool }))) {
      if (hostname === 'ALL_HOSTS') continue;
      const res = await fetch(BASE + tbq('data', { run, tag: tool, host: hostname }));
      if (!res.ok) continue;
      const dt = await res.json();
      if (ok(dt)) return { run, host: hostname, dt };
    }
  }
  return null;
}
const cells = (dt) => dt.rows.map((r) => dt.cols.map((_, i) => (r.c && r.c[i] ? (r.c[i].v ?? null) : null)));
function overviewRow(dt, section, metric) {
  const r = cells(dt).find((c) => c[0] === section && c[1] === metric);
  return r ? r[2] : null;
}

// Elements past the right edge of the viewport, and a page wider than it.
async function overflow(page) {
  return page.evaluate(() => {
    const out = [];
    const W = window.innerWidth;
    const sel = 'table, a, button, input, select, .btn, .card, .op-row, svg, figure';
    for (const el of document.querySelectorAll(sel)) {
      const r = el.getBoundingClientRect();
      if (r.width === 0 || r.height === 0 || el.closest('details:not([open])')) continue;
      if (r.right > W + 0.5)
        out.push(`${el.tagName.toLowerCase()}.${el.className?.baseVal ?? el.className} right=${Math.round(r.right)}`);
    }
    if (document.documentElement.scrollWidth > W) out.push(`page scrollWidth=${document.documentElement.scrollWidth}`);
    return out;
  });
}
async function fits(page, where) {
  for (const width of [1024, 1400]) {
    await page.setViewportSize({ width, height: 900 });
    await page.waitForTimeout(250); // charts redraw at the new width
    eq((await overflow(page)).join('; '), '', `${where} at ${width} px`);
    const text = await page.evaluate(() => document.body.innerText);
    assert(!/\bNaN\b|\bundefined\b/.test(text), `${where} at ${width} px shows NaN or undefined`);
    await shot(page, `xprof-${where}-${width}`);
  }
}

const overviewT = await findTool('overview_page', (dt) => overviewRow(dt, 'steps', 'steps') > 0);

await test('TensorBoard overview: summary cards equal the overview_page answer', async () => {
  assert(overviewT, 'no run with steps has an overview_page');
  const { run, host, dt } = overviewT;
  const page = await newPage({ viewport: { width: 1400, height: 900 } });
  await page.goto(`${BASE}/${tbHash(run, 'overview_page', host)}`);
  await tbReady(page, run, 'overview_page', host);
  const card = (name) =>
    page.$eval(`.xprof-cards .card[data-card="${name}"]`, (c) => ({
      raw: c.dataset.value,
      value: c.querySelector('.value').textContent,
      hint: c.querySelector('.hint').textContent,
    }));
  const st = await card('step-time');
  near(Number(st.raw), overviewRow(dt, 'steps', 'average step time'), 'average step time');
  assert(st.value.includes('±'), `step time with its deviation: ${st.value}`);
  assert(st.hint.includes(`${overviewRow(dt, 'steps', 'steps')} step`), `step count: ${st.hint}`);
  const compile = overviewRow(dt, 'steps', 'compilation');
  const cc = await card('compile');
  if (compile === null) eq(cc.raw, 'null', 'compilation unknown');
  else near(Number(cc.raw), compile, 'compilation share');
  const busy = overviewRow(dt, 'environment', 'device busy');
  const bc = await card('device-busy');
  if (busy === null) eq(bc.raw, 'null', 'device busy unknown');
  else {
    near(Number(bc.raw), busy, 'device busy');
    assert(/\d+ of \d+ devices? ran work/.test(bc.hint), `how many devices ran: ${bc.hint}`);
  }
  const p = profiles.find((x) => x.run === run && x.host === host && x.status === 'ok');
  const findings = p ? await api(`/api/profiles/${p.id}/findings`) : null;
  const rc = await card('recommendation');
  const first = findings && findings.findings && findings.findings[0];
  if (first) eq(rc.raw, first.title, 'the top recommendation is the first finding');
  else eq(rc.raw, (dt.p || {}).recommendation ?? 'null', "the tool's recommendation");
  await fits(page, 'tb-overview');
  eq(page.errors.length, 0, `console errors: ${page.errors.join(' | ')}`);
  await page.context().close();
});

await test('profile overview: step time ± deviation and compilation as overview_page computes them', async () => {
  assert(overviewT, 'no run with steps has an overview_page');
  const p = profiles.find((x) => x.run === overviewT.run && x.host === overviewT.host && x.status === 'ok');
  assert(p, 'the host has no ready profile');
  const tool = await api(`/api/profiles/${p.id}/tools/overview_page`);
  const row = (s, m) => tool.rows.find((r) => r.section === s && r.metric === m)?.value ?? null;
  const page = await newPage({ viewport: { width: 1400, height: 900 } });
  await page.goto(`${BASE}/#/p/${p.id}/overview`);
  await page.waitForFunction(() => !document.querySelector('.cards .card[data-empty]'), null, { timeout: 20000 });
  const raw = (i) => page.$eval(`.cards .card:nth-child(${i + 1})`, (c) => c.dataset.value);
  const label = (i) => page.$eval(`.cards .card:nth-child(${i + 1}) .label`, (c) => c.textContent);
  near(Number(await raw(0)), row('steps', 'average step time'), 'average step time', 1e-5);
  assert((await page.textContent('.cards .card:nth-child(1) .value')).includes('±'), 'the deviation is shown');
  eq(await label(6), 'Compilation', 'the seventh card');
  const compile = row('steps', 'compilation');
  if (compile !== null) near(Number(await raw(6)), compile, 'compilation share', 1e-5);
  eq(await label(7), 'Top recommendation', 'the eighth card');
  const f = await api(`/api/profiles/${p.id}/findings`);
  if (f.findings && f.findings.length) eq(await raw(7), f.findings[0].title, 'the first finding');
  await fits(page, 'profile-overview');
  eq(page.errors.length, 0, `console errors: ${page.errors.join(' | ')}`);
  await page.context().close();
});

const opT = await findTool('op_profile', (dt) => cells(dt).filter((c) => c[0] === 3).length > 1);

await test('op_profile: a tree that expands and collapses, bars as wide as the shares', async () => {
  if (!opT && !FIXTURES) return console.log('  skip: no op_profile with ops (no ../shared/fixtures)');
  assert(opT, 'the fixtures have XLA ops, yet no op_profile has any');
  const { run, host, dt } = opT;
  const rows = cells(dt);
  const ids = dt.cols.map((c) => c.id);
  const col = (id) => ids.indexOf(id);
  const cats = rows.filter((c) => c[col('level')] === 1);
  const page = await newPage({ viewport: { width: 1400, height: 900 } });
  await page.goto(`${BASE}/${tbHash(run, 'op_profile', host)}`);
  await tbReady(page, run, 'op_profile', host);
  const top = await page.$$eval('.op-tree-rows > .op-row', (rs) => rs.map((r) => [r.dataset.name, Number(r.dataset.selfUs)]));
  eq(top.length, cats.length, 'one top row per category');
  const bySelf = cats.slice().sort((a, b) => b[col('total_self_time')] - a[col('total_self_time')]);
  eq(top.map((t) => t[0]).join('|'), bySelf.map((c) => c[col('name')]).join('|'), 'categories by self time');
  // The first category starts open with its modules; a click closes it.
  const first = page.locator('.op-tree-rows > .op-row').first();
  eq(await first.getAttribute('aria-expanded'), 'true', 'the first category starts open');
  const kids = () => page.$$eval('.op-tree-rows > .op-group:not([hidden]) > .op-row', (rs) => rs.length);
  const catIdx = rows.indexOf(bySelf[0]);
  let modules = 0;
  for (let i = catIdx + 1; i < rows.length && rows[i][col('level')] > 1; i++) modules += rows[i][col('level')] === 2;
  eq(await kids(), modules, 'its modules shown');
  await first.click();
  eq(await first.getAttribute('aria-expanded'), 'false', 'a click closes it');
  eq(await kids(), 0, 'no module shown');
  // Keyboard: Right opens, Down goes to the first module, Right opens it, Left closes it, Left goes up.
  await first.focus();
  await page.keyboard.press('ArrowRight');
  eq(await first.getAttribute('aria-expanded'), 'true', 'Right opens');
  await page.keyboard.press('ArrowDown');
  const mod = await page.evaluate(() => document.activeElement.dataset.level);
  eq(mod, '2', 'Down moves to a module');
  await page.keyboard.press('ArrowRight');
  const opened = await page.evaluate(() => document.activeElement.getAttribute('aria-expanded'));
  eq(opened, 'true', 'Right opens the module');
  const ops = await page.$$eval('.op-row[data-level="3"]', (rs) => rs.filter((r) => !r.closest('[hidden]')).length);
  assert(ops > 0, 'its ops are shown');
  await page.keyboard.press('ArrowLeft');
  eq(await page.evaluate(() => document.activeElement.getAttribute('aria-expanded')), 'false', 'Left closes it');
  await page.keyboard.press('ArrowLeft');
  eq(await page.evaluate(() => document.activeElement.dataset.level), '1', 'Left again goes to the category');
  // Each shown row's bars are its shares of the total and of the parent.
  const bars = await page.$$eval('.op-row', (rs) =>
    rs
      .filter((r) => !r.closest('[hidden]'))
      .map((r) => {
        const track = r.querySelector('.op-bar').getBoundingClientRect().width;
        return {
          name: r.dataset.name,
          level: Number(r.dataset.level),
          total: Number(r.dataset.shareTotal),
          parent: Number(r.dataset.shareParent),
          wTotal: r.querySelector('.op-bar-total').getBoundingClientRect().width / track,
          wParent: r.querySelector('.op-bar-parent').getBoundingClientRect().width / track,
        };
      }),
  );
  assert(bars.length >= cats.length, 'bars drawn');
  for (const b of bars) {
    const api_ = rows.find((c) => c[col('level')] === b.level && c[col('name')] === b.name);
    assert(api_, `row ${b.name} is in the answer`);
    near(b.total, api_[col('percent')] / 100, `${b.name}: share of total`, 1e-9);
    near(b.parent, api_[col('percent_of_parent')] / 100, `${b.name}: share of parent`, 1e-9);
    assert(Math.abs(b.wTotal - b.total) < 0.01, `${b.name}: total bar ${b.wTotal} for ${b.total}`);
    assert(Math.abs(b.wParent - b.parent) < 0.01, `${b.name}: parent bar ${b.wParent} for ${b.parent}`);
  }
  await fits(page, 'tb-op-profile');
  eq(page.errors.length, 0, `console errors: ${page.errors.join(' | ')}`);
  await page.context().close();
});

const memT = await findTool('memory_profile', (dt) => dt.rows.length > 0);

await test('memory_profile: a chart of memory over time with a y axis in bytes and a time axis', async () => {
  if (!memT && !FIXTURES) return console.log('  skip: no memory_profile (no ../shared/fixtures)');
  assert(memT, 'the fixtures have memory events, yet no memory_profile has rows');
  const { run, host, dt } = memT;
  const page = await newPage({ viewport: { width: 1400, height: 900 } });
  await page.goto(`${BASE}/${tbHash(run, 'memory_profile', host)}`);
  await tbReady(page, run, 'memory_profile', host);
  const fig = 'figure[data-chart="memory-profile"]';
  await page.waitForSelector(`${fig} svg.line-chart path[data-line]`, { timeout: 20000 });
  eq(await page.$eval(fig, (f) => f.dataset.allocator), (dt.p || {}).peak_allocator, 'opens on the highest peak');
  const y = await page.$$eval(`${fig} g.axis[data-axis="y"] text`, (ts) => ts.map((t) => Number(t.dataset.value)));
  assert(y.length >= 2, `y ticks: ${y}`);
  const yTitle = await page.textContent(`${fig} text.axis-title[data-axis="y"]`);
  assert(/\((B|KB|MB|GB|TB)\)/.test(yTitle), `the y axis names its unit: ${yTitle}`);
  const xTitle = await page.textContent(`${fig} text.axis-title[data-axis="x"]`);
  assert(/\((µs|ms|s)\)/.test(xTitle), `the time axis names its unit: ${xTitle}`);
  const peak = Number(await page.$eval(`${fig} circle[data-peak]`, (c) => c.dataset.peak));
  const cols = dt.cols.map((c) => c.id);
  const row = cells(dt).find((c) => c[0] === dt.p.peak_allocator);
  eq(peak, row[cols.indexOf('peak_in_use_bytes')], 'the peak marked is the table’s');
  assert(Math.max(...y) >= peak, 'the axis reaches the peak');
  await fits(page, 'tb-memory-profile');
  eq(page.errors.length, 0, `console errors: ${page.errors.join(' | ')}`);
  await page.context().close();
});

await test('charts: every step chart has a labelled time axis', async () => {
  assert(overviewT, 'no run with steps has an overview_page');
  const p = profiles.find((x) => x.run === overviewT.run && x.host === overviewT.host && x.status === 'ok');
  const page = await newPage({ viewport: { width: 1400, height: 900 } });
  await page.goto(`${BASE}/#/p/${p.id}/overview`);
  await page.waitForSelector('[data-step-bar]', { timeout: 20000 });
  const titles = await page.$$eval('svg text.axis-title', (ts) => ts.map((t) => t.textContent));
  assert(
    titles.some((t) => /^Step time \((µs|ms|s)\)$/.test(t)),
    `the step chart's y axis: ${titles.join(' | ')}`,
  );
  assert(
    titles.some((t) => /^Total time \((µs|ms|s)\)$/.test(t)),
    `the top kernels' time axis: ${titles.join(' | ')}`,
  );
  await page.context().close();
});
