#!/usr/bin/env python3
"""test_attribution.py: GPU kernels of XLA command buffers placed on their
HLO instructions, read against the raw files.

gpu/jax-cmdbuf-pair holds ONE JAX program captured with command buffers on
(every kernel carries hlo_op "command_buffer_1") and off (each kernel its
own hlo_op); with XPV_FIXTURES naming scripts/gpu_capture.py's output, each
NAME-on capture and its NAME-off twin are such a pair too. The tests check:
  - the capture with command buffers gives, in hlo_stats, the same ops with
    the same occurrences as the capture without, for at least 93% of the
    latter's op time (kernel choices of a few GEMMs differ between the two
    compiles; cuBLAS adds memsets to some GEMMs, in a graph or not, so each
    side's count leaves out the memsets placed on the op);
  - no command_buffer_N row carries time, and hlo_stats' time is all the
    device time of the capture's kernels (nothing dropped);
  - framework_op_stats names JAX ops (op_name paths, primitive types), never
    XlaModule, and hlo_stats gives each instruction's op_name and source
    line as an independent decode of the HloProtos reads them;
  - jax-maxtext: no command_buffer row, and most of the program's time placed;
    the first compile's autotuning is left out of hlo_stats, op_profile and
    roofline_model by /kernels' rule (the same events, to the ps), so their
    top rows are the training program's and hlo_stats' rows, its
    unattributed time and the excluded time add up to the raw device time;
  - a hand-built capture (no fixture needed): a fusion, a library call and a
    fusion in one graph execution placed on fusion.1, custom-call.1 and
    fusion.2 by name and data links, the events' correlation id winning over
    their metadata's (once an abort), and an unknown kernel left unattributed;
  - another: cuDNN's fused attention backward (three kernels and a memset)
    right after a cuBLAS GEMM, each placed on its own call;
  - another: two loops whose bodies share a kernel, one body's graph
    placing it on its own body's instruction; a graph holding a loop, whose
    shared kernel stays outside the body; a convolution whose engine does
    not say cuDNN, whose kernels go to no other call;
  - another: a scan body's dynamic slices, wrapped in async-starts, run as
    CUDA's memcpy kernels, placed copy by copy in the module's schedule
    order (not its instruction order), and left unattributed when the
    copies and the kernels do not pair up;
  - others: reused kernels and library calls placed by the schedule
    between placed kernels (identical layers among them), and the cases the
    schedule must not decide alone (async-wrapped calls, collectives on
    their own streams, memcpy kernels beside a call, loops);
  - another: a Pallas kernel's op takes the category of its opcode, and no
    op keeps the "XlaModule:" tf_op as its framework op.
The fixture tests skip with a message when ../shared/fixtures is absent."""
import glob
import json
import os
import struct
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from xpv_e2e import BIN, FIXTURES, tmpdir, main, wait_indexed  # noqa: E402
from hlo_protos import instructions, schedules  # noqa: E402
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

    def answer(self, path, tool):
        status, ans = get(self.port, "/api/profiles/%s/tools/%s" % (self.ids[path], tool))
        assert status == 200, (path, tool, status, ans)
        return ans

    def rows(self, path, tool):
        ans = self.answer(path, tool)
        cols = [c["id"] for c in ans["columns"]]
        return [dict(zip(cols, r)) if isinstance(r, list) else r for r in ans["rows"]]

    def props(self, path, tool):
        ans = self.answer(path, tool)
        return ans.get("p") or ans.get("properties") or {}

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


def cmdbuf_pairs():
    """(root, on, off) per pair of captures of one program with command
    buffers on and off: the fixtures' pair, and each NAME-on beside a
    NAME-off when XPV_FIXTURES names scripts/gpu_capture.py's output."""
    pairs = []
    if os.path.isdir(os.path.join(FIXTURES, PAIR)):
        pairs.append((os.path.join(FIXTURES, PAIR), ON, OFF))
    for on_dir in sorted(glob.glob(os.path.join(FIXTURES, "*-on"))):
        found = [glob.glob(os.path.join(d, "plugins", "profile", "*", "*.xplane.pb"))
                 for d in (on_dir, on_dir[:-3] + "-off")]
        if all(len(f) == 1 for f in found):
            pairs.append((FIXTURES, *(os.path.relpath(f[0], FIXTURES) for f in found)))
    return pairs


def test_command_buffer_pair():
    pairs = cmdbuf_pairs() if FIXTURES else []
    if not pairs:
        print("skip: no %s nor NAME-on/NAME-off captures under XPV_FIXTURES"
              % os.path.join(FIXTURES, PAIR))
        return
    for root, on_rel, off_rel in pairs:
        check_pair(root, on_rel, off_rel)


