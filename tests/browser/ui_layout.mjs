// ui_layout.mjs — the pages at the widths people read them (1024 and 1400
// px): on the profile list, a profile's overview and kernels (the TF GPU
// fixture's long C++ names), compare (two fixtures) and the TensorBoard view,
// nothing runs past the right edge, the header title is shortened to fit
// rather than clipped (and any text cut with an ellipsis says itself whole in
// title=), no "NaN" or "undefined" shows; the profile list's rows, sort and
// filter; the timeline's area panel; a partly read profile (a gzip trace cut
// short, written here into the server's temporary profile dir) viewable on
// every page with its banner and its data; an unreadable profile's page; the
// TensorBoard view landing on the newest readable run past a newer broken
// one. The TensorBoard view is checked at both widths on every tool it lists
// (each on the first run that has it, folded tables open and closed). Runs
// after the other parts but the timeline's: it adds profiles. Screenshots go to XPV_ARTIFACTS (the
// build dir under ctest), README's among them (readme-*.png).

import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { BASE, test, assert, eq, api, newPage, shot, profiles, ready, waitDrawn } from './harness.mjs';

const WIDTHS = [1024, 1400];
// The TF GPU fixture has the longest C++ kernel names; else any with kernels.
const longNames =
  ready.find((p) => /tf1-xla-gpu/.test(p.path)) || ready.slice().sort((a, b) => b.kernel_count - a.kernel_count)[0];

// Everything that can be clicked or read as a block, past the viewport's
// right. The rule: nothing may extend past the viewport, except that a table
// may scroll sideways inside its own box (.table-wrap, overflow auto) when
// that box itself fits; what such a box hides is judged at its right edge.
// The page and its main scroll boxes (main, the TensorBoard view's .tb-main)
// must not scroll sideways either.
async function overflow(page) {
  return page.evaluate(() => {
    const out = [];
    const W = window.innerWidth;
    const sel = 'table, a, button, input, select, .btn, .table-wrap, .panel, figure, svg, canvas';
    for (const el of document.querySelectorAll(sel)) {
      const r = el.getBoundingClientRect();
      if (r.width === 0 || r.height === 0) continue; // not shown
      const box = el.parentElement?.closest('.table-wrap');
      const scrolls = box && /auto|scroll/.test(getComputedStyle(box).overflowX);
      const right = scrolls ? Math.min(r.right, box.getBoundingClientRect().right) : r.right;
      if (right > W + 0.5) {
        const text = (el.textContent || '').trim().slice(0, 30);
        out.push(`${el.tagName.toLowerCase()} "${text}" right=${Math.round(right)}`);
      }
    }
    if (document.documentElement.scrollWidth > W) out.push(`page scrollWidth=${document.documentElement.scrollWidth}`);
    for (const el of document.querySelectorAll('main, .tb-main'))
      if (el.scrollWidth > el.clientWidth + 1)
        out.push(`${el.className || el.tagName} scrolls sideways (${el.scrollWidth} > ${el.clientWidth})`);
    return out;
  });
}

async function noJunkText(page, where) {
  const text = await page.evaluate(() => document.body.innerText);
  for (const junk of ['NaN', 'undefined', '[object Object]'])
    assert(!new RegExp(`\\b${junk.replace(/[[\]]/g, '\\$&')}\\b`).test(text), `${where} shows "${junk}"`);
}

async function checkTitle(page, where) {
  const t = await page.$eval('#profile-title', (e) => ({
    text: e.textContent,
    scroll: e.scrollWidth,
    client: e.clientWidth,
    title: e.title,
  }));
  assert(t.text.length > 0, `${where}: empty title`);
  assert(t.scroll <= t.client + 1, `${where}: title clipped (${t.scroll} > ${t.client}): ${t.text}`);
  assert(t.title.length > 0, `${where}: no full path on hover`);
}

