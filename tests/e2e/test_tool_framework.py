"""End-to-end test of XProf's framework_op_stats and input_pipeline_analyzer
tools on the real binary, over copies of the fixtures and two traces this
test writes itself (known nesting, launches and data-loader gaps, with
the expected numbers worked out by hand below).

Every route of the two tools is called: run_tools, hosts, data, data_csv
(TensorBoard plugin), /api/profiles/{id}/tools[/{tag}] with format=csv and
hosts=all. Framework-op rows (occurrences, total and self time, type) are
compared exactly with an independent reading of the raw files in Python:
Kineto JSON with integer ns from the decimal text, the TensorFlow timeline,
and xplane protobufs through test_xplane.py's wire decoder. Ranks and
shares are checked as XProf defines them (device rows first, shares of
each side summing to 1). The input pipeline's per-step numbers are checked
on the self-written trace and on the ResNet-50 fixture, whose
single-process DataLoader makes it input-bound. Tools without data are
not listed and answer 404 "No Data".
"""
import csv
import gzip
import io
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import urllib.error
import urllib.parse
import urllib.request
from collections import defaultdict
from decimal import Decimal

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import xpv_e2e as e2e  # noqa: E402
from xpv_e2e import BIN, FIXTURES, need_fixtures, tmpdir, main  # noqa: E402
from test_xplane import fields  # noqa: E402
from hlo_protos import instructions  # noqa: E402

FOS, IPA = "framework_op_stats", "input_pipeline_analyzer"
RUN = "own/2025_01_01_00_00_00"
FIXTURE_FILES = [
    "chrome-json/pytorch-v100-resnet50.pt.trace.json.gz",
    "chrome-json/pytorch-h100-bert-small.json.gz",
    "chrome-json/pytorch-gp100-user-annotations.json.gz",
    "chrome-json/pytorch-rocm-mi210-gpu-only.json.gz",
    "chrome-json/tf1-xla-gpu-timeline.ctf.json",
    "xplane/jax-tpu-v6e-inference.xplane.pb",
    "xplane/jax-rocm-mi300x-gemm.xplane.pb",
]
FOS_COLS = ["rank", "host_or_device", "type", "operation", "occurrences", "total_time_in_us",
            "avg_time_in_us", "total_self_time_in_us", "avg_self_time_in_us",
            "total_self_time_as_fraction", "cumulative_total_self_time_as_fraction"]


# ---- the traces this test writes ----

def op(name, ts, dur, tid=7, cat="cpu_op"):
    return {"ph": "X", "cat": cat, "name": name, "pid": 7, "tid": tid, "ts": ts, "dur": dur}


def launch(corr, ts, dur=2, tid=7):
    return {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 7, "tid": tid,
            "ts": ts, "dur": dur, "args": {"correlation": corr}}


def kernel(name, ts, dur, corr=None):
    args = {"device": 0, "stream": 7}
    if corr is not None:
        args["correlation"] = corr
    return {"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": 7, "ts": ts, "dur": dur,
            "args": args}


HEAD = [{"ph": "M", "name": "process_name", "pid": 7, "args": {"name": "python"}},
        {"ph": "M", "name": "process_name", "pid": 0, "args": {"name": "GPU 0"}}]


def ops_trace():
    """Nesting with known self times: two aten::linear each holding an
    aten::addmm, launches inside ops, two ops with the same span (the first
    written is the parent), a second thread, a memcpy, a kernel no launch
    explains, and a step marker that is no op."""
    ev = HEAD + [
        op("ProfilerStep#1", 1000, 600),
        op("aten::linear", 1010, 100), op("aten::t", 1012, 3), op("aten::addmm", 1020, 80),
        launch(1, 1030, 5), op("aten::empty", 1040.5, 0.75), launch(2, 1050),
        op("aten::linear", 1200, 60), op("aten::addmm", 1210, 40), launch(3, 1220),
        op("aten::relu", 1300, 20), launch(4, 1305),
        op("aten::zero_", 1400, 10), op("aten::fill_", 1400, 10), launch(5, 1405),
        op("aten::copy_", 1500, 10),
        {"ph": "X", "cat": "cuda_runtime", "name": "cudaMemcpyAsync", "pid": 7, "tid": 7,
         "ts": 1502, "dur": 3, "args": {"correlation": 6}},
        op("aten::mm", 1010, 20, tid=8),
        kernel("gemm1", 1100, 40, 1), kernel("gemm2", 1140, 10.5, 2), kernel("gemm3", 1260, 30, 3),
        kernel("relu_kernel", 1310, 5.25, 4), kernel("fill_kernel", 1410, 0, 5),
        {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD (Pageable -> Device)", "pid": 0,
         "tid": 7, "ts": 1510, "dur": 2, "args": {"device": 0, "stream": 7, "correlation": 6}},
        kernel("orphan", 1550, 7, 99),
    ]
    return {"schemaVersion": 1, "traceEvents": ev}


