"""End-to-end tests of the command line: --list-only (text and JSON) on the
shared fixtures arranged as real profile directories, the formats found,
read-only use of the profile directory, exit codes, the default index
location, auto-detection, a damaged index, and bad input files."""
import gzip
import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from xpv_e2e import BIN, FIXTURES, need_fixtures, tmpdir, run, snapshot, main  # noqa: E402

RUN = "logs/plugins/profile/2024_01_01_00_00_00"
EXPECTED_FORMATS = {
    RUN + "/jax-rocm-mi300x-gemm.xplane.pb": "xplane",
    RUN + "/jax-rocm-mi300x-conv-8gpu.xplane.pb": "xplane",
    RUN + "/jax-tpu-v6e-inference.xplane.pb": "xplane",
    "torch/pytorch-gp100-user-annotations.json.gz": "pytorch_trace_json",
    "torch/pytorch-h100-bert-small.json.gz": "pytorch_trace_json",
    "torch/pytorch-rocm-mi210-gpu-only.json.gz": "pytorch_trace_json",
    "torch/pytorch-v100-resnet50.pt.trace.json.gz": "pytorch_trace_json",
    "tf/tf1-xla-gpu-timeline.ctf.json": "tf_timeline_json",
    "nsys/pytorch-rtx2070-nsys-2022.1.sqlite": "nsys_sqlite",
    "nsys/saxpy-mpi-a100-nsys-2022.2.sqlite": "nsys_sqlite",
    "nsys/pytorch-rtx2070-nsys-2022.1.nsys-rep": "nsys_rep",
}


def fixture_tree():
    """Copies the fixtures (read-only originals) into a realistic layout."""
    root = tmpdir()
    src = {
        RUN: os.path.join(FIXTURES, "xplane"),
        "torch": os.path.join(FIXTURES, "chrome-json"),
        "tf": os.path.join(FIXTURES, "chrome-json"),
        "nsys": os.path.join(FIXTURES, "nsys"),
    }
    for rel in EXPECTED_FORMATS:
        folder, name = os.path.split(rel)
        os.makedirs(os.path.join(root, folder), exist_ok=True)
        shutil.copyfile(os.path.join(src[folder], name), os.path.join(root, rel))
    return root


def list_json(root, db, extra=()):
    r = run(["--profile-dir=" + root, "--list-only", "--json", "--db=" + db] + list(extra))
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_list_json_formats_and_fields():
    root = fixture_tree()
    db = os.path.join(tmpdir(), "i.sqlite")
    listed = list_json(root, db)
    by_path = {p["path"]: p for p in listed}
    assert set(by_path) == set(EXPECTED_FORMATS), sorted(by_path)
    for path, fmt in EXPECTED_FORMATS.items():
        p = by_path[path]
        assert p["format"] == fmt, (path, p["format"])
        for key in ("path", "run", "host", "format", "size_bytes", "mtime", "status", "error", "events"):
            assert key in p, (path, key)
        assert p["status"] in ("ok", "error", "unsupported"), p["status"]
        assert p["size_bytes"] == os.path.getsize(os.path.join(root, path))
    assert by_path[RUN + "/jax-rocm-mi300x-gemm.xplane.pb"]["run"] == "logs/2024_01_01_00_00_00"
    assert by_path[RUN + "/jax-rocm-mi300x-gemm.xplane.pb"]["host"] == "jax-rocm-mi300x-gemm"
    rep = by_path["nsys/pytorch-rtx2070-nsys-2022.1.nsys-rep"]
    assert rep["status"] == "unsupported"
    assert "nsys export --type sqlite" in rep["error"]
    mtimes = [p["mtime_ns"] for p in listed]
    assert mtimes == sorted(mtimes, reverse=True), "newest first"


def test_list_text_and_read_only():
    root = fixture_tree()
    before = snapshot(root)
    db = os.path.join(tmpdir(), "i.sqlite")
    r = run(["--profile-dir=" + root, "--list-only", "--db=" + db])
    assert r.returncode == 0, r.stderr
    for path in EXPECTED_FORMATS:
        assert path in r.stdout, path
    assert "xplane" in r.stdout and "status" in r.stdout
    assert snapshot(root) == before, "the profile directory was modified"
    # the columns fit their longest value: each starts where its heading does
    lines = r.stdout.splitlines()
    head = lines[0]
    rows = [ln for ln in lines[1:] if ln[:1].isdigit()]
    assert len(rows) == len(EXPECTED_FORMATS), rows
    for col in ("host", "format"):
        at = head.index(col)
        assert all(ln[at - 1] == " " and ln[at] != " " for ln in rows), (col, head, rows)