// Text cut with an ellipsis (or clipped headings), and select boxes too
// narrow for their chosen option, that do not say themselves whole on
// hover: the element or one of its close ancestors needs title=.
async function clippedWithoutTitle(page) {
  return page.evaluate(() => {
    const out = [];
    for (const el of document.querySelectorAll('h1, h2, h3, th, td, a, button, label, span, b, option, .card *')) {
      const r = el.getBoundingClientRect();
      if (r.width === 0 || r.height === 0 || el.scrollWidth <= el.clientWidth + 1) continue;
      const cs = getComputedStyle(el);
      if (cs.overflowX === 'visible' && cs.textOverflow !== 'ellipsis') continue;
      const titled = [el, el.parentElement, el.parentElement?.parentElement].some((x) => x && x.title);
      if (!titled) out.push(`${el.tagName.toLowerCase()} "${el.textContent.trim().slice(0, 40)}"`);
    }
    // A select box cuts its chosen option's text without any scrollWidth to
    // show for it: measure that text in the box's font against the room
    // left of the arrow.
    const ctx = document.createElement('canvas').getContext('2d');
    for (const sel of document.querySelectorAll('select')) {
      const r = sel.getBoundingClientRect();
      const text = sel.selectedOptions[0]?.text || '';
      if (r.width === 0 || r.height === 0 || !text) continue;
      const cs = getComputedStyle(sel);
      ctx.font = `${cs.fontWeight} ${cs.fontSize} ${cs.fontFamily}`;
      const room = sel.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight) - 16;
      if (ctx.measureText(text).width > room && !sel.title)
        out.push(
          `select#${sel.id} "${text.slice(0, 40)}" (${Math.round(ctx.measureText(text).width)} px in ${Math.round(room)})`,
        );
    }
    return out;
  });
}

const named = (s) => ready.find((p) => p.path.endsWith(s));
const withSteps = ready.filter((p) => p.step_count > 0 && p.kernel_count > 0);
const cmpA = named('pytorch-gp100-user-annotations.json.gz') || withSteps[0] || ready[0];
const cmpB = named('pytorch-v100-resnet50.pt.trace.json.gz') || withSteps.find((p) => p !== cmpA) || ready[ready.length - 1];

for (const width of WIDTHS) {
  await test(`layout ${width} px: profile list, overview and kernels fit, title whole, no NaN`, async () => {
    const page = await newPage({ viewport: { width, height: 900 } });
    await page.goto(`${BASE}/#/profiles`);
    await page.waitForSelector('table.data tbody tr');
    // wait for the findings column to settle a little (it fills one by one)
    await page.waitForTimeout(500);
    eq((await overflow(page)).join('; '), '', `profile list at ${width}`);
    await noJunkText(page, 'profile list');
    await shot(page, `layout-${width}-profiles`);
    assert(longNames, 'no profile with kernels');
    for (const sub of ['overview', 'kernels']) {
      await page.goto(`${BASE}/#/p/${longNames.id}/${sub}`);
      await page.waitForSelector(sub === 'kernels' ? 'table.data tbody tr' : '.cards .card');
      await page.waitForTimeout(400);
      eq((await overflow(page)).join('; '), '', `${sub} at ${width}`);
      if (sub === 'kernels') {
        // Fitted, not scrolled: the table is no wider than its box.
        const w = await page.$eval('.kernels-layout .table-wrap', (e) => [e.scrollWidth, e.clientWidth]);
        assert(w[0] <= w[1], `kernel table ${w[0]} px wide in a ${w[1]} px box at ${width}`);
        // The folded columns' known values read in each row's detail line:
        // all of them at 1024 px, grid, block and op at 1400 px.
        const detail = await page.$eval('table.kernels tbody tr .row-detail', (e) => e.innerText);
        assert(/\bop /.test(detail), `op in the detail at ${width}: ${detail}`);
        eq(/median .*max /.test(detail), width < 1300, `median…max in the detail at ${width}: ${detail}`);
      }
      await checkTitle(page, `${sub} at ${width}`);
      eq((await clippedWithoutTitle(page)).join('; '), '', `${sub} at ${width}: cut text without its whole in title=`);
      await noJunkText(page, sub);
      await shot(page, `layout-${width}-${sub}`);
    }
    // The header's "All profiles" stays on screen.
    const right = await page.$eval('a.all-profiles[href="#/profiles"]', (e) => e.getBoundingClientRect().right);
    assert(right <= width, `"All profiles" at ${right} of ${width}`);
    eq(page.errors.length, 0, `console errors: ${page.errors.join(' | ')}`);
    await page.context().close();
  });
}

