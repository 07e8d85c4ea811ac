// findings.js — the findings of a profile (/api/profiles/{id}/findings):
// the overview's "Findings" panel, most severe first, each with its number,
// threshold, why it matters and its evidence as links that open the
// timeline on the window (and the event) it names; and the most severe
// finding of a profile, for the profile list.

import { getJSON } from './api.js';
import { h, fmtN } from './format.js';
import { stateView } from './states.js';
import { timelineHash } from './timeline_link.js';

const RANK = { critical: 0, warning: 1, info: 2 };

export function fetchFindings(id, opts) {
  return getJSON(`/api/profiles/${encodeURIComponent(id)}/findings`, opts);
}

// The most severe finding (the answer is sorted that way), or null.
export function topFinding(answer) {
  const list = (answer && answer.findings) || [];
  return list.length ? list.reduce((a, b) => (RANK[b.severity] < RANK[a.severity] ? b : a)) : null;
}

export function severityBadge(severity) {
  return h(`span.badge.sev.sev-${severity}`, null, severity);
}

function fmtNumber(v) {
  if (typeof v !== 'number') return String(v);
  if (Number.isInteger(v)) return String(v);
  return Math.abs(v) >= 100 ? v.toFixed(0) : Math.abs(v) >= 10 ? v.toFixed(1) : v.toFixed(2);
}

// A finding's figure with its unit: "33.9% of step time", "3.10x median",
// "12 copies" ("1 copy"), "250 µs".
function withUnit(v, unit) {
  if (!unit) return fmtNumber(v);
  if (unit === 'copies' && typeof v === 'number' && Number.isInteger(v)) return fmtN(v, 'copy', 'copies');
  return unit.startsWith('%') || unit.startsWith('x ') ? `${fmtNumber(v)}${unit}` : `${fmtNumber(v)} ${unit}`;
}

// The threshold is in the value's unit, said without its "of ..." tail.
function thresholdText(f) {
  return withUnit(f.threshold, (f.unit || '').replace(/ of .*$/, ''));
}

function evidenceLink(id, ev) {
  const href = timelineHash(id, { start_us: ev.start_us, end_us: ev.end_us, sel: ev.ref || undefined });
  return h('li', null, h('a.evidence', { href, title: 'Open the timeline here' }, ev.label));
}

function findingItem(id, f) {
  return h(
    `li.finding.sev-${f.severity}`,
    { dataset: { kind: f.kind } },
    h('div.finding-head', null, severityBadge(f.severity), ' ', h('strong', null, f.title)),
    h('p.finding-why', null, f.explanation),
    h('p.finding-num', null, `${withUnit(f.value, f.unit)} · threshold ${thresholdText(f)} · `, h('code', null, f.kind)),
    f.evidence && f.evidence.length
      ? h(
          'ul.finding-evidence',
          null,
          f.evidence.map((e) => evidenceLink(id, e)),
        )
      : null,
  );
}

// The overview's panel; fills itself when the answer comes.
export function findingsPanel(id, signal) {
  const body = h('div', { style: { minHeight: '48px' } }, h('div.skeleton', { style: { height: '40px' } }));
  const panel = h(
    'section.panel.findings',
    { 'aria-labelledby': 'findings-h', style: { marginBottom: '16px' } },
    h('h2', { id: 'findings-h' }, 'Findings'),
    body,
  );
  fetchFindings(id, { signal }).then(
    (res) => {
      if (res.findings === null) {
        body.replaceChildren(stateView('Not judged', `The profile is ${res.status}: there is nothing to judge yet.`, 'empty'));
        return;
      }
      const list = res.findings || [];
      if (!list.length) {
        body.replaceChildren(
          stateView(
            'No findings',
            'Nothing in this profile crossed a threshold (compilation, input stalls, collectives, copies, ' +
              'launch overhead, slow steps, hot spots, idle devices).',
            'empty',
          ),
        );
        return;
      }
      body.replaceChildren(
        h(
          'ul.findings-list',
          null,
          list.map((f) => findingItem(id, f)),
        ),
      );
      if (res.complete === false)
        body.append(h('p.sub', null, 'Some steps held more device events than are read: numbers are partial.'));
    },
    (e) => {
      if (e.name !== 'AbortError') body.replaceChildren(stateView('Findings are not available', e.message, 'error'));
    },
  );
  return panel;
}
