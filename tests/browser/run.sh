#!/usr/bin/env bash
# run.sh — browser tests of the web frontend (called by ctest as
# `bash tests/browser/run.sh`). Installs Debian chromium if missing
# (scripts/install-deps.sh test), installs playwright-core from the committed
# lock (never a browser download), starts the real xprof-view binary on a
# free port against copies of the shared fixtures (plus a small generated
# profile and one broken file), runs ui.test.mjs and stops the server.
# Env: XPV_BIN (required), XPV_GEN, XPV_FIXTURES, XPV_BUILD_DIR (from ctest).
# The tests get the profile dir (XPV_PROFILE_DIR) to write live captures into.
# Optional: XPV_PERF_PROFILE_FILE=<big profile> adds it to the profile dir
# and prints the timeline's first paint and JS heap on it (not asserted).
# Exit 77 (skip) only when chromium or the fixtures truly cannot be had.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
: "${XPV_BIN:?XPV_BIN must point at the xprof-view binary}"

skip() { echo "SKIP: $*"; exit 77; }

if ! command -v chromium >/dev/null || ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  bash "$root/scripts/install-deps.sh" test || true
fi
command -v chromium >/dev/null || skip "Debian chromium is not installed and could not be installed (run scripts/install-deps.sh test as root)"
command -v node >/dev/null && command -v npm >/dev/null || skip "node/npm are not installed and could not be installed"

# playwright-core only, pinned by package-lock.json; browsers are never downloaded.
export PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1
want=$(node -p "require('$here/package-lock.json').packages['node_modules/playwright-core'].version")
have=$(node -p "try { require('$here/node_modules/playwright-core/package.json').version } catch { '' }")
if [ "$want" != "$have" ]; then
  (cd "$here" && npm ci --no-audit --no-fund --loglevel=error)
fi

work=$(mktemp -d /tmp/xpv-browser.XXXXXX)
server_pid=
cleanup() {
  if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

# The profile dir: copies (discovery follows no symlink out of its root; the
# fixtures stay read-only where they are).
dir="$work/profiles"
mkdir -p "$dir/plugins/profile/2024_01_01_00_00_00" "$dir/other"
have_profiles=0
if [ -n "${XPV_FIXTURES:-}" ] && [ -d "$XPV_FIXTURES/chrome-json" ]; then
  cp "$XPV_FIXTURES"/chrome-json/* "$dir/other/"
  [ -d "$XPV_FIXTURES/xplane" ] && cp "$XPV_FIXTURES"/xplane/* "$dir/plugins/profile/2024_01_01_00_00_00/"
  have_profiles=1
fi
if [ -n "${XPV_GEN:-}" ] && [ -x "$XPV_GEN" ]; then
  if "$XPV_GEN" --out "$dir/gen" --kind jax --size 2MB >"$work/gen.log" 2>&1; then
    have_profiles=1
  else
    echo "note: xpv-gen failed (continuing without a generated profile):"; tail -3 "$work/gen.log"
  fi
fi
# a small trace with a recompilation planted, for the findings test; dated
# back so that it is not the latest profile the other tests land on
if [ -n "${XPV_GEN:-}" ] && "$XPV_GEN" --out "$dir/planted" --plant recompile >/dev/null 2>&1; then
  touch -d '2020-01-01 00:00:00' "$dir"/planted/*
fi
# a run of three hosts (the pod viewer's heat map) and one that waits for
# input (the input pipeline's chart), dated back like the planted one
if [ -n "${XPV_GEN:-}" ] && "$XPV_GEN" --out "$dir/pod" --kind jax --hosts 3 --steps 6 --size 3MB --seed 7 >/dev/null 2>&1; then
  find "$dir/pod" -type f -exec touch -d '2020-01-02 00:00:00' {} +
fi
if [ -n "${XPV_GEN:-}" ] && "$XPV_GEN" --out "$dir/stall" --plant input-stall >/dev/null 2>&1; then
  touch -d '2020-01-03 00:00:00' "$dir"/stall/*
fi
[ "$have_profiles" = 1 ] || skip "no fixtures at \$XPV_FIXTURES (../shared/fixtures) and no working xpv-gen"
# One unreadable profile, for the error state.
printf '{"traceEvents": [ {"name": "x", "ph": "X", "ts": 1,' >"$dir/other/broken.trace.json"
if [ -n "${XPV_PERF_PROFILE_FILE:-}" ]; then
  mkdir -p "$dir/perf"
  ln "$XPV_PERF_PROFILE_FILE" "$dir/perf/" 2>/dev/null || cp "$XPV_PERF_PROFILE_FILE" "$dir/perf/"
fi

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$XPV_BIN" --profile-dir="$dir" --port="$port" --perfetto-port=0 --db="$work/index.db" >"$work/server.log" 2>&1 &
server_pid=$!
url="http://127.0.0.1:$port"
for _ in $(seq 1 100); do
  if python3 -c "import urllib.request,sys; urllib.request.urlopen('$url/api/health', timeout=1)" 2>/dev/null; then break; fi
  kill -0 "$server_pid" 2>/dev/null || { cat "$work/server.log"; echo "xprof-view exited before answering"; exit 1; }
  sleep 0.2
done

perf_id=
if [ -n "${XPV_PERF_PROFILE_FILE:-}" ]; then
  base=$(basename "$XPV_PERF_PROFILE_FILE")
  perf_id=$(python3 - "$url" "$base" <<'PY'
import json, sys, time, urllib.request
url, base = sys.argv[1], sys.argv[2]
t0 = time.time()
while time.time() - t0 < 1800:
    ps = json.load(urllib.request.urlopen(url + "/api/profiles"))["profiles"]
    # paths are relative to the profile dir
    p = next((p for p in ps if ("/" + p["path"]).endswith("/perf/" + base)), None)
    if p and p["status"] != "pending":
        print(p["id"]); sys.stderr.write("perf profile indexed in %.1f s\n" % (time.time() - t0)); break
    time.sleep(1)
PY
) || perf_id=
fi

# screenshots: under the build dir when ctest runs this
if [ -z "${XPV_ARTIFACTS:-}" ] && [ -n "${XPV_BUILD_DIR:-}" ]; then export XPV_ARTIFACTS="$XPV_BUILD_DIR/browser-artifacts"; fi
rc=0
(cd "$here" && XPV_URL="$url" XPV_PERF_PROFILE="$perf_id" XPV_PROFILE_DIR="$dir" node ui.test.mjs) || rc=$?
if [ "$rc" != 0 ]; then echo "--- server log (tail)"; tail -20 "$work/server.log"; fi
exit "$rc"
