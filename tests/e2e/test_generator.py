#!/usr/bin/env python3
"""test_generator.py — xpv-gen --kind jax writes profiles that the index, an
independent protobuf reader (test_xplane.read_space) and the JSON twin agree on.

Checks: the run/host layout; for every <host>.xplane.pb the index's per-track
event counts equal the independent count; the <host>.trace.json.gz twin parses
and has the same X events per (pid, tid); steps and kernels are where the
generator put them; --no-steps drops the step markers; output is deterministic.
"""
import filecmp
import gzip
import json
import os
import re
import sqlite3
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_xplane import read_space, fields, signed64  # noqa: E402

passed = failed = 0


def check(cond, what):
    global passed, failed
    if cond:
        passed += 1
    else:
        failed += 1
        print("FAIL:", what)


def gen(out, *extra):
    args = [os.environ["XPV_GEN"], "--out", out, "--kind", "jax"] + list(extra)
    r = subprocess.run(args, capture_output=True, text=True, timeout=300)
    check(r.returncode == 0, "xpv-gen %s: exit 0 (%s)" % (" ".join(extra), r.stderr.strip()))


def xplanes(root):
    found = []
    for d, _, files in os.walk(root):
        found += [os.path.join(d, f) for f in files if f.endswith(".xplane.pb")]
    return sorted(found)


def index(path, db):
    r = subprocess.run([os.environ["XPV_BIN"], "--profile-dir=" + path, "--list-only", "--json",
                        "--db=" + db], capture_output=True, text=True, timeout=300)
    return json.loads(r.stdout)[0]


def host_stat_events(path, stat):
    """Independent count of /host:CPU events carrying a stat named `stat`."""
    n = 0
    for num, _, plane in fields(open(path, "rb").read()):
        if num != 1:
            continue
        pf = list(fields(plane))
        if not any(f == 2 and v == b"/host:CPU" for f, _, v in pf):
            continue
        ids = set()
        for f, _, v in pf:
            if f == 5:
                e = dict((a, b) for a, _, b in fields(v))
                m = dict((a, b) for a, _, b in fields(e.get(2, b"")))
                if m.get(2) == stat.encode():
                    ids.add(signed64(e.get(1, 0)))
        for f, _, line in pf:
            if f != 3:
                continue
            for lf, _, ev in fields(line):
                if lf == 4 and any(sf == 4 and signed64(dict(
                        (a, b) for a, _, b in fields(sv)).get(1, 0)) in ids
                        for sf, _, sv in fields(ev)):
                    n += 1
    return n


def check_file(path, tmp, steps, devices, with_steps):
    name = os.path.relpath(path, tmp)
    planes = read_space(path)
    timed = sum(ln["timed"] for p in planes for ln in p["lines"])
    db = os.path.join(tmp, "idx-%d.db" % passed)
    prof = index(path, db)
    check(prof["status"] == "ok", name + ": status ok")
    check(prof["events"] == timed, "%s: events %s == independent %d" % (name, prof["events"], timed))
    con = sqlite3.connect(db)
    tracks = {(pid, tid): (pn, tn, n) for pid, tid, pn, tn, n in con.execute(
        "SELECT pid, tid, process_name, thread_name, events FROM tracks")}
    con.close()
    expect = {}
    for p in planes:
        for ln in p["lines"]:
            expect[(p["name"], ln["tid"])] = (ln["shown_name"], ln["timed"])
    got = {(pn, tid): (tn, n) for (pid, tid), (pn, tn, n) in tracks.items()}
    check(got == expect, name + ": per-track counts equal the independent reader")
    gpu = [p for p in planes if p["name"].startswith("/device:GPU:")]
    check(len(gpu) == devices, name + ": %d GPU planes" % devices)
    all_kernels = sum(ln["kernel_details"] for p in gpu for ln in p["lines"])
    check(prof["kernel_count"] == all_kernels, name + ": kernel_count %s == kernels %d" % (
        prof["kernel_count"], all_kernels))
    for p in gpu:
        kernels = sum(ln["kernel_details"] for ln in p["lines"])
        on_kernel_lines = sum(ln["timed"] for ln in p["lines"] if ln["name"].endswith("(Kernel)"))
        check(kernels == on_kernel_lines and kernels > 0,
              name + ": every kernel carries kernel_details")
        modules = [ln for ln in p["lines"] if ln["name"] == "XLA Modules"]
        check(len(modules) == 1 and modules[0]["timed"] == steps,
              name + ": one XLA Modules event per step")
    check(host_stat_events(path, "step_num") == (steps if with_steps else 0),
          name + ": step_num annotations")
    check(host_stat_events(path, "correlation_id") == all_kernels + 2 * steps * devices,
          name + ": one host launch per kernel and memcpy")
    twin = path[:-len(".xplane.pb")] + ".trace.json.gz"
    if os.path.exists(twin):
        doc = json.load(gzip.open(twin))
        xs = {}
        for e in doc["traceEvents"]:
            if e.get("ph") == "X":
                xs[(e["pid"], e["tid"])] = xs.get((e["pid"], e["tid"]), 0) + 1
        check(sum(xs.values()) == timed, name + ": JSON twin has the same number of X events")
        by_track = {k: v[2] for k, v in tracks.items() if v[2]}
        check(xs == by_track, name + ": JSON twin X events per (pid, tid) equal the index's")
        check(doc.get("displayTimeUnit") == "ns", name + ": JAX converter header")


def main():
    for var in ("XPV_BIN", "XPV_GEN"):
        if not os.environ.get(var):
            print("SKIP: $%s not set (run through ctest)" % var)
            return 77
    with tempfile.TemporaryDirectory() as tmp:
        a = os.path.join(tmp, "a")
        gen(a, "--runs", "2", "--hosts", "2", "--devices", "2", "--steps", "4", "--size", "600KB")
        files = xplanes(a)
        check(len(files) == 4, "2 runs x 2 hosts = 4 xplane files (%d)" % len(files))
        for f in files:
            check(re.search(r"/plugins/profile/\d{4}(_\d\d){5}/[^/]+\.xplane\.pb$", f) is not None,
                  "layout plugins/profile/<run>/<host>.xplane.pb: " + f)
            check(os.path.exists(f[:-len(".xplane.pb")] + ".trace.json.gz"), "twin of " + f)
        for f in files[:2]:
            check_file(f, tmp, 4, 2, True)

        b = os.path.join(tmp, "b")
        gen(b, "--devices", "3", "--steps", "3", "--size", "300KB", "--no-steps", "--no-json")
        files_b = xplanes(b)
        check(len(files_b) == 1, "one file for one run and host")
        check(not any(n.endswith(".json.gz") for _, _, fs in os.walk(b) for n in fs),
              "--no-json writes no trace.json.gz")
        check_file(files_b[0], tmp, 3, 3, False)

        c = os.path.join(tmp, "c")
        gen(c, "--runs", "2", "--hosts", "2", "--devices", "2", "--steps", "4", "--size", "600KB")
        same = all(filecmp.cmp(x, y, shallow=False) for x, y in zip(files, xplanes(c)))
        check(same, "same seed, same bytes")

        size = os.path.getsize(files_b[0])
        d = os.path.join(tmp, "d")
        gen(d, "--devices", "3", "--steps", "3", "--size", "3MB", "--no-json")
        bigger = os.path.getsize(xplanes(d)[0])
        check(bigger > 4 * size, "--size scales the file (%d -> %d bytes)" % (size, bigger))
        check(2.2e6 < bigger < 4.0e6, "--size 3MB gives about 3 MB (%d bytes)" % bigger)
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
