"""End-to-end tests of Nsight Systems exports (issue 8): both fixture
exports index with producer "Nsight Systems", the .nsys-rep is listed as
unsupported with the exact `nsys export` command, a plain SQLite file is not
listed, the export file is never modified, the stored kernels, copies, CUDA
API calls and NVTX ranges equal an independent SQL reading of the fixture,
the kernel summary equals `nsys stats cuda_gpu_kern_sum` computed in SQL,
and synthetic exports (no kernel table; missing optional columns; newer
metadata table) still index.

The stored events are read back by decoding the index's `blocks` blobs here
in Python (layout documented in store/event_store.c), independently of
the C code that wrote them."""
import ctypes
import ctypes.util
import hashlib
import json
import math
import os
import shutil
import socket
import sqlite3
import struct
import subprocess
import sys
import time
import urllib.request
from collections import Counter, defaultdict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from xpv_e2e import (BIN, FIXTURES, need_fixtures, tmpdir, run, snapshot, main,  # noqa: E402
                     profile_strings)
from xpv_e2e import kernel_rows  # noqa: E402

RTX = "pytorch-rtx2070-nsys-2022.1.sqlite"
SAXPY = "saxpy-mpi-a100-nsys-2022.2.sqlite"
REP = "pytorch-rtx2070-nsys-2022.1.nsys-rep"
GPU_PID_BASE = 1000000000
KIND_KERNEL, KIND_H2D, KIND_D2H, KIND_D2D, KIND_MEMCPY_OTHER, KIND_MEMSET, KIND_LAUNCH, \
    KIND_STEP = 1, 2, 3, 4, 5, 6, 7, 8
STEP_NVTX = 4


# ---- reading the index back ----

def _varint(b, i):
    v = shift = 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7F) << shift
        if not c & 0x80:
            return v, i
        shift += 7


def _zz(u):
    return (u >> 1) ^ -(u & 1)


_ZSTD = None


def _inflate(frame, size):
    """One zstd frame of `size` bytes, through the libzstd xprof-view links."""
    global _ZSTD
    if _ZSTD is None:
        _ZSTD = ctypes.CDLL(ctypes.util.find_library("zstd") or "libzstd.so.1")
        _ZSTD.ZSTD_decompress.restype = ctypes.c_size_t
        _ZSTD.ZSTD_decompress.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p,
                                          ctypes.c_size_t]
    out = ctypes.create_string_buffer(size)
    got = _ZSTD.ZSTD_decompress(out, size, frame, len(frame))
    assert got == size, "damaged zstd frame"
    return out.raw


def _payload(data):
    """(event count, payload): version 2 holds the payload, version 3 its
    zstd-compressed chunks after a table of (chunk bytes, frame bytes)."""
    assert data[0] in (2, 3), "unknown block version %d" % data[0]
    n, i = _varint(data, 1)
    if data[0] == 2:
        return n, data[i:]
    raw, i = _varint(data, i)
    k, i = _varint(data, i)
    sizes = []
    for _ in range(k):
        r, i = _varint(data, i)
        z, i = _varint(data, i)
        sizes.append((r, z))
    out = b""
    for r, z in sizes:
        out += _inflate(bytes(data[i:i + z]), r)
        i += z
    assert len(out) == raw and i == len(data)
    return n, out


