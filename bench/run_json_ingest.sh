#!/usr/bin/env bash
# run_json_ingest.sh — Chrome trace JSON ingest benchmark (issue 3).
#
# Generates (once) a realistic PyTorch/Kineto trace of SIZE uncompressed
# bytes with xpv-gen, then measures on that same input, in this run:
#   1. the decompression floor: a minimal zlib inflate loop (bench_json_inflate)
#   2. Python: json.load(gzip.open(FILE)) time and peak RSS
#   3. xprof-view --list-only on a fresh index: time and peak RSS, plus the
#      split into read+store and finish (analysis) by bench_json_read
#   4. yajl's tokenizer on the same bytes, when pkg-config finds yajl
# and prints MB/s (uncompressed), events/s, peak RSS and the ratios.
#
# usage: bench/run_json_ingest.sh [BUILD_DIR]
#   env: SIZE (default 1300MB), XPV_BENCH_DIR (default /tmp/xpv-bench-json),
#        RUNS (default 3): steps 1 and 3 are run RUNS times and the fastest
#        counts (a shared machine's load only ever slows a run down),
#        PY_RUNS (default 1) the same for step 2,
#        SKIP_PYTHON=1 to leave out step 2 (it needs ~7 GB of RAM and a minute)
set -euo pipefail

SRC=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:-$SRC/build-bench}
SIZE=${SIZE:-1300MB}
WORK=${XPV_BENCH_DIR:-/tmp/xpv-bench-json}
mkdir -p "$WORK"

if [ ! -x "$BUILD/xprof-view" ] || [ ! -x "$BUILD/bench_json_inflate" ]; then
    cmake -S "$SRC" -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
    cmake --build "$BUILD" -j2 --target xprof-view xpv-gen bench_json_inflate bench_json_read >/dev/null
fi
if [ ! -x /usr/bin/time ]; then
    echo "installing GNU time (for peak RSS)" >&2
    apt-get install -y time >/dev/null 2>&1 || { echo "need /usr/bin/time (apt-get install time)" >&2; exit 1; }
fi

