#!/usr/bin/env python3
"""test_xplane.py — the xplane reader against an independent count.

The first half is an independent XSpace (*.xplane.pb) reader for the tests.

Python stdlib only, written from the schema (field numbers) alone, sharing no
code with the C reader: it walks the protobuf wire format and counts, per plane
and line, the timed events (events without num_occurrences), plus the events
whose stats include kernel_details.
"""


def _varint(b, i):
    r = s = 0
    while True:
        c = b[i]
        i += 1
        r |= (c & 0x7F) << s
        s += 7
        if not c & 0x80:
            return r, i


def fields(b):
    """Yields (field number, wire type, value) of one message."""
    i = 0
    while i < len(b):
        key, i = _varint(b, i)
        num, wire = key >> 3, key & 7
        if wire == 0:
            v, i = _varint(b, i)
        elif wire == 1:
            v, i = b[i:i + 8], i + 8
        elif wire == 5:
            v, i = b[i:i + 4], i + 4
        elif wire == 2:
            n, i = _varint(b, i)
            v, i = b[i:i + n], i + n
        else:
            raise ValueError("wire type %d" % wire)
        yield num, wire, v


def signed64(v):
    return v - (1 << 64) if v >= (1 << 63) else v


def _stat_names(plane_bytes):
    names = {}
    for num, _, v in fields(plane_bytes):
        if num != 5:
            continue
        entry = dict((n, val) for n, _, val in fields(v))
        meta = dict((n, val) for n, _, val in fields(entry.get(2, b"")))
        names[signed64(entry.get(1, 0))] = meta.get(2, b"").decode("utf-8", "replace")
    return names


def read_space(path):
    """Returns a list of planes: {"name", "id", "lines": [{"id", "tid", "name",
    "timed", "aggregated", "kernel_details"}]}."""
    data = open(path, "rb").read()
    planes = []
    for num, _, v in fields(data):
        if num != 1:
            continue
        plane = {"name": "", "id": 0, "lines": []}
        stat_names = _stat_names(v)
        kd_ids = set(k for k, n in stat_names.items() if n == "kernel_details")
        for pnum, _, pv in fields(v):
            if pnum == 1:
                plane["id"] = signed64(pv)
            elif pnum == 2:
                plane["name"] = pv.decode("utf-8", "replace")
            elif pnum == 3:
                plane["lines"].append(_read_line(pv, kd_ids))
        planes.append(plane)
    return planes


def _read_line(b, kd_ids):
    line = {"id": 0, "display_id": 0, "name": "", "display_name": "", "timed": 0,
            "aggregated": 0, "kernel_details": 0}
    for num, _, v in fields(b):
        if num == 1:
            line["id"] = signed64(v)
        elif num == 10:
            line["display_id"] = signed64(v)
        elif num == 2:
            line["name"] = v.decode("utf-8", "replace")
        elif num == 11:
            line["display_name"] = v.decode("utf-8", "replace")
        elif num == 4:
            ev = list(fields(v))
            if any(n == 5 for n, _, _ in ev):
                line["aggregated"] += 1
                continue
            line["timed"] += 1
            for n, _, sv in ev:
                if n == 4:
                    stat = dict((sn, sval) for sn, _, sval in fields(sv))
                    if signed64(stat.get(1, 0)) in kd_ids:
                        line["kernel_details"] += 1
                        break
    line["tid"] = line["display_id"] or line["id"]
    line["shown_name"] = line["display_name"] or line["name"]
    return line


# ---- the tests ----

import json
import os
import sqlite3
import subprocess
import sys
import tempfile

FIXTURES = ("jax-rocm-mi300x-gemm.xplane.pb", "jax-rocm-mi300x-conv-8gpu.xplane.pb",
            "jax-tpu-v6e-inference.xplane.pb")
# Sizes known from ../shared/fixtures/SOURCES.md, to show the reader above is not
# vacuous: the gemm file has 54 device events on its two kernel streams.
GEMM_DEVICE_EVENTS = 54

