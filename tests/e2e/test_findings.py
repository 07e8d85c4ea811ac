"""Findings on generated profiles: xpv-gen --plant plants each pattern in a
clean PyTorch trace; the server must find exactly the planted patterns (and
nothing in the clean trace), with values that an independent reading of the
raw trace JSON gives, evidence refs that name the events they describe, and
thresholds that --findings-config changes."""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
import xpv_e2e as e2e  # noqa: E402
from intervals import clip, length, minus, union  # noqa: E402

PATTERNS = {
    # pattern -> the finding kinds it must produce, and nothing else
    "none": set(),
    "recompile": {"compilation", "recompilation"},
    "input-stall": {"input_bound"},
    "exposed-collectives": {"exposed_collectives"},
    "sync-copy": {"sync_copies"},
    "slow-step": {"step_outliers"},
    "tiny-kernels": {"launch_bound"},
}


def gen(out, plant):
    subprocess.run([e2e.GEN, "--out", out, "--plant", plant], check=True,
                   capture_output=True)


# ---- an independent reading of the generated trace ----

def load(path):
    with open(path) as f:
        evs = json.load(f)["traceEvents"]
    ns = lambda v: int(round(float(v) * 1000))  # noqa: E731  ts/dur in us, 3 decimals
    out = []
    for e in evs:
        if e.get("ph") == "X":
            out.append(dict(e, s=ns(e["ts"]), e=ns(e["ts"]) + ns(e["dur"])))
    return out


def steps_of(evs):
    return sorted((e for e in evs if e["name"].startswith("ProfilerStep#")), key=lambda e: e["s"])


def device(evs):
    return [e for e in evs if e["pid"] == 0]


