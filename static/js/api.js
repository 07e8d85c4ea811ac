// api.js — the REST API client. Every call goes to the server this page came
// from (relative URLs), so the UI never talks to another host. Errors carry
// the server's {"error": "..."} message.

export class ApiError extends Error {
  constructor(message, status) {
    super(message);
    this.status = status;
  }
}

export async function getJSON(path, { signal } = {}) {
  let res;
  try {
    res = await fetch(path, { signal, headers: { Accept: 'application/json' } });
  } catch (e) {
    if (e.name === 'AbortError') throw e;
    throw new ApiError('The xprof-view server is not answering. Is it still running?', 0);
  }
  let body = null;
  const text = await res.text();
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    body = null;
  }
  if (!res.ok) {
    const msg = body && body.error ? body.error : `${res.status} ${res.statusText}`;
    throw new ApiError(msg, res.status);
  }
  if (body === null) throw new ApiError(`Bad JSON from ${path}`, res.status);
  return body;
}

// Every path here is a route of the server's table (xprof-view --routes);
// tests/e2e/test_route_table.py checks them and the parameters they send.
export const api = {
  health: (o) => getJSON('/api/health', o),
  profiles: (o) => getJSON('/api/profiles', o),
  latest: (o) => getJSON('/api/profiles/latest', o),
  profile: (id, o) => getJSON(`/api/profiles/${enc(id)}`, o),
  kernels: (id, params, o) => getJSON(`/api/profiles/${enc(id)}/kernels${query(params)}`, o),
  steps: (id, o) => getJSON(`/api/profiles/${enc(id)}/steps`, o),
  tracks: (id, o) => getJSON(`/api/profiles/${enc(id)}/tracks`, o),
  events: (id, params, o) => getJSON(`/api/profiles/${enc(id)}/events${query(params)}`, o),
  counters: (id, params, o) => getJSON(`/api/profiles/${enc(id)}/counters${query(params)}`, o),
  aggregate: (id, params, o) => getJSON(`/api/profiles/${enc(id)}/aggregate${query(params)}`, o),
  event: (id, ref, o) => getJSON(`/api/profiles/${enc(id)}/event${query({ ref })}`, o),
  traceUrl: (id) => `/api/profiles/${enc(id)}/trace`,
  kernelsCsvUrl: (id, params) => `/api/profiles/${enc(id)}/kernels${query({ ...params, format: 'csv' })}`,
  // XProf's tools of one profile, in our JSON ({columns, rows, properties}).
  tools: (id, o) => getJSON(`/api/profiles/${enc(id)}/tools`, o),
  tool: (id, tag, o) => getJSON(`/api/profiles/${enc(id)}/tools/${enc(tag)}`, o),
  toolCsvUrl: (id, tag) => `/api/profiles/${enc(id)}/tools/${enc(tag)}?format=csv`,
  // Memory and compiled modules (docs/MEMORY.md).
  memoryProfile: (id, o) => getJSON(`/api/profiles/${enc(id)}/memory_profile`, o),
  memoryViewer: (id, module, o) => getJSON(`/api/profiles/${enc(id)}/memory_viewer${query({ module })}`, o),
  modules: (id, o) => getJSON(`/api/profiles/${enc(id)}/modules`, o),
  hlo: (id, module, o) => getJSON(module ? `/api/profiles/${enc(id)}/hlo/${enc(module)}` : `/api/profiles/${enc(id)}/hlo`, o),
};

// The TensorBoard profile-plugin routes (served unless --ui=perfetto), which
// answer by run and host name, tools as Google Charts DataTables.
const TB = '/data/plugin/profile';
export const tb = {
  runs: (o) => getJSON(`${TB}/runs`, o),
  tools: (run, o) => getJSON(`${TB}/run_tools${query({ run })}`, o),
  hosts: (run, tag, o) => getJSON(`${TB}/hosts${query({ run, tag })}`, o),
  data: (run, tag, host, o) => getJSON(`${TB}/data${query({ run, tag, host })}`, o),
  csvUrl: (run, tag, host) => `${TB}/data_csv${query({ run, tag, host })}`,
};

function enc(s) {
  return encodeURIComponent(s);
}

export function query(params) {
  if (!params) return '';
  const parts = [];
  for (const [k, v] of Object.entries(params)) {
    if (v === undefined || v === null || v === '') continue;
    parts.push(`${encodeURIComponent(k)}=${encodeURIComponent(v)}`);
  }
  return parts.length ? '?' + parts.join('&') : '';
}
