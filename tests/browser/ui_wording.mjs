// ui_wording.mjs — what the pages say is what they draw and reads as words:
// every segment of the stacked step chart is as tall as the figure its
// tooltip states (a PyTorch GPU profile and a JAX one); "Show" on the
// longest kernel name of every profile with kernels lands on that kernel,
// selected, in the timeline; and no page of any profile shows "NaN",
// "undefined", "null" or a duration in "us".

import { BASE, FIXTURES, test, assert, eq, api, newPage, ready } from './harness.mjs';

// A duration as format.js writes it ("86.7 ms", "500 ns", "12.5 µs", "0"), in µs.
function parseDur(text) {
  const m = /^(-?[\d.,]+)\s*(ns|µs|ms|s)?$/.exec(text.trim());
  if (!m) return null;
  const v = Number(m[1].replace(/,/g, ''));
  return v * { ns: 1e-3, µs: 1, ms: 1e3, s: 1e6 }[m[2] || 'µs'];
}

const withSteps = (p) => (p.step_count || 0) > 0;
const pytorchP = ready.find((p) => withSteps(p) && /pytorch/i.test(p.path) && (p.kernel_count || 0) > 0);
const jaxP = ready.find((p) => withSteps(p) && /(^|\/)(jax|gen\/)|xplane/i.test(p.path));
// The fixtures have both (PyTorch V100/H100 with ProfilerStep#N, JAX xplane
// with module steps): without them, only what the generated profiles have.
if (!pytorchP && !FIXTURES) console.log('skip the PyTorch step chart check: no ../shared/fixtures');
if (!jaxP && !FIXTURES) console.log('skip the JAX step chart check: no ../shared/fixtures');

// Per bar (at most `most`): the tooltip's figure and the drawn height of each category.
async function barsAndTips(page, most) {
  const scale = await page.$eval('svg[aria-label^="Step time chart"]', (svg) => {
    const ys = [...svg.querySelectorAll('g.grid line')].map((l) => Number(l.getAttribute('y1')));
    const ticks = [...svg.querySelectorAll('g.axis[data-axis="y"] text[text-anchor="end"]')];
    const unit = svg.querySelector('g.axis[data-axis="y"]')?.dataset.unit || '';
    return { ys, labels: ticks.map((t) => t.textContent), raw: ticks.map((t) => Number(t.dataset.value)), unit };
  });
  // Tick labels are bare numbers in the unit the axis title names (axes.js);
  // each reads back as its tick's raw value in µs.
  const vs = scale.labels.map((l) => parseDur(`${l} ${scale.unit}`));
  const last = vs.length - 1;
  assert(last > 0 && vs.every((v) => v !== null), `axis labels read as ${scale.unit}: ${scale.labels.join(', ')}`);
  vs.forEach((v, i) =>
    assert(
      Math.abs(v - scale.raw[i]) <= 1e-6 * Math.max(1, scale.raw[i]),
      `tick ${scale.labels[i]} ${scale.unit} is ${scale.raw[i]} µs`,
    ),
  );
  const pxPerUs = (scale.ys[0] - scale.ys[last]) / (vs[last] - vs[0]);
  const n = Math.min(most, await page.locator('[data-step-bar]').count());
  const out = [];
  for (let i = 0; i < n; i++) {
    const bar = page.locator('[data-step-bar]').nth(i);
    await bar.focus(); // a focused bar shows its tooltip, as a hovered one does
    const step = await bar.getAttribute('data-step');
    await page.waitForFunction(
      (s) => {
        const t = document.querySelector('.tooltip:not([hidden])');
        return t && t.textContent.startsWith(`Step ${s}`);
      },
      step,
      { timeout: 5000 },
    );
    const tip = await page.$$eval('.tooltip:not([hidden]) tr[data-category]', (trs) =>
      Object.fromEntries(trs.map((tr) => [tr.dataset.category, tr.querySelector('td.num').textContent])),
    );
    const rects = await bar
      .locator('rect[data-category]')
      .evaluateAll((rs) => rs.map((r) => [r.getAttribute('data-category'), Number(r.getAttribute('height'))]));
    out.push({ step, tip, rects, pxPerUs });
  }
  return out;
}

for (const [kind, p] of [
  ['PyTorch GPU', pytorchP],
  ['JAX', jaxP],
])
  if (!p && FIXTURES)
    await test(`step chart (${kind}): the fixtures have such a profile`, async () =>
      assert(false, `no ${kind} profile with steps`));
  else if (p)
    await test(`step chart (${kind}): each segment is as tall as its tooltip says`, async () => {
      const page = await newPage();
      await page.goto(`${BASE}/#/p/${p.id}/overview`);
      await page.waitForSelector('[data-step-bar]', { timeout: 15000 });
      const bars = await barsAndTips(page, 8);
      assert(bars.length > 0, 'bars drawn');
      let drawn = 0;
      for (const b of bars) {
        for (const [cat, height] of b.rects) {
          assert(cat in b.tip, `step ${b.step}: the tooltip has a row for the drawn ${cat}`);
          const us = parseDur(b.tip[cat]);
          assert(us !== null, `step ${b.step}: ${cat} reads as a duration: "${b.tip[cat]}"`);
          const want = us * b.pxPerUs;
          assert(
            Math.abs(height - want) <= 1,
            `step ${b.step}: ${cat} drawn ${height} px, its tooltip ${b.tip[cat]} = ${want} px`,
          );
          drawn++;
        }
        // and nothing the tooltip states as time goes undrawn
        for (const [cat, text] of Object.entries(b.tip)) {
          const us = parseDur(text);
          if (us && us * b.pxPerUs >= 1)
            assert(
              b.rects.some(([c]) => c === cat),
              `step ${b.step}: the tooltip states ${cat} ${text}, the bar draws none`,
            );
        }
      }
      assert(drawn > 0, 'segments drawn');
      eq(page.errors.length, 0, `console errors: ${page.errors.join(' | ')}`);
      await page.context().close();
    });

