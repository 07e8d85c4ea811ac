#!/usr/bin/env bash
# check_js_format.sh — fails when the frontend's JavaScript (static/js and the
# browser tests) differs from what prettier makes of it with .prettierrc.
# Prettier is pinned in tests/browser/package-lock.json so that every machine
# formats alike; it is installed from that lock when missing (npm ci, never a
# browser download). To fix a failure:
#   tests/browser/node_modules/.bin/prettier --write static/js tests/browser/*.mjs
set -euo pipefail
cd "$(dirname "$0")/.."
npm_dir="$PWD/tests/browser"

if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "check_js_format: node and npm are needed (scripts/install-deps.sh test installs them)" >&2
  exit 2
fi

want=$(node -p "require('$npm_dir/package-lock.json').packages['node_modules/prettier'].version")
have=$(node -p "try { require('$npm_dir/node_modules/prettier/package.json').version } catch { '' }")
if [ "$want" != "$have" ]; then
  (cd "$npm_dir" && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error)
fi

"$npm_dir/node_modules/.bin/prettier" --check static/js tests/browser/*.mjs
