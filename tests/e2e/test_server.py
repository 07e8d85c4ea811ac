#!/usr/bin/env python3
"""test_server.py: the real xprof-view server on free ports, against copies of
the shared fixtures plus a small trace this test writes itself.

Every route is checked for status, content type, shape and numbers: kernel
and step numbers against the index read here with sqlite3, and against an
independent count of the raw PyTorch fixture; the trace export against the
stored event counts and, for the test's own trace, against the exact input
times. Also: ETag/304, gzip, CSV, HEAD, keep-alive, the Perfetto listener
(CORS, POST 404), each kind of bad request (4xx JSON error, server still
alive), a re-scan picking up a new file, a busy port, and SIGTERM.
"""
import collections
import csv
import gzip
import http.client
import io
import json
import os
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import xpv_e2e as e2e  # noqa: E402

FIXTURE_FILES = [
    "chrome-json/pytorch-v100-resnet50.pt.trace.json.gz",
    "chrome-json/pytorch-h100-bert-small.json.gz",
    "nsys/pytorch-rtx2070-nsys-2022.1.sqlite",
    "xplane/jax-tpu-v6e-inference.xplane.pb",
]
RESNET = "pytorch-v100-resnet50.pt.trace.json.gz"
OWN = "own.pt.trace.json"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def own_trace():
    """A tiny PyTorch-style trace with exact, known times (µs with 3 decimals)
    and nesting: step > op > child on the CPU thread, kernels on a stream."""
    ev = [
        {"ph": "M", "name": "process_name", "pid": 7, "args": {"name": "python"}},
        {"ph": "M", "name": "thread_name", "pid": 7, "tid": 7, "args": {"name": "main"}},
        {"ph": "M", "name": "process_name", "pid": 0, "args": {"name": "GPU 0"}},
        {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 7, "tid": 7,
         "ts": 1000.0, "dur": 500.0},
        {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 7, "tid": 7,
         "ts": 1010.125, "dur": 100.5, "args": {"note": "outer", "n": 3}},
        {"ph": "X", "cat": "cpu_op", "name": "aten::child", "pid": 7, "tid": 7,
         "ts": 1020.25, "dur": 10.001, "args": {"ratio": 0.25}},
        {"ph": "X", "cat": "kernel", "name": "gemm_kernel", "pid": 0, "tid": 7,
         "ts": 1100.5, "dur": 40.25,
         "args": {"device": 0, "stream": 7, "correlation": 11, "grid": [4, 2, 1],
                  "block": [128, 1, 1], "registers per thread": 32}},
        {"ph": "X", "cat": "kernel", "name": "gemm_kernel", "pid": 0, "tid": 7,
         "ts": 1200.5, "dur": 60.75,
         "args": {"device": 0, "stream": 7, "correlation": 12, "grid": [4, 2, 1],
                  "block": [128, 1, 1], "registers per thread": 32}},
        {"ph": "X", "cat": "kernel", "name": "relu_kernel", "pid": 0, "tid": 7,
         "ts": 1300.0, "dur": 5.5, "args": {"device": 0, "stream": 7, "correlation": 13}},
        # Kineto's whole microseconds make a sub-µs kernel "dur": 0: still a kernel.
        {"ph": "X", "cat": "kernel", "name": "fill_kernel", "pid": 0, "tid": 7,
         "ts": 1350.0, "dur": 0, "args": {"device": 0, "stream": 7, "correlation": 14}},
        {"ph": "i", "s": "t", "name": "marker", "pid": 7, "tid": 7, "ts": 1400.0},
    ]
    return {"schemaVersion": 1, "deviceProperties": [], "traceEvents": ev}