for (const width of WIDTHS) {
  await test(`layout ${width} px: compare of two fixtures fits, no NaN`, async () => {
    assert(cmpA && cmpB && cmpA !== cmpB, 'two ready profiles');
    const page = await newPage({ viewport: { width, height: 900 } });
    await page.goto(`${BASE}/#/compare/${cmpA.id}/${cmpB.id}`);
    await page.waitForSelector('table.compare-diff tbody tr');
    await page.waitForTimeout(400);
    await shot(page, `layout-${width}-compare`);
    eq((await overflow(page)).join('; '), '', `compare at ${width}`);
    eq((await clippedWithoutTitle(page)).join('; '), '', `compare at ${width}: cut text without title=`);
    await noJunkText(page, 'compare');
    eq(page.errors.length, 0, `console errors: ${page.errors.join(' | ')}`);
    await page.context().close();
  });

  await test(`layout ${width} px: the TensorBoard view's landing and every tool fit, no NaN`, async () => {
    const runs = await api('/data/plugin/profile/runs');
    assert(runs.length > 0, 'no run');
    const page = await newPage({ viewport: { width, height: 900 } });
    const ready = (want) =>
      page.waitForFunction(
        (t) => {
          const r = (document.querySelector('.tb-main')?.dataset.ready || '').split('|');
          return r[1] && (t === null || (r[1] === t && r[2]));
        },
        want,
        { timeout: 20000 },
      );
    const check = async (what, name) => {
      await shot(page, `layout-${width}-tb-${name}`);
      eq((await overflow(page)).join('; '), '', what);
      eq((await clippedWithoutTitle(page)).join('; '), '', `${what}: cut text without title=`);
      await noJunkText(page, what);
    };
    await page.goto(`${BASE}/#/tb`);
    await ready(null);
    await page.waitForTimeout(300);
    await check(`TensorBoard landing at ${width}`, 'landing');
    // Every tool the view lists on the fixtures, each on the first run that
    // has it: the tables and charts, and the trace viewer's timeline.
    const seen = [];
    for (const run of runs) {
      const tools = await api(`/data/plugin/profile/run_tools?run=${encodeURIComponent(run)}`);
      for (const tool of tools.filter((t) => !seen.includes(t))) {
        seen.push(tool);
        await page.goto(`${BASE}/#/tb/${encodeURIComponent(run)}/${encodeURIComponent(tool)}`);
        await ready(tool);
        await page.waitForTimeout(300);
        const what = `TensorBoard ${tool} (${run}) at ${width}`;
        await check(what, tool);
        // a table folded under a toggle fits open as well
        const folded = await page.$$eval('.tb-main details:not([open])', (ds) => ds.map((d) => (d.open = true)).length);
        if (folded) {
          await page.waitForTimeout(200);
          await check(`${what}, details open`, `${tool}-open`);
        }
      }
    }
    for (const t of ['overview_page', 'framework_op_stats', 'kernel_stats', 'trace_viewer'])
      assert(seen.includes(t), `${t} not listed by any run: ${seen.join(', ')}`);
    eq(page.errors.length, 0, `console errors: ${page.errors.join(' | ')}`);
    await page.context().close();
  });
}

await test('kernels: "Show" lists each kind once and selects the one shown', async () => {
  const torch = ready.find((p) => p.producer === 'PyTorch' && p.kernel_count > 0) || longNames;
  const page = await newPage({ viewport: { width: 1024, height: 800 } });
  await page.goto(`${BASE}/#/p/${torch.id}/kernels`);
  await page.waitForSelector('table.data tbody tr');
  const res = await api(`/api/profiles/${torch.id}/kernels`);
  const opts = await page.$$eval('select[aria-label="What to summarize"] option', (os) => os.map((o) => o.textContent));
  eq(new Set(opts).size, opts.length, `no label twice: ${opts.join(', ')}`);
  assert(!opts.some((o) => /^Default/.test(o)), `no "Default" beside the kind it stands for: ${opts.join(', ')}`);
  eq(await page.inputValue('select[aria-label="What to summarize"]'), res.kind, 'the kind the server chose is selected');
  await page.context().close();
});

await test('overview at 1024 px: "Step time by category" keeps its title on one line', async () => {
  const p = withSteps[0] || longNames;
  const page = await newPage({ viewport: { width: 1024, height: 800 } });
  await page.goto(`${BASE}/#/p/${p.id}/overview`);
  await page.waitForSelector('#steps-h');
  const t = await page.$eval('#steps-h', (e) => ({
    h: e.getBoundingClientRect().height,
    lh: parseFloat(getComputedStyle(e).fontSize),
  }));
  assert(t.h < t.lh * 2, `title ${t.h} px high for a ${t.lh} px font: wrapped`);
  await page.context().close();
});

