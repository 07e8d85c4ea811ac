// ui_links_live.mjs — timeline flows, counters and area selection on the
// PyTorch H100 fixture, findings, live mode following the profile dir, and
// that no request leaves 127.0.0.1.

import fs from 'node:fs';
import path from 'node:path';
import { spawn } from 'node:child_process';
import net from 'node:net';
import { BASE, test, assert, eq, api, allRequests, newPage, shot, profiles, ready, waitDrawn, tlState } from './harness.mjs';

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
  // Each figure and its threshold carry the finding's unit ("33.9% of step time · threshold 5%").
  const nums = await page.$$eval('section.findings p.finding-num', (ps) => ps.map((x) => x.textContent));
  best.findings.forEach((f, i) => {
    const short = (f.unit || '').replace(/ of .*$/, '');
    if (!short || f.unit === 'copies') return;
    const [value, threshold] = nums[i].split(' · ');
    assert(value.endsWith(f.unit), `value with its unit: ${nums[i]}`);
    assert(threshold.startsWith('threshold ') && threshold.endsWith(short), `threshold with its unit: ${nums[i]}`);
  });
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