class Server:
    def __init__(self):
        e2e.need_fixtures()
        self.dir = e2e.tmpdir("xpv-server-")
        self.prof = os.path.join(self.dir, "profiles")
        os.makedirs(self.prof)
        now = time.time()
        for i, rel in enumerate(FIXTURE_FILES):
            dst = os.path.join(self.prof, os.path.basename(rel))
            shutil.copyfile(os.path.join(e2e.FIXTURES, rel), dst)
            os.utime(dst, (now - 1000 + i, now - 1000 + i))
        own = os.path.join(self.prof, OWN)
        with open(own, "w") as f:
            json.dump(own_trace(), f)
        os.utime(own, (now - 10, now - 10))  # the newest: "latest"
        self.db = os.path.join(self.dir, "index.sqlite")
        self.port, self.pport = free_port(), free_port()
        self.proc = self.start(self.port, self.pport)
        self.wait_indexed()

    def start(self, port, pport, *extra):
        args = [e2e.BIN, "--profile-dir=" + self.prof, "--db=" + self.db, "--port=%d" % port,
                "--perfetto-port=%d" % pport] + list(extra)
        return subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def request(self, path, method="GET", headers=None, port=None, body=None):
        c = http.client.HTTPConnection("127.0.0.1", port or self.port, timeout=30)
        c.request(method, path, body=body, headers=headers or {})
        r = c.getresponse()
        data = r.read()
        c.close()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, data

    def json(self, path, status=200, **kw):
        st, h, data = self.request(path, **kw)
        assert st == status, (path, st, data[:300])
        assert h["content-type"].startswith("application/json"), h
        return json.loads(data)

    def wait_indexed(self, timeout=120):
        end = time.time() + timeout
        while time.time() < end:
            assert self.proc.poll() is None, self.proc.communicate()
            try:
                h = self.json("/api/health")
                counts = h["status_counts"]
                if h["indexing"]["runs"] >= 1 and not h["indexing"]["active"] and \
                        not counts.get("pending"):
                    return h
            except (OSError, http.client.HTTPException):
                pass
            time.sleep(0.2)
        raise AssertionError("indexing did not finish")

    def alive(self):
        assert self.proc.poll() is None, "server died"
        assert self.request("/api/health")[0] == 200

    def sql(self, query, *params):
        con = sqlite3.connect("file:%s?mode=ro" % self.db, uri=True)
        try:
            return con.execute(query, params).fetchall()
        finally:
            con.close()

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            self.proc.wait(timeout=30)


S = None


def profile_by_path(name):
    for p in S.json("/api/profiles")["profiles"]:
        if p["path"] == name:
            return p
    raise AssertionError("no profile " + name)


# ---- routes ----

def test_health_and_urls():
    h = S.json("/api/health")
    assert h["version"] and h["ui"] == "both", h
    assert h["profiles"] == len(FIXTURE_FILES) + 1, h
    assert h["status_counts"].get("ok") == len(FIXTURE_FILES) + 1, h
    assert h["perfetto"]["port"] == S.pport, h
    assert h["indexing"]["total"] >= 0 and h["indexing"]["current"] is None


def test_profiles_list_latest_and_one():
    lst = S.json("/api/profiles")["profiles"]
    assert len(lst) == len(FIXTURE_FILES) + 1
    keys = {"id", "path", "run", "host", "format", "producer", "size_bytes", "mtime", "status",
            "error", "events", "start_us", "duration_us", "devices"}
    for p in lst:
        assert keys <= set(p), set(p) ^ keys
        assert len(p["id"]) == 16 and int(p["id"], 16) >= 0
        assert p["status"] == "ok", p
        assert p["events"] == S.sql("SELECT events FROM profiles WHERE path=?", p["path"])[0][0]
    mt = [p["mtime_ns"] for p in lst]
    assert mt == sorted(mt, reverse=True), "not newest first"
    latest = S.json("/api/profiles/latest")
    assert latest["path"] == OWN and latest == lst[0]
    for p in lst:
        assert S.json("/api/profiles/" + p["id"]) == p


def kernel_rows(pid_hex, kind="kernel", device=-1):
    return S.sql("SELECT name, count, total_ps, min_ps, max_ps, median_ps FROM kernel_stats"
                 " WHERE profile_id=? AND kind=? AND device=?", int(pid_hex, 16), kind, device)


def test_kernels_equal_index_rows():
    checked = 0
    for p in S.json("/api/profiles")["profiles"]:
        k = S.json("/api/profiles/%s/kernels" % p["id"])
        rows = kernel_rows(p["id"], k["kind"])
        assert k["profile"] == p["id"] and len(k["kernels"]) == len(rows) == k["total_rows"]
        by_key = collections.Counter((r[0], r[1], r[2]) for r in rows)
        got = collections.Counter((x["name"], x["count"], round(x["total_us"] * 1e6))
                                  for x in k["kernels"])
        assert by_key == got, p["path"]
        assert k["total_count"] == sum(r[1] for r in rows), p["path"]
        top = S.json("/api/profiles/%s/kernels?limit=2" % p["id"])
        assert len(top["kernels"]) == min(2, len(rows)), p["path"]
        assert (top["total_rows"], top["total_count"]) == (k["total_rows"], k["total_count"])
        totals = [x["total_us"] for x in k["kernels"]]
        assert totals == sorted(totals, reverse=True)
        if rows:
            assert k["kernel_time_us"] == sum(r[2] for r in rows) / 1e6
            for x in k["kernels"]:
                assert x["min_us"] <= x["avg_us"] <= x["max_us"], x
                for key in ("name", "count", "total_us", "avg_us", "median_us", "min_us", "max_us",
                            "stddev_us", "percent", "device", "op", "grid", "block",
                            "registers_per_thread", "shared_memory_bytes", "occupancy_pct"):
                    assert key in x, key
            checked += 1
    assert checked >= 3, "too few profiles with kernels"


