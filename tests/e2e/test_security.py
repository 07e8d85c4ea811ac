#!/usr/bin/env python3
"""test_security.py: who can read a running xprof-view. The Perfetto
listener grants ui.perfetto.dev and the UI's own origin and no other (CORS,
preflight, Vary: Origin), the UI port grants none; both answer only to a
Host that names this machine (DNS rebinding); the UI carries its security
headers; --bind-all asks a token (query, then cookie, or Bearer) of every
request, --token sets it, --no-token drops it with a warning; 1,000 stalled
connections, or more than --max-connections of them, leave a normal
request answered at once, and the header deadline closes them. Needs no
fixtures."""
import http.client
import json
import os
import resource
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import xpv_e2e as e2e  # noqa: E402

PERFETTO = "https://ui.perfetto.dev"
STATE = {"procs": []}


def profiles():
    if "prof" not in STATE:
        STATE["prof"] = e2e.tmpdir()
        subprocess.run([e2e.GEN, "--out", STATE["prof"], "--kind", "pytorch", "--steps", "2",
                        "--size", "50KB"], check=True, capture_output=True)
    return STATE["prof"]


def start(*flags, perfetto=False):
    """Starts a server; returns (proc, port, perfetto port or 0)."""
    port, pport = e2e.free_port(), e2e.free_port() if perfetto else 0
    proc = subprocess.Popen([e2e.BIN, "--profile-dir", profiles(), "--port", str(port),
                             "--perfetto-port", str(pport),
                             "--db", os.path.join(e2e.tmpdir(), "i.sqlite")] + list(flags),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    STATE["procs"].append(proc)
    end = time.time() + 30
    while time.time() < end:
        assert proc.poll() is None, proc.communicate()
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                break
        except OSError:
            time.sleep(0.05)
    return proc, port, pport


def stop(proc):
    proc.terminate()
    out, err = proc.communicate(timeout=30)
    STATE["procs"].remove(proc)
    return out, err


def request(port, path, headers=None, method="GET"):
    """(status, lower-cased headers, body) of one request to 127.0.0.1."""
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        c.request(method, path, headers=headers or {})
        r = c.getresponse()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read()
    finally:
        c.close()


def main_server():
    if "main" not in STATE:
        STATE["main"] = start("--allow-host=profiles.example", perfetto=True)
        e2e.wait_indexed(STATE["main"][1])
    return STATE["main"]


def test_perfetto_listener_grants_only_perfetto_and_the_ui():
    _, port, pport = main_server()
    st, h, _ = request(pport, "/latest.json", {"Origin": "https://evil.example"})
    assert st == 200 and "access-control-allow-origin" not in h, h
    assert "Origin" in h.get("vary", ""), h
    st, h, _ = request(pport, "/latest.json", {"Origin": PERFETTO})
    assert st == 200 and h.get("access-control-allow-origin") == PERFETTO, h
    assert "Origin" in h.get("vary", ""), h
    pre = {"Origin": PERFETTO, "Access-Control-Request-Method": "GET",
           "Access-Control-Request-Private-Network": "true"}
    st, h, _ = request(pport, "/latest.json", pre, method="OPTIONS")
    assert st == 204 and h.get("access-control-allow-origin") == PERFETTO, h
    assert "GET" in h.get("access-control-allow-methods", ""), h
    assert h.get("access-control-allow-private-network") == "true", h
    pre["Origin"] = "https://evil.example"
    st, h, _ = request(pport, "/latest.json", pre, method="OPTIONS")
    assert not any(k.startswith("access-control-allow") for k in h), h
    own = "http://127.0.0.1:%d" % port
    st, h, _ = request(pport, "/latest.json", {"Origin": own})
    assert h.get("access-control-allow-origin") == own, h
    for other in ("http://127.0.0.1:%d" % pport, "http://evil.example:%d" % port, "null",
                  PERFETTO + ".evil.example"):
        st, h, _ = request(pport, "/latest.json", {"Origin": other})
        assert "access-control-allow-origin" not in h, (other, h)
    # the UI port grants no origin
    st, h, _ = request(port, "/api/profiles", {"Origin": PERFETTO})
    assert st == 200 and not any(k.startswith("access-control") for k in h), h
    st, h, _ = request(port, "/api/profiles", pre, method="OPTIONS")
    assert not any(k.startswith("access-control") for k in h), h


def test_host_must_name_this_machine():
    _, port, pport = main_server()
    for p in (port, pport):
        path = "/api/health" if p == port else "/latest.json"
        for host in ("evil.example", "evil.example:%d" % p, "localhost.evil.example"):
            st, h, body = request(p, path, {"Host": host})
            assert st == 403 and h["content-type"] == "application/json", (host, st)
            err = json.loads(body)["error"]
            assert "--allow-host=" in err and "evil.example" in err, err
        for host in ("localhost", "localhost:%d" % p, "LOCALHOST.", "127.0.0.1",
                     "127.0.0.1:%d" % p, "[::1]:%d" % p, "[::1]"):
            assert request(p, path, {"Host": host})[0] == 200, host
    assert request(port, "/api/health", {"Host": "profiles.example:%d" % port})[0] == 200
    assert request(port, "/", {"Host": "evil.example"})[0] == 403


def test_ui_security_headers():
    _, port, _ = main_server()
    st, h, body = request(port, "/")
    assert st == 200 and b"<script" in body
    csp = h.get("content-security-policy", "")
    for part in ("default-src 'self'", "script-src 'self'", "frame-ancestors 'none'",
                 "connect-src 'self'"):
        assert part in csp, csp
    assert "http" not in csp, csp  # nothing outside this server
    assert h.get("referrer-policy") == "no-referrer", h
    assert h.get("x-content-type-options") == "nosniff", h
    st, h, _ = request(port, "/api/profiles")
    assert h.get("x-content-type-options") == "nosniff", h


def token_of(proc):
    line = ""
    end = time.time() + 30
    while "serving at" not in line and time.time() < end:
        line = proc.stdout.readline()
    assert "?token=" in line, line
    return line.split("?token=")[1].split()[0]


def test_bind_all_asks_a_token():
    proc, port, _ = start("--bind-all")
    token = token_of(proc)
    assert len(token) == 32 and int(token, 16) >= 0, token
    st, h, body = request(port, "/api/health")
    assert st == 401 and "token" in json.loads(body)["error"], (st, body)
    st, h, body = request(port, "/")
    assert st == 401 and h["content-type"].startswith("text/html"), h
    assert b"printed" in body, body
    wrong = token[:-1] + ("1" if token[-1] == "0" else "0")
    assert request(port, "/api/health?token=" + wrong)[0] == 401
    assert request(port, "/api/health", {"Authorization": "Bearer nope"})[0] == 401
    st, h, _ = request(port, "/?token=" + token)
    assert st == 200, st
    cookie = h.get("set-cookie", "")
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie, cookie
    pair = cookie.split(";")[0]
    assert pair == "xpv_token_%d=%s" % (port, token), cookie
    st, h, _ = request(port, "/api/health", {"Cookie": "other=1; " + pair})
    assert st == 200 and "set-cookie" not in h, (st, h)
    assert request(port, "/api/health", {"Authorization": "Bearer " + token})[0] == 200
    assert request(port, "/api/health", {"Host": "evil.example", "Cookie": pair})[0] == 403
    _, err = stop(proc)
    assert "0.0.0.0" in err and "token" in err, err


def test_token_flag_and_no_token():
    proc, port, _ = start("--token=sesame-0123")
    assert request(port, "/api/health")[0] == 401
    assert request(port, "/api/health?token=sesame-0123")[0] == 200
    stop(proc)
    proc, port, _ = start("--bind-all", "--no-token")
    assert request(port, "/api/health")[0] == 200
    out, err = stop(proc)
    assert "WARNING" in err and "--no-token" in err, err
    assert "?token=" not in out, out
    for bad in (["--token=short"], ["--token=has space"], ["--token=abcdefgh", "--no-token"]):
        p = e2e.run(bad + ["--list-only"])
        assert p.returncode != 0 and "token" in p.stderr, (bad, p.stderr)


def stall(port, n):
    """n connections that send half a request and nothing more."""
    socks = []
    for _ in range(n):
        s = socket.create_connection(("127.0.0.1", port), timeout=5)
        s.sendall(b"GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        socks.append(s)
    return socks


def timed_health(port):
    t0 = time.time()
    st, _, _ = e2e.http_get(port, "/api/health", timeout=5)
    return st, time.time() - t0


def closed(s):
    s.settimeout(0.2)
    try:
        return s.recv(100) == b""
    except socket.timeout:
        return False
    except OSError:
        return True


def test_stalled_connections_leave_room():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = 1200 if hard == resource.RLIM_INFINITY else min(1200, hard)
    if soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
    _, port, _ = main_server()
    socks = stall(port, 1000)
    try:
        time.sleep(0.3)
        st, took = timed_health(port)
        print("a request beside 1,000 stalled connections: answered in %.3f s" % took)
        assert st == 200, st
        # the header deadline (5 s), not the 30 s client timeout, closes them
        time.sleep(6.5)
        shut = sum(closed(s) for s in socks[:50])
        assert shut == 50, "stalled connections still open after the header deadline: %d" % shut
    finally:
        for s in socks:
            s.close()
    proc, port, _ = start("--max-connections=100")
    e2e.wait_indexed(port)
    socks = stall(port, 1000)
    try:
        st, took = timed_health(port)
        print("a request beside 1,000 stalled connections, --max-connections=100: "
              "answered in %.3f s" % took)
        assert st == 200, st
    finally:
        for s in socks:
            s.close()
    stop(proc)


def teardown():
    for p in list(STATE["procs"]):
        p.terminate()
        p.communicate(timeout=30)


if __name__ == "__main__":
    try:
        e2e.main([test_perfetto_listener_grants_only_perfetto_and_the_ui,
                  test_host_must_name_this_machine, test_ui_security_headers,
                  test_bind_all_asks_a_token, test_token_flag_and_no_token,
                  test_stalled_connections_leave_room])
    finally:
        teardown()
