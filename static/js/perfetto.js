// perfetto.js — "Open in Perfetto UI": the postMessage hand-off that
// ui.perfetto.dev documents. Open the UI, post 'PING' until it answers
// 'PONG', then post the trace bytes. Needs internet for ui.perfetto.dev
// itself; when that does not load we say so instead of waiting forever.

const PERFETTO_ORIGIN = 'https://ui.perfetto.dev';
const PING_MS = 100;
const GIVE_UP_MS = 20000;

export async function openInPerfetto(traceUrl, title, fileName, notify) {
  // Open the window first, inside the click, so pop-up blockers allow it.
  const win = window.open(PERFETTO_ORIGIN);
  if (!win) {
    notify(
      'The browser blocked the Perfetto window. Allow pop-ups for this page, or use "Download trace" and open the file in ui.perfetto.dev.',
    );
    return;
  }
  notify('Loading the trace for Perfetto UI…');
  let buffer;
  try {
    const res = await fetch(traceUrl);
    if (!res.ok) throw new Error(`${res.status} ${res.statusText}`);
    buffer = await res.arrayBuffer();
  } catch (e) {
    notify(`Could not read the trace: ${e.message}`);
    return;
  }
  await new Promise((resolve) => {
    let done = false;
    const finish = (msg) => {
      if (done) return;
      done = true;
      clearInterval(timer);
      window.removeEventListener('message', onMessage);
      notify(msg);
      resolve();
    };
    const onMessage = (ev) => {
      if (ev.origin !== PERFETTO_ORIGIN || ev.data !== 'PONG') return;
      win.postMessage({ perfetto: { buffer, title, fileName } }, PERFETTO_ORIGIN, [buffer]);
      finish('Trace sent to Perfetto UI.');
    };
    window.addEventListener('message', onMessage);
    const started = Date.now();
    const timer = setInterval(() => {
      if (win.closed) return finish('The Perfetto window was closed.');
      if (Date.now() - started > GIVE_UP_MS) {
        return finish(
          'Perfetto UI did not answer. It needs an internet connection (ui.perfetto.dev); offline, use the built-in Timeline or "Download trace".',
        );
      }
      try {
        win.postMessage('PING', PERFETTO_ORIGIN);
      } catch {
        /* window still loading */
      }
    }, PING_MS);
  });
}
