#!/usr/bin/env python3
"""test_live.py: live mode. The real server on an empty directory; a
profile written in pieces, as a profiler writes it, is announced on
GET /api/stream (Server-Sent Events) and is `latest` within 1 s of the last
write; removing it is announced too; a capture still growing after a
pause is read again, not left broken; a reconnecting client gets what it
missed (Last-Event-ID) or is told to refetch; the streams of closed tabs
leave the cap at once, not at the next heartbeat; polling mode finds
files too; /api/profiles stays fast while 500 new files are indexed, and
no answer cached during indexing outlives it. Expected numbers come from
the traces this test writes. Needs no fixtures."""
import gzip
import json
import os
import queue
import signal
import socket
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import xpv_e2e as e2e  # noqa: E402

# scripts/test.sh runs this file again on the sanitized Debug binary, for
# memory errors and leaks; there, indexing is many times slower, so the
# bursts are smaller and the timings are printed, not held to the bounds.
SANITIZED = "ASAN_OPTIONS" in os.environ
BURST = 100 if SANITIZED else 500


def trace(n_kernels, tag="k"):
    ev = [{"ph": "M", "name": "process_name", "pid": 0, "args": {"name": "GPU 0"}}]
    for i in range(n_kernels):
        ev.append({"ph": "X", "cat": "kernel", "name": "%s%d" % (tag, i % 7), "pid": 0, "tid": 7,
                   "ts": 100.0 + 10 * i, "dur": 5, "args": {"device": 0, "stream": 7}})
    return json.dumps({"schemaVersion": 1, "traceEvents": ev}).encode()


def x_events(data):
    """Independent count: the complete events in the trace bytes."""
    return sum(1 for e in json.loads(data)["traceEvents"] if e["ph"] == "X")


class Stream:
    """A GET /api/stream client on a raw socket (HTTP/1.0: no chunking):
    events land in a queue as (received_at, id, type, data)."""

    def __init__(self, port, last_id=None):
        self.q = queue.Queue()
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=60)
        req = "GET /api/stream HTTP/1.0\r\nHost: 127.0.0.1\r\n"
        if last_id is not None:
            req += "Last-Event-ID: %s\r\n" % last_id
        self.sock.sendall((req + "\r\n").encode())
        self.f = self.sock.makefile("rb")
        status = self.f.readline().decode()
        assert " 200 " in status, status
        self.headers = {}
        while True:
            line = self.f.readline().decode().strip()
            if not line:
                break
            k, v = line.split(":", 1)
            self.headers[k.strip().lower()] = v.strip()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        ev = {}
        try:
            for raw in self.f:
                line = raw.decode().rstrip("\n")
                if line == "":
                    if "event" in ev or "data" in ev:
                        self.q.put((time.time(), ev.get("id"), ev.get("event", "message"),
                                    json.loads(ev["data"]) if "data" in ev else None))
                    ev = {}
                elif not line.startswith(":"):
                    k, _, v = line.partition(":")
                    ev[k] = v[1:] if v.startswith(" ") else v
        except (OSError, ValueError):
            pass
        self.q.put(None)

    def next(self, want, timeout=10, pred=lambda d: True):
        """The next event of type `want` whose data satisfies pred."""
        end = time.time() + timeout
        while True:
            left = end - time.time()
            assert left > 0, "no %s event within %ss" % (want, timeout)
            item = self.q.get(timeout=left)
            assert item is not None, "stream closed"
            if item[2] == want and pred(item[3]):
                return item

    def close(self):
        # The reader's file holds the descriptor open too: shut the socket
        # itself first, as a closing tab does, which also ends the reader.
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()
        self.f.close()


