#!/usr/bin/env python3
"""test_tool_hlo_derived.py: FLOPs and bytes the HLO tools (hlo_stats,
op_profile, roofline_model) derive from the compiled modules' shapes on GPU
profiles, whose ops carry no flops stats, and the GPU roofline's peaks.

Checked against an independent reading of the raw xplane.pb written here:
the `Hlo Proto` of /host:metadata decoded field by field, each op's FLOPs
per execution computed from its shapes (dot: 2 x result elements x
contracted lhs dimensions; cuBLAS GEMM calls: the same with the contracting
dimensions of their backend_config JSON; cuDNN/MIOpen convolutions: 2 x
output elements x kernel spatial sizes x kernel input features; fusions:
the sum over their called computations, nested fusions included), its
executions counted from the GPU planes' kernels (per stream, the launches
of its least-launched kernel name), and bytes as operand plus result sizes. On the
MI300X fixtures (a __cublas$gemm, a Triton GEMM fusion holding a dot, a
__cudnn$convForward launching two kernels per execution) and on a
generated profile whose module holds batched GEMM calls and fusions with
nested dots, on an H100-like device plane whose FP32 peak comes from the
CUDA C++ Programming Guide's rate for compute capability 9.0. Skips (77)
without ../shared/fixtures or the generator."""
import json
import os
import subprocess
import sys
from collections import Counter, defaultdict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from xpv_e2e import BIN, FIXTURES, GEN, SKIP, main, tmpdir, wait_indexed  # noqa: E402
from test_memory import hlo_protos, ints, msg, txt  # noqa: E402
from test_tool_hlo import Server, by_op, close, device_lines, free_port, get, plane_stats  # noqa
from test_xplane import signed64  # noqa: E402

GEMM = "jax-rocm-mi300x-gemm.xplane.pb"
CONV = "jax-rocm-mi300x-conv-8gpu.xplane.pb"

# Bytes per element of xla.PrimitiveType (xla_data.proto); sub-byte types
# and non-arrays have none.
WIDTH = {1: 1, 2: 1, 3: 2, 4: 4, 5: 8, 6: 1, 7: 2, 8: 4, 9: 8, 10: 2, 11: 4, 12: 8, 15: 8,
         16: 2, 18: 16, 19: 1, 20: 1, 23: 1, 24: 1, 25: 1, 28: 1, 29: 1, 33: 1}
GEMM_TARGETS = ("__cublas$gemm", "__cublas$lt$matmul", "__cublas$lt$matmul$f8")
# FP32 results per clock per SM, CUDA C++ Programming Guide (Arithmetic
# Instructions), for the capability the generator's planes state.
FP32_PER_CLOCK_SM = {(9, 0): 128}


# ---- an independent reading of a module ----

def prod(xs):
    p = 1
    for x in xs:
        p *= x
    return p


class Module:
    def __init__(self, proto):
        mod = msg(msg(proto)[1][0])
        self.instrs, self.comps, self.by_name = {}, {}, {}
        for cb in mod[3]:
            c = msg(cb)
            members = []
            for ib in c.get(2, []):
                i = msg(ib)
                iid = signed64(i[35][0])
                self.instrs[iid] = i
                self.by_name[txt(i, 1)] = i
                members.append(i)
            self.comps[signed64(c[5][0])] = members

    @staticmethod
    def shape(i):
        return msg(i[3][0])

    def operand(self, i, k):
        return self.shape(self.instrs[ints(i, 36)[k]])

    @staticmethod
    def result(i):
        s = msg(i[3][0])
        return msg(s[4][0]) if s.get(4) else s  # a library call's first element

    @staticmethod
    def nbytes(s):
        if s.get(4):
            return sum(Module.nbytes(msg(t)) for t in s[4])
        return prod(ints(s, 3)) * WIDTH[s[2][0]]

    def conv(self, i):
        """A library convolution: forward output, kernel, dimension numbers."""
        target, cdn = txt(i, 28), msg(i[16][0])
        if target in ("__cudnn$convForward", "__cudnn$convBiasActivationForward"):
            out, kernel = self.result(i), self.operand(i, 1)
        elif target == "__cudnn$convBackwardInput":
            out, kernel = self.operand(i, 0), self.operand(i, 1)
        else:
            out, kernel = self.operand(i, 1), self.result(i)
        kd = ints(kernel, 3)
        feat = cdn[3][0] if cdn.get(3) else 0
        return 2 * prod(ints(out, 3)) * prod(kd[k] for k in ints(cdn, 6)) * kd[feat]

    def flops(self, i):
        """FLOPs of one execution, None when not derivable."""
        op, target = txt(i, 2), txt(i, 28)
        if op == "dot":
            lhs = ints(self.operand(i, 0), 3)
            return 2 * prod(ints(self.shape(i), 3)) * prod(lhs[k] for k in ints(msg(i[30][0]), 1))
        if op == "custom-call" and target in GEMM_TARGETS:
            cfg = json.loads(i[43][0])["gemm_backend_config"]["dot_dimension_numbers"]
            lhs = ints(self.operand(i, 0), 3)
            k = prod(lhs[int(d)] for d in cfg["lhs_contracting_dimensions"])
            return 2 * prod(ints(self.result(i), 3)) * k
        if op == "custom-call" and target.startswith("__cudnn$conv"):
            return self.conv(i)
        if op == "fusion":
            found = [self.flops(x) for c in ints(i, 38) for x in self.comps[c]]
            found = [f for f in found if f is not None]
            return sum(found) if found else None
        return None

    def io_bytes(self, i):
        out = self.result(i) if txt(i, 2) == "custom-call" else self.shape(i)
        return self.nbytes(out) + sum(self.nbytes(self.operand(i, k))
                                      for k in range(len(ints(i, 36))))


