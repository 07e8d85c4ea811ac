#!/usr/bin/env python3
"""test_limits.py: the limits that protect the machine. A gzip bomb stops
inflating with a clear error (and indexes when the guard is off); the size
cap per file holds; bad limit flags are refused. The HTTP server answers
over-large URLs, headers and bodies with JSON 4xx, cuts off a client that
trickles its request (slowloris) after --client-timeout however often it
sends a byte, keeps serving others meanwhile, and past --max-connections
closes the oldest half-sent request to answer a new one. Needs no
fixtures."""
import gzip
import json
import os
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import xpv_e2e as e2e  # noqa: E402

STATE = {}


def write_bomb(folder):
    """A valid trace of 200 MB, nearly all blanks: about 200 KB gzipped."""
    path = os.path.join(folder, "bomb.trace.json.gz")
    with gzip.open(path, "wb", compresslevel=9) as f:
        f.write(b'{"traceEvents":[{"ph":"X","name":"k","pid":1,"tid":1,"ts":1,"dur":2}')
        blank = b" " * (1 << 20)
        for _ in range(200):
            f.write(blank)
        f.write(b"]}")
    return path


def list_json(folder, *flags):
    db = os.path.join(e2e.tmpdir(), "index.sqlite")
    p = e2e.run(["--list-only", "--json", "--profile-dir", folder, "--db", db] + list(flags))
    assert p.returncode == 0, p.stderr
    return {os.path.basename(x["path"]): x for x in json.loads(p.stdout)}


def test_gzip_bomb_stops_with_a_clear_error():
    folder = e2e.tmpdir()
    write_bomb(folder)
    got = list_json(folder)["bomb.trace.json.gz"]
    assert got["status"] == "error", got
    assert "gzip bomb" in got["error"] and "--max-inflate-ratio" in got["error"], got["error"]
    # The one event before the blanks was read: the profile is partial, not lost.
    assert got["partial"] and got["events"] == 1, got
    off = list_json(folder, "--max-inflate-ratio=0")["bomb.trace.json.gz"]
    assert off["status"] == "ok" and off["events"] == 1, off


def test_size_cap_per_file():
    folder = e2e.tmpdir()
    subprocess.run([e2e.GEN, "--out", folder, "--kind", "pytorch", "--steps", "4", "--size", "3MB"],
                   check=True, capture_output=True)
    capped = list_json(folder, "--max-inflate=1M")
    assert capped and all(p["status"] == "error" and "--max-inflate" in p["error"]
                          for p in capped.values() if p["path"].endswith(".gz")), capped
    free = list_json(folder)
    assert all(p["status"] == "ok" for p in free.values()), free


def test_bad_limit_flags_are_refused():
    for flag in ("--max-inflate=12Q", "--max-inflate=-1", "--max-inflate-ratio=x",
                 "--max-connections=0", "--client-timeout=0"):
        p = e2e.run([flag, "--list-only", "--profile-dir", e2e.tmpdir()])
        assert p.returncode == 2 and flag.split("=")[0] in p.stderr, (flag, p.stderr)


def start_server():
    folder = e2e.tmpdir()
    subprocess.run([e2e.GEN, "--out", folder, "--kind", "pytorch", "--steps", "3", "--size", "100KB"],
                   check=True, capture_output=True)
    port = e2e.free_port()
    proc = subprocess.Popen([e2e.BIN, "--profile-dir", folder, "--port", str(port),
                             "--perfetto-port", "0", "--db", os.path.join(e2e.tmpdir(), "i.sqlite"),
                             "--client-timeout=2", "--max-connections=6"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    STATE["proc"], STATE["port"] = proc, port
    e2e.wait_indexed(port)
    return port


def raw(port, data, timeout=10):
    """Sends data and reads until the server closes; (status, json body or None)."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(data)
        got = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            got += chunk
    head, _, body = got.partition(b"\r\n\r\n")
    status = int(head.split(b" ")[1])
    ctype = [h for h in head.split(b"\r\n") if h.lower().startswith(b"content-type:")]
    return status, json.loads(body) if ctype and b"json" in ctype[0] else None


def test_oversized_requests_get_json_4xx():
    port = STATE.get("port") or start_server()
    status, body = raw(port, b"GET /api/health?q=" + b"a" * 9000 + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                       b"Connection: close\r\n\r\n")
    assert status == 414 and "error" in body, (status, body)
    status, body = raw(port, b"GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " + b"a" * 40000 +
                       b"\r\nConnection: close\r\n\r\n")
    assert status == 431 and "error" in body, (status, body)
    status, body = raw(port, b"POST /api/profiles HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1000000"
                       b"\r\nConnection: close\r\n\r\n" + b"x" * 70000)
    assert status == 413 and "error" in body, (status, body)
    status, body = raw(port, b"POST /api/profiles HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 5"
                       b"\r\nConnection: close\r\n\r\nhello")
    assert status == 405 and "error" in body, (status, body)


def test_slowloris_is_cut_off_while_others_are_served():
    port = STATE.get("port") or start_server()
    slow = socket.create_connection(("127.0.0.1", port), timeout=0.1)
    slow.sendall(b"GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\n")
    t0, closed_after, served = time.time(), None, 0
    while time.time() - t0 < 15:
        try:
            slow.sendall(b"X-A: b\r\n")  # a header line every 0.3 s: never idle
            if slow.recv(100) == b"":
                closed_after = time.time() - t0
                break
        except socket.timeout:
            pass
        except OSError:
            closed_after = time.time() - t0
            break
        status, _, _ = e2e.http_get(port, "/api/health", timeout=5)
        served += status == 200
        time.sleep(0.3)
    slow.close()
    # --client-timeout=2: cut off after 2 s (the watchdog looks 4 times a second).
    assert closed_after is not None and 1.5 < closed_after < 6, closed_after
    assert served >= 2, served


def test_connection_limit():
    """Past --max-connections the oldest connection still sending its
    request is closed to make room: a normal request is answered at once."""
    port = STATE.get("port") or start_server()
    stalled = []
    for _ in range(12):  # twice the limit
        s = socket.create_connection(("127.0.0.1", port), timeout=3)
        s.sendall(b"GET /api/health HTTP/1.1\r\n")  # started, never finished
        stalled.append(s)
        time.sleep(0.02)
    t0 = time.time()
    status, _, _ = e2e.http_get(port, "/api/health", timeout=5)
    took = time.time() - t0
    assert status == 200 and took < 2, (status, took)
    closed = 0
    for s in stalled:
        s.settimeout(0.5)
        try:
            closed += s.recv(100) == b""
        except socket.timeout:
            pass
        except OSError:
            closed += 1
        s.close()
    assert closed >= 6, "the oldest stalled connections were not closed: %d" % closed


def teardown():
    if "proc" in STATE:
        STATE["proc"].terminate()
        STATE["proc"].wait(timeout=10)


if __name__ == "__main__":
    try:
        e2e.main([test_gzip_bomb_stops_with_a_clear_error, test_size_cap_per_file,
                  test_bad_limit_flags_are_refused, test_oversized_requests_get_json_4xx,
                  test_slowloris_is_cut_off_while_others_are_served, test_connection_limit])
    finally:
        teardown()
