#!/usr/bin/env python3
"""test_step_devices.py: devices that mark their own steps (a `Steps` line
per device) keep their own step windows (indexer/analysis/steps.c,
step_breakdown.c). The windows are read from the raw trace here with
Python's json module, apart from the indexer: each device's /steps?device=N
row of a step has that device's window (within 1 us), the combined row lasts
the mean of them (never their hull), names the longest as slowest_device,
and its categories add up to its duration (within 0.1%).

Two cases: a trace built here (two GPUs whose step windows lie far apart),
which always runs, and every Chrome trace fixture with a Steps line on at
least two devices, run (and counted) only when ../shared/fixtures has such
a fixture; a line says when it has none."""
import glob
import gzip
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from xpv_e2e import BIN, FIXTURES, free_port, http_get, main, tmpdir, wait_indexed  # noqa: E402

PARTS = ("compute_us", "collective_us", "memcpy_h2d_us", "memcpy_d2h_us", "memcpy_d2d_us",
         "memcpy_other_us", "memset_us", "autotune_us", "idle_us")


def built_trace():
    """A JAX-style trace: GPU:4 runs step 0 in [1000, 1200) us, GPU:6 in
    [5000, 5500) us (two steps each), kernels inside."""
    ev = [{"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "/host:CPU"}}]
    for pid, dev in ((4, 4), (6, 6)):
        ev.append({"ph": "M", "name": "process_name", "pid": pid,
                   "args": {"name": "/device:GPU:%d" % dev}})
        ev.append({"ph": "M", "name": "thread_name", "pid": pid, "tid": 1,
                   "args": {"name": "Steps"}})
        ev.append({"ph": "M", "name": "thread_name", "pid": pid, "tid": 2,
                   "args": {"name": "Stream #7(Kernel)"}})
    windows = {4: [(1000, 200), (1300, 250)], 6: [(5000, 500), (6000, 400)]}
    for pid, wins in windows.items():
        for step, (ts, dur) in enumerate(wins):
            ev.append({"ph": "X", "pid": pid, "tid": 1, "name": str(step), "ts": ts, "dur": dur})
            ev.append({"ph": "X", "pid": pid, "tid": 2, "name": "gemm_%d" % step,
                       "ts": ts + 10, "dur": dur // 2})
    ev.append({"ph": "X", "pid": 1, "tid": 1, "name": "python", "ts": 900, "dur": 6000})
    return {"displayTimeUnit": "ns", "traceEvents": ev}


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8", errors="replace") as f:
        d = json.load(f)
    return d.get("traceEvents", []) if isinstance(d, dict) else d


def device_windows(events):
    """{device: {step: (start_us, dur_us)}} from the Steps threads of
    "/device:GPU:N" processes: a step's window on a device is the hull of
    that device's Steps events of the number their name spells."""
    dev_of, steps_tid = {}, set()
    for e in events:
        if e.get("ph") != "M":
            continue
        name = (e.get("args") or {}).get("name", "")
        if e.get("name") == "process_name":
            m = re.match(r"/device:(?:GPU|TPU):(\d+)", str(name))
            if m:
                dev_of[e.get("pid")] = int(m.group(1))
        elif e.get("name") == "thread_name" and name == "Steps":
            steps_tid.add((e.get("pid"), e.get("tid")))
    out = {}
    for e in events:
        key = (e.get("pid"), e.get("tid"))
        if e.get("ph") != "X" or key not in steps_tid or e.get("pid") not in dev_of:
            continue
        if not str(e.get("name", "")).strip().isdigit() or not e.get("dur"):
            continue
        step, ts, end = int(e["name"]), float(e["ts"]), float(e["ts"]) + float(e["dur"])
        w = out.setdefault(dev_of[e["pid"]], {})
        if step in w:
            ts, end = min(ts, w[step][0]), max(end, w[step][0] + w[step][1])
        w[step] = (ts, end - ts)
    return out


def get(port, path):
    status, _, body = http_get(port, path, timeout=120)
    assert status == 200, (path, status, body[:200])
    return json.loads(body)


def check_profile(port, pid, windows, where):
    """The steps answers of profile pid against windows (device -> step ->
    (start, dur)) read from its raw trace; start_us is the trace's clock."""
    base = "/api/profiles/%s/steps" % pid
    rows = {}
    for dev in windows:
        rows[dev] = {s["step"]: s for s in get(port, base + "?device=%d" % dev)["steps"]}
    combined = {s["step"]: s for s in get(port, base)["steps"]}
    common = set.intersection(*(set(w) for w in windows.values()))
    assert 0 in common, (where, "no step 0 on every device", windows)
    for step in sorted(common):
        durs = {}
        for dev, w in windows.items():
            start, dur = w[step]
            r = rows[dev][step]
            assert abs(r["start_us"] - start) <= 1 and abs(r["duration_us"] - dur) <= 1, \
                (where, dev, step, r["start_us"], r["duration_us"], start, dur)
            durs[dev] = dur
        c = combined[step]
        mean = sum(durs.values()) / len(durs)
        assert abs(c["duration_us"] - mean) <= 1, (where, step, c["duration_us"], mean, durs)
        assert abs(c["start_us"] - min(w[step][0] for w in windows.values())) <= 1, (where, c)
        parts = sum(c[k] or 0 for k in PARTS)
        assert abs(parts - c["duration_us"]) <= max(1e-3 * c["duration_us"], 0.002), (where, c)
        if max(durs.values()) - min(durs.values()) > 1:
            slowest = max(durs, key=lambda d: durs[d])
            assert c.get("slowest_device") == slowest, (where, step, c, durs)
    print("%s: %d steps on devices %s, step 0 mean %.3f us" %
          (where, len(common), sorted(windows), combined[0]["duration_us"]))


def serve(paths):
    """Starts the binary on copies of paths, one run each; (proc, port)."""
    root = tmpdir()
    for i, (name, data) in enumerate(paths):
        d = os.path.join(root, "r%d" % i)
        os.makedirs(d)
        dst = os.path.join(d, name)
        if isinstance(data, bytes):
            with open(dst, "wb") as f:
                f.write(data)
        else:
            with open(data, "rb") as src, open(dst, "wb") as f:
                f.write(src.read())
    port = free_port()
    proc = subprocess.Popen(
        [BIN, "--profile-dir=" + root, "--port=%d" % port, "--perfetto-port=0",
         "--db=" + os.path.join(tmpdir(), "i.sqlite"), "--quiet"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_indexed(port, min_profiles=len(paths))
    return proc, port


def test_built_trace():
    trace = built_trace()
    windows = device_windows(trace["traceEvents"])
    assert sorted(windows) == [4, 6], windows
    proc, port = serve([("vm.trace.json", json.dumps(trace).encode())])
    try:
        (p,) = get(port, "/api/profiles")["profiles"]
        assert get(port, "/api/profiles/%s/steps" % p["id"])["source"] == "steps_line"
        check_profile(port, p["id"], windows, "built trace")
        c = get(port, "/api/profiles/%s/steps" % p["id"])["steps"][0]
        assert abs(c["duration_us"] - 350) <= 1 and c["slowest_device"] == 6, c
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def fixtures_with_device_steps():
    """(path, windows) of every Chrome trace fixture with a Steps line on at
    least two devices; None when ../shared/fixtures is absent."""
    if not FIXTURES or not os.path.isdir(FIXTURES):
        return None
    found = []
    for path in sorted(glob.glob(os.path.join(FIXTURES, "**", "*.json*"), recursive=True)):
        try:
            windows = device_windows(load(path))
        except (OSError, ValueError, EOFError):
            continue
        if len([w for w in windows.values() if 0 in w]) >= 2:
            found.append((path, {d: w for d, w in windows.items() if 0 in w}))
    return found


FOUND = fixtures_with_device_steps()


def test_fixtures():
    assert FOUND, "run only with fixtures that have per-device Steps lines"
    proc, port = serve([(os.path.basename(p), p) for p, _ in FOUND])
    try:
        by_name = {os.path.basename(p["path"]): p["id"]
                   for p in get(port, "/api/profiles")["profiles"]}
        for path, windows in FOUND:
            check_profile(port, by_name[os.path.basename(path)], windows, path)
    finally:
        proc.terminate()
        proc.wait(timeout=10)


if __name__ == "__main__":
    # The built trace carries the assertions; the fixtures case runs (and
    # counts) only where some fixture has per-device Steps lines.
    if FOUND is None:
        print("skip the fixtures case: ../shared/fixtures not found (set XPV_FIXTURES)")
    elif not FOUND:
        print("no fixture under %s has a Steps line on two devices: not checked" % FIXTURES)
    main([test_built_trace] + ([test_fixtures] if FOUND else []))
