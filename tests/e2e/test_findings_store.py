"""Findings computed once and kept in the index (store/findings.c,
api/findings/findings_keep.c): the kept answer is byte for byte the one
computed afresh (XPV_FINDINGS_STORE=off neither reads nor keeps), from the
CLI and from the server, on generated traces and the fixtures; it is read
(not recomputed) once kept; a changed file re-indexed gets a new answer and a
capture read in part (still being written) keeps none; other thresholds never
read the answer kept for the defaults."""
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
import xpv_e2e as e2e  # noqa: E402

OFF = {"XPV_FINDINGS_STORE": "off"}
EMPTY = ',"complete":true,"steps":0,"findings":[]}'


def gen(out, plant):
    subprocess.run([e2e.GEN, "--out", out, "--plant", plant], check=True, capture_output=True)


def trace_of(plant):
    """The bytes of one planted trace."""
    d = e2e.tmpdir()
    gen(d, plant)
    (name,) = os.listdir(d)
    with open(os.path.join(d, name), "rb") as f:
        return f.read()


def listing(root, db, *extra, env=None):
    r = e2e.run(["--profile-dir=" + root, "--db=" + db, "--list-only", "--json", "--quiet"] +
                list(extra), env=dict(os.environ, **(env or {})), text=False)
    assert r.returncode == 0, r.stderr
    return r.stdout


def by_path(out):
    return {p["path"]: p for p in json.loads(out)}


def rows(db):
    """profile id (hex) -> (key, stamp) of the answers the index keeps."""
    c = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
    try:
        return {"%016x" % (i & (2**64 - 1)): (k, s)
                for i, k, s in c.execute("SELECT profile_id, key, stamp FROM findings")}
    finally:
        c.close()


class Server:
    def __init__(self, root, db, *extra, env=None):
        self.port = e2e.free_port()
        self.p = subprocess.Popen([e2e.BIN, "--profile-dir=" + root, "--port=%d" % self.port,
                                   "--db=" + db, "--perfetto-port=0", "--quiet"] + list(extra),
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                  env=dict(os.environ, **(env or {})))
        e2e.wait_indexed(self.port, 1)

    def get(self, path):
        status, _, body = e2e.http_get(self.port, path)
        assert status == 200, (path, status, body)
        return body

    def findings(self):
        return {p["path"]: self.get("/api/profiles/%s/findings" % p["id"])
                for p in json.loads(self.get("/api/profiles"))["profiles"]}

    def stop(self):
        self.p.terminate()
        self.p.wait(10)


def planted_root():
    root = e2e.tmpdir()
    for plant in ("none", "input-stall", "slow-step", "sync-copy", "tiny-kernels"):
        gen(os.path.join(root, plant), plant)
    return root


def test_kept_answer_equals_a_fresh_one():
    roots = [planted_root()] + ([e2e.FIXTURES] if e2e.FIXTURES and os.path.isdir(e2e.FIXTURES)
                                else [])
    for root in roots:
        db = os.path.join(e2e.tmpdir(), "i.sqlite")
        first = listing(root, db)  # computes and keeps
        ok = [p for p in json.loads(first) if p["status"] == "ok"]
        assert ok and set(rows(db)) == {p["id"] for p in ok}, root
        assert listing(root, db) == first, root  # read back
        assert listing(root, db, env=OFF) == first, root  # computed afresh
        s = Server(root, db)  # the same index: every answer kept already
        try:
            kept = s.findings()
        finally:
            s.stop()
        s = Server(root, db, env=OFF)
        try:
            fresh = s.findings()
        finally:
            s.stop()
        assert kept == fresh, root
        assert any(b'"findings":[{' in v for v in kept.values()), root


