#!/usr/bin/env python3
"""test_memory.py: memory_profile, memory_viewer and the HLO module view on
the real fixtures, against an independent reading written here:

- allocator events read from the raw xplane.pb with the test's own wire
  decoder: per allocator, the peak of bytes_allocated, an independent replay
  of the allocation sizes (TPU deallocations carry no size: matched by
  address) where the events are self-consistent, the maximum
  peak_bytes_in_use, and the blocks live at the peak; PyTorch's [memory]
  events from Python's json;
- the Hlo Proto stats of /host:metadata decoded here (module count, names,
  program ids), one module's logical buffer sizes and allocation kinds, its
  heap-simulator replay, and the FLOPs of a dot from its operand shapes;
- the tool lists, the TensorBoard data route, 404 "No Data" and 400s.
Skips (77) when ../shared/fixtures is absent."""
import gzip
import json
import os
import shutil
import struct
import subprocess
import sys
import urllib.error
import urllib.parse
import urllib.request
from collections import defaultdict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from xpv_e2e import BIN, FIXTURES, free_port, main, need_fixtures, tmpdir, wait_indexed  # noqa
from test_xplane import fields, signed64  # noqa: E402

TPU = "jax-tpu-v6e-inference.xplane.pb"
GEMM = "jax-rocm-mi300x-gemm.xplane.pb"
CONV = "jax-rocm-mi300x-conv-8gpu.xplane.pb"
TORCH = "pytorch-h100-bert-small.json.gz"
FILES = [("xplane", TPU), ("xplane", GEMM), ("xplane", CONV), ("chrome-json", TORCH)]


def msg(b):
    out = defaultdict(list)
    for num, _, v in fields(b):
        out[num].append(v)
    return out


def txt(m, n):
    return m[n][0].decode("utf-8", "replace") if m.get(n) else ""


def ints(m, n):
    """A repeated int64, packed or not."""
    out = []
    for v in m.get(n, []):
        if isinstance(v, int):
            out.append(signed64(v))
        else:
            i = 0
            while i < len(v):
                r = s = 0
                while True:
                    c = v[i]
                    i += 1
                    r |= (c & 0x7F) << s
                    s += 7
                    if not c & 0x80:
                        break
                out.append(signed64(r))
    return out


def meta_names(plane, num):
    out = {}
    for e in plane.get(num, []):
        m = msg(e)
        out[signed64(m[1][0]) if m.get(1) else 0] = msg(m[2][0]) if m.get(2) else {}
    return out


def stat(sb, snames):
    s = msg(sb)
    name = snames.get(signed64(s[1][0]) if s.get(1) else 0, "")
    if s.get(2):
        return name, struct.unpack("<d", s[2][0])[0]
    for k in (3, 4):
        if s.get(k):
            return name, signed64(s[k][0])
    if s.get(5):
        return name, s[5][0].decode()
    if s.get(7):
        return name, snames.get(signed64(s[7][0]), "")
    return name, None


def planes(path):
    with open(path, "rb") as f:
        space = msg(f.read())
    for pb in space[1]:
        yield msg(pb)


# ---- allocator events, independently ----

