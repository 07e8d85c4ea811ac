// ui_first_screen.mjs — what the first screens say is true: the overview's
// Device busy card says how many of the listed devices ran work; kernels with
// C++ template names of a thousand bytes and more read short
// (kernel_name.js) and whole in the kernel table, never cut, with the full
// name as the title, and its "Show" link lands on a selected occurrence.

import { BASE, test, assert, eq, api, newPage, shot, ready } from './harness.mjs';

const longP = ready.find((p) => p.path.endsWith('pytorch-rocm-mi210-gpu-only.json.gz'));
if (!longP) console.log('skip long kernel name tests: no ROCm MI210 fixture (../shared/fixtures)');

// What every name cell of the page's tables shows: the name (not the
// detail line under it), title, whether anything of it is hidden.
const nameCells = (page) =>
  page.$$eval('table.data td.name', (tds) =>
    tds.map((td) => ({
      text: (td.querySelector('.kname') || td).textContent,
      title: td.getAttribute('title') || '',
      clipped: td.scrollWidth > td.clientWidth + 1 || getComputedStyle(td).textOverflow === 'ellipsis',
    })),
  );

if (longP)
  await test('kernels: long template names read short, never cut; "Show" selects the longest one', async () => {
    const { kernels } = await api(`/api/profiles/${longP.id}/kernels?kind=kernel`);
    const k = kernels.reduce((a, b) => (b.name.length > a.name.length ? b : a));
    assert(k.name.length > 1000, `a name over 1000 characters: ${k.name.length}`);
    const page = await newPage();
    await page.goto(`${BASE}/#/p/${longP.id}/kernels`);
    await page.waitForSelector('table.data tbody tr td.name');
    const cells = await nameCells(page);
    assert(cells.length > 0, 'the table lists kernels');
    const texts = new Set();
    for (const c of cells) {
      assert(!c.clipped, `a name cell hides part of its text: ${c.text}`);
      assert(c.title.length >= c.text.replace(/ #\d+$/, '').length - 4, `the title is the full name: ${c.title}`);
      // Shortened names lose whole lists only: what is left is the full name's text.
      const kept = c.text.replace(/ #\d+$/, '').split(/<…>|\(…\)/);
      let at = 0;
      for (const part of kept) {
        const i = c.title.indexOf(part, at);
        assert(i >= 0, `"${part}" of "${c.text}" is in the full name in order`);
        at = i + part.length;
      }
      assert(!/…$/.test(c.text) || /[>)]$/.test(c.text), `no name ends cut: ${c.text}`);
      assert(!texts.has(c.text), `two rows read the same: ${c.text}`);
      texts.add(c.text);
    }
    await shot(page, 'kernels-long-names');
    await page.fill('input[type="search"]', k.name);
    const link = page.locator('table.data tbody tr a.tl-link');
    await page.waitForFunction(() => document.querySelectorAll('table.data tbody tr').length === 1, null, { timeout: 5000 });
    const row = await page.$eval('table.data tbody tr td.name', (td) => ({
      text: (td.querySelector('.kname') || td).textContent,
      title: td.title,
    }));
    eq(row.title, k.name, 'the title is the full name');
    assert(row.text.length < 200 && row.text.includes('<…>'), `shown short: ${row.text}`);
    await link.click();
    await page.waitForFunction(() => /\/timeline\?.*sel=\d+%3A\d+|\/timeline\?.*sel=\d+:\d+/.test(location.hash), null, {
      timeout: 15000,
    });
    const sel = new URLSearchParams(page.url().split('?')[1]).get('sel');
    await page.waitForFunction((ref) => window.__xpvTimeline?.state.selected?.ev.ref === ref, sel, { timeout: 15000 });
    const ev = await api(`/api/profiles/${longP.id}/event?ref=${encodeURIComponent(sel)}`);
    eq(ev.name, k.name, 'the selected event is the kernel');
    eq(page.errors.length, 0, `console errors: ${page.errors.join(' | ')}`);
    await page.context().close();
  });

const eightP = ready.find((p) => p.path.endsWith('jax-rocm-mi300x-gemm.xplane.pb'));
if (!eightP) console.log('skip device busy card test: no ROCm MI300X GEMM fixture (../shared/fixtures)');

if (eightP)
  await test('overview: Device busy says 1 of the 8 listed GPUs ran work', async () => {
    const k = await api(`/api/profiles/${eightP.id}/kernels?limit=1`);
    eq(k.device_busy.devices_listed, 8, 'the profile lists 8 GPUs');
    eq(k.device_busy.devices_with_work, 1, 'one ran work');
    const page = await newPage();
    await page.goto(`${BASE}/#/p/${eightP.id}/overview`);
    const card = page.locator('.cards .card').nth(3);
    await page.waitForFunction(() => !document.querySelectorAll('.cards .card')[3].dataset.empty, null, { timeout: 15000 });
    eq(await card.locator('.label').textContent(), 'Device busy', 'the fourth card');
    const hint = await card.locator('.hint').textContent();
    assert(hint.includes('1 of 8 devices ran work'), `the card says how many ran: ${hint}`);
    eq(page.errors.length, 0, `console errors: ${page.errors.join(' | ')}`);
    await page.context().close();
  });