await test('timeline area selection: a full-width bottom panel, resizable, sortable, names on one line', async () => {
  const page = await newPage({ viewport: { width: 1024, height: 800 } });
  await page.goto(`${BASE}/#/p/${longNames.id}/timeline`);
  await waitDrawn(page);
  await page.evaluate(async () => {
    const t = window.__xpvTimeline;
    const st = t.state;
    await t.area.selectRange(st.t0, st.t1, [...st.byId.keys()]);
  });
  await page.waitForFunction(() => document.querySelector('canvas.tl-canvas').dataset.areaState === 'done');
  const box = await page.$eval('.tl-area-panel', (e) => e.getBoundingClientRect().toJSON());
  assert(box.width >= 1024 - 1 && box.x <= 0.5, `panel ${box.width} px wide at x=${box.x}`);
  eq((await overflow(page)).join('; '), '', 'timeline with the area panel at 1024');
  // one line per name, the whole name on hover
  const cells = await page.$$eval('.tl-area-table td.name', (tds) =>
    tds
      .slice(0, 50)
      .map((td) => ({ h: td.getBoundingClientRect().height, title: td.title, name: td.parentElement.dataset.name })),
  );
  assert(cells.length > 0, 'the area has rows');
  const rowH = cells[0].h;
  for (const c of cells) {
    assert(c.h <= rowH + 1 && c.h < 40, `row for ${c.name.slice(0, 40)} is ${c.h} px high: wrapped`);
    eq(c.title, c.name, 'whole name on hover');
  }
  // drag the top edge up: the panel grows, the tracks shrink
  const edge = await page.$eval('.tl-area-edge', (e) => e.getBoundingClientRect().toJSON());
  const before = await page.$eval('canvas.tl-canvas', (c) => c.getBoundingClientRect().height);
  await page.mouse.move(edge.x + 300, edge.y + edge.height / 2);
  await page.mouse.down();
  await page.mouse.move(edge.x + 300, edge.y - 100, { steps: 4 });
  await page.mouse.up();
  const after = await page.$eval('.tl-area-panel', (e) => e.getBoundingClientRect().height);
  assert(Math.abs(after - box.height - 100) <= 6, `panel ${box.height} -> ${after} px after a 100 px drag`);
  await page.waitForFunction((b) => document.querySelector('canvas.tl-canvas').getBoundingClientRect().height < b - 50, before);
  // every column sorts; by name ascending first
  for (const key of ['name', 'count', 'total_us', 'self_us', 'avg_us', 'max_us']) {
    await page.click(`.tl-area-table thead button[data-key="${key}"]`);
    const sort = await page.$eval(`.tl-area-table thead button[data-key="${key}"]`, (b) =>
      b.parentElement.getAttribute('aria-sort'),
    );
    assert(sort === 'ascending' || sort === 'descending', `${key}: aria-sort ${sort}`);
  }
  await page.click('.tl-area-table thead button[data-key="name"]');
  const names = await page.$$eval('.tl-area-table tbody tr', (trs) => trs.map((t) => t.dataset.name));
  const sorted = names.slice().sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const desc = sorted.slice().reverse();
  assert(names.join('\n') === sorted.join('\n') || names.join('\n') === desc.join('\n'), 'sorted by name');
  await shot(page, 'layout-1024-timeline-area');
  await page.click('.tl-area-close');
  await page.waitForSelector('.tl-area-panel', { state: 'hidden' });
  eq(await page.evaluate(() => window.__xpvTimeline.state.area), null, 'the close button clears the area');
  eq(page.errors.length, 0, `console errors: ${page.errors.join(' | ')}`);
  await page.context().close();
});

await test('README screenshots: the profile list and an overview', async () => {
  // docs/screenshots/ holds copies of these (small: 1200 x 860, scale 1).
  const p = named('pytorch-v100-resnet50.pt.trace.json.gz') || withSteps[0] || ready[0];
  const page = await newPage({ viewport: { width: 1200, height: 860 } });
  await page.goto(`${BASE}/#/profiles`);
  await page.waitForSelector('table.data tbody tr');
  await page.waitForTimeout(800);
  await shot(page, 'readme-profiles');
  await page.goto(`${BASE}/#/p/${p.id}/overview`);
  await page.waitForSelector('[data-step-bar]');
  await page.waitForTimeout(600);
  await shot(page, 'readme-overview');
  await page.context().close();
});

