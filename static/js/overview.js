// overview.js — one profile at a glance: its findings (findings.js), summary cards (step time average
// ± standard deviation and median, slowest step, device busy % of the devices that ran work, top
// kernel, kernel count, the share of step time compiling and the top recommendation, as XProf's
// overview draws them; summary_cards.js computes them as the overview_page tool does), the step
// chart stacked by category with the step-marker source, the top kernels and
// the profile's facts. Cards and chart have reserved sizes so nothing jumps.

import { api } from './api.js';
import { h, fmtDur, fmtPct, fmtCount, fmtN, fmtBytes, fmtDate, deviceLabel, isKnown, UNKNOWN } from './format.js';
import { stepChart, barChart, legend, stepParts, resizeObserve } from './chart.js';
import { stateView } from './states.js';
import { timelineHash } from './timeline_link.js';
import { findingsPanel, fetchFindings, topFinding } from './findings.js';
import { stepFigures, stepTimeText, compileHint } from './summary_cards.js';
import { shortNames } from './kernel_name.js';

const SOURCE_TEXT = {
  annotation: 'JAX step annotations (StepTraceAnnotation)',
  profiler_step: 'PyTorch ProfilerStep#N markers',
  steps_line: 'the xplane “Steps” line',
  nvtx: 'NVTX ranges with step numbers',
  tf: 'TensorFlow step markers',
  training_step: 'training_step annotations (PyTorch Lightning style; no ProfilerStep#N)',
  optimizer_step: 'Optimizer.step annotations: each step ends where an optimizer step ends (no ProfilerStep#N)',
  module: 'repeated XLA module executions (no explicit step markers)',
  none: 'none: this profile has no step markers',
};

const CARD_LABELS = ['Step time · average', 'Step time · median', 'Slowest step', 'Device busy', 'Top kernel', 'Kernels'];
const COMPILE_CARD = 6,
  REC_CARD = 7;

