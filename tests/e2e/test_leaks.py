#!/usr/bin/env python3
"""test_leaks.py: a server that answered every kind of request (REST API,
TensorBoard routes, trace downloads, static files, errors, a dropped
download) shuts down on SIGTERM with exit code 0 and nothing on stderr
from the sanitizers. scripts/test.sh runs it again with the ASan build
(LeakSanitizer on), where a leak or a memory error at shutdown fails it.
Needs no fixtures."""
import http.client
import os
import signal
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import xpv_e2e as e2e  # noqa: E402

PATHS = [
    "/", "/js/app.js", "/missing.js", "/api/health", "/api/profiles", "/api/profiles/latest",
    "/api/profiles/latest/kernels?limit=5", "/api/profiles/latest/kernels?format=csv",
    "/api/profiles/latest/steps", "/api/profiles/latest/tracks",
    "/api/profiles/latest/events?start_us=0&end_us=1e12&resolution=1000",
    "/api/profiles/latest/search?q=gemm&limit=3", "/api/profiles/latest/tools",
    "/api/profiles/latest/tools/overview_page", "/api/profiles/latest/tools/kernel_stats?format=csv",
    "/api/profiles/latest/modules", "/api/profiles/latest/trace",
    "/api/profiles/latest/trace?start_us=0&end_us=1e12", "/api/profiles/ffffffffffffffff",
    "/api/profiles/latest/kernels?limit=x", "/data/plugin/profile/runs",
    "/data/plugin/profile/run_tools?run=.", "/data/plugin/profile/hosts?run=.&tag=kernel_stats",
    "/data/plugin/profile/data?run=.&tag=kernel_stats&host=ALL_HOSTS", "/api/nothing",
]


def drop_a_download(port):
    """Starts a trace download and closes the socket after the first bytes."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(b"GET /api/profiles/latest/trace HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        s.recv(100)


def test_clean_shutdown_after_every_kind_of_request():
    folder = e2e.tmpdir()
    subprocess.run([e2e.GEN, "--out", folder, "--kind", "pytorch", "--steps", "4", "--size", "3MB"],
                   check=True, capture_output=True)
    port = e2e.free_port()
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=1:exitcode=23",
               UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1")
    proc = subprocess.Popen([e2e.BIN, "--profile-dir", folder, "--port", str(port),
                             "--perfetto-port", "0", "--db", os.path.join(e2e.tmpdir(), "i.sqlite")],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, text=True)
    try:
        e2e.wait_indexed(port)
        for _ in range(2):  # twice: the second round comes from the response cache
            for path in PATHS:
                c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
                c.request("GET", path, headers={"Accept-Encoding": "gzip"})
                r = c.getresponse()
                r.read()
                assert r.status < 500, (path, r.status)
                c.close()
        drop_a_download(port)
        time.sleep(0.5)
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    assert "Sanitizer" not in err and "runtime error" not in err, err[-4000:]
    assert proc.returncode == 0, (proc.returncode, err[-2000:])


if __name__ == "__main__":
    e2e.main([test_clean_shutdown_after_every_kind_of_request])