def test_kernels_equal_raw_pytorch_count():
    """Independent: group the raw fixture's kernel events by name, those with
    "dur": 0 included; count and total must equal the API."""
    with gzip.open(os.path.join(S.prof, RESNET), "rt") as f:
        raw = json.load(f)["traceEvents"]
    want = collections.defaultdict(lambda: [0, 0])
    for e in raw:
        if e.get("ph") == "X" and e.get("cat") in ("Kernel", "kernel"):
            want[e["name"]][0] += 1
            want[e["name"]][1] += round(e["dur"] * 1000)  # ns, exact for these integer µs
    k = S.json("/api/profiles/%s/kernels" % profile_by_path(RESNET)["id"])
    got = collections.defaultdict(lambda: [0, 0])
    for x in k["kernels"]:
        got[x["name"]][0] += x["count"]
        got[x["name"]][1] += round(x["total_us"] * 1000)
    assert dict(want) == dict(got)
    assert sum(v[0] for v in want.values()) == 8772
    assert any(e["dur"] == 0 for e in raw if e.get("cat") == "Kernel"), "no zero-length kernel"
    assert round(k["kernel_time_us"] * 1000) == sum(v[1] for v in want.values())


def test_kernels_own_trace_exact():
    k = S.json("/api/profiles/latest/kernels")
    rows = {x["name"]: x for x in k["kernels"]}
    assert set(rows) == {"gemm_kernel", "relu_kernel", "fill_kernel"}, rows
    f = rows["fill_kernel"]
    assert (f["count"], f["total_us"], f["min_us"], f["median_us"]) == (1, 0, 0, 0), f
    g = rows["gemm_kernel"]
    assert (g["count"], g["total_us"], g["min_us"], g["max_us"], g["avg_us"]) == \
        (2, 101.0, 40.25, 60.75, 50.5), g
    assert rows["relu_kernel"]["total_us"] == 5.5
    assert k["kernel_time_us"] == 106.5


def test_kernels_sort_order_limit_csv():
    pid = profile_by_path(RESNET)["id"]
    base = "/api/profiles/%s/kernels" % pid
    full = S.json(base)["kernels"]
    names = [x["name"] for x in S.json(base + "?sort=name")["kernels"]]
    assert names == sorted(names)
    counts = [x["count"] for x in S.json(base + "?sort=count&order=asc")["kernels"]]
    assert counts == sorted(counts)
    mx = [x["max_us"] for x in S.json(base + "?sort=max")["kernels"]]
    assert mx == sorted(mx, reverse=True)
    avg = [x["avg_us"] for x in S.json(base + "?sort=avg")["kernels"]]
    assert avg == sorted(avg, reverse=True)
    assert S.json(base + "?limit=2")["kernels"] == full[:2]
    assert S.json(base + "?device=0")["device"] == 0
    st, h, data = S.request(base + "?format=csv")
    assert st == 200 and h["content-type"].startswith("text/csv"), h
    assert "attachment" in h.get("content-disposition", "")
    rows = list(csv.DictReader(io.StringIO(data.decode())))
    assert [r["name"] for r in rows] == [x["name"] for x in full]
    assert [int(r["count"]) for r in rows] == [x["count"] for x in full]
    assert [float(r["total_us"]) for r in rows] == [x["total_us"] for x in full]
    for kind in ("memcpy", "memset", "xla_op", "hlo_category"):
        k = S.json(base + "?kind=" + kind)
        assert k["kind"] == kind and len(k["kernels"]) == len(kernel_rows(pid, kind))