def expected_value(plant, evs):
    steps = steps_of(evs)
    step_time = sum(s["e"] - s["s"] for s in steps)
    dev = device(evs)
    if plant == "input-stall":
        wait = 0
        for st in steps:
            loads = union(clip([(e["s"], e["e"]) for e in evs if "DataLoader" in e["name"]],
                               st["s"], st["e"]))
            busy = union(clip([(e["s"], e["e"]) for e in dev], st["s"], st["e"]))
            wait += minus(loads, busy)
        return 100.0 * wait / step_time
    if plant == "exposed-collectives":
        exposed = 0
        for st in steps:
            coll = union(clip([(e["s"], e["e"]) for e in dev if "nccl" in e["name"]],
                              st["s"], st["e"]))
            comp = union(clip([(e["s"], e["e"]) for e in dev
                               if e["cat"] == "kernel" and "nccl" not in e["name"]],
                              st["s"], st["e"]))
            exposed += minus(coll, comp)
        return 100.0 * exposed / step_time  # one device: device time = step time
    if plant == "sync-copy":
        n = sum(1 for e in evs if e["name"] == "cudaMemcpy"
                and any(st["s"] <= e["s"] < st["e"] for st in steps))
        return n / len(steps)
    if plant == "slow-step":
        durs = sorted(s["e"] - s["s"] for s in steps)
        return max(durs) / durs[(len(durs) - 1) // 2]
    if plant == "recompile":
        comp = union([(e["s"], e["e"]) for e in evs if e["name"] == "backend_compile"])
        return length(comp) / 1e6  # ms
    if plant == "tiny-kernels":
        idle = active = 0
        for st in steps:
            busy = union(clip([(e["s"], e["e"]) for e in dev], st["s"], st["e"]))
            active += busy[-1][1] - busy[0][0]
            idle += busy[-1][1] - busy[0][0] - length(busy)
        return 100.0 * idle / active
    return None


VALUE_KIND = {"input-stall": "input_bound", "exposed-collectives": "exposed_collectives",
              "sync-copy": "sync_copies", "slow-step": "step_outliers",
              "recompile": "compilation", "tiny-kernels": "launch_bound"}


class Server:
    def __init__(self, root, *extra, env=None):
        self.port = e2e.free_port()
        self.db = os.path.join(e2e.tmpdir(), "i.sqlite")
        self.p = subprocess.Popen([e2e.BIN, "--profile-dir=" + root, "--port=%d" % self.port,
                                   "--db=" + self.db, "--perfetto-port=0", "--quiet"] + list(extra),
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                  env=dict(os.environ, **(env or {})))
        e2e.wait_indexed(self.port, 1)

    def get(self, path):
        status, ctype, body = e2e.http_get(self.port, path)
        return status, ctype, json.loads(body)

    def stop(self):
        self.p.terminate()
        self.p.wait(10)


ROOT = None
S = None
IDS = {}


def setup():
    global ROOT, S
    ROOT = e2e.tmpdir()
    for p in PATTERNS:
        gen(os.path.join(ROOT, p), p)
    gen(os.path.join(ROOT, "all"), ",".join(k for k in PATTERNS if k != "none"))
    S = Server(ROOT)
    _, _, body = S.get("/api/profiles")
    for prof in body["profiles"]:
        IDS[prof["path"].split("/")[0]] = prof["id"]
    assert set(IDS) == set(PATTERNS) | {"all"}, IDS


def findings(name):
    status, ctype, body = S.get("/api/profiles/%s/findings" % IDS[name])
    assert status == 200 and ctype.startswith("application/json"), (status, ctype)
    assert body["complete"] is True and body["steps"] == 10, body
    return body["findings"]


def test_exactly_the_planted_patterns():
    for plant, kinds in PATTERNS.items():
        got = {f["kind"] for f in findings(plant)}
        assert got == kinds, (plant, got, kinds)


def test_all_patterns_together():
    got = {f["kind"] for f in findings("all")}
    want = set().union(*PATTERNS.values())
    # step 5 runs its ops three times over: with 200 tiny kernels, the stall
    # and the all-reduce it is still 1.9x the median; everything planted is
    # found, nothing else
    assert got == want, (got, want)


def test_values_match_the_raw_trace():
    for plant, kind in VALUE_KIND.items():
        evs = load(os.path.join(ROOT, plant, "worker0.1700000000000.pt.trace.json"))
        want = expected_value(plant, evs)
        f = [f for f in findings(plant) if f["kind"] == kind][0]
        assert abs(f["value"] - want) <= 1e-9 * max(1.0, abs(want)), (plant, f["value"], want)


def test_shape_and_severity():
    for plant in PATTERNS:
        for f in findings(plant):
            assert set(f) == {"kind", "severity", "title", "value", "unit", "threshold",
                              "explanation", "evidence"}, f
            assert f["severity"] in ("info", "warning", "critical")
            assert f["title"] and f["explanation"] and f["unit"]
            for ev in f["evidence"]:
                assert set(ev) == {"start_us", "end_us", "ref", "label"}
                assert ev["end_us"] >= ev["start_us"] and ev["label"]
    # 2 ms of 6.1 ms per step waiting for input: over the 20% critical line
    assert findings("input-stall")[0]["severity"] == "critical"
    sev = [f["severity"] for f in findings("all")]
    assert sev == sorted(sev, key=["critical", "warning", "info"].index), sev


def event(name, ref):
    status, _, body = S.get("/api/profiles/%s/event?ref=%s" % (IDS[name], ref))
    assert status == 200, body
    return body


def test_evidence_names_the_events():
    comp = {f["kind"]: f for f in findings("recompile")}
    ev = comp["recompilation"]["evidence"]
    assert len(ev) == 2 and "in step 3" in ev[1]["label"], ev
    for e in ev:
        got = event("recompile", e["ref"])
        assert got["name"] == "backend_compile" and got["args"]["module"] == "jit_train_step"
        assert abs(got["start_us"] - e["start_us"]) < 1e-6
    # the step 3 window holds the second compilation
    _, _, steps = S.get("/api/profiles/%s/steps" % IDS["recompile"])
    s3 = [s for s in steps["steps"] if s["step"] == 3][0]
    assert s3["start_us"] <= ev[1]["start_us"] < s3["start_us"] + s3["duration_us"]
    exp = findings("exposed-collectives")[0]["evidence"]
    assert exp and all("ncclKernel_AllReduce" in event("exposed-collectives", e["ref"])["name"]
                       for e in exp)
    sync = findings("sync-copy")[0]["evidence"]
    assert sync and all(event("sync-copy", e["ref"])["name"] == "cudaMemcpy" for e in sync)
    slow = findings("slow-step")[0]["evidence"]
    assert len(slow) == 1 and slow[0]["label"].startswith("step 5:") and "compute +" in \
        slow[0]["label"], slow


def test_cached_and_bad_ids():
    a = S.get("/api/profiles/%s/findings" % IDS["all"])
    b = S.get("/api/profiles/%s/findings" % IDS["all"])
    assert a == b
    status, _, body = S.get("/api/profiles/ffffffffffffffff/findings")
    assert status == 404 and "error" in body
    status, _, _ = S.get("/api/profiles/nothex/findings")
    assert status == 400
    assert S.get("/api/health")[0] == 200


def test_list_only_json_has_findings():
    r = e2e.run(["--profile-dir=" + ROOT, "--list-only", "--json",
                 "--db=" + os.path.join(e2e.tmpdir(), "l.sqlite"), "--quiet"])
    assert r.returncode == 0, r.stderr
    by = {p["path"].split("/")[0]: p for p in json.loads(r.stdout)}
    for plant, kinds in PATTERNS.items():
        assert {f["kind"] for f in by[plant]["findings"]} == kinds, plant
    # the profile's own members are kept as the API writes them
    assert isinstance(by["none"]["mtime_ns"], int) and by["none"]["status"] == "ok"
    # and the findings are the API's, found by id: every planted trace has
    # the same file name, in its own folder
    for p in by.values():
        assert p["findings"] == S.get("/api/profiles/%s/findings" % p["id"])[2]["findings"]


def test_config_file_changes_thresholds():
    cfg = os.path.join(e2e.tmpdir(), "findings.conf")
    with open(cfg, "w") as f:
        f.write("# stricter input, laxer steps\ninput_share_warn = 0.5\n"
                "step_outlier_factor=4\n")
    root = e2e.tmpdir()
    for p in ("input-stall", "slow-step"):
        gen(os.path.join(root, p), p)
    s = Server(root, "--findings-config=" + cfg)
    try:
        _, _, body = e2e.http_get(s.port, "/api/profiles")
        for prof in json.loads(body)["profiles"]:
            _, _, fb = e2e.http_get(s.port, "/api/profiles/%s/findings" % prof["id"])
            assert json.loads(fb)["findings"] == [], prof["path"]  # 33% < 50%; 2.95x < 4x
    finally:
        s.stop()
    with open(cfg, "w") as f:
        f.write("input_share_warn = -1\n")
    r = e2e.run(["--profile-dir=" + root, "--list-only", "--findings-config=" + cfg])
    assert r.returncode == 2 and "line 1" in r.stderr and "input_share_warn" in r.stderr, r.stderr
    with open(cfg, "w") as f:
        f.write("\nno_such_key = 1\n")
    r = e2e.run(["--profile-dir=" + root, "--list-only", "--findings-config=" + cfg])
    assert r.returncode == 2 and "line 2: unknown key 'no_such_key'" in r.stderr, r.stderr


def write_cross_window_launches(root):
    """Two small traces whose kernels start a window after their launches:
    one without steps (read as slices), one with steps. Launch latencies
    vary (so a latency paired across windows moves the median), and two
    streams run kernels of the same length at times that interleave (so
    which one is the evidence depends on the order events are read in)."""
    t0 = 1700000000000.0
    for name, steps in (("slices", 0), ("steps", 8)):
        evs = [{"name": "process_name", "ph": "M", "pid": 100, "tid": 0,
                "args": {"name": "python3"}}]
        n = 64
        for i in range(n):
            corr = i + 1
            ts = t0 + 1000 + 100.0 * i
            evs.append({"ph": "X", "cat": "kernel", "name": "tiny_kernel_%d" % (i % 3),
                        "pid": 0, "tid": 7 + i % 2, "ts": ts, "dur": 5.0,
                        "args": {"device": 0, "stream": 7 + i % 2, "correlation": corr}})
            evs.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel",
                        "pid": 100, "tid": 100, "ts": ts - 10 - (i * 37) % 90, "dur": 4.0,
                        "args": {"correlation": corr}})
        for k in range(steps):
            evs.append({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#%d" % k,
                        "pid": 100, "tid": 100, "ts": t0 + 1000 + 800.0 * k - 50,
                        "dur": 800.0, "args": {}})
        os.makedirs(os.path.join(root, name))
        with open(os.path.join(root, name, "worker0.1.pt.trace.json"), "w") as f:
            json.dump({"traceEvents": evs}, f)


