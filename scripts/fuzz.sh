#!/usr/bin/env bash
# fuzz.sh — coverage-guided fuzzing of every reader and the HTTP router with
# libFuzzer (clang, ASan + UBSan), SECONDS per target.
#
#   scripts/fuzz.sh SECONDS [TARGET...]     targets: tests/fuzz/fuzz_*.c
#   JOBS=N scripts/fuzz.sh ...              targets run N at a time (default 1)
#   CPU=S scripts/fuzz.sh ...               also stop a target once it has used
#                                           S CPU seconds (a busy machine gives
#                                           a target less CPU than wall time)
#
# Seeds come from ../shared/fixtures (when present), xpv-gen, the route table
# (one request per route, from xprof-view --routes) and tests/fuzz/seeds/;
# tests/fuzz/regress/ inputs seed too. Corpora grow in $XPV_FUZZ_DIR (default /tmp/xpv-fuzz)
# between runs. Prints, per target: executions, executions per second,
# coverage (edges) and features, CPU seconds, and the crashes found; a
# crash's input is kept in $XPV_FUZZ_DIR/crashes/, and every run's figures
# are appended to $XPV_FUZZ_DIR/history.tsv (corpora carry over, so CPU time
# adds up across runs). Copy a crash's input into
# tests/fuzz/regress/<target>/ once fixed: ctest replays that folder.
# Exits 1 when any target found a crash.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:?usage: scripts/fuzz.sh SECONDS [TARGET...]}
shift
out=${XPV_FUZZ_DIR:-/tmp/xpv-fuzz}
fixtures=${XPV_FIXTURES:-$(pwd)/../shared/fixtures}
jobs=${JOBS:-1}

scripts/install-deps.sh fuzz
CC=clang cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DXPV_FUZZ=ON >/dev/null
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  for f in tests/fuzz/fuzz_*.c; do
    t=$(basename "$f" .c)
    case $t in fuzz_index | fuzz_replay) ;; *) targets+=("${t#fuzz_}") ;; esac
  done
fi
cmake --build build-fuzz -j"$(nproc)" --target xpv-gen xprof-view \
  $(printf 'fuzz_%s ' "${targets[@]}") >/dev/null

mkdir -p "$out/crashes" "$out/logs"
python3 tests/fuzz/make_seeds.py "$out/seeds" "$fixtures" build-fuzz/xpv-gen build-fuzz/xprof-view

# Waits for the fuzzer, noting its CPU seconds in the file as it goes, and
# interrupts it (libFuzzer then prints its final figures) once it has used
# $CPU seconds.
watch_cpu() {
  local pid=$1 file=$2 ticks cpu=0 hz
  hz=$(getconf CLK_TCK)
  while kill -0 "$pid" 2>/dev/null; do
    ticks=$(awk '{print $14 + $15}' "/proc/$pid/stat" 2>/dev/null || echo "")
    [ -n "$ticks" ] && cpu=$((ticks / hz)) && echo "$cpu" >"$file"
    if [ -n "${CPU:-}" ] && [ "$cpu" -ge "$CPU" ]; then kill -INT "$pid" 2>/dev/null || true; fi
    sleep 2
  done
  wait "$pid" 2>/dev/null || true
}

run_one() {
  local t=$1 dict="" max_len=65536
  [ -f "tests/fuzz/dict/$t.dict" ] && dict="-dict=tests/fuzz/dict/$t.dict"
  case $t in xplane | nsys | hlo_proto) max_len=2000000 ;; chrome_json | gz_input) max_len=65536 ;; esac
  mkdir -p "$out/corpus/$t"
  local seeds=()
  [ -d "$out/seeds/$t" ] && seeds+=("$out/seeds/$t")
  [ -d "tests/fuzz/seeds/$t" ] && seeds+=("tests/fuzz/seeds/$t")
  [ -d "tests/fuzz/regress/$t" ] && seeds+=("tests/fuzz/regress/$t")
  XPV_FIXTURES="$fixtures" "build-fuzz/tests/fuzz_$t" -max_total_time="$secs" \
    -max_len=$max_len -timeout=20 -rss_limit_mb=4096 -print_final_stats=1 $dict \
    -artifact_prefix="$out/crashes/$t-" "$out/corpus/$t" "${seeds[@]}" >"$out/logs/$t.log" 2>&1 &
  watch_cpu $! "$out/logs/$t.time"
}

pids=()
for t in "${targets[@]}"; do
  run_one "$t" &
  pids+=($!)
  if [ ${#pids[@]} -ge "$jobs" ]; then wait "${pids[0]}"; pids=("${pids[@]:1}"); fi
done
wait

found=0
printf '%-16s %12s %10s %8s %8s %8s %s\n' target execs exec/s cov ft cpu_s crashes
for t in "${targets[@]}"; do
  log="$out/logs/$t.log"
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  cov=$( (grep -o 'cov: [0-9]*' "$log" || true) | tail -1 | cut -d' ' -f2)
  ft=$( (grep -o 'ft: [0-9]*' "$log" || true) | tail -1 | cut -d' ' -f2)
  cpu=$(cat "$out/logs/$t.time" 2>/dev/null || echo "?")
  crashes=$(find "$out/crashes" -name "$t-*" | wc -l)
  [ "$crashes" -gt 0 ] && found=1
  printf '%-16s %12s %10s %8s %8s %8s %s\n' "$t" "${execs:-?}" "${rate:-?}" "${cov:-?}" \
    "${ft:-?}" "$cpu" "$crashes"
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$(date -u +%FT%TZ)" "$t" "${execs:-?}" \
    "${rate:-?}" "${cov:-?}" "${ft:-?}" "$cpu" "$crashes" >>"$out/history.tsv"
done
[ $found -eq 0 ] || { echo "crashes kept in $out/crashes (logs in $out/logs)"; exit 1; }
