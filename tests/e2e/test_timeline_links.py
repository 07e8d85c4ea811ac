#!/usr/bin/env python3
"""test_timeline_links.py — the timeline's flows, counters and area selection
against independent readings of the raw files.

- flows: a PyTorch kernel's launch by correlation id (and back), a JAX GPU
  kernel's launch in the MI300X xplane (decoded here from the protobuf wire
  format), TensorFlow DataFlow records;
- /aggregate: a Python sum over the raw slices in the same window, clipped
  to it, with self time from the slices' nesting;
- /counters: the raw `C` events of a generated trace, and the `Total
  Allocated` of PyTorch's `[memory]` instants.
"""
import gzip
import json
import os
import random
import shutil
import subprocess
import sys
import urllib.error
import urllib.parse
import urllib.request
from decimal import Decimal

sys.path.insert(0, os.path.dirname(__file__))
from xpv_e2e import BIN, FIXTURES, free_port, need_fixtures, tmpdir, main, wait_indexed  # noqa: E402
from test_xplane import fields, signed64  # noqa: E402

PYTORCH = "pytorch-h100-bert-small.json.gz"
TF = "tf1-xla-gpu-timeline.ctf.json"
JAX = "jax-rocm-mi300x-gemm.xplane.pb"
COUNTERS = "counters.json"


def get(port, path):
    try:
        with urllib.request.urlopen("http://127.0.0.1:%d%s" % (port, path), timeout=60) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def us(ns):
    """ns -> the API's exact µs number."""
    return float(Decimal(ns) / 1000)


