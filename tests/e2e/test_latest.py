#!/usr/bin/env python3
"""test_latest.py: `latest` (GET /api/profiles/latest, the Perfetto
listener's /latest.json and the start-up link) is the newest readable
profile (indexed ok, or partial with events: the pages show what was read,
with a banner), and the newest of all only when none is: a broken capture
(no event) or one in a format this tool does not read never hides the last
readable one.
The real server on free ports, over profile dirs this test writes itself.
Needs no fixtures."""
import gzip
import json
import os
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import xpv_e2e as e2e  # noqa: E402


free_port = e2e.free_port


def get(port, path):
    status, _, body = e2e.http_get(port, path)
    return status, body


def trace(n_kernels):
    ev = [{"ph": "M", "name": "process_name", "pid": 0, "args": {"name": "GPU 0"}}]
    for i in range(n_kernels):
        ev.append({"ph": "X", "cat": "kernel", "name": "k%d" % i, "pid": 0, "tid": 7,
                   "ts": 100.0 + 10 * i, "dur": 5, "args": {"device": 0, "stream": 7}})
    return json.dumps({"schemaVersion": 1, "traceEvents": ev}).encode()


def write(prof, name, data, age_s):
    """Writes a file and dates it age_s seconds ago (larger = older)."""
    path = os.path.join(prof, name)
    with open(path, "wb") as f:
        f.write(data)
    t = time.time() - age_s
    os.utime(path, (t, t))
    return name


GOOD = lambda: trace(3)  # noqa: E731
# A capture cut off mid-write: gzip without its end, events stop mid-object.
HALF = lambda: gzip.compress(trace(400))[:1500]  # noqa: E731
BROKEN = lambda: b'{"traceEvents": [ this is not json'  # noqa: E731


class Server:
    def __init__(self, files):
        d = e2e.tmpdir("xpv-latest-")
        self.prof = os.path.join(d, "profiles")
        os.makedirs(self.prof)
        for name, data, age in files:
            write(self.prof, name, data, age)
        self.port, self.pport = free_port(), free_port()
        self.proc = subprocess.Popen(
            [e2e.BIN, "--profile-dir=" + self.prof, "--db=" + os.path.join(d, "i.sqlite"),
             "--port=%d" % self.port, "--perfetto-port=%d" % self.pport],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.wait_indexed()

    def wait_indexed(self):
        end = time.time() + 60
        while time.time() < end:
            assert self.proc.poll() is None, self.proc.communicate()
            try:
                st, body = get(self.port, "/api/profiles")
                ps = json.loads(body)["profiles"] if st == 200 else []
                if ps and all(p["status"] != "pending" for p in ps):
                    self.profiles = {os.path.basename(p["path"]): p for p in ps}
                    return
            except OSError:
                pass
            time.sleep(0.05)
        raise AssertionError("not indexed in time")

    def latest(self):
        st, body = get(self.port, "/api/profiles/latest")
        assert st == 200, (st, body)
        return os.path.basename(json.loads(body)["path"])

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        return self.proc.communicate(timeout=60)


def check_latest(files, want, status_of_newest):
    s = Server(files)
    try:
        newest = min(files, key=lambda f: f[2])[0]
        assert s.profiles[newest]["status"] == status_of_newest, s.profiles[newest]
        assert s.latest() == want, (s.latest(), want)
        # The id route, the Perfetto listener and the start-up link agree.
        wid = s.profiles[want]["id"]
        st, body = get(s.port, "/api/profiles/latest/kernels")
        assert st == 200 and json.loads(body)["profile"] == wid, body[:200]
        if s.profiles[want]["status"] == "ok":
            st, body = get(s.pport, "/latest.json")
            names = {e["name"] for e in json.loads(body)["traceEvents"] if e["ph"] == "X"}
            assert st == 200 and names == {"k0", "k1", "k2"}, (st, names)
    finally:
        out, _ = s.stop()
    # printed before indexing ends, so it names latest.json, resolved when opened
    assert "http://127.0.0.1:%d/latest.json" % s.pport in out, out


def test_broken_newer_does_not_hide_good():
    check_latest([("good.pt.trace.json", GOOD(), 300), ("bad.pt.trace.json", BROKEN(), 10)],
                 "good.pt.trace.json", "error")


def test_half_written_newer_is_readable():
    # Issue rule: a partial profile with events is readable, so the newer one
    # is latest (this test once expected the older good one).
    check_latest([("good.pt.trace.json", GOOD(), 300), ("half.pt.trace.json.gz", HALF(), 10)],
                 "half.pt.trace.json.gz", "error")


def test_newest_broken_and_unsupported_skipped():
    # Newest first: an Nsight report (unsupported), a broken trace, an empty
    # one (0 events), then a partial one, then a good old one.
    files = [("good.pt.trace.json", GOOD(), 400), ("half.pt.trace.json.gz", HALF(), 300),
             ("empty.pt.trace.json", trace(0), 200), ("bad.pt.trace.json", BROKEN(), 100),
             ("run.nsys-rep", b"not a report this tool reads", 10)]
    s = Server(files)
    try:
        p = s.profiles
        assert p["run.nsys-rep"]["status"] == "unsupported", p["run.nsys-rep"]
        assert p["bad.pt.trace.json"]["status"] == "error", p["bad.pt.trace.json"]
        assert p["empty.pt.trace.json"]["events"] == 0, p["empty.pt.trace.json"]
        assert p["half.pt.trace.json.gz"]["partial"] is True, p["half.pt.trace.json.gz"]
        assert p["half.pt.trace.json.gz"]["events"] > 0, p["half.pt.trace.json.gz"]
        assert s.latest() == "half.pt.trace.json.gz", s.latest()
        st, body = get(s.port, "/api/profiles/latest/steps")
        assert st == 200, (st, body[:200])
    finally:
        s.stop()


def test_partial_before_broken():
    s = Server([("half.pt.trace.json.gz", HALF(), 300), ("bad.pt.trace.json", BROKEN(), 10)])
    try:
        assert s.profiles["half.pt.trace.json.gz"]["partial"] is True, s.profiles
        assert s.latest() == "half.pt.trace.json.gz"
    finally:
        s.stop()


def test_newest_when_none_indexed():
    s = Server([("old.pt.trace.json", BROKEN(), 300), ("new.pt.trace.json", BROKEN(), 10)])
    try:
        assert s.latest() == "new.pt.trace.json"
    finally:
        s.stop()


def test_newest_good_wins():
    check_latest([("old.pt.trace.json", trace(1), 300), ("good.pt.trace.json", GOOD(), 10)],
                 "good.pt.trace.json", "ok")


if __name__ == "__main__":
    if not e2e.BIN or not os.path.exists(e2e.BIN):
        print("SKIP: XPV_BIN not set")
        sys.exit(e2e.SKIP)
    e2e.main([test_broken_newer_does_not_hide_good, test_half_written_newer_is_readable,
              test_newest_broken_and_unsupported_skipped,
              test_partial_before_broken, test_newest_when_none_indexed, test_newest_good_wins])
