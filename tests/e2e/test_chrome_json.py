#!/usr/bin/env python3
"""test_chrome_json.py — every Chrome trace JSON fixture (and a generated
PyTorch trace) indexes with status "ok", and what `--list-only --json`
reports equals an independent reading of the same file with Python's json
and gzip modules: event counts per phase, the number of stored events
(after B/E and b/e pairing), the producer, the kernel count, and the
events that `--extract` writes back out.
"""
import collections
import glob
import gzip
import json
import os
import subprocess
import sys
import tempfile

PASSED = 0
FAILED = 0

PRODUCERS = {
    "pytorch-gp100-user-annotations.json.gz": "PyTorch",
    "pytorch-h100-bert-small.json.gz": "PyTorch",
    "pytorch-rocm-mi210-gpu-only.json.gz": "PyTorch",
    "pytorch-v100-resnet50.pt.trace.json.gz": "PyTorch",
    "tf1-xla-gpu-timeline.ctf.json": "TensorFlow",
}
STORED_PHASES = set("XBEiICbenstf")


def check(cond, what):
    global PASSED, FAILED
    if cond:
        PASSED += 1
    else:
        FAILED += 1
        print("FAIL:", what)


def load_events(path):
    with open(path, "rb") as f:
        gz = f.read(2) == b"\x1f\x8b"
    with (gzip.open(path, "rb") if gz else open(path, "rb")) as f:
        doc = json.load(f)
    return doc["traceEvents"] if isinstance(doc, dict) else doc


def independent_counts(events):
    """Per-phase counts of the raw file and the number of events a reader
    that pairs B/E per thread and b/e per (cat, id, id2, name) stores."""
    phases = collections.Counter()
    stored = 0
    open_b = collections.defaultdict(int)
    open_async = collections.defaultdict(int)
    kernels = 0
    for e in events:
        ph = e.get("ph")
        if not isinstance(ph, str) or not ph:
            continue
        phases[ph[0]] += 1
        if len(ph) != 1 or ph not in STORED_PHASES:
            continue
        if e.get("cat") in ("kernel", "Kernel"):
            kernels += 1
        key = (str(e.get("pid")), str(e.get("tid")))
        if ph == "B":
            open_b[key] += 1
        elif ph == "E":
            if open_b[key]:
                open_b[key] -= 1
            stored += 1  # a pair, or a lone E
        elif ph == "b":
            open_async[(e.get("cat"), json.dumps(e.get("id")), json.dumps(e.get("id2")),
                        e.get("name"))] += 1
        elif ph == "e":
            k = (e.get("cat"), json.dumps(e.get("id")), json.dumps(e.get("id2")), e.get("name"))
            if open_async[k]:
                open_async[k] -= 1
            stored += 1
        else:
            stored += 1
    stored += sum(open_b.values()) + sum(open_async.values())
    return dict(phases), stored, kernels


def run_list(binary, path, db):
    out = subprocess.run([binary, "--profile-dir=" + path, "--list-only", "--json", "--db=" + db],
                         capture_output=True, text=True, timeout=600)
    if out.returncode != 0:
        print(out.stderr)
    return json.loads(out.stdout)


def extracted_events(binary, path, db, outdir):
    out = subprocess.run([binary, "--profile-dir=" + path, "--extract=" + outdir, "--db=" + db],
                         capture_output=True, text=True, timeout=600)
    files = [f for f in glob.glob(os.path.join(outdir, "**", "*"), recursive=True)
             if os.path.isfile(f)]
    if out.returncode != 0 or len(files) != 1:
        print(out.stdout, out.stderr)
        return None
    return load_events(files[0])


def check_file(binary, path, tmp, expect_producer=None, extract=True):
    name = os.path.basename(path)
    db = os.path.join(tmp, name + ".sqlite")
    rows = run_list(binary, path, db)
    check(len(rows) == 1, name + ": one profile listed")
    if len(rows) != 1:
        return
    row = rows[0]
    phases, stored, kernels = independent_counts(load_events(path))
    check(row["status"] == "ok", "%s: status %s (%s)" % (name, row["status"], row.get("error")))
    check(row["phase_counts"] == phases,
          "%s: phase_counts %s != independent %s" % (name, row["phase_counts"], phases))
    check(row["events"] == stored, "%s: events %s != independent %s" % (name, row["events"], stored))
    if expect_producer:
        check(row["producer"] == expect_producer,
              "%s: producer %s != %s" % (name, row["producer"], expect_producer))
    if expect_producer == "PyTorch":
        check(row["kernel_count"] == kernels,
              "%s: kernel_count %s != %s kernel events" % (name, row["kernel_count"], kernels))
    if extract:
        outdir = os.path.join(tmp, name + ".extract")
        events = extracted_events(binary, path, db, outdir)
        check(events is not None, name + ": --extract wrote one JSON file")
        if events is not None:
            n = sum(1 for e in events if isinstance(e, dict) and e.get("ph") not in (None, "M"))
            check(n == row["events"], "%s: --extract has %d events, index %d" % (name, n,
                                                                                row["events"]))


def main():
    binary = os.environ.get("XPV_BIN")
    fixtures = os.environ.get("XPV_FIXTURES")
    if not binary:
        print("SKIP: XPV_BIN is not set")
        return 77
    files = sorted(glob.glob(os.path.join(fixtures or "/nonexistent", "chrome-json", "*")))
    with tempfile.TemporaryDirectory(prefix="xpv-chrome-json-") as tmp:
        for path in files:
            check_file(binary, path, tmp, PRODUCERS.get(os.path.basename(path)))
        gen = os.environ.get("XPV_GEN")
        if gen:
            outdir = os.path.join(tmp, "gen")
            r = subprocess.run([gen, "--kind", "pytorch", "--out", outdir, "--size", "9MB",
                                "--steps", "3"], capture_output=True, text=True)
            made = glob.glob(os.path.join(outdir, "*.pt.trace.json.gz"))
            check(r.returncode == 0 and len(made) == 1, "xpv-gen --kind pytorch wrote a trace")
            for path in made:
                check_file(binary, path, tmp, "PyTorch", extract=False)
    if not files:
        print("SKIP: no fixtures (XPV_FIXTURES=%s)" % fixtures)
        print("%d passed, %d failed" % (PASSED, FAILED))
        return 1 if FAILED else 77
    print("%d passed, %d failed" % (PASSED, FAILED))
    return 1 if FAILED else 0


if __name__ == "__main__":
    sys.exit(main())
