#!/usr/bin/env python3
"""test_step_partition.py: every fixture with steps, indexed at once, gives
step rows that partition time (indexer/analysis/step_breakdown.c): per
device and combined, the device categories (compute, collectives, the four
copy directions, memset, autotune) plus idle make the step's duration, and
host wait + kernel wait + other make idle, within 0.1% (each device in its
own step window, the combined row their mean); overview_page's
step time shares add up to 100%. Skips (77) when ../shared/fixtures is
absent."""
import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from xpv_e2e import BIN, FIXTURES, free_port, http_get, main, need_fixtures, tmpdir  # noqa
from xpv_e2e import wait_indexed  # noqa: E402

CJ = os.path.join(FIXTURES, "chrome-json")
GPU = os.path.join(FIXTURES, "gpu")
SOURCES = [os.path.join(CJ, f) for f in sorted(os.listdir(CJ))] if os.path.isdir(CJ) else []
SOURCES += [os.path.join(GPU, "torch-train", "vm_454.1795707308737265467.pt.trace.json.gz"),
            os.path.join(GPU, "jax-perfetto", "plugins", "profile", "2026_11_26_15_34_52",
                         "vm.xplane.pb"),
            # per-device module executions: each TPU in its own step windows
            os.path.join(FIXTURES, "xplane", "jax-tpu-v6e-inference.xplane.pb")]
BUSY = ("compute_us", "collective_us", "memcpy_h2d_us", "memcpy_d2h_us", "memcpy_d2d_us",
        "memcpy_other_us", "memset_us", "autotune_us")
IDLE = ("host_wait_us", "kernel_wait_us", "idle_other_us")


def get(port, path):
    status, _, body = http_get(port, path, timeout=120)
    assert status == 200, (path, status, body[:200])
    return json.loads(body)


def close(a, b, whole):
    return abs(a - b) <= max(1e-3 * whole, 0.002)


def check_row(where, st):
    dur = st["duration_us"]
    busy = sum(st[k] or 0 for k in BUSY)
    assert close(busy + st["idle_us"], dur, dur), (where, st)
    assert close(sum(st[k] or 0 for k in IDLE), st["idle_us"], dur), (where, st)
    assert all((st[k] or 0) >= 0 for k in BUSY + IDLE), (where, st)


def test_partition():
    need_fixtures()
    root = tmpdir()
    n = 0
    for src in SOURCES:
        if not os.path.exists(src):
            continue
        d = os.path.join(root, "r%d" % n)
        os.makedirs(d)
        shutil.copyfile(src, os.path.join(d, os.path.basename(src)))
        n += 1
    port = free_port()
    proc = subprocess.Popen(
        [BIN, "--profile-dir=" + root, "--port=%d" % port, "--perfetto-port=0",
         "--db=" + os.path.join(tmpdir(), "i.sqlite"), "--quiet"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_indexed(port, min_profiles=n)
        checked = 0
        for p in get(port, "/api/profiles")["profiles"]:
            base = "/api/profiles/%s" % p["id"]
            steps = get(port, base + "/steps")
            if not steps["steps"]:
                continue
            for dev in [-1] + steps["devices"]:
                for st in get(port, base + "/steps?device=%d" % dev)["steps"]:
                    if st["duration_us"]:
                        check_row((p["path"], dev, st["step"]), st)
                        checked += 1
            ov = get(port, base + "/tools/overview_page")
            shares = [r["value"] for r in ov["rows"] if r["section"] == "step time breakdown"]
            if shares:
                assert abs(sum(shares) - 100) < 0.1, (p["path"], shares)
        print("%d step rows of %d sources" % (checked, n))
        assert checked > 0
    finally:
        proc.terminate()
        proc.wait(timeout=10)


if __name__ == "__main__":
    main([test_partition])
