// ui.test.mjs — browser tests of the xprof-view frontend in real headless
// Chromium (Debian's /usr/bin/chromium driven by playwright-core; no browser
// download). run.sh starts the real binary and passes its address:
//   XPV_URL            base URL of a running xprof-view (required)
//   XPV_ARTIFACTS      folder for screenshots (default ./artifacts)
//   XPV_PERF_PROFILE   optional id of a big profile to measure first paint
//                      and JS heap on (figures printed, never asserted)
// Prints "N passed, N failed" and exits non-zero when anything failed.
//
// The tests are in parts, run in this order (later ones see what earlier
// ones did, e.g. live captures): ui_pages.mjs, ui_first_screen.mjs, ui_wording.mjs,
// ui_tensorboard.mjs, ui_xprof_screens.mjs (XProf's first screens), ui_links_live.mjs,
// ui_memory_compare.mjs, ui_layout.mjs (widths, partial and unreadable profiles),
// ui_timeline_frame.mjs (redraw before the server answers, evidence links);
// harness.mjs holds what they share.

import { finish } from './harness.mjs';

for (const part of [
  './ui_pages.mjs',
  './ui_first_screen.mjs',
  './ui_wording.mjs',
  './ui_tensorboard.mjs',
  './ui_xprof_screens.mjs',
  './ui_links_live.mjs',
  './ui_memory_compare.mjs',
  './ui_layout.mjs',
  './ui_timeline_frame.mjs',
])
  await import(part);
await finish();
