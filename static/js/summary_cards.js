// summary_cards.js — XProf's overview summary cards: average step time ±
// its standard deviation (with the step count), the share of step time
// spent compiling, how busy the devices that ran work were (and how many of
// the listed ones that is) and the top recommendation. Drawn from the
// overview_page tool's answer (the TensorBoard view and the Tools tab), and
// the step figures computed from the steps API the way that tool computes
// them (the profile's own Overview), so both views show the same numbers.
//
// Each card carries data-card (its name) and data-value (the raw number
// the card shows, "null" when unknown), so tests compare it with the API.

import { h, fmtDur, fmtPct, fmtCount, isKnown, UNKNOWN } from './format.js';

// The overview_page table ({columns, rows, properties}) as a lookup:
// row(section, metric) -> {value, unit, detail} or null.
function rowsOf(table) {
  const col = (id) => table.columns.findIndex((c) => c.id === id);
  const [sec, met, val, det] = ['section', 'metric', 'value', 'detail'].map(col);
  if (sec < 0 || met < 0 || val < 0) return () => null;
  const map = new Map(table.rows.map((r) => [`${r[sec]}|${r[met]}`, { value: r[val], detail: det < 0 ? null : r[det] }]));
  return (section, metric) => map.get(`${section}|${metric}`) || null;
}

// The figures of the cards from the overview_page answer.
export function figuresFromTool(table) {
  const row = rowsOf(table);
  const v = (s, m) => row(s, m)?.value ?? null;
  const busy = row('environment', 'device busy');
  const ran = row('environment', 'devices with work');
  const compile = row('steps', 'compilation');
  return {
    steps: v('steps', 'steps'),
    avg_us: v('steps', 'average step time'),
    sd_us: v('steps', 'step time standard deviation'),
    compile_pct: compile ? compile.value : null,
    compile_detail: compile ? compile.detail : null,
    busy_pct: busy ? busy.value : null,
    devices: (busy || ran)?.detail || null,
    recommendation: (table.properties || {}).recommendation || null,
  };
}

// The step figures from the steps API's all-devices rows, as the tool
// reads them: the standard deviation over the steps (not a sample
// estimate); compilation = host compile spans within host wait, plus
// autotuning, over the step time.
export function stepFigures(steps) {
  const durs = steps.map((s) => s.duration_us).filter((d) => typeof d === 'number');
  if (!durs.length) return { steps: 0, avg_us: null, sd_us: null, compile_pct: null };
  const avg = durs.reduce((a, b) => a + b, 0) / durs.length;
  const sq = durs.reduce((a, b) => a + b * b, 0) / durs.length;
  let compile = 0,
    autotune = 0,
    total = 0;
  for (const st of steps) {
    if (typeof st.duration_us !== 'number') continue;
    total += st.duration_us;
    const c = st.compile_us || 0;
    compile += Math.min(c, isKnown(st.host_wait_us) ? st.host_wait_us : c);
    autotune += st.autotune_us || 0;
  }
  return {
    steps: durs.length,
    avg_us: avg,
    sd_us: Math.sqrt(Math.max(0, sq - avg * avg)),
    compile_pct: total > 0 ? (100 * (compile + autotune)) / total : null,
    compile_us: compile,
    autotune_us: autotune,
  };
}

export function stepTimeText(f) {
  if (!isKnown(f.avg_us)) return UNKNOWN;
  return isKnown(f.sd_us) ? `${fmtDur(f.avg_us)} ± ${f.sd_us ? fmtDur(f.sd_us) : '0'}` : fmtDur(f.avg_us);
}

export function compileHint(f) {
  if (f.compile_detail) return f.compile_detail.replace(/, of [^,]*$/, '');
  if (!isKnown(f.compile_us)) return 'of step time';
  const d = (us) => (us ? fmtDur(us) : '0 ms');
  return `${d(f.compile_us)} host compile, ${d(f.autotune_us)} autotuning`;
}

function card(name, label, value, raw, hint, cls = '') {
  return h(
    `div.card${cls}`,
    { dataset: { card: name, value: isKnown(raw) ? String(raw) : 'null' } },
    h('div.label', null, label),
    h('div.value', { title: typeof value === 'string' ? value : undefined }, value),
    h('div.hint', { title: typeof hint === 'string' ? hint : undefined }, hint || '\u00a0'),
  );
}

// The four cards as XProf draws them, from figuresFromTool's figures.
// topFinding: the first finding's title (the top recommendation), or null
// to show the tool's own recommendation.
export function summaryCards(f, topFinding) {
  const rec = topFinding || f.recommendation;
  return h(
    'div.cards.xprof-cards',
    { 'aria-label': 'Summary' },
    card(
      'step-time',
      'Average step time',
      stepTimeText(f),
      f.avg_us,
      isKnown(f.steps) && f.steps > 0
        ? `± standard deviation · ${fmtCount(f.steps)} step${f.steps === 1 ? '' : 's'}`
        : 'no step markers',
    ),
    card(
      'compile',
      'Compilation',
      isKnown(f.compile_pct) ? fmtPct(f.compile_pct) : UNKNOWN,
      f.compile_pct,
      isKnown(f.compile_pct) ? `of step time · ${compileHint(f)}` : 'no step breakdown',
    ),
    card('device-busy', 'Device busy', isKnown(f.busy_pct) ? fmtPct(f.busy_pct) : UNKNOWN, f.busy_pct, f.devices),
    card(
      'recommendation',
      'Top recommendation',
      rec || 'No recommendation',
      rec,
      topFinding ? 'the first finding' : rec ? 'from the step-time breakdown' : null,
      '.rec',
    ),
  );
}

// Puts a profile's first finding on the recommendation card inside box
// (the most severe; the answer lists them that way), leaving the tool's own
// recommendation where there is none.
export function setTopFinding(box, finding) {
  const c = box.querySelector('.xprof-cards .card[data-card="recommendation"]');
  if (!c || !finding || !finding.title) return;
  c.dataset.value = finding.title;
  c.dataset.kind = finding.kind || '';
  const v = c.querySelector('.value');
  v.textContent = finding.title;
  v.title = finding.explanation || finding.title;
  const hintBox = c.querySelector('.hint');
  hintBox.textContent = `the first finding · ${finding.severity || 'info'}`;
  hintBox.title = hintBox.textContent;
}
