// tools.js — the profile's Tools tab: XProf's analysis tools that have data
// for this profile (/api/profiles/{id}/tools, in XProf's order), one chosen
// at a time (#/p/<id>/tools/<tag>) and drawn from our JSON by tool_view.js.
// Trace Viewer is this profile's Timeline tab, so its entry links there.
// The same tools, by run and host, are in the TensorBoard view (#/tb/...),
// linked from here when the server serves it (not with --ui=perfetto).

import { api } from './api.js';
import { h } from './format.js';
import { stateView } from './states.js';
import { renderToolTable, fromToolJson, toolLabel, dedicatedPage } from './tool_view.js';

export function mount(view, { id, profile, sub, ui }) {
  const ctrl = new AbortController();
  const base = `#/p/${encodeURIComponent(id)}`;
  const nav = h('nav.subtabs', { 'aria-label': 'Tools' });
  const main = h('div.tool-main', null, stateView('Loading tools…', '', 'loading'));
  view.replaceChildren(h('div.tools-layout', null, nav, main));

  (async () => {
    let tools;
    try {
      tools = await api.tools(id, { signal: ctrl.signal });
    } catch (e) {
      if (e.name !== 'AbortError') main.replaceChildren(stateView('Cannot list the tools of this profile', e.message, 'error'));
      return;
    }
    if (!tools.length) {
      main.replaceChildren(stateView('No tools', 'This profile carries no data any XProf tool can show.', 'empty'));
      return;
    }
    // trace_viewer is the Timeline tab: open a table tool first.
    const tag = sub || tools.find((t) => t !== 'trace_viewer') || tools[0];
    nav.replaceChildren(
      ...tools.map((t) => {
        const page = t === 'trace_viewer' ? dedicatedPage(t) : null;
        return h(
          'a',
          {
            href: page ? `${base}/${page}` : `${base}/tools/${encodeURIComponent(t)}`,
            'data-tool': t,
            'aria-current': t === tag ? 'page' : undefined,
          },
          toolLabel(t),
        );
      }),
    );
    if (!tools.includes(tag)) {
      main.replaceChildren(
        stateView(
          `${toolLabel(tag)} has no data for this profile`,
          `Tools with data: ${tools.map(toolLabel).join(', ')}.`,
          'empty',
        ),
      );
      return;
    }
    if (tag === 'trace_viewer') {
      main.replaceChildren(
        stateView(
          'Trace Viewer',
          'The trace of this profile is its Timeline tab.',
          'empty',
          h('a.btn', { href: `${base}/timeline` }, 'Open the timeline'),
        ),
      );
      return;
    }
    await showTool(tag);
  })();

  async function showTool(tag) {
    main.replaceChildren(stateView(`Loading ${toolLabel(tag)}…`, '', 'loading'));
    let res;
    try {
      res = await api.tool(id, tag, { signal: ctrl.signal });
    } catch (e) {
      if (e.name !== 'AbortError') main.replaceChildren(stateView(`Cannot load ${toolLabel(tag)}`, e.message, 'error'));
      return;
    }
    const links = [];
    const page = dedicatedPage(tag);
    const pageName = page ? page.split('?')[0] : '';
    if (page) links.push(h('a.btn', { href: `${base}/${page}` }, `${pageName[0].toUpperCase()}${pageName.slice(1)} tab`));
    if (ui !== 'perfetto' && profile.run && profile.host) {
      const tb = `#/tb/${[profile.run, tag, profile.host].map(encodeURIComponent).join('/')}`;
      links.push(h('a.btn', { href: tb, title: 'The same tool by run and host, as TensorBoard shows it' }, 'TensorBoard view'));
    }
    renderToolTable(main, fromToolJson(res), {
      title: toolLabel(tag),
      tag,
      sub: profile.host || profile.run || '',
      csvUrl: api.toolCsvUrl(id, tag),
      csvName: `${tag}-${(profile.host || id).replace(/[^\w.-]+/g, '_')}.csv`,
      links,
      // an HLO op row links to its instruction in the module's HLO text
      cellLink: (col, value) =>
        col === 'hlo_op_name' && value('program_id')
          ? `${base}/hlo?module=${encodeURIComponent(value('program_id'))}&op=${encodeURIComponent(value('hlo_op_name'))}`
          : null,
    });
    main.dataset.tool = tag;
  }

  return () => ctrl.abort();
}