// "Show" on the longest kernel name of each profile lands on that kernel.
const withKernels = ready.filter((p) => (p.kernel_count || 0) > 0);
if (withKernels.length)
  await test(`kernels: "Show" selects the longest kernel name of each of ${withKernels.length} profiles`, async () => {
    const errors = [];
    for (const p of withKernels) {
      const { kernels } = await api(`/api/profiles/${p.id}/kernels?kind=kernel`);
      if (!kernels.length) continue;
      // a fresh page each: nothing selected in an earlier timeline can answer
      const page = await newPage();
      const k = kernels.reduce((a, b) => (b.name.length > a.name.length ? b : a));
      const where = `${p.path}: ${k.name.slice(0, 80)} (${k.name.length} characters)`;
      await page.goto(`${BASE}/#/p/${p.id}/kernels`);
      await page.waitForSelector('table.data tbody tr td.name', { timeout: 15000 });
      await page.fill('input[type="search"]', k.name);
      await page.waitForFunction(
        (name) => [...document.querySelectorAll('table.data tbody tr td.name')].some((td) => td.title === name),
        k.name,
        { timeout: 5000 },
      );
      const rowIndex = await page.$$eval(
        'table.data tbody tr',
        (trs, name) => trs.findIndex((tr) => tr.querySelector('td.name')?.title === name),
        k.name,
      );
      await page.locator('table.data tbody tr').nth(rowIndex).locator('a.tl-link').click();
      await page
        .waitForFunction(() => /\/timeline\?.*sel=\d+(%3A|:)\d+/.test(location.hash), null, { timeout: 15000 })
        .catch(() => {
          throw new Error(`${where}: the timeline opened with nothing selected (${page.url()})`);
        });
      // The timeline may rewrite its address once it has drawn; what counts is the selection.
      const sel = await page
        .waitForFunction(() => window.__xpvTimeline?.state.selected?.ev.ref, null, { timeout: 15000 })
        .then((h) => h.jsonValue())
        .catch(() => {
          throw new Error(`${where}: the timeline selected nothing`);
        });
      const ev = await api(`/api/profiles/${p.id}/event?ref=${encodeURIComponent(sel)}`);
      eq(ev.name, k.name, `${where}: the selected event is the kernel`);
      errors.push(...page.errors);
      await page.context().close();
    }
    eq(errors.length, 0, `console errors: ${errors.join(' | ')}`);
  });

// Words a page must never show: leaked JS values and the "us" unit.
const BAD = [
  [/\bNaN\b/, 'NaN'],
  [/\bundefined\b/, 'undefined'],
  [/\bnull\b/, 'null'],
  [/[\d)] us\b|\(us\)/, 'a duration in "us"'],
];

async function visibleProblems(page) {
  const text = await page.evaluate(() => document.body.innerText);
  const found = [];
  for (const [re, what] of BAD) {
    const m = re.exec(text);
    if (m) found.push(`${what}: "…${text.slice(Math.max(0, m.index - 60), m.index + 30).replace(/\s+/g, ' ')}…"`);
  }
  return found;
}

// Waits until the page has drawn what it loads: no loading panel or busy
// table, and the text unchanged for a moment (live updates keep a stream
// open, so the network never goes idle).
async function settle(page) {
  await page
    .waitForFunction(
      () => {
        if (document.querySelector('.state.loading, [aria-busy="true"]')) return false;
        const t = document.body.innerText;
        const same = window.__xpvLastText === t;
        window.__xpvLastText = t;
        return same;
      },
      null,
      { timeout: 10000, polling: 250 },
    )
    .catch(() => {});
}

await test('no page of any profile shows NaN, undefined, null or "us"', async () => {
  const page = await newPage();
  const problems = [];
  const t0 = Date.now();
  let visits = 0;
  const visit = async (hash) => {
    visits++;
    await page.goto(`${BASE}/${hash}`);
    await settle(page);
    for (const f of await visibleProblems(page)) problems.push(`${hash}: ${f}`);
  };
  await visit('#/profiles');
  for (const p of ready) {
    for (const sub of ['overview', 'kernels', 'timeline', 'memory', 'hlo']) await visit(`#/p/${p.id}/${sub}`);
    const tools = await api(`/api/profiles/${p.id}/tools`).catch(() => []);
    for (const t of Array.isArray(tools) ? tools : [])
      if (t !== 'trace_viewer') await visit(`#/p/${p.id}/tools/${encodeURIComponent(t)}`);
  }
  console.log(`     scanned ${visits} pages in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
  assert(problems.length === 0, `${problems.length} pages show bad words:\n${problems.slice(0, 20).join('\n')}`);
  await page.context().close();
});