def memory_events(path):
    """allocator -> [(ts ns, kind +1/-1, {stat: value})] in time order."""
    out = defaultdict(list)
    for p in planes(path):
        if txt(p, 2) != "/host:CPU":
            continue
        snames = {k: txt(v, 2) for k, v in meta_names(p, 5).items()}
        enames = {k: txt(v, 2) for k, v in meta_names(p, 4).items()}
        for lb in p.get(3, []):
            line = msg(lb)
            ts0 = signed64(line[3][0]) if line.get(3) else 0
            for eb in line.get(4, []):
                e = msg(eb)
                name = enames.get(signed64(e[1][0]) if e.get(1) else 0, "")
                if name not in ("MemoryAllocation", "MemoryDeallocation"):
                    continue
                st = dict(stat(s, snames) for s in e.get(4, []))
                al = st.get("allocator_name") or "index_on_host %d" % st["index_on_host"]
                ps = ts0 * 1000 + (signed64(e[2][0]) if e.get(2) else 0)
                out[al].append((ps // 1000, 1 if name == "MemoryAllocation" else -1, st))
    for evs in out.values():
        evs.sort(key=lambda e: e[0])
    return out


def replay(evs):
    """(peak from a replay of the block sizes, consistent with every event's
    bytes_allocated?, index of the peak, live blocks at it)."""
    first = evs[0]
    size = {}
    run = first[2]["bytes_allocated"] - first[1] * first[2]["allocation_bytes"]
    consistent, peak, at, live, live_at = True, None, 0, {}, {}
    for i, (_, kind, st) in enumerate(evs):
        if kind > 0:
            run += st["allocation_bytes"]
            size[st["addr"]] = st["allocation_bytes"]
            live[st["addr"]] = st["allocation_bytes"]
        else:
            run -= st.get("allocation_bytes", size.get(st["addr"], 0))
            live.pop(st["addr"], None)
        consistent = consistent and run == st["bytes_allocated"]
        if peak is None or run > peak:
            peak, at, live_at = run, i, dict(live)
    return peak, consistent, at, live_at


def hlo_protos(path):
    """[(metadata name, program id, HloProto bytes)] of /host:metadata."""
    out = []
    for p in planes(path):
        if txt(p, 2) != "/host:metadata":
            continue
        sid = [k for k, v in meta_names(p, 5).items() if txt(v, 2) == "Hlo Proto"][0]
        for e in p.get(4, []):
            m = msg(e)
            key = signed64(m[1][0])
            meta = msg(m[2][0])
            for sb in meta.get(5, []):
                s = msg(sb)
                if s.get(1) and signed64(s[1][0]) == sid and s.get(6):
                    out.append((txt(meta, 2), key & (2 ** 64 - 1), s[6][0]))
    return out


# ---- the server ----

def get(port, path):
    try:
        with urllib.request.urlopen("http://127.0.0.1:%d%s" % (port, path), timeout=60) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


class Server:
    def __enter__(self):
        root = tmpdir()
        d = os.path.join(root, "plugins", "profile", "run1")
        os.makedirs(d)
        for folder, name in FILES:
            shutil.copyfile(os.path.join(FIXTURES, folder, name), os.path.join(d, name))
        self.port = free_port()
        self.proc = subprocess.Popen(
            [BIN, "--profile-dir=" + root, "--port=%d" % self.port, "--perfetto-port=0",
             "--db=" + os.path.join(tmpdir(), "i.sqlite"), "--quiet"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_indexed(self.port, min_profiles=len(FILES))
        _, ps = get(self.port, "/api/profiles")
        self.ids = {os.path.basename(p["path"]): p["id"] for p in ps["profiles"]}
        return self

    def __exit__(self, *exc):
        self.proc.terminate()
        self.proc.wait(timeout=10)

    def api(self, name, sub, want=200):
        status, ans = get(self.port, "/api/profiles/%s/%s" % (self.ids[name], sub))
        assert status == want, (name, sub, status, ans)
        return ans


SERVER = None


def server():
    global SERVER
    if SERVER is None:
        SERVER = Server().__enter__()
    return SERVER


# ---- tests ----

def test_xplane_peaks():
    s = server()
    replayed = 0
    for name in (GEMM, CONV, TPU):
        want = memory_events(os.path.join(FIXTURES, "xplane", name))
        ans = s.api(name, "memory_profile")
        got = {a["name"]: a for a in ans["allocators"]}
        assert sorted(got) == sorted(want), (name, sorted(got), sorted(want))
        for al, evs in want.items():
            a, sm = got[al], got[al]["summary"]
            assert a["in_use_source"] == "stat" and a["events"] == len(evs)
            peak = max(st["bytes_allocated"] for _, _, st in evs)
            assert sm["peak_bytes_in_use"] == peak, (al, sm, peak)
            lifetime = max(st["peak_bytes_in_use"] for _, _, st in evs)
            assert sm["lifetime_peak_bytes"] == lifetime and peak <= lifetime
            first = next(i for i, e in enumerate(evs) if e[2]["bytes_allocated"] == peak)
            assert abs(sm["peak_time_us"] - evs[first][0] / 1000) < 1e-6, (sm, evs[first][0])
            rpeak, consistent, at, live = replay(evs)
            if consistent:
                replayed += 1
                assert rpeak == peak and at == first
                lp = a["live_at_peak"]
                assert lp["count"] == len(live) and lp["bytes"] == sum(live.values()), (lp, live)
                assert lp["unattributed_bytes"] == peak - sum(live.values())
                sizes = [r["bytes"] for r in lp["allocations"]]
                assert sizes == sorted(sizes, reverse=True)
            assert len(a["timeline"]) == len(evs)
            assert max(p[1] for p in a["timeline"]) == peak
    # MI300X gemm (2 allocators) and TPU (4 devices) replay exactly; the
    # 8-GPU capture misses allocations of its allocators (not replayable)
    assert replayed >= 6, replayed


def test_pytorch_memory():
    s = server()
    with gzip.open(os.path.join(FIXTURES, "chrome-json", TORCH), "rt") as f:
        trace = json.load(f)
    mem = [e for e in trace["traceEvents"] if e.get("name") == "[memory]"]
    cuda = [e["args"] for e in mem if e["args"].get("Device Type") == 1]
    ans = s.api(TORCH, "memory_profile")
    a = {x["name"]: x for x in ans["allocators"]}["CUDA:0"]
    assert a["source"] == "pytorch" and a["events"] == len(cuda)
    assert a["summary"]["peak_bytes_in_use"] == max(x["Total Allocated"] for x in cuda)
    assert a["summary"]["allocations"] == sum(1 for x in cuda if x["Bytes"] > 0)
    assert a["summary"]["lifetime_peak_bytes"] is None  # Kineto does not write it
    assert ans["peak_allocator"] == "CUDA:0"


def test_modules_against_protos():
    s = server()
    for name in (GEMM, CONV, TPU):
        protos = hlo_protos(os.path.join(FIXTURES, "xplane", name))
        mv = s.api(name, "memory_viewer")
        hl = s.api(name, "hlo")
        want = [(n, str(p)) for n, p, _ in protos]
        assert [(m["name"], m["program_id"]) for m in mv["modules"]] == want, name
        assert [(m["name"], m["program_id"]) for m in hl["modules"]] == want, name
        for m, (_, _, blob) in zip(hl["modules"], protos):
            mod = msg(msg(blob)[1][0])
            assert m["hlo_name"] == txt(mod, 1) and m["error"] is None
            assert m["instructions"] == sum(len(msg(c).get(2, [])) for c in mod[3])


def kind_of(a):
    if a.get(5) and a[5][0]:
        return "parameter"
    if a.get(12) and a[12][0]:
        return "constant"
    if a.get(7) and a[7][0]:
        return "output"
    return "temporary"


def test_buffer_sizes_one_module():
    s = server()
    blob = [b for n, _, b in hlo_protos(os.path.join(FIXTURES, "xplane", TPU))
            if n.startswith("jit_f(")][0]
    ba = msg(msg(blob)[3][0])
    size = {signed64(msg(lb)[1][0]): signed64(msg(lb)[2][0]) for lb in ba[1]}
    allocs = [msg(a) for a in ba[3]]
    kind_bytes = defaultdict(int)
    for a in allocs:
        kind_bytes[kind_of(a)] += signed64(a[2][0]) if a.get(2) else 0
    ans = s.api(TPU, "memory_viewer?module=" + urllib.parse.quote("jit_f"))
    assert ans["module"]["name"].startswith("jit_f(")
    for k in ("parameter", "output", "constant", "temporary"):
        assert ans["module"][k + "_bytes"] == kind_bytes[k], (k, ans["module"], kind_bytes)
    assert ans["buffers"], ans
    for b in ans["buffers"]:
        assert b["size_bytes"] == size[b["id"]], b
    sizes = [b["size_bytes"] for b in ans["buffers"]]
    assert sizes == sorted(sizes, reverse=True)
    # the heap: replay every trace (ALLOC +size, FREE -size, SHARE_WITH +0)
    best = None
    for tb in ba[4]:
        t = msg(tb)
        heap, peak, state = 0, 0, {}
        for eb in t.get(1, []):
            e = msg(eb)
            kind, bid = (e[1][0] if e.get(1) else 0), signed64(e[2][0]) if e.get(2) else 0
            if kind == 0 and not state.get(bid):
                state[bid] = 1
                heap += size[bid]
            elif kind == 2 and not state.get(bid):
                state[bid] = 2
            elif kind == 1 and state.get(bid):
                heap -= size[bid] if state[bid] == 1 else 0
                state[bid] = 0
            peak = max(peak, heap)
        best = peak if best is None else max(best, peak)
    assert ans["module"]["peak_heap_bytes"] == best and ans["heap"]["points"]
    assert max(p[1] for p in ans["heap"]["points"]) == best
    # the same module by program id
    pid = ans["module"]["program_id"]
    assert s.api(TPU, "memory_viewer?module=" + pid)["module"]["name"] == ans["module"]["name"]


def test_hlo_text_and_dot_flops():
    s = server()
    protos = {n: b for n, _, b in hlo_protos(os.path.join(FIXTURES, "xplane", GEMM))}
    mod = msg(msg(protos["jit_dot(5)"])[1][0])
    instrs = {}
    for c in mod[3]:
        for ib in msg(c).get(2, []):
            i = msg(ib)
            instrs[signed64(i[35][0])] = i
    dot = [i for i in instrs.values() if txt(i, 2) == "dot"][0]
    lhs = instrs[ints(dot, 36)[0]]
    out_dims, lhs_dims = ints(msg(dot[3][0]), 3), ints(msg(lhs[3][0]), 3)
    flops = 2
    for d in out_dims:
        flops *= d
    for k in ints(msg(dot[30][0]), 1):
        flops *= lhs_dims[k]
    ans = s.api(GEMM, "hlo/" + urllib.parse.quote("jit_dot(5)"))
    got = [i for c in ans["computations"] for i in c["instructions"] if i["opcode"] == "dot"]
    assert len(got) == 1 and got[0]["flops"] == flops and got[0]["flops_source"] == "derived"
    assert ans["text"].startswith("HloModule jit_dot\n") and "ENTRY %" in ans["text"]
    assert "dot(" in ans["text"] and got[0]["text"] in ans["text"]
    # an instruction shows its device time: the hlo_stats row of the same op
    ans = s.api(GEMM, "hlo/79")
    cc = [i for c in ans["computations"] for i in c["instructions"]
          if i["name"] == "custom-call.1"][0]
    rows = s.api(GEMM, "tools/hlo_stats")["rows"]
    row = [r for r in rows if r["program_id"] == "79" and r["hlo_op_name"] == "custom-call.1"][0]
    assert cc["occurrences"] == row["occurrences"]
    assert abs(cc["device_time_us"] - row["total_time"]) < 1e-6, (cc, row)
    # search keeps the matching instructions, the text stays whole
    ans = s.api(GEMM, "hlo/79?q=CUSTOM-call")
    names = [i["name"] for c in ans["computations"] for i in c["instructions"]]
    assert "custom-call.1" in names and "a.1" not in names and ans["matches"] == len(names)


def test_tools_and_errors():
    s = server()
    assert "memory_profile" in s.api(TPU, "tools") and "memory_viewer" in s.api(TPU, "tools")
    tools = s.api(TORCH, "tools")
    assert "memory_profile" in tools and "memory_viewer" not in tools
    assert s.api(TORCH, "memory_viewer", 404)["error"] == "No Data"
    assert s.api(TORCH, "hlo", 404)["error"] == "No Data"
    assert s.api(TORCH, "tools/memory_viewer", 404)["error"] == "No Data"
    s.api(GEMM, "hlo/no_such_module", 404)
    s.api(GEMM, "memory_viewer?module=no_such_module", 404)
    s.api(GEMM, "hlo/79?q=" + "x" * 300, 400)
    t = s.api(GEMM, "tools/memory_profile")
    assert {r["allocator"] for r in t["rows"]} == {"GPU_0_bfc", "xla_gpu_host_bfc"}
    mp = s.api(GEMM, "memory_profile")
    for a in mp["allocators"]:
        row = [r for r in t["rows"] if r["allocator"] == a["name"]][0]
        assert row["peak_in_use_bytes"] == a["summary"]["peak_bytes_in_use"]
        assert abs(row["peak_offset_us"] - a["summary"]["peak_offset_us"]) < 1e-6
        assert row["live_at_peak"] == a["live_at_peak"]["count"]
    assert t["properties"]["peak_allocator"] == mp["peak_allocator"]
    q = urllib.parse.urlencode({"run": "run1", "tag": "memory_viewer",
                                "host": GEMM.replace(".xplane.pb", "")})
    status, dt = get(s.port, "/data/plugin/profile/data?" + q)
    assert status == 200 and len(dt["rows"]) == 16, status
    status, tags = get(s.port, "/data/plugin/profile/run_tools?run=run1")
    assert "memory_profile" in tags and "memory_viewer" in tags


def test_every_module_answers():
    """memory_viewer answers for every module of every xplane fixture; a
    heap trace with no events (the TPU capture's jit__psum) has no peak
    event, written as null, rather than a read past the trace (which
    crashed the server)."""
    s = server()
    empty = 0
    for name in (GEMM, CONV, TPU):
        for m in s.api(name, "memory_viewer")["modules"]:
            ans = s.api(name, "memory_viewer?module=" + urllib.parse.quote(m["name"]))
            heap = ans["heap"]
            if heap is not None and heap["events"] == 0:
                empty += 1
                assert heap["peak_event"] is None and heap["peak_instruction"] is None, heap
                assert heap["points"] == [], heap
            elif heap is not None:
                assert 0 <= heap["peak_event"] < heap["events"], heap
    assert empty >= 1, empty


if __name__ == "__main__":
    need_fixtures()
    try:
        main([test_xplane_peaks, test_pytorch_memory, test_modules_against_protos,
              test_buffer_sizes_one_module, test_hlo_text_and_dot_flops, test_tools_and_errors,
              test_every_module_answers])
    finally:
        if SERVER:
            SERVER.__exit__(None, None, None)
