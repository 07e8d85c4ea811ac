#!/usr/bin/env python3
"""test_tool_hlo.py: XProf's HLO tools (hlo_stats, op_profile, roofline_model)
through every route that serves them (/data/plugin/profile/run_tools, hosts,
data, data_csv; /api/profiles/{id}/tools/{tag} as JSON, CSV and for all
hosts), on the real fixtures, checked against an independent reading of the
raw xplane.pb written here: per HLO op (program, name) the occurrences,
device time, self time and the TPU flops / model_flops / bytes_accessed
sums; shares of self time adding up to 100%; the roofline's intensity, rates
and roof from the device planes' own peak figures; two hosts merged; GPU
kernels grouped by hlo_op with those that carry none counted apart; and a
profile without HLO ops (PyTorch) answering 404 "No Data" and not listing
the tools; the modules a host ran (module_list, /api/profiles/{id}/modules)
against the TPU XLA Modules lines and the GPU kernels' hlo_module, merged
with the compiled modules of the metadata plane (hlo_protos.py). Skips
(77) when ../shared/fixtures is absent."""
import csv
import io
import json
import os
import shutil
import socket
import struct
import subprocess
import sys
import urllib.error
import urllib.parse
import urllib.request
from collections import defaultdict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from xpv_e2e import BIN, FIXTURES, need_fixtures, tmpdir, main, wait_indexed  # noqa: E402
from test_analysis import message, text  # noqa: E402
from test_xplane import signed64  # noqa: E402
from hlo_protos import merged, proto_keys  # noqa: E402

TPU = "jax-tpu-v6e-inference.xplane.pb"
GEMM = "jax-rocm-mi300x-gemm.xplane.pb"
CONV = "jax-rocm-mi300x-conv-8gpu.xplane.pb"
TORCH = "pytorch-h100-bert-small.json.gz"
BASE = "/data/plugin/profile/"

# ---- an independent reading of the xplane ----


def stat_value(sb, names):
    s = message(sb)
    name = names.get(s[1][0] if s.get(1) else 0, "")
    if s.get(2):
        return name, struct.unpack("<d", s[2][0])[0]
    if s.get(3):
        return name, s[3][0]
    if s.get(4):
        return name, signed64(s[4][0])
    if s.get(5):
        return name, s[5][0].decode("utf-8", "replace")
    if s.get(7):
        return name, names.get(s[7][0], "")
    return name, None


def device_lines(path, prefix):
    """Yields (line name, [(start ps, duration ps, display name, {stat: value})])
    for the lines of the planes whose name starts with prefix; an event's
    stats are its metadata's with its own on top."""
    with open(path, "rb") as f:
        space = message(f.read())
    for pb in space[1]:
        plane = message(pb)
        if not text(plane, 2).startswith(prefix):
            continue
        names, metas = {}, {}
        for entry in plane[5]:
            e = message(entry)
            names[e[1][0] if e.get(1) else 0] = text(message(e[2][0]) if e.get(2) else {}, 2)
        for entry in plane[4]:
            e = message(entry)
            m = message(e[2][0]) if e.get(2) else {}
            metas[e[1][0] if e.get(1) else 0] = (
                text(m, 4) or text(m, 2), dict(stat_value(s, names) for s in m.get(5, [])))
        for lb in plane[3]:
            line = message(lb)
            base = signed64(line[3][0]) * 1000 if line.get(3) else 0
            events = []
            for eb in line[4]:
                ev = message(eb)
                if ev.get(5):  # num_occurrences: aggregated, not a timed event
                    continue
                name, stats = metas.get(ev[1][0] if ev.get(1) else 0, ("", {}))
                stats = dict(stats)
                stats.update(stat_value(s, names) for s in ev.get(4, []))
                start = base + (signed64(ev[2][0]) if ev.get(2) else 0)
                events.append((start, ev[3][0] if ev.get(3) else 0, name, stats))
            yield text(line, 11) or text(line, 2), events


