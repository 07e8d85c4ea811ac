#!/usr/bin/env python3
"""test_extract.py: `--extract[=OUTDIR]` on copies of the shared fixtures.

Every written file must parse as Chrome trace JSON without a `metadata` key,
hold as many (non-M) events as were indexed (plus, for a GPU JAX profile, the
derived Steps / XLA Modules / XLA Ops rows), mirror the profile's relative
path, and carry the exact times of a trace this test writes itself. An
existing file is never overwritten, no temporary file is left behind, and an
OUTDIR inside the profile directory (directly, through a symlink or through
`..`) is refused without creating anything there.
"""
import collections
import json
import os
import shutil
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import xpv_e2e as e2e  # noqa: E402

LAYOUT = {
    "plugins/profile/run_a/host0.xplane.pb": "xplane/jax-rocm-mi300x-gemm.xplane.pb",
    "plugins/profile/run_b/tpu.xplane.pb": "xplane/jax-tpu-v6e-inference.xplane.pb",
    "torch/worker0.pt.trace.json.gz": "chrome-json/pytorch-v100-resnet50.pt.trace.json.gz",
    "tf/timeline.ctf.json": "chrome-json/tf1-xla-gpu-timeline.ctf.json",
    "nsys/run.sqlite": "nsys/saxpy-mpi-a100-nsys-2022.2.sqlite",
}
OWN_EVENTS = [
    {"ph": "M", "name": "thread_name", "pid": 1, "tid": 2, "args": {"name": "worker"}},
    {"ph": "X", "name": "a", "pid": 1, "tid": 2, "ts": 5.001, "dur": 2.5, "args": {"k": "v"}},
    {"ph": "X", "name": "b", "pid": 1, "tid": 2, "ts": 123456789.123, "dur": 0.001},
    {"ph": "i", "name": "mark", "pid": 1, "tid": 2, "ts": 7, "s": "t"},
]


def expected_name(rel):
    base = rel[:-3] if rel.endswith(".gz") or rel.endswith(".pb") else rel
    return base if base.endswith(".json") else base + ".trace.json"


def setup():
    e2e.need_fixtures()
    root = e2e.tmpdir("xpv-extract-")
    prof = os.path.join(root, "profiles")
    for rel, src in LAYOUT.items():
        dst = os.path.join(prof, rel)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        shutil.copyfile(os.path.join(e2e.FIXTURES, src), dst)
    with open(os.path.join(prof, "own.trace.json"), "w") as f:
        json.dump({"traceEvents": OWN_EVENTS}, f)
    return root, prof, os.path.join(root, "index.sqlite")


def derived_threads(doc):
    """(pid, tid) -> name of the derived device rows: listed first (sort index < 0)."""
    ev = doc["traceEvents"]
    names = {(e["pid"], e["tid"]): e["args"]["name"] for e in ev
             if e["ph"] == "M" and e["name"] == "thread_name"}
    return {k: names.get(k) for k in
            ((e["pid"], e["tid"]) for e in ev if e["ph"] == "M" and e["name"] == "thread_sort_index"
             and e["args"]["sort_index"] < 0)
            if names.get(k) in ("Steps", "XLA Modules", "XLA Ops")}


def listing(prof, db):
    r = e2e.run(["--profile-dir=" + prof, "--db=" + db, "--list-only", "--json"])
    assert r.returncode == 0, r.stderr
    return {p["path"]: p for p in json.loads(r.stdout)}


def test_extract_all_formats():
    root, prof, db = setup()
    before = e2e.snapshot(prof)
    out = os.path.join(root, "out")
    r = e2e.run(["--profile-dir=" + prof, "--db=" + db, "--extract=" + out])
    assert r.returncode == 0, r.stdout + r.stderr
    profiles = listing(prof, db)
    ok = [p for p in profiles.values() if p["status"] == "ok"]
    assert len(ok) == len(LAYOUT) + 1, profiles
    for p in ok:
        path = os.path.join(out, expected_name(p["path"]))
        assert os.path.isfile(path), (path, r.stdout)
        with open(path) as f:
            doc = json.load(f)
        assert "metadata" not in doc and isinstance(doc["traceEvents"], list)
        derived = derived_threads(doc)
        ph = collections.Counter(e["ph"] for e in doc["traceEvents"]
                                 if (e.get("pid"), e.get("tid")) not in derived)
        assert sum(v for k, v in ph.items() if k != "M") == p["events"], (p["path"], ph)
        # the rows XProf derives come on top, for a GPU whose kernels carry hlo_op only
        want = {"Steps", "XLA Modules", "XLA Ops"} if "host0" in p["path"] else set()
        assert set(derived.values()) == want, (p["path"], derived)
        assert ph["M"] > 0, p["path"]
    left = [n for _, _, files in os.walk(out) for n in files if ".tmp-" in n]
    assert not left, left
    assert e2e.snapshot(prof) == before, "the profile directory changed"
    assert "%d trace files written" % len(ok) in r.stdout, r.stdout


