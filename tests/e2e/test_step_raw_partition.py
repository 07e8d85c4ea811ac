#!/usr/bin/env python3
"""test_step_raw_partition.py: the step breakdown of docs/STEPS.md recomputed
from the raw events of every fixture that has steps, apart from the indexer:
xplane.pb through the test's own wire-format walk (hlo_protos._fields),
Chrome/Kineto JSON through json, with interval unions in the test
(intervals.py). Each device's step windows are derived here from the raw
markers (raw_windows: StepTraceAnnotation's step_num, ProfilerStep#N,
per-device Steps lines, Optimizer.step#, TPU `XLA Modules` executions) and
must match the API's rows within 1 us, and so must steps made of the host's
runs of the main module (`<module>:XLA GPU module`, their device work joined
by launch); steps split from kernels' hlo_module at gaps (no launch in a
run) match in count and combined duration only. Then what
happens inside the raw windows is counted here: per device, each category (autotune > collectives > compute > copies
> memset), the overlap columns and idle split into kernel wait, host wait
and other, within 0.1% of the step or 1 µs; the combined row is the mean of
the devices that ran work; the parts partition each step per device and
combined; overview_page's shares exist and add up to 100%. Profiles
without steps (the nsys exports) must have no step markers either. A
hand-written Kineto
trace whose device work is `mtia_ccp_events` (an accelerator that is not a
GPU) checks that such work counts as device time and lists as kernels.
Skips (77) when ../shared/fixtures is absent."""
import gzip
import json
import os
import re
import shutil
import sqlite3
import struct
import subprocess
import sys
from collections import defaultdict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import intervals as iv  # noqa: E402
from hlo_protos import _fields  # noqa: E402
from xpv_e2e import BIN, FIXTURES, free_port, http_get, main, need_fixtures, tmpdir  # noqa
from xpv_e2e import wait_indexed  # noqa: E402

CATS = ("autotune", "collective", "compute", "memcpy_h2d", "memcpy_d2h", "memcpy_d2d",
        "memcpy_other", "memset")  # the priority order of docs/STEPS.md
COPIES = CATS[3:7]
IDLE = ("host_wait", "kernel_wait", "idle_other")
RUN_SUFFIX = ":XLA GPU module"  # XLA's annotation of one run of a module on the host
KINDS = {"H2D": "memcpy_h2d", "HtoD": "memcpy_h2d", "HostToDevice": "memcpy_h2d",
         "D2H": "memcpy_d2h", "DtoH": "memcpy_d2h", "DeviceToHost": "memcpy_d2h",
         "D2D": "memcpy_d2d", "DtoD": "memcpy_d2d", "DeviceToDevice": "memcpy_d2d",
         "P2P": "memcpy_other", "PtoP": "memcpy_other", "Peer": "memcpy_other"}
COLLECTIVE_WORDS = ("nccl", "rccl", "allreduce", "allgather", "reducescatter", "alltoall",
                    "collectivepermute", "collectivebroadcast", "c10d::", "sendrecv")
COMPILE_SPANS = ("backend_compile", "backend_compile_and_load", "PJRT_Client_Compile",
                 "CompileToBackendResult", "CompileSingleModule", "CompileModuleToLlvmIr")
COMPILE_PREFIXES = ("PjRtCApiClient::Compile", "PjRtStreamExecutorClient::Compile")
TUNER_KERNELS = ("RedzoneAllocatorKernel", "xla_fp_comparison", "DelayKernel",
                 "RepeatBufferKernel")
KINETO_NOT_WORK = {"cpu_op", "Operator", "user_annotation", "python_function", "cuda_sync", "ac2g",
                   "async", "Trace", "overhead", "cpu_instant_event", "collective_comm",
                   "external_correlation", "gpu_user_annotation"}


class Raw:
    """What one file says: device events (device, category-to-be, name, op,
    start ps, end ps, correlation id or None, has program_id), host launches
    {correlation id: ps}, host compile spans [(ps, ps)]."""

    def __init__(self):
        self.dev = []
        self.launch = {}
        self.compile = []
        self.tpu = False
        self.markers = []  # (source, number or -1, start ps, end ps, lane, device or -1)
        self.modules = []  # XLA Modules executions: (name, lane, device, start ps, end ps)
        # device work's hlo_module: (module, device, start ps, end ps, corr, is a kernel)
        self.kernel_modules = []
        self.runs = []  # host runs "<module>:XLA GPU module": (module, lane, start ps, end ps)
        self.launch_lane = {}  # correlation id: (host lane, ps)


def copy_kind(text):
    for part, kind in KINDS.items():
        if part in text:
            return kind
    return None


def is_collective(name):
    folded = "".join(c for c in name.lower() if c not in "-_ ")
    return any(w in folded for w in COLLECTIVE_WORDS)