def test_the_kept_answer_is_read():
    """An answer changed in the index is what the listing shows: proof that
    it is read, not computed again; with the store off it is not."""
    root = planted_root()
    db = os.path.join(e2e.tmpdir(), "i.sqlite")
    listing(root, db)
    c = sqlite3.connect(db)
    c.execute("UPDATE findings SET answer=?1", (EMPTY,))
    c.commit()
    c.close()
    kept = by_path(listing(root, db))
    assert all(p["findings"] == [] for p in kept.values()), kept
    fresh = by_path(listing(root, db, env=OFF))
    assert {f["kind"] for f in fresh["slow-step/" + os.listdir(os.path.join(root, "slow-step"))[0]]
            ["findings"]} == {"step_outliers"}


def test_server_keeps_them_after_indexing():
    """A server reports indexing done first, then computes and keeps each
    profile's findings in the background; the answers come either way."""
    root = planted_root()
    db = os.path.join(e2e.tmpdir(), "i.sqlite")
    s = Server(root, db)
    try:
        ids = {p["id"] for p in json.loads(s.get("/api/profiles"))["profiles"]}
        s.findings()  # answered before or after they are kept
        wait_for(lambda: set(rows(db)) == ids, "every profile's findings kept")
    finally:
        s.stop()


def test_first_run_warms_an_index_built_elsewhere():
    """An index listed with the store off keeps no findings; a server
    started on it reports done (nothing to index) and keeps them all after."""
    root = planted_root()
    db = os.path.join(e2e.tmpdir(), "i.sqlite")
    fresh = listing(root, db, env=OFF)
    assert rows(db) == {}
    s = Server(root, db)
    try:
        ids = {p["id"] for p in json.loads(s.get("/api/profiles"))["profiles"]}
        wait_for(lambda: set(rows(db)) == ids, "every listed profile's findings kept")
    finally:
        s.stop()
    assert listing(root, db) == fresh  # read back


