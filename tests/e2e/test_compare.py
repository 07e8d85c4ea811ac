#!/usr/bin/env python3
"""test_compare.py — /api/compare and xprof-view --compare on profiles whose
differences are known, on one profile against itself, and on two real
PyTorch traces against an independent reading of their JSON.

Two xpv-gen PyTorch profiles differ by construction (see tools/gen/gen.h):
kernel 0 of the generator's list runs twice as long, kernel 2 is dropped,
xpv_gen_added_kernel runs once per step, and step SLOW_STEP lasts
SLOW_STEP_US longer. Every figure is checked in integer nanoseconds against
the raw trace JSON read here, and the API and the CLI must give the same
answer. --fail-if-slower is checked both ways, on steps and on device time.

Profiles of 6 and 5 steps of the same per-step work must compare as ~0 per
step (their totals differ by a sixth), and a side that is unreadable, empty
or has no device work must be refused with a 4xx (the CLI: exit 1) that
names the side and says why.
"""
import shutil
import gzip
import json
import os
import signal
import statistics
import subprocess
import sys
from collections import defaultdict
from decimal import Decimal

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import xpv_e2e as e2e  # noqa: E402
from xpv_e2e import free_port, http_get, wait_indexed, tmpdir, snapshot, main  # noqa: E402

SLOW_KERNEL = "ampere_sgemm_128x64_tn"  # the generator's kernel 0
DROPPED_KERNEL = "void cudnn::bn_fw_tr_1C11_kernel_NCHW"  # kernel 2, a name prefix
ADDED_KERNEL, ADDED_NS = "xpv_gen_added_kernel", 12345
SLOW_STEP, SLOW_STEP_US = 3, 1500
EXIT_SLOWER = 3