def executions(path):
    """(program id, hlo_op) -> executions: on each line (stream) of the GPU
    planes, the launches of the op's least-launched kernel name there,
    summed over the lines."""
    out = Counter()
    for _, events in device_lines(path, "/device:GPU:"):
        launches = defaultdict(Counter)
        for _, _, name, st in events:
            if "hlo_op" in st:
                launches[(str(st["program_id"]), st["hlo_op"])][name] += 1
        for k, c in launches.items():
            out[k] += min(c.values())
    return out


def derived(path):
    """(program id, hlo_op) -> (flops, bytes) over the profile, None unknown."""
    mods = {str(pid): Module(b) for _, pid, b in hlo_protos(path)}
    out = {}
    for (prog, op), n in executions(path).items():
        m = mods.get(prog)
        i = m.by_name.get(op) if m else None
        f = m.flops(i) if i is not None else None
        out[(prog, op)] = (None, None) if f is None else (f * n, m.io_bytes(i) * n)
    return out


# ---- checks ----

def check_rows(rows, want, flops_col="flops"):
    got = by_op(rows)
    assert set(got) <= set(want), (sorted(got), sorted(want))
    derived_rows = 0
    for key, r in got.items():
        f, b = want[key]
        assert r[flops_col] == f and r["bytes_accessed"] == b, (key, r, f, b)
        assert r["flops_source"] == ("derived" if f is not None else None), (key, r)
        assert r["bytes_source"] == ("derived" if b is not None else None), (key, r)
        derived_rows += f is not None
    return derived_rows


def test_fixture_flops():
    with Server() as s:
        for run, host, name in (("gemm_run", "gemm", GEMM), ("conv_run", "conv", CONV)):
            want = derived(os.path.join(FIXTURES, "xplane", name))
            ans = s.tool(run, host, "hlo_stats")
            assert ans["properties"]["flops_source"] == "derived", ans["properties"]
            assert check_rows(ans["rows"], want) > 0, name
            for r in ans["rows"]:
                if r["flops"] is not None:
                    ps = r["total_time"] * 1e6
                    assert close(r["normalized_flop_rate"], r["flops"] * 1000 / ps), r
                    assert close(r["operational_intensity"], r["flops"] / r["bytes_accessed"])
                else:
                    assert r["normalized_flop_rate"] is None and r["flops_source"] is None, r
        rows = by_op(s.tool("gemm_run", "gemm", "hlo_stats")["rows"])
        # the Triton GEMM fusion holds one bf16[256,256] x [256,256] dot; 3 executions
        assert rows[("5", "gemm_fusion_dot_general.1")]["flops"] == 3 * 2 * 256 ** 3
        # a __cublas$gemm: bf16[8192,4096] x [4096,8192]
        assert rows[("49", "custom-call.1")]["flops"] == 3 * 2 * 8192 * 8192 * 4096
        # broadcasts hold no dot: unknown, not 0
        assert rows[("32", "wrapped_broadcast")]["flops"] is None
        # the convolution launches two kernels per execution: 10 kernels, 5 executions
        conv = by_op(s.tool("conv_run", "conv", "hlo_stats")["rows"])[("15", "cudnn-conv.1.0")]
        per_exec = derived(os.path.join(FIXTURES, "xplane", CONV))[("15", "cudnn-conv.1.0")][0]
        assert conv["occurrences"] == 10 and conv["flops"] == per_exec and per_exec % 5 == 0
        # the HLO module view shows one execution's derived FLOPs of the same instructions
        for prog, name, want in (("49", "custom-call.1", 2 * 8192 * 8192 * 4096),
                                 ("5", "gemm_fusion_dot_general.1", 2 * 256 ** 3)):
            status, ans = get(s.port, "/api/profiles/%s/hlo/%s" % (s.ids[("gemm_run", "gemm")],
                                                                   prog))
            got = [i for c in ans["computations"] for i in c["instructions"] if i["name"] == name]
            assert status == 200 and len(got) == 1 and got[0]["flops"] == want and \
                got[0]["flops_source"] == "derived", (prog, got)


