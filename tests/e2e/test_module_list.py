#!/usr/bin/env python3
"""test_module_list.py: module_list and /api/profiles/{id}/modules on a JAX
GPU capture (gpu/jax-maxtext: 30 compiled modules on its metadata plane,
most of which launched no kernel) against an independent reading of the
xplane.pb written here (hlo_protos.py): every module with an HloProto listed
once as "<name>(<program id>)", merged with the modules the device events
name; those with no execution listed by /modules with occurrences 0 and
source "hlo_proto"; and each listed name resolved to its module by the HLO
view and memory_viewer.

Every place that names a module's program id names the real one, the
number in its metadata name (`jit_train_step(18566)`), not the metadata id
(14) that newer JAX writes beside it: the HLO and memory_viewer lists and
answers, the module found by `program_id=` and `module_name=` (our routes,
the tools' route and TensorBoard's data route), and the HLO view's device
times (hlo_stats' rows of that program id). Skips (77) when
../shared/fixtures is absent."""
import os
import re
import subprocess
import sys
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from xpv_e2e import BIN, FIXTURES, need_fixtures, tmpdir, main, wait_indexed  # noqa: E402
from hlo_protos import merged, metadata_modules, proto_keys  # noqa: E402
from test_tool_hlo import BASE, device_lines, free_port, get  # noqa: E402

RUN = "2026_11_26_15_34_46"
XPLANE = os.path.join("gpu", "jax-maxtext", "plugins", "profile", RUN, "vm.xplane.pb")


def event_modules(path):
    """(hlo_module, program id as text or None) of the GPU device events."""
    keys = set()
    for _, events in device_lines(path, "/device:GPU:"):
        for _, _, _, st in events:
            if st.get("hlo_module"):
                prog = st.get("program_id")
                keys.add((st["hlo_module"], None if prog is None else str(prog)))
    return keys