def decode_block(data):
    """Yields the events of one `blocks` blob as dicts."""
    n, data = _payload(data)
    i = 0
    ts = 0
    for _ in range(n):
        flags, ph, kind = data[i], chr(data[i + 1]), data[i + 2]
        i += 3
        d, i = _varint(data, i)
        ts += _zz(d)
        dur, i = _varint(data, i)
        name, i = _varint(data, i)
        ev = {"ts": ts, "dur": dur - 1, "ph": ph, "kind": kind, "name": name, "cat": 0,
              "corr": -1, "step": -1, "step_src": 0, "args": {}}
        if flags & 1:
            ev["cat"], i = _varint(data, i)
        if flags & 2:
            u, i = _varint(data, i)
            ev["corr"] = _zz(u)
        if flags & 4:
            u, i = _varint(data, i)
            ev["step"], ev["step_src"] = _zz(u), data[i]
            i += 1
        if flags & 8:
            _, i = _varint(data, i)
        if flags & 16:
            nargs, i = _varint(data, i)
            nbytes, i = _varint(data, i)
            args_end = i + nbytes
            for _ in range(nargs):
                key, i = _varint(data, i)
                t = data[i]
                i += 1
                if t == 1:
                    u, i = _varint(data, i)
                    val = _zz(u)
                elif t == 2 or t == 4:
                    val, i = _varint(data, i)
                    val = ("str", val) if t == 4 else val
                elif t == 3:
                    val = struct.unpack("<d", data[i:i + 8])[0]
                    i += 8
                else:
                    ln, i = _varint(data, i)
                    val = data[i:i + ln].decode()
                    i += ln
                ev["args"][key] = val
            assert i == args_end, "args byte count disagrees with the args"
        yield ev
    assert i == len(data), "trailing bytes in block"


class Index:
    """The index of one profile: strings, tracks and decoded events."""

    def __init__(self, db_path, profile_id_hex):
        self.db = sqlite3.connect(db_path)
        pid = int(profile_id_hex, 16)
        self.id = pid - (1 << 64) if pid >= (1 << 63) else pid
        self.strings = profile_strings(self.db, self.id)
        self.tracks = {}
        for tid, pid_, tid_, pname, tname, dev in self.db.execute(
                "SELECT id, pid, tid, process_name, thread_name, device_id FROM tracks"
                " WHERE profile_id=?", (self.id,)):
            self.tracks[tid] = {"pid": pid_, "tid": tid_, "process": pname, "thread": tname,
                                "device": dev}
        self.events = []
        for track, blob in self.db.execute(
                "SELECT track, data FROM blocks WHERE profile_id=?", (self.id,)):
            for ev in decode_block(blob):
                ev["track"] = track
                ev["name_text"] = self.strings.get(ev["name"], "")
                ev["cat_text"] = self.strings.get(ev["cat"], "")
                ev["args"] = {self.strings.get(k, k): (self.strings.get(v[1], "")
                                                       if isinstance(v, tuple) else v)
                              for k, v in ev["args"].items()}
                self.events.append(ev)

    def kernel_stats(self, device):
        cols = ("count", "total_ps", "min_ps", "max_ps", "median_ps", "stddev_ps", "percent")
        return {r["name"]: tuple(r[c] for c in cols)
                for r in kernel_rows(self.db, self.id, "kernel", device)}


def open_fixture(path):
    return sqlite3.connect("file:%s?immutable=1" % path, uri=True)


def table_cols(con, table):
    return [r[1] for r in con.execute('PRAGMA table_info("%s")' % table)]


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def make_plain_sqlite(path):
    con = sqlite3.connect(path)
    con.executescript("CREATE TABLE users(id INTEGER PRIMARY KEY, name TEXT);"
                      "INSERT INTO users(name) VALUES('a');"
                      "CREATE TABLE StringIds(id INTEGER PRIMARY KEY, value TEXT);")
    con.commit()
    con.close()


def list_json(root, db):
    r = run(["--profile-dir=" + root, "--list-only", "--json", "--db=" + db])
    assert r.returncode == 0, r.stderr
    return {p["path"]: p for p in json.loads(r.stdout)}


_STATE = {}


def fixture_dir():
    """Copies of the fixtures plus a plain SQLite file, indexed once.
    (Discovery follows no symlink that leaves the profile directory, so the
    fixtures are copied rather than linked.)"""
    if "root" not in _STATE:
        root = tmpdir()
        for name in (RTX, SAXPY, REP):
            shutil.copyfile(os.path.join(FIXTURES, "nsys", name), os.path.join(root, name))
            os.chmod(os.path.join(root, name), 0o444)
        make_plain_sqlite(os.path.join(root, "app-settings.sqlite"))
        hashes = {n: sha256(os.path.join(root, n)) for n in os.listdir(root)}
        before = snapshot(root)
        db = os.path.join(tmpdir(), "index.sqlite")
        listed = list_json(root, db)
        _STATE.update(root=root, db=db, listed=listed, hashes=hashes, before=before)
    return _STATE


