"""End-to-end test of the device-busy summary (the kernels answer's
device_busy, the overview's "Device busy" card where there are no steps):
busy is the mean over the devices that ran work, and the answer says how
many of the listed devices that is. Checked against an independent reading
of the Nsight Systems exports: which devices have kernels, copies or
memsets (CUPTI tables), their summed time over the profile's span, and the
GPUs the export lists (TARGET_INFO_GPU); and on the ROCm xplane that lists
eight GPUs and ran on one, "1 of 8"."""
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from xpv_e2e import BIN, FIXTURES, need_fixtures, tmpdir, free_port, main, wait_indexed  # noqa: E402

NSYS = ["pytorch-rtx2070-nsys-2022.1.sqlite", "saxpy-mpi-a100-nsys-2022.2.sqlite"]
WORK = ("CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET")


def get(port, path):
    with urllib.request.urlopen("http://127.0.0.1:%d%s" % (port, path), timeout=60) as r:
        return json.loads(r.read())


def raw_busy(path):
    """({device: busy ns}, GPUs listed) from the export itself."""
    db = sqlite3.connect("file:%s?mode=ro" % path, uri=True)
    busy = {}
    tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    for t in WORK:
        if t in tables:
            for dev, ns in db.execute('SELECT deviceId, sum("end" - start) FROM %s GROUP BY deviceId' % t):
                busy[dev] = busy.get(dev, 0) + ns
    listed = db.execute("SELECT count(*) FROM TARGET_INFO_GPU").fetchone()[0]
    db.close()
    return {d: ns for d, ns in busy.items() if ns > 0}, listed


class Server:
    def __init__(self, files):
        self.root = tmpdir()
        for f in files:
            shutil.copyfile(os.path.join(FIXTURES, f), os.path.join(self.root, os.path.basename(f)))
        self.n = len(files)

    def __enter__(self):
        self.port = free_port()
        self.proc = subprocess.Popen([BIN, "--profile-dir=" + self.root, "--port=%d" % self.port,
                                      "--perfetto-port=0", "--db=" + os.path.join(tmpdir(), "i.sqlite"),
                                      "--quiet"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_indexed(self.port, min_profiles=self.n, timeout=120)
        profiles = get(self.port, "/api/profiles")
        return profiles.get("profiles", profiles) if isinstance(profiles, dict) else profiles

    def __exit__(self, *exc):
        self.proc.terminate()
        self.proc.wait(timeout=10)


def test_one_of_eight_gpus():
    s = Server(["xplane/jax-rocm-mi300x-gemm.xplane.pb"])
    with s as profiles:
        (p,) = profiles
        k = get(s.port, "/api/profiles/%s/kernels?limit=1" % p["id"])
        got = k["device_busy"]
        assert got["devices_listed"] == len(p["devices"]) == 8, got
        assert got["devices_with_work"] == len(k["devices"]) == 1, (got, k["devices"])
        # one device's kernel time over the span, not an eighth of it
        want = k["kernel_time_us"] / p["duration_us"]
        assert got["busy_fraction"] >= want * 0.999, (got, want)


def test_busy_is_over_the_devices_that_ran_work():
    s = Server(["nsys/" + f for f in NSYS])
    with s as profiles:
        assert sorted(os.path.basename(p["path"]) for p in profiles) == sorted(NSYS), profiles
        for p in profiles:
            name = os.path.basename(p["path"])
            busy, listed = raw_busy(os.path.join(FIXTURES, "nsys", name))
            span_ns = p["duration_us"] * 1e3
            want = sum(min(1.0, ns / span_ns) for ns in busy.values()) / len(busy)
            got = get(s.port, "/api/profiles/%s/kernels?limit=1" % p["id"])["device_busy"]
            assert got["devices_with_work"] == len(busy), (name, got, busy)
            assert got["devices_listed"] == max(listed, len(busy)), (name, got, listed)
            assert abs(got["busy_fraction"] - want) <= 1e-4 * want, (name, got, want)


if __name__ == "__main__":
    need_fixtures()
    main([test_busy_is_over_the_devices_that_ran_work, test_one_of_eight_gpus])