await test('header title shortens a long name in the middle, full path on hover', async () => {
  const p = ready
    .slice()
    .sort((a, b) => (b.run || '').length + (b.host || '').length - (a.run || '').length - (a.host || '').length)[0];
  const page = await newPage({ viewport: { width: 1024, height: 700 } });
  await page.goto(`${BASE}/#/p/${p.id}/overview`);
  await page.waitForSelector('#profile-title b');
  await page.setViewportSize({ width: 560, height: 700 }); // too narrow: the name must be cut
  await page.waitForFunction(() => document.querySelector('#profile-title b').textContent.includes('…'));
  const t = await page.$eval('#profile-title', (e) => ({ b: e.querySelector('b').textContent, title: e.title }));
  assert(!t.b.startsWith('…') && !t.b.endsWith('…'), `cut in the middle: ${t.b}`);
  eq(t.title, p.path, 'full path on hover');
  await checkTitle(page, 'narrow');
  await page.context().close();
});

await test('timeline toolbar is one line at 1400 px', async () => {
  const page = await newPage({ viewport: { width: 1400, height: 900 } });
  await page.goto(`${BASE}/#/p/${longNames.id}/timeline`);
  await page.waitForSelector('.tl-toolbar input[type="search"]');
  const tops = await page.$$eval('.tl-toolbar > *', (els) =>
    els.filter((e) => e.getBoundingClientRect().width > 0).map((e) => Math.round(e.getBoundingClientRect().top)),
  );
  const box = await page.$eval('.tl-toolbar', (e) => e.getBoundingClientRect().height);
  assert(box < 60, `toolbar ${box} px high (wrapped?), item tops ${tops.join(',')}`);
  eq((await overflow(page)).join('; '), '', 'timeline at 1400');
  await shot(page, 'layout-1400-timeline');
  await page.context().close();
});

await test('profile list: whole rows open, headers sort, filter matches path and status', async () => {
  const page = await newPage({ viewport: { width: 1400, height: 900 } });
  await page.goto(`${BASE}/#/profiles`);
  await page.waitForSelector('table.data tbody tr');
  // sort by steps, most first
  await page.click('th[data-col="steps"] button');
  eq(await page.$eval('th[data-col="steps"]', (e) => e.getAttribute('aria-sort')), 'descending', 'aria-sort');
  const steps = await page.$$eval('table.data tbody tr td:nth-child(6)', (tds) => tds.map((t) => t.textContent));
  const want = profiles
    .map((p) => p.step_count)
    .filter((n) => typeof n === 'number')
    .sort((a, b) => b - a);
  eq(Number(steps[0].replace(/[^\d.]/g, '')) || 0, want[0] || 0, 'most steps first');
  await page.click('th[data-col="steps"] button');
  eq(await page.$eval('th[data-col="steps"]', (e) => e.getAttribute('aria-sort')), 'ascending', 'toggles');
  // the filter matches a format, then a path
  const fmt = ready[0].format;
  await page.fill('input[type="search"]', fmt);
  await page.waitForFunction(() => document.querySelectorAll('table.data tbody tr').length > 0);
  const rows = await page.$$eval('table.data tbody tr', (trs) =>
    trs.map((t) => t.textContent + t.querySelector('[title]')?.title),
  );
  eq(
    rows.length,
    profiles.filter((p) => [p.format, p.path, p.run, p.host].join(' ').toLowerCase().includes(fmt)).length,
    `rows matching ${fmt}`,
  );
  const one = ready[0];
  await page.fill('input[type="search"]', one.path);
  await page.waitForFunction((id) => document.querySelector(`table.data tbody tr[data-id="${id}"]`), one.id);
  // a click on the row, not on a link, opens the overview
  await page.click(`table.data tbody tr[data-id="${one.id}"] td.num:not(.secondary) >> nth=0`);
  await page.waitForFunction((id) => location.hash === `#/p/${id}/overview`, one.id);
  await page.context().close();
});