def test_steps_equal_index_rows():
    for p in S.json("/api/profiles")["profiles"]:
        s = S.json("/api/profiles/%s/steps" % p["id"])
        rows = S.sql("SELECT step, duration_ps, compute_ps FROM steps WHERE profile_id=? AND"
                     " device=-1 ORDER BY step, start_ps", int(p["id"], 16))
        assert s["source"] == (p["step_source"] or "none"), (s["source"], p["step_source"])
        assert [x["step"] for x in s["steps"]] == [r[0] for r in rows]
        assert [x["duration_us"] for x in s["steps"]] == \
            [None if r[1] is None else r[1] / 1e6 for r in rows]
        for x in s["steps"]:
            for key in ("step", "name", "start_us", "duration_us", "compute_us", "collective_us",
                        "memcpy_us", "memset_us", "idle_us", "host_wait_us",
                        "kernel_wait_us", "idle_other_us"):
                assert key in x
            assert p["start_us"] <= x["start_us"] <= p["start_us"] + p["duration_us"], x
            assert abs(x["start_us"] - (s["profile_start_us"] + x["offset_us"])) < 0.002, x
    with gzip.open(os.path.join(S.prof, RESNET), "rt") as f:
        raw = json.load(f)["traceEvents"]
    want = sorted(int(e["name"].split("#")[1]) for e in raw
                  if e.get("ph") == "X" and e.get("name", "").startswith("ProfilerStep#"))
    s = S.json("/api/profiles/%s/steps" % profile_by_path(RESNET)["id"])
    assert s["source"] == "profiler_step" and [x["step"] for x in s["steps"]] == want
    raw_start = {int(e["name"].split("#")[1]): e["ts"] for e in raw
                 if e.get("ph") == "X" and e.get("name", "").startswith("ProfilerStep#")}
    assert {x["step"]: x["start_us"] for x in s["steps"]} == raw_start


def test_tracks():
    for p in S.json("/api/profiles")["profiles"]:
        t = S.json("/api/profiles/%s/tracks" % p["id"])
        threads = [th for pr in t["processes"] for th in pr["threads"]]
        assert sum(th["events"] for th in threads) == p["events"], p["path"]
        db = {r[0]: r[1] for r in S.sql("SELECT id, events FROM tracks WHERE profile_id=?",
                                         int(p["id"], 16))}
        assert {th["id"]: th["events"] for th in threads} == db
    t = S.json("/api/profiles/latest/tracks")
    names = {pr["name"]: [th["name"] for th in pr["threads"]] for pr in t["processes"]}
    assert names.get("python") == ["main"], names
    assert {pr["name"]: pr["title"] for pr in t["processes"]} == {"python": "python",
                                                                   "GPU 0": "GPU 0"}
    # Kineto names the host and every GPU "python": titles tell them apart,
    # from process_labels and deviceProperties, as Perfetto shows them.
    t = S.json("/api/profiles/%s/tracks" % profile_by_path(RESNET)["id"])
    titles = {pr["pid"]: pr["title"] for pr in t["processes"] if pr["name"] == "python"}
    assert titles[0] == "GPU 0 \u00b7 Tesla V100-DGXS-32GB", titles
    assert titles[25738] == "CPU \u00b7 python 25738", titles
    assert len(set(titles.values())) == len(titles), titles


def test_events_window_exact_and_nested():
    own = S.json("/api/profiles/latest")
    w = S.json("/api/profiles/latest/events?start_us=990&end_us=1600&resolution=2000")
    names = w["names"]
    got = []
    for tr in w["tracks"]:
        for start, dur, name, depth, ref in tr["events"]:
            got.append((names[name], start, dur, depth))
        assert not tr["spans"], tr["spans"]
    want = [("ProfilerStep#1", 1000, 500, 0), ("aten::mm", 1010.125, 100.5, 1),
            ("aten::child", 1020.25, 10.001, 2), ("gemm_kernel", 1100.5, 40.25, 0),
            ("gemm_kernel", 1200.5, 60.75, 0), ("relu_kernel", 1300, 5.5, 0),
            ("fill_kernel", 1350, 0, 0), ("marker", 1400, None, 1)]
    assert sorted(got) == sorted(want), got
    assert own["events"] == len(want)
    # every ref opens the same event, with its args resolved
    for tr in w["tracks"]:
        for start, dur, name, depth, ref in tr["events"]:
            d = S.json("/api/profiles/latest/event?ref=" + ref)
            assert d["name"] == names[name] and d["start_us"] == start and d["dur_us"] == dur
            if d["name"] == "aten::mm":
                assert d["args"] == {"note": "outer", "n": 3} and d["thread"] == "main", d
            if d["name"] == "aten::child":
                assert d["args"] == {"ratio": 0.25}, d


