#!/usr/bin/env python3
"""api_snapshot.py — every API route's answer on every profile, for proving
that a change which should not change behaviour did not.

  scripts/api_snapshot.py BIN OUTDIR [--fixtures DIR] [--gen XPV_GEN]
  scripts/api_snapshot.py --diff OLD_DIR NEW_DIR

The first form builds one profile directory (copies of ../shared/fixtures,
GPU captures included, and, with --gen, a generated JAX profile; always at the same path, so paths
in the answers compare), starts BIN on free ports, asks every route for
every profile (profile objects, kernels of every kind and device, CSV,
steps, tracks, event windows, single events, search pages, the trace
export, every tool the profile lists, the TensorBoard routes with every
tool of every run and host, the Perfetto listener) and writes one file
per answer into OUTDIR: `status`, content type and the body. Every route
of `xprof-view --routes` is asked (tests/e2e/test_route_table.py reads the
paths below, absolute or "%s/..." after a profile's base path, and fails
on a route left out) but those in NOT_ASKED, each with its reason. Fields that
hold the time of indexing or a free port (indexed_at, index_seconds, the
Perfetto listener's port and base_url) are dropped. The
second form compares two such folders and exits 1 on any difference; an
answer only NEW has (a route an older snapshot did not ask) is listed but
is no difference.
"""
import argparse
import fcntl
import filecmp
import hashlib
import http.client
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse

PROFILE_DIR = os.path.join(tempfile.gettempdir(), "xpv-api-snapshot", "profiles")
# One run at a time on this machine: a run rebuilding PROFILE_DIR under
# another's server makes it index the files again, so every later block id,
# and the event refs with them, shift.
LOCK = os.path.join(tempfile.gettempdir(), "xpv-api-snapshot.lock")
VOLATILE = {"indexed_at", "index_seconds", "port", "base_url",  # time of indexing, free ports
            "last_event_id"}  # the live stream's ids start at the clock
BIG = 1 << 20  # bodies above this are kept as a hash
NOT_ASKED = {"/api/stream": "a Server-Sent Events stream: it never ends"}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def build_profile_dir(fixtures, gen):
    shutil.rmtree(os.path.dirname(PROFILE_DIR), ignore_errors=True)
    run_dir = os.path.join(PROFILE_DIR, "plugins", "profile", "2024_01_01_00_00_00")
    os.makedirs(run_dir)
    for sub in ("chrome-json", "nsys", "xplane"):
        src = os.path.join(fixtures, sub)
        if not os.path.isdir(src):
            continue
        dst = run_dir if sub == "xplane" else os.path.join(PROFILE_DIR, sub)
        os.makedirs(dst, exist_ok=True)
        for name in sorted(os.listdir(src)):
            shutil.copy2(os.path.join(src, name), os.path.join(dst, name))
    # The GPU captures keep their profilers' own folder layouts.
    gpu = os.path.join(fixtures, "gpu")
    if os.path.isdir(gpu):
        shutil.copytree(gpu, os.path.join(PROFILE_DIR, "gpu"),
                        ignore=shutil.ignore_patterns("*.py", "*.md"))
    if gen:
        subprocess.run([gen, "--out", os.path.join(PROFILE_DIR, "gen"), "--kind", "jax",
                        "--size", "2MB", "--runs", "1", "--hosts", "2"], check=True,
                       capture_output=True)
    with open(os.path.join(PROFILE_DIR, "broken.trace.json"), "w") as f:
        f.write('{"traceEvents": [ {"name": "x", "ph": "X", "ts": 1,')
    # Fixed times: the answers carry mtimes, and "latest" depends on them.
    t = 1700000000
    for root, _, files in os.walk(PROFILE_DIR):
        for name in sorted(files):
            t += 60
            os.utime(os.path.join(root, name), (t, t))


class Client:
    def __init__(self, port):
        self.port = port

    def get(self, path, port=None):
        c = http.client.HTTPConnection("127.0.0.1", port or self.port, timeout=300)
        try:
            c.request("GET", path)
            r = c.getresponse()
            return r.status, r.getheader("Content-Type", ""), r.read()
        finally:
            c.close()


