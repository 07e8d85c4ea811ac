// tensorboard.js — the TensorBoard profile plugin's layout, for people who
// know XProf: a run selector (newest first), a tool selector (only the tools
// with data for the run, in XProf's order) and a host selector ("All hosts"
// where the tool merges hosts) beside the chosen tool. Its tables come from
// the plugin routes (/data/plugin/profile/...), as XProf's frontend's do; it
// also asks each host's /api/profiles/{id}/tools to grey out hosts without data.
//
// The address is the view: #/tb/<run>/<tool>/<host>, each part URL-encoded
// (runs hold slashes). A choice pushes a history entry without a hashchange,
// so the page is not rebuilt; back, forward and reload go through the router
// and mount the page again from the address.
//
// Trace Viewer is our timeline, mounted in place through ctx.toolPages (the
// router hands page modules in, since pages never import one another);
// every other tool is drawn from its DataTable by tool_view.js. A host whose
// profile lacks the tool's data is listed but disabled, and its data is
// never asked for: the answer would be a 404 "No Data".

import { api, tb, ApiError } from './api.js';
import { h, fmtCount } from './format.js';
import { stateView } from './states.js';
import { fetchFindings, topFinding } from './findings.js';
import { setTopFinding } from './summary_cards.js';
import { memoryProfileFigure } from './memory_profile_chart.js';
import { renderToolTable, fromDataTable, toolLabel, hostLabel, dedicatedPage, ALL_HOSTS } from './tool_view.js';

// Asking each host's profile for its tools costs a request per host; past
// this many hosts every host is offered and a host without data says so.
const MAX_HOST_PROBES = 128;

