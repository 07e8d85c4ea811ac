#!/usr/bin/env bash
# run_speed.sh — indexing speed against an old binary (issue 39). Inputs,
# made once under WORK and reused:
#   pod   a JAX run of HOSTS hosts x DEVICES devices, STEPS steps, SIZE of
#         xplane each, no trace JSON (xpv-gen; 256 x 4 x 5 x 4MB is the
#         16.7 M-event, 1.1 GB pod of the issue)
#   json  the V100 ResNet-50 fixture's events COPIES times
#         (bench/footprint_trace.py; 40 copies make the 1.29 GB trace)
# Each input is indexed into a fresh index by `xprof-view --list-only` with
# the old binary (OLD; by default commit 864759a built once in a worktree
# at /tmp/xpv-864759a) and the new one (BUILD_DIR's) in turn, RUNS times
# each, then prints best and median wall time, CPU seconds (user + system),
# peak RSS and the index's size per binary, the ratios new/old, the load
# average before and after, and for JSON the zlib inflate floor measured
# between the runs (bench_json_inflate) and each binary's ratio to it.
# `--list-only` alone is timed: `--json` would add the findings, which the
# new binary computes and keeps and the old one never had
# (bench/run_findings_store.sh measures them).
# Last, bench/index_tables.py compares the two indexes table by table, the
# old against the new across versions (the columns both schemas have, block
# metadata without the encoded data), and the new index exactly with one
# made by BASE (an xprof-view, e.g. main's before a change) when BASE is
# set: the old binary's index format has changed since, the base's should
# not have.
# COLD=1 drops the input's files from the page cache before every run
# (posix_fadvise DONTNEED), so that each binary reads them from the disk,
# as on a machine that has not read them lately or from a network mount;
# it says how much of them stayed in memory when the filesystem keeps
# pages regardless.
# Prints figures; asserts nothing.
# usage: bench/run_speed.sh [BUILD_DIR=build-rel]
#   env: OLD, BASE, WORK (/tmp/xpv-speed), RUNS (3), INPUTS ("pod json"),
#        HOSTS (256), DEVICES (4), STEPS (5), SIZE (4MB), COPIES (40),
#        NEW_ARGS / OLD_ARGS (extra flags, e.g. NEW_ARGS=--jobs=1), COLD
set -euo pipefail

SRC=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:-$SRC/build-rel}
WORK=${WORK:-/tmp/xpv-speed}
RUNS=${RUNS:-3}
HOSTS=${HOSTS:-256} DEVICES=${DEVICES:-4} STEPS=${STEPS:-5} SIZE=${SIZE:-4MB}
COPIES=${COPIES:-40}
FIXTURE=${FIXTURE:-$SRC/../shared/fixtures/chrome-json/pytorch-v100-resnet50.pt.trace.json.gz}
mkdir -p "$WORK"
cmake --build "$BUILD" -j2 --target xprof-view xpv-gen bench_json_inflate >/dev/null
# /usr/bin/time times each run; index_tables.py inflates blocks with zstd(1).
[ -x /usr/bin/time ] && command -v zstd >/dev/null || "$SRC/scripts/install-deps.sh" bench

if [ -z "${OLD:-}" ]; then
    OLD=/tmp/xpv-864759a/build-rel/xprof-view
    if [ ! -x "$OLD" ]; then
        echo "building 864759a's xprof-view in /tmp/xpv-864759a (Release) ..." >&2
        [ -d /tmp/xpv-864759a ] || git -C "$SRC" worktree add /tmp/xpv-864759a 864759a >/dev/null
        cmake -S /tmp/xpv-864759a -B /tmp/xpv-864759a/build-rel -DCMAKE_BUILD_TYPE=Release >/dev/null
        cmake --build /tmp/xpv-864759a/build-rel -j2 --target xprof-view >/dev/null
    fi
fi
NEW=$BUILD/xprof-view

input() { # NAME: the input's path, made once
    case $1 in
        pod)
            local dir=$WORK/pod-${HOSTS}x${DEVICES}x${STEPS}x$SIZE
            if [ ! -d "$dir" ]; then
                echo "generating the pod in $dir ..." >&2
                rm -rf "$dir.tmp"
                "$BUILD/xpv-gen" --out "$dir.tmp" --kind jax --runs 1 --hosts "$HOSTS" \
                    --devices "$DEVICES" --steps "$STEPS" --size "$SIZE" --no-json >/dev/null
                mv "$dir.tmp" "$dir"
            fi
            echo "$dir" ;;
        json)
            local f=$WORK/pytorch-x$COPIES/resnet50-x$COPIES.pt.trace.json.gz
            if [ ! -f "$f" ]; then
                [ -f "$FIXTURE" ] || { echo "need the fixture $FIXTURE" >&2; exit 1; }
                echo "making the x$COPIES trace in $f ..." >&2
                mkdir -p "$(dirname "$f")"
                python3 "$SRC/bench/footprint_trace.py" "$FIXTURE" "$COPIES" "$f" >&2
            fi
            echo "$f" ;;
        *) echo "unknown input $1 (pod, json)" >&2; exit 2 ;;
    esac
}