def test_incremental_second_run_is_cached():
    root = fixture_tree()
    db = os.path.join(tmpdir(), "i.sqlite")
    first = {p["path"]: p for p in list_json(root, db)}
    second = {p["path"]: p for p in list_json(root, db)}
    for path in first:
        assert first[path]["status"] == second[path]["status"]
        assert first[path]["events"] == second[path]["events"]
        # index_seconds is written only when a file is (re)indexed
        assert first[path]["index_seconds"] == second[path]["index_seconds"], path


def test_no_profiles_exit_1():
    empty = tmpdir()
    with open(os.path.join(empty, "notes.txt"), "w") as f:
        f.write("not a profile")
    r = run(["--profile-dir=" + empty, "--list-only", "--db=" + os.path.join(tmpdir(), "i.sqlite")])
    assert r.returncode == 1
    assert "no profiles found" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr


def test_missing_directory():
    r = run(["--profile-dir=/nonexistent/xpv-dir", "--list-only"])
    assert r.returncode != 0
    assert "/nonexistent/xpv-dir" in r.stderr


def test_version_help_bad_option():
    r = run(["--version"])
    assert r.returncode == 0 and r.stdout.startswith("xprof-view ")
    r = run(["--help"])
    assert r.returncode == 0 and "--profile-dir" in r.stdout and "--list-only" in r.stdout
    r = run(["--frobnicate"])
    assert r.returncode == 2 and "--frobnicate" in r.stderr
    r = run(["--port=notaport", "--list-only"])
    assert r.returncode == 2 and "--port" in r.stderr


def test_default_index_location():
    root = fixture_tree()
    cache = tmpdir()
    env = dict(os.environ, XDG_CACHE_HOME=cache)
    r = run(["--profile-dir=" + root, "--list-only"], env=env)
    assert r.returncode == 0, r.stderr
    made = os.listdir(os.path.join(cache, "xprof-view"))
    assert any(n.endswith(".sqlite") for n in made), made
    for dirpath, _, files in os.walk(root):
        assert not any(f.endswith((".sqlite-wal", ".sqlite-shm")) for f in files)


def test_autodetect_like_the_old_script():
    cwd = tmpdir()
    os.makedirs(os.path.join(cwd, "profiles", "run1"))
    shutil.copyfile(os.path.join(FIXTURES, "chrome-json", "pytorch-h100-bert-small.json.gz"),
                    os.path.join(cwd, "profiles", "run1", "w.pt.trace.json.gz"))
    r = run(["--list-only", "--db=" + os.path.join(tmpdir(), "i.sqlite")], cwd=cwd)
    assert r.returncode == 0, r.stderr
    assert "profiles/run1" in r.stderr
    assert "w.pt.trace.json.gz" in r.stdout


def test_damaged_index_is_rebuilt():
    root = fixture_tree()
    db = os.path.join(tmpdir(), "i.sqlite")
    list_json(root, db)
    with open(db, "r+b") as f:
        f.seek(0)
        f.write(b"this is not a database" * 100)
    r = run(["--profile-dir=" + root, "--list-only", "--json", "--db=" + db])
    assert r.returncode == 0, r.stderr
    assert "rebuilt" in r.stderr
    assert len(json.loads(r.stdout)) == len(EXPECTED_FORMATS)