export function mount(view, { parts, notify, toolPages, ui }) {
  const life = new AbortController();
  const s = { runs: [], run: null, tools: [], tool: null, hosts: [], host: null, byHost: new Map(), hostTools: new Map() };
  let seq = 0; // bumped by every choice: answers to an older one are dropped
  let stepCtrl = null;
  let child = null; // the mounted tool page's cleanup

  const select = (id, label, onchange) => h('select', { id, 'aria-label': label, disabled: true, onchange });
  // A choice keeps the tool and host where the new run or tool has them.
  const runSel = select('tb-run', 'Run', () => openRun(runSel.value, s.tool, s.host, { push: true }));
  const toolSel = select('tb-tool', 'Tool', () => openTool(toolSel.value, s.host, { push: true }));
  const hostSel = select('tb-host', 'Host', () => {
    s.host = hostSel.value;
    titled(hostSel);
    setUrl(true);
    show();
  });
  const runCount = h('span.muted');
  // Runs appear while a job trains; TensorBoard has a reload button for it too.
  const reload = h(
    'button.btn',
    { type: 'button', title: 'Ask the server again for runs, tools and hosts', onclick: () => start([s.run, s.tool, s.host]) },
    'Reload',
  );
  const links = h('div.tb-links');
  const main = h('section.tb-main', { 'aria-live': 'polite' }, stateView('Loading runs…', '', 'loading'));
  const field = (label, extra, sel) => h('label.tb-field', null, h('span', null, label, ' ', extra), sel);
  view.replaceChildren(
    h(
      'div.tb',
      null,
      h(
        'aside.tb-side',
        { 'aria-label': 'Runs, tools and hosts' },
        h('div.tb-head', null, h('h1', null, 'Profile'), reload),
        field('Runs', runCount, runSel),
        field('Tools', null, toolSel),
        field('Hosts', null, hostSel),
        links,
      ),
      main,
    ),
  );

  function begin() {
    seq++;
    if (stepCtrl) stepCtrl.abort();
    stepCtrl = new AbortController();
    return { my: seq, signal: stepCtrl.signal };
  }
  const stale = (my) => my !== seq || life.signal.aborted;

  function stopChild() {
    if (child) child();
    child = null;
    main.classList.remove('fill');
    delete main.dataset.ready;
  }

  function fail(title, e) {
    if (e && e.name === 'AbortError') return;
    stopChild();
    main.replaceChildren(stateView(title, e ? e.message : '', 'error'));
  }

  function setUrl(push) {
    const path = [s.run, s.tool, s.host].filter((x) => x !== null && x !== '').map(encodeURIComponent);
    const url = `#/tb/${path.join('/')}`;
    if (location.hash !== url) history[push ? 'pushState' : 'replaceState'](null, '', url);
    document.title = [s.tool && toolLabel(s.tool), s.run, 'TensorBoard · xprof-view'].filter(Boolean).join(' · ');
  }

  function options(sel, values, label, value, disabled = () => false) {
    sel.replaceChildren(...values.map((v) => h('option', { value: v, disabled: disabled(v) }, label(v))));
    sel.disabled = values.length === 0;
    sel.value = values.includes(value) ? value : '';
    titled(sel);
  }

  // A long run or host name is cut by its box: whole on hover.
  function titled(sel) {
    sel.title = sel.selectedOptions[0]?.text || '';
  }

  // parts: [run, tool, host] from the address, each optional.
  async function start(parts) {
    if (ui === 'perfetto') {
      // The plugin routes answer 404 in this mode: say why instead of asking.
      main.replaceChildren(
        stateView(
          'The TensorBoard view is off',
          'This server runs with --ui=perfetto; start it with --ui=tensorboard or --ui=both to open XProf’s tools by run and host.',
          'empty',
          h('a', { href: '#/profiles' }, 'Go to all profiles'),
        ),
      );
      return;
    }
    const { my, signal } = begin();
    try {
      s.runs = await tb.runs({ signal });
    } catch (e) {
      if (!stale(my)) fail('Cannot list the runs', e);
      return;
    }
    if (stale(my)) return;
    runCount.textContent = `(${fmtCount(s.runs.length)})`;
    if (!s.runs.length) {
      main.replaceChildren(
        stateView(
          'No runs',
          'No profile under the profile directory belongs to a run yet. Press Reload when one has been written.',
        ),
      );
      return;
    }
    let run = parts[0];
    if (run && !s.runs.includes(run)) {
      notify(`There is no run “${run}”; showing the newest run.`);
      run = null;
    }
    if (!run) {
      run = await newestReadableRun(s.runs, signal);
      if (stale(my)) return;
    }
    options(runSel, s.runs, (r) => r, run);
    await openRun(run, parts[1], parts[2], { link: true });
  }

  // Where to land without a run in the address: the newest run holding a
  // readable profile (whole or partial, as `latest` picks), so a newer run of
  // broken or unsupported captures is passed over.
  async function newestReadableRun(runs, signal) {
    const list = (await api.profiles({ signal }).catch(() => ({}))).profiles || [];
    const readable = new Set(list.filter((p) => p.events > 0 && (p.status === 'ok' || p.partial === true)).map((p) => p.run));
    return runs.find((r) => readable.has(r)) ?? runs[0];
  }

  // The profile a host name stands for, as the data route picks it: the one
  // that indexed ok, the newest first.
  function profilesOfRun(list, run) {
    const byHost = new Map();
    for (const p of list) {
      if (p.run !== run || p.companion_of || !p.host) continue;
      const had = byHost.get(p.host);
      if (!had || (had.status !== 'ok' && p.status === 'ok')) byHost.set(p.host, p);
    }
    return byHost;
  }

  // how.push: a new history entry (a choice), else the address is replaced;
  // how.link: the address asked for this tool and host, so a tool or host
  // without data is shown as such rather than swapped for one with data.
  async function openRun(run, wantTool, wantHost, how) {
    const { my, signal } = begin();
    s.run = run;
    runSel.value = run;
    titled(runSel);
    stopChild();
    main.replaceChildren(stateView('Loading the tools of this run…', '', 'loading'));
    try {
      const [tools, list] = await Promise.all([tb.tools(run, { signal }), api.profiles({ signal })]);
      s.tools = tools;
      s.byHost = profilesOfRun(list.profiles || [], run);
      const probe = s.byHost.size <= MAX_HOST_PROBES ? [...s.byHost] : [];
      const answers = await Promise.all(probe.map(([, p]) => api.tools(p.id, { signal }).catch(() => null)));
      s.hostTools = new Map(probe.map(([host], i) => [host, answers[i]]));
    } catch (e) {
      if (!stale(my)) fail('Cannot load the tools of this run', e);
      return;
    }
    if (stale(my)) return;
    const tool = wantTool && (how.link || s.tools.includes(wantTool)) ? wantTool : s.tools[0] || null;
    options(toolSel, s.tools, toolLabel, tool);
    if (!s.tools.length) {
      s.tool = s.host = null;
      options(hostSel, [], hostLabel, null);
      setUrl(how.push);
      main.replaceChildren(stateView('No tool has data for this run', 'Its profiles may still be indexing, or unreadable.'));
      main.dataset.ready = `${run}||`;
      return;
    }
    if (!s.tools.includes(tool)) {
      // A deep link to a tool this run has no data for: say so, ask for nothing.
      s.tool = tool;
      s.host = wantHost || null;
      toolSel.prepend(h('option', { value: '', disabled: true }, `${toolLabel(tool)} (no data)`));
      toolSel.value = '';
      titled(toolSel);
      options(hostSel, [], hostLabel, null);
      setUrl(how.push);
      links.replaceChildren();
      main.replaceChildren(
        stateView(
          `${toolLabel(tool)} has no data for this run`,
          `Tools with data for ${run}: ${s.tools.map(toolLabel).join(', ')}.`,
          'empty',
        ),
      );
      main.dataset.ready = `${run}|${tool}|`;
      return;
    }
    await openTool(tool, wantHost, how);
  }

  // Whether host has data for tool: true, false, or null when not known.
  function hostHas(host, tool) {
    if (host === ALL_HOSTS) return true;
    const tools = s.hostTools.get(host);
    return tools ? tools.includes(tool) : null;
  }

  async function openTool(tool, wantHost, how) {
    const { my, signal } = begin();
    s.tool = tool;
    toolSel.value = tool;
    titled(toolSel);
    stopChild();
    let hosts;
    try {
      hosts = (await tb.hosts(s.run, tool, { signal })).map((x) => x.hostname);
    } catch (e) {
      if (!stale(my)) fail('Cannot list the hosts of this run', e);
      return;
    }
    if (stale(my)) return;
    s.hosts = hosts;
    const usable = hosts.filter((x) => hostHas(x, tool) !== false);
    const keep = hosts.includes(wantHost) && (how.link || hostHas(wantHost, tool) !== false);
    s.host = keep ? wantHost : usable[0] || hosts[0] || null;
    options(
      hostSel,
      hosts,
      (x) => (hostHas(x, tool) === false ? `${hostLabel(x)} (no data)` : hostLabel(x)),
      s.host,
      (x) => hostHas(x, tool) === false,
    );
    setUrl(how.push);
    await show();
  }

  function sideLinks() {
    const p = s.host !== ALL_HOSTS ? s.byHost.get(s.host) : null;
    if (!p) return links.replaceChildren();
    const base = `#/p/${encodeURIComponent(p.id)}`;
    const page = dedicatedPage(s.tool);
    const items = [
      h('h2', null, 'This host'),
      h('a', { href: `${base}/overview` }, 'Profile overview'),
      page ? h('a', { href: `${base}/${page}` }, `${page[0].toUpperCase()}${page.split('?')[0].slice(1)} page`) : null,
      h('a', { href: `${base}/tools/${encodeURIComponent(s.tool)}` }, 'Tools tab'),
      h('a', { href: api.traceUrl(p.id), download: `${p.host.replace(/[^\w.-]+/g, '_')}.trace.json.gz` }, 'Download trace'),
    ];
    links.replaceChildren(...items.filter(Boolean)); // a null child would show as the text "null"
  }

  async function show() {
    const { my, signal } = begin();
    const { run, tool, host } = s;
    const key = `${run}|${tool}|${host}`;
    stopChild();
    sideLinks();
    if (host === null) {
      main.replaceChildren(stateView('No hosts', `The hosts route lists no host for ${toolLabel(tool)}.`));
      return;
    }
    if (hostHas(host, tool) === false) {
      main.replaceChildren(
        stateView(
          `${toolLabel(tool)} has no data for ${hostLabel(host)}`,
          'Pick another host: the ones marked “no data” have none for this tool.',
        ),
      );
      main.dataset.ready = key;
      return;
    }
    if (tool === 'trace_viewer' && toolPages.trace_viewer) {
      const p = s.byHost.get(host);
      if (!p) return fail('No profile for this host', null);
      main.classList.add('fill');
      child = toolPages.trace_viewer.mount(main, { id: p.id, profile: p, params: new URLSearchParams(), notify });
      main.dataset.ready = key;
      return;
    }
    main.replaceChildren(stateView(`Loading ${toolLabel(tool)}…`, '', 'loading'));
    let data;
    try {
      data = await tb.data(run, tool, host, { signal });
    } catch (e) {
      if (stale(my)) return;
      if (e instanceof ApiError && e.status === 404) {
        main.replaceChildren(stateView(`${toolLabel(tool)} has no data for ${hostLabel(host)}`, e.message));
        main.dataset.ready = key;
      } else fail(`Cannot load ${toolLabel(tool)}`, e);
      return;
    }
    if (stale(my)) return;
    renderToolTable(main, fromDataTable(data), {
      title: toolLabel(tool),
      tag: tool,
      sub: `${run} · ${hostLabel(host)}`,
      csvUrl: tb.csvUrl(run, tool, host),
      csvName: `${tool}-${String(host).replace(/[^\w.-]+/g, '_')}.csv`,
    });
    if (tool === 'overview_page') await firstFinding(host, signal);
    if (tool === 'memory_profile') await memoryChart(host, signal);
    if (stale(my)) return;
    main.dataset.ready = key;
  }

  // The overview's top recommendation is the host's first finding, as on
  // the profile's own Overview; All hosts keep the tool's own advice.
  async function firstFinding(host, signal) {
    const p = host !== ALL_HOSTS ? s.byHost.get(host) : null;
    if (!p) return;
    const ans = await fetchFindings(p.id, { signal }).catch(() => null);
    if (ans && !signal.aborted) setTopFinding(main, topFinding(ans));
  }

  // memory_profile's table has one row per allocator; the chart of memory
  // over time comes from the host's profile's memory_profile answer.
  async function memoryChart(host, signal) {
    const p = host !== ALL_HOSTS ? s.byHost.get(host) : null;
    const table = main.querySelector('.tool-view .tool-table');
    if (!p || !table) return;
    const fig = await memoryProfileFigure(p, signal);
    if (fig && !signal.aborted) table.before(fig);
  }

  start(parts);
  return () => {
    life.abort();
    if (stepCtrl) stepCtrl.abort();
    stopChild();
  };
}
