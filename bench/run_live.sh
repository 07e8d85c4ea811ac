#!/usr/bin/env bash
# run_live.sh — live mode's figures: how long after a profiler's last write
# a new capture is `latest` (CAPTURES captures, each written in 4 pieces
# 100 ms apart into a new run directory, /api/profiles/latest asked every
# 10 ms), and /api/profiles latency (p50, p95, max) while FILES new small
# files are indexed. With BASELINE (another xprof-view binary, e.g. a build
# of a commit before live mode) the capture figures are measured for it
# too, in the same run, for the ratio. Prints figures; asserts nothing.
# usage: bench/run_live.sh [BUILD_DIR=build] [FILES=500] [CAPTURES=5] [BASELINE]
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-${XPV_BUILD_DIR:-$here/build}}
files=${2:-500}
captures=${3:-5}
baseline=${4:-}

python3 - "$build/xprof-view" "$files" "$captures" "$baseline" "$here/tests/e2e" <<'PY'
import json, os, shutil, signal, subprocess, sys, tempfile, threading, time
binary, nfiles, ncaps, baseline, e2e_dir = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
sys.path.insert(0, e2e_dir)
import xpv_e2e as e2e


def trace(n):
    ev = [{"ph": "X", "cat": "kernel", "name": "k%d" % (i % 7), "pid": 0, "tid": 7,
           "ts": 100 + 10 * i, "dur": 5} for i in range(n)]
    return json.dumps({"schemaVersion": 1, "traceEvents": ev}).encode()


def serve(binary):
    d = tempfile.mkdtemp(prefix="xpv-bench-live-")
    prof = os.path.join(d, "profiles")
    os.makedirs(prof)
    port = e2e.free_port()
    proc = subprocess.Popen([binary, "--profile-dir=" + prof, "--db=" + os.path.join(d, "i.sqlite"),
                             "--port=%d" % port, "--perfetto-port=0", "--quiet"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    e2e.wait_indexed(port, min_profiles=0)
    return d, prof, port, proc


def stop(d, proc):
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=60)
    shutil.rmtree(d, ignore_errors=True)


def latest_path(port):
    st, _, body = e2e.http_get(port, "/api/profiles/latest")
    return json.loads(body)["path"] if st == 200 else None


def captures(binary, label):
    d, prof, port, proc = serve(binary)
    lat = []
    data = trace(2000)
    for k in range(ncaps):
        rel = "job/plugins/profile/2030_01_01_00_00_%02d/host0.pt.trace.json" % k
        os.makedirs(os.path.dirname(os.path.join(prof, rel)))
        with open(os.path.join(prof, rel), "wb") as f:
            step = len(data) // 4 + 1
            for i in range(0, len(data), step):
                if i:
                    time.sleep(0.1)
                f.write(data[i:i + step])
                f.flush()
        t = time.time()
        while latest_path(port) != rel and time.time() - t < 30:
            time.sleep(0.01)
        lat.append(time.time() - t)
    stop(d, proc)
    lat.sort()
    print("%s: capture is latest after the last write: median %.0f ms, max %.0f ms (%d captures)"
          % (label, lat[len(lat) // 2] * 1000, lat[-1] * 1000, ncaps))
    return lat[len(lat) // 2]


def burst(binary):
    d, prof, port, proc = serve(binary)
    times, done = [], threading.Event()

    def poll():
        while not done.is_set():
            t = time.perf_counter()
            e2e.http_get(port, "/api/profiles")
            times.append(time.perf_counter() - t)
            time.sleep(0.01)
    th = threading.Thread(target=poll)
    th.start()
    data = trace(30)
    t0 = time.time()
    for i in range(nfiles):
        sub = os.path.join(prof, "run%02d" % (i // 50))
        os.makedirs(sub, exist_ok=True)
        with open(os.path.join(sub, "w%04d.pt.trace.json" % i), "wb") as f:
            f.write(data)
    written = time.time()
    while True:
        st, _, body = e2e.http_get(port, "/api/health")
        h = json.loads(body)
        if h["status_counts"].get("ok", 0) >= nfiles and not h["indexing"]["active"]:
            break
        time.sleep(0.05)
    done.set()
    th.join()
    stop(d, proc)
    times.sort()
    print("burst of %d files (written in %.2f s): all indexed %.2f s after the last write;"
          " /api/profiles meanwhile over %d requests: p50 %.1f ms, p95 %.1f ms, max %.1f ms"
          % (nfiles, written - t0, time.time() - written, len(times), times[len(times) // 2] * 1000,
             times[int(len(times) * 0.95)] * 1000, times[-1] * 1000))


new = captures(binary, "live")
if baseline:
    old = captures(baseline, "baseline")
    print("ratio: %.1fx sooner" % (old / new))
burst(binary)
PY