await test('tabs: Memory and HLO only where there is data, no 404', async () => {
  const chrome =
    ready.find((p) => p.format !== 'xplane' && /tf1-xla-gpu/.test(p.path)) || ready.find((p) => p.format !== 'xplane');
  const tools = await api(`/api/profiles/${chrome.id}/tools`);
  const page = await newPage();
  const bad = [];
  page.on('response', (r) => {
    if (r.status() === 404) bad.push(r.url());
  });
  await page.goto(`${BASE}/#/p/${chrome.id}/overview`);
  await page.waitForSelector('.cards .card');
  await page.waitForTimeout(500);
  eq(await page.isHidden('#tabs a[data-page="hlo"]'), !tools.includes('hlo_stats'), 'HLO tab');
  eq(await page.isHidden('#tabs a[data-page="memory"]'), !tools.some((t) => t.startsWith('memory_')), 'Memory tab');
  eq(bad.join(' '), '', '404 answers');
  const xp = ready.find((p) => p.format === 'xplane');
  if (xp) {
    await page.goto(`${BASE}/#/p/${xp.id}/overview`);
    await page.waitForSelector('#tabs a[data-page="hlo"]:not([hidden])');
    await page.waitForSelector('#tabs a[data-page="memory"]:not([hidden])');
  }
  await page.context().close();
});

await test('a partly read profile: overview, timeline and kernels with a banner', async () => {
  const dir = process.env.XPV_PROFILE_DIR;
  assert(dir, 'XPV_PROFILE_DIR not set');
  // A chrome trace with several steps, gzipped, cut in the middle.
  const events = [];
  for (let s = 0; s < 40; s++) {
    events.push({ name: `ProfilerStep#${s}`, ph: 'X', ts: s * 1000, dur: 900, pid: 1, tid: 1 });
    for (let k = 0; k < 50; k++)
      events.push({ name: `kernel_${k % 7}`, cat: 'kernel', ph: 'X', ts: s * 1000 + k * 15, dur: 10, pid: 2, tid: 7 });
  }
  const gz = zlib.gzipSync(Buffer.from(JSON.stringify({ traceEvents: events })));
  const file = path.join(dir, 'partial', 'cut.pt.trace.json.gz');
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, gz.subarray(0, Math.floor(gz.length / 2)));
  const old = new Date('2019-06-01T00:00:00Z'); // not the newest: the other parts' landing stays
  fs.utimesSync(file, old, old);
  let p = null;
  const deadline = Date.now() + 30000;
  while (Date.now() < deadline) {
    p = (await api('/api/profiles')).profiles.find((x) => x.path.endsWith('partial/cut.pt.trace.json.gz'));
    if (p && p.status !== 'pending' && p.status !== 'indexing') break;
    await new Promise((r) => setTimeout(r, 300));
  }
  assert(p && p.partial && p.events > 0, `partial profile not indexed as partial: ${JSON.stringify(p)}`);
  const page = await newPage({ viewport: { width: 1400, height: 900 } });
  for (const sub of ['overview', 'timeline', 'kernels']) {
    await page.goto(`${BASE}/#/p/${p.id}/${sub}`);
    await page.waitForSelector('#profile-banner:not([hidden])');
    const banner = await page.textContent('#profile-banner');
    assert(/Partial profile/.test(banner) && banner.includes(p.error), `banner: ${banner}`);
    assert(!(await page.isVisible('text=This profile could not be read')), `${sub}: says unreadable`);
    // and what was read: step bars, drawn events, kernel rows
    if (sub === 'overview') {
      await page.waitForSelector('.cards .card');
      await page.waitForSelector('[data-step-bar]');
      const steps = (await api(`/api/profiles/${p.id}/steps`)).steps.length;
      assert(steps > 0, 'steps were read');
      eq(await page.$$eval('[data-step-bar]', (b) => b.length), steps, 'a bar per step read');
    }
    if (sub === 'timeline') await waitDrawn(page);
    if (sub === 'kernels') {
      await page.waitForSelector('table.data tbody tr');
      const names = await page.$$eval('table.data tbody tr', (trs) => trs.map((t) => t.textContent));
      assert(
        names.some((n) => /kernel_\d/.test(n)),
        `kernel rows: ${names.slice(0, 3).join(' | ')}`,
      );
    }
    await noJunkText(page, `partial ${sub}`);
    await shot(page, `partial-${sub}`);
  }
  // the banner leaves with the profile
  await page.goto(`${BASE}/#/p/${ready[0].id}/overview`);
  await page.waitForSelector('#profile-banner[hidden]', { state: 'attached' });
  eq(page.errors.length, 0, `console errors: ${page.errors.join(' | ')}`);
  await page.context().close();
});