def test_events_summaries_bounded():
    p = profile_by_path(RESNET)
    for res in (50, 400):
        w = S.json("/api/profiles/%s/events?resolution=%d" % (p["id"], res))
        assert w["resolution"] == res
        total = 0
        for tr in w["tracks"]:
            assert len(tr["spans"]) <= res and len(tr["events"]) <= 50 * res
            total += len(tr["events"]) + sum(s[2] for s in tr["spans"])
            for s in tr["spans"]:
                assert s[0] <= s[1] and s[2] >= 1 and (s[3] == -1 or 0 <= s[3] < len(w["names"]))
        # counts are spread from block headers: all events of the profile, give or take rounding
        assert abs(total - p["events"]) <= p["events"] * 0.02 + 50, (total, p["events"])
    # a narrow window: everything individual, each event really inside it
    t0 = p["start_us"] + p["duration_us"] / 2
    w = S.json("/api/profiles/%s/events?start_us=%r&end_us=%r&resolution=1000" %
               (p["id"], t0, t0 + 200))
    for tr in w["tracks"]:
        for start, dur, name, depth, ref in tr["events"]:
            assert start <= t0 + 200.001 and start + dur >= t0 - 0.001
    tr_ids = [tr["id"] for tr in w["tracks"]][:2]
    if tr_ids:
        w2 = S.json("/api/profiles/%s/events?start_us=%r&end_us=%r&tracks=%s" %
                    (p["id"], t0, t0 + 200, ",".join(map(str, tr_ids))))
        assert sorted(tr["id"] for tr in w2["tracks"]) == sorted(tr_ids)


def trace_counts(data):
    doc = json.loads(data)
    assert "metadata" not in doc and isinstance(doc["traceEvents"], list)
    return doc, collections.Counter(e["ph"] for e in doc["traceEvents"])


def test_trace_export_counts():
    for p in S.json("/api/profiles")["profiles"]:
        st, h, data = S.request("/api/profiles/%s/trace" % p["id"])
        assert st == 200 and h["content-type"] == "application/json", (st, h)
        assert "filename=" in h["content-disposition"], h
        doc, ph = trace_counts(data)
        assert sum(v for k, v in ph.items() if k != "M") == p["events"], (p["path"], ph)
        stored_x = S.sql("SELECT phase_counts FROM profiles WHERE path=?", p["path"])[0][0]
        assert ph["X"] == json.loads(stored_x).get("X", 0), p["path"]
        pids = {e["pid"] for e in doc["traceEvents"]}
        assert all(abs(x) < 2 ** 53 for x in pids)
    st, h, data = S.request("/api/profiles/latest/trace")
    doc, _ = trace_counts(data)
    xs = sorted((e["name"], e["ts"], e["dur"]) for e in doc["traceEvents"] if e["ph"] == "X")
    want = sorted((e["name"], e["ts"], e["dur"]) for e in own_trace()["traceEvents"]
                  if e["ph"] == "X")
    assert xs == want, xs
    named = {(e["name"], e["args"]["name"]) for e in doc["traceEvents"] if e["ph"] == "M" and
             e["name"] in ("process_name", "thread_name")}
    assert ("process_name", "python") in named and ("thread_name", "main") in named


def test_trace_window():
    """?start_us&end_us exports the events that overlap the window, whole,
    with the metadata; trace_viewer@ takes the same window in ms."""
    def xs(path):
        st, h, data = S.request(path)
        assert st == 200, (path, st, data[:200])
        doc, _ = trace_counts(data)
        named = {e["args"]["name"] for e in doc["traceEvents"] if e["ph"] == "M"}
        assert "python" in named, named
        return sorted((e["name"], e["ts"]) for e in doc["traceEvents"] if e["ph"] != "M")
    want = sorted((e["name"], e["ts"]) for e in own_trace()["traceEvents"]
                  if e["ph"] == "X" and e["ts"] <= 1210 and e["ts"] + e["dur"] >= 1090)
    assert [n for n, _ in want] == ["ProfilerStep#1", "aten::mm", "gemm_kernel", "gemm_kernel"]
    assert xs("/api/profiles/latest/trace?start_us=1090&end_us=1210") == want
    own = S.json("/api/profiles/latest")
    tv = "/data/plugin/profile/data?run=%s&tag=trace_viewer@&host=%s" % (own["run"], own["host"])
    assert xs(tv + "&start_time_ms=1.09&end_time_ms=1.21&resolution=100") == want
    assert len(xs(tv)) == own["events"]
    for bad in ("start_us=1090", "start_us=5&end_us=1", "start_us=x&end_us=2"):
        st, h, data = S.request("/api/profiles/latest/trace?" + bad)
        assert st == 400 and b"error" in data, (bad, st)
    st, h, data = S.request(tv + "&start_time_ms=2")
    assert st == 400, st