def test_same_answer_read_step_by_step():
    """Steps are read in batches when they are short next to the event
    blocks (all ten of a planted trace at once); XPV_FINDINGS_BATCH=off
    reads each alone. Both must give the same bytes, here, on launches
    that cross windows, and on the fixtures when they are there."""
    cross = e2e.tmpdir()
    write_cross_window_launches(cross)
    roots = [ROOT, cross] + ([e2e.FIXTURES] if e2e.FIXTURES and os.path.isdir(e2e.FIXTURES)
                             else [])
    for root in roots:
        answers = []
        for env in ({}, {"XPV_FINDINGS_BATCH": "off"}):
            s = Server(root, env=env)
            try:
                _, _, body = e2e.http_get(s.port, "/api/profiles")
                answers.append({p["path"]: e2e.http_get(s.port, "/api/profiles/%s/findings" %
                                                        p["id"])[2]
                                for p in json.loads(body)["profiles"]})
            finally:
                s.stop()
        assert answers[0] == answers[1], root
        assert any(b'"findings":[{' in v for v in answers[0].values())


if __name__ == "__main__":
    if not e2e.BIN or not e2e.GEN:
        print("SKIP: XPV_BIN/XPV_GEN not set")
        sys.exit(e2e.SKIP)
    setup()
    try:
        e2e.main([test_exactly_the_planted_patterns, test_all_patterns_together,
                  test_values_match_the_raw_trace, test_shape_and_severity,
                  test_evidence_names_the_events, test_cached_and_bad_ids,
                  test_list_only_json_has_findings, test_config_file_changes_thresholds,
                  test_same_answer_read_step_by_step])
    finally:
        S.stop()