def scrub(v):
    if isinstance(v, dict):
        return {k: scrub(x) for k, x in v.items() if k not in VOLATILE}
    if isinstance(v, list):
        return [scrub(x) for x in v]
    return v


def normalize(ctype, body):
    if ctype.startswith("application/json") and len(body) < BIG:
        try:
            return json.dumps(scrub(json.loads(body)), sort_keys=False).encode()
        except ValueError:
            return body
    return body


class Snapshot:
    def __init__(self, client, out):
        self.c, self.out, self.n = client, out, 0

    def save(self, path, port=None):
        status, ctype, body = self.c.get(path, port)
        body = normalize(ctype, body)
        # named by the request alone, so one answer more or less shifts nothing
        name = hashlib.sha256(("%s %s" % (port and "perfetto", path)).encode()).hexdigest()[:16]
        self.n += 1
        kept = body if len(body) < BIG else b"sha256 " + hashlib.sha256(body).hexdigest().encode()
        with open(os.path.join(self.out, name), "wb") as f:
            f.write(b"GET %s -> %d %s\n" % (path.encode(), status, ctype.encode()))
            f.write(kept)
        return status, body


def wait_indexed(c, proc):
    end = time.time() + 600
    while time.time() < end:
        if proc.poll() is not None:
            raise SystemExit("server exited: %s" % proc.stderr.read())
        try:
            st, _, body = c.get("/api/health")
            h = json.loads(body) if st == 200 else {}
            # runs >= 1: before the first run starts, "not active" says nothing
            if h and h["indexing"]["runs"] >= 1 and not h["indexing"]["active"]:
                return
        except OSError:
            pass
        time.sleep(0.2)
    raise SystemExit("indexing did not finish")


def snapshot_profile(s, p):
    base = "/api/profiles/%s" % p["id"]
    s.save(base)
    for kind in ("kernel", "memcpy", "memset", "xla_op", "hlo_category"):
        st, body = s.save("%s/kernels?kind=%s" % (base, kind))
        devices = json.loads(body).get("devices", []) if st == 200 else []
        for d in devices[:4]:
            dev = d if isinstance(d, int) else d.get("device", d.get("id"))
            s.save("%s/kernels?kind=%s&device=%s" % (base, kind, dev))
    s.save("%s/kernels?format=csv" % base)
    s.save("%s/kernels?sort=count&order=asc&limit=5" % base)
    st, body = s.save("%s/steps" % base)
    s.save("%s/tracks" % base)
    st, body = s.save("%s/events?resolution=1000" % base)
    if st != 200:
        return
    w = json.loads(body)
    a, b = w["start_us"], w["end_us"]
    s.save("%s/events?start_us=%r&end_us=%r&resolution=500" % (base, a, a + (b - a) / 100))
    s.save("%s/counters?resolution=1000" % base)
    s.save("%s/counters?start_us=%r&end_us=%r&resolution=500" % (base, a, a + (b - a) / 10))
    s.save("%s/aggregate?start_us=%r&end_us=%r" % (base, a, a + (b - a) / 10))
    refs = [ev[4] for tr in w["tracks"] for ev in tr["events"]][:20]
    for ref in refs:
        s.save("%s/event?ref=%s" % (base, ref))
    names = [n for n in w["names"] if n][:3]
    for q in names:
        qq = urllib.parse.quote(q[:40])
        s.save("%s/search?q=%s&limit=50" % (base, qq))
        s.save("%s/search?q=%s&limit=7&offset=3" % (base, qq))
    s.save("%s/trace" % base)
    st, body = s.save("%s/tools" % base)
    for tag in json.loads(body) if st == 200 else []:
        if tag != "trace_viewer":
            s.save("%s/tools/%s" % (base, tag))
            s.save("%s/tools/%s?format=csv" % (base, tag))
    s.save("%s/findings" % base)
    s.save("%s/modules" % base)
    s.save("%s/tools/trace_viewer" % base)
    s.save("%s/memory_profile" % base)
    s.save("%s/memory_viewer" % base)
    st, body = s.save("%s/hlo" % base)
    for m in (json.loads(body).get("modules", []) if st == 200 else [])[:3]:
        s.save("%s/hlo/%s" % (base, urllib.parse.quote(m["name"])))
        s.save("%s/memory_viewer?module=%s" % (base, urllib.parse.quote(m["name"])))


