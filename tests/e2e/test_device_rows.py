#!/usr/bin/env python3
"""test_device_rows.py — the Steps, XLA Modules and XLA Ops rows derived
under each GPU of a JAX profile (api/device_rows.c), on the real H100
captures in ../shared/fixtures/gpu (skipped when they are absent).

The XLA Ops spans are recomputed here from the raw file, sharing no code
with the C side: the device events that carry hlo_op, in start order, each
run of equal (hlo_op, hlo_module, program_id) one span. cmdbuf-off is read
with a stdlib protobuf walk (its kernels carry their own hlo_op, so the
reader's command-buffer attribution does not touch them, and no run there
crosses a step); jax-perfetto through its perfetto_trace.json.gz, whose runs
break at steps: an event's step is the /steps window holding its host
launch (same correlation_id), else its own start. The rows must be in the tracks and
events answers, in the trace export and in `--extract`'s files, and must
not be counted anywhere else: kernel time, hlo_stats and the steps agree
with the raw file, and search never returns a derived span.
"""
import gzip
import json
import os
import shutil
import struct
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import xpv_e2e as e2e  # noqa: E402
from test_xplane import fields, signed64  # noqa: E402

GPU = os.path.join(e2e.FIXTURES, "gpu")
OFF = os.path.join(GPU, "jax-cmdbuf-pair", "cmdbuf-off")
PERFETTO = os.path.join(GPU, "jax-perfetto")
ROWS = ["Steps", "XLA Modules", "XLA Ops"]


def need_gpu_fixtures():
    e2e.need_fixtures()
    if not os.path.isdir(OFF) or not os.path.isdir(PERFETTO):
        print("SKIP: ../shared/fixtures/gpu (jax-cmdbuf-pair, jax-perfetto) not found")
        sys.exit(e2e.SKIP)


def find(root, suffix):
    for d, _, names in os.walk(root):
        for n in names:
            if n.endswith(suffix):
                return os.path.join(d, n)
    raise AssertionError("no *%s under %s" % (suffix, root))


# ---- the raw files ----

def _stat(b, names):
    """(name, value) of one XStat; a ref value is the name it refers to."""
    m = {}
    for num, wire, v in fields(b):
        m[num] = v
    name = names.get(signed64(m.get(1, 0)), "")
    if 5 in m:
        return name, m[5].decode("utf-8", "replace")
    if 7 in m:
        return name, names.get(signed64(m[7]), "")
    if 4 in m:
        return name, signed64(m[4])
    if 3 in m:
        return name, m[3]
    if 2 in m:
        return name, struct.unpack("<d", m[2])[0]
    return name, None


def xplane_device_events(path, plane_name):
    """[(start ps, end ps, {stat: value})] of every timed event of a plane."""
    data = open(path, "rb").read()
    for num, _, plane in fields(data):
        if num != 1:
            continue
        pf = list(fields(plane))
        if next((v for n, _, v in pf if n == 2), b"").decode() != plane_name:
            continue
        stat_names, meta_stats = {}, {}
        for n, _, v in pf:
            if n in (4, 5):
                entry = dict((k, x) for k, _, x in fields(v))
                meta = list(fields(entry.get(2, b"")))
                mid = signed64(entry.get(1, 0))
                if n == 5:
                    stat_names[mid] = next((x for k, _, x in meta if k == 2), b"").decode()
                else:
                    meta_stats[mid] = [x for k, _, x in meta if k == 5]
        out = []
        for n, _, line in pf:
            if n != 3:
                continue
            lf = list(fields(line))
            base_ns = next((signed64(v) for k, _, v in lf if k == 3), 0)
            for k, _, ev in lf:
                if k != 4:
                    continue
                e = dict((a, b) for a, _, b in fields(ev) if a != 4)
                if 5 in e:  # aggregated, not a timed event
                    continue
                stats = dict(_stat(s, stat_names) for s in meta_stats.get(signed64(e.get(1, 0)), []))
                stats.update(_stat(s, stat_names) for a, _, s in fields(ev) if a == 4)
                start = base_ns * 1000 + e.get(2, 0)
                out.append((start, start + e.get(3, 0), stats))
        return out
    raise AssertionError("no plane " + plane_name)


def json_device_events(path):
    """The GPU:0 events as (start ps, end ps, args), each args with "launch_ps":
    the start of the host event with its correlation_id, when there is one."""
    with gzip.open(path, "rt") as f:
        ev = json.load(f)["traceEvents"]
    pid = next(e["pid"] for e in ev if e.get("ph") == "M" and e.get("name") == "process_name"
               and e["args"]["name"] == "/device:GPU:0")
    ps = lambda us: round(float(us) * 1e6)  # noqa: E731
    launches = {}
    for e in ev:
        corr = e.get("args", {}).get("correlation_id")
        if e.get("ph") == "X" and e.get("pid") != pid and corr is not None:
            launches.setdefault(str(corr), ps(e["ts"]))
    out = []
    for e in ev:
        if e.get("ph") == "X" and e.get("pid") == pid:
            args = dict(e.get("args", {}))
            corr = args.get("correlation_id")
            if corr is not None and str(corr) in launches:
                args["launch_ps"] = launches[str(corr)]
            out.append((ps(e["ts"]), ps(e["ts"]) + ps(e["dur"]), args))
    return out