def test_fixture_op_profile_and_roofline():
    stats = plane_stats(os.path.join(FIXTURES, "xplane", GEMM), "/device:GPU:")
    bws = {p["memory_bandwidth"] for p in stats}
    assert len(bws) == 1 and stats[0]["device_vendor"] == "AMD", stats[0]
    with Server() as s:
        for run, host in (("gemm_run", "gemm"), ("conv_run", "conv")):
            rows = s.tool(run, host, "op_profile")["rows"]
            ops = [r for r in rows if r["level"] == 3]
            for g in (r for r in rows if r["level"] < 3):
                kids = [o for o in ops if o["category"] == g["category"] and
                        (g["level"] == 1 or o["program_id"] == g["program_id"])]
                fl = [o["flops"] for o in kids if o["flops"] is not None]
                assert g["flops"] == (sum(fl) if fl else None), (g, kids)
                assert g["flops_source"] == ("derived" if fl else None), g
        status, listed = get(s.port, "/data/plugin/profile/run_tools?run=gemm_run")
        assert status == 200 and "roofline_model" in listed, listed
        want = derived(os.path.join(FIXTURES, "xplane", GEMM))
        ans = s.tool("gemm_run", "gemm", "roofline_model")
        p = ans["properties"]
        assert check_rows(ans["rows"], want) == len(ans["rows"]) > 0
        assert float(p["peak_hbm_bw_gigabytes_per_second"]) == bws.pop() / 1e9, p
        assert p["peak_hbm_bw_gigabytes_per_second_source"].startswith("stated"), p
        # no documented FP32 rate for AMD: no FLOP peak, no roof, and it says why
        assert "peak_teraflops_per_second" not in p and "ridge_point" not in p, p
        assert p["peak_teraflops_per_second_source"].startswith("unknown") and "AMD" in \
            p["peak_teraflops_per_second_source"], p
        assert all(r["roofline_flop_rate"] is None and r["bound_by"] is None
                   for r in ans["rows"])


# ---- a generated profile: nested fusions, batched GEMMs, an NVIDIA peak ----

def generated():
    if not GEN or not os.path.exists(GEN):
        print("SKIP: xpv-gen not built (XPV_GEN)")
        sys.exit(SKIP)
    out = tmpdir()
    subprocess.run([GEN, "--out", out, "--kind", "jax", "--runs", "1", "--hosts", "1",
                    "--devices", "2", "--steps", "3", "--size", "300KB", "--no-json"],
                   check=True, capture_output=True, timeout=300)
    for d, _, files in os.walk(out):
        for f in files:
            if f.endswith(".xplane.pb"):
                return out, os.path.join(d, f)
    raise AssertionError("no xplane generated")


def test_generated_fusions_and_peak():
    root, path = generated()
    want = derived(path)
    mod = Module([b for _, _, b in hlo_protos(path)][0])
    nested = [op for (_, op) in want if "fusion" in op and mod.flops(mod.by_name[op])]
    assert nested and all(mod.flops(mod.by_name[op]) == 2 * (2 * 64 * 64 * 32) for op in nested)
    st = plane_stats(path, "/device:GPU:")[0]
    rate = FP32_PER_CLOCK_SM[(st["compute_cap_major"], st["compute_cap_minor"])]
    peak = st["core_count"] * rate * 2 * st["clock_rate"] * 1000 / 1e12  # TFLOP/s
    bw = st["memory_bandwidth"] / 1e9
    port = free_port()
    proc = subprocess.Popen([BIN, "--profile-dir=" + root, "--port=%d" % port,
                             "--perfetto-port=0", "--db=" + os.path.join(tmpdir(), "i.sqlite"),
                             "--quiet"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_indexed(port)
        _, profiles = get(port, "/api/profiles")
        pid = profiles["profiles"][0]["id"]
        status, ans = get(port, "/api/profiles/%s/tools/hlo_stats" % pid)
        assert status == 200 and check_rows(ans["rows"], want) > len(nested)
        assert all(by_op(ans["rows"])[(k[0], k[1])]["flops"] for k in want if k[1] in nested)
        status, ans = get(port, "/api/profiles/%s/tools/roofline_model" % pid)
        p = ans["properties"]
        assert status == 200 and close(float(p["peak_teraflops_per_second"]), peak), (p, peak)
        assert float(p["peak_hbm_bw_gigabytes_per_second"]) == bw, p
        assert p["peak_teraflops_per_second_source"].startswith("derived") and \
            p["peaks_source"] == "device plane stats and derived", p
        assert close(float(p["ridge_point"]), peak * 1000 / bw)
        assert check_rows(ans["rows"], want) == len(ans["rows"]) > 0
        for r in ans["rows"]:
            oi = r["flops"] / r["bytes_accessed"]
            roof = min(peak * 1000, oi * bw)
            assert close(r["roofline_flop_rate"], roof, 1e-12), (r, roof)
            assert r["bound_by"] == ("Memory" if oi < peak * 1000 / bw else "Compute"), r
            rate_g = r["flops"] * 1000 / (r["total_time"] * 1e6)
            assert close(r["roofline_efficiency_percent"], 100 * rate_g / roof, 1e-9), r
    finally:
        proc.terminate()
        proc.wait(timeout=10)


if __name__ == "__main__":
    if not FIXTURES or not os.path.isdir(FIXTURES):
        print("SKIP: ../shared/fixtures not found (set XPV_FIXTURES); fixture tests skipped")
        sys.exit(SKIP)
    main([test_fixture_flops, test_fixture_op_profile_and_roofline,
          test_generated_fusions_and_peak])