def test_trace_gzip_and_etag():
    p = profile_by_path(RESNET)
    path = "/api/profiles/%s/trace" % p["id"]
    st, h, plain = S.request(path)
    st2, h2, zipped = S.request(path, headers={"Accept-Encoding": "gzip"})
    assert st2 == 200 and h2.get("content-encoding") == "gzip"
    assert gzip.decompress(zipped) == plain
    assert S.request(path, headers={"If-None-Match": h["etag"]})[0] == 304


def test_etag_gzip_content_types():
    for path in ("/api/profiles", "/api/profiles/latest/kernels", "/", "/api/profiles/latest"):
        st, h, body = S.request(path)
        assert st == 200 and h.get("etag"), (path, h)
        st, h2, body2 = S.request(path, headers={"If-None-Match": h["etag"]})
        assert st == 304 and body2 == b"", path
        assert S.request(path, headers={"If-None-Match": '"other"'})[0] == 200
    st, h, body = S.request("/api/profiles", headers={"Accept-Encoding": "gzip, deflate"})
    assert h.get("content-encoding") == "gzip"
    assert json.loads(gzip.decompress(body)) == S.json("/api/profiles")
    st, h, body = S.request("/api/profiles", headers={"Accept-Encoding": "gzip;q=0"})
    assert "content-encoding" not in h
    st, h, body = S.request("/")
    assert st == 200 and h["content-type"].startswith("text/html") and b"<html" in body.lower()
    st, h, body = S.request("/timeline")
    assert st == 200 and h["content-type"].startswith("text/html")
    st, h, body = S.request("/api/profiles", method="HEAD")
    assert st == 200 and body == b""


def test_keep_alive():
    c = http.client.HTTPConnection("127.0.0.1", S.port, timeout=10)
    c.connect()
    sock = c.sock
    for path in ("/api/profiles/latest", "/api/profiles/latest/kernels", "/",
                 "/api/profiles/latest/trace", "/api/nothing", "/api/profiles/latest"):
        c.request("GET", path)
        r = c.getresponse()
        r.read()
        assert r.status in (200, 404) and not r.will_close, (path, r.getheaders())
        assert (r.getheader("Connection") or "").lower() != "close", path
    assert c.sock is sock, "the connection was not kept alive"
    c.close()


def test_perfetto_listener():
    pid = S.json("/api/profiles/latest")["id"]
    perfetto = {"Origin": "https://ui.perfetto.dev"}
    st, h, data = S.request("/%s.json" % pid, port=S.pport, headers=perfetto)
    assert st == 200 and h.get("access-control-allow-origin") == "https://ui.perfetto.dev", h
    assert "content-disposition" not in h
    _, ph = trace_counts(data)
    assert sum(v for k, v in ph.items() if k != "M") == len(own_trace()["traceEvents"]) - 3
    assert S.request("/latest.json", port=S.pport)[0] == 200
    st, h, data = S.request("/status", method="POST", port=S.pport, body=b"x" * 100,
                            headers=perfetto)
    assert st == 404 and h.get("access-control-allow-origin") == "https://ui.perfetto.dev"
    st, h, data = S.request("/status", method="POST", port=S.pport)
    assert st == 404
    st, h, _ = S.request("/%s.json" % pid, method="OPTIONS", port=S.pport,
                         headers={"Origin": "https://ui.perfetto.dev",
                                  "Access-Control-Request-Method": "GET"})
    assert st in (200, 204) and h.get("access-control-allow-origin") == "https://ui.perfetto.dev"
    for bad in ("/nope.json", "/0000000000000001.json", "/../etc/passwd", "/"):
        st, h, data = S.request(bad, port=S.pport)
        assert st == 404 and json.loads(data)["error"], bad
    out = S.proc.stdout.readline() + S.proc.stdout.readline() + S.proc.stdout.readline() + \
        S.proc.stdout.readline()
    assert "https://ui.perfetto.dev/#!/?url=http://127.0.0.1:%d/" % S.pport in out, out