def check_pair(root, on_rel, off_rel):
    on_path, off_path = os.path.join(root, on_rel), os.path.join(root, off_rel)
    graph_ops = {st.get("hlo_op") for _, evs in device_lines(on_path, "/device:GPU:")
                 for _, _, name, st in evs if not name.startswith("Memcpy")}
    assert any(op and op.startswith("command_buffer_") for op in graph_ops), \
        "%s is not a command-buffer capture" % on_rel
    s = Server(root)
    try:
        on = {(r["hlo_module"], r["hlo_op_name"]): r for r in s.rows(on_rel, "hlo_stats")}
        off = {(r["hlo_module"], r["hlo_op_name"]): r for r in s.rows(off_rel, "hlo_stats")}
        assert not [k for k, r in on.items()
                    if k[1].startswith("command_buffer") and r["total_time"] > 0], on.keys()
        on_us, _ = raw_device(on_path)
        got = sum(r["total_time"] for r in on.values())
        got += float(s.props(on_rel, "hlo_stats").get("compile_excluded_us", 0))
        assert abs(got - on_us) < 1e-3 * len(on), (got, on_us)
        # cuBLAS adds memsets to some GEMMs, in a graph or not: each side's
        # are left out of its count
        _, memsets = raw_device(off_path)
        events = extracted_trace(os.path.dirname(os.path.dirname(os.path.dirname(on_path))))
        on_memsets = {}
        for e in events:
            if e.get("ph") == "X" and e["name"].startswith("Memset") and "hlo_op" in e.get("args", {}):
                on_memsets[e["args"]["hlo_op"]] = on_memsets.get(e["args"]["hlo_op"], 0) + 1
        off_total = sum(r["total_time"] for r in off.values())
        same = sum(r["total_time"] for k, r in off.items() if k in on and
                   on[k]["occurrences"] - on_memsets.get(k[1], 0) ==
                   r["occurrences"] - memsets.get(k[1], 0))
        print("%s: ops matching the capture without command buffers: %.1f%% of its op time"
              % (on_rel.split(os.sep)[0], 100 * same / off_total))
        assert same >= 0.93 * off_total, (same, off_total)
        unplaced = on.get(("jit_step", "unattributed"), {"total_time": 0})["total_time"]
        assert unplaced < 0.1 * got, (unplaced, got)
        check_names(s, on_path, on, on_rel)
        check_schedule_order(events, on_path)
    finally:
        s.close()


def check_names(s, on_path, on, on_rel):
    """hlo_stats' framework op and source per instruction, and the framework
    ops table, against an independent decode of the HloProtos."""
    modules = instructions(on_path)
    prog = [r["program_id"] for r in on.values() if r["hlo_module"] == "jit_step"][0]
    ins = modules[prog]
    checked = 0
    for (module, name), r in on.items():
        if name not in modules.get(r["program_id"], {}):
            assert name == "unattributed", (module, name)
            continue
        op_name, source = modules[r["program_id"]][name]
        assert r["tf_op_name"] == op_name, (name, r["tf_op_name"], op_name)
        assert r["source_info"] == source, (name, r["source_info"], source)
        checked += 1
    assert checked > 50 and any(v[1] and v[1].endswith(".py:%s" % v[1].rsplit(":", 1)[1])
                                for v in ins.values())
    fos = s.rows(on_rel, "framework_op_stats")
    ops = {v[0] for m in modules.values() for v in m.values() if v[0]}
    device = [r for r in fos if r["host_or_device"] == "Device"]
    assert device and all(r["operation"] in ops for r in device), \
        [r["operation"] for r in device if r["operation"] not in ops]
    assert not [r for r in fos if "XlaModule" in r["operation"]]
    assert all(r["type"] == r["operation"].rsplit("/", 1)[-1] for r in device), device[:3]


