#!/usr/bin/env bash
# run_pod.sh — pod scale (issue 25): the profile list, `latest` and the
# multi-host views of a run of many hosts, while the server indexes it and
# after, against a 100 ms target. Two runs, generated once under WORK:
#   small  SMALL_HOSTS (256) hosts of SMALL_SIZE (1MB) xplanes each
#   large  LARGE_HOSTS (16) hosts of LARGE_SIZE (64MB) xplanes each; the
#          issue asks for 256 MB of index per host (LARGE_SIZE=600MB or so
#          makes that; the index is printed per host, so the output says
#          which size was measured)
# For each it starts the server on a fresh index (with XPV_ARGS, e.g.
# XPV_ARGS="--jobs=2"), asks every route in turn while indexing runs
# ("during"), then REQS more times each once it is done: "after" (the same
# URL again: what a page reload sees, answered from the response cache
# where the route has one) and "after, uncached" (a different query string
# each time, so every answer is computed). Prints p50/p95/max per route and
# phase, the server's CPU time per request after indexing (cpu_ms: what the
# answer costs, whatever else loads the machine), the statuses seen, and
# "MISS" where p95 is over 100 ms.
# Prints figures; asserts nothing.
# usage: bench/run_pod.sh [BUILD_DIR=build]
#   env: WORK (/tmp/xpv-pod), SMALL_HOSTS, SMALL_SIZE, LARGE_HOSTS, LARGE_SIZE,
#        REQS (30), RUNS ("small large": which runs, in order), XPV_ARGS
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-${XPV_BUILD_DIR:-$here/build}}
work=${WORK:-/tmp/xpv-pod}
small_hosts=${SMALL_HOSTS:-256}
small_size=${SMALL_SIZE:-1MB}
large_hosts=${LARGE_HOSTS:-16}
large_size=${LARGE_SIZE:-64MB}
for p in "$build/xprof-view" "$build/xpv-gen"; do
  [ -x "$p" ] || { echo "build first: cmake --build $build ($p missing)" >&2; exit 1; }
done
mkdir -p "$work"

gen() { # NAME HOSTS SIZE: the run's profile dir, generated once
  local dir=$work/$1-$2x$3
  if [ ! -d "$dir" ]; then
    echo "generating $2 hosts x $3 in $dir ..." >&2
    rm -rf "$dir.tmp"
    "$build/xpv-gen" --out "$dir.tmp" --kind jax --hosts "$2" --size "$3" --steps 8 \
      --no-json >/dev/null
    mv "$dir.tmp" "$dir"
  fi
  echo "$dir"
}

echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "server: $build/xprof-view ${XPV_ARGS:-} (XPV_ARGS)"
for run in ${RUNS:-small large}; do
  case $run in
    small) dir=$(gen small "$small_hosts" "$small_size"); label="$small_hosts hosts x $small_size" ;;
    large) dir=$(gen large "$large_hosts" "$large_size"); label="$large_hosts hosts x $large_size" ;;
    *) echo "unknown run $run (small, large)" >&2; exit 2 ;;
  esac
  python3 - "$build/xprof-view" "$dir" "$work/$run.sqlite" "$label" "${REQS:-30}" \
    "${XPV_ARGS:-}" "$here/tests/e2e" <<'PY'
import json, os, shlex, signal, subprocess, sys, time
binary, folder, db, label, reqs, extra, e2e_dir = sys.argv[1:8]
reqs = int(reqs)
sys.path.insert(0, e2e_dir)
import xpv_e2e as e2e  # noqa: E402

TARGET_MS = 100.0


def get(port, path):
    t = time.perf_counter()
    status, _, body = e2e.http_get(port, path, timeout=120)
    return status, body, (time.perf_counter() - t) * 1000.0