# side, operation -> (type, occurrences, total µs, self µs), by hand from ops_trace()
OPS_WANT = {
    ("Host", "aten::linear"): ("aten::linear", 2, 160, (100 - 3 - 80) + (60 - 40)),
    ("Host", "aten::t"): ("aten::t", 1, 3, 3),
    ("Host", "aten::addmm"): ("aten::addmm", 2, 120, 80 - 0.75 + 40),
    ("Host", "aten::empty"): ("aten::empty", 1, 0.75, 0.75),
    ("Host", "aten::relu"): ("aten::relu", 1, 20, 20),
    ("Host", "aten::zero_"): ("aten::zero_", 1, 10, 0),
    ("Host", "aten::fill_"): ("aten::fill_", 1, 10, 10),
    ("Host", "aten::copy_"): ("aten::copy_", 1, 10, 10),
    ("Host", "aten::mm"): ("aten::mm", 1, 20, 20),
    ("Device", "aten::addmm"): ("aten::addmm", 2, 80.5, 80.5),
    ("Device", "aten::linear"): ("aten::linear", 2, 80.5, 0),
    ("Device", "aten::relu"): ("aten::relu", 1, 5.25, 5.25),
    ("Device", "aten::fill_"): ("aten::fill_", 1, 0, 0),
    ("Device", "aten::zero_"): ("aten::zero_", 1, 0, 0),
    ("Device", "aten::copy_"): ("aten::copy_", 1, 2, 2),
}
OPS_ORDER = ["Device aten::addmm", "Device aten::relu", "Device aten::copy_",
             "Device aten::linear", "Device aten::fill_", "Device aten::zero_",
             "Host aten::addmm", "Host aten::linear", "Host aten::mm", "Host aten::relu",
             "Host aten::copy_", "Host aten::fill_", "Host aten::t", "Host aten::empty",
             "Host aten::zero_"]

LOADER = "enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__"


def input_trace():
    """Three steps that each start by loading data:
    step 1 [1000,2000): the loader runs [1000,1300) with the device idle;
    step 2 [2000,3000): the loader runs [2000,2400) but a kernel launched in
      step 1 keeps the device busy until 2150: 250 µs of waiting (kernels
      [2450,2900) and [2900,3050) follow);
    step 3 [3000,3500): the loader [3000,3100) overlaps a kernel until 3050,
      a Python `next` [3200,3260) and an infeed kernel [3300,3350) follow:
      50 + 60 + 50 µs of waiting."""
    ev = HEAD + [
        op("ProfilerStep#1", 1000, 1000), op("ProfilerStep#2", 2000, 1000),
        op("ProfilerStep#3", 3000, 500),
        op(LOADER, 1000, 300), op("aten::addmm", 1310, 90), launch(1, 1320), launch(2, 1390),
        op(LOADER, 2000, 400), op("aten::addmm", 2410, 90), launch(3, 2420), launch(4, 2480),
        op(LOADER, 3000, 100), op("next", 3200, 60, cat="python_function"),
        kernel("gemm", 1330, 470, 1), kernel("gemm", 1850, 300, 2), kernel("gemm", 2450, 450, 3),
        kernel("gemm", 2900, 150, 4), kernel("infeed.1", 3300, 50),
    ]
    return {"schemaVersion": 1, "traceEvents": ev}