export function mount(view, { id, profile }) {
  const ctrl = new AbortController();
  const cards = h(
    'div.cards.cards-8',
    null,
    [...CARD_LABELS, 'Compilation', 'Top recommendation'].map((label) => card(label, null)),
  );
  const chartBox = h('div.chart', { style: { minHeight: '260px' } }, h('div.skeleton', { style: { height: '240px' } }));
  const sourceLine = h('span.sub', null, '\u00a0');
  const topBox = h('div.chart', { style: { minHeight: '240px' } });
  const factsBox = h('dl.facts');
  view.replaceChildren(
    findingsPanel(id, ctrl.signal),
    cards,
    h(
      'section.panel',
      { 'aria-labelledby': 'steps-h' },
      h(
        'div.page-head',
        { style: { marginBottom: '8px' } },
        h('div.grow', null, h('h2', { id: 'steps-h', style: { margin: 0 } }, 'Step time by category'), sourceLine),
        legend(),
      ),
      chartBox,
    ),
    h(
      'div.two-col',
      { style: { marginTop: '16px' } },
      h(
        'section.panel',
        { 'aria-labelledby': 'top-h' },
        h(
          'div.page-head',
          { style: { marginBottom: '8px' } },
          h('h2.grow', { id: 'top-h', style: { margin: 0 } }, 'Top kernels by total time'),
          h('a', { href: `#/p/${encodeURIComponent(id)}/kernels` }, 'All kernels →'),
        ),
        topBox,
      ),
      h('section.panel', { 'aria-labelledby': 'facts-h' }, h('h2', { id: 'facts-h' }, 'Profile'), factsBox),
    ),
  );
  fillFacts(factsBox, profile);

  const stepsP = api.steps(id, { signal: ctrl.signal }).catch((e) => e);
  const kernelsP = api.kernels(id, { sort: 'total', order: 'desc', limit: 10 }, { signal: ctrl.signal }).catch((e) => e);

  stepsP.then((res) => {
    if (ctrl.signal.aborted) return;
    if (res instanceof Error) {
      chartBox.replaceChildren(stateView('Steps are not available', res.message, 'error'));
      setCard(cards, 0, UNKNOWN);
      setCard(cards, 1, UNKNOWN);
      setCard(cards, 2, UNKNOWN);
      setCard(cards, COMPILE_CARD, UNKNOWN, 'no step breakdown');
      return;
    }
    const steps = res.steps || [];
    sourceLine.textContent =
      res.source === 'none'
        ? 'This profile has no step markers'
        : `Step markers from ${SOURCE_TEXT[res.source] || res.source || 'unknown source'} · ${steps.length} step${steps.length === 1 ? '' : 's'}`;
    sourceLine.dataset.source = res.source || '';
    if (!steps.length) {
      chartBox.replaceChildren(
        stateView(
          'No steps found',
          'The profile has no step markers, so there is no per-step breakdown. The kernel table and the timeline still work.',
          'empty',
        ),
      );
      setCard(cards, 0, UNKNOWN);
      setCard(cards, 1, UNKNOWN);
      setCard(cards, 2, UNKNOWN);
      setCard(cards, COMPILE_CARD, UNKNOWN, 'no step breakdown');
    } else {
      const durs = steps.map((s) => s.duration_us).filter(isKnown);
      const avg = durs.reduce((a, b) => a + b, 0) / durs.length;
      const slowest = steps.reduce((a, b) => ((b.duration_us || 0) > (a.duration_us || 0) ? b : a));
      const compiled = steps.filter((st) => (st.compile_us || 0) > 0);
      const compileUs = compiled.reduce((a, st) => a + st.compile_us, 0);
      const f = stepFigures(steps);
      setCard(cards, COMPILE_CARD, fmtPct(f.compile_pct), `of step time · ${compileHint(f)}`, false, f.compile_pct);
      setCard(
        cards,
        0,
        stepTimeText(f),
        compiled.length
          ? `${fmtN(steps.length, 'step')} · ${fmtDur(compileUs)} compiling in step${compiled.length === 1 ? '' : 's'} ${compiled
              .map((st) => st.step)
              .join(', ')}`
          : `${fmtN(steps.length, 'step')} · ± standard deviation`,
        false,
        avg,
      );
      setCard(cards, 1, fmtDur(median(durs)), `min ${fmtDur(Math.min(...durs))} · max ${fmtDur(Math.max(...durs))}`);
      setCard(
        cards,
        2,
        fmtDur(slowest.duration_us),
        h('a', { href: timelineHash(id, { step: slowest.step }) }, `step ${slowest.step} → timeline`),
      );
      const draw = () =>
        stepChart(chartBox, steps, {
          onSelect: (n) => {
            location.hash = timelineHash(id, { step: n });
          },
        });
      draw();
      resizeObserve(chartBox, draw, ctrl.signal);
    }
    return kernelsP;
  });

  kernelsP.then((res) => {
    if (ctrl.signal.aborted) return;
    if (res instanceof Error) {
      topBox.replaceChildren(stateView('Kernels are not available', res.message, 'error'));
      setCard(cards, 4, UNKNOWN);
      setCard(cards, 5, UNKNOWN);
      return;
    }
    const ks = (res.kernels || []).slice().sort((a, b) => (b.total_us || 0) - (a.total_us || 0));
    if (!ks.length) {
      topBox.replaceChildren(stateView('No kernels', 'This profile has no device kernels.', 'empty'));
      setCard(cards, 4, UNKNOWN, 'no device kernels');
      setCard(cards, 5, '0');
    } else {
      const top = ks[0];
      const shorts = shortNames(ks.map((k) => k.name).filter((n) => typeof n === 'string'));
      setCard(
        cards,
        4,
        h('span', { title: top.name }, shorts.get(top.name) ?? top.name),
        `${fmtDur(top.total_us)} · ${fmtPct(top.percent)} of kernel time`,
        true,
      );
      // The answer holds the top 10 rows; its totals count every row.
      const launches = res.total_count ?? ks.reduce((a, k) => a + (k.count || 0), 0);
      const left = res.compile && res.compile.us > 0 ? ` · ${fmtDur(res.compile.us)} of compile-time kernels left out` : '';
      setCard(
        cards,
        5,
        fmtCount(res.total_rows ?? ks.length),
        `${fmtN(launches, 'launch', 'launches')} · ${fmtDur(res.kernel_time_us)} total${left}`,
      );
      const items = ks.slice(0, 10).map((k) => ({
        label: shorts.get(k.name) ?? k.name,
        value: k.total_us,
        title: `${k.name}\n${fmtDur(k.total_us)} total, ${fmtN(k.count, 'call')}`,
      }));
      const draw = () =>
        barChart(topBox, items, {
          onSelect: () => {
            location.hash = `#/p/${encodeURIComponent(id)}/kernels`;
          },
        });
      draw();
      resizeObserve(topBox, draw, ctrl.signal);
    }
  });

  // Device busy: of step time where there are steps, else the mean of the
  // devices that ran work; either way how many of the listed devices ran.
  Promise.all([stepsP, kernelsP]).then(([st, ks]) => {
    if (ctrl.signal.aborted) return;
    const busy = st instanceof Error || !(st.steps || []).length ? null : busyFromSteps(st.steps);
    const db = ks instanceof Error ? null : ks.device_busy || null;
    const ran = deviceCount(db);
    // As XProf and the overview_page tool: the mean over the devices that
    // ran work (device_busy.c); the step-time share where there is no such figure.
    const steps = busy !== null ? `${fmtPct(busy)} of step time any device busy` : '';
    if (db && isKnown(db.busy_fraction))
      setCard(cards, 3, fmtPct(100 * db.busy_fraction), [ran, steps].filter(Boolean).join(' · '), false, 100 * db.busy_fraction);
    else if (busy !== null) setCard(cards, 3, fmtPct(busy), ['of step time, any device busy', ran].filter(Boolean).join(' · '));
    else setCard(cards, 3, UNKNOWN, ran || undefined);
  });

  // The top recommendation: the first finding (most severe first).
  fetchFindings(id, { signal: ctrl.signal })
    .catch(() => null)
    .then((ans) => {
      if (ctrl.signal.aborted) return;
      const f = topFinding(ans);
      if (f)
        setCard(
          cards,
          REC_CARD,
          h('span', { title: f.explanation || f.title }, f.title),
          `the first finding · ${f.severity}`,
          true,
          f.title,
        );
      else
        setCard(cards, REC_CARD, 'None', ans && ans.findings ? 'no finding crossed its threshold' : 'findings unavailable', true);
    });

  return () => ctrl.abort();
}

