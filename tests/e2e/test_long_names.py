"""End-to-end test that long kernel names can be found: C++ template names
run past a thousand bytes, and /search finds the longest kernel name of
each GPU fixture that has one by its whole text (every occurrence the
kernel table counts), as the kernel table's "Show" link asks it. (The
TensorFlow GPU capture with Eigen kernels that prompted this is not among
the shared fixtures; these names are as long and as templated.)"""
import json
import os
import shutil
import subprocess
import sys
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from xpv_e2e import BIN, FIXTURES, need_fixtures, tmpdir, free_port, main, wait_indexed  # noqa: E402

# (fixture, the least byte length its longest kernel name has): the nsys
# export and two PyTorch traces.
FILES = [("nsys/pytorch-rtx2070-nsys-2022.1.sqlite", 300),
         ("chrome-json/pytorch-rocm-mi210-gpu-only.json.gz", 1000),
         ("gpu/torch-train/vm_454.1795707308737265467.pt.trace.json.gz", 1000)]


def get(port, path):
    with urllib.request.urlopen("http://127.0.0.1:%d%s" % (port, path), timeout=60) as r:
        return json.loads(r.read())


def test_search_finds_the_longest_kernel_name():
    root = tmpdir()
    present = FILES
    want = {}
    for f, n in present:
        shutil.copyfile(os.path.join(FIXTURES, f), os.path.join(root, os.path.basename(f)))
        want[os.path.basename(f)] = n
    port = free_port()
    proc = subprocess.Popen([BIN, "--profile-dir=" + root, "--port=%d" % port, "--perfetto-port=0",
                             "--db=" + os.path.join(tmpdir(), "i.sqlite"), "--quiet"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_indexed(port, min_profiles=len(present), timeout=180)
        profiles = get(port, "/api/profiles")
        profiles = profiles.get("profiles", profiles) if isinstance(profiles, dict) else profiles
        assert len(profiles) == len(present), profiles
        for p in profiles:
            ks = get(port, "/api/profiles/%s/kernels?kind=kernel" % p["id"])["kernels"]
            k = max(ks, key=lambda k: len(k["name"].encode()))
            name = k["name"]
            assert len(name.encode()) >= want[os.path.basename(p["path"])], (p["path"], len(name))
            q = urllib.parse.urlencode({"q": name, "limit": 1000}, quote_via=urllib.parse.quote)
            ans = get(port, "/api/profiles/%s/search?%s" % (p["id"], q))
            exact = [m for m in ans["matches"] if m["name"] == name]
            assert len(exact) == k["count"], (p["path"], len(exact), k["count"])
            assert all(":" in m["ref"] for m in exact)
    finally:
        proc.terminate()
        proc.wait(timeout=10)


if __name__ == "__main__":
    need_fixtures()
    main([test_search_finds_the_longest_kernel_name])