# step -> (step, wait, host input, infeed, idle) in µs, by hand from input_trace()
INPUT_WANT = {
    1: (1000, 300, 300, 0, 1000 - 470 - 150),
    2: (1000, 250, 400, 0, 1000 - 150 - 450 - 100),
    3: (500, 160, 160, 50, 500 - 50 - 50),
}


# ---- the server ----

def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    def __enter__(self):
        root = tmpdir("xpv-tools-")
        prof = os.path.join(root, "profiles")
        own = os.path.join(prof, "own", "plugins", "profile", "2025_01_01_00_00_00")
        os.makedirs(own)
        for rel in FIXTURE_FILES:
            shutil.copyfile(os.path.join(FIXTURES, rel), os.path.join(prof, os.path.basename(rel)))
        with open(os.path.join(own, "ops.pt.trace.json"), "w") as f:
            json.dump(ops_trace(), f)
        with open(os.path.join(own, "input.pt.trace.json"), "w") as f:
            json.dump(input_trace(), f)
        self.port = free_port()
        self.proc = subprocess.Popen(
            [BIN, "--profile-dir=" + prof, "--port=%d" % self.port, "--perfetto-port=0",
             "--db=" + os.path.join(root, "i.sqlite"), "--quiet"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        e2e.wait_indexed(self.port)
        self.profiles = {p["host"]: p for p in self.get("/api/profiles")[2]["profiles"]}
        return self

    def __exit__(self, *exc):
        self.proc.terminate()
        self.proc.wait(timeout=10)

    def get(self, path):
        """(status, content type, body: JSON parsed unless CSV)."""
        try:
            with urllib.request.urlopen("http://127.0.0.1:%d%s" % (self.port, path),
                                        timeout=60) as r:
                body, status, ctype = r.read(), r.status, r.headers["Content-Type"]
        except urllib.error.HTTPError as e:
            body, status, ctype = e.read(), e.code, e.headers["Content-Type"]
        text = body.decode()
        return status, ctype, text if ctype.startswith("text/csv") else json.loads(text)

    def ok(self, path):
        status, _, body = self.get(path)
        assert status == 200, (path, status, body)
        return body

    def tool(self, host, tag, query=""):
        pid = self.profiles[host]["id"]
        return self.ok("/api/profiles/%s/tools/%s%s" % (pid, tag, query))

    def tb(self, route, **params):
        return "/data/plugin/profile/%s?%s" % (route, urllib.parse.urlencode(params))


S = None  # the one server every test uses


def by_op(table):
    return {(r["host_or_device"], r["operation"]): r for r in table["rows"]}


def check_table_shape(table):
    """XProf's columns; ranks 1..n with device rows first, each side in
    decreasing self time; shares of each side sum to 1, cumulative in rank
    order, ending at 1; averages are totals over occurrences."""
    assert [c["id"] for c in table["columns"]] == FOS_COLS, table["columns"]
    rows = table["rows"]
    assert [r["rank"] for r in rows] == list(range(1, len(rows) + 1))
    sides = [r["host_or_device"] for r in rows]
    assert sides == sorted(sides, key=lambda s: s != "Device"), sides
    for side in ("Device", "Host"):
        part = [r for r in rows if r["host_or_device"] == side]
        if not part:
            continue
        selfs = [r["total_self_time_in_us"] for r in part]
        assert selfs == sorted(selfs, reverse=True), (side, selfs)
        if sum(selfs) == 0:
            assert all(r["total_self_time_as_fraction"] is None for r in part)
            continue
        assert abs(sum(r["total_self_time_as_fraction"] for r in part) - 1) < 1e-9, side
        cum = [r["cumulative_total_self_time_as_fraction"] for r in part]
        assert cum == sorted(cum) and cum[-1] == 1, (side, cum[-3:])
        for r in part:
            assert r["occurrences"] > 0
            assert abs(r["avg_time_in_us"] - r["total_time_in_us"] / r["occurrences"]) <= \
                1e-9 * max(1, r["total_time_in_us"]), r
            assert abs(r["avg_self_time_in_us"] -
                       r["total_self_time_in_us"] / r["occurrences"]) <= \
                1e-9 * max(1, r["total_self_time_in_us"]), r
            assert r["total_self_time_in_us"] <= r["total_time_in_us"], r


def compare_rows(table, want, what):
    """want: (side, operation) -> (type, occurrences, total ps, self ps)."""
    got = by_op(table)
    assert set(got) == set(want), (what, sorted(set(got) ^ set(want))[:10])
    for key, (typ, occ, total_ps, self_ps) in want.items():
        r = got[key]
        assert (r["type"], r["occurrences"]) == (typ, occ), (what, key, r, typ, occ)
        assert r["total_time_in_us"] == total_ps / 1e6, (what, key, r, total_ps)
        assert r["total_self_time_in_us"] == self_ps / 1e6, (what, key, r, self_ps)


# ---- independent readings of the raw files ----

def ns(x):
    """µs from the file's decimal text -> exact integer ns."""
    v = Decimal(x) * 1000
    assert v == v.to_integral_value(), "fractional ns in the file: %s" % x
    return int(v)


def load_events(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        doc = json.load(f, parse_float=Decimal)
    return doc["traceEvents"] if isinstance(doc, dict) else doc


def union_len(ivals):
    total, end = 0, None
    for s, e in sorted(ivals):
        if end is None or s > end:
            total += e - s
            end = e
        elif e > end:
            total += e - end
            end = e
    return total


def nest(items, want, side_name):
    """items: per thread, dicts with start/end (ps), 'op' (name, type) or
    'launch' (ps, n). Adds host rows, and device rows through launches, to
    want: (side, name) -> [type, occurrences, total ps, self ps]."""
    items.sort(key=lambda it: (it["start"], -it["end"], "launch" in it, it["i"]))
    stack, opened = [], []
    for it in items:
        while stack and it["end"] > stack[-1]["end"]:
            stack.pop()
        if "launch" in it:
            if stack:
                ps, n = it["launch"]
                stack[-1]["dev_self"] += ps
                for holder in stack:
                    holder["dev_total"] += ps
                    holder["dev_n"] += n
            continue
        it.update(children=[], dev_self=0, dev_total=0, dev_n=0)
        if stack:
            stack[-1]["children"].append((it["start"], it["end"]))
        stack.append(it)
        opened.append(it)
    for it in opened:
        name, typ = it["op"]
        row = want.setdefault((side_name, name), [typ, 0, 0, 0])
        dur = it["end"] - it["start"]
        row[1] += 1
        row[2] += dur
        row[3] += dur - union_len(it["children"])
        if it["dev_n"]:
            row = want.setdefault(("Device", name), [typ, 0, 0, 0])
            row[1] += 1
            row[2] += it["dev_total"]
            row[3] += it["dev_self"]


STEP_MARKER = re.compile(r"ProfilerStep#\d+$")
DEVICE_CATS = {"kernel", "Kernel", "gpu_memcpy", "Memcpy", "gpu_memset", "Memset"}


def kineto_want(path):
    """Host ops (cat cpu_op/Operator, not step markers) nested per thread;
    device work (kernels, copies, memsets) joined to the launch with its
    correlation id (cuda_runtime/Runtime/cuda_driver) inside an op."""
    events = load_events(path)
    dev = defaultdict(lambda: [0, 0])
    for e in events:
        corr = (e.get("args") or {}).get("correlation")
        if e.get("ph") == "X" and "dur" in e and e.get("cat") in DEVICE_CATS and corr is not None:
            dev[corr][0] += ns(e["dur"]) * 1000
            dev[corr][1] += 1
    threads = defaultdict(list)
    for i, e in enumerate(events):
        if e.get("ph") != "X" or "dur" not in e:
            continue
        start = ns(e["ts"]) * 1000
        item = {"start": start, "end": start + ns(e["dur"]) * 1000, "i": i}
        corr = (e.get("args") or {}).get("correlation")
        if e.get("cat") in ("cpu_op", "Operator") and not STEP_MARKER.match(e["name"]):
            item["op"] = (e["name"], e["name"])
        elif e.get("cat") in ("cuda_runtime", "Runtime", "cuda_driver") and corr in dev:
            item["launch"] = tuple(dev[corr])
        else:
            continue
        threads[(e["pid"], e["tid"])].append(item)
    want = {}
    for items in threads.values():
        nest(items, want, "Host")
    return {k: tuple(v) for k, v in want.items()}


def split_tf_op(s):
    """'a/b/add:' -> ('a/b/add', 'add'); 'a/MatMul:MatMul' -> ('a/MatMul', 'MatMul')."""
    name, sep, typ = s.rpartition(":")
    if not sep or "/" in typ:
        name, typ = s, ""
    return name, typ or name.rsplit("/", 1)[-1].split("[", 1)[0]


def xplane_tf_ops(path, plane_prefix, line_ok, jax_ops=None):
    """(side, op) -> (type, occurrences, total ps, self ps) from the device
    events of matching planes and lines that carry a tf_op stat, on the
    event or on its metadata (where TPU planes keep it). With jax_ops
    (hlo_protos.instructions of the file: GPU kernels), a kernel whose
    hlo_op names an instruction of its program takes that instruction's
    op_name instead; tf_op "XlaModule:" names no op and is left out."""
    def msg(b):
        out = defaultdict(list)
        for num, _, v in fields(b):
            out[num].append(v)
        return out

    def text(m, num):
        return m[num][0].decode() if m.get(num) else ""

    def stat(stats, stat_names, key="tf_op"):
        for sb in stats:
            st = msg(sb)
            if stat_names.get(st[1][0] if st.get(1) else 0) == key:
                if st.get(3) or st.get(4):
                    return str((st.get(3) or st.get(4))[0])
                return text(st, 5) if st.get(5) else stat_names.get(st[7][0], "")
        return None

    def tf_op(stats, stat_names):
        value = stat(stats, stat_names)
        if jax_ops is not None:
            prog, op = stat(stats, stat_names, "program_id"), stat(stats, stat_names, "hlo_op")
            jax = jax_ops.get(prog, {}).get(op, (None, None))[0]
            if jax:
                return jax
        return None if value == "XlaModule:" else value

    with open(path, "rb") as f:
        space = msg(f.read())
    want = {}
    for pb in space[1]:
        plane = msg(pb)
        if not text(plane, 2).startswith(plane_prefix):
            continue
        stat_names, meta_stats = {}, {}
        for entry in plane[5]:
            e = msg(entry)
            stat_names[e[1][0] if e.get(1) else 0] = text(msg(e[2][0]), 2) if e.get(2) else ""
        for entry in plane[4]:
            e = msg(entry)
            meta_stats[e[1][0] if e.get(1) else 0] = msg(e[2][0])[5] if e.get(2) else []
        for lb in plane[3]:
            line = msg(lb)
            if not line_ok(text(line, 11) or text(line, 2)):
                continue
            for eb in line[4]:
                ev = msg(eb)
                if ev.get(5):
                    continue
                value = tf_op(ev[4], stat_names)
                if value is None:
                    value = tf_op(meta_stats.get(ev[1][0] if ev.get(1) else 0, []), stat_names)
                if value:
                    name, typ = split_tf_op(value)
                    row = want.setdefault(("Device", name), [typ, 0, 0, 0])
                    dur = ev[3][0] if ev.get(3) else 0
                    row[1] += 1
                    row[2] += dur
                    row[3] += dur
    return {k: tuple(v) for k, v in want.items()}


def tf_timeline_want(path):
    """Host: cat Op events of the CPU device's rows, nested per thread,
    named by args.name and typed by args.op; device: the kernels of the
    per-stream rows (stream:all repeats them; copies are named by edge)."""
    events = load_events(path)
    procs = {e["pid"]: e["args"]["name"] for e in events
             if e.get("ph") == "M" and e.get("name") == "process_name"}
    threads, want = defaultdict(list), {}
    for i, e in enumerate(events):
        if e.get("ph") != "X" or e.get("cat") != "Op":
            continue
        p, a = procs.get(e["pid"], ""), e.get("args", {})
        if "/device:GPU:" not in p:
            start = ns(e["ts"]) * 1000
            threads[(e["pid"], e["tid"])].append(
                {"start": start, "end": start + ns(e["dur"]) * 1000, "i": i,
                 "op": (a["name"], a["op"])})
        elif "/stream:" in p and "/stream:all" not in p and \
                not e["name"].lower().startswith("memcpy"):
            row = want.setdefault(("Device", a["name"]), [a["op"], 0, 0, 0])
            row[1] += 1
            row[2] += ns(e["dur"]) * 1000
            row[3] += ns(e["dur"]) * 1000
    for items in threads.values():
        nest(items, want, "Host")
    return {k: tuple(v) for k, v in want.items()}


# ---- tests ----

def test_framework_ops_on_own_trace():
    table = S.tool("ops", FOS)
    check_table_shape(table)
    compare_rows(table, {k: (t, o, round(tot * 1e6), round(sf * 1e6))
                         for k, (t, o, tot, sf) in OPS_WANT.items()}, "ops trace")
    assert ["%s %s" % (r["host_or_device"], r["operation"]) for r in table["rows"]] == OPS_ORDER
    device_self = sum(v[3] for k, v in OPS_WANT.items() if k[0] == "Device")
    addmm = by_op(table)[("Device", "aten::addmm")]
    assert addmm["total_self_time_as_fraction"] == 80.5 / device_self, addmm


def test_framework_ops_match_pytorch_fixtures():
    for name in ("pytorch-v100-resnet50", "pytorch-h100-bert-small",
                 "pytorch-gp100-user-annotations"):
        path = [os.path.join(FIXTURES, r) for r in FIXTURE_FILES if name in r][0]
        want = kineto_want(path)
        assert any(k[0] == "Device" for k in want) and any(k[0] == "Host" for k in want), name
        table = S.tool(name, FOS)
        check_table_shape(table)
        compare_rows(table, want, name)


def test_framework_ops_match_xplane_name_stacks():
    """TPU: XLA ops carry JAX name stacks (jit(f)/jit(main)/add:); MI300X:
    kernels carry tf_op XlaModule:, and their op is their HLO instruction's
    op_name (jit(dot)/dot_general), never XlaModule. Every row is a device
    row."""
    cases = [("jax-tpu-v6e-inference", "/device:TPU:", lambda l: l in ("XLA Ops", "Async XLA Ops")),
             ("jax-rocm-mi300x-gemm", "/device:GPU:", lambda l: l.startswith("Stream #"))]
    for host, prefix, line_ok in cases:
        path = os.path.join(FIXTURES, "xplane", host + ".xplane.pb")
        jax = instructions(path) if prefix == "/device:GPU:" else None
        want = xplane_tf_ops(path, prefix, line_ok, jax)
        assert want, host
        table = S.tool(host, FOS)
        check_table_shape(table)
        compare_rows(table, want, host)
    add = by_op(S.tool("jax-tpu-v6e-inference", FOS))[("Device", "jit(f)/jit(main)/add")]
    assert add["type"] == "add" and add["occurrences"] == 1200, add


def test_framework_ops_match_tf_timeline():
    host = "tf1-xla-gpu-timeline"
    want = tf_timeline_want(os.path.join(FIXTURES, "chrome-json", host + ".ctf.json"))
    table = S.tool(host, FOS)
    check_table_shape(table)
    compare_rows(table, want, host)
    it = by_op(table)[("Host", "v0/IteratorGetNext")]
    assert it["type"] == "IteratorGetNext" and it["total_time_in_us"] == 16857, it


def test_hosts_merge_by_op_name():
    """ALL_HOSTS (TensorBoard) and hosts=all (our route) add up the two
    hosts of the run op by op; the input pipeline cannot merge hosts."""
    ops, inp = S.tool("ops", FOS), S.tool("input", FOS)
    assert S.ok(S.tb("hosts", run=RUN, tag=FOS)) == [
        {"hostname": "ALL_HOSTS"}, {"hostname": "input"}, {"hostname": "ops"}]
    assert S.ok(S.tb("hosts", run=RUN, tag=IPA)) == [{"hostname": "input"}, {"hostname": "ops"}]
    dt = S.ok(S.tb("data", run=RUN, tag=FOS, host="ALL_HOSTS"))
    cols = [c["id"] for c in dt["cols"]]
    merged = {(r["host_or_device"], r["operation"]): r for r in
              (dict(zip(cols, [c["v"] for c in row["c"]])) for row in dt["rows"])}
    assert merged == by_op(S.tool("ops", FOS, "?hosts=all"))
    both = defaultdict(lambda: [0, 0.0, 0.0])
    for table in (ops, inp):
        for key, r in by_op(table).items():
            both[key][0] += r["occurrences"]
            both[key][1] += r["total_time_in_us"]
            both[key][2] += r["total_self_time_in_us"]
    assert set(merged) == set(both)
    for key, (occ, total, self_time) in both.items():
        r = merged[key]
        assert r["occurrences"] == occ, key
        assert abs(r["total_time_in_us"] - total) < 1e-6 and \
            abs(r["total_self_time_in_us"] - self_time) < 1e-6, (key, r)
    assert merged[("Device", "aten::addmm")]["occurrences"] == 4
    assert merged[("Device", "aten::addmm")]["total_time_in_us"] == 80.5 + 470 + 300 + 450 + 150
    status, _, body = S.get(S.tb("data", run=RUN, tag=IPA, host="ALL_HOSTS"))
    assert status == 404 and body == {"error": "No Data"}, (status, body)


def test_input_pipeline_on_own_trace():
    table = S.tool("input", IPA)
    assert [c["id"] for c in table["columns"]] == [
        "stepnum", "step_time_us", "input_time_us", "input_fraction", "host_input_us",
        "infeed_us", "idle_us"]
    got = {r["stepnum"]: r for r in table["rows"]}
    assert sorted(got) == sorted(INPUT_WANT), got
    for step, (length, wait, host, feed, idle) in INPUT_WANT.items():
        r = got[step]
        assert (r["step_time_us"], r["input_time_us"], r["host_input_us"], r["infeed_us"],
                r["idle_us"]) == (length, wait, host, feed, idle), (step, r)
        assert r["input_fraction"] == wait / length, r
    steps = S.ok("/api/profiles/%s/steps" % S.profiles["input"]["id"])["steps"]
    assert {s["step"]: s["idle_us"] for s in steps} == {k: v[4] for k, v in INPUT_WANT.items()}
    p = table["properties"]
    wait = sum(v[1] for v in INPUT_WANT.values())
    length = sum(v[0] for v in INPUT_WANT.values())
    assert (p["verdict"], p["degree"]) == ("input-bound", "highly"), p
    assert float(p["input_fraction"]) == wait / length and float(p["input_time_us"]) == wait, p
    assert float(p["step_time_us"]) == length and p["steps"] == "3", p
    assert float(p["host_input_us"]) == 860 and float(p["infeed_us"]) == 50, p
    assert p["summary"].startswith("Input-bound: the device waited for input 28.4%"), p


def resnet_input_want(path):
    """Per ProfilerStep#N window: the DataLoader's host work, and the part of
    it during which no kernel, copy or memset runs."""
    events = load_events(path)
    steps, loader, busy = {}, [], []
    for e in events:
        if e.get("ph") != "X" or "dur" not in e:
            continue
        s = ns(e["ts"]) * 1000
        iv = (s, s + ns(e["dur"]) * 1000)
        if STEP_MARKER.match(e["name"]):
            steps[int(e["name"].split("#")[1])] = iv
        elif "DataLoader" in e["name"] and e.get("cat") == "Operator":
            loader.append(iv)
        elif e.get("cat") in DEVICE_CATS and iv[1] > iv[0]:
            busy.append(iv)

    def clip(ivals, w):
        return [(max(s, w[0]), min(e, w[1])) for s, e in ivals if min(e, w[1]) > max(s, w[0])]

    want = {}
    for k, w in steps.items():
        host = clip(loader, w)
        # waiting = host input minus device busy = |host ∪ busy| - |busy|
        waiting = union_len(host + clip(busy, w)) - union_len(clip(busy, w))
        want[k] = (w[1] - w[0], waiting, union_len(host), w[1] - w[0] - union_len(clip(busy, w)))
    return want


def test_input_pipeline_matches_resnet50():
    name = "pytorch-v100-resnet50"
    want = resnet_input_want(os.path.join(FIXTURES, "chrome-json", name + ".pt.trace.json.gz"))
    table = S.tool(name, IPA)
    got = {r["stepnum"]: r for r in table["rows"]}
    assert sorted(got) == sorted(want) == list(range(5, 11)), (sorted(got), sorted(want))
    for k, (length, wait, host, idle) in want.items():
        r = got[k]
        assert (r["step_time_us"], r["input_time_us"], r["host_input_us"], r["idle_us"]) == \
            (length / 1e6, wait / 1e6, host / 1e6, idle / 1e6), (k, r, want[k])
        assert r["infeed_us"] == 0 and 0 < r["input_time_us"] <= r["idle_us"], r
    share = sum(w[1] for w in want.values()) / sum(w[0] for w in want.values())
    assert table["properties"]["verdict"] == "input-bound" and share >= 0.2, share
    assert float(table["properties"]["input_fraction"]) == share


def test_every_route_and_format():
    """run_tools lists both; data (DataTable) and data_csv agree with our
    JSON; format=csv is CSV with the same numbers."""
    assert S.ok(S.tb("run_tools", run=RUN))[:5] == ["trace_viewer", "overview_page", IPA, FOS, "kernel_stats"]
    run = S.profiles["pytorch-v100-resnet50"]["run"]
    assert {IPA, FOS} <= set(S.ok(S.tb("run_tools", run=run)))
    for host, tag in (("ops", FOS), ("input", IPA), ("input", FOS)):
        ours = S.tool(host, tag)
        dt = S.ok(S.tb("data", run=RUN, tag=tag, host=host))
        assert [c["id"] for c in dt["cols"]] == [c["id"] for c in ours["columns"]]
        assert [[c["v"] for c in row["c"]] for row in dt["rows"]] == \
            [list(r.values()) for r in ours["rows"]]
        assert dt["p"] == ours["properties"]
        for text in (S.tool(host, tag, "?format=csv"), S.ok(S.tb("data_csv", run=RUN, tag=tag,
                                                                   host=host))):
            assert isinstance(text, str), text
            lines = list(csv.reader(io.StringIO(text)))
            assert lines[0] == [c["label"] for c in ours["columns"]], lines[0]
            assert len(lines) == len(ours["rows"]) + 1
            for line, r in zip(lines[1:], ours["rows"]):
                for cell, v in zip(line, r.values()):
                    assert (cell == "" and v is None) or cell == str(v) or \
                        float(cell) == v, (cell, v)
    listed = S.ok("/api/profiles/%s/tools" % S.profiles["ops"]["id"])
    assert [t for t in listed if t not in ("overview_page", "pod_viewer")] == \
        ["trace_viewer", FOS, "kernel_stats"], listed
    status, ctype, _ = S.get("/api/profiles/%s/tools/%s?format=csv" % (
        S.profiles["ops"]["id"], FOS))
    assert status == 200 and ctype.startswith("text/csv"), ctype


def test_tools_without_data_are_not_listed():
    """The GPU-only PyTorch trace has no op and no step; the TF timeline has
    input work but no step; the TPU profile has steps but no input work;
    the ops trace has steps but no data loader."""
    for host, absent in (("pytorch-rocm-mi210-gpu-only", (FOS, IPA)),
                         ("tf1-xla-gpu-timeline", (IPA,)), ("jax-tpu-v6e-inference", (IPA,)),
                         ("ops", (IPA,))):
        pid = S.profiles[host]["id"]
        listed = S.ok("/api/profiles/%s/tools" % pid)
        for tag in absent:
            assert tag not in listed, (host, tag, listed)
            status, _, body = S.get("/api/profiles/%s/tools/%s" % (pid, tag))
            assert status == 404 and body == {"error": "No Data"}, (host, tag, status, body)
            status, _, body = S.get(S.tb("data", run=S.profiles[host]["run"], tag=tag, host=host))
            assert status == 404 and body == {"error": "No Data"}, (host, tag, status, body)
    assert S.profiles["ops"]["step_count"] == 1


def run_all():
    global S
    need_fixtures()
    with Server() as server:
        S = server
        main([test_framework_ops_on_own_trace, test_framework_ops_match_pytorch_fixtures,
              test_framework_ops_match_xplane_name_stacks, test_framework_ops_match_tf_timeline,
              test_hosts_merge_by_op_name, test_input_pipeline_on_own_trace,
              test_input_pipeline_matches_resnet50, test_every_route_and_format,
              test_tools_without_data_are_not_listed])


if __name__ == "__main__":
    run_all()
