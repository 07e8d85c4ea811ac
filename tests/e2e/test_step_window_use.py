#!/usr/bin/env python3
"""test_step_window_use.py: what reads step windows reads the right one
when the devices ran a step at different times (docs/STEPS.md, "Step
windows per device"): the combined /steps row's span_us reaches the latest
device's end (the timeline zooms to start_us .. start_us + span_us), the
events of that span hold every device's kernels of the step, findings
measure each device in its own window (a later device's kernels count),
and the derived Steps row under each GPU is drawn in that GPU's own window.

Two cases: a JAX-style GPU trace built here (steps from the hlo_module of
the kernels; GPU:0 runs each step around 1 ms, GPU:1 eight ms later), and
the TPU v6e fixture, whose chips run the module at different times (read
from /steps per device, skipped with a message when ../shared is absent)."""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from xpv_e2e import FIXTURES, main  # noqa: E402
from test_step_devices import get, serve  # noqa: E402

# device -> (pid, [(step start us)], kernels per step, kernel period us, kernel us)
DEVICES = {0: (10, [1000, 2000, 3000], 4, 50, 40), 1: (11, [9000, 10000, 11000], 10, 25, 5)}


def built_trace():
    """GPU:0 runs 4 long kernels a step, GPU:1 ten short ones with gaps,
    eight ms later: all 42 kernels count only when GPU:1's windows do."""
    ev = [{"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "/host:CPU"}},
          {"ph": "M", "name": "thread_name", "pid": 1, "tid": 1, "args": {"name": "python"}},
          {"ph": "X", "pid": 1, "tid": 1, "name": "python", "ts": 900, "dur": 11000}]
    for dev, (pid, starts, n, period, dur) in DEVICES.items():
        ev.append({"ph": "M", "name": "process_name", "pid": pid,
                   "args": {"name": "/device:GPU:%d" % dev}})
        ev.append({"ph": "M", "name": "thread_name", "pid": pid, "tid": 7,
                   "args": {"name": "Stream #7(Kernel)"}})
        for t0 in starts:
            for k in range(n):
                ev.append({"ph": "X", "pid": pid, "tid": 7, "name": "fusion_%d" % k,
                           "ts": t0 + k * period, "dur": dur,
                           "args": {"hlo_op": "fusion.%d" % k, "hlo_module": "jit_train_step",
                                    "program_id": "7"}})
    return {"displayTimeUnit": "ns", "traceEvents": ev}


def own_windows(port, pid):
    """{device: {step: (start_us, end_us)}} from /steps?device=N."""
    base = "/api/profiles/%s/steps" % pid
    out = {}
    for dev in get(port, base)["devices"]:
        rows = get(port, base + "?device=%d" % dev)["steps"]
        out[dev] = {r["step"]: (r["start_us"], r["start_us"] + r["duration_us"]) for r in rows}
    return out


def check_spans(port, pid, where):
    """Each combined row spans its devices' windows: start_us the earliest
    start, start_us + span_us the latest end. Returns the combined rows."""
    own = own_windows(port, pid)
    combined = {s["step"]: s for s in get(port, "/api/profiles/%s/steps" % pid)["steps"]}
    apart = 0
    for step, c in combined.items():
        wins = [w[step] for w in own.values() if step in w]
        lo, hi = min(w[0] for w in wins), max(w[1] for w in wins)
        span = c.get("span_us", c["duration_us"])
        assert abs(c["start_us"] - lo) <= 1e-3 and abs(c["start_us"] + span - hi) <= 1e-3, \
            (where, step, c, wins)
        apart += "span_us" in c
    assert apart, (where, "no step whose devices ran it apart", own)
    return combined, own


def device_kernels(port, pid, t0, t1):
    """{device: kernels starting in [t0, t1)} from /events over the window."""
    tracks = get(port, "/api/profiles/%s/tracks" % pid)
    dev_of = {}
    for p in tracks["processes"]:
        for t in p["threads"]:
            if p.get("device") is not None and not t.get("derived"):
                dev_of[t["id"]] = p["device"]
    ans = get(port, "/api/profiles/%s/events?start_us=%r&end_us=%r&tracks=%s" %
              (pid, t0, t1, ",".join(map(str, sorted(dev_of)))))
    assert not ans["truncated"], ans
    out = {}
    for t in ans["tracks"]:
        n = sum(1 for e in t["events"] if t0 <= e[0] < t1)
        out[dev_of[t["id"]]] = out.get(dev_of[t["id"]], 0) + n
    return out


def test_built_trace():
    proc, port = serve([("vm.trace.json", json.dumps(built_trace()).encode())])
    try:
        (p,) = get(port, "/api/profiles")["profiles"]
        pid = p["id"]
        combined, own = check_spans(port, pid, "built trace")
        assert sorted(own) == [0, 1], own
        c = combined[0]
        assert c["start_us"] == 1000 and abs(c["span_us"] - 8230) <= 1e-3, c
        # the step on the timeline (start_us .. + span_us) holds both devices' kernels
        got = device_kernels(port, pid, c["start_us"], c["start_us"] + c["span_us"])
        assert got.get(0, 0) >= 4 and got.get(1, 0) >= 10, got
        # findings measure GPU:1 in its own windows: its 30 short kernels count
        f = get(port, "/api/profiles/%s/findings" % pid)
        assert f["steps"] == 3, f
        launch = [x for x in f["findings"] if x["kind"] == "launch_bound"]
        assert launch and "42 kernels" in launch[0]["title"], f["findings"]
        # the derived Steps row of GPU:1 is drawn in GPU:1's own windows
        tracks = get(port, "/api/profiles/%s/tracks" % pid)
        rows = {}
        for proc_ in tracks["processes"]:
            for t in proc_["threads"]:
                if t.get("derived") == "steps":
                    rows[proc_["device"]] = t["id"]
        assert sorted(rows) == [0, 1], rows
        for dev, track in rows.items():
            ans = get(port, "/api/profiles/%s/events?start_us=0&end_us=20000&tracks=%d" %
                      (pid, track))
            spans = sorted((e[0], e[0] + e[1]) for t in ans["tracks"] for e in t["events"])
            want = sorted(own[dev].values())
            assert len(spans) == 3 and all(abs(a[0] - b[0]) <= 1e-3 and abs(a[1] - b[1]) <= 1e-3
                                           for a, b in zip(spans, want)), (dev, spans, want)
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_host_figures_in_device_windows():
    """A synchronous copy on the host while only GPU:1 runs step 0 counts in
    step 0: the host figures cover the devices' own windows, not the combined
    start plus mean duration (1000 .. ~1210 us), which no device ran."""
    trace = built_trace()
    trace["traceEvents"].append({"ph": "X", "pid": 1, "tid": 1, "name": "cudaMemcpy",
                                 "ts": 9100, "dur": 20})
    proc, port = serve([("vm.trace.json", json.dumps(trace).encode())])
    try:
        (p,) = get(port, "/api/profiles")["profiles"]
        f = get(port, "/api/profiles/%s/findings" % p["id"])
        sync = [x for x in f["findings"] if x["kind"] == "sync_copies"]
        assert sync and sync[0]["title"].startswith("1 synchronous copy"), f["findings"]
        ev = sync[0]["evidence"]
        assert ev and ev[0]["label"].startswith("step 0:"), ev
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_tpu_fixture():
    path = os.path.join(FIXTURES or "", "xplane", "jax-tpu-v6e-inference.xplane.pb")
    if not FIXTURES or not os.path.isfile(path):
        print("skip: %s not found (set XPV_FIXTURES)" % path)
        return
    proc, port = serve([("tpu.xplane.pb", path)])
    try:
        (p,) = get(port, "/api/profiles")["profiles"]
        pid = p["id"]
        combined, own = check_spans(port, pid, "TPU v6e")
        # the step on the timeline holds the step's XLA ops of every chip;
        # the mean window alone misses the latest chip's
        step = max(combined.values(), key=lambda s: s.get("span_us", 0) - s["duration_us"])
        t0 = step["start_us"]
        whole = device_kernels(port, pid, t0, t0 + step["span_us"])
        mean = device_kernels(port, pid, t0, t0 + step["duration_us"])
        late = max((w[step["step"]][0], d) for d, w in own.items() if step["step"] in w)[1]
        assert whole.get(late, 0) > mean.get(late, 0), (step, late, whole, mean)
        f = get(port, "/api/profiles/%s/findings" % pid)
        assert f["steps"] == len(combined), (f["steps"], len(combined))
        print("TPU v6e: step %d spans %.1f us (mean %.1f us); chip %d: %d ops in the span,"
              " %d in the mean window" % (step["step"], step["span_us"], step["duration_us"],
                                          late, whole.get(late, 0), mean.get(late, 0)))
    finally:
        proc.terminate()
        proc.wait(timeout=10)


if __name__ == "__main__":
    main([test_built_trace, test_host_figures_in_device_windows, test_tpu_fixture])
