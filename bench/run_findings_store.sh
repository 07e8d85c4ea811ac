#!/usr/bin/env bash
# run_findings_store.sh — findings kept in the index (store/findings.c)
# against computed on every ask (XPV_FINDINGS_STORE=off, the same binary),
# in the same run: `--list-only --json` on an indexed profile, and a fresh
# server's first and repeated /api/profiles/{id}/findings, each best and
# median of RUNS; and what keeping costs the server once, the time from its
# start to indexing reported done on an index with no answer kept (it
# computes them then) against the store off.
# Inputs: the V100 ResNet-50 fixture repeated COPIES times
# (bench/footprint_trace.py; 40 copies: the 1.29 GB trace of issue 39) and a
# generated JAX xplane of SIZE.
# usage: bench/run_findings_store.sh [BUILD=build] [DATA=/tmp/xpv-bench-fstore] [COPIES=40]
#        [SIZE=256MB] [RUNS=3]
set -euo pipefail

. "$(dirname "$0")/serve.sh"
xpv_bench_args "${1:-}" "${2:-/tmp/xpv-bench-fstore}" "${4:-256MB}"
copies=${3:-40}
runs=${5:-3}
fixture=$here/../shared/fixtures/chrome-json/pytorch-v100-resnet50.pt.trace.json.gz

trace_dir=$data/pytorch-x$copies
if [ ! -d "$trace_dir" ]; then
  [ -f "$fixture" ] || { echo "need the fixture $fixture (../shared)" >&2; exit 1; }
  echo "writing the V100 trace x$copies ..."
  mkdir -p "$trace_dir.part"
  python3 "$here/bench/footprint_trace.py" "$fixture" "$copies" \
    "$trace_dir.part/resnet50-x$copies.pt.trace.json.gz"
  mv "$trace_dir.part" "$trace_dir"
fi
xplane_dir=$data/jax-$size
if [ ! -d "$xplane_dir" ]; then
  echo "generating a $size JAX xplane ..."
  "$build/xpv-gen" --out "$xplane_dir.part" --kind jax --size "$size" --devices 8 --no-json >/dev/null
  mv "$xplane_dir.part" "$xplane_dir"
fi

echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg); $runs runs each"
echo "binary: $bin"
for dir in "$trace_dir" "$xplane_dir"; do
  db=$data/$(basename "$dir").sqlite
  echo
  echo "== $(basename "$dir") ($(du -sh "$dir" | cut -f1) on disk)"
  xpv_bench_index "$bin" "$dir" "$db"
  python3 - "$bin" "$dir" "$db" "$runs" <<'PY'
import json, os, resource, socket, sqlite3, statistics, subprocess, sys, time, urllib.request
bin_, root, db, runs = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
OFF = dict(os.environ, XPV_FINDINGS_STORE="off")
ON = dict(os.environ)
ON.pop("XPV_FINDINGS_STORE", None)

def forget():
    c = sqlite3.connect(db)
    c.execute("DELETE FROM findings")
    c.commit()
    c.close()

CPU = []  # the CPU seconds of each listing, as (env is ON, seconds)

def listing(env):
    t, r0 = time.perf_counter(), resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run([bin_, "--profile-dir=" + root, "--db=" + db, "--list-only", "--json",
                          "--quiet"], env=env, check=True, capture_output=True).stdout
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    CPU.append(r1.ru_utime + r1.ru_stime - r0.ru_utime - r0.ru_stime)
    return out, time.perf_counter() - t

def get(base, path):
    t = time.perf_counter()
    with urllib.request.urlopen(base + path, timeout=600) as r:
        body = r.read()
    return body, time.perf_counter() - t

def serve(env):
    """Starts a server; returns (process, base, seconds until indexing done)."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    t = time.perf_counter()
    p = subprocess.Popen([bin_, "--profile-dir=" + root, "--db=" + db, "--port=%d" % port,
                          "--perfetto-port=0", "--quiet"], env=env,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = "http://127.0.0.1:%d" % port
    while True:
        try:
            h = json.loads(get(base, "/api/health")[0])
            if h["indexing"]["runs"] >= 1 and not h["indexing"]["active"]:
                return p, base, time.perf_counter() - t
        except OSError:
            pass
        time.sleep(0.02)

def stop(p):
    p.terminate()
    p.wait(30)

def stat(v):
    return "best %7.3f s  median %7.3f s" % (min(v), statistics.median(v))

def ratio(off, on):
    return "%.0fx best, %.0fx median" % (min(off) / min(on), statistics.median(off) /
                                          statistics.median(on))

# --list-only --json: the store's first run computes and keeps, then reads
forget()
first_out, first = listing(ON)
on = [listing(ON)[1] for _ in range(runs)]
off_outs = [listing(OFF) for _ in range(runs)]
off = [t for _, t in off_outs]
assert all(o == first_out for o, _ in off_outs), "kept and fresh answers differ"
cpu_first, cpu_on, cpu_off = CPU[0], CPU[1:1 + runs], CPU[1 + runs:]
print("--list-only --json  store off (computes each time): %s, CPU median %.3f s" %
      (stat(off), statistics.median(cpu_off)))
print("--list-only --json  store on, first (computes, keeps): %7.3f s, CPU %.3f s" %
      (first, cpu_first))
print("--list-only --json  store on, again (reads):    %s, CPU median %.3f s  -> %s faster" %
      (stat(on), statistics.median(cpu_on), ratio(off, on)))

# a fresh server's first /findings (after indexing is reported done) and again
res = {"off": ([], [], []), "on": ([], [], [])}
for _ in range(runs):
    for mode, env in (("off", OFF), ("on", ON)):
        p, base, ready = serve(env)
        try:
            pid = json.loads(get(base, "/api/profiles")[0])["profiles"][0]["id"]
            body, t1 = get(base, "/api/profiles/%s/findings" % pid)
            _, t2 = get(base, "/api/profiles/%s/findings" % pid)
        finally:
            stop(p)
        for v, x in zip(res[mode], (ready, t1, t2)):
            v.append(x)
kinds = ",".join(f["kind"] for f in json.loads(body)["findings"])
for i, what in ((1, "first"), (2, "again")):
    print("/findings %-5s  store off: %s" % (what, stat(res["off"][i])))
    print("/findings %-5s  store on:  %s  -> %s faster" % (what, stat(res["on"][i]),
                                                           ratio(res["off"][i], res["on"][i])))
print("findings: %s" % kinds)

# what keeping costs once: start to indexing done, nothing kept yet
ready_on, ready_off = [], []
for _ in range(runs):
    for v, env in ((ready_off, OFF), (ready_on, ON)):
        forget()
        p, _, ready = serve(env)
        stop(p)
        v.append(ready)
print("server start to indexing done, nothing kept: store off %s; store on (computes and "
      "keeps) %s" % (stat(ready_off), stat(ready_on)))
print("load average after: %s" % " ".join(open("/proc/loadavg").read().split()[:3]))
PY
done
