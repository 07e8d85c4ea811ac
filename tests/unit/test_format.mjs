// test_format.mjs — unit test of static/js/format.js (run by node through
// ctest): durations carry µs (never "us") and a unit fit for their size,
// percentages read as % whether given as a percent or a fraction, counts
// take the singular for exactly 1, and anything unknown reads "—", never 0.

import assert from 'node:assert/strict';
import { fmtDur, fmtPct, fmtFrac, fmtN, fmtCount, fmtUs, UNKNOWN, UNKNOWN_TITLE } from '../../static/js/format.js';
import { runTests } from './js_test_runner.mjs';

const eq = assert.equal;

const tests = {
  durations_pick_a_unit_and_write_micro_as_mu() {
    eq(fmtDur(0.5), '500 ns');
    eq(fmtDur(12.5), '12.5 µs');
    eq(fmtDur(999), '999 µs');
    eq(fmtDur(1500), '1.5 ms');
    eq(fmtDur(2.5e6), '2.5 s');
    eq(fmtDur(-12.5), '-12.5 µs');
    for (const us of [0.001, 0.3, 7, 42.42, 999.9, 1234, 5e5, 3e7])
      assert(!/\bus\b/.test(fmtDur(us)), `"${fmtDur(us)}" writes µs, not us`);
    eq(fmtUs(1234.5), '1,234.500');
  },
  percentages_from_percents_and_fractions() {
    eq(fmtPct(73.4), '73.4%');
    eq(fmtPct(5, 2), '5.00%');
    eq(fmtPct('12.5'), '12.5%');
    eq(fmtFrac(0.734), '73.4%');
    eq(fmtFrac(1), '100.0%');
    eq(fmtFrac(0.12345, 2), '12.35%');
    eq(fmtFrac(0), '0.0%');
  },
  counts_take_their_noun_in_the_right_number() {
    eq(fmtN(1, 'step'), '1 step');
    eq(fmtN(2, 'step'), '2 steps');
    eq(fmtN(0, 'kernel'), '0 kernels');
    eq(fmtN(1, 'copy', 'copies'), '1 copy');
    eq(fmtN(1200, 'copy', 'copies'), '1,200 copies');
    eq(fmtCount(1234567), '1,234,567');
  },
  unknown_is_never_zero() {
    for (const v of [null, undefined, NaN]) {
      eq(fmtDur(v), UNKNOWN);
      eq(fmtPct(v), UNKNOWN);
      eq(fmtFrac(v), UNKNOWN);
      eq(fmtCount(v), UNKNOWN);
      eq(fmtUs(v), UNKNOWN);
    }
    eq(fmtPct(Infinity), UNKNOWN);
    eq(fmtN(null, 'step'), `${UNKNOWN} steps`);
    assert(/unknown/.test(UNKNOWN_TITLE), 'the title of an unknown cell says so');
  },
};

runTests(tests);