def test_tensorboard_routes():
    base = "/data/plugin/profile/"
    own = S.json("/api/profiles/latest")
    runs = S.json(base + "runs")
    assert own["run"] in runs and runs == sorted(set(runs), key=runs.index), runs
    run = own["run"]
    hosts = S.json(base + "hosts?run=%s&tag=trace_viewer" % run)
    assert {"hostname": own["host"]} in hosts, hosts
    tools = S.json(base + "run_tools?run=" + run)
    tools = S.json(base + "run_tools?run=" + run)
    # the run holds the TPU fixture too, whose XLA ops give the HLO tools
    assert tools[0] == "trace_viewer" and {"overview_page", "input_pipeline_analyzer",
                                           "framework_op_stats", "kernel_stats", "op_profile",
                                           "hlo_stats"} <= set(tools), tools
    table = S.json(base + "data?run=%s&tag=kernel_stats&host=%s" % (run, own["host"]))
    cols = [c["id"] for c in table["cols"]]
    rows = [dict(zip(cols, [cell["v"] for cell in r["c"]])) for r in table["rows"]]
    assert [(r["rank"], r["kernel_name"], r["occurrences"], r["total_duration_us"]) for r in rows] \
        == [(1, "gemm_kernel", 2, 101.0), (2, "relu_kernel", 1, 5.5), (3, "fill_kernel", 1, 0)], rows
    st, h, data = S.request(base + "data?run=%s&tag=trace_viewer&host=%s" % (run, own["host"]))
    assert st == 200
    _, ph = trace_counts(data)
    assert sum(v for k, v in ph.items() if k != "M") == own["events"]
    for bad, status in (("data?run=%s&tag=memory_profile&host=%s" % (run, own["host"]), 404),
                        ("data?run=nope&tag=trace_viewer", 404), ("data?tag=trace_viewer", 400),
                        ("hosts", 400), ("nothing", 404)):
        st, h, data = S.request(base + bad)
        assert st == status and json.loads(data)["error"], (bad, st)


BAD_REQUESTS = [
    ("/../etc/passwd", 400), ("/%2e%2e/%2e%2e/etc/passwd", 400), ("/js/../../etc/passwd", 400),
    ("//etc/passwd", 400), ("/%2Fetc%2Fpasswd", 400), ("/etc/passwd", 404),
    ("/static/../../server/serve.c", 400), ("/api/../api/health", 400),
    ("/api/profiles/xyz", 400), ("/api/profiles/00000000000000zz/kernels", 400),
    ("/api/profiles/0000000000000001", 404), ("/api/profiles/0000000000000001/kernels", 404),
    ("/api/profiles/0000000000000001/trace", 404), ("/api/profiles/latest/nothing", 404),
    ("/api/nothing", 404), ("/api/profiles/latest/kernels?limit=abc", 400),
    ("/api/profiles/latest/kernels?limit=99999999999999999999999", 400),
    ("/api/profiles/latest/kernels?limit=-5", 400), ("/api/profiles/latest/kernels?device=x", 400),
    ("/api/profiles/latest/kernels?sort=bogus", 400),
    # the profile's state answers before a bad sort, as the kernels answer checks in that order
    ("/api/profiles/00000000000000ff/kernels?sort=bogus", 404),
    ("/api/profiles/latest/kernels?order=sideways", 400),
    ("/api/profiles/latest/kernels?format=xml", 400),
    ("/api/profiles/latest/kernels?kind=nope", 400), ("/api/profiles/latest/steps?device=1e9", 400),
    ("/api/profiles/latest/events?start_us=abc", 400),
    ("/api/profiles/latest/events?start_us=1e300", 400),
    ("/api/profiles/latest/events?start_us=inf", 400),
    ("/api/profiles/latest/events?start_us=10&end_us=5", 400),
    ("/api/profiles/latest/events?resolution=0", 400),
    ("/api/profiles/latest/events?resolution=99999999999", 400),
    ("/api/profiles/latest/events?tracks=1,,2", 400),
    ("/api/profiles/latest/events?tracks=99999", 400),
    ("/api/profiles/latest/event?ref=abc", 400), ("/api/profiles/latest/event?ref=1:-1", 400),
    ("/api/profiles/latest/event?ref=99999999:0", 404),
    ("/api/profiles/latest/event?ref=" + "9" * 40 + ":1", 400),
    ("/" + "a" * 20000, 414), ("/api/profiles?x=" + "b" * 20000, 414),
    ("/api/" + "a" * (8193 - 5), 414),
]


def test_bad_requests():
    for path, status in BAD_REQUESTS:
        c = http.client.HTTPConnection("127.0.0.1", S.port, timeout=10)
        c.putrequest("GET", path, skip_accept_encoding=True)
        c.endheaders()
        r = c.getresponse()
        body = r.read()
        c.close()
        assert r.status == status, (path[:80], r.status, body[:200])
        assert r.getheader("Content-Type") == "application/json", path[:80]
        assert json.loads(body)["error"], path[:80]
    S.alive()


def test_longest_url_reaches_the_routes():
    """A path of exactly the longest length let through is matched against
    the route table like any other, not dropped to the static files."""
    st, _, body = e2e.http_get(S.port, "/api/" + "a" * (8192 - 5))
    assert st == 404 and json.loads(body)["error"] == "no such API route", (st, body[:100])