// "1 of 4 GPUs ran work" from the kernels answer's device_busy, or '' when
// it says nothing.
function deviceCount(db) {
  if (!db || !isKnown(db.devices_listed) || db.devices_listed < 1) return '';
  const n = db.devices_listed;
  return `${db.devices_with_work} of ${n} device${n === 1 ? '' : 's'} ran work`;
}

// Share of step time in which at least one device was busy: the API's idle
// is the step minus the union of busy time.
function busyFromSteps(steps) {
  let idle = 0,
    span = 0;
  for (const st of steps) {
    const p = stepParts(st);
    if (p.idle === null || !isKnown(st.duration_us)) return null;
    idle += Math.min(p.idle, st.duration_us);
    span += st.duration_us;
  }
  return span > 0 ? (100 * (span - idle)) / span : null;
}

function median(xs) {
  if (!xs.length) return null;
  const s = xs.slice().sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

function card(label) {
  return h(
    'div.card',
    { dataset: { empty: '1' } },
    h('div.label', null, label),
    h('div.value', null, h('div.skeleton', { style: { height: '26px', width: '60%' } })),
    h('div.hint', null, '\u00a0'),
  );
}

function setCard(cards, i, value, hint, small, raw) {
  const c = cards.children[i];
  delete c.dataset.empty;
  c.dataset.value = isKnown(raw) ? String(raw) : 'null';
  const v = c.querySelector('.value');
  v.classList.toggle('small', !!small);
  v.replaceChildren(value);
  const hintBox = c.querySelector('.hint');
  hintBox.replaceChildren(hint || '\u00a0');
  // A card's hint is cut to one line at narrow widths: its whole text on hover.
  hintBox.title = hintBox.textContent.trim();
}

function fillFacts(dl, p) {
  const devices = Array.isArray(p.devices) ? p.devices : [];
  const rows = [
    ['Path', h('span.mono', null, p.path || UNKNOWN)],
    ['Format', [p.format, p.producer].filter(Boolean).join(' · ') || UNKNOWN],
    ['Size', fmtBytes(p.size_bytes)],
    ['Modified', fmtDate(p.mtime)],
    ['Events', fmtCount(p.events)],
    ['Duration', fmtDur(p.duration_us)],
    ['Devices', devices.length ? devices.map(deviceLabel).join(', ') : UNKNOWN],
    ['Indexed in', isKnown(p.index_seconds) ? `${p.index_seconds.toFixed(2)} s` : UNKNOWN],
  ];
  const text = (w) => (typeof w === 'string' ? w : JSON.stringify(w));
  if (Array.isArray(p.warnings) && p.warnings.length) rows.push(['Warnings', p.warnings.map(text).join('; ')]);
  // Reader bookkeeping a user cannot act on: there, but folded away.
  if (Array.isArray(p.diagnostics) && p.diagnostics.length)
    rows.push([
      'Reader notes',
      h('details.diagnostics', null, h('summary', null, 'details'), ...p.diagnostics.map((w) => h('div', null, text(w)))),
    ]);
  if (p.partial) rows.push(['Note', 'The file was partly unreadable; what could be read is shown.']);
  dl.replaceChildren(...rows.flatMap(([k, v]) => [h('dt', null, k), h('dd', null, v)]));
}
