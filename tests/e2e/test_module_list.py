#!/usr/bin/env python3
"""test_module_list.py: module_list and /api/profiles/{id}/modules on a JAX
GPU capture (gpu/jax-maxtext: 30 compiled modules on its metadata plane,
most of which launched no kernel) against an independent reading of the
xplane.pb written here (hlo_protos.py): every module with an HloProto listed
once as "<name>(<program id>)", merged with the modules the device events
name; those with no execution listed by /modules with occurrences 0 and
source "hlo_proto"; and each listed name resolved to its module by the HLO
view and memory_viewer. Skips (77) when ../shared/fixtures is absent."""
import os
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


def test_gpu_module_list():
    path = os.path.join(FIXTURES, XPLANE)
    if not os.path.exists(path):
        print("skip: %s not found" % path)
        return
    protos = proto_keys(path)
    assert len(protos) == len(metadata_modules(path)) == 30, protos
    want = merged(protos, event_modules(path))
    names = sorted({name for name, _ in want.values()})
    port = free_port()
    proc = subprocess.Popen(
        [BIN, "--profile-dir=" + os.path.dirname(os.path.dirname(os.path.dirname(
            os.path.dirname(path)))), "--port=%d" % port, "--perfetto-port=0",
         "--db=" + os.path.join(tmpdir(), "i.sqlite"), "--quiet"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_indexed(port, min_profiles=1)
        status, got = get(port, BASE + "module_list?run=%s&host=vm" % RUN)
        assert status == 200 and got == names, (status, got, names)
        assert len(got) == len(set(got)) and sum(p for _, p in want.values()) == 30
        for query in ("host=ALL_HOSTS", "hosts=vm"):
            status, got = get(port, BASE + "module_list?run=%s&%s" % (RUN, query))
            assert status == 200 and got == names, (query, status, got)
        _, profiles = get(port, "/api/profiles")
        pid = [p["id"] for p in profiles["profiles"] if p["path"].endswith("xplane.pb")][0]
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
        for name, has_proto in want.values():
            if not has_proto:
                continue
            q = urllib.parse.quote(name)
            status, ans = get(port, "/api/profiles/%s/hlo/%s" % (pid, q))
            assert status == 200 and ans["module"]["name"] == name, (name, status)
            assert ans["module"]["hlo_name"] == modules[name], (name, ans["module"])
            status, ans = get(port, "/api/profiles/%s/memory_viewer?module=%s" % (pid, q))
            assert status == 200 and ans["module"]["name"] == name, (name, status)
    finally:
        proc.terminate()
        proc.wait(timeout=10)


if __name__ == "__main__":
    need_fixtures()
    main([test_gpu_module_list])