await test('an unreadable profile says why; it has no data tabs', async () => {
  const broken = profiles.find((p) => p.status === 'error' && !p.partial);
  if (!broken) return;
  const page = await newPage();
  await page.goto(`${BASE}/#/p/${broken.id}/overview`);
  await page.waitForSelector('text=This profile could not be read');
  await page.context().close();
});

await test('an Nsight Systems report shows its nsys export command', async () => {
  const src = process.env.XPV_FIXTURES && path.join(process.env.XPV_FIXTURES, 'nsys');
  const rep = src && fs.existsSync(src) && fs.readdirSync(src).find((f) => f.endsWith('.nsys-rep'));
  if (!rep) return console.log('     (no .nsys-rep fixture: skipped)');
  const file = path.join(process.env.XPV_PROFILE_DIR, 'nsysrep', rep);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.copyFileSync(path.join(src, rep), file);
  const old = new Date('2019-06-02T00:00:00Z');
  fs.utimesSync(file, old, old);
  let p = null;
  const deadline = Date.now() + 30000;
  while (Date.now() < deadline && !(p && p.status === 'unsupported')) {
    p = (await api('/api/profiles')).profiles.find((x) => x.path.endsWith(`nsysrep/${rep}`));
    await new Promise((r) => setTimeout(r, 300));
  }
  eq(p && p.status, 'unsupported', 'the report is listed as unsupported');
  const page = await newPage({ viewport: { width: 1024, height: 800 } });
  await page.goto(`${BASE}/#/p/${p.id}/overview`);
  await page.waitForSelector('pre.command');
  const cmd = await page.textContent('pre.command');
  assert(cmd.startsWith('nsys export --type sqlite') && p.error.includes(cmd), `command: ${cmd}`);
  assert(cmd.trim().endsWith(rep), `the command names the report: ${cmd}`);
  eq(await page.$$eval('.cards .card', (c) => c.length), 0, 'no empty cards');
  eq((await overflow(page)).join('; '), '', 'nsys page at 1024');
  await shot(page, 'nsys-rep-overview');
  await page.context().close();
});

await test('the TensorBoard view lands on the newest readable run, past a newer broken one', async () => {
  const dir = process.env.XPV_PROFILE_DIR;
  assert(dir, 'XPV_PROFILE_DIR not set');
  // A run newer than every other, holding only a capture that cannot be read.
  const run = '2099_01_01_00_00_00';
  const file = path.join(dir, 'plugins', 'profile', run, 'vm.xplane.pb');
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, Buffer.from('not an xplane'));
  let list = [];
  const deadline = Date.now() + 30000;
  while (Date.now() < deadline) {
    list = (await api('/api/profiles')).profiles;
    const p = list.find((x) => x.run === run);
    if (p && p.status !== 'pending' && p.status !== 'indexing') break;
    await new Promise((r) => setTimeout(r, 300));
  }
  const broken = list.find((x) => x.run === run);
  assert(broken && broken.status === 'error' && !broken.events, `broken capture: ${JSON.stringify(broken)}`);
  const runs = await api('/data/plugin/profile/runs');
  eq(runs[0], run, 'the broken run is the newest');
  const readable = (p) => p.events > 0 && (p.status === 'ok' || p.partial === true);
  const want = runs.find((r) => list.some((p) => p.run === r && readable(p)));
  assert(want && want !== run, 'a readable run');
  const latest = await api('/api/profiles/latest');
  assert(readable(latest), `latest is readable: ${latest.path}`);
  const page = await newPage({ viewport: { width: 1400, height: 900 } });
  await page.goto(`${BASE}/#/tb`);
  await page.waitForFunction(() => (document.querySelector('.tb-main')?.dataset.ready || '').split('|')[1], null, {
    timeout: 20000,
  });
  eq(await page.inputValue('#tb-run'), want, 'landing run');
  eq((await overflow(page)).join('; '), '', 'TensorBoard landing at 1400');
  await noJunkText(page, 'TensorBoard landing');
  await page.context().close();
});
