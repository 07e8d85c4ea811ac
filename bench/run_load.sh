#!/usr/bin/env bash
# run_load.sh — HTTP load test of the xprof-view server with wrk (64
# connections, bounded time) against /api/profiles/latest and a kernels
# query, next to nginx serving static JSON files with the same bodies, in
# the same run on the same machine (the ceiling). Prints requests/s, p99
# latency and error counts for each.
# usage: bench/run_load.sh [BUILD_DIR=build] [SECONDS=10] [CONNECTIONS=64]
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-${XPV_BUILD_DIR:-$here/build}}
secs=${2:-10}
conns=${3:-64}
bin=$build/xprof-view
gen=$build/xpv-gen

command -v wrk >/dev/null && command -v nginx >/dev/null || {
  if command -v nginx >/dev/null || [ -x /usr/sbin/nginx ]; then :; else "$here/scripts/install-deps.sh" bench; fi
  command -v wrk >/dev/null || "$here/scripts/install-deps.sh" bench
}
nginx_bin=$(command -v nginx || echo /usr/sbin/nginx)
[ -x "$bin" ] && [ -x "$gen" ] || { echo "build first: cmake --build $build" >&2; exit 1; }

tmp=$(mktemp -d /tmp/xpv-load-XXXXXX)
server_pid= nginx_pid=
cleanup() {
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null || true
  [ -n "$nginx_pid" ] && kill "$nginx_pid" 2>/dev/null && wait "$nginx_pid" 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# A sample profile of a realistic shape from the project's own generator.
"$gen" --out "$tmp/profiles" --kind jax --size 4MB --devices 4 --no-json >/dev/null
port=$(free_port)
"$bin" --profile-dir="$tmp/profiles" --db="$tmp/index.sqlite" --port="$port" --perfetto-port=0 \
  --quiet >"$tmp/server.log" 2>&1 &
server_pid=$!
base=http://127.0.0.1:$port
for _ in $(seq 1 300); do
  if curl -sf "$base/api/health" | python3 -c 'import json,sys; h=json.load(sys.stdin); sys.exit(0 if h["indexing"]["runs"]>=1 and not h["status_counts"].get("pending") else 1)' 2>/dev/null; then
    break
  fi
  sleep 0.2
done

latest=/api/profiles/latest
kernels="/api/profiles/latest/kernels?sort=total&limit=50"
mkdir -p "$tmp/www"
curl -sf "$base$latest" -o "$tmp/www/latest.json"
curl -sf "$base$kernels" -o "$tmp/www/kernels.json"

# nginx as the ceiling: a private config on a free loopback port, no root
# needed (when run as root its workers still only need to read $tmp/www).
nport=$(free_port)
mkdir -p "$tmp/nginx"
chmod 755 "$tmp" "$tmp/www"
chmod 644 "$tmp/www"/*.json
cat >"$tmp/nginx/nginx.conf" <<EOF
worker_processes auto;
pid $tmp/nginx/nginx.pid;
error_log $tmp/nginx/error.log warn;
$( [ "$(id -u)" = 0 ] && echo "user nobody nogroup;" )
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path $tmp/nginx/body;
  proxy_temp_path $tmp/nginx/proxy;
  fastcgi_temp_path $tmp/nginx/fastcgi;
  uwsgi_temp_path $tmp/nginx/uwsgi;
  scgi_temp_path $tmp/nginx/scgi;
  keepalive_requests 1000000;
  server {
    listen 127.0.0.1:$nport;
    root $tmp/www;
    default_type application/json;
  }
}
EOF
"$nginx_bin" -p "$tmp/nginx" -c "$tmp/nginx/nginx.conf" -g 'daemon off;' 2>"$tmp/nginx/stderr" &
nginx_pid=$!
for _ in $(seq 1 50); do curl -sf "http://127.0.0.1:$nport/latest.json" -o /dev/null && break; sleep 0.1; done

run_wrk() { # label url
  local out
  out=$(wrk -t2 -c"$conns" -d"${secs}s" --latency "$2")
  python3 - "$1" "$out" <<'EOF'
import re, sys
label, out = sys.argv[1], sys.argv[2]
rps = re.search(r"Requests/sec:\s+([\d.]+)", out)
p99 = re.search(r"\s99%\s+([\d.]+\w+)", out)
total = re.search(r"(\d+) requests in", out)
sock = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", out)
non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
errors = (sum(map(int, sock.groups())) if sock else 0) + (int(non2xx.group(1)) if non2xx else 0)
print("%-44s %12s %10s %10s %8d" % (label, rps.group(1) if rps else "?", p99.group(1) if p99 else "?",
                                     total.group(1) if total else "?", errors))
EOF
}

echo "wrk: $conns connections, ${secs} s each, 2 threads; $(nproc) CPUs; $(date -u +%FT%TZ)"
echo "bodies: latest $(stat -c %s "$tmp/www/latest.json") bytes, kernels $(stat -c %s "$tmp/www/kernels.json") bytes"
printf "%-44s %12s %10s %10s %8s\n" "target" "requests/s" "p99" "requests" "errors"
run_wrk "xprof-view $latest" "$base$latest"
run_wrk "nginx static (same body) latest.json" "http://127.0.0.1:$nport/latest.json"
run_wrk "xprof-view kernels?sort=total&limit=50" "$base$kernels"
run_wrk "nginx static (same body) kernels.json" "http://127.0.0.1:$nport/kernels.json"
