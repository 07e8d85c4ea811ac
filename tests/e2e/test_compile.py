#!/usr/bin/env python3
"""test_compile.py: compilation inside a capture (gpu/jax-maxtext: the first
compile of the step function in step 0, a recompile in step 4, XLA's GEMM
autotuning kernels on the GPU meanwhile) against an independent reading of
the xplane.pb written here, from the field numbers alone:

  - the compile windows are the union of the host's XLA compile spans
    (backend_compile_and_load, PjRt/PJRT compile, CompileToBackendResult,
    ...), and each step's compile_us is the part of its window they cover:
    steps 0 and 4 compile for seconds, the others not at all;
  - a compile-time kernel is one of XLA's autotuner kernels by name, or a
    kernel inside a compile window without a program_id; the default
    /kernels leaves them all out, names how much in "compile", and
    compile=include adds exactly them (default + compile = with the switch);
  - the findings name steps 0 and 4 as compiled, not as step outliers.

Skips (77) when ../shared/fixtures is absent."""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import xpv_e2e as e2e  # noqa: E402
from test_xplane import fields, signed64  # noqa: E402

RUN = "2026_11_26_15_34_46"
XPLANE = os.path.join("gpu", "jax-maxtext", "plugins", "profile", RUN, "vm.xplane.pb")

SPANS = {"backend_compile", "backend_compile_and_load", "PJRT_Client_Compile",
         "CompileToBackendResult", "CompileSingleModule", "CompileModuleToLlvmIr"}
SPAN_PREFIXES = ("PjRtCApiClient::Compile", "PjRtStreamExecutorClient::Compile")
TUNERS = ("RedzoneAllocatorKernel", "xla_fp_comparison", "DelayKernel", "RepeatBufferKernel")


def is_span(name):
    return name in SPANS or name.startswith(SPAN_PREFIXES)


def is_tuner(name):
    return "stream_executor::gpu::" in name and any(t in name for t in TUNERS)


def metadata(plane_bytes, num):
    """{id: name} of the plane's event (num 4) or stat (num 5) metadata."""
    out = {}
    for n, _, v in fields(plane_bytes):
        if n != num:
            continue
        entry = {k: val for k, _, val in fields(v)}
        meta = {k: val for k, _, val in fields(entry.get(2, b""))}
        out[entry.get(1, 0)] = meta.get(2, b"").decode("utf-8", "replace")
    return out


def events(plane_bytes, keep):
    """(metadata name, start ps, end ps, stat names) of the timed events whose
    metadata name keep() accepts."""
    names, stats = metadata(plane_bytes, 4), metadata(plane_bytes, 5)
    wanted = {i for i, n in names.items() if keep(n)}
    for n, _, line in fields(plane_bytes):
        if n != 3:
            continue
        base = 0
        for k, _, v in fields(line):
            if k == 3:
                base = signed64(v) * 1000
            elif k == 4:
                ev = {}
                st = set()
                for f, _, x in fields(v):
                    if f == 4:
                        st.add(stats.get({a: b for a, _, b in fields(x)}.get(1, 0), ""))
                    else:
                        ev[f] = x
                if 5 in ev or ev.get(1, 0) not in wanted:
                    continue
                start = base + signed64(ev.get(2, 0))
                yield names[ev.get(1, 0)], start, start + ev.get(3, 0), st


def planes(path):
    with open(path, "rb") as f:
        data = f.read()
    for n, _, p in fields(data):
        if n == 1:
            name = {k: v for k, _, v in fields(p) if k == 2}.get(2, b"").decode()
            yield name, p


def union(iv):
    out = []
    for s, e in sorted(iv):
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return out


def covered(windows, s, e):
    return sum(max(0, min(e, b) - max(s, a)) for a, b in windows)


def expected(path):
    """Steps {number: (start, end, compile ps)}, and the kernels' total ps:
    program, compile-time, and the compile-time ones' names."""
    spans, steps, kernels = [], {}, []
    for name, p in planes(path):
        if name == "/host:CPU":
            for ev_name, s, e, st in events(p, lambda n: is_span(n) or n == "train"):
                if ev_name == "train":
                    assert "step_num" in st
                    steps[len(steps)] = (s, e)
                else:
                    spans.append((s, e))
        elif name.startswith("/device:GPU:"):
            kernels += [k for k in events(p, lambda n: True) if "kernel_details" in k[3]]
    windows = union(spans)
    prog = comp = 0
    comp_names = set()
    for name, s, e, st in kernels:
        inside = any(a <= s and e <= b for a, b in windows)
        if is_tuner(name) or (inside and "program_id" not in st):
            comp += e - s
            comp_names.add(name)
        else:
            prog += e - s
    steps = {k: (s, e, covered(windows, s, e)) for k, (s, e) in steps.items()}
    return steps, prog, comp, comp_names