def test_bad_inputs_are_listed_with_reasons():
    root = tmpdir()
    good = os.path.join(FIXTURES, "chrome-json", "pytorch-h100-bert-small.json.gz")
    shutil.copyfile(good, os.path.join(root, "good.pt.trace.json.gz"))
    data = open(good, "rb").read()
    with open(os.path.join(root, "truncated.trace.json.gz"), "wb") as f:
        f.write(data[: len(data) // 2])
    with open(os.path.join(root, "garbage.trace.json.gz"), "wb") as f:
        f.write(bytes(range(256)) * 64)
    open(os.path.join(root, "empty.trace.json"), "w").close()
    with open(os.path.join(root, "garbage.xplane.pb"), "wb") as f:
        f.write(b"\xff" * 100)
    listed = {p["path"]: p for p in list_json(root, os.path.join(tmpdir(), "i.sqlite"))}
    for bad in ("truncated.trace.json.gz", "garbage.trace.json.gz", "empty.trace.json",
                "garbage.xplane.pb"):
        assert listed[bad]["status"] == "error", (bad, listed[bad])
        assert listed[bad]["error"], bad
    assert "empty" in listed["empty.trace.json"]["error"]
    # JSON is a trace by its content, whatever its name: a cut trace is listed
    # with its reason, a bare array of events is read, a manifest is no profile
    event = {"name": "k", "ph": "X", "ts": 1, "dur": 2, "pid": 1, "tid": 1}
    with open(os.path.join(root, "cut.json"), "w") as f:
        f.write(json.dumps({"traceEvents": [event, event]})[:-20])
    with open(os.path.join(root, "bare.json"), "w") as f:
        json.dump([event], f)
    with open(os.path.join(root, "MANIFEST.json"), "w") as f:
        json.dump({"made": "2026-11-26", "parts": {"capture": "ok"}}, f)
    listed = {p["path"]: p for p in list_json(root, os.path.join(tmpdir(), "j.sqlite"))}
    assert listed["cut.json"]["status"] == "error" and listed["cut.json"]["error"], listed["cut.json"]
    assert listed["bare.json"]["status"] == "ok" and listed["bare.json"]["events"] == 1
    assert "MANIFEST.json" not in listed, sorted(listed)
    assert listed["good.pt.trace.json.gz"]["path"] == "good.pt.trace.json.gz"


def test_permission_denied_is_reported():
    # Everything lives under one temp folder opened up for the unprivileged
    # user below; nothing outside it (such as /tmp itself) is touched.
    top = tmpdir()
    os.chmod(top, 0o755)
    root = os.path.join(top, "profiles")
    dbdir = os.path.join(top, "index")
    os.makedirs(root, mode=0o755)
    os.makedirs(dbdir)
    os.chmod(dbdir, 0o777)
    shutil.copyfile(os.path.join(FIXTURES, "chrome-json", "pytorch-h100-bert-small.json.gz"),
                    os.path.join(root, "locked.pt.trace.json.gz"))
    os.chmod(os.path.join(root, "locked.pt.trace.json.gz"), 0)
    cmd = [BIN, "--profile-dir=" + root, "--list-only", "--json", "--db=" + os.path.join(dbdir, "i.sqlite")]
    if os.geteuid() == 0:
        # root reads anything: run as nobody so the permission applies
        if not shutil.which("setpriv"):
            print("note: setpriv missing, permission case not run")
            return
        cmd = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] + cmd
    env = dict(os.environ, HOME=dbdir)
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=env)
    assert r.returncode == 0, r.stderr
    p = json.loads(r.stdout)[0]
    assert p["status"] == "error" and "ermission denied" in p["error"], p


def test_gpu_jax_run_hosts_and_manifest():
    gpu = os.path.join(FIXTURES, "gpu")
    if not os.path.isdir(os.path.join(gpu, "jax-perfetto")):
        print("note: fixtures/gpu absent, JAX GPU run case not run")
        return
    listed = list_json(gpu, os.path.join(tmpdir(), "i.sqlite"))
    paths = [p["path"] for p in listed]
    assert "MANIFEST.json" not in paths and all(not p.endswith("MANIFEST.json") for p in paths)
    perfetto = [p for p in listed if p["path"].startswith("jax-perfetto/")]
    names = sorted(os.path.basename(p["path"]) for p in perfetto)
    assert names == ["perfetto_trace.json.gz", "vm.trace.json.gz", "vm.xplane.pb"], names
    assert {p["host"] for p in perfetto} == {"vm"}, [(p["path"], p["host"]) for p in perfetto]
    assert len({p["run"] for p in perfetto}) == 1


if __name__ == "__main__":
    need_fixtures()
    main([test_list_json_formats_and_fields, test_list_text_and_read_only,
          test_incremental_second_run_is_cached, test_no_profiles_exit_1, test_missing_directory,
          test_version_help_bad_option, test_default_index_location,
          test_autodetect_like_the_old_script, test_damaged_index_is_rebuilt,
          test_bad_inputs_are_listed_with_reasons, test_permission_denied_is_reported,
          test_gpu_jax_run_hosts_and_manifest])
