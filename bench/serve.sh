# serve.sh — sourced by the bench scripts: indexes a profile dir afresh,
# timed, and starts the real server on a free port over it, waiting until
# its first indexing run is over.
# usage: xpv_bench_args BUILD DATA SIZE [PROGRAM ...]   (sets here, build,
#        data, size and bin; exits unless bin, xpv-gen and each PROGRAM of
#        the build are there)
#        xpv_bench_index BIN PROFILE_DIR DB
#        xpv_bench_serve BIN PROFILE_DIR DB LOG   (sets $base and $pid, and
#        an EXIT trap that stops the server)
xpv_bench_args() {
  here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
  build=${1:-${XPV_BUILD_DIR:-$here/build}}
  data=$2
  size=$3
  bin=$build/xprof-view
  local p
  for p in xprof-view xpv-gen "${@:4}"; do
    [ -x "$build/$p" ] || { echo "build first: cmake --build $build ($build/$p missing)" >&2; exit 1; }
  done
}

xpv_bench_index() {
  rm -f "$3"*
  echo "indexing ..."
  /usr/bin/time -f "indexed in %e s, max RSS %M KB" "$1" --profile-dir="$2" --db="$3" --list-only --quiet
}

xpv_bench_serve() {
  local port
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  "$1" --profile-dir="$2" --db="$3" --port="$port" --perfetto-port=0 --quiet >"$4" 2>&1 &
  pid=$!
  trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null || true' EXIT
  base=http://127.0.0.1:$port
  for _ in $(seq 1 600); do
    curl -sf "$base/api/health" 2>/dev/null | python3 -c 'import json,sys; h=json.load(sys.stdin); sys.exit(0 if h["indexing"]["runs"]>=1 and not h["indexing"]["active"] else 1)' 2>/dev/null && return 0
    sleep 0.2
  done
  echo "the server did not finish indexing: see $4" >&2
  return 1
}
