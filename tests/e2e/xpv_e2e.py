"""Shared helpers for the end-to-end tests: paths from the environment,
running the real binary, a tiny test runner printing 'N passed, N failed'."""
import http.client
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import traceback

sys.path.append(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench"))
import index_tables  # noqa: E402

BIN = os.environ.get("XPV_BIN", "")
GEN = os.environ.get("XPV_GEN", "")
FIXTURES = os.environ.get("XPV_FIXTURES", "")
SKIP = 77


def need_fixtures():
    if not FIXTURES or not os.path.isdir(FIXTURES):
        print("SKIP: ../shared/fixtures not found (set XPV_FIXTURES); fixture tests skipped")
        sys.exit(SKIP)


def tmpdir(prefix="xpv-e2e-"):
    d = tempfile.mkdtemp(prefix=prefix)
    _TMPDIRS.append(d)
    return d


_TMPDIRS = []


def run(args, **kw):
    """Runs the binary; returns CompletedProcess with text output."""
    kw.setdefault("capture_output", True)
    kw.setdefault("text", True)
    kw.setdefault("timeout", 300)
    return subprocess.run([BIN] + list(args), **kw)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http_get(port, path, timeout=60):
    """(status, Content-Type, body bytes) of GET path on 127.0.0.1:port."""
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        c.request("GET", path)
        r = c.getresponse()
        return r.status, r.getheader("Content-Type", ""), r.read()
    finally:
        c.close()


def wait_indexed(port, min_profiles=1, timeout=120):
    """Waits until the server on port has finished its first indexing run
    (runs >= 1: before that run starts, "not active" says nothing) and lists
    at least min_profiles profiles; returns its health answer."""
    import json
    import time
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            status, _, body = http_get(port, "/api/health")
            h = json.loads(body) if status == 200 else None
            if h and h["indexing"]["runs"] >= 1 and not h["indexing"]["active"] and \
                    h["profiles"] >= min_profiles:
                return h
        except OSError:
            pass
        time.sleep(0.1)
    raise AssertionError("server did not finish indexing")


def snapshot(root):
    """(path, size, mtime_ns) of everything under root, to prove it was only read."""
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        for name in sorted(dirnames + filenames):
            p = os.path.join(dirpath, name)
            st = os.lstat(p)
            out.append((os.path.relpath(p, root), st.st_size, st.st_mtime_ns))
    return sorted(out)


def kernel_rows(con, pid, kind, device):
    """The index's kernel rows of one profile, kind and device as dicts of
    kernel_stats' columns: the table's for device -1, the packed blob's
    (kernel_device_stats) for one device."""
    if device < 0:
        cur = con.execute("SELECT * FROM kernel_stats WHERE profile_id=? AND kind=? AND device=?",
                          (pid, kind, device))
        names = [d[0] for d in cur.description]
        return [dict(zip(names, row)) for row in cur]
    got = con.execute("SELECT data FROM kernel_device_stats WHERE profile_id=? AND kind=? AND"
                      " device=?", (pid, kind, device)).fetchone()
    rows = index_tables.device_rows(got[0]) if got else []
    return [dict(zip(index_tables.KERNEL_COLUMNS, (pid, kind, device) + r)) for r in rows]


def profile_strings(con, pid):
    """A profile's interned strings as {id: value}, unpacked from the index's
    chunks by a reader of the tests' own (bench/index_tables.py)."""
    return index_tables.profile_strings(con, pid)


def main(tests):
    """Runs test functions, prints a closing 'N passed, N failed' line."""
    passed = failed = 0
    for t in tests:
        try:
            t()
            passed += 1
            print("ok   " + t.__name__)
        except Exception:
            failed += 1
            print("FAIL " + t.__name__)
            traceback.print_exc()
    for d in _TMPDIRS:
        shutil.rmtree(d, ignore_errors=True)
    print("%d passed, %d failed" % (passed, failed))
    sys.exit(1 if failed else 0)
