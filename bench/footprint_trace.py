#!/usr/bin/env python3
"""footprint_trace.py — the trace of issue 25: a real PyTorch trace repeated.

Writes SRC's non-metadata events COPIES times, each copy's timestamps
shifted past the end of the previous copy, one event per line with
json.dumps, gzip level 6; metadata events and the other top-level keys
appear once. usage: footprint_trace.py SRC.json.gz COPIES OUT.json.gz
"""
import gzip
import json
import sys

src, copies, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
doc = json.load(gzip.open(src))
events = doc.pop("traceEvents")
meta = [e for e in events if e.get("ph") == "M"]
body = [e for e in events if e.get("ph") != "M"]
t0 = min(e["ts"] for e in body if "ts" in e)
t1 = max(e["ts"] + e.get("dur", 0) for e in body if "ts" in e)
span = int(t1 - t0) + 1000  # a 1 ms gap between copies
tmp = out + ".part"
with gzip.open(tmp, "wt", compresslevel=6) as f:
    f.write("{\n")
    for k, v in doc.items():
        f.write("%s: %s,\n" % (json.dumps(k), json.dumps(v)))
    f.write('"traceEvents": [\n')
    first = True
    for e in meta:
        f.write(("" if first else ",\n") + json.dumps(e))
        first = False
    for c in range(copies):
        for e in body:
            if "ts" in e:
                e = dict(e, ts=e["ts"] + c * span)
            f.write(("" if first else ",\n") + json.dumps(e))
            first = False
    f.write("\n]}\n")
import os

os.replace(tmp, out)
print("wrote %s: %d events" % (out, len(meta) + copies * len(body)))