def is_compile_span(name, dur_ps):
    return dur_ps >= 100_000_000 and (name in COMPILE_SPANS or name.startswith(COMPILE_PREFIXES))


def stream_kinds(line):
    """The kinds a `Stream #N(Kernel,MemcpyH2D,...)` line lists."""
    if "(" not in line:
        return []
    return [k.strip() for k in line[line.index("(") + 1:].rstrip(")").split(",")]


def jax_kind(line, name, args):
    """What a JAX device-line event is (docs/STEPS.md, 'Which events are
    device work'): None for events that are not device work."""
    if line in ("XLA Ops",):
        return "xla_op"
    if not line.startswith("Stream #"):
        return None
    kinds = stream_kinds(line)
    if "kernel_details" in args:
        return "kernel"
    if "memcpy_details" in args:
        by_name = copy_kind(name)
        if by_name:
            return by_name
        one = copy_kind("".join(kinds)) if len(kinds) == 1 else None
        return one or "memcpy_other"
    if kinds == ["Kernel"]:
        return "kernel"
    if "Memset" in name or "memset" in name:
        return "memset"
    if "Memcpy" in name or "memcpy" in name or copy_kind(name):
        return copy_kind(name) or "memcpy_other"
    if len(kinds) == 1 and kinds[0].startswith("Memcpy"):
        return copy_kind(kinds[0]) or "memcpy_other"
    if len(kinds) == 1 and kinds[0] == "Memset":
        return "memset"
    return "kernel" if "Kernel" in kinds else None


def device_ordinal(plane):
    for p in ("/device:GPU:", "/device:TPU:"):
        if plane.startswith(p) and plane[len(p):].split()[0].isdigit():
            return int(plane[len(p):].split()[0])
    return None


# ---- xplane.pb ----

def _int64(v):
    return v - (1 << 64) if v >= 1 << 63 else v


def _stat(b, span, stat_names):
    """(name, value) of one XStat: text for strings and refs, else a number."""
    mid, val = 0, None
    for n, w, v in _fields(b, *span):
        if n == 1:
            mid = v
        elif n in (3, 4):
            val = _int64(v)
        elif n in (5, 6):
            val = b[v[0]:v[1]].decode("utf-8", "replace")
        elif n == 7:
            val = stat_names.get(v, "")
        elif n == 2:
            val = 0.0
    return stat_names.get(mid, ""), val


def read_xplane(path):
    b = open(path, "rb").read()
    raw = Raw()
    for num, wire, plane in _fields(b, 0, len(b)):
        if num == 1 and wire == 2:
            _xplane_plane(b, plane, raw)
    return raw


def _plane_tables(b, plane):
    name, meta, stat_names, lines = "", {}, {}, []
    for n, w, v in _fields(b, *plane):
        if n == 2 and w == 2:
            name = b[v[0]:v[1]].decode()
        elif n == 3 and w == 2:
            lines.append(v)
        elif n in (4, 5) and w == 2:
            for en, ew, ev in _fields(b, *v):
                if en != 2 or ew != 2:
                    continue
                f = {}
                for mn, mw, mv in _fields(b, *ev):
                    f.setdefault(mn, []).append(mv)
                if n == 5:
                    s = f.get(2, [(0, 0)])[0]
                    stat_names[f.get(1, [0])[0]] = b[s[0]:s[1]].decode("utf-8", "replace")
                else:
                    meta[f.get(1, [0])[0]] = f
    return name, meta, stat_names, lines


def _xplane_plane(b, plane, raw):
    name, meta, stat_names, lines = _plane_tables(b, plane)
    dev = device_ordinal(name)
    if dev is None and not name.startswith("/host:"):
        _markers_only(b, name, meta, stat_names, lines, raw)
        return
    raw.tpu |= name.startswith("/device:TPU:")
    names, mstats = {}, {}
    for mid, f in meta.items():
        s = (f.get(4) or f.get(2) or [(0, 0)])[0]
        names[mid] = b[s[0]:s[1]].decode("utf-8", "replace")
        mstats[mid] = dict(_stat(b, sp, stat_names) for sp in f.get(5, []))
    for i, (lname, t0_ps, evspans) in enumerate(_lines(b, lines)):
        for evspan in evspans:
            _xplane_event(b, evspan, t0_ps, dev, (name, i, lname), names, mstats, stat_names, raw)


def _lines(b, lines):
    """(name, start ps, event spans) of each XLine."""
    for line in lines:
        lf = {}
        for n, w, v in _fields(b, *line):
            if n == 4:
                lf.setdefault(4, []).append(v)
            else:
                lf[n] = v
        lname = lf.get(11) or lf.get(2) or (0, 0)
        yield (b[lname[0]:lname[1]].decode("utf-8", "replace"), _int64(lf.get(3, 0)) * 1000,
               lf.get(4, []))