def extracted_trace(root):
    """The events of the one xplane under root as --extract writes them."""
    out = tmpdir()
    proc = subprocess.run([BIN, "--profile-dir=" + root, "--extract=" + out, "--quiet",
                           "--db=" + os.path.join(tmpdir(), "i.sqlite")],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    trace = glob.glob(os.path.join(out, "**", "*.xplane.trace.json"), recursive=True)[0]
    events = json.load(open(trace))
    return events["traceEvents"] if isinstance(events, dict) else events


def check_schedule_order(events, path):
    """A graph runs its commands in schedule order, so kernels placed in a
    computation that runs once per execution lie in its order (equal for
    a call's several kernels); once a cuBLAS kernel went, by a data link
    alone, to a call scheduled after the fusion that ran next."""
    sched = schedules(path)
    runs = {}
    for e in events:
        args = e.get("args", {})
        if e.get("ph") == "X" and args.get("command_buffer"):
            runs.setdefault(args.get("correlation_id"), []).append(e)
    checked = 0
    for corr, evs in runs.items():
        last = {}
        for e in sorted(evs, key=lambda e: e["ts"]):
            pos, looped = sched.get(str(e["args"].get("program_id")), ({}, set()))
            at = pos.get(e["args"].get("hlo_op"))
            if not at or at[0] in looped:
                continue
            assert at[1] >= last.get(at[0], -1), (corr, e["name"], e["args"]["hlo_op"], at, last)
            last[at[0]] = at[1]
            checked += 1
    assert checked > 100, checked


def test_maxtext():
    root = os.path.join(FIXTURES, MAXTEXT)
    if not FIXTURES or not os.path.isdir(root):
        print("skip: %s not found" % root)
        return
    s = Server(root)
    try:
        path = list(s.ids)[0]
        rows = s.rows(path, "hlo_stats")
        assert not [r for r in rows if r["hlo_op_name"].startswith("command_buffer")]
        assert not [r for r in rows if (r["tf_op_name"] or "").startswith("XlaModule:")]
        program = [r for r in rows if r["program_id"] == "18566"]
        total = sum(r["total_time"] for r in program)
        unplaced = sum(r["total_time"] for r in program if r["hlo_op_name"] == "unattributed")
        print("jax-maxtext jit_train_step(18566): %.1f%% of %.1f us unattributed"
              % (100 * unplaced / total, total))
        assert total > 0 and unplaced < 0.02 * total, (unplaced, total)
        check_compile_apart(s, root, path, rows)
        check_schedule_order(extracted_trace(root), os.path.join(root, path))
    finally:
        s.close()


def ps(us):
    return round(float(us) * 1e6)


def check_compile_apart(s, root, path, rows):
    """The first compile's GEMM autotuning (redzone checks, comparisons, the
    candidate GEMMs of one-fusion modules, their copies) is left out of the
    HLO tools as /kernels leaves it out, and counted apart to the ps."""
    train = {r["program_id"] for r in rows if r["hlo_module"] == "jit_train_step"}
    apart_n = apart_ps = 0
    for kind in ("kernel", "memcpy", "memset"):
        status, k = get(s.port, "/api/profiles/%s/kernels?kind=%s&compile=include"
                        % (s.ids[path], kind))
        assert status == 200, (kind, status)
        apart_n += k["compile"]["count"]
        apart_ps += ps(k["compile"]["us"])
    assert apart_n > 0
    for tool in ("hlo_stats", "op_profile", "roofline_model"):
        p = s.props(path, tool)
        assert int(p["compile_excluded_events"]) == apart_n, (tool, p, apart_n)
        assert ps(p["compile_excluded_us"]) == apart_ps, (tool, p, apart_ps)
        top = [r for r in s.rows(path, tool) if r.get("level", 3) == 3][:10]
        assert top and all(r["program_id"] in train for r in top), (tool, top)
    raw_ps = sum(d for _, evs in device_lines(os.path.join(root, path), "/device:GPU:")
                 for _, d, _, _ in evs)
    p = s.props(path, "hlo_stats")
    got = sum(ps(r["total_time"]) for r in rows) + ps(p.get("unattributed_time_us", 0))
    assert got + ps(p["compile_excluded_us"]) == raw_ps, (got, p, raw_ps)


# ---- a hand-built capture ----

def _varint(v):
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        out.append(b | (0x80 if v else 0))
        if not v:
            return bytes(out)


def _f(num, value):
    """One protobuf field: an int (varint) or bytes/str (length-delimited)."""
    if isinstance(value, int):
        return _varint(num << 3) + _varint(value)
    if isinstance(value, str):
        value = value.encode()
    return _varint(num << 3 | 2) + _varint(len(value)) + value


def _instr(name, opcode, iid, operands=(), called=(), target=None):
    body = _f(1, name) + _f(2, opcode) + _f(35, iid)
    body += b"".join(_f(36, o) for o in operands) + b"".join(_f(38, c) for c in called)
    if target:
        body += _f(28, target)  # custom_call_target
    return _f(2, body)


def _hlo_proto(attention=False):
    entry = _f(1, "main") + _f(5, 1) + _instr("p.1", "parameter", 9) + \
        _instr("fusion.1", "fusion", 10, [9], [2]) + \
        _instr("custom-call.1", "custom-call", 11, [10], target="__cublas$lt$matmul")
    if attention:  # reads fusion.1 like the GEMM, and the GEMM's result
        entry += _instr("attention_bwd.1", "custom-call", 12, [10, 11],
                        target="__cudnn$fmhaSoftmaxBackward") + \
            _instr("fusion.2", "fusion", 13, [12], [3]) + _f(6, 13)
    else:
        entry += _instr("fusion.2", "fusion", 12, [11], [3]) + _f(6, 12)
    fused_a = _f(1, "fused_a") + _f(5, 2) + _instr("add.1", "add", 20)
    fused_b = _f(1, "fused_b") + _f(5, 3) + _instr("multiply.1", "multiply", 30)
    module = _f(1, "jit_f") + _f(3, entry) + _f(3, fused_a) + _f(3, fused_b) + _f(6, 1)
    return _f(1, module)


def _meta(field, mid, name, stats=b""):
    return _f(field, _f(1, mid) + _f(2, _f(1, mid) + _f(2, name) + stats))


def _stat(mid, field, value):
    return _f(4, _f(1, mid) + _f(field, value))


def _fused_computations(*specs):
    """Module fields of fused computations, each (name, id, opcode) holding
    one instruction, its root: fusions calling the same opcode are
    identical."""
    return b"".join(_f(3, _f(1, name) + _f(5, cid) + _instr(op + ".%d" % cid, op, 40 + cid) +
                       _f(6, 40 + cid)) for name, cid, op in specs)


def _two_loops_proto():
    """main runs two loops; body_a's fusion.1 and body_b's fusion.2 are
    identical (one reuse group, one kernel, fusion_1); fusion.4 is body_b's
    alone. No data link joins fusion.2 and fusion.4."""
    entry = _f(1, "main") + _f(5, 1) + _instr("p.1", "parameter", 9) + \
        _instr("while.1", "while", 10, [9], [2]) + _instr("while.2", "while", 11, [10], [3]) + \
        _f(6, 11)
    body_a = _f(1, "body_a") + _f(5, 2) + _instr("p.2", "parameter", 20) + \
        _instr("fusion.1", "fusion", 21, [20], [4]) + _f(6, 21)
    body_b = _f(1, "body_b") + _f(5, 3) + _instr("p.3", "parameter", 30) + \
        _instr("fusion.2", "fusion", 31, [30], [5]) + \
        _instr("fusion.4", "fusion", 32, [30], [6]) + _f(6, 32)
    fused = _fused_computations(("fused_1", 4, "add"), ("fused_2", 5, "add"),
                                ("fused_4", 6, "multiply"))
    module = _f(1, "jit_f") + _f(3, entry) + _f(3, body_a) + _f(3, body_b) + fused + _f(6, 1)
    return _f(1, module)


def _space(kernels=("fusion_1", "nvjet_sm90_gemm", "fusion_2", "mystery_kernel"),
           attention=False, proto=None, ops=None, details=False):
    """ops: each kernel's hlo_op (default: all in command_buffer_1);
    details: kernel_details on each, which makes them kernels to /kernels
    and the HLO tools, not other device events."""
    HLO, CORR, OP, PROG, TF_OP, KD = 70, 1, 2, 3, 4, 5
    proto = proto or _hlo_proto(attention)
    metadata = _f(2, "/host:metadata") + \
        _meta(4, 5, "jit_f(42)", _f(5, _f(1, HLO) + _f(6, proto))) + \
        _meta(5, HLO, "Hlo Proto")
    gpu = _f(1, 1) + _f(2, "/device:GPU:0")
    line = _f(1, 14) + _f(2, "Stream #14(Compute)") + _f(3, 1000)
    for i, name in enumerate(kernels):
        # the event's own correlation id wins over its metadata's (two passes
        # over the execution that disagreed on it once aborted the reader)
        gpu += _meta(4, 100 + i, name, _f(5, _f(1, CORR) + _f(3, 99)))
        ev = _f(1, 100 + i) + _f(2, i * 10000) + _f(3, 5000) + _stat(CORR, 3, 18)
        ev += _stat(OP, 5, ops[i] if ops else "command_buffer_1") + _stat(PROG, 3, 42)
        ev += _stat(TF_OP, 5, "XlaModule:")  # as JAX on GPU writes it
        line += _f(4, ev + (_stat(KD, 5, "regs:32 grid:1,1,1 block:128,1,1") if details else b""))
    gpu += _f(3, line)
    for mid, name in ((CORR, "correlation_id"), (OP, "hlo_op"), (PROG, "program_id"),
                      (TF_OP, "tf_op"), (KD, "kernel_details")):
        gpu += _meta(5, mid, name)
    return _f(1, metadata) + _f(1, gpu)


def _extracted_events(root, env=None):
    """[(name, args)] of the extracted kernels, in time order."""
    out = tmpdir()
    proc = subprocess.run([BIN, "--profile-dir=" + root, "--extract=" + out, "--quiet",
                           "--db=" + os.path.join(tmpdir(), "i.sqlite")],
                          capture_output=True, text=True, timeout=120,
                          env=dict(os.environ, **(env or {})))
    assert proc.returncode == 0, proc.stderr
    path = glob.glob(os.path.join(out, "**", "*.json"), recursive=True)[0]
    events = json.load(open(path))
    events = events["traceEvents"] if isinstance(events, dict) else events
    return [(e["name"], e.get("args", {})) for e in sorted(
        (e for e in events if e.get("ph") == "X" and e.get("args", {}).get("program_id") is not None),
        key=lambda e: e["ts"])]


def _extracted_ops(root, env=None):
    return dict(_extracted_events(root, env))


def _write_space(kernels, proto):
    root = tmpdir()
    run = os.path.join(root, "plugins", "profile", "2026_01_01_00_00_00")
    os.makedirs(run)
    with open(os.path.join(run, "h.xplane.pb"), "wb") as f:
        f.write(_space(kernels, proto=proto))
    return root


def test_crafted_graph():
    root = tmpdir()
    run = os.path.join(root, "plugins", "profile", "2026_01_01_00_00_00")
    os.makedirs(run)
    with open(os.path.join(run, "h.xplane.pb"), "wb") as f:
        f.write(_space())
    got = _extracted_ops(root)
    want = {"fusion_1": "fusion.1", "nvjet_sm90_gemm": "custom-call.1", "fusion_2": "fusion.2",
            "mystery_kernel": "unattributed"}
    assert {k: v.get("hlo_op") for k, v in got.items()} == want, got
    assert all(v.get("command_buffer") == "command_buffer_1" and v.get("correlation_id") == 18
               for v in got.values()), got
    off = _extracted_ops(root, {"XPV_ATTRIBUTION": "off"})
    assert {v.get("hlo_op") for v in off.values()} == {"command_buffer_1"}, off


def test_crafted_opcode_category():
    """A Pallas kernel's op (a custom-call whose name says nothing) takes its
    category from its module's opcode; an op its module lacks stays
    "other"; an op without a JAX op has no framework op, not the
    "XlaModule:" every GPU kernel carries."""
    entry = _f(1, "main") + _f(5, 1) + _instr("p.1", "parameter", 9) + \
        _instr("pallas_call.1", "custom-call", 10, [9], target="__gpu$xla.gpu.triton") + _f(6, 10)
    proto = _f(1, _f(1, "jit_f") + _f(3, entry) + _f(6, 1))
    root = tmpdir()
    run = os.path.join(root, "plugins", "profile", "2026_01_01_00_00_00")
    os.makedirs(run)
    with open(os.path.join(run, "h.xplane.pb"), "wb") as f:
        f.write(_space(("kernel", "mystery_kernel"), proto=proto,
                       ops=("pallas_call.1", "strange_op.1"), details=True))
    s = Server(root)
    try:
        rows = {r["hlo_op_name"]: r for r in s.rows(list(s.ids)[0], "hlo_stats")}
    finally:
        s.close()
    assert rows["pallas_call.1"]["category"] == "custom-call", rows
    assert rows["strange_op.1"]["category"] == "other", rows
    assert all(r["tf_op_name"] is None for r in rows.values()), rows


ATTENTION_BWD = ("Memset 0", "void cudnn::fusion::compute_dot_do_o_specialized<true, 64>()",
                 "cudnn_generated_fort_native_sdpa_sm90_flash_bprop_wgmma_f16_knob_26",
                 "void cudnn::fusion::convert_dq_to_16bits<true>()")


def test_crafted_attention():
    """cuDNN's fused attention backward is one call of three kernels and a
    memset, right after a cuBLAS GEMM that reads what it reads: the GEMM's
    kernel goes to the GEMM (never to fused attention, whose kernels all
    say cuDNN), the four events to the attention call."""
    root = tmpdir()
    run = os.path.join(root, "plugins", "profile", "2026_01_01_00_00_00")
    os.makedirs(run)
    kernels = ("fusion_1", "nvjet_sm90_gemm") + ATTENTION_BWD + ("fusion_2",)
    with open(os.path.join(run, "h.xplane.pb"), "wb") as f:
        f.write(_space(kernels, attention=True))
    got = {k: v.get("hlo_op") for k, v in _extracted_ops(root).items() if k in kernels}
    want = dict({k: "attention_bwd.1" for k in ATTENTION_BWD}, fusion_1="fusion.1",
                fusion_2="fusion.2", nvjet_sm90_gemm="custom-call.1")
    assert got == want, got


def test_crafted_scope():
    """A graph of body_b's loop runs fusion_4, named after body_b's fusion.4
    alone, and fusion_1, the kernel body_a's fusion.1 and body_b's fusion.2
    share: a graph's commands come from one computation, so fusion_1 is
    fusion.2's here, although it is named after fusion.1 and no data link
    says so (once it went to fusion.1 by name order)."""
    root = _write_space(("fusion_4", "fusion_1"), _two_loops_proto())
    got = {k: v.get("hlo_op") for k, v in _extracted_ops(root).items()
           if k in ("fusion_1", "fusion_4")}
    assert got == {"fusion_4": "fusion.4", "fusion_1": "fusion.2"}, got


def _loop_in_graph_proto():
    """main's fusion.1 and its loop body's fusion.4 are identical (kernel
    fusion_1); the body's fusion.3 is alone."""
    entry = _f(1, "main") + _f(5, 1) + _instr("p.1", "parameter", 9) + \
        _instr("fusion.1", "fusion", 10, [9], [4]) + \
        _instr("while.1", "while", 11, [10], [2]) + _f(6, 11)
    body = _f(1, "body") + _f(5, 2) + _instr("p.2", "parameter", 20) + \
        _instr("fusion.3", "fusion", 21, [20], [6]) + \
        _instr("fusion.4", "fusion", 22, [21], [5]) + _f(6, 22)
    fused = _fused_computations(("fused_1", 4, "add"), ("fused_4", 5, "add"),
                                ("fused_3", 6, "multiply"))
    return _f(1, _f(1, "jit_f") + _f(3, entry) + _f(3, body) + fused + _f(6, 1))


def test_crafted_loop_in_graph():
    """A graph that holds main's fusion.1 and then its loop (a while inside
    the command buffer, two trips) names only the body's fusion.3 alone:
    the scope reaches up to main, so the first fusion_1 stays main's (once
    all went to the body's fusion.4), and the body's fusion.4 runs the
    reused kernel on each trip."""
    root = _write_space(("fusion_1", "fusion_3", "fusion_1", "fusion_3", "fusion_1"),
                        _loop_in_graph_proto())
    got = [(k, v.get("hlo_op")) for k, v in _extracted_events(root)]
    assert got == [("fusion_1", "fusion.1"), ("fusion_3", "fusion.3"), ("fusion_1", "fusion.4"),
                   ("fusion_3", "fusion.3"), ("fusion_1", "fusion.4")], got


def _conv_proto():
    entry = _f(1, "main") + _f(5, 1) + _instr("p.1", "parameter", 9) + \
        _instr("fusion.1", "fusion", 10, [9], [2]) + \
        _instr("conv.1", "custom-call", 11, [10], target="__cudnn$convForward") + \
        _instr("gemm.1", "custom-call", 12, [11], target="__cublas$gemm") + \
        _instr("fusion.2", "fusion", 13, [12], [3]) + _f(6, 13)
    fused_a = _f(1, "fused_a") + _f(5, 2) + _instr("add.1", "add", 20)
    fused_b = _f(1, "fused_b") + _f(5, 3) + _instr("multiply.1", "multiply", 30)
    return _f(1, _f(1, "jit_f") + _f(3, entry) + _f(3, fused_a) + _f(3, fused_b) + _f(6, 1))


def test_crafted_convolution():
    """A cuDNN convolution whose engine does not say cuDNN (layout helpers
    around an sm80_xmma kernel), then a GEMM: the gap is not split at the
    helpers (the engine once went to the GEMM), so nothing lands on a call
    that did not run it."""
    kernels = ("fusion_1", "void cudnn::ops::nchwToNhwcKernel<float>()",
               "sm80_xmma_fprop_implicit_gemm_f32", "void cudnn::ops::nhwcToNchwKernel<float>()",
               "nvjet_sm90_gemm", "fusion_2")
    got = {k: v.get("hlo_op") for k, v in _extracted_events(_write_space(kernels, _conv_proto()))}
    right = dict({k: "conv.1" for k in kernels[1:4]}, nvjet_sm90_gemm="gemm.1")
    wrong = {k: op for k, op in got.items() if k in right and op not in (right[k], "unattributed")}
    assert not wrong and got["fusion_1"] == "fusion.1" and got["fusion_2"] == "fusion.2", got


def _copies_proto():
    """main loops over body, which slices two stacked weights (each slice
    an async-start around a dynamic-slice fusion, as a scan does) and then
    runs fusion.5 on both. The schedule runs fusion-start.2 first, against
    the instruction order."""
    entry = _f(1, "main") + _f(5, 1) + _instr("p.1", "parameter", 9) + \
        _instr("while.1", "while", 10, [9], [2]) + _f(6, 10)
    body = _f(1, "body") + _f(5, 2) + _instr("p.2", "parameter", 20) + \
        _instr("fusion-start.1", "async-start", 21, [20], [3]) + \
        _instr("fusion-done.1", "async-done", 22, [21]) + \
        _instr("fusion-start.2", "async-start", 23, [20], [4]) + \
        _instr("fusion-done.2", "async-done", 24, [23]) + \
        _instr("fusion.5", "fusion", 25, [22, 24], [7]) + _f(6, 25)
    wrapped = b"".join(
        _f(3, _f(1, "async_%d" % k) + _f(5, 2 + k) + _instr("pa.%d" % k, "parameter", 30 + k) +
           _instr("loop_dynamic_slice_fusion.%d" % k, "fusion", 32 + k, [30 + k], [4 + k]) +
           _f(6, 32 + k)) for k in (1, 2))
    fused = _fused_computations(("fused_ds1", 5, "dynamic-slice"),
                                ("fused_ds2", 6, "dynamic-slice"), ("fused_mul", 7, "multiply"))
    schedule = _schedule((2, (20, 23, 24, 21, 22, 25)))
    return _f(1, _f(1, "jit_f") + _f(3, entry) + _f(3, body) + wrapped + fused + _f(6, 1) +
              schedule)


def test_crafted_graph_copies():
    """CUDA runs a graph's memcpy nodes as its own kernels (memcpy128,
    memcpy32_post), named after no instruction, or the profiler records
    them as copies (MemcpyD2D): each is one of the body's copies, in the
    order the schedule runs them (once all unattributed).
    Three memcpy kernels for two copies pair up with nothing, and stay
    unattributed rather than guessed."""
    def placed(kernels):
        events = _extracted_events(_write_space(kernels, _copies_proto()))
        return [(k, v.get("hlo_op")) for k, v in events if k in kernels]

    got = placed(("memcpy32_post", "memcpy128", "fusion_5"))
    assert got == [("memcpy32_post", "loop_dynamic_slice_fusion.2"),
                   ("memcpy128", "loop_dynamic_slice_fusion.1"), ("fusion_5", "fusion.5")], got
    got = placed(("memcpy128",) * 3 + ("fusion_5",))
    assert got == [("memcpy128", "unattributed")] * 3 + [("fusion_5", "fusion.5")], got
    # the profiler may record the nodes as copies instead (MemcpyD2D, seen
    # in a capture of the same scan on an H100): the same rule places them
    got = placed(("MemcpyD2D", "MemcpyD2D", "fusion_5"))
    assert got == [("MemcpyD2D", "loop_dynamic_slice_fusion.2"),
                   ("MemcpyD2D", "loop_dynamic_slice_fusion.1"), ("fusion_5", "fusion.5")], got


ORDER_OPS = (("fusion.1", "multiply"), ("fusion.2", "add"), ("fusion.3", "subtract"),
             ("fusion.4", "add"), ("fusion.5", "divide"), ("custom-call.1", None),
             ("fusion.6", "negate"), ("custom-call.2", None), ("fusion.7", "maximum"))


def _order_proto(ops=ORDER_OPS, order=(0, 3, 2, 1, 4, 5, 6, 7, 8)):
    """main runs ops (name, fused opcode, or None for a cuBLAS call), the
    k-th scheduled being ops[order[k]]: fusions of one opcode are
    identical (one kernel, named after the first), and no data link joins
    anything (all read p.1)."""
    entry = _f(1, "main") + _f(5, 1) + _instr("p.1", "parameter", 9)
    fused = b""
    for k, (name, op) in enumerate(ops):
        if op:
            entry += _instr(name, "fusion", 100 + k, [9], [1000 + k])
            fused += _fused_computations(("fused_%d" % k, 1000 + k, op))
        else:
            entry += _instr(name, "custom-call", 100 + k, [9], target="__cublas$gemm")
    entry += _f(6, 100 + len(ops) - 1)
    schedule = _schedule((1, (9,) + tuple(100 + k for k in order)))
    return _f(1, _f(1, "jit_f") + _f(3, entry) + fused + _f(6, 1) + schedule)


def _placed(kernels, proto):
    return [(k, v.get("hlo_op")) for k, v in _extracted_events(_write_space(kernels, proto))
            if k in kernels]


def test_crafted_schedule_order():
    """A graph runs its commands in schedule order, so a kernel between two
    placed ones ran an instruction scheduled between them: the first
    fusion_2 is fusion.4's (name order gave it to fusion.2, the one it is
    named after), the second fusion.2's; and each cuBLAS kernel goes to the
    one call scheduled between its neighbours, which no data link told
    apart (both were unattributed). Then calls and reused kernels that
    alternate, with nothing placed between them, fusion.3 scheduled before
    fusion.2: only matching the whole run to the schedule in order places
    them (name order gave the first fusion_2 to fusion.2)."""
    kernels = ("fusion_1", "fusion_2", "fusion_3", "fusion_2", "fusion_5", "nvjet_sm90_a",
               "fusion_6", "nvjet_sm90_b", "fusion_7")
    want = ["fusion.1", "fusion.4", "fusion.3", "fusion.2", "fusion.5", "custom-call.1",
            "fusion.6", "custom-call.2", "fusion.7"]
    got = _placed(kernels, _order_proto())
    assert got == list(zip(kernels, want)), got
    ops = (("fusion.1", "multiply"), ("custom-call.1", None), ("fusion.2", "add"),
           ("custom-call.2", None), ("fusion.3", "add"), ("fusion.4", "divide"))
    kernels = ("fusion_1", "nvjet_sm90_a", "fusion_2", "nvjet_sm90_a", "fusion_2", "fusion_4")
    got = _placed(kernels, _order_proto(ops, (0, 1, 4, 3, 2, 5)))
    want = ["fusion.1", "custom-call.1", "fusion.3", "custom-call.2", "fusion.2", "fusion.4"]
    assert [op for _, op in got] == want, got
    # eight identical layers of six fusions and a cuBLAS call, one fusion
    # of each layer its own: every kernel in place (name order and data
    # links once left most of them unattributed)
    ops, kernels = [], []
    for layer in range(8):
        for f in range(6):
            ops.append(("fusion.%d" % len(ops), "layer%d" % layer if f == 0 else "op%d" % f))
            kernels.append("fusion_%d" % (len(ops) - 1 if f == 0 else f))
        ops.append(("custom-call.%d" % layer, None))
        kernels.append("nvjet_sm90_a")
    ops.append(("fusion.%d" % len(ops), "last"))
    kernels.append("fusion_%d" % (len(ops) - 1))
    got = _placed(tuple(kernels), _order_proto(tuple(ops), tuple(range(len(ops)))))
    assert [op for _, op in got] == [name for name, _ in ops], got


def _schedule(*sequences):
    """HloModuleProto.schedule: (computation id, instruction ids) each."""
    return _f(7, b"".join(_f(1, _f(1, cid) + _f(2, b"".join(_f(1, i) for i in ids)))
                          for cid, ids in sequences))


def _module(entry, *others, fused=(), sched=()):
    """A module of computations (main's id 1), fused computations (id,
    opcode) of one instruction each, and a schedule."""
    return _f(1, _f(1, "jit_f") + _f(3, entry) + b"".join(_f(3, c) for c in others) +
              _fused_computations(*(("f%d" % cid, cid, op) for cid, op in fused)) + _f(6, 1) +
              _schedule(*sched))


def _limits_protos(done_lists_callee=False):
    """Modules where the schedule must not decide alone: (1) a cuBLAS call
    wrapped in an async-start, beside an all-reduce whose kernel runs on
    its own stream; (2) a reduction whose init memset no call ran, beside
    an all-gather; (3) a lone cuBLAS call, beside which a memcpy kernel ran;
    (4) two identical fusions, one scheduled before a cuBLAS call and one
    in a loop after, whose call the data links place."""
    module = _module
    main = _f(1, "main") + _f(5, 1) + _instr("p.1", "parameter", 9)
    wrapped = module(main + _instr("fusion.1", "fusion", 10, [9], [101]) +
                     _instr("gemm-start.1", "async-start", 11, [10], [4]) +
                     _instr("gemm-done.1", "async-done", 12, [11],
                            [4] if done_lists_callee else []) +
                     _instr("all-reduce-start.1", "all-reduce-start", 13, [10]) +
                     _instr("all-reduce-done.1", "all-reduce-done", 14, [13]) +
                     _instr("fusion.2", "fusion", 15, [12, 14], [102]) + _f(6, 15),
                     _f(1, "async_gemm") + _f(5, 4) + _instr("pa.1", "parameter", 40) +
                     _instr("custom-call.1", "custom-call", 41, [40], target="__cublas$gemm") +
                     _f(6, 41), fused=((101, "multiply"), (102, "add")),
                     sched=((1, (9, 10, 11, 12, 13, 14, 15)), (4, (40, 41))))
    memset = module(main + _instr("fusion.1", "fusion", 10, [9], [101]) +
                    _instr("all-gather-start.1", "all-gather-start", 11, [9]) +
                    _instr("all-gather-done.1", "all-gather-done", 12, [11]) +
                    _instr("reduce_fusion.1", "fusion", 13, [10], [102]) +
                    _instr("fusion.3", "fusion", 14, [12, 13], [103]) + _f(6, 14),
                    fused=((101, "multiply"), (102, "reduce"), (103, "add")),
                    sched=((1, (9, 10, 11, 12, 13, 14)),))
    lone = module(main + _instr("fusion.1", "fusion", 10, [9], [101]) +
                  _instr("custom-call.1", "custom-call", 11, [9], target="__cublas$gemm") +
                  _instr("fusion.2", "fusion", 12, [10, 11], [102]) + _f(6, 12),
                  fused=((101, "multiply"), (102, "add")), sched=((1, (9, 10, 11, 12)),))
    looped = module(main + _instr("fusion.1", "fusion", 10, [9], [101]) +
                    _instr("while.0", "while", 11, [10], [2]) +
                    _instr("fusion.3", "fusion", 12, [9], [103]) +
                    _instr("custom-call.1", "custom-call", 13, [12], target="__cublas$gemm") +
                    _instr("fusion.4", "fusion", 14, [13], [104]) +
                    _instr("while.1", "while", 15, [14], [3]) + _f(6, 15),
                    _f(1, "body0") + _f(5, 2) + _instr("p.2", "parameter", 20) +
                    _instr("fusion.6", "fusion", 21, [20], [106]) + _f(6, 21),
                    _f(1, "body1") + _f(5, 3) + _instr("p.3", "parameter", 30) +
                    _instr("fusion.5", "fusion", 31, [30], [105]) +
                    _instr("fusion.2", "fusion", 32, [30], [102]) + _f(6, 32),
                    fused=((101, "multiply"), (102, "add"), (103, "add"), (104, "divide"),
                           (105, "maximum"), (106, "negate")),
                    sched=((1, (9, 10, 11, 12, 13, 14, 15)), (2, (20, 21)), (3, (30, 31, 32))))
    return wrapped, memset, lone, looped


def test_crafted_schedule_limits():
    """What the schedule alone must not decide (each once went wrong in
    development, found by a review): a wrapped call counts at its
    async-start's place, and a collective's kernels run on a stream of
    their own, so a cuBLAS kernel beside an all-reduce goes to the wrapped
    call, and a reduction's memset to no collective; a memcpy kernel goes
    to no cuBLAS call; and a call's wait for the kernels beside it does
    not hand a reused kernel to name order (fusion_2 first ran fusion.3),
    nor go by its data links before elimination has placed its neighbour."""
    wrapped, memset, lone, looped = _limits_protos()
    for proto in (wrapped, _limits_protos(done_lists_callee=True)[0]):  # XLA versions differ
        got = _placed(("fusion_1", "nvjet_sm90_gemm", "fusion_2"), proto)
        assert got[1] == ("nvjet_sm90_gemm", "custom-call.1"), got
    got = _placed(("fusion_1", "Memset (Device)", "reduce_fusion_1", "fusion_3"), memset)
    assert got[1] == ("Memset (Device)", "unattributed"), got
    got = _placed(("fusion_1", "Memset (Device)", "memcpy128", "fusion_2"), lone)
    assert got[1:3] == [("Memset (Device)", "unattributed"), ("memcpy128", "unattributed")], got
    kernels = ("fusion_1", "fusion_6", "fusion_2", "nvjet_sm90_gemm", "fusion_4", "fusion_5",
               "fusion_2")
    got = [op for _, op in _placed(kernels, looped)]
    assert got == ["fusion.1", "fusion.6", "fusion.3", "custom-call.1", "fusion.4", "fusion.5",
                   "fusion.2"], got
    # elimination places the second fusion_2 (fusion.7) before the waiting
    # call beside it is left to its data links, which point far away
    fill = tuple(("fusion.%d" % (30 + k), "fusion", 30 + k, 130 + k) for k in range(6))
    main = _f(1, "main") + _f(5, 1) + _instr("p.1", "parameter", 9) + \
        _instr("custom-call.2", "custom-call", 10, [9], target="__cublas$gemm") + \
        _instr("fusion.1", "fusion", 11, [9], [101]) + _instr("fusion.2", "fusion", 12, [11], [102]) + \
        _instr("fusion.3", "fusion", 13, [12], [103]) + \
        b"".join(_instr(name, op, iid, [9], [cid]) for name, op, iid, cid in fill) + \
        _instr("while.0", "while", 14, [13], [2]) + _instr("fusion.7", "fusion", 15, [9], [107]) + \
        _instr("custom-call.1", "custom-call", 16, [15], target="__cublas$gemm") + \
        _instr("fusion.4", "fusion", 17, [10], [104]) + _instr("fusion.5", "fusion", 18, [16], [105]) + \
        _f(6, 18)
    body = _f(1, "body0") + _f(5, 2) + _instr("p.2", "parameter", 20) + \
        _instr("fusion.6", "fusion", 21, [20], [106]) + _f(6, 21)
    fills = ("sine", "cosine", "exponential", "log", "tanh", "sqrt")
    proto = _module(main, body, fused=((101, "multiply"), (102, "add"), (103, "maximum"),
                                       (104, "divide"), (105, "subtract"), (106, "negate"),
                                       (107, "add")) + tuple((130 + k, fills[k]) for k in range(6)),
                    sched=((1, (9, 10, 11, 12, 13) + tuple(range(30, 36)) + (14, 15, 16, 17, 18)),
                           (2, (20, 21))))
    kernels = ("nvjet_sm90_gemm", "fusion_1", "fusion_2", "fusion_3") + \
        tuple("fusion_%d" % (30 + k) for k in range(6)) + \
        ("fusion_6", "fusion_2", "nvjet_sm90_gemm", "fusion_4", "fusion_5")
    got = [o for _, o in _placed(kernels, proto)]
    assert got[-5:] == ["fusion.6", "fusion.7", "custom-call.1", "fusion.4", "fusion.5"], got
    # a branch or a called computation runs once: its calls are still
    # placed by the schedule (a loop's body may run twice in one graph)
    for op in ("conditional", "call"):
        main = _f(1, "main") + _f(5, 1) + _instr("p.1", "parameter", 9) + \
            _instr("fusion.1", "fusion", 10, [9], [101]) + \
            _instr(op + ".1", op, 11, [10], [2, 3] if op == "conditional" else [2]) + \
            _instr("fusion.2", "fusion", 12, [11], [102]) + _f(6, 12)
        branch = _f(1, "branch") + _f(5, 2) + _instr("p.2", "parameter", 20) + \
            _instr("fusion.3", "fusion", 21, [20], [103]) + \
            _instr("custom-call.1", "custom-call", 22, [20], target="__cublas$gemm") + \
            _instr("fusion.4", "fusion", 23, [20], [104]) + \
            _instr("custom-call.2", "custom-call", 24, [20], target="__cublas$gemm") + \
            _instr("fusion.5", "fusion", 25, [20], [105]) + _f(6, 25)
        other = _f(1, "branch2") + _f(5, 3) + _instr("p.3", "parameter", 30) + _f(6, 30)
        proto = _module(main, branch, other, fused=((101, "multiply"), (102, "add"),
                                                    (103, "negate"), (104, "maximum"),
                                                    (105, "divide")),
                        sched=((1, (9, 10, 11, 12)), (2, (20, 21, 22, 23, 24, 25)), (3, (30,))))
        kernels = ("fusion_1", "fusion_3", "nvjet_sm90_gemm", "fusion_4", "nvjet_sm90_gemm",
                   "fusion_5", "fusion_2")
        got = [o for _, o in _placed(kernels, proto)]
        assert got == ["fusion.1", "fusion.3", "custom-call.1", "fusion.4", "custom-call.2",
                       "fusion.5", "fusion.2"], (op, got)


if __name__ == "__main__":
    main([test_crafted_graph, test_crafted_opcode_category, test_crafted_attention,
          test_crafted_scope,
          test_crafted_loop_in_graph, test_crafted_convolution, test_crafted_graph_copies,
          test_crafted_schedule_order, test_crafted_schedule_limits, test_command_buffer_pair,
          test_maxtext])