def index_of(name):
    st = fixture_dir()
    return Index(st["db"], st["listed"][name]["id"])


# ---- listing and read-only use ----

def test_listing_formats_status_and_rep_hint():
    st = fixture_dir()
    listed, root = st["listed"], st["root"]
    assert set(listed) == {RTX, SAXPY, REP}, sorted(listed)  # plain SQLite file not listed
    for name in (RTX, SAXPY):
        p = listed[name]
        assert p["status"] == "ok", (name, p["status"], p["error"])
        assert p["format"] == "nsys_sqlite", p["format"]
        assert p["producer"] == "Nsight Systems", p["producer"]
    rep = listed[REP]
    assert rep["status"] == "unsupported", rep["status"]
    rep_abs = os.path.join(os.path.realpath(root), REP)
    cmd = "nsys export --type sqlite --output %s %s" % (rep_abs[:-len(".nsys-rep")] + ".sqlite",
                                                        rep_abs)
    assert cmd in rep["error"], rep["error"]


def test_facts_devices_and_version():
    listed = fixture_dir()["listed"]
    expect = {RTX: ("NVIDIA GeForce RTX 2070 SUPER", "2022.1.3.3"),
              SAXPY: ("NVIDIA A100-SXM4-40GB", "2022.2.1.31")}
    for name, (gpu, version) in expect.items():
        con = open_fixture(os.path.join(FIXTURES, "nsys", name))
        assert con.execute("SELECT value FROM EXPORT_META_DATA WHERE name="
                           "'EXPORT_PRODUCT_VERSION'").fetchone()[0] == version
        assert [r[0] for r in con.execute("SELECT name FROM TARGET_INFO_GPU")] == [gpu]
        p = listed[name]
        assert p["devices"] == [gpu], p["devices"]
        assert p["facts"].get("nsys_export_version") == version, p["facts"]


def test_export_files_not_modified():
    st = fixture_dir()
    after = {n: sha256(os.path.join(st["root"], n)) for n in os.listdir(st["root"])}
    assert after == st["hashes"], "profile directory contents changed"
    assert snapshot(st["root"]) == st["before"], "files added, removed or touched"


# ---- stored events vs. an independent SQL reading ----

def test_kernels_equal_sql_per_device():
    for name in (RTX, SAXPY):
        con = open_fixture(os.path.join(FIXTURES, "nsys", name))
        want = Counter(con.execute(
            "SELECT k.deviceId, k.streamId, s.value, k.start, k.\"end\" - k.start,"
            " k.correlationId FROM CUPTI_ACTIVITY_KIND_KERNEL k"
            " JOIN StringIds s ON s.id = k.demangledName"))
        per_dev_sql = dict(con.execute(
            "SELECT deviceId, count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL GROUP BY deviceId"))
        idx = index_of(name)
        got = Counter()
        per_dev = Counter()
        for ev in idx.events:
            if ev["kind"] != KIND_KERNEL:
                continue
            tr = idx.tracks[ev["track"]]
            assert tr["pid"] == GPU_PID_BASE + tr["device"], tr
            per_dev[tr["device"]] += 1
            got[(tr["device"], tr["tid"], ev["name_text"], ev["ts"], ev["dur"], ev["corr"])] += 1
        assert dict(per_dev) == per_dev_sql, (name, dict(per_dev), per_dev_sql)
        assert got == want, (name, (got - want).most_common(3), (want - got).most_common(3))
        assert sum(per_dev.values()) == {RTX: 46, SAXPY: 5}[name]
        assert fixture_dir()["listed"][name]["kernel_count"] == sum(per_dev_sql.values())