def _markers_only(b, name, meta, stat_names, lines, raw):
    """Planes that are neither a device's nor /host:...: the indexer reads
    their lines as host lines, so their step markers count (nothing else
    of theirs is read here)."""
    mstats = {mid: dict(_stat(b, sp, stat_names) for sp in f.get(5, []))
              for mid, f in meta.items()}
    for i, (lname, t0_ps, evspans) in enumerate(_lines(b, lines)):
        for span in evspans:
            mid, off, dur, stats, _ = _event_fields(b, span)
            args = dict(mstats.get(mid, {}))
            args.update(_stat(b, sp, stat_names) for sp in stats)
            s = t0_ps + (off // 1000) * 1000
            if isinstance(args.get("step_num"), int) and dur > 0:
                raw.markers.append(("annotation", args["step_num"], s, s + dur, (name, i), -1))


def _event_fields(b, span):
    """An XEvent's metadata id, offset and duration (ps), stat spans, and
    whether it is an aggregate (field 5: num_occurrences, no time)."""
    mid = off = dur = 0
    stats, aggregate = [], False
    for n, w, v in _fields(b, *span):
        if n == 1:
            mid = v
        elif n == 2:
            off = _int64(v)
        elif n == 3:
            dur = _int64(v)
        elif n == 4:
            stats.append(v)
        elif n == 5:
            aggregate = True
    return mid, off, dur, stats, aggregate


def _xplane_event(b, span, t0_ps, dev, line, names, mstats, stat_names, raw):
    lane, lname = line[:2], line[2]
    mid, off, dur, stats, aggregate = _event_fields(b, span)
    if aggregate:
        return  # an aggregate, no time
    # the reader starts events at whole ns: line ns + floor(offset ps / 1000)
    s = t0_ps + (off // 1000) * 1000
    name = names.get(mid, "")
    if dev is None:
        if is_compile_span(name, dur):
            raw.compile.append((s, s + dur))
        args = dict(_stat(b, sp, stat_names) for sp in stats)
        step = dict(mstats.get(mid, {}), **args).get("step_num")
        if isinstance(step, int) and dur > 0:  # StepTraceAnnotation
            raw.markers.append(("annotation", step, s, s + dur, lane, -1))
            return
        if name.endswith(RUN_SUFFIX) and dur > 0:
            raw.runs.append((name[:-len(RUN_SUFFIX)], lane, s, s + dur))
        if "correlation_id" in args:
            raw.launch.setdefault(args["correlation_id"], s)
            raw.launch_lane.setdefault(args["correlation_id"], (lane, s))
        return
    args = dict(mstats.get(mid, {}))
    args.update(_stat(b, sp, stat_names) for sp in stats)
    if dur > 0 and lname == "XLA Modules":
        raw.modules.append((name, lane, dev, s, s + dur))
    elif dur > 0 and lname == "Steps":
        num = args.get("step_num", args.get("group_id"))
        if not isinstance(num, int):
            num = int(name) if name.strip().isdigit() else -1
        raw.markers.append(("steps_line", num, s, s + dur, lane, dev))
    kind = jax_kind(lname, name, args)
    if kind:
        raw.dev.append((dev, kind, name, args.get("hlo_op") or args.get("tf_op") or "", s,
                        s + dur, args.get("correlation_id"), "program_id" in args))
        if kind != "xla_op" and dur > 0 and isinstance(args.get("hlo_module"), str):
            raw.kernel_modules.append((args["hlo_module"], dev, s, s + dur,
                                       args.get("correlation_id"), kind == "kernel"))


# ---- Chrome trace JSON (Kineto, JAX's converter) ----

def load_json(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        d = json.load(f)
    return d.get("traceEvents", []) if isinstance(d, dict) else d


def _ps(us):
    return int(round(float(us) * 1000)) * 1000


def read_json(path):
    events = load_json(path)
    raw = Raw()
    procs, threads = {}, {}
    for e in events:
        if e.get("ph") == "M" and e.get("name") == "process_name":
            procs[e.get("pid")] = str(e.get("args", {}).get("name", ""))
        elif e.get("ph") == "M" and e.get("name") == "thread_name":
            threads[(e.get("pid"), e.get("tid"))] = str(e.get("args", {}).get("name", ""))
    kineto = any(str(e.get("name", "")).startswith("ProfilerStep#") or "cat" in e for e in events
                 if e.get("ph") == "X")
    for e in events:
        if e.get("ph") != "X":
            continue
        s, dur = _ps(e.get("ts", 0)), _ps(e.get("dur", 0))
        name, args = str(e.get("name", "")), e.get("args") or {}
        corr = args.get("correlation", args.get("correlation_id"))
        corr = int(corr) if corr is not None and str(corr).lstrip("-").isdigit() else None
        json_marker(e, name, args, s, dur, procs, threads, raw)
        if kineto:
            kind = kineto_kind(e.get("cat", ""), name, args)
            if kind == "launch" and corr is not None:
                raw.launch.setdefault(corr, s)
            elif kind and kind != "launch":
                raw.dev.append((int(args.get("device", e.get("pid", 0))), kind, name, "", s,
                                s + dur, corr, False))
            continue
        dev = device_ordinal(procs.get(e.get("pid"), ""))
        lane = (e.get("pid"), e.get("tid"))
        if dev is None:
            if is_compile_span(name, dur):
                raw.compile.append((s, s + dur))
            if name.endswith(RUN_SUFFIX) and dur > 0:
                raw.runs.append((name[:-len(RUN_SUFFIX)], lane, s, s + dur))
            if corr is not None:
                raw.launch.setdefault(corr, s)
                raw.launch_lane.setdefault(corr, (lane, s))
            continue
        kind = jax_kind(threads.get(lane, ""), name, args)
        if kind:
            raw.dev.append((dev, kind, name, args.get("hlo_op") or args.get("tf_op") or "",
                            s, s + dur, corr, "program_id" in args))
        if kind and kind != "xla_op" and dur > 0 and isinstance(args.get("hlo_module"), str):
            raw.kernel_modules.append((args["hlo_module"], dev, s, s + dur, corr,
                                       kind == "kernel"))
    return raw


def _number(v):
    return int(v) if v is not None and str(v).strip().isdigit() else None


def json_marker(e, name, args, s, dur, procs, threads, raw):
    """The step marker an event of a Chrome trace is, if any: ProfilerStep#N
    (a GPU-side copy when its category is gpu_user_annotation), a host
    event with a step_num arg (JAX's StepTraceAnnotation), a `Steps` thread
    event of a /device:GPU:N process, Optimizer.step#..."""
    if dur <= 0:
        return
    lane = (e.get("pid"), e.get("tid"))
    dev = device_ordinal(procs.get(e.get("pid"), ""))
    on_dev = int(args.get("device", 0)) if e.get("cat") == "gpu_user_annotation" else -1
    if name.startswith("ProfilerStep#") and _number(name[13:]) is not None:
        raw.markers.append(("profiler_step", _number(name[13:]), s, s + dur, lane, on_dev))
    elif dev is not None and threads.get(lane) == "Steps":
        num = _number(name)
        raw.markers.append(("steps_line", -1 if num is None else num, s, s + dur, lane, dev))
    elif dev is None and _number(args.get("step_num")) is not None:
        raw.markers.append(("annotation", _number(args["step_num"]), s, s + dur, lane, -1))
    elif name.startswith("Optimizer.step#"):
        raw.markers.append(("optimizer_step", -1, s, s + dur, lane, on_dev))


def kineto_kind(cat, name, args):
    """A Kineto event: 'launch', a device kind, or None (docs/STEPS.md)."""
    if cat in ("kernel", "Kernel"):
        return "kernel"
    if cat in ("gpu_memcpy", "Memcpy"):
        return copy_kind(name) or "memcpy_other"
    if cat in ("gpu_memset", "Memset"):
        return "memset"
    if cat in ("cuda_runtime", "Runtime") or cat.endswith(("_runtime", "_driver")):
        return "launch"
    if not cat or cat in KINETO_NOT_WORK or "device" not in args:
        return None
    # device work of another accelerator (MTIA's mtia_ccp_events, ...)
    if "Memset" in name or "memset" in name or "memset" in cat:
        return "memset"
    if copy_kind(name) or "Memcpy" in name or "memcpy" in name or "memcpy" in cat:
        return copy_kind(name) or "memcpy_other"
    return "kernel"


# ---- the step windows, from the raw markers ----
#
# Derived independently here: annotation (StepTraceAnnotation / step_num),
# profiler_step (ProfilerStep#N), steps_line (per-device Steps lines),
# optimizer_step (between Optimizer.step# markers) and module from `XLA
# Modules` executions (TPU): every window is compared with the API's.
# Module steps from kernels' hlo_module (executions split at gaps, ROCm)
# are checked by step count and combined duration only (module_by_kernels).

def merge(pieces):
    """docs/STEPS.md 'Step windows per device': pieces (number, start, end,
    device or -1) with one number are one step. {number: (hull, {device:
    window} or None)}: per-device windows only when every piece is on a
    device and some device's window is not the hull."""
    by = defaultdict(list)
    for p in pieces:
        by[p[0]].append(p)
    out = {}
    for num, ps in by.items():
        hull = (min(p[1] for p in ps), max(p[2] for p in ps))
        per = None
        if all(p[3] >= 0 for p in ps):
            per = {}
            for _, a, b, d in ps:
                w = per.get(d)
                per[d] = (min(a, w[0]), max(b, w[1])) if w else (a, b)
            if all(w == hull for w in per.values()):
                per = None
        out[num] = (hull, per)
    return out


def by_lane(pieces):
    lanes = defaultdict(list)
    for p in pieces:
        lanes[p[4]].append(p)
    return [sorted(ps, key=lambda p: p[2]) for _, ps in sorted(lanes.items(), key=str)]


def marker_windows(raw, source):
    ms = [m for m in raw.markers if m[0] == source]
    if any(m[5] < 0 for m in ms):
        ms = [m for m in ms if m[5] < 0]  # the host's markers, not the GPU's copies
    pieces = []
    if source == "optimizer_step":
        for ps in by_lane(ms):
            pieces += [(k, ps[k][3], ps[k + 1][3], ps[k + 1][5]) for k in range(len(ps) - 1)]
    elif any(m[1] < 0 for m in ms):
        for ps in by_lane(ms):
            kept = []
            for m in ps:
                if not (kept and kept[-1][2] <= m[2] and m[3] <= kept[-1][3]):
                    kept.append(m)
            rank = iter(range(len(kept)))  # the unnumbered, in start order
            pieces += [(m[1] if m[1] >= 0 else next(rank), m[2], m[3], m[5]) for m in kept]
    else:
        pieces = [(m[1], m[2], m[3], m[5]) for m in ms]
    return merge(pieces)


def module_windows(raw):
    names = defaultdict(int)
    for m in raw.modules:
        names[m[0]] += 1
    want = max(sorted(names), key=lambda n: names[n])
    pieces = []
    for ps in by_lane([(None, None, s, e, lane, dev) for n, lane, dev, s, e in raw.modules
                       if n == want]):
        pieces += [(k, p[2], p[3], p[5]) for k, p in enumerate(ps)]
    return merge(pieces)


def module_by_runs(raw, want):
    """Executions of module want as the host annotates its runs: device work
    joins the run, on its launch's own host lane, whose window holds the
    launch; the n-th run of a lane is execution n. None when no launch of
    the module's work falls in a run."""
    runs = defaultdict(list)
    for m, lane, s, e in raw.runs:
        if m == want:
            runs[lane].append((s, e))
    pieces = []
    for m, dev, s, e, corr, _ in raw.kernel_modules:
        lane, t = raw.launch_lane.get(corr, (None, None))
        if m != want or lane not in runs:
            continue
        hit = [n for n, (a, b) in enumerate(sorted(runs[lane])) if a <= t <= b]
        if hit:
            pieces.append((hit[0], s, e, dev))
    return merge(pieces) if pieces else None


def module_by_kernels(raw):
    """(windows, exact): executions of the most frequent hlo_module of
    kernels: by host runs (exact), else per device its work in start order,
    a new execution after a gap over max(50 us, 10 x the median gap)
    (checked in count and combined duration only). {number: (hull,
    per-device or None)}."""
    count = defaultdict(int)
    for m, *_, is_kernel in raw.kernel_modules:
        count[m] += is_kernel
    want = max(sorted(count), key=lambda m: count[m])
    by_runs = module_by_runs(raw, want)
    if by_runs:
        return by_runs, True
    lanes = defaultdict(list)
    for m, dev, s, e, *_ in raw.kernel_modules:
        if m == want:
            lanes[dev].append((s, e))
    gaps = []
    for ks in lanes.values():
        ks.sort()
        end = ks[0][1]
        for s, e in ks[1:]:
            if s > end:
                gaps.append(s - end)
            end = max(end, e)
    gaps.sort()
    threshold = max(50_000_000, 10 * gaps[len(gaps) // 2] if gaps else 0)
    pieces = []
    for dev, ks in lanes.items():
        runs = []
        for s, e in ks:
            if runs and s <= runs[-1][1] + threshold:
                runs[-1][1] = max(runs[-1][1], e)
            else:
                runs.append([s, e])
        pieces += [(k, s, e, dev) for k, (s, e) in enumerate(runs)]
    return merge(pieces), False


def raw_windows(raw, source):
    """(windows, exact): the steps the raw markers make for source, and
    whether every window is to match the API's (module steps from kernels
    match in count and combined duration only)."""
    if source == "module" and raw.modules:
        return module_windows(raw), True
    if source == "module":
        return module_by_kernels(raw)
    assert source in ("annotation", "profiler_step", "steps_line", "optimizer_step"), \
        ("no rule here for the step source", source)
    return marker_windows(raw, source), True


# ---- the breakdown, recomputed ----

def categorize(raw):
    """{device: [(category, start, end, launch ps or None)]} of the events
    that count: kernels, copies, memsets (XLA ops where the profile has no
    kernels, as on TPU)."""
    kernels = any(k == "kernel" for _, k, *_ in raw.dev)
    compile_iv = iv.union(raw.compile)
    out = defaultdict(list)
    for dev, kind, name, op, s, e, corr, program in raw.dev:
        if e <= s:
            continue
        if kind == "xla_op":
            if kernels:
                continue
            kind = "kernel"
        if ("stream_executor::gpu::" in name and any(k in name for k in TUNER_KERNELS)) or \
                (not program and any(cs <= s and e <= ce for cs, ce in compile_iv)):
            cat = "autotune"
        elif kind == "kernel":
            cat = "collective" if is_collective(name) or is_collective(op) else "compute"
        else:
            cat = kind
        out[dev].append((cat, s, e, raw.launch.get(corr) if corr is not None else None))
    return out


def overlap(a, b):
    return iv.length(a) - iv.minus(a, b)


def expected_row(events, w0, w1, launched):
    """The row of one device in [w0, w1) (ps): docs/STEPS.md's definitions."""
    lists = defaultdict(list)
    for cat, s, e, launch in events:
        lists[cat].extend(iv.clip([(s, e)], w0, w1))
        if launch is not None and launch < s:
            lists["pending"].extend(iv.clip([(launch, s)], w0, w1))
    u = {k: iv.union(v) for k, v in lists.items()}
    row, covered = {}, []
    for cat in CATS:
        mine = u.get(cat, [])
        row[cat] = iv.minus(mine, covered)
        covered = iv.union(covered + mine)
    busy = sum(row.values())
    dur = w1 - w0
    row["idle"] = dur - busy
    row["overlap_compute_collective"] = overlap(u.get("compute", []), u.get("collective", []))
    copies = iv.union([x for c in COPIES for x in u.get(c, [])])
    row["overlap_copy"] = overlap(copies, iv.union(u.get("compute", []) + u.get("collective", [])))
    row["kernel_wait"] = min(iv.minus(u.get("pending", []), covered), row["idle"])
    rest = row["idle"] - row["kernel_wait"]
    row["host_wait"], row["idle_other"] = (rest, 0) if launched else (0, rest)
    row["busy"] = busy
    return row


# ---- the test ----

TALLY = defaultdict(int)  # rows where each part is not zero, to show what was checked
WINDOWS = defaultdict(int)  # steps whose windows came from the raw markers, per source


def get(port, path):
    status, _, body = http_get(port, path, timeout=300)
    assert status == 200, (path, status, body[:200])
    return json.loads(body)


def close(got_us, want_ps, dur_ps):
    return abs(got_us * 1e6 - want_ps) <= max(1e-3 * dur_ps, 1e6)


def reader_for(path):
    if path.endswith(".xplane.pb"):
        return read_xplane
    if path.endswith((".json", ".json.gz")):
        return read_json
    if path.endswith(".sqlite"):
        return read_nsys_markers
    return None


NVTX_STEP = re.compile(r"(?:^|(?<=[^A-Za-z])|(?<=[a-z])(?=[A-Z]))(?:step|iteration|iter)"
                       r"(?:[ _]?num(?:ber)?)?[ _#:=-]{0,3}[0-9]", re.I)


def read_nsys_markers(path):
    """Only whether an nsys export could have steps: NVTX ranges (with an
    end) of at most 96 bytes whose name has a step keyword and a number, a
    superset of nsys_step_name.h's rule. The breakdown of such steps is not
    recomputed here: a fixture with them fails check_profile until it is."""
    raw = Raw()
    db = sqlite3.connect("file:%s?mode=ro" % path, uri=True)
    try:
        have = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if "NVTX_EVENTS" not in have:
            return raw
        q = "SELECT e.start, e.end, coalesce(e.text, %s) FROM NVTX_EVENTS e %s WHERE e.end IS NOT NULL"
        q = q % (("s.value", "LEFT JOIN StringIds s ON s.id = e.textId") if "StringIds" in have
                 else ("NULL", ""))
        for start, end, text in db.execute(q):
            if text and len(text.encode()) <= 96 and NVTX_STEP.search(text):
                raw.markers.append(("nvtx", -1, start * 1000, end * 1000, 0, -1))
    finally:
        db.close()
    return raw


def launched_devices(cat_events, windows):
    """Devices with an event that starts inside some step window and whose
    launch is known: their idle splits into host and kernel wait."""
    out = set()
    for dev, evs in cat_events.items():
        spans = [w for (d, _), w in windows.items() if d == dev]
        if any(l is not None and any(w0 <= s < w1 for w0, w1 in spans)
               for _, s, _, l in evs):
            out.add(dev)
    return out


def check_windows(where, steps, rows, want, exact):
    """The API's windows (rows: (device, step) -> row) against those of the
    raw markers (want: step -> (hull, per-device or None)), within 1 us;
    returns {(device, step): (start ps, end ps)} from the raw markers."""
    combined = {st["step"]: st for st in steps["steps"]}
    if not exact:
        assert len(combined) == len(want), (where, "steps", sorted(combined), sorted(want))
        api = sum(st["duration_us"] for st in combined.values())
        mine = sum(sum(w[1] - w[0] for w in per.values()) / len(per) if per else
                   hull[1] - hull[0] for hull, per in want.values())
        assert abs(api * 1e6 - mine) <= max(1e6 * len(want), 1e-3 * mine), (where, api, mine / 1e6)
        return {k: (_ps(st["start_us"]), _ps(st["start_us"]) + _ps(st["duration_us"]))
                for k, st in rows.items()}
    assert sorted(combined) == sorted(want), (where, "steps", sorted(combined), sorted(want))
    windows = {}
    for (dev, step), st in rows.items():
        hull, per = want[step]
        assert per is None or dev in per, (where, "device without a marker has a row", dev, step)
        w0, w1 = per[dev] if per else hull
        assert abs(st["start_us"] * 1e6 - w0) <= 1e6 and \
            abs(st["duration_us"] * 1e6 - (w1 - w0)) <= 1e6, \
            (where, dev, step, st["start_us"], st["duration_us"], w0 / 1e6, (w1 - w0) / 1e6)
        windows[(dev, step)] = (w0, w1)
    for step, (hull, per) in want.items():
        c = combined[step]
        durs = [w1 - w0 for w0, w1 in per.values()] if per else [hull[1] - hull[0]]
        starts = [w[0] for w in per.values()] if per else [hull[0]]
        assert abs(c["duration_us"] * 1e6 - sum(durs) / len(durs)) <= 1e6, (where, step, c, durs)
        assert abs(c["start_us"] * 1e6 - min(starts)) <= 1e6, (where, step, c, starts)
        for dev in per or ():
            assert (dev, step) in rows, (where, "device with a marker has no row", dev, step)
    return windows


def check_profile(port, p, src):
    base = "/api/profiles/%s" % p["id"]
    steps = get(port, base + "/steps")
    where = p["path"]
    raw = reader_for(src)(src)
    if not steps["steps"]:
        assert steps["source"] == "none", (where, steps["source"])
        assert not raw.markers and not raw.modules and not raw.kernel_modules, \
            (where, "markers but no steps", len(raw.markers), len(raw.modules))
        return 0
    cats = categorize(raw)
    rows = {}  # (device, step) -> API row
    for dev in steps["devices"]:
        for st in get(port, base + "/steps?device=%d" % dev)["steps"]:
            rows[(dev, st["step"])] = st
    want, exact = raw_windows(raw, steps["source"])
    windows = check_windows(where, steps, rows, want, exact)
    WINDOWS[steps["source"] + ("" if exact else " (count, duration)")] += len(want)
    launched = launched_devices(cats, windows)
    mine = {}
    checked = 0
    for (dev, step), st in sorted(rows.items()):
        w0, w1 = windows[(dev, step)]
        want = expected_row(cats.get(dev, []), w0, w1, dev in launched)
        mine[(dev, step)] = want
        for k in CATS + IDLE:
            TALLY[k] += want[k] > 0
        at = (where, "device", dev, "step", step)
        for k in CATS + ("idle",) + IDLE + ("overlap_compute_collective", "overlap_copy"):
            assert close(st[k + "_us"] or 0, want[k], w1 - w0), (at, k, st[k + "_us"],
                                                                want[k] / 1e6)
        check_partition(at, st)
        checked += 1
    for st in get(port, base + "/steps?device=-1")["steps"]:
        ran = [mine[(d, st["step"])] for d in steps["devices"]
               if (d, st["step"]) in mine and mine[(d, st["step"])]["busy"] > 0]
        check_partition((where, "combined", st["step"]), st)
        for k in CATS:
            want = sum(r[k] for r in ran) / len(ran) if ran else 0
            assert close(st[k + "_us"] or 0, want, _ps(st["duration_us"])), \
                (where, "combined", st["step"], k, st[k + "_us"], want / 1e6)
        checked += 1
    ov = get(port, base + "/tools/overview_page")
    shares = [r["value"] for r in ov["rows"] if r["section"] == "step time breakdown"]
    assert shares, (where, "overview_page has no step time breakdown",
                    sorted({r["section"] for r in ov["rows"]}))
    assert abs(sum(shares) - 100) < 0.1, (where, shares)
    return checked


def check_partition(where, st):
    dur = st["duration_us"]
    tol = max(1e-3 * dur, 0.002)
    busy = sum(st[k + "_us"] or 0 for k in CATS)
    assert abs(busy + st["idle_us"] - dur) <= tol, (where, "parts", busy, st["idle_us"], dur)
    assert abs(sum(st[k + "_us"] or 0 for k in IDLE) - st["idle_us"]) <= tol, (where, "idle", st)


def fixture_files():
    out = []
    for d, _, files in os.walk(FIXTURES):
        for f in sorted(files):
            if reader_for(f):
                out.append(os.path.join(d, f))
    return sorted(out)


class Server:
    def __init__(self, root, n):
        self.port = free_port()
        self.proc = subprocess.Popen(
            [BIN, "--profile-dir=" + root, "--port=%d" % self.port, "--perfetto-port=0",
             "--db=" + os.path.join(tmpdir(), "i.sqlite"), "--quiet"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_indexed(self.port, min_profiles=n, timeout=600)

    def close(self):
        self.proc.terminate()
        self.proc.wait(timeout=10)


def test_fixtures_recomputed():
    need_fixtures()
    root, srcs = tmpdir(), {}
    for i, src in enumerate(fixture_files()):
        d = os.path.join(root, "r%02d" % i)
        os.makedirs(d)
        shutil.copyfile(src, os.path.join(d, os.path.basename(src)))
        srcs["r%02d/%s" % (i, os.path.basename(src))] = src
    s = Server(root, 1)
    try:
        checked, profiles, stepless = 0, 0, []
        for p in get(s.port, "/api/profiles")["profiles"]:
            if p["path"] in srcs and p.get("status") == "ok":
                n = check_profile(s.port, p, srcs[p["path"]])
                checked += n
                profiles += n > 0
                if n == 0:
                    stepless.append(os.path.basename(p["path"]))
        print("%d step rows of %d profiles with steps recomputed; rows with each part: %s"
              % (checked, profiles, dict(TALLY)))
        print("steps whose windows were derived from raw markers, per source: %s; "
              "without steps in the API nor step markers in the file: %s"
              % (dict(WINDOWS), stepless))
        # XPV_FIXTURES may name other captures (scripts/gpu_capture.py's):
        # the bounds are the fixtures' where they are smaller
        assert profiles >= min(10, len(srcs) // 2) and checked > 0, (profiles, checked)
        if any(src.endswith(".sqlite") for src in srcs.values()):
            assert any(n.endswith(".sqlite") for n in stepless), stepless
    finally:
        s.close()


# ---- device work under other categories than kernel ----

def mtia_trace():
    """A Kineto trace of two steps on an MTIA-like device: its work is in
    `mtia_ccp_events` on the device's process, launched by `mtia_runtime`."""
    ev = [{"ph": "M", "name": "process_name", "pid": 0, "args": {"name": "MTIA 0"}},
          {"ph": "M", "name": "process_name", "pid": 100, "args": {"name": "python"}}]
    for k in range(2):
        t = 1000.0 + k * 1000
        ev.append({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#%d" % k,
                   "pid": 100, "tid": 100, "ts": t, "dur": 900})
        for j, (name, dur) in enumerate((("fc1_fwd", 200), ("relu_fwd", 100))):
            corr = 10 * k + j
            ev.append({"ph": "X", "cat": "mtia_runtime", "name": "launchKernel", "pid": 100,
                       "tid": 100, "ts": t + 10 + j * 20, "dur": 5,
                       "args": {"correlation": corr}})
            ev.append({"ph": "X", "cat": "mtia_ccp_events", "name": name, "pid": 0, "tid": 1,
                       "ts": t + 100 + j * 300, "dur": dur,
                       "args": {"device": 0, "stream": 1, "correlation": corr}})
    # step 1 also runs a collective over both kernels' ends and a copy under fc1
    for name, ts, dur in (("ncclDevKernel_AllReduce_Sum_f32", 2250, 200), ("Memcpy HtoD", 2150, 20)):
        ev.append({"ph": "X", "cat": "mtia_ccp_events", "name": name, "pid": 0, "tid": 2,
                   "ts": ts, "dur": dur, "args": {"device": 0, "stream": 2}})
    return {"schemaVersion": 1, "traceEvents": ev}


def test_mtia_device_work():
    root = tmpdir()
    path = os.path.join(root, "mtia.pt.trace.json")
    with open(path, "w") as f:
        json.dump(mtia_trace(), f)
    s = Server(root, 1)
    try:
        p = get(s.port, "/api/profiles")["profiles"][0]
        base = "/api/profiles/%s" % p["id"]
        steps = get(s.port, base + "/steps")
        assert steps["devices"] == [0], steps
        want = ({"compute": 300, "idle": 600, "collective": 0},
                {"compute": 200, "idle": 500, "collective": 200, "memcpy_h2d": 0,
                 "overlap_compute_collective": 100, "overlap_copy": 20})
        for st, w in zip(get(s.port, base + "/steps?device=0")["steps"], want):
            for k, v in w.items():
                assert abs(st[k + "_us"] - v) < 1e-3, (k, st)
        rows = get(s.port, base + "/kernels")["kernels"]
        names = {r["name"]: r["category"] for r in rows}
        assert names.get("fc1_fwd") == "compute" and names.get("relu_fwd") == "compute", rows
        assert names.get("ncclDevKernel_AllReduce_Sum_f32") == "collective", rows
        assert check_profile(s.port, p, path) == 4
    finally:
        s.close()


if __name__ == "__main__":
    main([t for t in (test_mtia_device_work, test_fixtures_recomputed)
          if len(sys.argv) < 2 or t.__name__ in sys.argv[1:]])
