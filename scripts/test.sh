#!/usr/bin/env bash
# test.sh — README command 2: installs what is missing, checks the source
# (scripts/checksrc.sh: headers, clang-format, layering, function length,
# JS format), builds with -Wall -Wextra -Werror, and runs the whole suite
# (CUnit unit tests, end-to-end tests of the real binary, browser tests in
# headless Chromium), compiles the Release (NDEBUG) build, runs the inflate
# tests on zlib's engine (the other builds use ISA-L's), then runs the
# unit tests, the fuzz regression inputs and the server's lifecycle tests
# again under AddressSanitizer, LeakSanitizer and UBSan.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh test
jobs=$(nproc 2>/dev/null || echo 2)

scripts/checksrc.sh

cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DXPV_WERROR=ON >/dev/null
cmake --build build -j"$jobs"
(cd build && ctest --output-on-failure -j"$jobs" "$@")

# A Release build defines NDEBUG: a variable read only by an assert, or a
# warning that only -O3 finds, must not break it.
cmake -S . -B build-release -DCMAKE_BUILD_TYPE=Release -DXPV_WERROR=ON >/dev/null
cmake --build build-release -j"$jobs" --target xprof-view xpv-gen

# The builds above and below inflate gzip with ISA-L's engine when libisal is
# installed; zlib's, which a build without it uses, gets its tests here.
if pkg-config --exists cunit; then
  cmake -S . -B build-zlib -DCMAKE_BUILD_TYPE=Debug -DXPV_WERROR=ON -DXPV_ISAL=OFF >/dev/null
  cmake --build build-zlib -j"$jobs" --target test_inflate_raw test_gz_input
  (cd build-zlib &&
    ctest --output-on-failure --no-tests=error -R 'unit\.test_(inflate_raw|gz_input)$')
fi

cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DXPV_WERROR=ON -DXPV_SANITIZE=ON \
  -DXPV_ISAL=ON >/dev/null
cmake --build build-asan -j"$jobs"
(cd build-asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
  ctest --output-on-failure -j"$jobs" -L unit)
# The server's lifecycle tests once more on the sanitized binary: a leak at
# shutdown or a memory error while serving, faulting or limiting fails them.
(cd build-asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
  ctest --output-on-failure -j"$jobs" -R 'e2e\.(test_leaks|test_server|test_faults|test_limits|test_live|test_block_damage|test_security|test_attribution)$')