def gen(out, *extra, steps=6):
    args = [e2e.GEN, "--out", out, "--kind", "pytorch", "--steps", str(steps), "--size", "300KB"]
    r = subprocess.run(args + list(extra), capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    (path,) = [os.path.join(out, f) for f in os.listdir(out)]
    return path


def ns(us):
    """A JSON µs value (Kineto's, or ours) as integer ns: it must be whole."""
    v = Decimal(str(us)) * 1000
    assert v == v.to_integral_value(), ("not a whole ns", us)
    return int(v)


def raw_events(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        d = json.load(f)
    return d["traceEvents"] if isinstance(d, dict) else d


def raw_kernels(path):
    """name -> [count, total ns] of the device kernels, from the raw JSON."""
    out = defaultdict(lambda: [0, 0])
    for e in raw_events(path):
        if e.get("cat") in ("kernel", "Kernel") and e.get("ph") == "X" and "dur" in e:
            out[e["name"]][0] += 1
            out[e["name"]][1] += ns(e["dur"])
    return dict(out)


def raw_steps(path):
    """Host ProfilerStep#N durations in ns, by step number."""
    return {int(e["name"].split("#")[1]): ns(e["dur"]) for e in raw_events(path)
            if e.get("cat") == "user_annotation" and e["name"].startswith("ProfilerStep#")}


def run_cli(*args, cache):
    env = dict(os.environ, XDG_CACHE_HOME=cache)
    return subprocess.run([e2e.BIN, "--compare"] + list(args), capture_output=True, text=True,
                          timeout=300, env=env)


def cli_json(a, b, cache):
    r = run_cli(a, b, "--json", cache=cache)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


class Server:
    def __init__(self, root):
        self.port = free_port()
        self.proc = subprocess.Popen(
            [e2e.BIN, "--profile-dir=" + root, "--db=" + os.path.join(tmpdir(), "i.sqlite"),
             "--port=%d" % self.port, "--perfetto-port=0", "--quiet"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        wait_indexed(self.port, 2)

    def get(self, path):
        status, ctype, body = http_get(self.port, path)
        return status, ctype, json.loads(body)

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        self.proc.communicate(timeout=60)


def pair():
    """Two generated profiles, A and B, under one root."""
    root = tmpdir()
    a = gen(os.path.join(root, "a"))
    b = gen(os.path.join(root, "b"), "--slow-kernel", "0", "--drop-kernel", "2", "--add-kernel",
            "--slow-step", str(SLOW_STEP), "--slow-step-us", str(SLOW_STEP_US))
    return root, a, b


def deltas(node):
    """Every delta object in an answer (a dict with 'delta' and 'direction')."""
    if isinstance(node, dict):
        if "delta" in node and "direction" in node:
            yield node
        for k, v in node.items():
            if k not in ("a", "b") or not isinstance(v, dict) or "id" not in v:
                yield from deltas(v)
    elif isinstance(node, list):
        for v in node:
            yield from deltas(v)


def check_delta(d, a_ns, b_ns, up="slower", down="faster"):
    assert ns(d["a"]) == a_ns and ns(d["b"]) == b_ns, (d, a_ns, b_ns)
    assert ns(d["delta"]) == b_ns - a_ns, (d, b_ns - a_ns)
    assert d["sign"] == (b_ns > a_ns) - (b_ns < a_ns), d
    assert d["direction"] == (up if b_ns > a_ns else down if b_ns < a_ns else "same"), d
    if a_ns:
        assert abs(d["relative"] - (b_ns - a_ns) / a_ns) < 1e-12, (d, a_ns, b_ns)


def check_known_deltas(c, a_path, b_path):
    """The generated pair's answer against the raw traces and the switches."""
    ka, kb = raw_kernels(a_path), raw_kernels(b_path)
    sa, sb = raw_steps(a_path), raw_steps(b_path)
    assert sorted(sa) == sorted(sb) and len(sa) >= 6, (sa, sb)
    # The switches did what they say, read from the raw JSON alone.
    (dropped,) = [n for n in ka if n.startswith(DROPPED_KERNEL)]
    assert dropped not in kb and ADDED_KERNEL not in ka
    assert kb[ADDED_KERNEL] == [len(sb), len(sb) * ADDED_NS]
    assert kb[SLOW_KERNEL] == [ka[SLOW_KERNEL][0], 2 * ka[SLOW_KERNEL][1]]
    assert sb[SLOW_STEP] - sa[SLOW_STEP] == SLOW_STEP_US * 1000
    assert all(sa[s] == sb[s] for s in sa if s != SLOW_STEP)
    # Step time.
    st = c["step_time"]
    assert [ns(x) for x in st["durations_us"]["a"]] == [sa[s] for s in sorted(sa)]
    assert [ns(x) for x in st["durations_us"]["b"]] == [sb[s] for s in sorted(sb)]
    for key, f in (("min_us", min), ("max_us", max)):
        check_delta(st[key], f(sa.values()), f(sb.values()))
    ma, mb = statistics.median(sa.values()), statistics.median(sb.values())
    assert st["median_us"]["a"] * 1000 == ma and st["median_us"]["b"] * 1000 == mb, st
    assert abs(st["mean_us"]["delta"] * 1000 - SLOW_STEP_US * 1000 / len(sa)) < 1e-6
    assert st["count"]["delta"] == 0 and st["count"]["direction"] == "same"
    assert c["gate"]["metric"] == "median_step_time"
    # Kernels: every name, exactly.
    t = c["kernels"]
    rows = {r["name"]: r for r in t["rows"]}
    assert set(rows) == set(ka) | set(kb) and (t["new"], t["vanished"]) == (1, 1)
    for name, r in rows.items():
        ca, ta = ka.get(name, [0, 0])
        cb, tb = kb.get(name, [0, 0])
        status = "new" if name not in ka else "vanished" if name not in kb else "both"
        assert r["status"] == status, (name, r)
        assert (r["count"]["a"], r["count"]["b"], r["count"]["delta"]) == (ca, cb, cb - ca)
        check_delta(r["total_us"], ta, tb)
    assert rows[SLOW_KERNEL]["total_us"]["relative"] == 1.0
    assert rows[dropped]["total_us"]["relative"] == -1.0 and rows[dropped]["avg_us"]["b"] is None
    assert rows[ADDED_KERNEL]["total_us"]["relative"] is None
    assert ns(rows[ADDED_KERNEL]["avg_us"]["b"]) == ADDED_NS
    moved = {SLOW_KERNEL, dropped, ADDED_KERNEL}
    assert all(r["total_us"]["delta"] == 0 for n, r in rows.items() if n not in moved)
    keys = [abs(r["total_us"]["delta"]) for r in t["rows"]]
    assert keys == sorted(keys, reverse=True), "rows by |total delta| (equal step counts)"
    check_delta(t["total_us"], sum(v[1] for v in ka.values()), sum(v[1] for v in kb.values()))


def without_profiles(c):
    return {k: v for k, v in c.items() if k not in ("a", "b")}


def test_known_deltas_api_and_cli():
    root, a, b = pair()
    before = snapshot(root)
    s = Server(root)
    try:
        profiles = {p["path"].split("/")[0]: p["id"] for p in s.get("/api/profiles")[2]["profiles"]}
        status, ctype, c = s.get("/api/compare?a=%s&b=%s" % (profiles["a"], profiles["b"]))
        assert status == 200 and ctype.startswith("application/json"), (status, ctype)
        assert (c["a"]["id"], c["b"]["id"]) == (profiles["a"], profiles["b"])
        check_known_deltas(c, a, b)
        for bad in ("", "?a=" + profiles["a"], "?a=xyz&b=" + profiles["b"],
                    "?a=%s&b=0000000000000001" % profiles["a"]):
            st, _, body = s.get("/api/compare" + bad)
            assert st in (400, 404) and "error" in body, (bad, st, body)
        assert s.get("/api/health")[0] == 200, "alive after bad requests"
    finally:
        s.stop()
    cache = tmpdir()
    cli = cli_json(os.path.join(root, "a"), os.path.join(root, "b"), cache)
    check_known_deltas(cli, a, b)
    assert without_profiles(cli) == without_profiles(c), "the CLI answers as the API"
    text = run_cli(os.path.join(root, "a"), b, cache=cache)
    assert text.returncode == 0, text.stderr
    for want in (ADDED_KERNEL, "new", "vanished", "+100.00%", "step median"):
        assert want in text.stdout, (want, text.stdout)
    assert snapshot(root) == before, "profile directories are only read"
    assert any(f.endswith(".sqlite") for f in os.listdir(os.path.join(cache, "xprof-view")))


def assert_all_zero(c):
    found = list(deltas(c))
    assert len(found) > 20, len(found)
    for d in found:
        if d["direction"] is None:  # a figure neither side knows
            assert d["delta"] is None and d["a"] is None and d["b"] is None, d
            continue
        assert d["delta"] == 0 and d["sign"] == 0 and d["direction"] == "same", d
        assert d["relative"] in (0, None), d
    for key in ("kernels", "ops", "memcpy", "memset"):
        assert c[key]["new"] == 0 and c[key]["vanished"] == 0, key
        assert all(r["status"] == "both" for r in c[key]["rows"]), key


def test_self_comparison_is_zero():
    root, a, _ = pair()
    s = Server(root)
    try:
        pid = s.get("/api/profiles/latest")[2]["id"]
        status, _, c = s.get("/api/compare?a=%s&b=%s" % (pid, pid))
        assert status == 200, c
        assert_all_zero(c)
        assert status == 200 and s.get("/api/compare?a=latest&b=latest")[2] == c
    finally:
        s.stop()
    cache = tmpdir()
    # A file against its own directory (its latest profile) is the same profile.
    cli = cli_json(a, os.path.dirname(a), cache)
    assert cli["a"]["id"] == cli["b"]["id"]
    assert_all_zero(cli)


def gate(a, b, pct, cache):
    r = run_cli(a, b, "--fail-if-slower=%s" % pct, cache=cache)
    assert r.returncode in (0, EXIT_SLOWER), (r.returncode, r.stderr)
    return r.returncode


def test_fail_if_slower_exit_codes():
    root, a, b = pair()
    cache = tmpdir()
    da, db = os.path.dirname(a), os.path.dirname(b)
    c = cli_json(da, db, cache)
    rel = 100 * c["gate"]["value"]["relative"]
    assert rel > 0, c["gate"]
    assert gate(da, db, rel / 2, cache) == EXIT_SLOWER
    assert gate(da, db, rel * 2, cache) == 0
    assert gate(db, da, 0, cache) == 0, "B faster than A passes any gate"
    assert gate(da, da, 0, cache) == 0, "the same profile is not slower"
    bad = run_cli(da, db, "--fail-if-slower=-1", cache=cache)
    assert bad.returncode == 2 and "percentage" in bad.stderr, bad.stderr
    missing = run_cli(da, os.path.join(root, "nowhere"), cache=cache)
    assert missing.returncode == 1 and "nowhere" in missing.stderr, missing.stderr


def test_fail_if_slower_on_device_time():
    """Without steps the gate compares total device time."""
    root = tmpdir()
    a = gen(os.path.join(root, "a"), "--no-steps")
    b = gen(os.path.join(root, "b"), "--no-steps", "--slow-kernel", "0")
    cache = tmpdir()
    c = cli_json(a, b, cache)
    ka = raw_kernels(a)
    assert c["per_step"]["normalised"] is False, c["per_step"]
    assert "Neither profile has steps" in c["per_step"]["note"], c["per_step"]
    assert c["device_time_per_step_us"]["delta"] is None, "no steps: no per-step figure"
    assert c["gate"]["metric"] == "device_time", c["gate"]
    assert ns(c["gate"]["value"]["delta"]) == ka[SLOW_KERNEL][1]
    rel = 100 * c["gate"]["value"]["relative"]
    assert gate(a, b, rel * 0.99, cache) == EXIT_SLOWER
    assert gate(a, b, rel * 1.01, cache) == 0


def test_two_hosts_of_one_run():
    """Any two profiles of one index, here two hosts of a JAX run: each side
    of the answer is what /steps and /kernels say of that host."""
    root = tmpdir()
    r = subprocess.run([e2e.GEN, "--out", root, "--kind", "jax", "--hosts", "2", "--size", "1MB",
                        "--no-json"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    s = Server(root)
    try:
        ids = [p["id"] for p in s.get("/api/profiles")[2]["profiles"]]
        assert len(ids) == 2, ids
        status, _, c = s.get("/api/compare?a=%s&b=%s" % tuple(ids))
        assert status == 200, c
        for side, pid in zip("ab", ids):
            steps = s.get("/api/profiles/%s/steps" % pid)[2]["steps"]
            assert c["step_time"]["durations_us"][side] == [x["duration_us"] for x in steps]
            for table, kind in (("kernels", "kernel"), ("ops", "xla_op")):
                mine = {r["name"]: r for r in c[table]["rows"] if r["count"][side]}
                theirs = s.get("/api/profiles/%s/kernels?kind=%s" % (pid, kind))[2]["kernels"]
                assert len(mine) == len(theirs), (table, len(mine), len(theirs))
                for k in theirs:
                    row = mine[k["name"]]
                    assert row["count"][side] == k["count"], (k["name"], row)
                    assert row["total_us"][side] == k["total_us"], (k["name"], row)
        assert c["step_time"]["count"]["a"] > 0 and c["kernels"]["rows"], "the run has steps and kernels"
    finally:
        s.stop()


def test_real_pytorch_fixtures():
    e2e.need_fixtures()
    d = os.path.join(e2e.FIXTURES, "chrome-json")
    a = os.path.join(d, "pytorch-gp100-user-annotations.json.gz")
    b = os.path.join(d, "pytorch-v100-resnet50.pt.trace.json.gz")
    c = cli_json(a, b, tmpdir())
    ka, kb = raw_kernels(a), raw_kernels(b)
    rows = {r["name"]: r for r in c["kernels"]["rows"]}
    assert set(rows) == set(ka) | set(kb), sorted(set(rows) ^ (set(ka) | set(kb)))[:5]
    assert len(set(ka) & set(kb)) >= 2, "the pair shares kernels"
    for name, r in rows.items():
        ca, ta = ka.get(name, [0, 0])
        cb, tb = kb.get(name, [0, 0])
        assert (r["count"]["a"], r["count"]["b"]) == (ca, cb), (name, r["count"], ca, cb)
        check_delta(r["total_us"], ta, tb)
        if ca and cb:
            assert r["status"] == "both"
            assert abs(r["avg_us"]["delta"] * 1000 - (tb / cb - ta / ca)) < 1e-6, (name, r)
    assert c["kernels"]["new"] == len(set(kb) - set(ka))
    assert c["kernels"]["vanished"] == len(set(ka) - set(kb))


def test_step_counts_compare_per_step():
    """6 steps against 5 of the same per-step work: the totals differ by a
    sixth, every per-step figure by (almost) nothing, in the API and CLI."""
    root = tmpdir()
    a = gen(os.path.join(root, "a"), steps=6)
    b = gen(os.path.join(root, "b"), steps=5)
    s = Server(root)
    try:
        ids = {p["path"].split("/")[0]: p["id"] for p in s.get("/api/profiles")[2]["profiles"]}
        status, _, c = s.get("/api/compare?a=%s&b=%s" % (ids["a"], ids["b"]))
        assert status == 200, c
    finally:
        s.stop()
    assert c["per_step"] == {"normalised": True, "steps": {"a": 6, "b": 5}, "note": None}, c
    assert abs(c["device_time_us"]["relative"] + 1 / 6) < 0.01, c["device_time_us"]
    assert abs(c["device_time_per_step_us"]["relative"]) < 0.001, c["device_time_per_step_us"]
    assert abs(c["step_time"]["median_us"]["relative"]) < 0.001, c["step_time"]["median_us"]
    ka, kb = raw_kernels(a), raw_kernels(b)
    for table in ("kernels", "memcpy", "memset"):
        t = c[table]
        assert t["rows"], table
        assert abs(t["per_step_us"]["relative"]) < 0.001, (table, t["per_step_us"])
        for r in t["rows"]:
            assert r["status"] == "both" and abs(r["per_step_us"]["relative"]) < 0.01, r
    for name, r in {r["name"]: r for r in c["kernels"]["rows"]}.items():
        assert abs(r["per_step_us"]["a"] * 6 * 1000 - ka[name][1]) < 1e-3, (name, r)
        assert abs(r["per_step_us"]["b"] * 5 * 1000 - kb[name][1]) < 1e-3, (name, r)
    keys = [abs(r["per_step_us"]["delta"]) for r in c["kernels"]["rows"]]
    assert keys == sorted(keys, reverse=True), "rows by |per-step delta|"
    (dev,) = c["devices"]
    assert dev["steps"]["a"] == 6 and abs(dev["device_time_per_step_us"]["relative"]) < 0.001, dev
    cache = tmpdir()
    cli = cli_json(os.path.dirname(a), os.path.dirname(b), cache)
    assert without_profiles(cli) == without_profiles(c), "the CLI answers as the API"
    assert gate(os.path.dirname(b), os.path.dirname(a), 1, cache) == 0, "5 steps vs 6: not slower"
    text = run_cli(os.path.dirname(a), os.path.dirname(b), cache=cache)
    assert "compared per step" in text.stdout and "device time per step" in text.stdout, text.stdout


def test_broken_sides_refused():
    """A truncated file, an empty file and a host-only trace next to a good
    profile: each is refused with a 4xx naming the side, the CLI exits 1."""
    root = tmpdir()
    good = gen(os.path.join(root, "good"))
    bad = os.path.join(root, "bad")
    os.makedirs(bad)
    with open(good, "rb") as f:
        data = f.read()
    with open(os.path.join(bad, "trunc.pt.trace.json.gz"), "wb") as f:
        f.write(data[: len(data) // 2])
    open(os.path.join(bad, "empty.pt.trace.json"), "w").close()
    with open(os.path.join(bad, "host.pt.trace.json"), "w") as f:
        json.dump({"traceEvents": [{"name": "step", "ph": "X", "ts": 1, "dur": 5, "pid": 1,
                                    "tid": 1, "cat": "cpu_op"}]}, f)
    want = {"trunc.pt.trace.json.gz": "could not be read", "empty.pt.trace.json": "",
            "host.pt.trace.json": "has no device work"}
    s = Server(root)
    try:
        ids = {os.path.basename(p["path"]): p["id"] for p in s.get("/api/profiles")[2]["profiles"]}
        good_id = ids[os.path.basename(good)]
        for name, why in want.items():
            for side, q in (("B", (good_id, ids[name])), ("A", (ids[name], good_id))):
                st, _, body = s.get("/api/compare?a=%s&b=%s" % q)
                assert 400 <= st < 500, (name, st, body)
                msg = body["error"]
                assert msg.startswith("%s (bad/%s)" % (side, name)) and why in msg, (name, msg)
        assert s.get("/api/compare?a=%s&b=%s" % (good_id, good_id))[0] == 200
    finally:
        s.stop()
    cache = tmpdir()
    for name, why in want.items():
        r = run_cli(good, os.path.join(bad, name), cache=cache)
        assert r.returncode == 1 and "B (" in r.stderr and why in r.stderr, (name, r.returncode,
                                                                            r.stderr)
        assert not r.stdout, r.stdout
    shutil.rmtree(bad)


if __name__ == "__main__":
    main([test_step_counts_compare_per_step, test_broken_sides_refused,
          test_known_deltas_api_and_cli, test_self_comparison_is_zero,
          test_fail_if_slower_exit_codes, test_fail_if_slower_on_device_time,
          test_two_hosts_of_one_run, test_real_pytorch_fixtures])