class Server:
    def __init__(self, *flags):
        d = e2e.tmpdir("xpv-live-")
        self.prof = os.path.join(d, "profiles")
        os.makedirs(self.prof)
        self.port = e2e.free_port()
        self.proc = subprocess.Popen(
            [e2e.BIN, "--profile-dir=" + self.prof, "--db=" + os.path.join(d, "i.sqlite"),
             "--port=%d" % self.port, "--perfetto-port=0"] + list(flags),
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.health = e2e.wait_indexed(self.port, min_profiles=0)

    def get(self, path):
        st, _, body = e2e.http_get(self.port, path)
        return st, json.loads(body)

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        out, err = self.proc.communicate(timeout=60)
        assert self.proc.returncode == 0, err
        return out, err


def write_in_pieces(path, data, pieces, pause):
    """Writes data as a profiler does: open, a piece, flush, pause, ..."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    step = len(data) // pieces + 1
    with open(path, "wb") as f:
        for i in range(0, len(data), step):
            if i:
                time.sleep(pause)
            f.write(data[i:i + step])
            f.flush()
    return time.time()


def test_new_capture_announced_and_latest_within_1s():
    s = Server()
    try:
        assert s.health["live"]["watch"] == "inotify", s.health
        assert s.health["live"]["settle_ms"] == 300
        st = Stream(s.port)
        assert st.headers["content-type"].startswith("text/event-stream"), st.headers
        hello = st.next("hello")
        # A new run directory, made while the server runs, as jax.profiler does.
        rel = "job/plugins/profile/2026_01_02_03_04_05/host0.pt.trace.json"
        data = trace(400)
        last_write = write_in_pieces(os.path.join(s.prof, rel), data, 4, 0.15)
        at, eid, _, ev = st.next("profile-added", pred=lambda d: d["profile"]["path"] == rel)
        p = ev["profile"]
        assert int(eid) > hello[3]["last_id"], (eid, hello)
        assert p["status"] == "ok" and p["events"] == x_events(data), p
        assert ev["latest"] == p["id"], ev
        code, latest = s.get("/api/profiles/latest")
        seen_latest = time.time()
        assert code == 200 and latest["id"] == p["id"], latest
        print("profile-added %.0f ms after the last write, latest at %.0f ms"
              % ((at - last_write) * 1000, (seen_latest - last_write) * 1000))
        bound = 3.0 if SANITIZED else 1.0
        assert at - last_write < bound and seen_latest - last_write < bound
        # Removed: announced, and gone from the list.
        os.remove(os.path.join(s.prof, rel))
        t0 = time.time()
        _, _, _, gone = st.next("profile-removed", pred=lambda d: d["id"] == p["id"])
        assert gone["path"] == rel, gone
        print("profile-removed %.0f ms after the unlink" % ((time.time() - t0) * 1000))
        code, body = s.get("/api/profiles")
        assert code == 200 and body["profiles"] == [], body
        assert s.get("/api/profiles/latest")[0] == 404
        st.close()
    finally:
        s.stop()


def test_growing_capture_retried_not_broken():
    # A settle time shorter than the profiler's pause: the first half is read
    # (and fails, cut short), then the whole file is read again.
    s = Server("--settle-ms=100")
    try:
        st = Stream(s.port)
        data = gzip.compress(trace(3000))
        rel = "run1/worker.pt.trace.json.gz"
        path = os.path.join(s.prof, rel)
        os.makedirs(os.path.dirname(path))
        with open(path, "wb") as f:
            f.write(data[:len(data) // 2])
            f.flush()
            _, _, _, first = st.next("profile-added", pred=lambda d: d["profile"]["path"] == rel)
            assert first["profile"]["status"] == "error", first
            f.write(data[len(data) // 2:])
        _, _, _, upd = st.next("profile-updated",
                               pred=lambda d: d["profile"]["path"] == rel and
                               d["profile"]["status"] == "ok")
        assert upd["profile"]["events"] == 3000, upd
        assert upd["profile"]["id"] == first["profile"]["id"]
        code, p = s.get("/api/profiles/latest")
        assert p["status"] == "ok" and p["events"] == 3000 and not p["partial"], p
        # Replaced by a smaller capture under the same name: indexed again.
        tmp = os.path.join(s.prof, "run1", ".tmp")
        with open(tmp, "wb") as f:
            f.write(gzip.compress(trace(50)))
        os.rename(tmp, path)
        _, _, _, rep = st.next("profile-updated",
                               pred=lambda d: d["profile"]["events"] == 50)
        assert rep["profile"]["status"] == "ok", rep
        st.close()
    finally:
        s.stop()


def test_reconnect_replays_or_resets():
    s = Server("--settle-ms=0")
    try:
        st = Stream(s.port)
        st.next("hello")
        ids = []
        for i in range(3):
            with open(os.path.join(s.prof, "c%d.pt.trace.json" % i), "wb") as f:
                f.write(trace(5 + i))
            ids.append(st.next("profile-added")[1])
        st.close()
        # Reconnecting after the first: the two that followed are replayed, in order.
        again = Stream(s.port, last_id=ids[0])
        got = [again.next("profile-added")[3]["profile"]["events"] for _ in range(2)]
        assert got == [6, 7], got
        again.close()
        # An id from before this server started (or a bad one): refetch.
        for bad in ("1", "x"):
            old = Stream(s.port, last_id=bad)
            old.next("reset")
            old.close()
        code, h = s.get("/api/health")
        assert h["live"]["last_event_id"] >= int(ids[-1]), (h, ids)
    finally:
        s.stop()


STREAM_CAP = 64  # live_events.h: XPV_LIVE_MAX_CLIENTS


def stream_status(port):
    """Asks for a stream and hangs up: its status code."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(b"GET /api/stream HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
        return int(sock.makefile("rb").readline().split()[1])


def test_closed_tabs_free_their_streams():
    # Tabs closed a moment ago must not hold the cap until the 15 s
    # heartbeat: a stream arriving past half the cap probes the others.
    s = Server()
    try:
        streams = [Stream(s.port) for _ in range(STREAM_CAP)]
        for st in streams:
            st.next("hello")
        assert s.get("/api/health")[1]["live"]["streams"] == STREAM_CAP
        assert stream_status(s.port) == 503, "the cap holds while every stream is open"
        for st in streams:
            st.close()
        t0, codes = time.time(), []
        while time.time() - t0 < 5 and codes[-1:] != [200]:
            codes.append(stream_status(s.port))
            time.sleep(0.05)
        assert codes[-1] == 200, codes  # the heartbeat alone takes up to 15 s
        print("a new stream admitted %.0f ms after %d tabs closed, answers %s"
              % ((time.time() - t0) * 1000, STREAM_CAP, codes))
        # The probes find every closed one, not just a place for one more.
        # On a loaded machine the 64 hang-ups reach the server over a few
        # probes (one per arrival, 100 ms apart at most): well inside the
        # 15 s heartbeat, which alone would leave them all counted.
        t1, left = time.time(), s.get("/api/health")[1]["live"]["streams"]
        while left >= STREAM_CAP // 2 and time.time() - t1 < 3:
            stream_status(s.port)
            time.sleep(0.1)
            left = s.get("/api/health")[1]["live"]["streams"]
        print("%d streams left %.0f ms later" % (left, (time.time() - t1) * 1000))
        assert left < STREAM_CAP // 2, left
    finally:
        s.stop()


def test_polling_mode_finds_new_files():
    s = Server("--poll=1")
    try:
        assert s.health["live"] == dict(s.health["live"], watch="poll", poll_seconds=1), s.health
        st = Stream(s.port)
        os.makedirs(os.path.join(s.prof, "a", "b"))
        data = trace(20)
        with open(os.path.join(s.prof, "a", "b", "h.pt.trace.json"), "wb") as f:
            f.write(data)
        t0 = time.time()
        _, _, _, ev = st.next("profile-added", timeout=10)
        assert ev["profile"]["events"] == x_events(data), ev
        print("poll mode: announced %.2f s after the write" % (time.time() - t0))
        st.close()
    finally:
        s.stop()


def test_500_new_files_while_profiles_stays_fast():
    n = BURST
    s = Server()
    try:
        stop = threading.Event()
        times = []

        def poll():
            while not stop.is_set():
                t = time.perf_counter()
                code, _, body = e2e.http_get(s.port, "/api/profiles")
                times.append(time.perf_counter() - t)
                assert code == 200
                time.sleep(0.01)

        st = Stream(s.port)
        poller = threading.Thread(target=poll)
        poller.start()
        data = trace(30)
        for i in range(n):
            d = os.path.join(s.prof, "run%02d" % (i // 50))
            os.makedirs(d, exist_ok=True)
            with open(os.path.join(d, "w%03d.pt.trace.json" % i), "wb") as f:
                f.write(data)
        written = time.time()
        deadline = time.time() + 300
        while time.time() < deadline:
            code, h = s.get("/api/health")
            if h["status_counts"].get("ok", 0) == n and not h["indexing"]["active"]:
                break
            time.sleep(0.1)
        took = time.time() - written
        stop.set()
        poller.join()
        assert h["status_counts"].get("ok", 0) == n, h
        times.sort()
        p50, p95 = times[len(times) // 2], times[int(len(times) * 0.95)]
        print("%d files indexed %.2f s after the last write; /api/profiles over %d requests:"
              " p50 %.1f ms, p95 %.1f ms, max %.1f ms%s"
              % (n, took, len(times), p50 * 1000, p95 * 1000, times[-1] * 1000,
                 " (sanitized build)" if SANITIZED else ""))
        assert len(times) >= 20, len(times)
        # Not a speed check (bench/run_live.sh holds the 100 ms target): a
        # median under a second shows the list is never held behind indexing,
        # which took seconds here, whatever the machine's load.
        assert p50 < 1.0, p50
        code, body = s.get("/api/profiles")
        assert len(body["profiles"]) == n
        odd = [p for p in body["profiles"] if p["events"] != 30]
        assert not odd, odd[:3]
        # Every one announced once on the stream, none missed.
        added = set()
        while len(added) < n:
            added.add(st.next("profile-added", timeout=30)[3]["profile"]["id"])
        assert added == {p["id"] for p in body["profiles"]}
        st.close()
    finally:
        s.stop()


def test_answers_never_stale_after_indexing():
    # Many commits while many requests run: an answer computed from the
    # index before a commit must not be cached as the answer after it
    # (it was, and then served until the next change).
    s = Server("--settle-ms=0")
    try:
        stop = threading.Event()

        def hammer():
            while not stop.is_set():
                e2e.http_get(s.port, "/api/profiles")

        threads = [threading.Thread(target=hammer) for _ in range(8)]
        for t in threads:
            t.start()
        data = trace(30)
        n = BURST * 4 // 5
        for i in range(n):
            with open(os.path.join(s.prof, "f%03d.pt.trace.json" % i), "wb") as f:
                f.write(data)
        deadline = time.time() + 300
        while time.time() < deadline:
            code, h = s.get("/api/health")
            if h["status_counts"].get("ok", 0) == n and not h["indexing"]["active"]:
                break
            time.sleep(0.05)
        stop.set()
        for t in threads:
            t.join()
        assert h["status_counts"].get("ok", 0) == n, h
        # Requests land on every pool thread, each with its own cache.
        for _ in range(64):
            code, body = s.get("/api/profiles")
            odd = [p for p in body["profiles"] if p["status"] != "ok" or p["events"] != 30]
            assert len(body["profiles"]) == n and not odd, (len(body["profiles"]), odd[:2])
    finally:
        s.stop()


if __name__ == "__main__":
    e2e.main([test_new_capture_announced_and_latest_within_1s,
              test_growing_capture_retried_not_broken,
              test_reconnect_replays_or_resets,
              test_closed_tabs_free_their_streams,
              test_polling_mode_finds_new_files,
              test_500_new_files_while_profiles_stays_fast,
              test_answers_never_stale_after_indexing])
