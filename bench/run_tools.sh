#!/usr/bin/env bash
# run_tools.sh — the XProf tools on a large generated run: how long each
# tool's first answer takes after indexing (nothing cached), over HTTP from
# the real server, and the server's memory through all of them: its peak RSS
# (VmHWM, which counts the pages of the index it maps) and its anonymous
# memory (RssAnon) after each answer.
# Target (issue 20): every tool within 2 s of its first request on a 1 GB
# xplane, server peak RSS under 500 MB.
# usage: bench/run_tools.sh [BUILD_DIR=build] [DATA=/tmp/xpv-bench-tools] [SIZE=1GB]
set -euo pipefail

. "$(dirname "$0")/serve.sh"
xpv_bench_args "${1:-}" "${2:-/tmp/xpv-bench-tools}" "${3:-1GB}"

if [ ! -d "$data/profiles" ]; then
  echo "generating a $size JAX run (2 hosts) in $data/profiles ..."
  "$build/xpv-gen" --out "$data/profiles" --kind jax --size "$size" --hosts 2 --devices 8 --no-json
fi
xpv_bench_index "$bin" "$data/profiles" "$data/index.sqlite"
xpv_bench_serve "$bin" "$data/profiles" "$data/index.sqlite" "$data/server.log"

python3 - "$base" "$pid" <<'PY'
import json, sys, time, urllib.parse, urllib.request
base, pid = sys.argv[1], sys.argv[2]
def get(path):
    t = time.perf_counter()
    try:
        with urllib.request.urlopen(base + path, timeout=600) as r:
            n = len(r.read())
            status = r.status
    except urllib.error.HTTPError as e:
        n, status = len(e.read()), e.code
    return status, n, time.perf_counter() - t
def status(key):
    for line in open("/proc/%s/status" % pid):
        if line.startswith(key + ":"):
            return int(line.split()[1]) // 1024
    return 0
anon_peak = [0]
def sample():  # anonymous memory: the index's mmap'd pages are the page cache's
    anon_peak[0] = max(anon_peak[0], status("RssAnon"))
print("\n%-26s %-14s %6s %10s %9s %9s" % ("tool", "host", "status", "bytes", "first s", "again s"))
runs = json.load(urllib.request.urlopen(base + "/data/plugin/profile/runs"))
worst = 0.0
for run in runs:
    r = urllib.parse.quote(run)
    tools = json.load(urllib.request.urlopen(base + "/data/plugin/profile/run_tools?run=" + r))
    for tag in tools:
        if tag == "trace_viewer":
            continue  # the whole trace is a stream, measured by the export benchmark
        hosts = json.load(urllib.request.urlopen(
            base + "/data/plugin/profile/hosts?run=%s&tag=%s" % (r, tag)))
        for h in [x["hostname"] for x in hosts][:2]:
            path = "/data/plugin/profile/data?run=%s&tag=%s&host=%s" % (r, tag, urllib.parse.quote(h))
            st, n, first = get(path)
            sample()
            _, _, again = get(path)
            sample()
            worst = max(worst, first)
            print("%-26s %-14s %6d %10d %9.3f %9.3f" % (tag, h[:14], st, n, first, again))
print("\nslowest first answer: %.3f s (target < 2 s)" % worst)
print("server peak RSS %d MB, of which the index file mapped read-only; anonymous memory"
      " after each answer at most %d MB (target < 500 MB)" % (status("VmHWM"), anon_peak[0]))
PY