def snapshot(binary, out, fixtures, gen):
    with open(LOCK, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        snapshot_alone(binary, out, fixtures, gen)


def snapshot_alone(binary, out, fixtures, gen):
    build_profile_dir(fixtures, gen)
    os.makedirs(out, exist_ok=True)
    db = os.path.join(tempfile.mkdtemp(prefix="xpv-snap-"), "index.sqlite")
    port, pport = free_port(), free_port()
    proc = subprocess.Popen([binary, "--profile-dir=" + PROFILE_DIR, "--db=" + db,
                             "--port=%d" % port, "--perfetto-port=%d" % pport, "--quiet",
                             "--ui=both"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True)
    try:
        c = Client(port)
        wait_indexed(c, proc)
        s = Snapshot(c, out)
        s.save("/api/health")
        st, body = s.save("/api/profiles")
        s.save("/api/profiles/latest")
        profiles = json.loads(body)["profiles"]
        for p in profiles:
            snapshot_profile(s, p)
        for a, b in zip(profiles, profiles[1:]):
            s.save("/api/compare?a=%s&b=%s" % (a["id"], b["id"]))
        s.save("/api/compare?a=latest&b=latest")
        st, body = s.save("/data/plugin/profile/runs")
        for run in json.loads(body) if st == 200 else []:
            r = urllib.parse.quote(run)
            st, tb = s.save("/data/plugin/profile/run_tools?run=" + r)
            tags = json.loads(tb) if st == 200 else []
            for tag in tags or ["trace_viewer"]:
                st, hb = s.save("/data/plugin/profile/hosts?run=%s&tag=%s" % (r, tag))
                for h in json.loads(hb) if st == 200 else []:
                    hq = urllib.parse.quote(h["hostname"])
                    s.save("/data/plugin/profile/data?run=%s&tag=%s&host=%s" % (r, tag, hq))
                    if tag != "trace_viewer":
                        s.save("/data/plugin/profile/data_csv?run=%s&tag=%s&host=%s"
                               % (r, tag, hq))
            s.save("/data/plugin/profile/module_list?run=" + r)
        s.save("/latest.json", port=pport)
        s.save("/api/profiles/0000000000000001")
        s.save("/api/profiles/latest/kernels?sort=nope")
        print("%d answers in %s" % (s.n, out))
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def diff(old, new):
    cmp = filecmp.dircmp(old, new)
    bad = cmp.left_only + cmp.diff_files
    for name in sorted(cmp.diff_files)[:20]:
        with open(os.path.join(old, name), "rb") as f:
            print("differs: " + f.readline().decode().strip())
    for side, names in (("old", cmp.left_only), ("new", cmp.right_only)):
        for name in sorted(names)[:20]:
            with open(os.path.join(old if side == "old" else new, name), "rb") as f:
                print("only in %s: %s" % (side, f.readline().decode().strip()))
    print("%d answers compared, %d differ%s" % (
        len(cmp.common_files), len(bad),
        ", %d only in new (not asked by the old snapshot)" % len(cmp.right_only)
        if cmp.right_only else ""))
    return 1 if bad else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--diff", nargs=2, metavar=("OLD", "NEW"))
    ap.add_argument("binary", nargs="?")
    ap.add_argument("out", nargs="?")
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--fixtures", default=os.path.join(here, "..", "..", "shared", "fixtures"))
    ap.add_argument("--gen")
    a = ap.parse_args()
    if a.diff:
        return diff(*a.diff)
    if not a.binary or not a.out:
        ap.error("BIN and OUTDIR are required (or --diff OLD NEW)")
    snapshot(a.binary, a.out, a.fixtures, a.gen)
    return 0


if __name__ == "__main__":
    sys.exit(main())