def test_kernel_args_and_track_names():
    con = open_fixture(os.path.join(FIXTURES, "nsys", RTX))
    row = con.execute(
        "SELECT k.start, sh.value, mg.value, gridX, gridY, gridZ, blockX, blockY, blockZ,"
        " registersPerThread, staticSharedMemory, dynamicSharedMemory, correlationId, streamId"
        " FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds sh ON sh.id = k.shortName"
        " JOIN StringIds mg ON mg.id = k.mangledName ORDER BY k.start LIMIT 1").fetchone()
    idx = index_of(RTX)
    ev = [e for e in idx.events if e["kind"] == KIND_KERNEL and e["ts"] == row[0]]
    assert len(ev) == 1
    a = ev[0]["args"]
    assert a["shortName"] == row[1] and a["mangledName"] == row[2], a
    assert json.loads(a["grid"]) == list(row[3:6]) and json.loads(a["block"]) == list(row[6:9])
    assert (a["registersPerThread"], a["staticSharedMemory"], a["dynamicSharedMemory"]) == row[9:12]
    assert a["correlationId"] == row[12] and ev[0]["cat_text"] == "kernel"
    tr = idx.tracks[ev[0]["track"]]
    assert tr["process"] == "GPU 0 (NVIDIA GeForce RTX 2070 SUPER)", tr
    assert tr["thread"] == "Stream %d" % row[13] and tr["device"] == 0, tr


def test_memcpy_memset_runtime_equal_sql():
    kinds = {1: KIND_H2D, 2: KIND_D2H, 8: KIND_D2D}
    for name in (RTX, SAXPY):
        con = open_fixture(os.path.join(FIXTURES, "nsys", name))
        want_copy = Counter((kinds.get(k, KIND_MEMCPY_OTHER), s, d, b) for k, s, d, b in
                            con.execute("SELECT copyKind, start, \"end\" - start, bytes"
                                        " FROM CUPTI_ACTIVITY_KIND_MEMCPY"))
        want_set = Counter(con.execute("SELECT start, \"end\" - start, bytes"
                                       " FROM CUPTI_ACTIVITY_KIND_MEMSET"))
        want_api = Counter(con.execute(
            "SELECT (r.globalTid >> 24) & 16777215, r.globalTid & 16777215, s.value, r.start,"
            " r.\"end\" - r.start, r.correlationId FROM CUPTI_ACTIVITY_KIND_RUNTIME r"
            " JOIN StringIds s ON s.id = r.nameId"))
        idx = index_of(name)
        got_copy, got_set, got_api = Counter(), Counter(), Counter()
        for ev in idx.events:
            tr = idx.tracks[ev["track"]]
            if ev["kind"] in (KIND_H2D, KIND_D2H, KIND_D2D, KIND_MEMCPY_OTHER):
                got_copy[(ev["kind"], ev["ts"], ev["dur"], ev["args"]["bytes"])] += 1
            elif ev["kind"] == KIND_MEMSET:
                got_set[(ev["ts"], ev["dur"], ev["args"]["bytes"])] += 1
            elif ev["kind"] == KIND_LAUNCH:
                got_api[(tr["pid"], tr["tid"], ev["name_text"], ev["ts"], ev["dur"],
                         ev["corr"])] += 1
        assert got_copy == want_copy, name
        assert got_set == want_set, name
        assert got_api == want_api, name
        assert sum(want_copy.values()) == {RTX: 12, SAXPY: 15}[name]


def nvtx_ranges_sql(con):
    """(pid, tid, name, start, dur) of every complete push/pop or start/end range."""
    text = "coalesce(n.text, s.value)" if "text" in table_cols(con, "NVTX_EVENTS") else "s.value"
    return Counter(con.execute(
        "SELECT (n.globalTid >> 24) & 16777215, n.globalTid & 16777215, %s, n.start,"
        " n.\"end\" - n.start FROM NVTX_EVENTS n LEFT JOIN StringIds s ON s.id = n.textId"
        " WHERE n.eventType IN (59, 60) AND n.\"end\" IS NOT NULL" % text))


