#!/usr/bin/env bash
# run_events.sh — timeline window latency on a ~10-million-event profile.
# Writes a JAX-style xplane of that size with the project's generator (kept
# in DATA for reuse), indexes it, then:
#  1. bench_events: the window query itself (cold, and with the resume marks
#     the server keeps), for the full span, middle 10% / 1%, 1 ms and 100 µs;
#  2. the same windows over HTTP from the real server (curl, plain and gzip).
# Target (issue 6): under 50 ms for any window.
# usage: bench/run_events.sh [BUILD_DIR=build] [DATA=/tmp/xpv-bench-events] [SIZE=520MB]
set -euo pipefail

. "$(dirname "$0")/serve.sh"
xpv_bench_args "${1:-}" "${2:-/tmp/xpv-bench-events}" "${3:-520MB}" bench_events

if [ ! -d "$data/profiles" ]; then
  echo "generating a $size JAX profile in $data/profiles ..."
  "$build/xpv-gen" --out "$data/profiles" --kind jax --size "$size" --devices 8 --no-json
fi
echo "indexing ..."
/usr/bin/time -f "indexed in %e s, max RSS %M KB" \
  "$bin" --profile-dir="$data/profiles" --db="$data/index.sqlite" --list-only --quiet

echo
"$build/bench_events" "$data/index.sqlite" latest 1500 7

xpv_bench_serve "$bin" "$data/profiles" "$data/index.sqlite" "$data/server.log"
sleep 2 # the marks warm-up follows the (no-op) indexing run

python3 - "$base" <<'EOF'
import json, sys, time, urllib.request
base = sys.argv[1]
p = json.load(urllib.request.urlopen(base + "/api/profiles/latest"))
a, span = p["start_us"], p["duration_us"]
mid = a + span / 2
windows = [("full span", a, a + span), ("middle 10%", mid - span / 20, mid + span / 20),
           ("middle 1%", mid - span / 200, mid + span / 200)]
for f in (0.1, 0.5, 0.9):
    windows += [("1 ms at %d%%" % (f * 100), a + span * f, a + span * f + 1000),
                ("100 us at %d%%" % (f * 100), a + span * f, a + span * f + 100)]
print("\nover HTTP (%s events), resolution 1500, 7 requests each, median ms:" % p["events"])
print("%-16s %10s %10s %12s" % ("window", "plain", "gzip", "bytes"))
for label, s, e in windows:
    url = "%s/api/profiles/%s/events?start_us=%r&end_us=%r&resolution=1500" % (base, p["id"], s, e)
    res = []
    for enc in ("identity", "gzip"):
        times = []
        for _ in range(7):
            req = urllib.request.Request(url, headers={"Accept-Encoding": enc})
            t = time.perf_counter()
            body = urllib.request.urlopen(req).read()
            times.append((time.perf_counter() - t) * 1000)
            if enc == "identity":
                size = len(body)
        res.append(sorted(times)[3])
    print("%-16s %10.2f %10.2f %12d" % (label, res[0], res[1], size))
EOF