def test_bad_methods_and_headers():
    for m in ("POST", "PUT", "DELETE", "PATCH", "BREW"):
        st, h, body = S.request("/api/profiles", method=m, body=b"{}")
        assert st == 405 and "GET" in h.get("allow", ""), (m, st)
        assert json.loads(body)["error"]
    st, h, body = S.request("/api/health", headers={"X-Big": "a" * 40000})
    assert st == 431 and json.loads(body)["error"]
    # headers beyond the connection's memory: libmicrohttpd refuses them itself
    with socket.create_connection(("127.0.0.1", S.port), timeout=10) as s:
        s.sendall(b"GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Huge: " + b"a" * 600000 + b"\r\n\r\n")
        reply = s.recv(100)
        assert reply == b"" or reply.split()[1].startswith(b"4"), reply
    for raw in (b"GARBAGE\r\n\r\n", b"GET\r\n\r\n", b"GET /api/health HTTP/9.9\r\n\r\n",
                b"\x00\x01\x02\r\n\r\n", b"GET http://evil/../../etc/passwd HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"):
        with socket.create_connection(("127.0.0.1", S.port), timeout=10) as s:
            s.sendall(raw)
            s.settimeout(3)
            try:
                reply = s.recv(4096)
            except (ConnectionResetError, TimeoutError, socket.timeout):
                reply = b""  # libmicrohttpd waits for more, or drops the connection
            assert reply == b"" or reply.split()[1][:1] in (b"4", b"5"), (raw, reply[:100])
            assert b"root:" not in reply
    S.alive()


def test_rescan_finds_new_file():
    src = os.path.join(e2e.FIXTURES, "chrome-json/pytorch-gp100-user-annotations.json.gz")
    dst = os.path.join(S.prof, "late-arrival.json.gz")
    shutil.copyfile(src, dst)
    end = time.time() + 60
    while time.time() < end:
        paths = {p["path"]: p["status"] for p in S.json("/api/profiles")["profiles"]}
        if paths.get("late-arrival.json.gz") == "ok":
            break
        time.sleep(0.5)
    else:
        raise AssertionError("the new file was not indexed: %r" % paths)
    os.unlink(dst)


def test_busy_port():
    r = e2e.run(["--profile-dir=" + S.prof, "--db=" + os.path.join(S.dir, "other.sqlite"),
                 "--port=%d" % S.port, "--perfetto-port=0"], timeout=60)
    assert r.returncode != 0, r
    assert "already in use" in r.stderr and "--port" in r.stderr, r.stderr
    assert "Traceback" not in r.stderr and "Segmentation" not in r.stderr
    S.alive()


def test_busy_perfetto_port_is_a_warning():
    port = free_port()
    p = S.start(port, S.pport, "--db=" + os.path.join(S.dir, "third.sqlite"))
    try:
        end = time.time() + 30
        while time.time() < end:
            try:
                if S.request("/api/health", port=port)[0] == 200:
                    break
            except OSError:
                time.sleep(0.2)
        h = json.loads(S.request("/api/health", port=port)[2])
        assert h["perfetto"] is None, h
    finally:
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=30)
    assert p.returncode == 0, (p.returncode, err)
    assert "warning" in err and "already in use" in err, err


def test_sigterm_shuts_down_cleanly():
    S.stop()
    assert S.proc.returncode == 0, S.proc.returncode


def main():
    global S
    if not e2e.BIN or not os.path.exists(e2e.BIN):
        print("SKIP: XPV_BIN is not set")
        sys.exit(e2e.SKIP)
    S = Server()
    try:
        e2e.main([test_health_and_urls, test_profiles_list_latest_and_one,
                  test_kernels_equal_index_rows, test_kernels_equal_raw_pytorch_count,
                  test_kernels_own_trace_exact, test_kernels_sort_order_limit_csv, test_trace_window,
                  test_steps_equal_index_rows, test_tracks, test_events_window_exact_and_nested,
                  test_events_summaries_bounded, test_trace_export_counts,
                  test_trace_gzip_and_etag, test_etag_gzip_content_types, test_keep_alive,
                  test_perfetto_listener, test_tensorboard_routes, test_bad_requests, test_bad_methods_and_headers,
                  test_rescan_finds_new_file, test_busy_port,
                  test_busy_perfetto_port_is_a_warning, test_sigterm_shuts_down_cleanly])
    finally:
        if S.proc.poll() is None:
            S.proc.kill()


if __name__ == "__main__":
    main()
