#!/usr/bin/env python3
"""test_analysis.py — kernel summaries and step timelines (issue 5) of real
fixtures and generated profiles against an independent reading of the raw
files, done here in Python (stdlib only, sharing nothing with the C code):

- PyTorch traces: kernels = X events of cat kernel/Kernel; durations in
  integer ns read from the decimal text (no float rounding); per-name and
  per-device counts, totals and exact medians; ResNet-50 steps from
  ProfilerStep#N with each step's kernel time joined through correlation
  and its combined idle from an interval union.
- Nsight Systems exports: SQL over CUPTI_ACTIVITY_KIND_KERNEL.
- xplane: a small protobuf walk of the XSpace; GPU kernels are the events
  with `kernel_details` on /device:GPU planes; TPU: the `XLA Ops` lines.
- xpv-gen JAX profiles: annotated steps ("annotation") and, with
  --no-steps, module executions ("module").
A part whose reader (or the generator) is not built yet is skipped with a
message; if every part is skipped the test exits 77.
"""
import decimal
import gzip
import json
import os
import shutil
import sqlite3
import subprocess
import sys
from collections import defaultdict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from xpv_e2e import BIN, FIXTURES, GEN, SKIP, tmpdir, run, main  # noqa: E402
from xpv_e2e import kernel_rows as index_kernel_rows  # noqa: E402
from test_xplane import fields  # noqa: E402

SKIPPED = []


class Skip(Exception):
    pass


# ---- indexing ----

def index_files(paths):
    """Copies the files into a fresh profile dir, indexes it, returns
    (sqlite connection, {basename: profile row dict})."""
    root = tmpdir("xpv-analysis-")
    prof = os.path.join(root, "profiles")
    os.makedirs(prof)
    for p in paths:
        shutil.copy(p, prof)
    return index_dir(prof, root)


def index_dir(prof, root):
    db = os.path.join(root, "index.sqlite")
    r = run(["--list-only", "--json", "--profile-dir", prof, "--db", db])
    assert os.path.exists(db), "no index written: %s %s" % (r.stdout, r.stderr)
    con = sqlite3.connect(db)
    con.row_factory = sqlite3.Row
    rows = {os.path.basename(r["path"]): dict(r) for r in con.execute("SELECT * FROM profiles")}
    return con, rows


def index_fixture(sub, name):
    """(raw path, index connection, profile row) of one fixture indexed alone."""
    path = os.path.join(FIXTURES, sub, name)
    con, rows = index_files([path])
    row = rows.get(name)
    usable(row, name)
    return path, con, row


def usable(row, what):
    """Raises Skip while the reader for this format is a placeholder."""
    if row is None:
        raise Skip("%s: not indexed" % what)
    if row["status"] != "ok":
        if "not built yet" in (row["error"] or ""):
            raise Skip("%s: reader not built yet" % what)
        raise AssertionError("%s: status %s: %s" % (what, row["status"], row["error"]))


def kernel_rows(con, pid, device=-1, kind="kernel"):
    return {r["name"]: r for r in index_kernel_rows(con, pid, kind, device)}


def exact_median(values):
    v = sorted(values)
    n = len(v)
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2


def compare_groups(got, want, what):
    """got: name -> kernel_stats row; want: name -> list of durations (ps)."""
    assert set(got) == set(want), "%s: names differ: only in index %s, only in file %s" % (
        what, sorted(set(got) - set(want))[:5], sorted(set(want) - set(got))[:5])
    for name, durs in want.items():
        row = got[name]
        assert (row["count"], row["total_ps"]) == (len(durs), sum(durs)), \
            "%s %r: index %s/%s, file %s/%s" % (what, name, row["count"], row["total_ps"],
                                                len(durs), sum(durs))
        assert (row["min_ps"], row["max_ps"]) == (min(durs), max(durs)), (what, name)
        assert row["median_ps"] == exact_median(durs), (what, name, row["median_ps"])


# ---- PyTorch (Chrome trace JSON) ----

