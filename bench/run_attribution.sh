#!/usr/bin/env bash
# run_attribution.sh — what placing command-buffer kernels on their HLO
# instructions costs at index time. Indexes the 33 MB JAX capture
# gpu/jax-maxtext (1.69 M events, 30 compiled modules) RUNS times in turn
# with this build and with the binary of BASE (the commit before the
# attribution, built once under WORK), each into a fresh index, and prints
# per binary the best and median wall and CPU time and the peak RSS, and
# the ratios new / base (median of the pairs). With valgrind installed it
# also counts the instructions each binary executes for one indexing
# (callgrind), a figure the machine's load does not move.
# usage: bench/run_attribution.sh [BUILD_DIR=build]
#   env: WORK (/tmp/xpv-attrib), BASE (9c49be9), RUNS (7), FIXTURES (../shared/fixtures)
set -euo pipefail

SRC=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:-$SRC/build}
WORK=${WORK:-/tmp/xpv-attrib}
BASE=${BASE:-9c49be9}
RUNS=${RUNS:-7}
FIXTURES=${FIXTURES:-$SRC/../shared/fixtures}
DIR=$FIXTURES/gpu/jax-maxtext
[ -d "$DIR" ] || { echo "no $DIR: the shared fixtures are needed"; exit 1; }
mkdir -p "$WORK"
cmake --build "$BUILD" -j2 --target xprof-view >/dev/null
if [ ! -x "$WORK/base-$BASE" ]; then
    rm -rf "$WORK/src"
    git -C "$SRC" worktree add -f --detach "$WORK/src" "$BASE" >/dev/null 2>&1
    cmake -S "$WORK/src" -B "$WORK/src/build" >/dev/null
    cmake --build "$WORK/src/build" -j2 --target xprof-view >/dev/null
    cp "$WORK/src/build/xprof-view" "$WORK/base-$BASE"
    git -C "$SRC" worktree remove --force "$WORK/src"
fi
echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "input: gpu/jax-maxtext, $(du -sh "$DIR" | cut -f1); $RUNS runs of each, in turn"

index() { # binary label round
    rm -f "$WORK/$2.sqlite"*
    /usr/bin/time -f "%e %U %S %M" -o "$WORK/time.$2.$3" \
        "$1" --profile-dir="$DIR" --list-only --quiet --db="$WORK/$2.sqlite" >/dev/null
}
for round in $(seq "$RUNS"); do
    index "$WORK/base-$BASE" base "$round"
    index "$BUILD/xprof-view" new "$round"
done
python3 - "$WORK" "$RUNS" <<'EOF'
import statistics, sys
work, runs = sys.argv[1], int(sys.argv[2])
def read(label):
    out = []
    for r in range(1, runs + 1):
        wall, user, sys_, rss = open("%s/time.%s.%d" % (work, label, r)).read().split()[:4]
        out.append((float(wall), float(user) + float(sys_), int(rss) / 1024))
    return out
base, new = read("base"), read("new")
for label, rows in (("base", base), ("new ", new)):
    w, c = [x[0] for x in rows], [x[1] for x in rows]
    print("%s  wall best %.3f s median %.3f s   cpu best %.3f s median %.3f s   peak %.0f MB"
          % (label, min(w), statistics.median(w), min(c), statistics.median(c),
             max(x[2] for x in rows)))
for i, what in ((0, "wall"), (1, "cpu")):
    ratios = [n[i] / b[i] for n, b in zip(new, base)]
    print("new/base %s: median %.3f (min %.3f, max %.3f)"
          % (what, statistics.median(ratios), min(ratios), max(ratios)))
EOF
if command -v valgrind >/dev/null; then
    for b in "base:$WORK/base-$BASE" "new:$BUILD/xprof-view"; do
        rm -f "$WORK/cg.sqlite"*
        valgrind --tool=callgrind --callgrind-out-file=/dev/null "${b#*:}" --profile-dir="$DIR" \
            --list-only --quiet --db="$WORK/cg.sqlite" 2>&1 >/dev/null |
            sed -n "s/.*Collected : \([0-9]*\).*/${b%%:*} \1/p" >>"$WORK/instructions"
    done
    tail -2 "$WORK/instructions" | awk '{n[NR]=$2; print "instructions " $1 ": " $2}
        END {printf "new/base instructions: %.3f\n", n[2] / n[1]}'
    rm -f "$WORK/instructions"
fi