def step_of(windows):
    """The step of an event: the window (start ps, end ps, step) holding its
    host launch, else its own start, as the step breakdown assigns it."""
    def at(start, args):
        t = args.get("launch_ps", start)
        return next((k for a, b, k in windows if a <= t < b), -1)
    return at


def step_windows(s, pid):
    return [(round(x["start_us"] * 1e6), round((x["start_us"] + x["duration_us"]) * 1e6), x["step"])
            for x in s.get("/api/profiles/%s/steps" % pid)["steps"]]


def op_spans(events, step=lambda start, args: -1):
    """The XLA Ops spans: runs of equal op keys and step among the events with
    hlo_op, by start."""
    spans = []
    key = None
    for start, end, st in sorted((e for e in events if "hlo_op" in e[2]), key=lambda e: e[0]):
        k = (st["hlo_op"], st.get("hlo_module"), st.get("program_id"), step(start, st))
        if spans and k == key:
            spans[-1][1] = max(spans[-1][1], end)
        else:
            spans.append([start, end])
            key = k
    return spans


# ---- the server ----

class Server:
    def __init__(self, root, min_profiles=1):
        self.port = e2e.free_port()
        db = os.path.join(e2e.tmpdir("xpv-devrows-"), "index.sqlite")
        self.p = subprocess.Popen([e2e.BIN, "--profile-dir=" + root, "--port=%d" % self.port,
                                   "--perfetto-port=0", "--db=" + db, "--quiet"],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        e2e.wait_indexed(self.port, min_profiles)

    def get(self, path):
        status, _, body = e2e.http_get(self.port, path)
        assert status == 200, (path, status, body[:300])
        return json.loads(body)

    def profile(self, suffix):
        for p in self.get("/api/profiles")["profiles"]:
            if p["path"].endswith(suffix):
                return p["id"]
        raise AssertionError("no profile " + suffix)

    def stop(self):
        self.p.terminate()
        self.p.wait()


def gpu_rows(s, pid):
    """The GPU:0 process's threads, and its derived rows by name."""
    procs = s.get("/api/profiles/%s/tracks" % pid)["processes"]
    gpu = next(p for p in procs if p["device"] == 0)
    return gpu["threads"], {t["name"]: t for t in gpu["threads"] if t.get("derived")}


def all_spans(s, pid, track):
    """Events + merged spans of a track over the whole profile: (count, events
    as (name, ref))."""
    d = s.get("/api/profiles/%s/events?tracks=%d&resolution=20000" % (pid, track))
    t = next((t for t in d["tracks"] if t["id"] == track), {"events": [], "spans": []})
    return (len(t["events"]) + sum(sp[2] for sp in t["spans"]),
            [(d["names"][e[2]], e[4]) for e in t["events"]])


def trace_rows(doc, pid_name="/device:GPU:0"):
    """name -> X events of the derived threads in a Chrome trace."""
    ev = doc["traceEvents"]
    pid = next(e["pid"] for e in ev if e["ph"] == "M" and e["name"] == "process_name"
               and e["args"]["name"] == pid_name)
    names = {e["tid"]: e["args"]["name"] for e in ev
             if e["ph"] == "M" and e["name"] == "thread_name" and e["pid"] == pid}
    sorts = {e["tid"]: e["args"]["sort_index"] for e in ev
             if e["ph"] == "M" and e["name"] == "thread_sort_index" and e["pid"] == pid}
    out = {n: [] for n in ROWS}
    for e in ev:
        if e["ph"] == "X" and e["pid"] == pid and sorts.get(e["tid"], 0) < 0 and \
                names.get(e["tid"]) in out:
            out[names[e["tid"]]].append(e)
    return out


def check_ops(spans_api_n, total_ns, want):
    assert spans_api_n == len(want), (spans_api_n, len(want))
    want_ns = sum(e - s for s, e in want) / 1000.0
    # the index keeps ns; the raw file ps: at most 1 ns lost per end
    assert abs(total_ns - want_ns) <= 2 * len(want), (total_ns, want_ns)


def test_cmdbuf_off_rows_match_the_raw_file():
    raw = xplane_device_events(find(OFF, ".xplane.pb"), "/device:GPU:0")
    want = op_spans(raw)
    kernels = [e for e in raw if "kernel_details" in e[2]]
    assert len(kernels) == 316, len(kernels)
    s = Server(OFF)
    try:
        pid = s.profile(".xplane.pb")
        threads, rows = gpu_rows(s, pid)
        assert [t["name"] for t in threads[:3]] == ROWS, threads
        assert all(not t.get("derived") for t in threads[3:]), threads
        ops = rows["XLA Ops"]
        assert ops["events"] == len(want), (ops, len(want))
        n, events = all_spans(s, pid, ops["id"])
        assert n == len(want), (n, len(want))
        doc = s.get("/api/profiles/%s/trace" % pid)
        got = trace_rows(doc)
        total = sum(round(float(e["dur"]) * 1000) for e in got["XLA Ops"])
        check_ops(len(got["XLA Ops"]), total, want)
        for e in got["XLA Ops"]:
            assert e["name"] == e["args"]["hlo_op"], e
            assert e["args"]["hlo_module"] == "jit_step" and isinstance(e["args"]["program_id"], int), e
        mods = got["XLA Modules"]
        assert mods and all(e["name"] == "jit_step(%d)" % e["args"]["program_id"] for e in mods), mods
        steps = s.get("/api/profiles/%s/steps" % pid)["steps"]
        assert [e["args"]["step_num"] for e in got["Steps"]] == [x["step"] for x in steps], got["Steps"]
        # a span's ref is its first device event, which carries the op
        for name, ref in events[:20]:
            first = s.get("/api/profiles/%s/event?ref=%s" % (pid, ref))
            assert first["args"]["hlo_op"] == name, (name, first)
        check_not_counted(s, pid, raw, rows)
    finally:
        s.stop()


def check_not_counted(s, pid, raw, rows):
    """No answer but the timeline's counts the derived rows."""
    kernel_ps = sum(e - b for b, e, st in raw if "kernel_details" in st)
    k = s.get("/api/profiles/%s/kernels" % pid)
    assert abs(k["kernel_time_us"] - kernel_ps / 1e6) < 0.5, (k["kernel_time_us"], kernel_ps / 1e6)
    hlo = s.get("/api/profiles/%s/tools/hlo_stats" % pid)["rows"]
    hlo_ps = sum(e - b for b, e, st in raw if "hlo_op" in st)
    assert abs(sum(r["total_time"] for r in hlo) - hlo_ps / 1e6) < 0.5, hlo_ps
    steps = s.get("/api/profiles/%s/steps" % pid)
    assert steps["source"] == "annotation" and len(steps["steps"]) == 4, steps
    assert sum(x["compute_us"] for x in steps["steps"]) <= kernel_ps / 1e6 + 0.5, steps
    derived = {t["id"] for t in rows.values()}
    found = s.get("/api/profiles/%s/search?q=fusion&limit=1000" % pid)["matches"]
    assert found and not any(m["track"] in derived for m in found), found[:3]


def test_jax_perfetto_rows_and_extract():
    """Command buffers: every kernel of a graph launch names the same
    command_buffer_N, so the op runs break only at steps."""
    raw = json_device_events(find(PERFETTO, "perfetto_trace.json.gz"))
    s = Server(PERFETTO)
    try:
        want = op_spans(raw, step_of(step_windows(s, s.profile("perfetto_trace.json.gz"))))
        assert len(want) > 1, want
        for suffix in ("perfetto_trace.json.gz", ".xplane.pb"):
            pid = s.profile(suffix)
            threads, rows = gpu_rows(s, pid)
            assert [t["name"] for t in threads[:3]] == ROWS, (suffix, threads)
        # the JSON capture: kernels name command buffers, no program_id
        pid = s.profile("perfetto_trace.json.gz")
        got = trace_rows(s.get("/api/profiles/%s/trace" % pid))
        total = sum(round(float(e["dur"]) * 1000) for e in got["XLA Ops"])
        check_ops(len(got["XLA Ops"]), total, want)
        assert {e["name"] for e in got["XLA Modules"]} == {"jit_train_step"}, got["XLA Modules"]
    finally:
        s.stop()
    out = os.path.join(e2e.tmpdir("xpv-devrows-out-"), "out")
    db = os.path.join(os.path.dirname(out), "index.sqlite")
    r = e2e.run(["--profile-dir=" + PERFETTO, "--db=" + db, "--extract=" + out])
    assert r.returncode == 0, r.stdout + r.stderr
    with open(find(out, "perfetto_trace.json")) as f:
        got = trace_rows(json.load(f))
    assert len(got["XLA Ops"]) == len(want) and got["Steps"] and got["XLA Modules"], \
        {k: len(v) for k, v in got.items()}


def test_no_rows_without_hlo_op_or_with_real_lines():
    """A TPU profile (real XLA Ops lines) and a PyTorch one get none."""
    e2e.need_fixtures()
    root = e2e.tmpdir("xpv-devrows-none-")
    for rel in ("xplane/jax-tpu-v6e-inference.xplane.pb",
                "chrome-json/pytorch-h100-bert-small.json.gz"):
        shutil.copyfile(os.path.join(e2e.FIXTURES, rel), os.path.join(root, os.path.basename(rel)))
    s = Server(root, 2)
    try:
        profiles = s.get("/api/profiles")["profiles"]
        assert len(profiles) == 2, profiles
        for p in profiles:
            procs = s.get("/api/profiles/%s/tracks" % p["id"])["processes"]
            assert not any(t.get("derived") for q in procs for t in q["threads"]), p["path"]
    finally:
        s.stop()


if __name__ == "__main__":
    need_gpu_fixtures()
    e2e.main([test_cmdbuf_off_rows_match_the_raw_file, test_jax_perfetto_rows_and_extract,
              test_no_rows_without_hlo_op_or_with_real_lines])
