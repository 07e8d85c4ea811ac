// js_test_runner.mjs — runs a node unit test file's table of tests
// ({name: fn}): prints "ok"/"FAIL" per test and a count, and exits non-zero
// when any failed, which ctest reads.

export function runTests(tests) {
  let failed = 0;
  for (const [name, fn] of Object.entries(tests)) {
    try {
      fn();
      console.log(`ok   ${name}`);
    } catch (e) {
      failed++;
      console.log(`FAIL ${name}\n${e.stack}`);
    }
  }
  console.log(`${Object.keys(tests).length - failed} passed, ${failed} failed`);
  process.exit(failed ? 1 : 0);
}