passed = failed = 0


def check(cond, what):
    global passed, failed
    if cond:
        passed += 1
    else:
        failed += 1
        print("FAIL:", what)


def index_file(path, db):
    out = subprocess.run([os.environ["XPV_BIN"], "--profile-dir=" + path, "--list-only", "--json",
                          "--db=" + db], capture_output=True, text=True, timeout=300)
    if out.returncode != 0:
        print(out.stderr)
    return json.loads(out.stdout)


def tracks_of(db):
    con = sqlite3.connect(db)
    rows = con.execute("SELECT pid, tid, process_name, thread_name, events, device_id"
                       " FROM tracks").fetchall()
    con.close()
    return rows


def compare_file(path, tmp):
    """Indexes path and compares every track with the independent count."""
    name = os.path.basename(path)
    planes = read_space(path)
    expect = {}
    for p in planes:
        for ln in p["lines"]:
            key = (p["name"], ln["tid"])
            prev = expect.get(key, (ln["shown_name"], 0))
            expect[key] = (prev[0], prev[1] + ln["timed"])
    timed = sum(ln["timed"] for p in planes for ln in p["lines"])
    db = os.path.join(tmp, name + ".db")
    listing = index_file(path, db)
    check(len(listing) == 1, name + ": one profile listed")
    prof = listing[0]
    check(prof["status"] == "ok", name + ": status ok (" + str(prof.get("error")) + ")")
    check(prof["format"] == "xplane", name + ": format xplane")
    check(prof["events"] == timed, "%s: events %s == timed events %d" % (name, prof["events"], timed))
    got = {}
    for pid, tid, pname, tname, events, device_id in tracks_of(db):
        got[(pname, tid)] = (tname, events)
    check(set(got) == set(expect), name + ": same (plane, line) tracks: missing %s extra %s" % (
        sorted(set(expect) - set(got))[:5], sorted(set(got) - set(expect))[:5]))
    for key in expect:
        if key in got:
            check(got[key] == expect[key], "%s: track %s: index %s, independent %s" % (
                name, key, got[key], expect[key]))
    devices = [p for p in planes if p["name"].startswith("/device:")]
    check(len(prof["devices"]) == len(devices), name + ": one device fact per device plane")
    return planes, prof


def main():
    fixtures = os.environ.get("XPV_FIXTURES", "")
    if not fixtures or not os.path.isdir(os.path.join(fixtures, "xplane")):
        print("SKIP: $XPV_FIXTURES/xplane is absent (needs ../shared/fixtures)")
        return 77
    with tempfile.TemporaryDirectory() as tmp:
        results = {}
        for f in FIXTURES:
            results[f] = compare_file(os.path.join(fixtures, "xplane", f), tmp)
        gemm_planes, gemm = results[FIXTURES[0]]
        dev = sum(ln["timed"] for p in gemm_planes if p["name"] == "/device:GPU:0"
                  for ln in p["lines"])
        check(dev == GEMM_DEVICE_EVENTS, "gemm: %d device events, SOURCES.md says 54" % dev)
        for f in FIXTURES[:2]:
            planes, prof = results[f]
            kd = sum(ln["kernel_details"] for p in planes for ln in p["lines"])
            check(kd > 0, f + ": has kernels with kernel_details")
            check(prof["kernel_count"] == kd, "%s: kernel_count %s == events with kernel_details %d"
                  % (f, prof["kernel_count"], kd))
            check(prof["producer"] == "JAX/XLA", f + ": producer JAX/XLA")
        tpu_planes, tpu = results[FIXTURES[2]]
        check(len(tpu_planes) == 7, "tpu: 7 planes (%d)" % len(tpu_planes))
        host = [p for p in tpu_planes if p["name"] == "/host:CPU"][0]
        check(len(host["lines"]) == 122, "tpu: 122 host lines (%d)" % len(host["lines"]))
        check(tpu["devices"][0].startswith("TPU:0 (TPU v6 Lite)"), "tpu: device model fact")
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