def test_exact_times_and_args():
    root, prof, db = setup()
    out = os.path.join(root, "out")
    assert e2e.run(["--profile-dir=" + prof, "--db=" + db, "--extract=" + out]).returncode == 0
    with open(os.path.join(out, "own.trace.json")) as f:
        doc = json.load(f)
    xs = sorted((e["name"], e["ts"], e["dur"], json.dumps(e.get("args"))) for e in
                doc["traceEvents"] if e["ph"] == "X")
    assert xs == [("a", 5.001, 2.5, '{"k": "v"}'), ("b", 123456789.123, 0.001, "null")], xs
    inst = [e for e in doc["traceEvents"] if e["ph"] == "i"]
    assert len(inst) == 1 and inst[0]["ts"] == 7 and inst[0].get("s") == "t", inst
    names = [e["args"]["name"] for e in doc["traceEvents"]
             if e["ph"] == "M" and e["name"] == "thread_name"]
    assert names == ["worker"], names


def test_never_overwrites():
    root, prof, db = setup()
    out = os.path.join(root, "out")
    target = os.path.join(out, "own.trace.json")
    os.makedirs(out)
    with open(target, "w") as f:
        f.write("precious")
    r = e2e.run(["--profile-dir=" + prof, "--db=" + db, "--extract=" + out])
    assert r.returncode == 0, r.stderr
    assert open(target).read() == "precious"
    assert "not overwritten" in r.stdout, r.stdout
    mtimes = {n: os.stat(os.path.join(d, n)).st_mtime_ns for d, _, fs in os.walk(out) for n in fs}
    time.sleep(0.05)
    r = e2e.run(["--profile-dir=" + prof, "--db=" + db, "--extract=" + out])
    assert r.returncode == 0 and "0 trace files written" in r.stdout, r.stdout
    again = {n: os.stat(os.path.join(d, n)).st_mtime_ns for d, _, fs in os.walk(out) for n in fs}
    assert again == mtimes


def test_refuses_outdir_inside_profiles():
    root, prof, db = setup()
    link = os.path.join(root, "link-to-profiles")
    os.symlink(prof, link)
    before = e2e.snapshot(prof)
    for outdir in (os.path.join(prof, "x"), os.path.join(prof, "new", "deeper"), prof,
                   os.path.join(link, "out"), os.path.join(root, "nope", "..", "profiles", "y")):
        r = e2e.run(["--profile-dir=" + prof, "--db=" + db, "--extract=" + outdir])
        assert r.returncode != 0, outdir
        assert "refusing" in r.stderr, r.stderr
        assert e2e.snapshot(prof) == before, outdir


def test_default_outdir_in_working_directory():
    root, prof, db = setup()
    cwd = os.path.join(root, "cwd")
    os.makedirs(cwd)
    r = e2e.run(["--profile-dir=" + prof, "--db=" + db, "--extract"], cwd=cwd)
    assert r.returncode == 0, r.stderr
    made = os.listdir(cwd)
    assert len(made) == 1 and made[0].startswith("xprof-extract-"), made
    assert os.path.isfile(os.path.join(cwd, made[0], "own.trace.json"))


if __name__ == "__main__":
    if not e2e.BIN or not os.path.exists(e2e.BIN):
        print("SKIP: XPV_BIN is not set")
        sys.exit(e2e.SKIP)
    e2e.main([test_extract_all_formats, test_exact_times_and_args, test_never_overwrites,
              test_refuses_outdir_inside_profiles, test_default_outdir_in_working_directory])