TRACE=$(ls "$WORK/gen-$SIZE"/*.pt.trace.json.gz 2>/dev/null | head -1 || true)
if [ -z "$TRACE" ]; then
    echo "generating a $SIZE PyTorch trace in $WORK/gen-$SIZE ..." >&2
    "$BUILD/xpv-gen" --kind pytorch --out "$WORK/gen-$SIZE" --size "$SIZE" >&2
    TRACE=$(ls "$WORK/gen-$SIZE"/*.pt.trace.json.gz | head -1)
fi
echo "input: $TRACE ($(stat -c %s "$TRACE") bytes compressed)"
echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"

RUNS=${RUNS:-3}
PY_RUNS=${PY_RUNS:-1}
# best_of FILE: keeps the line of FILE.all with the smallest first number after "in"/":"
best_of() {
    python3 - "$1" <<'PYEOF'
import re, sys
lines = [l for l in open(sys.argv[1] + ".all") if l.strip()]
key = lambda l: float(re.search(r"(?:in|:) ([\d.]+) s", l).group(1))
open(sys.argv[1], "w").write(min(lines, key=key))
PYEOF
}

# 1. decompression floor
: > "$WORK/inflate.txt.all"
for _ in $(seq "$RUNS"); do "$BUILD/bench_json_inflate" "$TRACE" | tee -a "$WORK/inflate.txt.all"; done
best_of "$WORK/inflate.txt"

# 2. Python
if [ "${SKIP_PYTHON:-0}" != 1 ]; then
    : > "$WORK/python.txt.all"
    for _ in $(seq "$PY_RUNS"); do
        /usr/bin/time -f "python: %e s wall, %U s user, %M KB peak RSS" -o "$WORK/python.one" \
            python3 -c 'import gzip, json, sys; d = json.load(gzip.open(sys.argv[1])); print("python: %d events" % len(d["traceEvents"]))' "$TRACE"
        cat "$WORK/python.one" | tee -a "$WORK/python.txt.all"
    done
    best_of "$WORK/python.txt"
else
    echo "python: skipped" > "$WORK/python.txt"
fi

# 3. xprof-view, fresh index
: > "$WORK/xpv.txt.all"
for _ in $(seq "$RUNS"); do
    rm -f "$WORK/x.db" "$WORK/x.db-wal" "$WORK/x.db-shm"
    /usr/bin/time -f "xprof-view: %e s wall, %U s user, %S s sys, %M KB peak RSS" -o "$WORK/xpv.one" \
        "$BUILD/xprof-view" "--profile-dir=$TRACE" --list-only --json "--db=$WORK/x.db" > "$WORK/list.json"
    cat "$WORK/xpv.one" | tee -a "$WORK/xpv.txt.all"
done
best_of "$WORK/xpv.txt"
"$BUILD/bench_json_read" "$TRACE" "$WORK/stages.db" | tee "$WORK/stages.txt"
rm -f "$WORK/stages.db" "$WORK/stages.db-wal" "$WORK/stages.db-shm"

# 4. yajl, when present
if pkg-config --exists yajl 2>/dev/null; then
    cc -O2 -DXPV_WITH_YAJL -I"$SRC" "$SRC/bench/bench_json_yajl.c" "$SRC/common/xpv_common.c" \
        $(pkg-config --cflags --libs yajl) -lz -lm -o "$WORK/bench_json_yajl"
    "$WORK/bench_json_yajl" "$TRACE" | tee "$WORK/yajl.txt"
else
    echo "yajl: not installed (apt-get install libyajl-dev to compare)" | tee "$WORK/yajl.txt"
fi

python3 - "$WORK" <<'EOF'
import json, re, sys, os
w = sys.argv[1]
def read(name):
    with open(os.path.join(w, name)) as f:
        return f.read()
inf = re.search(r"inflate: (\d+) bytes in ([\d.]+) s", read("inflate.txt"))
size, t_inf = int(inf.group(1)), float(inf.group(2))
x = re.search(r"xprof-view: ([\d.]+) s wall, ([\d.]+) s user, ([\d.]+) s sys, (\d+) KB", read("xpv.txt"))
t_x, rss_x = float(x.group(1)), int(x.group(4))
row = json.loads(read("list.json"))[0]
events = row["events"]
mb = size / 1e6
print("\n== Chrome JSON ingest, %.0f MB uncompressed, %d events stored (status %s); best of runs; load average %s"
      % (mb, events, row["status"], open("/proc/loadavg").read().split()[0]))
cpu = float(x.group(2)) + float(x.group(3))
print("inflate floor      %7.2f s  %6.0f MB/s" % (t_inf, mb / t_inf))
print("xprof-view         %7.2f s  %6.0f MB/s  %8.0f events/s  peak RSS %4.0f MB  (%.2fx the floor; target <= 4x; %.2f s CPU)"
      % (t_x, mb / t_x, events / t_x, rss_x / 1024, t_x / t_inf, cpu))
st = re.search(r"read\+store ([\d.]+) s\s+finish\(analysis\) ([\d.]+) s\s+commit ([\d.]+) s", read("stages.txt"))
if st:
    print("  of which         read+store %.2f s (%.0f MB/s), finish/analysis %.2f s, commit %.2f s"
          % (float(st.group(1)), mb / float(st.group(1)), float(st.group(2)), float(st.group(3))))
p = re.search(r"python: ([\d.]+) s wall, [\d.]+ s user, (\d+) KB", read("python.txt"))
if p:
    t_p, rss_p = float(p.group(1)), int(p.group(2))
    print("python json.load   %7.2f s  %6.0f MB/s                      peak RSS %4.0f MB  (xprof-view is %.1fx faster; target >= 15x)"
          % (t_p, mb / t_p, rss_p / 1024, t_p / t_x))
y = re.search(r"tokenizing ([\d.]+) s = (\d+) MB/s", read("yajl.txt"))
if y:
    print("yajl tokenizer     %7.2f s  %6s MB/s (tokenizing only, nothing stored)" % (float(y.group(1)), y.group(2)))
EOF