def write_counter_trace(path):
    """A trace with two counter series and slices; returns its raw events."""
    rng = random.Random(7)
    ev = [{"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "host"}}]
    t = Decimal(1000)
    for i in range(3000):
        t += Decimal(rng.choice(["0.5", "1", "2.25", "7"]))
        ev.append({"ph": "C", "name": "mem", "pid": 1, "ts": float(t),
                   "args": {"allocated": rng.randint(0, 10 ** 9), "ratio": rng.random() * 100}})
        ev.append({"ph": "X", "name": "op%d" % (i % 5), "pid": 1, "tid": 2, "ts": float(t), "dur": 1.5})
    # a flow in Perfetto's newer form: slices sharing a bind_id
    ev.append({"ph": "X", "name": "producer", "pid": 1, "tid": 3, "ts": 1200, "dur": 10,
               "bind_id": 42, "flow_out": True})
    ev.append({"ph": "X", "name": "consumer", "pid": 1, "tid": 4, "ts": 1230.5, "dur": 5,
               "bind_id": 42, "flow_in": True})
    ev.append({"ph": "X", "name": "bystander", "pid": 1, "tid": 4, "ts": 1250, "dur": 5,
               "bind_id": 43, "flow_in": True})
    with open(path, "w") as f:
        json.dump({"traceEvents": ev}, f)
    return ev


class Server:
    def __enter__(self):
        root = tmpdir()
        for sub, name in (("chrome-json", PYTORCH), ("chrome-json", TF), ("xplane", JAX)):
            shutil.copyfile(os.path.join(FIXTURES, sub, name), os.path.join(root, name))
        self.counter_events = write_counter_trace(os.path.join(root, COUNTERS))
        self.port = free_port()
        self.proc = subprocess.Popen(
            [BIN, "--profile-dir=" + root, "--port=%d" % self.port, "--perfetto-port=0",
             "--db=" + os.path.join(tmpdir(), "i.sqlite"), "--quiet"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_indexed(self.port, min_profiles=4, timeout=120)
        _, ps = get(self.port, "/api/profiles")
        self.ids = {os.path.basename(p["path"]): p["id"] for p in ps["profiles"]}
        return self

    def __exit__(self, *exc):
        self.proc.terminate()
        self.proc.wait(timeout=10)

    def get(self, name, path):
        return get(self.port, "/api/profiles/%s/%s" % (self.ids[name], path))

    def ref_at(self, name, event_name, ts_ns):
        """The ref of the event named event_name that starts at ts_ns."""
        q = urllib.parse.quote(event_name[:200])
        _, s = self.get(name, "search?q=%s&limit=1000" % q)
        refs = [m["ref"] for m in s["matches"] if m["name"] == event_name and m["start_us"] == us(ts_ns)]
        assert len(refs) == 1, (event_name, ts_ns, len(refs))
        return refs[0]


SERVER = None


def server():
    global SERVER
    if SERVER is None:
        need_fixtures()
        SERVER = Server().__enter__()
    return SERVER


def raw_pytorch():
    with gzip.open(os.path.join(FIXTURES, "chrome-json", PYTORCH), "rt") as f:
        doc = json.load(f, parse_float=Decimal)
    return doc["traceEvents"]


def ns(v):
    return int(Decimal(v) * 1000)


# ---- flows ----

def test_pytorch_kernel_links_to_its_launch_by_correlation():
    s = server()
    events = raw_pytorch()
    runtime = {e["args"]["correlation"]: e for e in events
               if e.get("ph") == "X" and e.get("cat") in ("cuda_runtime", "cuda_driver")
               and "correlation" in e.get("args", {})}
    kernels = [e for e in events if e.get("ph") == "X" and e.get("cat") == "kernel"
               and e["args"].get("correlation") in runtime]
    assert len(kernels) >= 10
    for k in kernels[:: len(kernels) // 5][:5]:
        launch = runtime[k["args"]["correlation"]]
        ref = s.ref_at(PYTORCH, k["name"], ns(k["ts"]))
        _, d = s.get(PYTORCH, "event?ref=" + ref)
        ins = [f for f in d["flows"] if f["direction"] == "in"]
        assert len(ins) == 1, d["flows"]
        f = ins[0]
        assert f["name"] == launch["name"] and f["start_us"] == us(ns(launch["ts"])), (f, launch)
        assert f["dur_us"] == us(ns(launch["dur"]))
        assert f["latency_us"] == us(ns(k["ts"]) - ns(launch["ts"])), f
        # and from the launch, out to the kernel
        _, back = s.get(PYTORCH, "event?ref=" + f["ref"])
        outs = [g for g in back["flows"] if g["direction"] == "out"]
        assert [g["ref"] for g in outs] == [ref], back["flows"]
        assert outs[0]["latency_us"] == f["latency_us"]


def read_xplane_corr(path):
    """(name, ts_ns, plane name) of every event with a correlation_id, by id."""
    out = {}
    for num, _, pv in fields(open(path, "rb").read()):
        if num != 1:
            continue
        names, stat_names, lines, pname = {}, {}, [], ""
        for n, _, v in fields(pv):
            if n == 2:
                pname = v.decode()
            elif n == 3:
                lines.append(v)
            elif n in (4, 5):
                entry = dict((a, b) for a, _, b in fields(v))
                meta = dict((a, b) for a, _, b in fields(entry.get(2, b"")))
                (names if n == 4 else stat_names)[signed64(entry.get(1, 0))] = \
                    meta.get(2, b"").decode("utf-8", "replace")
        corr_ids = {k for k, v in stat_names.items() if v == "correlation_id"}
        for line in lines:
            lf = list(fields(line))
            line_ts = next((v for n, _, v in lf if n == 3), 0)
            for n, _, ev in lf:
                if n != 4:
                    continue
                e = list(fields(ev))
                meta = next((v for a, _, v in e if a == 1), 0)
                off = next((v for a, _, v in e if a == 2), 0)
                for a, _, sv in e:
                    st = dict((x, y) for x, _, y in fields(sv)) if a == 4 else {}
                    if signed64(st.get(1, 0)) in corr_ids:
                        c = signed64(st.get(3, st.get(4, 0)))
                        out.setdefault(c, []).append((names.get(meta, ""), line_ts + off // 1000, pname))
    return out


def test_jax_gpu_kernel_links_to_its_launch():
    s = server()
    by_corr = read_xplane_corr(os.path.join(FIXTURES, "xplane", JAX))
    pairs = []
    for c, evs in sorted(by_corr.items()):
        dev = [e for e in evs if e[2].startswith("/device:")]
        host = [e for e in evs if not e[2].startswith("/device:")]
        if len(dev) == 1 and len(host) == 1:
            pairs.append((dev[0], host[0]))
    assert len(pairs) >= 10, len(pairs)
    for kernel, launch in pairs[:: len(pairs) // 4][:4]:
        ref = s.ref_at(JAX, kernel[0], kernel[1])
        _, d = s.get(JAX, "event?ref=" + ref)
        assert d["kind"] == "kernel", d["kind"]
        ins = [f for f in d["flows"] if f["direction"] == "in"]
        assert len(ins) == 1, d["flows"]
        assert ins[0]["name"] == launch[0] and ins[0]["start_us"] == us(launch[1]), (ins, launch)
        assert ins[0]["latency_us"] == us(kernel[1] - launch[1])
        assert ins[0]["via"] == "correlation"


def test_tf_dataflow_records_link_slices():
    s = server()
    with open(os.path.join(FIXTURES, "chrome-json", TF)) as f:
        events = json.load(f, parse_float=Decimal)["traceEvents"]
    starts = {e["id"]: e for e in events if e.get("ph") == "s"}
    steps = {e["id"]: e for e in events if e.get("ph") == "t"}
    checked = 0
    for fid, st in sorted(starts.items())[:6]:
        if fid not in steps:
            continue
        # the slices enclosing both records, on their threads
        src = [e for e in events if e.get("ph") == "X" and e["pid"] == st["pid"] and e["tid"] == st["tid"]
               and ns(e["ts"]) <= ns(st["ts"]) <= ns(e["ts"]) + ns(e["dur"])]
        dst_rec = steps[fid]
        dst = [e for e in events if e.get("ph") == "X" and e["pid"] == dst_rec["pid"] and e["tid"] == dst_rec["tid"]
               and ns(e["ts"]) <= ns(dst_rec["ts"]) <= ns(e["ts"]) + ns(e["dur"])]
        if len(src) != 1 or len(dst) != 1:
            continue
        ref = s.ref_at(TF, src[0]["name"], ns(src[0]["ts"]))
        _, d = s.get(TF, "event?ref=" + ref)
        outs = [f for f in d["flows"] if f["direction"] == "out" and f["via"] == "flow"]
        assert any(f["name"] == dst[0]["name"] and f["start_us"] == us(ns(dst[0]["ts"])) for f in outs), \
            (d["flows"], dst[0])
        checked += 1
    assert checked >= 2, checked


def test_bind_id_links_slices():
    s = server()
    producer = s.ref_at(COUNTERS, "producer", 1200000)
    consumer = s.ref_at(COUNTERS, "consumer", 1230500)
    _, d = s.get(COUNTERS, "event?ref=" + producer)
    assert [(f["ref"], f["direction"], f["via"], f["latency_us"]) for f in d["flows"]] == \
        [(consumer, "out", "bind_id", 30.5)], d["flows"]
    _, d = s.get(COUNTERS, "event?ref=" + consumer)
    assert [(f["ref"], f["direction"], f["latency_us"]) for f in d["flows"]] == [(producer, "in", 30.5)], d["flows"]


# ---- area selection ----

def raw_aggregate(slices, a, b):
    """{name: (count, total, self, min, max)} in ns over slices [(track, start, end, name)]."""
    rows = {}
    by_track = {}
    for sl in slices:
        if sl[2] < a or sl[1] > b:
            continue
        by_track.setdefault(sl[0], []).append(sl)
    for items in by_track.values():
        clip = [max(0, min(e, b) - max(s, a)) for _, s, e, _ in items]
        self_t = list(clip)
        for i, (_, s, e, _) in enumerate(items):
            # the innermost slice holding it: starts before it (or with it, longer)
            best = None
            for j, (_, ps, pe, _) in enumerate(items):
                if j == i or ps > s or pe < e or (ps == s and pe == e) or (pe == s and ps != s):
                    continue
                if best is None or (ps, -pe) > (items[best][1], -items[best][2]):
                    best = j
            if best is not None:
                self_t[best] -= clip[i]
        for i, (_, s, e, n) in enumerate(items):
            r = rows.setdefault(n, [0, 0, 0, None, None])
            r[0] += 1
            r[1] += clip[i]
            r[2] += self_t[i]
            r[3] = clip[i] if r[3] is None else min(r[3], clip[i])
            r[4] = clip[i] if r[4] is None else max(r[4], clip[i])
    return rows


def check_aggregate(s, name, slices, track_ids, a, b):
    path = "aggregate?start_us=%s&end_us=%s" % (us(a), us(b))
    if track_ids is not None:
        path += "&tracks=" + ",".join(str(t) for t in track_ids)
    status, ag = s.get(name, path)
    assert status == 200, ag
    want = raw_aggregate(slices, a, b)
    got = {r["name"]: r for r in ag["rows"]}
    assert set(got) == set(want), (sorted(set(got) ^ set(want)))[:5]
    assert ag["duration_us"] == us(b - a)
    for n, (count, total, self_t, mn, mx) in want.items():
        r = got[n]
        assert (r["count"], r["total_us"], r["self_us"], r["min_us"], r["max_us"]) == \
            (count, us(total), us(self_t), us(mn), us(mx)), (n, r, want[n])
    assert abs(sum(r["percent"] for r in ag["rows"]) - 100) < 1e-6
    return ag


def test_aggregate_matches_a_raw_sum_clipped_to_the_window():
    s = server()
    _, tr = s.get(PYTORCH, "tracks")
    track_of = {(p["pid"], t["tid"]): t["id"] for p in tr["processes"] for t in p["threads"]}
    # string pids and tids (Kineto's "Spans") are known by their names
    track_of.update({(p["name"], t["name"]): t["id"] for p in tr["processes"] for t in p["threads"]})
    slices = []
    for e in raw_pytorch():
        if e.get("ph") == "X" and "dur" in e:
            key = (e["pid"], e["tid"])
            slices.append((track_of[key], ns(e["ts"]), ns(e["ts"]) + ns(e["dur"]), e["name"]))
    a0 = min(sl[1] for sl in slices)
    b0 = max(sl[2] for sl in slices)
    a, b = a0 + (b0 - a0) // 3 + 417, a0 + (b0 - a0) * 2 // 3 + 1234
    # every track, then just the host thread and the busiest GPU stream
    check_aggregate(s, PYTORCH, slices, None, a, b)
    counts = {}
    for sl in slices:
        counts[sl[0]] = counts.get(sl[0], 0) + 1
    two = sorted(counts, key=counts.get)[-2:]
    ag = check_aggregate(s, PYTORCH, [sl for sl in slices if sl[0] in two], two, a, b)
    # a track named twice is summed once
    again = check_aggregate(s, PYTORCH, [sl for sl in slices if sl[0] in two], two + two[:1], a, b)
    assert again["rows"] == ag["rows"]
    # a slice cut by an edge counts once, clipped
    cut = [sl for sl in slices if sl[0] in two and sl[1] < a < sl[2]]
    assert cut, "the window cuts no slice: the clipping is untested"
    assert ag["tracks"] == 2


def test_aggregate_bad_requests():
    s = server()
    for q in ("start_us=10&end_us=5", "start_us=x", "tracks=1,,2", "tracks=99999"):
        status, body = s.get(PYTORCH, "aggregate?" + q)
        assert status == 400, (q, status, body)
        assert "error" in body
    status, _ = s.get(PYTORCH, "aggregate")
    assert status == 200


# ---- counters ----

def test_counters_match_the_raw_c_events():
    s = server()
    samples = {}
    for e in s.counter_events:
        if e["ph"] == "C":
            for k, v in e["args"].items():
                samples.setdefault(k, []).append((ns(Decimal(repr(e["ts"]))), v))
    all_ts = [t for v in samples.values() for t, _ in v]
    a = min(all_ts) + (max(all_ts) - min(all_ts)) // 4 + 333
    b = a + (max(all_ts) - min(all_ts)) // 3
    for res in (7, 300, 20000):
        status, c = s.get(COUNTERS, "counters?start_us=%s&end_us=%s&resolution=%d" % (us(a), us(b), res))
        assert status == 200, c
        got = {x["series"]: x for x in c["counters"]}
        assert set(got) == {"allocated", "ratio"}, got.keys()
        for key, pts in samples.items():
            inside = [v for t, v in pts if a <= t <= b]
            before = [v for t, v in pts if t < a]
            series = got[key]
            assert series["name"] == "mem"
            assert sum(p[4] for p in series["points"]) == len(inside), (key, res)
            assert min(p[1] for p in series["points"]) == min(inside)
            assert max(p[2] for p in series["points"]) == max(inside)
            assert series["points"][-1][3] == inside[-1]
            assert series["initial"] == before[-1]
            assert len(series["points"]) <= res


def test_pytorch_memory_totals_are_counters():
    s = server()
    mem = [e for e in raw_pytorch() if e.get("ph") == "i" and e.get("name") == "[memory]"
           and "Total Allocated" in e.get("args", {})]
    assert mem, "no [memory] totals in the fixture"
    status, c = s.get(PYTORCH, "counters?resolution=50")
    assert status == 200, c
    _, tr = s.get(PYTORCH, "tracks")
    track_of = {(p["pid"], t["tid"]): t["id"] for p in tr["processes"] for t in p["threads"]}
    # one series per track and device (CPU allocations say Device Id -1)
    got = {(x["track"], x["device"]): x for x in c["counters"] if x["series"] == "Total Allocated"}
    want = {}
    for e in mem:
        want.setdefault((track_of[(e["pid"], e["tid"])], e["args"]["Device Id"]), []).append(e)
    assert set(got) == set(want), (got.keys(), want.keys())
    for track, evs in want.items():
        pts = got[track]["points"]
        assert sum(p[4] for p in pts) == len(evs)
        assert max(p[2] for p in pts) == max(e["args"]["Total Allocated"] for e in evs)
        assert min(p[1] for p in pts) == min(e["args"]["Total Allocated"] for e in evs)
        assert got[track]["name"] == "[memory]"


def test_counters_bad_requests():
    s = server()
    for q in ("resolution=0", "resolution=20001", "start_us=5&end_us=5", "end_us=nan"):
        status, body = s.get(COUNTERS, "counters?" + q)
        assert status == 400, (q, status, body)


def done():
    if SERVER:
        SERVER.__exit__(None, None, None)


if __name__ == "__main__":
    if not BIN:
        print("SKIP: XPV_BIN not set")
        sys.exit(77)
    import atexit
    atexit.register(done)
    main([test_pytorch_kernel_links_to_its_launch_by_correlation, test_jax_gpu_kernel_links_to_its_launch,
          test_tf_dataflow_records_link_slices, test_bind_id_links_slices, test_aggregate_matches_a_raw_sum_clipped_to_the_window,
          test_aggregate_bad_requests, test_counters_match_the_raw_c_events,
          test_pytorch_memory_totals_are_counters, test_counters_bad_requests])
