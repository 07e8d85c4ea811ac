#!/usr/bin/env bash
# run_tools_cpu.sh — server CPU seconds (user + sys, from /proc) of listing a
# run's tools and of the HLO tools' first answers, for one or more builds over
# the same index, alternated ROUNDS times: CPU time, not wall time, so that a
# busy machine skews the comparison less. Made to compare derived FLOPs
# (api/hlo/hlo_derive.c) with a build without them.
# usage: bench/run_tools_cpu.sh DATA ROUNDS BIN [BIN...]
#   DATA: a folder bench/run_tools.sh filled (profiles/ and index.sqlite)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
data=$1 rounds=$2
shift 2
. "$here/bench/serve.sh"
for _ in $(seq 1 "$rounds"); do
  for bin in "$@"; do
    xpv_bench_serve "$bin" "$data/profiles" "$data/index.sqlite" "$data/cpu.log"
    python3 - "$base" "$pid" "$bin" <<'PY'
import json, os, sys, urllib.error, urllib.request
base, pid, label = sys.argv[1], sys.argv[2], sys.argv[3]
tick = os.sysconf("SC_CLK_TCK")
def cpu():
    f = open("/proc/%s/stat" % pid).read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / tick
def get(path):
    c = cpu()
    try:
        with urllib.request.urlopen(base + path, timeout=600) as r:
            r.read()
    except urllib.error.HTTPError as e:
        return str(e.code)
    return "%.2f" % (cpu() - c)
run = json.load(urllib.request.urlopen(base + "/data/plugin/profile/runs"))[0]
hosts = [h["hostname"] for h in json.load(urllib.request.urlopen(
    base + "/data/plugin/profile/hosts?run=%s&tag=hlo_stats" % run))]
out = ["run_tools " + get("/data/plugin/profile/run_tools?run=" + run)]
for host in (hosts[1], "ALL_HOSTS"):
    for tag in ("hlo_stats", "op_profile", "roofline_model"):
        out.append("%s/%s %s" % (tag, host, get(
            "/data/plugin/profile/data?run=%s&tag=%s&host=%s" % (run, tag, host))))
print(label, "cpu s:", " | ".join(out))
PY
    kill "$pid"; wait "$pid" 2>/dev/null || true
  done
done
