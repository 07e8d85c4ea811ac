#!/usr/bin/env python3
"""test_footprint.py: the compressed event store and the index cache, end
to end. A damaged compressed block makes the answers that read it an error
for that profile, while the server keeps serving it and every other
profile; the index of a generated PyTorch trace is at most twice the
trace's gzip size; --cache lists the cached indexes, --cache-max evicts
the least recently used of other directories and never the one in use,
--cache-clear empties the cache. Needs no fixtures."""
import json
import os
import sqlite3
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import xpv_e2e as e2e  # noqa: E402


def generate(size="2MB", folder=None, kind="pytorch"):
    folder = folder or e2e.tmpdir()
    subprocess.run([e2e.GEN, "--out", folder, "--kind", kind, "--size", size, "--no-json"],
                   check=True, capture_output=True)
    return folder


def get_json(port, path):
    status, _, body = e2e.http_get(port, path, timeout=30)
    return status, json.loads(body) if body else None


def test_damaged_block_is_an_error_for_that_profile():
    folder = e2e.tmpdir()
    generate(folder=os.path.join(folder, "pt"))
    generate(folder=os.path.join(folder, "jax"), kind="jax")
    db = os.path.join(e2e.tmpdir(), "index.sqlite")
    r = e2e.run(["--profile-dir", folder, "--db", db, "--list-only", "--json"])
    assert r.returncode == 0, r.stderr
    profiles = json.loads(r.stdout)
    assert len(profiles) == 2, profiles
    bad, good = profiles
    con = sqlite3.connect(db)
    pid = con.execute("SELECT id FROM profiles WHERE path=?", (bad["path"],)).fetchone()[0]
    rows = con.execute("SELECT id, data FROM blocks WHERE profile_id=?", (pid,)).fetchall()
    compressed = [(i, d) for i, d in rows if d[0] == 3]
    assert compressed, "no compressed block to damage"
    for i, d in compressed:  # one flipped byte in the middle of each zstd frame
        d = bytearray(d)
        d[len(d) // 2] ^= 0x5A
        con.execute("UPDATE blocks SET data=? WHERE id=?", (bytes(d), i))
    con.commit()
    con.close()
    port = e2e.free_port()
    proc = subprocess.Popen([e2e.BIN, "--profile-dir", folder, "--port", str(port),
                             "--perfetto-port", "0", "--db", db],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        e2e.wait_indexed(port, 2)

        def window(p):
            q = "start_us=%r&end_us=%r&resolution=20000" % (
                p["start_us"], p["start_us"] + p["duration_us"])
            return get_json(port, "/api/profiles/%s/events?%s" % (p["id"], q))
        status, body = window(bad)
        assert status >= 500, (status, body)
        assert "damaged" in body["error"], body
        status, body = window(good)
        assert status == 200, (status, body)
        assert "error" not in body and len(json.dumps(body)) > 1000, body
        assert get_json(port, "/api/profiles")[0] == 200
        status, body = get_json(port, "/api/profiles/%s" % bad["id"])
        assert status == 200 and body["events"] == bad["events"], (status, body)
        assert proc.poll() is None, "the server stopped"
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_index_at_most_twice_the_gzip_size():
    folder = generate(size="20MB")
    trace = [os.path.join(d, f) for d, _, fs in os.walk(folder) for f in fs
             if f.endswith(".json.gz")]
    assert len(trace) == 1, trace
    db = os.path.join(e2e.tmpdir(), "index.sqlite")
    r = e2e.run(["--profile-dir", folder, "--db", db, "--list-only"])
    assert r.returncode == 0, r.stderr
    index = sum(os.path.getsize(db + s) for s in ("", "-wal") if os.path.exists(db + s))
    gz = os.path.getsize(trace[0])
    assert index <= 2 * gz, (index, gz)


def test_wal_cut_after_indexing():
    """After a run indexed under a server, the WAL is copied into the index
    and cut to nothing, so the cache is only the index on disk. Nothing
    reads meanwhile (a reader keeps the WAL, and the next run cuts it)."""
    folder = generate(size="8MB", kind="jax")
    db = os.path.join(e2e.tmpdir(), "index.sqlite")
    port = e2e.free_port()
    proc = subprocess.Popen([e2e.BIN, "--profile-dir", folder, "--port", str(port),
                             "--perfetto-port", "0", "--db", db],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline, grown = time.time() + 120, 0
        while time.time() < deadline:
            wal = os.path.getsize(db + "-wal") if os.path.exists(db + "-wal") else 0
            grown = max(grown, wal)
            if grown and wal == 0:
                break
            time.sleep(0.05)
        assert grown > 1 << 20 and wal == 0, (grown, wal)
        h = e2e.wait_indexed(port)
        assert h["status_counts"] == {"ok": 1}, h
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def cache_env():
    return dict(os.environ, XDG_CACHE_HOME=e2e.tmpdir())


def test_cache_list_cap_and_clear():
    env = cache_env()
    a, b, c = generate(size="1MB"), generate(size="1MB"), generate(size="1MB")
    for folder in (a, b):
        r = e2e.run(["--profile-dir", folder, "--list-only"], env=env)
        assert r.returncode == 0, r.stderr
        time.sleep(0.05)  # distinct last-use times
    r = e2e.run(["--cache"], env=env)
    assert r.returncode == 0, r.stderr
    assert a in r.stdout and b in r.stdout and "2 indexes" in r.stdout, r.stdout
    cache = os.path.join(env["XDG_CACHE_HOME"], "xprof-view")
    sizes = {f: os.path.getsize(os.path.join(cache, f)) for f in os.listdir(cache)
             if f.endswith(".sqlite")}
    # A cap that holds c's index and one more: a (least recently used) goes.
    cap = max(sizes.values()) * 2 + 4096 * 8
    r = e2e.run(["--profile-dir", c, "--list-only", "--cache-max=%d" % cap], env=env)
    assert r.returncode == 0, r.stderr
    r = e2e.run(["--cache"], env=env)
    assert b in r.stdout and c in r.stdout and a not in r.stdout, r.stdout
    # A cap smaller than any index: everything but the index in use goes.
    r = e2e.run(["--profile-dir", c, "--list-only", "--cache-max=1"], env=env)
    assert r.returncode == 0, r.stderr
    r = e2e.run(["--cache"], env=env)
    assert c in r.stdout and b not in r.stdout and "1 indexes" in r.stdout, r.stdout
    r = e2e.run(["--cache-clear"], env=env)
    assert r.returncode == 0 and "removed 1 indexes" in r.stdout, (r.stdout, r.stderr)
    assert not [f for f in os.listdir(cache) if f.endswith(".sqlite")]


if __name__ == "__main__":
    e2e.main([test_damaged_block_is_an_error_for_that_profile,
              test_index_at_most_twice_the_gzip_size,
              test_cache_list_cap_and_clear, test_wal_cut_after_indexing])
