"""Findings on every real fixture in ../shared/fixtures: the findings each
profile must give, no more and no fewer, each with the reason it is right,
checked against an independent reading of the raw file (Python's json and
gzip, the protobuf wire decoder of test_xplane.py, SQL over the nsys
export). Step windows come from /steps (tested in test_analysis.py); every
other number is recomputed here, so a regression in a detector shows."""
import decimal
import gzip
import json
import os
import sqlite3
import subprocess
import sys
from collections import defaultdict

sys.path.insert(0, os.path.dirname(__file__))
import xpv_e2e as e2e  # noqa: E402
from intervals import clip, length, minus, union  # noqa: E402
from test_xplane import fields  # noqa: E402

FX = e2e.FIXTURES


def close(got, want, what):
    assert abs(got - want) <= 1e-9 * max(1.0, abs(want)), (what, got, want)


def idle_share(busy_per_window):
    """Idle time between a device's first and last work, over that span,
    summed over windows (each a union of busy intervals)."""
    idle = active = 0
    for busy in busy_per_window:
        if busy:
            active += busy[-1][1] - busy[0][0]
            idle += busy[-1][1] - busy[0][0] - length(busy)
    return 100.0 * idle / active


# ---- readers ----

def load_json(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        data = json.loads(f.read(), parse_float=decimal.Decimal)
    evs = data["traceEvents"] if isinstance(data, dict) else data
    out = []
    for e in evs:
        if e.get("ph") == "X" and "dur" in e:
            s = int(decimal.Decimal(e["ts"]) * 1000)
            out.append(dict(e, s=s, e=s + int(decimal.Decimal(e["dur"]) * 1000)))
    return out


DEVICE_CATS = {"kernel", "gpu_memcpy", "memcpy", "gpu_memset", "memset"}


def device_events(evs):
    return [e for e in evs if str(e.get("cat", "")).lower() in DEVICE_CATS]


def kernels(evs):
    return [e for e in evs if str(e.get("cat", "")).lower() == "kernel"]


def message(b):
    out = defaultdict(list)
    for num, _, v in fields(b):
        out[num].append(v)
    return out


def text(m, num):
    return m[num][0].decode("utf-8", "replace") if m.get(num) else ""


def xplane(path):
    """[(plane name, line name, event name, start ps, end ps, stat names)]"""
    with open(path, "rb") as f:
        space = message(f.read())
    out = []
    for pb in space[1]:
        plane = message(pb)
        names, stats = {}, {}
        for entry in plane[4]:
            e = message(entry)
            meta = message(e[2][0]) if e.get(2) else {}
            names[e[1][0] if e.get(1) else 0] = text(meta, 4) or text(meta, 2)
        for entry in plane[5]:
            e = message(entry)
            meta = message(e[2][0]) if e.get(2) else {}
            stats[e[1][0] if e.get(1) else 0] = text(meta, 2)
        for lb in plane[3]:
            line = message(lb)
            base = (line[3][0] if line.get(3) else 0) * 1000
            for eb in line[4]:
                ev = message(eb)
                if ev.get(5):
                    continue
                s = base + (ev[2][0] if ev.get(2) else 0)
                st = {stats.get(message(x)[1][0] if message(x).get(1) else 0) for x in ev[4]}
                out.append((text(plane, 2), text(line, 11) or text(line, 2),
                            names.get(ev[1][0] if ev.get(1) else 0, ""), s,
                            s + (ev[3][0] if ev.get(3) else 0), st))
    return out


def top3_share(totals):
    v = sorted(totals.values(), reverse=True)
    return 100.0 * sum(v[:3]) / sum(v)


# ---- the server ----

PORT = None
PROC = None
IDS = {}  # by path under FX, and by file name where only one profile has it


def setup():
    global PORT, PROC
    PORT = e2e.free_port()
    db = os.path.join(e2e.tmpdir(), "i.sqlite")
    PROC = subprocess.Popen([e2e.BIN, "--profile-dir=" + FX, "--port=%d" % PORT, "--db=" + db,
                             "--perfetto-port=0", "--quiet"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    e2e.wait_indexed(PORT, 1)
    _, _, body = e2e.http_get(PORT, "/api/profiles?companions=1")
    profiles = json.loads(body)["profiles"]
    names = [os.path.basename(p["path"]) for p in profiles]
    for p, name in zip(profiles, names):
        IDS[p["path"]] = p["id"]
        # the GPU captures share names (vm.xplane.pb in every run folder)
        if names.count(name) == 1:
            IDS[name] = p["id"]


def get(name, route):
    status, _, body = e2e.http_get(PORT, "/api/profiles/%s/%s" % (IDS[name], route))
    assert status == 200, (name, route, body)
    return json.loads(body)


def findings(name, kinds):
    """The findings by kind, after checking they are exactly `kinds` (kind -> severity)."""
    got = {f["kind"]: f for f in get(name, "findings")["findings"]}
    assert {k: f["severity"] for k, f in got.items()} == kinds, (name, got)
    return got


def steps_ns(name):
    return [(int(round(s["start_us"] * 1000)), int(round((s["start_us"] + s["duration_us"]) * 1000)))
            for s in get(name, "steps")["steps"]]


# ---- one test per fixture ----

def test_tpu_inference_compiles_before_its_steps():
    name = "jax-tpu-v6e-inference.xplane.pb"
    f = findings(name, {"compilation": "info"})["compilation"]
    ev = xplane(os.path.join(FX, "xplane", name))
    comp = union([(s, e) for p, _, n, s, e, _ in ev if p == "/host:CPU" and
                  n in ("backend_compile", "TfrtTpuCompiler::Compile")])
    # Four backend_compile spans (each holding a TfrtTpuCompiler::Compile)
    # on the host: 1.53 s of compilation inside the profiled window.
    assert len(comp) == 4
    close(f["value"], length(comp) / 1e9, "compile ms")
    # Info, not warning: all of it ends before the first step (the first
    # execution of the repeated jit_f module) begins, so no step waits.
    first_step = min(s for s, _ in steps_ns(name)) * 1000
    assert comp[-1][1] < first_step and "0 steps touched" in f["title"]
    # No module is named on these events, so no recompilation is claimed.
    assert all("compilation:" in e["label"] for e in f["evidence"])
    # No hot spot: XLA ops spread out; the top three make less than 80%.
    ops = defaultdict(int)
    for p, line, n, s, e, _ in ev:
        if p.startswith("/device:TPU:") and line == "XLA Ops":
            ops[n] += e - s
    assert top3_share(ops) < 80


def gpu_kernels(name, plane):
    totals = defaultdict(int)
    for p, line, n, s, e, st in xplane(os.path.join(FX, "xplane", name)):
        if p == plane and line.startswith("Stream") and "memcpy_details" not in st:
            totals[n] += e - s
    return totals


def test_mi300x_gemm_hot_spots():
    name = "jax-rocm-mi300x-gemm.xplane.pb"
    f = findings(name, {"hot_spots": "info"})["hot_spots"]
    # Three GEMM kernels (Cijk_...) make 81.6% of GPU:0's kernel time: over 80%.
    totals = gpu_kernels(name, "/device:GPU:0")
    close(f["value"], top3_share(totals), "top-3 share")
    top = sorted(totals, key=totals.get, reverse=True)[0]
    assert f["evidence"][0]["label"].split(" ", 1)[1].startswith(top[:150])
    ref = get(name, "event?ref=" + f["evidence"][0]["ref"])
    assert ref["name"] == top


def test_mi300x_conv_hot_spots():
    name = "jax-rocm-mi300x-conv-8gpu.xplane.pb"
    f = findings(name, {"hot_spots": "info"})["hot_spots"]
    # input_transpose_fusion, one GEMM and Im3d2Col make 97.3% of GPU:7's
    # kernel time. GPU:0 only copies (889 us of memcpy, 25% of GPU:7's
    # 3.59 ms of work): not idle by the 5% line; the six GPU planes with no
    # event at all are not counted (only devices the trace shows working).
    close(f["value"], top3_share(gpu_kernels(name, "/device:GPU:7")), "top-3 share")


def nsys(name):
    return sqlite3.connect("file:%s?mode=ro" % os.path.join(FX, "nsys", name), uri=True)


def nsys_device(con):
    iv = []
    for t in ("CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY",
              "CUPTI_ACTIVITY_KIND_MEMSET"):
        iv += con.execute("SELECT start, end FROM %s" % t).fetchall()
    return union(iv)


def nsys_sync_copies(con):
    return con.execute("SELECT COUNT(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s ON"
                       " s.id = r.nameId WHERE s.value LIKE 'cudaMemcpy%' AND s.value NOT LIKE"
                       " '%Async%'").fetchone()[0]


def test_saxpy_mpi_transfers_and_sync_copies():
    name = "saxpy-mpi-a100-nsys-2022.2.sqlite"
    f = findings(name, {"transfers": "warning", "sync_copies": "info", "hot_spots": "info"})
    con = nsys(name)
    busy = nsys_device(con)
    span = busy[-1][1] - busy[0][0]
    h2d, d2h = [con.execute("SELECT SUM(end - start) FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE"
                            " copyKind = ?", (k,)).fetchone()[0] for k in (1, 2)]
    # No steps: 186 ms H2D + 98.7 ms D2H of copies over the A100's 1.10 s
    # from its first to its last work is 25.9%, over the 10% line.
    close(f["transfers"]["value"], 100.0 * (h2d + d2h) / span, "copy share")
    mb = [con.execute("SELECT SUM(bytes) FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE copyKind = ?",
                      (k,)).fetchone()[0] / 1e6 for k in (1, 2)]
    assert "%.2f MB H2D and %.2f MB D2H" % tuple(mb) in f["transfers"]["title"]
    # 30 cudaMemcpy_v3020 calls: synchronous; info, as without steps there
    # is no per-step rate to hold against the threshold.
    assert nsys_sync_copies(con) == 30
    close(f["sync_copies"]["value"], 30, "sync copies")
    # One kernel (saxpy) is all the kernel time.
    names = con.execute("SELECT COUNT(DISTINCT demangledName) FROM CUPTI_ACTIVITY_KIND_KERNEL")
    assert names.fetchone()[0] == 1 and f["hot_spots"]["value"] == 100


def test_rtx2070_launch_bound():
    name = "pytorch-rtx2070-nsys-2022.1.sqlite"
    f = findings(name, {"launch_bound": "warning", "sync_copies": "info"})
    con = nsys(name)
    durs = [r[0] for r in con.execute("SELECT end - start FROM CUPTI_ACTIVITY_KIND_KERNEL")]
    # 35 of the 46 kernels run under 10 us, and from its first work to its
    # last the GPU is idle 93.2% of the time (gaps far longer than kernels).
    assert len(durs) == 46 and sum(d < 10000 for d in durs) == 35
    close(f["launch_bound"]["value"], idle_share([nsys_device(con)]), "idle share")
    # One cudaMemcpy_v3020 call.
    assert nsys_sync_copies(con) == 1


def pytorch(name):
    return load_json(os.path.join(FX, "chrome-json", name))


def step_idle_share(evs, steps):
    dev = [(e["s"], e["e"]) for e in device_events(evs)]
    return idle_share([union(clip(dev, s0, s1)) for s0, s1 in steps])


def test_resnet50_input_bound_and_pageable():
    name = "pytorch-v100-resnet50.pt.trace.json.gz"
    f = findings(name, {"input_bound": "critical", "pageable_memory": "info"})
    evs = pytorch(name)
    steps = steps_ns(name)
    loads = [(e["s"], e["e"]) for e in evs if e["name"].startswith("enumerate(DataLoader)")]
    busy = [(e["s"], e["e"]) for e in device_events(evs)]
    wait = sum(minus(union(clip(loads, s0, s1)), union(clip(busy, s0, s1))) for s0, s1 in steps)
    # Each step opens with a ~70 ms single-process DataLoader fetch while the
    # V100 has nothing to run: 33.9% of step time, over the 20% critical line.
    close(f["input_bound"]["value"], 100.0 * wait / sum(s1 - s0 for s0, s1 in steps), "wait")
    # Its 12 "Memcpy HtoD (Pageable -> Device)" copies come from pageable memory.
    pageable = [e for e in device_events(evs) if "Pageable" in e["name"]]
    assert len(pageable) == 12 and f["pageable_memory"]["value"] == 12
    longest = max(pageable, key=lambda e: e["e"] - e["s"])
    ref = get(name, "event?ref=" + f["pageable_memory"]["evidence"][0]["ref"])
    assert "Pageable" in ref["name"] and round(ref["dur_us"] * 1000) == longest["e"] - longest["s"]


def test_h100_bert_launch_bound():
    name = "pytorch-h100-bert-small.json.gz"
    f = findings(name, {"launch_bound": "warning"})["launch_bound"]
    evs = pytorch(name)
    steps = steps_ns(name)
    ks = [e for e in kernels(evs) if any(s0 <= e["s"] < s1 for s0, s1 in steps)]
    # 58 of the step's 60 kernels are under 10 us; the GPU idles 92% of its
    # active time in the step between them.
    assert len(ks) == 60 and sum(e["e"] - e["s"] < 10000 for e in ks) == 58
    close(f["value"], step_idle_share(evs, steps), "idle share")


def test_gp100_launch_bound_and_pageable():
    name = "pytorch-gp100-user-annotations.json.gz"
    f = findings(name, {"launch_bound": "warning", "pageable_memory": "info"})
    evs = pytorch(name)
    steps = steps_ns(name)
    ks = [e for e in kernels(evs) if any(s0 <= e["s"] < s1 for s0, s1 in steps)]
    # All 78 kernels of the three optimizer steps are under 10 us, and the
    # GP100 idles 95.7% of its active time between them.
    assert len(ks) == 78 and all(e["e"] - e["s"] < 10000 for e in ks)
    close(f["launch_bound"]["value"], step_idle_share(evs, steps), "idle share")
    # Ten "Memcpy HtoD (Pageable -> Device)" copies (nine read "dur": 0,
    # shorter than Kineto's 1 us), in the steps and outside them.
    assert sum("Pageable" in e["name"] for e in device_events(evs)) == 10
    assert f["pageable_memory"]["value"] == 10


def test_mi210_gpu_only_has_none():
    name = "pytorch-rocm-mi210-gpu-only.json.gz"
    findings(name, {})
    evs = pytorch(name)
    ks = kernels(evs)
    busy = union([(e["s"], e["e"]) for e in device_events(evs)])
    # GPU events only (no host, so no input, compile or copy calls); 562
    # kernels keep the GPU busy: idle under 30% of its active span, so not
    # launch-bound even though most kernels are short.
    assert len(ks) == 562 and idle_share([busy]) < 30


def test_tf1_timeline_has_none():
    name = "tf1-xla-gpu-timeline.ctf.json"
    findings(name, {})
    evs = load_json(os.path.join(FX, "chrome-json", name))
    # No steps, no compile or input events, 83 kernel names over 7 streams:
    # no pattern; the TF timeline's copies (300 us) are far under 10% of the
    # GPU's time, and its names carry no XlaCompile.
    assert not any("XlaCompile" in e["name"] or "DataLoader" in e["name"] for e in evs)


def test_list_only_json_carries_the_same():
    r = e2e.run(["--profile-dir=" + FX, "--list-only", "--json",
                 "--db=" + os.path.join(e2e.tmpdir(), "l.sqlite"), "--quiet"])
    assert r.returncode == 0, r.stderr
    for p in json.loads(r.stdout):
        # by path and id: several captures share a file name, and the
        # server's list leaves out the twins (vm.trace.json.gz) of xplanes
        name = p["path"]
        assert IDS.get(name, p["id"]) == p["id"], name
        status, _, body = e2e.http_get(PORT, "/api/profiles/%s/findings" % p["id"])
        assert status == 200, (name, body)
        api = json.loads(body)["findings"]
        assert p["findings"] == api, name
        # the .nsys-rep nsys alone can read: not judged, rather than "nothing found"
        assert (api is None) == (p["status"] != "ok"), (name, p["status"])


if __name__ == "__main__":
    e2e.need_fixtures()
    setup()
    try:
        e2e.main([test_tpu_inference_compiles_before_its_steps, test_mi300x_gemm_hot_spots,
                  test_mi300x_conv_hot_spots, test_saxpy_mpi_transfers_and_sync_copies,
                  test_rtx2070_launch_bound, test_resnet50_input_bound_and_pageable,
                  test_h100_bert_launch_bound, test_gp100_launch_bound_and_pageable,
                  test_mi210_gpu_only_has_none, test_tf1_timeline_has_none,
                  test_list_only_json_carries_the_same])
    finally:
        PROC.terminate()
        PROC.wait(10)