def plane_stats(path, prefix):
    """[{stat: value}] of the planes whose name starts with prefix."""
    with open(path, "rb") as f:
        space = message(f.read())
    out = []
    for pb in space[1]:
        plane = message(pb)
        if text(plane, 2).startswith(prefix):
            names = {}
            for entry in plane[5]:
                e = message(entry)
                names[e[1][0] if e.get(1) else 0] = text(message(e[2][0]) if e.get(2) else {}, 2)
            out.append(dict(stat_value(s, names) for s in plane.get(6, [])))
    return out


def self_times(events):
    """Self time of each (start, dur, ...) of one line: its time less the
    time of the ops that start inside it (its children; same span: siblings)."""
    order = sorted(range(len(events)), key=lambda i: (events[i][0], -events[i][1]))
    self_ps, stack = [e[1] for e in events], []
    for i in order:
        start, dur = events[i][0], events[i][1]
        while stack and events[stack[-1]][0] + events[stack[-1]][1] <= start:
            stack.pop()
        if stack:
            p = stack[-1]
            if start > events[p][0] or dur < events[p][1]:
                self_ps[p] -= dur
        stack.append(i)
    return [max(0, s) for s in self_ps]


def new_op():
    return {"n": 0, "ps": 0, "self": 0, "flops": 0, "model_flops": 0, "bytes": 0, "cat": None}


def tpu_ops(path):
    """(program id, op) -> sums, from the TPU planes' XLA Ops lines."""
    ops = defaultdict(new_op)
    modules = {}
    for line, events in device_lines(path, "/device:TPU:"):
        if line == "XLA Modules":
            for _, _, name, _ in events:
                modules[name[name.rindex("(") + 1:-1]] = name[:name.rindex("(")]
        if line != "XLA Ops":
            continue
        selfs = self_times(events)
        for (start, dur, name, st), self_ps in zip(events, selfs):
            o = ops[(str(st["program_id"]), name)]
            o["n"] += 1
            o["ps"] += dur
            o["self"] += self_ps
            o["flops"] += st["flops"]
            o["model_flops"] += st["model_flops"]
            o["bytes"] += st["bytes_accessed"]
            o["cat"] = st["hlo_category"]
    return ops, modules


def gpu_ops(path):
    """(program id, hlo_op) -> sums over GPU device events, and the count
    and time of those without hlo_op."""
    ops, apart = defaultdict(new_op), [0, 0]
    for line, events in device_lines(path, "/device:GPU:"):
        for start, dur, name, st in events:
            if "hlo_op" not in st:
                apart[0] += 1
                apart[1] += dur
                continue
            o = ops[(str(st["program_id"]), st["hlo_op"])]
            o["n"] += 1
            o["ps"] += dur
            o["self"] += dur
            o["module"] = st["hlo_module"]
    return ops, apart


# ---- the server ----


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def request(port, path):
    try:
        with urllib.request.urlopen("http://127.0.0.1:%d%s" % (port, path), timeout=60) as r:
            return r.status, r.headers.get("Content-Type", ""), r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers.get("Content-Type", ""), e.read()


def get(port, path):
    status, _, body = request(port, path)
    return status, json.loads(body)


RUNS = {"tpu_run": [("tpu-a", "xplane", TPU), ("tpu-b", "xplane", TPU)],
        "gemm_run": [("gemm", "xplane", GEMM)], "conv_run": [("conv", "xplane", CONV)],
        "torch_run": [("torch", "chrome-json", TORCH)]}