drop_cache() { # INPUT: with COLD=1, its files out of the page cache
    [ "${COLD:-0}" = 1 ] || return 0
    python3 - "$1" <<'PY'
import os, sys
path = sys.argv[1]
files = [os.path.join(d, x) for d, _, fs in os.walk(path) for x in fs] if os.path.isdir(path) else [path]
for f in files:
    fd = os.open(f, os.O_RDONLY)
    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    os.close(fd)
PY
}

index_once() { # WHO BINARY ARGS INPUT DB LOG
    rm -f "$5" "$5-wal" "$5-shm"
    drop_cache "$4"
    # the counts come from the index, outside the timing
    # shellcheck disable=SC2086
    /usr/bin/time -f "%e %U %S %M" -o "$WORK/time.one" \
        "$2" "--profile-dir=$4" --list-only "--db=$5" $3 >/dev/null
    echo "$1 $(cat "$WORK/time.one") $(stat -c %s "$5") $(python3 -c 'import sqlite3,sys; print(*sqlite3.connect(sys.argv[1]).execute("SELECT sum(events), sum(status=\x27ok\x27), count(*) FROM profiles").fetchone())' "$5")" >>"$6"
}

echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg); runs: $RUNS each, alternated"
echo "old: $OLD ${OLD_ARGS:-}"
echo "new: $NEW ${NEW_ARGS:-}"
for name in ${INPUTS:-pod json}; do
    in=$(input "$name")
    if [ "${COLD:-0}" = 1 ] && command -v fincore >/dev/null; then
        drop_cache "$in"
        echo "cold runs: $(find "$in" -type f -exec fincore --bytes --noheadings --output RES {} + |
            awk '{r += $1} END {printf "%.0f MB", r / 1e6}') of $name stay in memory after a drop"
    fi
    log=$WORK/$name.log
    : >"$log"
    load0=$(cut -d' ' -f1-3 /proc/loadavg)
    for i in $(seq "$RUNS"); do
        index_once old "$OLD" "${OLD_ARGS:-}" "$in" "$WORK/$name-old.db" "$log"
        if [ "$name" = json ]; then
            "$BUILD/bench_json_inflate" "$in" | sed -n 's/^inflate: [0-9]* bytes in \([0-9.]*\) s.*/floor \1 0 0 0 0 0 0 0/p' >>"$log"
        fi
        index_once new "$NEW" "${NEW_ARGS:-}" "$in" "$WORK/$name-new.db" "$log"
    done
    load1=$(cut -d' ' -f1-3 /proc/loadavg)
    python3 - "$log" "$name" "$in" "$load0" "$load1" <<'PY'
import os, statistics, sys
log, name, path, load0, load1 = sys.argv[1:6]
rows = {}
for line in open(log):
    f = line.split()
    rows.setdefault(f[0], []).append([float(x) for x in f[1:]])
size = sum(os.path.getsize(os.path.join(d, x)) for d, _, fs in os.walk(path) for x in fs) \
    if os.path.isdir(path) else os.path.getsize(path)
ev = int(rows["new"][0][5])
print("\n== %s: %s (%.0f MB on disk, %d events, %d/%d profiles ok); load average %s before, %s after"
      % (name, path, size / 1e6, ev, rows["new"][0][6], rows["new"][0][7], load0, load1))
print("%-6s %9s %9s %9s %9s %9s %10s %10s" % ("", "best_s", "median_s", "cpu_best", "cpu_med",
                                             "rss_MB", "index_MB", "events"))
stat = {}
for who in ("old", "new", "floor"):
    if who not in rows:
        continue
    r = rows[who]
    wall = [x[0] for x in r]
    cpu = [x[1] + x[2] for x in r]
    stat[who] = (min(wall), statistics.median(wall), min(cpu), statistics.median(cpu))
    if who == "floor":
        print("%-6s %9.2f %9.2f   (zlib inflate, bench_json_inflate)" % (who, min(wall), statistics.median(wall)))
        continue
    print("%-6s %9.2f %9.2f %9.2f %9.2f %9.0f %10.1f %10d" % (
        who, min(wall), statistics.median(wall), min(cpu), statistics.median(cpu),
        max(x[3] for x in r) / 1024, r[-1][4] / 1e6, int(r[-1][5])))
o, n = stat["old"], stat["new"]
print("old/new wall: %.2fx best, %.2fx median; CPU: %.2fx best, %.2fx median; index new/old %.3f; peak RSS new/old %.2f"
      % (o[0] / n[0], o[1] / n[1], o[2] / n[2], o[3] / n[3], rows["new"][-1][4] / rows["old"][-1][4],
         max(x[3] for x in rows["new"]) / max(x[3] for x in rows["old"])))
if "floor" in stat:
    fl = stat["floor"]
    print("to the inflate floor: new %.2fx best, %.2fx median; old %.2fx best, %.2fx median"
          % (n[0] / fl[0], n[1] / fl[1], o[0] / fl[0], o[1] / fl[1]))
PY
    echo "tables, old index vs new:"
    python3 "$SRC/bench/index_tables.py" --across-versions "$WORK/$name-old.db" "$WORK/$name-new.db" || true
    if [ -n "${BASE:-}" ]; then
        index_once base "$BASE" "" "$in" "$WORK/$name-base.db" "$WORK/$name.base.log"
        echo "tables, base index ($BASE) vs new:"
        python3 "$SRC/bench/index_tables.py" "$WORK/$name-base.db" "$WORK/$name-new.db" || true
    fi
done