def get(port, route):
    status, _, body = e2e.http_get(port, route)
    assert status == 200, (route, status, body[:300])
    return json.loads(body)


def close(got, want_ps, what, tol_us=0.01):
    assert abs(got - want_ps / 1e6) <= tol_us, (what, got, want_ps / 1e6)


def test_jax_maxtext_compilation():
    path = os.path.join(e2e.FIXTURES, XPLANE)
    if not os.path.exists(path):
        print("skip: %s not found" % path)
        return
    steps, prog_ps, comp_ps, comp_names = expected(path)
    assert len(steps) == 6 and comp_ps > 100e9 and prog_ps > 0, (len(steps), comp_ps, prog_ps)
    port = e2e.free_port()
    proc = subprocess.Popen(
        [e2e.BIN, "--profile-dir=" + os.path.dirname(path), "--port=%d" % port,
         "--perfetto-port=0", "--db=" + os.path.join(e2e.tmpdir(), "i.sqlite"), "--quiet"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        e2e.wait_indexed(port, min_profiles=1)
        pid = get(port, "/api/profiles")["profiles"][0]["id"]
        base = "/api/profiles/%s/" % pid

        # steps: 6, 0 and 4 compiled (for seconds), the others not at all
        got = get(port, base + "steps")["steps"]
        assert [s["step"] for s in got] == list(range(6)), got
        for s in got:
            close(s["compile_us"], steps[s["step"]][2], "compile_us of step %d" % s["step"])
            if s["step"] in (0, 4):
                assert s["compile_us"] > 1e6 and s["autotune_us"] > 1e5, s
            else:
                assert s["compile_us"] == 0 and s["autotune_us"] == 0, s

        # kernels: the autotuning left out by default, counted, and added back on request
        plain = get(port, base + "kernels")
        every = get(port, base + "kernels?compile=include")
        assert plain["compile"]["included"] is False and every["compile"]["included"] is True
        close(plain["kernel_time_us"], prog_ps, "program kernel time", 0.1)
        close(plain["compile"]["us"], comp_ps, "compile-time kernel time", 0.1)
        close(every["kernel_time_us"], plain["kernel_time_us"] * 1e6 + plain["compile"]["us"] * 1e6,
              "with the switch = default + compile", 0.01)
        assert every["total_rows"] == plain["total_rows"] + plain["compile"]["rows"], every
        assert not any(is_tuner(k["name"]) for k in plain["kernels"]), "a tuner kernel by default"
        tuners = {k["name"] for k in every["kernels"] if is_tuner(k["name"])}
        assert tuners and all(k["compile"] for k in every["kernels"] if is_tuner(k["name"]))
        assert {k["name"] for k in every["kernels"] if k["compile"]} == comp_names
        assert sum(k["count"] for k in every["kernels"] if k["compile"]) == \
            plain["compile"]["count"]
        top = max(plain["kernels"], key=lambda k: k["total_us"])
        assert not is_tuner(top["name"]) and abs(sum(k["percent"] for k in plain["kernels"])
                                                 - 100) < 0.01, top
        assert abs(sum(k["percent"] for k in every["kernels"]) - 100) < 0.01

        # findings: steps 0 and 4 compiled, not outliers
        found = {f["kind"]: f for f in get(port, base + "findings")["findings"]}
        labels = [e["label"] for e in found["step_compilation"]["evidence"]]
        assert [label.split(" compiled")[0] for label in labels] == ["step 0", "step 4"], labels
        for f in found.get("step_outliers", {}).get("evidence", []):
            assert not f["label"].startswith(("step 0:", "step 4:")), f
    finally:
        proc.terminate()
        proc.wait()


if __name__ == "__main__":
    e2e.need_fixtures()
    e2e.main([test_jax_maxtext_compilation])
