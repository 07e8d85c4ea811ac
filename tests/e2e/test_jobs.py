#!/usr/bin/env python3
"""test_jobs.py: indexing with several jobs (--jobs=4, the workers running
each file's store and analysis on consumer threads or on their own) and
with one (--jobs=1) writes equal indexes, table by table (block ids
included), and two servers on them give the same answer to every API and
TensorBoard route for every profile, event refs included. Runs on a generated folder
(three JAX hosts with trace-JSON twins, of different sizes, a PyTorch
trace, and two runs of one host whose files share their names, as the
GPU captures do), and on the fixtures when ../shared is there."""
import hashlib
import json
import os
import subprocess
import sys
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, "..", "..", "bench")]
import index_tables  # noqa: E402
import xpv_e2e as e2e  # noqa: E402

VOLATILE = index_tables.VOLATILE


def index(folder, jobs, consumers=None):
    """Indexes folder with `jobs` jobs; consumers, when given, forces the
    sinks' consumer threads (0: the stages run on each reader's thread,
    as they do when the workers fill the CPUs)."""
    db = os.path.join(e2e.tmpdir(), "jobs%d-%s.sqlite" % (jobs, consumers))
    env = dict(os.environ)
    if consumers is not None:
        env["XPV_INGEST_CONSUMERS"] = str(consumers)
    r = e2e.run(["--profile-dir", folder, "--list-only", "--jobs=%d" % jobs, "--db", db], env=env)
    assert r.returncode == 0, r.stderr
    assert not [f for f in os.listdir(os.path.dirname(db)) if ".part-" in f], "parts left behind"
    return db


def strip(value):
    if isinstance(value, dict):
        return {k: strip(v) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [strip(v) for v in value]
    return value


class Server:
    def __init__(self, folder, db, jobs):
        self.port = e2e.free_port()
        self.proc = subprocess.Popen(
            [e2e.BIN, "--profile-dir", folder, "--db", db, "--port", str(self.port),
             "--perfetto-port", "0", "--jobs=%d" % jobs, "--quiet"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        e2e.wait_indexed(self.port)

    def get(self, path):
        status, ctype, body = e2e.http_get(self.port, path)
        if "json" in ctype and len(body) < (1 << 20):
            return status, strip(json.loads(body))
        return status, hashlib.sha256(body).hexdigest()

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=30)


def profile_paths(server, p, smallest):
    """Every route of one profile, with windows and refs taken from its answers."""
    base = "/api/profiles/%s" % p["id"]
    paths = [base, base + "/steps", base + "/tracks", base + "/modules", base + "/findings",
             base + "/memory_profile", base + "/memory_viewer", base + "/hlo",
             base + "/search?q=a&limit=50", base + "/kernels?format=csv"]
    paths += [base + "/kernels?limit=100000&kind=" + k
              for k in ("kernel", "memcpy", "memset", "xla_op", "hlo_category")]
    start, duration = p.get("start_us") or 0, p.get("duration_us") or 0
    window = "start_us=%s&end_us=%s" % (start, start + duration + 1)
    first_50th = "start_us=%s&end_us=%s" % (start, start + duration / 50 + 1)
    narrow = "resolution=4000&" + first_50th
    # Whole traces are slow to send: one per folder (the smallest), windows of the others.
    paths += [base + "/trace?" + first_50th] if p is not smallest else [base + "/trace"]
    paths += [base + "/events?resolution=4000&" + window, base + "/events?" + narrow,
              base + "/counters?" + window, base + "/aggregate?" + window]
    status, events = server.get(base + "/events?" + narrow)
    refs = [e[4] for t in (events.get("tracks") or []) if isinstance(t, dict)
            for e in (t.get("events") or [])[:5] if len(e) > 4] if isinstance(events, dict) else []
    assert refs or not p.get("events"), "no event refs to compare in " + base
    paths += [base + "/event?ref=%s" % r for r in refs[:40]]
    status, tools = server.get(base + "/tools")
    for tag in (tools if status == 200 else []):
        if tag != "trace_viewer":  # the trace route's answer again
            paths += [base + "/tools/" + tag, base + "/tools/%s?hosts=all" % tag]
    return paths


def tensorboard_paths(server):
    paths = ["/data/plugin/profile/runs"]
    status, runs = server.get("/data/plugin/profile/runs")
    for run in (runs if status == 200 else []):
        q = urllib.parse.quote(run)
        paths += ["/data/plugin/profile/run_tools?run=" + q,
                  "/data/plugin/profile/module_list?run=%s&host=ALL_HOSTS" % q]
        _, tools = server.get("/data/plugin/profile/run_tools?run=" + q)
        for tag in [t for t in (tools or []) if t != "trace_viewer"]:
            paths += ["/data/plugin/profile/hosts?run=%s&tag=%s" % (q, tag),
                      "/data/plugin/profile/data?run=%s&tag=%s&host=ALL_HOSTS" % (q, tag)]
    return paths


def check_same_answers(folder):
    serial_db, parallel_db = index(folder, 1), index(folder, 4)
    assert len(index_tables.rows(serial_db, "blocks")) > 0
    # Which way the workers run their stages depends on the CPUs: both, here.
    others = [parallel_db, index(folder, 4, consumers=0), index(folder, 4, consumers=1)]
    for t in index_tables.TABLES:
        for db in others:
            assert index_tables.rows(serial_db, t) == index_tables.rows(db, t), \
                "%s differs in %s" % (t, os.path.basename(db))
    a, b = Server(folder, serial_db, 1), Server(folder, parallel_db, 4)
    try:
        _, listed = a.get("/api/profiles?companions=1")
        assert b.get("/api/profiles?companions=1") == a.get("/api/profiles?companions=1")
        paths = ["/api/profiles", "/api/profiles/latest"] + tensorboard_paths(a)
        ids = [p["id"] for p in listed["profiles"]]
        smallest = min(listed["profiles"], key=lambda p: p.get("events") or 0)
        for p in listed["profiles"]:
            paths += profile_paths(a, p, smallest)
        if len(ids) >= 2:
            paths.append("/api/compare?a=%s&b=%s" % (ids[0], ids[1]))
        for path in paths:
            assert a.get(path) == b.get(path), "answers differ: " + path
        print("  %d routes answered the same on %d profiles" % (len(paths), len(ids)))
    finally:
        a.stop()
        b.stop()


def test_generated_folder():
    folder = e2e.tmpdir()
    for args in (["--kind", "jax", "--hosts", "3", "--size", "4MB"],
                 ["--kind", "pytorch", "--size", "2MB"]):
        subprocess.run([e2e.GEN, "--out", folder] + args, check=True, capture_output=True)
    # Hosts of different sizes finish out of queue order with several jobs.
    subprocess.run([e2e.GEN, "--out", os.path.join(folder, "big"), "--kind", "jax", "--size",
                    "8MB"], check=True, capture_output=True)
    # Written last, so newest: indexed first, and the block ids of every
    # profile above follow theirs (as the fixtures' chrome-json/ follow gpu/).
    subprocess.run([e2e.GEN, "--out", os.path.join(folder, "xax"), "--kind", "jax", "--runs",
                    "2", "--hosts", "1", "--size", "256KB"], check=True, capture_output=True)
    check_same_answers(folder)


def test_fixtures():
    if not e2e.FIXTURES or not os.path.isdir(e2e.FIXTURES):
        print("  SKIP: ../shared/fixtures not found; the fixture half is skipped")
        return
    check_same_answers(e2e.FIXTURES)


if __name__ == "__main__":
    e2e.main([test_generated_folder, test_fixtures])