class Server:
    """The real binary over a profile dir laid out as TensorBoard's, with
    the TPU fixture as two hosts of one run."""

    def __enter__(self):
        root = tmpdir()
        for run, hosts in RUNS.items():
            d = os.path.join(root, "plugins", "profile", run)
            os.makedirs(d)
            for host, folder, name in hosts:
                ext = ".xplane.pb" if name.endswith(".xplane.pb") else ".json.gz"
                shutil.copyfile(os.path.join(FIXTURES, folder, name), os.path.join(d, host + ext))
        self.port = free_port()
        self.proc = subprocess.Popen(
            [BIN, "--profile-dir=" + root, "--port=%d" % self.port, "--perfetto-port=0",
             "--db=" + os.path.join(tmpdir(), "i.sqlite"), "--quiet"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_indexed(self.port, min_profiles=5)
        _, profiles = get(self.port, "/api/profiles")
        self.ids = {(p["run"], p["host"]): p["id"] for p in profiles["profiles"]}
        assert len(self.ids) == 5 and all(p["status"] == "ok" for p in profiles["profiles"]), \
            profiles
        return self

    def __exit__(self, *exc):
        self.proc.terminate()
        self.proc.wait(timeout=10)

    def tool(self, run, host, tag, query=""):
        status, ans = get(self.port, "/api/profiles/%s/tools/%s%s"
                          % (self.ids[(run, host)], tag, query))
        assert status == 200, (run, tag, status, ans)
        return ans

    def datatable(self, run, tag, host):
        q = urllib.parse.urlencode({"run": run, "tag": tag, "host": host})
        status, ans = get(self.port, BASE + "data?" + q)
        assert status == 200, (run, tag, host, status, ans)
        cols = [c["id"] for c in ans["cols"]]
        return [dict(zip(cols, [cell["v"] for cell in r["c"]])) for r in ans["rows"]], ans["p"]


def us(ps):
    """ps as the server writes µs: the double nearest the exact decimal."""
    return ps / 1e6


def close(a, b, rel=1e-9):
    return a is not None and abs(a - b) <= rel * max(abs(a), abs(b), 1e-300)


def by_op(rows):
    return {(r["program_id"], r["hlo_op_name"]): r for r in rows}


def check_shares(rows):
    assert close(sum(r["total_self_time_percent"] for r in rows), 100.0), rows
    assert close(rows[-1]["cumulative_total_self_time_percent"], 100.0)
    selfs = [r["total_self_time"] for r in rows]
    assert selfs == sorted(selfs, reverse=True) and [r["rank"] for r in rows] == \
        list(range(1, len(rows) + 1))


def check_tpu_rows(rows, want, modules, hosts=1):
    got = by_op(rows)
    assert set(got) == set(want), (sorted(got), sorted(want))
    for key, w in want.items():
        r = got[key]
        assert r["occurrences"] == hosts * w["n"], (key, r, w)
        assert r["total_time"] == us(hosts * w["ps"]), (key, r["total_time"], w["ps"])
        assert close(r["total_self_time"], us(hosts * w["self"]), 1e-12), (key, r, w)
        assert r["category"] == w["cat"] and r["hlo_module"] == modules[key[0]], (key, r)
        for col, stat in (("flops", "flops"), ("model_flops", "model_flops"),
                          ("bytes_accessed", "bytes")):
            assert r[col] == hosts * w[stat], (key, col, r[col], w[stat])
        assert close(r["normalized_flop_rate"], w["flops"] * 1000 / w["ps"]), (key, r)
        assert close(r["measured_memory_bw"], w["bytes"] * 1e12 / w["ps"] / 2 ** 30), (key, r)
    check_shares(rows)


def test_tpu_hlo_stats():
    want, modules = tpu_ops(os.path.join(FIXTURES, "xplane", TPU))
    assert sum(w["flops"] for w in want.values()) > 0 and len(want) > 10
    with Server() as s:
        ans = s.tool("tpu_run", "tpu-a", "hlo_stats")
        assert ans["properties"]["source"] == "xla_ops", ans["properties"]
        assert ans["properties"]["category_source"] == "hlo_category"
        check_tpu_rows(ans["rows"], want, modules)
        # the DataTable for the same host carries the same rows
        rows, p = s.datatable("tpu_run", "hlo_stats", "tpu-a")
        assert rows == ans["rows"] and p == ans["properties"]
        # every host of the run: the same ops, twice
        check_tpu_rows(s.tool("tpu_run", "tpu-a", "hlo_stats", "?hosts=all")["rows"], want,
                       modules, hosts=2)
        rows, _ = s.datatable("tpu_run", "hlo_stats", "ALL_HOSTS")
        check_tpu_rows(rows, want, modules, hosts=2)


def check_op_profile(rows, ops):
    """The tree: level-1 categories, level-2 programs, level-3 ops (the
    hlo_stats rows); sums and shares at each level."""
    cats = [r for r in rows if r["level"] == 1]
    assert close(sum(r["percent"] for r in cats), 100.0)
    leaves = {(r["program_id"], r["hlo_op_name"]): r for r in rows if r["level"] == 3}
    assert set(leaves) == set(by_op(ops))
    for key, r in leaves.items():
        o = by_op(ops)[key]
        assert (r["occurrences"], r["total_time"], r["total_self_time"], r["category"]) == \
            (o["occurrences"], o["total_time"], o["total_self_time"], o["category"]), (r, o)
    cat = prog = None
    kids = defaultdict(list)
    for r in rows:  # tree order: a row's parent is the last row one level up
        if r["level"] == 1:
            cat = r
        elif r["level"] == 2:
            prog = r
            assert r["category"] == cat["category"]
            kids[id(cat)].append(r)
        else:
            assert r["category"] == prog["category"] and r["program_id"] == prog["program_id"]
            kids[id(prog)].append(r)
    for parent in [r for r in rows if r["level"] < 3]:
        children = kids[id(parent)]
        assert children, parent
        assert close(sum(c["percent_of_parent"] for c in children), 100.0), parent
        assert sum(c["occurrences"] for c in children) == parent["occurrences"]
        assert close(sum(c["total_time"] for c in children), parent["total_time"], 1e-12)


def test_op_profile_tree():
    with Server() as s:
        for run, host in (("tpu_run", "tpu-a"), ("gemm_run", "gemm"), ("conv_run", "conv")):
            ans = s.tool(run, host, "op_profile")
            assert ans["properties"]["group_by"] == "category,program,op"
            check_op_profile(ans["rows"], s.tool(run, host, "hlo_stats")["rows"])
            rows, _ = s.datatable(run, "op_profile", host)
            assert rows == ans["rows"]
        merged = s.tool("tpu_run", "tpu-b", "op_profile", "?hosts=all")["rows"]
        check_op_profile(merged, s.tool("tpu_run", "tpu-b", "hlo_stats", "?hosts=all")["rows"])


def test_gpu_hlo_ops():
    with Server() as s:
        for run, host, name in (("gemm_run", "gemm", GEMM), ("conv_run", "conv", CONV)):
            want, apart = gpu_ops(os.path.join(FIXTURES, "xplane", name))
            ans = s.tool(run, host, "hlo_stats")
            p = ans["properties"]
            assert p["source"] == "kernels" and p["category_source"] == "op_name", p
            assert int(p["unattributed_events"]) == apart[0] and apart[0] > 0, (p, apart)
            assert float(p["unattributed_time_us"]) == us(apart[1]), (p, apart)
            got = by_op(ans["rows"])
            assert set(got) == set(want), (sorted(got), sorted(want))
            for key, w in want.items():
                r = got[key]
                assert (r["occurrences"], r["total_time"], r["total_self_time"]) == \
                    (w["n"], us(w["ps"]), us(w["self"])), (key, r, w)
                assert r["hlo_module"] == w["module"], (key, r)
                # a GPU kernel carries no flops or bytes: unknown, or derived from
                # the module's shapes (test_tool_hlo_derived.py), never measured
                assert r["flops_source"] in (None, "derived"), r
                assert (r["flops"] is None) == (r["normalized_flop_rate"] is None), r
            check_shares(ans["rows"])
        cats = {r["hlo_op_name"]: r["category"] for r in s.tool("conv_run", "conv", "hlo_stats")["rows"]}
        assert cats == {"input_transpose_fusion": "input fusion",
                        "input_transpose_fusion.1": "input fusion",
                        "cudnn-conv.1.0": "convolution",
                        "loop_transpose_fusion": "loop fusion"}, cats


def test_roofline_model():
    path = os.path.join(FIXTURES, "xplane", TPU)
    want, _ = tpu_ops(path)
    stats = plane_stats(path, "/device:TPU:")
    tflops = {p["peak_teraflops_per_second"] for p in stats}
    gbps = {p["peak_hbm_bw_gigabytes_per_second"] for p in stats}
    assert len(tflops) == len(gbps) == 1, (tflops, gbps)  # the planes agree
    tflops, gbps = tflops.pop(), gbps.pop()
    ridge = tflops * 1000 / gbps
    with Server() as s:
        for query, hosts in (("", 1), ("?hosts=all", 2)):
            ans = s.tool("tpu_run", "tpu-a", "roofline_model", query)
            p = ans["properties"]
            assert float(p["peak_teraflops_per_second"]) == tflops and \
                float(p["peak_hbm_bw_gigabytes_per_second"]) == gbps, p
            assert close(float(p["ridge_point"]), ridge) and p["peaks_source"] == \
                "device plane stats", p
            got = by_op(ans["rows"])
            assert set(got) == set(want)  # every TPU op carries flops and bytes
            for key, w in want.items():
                r = got[key]
                assert (r["occurrences"], r["flops"], r["bytes_accessed"]) == \
                    (hosts * w["n"], hosts * w["flops"], hosts * w["bytes"]), (key, r)
                oi = w["flops"] / w["bytes"]
                assert close(r["operational_intensity"], oi)
                assert close(r["measured_flop_rate"], w["flops"] * 1000 / w["ps"])
                roof = min(tflops * 1000, oi * gbps)
                assert close(r["roofline_flop_rate"], roof, 1e-12) if roof else \
                    r["roofline_flop_rate"] == 0, (key, r, roof)
                assert r["bound_by"] == ("Memory" if oi < ridge else "Compute"), (key, r)
                if roof:
                    assert close(r["roofline_efficiency_percent"],
                                 100 * (w["flops"] * 1000 / w["ps"]) / roof), (key, r)
        rows, p = s.datatable("tpu_run", "roofline_model", "ALL_HOSTS")
        assert len(rows) == len(want) and p["peaks_source"] == "device plane stats"
        # GPU kernels carry no flops or bytes: a roofline only of derived ones
        # (test_tool_hlo_derived.py); a PyTorch trace has none: 404 No Data
        ans = s.tool("gemm_run", "gemm", "roofline_model")
        assert ans["rows"] and {r["flops_source"] for r in ans["rows"]} == {"derived"}
        status, ans = get(s.port, "/api/profiles/%s/tools/roofline_model"
                          % s.ids[("torch_run", "torch")])
        assert status == 404 and ans["error"] == "No Data", (status, ans)


def test_routes_and_no_data():
    with Server() as s:
        for run, tools in (("tpu_run", ["op_profile", "hlo_stats", "roofline_model"]),
                           ("gemm_run", ["kernel_stats", "op_profile", "hlo_stats",
                                         "roofline_model"]),
                           ("torch_run", ["kernel_stats"])):
            status, listed = get(s.port, BASE + "run_tools?run=" + run)
            hlo = ("kernel_stats", "op_profile", "hlo_stats", "roofline_model")
            assert status == 200 and [t for t in listed if t in hlo] == tools, \
                (run, listed)
        for tag in ("hlo_stats", "op_profile", "roofline_model"):
            status, hosts = get(s.port, BASE + "hosts?run=tpu_run&tag=" + tag)
            assert status == 200 and hosts == [{"hostname": "ALL_HOSTS"}, {"hostname": "tpu-a"},
                                               {"hostname": "tpu-b"}], hosts
            run, host = ("tpu_run", "tpu-b") if tag == "roofline_model" else ("gemm_run", "gemm")
            status, ctype, body = request(s.port, BASE + "data_csv?run=%s&tag=%s&host=%s"
                                          % (run, tag, host))
            assert status == 200 and ctype.startswith("text/csv"), (status, ctype)
            table = list(csv.reader(io.StringIO(body.decode())))
            ours = s.tool(run, host, tag)
            assert table[0] == [c["label"] for c in ours["columns"]]
            assert len(table) == 1 + len(ours["rows"])
            status, ctype, body = request(s.port, "/api/profiles/%s/tools/%s?format=csv"
                                          % (s.ids[(run, host)], tag))
            assert status == 200 and ctype.startswith("text/csv") and \
                list(csv.reader(io.StringIO(body.decode()))) == table
            # no HLO ops in a PyTorch trace: 404 "No Data" on every route
            status, ans = get(s.port, "/api/profiles/%s/tools/%s" % (s.ids[("torch_run", "torch")],
                                                                     tag))
            assert status == 404 and ans["error"] == "No Data", (status, ans)
            for route in ("data", "data_csv"):
                status, ans = get(s.port, BASE + "%s?run=torch_run&tag=%s&host=torch"
                                  % (route, tag))
                assert status == 404 and ans["error"] == "No Data", (route, status, ans)
        status, listed = get(s.port, "/api/profiles/%s/tools" % s.ids[("torch_run", "torch")])
        assert status == 200 and not {"hlo_stats", "op_profile", "roofline_model"} & set(listed)


def raw_modules(path, prefix):
    """(module, program id) -> [occurrences, ps]: TPU executions on the XLA
    Modules lines ("<module>(<program id>)"), else the GPU device events
    that carry hlo_module."""
    lines = list(device_lines(path, prefix))
    on_line = any(line == "XLA Modules" for line, _ in lines)
    mods = defaultdict(lambda: [0, 0])
    for line, events in lines:
        for _, dur, name, st in events:
            if on_line and line == "XLA Modules":
                key = (name[:name.rindex("(")], name[name.rindex("(") + 1:-1])
            elif not on_line and "hlo_module" in st:
                key = (st["hlo_module"], str(st["program_id"]))
            else:
                continue
            mods[key][0] += 1
            mods[key][1] += dur
    return mods


def test_module_list():
    with Server() as s:
        for run, host, name, prefix, source in (
                ("tpu_run", "tpu-a", TPU, "/device:TPU:", "xla_modules"),
                ("gemm_run", "gemm", GEMM, "/device:GPU:", "kernels"),
                ("conv_run", "conv", CONV, "/device:GPU:", "kernels")):
            want = raw_modules(os.path.join(FIXTURES, "xplane", name), prefix)
            assert want, name
            listed = merged(proto_keys(os.path.join(FIXTURES, "xplane", name)), want)
            names = sorted({m for m, _ in listed.values()})
            status, got = get(s.port, BASE + "module_list?run=%s&host=%s" % (run, host))
            assert status == 200 and got == names, (run, status, got, names)
            status, ans = get(s.port, "/api/profiles/%s/modules" % s.ids[(run, host)])
            assert status == 200, (status, ans)
            rows = {(m["name"], m["program_id"]): m for m in ans["modules"]}
            assert set(rows) == set(listed) and len(rows) == len(ans["modules"]), (rows, listed)
            assert [m["name"] for m in ans["modules"]] == sorted(m["name"] for m in ans["modules"])
            for key, (n, ps) in want.items():
                m = rows[key]
                assert (m["occurrences"], m["total_time_us"], m["source"]) == \
                    (n, us(ps), source), (key, m, n, ps)
            for key in set(listed) - set(want):  # compiled, and not run in the capture
                assert (rows[key]["occurrences"], rows[key]["source"]) == (0, "hlo_proto")
        # every host of a run: the same names, once each
        status, got = get(s.port, BASE + "module_list?run=tpu_run&host=ALL_HOSTS")
        tpu = os.path.join(FIXTURES, "xplane", TPU)
        want = sorted({m for m, _ in merged(proto_keys(tpu),
                                            raw_modules(tpu, "/device:TPU:")).values()})
        assert status == 200 and got == want, (status, got)
        # no modules in a PyTorch trace, an unknown run or host: 404; no run: 400
        for query in ("run=torch_run&host=torch", "run=nope&host=x", "run=tpu_run&host=nope"):
            status, ans = get(s.port, BASE + "module_list?" + query)
            assert status == 404 and ans["error"] == "No Data", (query, status, ans)
        status, ans = get(s.port, "/api/profiles/%s/modules" % s.ids[("torch_run", "torch")])
        assert status == 404 and ans["error"] == "No Data", (status, ans)
        status, ans = get(s.port, BASE + "module_list")
        assert status == 400 and "run" in ans["error"], (status, ans)
        status, _ = get(s.port, "/api/health")
        assert status == 200


if __name__ == "__main__":
    need_fixtures()
    main([test_tpu_hlo_stats, test_op_profile_tree, test_gpu_hlo_ops, test_roofline_model,
          test_routes_and_no_data, test_module_list])