class Server:
    """One server over the jax-maxtext capture, shared by the tests."""

    def __init__(self, path):
        self.port = free_port()
        self.proc = subprocess.Popen(
            [BIN, "--profile-dir=" + os.path.dirname(os.path.dirname(os.path.dirname(
                os.path.dirname(path)))), "--port=%d" % self.port, "--perfetto-port=0",
             "--db=" + os.path.join(tmpdir(), "i.sqlite"), "--quiet"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_indexed(self.port, min_profiles=1)
        _, profiles = get(self.port, "/api/profiles")
        self.id = [p["id"] for p in profiles["profiles"] if p["path"].endswith("xplane.pb")][0]

    def get(self, sub, want=200):
        status, ans = get(self.port, sub if sub.startswith("/data/") else
                          "/api/profiles/%s/%s" % (self.id, sub))
        assert status == want, (sub, status, ans)
        return ans

    def close(self):
        self.proc.terminate()
        self.proc.wait(timeout=10)


SERVER = None


def server():
    global SERVER
    path = os.path.join(FIXTURES, XPLANE)
    if not os.path.exists(path):
        print("skip: %s not found" % path)
        return None
    if SERVER is None:
        SERVER = Server(path)
    return SERVER


def test_gpu_module_list():
    s = server()
    if not s:
        return
    path = os.path.join(FIXTURES, XPLANE)
    protos = proto_keys(path)
    assert len(protos) == len(metadata_modules(path)) == 30, protos
    want = merged(protos, event_modules(path))
    names = sorted({name for name, _ in want.values()})
    port, pid = s.port, s.id
    status, got = get(port, BASE + "module_list?run=%s&host=vm" % RUN)
    assert status == 200 and got == names, (status, got, names)
    assert len(got) == len(set(got)) and sum(p for _, p in want.values()) == 30
    for query in ("host=ALL_HOSTS", "hosts=vm"):
        status, got = get(port, BASE + "module_list?run=%s&%s" % (RUN, query))
        assert status == 200 and got == names, (query, status, got)
    status, ans = get(port, "/api/profiles/%s/modules" % pid)
    assert status == 200, (status, ans)
    rows = {(m["name"], m["program_id"]): m for m in ans["modules"]}
    assert set(rows) == set(want) and len(rows) == len(ans["modules"]), (rows, want)
    ran = {k for k in want if k[1] is not None} & {(m[0], m[1]) for m in
                                                   event_modules(path)}
    for key, m in rows.items():
        if key in ran or not want[key][1]:
            assert m["occurrences"] > 0 and m["source"] == "kernels", m
        elif m["source"] == "hlo_proto":
            assert m["occurrences"] == 0 and m["total_time_us"] == 0, m
    assert sum(m["source"] == "hlo_proto" for m in rows.values()) >= 20
    # the listed names are the names the HLO views resolve
    modules = {}
    for mid, mname, module in metadata_modules(path):
        modules[mname] = module
    for (_, prog), (name, has_proto) in want.items():
        if not has_proto:
            continue
        q = urllib.parse.quote(name)
        ans = s.get("hlo/%s" % q)
        assert ans["module"]["name"] == name and ans["module"]["program_id"] == prog, (name, ans)
        assert ans["module"]["hlo_name"] == modules[name], (name, ans["module"])
        ans = s.get("memory_viewer?module=%s" % q)
        assert ans["module"]["name"] == name and ans["module"]["program_id"] == prog, name


def program_ids(path):
    """{metadata name: (program id as text, metadata id)}: the number in the
    name, or the metadata id when the name has none."""
    out = {}
    for mid, mname, _ in metadata_modules(path):
        m = re.fullmatch(r"[^(]+\((\d+)\)", mname)
        out[mname] = (m.group(1) if m else str(mid), mid)
    return out


def test_program_ids():
    s = server()
    if not s:
        return
    path = os.path.join(FIXTURES, XPLANE)
    ids = program_ids(path)
    steps = sorted(n for n in ids if n.startswith("jit_train_step("))
    assert steps == ["jit_train_step(18566)", "jit_train_step(400222)"], steps
    # this capture's metadata ids are not its program ids (14 and 20 here)
    assert all(ids[n][0] != str(ids[n][1]) for n in steps), [ids[n] for n in steps]
    want = [(n, ids[n][0]) for n in ids]
    for route in ("hlo", "memory_viewer"):
        got = [(m["name"], m["program_id"]) for m in s.get(route)["modules"]]
        assert got == want, (route, got, want)
    real = {p for p, _ in ids.values()}
    for name in steps:
        prog, meta = ids[name]
        qn = urllib.parse.quote(name)
        for sub in ("memory_viewer?program_id=" + prog, "memory_viewer?module_name=" + qn,
                    "memory_viewer?module=" + prog, "hlo?program_id=" + prog,
                    "hlo?module_name=" + qn, "hlo/" + prog):
            m = s.get(sub)["module"]
            assert (m["name"], m["program_id"]) == (name, prog), (sub, m)
        if str(meta) not in real:  # the metadata id names no module
            s.get("memory_viewer?program_id=%d" % meta, 404)
            s.get("hlo/%d" % meta, 404)
        # the tools' route and TensorBoard's data route: that module's row alone
        for sub in ("tools/memory_viewer?program_id=" + prog,
                    "tools/memory_viewer?module_name=" + qn):
            rows = s.get(sub)["rows"]
            assert [(r["module"], r["program_id"]) for r in rows] == [(name, prog)], (sub, rows)
        for q in ("program_id=" + prog, "module_name=" + qn):
            dt = s.get(BASE + "data?run=%s&tag=memory_viewer&host=vm&%s" % (RUN, q))
            cells = [[c["v"] for c in r["c"][:2]] for r in dt["rows"]]
            assert cells == [[name, prog]], (q, cells)
        # the HLO view's device time per instruction: hlo_stats' rows of
        # the module's program id, by instruction name
        stats = {r["hlo_op_name"]: r for r in s.get("tools/hlo_stats")["rows"]
                 if r["program_id"] == prog}
        assert stats, prog
        ans = s.get("hlo/" + qn)
        timed = {i["name"]: i for c in ans["computations"] for i in c["instructions"]
                 if i["device_time_us"] is not None}
        assert timed and set(timed) <= set(stats), (prog, set(timed) - set(stats))
        for n, i in timed.items():
            assert i["occurrences"] == stats[n]["occurrences"], (n, i, stats[n])
            assert abs(i["device_time_us"] - stats[n]["total_time"]) < 1e-6, (n, i, stats[n])
    s.get("tools/memory_viewer?program_id=1", 404)
    s.get("memory_viewer?module_name=no_such_module", 404)


if __name__ == "__main__":
    need_fixtures()
    try:
        main([test_gpu_module_list, test_program_ids])
    finally:
        if SERVER:
            SERVER.close()
