#!/usr/bin/env python3
"""test_attribution.py: GPU kernels of XLA command buffers placed on their
HLO instructions, read against the raw files.

gpu/jax-cmdbuf-pair holds ONE JAX program captured with command buffers on
(every kernel carries hlo_op "command_buffer_1") and off (each kernel its
own hlo_op). The tests check:
  - the capture with command buffers gives, in hlo_stats, the same ops with
    the same occurrences as the capture without, for at least 90% of the
    latter's op time (kernel choices of a few GEMMs differ between the two
    compiles; the memsets cuBLAS adds outside a graph are not in it, so the
    expected count leaves out the memsets the raw file shows per op);
  - no command_buffer_N row carries time, and hlo_stats' time is all the
    device time of the capture's kernels (nothing dropped);
  - framework_op_stats names JAX ops (op_name paths, primitive types), never
    XlaModule, and hlo_stats gives each instruction's op_name and source
    line as an independent decode of the HloProtos reads them;
  - jax-maxtext: no command_buffer row, and most of the program's time placed.
Skips (77) when ../shared/fixtures is absent."""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from xpv_e2e import BIN, FIXTURES, need_fixtures, tmpdir, main, wait_indexed  # noqa: E402
from hlo_protos import instructions  # noqa: E402
from test_tool_hlo import device_lines, free_port, get  # noqa: E402

PAIR = os.path.join("gpu", "jax-cmdbuf-pair")
ON = os.path.join("cmdbuf-on", "plugins", "profile", "2026_11_26_15_42_07", "vm.xplane.pb")
OFF = os.path.join("cmdbuf-off", "plugins", "profile", "2026_11_26_15_42_18", "vm.xplane.pb")
MAXTEXT = os.path.join("gpu", "jax-maxtext")


class Server:
    def __init__(self, root):
        self.port = free_port()
        self.proc = subprocess.Popen(
            [BIN, "--profile-dir=" + root, "--port=%d" % self.port, "--perfetto-port=0",
             "--db=" + os.path.join(tmpdir(), "i.sqlite"), "--quiet"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_indexed(self.port)
        _, ans = get(self.port, "/api/profiles")
        self.ids = {p["path"]: p["id"] for p in ans["profiles"]}

    def rows(self, path, tool):
        status, ans = get(self.port, "/api/profiles/%s/tools/%s" % (self.ids[path], tool))
        assert status == 200, (path, tool, status, ans)
        cols = [c["id"] for c in ans["columns"]]
        return [dict(zip(cols, r)) if isinstance(r, list) else r for r in ans["rows"]]

    def close(self):
        self.proc.terminate()
        self.proc.wait(timeout=30)


def raw_device(path):
    """(kernel time in us of events carrying hlo_op, {hlo_op: memsets})."""
    total_ps, memsets = 0, {}
    for _, events in device_lines(path, "/device:GPU:"):
        for _, dur, name, st in events:
            if st.get("hlo_op") is None:
                continue
            total_ps += dur
            if name.startswith("Memset"):
                memsets[st["hlo_op"]] = memsets.get(st["hlo_op"], 0) + 1
    return total_ps / 1e6, memsets


def test_command_buffer_pair():
    need = os.path.join(FIXTURES, PAIR)
    if not os.path.isdir(need):
        print("skip: %s not found" % need)
        return
    on_path, off_path = os.path.join(need, ON), os.path.join(need, OFF)
    assert all(st.get("hlo_op") == "command_buffer_1"
               for _, evs in device_lines(on_path, "/device:GPU:") for _, _, name, st in evs
               if not name.startswith("Memcpy")), "the on capture is not a command-buffer one"
    s = Server(need)
    try:
        on = {(r["hlo_module"], r["hlo_op_name"]): r for r in s.rows(ON, "hlo_stats")}
        off = {(r["hlo_module"], r["hlo_op_name"]): r for r in s.rows(OFF, "hlo_stats")}
        assert not [k for k, r in on.items()
                    if k[1].startswith("command_buffer") and r["total_time"] > 0], on.keys()
        on_us, _ = raw_device(on_path)
        got = sum(r["total_time"] for r in on.values())
        assert abs(got - on_us) < 1e-3 * len(on), (got, on_us)
        _, memsets = raw_device(off_path)
        off_total = sum(r["total_time"] for r in off.values())
        same = sum(r["total_time"] for k, r in off.items() if k in on and
                   on[k]["occurrences"] == r["occurrences"] - memsets.get(k[1], 0))
        print("ops matching the capture without command buffers: %.1f%% of its op time"
              % (100 * same / off_total))
        assert same >= 0.9 * off_total, (same, off_total)
        unplaced = on.get(("jit_step", "unattributed"), {"total_time": 0})["total_time"]
        assert unplaced < 0.1 * got, (unplaced, got)
        check_names(s, on_path, on)
    finally:
        s.close()


def check_names(s, on_path, on):
    """hlo_stats' framework op and source per instruction, and the framework
    ops table, against an independent decode of the HloProtos."""
    prog = [r["program_id"] for r in on.values() if r["hlo_module"] == "jit_step"][0]
    ins = instructions(on_path)[prog]
    checked = 0
    for (module, name), r in on.items():
        if name not in ins:
            assert name == "unattributed", name
            continue
        op_name, source = ins[name]
        assert r["tf_op_name"] == op_name, (name, r["tf_op_name"], op_name)
        assert r["source_info"] == source, (name, r["source_info"], source)
        checked += 1
    assert checked > 50 and any(v[1] and v[1].endswith(".py:%s" % v[1].rsplit(":", 1)[1])
                                for v in ins.values())
    fos = s.rows(ON, "framework_op_stats")
    ops = {v[0] for v in ins.values() if v[0]}
    device = [r for r in fos if r["host_or_device"] == "Device"]
    assert device and all(r["operation"] in ops for r in device), \
        [r["operation"] for r in device if r["operation"] not in ops]
    assert not [r for r in fos if "XlaModule" in r["operation"]]
    assert all(r["type"] == r["operation"].rsplit("/", 1)[-1] for r in device), device[:3]


def test_maxtext():
    root = os.path.join(FIXTURES, MAXTEXT)
    if not os.path.isdir(root):
        print("skip: %s not found" % root)
        return
    s = Server(root)
    try:
        path = list(s.ids)[0]
        rows = s.rows(path, "hlo_stats")
        assert not [r for r in rows if r["hlo_op_name"].startswith("command_buffer")]
        program = [r for r in rows if r["program_id"] == "18566"]
        total = sum(r["total_time"] for r in program)
        unplaced = sum(r["total_time"] for r in program if r["hlo_op_name"] == "unattributed")
        print("jax-maxtext jit_train_step(18566): %.1f%% of %.1f us unattributed"
              % (100 * unplaced / total, total))
        assert total > 0 and unplaced < 0.25 * total, (unplaced, total)
    finally:
        s.close()


if __name__ == "__main__":
    need_fixtures()
    main([test_command_buffer_pair, test_maxtext])
