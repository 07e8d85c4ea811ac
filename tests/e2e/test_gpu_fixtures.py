#!/usr/bin/env python3
"""test_gpu_fixtures.py: the H100 captures of ../shared/fixtures/gpu against
an independent reading written here (Python's gzip + json for the JSON
files, the stdlib wire decoder of test_xplane.py for the xplanes):

- torch-train (PyTorch 2.11, Kineto): ProfilerStep#2..5 give four steps;
  every kernel's count and time, and its launch shape (grid, block,
  registers per thread) where all its launches share one; the [memory]
  instants per device (events, allocations, peak of Total Allocated); the
  pageable host-to-device copy counted as one, and the finding naming it;
- jax-perfetto and each xax-run capture: the xplane and the trace.json.gz
  of one capture give the same kernel, memcpy and memset tables (count and
  total time by name, times within the JSON's rounding to the nanosecond),
  and the JSON's tables are its device events counted here;
- the same xplanes' allocator events: per allocator the allocations,
  deallocations and peak bytes in use, listed highest peak first
  (GPU_0_bfc, not a 16 KiB host allocator), the tool's rows and
  TensorBoard's DataTable in that order.
Skips (77) when ../shared/fixtures is absent."""
import gzip
import json
import os
import shutil
import subprocess
import sys
import urllib.error
import urllib.parse
import urllib.request
from collections import defaultdict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from xpv_e2e import BIN, FIXTURES, free_port, main, need_fixtures, tmpdir, wait_indexed  # noqa
from test_memory import memory_events  # noqa: E402

GPU = os.path.join(FIXTURES, "gpu")
TORCH = os.path.join(GPU, "torch-train", "vm_454.1795707308737265467.pt.trace.json.gz")
# one capture's xplane and trace.json.gz, each indexed as a run of its own
CAPTURES = {
    "perfetto": os.path.join(GPU, "jax-perfetto", "plugins", "profile", "2026_11_26_15_34_52"),
}
for _run in ("54", "55", "56"):
    CAPTURES["xax" + _run] = os.path.join(GPU, "xax-run", "profiles", "plugins", "profile",
                                          "2026_11_26_15_34_" + _run)


def get(port, path):
    try:
        with urllib.request.urlopen("http://127.0.0.1:%d%s" % (port, path), timeout=120) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


