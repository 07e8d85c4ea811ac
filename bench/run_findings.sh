#!/usr/bin/env bash
# run_findings.sh — /api/profiles/{id}/findings on large generated profiles:
# the first answer after indexing (nothing cached), the cached one, and the
# server's anonymous memory (RssAnon: the index it maps is page cache) after
# each, next to the time a full scan of the same events takes (the trace
# export route streaming the whole profile), which is the floor a scanning
# answer is measured against.
# usage: bench/run_findings.sh [BUILD_DIR=build] [DATA=/tmp/xpv-bench-findings] [SIZE=256MB]
set -euo pipefail

. "$(dirname "$0")/serve.sh"
xpv_bench_args "${1:-}" "${2:-/tmp/xpv-bench-findings}" "${3:-256MB}"

if [ ! -d "$data/profiles" ]; then
  echo "generating a $size JAX xplane and a $size PyTorch trace in $data/profiles ..."
  "$build/xpv-gen" --out "$data/profiles/jax" --kind jax --size "$size" --devices 8 --no-json
  "$build/xpv-gen" --out "$data/profiles/pytorch" --kind pytorch --size "$size"
fi
# What computing them takes, not reading the answer the server keeps
# (bench/run_findings_store.sh times that against this).
export XPV_FINDINGS_STORE=off
xpv_bench_index "$bin" "$data/profiles" "$data/index.sqlite"
xpv_bench_serve "$bin" "$data/profiles" "$data/index.sqlite" "$data/server.log"

python3 - "$base" "$pid" <<'PY'
import json, sys, time, urllib.request
base, pid = sys.argv[1], sys.argv[2]
def get(path):
    t = time.perf_counter()
    with urllib.request.urlopen(base + path, timeout=600) as r:
        body = r.read()
    return body, time.perf_counter() - t
def anon():
    for line in open("/proc/%s/status" % pid):
        if line.startswith("RssAnon:"):
            return int(line.split()[1]) // 1024
    return 0
print("%-34s %10s %6s %9s %9s %9s %8s" % ("profile", "events", "steps", "first s", "again s",
                                          "export s", "anon MB"))
for p in json.load(urllib.request.urlopen(base + "/api/profiles"))["profiles"]:
    if p["status"] != "ok":
        continue
    body, first = get("/api/profiles/%s/findings" % p["id"])
    mem = anon()
    _, again = get("/api/profiles/%s/findings" % p["id"])
    _, export = get("/api/profiles/%s/trace" % p["id"])
    kinds = ",".join(f["kind"] for f in json.loads(body)["findings"])
    print("%-34s %10d %6s %9.3f %9.3f %9.3f %8d  %s" % (p["path"][-34:], p["events"],
          p["step_count"], first, again, export, mem, kinds))
PY