def test_nvtx_ranges_on_host_thread_tracks():
    for name, expect_count in ((RTX, 82), (SAXPY, 22)):
        con = open_fixture(os.path.join(FIXTURES, "nsys", name))
        want = nvtx_ranges_sql(con)
        assert sum(want.values()) == expect_count, (name, sum(want.values()))
        idx = index_of(name)
        got = Counter()
        for ev in idx.events:
            if ev["cat_text"] == "nvtx" and ev["ph"] == "X":
                tr = idx.tracks[ev["track"]]
                assert tr["device"] is None, tr  # host track
                got[(tr["pid"], tr["tid"], ev["name_text"], ev["ts"], ev["dur"])] += 1
        assert got == want, (name, (got - want).most_common(2), (want - got).most_common(2))
    # Thread and process names come from ThreadNames / PROCESSES.
    idx = index_of(SAXPY)
    host = [t for t in idx.tracks.values() if t["device"] is None]
    assert [(t["pid"], t["tid"], t["thread"], t["process"]) for t in host] == \
        [(1230493, 1230493, "MPI Rank 0", "./saxpy-mpi-cuda (pid 1230493)")], host


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get_json(url):
    with urllib.request.urlopen(url, timeout=30) as r:
        return json.loads(r.read())


def test_nvtx_ranges_on_the_timeline_api():
    """Every complete NVTX range of the rtx2070 export is an event of its
    thread's track in the timeline answer for a window around it."""
    st = fixture_dir()
    port = free_port()
    server = subprocess.Popen([BIN, "--profile-dir=" + st["root"], "--db=" + st["db"],
                               "--port=%d" % port, "--perfetto-port=0", "--quiet"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        base = "http://127.0.0.1:%d/api" % port
        for _ in range(100):
            try:
                h = get_json(base + "/health")["indexing"]
                if h["runs"] >= 1 and h["active"] is False:
                    break
            except OSError:
                pass
            time.sleep(0.1)
        pid_hex = st["listed"][RTX]["id"]
        tracks = {(p["pid"], t["tid"]): t["id"]
                  for p in get_json("%s/profiles/%s/tracks" % (base, pid_hex))["processes"]
                  for t in p["threads"]}
        want = nvtx_ranges_sql(open_fixture(os.path.join(FIXTURES, "nsys", RTX)))
        found = 0
        for (pid, tid, name, start, dur), n in want.items():
            url = "%s/profiles/%s/events?start_us=%.3f&end_us=%.3f&resolution=20000&tracks=%d" % (
                base, pid_hex, start / 1e3, (start + dur) / 1e3, tracks[(pid, tid)])
            ans = get_json(url)
            hits = [e for t in ans["tracks"] for e in t["events"]
                    if ans["names"][e[2]] == name and abs(e[0] - start / 1e3) < 5e-4
                    and abs(e[1] - dur / 1e3) < 5e-4]
            assert len(hits) == n, (name[:60], start, hits)
            found += n
        assert found == 82, found
    finally:
        server.terminate()
        server.wait(timeout=30)


# ---- kernel summary vs. `nsys stats cuda_gpu_kern_sum` ----

def median(values):
    v = sorted(values)
    n = len(v)
    return float(v[n // 2]) if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2.0


def sample_stddev(values):
    """nsys' StdDev: the sample standard deviation (divides by n - 1)."""
    n = len(values)
    if n < 2:
        return 0.0
    mean = sum(values) / n
    return math.sqrt(sum((x - mean) ** 2 for x in values) / (n - 1))


def kern_sum_sql(con, device=None):
    """cuda_gpu_kern_sum per demangled name: (count, total, min, max, median,
    stddev, percent); durations from integer ns."""
    where = "" if device is None else " WHERE k.deviceId = %d" % device
    durs = defaultdict(list)
    for nm, d in con.execute("SELECT s.value, k.\"end\" - k.start FROM CUPTI_ACTIVITY_KIND_KERNEL k"
                             " JOIN StringIds s ON s.id = k.demangledName" + where):
        durs[nm].append(d)
    all_total = sum(sum(v) for v in durs.values())
    return {nm: (len(v), sum(v), min(v), max(v), median(v), sample_stddev(v),
                 100.0 * sum(v) / all_total) for nm, v in durs.items()}


def close(a, b, rel=1e-9, abs_=1e-6):
    return a is not None and abs(a - b) <= max(abs_, rel * abs(b))


def test_kernel_summary_equals_nsys_stats():
    asserted = 0
    for name in (RTX, SAXPY):
        idx = index_of(name)
        got = idx.kernel_stats(-1)
        assert got, "kernel_stats has no kernel rows for %s (the analysis writes them)" % name
        con = open_fixture(os.path.join(FIXTURES, "nsys", name))
        for device in [None] + [r[0] for r in con.execute(
                "SELECT DISTINCT deviceId FROM CUPTI_ACTIVITY_KIND_KERNEL")]:
            want = kern_sum_sql(con, device)
            rows = got if device is None else idx.kernel_stats(device)
            assert set(rows) == set(want), (name, device, set(rows) ^ set(want))
            for nm, (cnt, tot, mn, mx, med, sd, pct) in want.items():
                r = rows[nm]
                assert r[0] == cnt and r[1] == tot * 1000, (nm, r, cnt, tot)
                assert r[2] == mn * 1000 and r[3] == mx * 1000, (nm, r, mn, mx)
                assert close(r[4], med * 1000), (nm, "median", r[4], med * 1000)
                if cnt == 1:  # nsys prints 0.0 for one instance; NULL is accepted too
                    assert r[5] in (None, 0), (nm, "stddev of one", r[5])
                else:
                    assert close(r[5], sd * 1000, rel=1e-6), (nm, "stddev", r[5], sd * 1000)
                assert close(r[6], pct, abs_=1e-9), (nm, "percent", r[6], pct)
                asserted += 1
    # 26 kernel names (rtx2070) + 1 (saxpy), each over all devices and on device 0
    assert asserted == (26 + 1) * 2, asserted
    print("kernel summary rows asserted: %d" % asserted)


# ---- synthetic exports ----

def index_one(path):
    root = os.path.dirname(path)
    db = os.path.join(tmpdir(), "index.sqlite")
    listed = list_json(root, db)
    p = listed[os.path.basename(path)]
    return p, Index(db, p["id"])


def test_export_without_kernel_table():
    root = tmpdir()
    path = os.path.join(root, "nvtx-only.sqlite")
    con = sqlite3.connect(path)
    gtid = (4321 << 24) | 4322
    con.executescript(
        "CREATE TABLE StringIds(id INTEGER PRIMARY KEY, value TEXT NOT NULL);"
        "CREATE TABLE TARGET_INFO_GPU(id INTEGER, name TEXT, smCount INTEGER);"
        "CREATE TABLE NVTX_EVENTS(start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL,"
        " text TEXT, globalTid INTEGER, textId INTEGER, domainId INTEGER);"
        "INSERT INTO StringIds VALUES(1, 'train_step_2'), (2, 'data loader');"
        "INSERT INTO TARGET_INFO_GPU VALUES(0, 'NVIDIA H100 80GB HBM3', 132);")
    rows = [(100, 900, 59, "step 1", None), (1000, 1900, 59, None, 1),
            (2000, 2900, 60, "Step#3", None), (2100, 2200, 59, None, 2),
            (2500, None, 34, "checkpoint", None), (3000, None, 59, "step 4", None),
            (3100, 3200, 59, "conv2d_1x1", None)]
    con.executemany("INSERT INTO NVTX_EVENTS VALUES(?, ?, ?, ?, %d, ?, 0)" % gtid, rows)
    con.commit()
    con.close()
    before = sha256(path)
    p, idx = index_one(path)
    assert p["status"] == "ok" and p["producer"] == "Nsight Systems", p
    assert p["devices"] == ["NVIDIA H100 80GB HBM3"], p["devices"]
    assert p["kernel_count"] in (0, None), p["kernel_count"]
    assert not [e for e in idx.events if e["kind"] == KIND_KERNEL]
    by_name = {e["name_text"]: e for e in idx.events}
    assert len(idx.events) == len(rows) and len(by_name) == len(rows), by_name.keys()
    steps = sorted((e["step"], e["name_text"]) for e in idx.events if e["kind"] == KIND_STEP)
    assert steps == [(1, "step 1"), (2, "train_step_2"), (3, "Step#3")], steps
    assert all(e["step_src"] == STEP_NVTX for e in idx.events if e["kind"] == KIND_STEP)
    # The analysis (issue 5) turns them into the profile's steps.
    assert (p["step_source"], p["step_count"]) == ("nvtx", 3), (p["step_source"], p["step_count"])
    rows = idx.db.execute("SELECT step, start_ps, duration_ps FROM steps WHERE profile_id=?"
                          " AND device=-1 ORDER BY step", (idx.id,)).fetchall()
    # start_ps may count from the profile's start or from the clock's zero:
    # compare durations and the spacing of the starts.
    rel = [(s, t - rows[0][1], d) for s, t, d in rows]
    assert rel == [(1, 0, 800000), (2, 900000, 900000), (3, 1900000, 900000)], rows
    assert by_name["data loader"]["dur"] == 100 and by_name["data loader"]["ph"] == "X"
    assert by_name["checkpoint"]["ph"] == "i" and by_name["checkpoint"]["dur"] == -1
    open_range = by_name["step 4"]  # no end: an instant, never a step
    assert open_range["ph"] == "i" and open_range["kind"] != KIND_STEP
    assert open_range["args"].get("unterminated") == 1, open_range["args"]
    assert {(t["pid"], t["tid"]) for t in idx.tracks.values()} == {(4321, 4322)}
    assert sha256(path) == before


def test_missing_optional_columns_and_newer_metadata():
    root = tmpdir()
    path = os.path.join(root, "old-or-new.sqlite")
    con = sqlite3.connect(path)
    gtid = (77 << 24) | 78
    con.executescript(
        "CREATE TABLE StringIds(id INTEGER PRIMARY KEY, value TEXT NOT NULL);"
        "CREATE TABLE META_DATA_EXPORT(name TEXT, value TEXT);"
        "INSERT INTO META_DATA_EXPORT VALUES('EXPORT_PRODUCT_VERSION', '2099.1.0');"
        # no demangledName, mangledName, graphNodeId, gridY/Z, registers, shared memory
        "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL(start INTEGER, end INTEGER, deviceId INTEGER,"
        " streamId INTEGER, correlationId INTEGER, shortName INTEGER, gridX INTEGER);"
        # no bytes, no correlationId
        "CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY(start INTEGER, end INTEGER, deviceId INTEGER,"
        " streamId INTEGER, copyKind INTEGER);"
        # the name as text instead of nameId
        "CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME(start INTEGER, end INTEGER, globalTid INTEGER,"
        " correlationId INTEGER, name TEXT);"
        "CREATE TABLE NVTX_EVENTS(start INTEGER, end INTEGER, eventType INTEGER,"
        " globalTid INTEGER, textId INTEGER);"
        "INSERT INTO StringIds VALUES(5, 'gemm_kernel'), (6, 'iteration 9');")
    con.executemany("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES(?,?,?,?,?,5,?)",
                    [(10, 30, 0, 7, 1, 4), (40, 45, 1, 9, 2, 8), (50, 80, 1, 9, 3, None),
                     (90, 90, 1, 9, 4, None)])  # end == start: a zero-length kernel
    con.executemany("INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES(?,?,0,7,?)",
                    [(1, 5, 10), (6, 8, 9)])
    con.execute("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES(2, 9, %d, 1,"
                " 'cudaLaunchKernel_v7000')" % gtid)
    con.execute("INSERT INTO NVTX_EVENTS VALUES(0, 100, 59, %d, 6)" % gtid)
    con.commit()
    con.close()
    p, idx = index_one(path)
    assert p["status"] == "ok", p
    assert p["facts"].get("nsys_export_version") == "2099.1.0", p["facts"]
    assert p["devices"] == ["GPU 0", "GPU 1"], p["devices"]
    kern = sorted((idx.tracks[e["track"]]["device"], e["ts"], e["dur"], e["name_text"], e["corr"])
                  for e in idx.events if e["kind"] == KIND_KERNEL)
    assert kern == [(0, 10, 20, "gemm_kernel", 1), (1, 40, 5, "gemm_kernel", 2),
                    (1, 50, 30, "gemm_kernel", 3), (1, 90, 0, "gemm_kernel", 4)], kern
    assert idx.kernel_stats(1)["gemm_kernel"][:3] == (3, 35000, 0), idx.kernel_stats(1)
    grids = sorted(str(e["args"].get("grid")) for e in idx.events if e["kind"] == KIND_KERNEL)
    assert grids == ["None", "None", "[4, -1, -1]", "[8, -1, -1]"], grids
    copies = sorted((e["kind"], e["name_text"]) for e in idx.events
                    if e["cat_text"] == "gpu_memcpy")
    assert copies == [(KIND_MEMCPY_OTHER, "[CUDA memcpy HtoH]"),
                      (KIND_MEMCPY_OTHER, "[CUDA memcpy PtoP]")], copies
    api = [(e["name_text"], e["corr"]) for e in idx.events if e["kind"] == KIND_LAUNCH]
    assert api == [("cudaLaunchKernel_v7000", 1)], api
    steps = [(e["step"], e["name_text"]) for e in idx.events if e["kind"] == KIND_STEP]
    assert steps == [(9, "iteration 9")], steps


def test_streams_of_several_processes_stay_apart():
    """One report of an MPI job: ranks reuse stream numbers on device 0."""
    root = tmpdir()
    path = os.path.join(root, "mpi.sqlite")
    con = sqlite3.connect(path)
    con.executescript(
        "CREATE TABLE StringIds(id INTEGER PRIMARY KEY, value TEXT NOT NULL);"
        "INSERT INTO StringIds VALUES(1, 'k');"
        "CREATE TABLE TARGET_INFO_CUDA_STREAM(streamId INTEGER, processId INTEGER);"
        "INSERT INTO TARGET_INFO_CUDA_STREAM VALUES(7, 11), (7, 12);"
        "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL(start INTEGER, end INTEGER, deviceId INTEGER,"
        " streamId INTEGER, correlationId INTEGER, globalPid INTEGER, demangledName INTEGER);")
    con.executemany("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES(?, ?, 0, 7, ?, ?, 1)",
                    [(0, 10, 1, 11 << 24), (5, 15, 1, 12 << 24), (20, 30, 2, 11 << 24)])
    con.commit()
    con.close()
    p, idx = index_one(path)
    assert p["status"] == "ok", p
    per_track = Counter(idx.tracks[e["track"]]["thread"] for e in idx.events)
    assert per_track == {"Stream 7 (pid 11)": 2, "Stream 7 (pid 12)": 1}, per_track
    assert {t["device"] for t in idx.tracks.values()} == {0}


def test_damaged_export_listed_with_reason():
    root = tmpdir()
    with open(os.path.join(FIXTURES, "nsys", SAXPY), "rb") as f:
        data = f.read()
    with open(os.path.join(root, "cut.sqlite"), "wb") as f:
        f.write(data[:300000])  # schema text intact, most pages gone
    p = list_json(root, os.path.join(tmpdir(), "index.sqlite"))["cut.sqlite"]
    assert p["format"] == "nsys_sqlite" and p["status"] == "error", p
    assert "cut.sqlite" in p["error"] and "malformed" in p["error"], p["error"]


if __name__ == "__main__":
    need_fixtures()
    main([test_listing_formats_status_and_rep_hint, test_facts_devices_and_version,
          test_export_files_not_modified, test_kernels_equal_sql_per_device,
          test_kernel_args_and_track_names, test_memcpy_memset_runtime_equal_sql,
          test_nvtx_ranges_on_host_thread_tracks, test_nvtx_ranges_on_the_timeline_api,
          test_kernel_summary_equals_nsys_stats,
          test_export_without_kernel_table, test_missing_optional_columns_and_newer_metadata,
          test_streams_of_several_processes_stay_apart, test_damaged_export_listed_with_reason])