class Server:
    def __enter__(self):
        root = tmpdir()
        n = 0
        for cap, src in CAPTURES.items():
            for suffix, name in (("x", "vm.xplane.pb"), ("j", "vm.trace.json.gz")):
                d = os.path.join(root, "plugins", "profile", "%s-%s" % (cap, suffix))
                os.makedirs(d)
                shutil.copyfile(os.path.join(src, name), os.path.join(d, name))
                n += 1
        os.makedirs(os.path.join(root, "torch"))
        shutil.copyfile(TORCH, os.path.join(root, "torch", os.path.basename(TORCH)))
        self.port = free_port()
        self.proc = subprocess.Popen(
            [BIN, "--profile-dir=" + root, "--port=%d" % self.port, "--perfetto-port=0",
             "--db=" + os.path.join(tmpdir(), "i.sqlite"), "--quiet"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_indexed(self.port, min_profiles=n + 1)
        _, ps = get(self.port, "/api/profiles")
        self.ids = {}
        for p in ps["profiles"]:
            assert p["status"] == "ok", p
            run = p["path"].split("/")[-2]
            self.ids["torch" if run == "torch" else run] = p["id"]
        return self

    def __exit__(self, *exc):
        self.proc.terminate()
        self.proc.wait(timeout=10)

    def api(self, key, sub, want=200):
        status, ans = get(self.port, "/api/profiles/%s/%s" % (self.ids[key], sub))
        assert status == want, (key, sub, status, ans)
        return ans


SERVER = None


def server():
    global SERVER
    if SERVER is None:
        SERVER = Server().__enter__()
    return SERVER


def load_json(path):
    with gzip.open(path, "rt") as f:
        t = json.load(f)
    return t["traceEvents"] if isinstance(t, dict) else t


def table(s, key, kind):
    ans = s.api(key, "kernels?kind=%s" % kind)
    assert ans["total_rows"] == len(ans["kernels"]), ans["total_rows"]
    return {k["name"]: k for k in ans["kernels"]}


def sums(events):
    """{name: [count, total µs]}"""
    out = defaultdict(lambda: [0, 0.0])
    for e in events:
        out[e["name"]][0] += 1
        out[e["name"]][1] += e["dur"]
    return out


def same_table(got, want, what, per_event=0.0):
    """got (API rows by name) against want ({name: [count, total µs]}),
    totals within per_event µs per event (plus float noise)."""
    assert sorted(got) == sorted(want), (what, sorted(set(got) ^ set(want))[:5])
    for name, (count, total) in want.items():
        k = got[name]
        assert k["count"] == count, (what, name, k["count"], count)
        assert abs(k["total_us"] - total) <= per_event * count + 1e-6, (what, name, k, total)


# ---- torch-train ----

def test_torch_steps():
    s = server()
    ev = load_json(TORCH)
    want = sorted((e["name"], e["ts"], e["dur"]) for e in ev
                  if e.get("cat") == "user_annotation" and e["name"].startswith("ProfilerStep#"))
    assert [w[0] for w in want] == ["ProfilerStep#%d" % i for i in (2, 3, 4, 5)], want
    steps = s.api("torch", "steps")["steps"]
    assert [x["step"] for x in steps] == [2, 3, 4, 5], steps
    for x, (name, ts, dur) in zip(steps, want):
        assert x["name"] == name, (x, name)
        assert abs(x["start_us"] - ts) < 1e-3 and abs(x["duration_us"] - dur) < 1e-3, (x, ts, dur)


def test_torch_kernels_and_launch_shapes():
    s = server()
    ev = load_json(TORCH)
    kernels = [e for e in ev if e.get("cat") == "kernel" and e.get("ph") == "X"]
    assert len(kernels) == 1372, len(kernels)
    got = table(s, "torch", "kernel")
    same_table(got, sums(kernels), "torch kernels", 1e-3)
    shapes = defaultdict(set)
    for e in kernels:
        a = e["args"]
        shapes[e["name"]].add((",".join(map(str, a["grid"])), ",".join(map(str, a["block"])),
                               a["registers per thread"]))
    one = 0
    for name, sh in shapes.items():
        k = got[name]
        if len(sh) == 1:
            grid, block, regs = next(iter(sh))
            assert (k["grid"], k["block"], k["registers_per_thread"]) == (grid, block, regs), \
                (name, k, sh)
            one += 1
        else:
            assert k["grid"] is None and k["shapes"] >= len(sh), (name, k, sh)
    assert one >= 40, one  # most kernels launch with one shape


def test_torch_memory():
    s = server()
    ev = load_json(TORCH)
    per = defaultdict(list)
    for e in ev:
        if e.get("name") == "[memory]":
            a = e["args"]
            dev = "CPU" if a["Device Type"] == 0 else "CUDA:%d" % a["Device Id"]
            per[dev].append(a)
    assert len(per["CUDA:0"]) == 3512, {k: len(v) for k, v in per.items()}
    ans = s.api("torch", "memory_profile")
    got = {a["name"]: a for a in ans["allocators"]}
    assert sorted(got) == sorted(per), (sorted(got), sorted(per))
    for dev, evs in per.items():
        a, sm = got[dev], got[dev]["summary"]
        assert a["source"] == "pytorch" and a["in_use_source"] == "stat" and a["events"] == len(evs)
        assert sm["allocations"] == sum(1 for x in evs if x["Bytes"] > 0), (dev, sm)
        assert sm["deallocations"] == sum(1 for x in evs if x["Bytes"] < 0), (dev, sm)
        assert sm["peak_bytes_in_use"] == max(x["Total Allocated"] for x in evs), (dev, sm)
    peaks = [a["summary"]["peak_bytes_in_use"] for a in ans["allocators"]]
    assert peaks == sorted(peaks, reverse=True) and ans["peak_allocator"] == "CUDA:0", peaks


def test_torch_pageable_copy():
    s = server()
    ev = load_json(TORCH)
    copies = [e for e in ev if e.get("cat") == "gpu_memcpy"]
    pageable = [e for e in copies if "Pageable" in e["name"]]
    assert {e["name"] for e in pageable} == {"Memcpy HtoD (Pageable -> Device)"}, pageable
    assert len(pageable) == 4  # one a step
    got = table(s, "torch", "memcpy")
    same_table(got, sums(copies), "torch memcpy", 1e-3)
    row = got["Memcpy HtoD (Pageable -> Device)"]
    assert row["category"] == "memcpy_h2d", row
    f = [x for x in s.api("torch", "findings")["findings"] if x["kind"] == "pageable_memory"]
    assert len(f) == 1 and f[0]["value"] == len(pageable), f
    assert "Memcpy HtoD (Pageable -> Device)" in f[0]["title"], f[0]
    longest = max(e["dur"] for e in pageable)
    ev0 = f[0]["evidence"][0]
    assert "Memcpy HtoD (Pageable -> Device)" in ev0["label"], ev0
    assert abs(ev0["end_us"] - ev0["start_us"] - longest) < 1e-3, (ev0, longest)


# ---- one JAX capture, two files ----

def device_events(path):
    """{kind: [X events]} of the JSON's /device:GPU processes, by the args
    JAX writes (kernel_details, memcpy_details, Memset_details)."""
    ev = load_json(path)
    gpu = {e["pid"] for e in ev if e.get("ph") == "M" and e.get("name") == "process_name"
           and e["args"]["name"].startswith("/device:GPU:")}
    out = defaultdict(list)
    for e in ev:
        if e.get("ph") != "X" or e.get("pid") not in gpu:
            continue
        a = e.get("args", {})
        if "kernel_details" in a:
            out["kernel"].append(e)
        elif "memcpy_details" in a:
            out["memcpy"].append(e)
        elif "Memset_details" in a or "memset_details" in a:
            out["memset"].append(e)
    return out


def test_xplane_and_json_agree():
    s = server()
    for cap, src in CAPTURES.items():
        dev = device_events(os.path.join(src, "vm.trace.json.gz"))
        assert dev["kernel"] and dev["memcpy"] and dev["memset"], (cap, {k: len(v) for k, v in
                                                                         dev.items()})
        for kind in ("kernel", "memcpy", "memset"):
            x = table(s, cap + "-x", kind)
            j = table(s, cap + "-j", kind)
            same_table(j, sums(dev[kind]), "%s %s json" % (cap, kind), 1e-3)
            # the xplane's picoseconds against the JSON's nanoseconds
            same_table(x, {n: [k["count"], k["total_us"]] for n, k in j.items()},
                       "%s %s xplane" % (cap, kind), 1e-3)


# ---- allocators of the JAX xplanes ----

def test_jax_allocators():
    s = server()
    for cap, src in CAPTURES.items():
        want = memory_events(os.path.join(src, "vm.xplane.pb"))
        ans = s.api(cap + "-x", "memory_profile")
        got = {a["name"]: a for a in ans["allocators"]}
        assert sorted(got) == sorted(want) and "GPU_0_bfc" in got, (cap, sorted(got))
        for al, evs in want.items():
            a, sm = got[al], got[al]["summary"]
            assert a["source"] == "xplane" and a["events"] == len(evs), (cap, al, a["events"])
            assert sm["allocations"] == sum(1 for e in evs if e[1] > 0), (cap, al, sm)
            assert sm["deallocations"] == sum(1 for e in evs if e[1] < 0), (cap, al, sm)
            assert sm["peak_bytes_in_use"] == max(e[2]["bytes_allocated"] for e in evs), (al, sm)
            assert sm["lifetime_peak_bytes"] == max(e[2]["peak_bytes_in_use"] for e in evs)
        if cap == "perfetto":  # the python3 line's 252 / 249, and 3 / 6 on two others
            assert sum(a["summary"]["allocations"] for a in got.values()) == 255
            assert sum(a["summary"]["deallocations"] for a in got.values()) == 255
            assert got["GPU_0_bfc"]["summary"]["allocations"] == 249
        order = [a["name"] for a in ans["allocators"]]
        peaks = [a["summary"]["peak_bytes_in_use"] for a in ans["allocators"]]
        assert peaks == sorted(peaks, reverse=True) and order[0] == "GPU_0_bfc", (cap, order)
        assert ans["peak_allocator"] == "GPU_0_bfc", ans["peak_allocator"]
        t = s.api(cap + "-x", "tools/memory_profile")
        assert [r["allocator"] for r in t["rows"]] == order, (cap, t["rows"])
        assert t["properties"]["peak_allocator"] == "GPU_0_bfc"
        q = urllib.parse.urlencode({"run": cap + "-x", "tag": "memory_profile", "host": "vm"})
        status, dt = get(s.port, "/data/plugin/profile/data?" + q)
        assert status == 200 and [r["c"][0]["v"] for r in dt["rows"]] == order, (status, dt)


if __name__ == "__main__":
    need_fixtures()
    if not os.path.isdir(GPU):
        print("SKIP: %s not found; the GPU fixture tests are skipped" % GPU)
        sys.exit(77)
    try:
        main([test_torch_steps, test_torch_kernels_and_launch_shapes, test_torch_memory,
              test_torch_pageable_copy, test_xplane_and_json_agree, test_jax_allocators])
    finally:
        if SERVER:
            SERVER.__exit__(None, None, None)
