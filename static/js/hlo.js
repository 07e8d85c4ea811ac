// hlo.js — the profile's HLO tab: its compiled modules, one at a time
// (#/p/<id>/hlo?module=<name or program id>&op=<instruction>), printed as
// HLO text from /api/profiles/{id}/hlo/{module}. Each instruction line shows
// its device time and occurrences (from the HLO op sums) and, for dots and
// convolutions, the FLOPs derived from its shapes. A filter keeps the lines
// that hold the text typed; `op` marks and scrolls to one instruction (the
// HLO tools' rows link here).

import { api, ApiError } from './api.js';
import { h, fmtUs, fmtCount, isKnown } from './format.js';
import { stateView } from './states.js';

export function mount(view, { id, params }) {
  const ctrl = new AbortController();
  const main = h('div.hlo-main', null, stateView('Loading modules…', '', 'loading'));
  view.replaceChildren(main);
  show(main, id, params, ctrl.signal).catch((e) => {
    if (e.name === 'AbortError') return;
    const none = e instanceof ApiError && e.status === 404;
    main.replaceChildren(
      none
        ? stateView('No compiled modules', e.message === 'No Data' ? 'This profile carries no HLO protos.' : e.message, 'empty')
        : stateView('Cannot load the modules', e.message, 'error'),
    );
  });
  return () => ctrl.abort();
}

// With no module asked for, the tab opens on the compiled module that ran
// the most device time (/modules), else on the first by name.
async function busiestModule(id, mods, signal) {
  let ran = [];
  try {
    ran = (await api.modules(id, { signal })).modules;
  } catch (e) {
    if (e.name === 'AbortError') throw e;
  }
  const known = (r) =>
    mods.find((m) => (r.program_id != null ? m.program_id === r.program_id : m.hlo_name === r.name || m.name === r.name));
  const best = ran
    .filter((r) => isKnown(r.total_time_us) && r.total_time_us > 0 && known(r))
    .sort((a, b) => b.total_time_us - a.total_time_us)[0];
  return best ? known(best).name : mods[0].name;
}

async function show(main, id, params, signal) {
  const list = await api.hlo(id, null, { signal });
  const mods = list.modules;
  const name = params.get('module') || (await busiestModule(id, mods, signal));
  const pick = h(
    'select',
    {
      'aria-label': 'Module',
      onchange: () => (location.hash = `#/p/${encodeURIComponent(id)}/hlo?module=${encodeURIComponent(pick.value)}`),
    },
    mods.map((m) =>
      h(
        'option',
        { value: m.name, selected: m.name === name || m.program_id === name },
        `${m.name} · ${isKnown(m.instructions) ? fmtCount(m.instructions) + ' instructions' : m.error}`,
      ),
    ),
  );
  const filter = h('input', { type: 'search', placeholder: 'Search instructions…', 'aria-label': 'Search instructions' });
  const count = h('span.sub', { 'aria-live': 'polite' });
  const body = h('div', null, stateView('Loading the module…', '', 'loading'));
  main.replaceChildren(
    h(
      'div.toolbar',
      null,
      h('label', null, 'Module ', pick),
      filter,
      count,
      h(
        'a.btn',
        { href: `#/p/${encodeURIComponent(id)}/memory?view=viewer&module=${encodeURIComponent(name)}` },
        'Memory Viewer',
      ),
    ),
    body,
  );
  const ans = await api.hlo(id, name, { signal });
  const lines = [];
  const blocks = ans.computations.map((c) => {
    const rows = c.instructions.map((i) => {
      const meta = [];
      if (isKnown(i.device_time_us)) meta.push(`${fmtUs(i.device_time_us)} µs · ${fmtCount(i.occurrences)}×`);
      if (isKnown(i.flops)) meta.push(`${fmtCount(i.flops)} FLOPs (derived)`);
      const row = h(
        'div.hlo-line',
        {
          'data-name': i.name,
          'data-time-us': isKnown(i.device_time_us) ? String(i.device_time_us) : 'null',
          id: `hlo-${i.name}`,
        },
        h('span.hlo-meta', { title: meta.join(' · ') }, meta.join(' · ')),
        h('code', null, i.text),
      );
      lines.push({ row, text: i.text.toLowerCase() });
      return row;
    });
    return h(
      'section.hlo-comp',
      null,
      h('div.hlo-head', null, `${c.entry ? 'ENTRY ' : ''}%${c.name} {`),
      ...rows,
      h('div.hlo-head', null, '}'),
    );
  });
  body.replaceChildren(
    h(
      'section.panel.hlo-text',
      { 'data-module': ans.module.name, 'aria-label': 'HLO text' },
      h('div.hlo-head', null, `HloModule ${ans.module.hlo_name}`),
      ...blocks,
    ),
    ...(ans.module.device_times
      ? []
      : [h('p.sub', null, 'No device event of this profile names these instructions: device times are unknown.')]),
  );
  const apply = () => {
    const q = filter.value.trim().toLowerCase();
    let n = 0;
    for (const l of lines) {
      const on = !q || l.text.includes(q);
      l.row.hidden = !on;
      n += on;
    }
    count.textContent = `${fmtCount(n)} of ${fmtCount(lines.length)} instructions`;
  };
  filter.addEventListener('input', apply);
  apply();
  const op = params.get('op');
  if (op) {
    const el = lines.find((l) => l.row.dataset.name === op);
    if (el) {
      el.row.classList.add('selected');
      el.row.scrollIntoView({ block: 'center' });
    }
  }
}
