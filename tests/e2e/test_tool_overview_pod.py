#!/usr/bin/env python3
"""test_tool_overview_pod.py: XProf's overview_page and our pod_viewer
tools on the real server, over a run of three hosts this test writes with
known step and kernel times (host B slow on step 2), and, when
../shared/fixtures is there, the device figures of the xplane fixtures
against an independent decoding of their device planes.

Covers the TensorBoard routes (run_tools, hosts with ALL_HOSTS, data,
data_csv) and the REST ones (/api/profiles/{id}/tools[/tag])."""
import csv
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import xpv_e2e as e2e  # noqa: E402

RUN = "2025_01_01_00_00_00"
NSYS = "saxpy-mpi-a100-nsys-2022.2.sqlite"
# host -> per step (step duration µs, kernel µs); one GPU each, kernels do not overlap
HOSTS = {
    "host-a": [(1000, 600), (1000, 600), (1000, 600)],
    "host-b": [(1000, 600), (1000, 600), (1600, 600)],
    "host-c": [(1000, 900), (1000, 900), (1000, 900)],
}


def host_trace(steps):
    ev = [{"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "python"}},
          {"ph": "M", "name": "process_name", "pid": 0, "args": {"name": "GPU 0"}}]
    t = 1000.0
    for n, (dur, kern) in enumerate(steps):
        ev.append({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#%d" % n, "pid": 1,
                   "tid": 1, "ts": t, "dur": dur})
        ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1,
                   "tid": 1, "ts": t + 1, "dur": 1, "args": {"correlation": 100 + n}})
        ev.append({"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": t + 10,
                   "dur": kern, "args": {"device": 0, "stream": 7, "correlation": 100 + n}})
        t += dur
    return {"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "Test GPU"}],
            "traceEvents": ev}


