#!/usr/bin/env python3
"""test_server_startup.py: the server answers at once while a large profile
(written by xpv-gen) is still being indexed, reports it as pending (trace:
409, summaries: status "pending"), then as ok with the same numbers the
index holds; Ctrl-C during indexing stops promptly and the next start
finishes the job; --bind-all says the data becomes visible to whoever
holds the token it prints.
Needs no fixtures."""
import http.client
import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import xpv_e2e as e2e  # noqa: E402

STATE = {}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(port, path):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        c.request("GET", path)
        r = c.getresponse()
        return r.status, r.read()
    finally:
        c.close()


def start(db, port, *extra):
    return subprocess.Popen([e2e.BIN, "--profile-dir=" + STATE["prof"], "--db=" + db,
                             "--port=%d" % port, "--perfetto-port=0"] + list(extra),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def first_health(port, proc, timeout=20):
    end = time.time() + timeout
    while time.time() < end:
        assert proc.poll() is None, proc.communicate()
        try:
            st, body = get(port, "/api/health")
            if st == 200:
                return json.loads(body)
        except OSError:
            time.sleep(0.01)
    raise AssertionError("no answer")


def setup():
    d = e2e.tmpdir("xpv-startup-")
    STATE["prof"] = os.path.join(d, "profiles")
    STATE["dir"] = d
    r = subprocess.run([e2e.GEN, "--out", STATE["prof"], "--kind", "jax", "--size", "60MB",
                        "--devices", "4", "--no-json"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_answers_while_indexing():
    port, db = free_port(), os.path.join(STATE["dir"], "a.sqlite")
    p = start(db, port)
    try:
        h = first_health(port, p)
        assert h["status_counts"].get("pending") == 1, h
        prof = json.loads(get(port, "/api/profiles")[1])["profiles"][0]
        assert prof["status"] == "pending", prof
        st, body = get(port, "/api/profiles/%s/trace" % prof["id"])
        if json.loads(get(port, "/api/profiles/" + prof["id"])[1])["status"] == "pending":
            assert st == 409 and json.loads(body)["error"], (st, body[:200])
        end = time.time() + 300
        while time.time() < end:
            h = json.loads(get(port, "/api/health")[1])
            if not h["indexing"]["active"] and h["status_counts"].get("ok") == 1:
                break
            time.sleep(0.2)
        else:
            raise AssertionError("indexing did not finish: %r" % h)
        k = json.loads(get(port, "/api/profiles/%s/kernels" % prof["id"])[1])
        assert k["status"] == "ok" and k["kernels"], k
        con = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
        n, total = con.execute("SELECT count(*), sum(total_ps) FROM kernel_stats WHERE"
                               " profile_id=? AND kind='kernel' AND device=-1",
                               (int(prof["id"], 16),)).fetchone()
        con.close()
        assert k["total_rows"] == n and k["kernel_time_us"] == total / 1e6
        t = json.loads(get(port, "/api/profiles/%s/tracks" % prof["id"])[1])
        events = json.loads(get(port, "/api/profiles/" + prof["id"])[1])["events"]
        assert sum(th["events"] for pr in t["processes"] for th in pr["threads"]) == events
    finally:
        p.send_signal(signal.SIGTERM)
        p.communicate(timeout=60)
    assert p.returncode == 0


def test_interrupt_while_indexing_then_resume():
    port, db = free_port(), os.path.join(STATE["dir"], "b.sqlite")
    p = start(db, port)
    h = first_health(port, p)
    assert h["status_counts"].get("pending") == 1, h
    t0 = time.time()
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=60)
    assert p.returncode == 0, (p.returncode, err)
    assert time.time() - t0 < 10, "shutdown took too long"
    assert "shutting down" in err, err
    p = start(db, port)
    try:
        end = time.time() + 300
        while time.time() < end:
            h = first_health(port, p)
            if h["status_counts"].get("ok") == 1 and not h["indexing"]["active"]:
                break
            time.sleep(0.2)
        else:
            raise AssertionError("not indexed after restart: %r" % h)
    finally:
        p.send_signal(signal.SIGTERM)
        p.communicate(timeout=60)


def test_bind_all_warns():
    port, db = free_port(), os.path.join(STATE["dir"], "c.sqlite")
    p = start(db, port, "--bind-all")
    try:
        end = time.time() + 20
        while time.time() < end:  # asks for the token: a 401 says it is up
            try:
                if get(port, "/api/health")[0] == 401:
                    break
            except OSError:
                time.sleep(0.01)
        else:
            raise AssertionError("no answer")
    finally:
        p.send_signal(signal.SIGTERM)
        out, err = p.communicate(timeout=60)
    assert "0.0.0.0" in err and "token" in err, err
    assert "http://127.0.0.1:%d/?token=" % port in out, out


if __name__ == "__main__":
    for path in (e2e.BIN, e2e.GEN):
        if not path or not os.path.exists(path):
            print("SKIP: XPV_BIN / XPV_GEN not set")
            sys.exit(e2e.SKIP)
    setup()
    e2e.main([test_answers_while_indexing, test_interrupt_while_indexing_then_resume,
              test_bind_all_warns])