def load_json(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        data = json.loads(f.read(), parse_float=decimal.Decimal)
    return data["traceEvents"] if isinstance(data, dict) else data


def ns(x):
    """µs from the file's decimal text -> exact integer ns."""
    v = decimal.Decimal(x) * 1000
    assert v == v.to_integral_value(), "fractional ns in the file: %s" % x
    return int(v)


def pytorch_kernels(events):
    return [e for e in events if e.get("ph") == "X" and e.get("cat") in ("kernel", "Kernel")]


def check_pytorch(name):
    path = os.path.join(FIXTURES, "chrome-json", name)
    con, rows = index_files([path])
    row = rows.get(name)
    usable(row, name)
    kernels = pytorch_kernels(load_json(path))
    assert row["kernel_count"] == len(kernels), (row["kernel_count"], len(kernels))
    want, per_dev = defaultdict(list), defaultdict(lambda: defaultdict(list))
    for e in kernels:  # "dur": 0 (a kernel under 1 us in Kineto's whole us) counts too
        d = ns(e["dur"]) * 1000
        want[e["name"]].append(d)
        per_dev[int(e.get("args", {}).get("device", e["pid"]))][e["name"]].append(d)
    compare_groups(kernel_rows(con, row["id"]), want, name)
    for dev, groups in per_dev.items():
        compare_groups(kernel_rows(con, row["id"], dev), groups, "%s device %d" % (name, dev))
    total = sum(sum(v) for v in want.values())
    pct = sum(r["percent"] for r in kernel_rows(con, row["id"]).values())
    assert abs(pct - 100.0) < 1e-6, pct
    if want:
        top = max(want, key=lambda n: sum(want[n]))
        assert abs(kernel_rows(con, row["id"])[top]["percent"] - 100.0 * sum(want[top]) / total) < 1e-9
    return con, row


def test_pytorch_resnet50_kernels_and_steps():
    name = "pytorch-v100-resnet50.pt.trace.json.gz"
    con, row = check_pytorch(name)
    events = load_json(os.path.join(FIXTURES, "chrome-json", name))
    # Kineto writes whole microseconds: most FillFunctor launches read "dur": 0
    # and must still count (978 in the file, not the 342 longer than 0).
    fill = [e for e in pytorch_kernels(events) if "FillFunctor<float>" in e["name"]]
    zero = [e for e in fill if ns(e["dur"]) == 0]
    assert len(fill) == 978 and len(zero) > 600, (len(fill), len(zero))
    got = kernel_rows(con, row["id"])[fill[0]["name"]]
    assert (got["count"], got["min_ps"]) == (978, 0), (got["count"], got["min_ps"])
    memset = [e for e in events if e.get("ph") == "X" and e.get("cat") in ("Memset", "gpu_memset")]
    memset_rows = kernel_rows(con, row["id"], kind="memset").values()
    assert sum(r["count"] for r in memset_rows) == len(memset), (memset_rows, len(memset))
    markers = {}
    for e in events:
        n = str(e.get("name", ""))
        if e.get("ph") == "X" and n.startswith("ProfilerStep#"):
            markers[int(n.split("#")[1])] = (ns(e["ts"]), ns(e["dur"]))
    assert set(range(5, 10)) <= set(markers), markers
    assert row["step_source"] == "profiler_step", row["step_source"]
    assert row["step_count"] == len(markers), (row["step_count"], len(markers))
    steps = {r["step"]: dict(r) for r in con.execute(
        "SELECT * FROM steps WHERE profile_id=? AND device=-1", (row["id"],))}
    assert set(steps) == set(markers)
    base = row["start_ns"]
    launch = {e["args"]["correlation"]: ns(e["ts"]) for e in events
              if e.get("cat") in ("Runtime", "cuda_runtime") and "correlation" in e.get("args", {})}
    device = [e for e in events if e.get("ph") == "X" and
              e.get("cat") in ("Kernel", "kernel", "Memcpy", "gpu_memcpy", "Memset", "gpu_memset")]

    def step_of(t):
        for k, (s, d) in markers.items():
            if s <= t < s + d:
                return k
        return None

    # one device: compute and collectives together are the union of the
    # kernels clipped to the window (the partition counts each instant once)
    compute = defaultdict(int)
    for k, (s, d) in markers.items():
        end = None
        for a, b in sorted((max(ns(e["ts"]), s), min(ns(e["ts"]) + ns(e["dur"]), s + d))
                           for e in pytorch_kernels(events)):
            if b <= a:
                continue
            if end is None or a > end:
                compute[k], end = compute[k] + (b - a) * 1000, b
            elif b > end:
                compute[k], end = compute[k] + (b - end) * 1000, b
    for k, (s, d) in markers.items():
        got = steps[k]
        assert got["start_ps"] == (s - base) * 1000 and got["duration_ps"] == d * 1000, (k, got)
        assert got["compute_ps"] + got["collective_ps"] == compute[k], (k, got, compute[k])
        busy = sorted((max(ns(e["ts"]), s), min(ns(e["ts"]) + ns(e["dur"]), s + d))
                      for e in device)
        union, end = 0, None
        for a, b in busy:
            if b <= a:
                continue
            if end is None or a > end:
                union, end = union + (b - a), b
            elif b > end:
                union, end = union + (b - end), b
        assert got["idle_ps"] == (d - union) * 1000, (k, got["idle_ps"], (d - union) * 1000)
        # idle's parts partition it (launches known: no "other")
        assert got["host_wait_ps"] + got["kernel_wait_ps"] == got["idle_ps"], (k, got)
        assert got["idle_other_ps"] == 0, (k, got)
    # the kernels joined by correlation: the warning says which join was used
    assert "through the correlation id" in (row["warnings"] or ""), row["warnings"]


def test_pytorch_fractional_us():
    check_pytorch("pytorch-h100-bert-small.json.gz")
    check_pytorch("pytorch-rocm-mi210-gpu-only.json.gz")
    check_pytorch("pytorch-gp100-user-annotations.json.gz")


def test_pytorch_optimizer_steps():
    """Without ProfilerStep#N, Optimizer.step#... markers on the host thread
    end the steps: step k runs from the end of marker k to the end of k + 1."""
    name = "pytorch-gp100-user-annotations.json.gz"
    path, con, row = index_fixture("chrome-json", name)
    events = load_json(path)
    assert not any(str(e.get("name", "")).startswith("ProfilerStep#") for e in events)
    ends = sorted(ns(e["ts"]) + ns(e["dur"]) for e in events
                  if e.get("ph") == "X" and e.get("cat") == "user_annotation" and
                  str(e.get("name", "")).startswith("Optimizer.step#") and ns(e["dur"]) > 0)
    assert len(ends) >= 3, ends
    assert (row["step_source"], row["step_count"]) == ("optimizer_step", len(ends) - 1), \
        (row["step_source"], row["step_count"])
    steps = con.execute("SELECT step, start_ps, duration_ps FROM steps WHERE profile_id=? AND"
                        " device=-1 ORDER BY step", (row["id"],)).fetchall()
    base = row["start_ns"]
    assert [tuple(r) for r in steps] == [
        (k, (ends[k] - base) * 1000, (ends[k + 1] - ends[k]) * 1000) for k in range(len(ends) - 1)]


def test_tf_timeline_kernels():
    """TensorFlow: kernels are the X events of the per-stream
    "/device:GPU:N/stream:K Compute" processes (stream:all repeats them)."""
    name = "tf1-xla-gpu-timeline.ctf.json"
    path, con, row = index_fixture("chrome-json", name)
    events = load_json(path)
    procs = {e["pid"]: e["args"]["name"] for e in events
             if e.get("ph") == "M" and e.get("name") == "process_name"}
    want = defaultdict(list)
    for e in events:
        p = procs.get(e.get("pid"), "")
        if e.get("ph") != "X" or "/stream:" not in p or "/stream:all" in p:
            continue
        if not p.endswith(" Compute") or str(e["name"]).lower().startswith("memcpy"):
            continue
        want[e["name"]].append(ns(e["dur"]) * 1000)
    assert want, "no TF kernels in %s" % name
    assert row["kernel_count"] == sum(len(v) for v in want.values())
    compare_groups(kernel_rows(con, row["id"]), want, name)


# ---- Nsight Systems ----

def check_nsys(name):
    path = os.path.join(FIXTURES, "nsys", name)
    con, rows = index_files([path])
    row = rows.get(name)
    usable(row, name)
    src = sqlite3.connect("file:%s?mode=ro" % path, uri=True)
    count = src.execute("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL").fetchone()[0]
    assert row["kernel_count"] == count, (row["kernel_count"], count)
    got = kernel_rows(con, row["id"])
    candidates = []
    for col in ("demangledName", "shortName"):
        want = defaultdict(list)
        for n, d in src.execute("SELECT s.value, k.[end] - k.start FROM CUPTI_ACTIVITY_KIND_KERNEL k"
                                " JOIN StringIds s ON s.id = k.%s WHERE k.[end] >= k.start" % col):
            want[n].append(d * 1000)
        candidates.append(want)
    want = next((w for w in candidates if set(w) == set(got)), candidates[0])
    compare_groups(got, want, name)
    per_dev = defaultdict(lambda: defaultdict(list))
    col = "demangledName" if want is candidates[0] else "shortName"
    for dev, n, d in src.execute("SELECT k.deviceId, s.value, k.[end] - k.start FROM"
                                 " CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.%s"
                                 " WHERE k.[end] >= k.start" % col):
        per_dev[dev][n].append(d * 1000)
    for dev, groups in per_dev.items():
        compare_groups(kernel_rows(con, row["id"], dev), groups, "%s device %d" % (name, dev))


def test_nsys_kernels():
    check_nsys("pytorch-rtx2070-nsys-2022.1.sqlite")
    check_nsys("saxpy-mpi-a100-nsys-2022.2.sqlite")


# ---- xplane ----

def message(b):
    """Field number -> list of values (ints for varints, bytes otherwise),
    with the independent wire decoder of test_xplane.py."""
    out = defaultdict(list)
    for num, _, v in fields(b):
        out[num].append(v)
    return out


def text(m, num):
    return m[num][0].decode("utf-8", "replace") if m.get(num) else ""


def xplane_events(path, plane_prefix, want_line):
    """Yields (device ordinal, event name, duration ps, {stat names}) for the
    events of matching planes whose line passes want_line(line name, stat names)."""
    with open(path, "rb") as f:
        space = message(f.read())
    for pb in space[1]:
        plane = message(pb)
        pname = text(plane, 2)
        if not pname.startswith(plane_prefix):
            continue
        dev = int(pname.rsplit(":", 1)[1])
        names, stats = {}, {}
        for entry in plane[4]:
            e = message(entry)
            meta = message(e[2][0]) if e.get(2) else {}
            names[e[1][0] if e.get(1) else 0] = text(meta, 4) or text(meta, 2)
        for entry in plane[5]:
            e = message(entry)
            meta = message(e[2][0]) if e.get(2) else {}
            stats[e[1][0] if e.get(1) else 0] = text(meta, 2)
        for lb in plane[3]:
            line = message(lb)
            lname = text(line, 11) or text(line, 2)
            for eb in line[4]:
                ev = message(eb)
                if ev.get(5):  # num_occurrences: aggregated, not a timed event
                    continue
                st = {stats.get(message(s)[1][0] if message(s).get(1) else 0) for s in ev[4]}
                if want_line(lname, st):
                    yield dev, names.get(ev[1][0] if ev.get(1) else 0, ""), \
                        ev[3][0] if ev.get(3) else 0, st


def check_xplane(name, plane_prefix, want_line, kind):
    path = os.path.join(FIXTURES, "xplane", name)
    con, rows = index_files([path])
    row = rows.get(name)
    usable(row, name)
    want, per_dev, count = defaultdict(list), defaultdict(lambda: defaultdict(list)), 0
    for dev, n, dur, _ in xplane_events(path, plane_prefix, want_line):
        count += 1
        want[n].append(dur)  # duration_ps 0 (or absent) counts too
        per_dev[dev][n].append(dur)
    assert count > 0, name
    assert row["kernel_count"] == count, (row["kernel_count"], count)
    compare_groups(kernel_rows(con, row["id"], kind=kind), want, name)
    for dev, groups in per_dev.items():
        compare_groups(kernel_rows(con, row["id"], dev, kind), groups, "%s device %d" % (name, dev))
    return con, row


def test_xplane_gpu_kernels():
    for name in ("jax-rocm-mi300x-gemm.xplane.pb", "jax-rocm-mi300x-conv-8gpu.xplane.pb"):
        con, row = check_xplane(name, "/device:GPU:", lambda line, st: "kernel_details" in st,
                                "kernel")
        assert row["step_source"] in ("module", "annotation", "steps_line"), row["step_source"]


def test_xplane_tpu_xla_ops():
    con, row = check_xplane("jax-tpu-v6e-inference.xplane.pb", "/device:TPU:",
                            lambda line, st: line == "XLA Ops", "xla_op")
    cats = con.execute("SELECT sum(count), sum(total_ps) FROM kernel_stats WHERE profile_id=?"
                       " AND kind='hlo_category' AND device=-1", (row["id"],)).fetchone()
    ops = con.execute("SELECT sum(count), sum(total_ps) FROM kernel_stats WHERE profile_id=?"
                      " AND kind='xla_op' AND device=-1", (row["id"],)).fetchone()
    assert cats[0] and tuple(cats) == tuple(ops), (tuple(cats), tuple(ops))
    assert row["step_source"] != "unknown" and row["step_source"], row["step_source"]


# ---- generated JAX profiles ----

def generate_files(extra):
    """Writes a JAX profile with xpv-gen; returns (profile dir, its parent)."""
    if not GEN or not os.path.exists(GEN):
        raise Skip("xpv-gen not built")
    root = tmpdir("xpv-analysis-gen-")
    out = os.path.join(root, "profiles")
    r = subprocess.run([GEN, "--out", out, "--kind", "jax", "--steps", "6", "--size", "2MB"] + extra,
                       capture_output=True, text=True, timeout=300)
    if r.returncode != 0 and "not built yet" in r.stderr:
        raise Skip("xpv-gen --kind jax not built yet")
    assert r.returncode == 0, r.stderr
    return out, root


def generate(extra):
    return index_dir(*generate_files(extra))


def test_generated_jax_annotated_steps():
    con, rows = generate([])
    assert rows, "nothing indexed"
    for name, row in rows.items():
        usable(row, name)
        assert row["step_source"] == "annotation", (name, row["step_source"])
        assert row["step_count"] == 6, (name, row["step_count"])
        n = con.execute("SELECT count(DISTINCT step) FROM steps WHERE profile_id=? AND device=-1",
                        (row["id"],)).fetchone()[0]
        assert n == 6, n


def test_generated_jax_module_steps():
    con, rows = generate(["--no-steps"])
    assert rows, "nothing indexed"
    for name, row in rows.items():
        usable(row, name)
        assert row["step_source"] == "module", (name, row["step_source"])
        assert row["step_count"] >= 1, (name, row["step_count"])
        names = {r[0] for r in con.execute("SELECT name FROM steps WHERE profile_id=?",
                                           (row["id"],))}
        assert len(names) == 1 and names.pop(), names


def index_with_consumers(prof, root, consumers, early="on"):
    """Indexes prof into root/index-N-EARLY.sqlite with N ingest consumer
    threads, kernel_stats rows computed as the device work ends or not
    (early "on"/"off"); returns {table: sorted rows} of everything the index
    holds for it."""
    db = os.path.join(root, "index-%d-%s.sqlite" % (consumers, early))
    env = dict(os.environ, XPV_INGEST_CONSUMERS=str(consumers), XPV_ANALYSIS_EARLY=early)
    r = run(["--list-only", "--quiet", "--profile-dir", prof, "--db", db], env=env)
    assert r.returncode == 0, r.stderr
    con = sqlite3.connect(db)
    tables = {}
    for t in ("blocks", "strings", "tracks", "kernel_stats", "kernel_device_stats", "steps"):
        tables[t] = sorted(con.execute("SELECT * FROM %s" % t).fetchall(), key=repr)
    tables["profiles"] = con.execute(
        "SELECT events, start_ns, end_ns, devices, facts, phase_counts, kernel_count, step_source,"
        " step_count, warnings FROM profiles").fetchall()
    return tables


def test_generated_jax_same_index_whatever_the_threads():
    """One consumer thread running both stages, one per stage, or none (the
    reader's thread runs them), with the kernel_stats rows computed as the
    reader's device planes end or at finish: the same index, byte for byte,
    from a profile that goes round the batch ring many times."""
    prof, root = generate_files(["--size", "6MB", "--no-json"])
    one = index_with_consumers(prof, root, 1)
    (events,) = one["profiles"][0][:1]
    assert events > 100000, one["profiles"]
    assert one["kernel_stats"] and one["steps"] and one["blocks"], "nothing to compare"
    for n, early in ((2, "on"), (1, "off"), (2, "off"), (0, "on"), (0, "off")):
        other = index_with_consumers(prof, root, n, early)
        for table in one:
            assert one[table] == other[table], \
                "table %s differs with %d consumers, early rows %s" % (table, n, early)


def skippable(fn):
    def wrapper():
        try:
            fn()
        except Skip as s:
            SKIPPED.append(fn.__name__)
            print("SKIP (part) %s: %s" % (fn.__name__, s))
    wrapper.__name__ = fn.__name__
    return wrapper


if __name__ == "__main__":
    if not BIN or not os.path.exists(BIN):
        print("SKIP: XPV_BIN not set")
        sys.exit(SKIP)
    tests = [test_generated_jax_annotated_steps, test_generated_jax_module_steps,
             test_generated_jax_same_index_whatever_the_threads]
    if FIXTURES and os.path.isdir(FIXTURES):
        tests = [test_pytorch_resnet50_kernels_and_steps, test_pytorch_fractional_us,
                 test_pytorch_optimizer_steps, test_tf_timeline_kernels, test_nsys_kernels, test_xplane_gpu_kernels, test_xplane_tpu_xla_ops] + tests
    else:
        print("SKIP (part): ../shared/fixtures not found (set XPV_FIXTURES); fixture parts skipped")
    wrapped = [skippable(t) for t in tests]
    try:
        main(wrapped)
    except SystemExit as e:
        if e.code == 0 and len(SKIPPED) == len(tests):
            print("SKIP: every part skipped")
            sys.exit(SKIP)
        raise