class Server:
    def __init__(self, with_fixtures):
        d = e2e.tmpdir("xpv-tools-")
        self.prof = os.path.join(d, "profiles")
        run_dir = os.path.join(self.prof, "plugins", "profile", RUN)
        os.makedirs(run_dir)
        for host, steps in HOSTS.items():
            with open(os.path.join(run_dir, host + ".pt.trace.json"), "w") as f:
                json.dump(host_trace(steps), f)
        if with_fixtures:
            fx = os.path.join(self.prof, "plugins", "profile", "fixtures")
            os.makedirs(fx)
            for name in ("jax-rocm-mi300x-gemm.xplane.pb", "jax-tpu-v6e-inference.xplane.pb"):
                shutil.copy(os.path.join(e2e.FIXTURES, "xplane", name), fx)
            shutil.copy(os.path.join(e2e.FIXTURES, "nsys", NSYS), fx)
        self.port = e2e.free_port()
        self.proc = subprocess.Popen(
            [e2e.BIN, "--profile-dir=" + self.prof, "--db=" + os.path.join(d, "i.sqlite"),
             "--port=%d" % self.port, "--perfetto-port=0", "--quiet"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        e2e.wait_indexed(self.port)
        self.profiles = {p["host"]: p for p in self.json("/api/profiles")["profiles"]}

    def get(self, path):
        return e2e.http_get(self.port, path)

    def json(self, path, status=200):
        st, _, body = self.get(path)
        assert st == status, (path, st, body[:300])
        return json.loads(body)

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        self.proc.wait(timeout=30)


S = None


def tb(route, **q):
    return "/data/plugin/profile/%s?%s" % (route, urllib.parse.urlencode(q))


def table_rows(dt):
    ids = [c["id"] for c in dt["cols"]]
    return [dict(zip(ids, [cell["v"] for cell in r["c"]])) for r in dt["rows"]]


def test_run_tools_and_hosts():
    tools = S.json(tb("run_tools", run=RUN))
    assert tools[0] == "trace_viewer", tools
    assert {"overview_page", "kernel_stats", "pod_viewer"} <= set(tools), tools
    hosts = [h["hostname"] for h in S.json(tb("hosts", run=RUN, tag="pod_viewer"))]
    assert hosts == ["ALL_HOSTS"], hosts  # one host alone has no pod
    hosts = [h["hostname"] for h in S.json(tb("hosts", run=RUN, tag="overview_page"))]
    assert hosts == ["ALL_HOSTS"] + sorted(HOSTS), hosts
    hosts = [h["hostname"] for h in S.json(tb("hosts", run=RUN, tag="kernel_stats"))]
    assert hosts == sorted(HOSTS), hosts  # kernel_stats does not merge hosts
    # a tool that cannot merge hosts has no ALL_HOSTS answer; an unknown tool none at all
    assert S.json(tb("data", run=RUN, tag="kernel_stats", host="ALL_HOSTS"), 404) == \
        {"error": "No Data"}
    S.json(tb("data", run=RUN, tag="no_such_tool", host="host-a"), 404)


def test_unknown_profile_and_trace_viewer():
    for path in ("/api/profiles/0000000000000001/tools",
                 "/api/profiles/0000000000000001/tools/overview_page"):
        assert S.json(path, 404) == {"error": "no such profile"}, path
    pid = S.profiles["host-a"]["id"]
    assert "trace_viewer" in S.json("/api/profiles/%s/tools" % pid)
    doc = S.json("/api/profiles/%s/tools/trace_viewer" % pid)  # listed, so it answers
    assert sum(1 for e in doc["traceEvents"] if e["ph"] == "X") == 9


def test_pod_viewer_equals_the_written_steps():
    dt = S.json(tb("data", run=RUN, tag="pod_viewer", host="ALL_HOSTS"))
    rows = table_rows(dt)
    want = []
    for step in range(3):
        durs = {h: HOSTS[h][step][0] for h in HOSTS}
        for h in sorted(HOSTS):
            dur, kern = HOSTS[h][step]
            want.append({"step": step, "host": h, "step_time_us": dur, "compute_us": kern,
                         "idle_us": dur - kern,
                         "slowest": dur == max(durs.values()) > min(durs.values()),
                         "behind_fastest_us": dur - min(durs.values())})
    got = [{k: r[k] for k in want[0]} for r in rows]
    assert got == want, got
    # steps 0 and 1 take as long on every host: no slowest; B alone on step 2
    assert dt["p"]["slowest_host"] == "host-b (slowest on 1 of 3 steps)", dt["p"]
    # hosts=a,b: only those two
    two = table_rows(S.json(tb("data", run=RUN, tag="pod_viewer", hosts="host-a,host-b")))
    assert {r["host"] for r in two} == {"host-a", "host-b"} and len(two) == 6
    # the same table as CSV and as our JSON
    st, ctype, body = S.get(tb("data_csv", run=RUN, tag="pod_viewer", host="ALL_HOSTS"))
    assert st == 200 and ctype.startswith("text/csv"), (st, ctype)
    lines = list(csv.reader(io.StringIO(body.decode())))
    assert len(lines) == 1 + len(want) and lines[0][0] == "Step", lines[:2]
    pid = S.profiles["host-a"]["id"]
    assert "pod_viewer" in S.json("/api/profiles/%s/tools" % pid)
    ours = S.json("/api/profiles/%s/tools/pod_viewer" % pid)
    assert [{k: r[k] for k in want[0]} for r in ours["rows"]] == want


def test_overview_page_numbers_and_advice():
    pid = S.profiles["host-a"]["id"]
    ov = S.json("/api/profiles/%s/tools/overview_page" % pid)
    rows = {(r["section"], r["metric"]): r for r in ov["rows"]}
    assert rows[("environment", "hosts")]["value"] == 1
    assert rows[("steps", "steps")]["value"] == 3
    assert rows[("steps", "average step time")]["value"] == 1000
    dur = sum(d for d, _ in HOSTS["host-a"])
    kern = sum(k for _, k in HOSTS["host-a"])
    assert abs(rows[("step time breakdown", "compute")]["value"] - 100.0 * kern / dur) < 1e-9
    assert abs(rows[("step time breakdown", "idle")]["value"] - 100.0 * (dur - kern) / dur) < 1e-9
    assert rows[("top ops", "gemm")]["value"] == kern
    # 40% idle: input- or host-bound, with the number in the words
    assert ov["properties"]["bottleneck"] == "input or host", ov["properties"]
    assert "40.0%" in ov["properties"]["recommendation"], ov["properties"]
    busy = S.json("/api/profiles/%s/tools/overview_page" % S.profiles["host-c"]["id"])
    assert busy["properties"]["bottleneck"] == "compute", busy["properties"]
    # every host at once
    allh = S.json("/api/profiles/%s/tools/overview_page?hosts=all" % pid)
    rows = {(r["section"], r["metric"]): r for r in allh["rows"]}
    assert rows[("environment", "hosts")]["value"] == 3
    # across hosts a step lasts as long as its slowest host: 1000, 1000, 1600
    assert rows[("steps", "steps")]["value"] == 3
    assert rows[("steps", "slowest step")]["value"] == 1600
    assert rows[("steps", "fastest step")]["value"] == 1000
    assert abs(rows[("steps", "average step time")]["value"] - 3600 / 3) < 1e-9
    dur = sum(d for h in HOSTS for d, _ in HOSTS[h])
    kern = sum(k for h in HOSTS for _, k in HOSTS[h])
    assert abs(rows[("step time breakdown", "compute")]["value"] - 100.0 * kern / dur) < 1e-9


def test_overview_step_time_graph():
    """The step-time graph rows: per step, the step's time and compute and
    idle time averaged over the scope's devices (one GPU per host here),
    hosts aligned by step number, against the written steps."""
    def graph(path):
        rows = [r for r in S.json(path)["rows"] if r["section"] == "step time graph"]
        return {r["step"]: r for r in rows}
    g = graph("/api/profiles/%s/tools/overview_page" % S.profiles["host-b"]["id"])
    assert sorted(g) == [0, 1, 2], g
    for n, (dur, kern) in enumerate(HOSTS["host-b"]):
        assert g[n]["metric"] == "step %d" % n and g[n]["unit"] == "µs", g[n]
        assert abs(g[n]["value"] - dur) < 1e-9 and abs(g[n]["compute_us"] - kern) < 1e-9, g[n]
        assert abs(g[n]["idle_us"] - (dur - kern)) < 1e-9, g[n]
        assert g[n]["collective_us"] == 0 and g[n]["memset_us"] == 0, g[n]
    g = graph("/api/profiles/%s/tools/overview_page?hosts=all" % S.profiles["host-a"]["id"])
    for n in range(3):
        durs = [HOSTS[h][n][0] for h in HOSTS]
        kerns = [HOSTS[h][n][1] for h in HOSTS]
        assert abs(g[n]["value"] - sum(durs) / 3) < 1e-9, (n, g[n])
        assert abs(g[n]["compute_us"] - sum(kerns) / 3) < 1e-9, (n, g[n])
        assert g[n]["detail"] == "average of 3 step rows", g[n]
    # the other sections leave the graph's columns unknown
    other = [r for r in S.json("/api/profiles/%s/tools/overview_page" % S.profiles["host-a"]["id"])["rows"]
             if r["section"] != "step time graph"]
    assert other and all(r["step"] is None and r["compute_us"] is None for r in other), other[:2]


def test_pod_viewer_on_a_generated_run():
    """A run of three hosts from xpv-gen: every (step, host) row's step time
    is that host's StepTraceAnnotation for the step, read from the raw
    trace JSON twin (earliest start to latest end over its threads)."""
    if not e2e.GEN or not os.path.exists(e2e.GEN):
        print("  (skipped: XPV_GEN not set)")
        return
    import gzip
    from decimal import Decimal
    root = e2e.tmpdir("xpv-pod-gen-")
    prof = os.path.join(root, "profiles")
    r = subprocess.run([e2e.GEN, "--out", prof, "--kind", "jax", "--hosts", "3", "--steps", "6",
                        "--size", "3MB", "--seed", "7"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    want = {}
    for dirpath, _, files in os.walk(prof):
        for name in files:
            if not name.endswith(".trace.json.gz"):
                continue
            host = name[:-len(".trace.json.gz")]
            with gzip.open(os.path.join(dirpath, name), "rt") as f:
                events = json.load(f, parse_float=Decimal)["traceEvents"]
            spans = {}
            for e in events:
                step = (e.get("args") or {}).get("step_num")
                if e.get("ph") == "X" and step is not None:
                    a, b = Decimal(e["ts"]), Decimal(e["ts"]) + Decimal(e["dur"])
                    lo, hi = spans.get(int(step), (a, b))
                    spans[int(step)] = (min(lo, a), max(hi, b))
            for step, (a, b) in spans.items():
                want[(step, host)] = float(b - a)
    assert len({h for _, h in want}) == 3, want
    port = e2e.free_port()
    proc = subprocess.Popen([e2e.BIN, "--profile-dir=" + prof, "--db=" + os.path.join(root, "i.db"),
                             "--port=%d" % port, "--perfetto-port=0", "--quiet"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        e2e.wait_indexed(port)
        run = json.loads(e2e.http_get(port, "/data/plugin/profile/runs")[2])[0]
        st, _, body = e2e.http_get(port, tb("data", run=run, tag="pod_viewer", host="ALL_HOSTS"))
        assert st == 200, body[:200]
        got = {(r["step"], r["host"]): r["step_time_us"] for r in table_rows(json.loads(body))}
        assert got.keys() == want.keys(), (sorted(got)[:4], sorted(want)[:4])
        for k in want:
            assert abs(got[k] - want[k]) < 1e-6, (k, got[k], want[k])
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)


def test_tools_on_an_nsys_export():
    """kernel_stats and overview_page of an Nsight Systems export against SQL
    over its CUPTI kernel table: every kernel counted, time summed exactly."""
    if not e2e.FIXTURES or not os.path.isdir(e2e.FIXTURES):
        print("  (skipped: ../shared/fixtures not found)")
        return
    import sqlite3
    src = sqlite3.connect("file:%s?mode=ro" % os.path.join(e2e.FIXTURES, "nsys", NSYS), uri=True)
    count, total_ns = src.execute("SELECT count(*), sum([end] - start) FROM"
                                  " CUPTI_ACTIVITY_KIND_KERNEL").fetchone()
    host = NSYS[:-len(".sqlite")]
    run = S.profiles[host]["run"]
    rows = table_rows(S.json(tb("data", run=run, tag="kernel_stats", host=host)))
    assert sum(r["occurrences"] for r in rows) == count, (rows, count)
    assert abs(sum(r["total_duration_us"] for r in rows) - total_ns / 1000) < 1e-6
    ov = S.json("/api/profiles/%s/tools/overview_page" % S.profiles[host]["id"])
    top = [r for r in ov["rows"] if r["section"] == "top ops"]
    assert top and abs(top[0]["value"] - max(r["total_duration_us"] for r in rows)) < 1e-6, top


def plane_stats(path):
    """{device plane name: {stat name: value}} by an independent protobuf walk."""
    from test_analysis import message, text
    import struct
    with open(path, "rb") as f:
        space = message(f.read())
    out = {}
    for pb in space[1]:
        plane = message(pb)
        name = text(plane, 2)
        if not name.startswith("/device:"):
            continue
        names = {}
        for e in plane[5]:
            m = message(e)
            meta = message(m[2][0]) if m.get(2) else {}
            names[m[1][0] if m.get(1) else 0] = text(meta, 2)
        stats = {}
        for sb in plane[6]:
            s = message(sb)
            key = names.get(s[1][0] if s.get(1) else 0)
            if s.get(2):  # double, fixed64
                stats[key] = struct.unpack("<d", s[2][0].to_bytes(8, "little"))[0] \
                    if isinstance(s[2][0], int) else struct.unpack("<d", s[2][0])[0]
            elif s.get(3) or s.get(4):
                stats[key] = (s.get(3) or s.get(4))[0]
            elif s.get(5):
                stats[key] = s[5][0].decode()
        out[name[len("/device:"):]] = stats
    return out


def test_overview_device_figures_from_the_planes():
    if not e2e.FIXTURES or not os.path.isdir(e2e.FIXTURES):
        print("  (skipped: ../shared/fixtures not found)")
        return
    for name, stat in (("jax-rocm-mi300x-gemm", "core_count"), ("jax-rocm-mi300x-gemm", "memory_size"),
                       ("jax-tpu-v6e-inference", "peak_teraflops_per_second")):
        planes = plane_stats(os.path.join(e2e.FIXTURES, "xplane", name + ".xplane.pb"))
        want = {p: s[stat] for p, s in planes.items() if stat in s}
        assert want, (name, stat)
        ov = S.json("/api/profiles/%s/tools/overview_page" % S.profiles[name]["id"])
        got = [r for r in ov["rows"] if r["section"] == "device" and r["metric"] == stat]
        assert len(got) == len(set(want.values())), got
        assert {r["value"] for r in got} == set(want.values()), (got, want)
        assert sum(int(r["detail"].split(" device")[0].split("; ")[-1]) for r in got) == len(want)


def test_overview_top_ops_merge_hosts():
    """overview_page's top ops for every host of a generated run of four
    hosts: each name's device time summed over the hosts' rows (added up in
    Python from the index's per-host kernel_stats rows), kernels before XLA
    ops, largest first, with each one's share of its kind's time."""
    if not e2e.GEN or not os.path.exists(e2e.GEN):
        print("  (skipped: XPV_GEN not set)")
        return
    import sqlite3
    root = e2e.tmpdir("xpv-top-ops-")
    prof, db = os.path.join(root, "profiles"), os.path.join(root, "i.db")
    r = subprocess.run([e2e.GEN, "--out", prof, "--kind", "jax", "--hosts", "4", "--steps", "4",
                        "--size", "1MB", "--seed", "11", "--no-json"], capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stderr
    port = e2e.free_port()
    proc = subprocess.Popen([e2e.BIN, "--profile-dir=" + prof, "--db=" + db,
                             "--port=%d" % port, "--perfetto-port=0", "--quiet"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        e2e.wait_indexed(port, 4)
        run = json.loads(e2e.http_get(port, "/data/plugin/profile/runs")[2])[0]
        st, _, body = e2e.http_get(port, tb("data", run=run, tag="overview_page",
                                            host="ALL_HOSTS"))
        assert st == 200, body[:200]
        got = [r for r in table_rows(json.loads(body)) if r["section"] == "top ops"]
        with sqlite3.connect(db) as c:
            rows = c.execute("SELECT kind, name, total_ps FROM kernel_stats WHERE device=-1 AND"
                             " kind IN ('kernel', 'xla_op')").fetchall()
            hosts = c.execute("SELECT count(DISTINCT profile_id) FROM kernel_stats").fetchone()[0]
        assert hosts == 4
        sums, totals = {}, {}
        for kind, name, ps in rows:
            sums[(kind, name)] = sums.get((kind, name), 0) + ps
            totals[kind] = totals.get(kind, 0) + ps
        assert len(sums) > 5 and len(rows) > len(sums), (len(rows), len(sums))
        want = sorted(sums.items(), key=lambda kv: (kv[0][0] == "xla_op", -kv[1], kv[0][1]))[:5]
        assert [r["metric"] for r in got] == [name for (_, name), _ in want], (got, want)
        for r, ((kind, _), ps) in zip(got, want):
            assert abs(r["value"] - ps / 1e6) < 1e-6, (r, ps)
            share = 100.0 * ps / totals[kind]
            assert r["detail"] == "%s, %.1f%% of all %s time" % (kind, share, kind), (r, share)
        check_ranks(db)
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
    # The same answer from a scan of every row (the path taken when the
    # ranked rows cannot prove the answer).
    port = e2e.free_port()
    proc = subprocess.Popen([e2e.BIN, "--profile-dir=" + prof, "--db=" + db,
                             "--port=%d" % port, "--perfetto-port=0", "--quiet"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env=dict(os.environ, XPV_TOP_OPS_SCAN="1"))
    try:
        e2e.wait_indexed(port, 4)
        st, _, scanned = e2e.http_get(port, tb("data", run=run, tag="overview_page",
                                               host="ALL_HOSTS"))
        assert st == 200 and scanned == body, (scanned[:300], body[:300])
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)


def check_ranks(db):
    """Each host's all-devices kernel rows: top_rank is the name's place by
    time (ties by name) for the first 32 names, NULL beyond; the profile's
    kernel_totals holds the kind's total and its count of names."""
    import sqlite3
    with sqlite3.connect(db) as c:
        hosts = c.execute("SELECT id, kernel_totals FROM profiles").fetchall()
        checked = 0
        for pid, totals in hosts:
            totals = json.loads(totals)
            for kind in ("kernel", "xla_op", "memcpy", "memset", "hlo_category"):
                rows = c.execute("SELECT name, total_ps, top_rank FROM kernel_stats WHERE"
                                 " profile_id=? AND kind=? AND device=-1", (pid, kind)).fetchall()
                if not rows:
                    assert kind not in totals, (kind, totals)
                    continue
                order = sorted(rows, key=lambda r: (-r[1], r[0]))
                want = [i + 1 if i < 32 else None for i in range(len(order))]
                assert [r[2] for r in order] == want, kind
                assert totals[kind] == [sum(r[1] for r in rows), len(rows)], (kind, totals)
            devices = c.execute("SELECT kind, device FROM kernel_device_stats WHERE"
                                " profile_id=?", (pid,)).fetchall()
            checked += len(devices)
            for kind, dev in devices:  # ranks are the all-devices rows' alone
                assert all(r["top_rank"] is None for r in e2e.kernel_rows(c, pid, kind, dev))
    assert checked, "no device rows to check"


def test_top_ops_completed_on_hosts_where_unranked():
    """A kernel first on one host and past the ranked names on another
    (rank 41 of 41) must have its time there added: the merged top ops of
    three hand-made traces against sums in Python, with and without the
    ranked rows."""
    root = e2e.tmpdir("xpv-top-unranked-")
    prof = os.path.join(root, "profiles")
    run_dir = os.path.join(prof, "plugins", "profile", "run")
    os.makedirs(run_dir)
    plan = {h: {"k%02d" % i: 1000 - 10 * i for i in range(40)} for h in ("a", "b", "c")}
    plan["a"]["X"], plan["b"]["X"] = 5000, 1
    for host, kernels in plan.items():
        ev = [{"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "python"}},
              {"ph": "M", "name": "process_name", "pid": 0, "args": {"name": "GPU 0"}}]
        t = 1000
        for n, (name, dur) in enumerate(sorted(kernels.items())):
            ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1,
                       "tid": 1, "ts": t, "dur": 1, "args": {"correlation": n + 1}})
            ev.append({"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": 7,
                       "ts": t + 5, "dur": dur,
                       "args": {"device": 0, "stream": 7, "correlation": n + 1}})
            t += dur + 10
        with open(os.path.join(run_dir, "host-%s.pt.trace.json" % host), "w") as f:
            json.dump({"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "Test GPU"}],
                       "traceEvents": ev}, f)
    sums = {}
    for kernels in plan.values():
        for name, dur in kernels.items():
            sums[name] = sums.get(name, 0) + dur
    want = sorted(sums.items(), key=lambda kv: (-kv[1], kv[0]))[:5]
    assert want[0] == ("X", 5001), want
    bodies = []
    for env in ({}, {"XPV_TOP_OPS_SCAN": "1"}):
        port = e2e.free_port()
        proc = subprocess.Popen([e2e.BIN, "--profile-dir=" + prof,
                                 "--db=" + os.path.join(root, "i.db"), "--port=%d" % port,
                                 "--perfetto-port=0", "--quiet"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                env=dict(os.environ, **env))
        try:
            e2e.wait_indexed(port, 3)
            st, _, body = e2e.http_get(port, tb("data", run="run", tag="overview_page",
                                                host="ALL_HOSTS"))
            assert st == 200, body[:300]
            bodies.append(body)
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=30)
    got = [r for r in table_rows(json.loads(bodies[0])) if r["section"] == "top ops"]
    assert [(r["metric"], r["value"]) for r in got] == want, (got, want)
    assert bodies[0] == bodies[1]


if __name__ == "__main__":
    if not e2e.BIN or not os.path.exists(e2e.BIN):
        print("SKIP: XPV_BIN not set")
        sys.exit(e2e.SKIP)
    S = Server(bool(e2e.FIXTURES) and os.path.isdir(e2e.FIXTURES))
    try:
        e2e.main([test_run_tools_and_hosts, test_unknown_profile_and_trace_viewer,
                  test_pod_viewer_equals_the_written_steps,
                  test_overview_page_numbers_and_advice, test_overview_step_time_graph,
                  test_overview_device_figures_from_the_planes,
                  test_pod_viewer_on_a_generated_run, test_tools_on_an_nsys_export,
                  test_overview_top_ops_merge_hosts,
                  test_top_ops_completed_on_hosts_where_unranked])
    finally:
        S.stop()