def test_read_only_index_is_listed_quietly():
    """An index this user cannot write is listed as it is, findings
    computed on each listing, with no error for each profile."""
    top = e2e.tmpdir()
    os.chmod(top, 0o755)
    root = os.path.join(top, "profiles")
    os.makedirs(root)
    gen(os.path.join(root, "slow-step"), "slow-step")
    for d, _, files in os.walk(root):
        os.chmod(d, 0o755)
        for f in files:
            os.chmod(os.path.join(d, f), 0o644)
    dbdir = os.path.join(top, "index")
    os.makedirs(dbdir)
    db = os.path.join(dbdir, "i.sqlite")
    fresh = listing(root, db, env=OFF)  # indexed, nothing kept
    os.chmod(db, 0o444)
    os.chmod(db + ".lock", 0o666)  # opening takes this lock
    os.chmod(dbdir, 0o777)  # SQLite makes its -shm and -wal beside it
    cmd = [e2e.BIN, "--profile-dir=" + root, "--list-only", "--json", "--db=" + db]
    if os.geteuid() == 0:  # root writes anything: run as nobody
        if not shutil.which("setpriv"):
            print("note: setpriv missing, read-only case not run")
            return
        cmd = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] + cmd
    r = subprocess.run(cmd, capture_output=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert b"keeping" not in r.stderr and b"error" not in r.stderr.lower(), r.stderr
    assert r.stdout == fresh
    assert {f["kind"] for p in json.loads(r.stdout) for f in p["findings"]} == {"step_outliers"}
    assert rows(db) == {}


def wait_for(pred, what, timeout=60):
    deadline = time.time() + timeout
    while time.time() < deadline:
        v = pred()
        if v:
            return v
        time.sleep(0.1)
    raise AssertionError("timed out waiting for " + what)


def replace(path, data):
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


def test_invalidated_when_the_file_changes():
    """Live: a clean capture, then the same file cut short (a capture still
    being written: read in part, judged, nothing kept), then whole with a
    slow step: the answer follows the file, kept only once it is read whole,
    and equals a fresh computation."""
    root = e2e.tmpdir()
    os.makedirs(os.path.join(root, "run"))
    path = os.path.join(root, "run", "worker0.1.pt.trace.json")
    clean, slow = trace_of("none"), trace_of("slow-step")
    replace(path, clean)
    db = os.path.join(e2e.tmpdir(), "i.sqlite")
    s = Server(root, db, "--settle-ms=0")
    try:
        (pid,) = [p["id"] for p in json.loads(s.get("/api/profiles"))["profiles"]]
        url = "/api/profiles/%s/findings" % pid
        assert json.loads(s.get(url))["findings"] == []
        before = wait_for(lambda: rows(db).get(pid), "the clean file's answer kept")

        replace(path, slow[:len(slow) * 2 // 3])
        wait_for(lambda: json.loads(s.get("/api/profiles/" + pid))["status"] == "error",
                 "the cut file read in part")
        partial = json.loads(s.get(url))
        assert partial["status"] == "error" and partial["findings"] is not None, partial
        assert pid not in rows(db)  # not kept while it may still grow

        replace(path, slow)
        wait_for(lambda: json.loads(s.get(url))["findings"], "the whole file's findings")
        wait_for(lambda: pid in rows(db), "its answer kept")
        after = rows(db)[pid]
        assert after[0] == before[0] and after[1] != before[1], (before, after)
        body = s.get(url)
    finally:
        s.stop()
    assert {f["kind"] for f in json.loads(body)["findings"]} == {"step_outliers"}
    fresh = by_path(listing(root, db, env=OFF))["run/worker0.1.pt.trace.json"]
    assert fresh["findings"] == json.loads(body)["findings"]


def test_a_change_seen_between_runs():
    """The CLI on an index kept by an earlier run, after the file changed."""
    root = e2e.tmpdir()
    os.makedirs(os.path.join(root, "run"))
    path = os.path.join(root, "run", "worker0.1.pt.trace.json")
    replace(path, trace_of("none"))
    db = os.path.join(e2e.tmpdir(), "i.sqlite")
    assert by_path(listing(root, db))["run/worker0.1.pt.trace.json"]["findings"] == []
    replace(path, trace_of("sync-copy"))
    out = listing(root, db)
    assert {f["kind"] for f in by_path(out)["run/worker0.1.pt.trace.json"]["findings"]} == \
        {"sync_copies"}
    assert out == listing(root, db, env=OFF)


def test_other_thresholds_never_read_the_kept_answer():
    root = e2e.tmpdir()
    gen(os.path.join(root, "input-stall"), "input-stall")
    db = os.path.join(e2e.tmpdir(), "i.sqlite")
    cfg = os.path.join(e2e.tmpdir(), "findings.conf")
    with open(cfg, "w") as f:
        f.write("input_share_warn = 0.5\n")
    default = listing(root, db)
    (p,) = json.loads(default)
    assert {f["kind"] for f in p["findings"]} == {"input_bound"}
    key = rows(db)[p["id"]][0]
    strict = listing(root, db, "--findings-config=" + cfg)
    assert json.loads(strict)[0]["findings"] == []  # 33% < 50%
    assert rows(db)[p["id"]][0] != key
    assert strict == listing(root, db, "--findings-config=" + cfg, env=OFF)
    assert listing(root, db) == default  # and back: computed again for the defaults
    assert rows(db)[p["id"]][0] == key
    # the same thresholds written another way are the same key
    with open(cfg, "w") as f:
        f.write("# the defaults\ninput_share_warn = 0.05\n")
    assert listing(root, db, "--findings-config=" + cfg) == default
    assert rows(db)[p["id"]][0] == key


if __name__ == "__main__":
    if not e2e.BIN or not e2e.GEN:
        print("SKIP: XPV_BIN/XPV_GEN not set")
        sys.exit(e2e.SKIP)
    e2e.main([test_kept_answer_equals_a_fresh_one, test_the_kept_answer_is_read,
              test_server_keeps_them_after_indexing,
              test_first_run_warms_an_index_built_elsewhere, test_read_only_index_is_listed_quietly,
              test_invalidated_when_the_file_changes,
              test_a_change_seen_between_runs, test_other_thresholds_never_read_the_kept_answer])