def routes(run):
    tb = "/data/plugin/profile/"
    return [
        ("profiles", "/api/profiles"),
        ("latest", "/api/profiles/latest"),
        ("tb runs", tb + "runs"),
        ("tb hosts", tb + "hosts?run=%s&tag=pod_viewer" % run),
        ("pod_viewer ALL_HOSTS", tb + "data?run=%s&tag=pod_viewer&host=ALL_HOSTS" % run),
        ("overview ALL_HOSTS", tb + "data?run=%s&tag=overview_page&host=ALL_HOSTS" % run),
        ("latest pod_viewer hosts=all", "/api/profiles/latest/tools/pod_viewer?hosts=all"),
        ("latest overview hosts=all", "/api/profiles/latest/tools/overview_page?hosts=all"),
    ]


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100.0 * (len(xs) - 1))))]


def cpu_ms(pid):
    """The server's user + system CPU time so far, in ms."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) * 1000.0 / os.sysconf("SC_CLK_TCK")


def report(phase, name, lat, statuses, cpu=None):
    if not lat:
        return
    p95 = pct(lat, 95)
    print("%-16s %-28s %5d %8.1f %8.1f %8.1f %7s  %-4s %s" % (
        phase, name, len(lat), pct(lat, 50), p95, max(lat),
        "-" if cpu is None else "%.1f" % (cpu / len(lat)), "ok" if p95 <= TARGET_MS else "MISS",
        ",".join("%d:%d" % kv for kv in sorted(statuses.items()))))


def indexing(port):
    st, body, _ = get(port, "/api/health")
    h = json.loads(body) if st == 200 else None
    return h is None or h["indexing"]["runs"] < 1 or h["indexing"]["active"], h


for suffix in ("", "-wal", "-shm"):
    if os.path.exists(db + suffix):
        os.unlink(db + suffix)
files = sorted(os.path.join(d, f) for d, _, fs in os.walk(folder) for f in fs)
source = sum(os.path.getsize(f) for f in files)
port = e2e.free_port()
cmd = [binary, "--profile-dir=" + folder, "--db=" + db, "--port=%d" % port,
       "--perfetto-port=0", "--ui=both", "--quiet"] + shlex.split(extra)
t0 = time.time()
proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
try:
    while True:
        try:
            if get(port, "/api/health")[0] == 200:
                break
        except OSError:
            time.sleep(0.05)
    listening = time.time() - t0
    st, body, _ = get(port, "/data/plugin/profile/runs")
    run = json.loads(body)[0] if st == 200 and json.loads(body) else "none"
    table = routes(run)
    print("\n== %s (%d files, %.0f MB of xplane): %s" % (label, len(files), source / 1e6, folder))
    print("%-16s %-28s %5s %8s %8s %8s %7s  %-4s %s" % (
        "phase", "route", "n", "p50_ms", "p95_ms", "max_ms", "cpu_ms", "<100", "statuses"))
    during = {name: ([], {}) for name, _ in table}
    busy = True
    while busy:
        for name, path in table:
            st, _, ms = get(port, path)
            during[name][0].append(ms)
            during[name][1][st] = during[name][1].get(st, 0) + 1
        busy, health = indexing(port)
    indexed = time.time() - t0
    for name, _ in table:
        report("during indexing", name, *during[name])
    for phase, bust in (("after", False), ("after, uncached", True)):
        for name, path in table:
            lat, statuses = [], {}
            cpu0 = cpu_ms(proc.pid)
            for i in range(reqs):
                url = path + (("&" if "?" in path else "?") + "_=%d" % i if bust else "")
                st, _, ms = get(port, url)
                lat.append(ms)
                statuses[st] = statuses.get(st, 0) + 1
            report(phase, name, lat, statuses, cpu_ms(proc.pid) - cpu0)
    wal = os.path.getsize(db + "-wal") if os.path.exists(db + "-wal") else 0
finally:
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=60)
size = os.path.getsize(db)  # the server checkpoints its WAL into the file as it exits
import sqlite3  # noqa: E402
with sqlite3.connect(db) as c:
    n, events, ok = c.execute("SELECT count(*), sum(events), sum(status='ok') FROM profiles").fetchone()
print("listening after %.2f s, indexed after %.1f s; %d profiles (%d ok), %d events; index %.1f MB"
      " = %.2f MB per host, %.2fx the xplanes (its WAL was %.1f MB while serving)" % (
          listening, indexed, n, ok, events or 0, size / 1e6, size / 1e6 / max(n, 1),
          size / source, wal / 1e6))
PY
done
