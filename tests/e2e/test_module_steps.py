#!/usr/bin/env python3
"""test_module_steps.py: without step markers, steps are the runs of the
main XLA module as the host annotates them ("<module>:XLA GPU module"),
read against the raw files (indexer/analysis/module_runs.c).

For every xplane fixture whose steps come from module executions, this
decodes the file here in Python, apart from the indexer: each device event
carrying the module's hlo_module joins the run, on its launch's own host
thread, whose window holds its launch (correlation id); the n-th run of a
thread is step n. Each device's /steps?device=N row must span exactly its
events of that run (to the ns), and the steps must be those runs, no more:
gaps inside a run (a while loop that waits on the host) must not split it.
Fixtures whose launches fall in no run are listed and left to the gap rule.
Skips with a message when ../shared/fixtures is absent."""
import collections
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from xpv_e2e import BIN, FIXTURES, free_port, http_get, main, need_fixtures, tmpdir, wait_indexed  # noqa: E402
from test_tool_hlo import device_lines  # noqa: E402

RUN_SUFFIX = ":XLA GPU module"


def host_runs(path, module):
    """{(thread, n): run window}, {correlation id: (thread, n)}."""
    runs, launches = collections.defaultdict(list), []
    for line, events in device_lines(path, "/host:CPU"):
        for start, dur, name, stats in events:
            if name == module + RUN_SUFFIX and dur > 0:
                runs[line].append((start, start + dur))
            elif "correlation_id" in stats:
                launches.append((line, start, stats["correlation_id"]))
    run_of = {}
    for line, t, corr in launches:
        for n, (a, b) in enumerate(sorted(runs.get(line, []))):
            if a <= t <= b:
                run_of[corr] = (line, n)
    return run_of


def expected_windows(path, module):
    """{(step, device): (start ps, end ps)} of the module's device work."""
    run_of = host_runs(path, module)
    out = {}
    for plane_dev in range(64):
        prefix = "/device:GPU:%d" % plane_dev
        for line, events in device_lines(path, prefix):
            if not line.startswith("Stream"):
                continue
            for start, dur, _, stats in events:
                run = run_of.get(stats.get("correlation_id"))
                if stats.get("hlo_module") != module or run is None:
                    continue
                key = (run[1], plane_dev)
                a, b = out.get(key, (start, start + dur))
                out[key] = (min(a, start), max(b, start + dur))
    return out


def api(port, path):
    status, _, body = http_get(port, path)
    assert status == 200, (path, status, body[:200])
    return json.loads(body)


def ps(us):
    return round(float(us) * 1e6)


def check(port, pid, path):
    """True when the profile's steps came from host runs, checked."""
    steps = api(port, "/api/profiles/%s/steps" % pid)
    if steps.get("source") != "module" or not steps.get("steps"):
        return False
    module = steps["steps"][0]["name"]
    want = expected_windows(path, module)
    if not want:
        print("  %s: no launch of %s falls in a host run: another rule's steps"
              % (os.path.basename(path), module))
        return False
    numbers = sorted({n for n, _ in want})
    assert [s["step"] for s in steps["steps"]] == numbers, (path, steps["steps"], numbers)
    for dev in sorted({d for _, d in want}):
        rows = {r["step"]: r for r in api(port, "/api/profiles/%s/steps?device=%d"
                                           % (pid, dev))["steps"]}
        first = min(a for (n, d), (a, _) in want.items() if d == dev)
        first_row = min(ps(rows[n]["start_us"]) for (n, d) in want if d == dev)
        for (n, d), (a, b) in want.items():
            if d != dev:
                continue
            row = rows[n]
            # the API gives us to 3 decimals: within 1 ns
            assert abs(ps(row["duration_us"]) - (b - a)) <= 1000, (path, n, dev, row, a, b)
            assert abs((ps(row["start_us"]) - first_row) - (a - first)) <= 2000, (path, n, dev)
    print("  %s: %d steps of %s, %d devices, each window exact"
          % (os.path.basename(path), len(numbers), module, len({d for _, d in want})))
    return True


def test_fixture_runs():
    port = free_port()
    proc = subprocess.Popen([BIN, "--profile-dir=" + FIXTURES, "--port=%d" % port,
                             "--perfetto-port=0", "--db=" + os.path.join(tmpdir(), "i.sqlite"),
                             "--quiet"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_indexed(port)
        checked = 0
        for p in api(port, "/api/profiles")["profiles"]:
            if p["path"].endswith(".xplane.pb"):
                checked += check(port, p["id"], os.path.join(FIXTURES, p["path"]))
        assert checked >= 1, "no fixture's steps came from host runs"
    finally:
        proc.terminate()
        proc.wait(timeout=30)


if __name__ == "__main__":
    need_fixtures()
    main([test_fixture_runs])
