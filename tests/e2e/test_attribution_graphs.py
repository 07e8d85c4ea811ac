#!/usr/bin/env python3
"""test_attribution_graphs.py: placing a graph's kernels where fresh H100
captures (scripts/gpu_capture.py) showed the schedule's rules stopping
short, on hand-built captures (no fixture needed; test_attribution.py
builds them):
  - two cuBLAS calls in a row, the second with its memset first, cut one
    call per kernel (with the memsets before it) when as many calls are
    left between the placed kernels; nothing when a call may have two
    kernels, and a reused fusion beside such a call still placed;
  - a graph's last kernels, after its last placed one, go by the schedule
    up to the next loop (the graph's end);
  - a loop body's own graph (its kernel ran once) holds nothing of what
    runs the loop; a graph that holds the loop (its kernel ran twice) runs
    the body's member on each trip, never an instruction scheduled before
    the loop after the body's kernels, and never a member of another loop
    that shows no kernel of its own."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from xpv_e2e import main  # noqa: E402
from test_attribution import _f, _instr, _module, _placed  # noqa: E402


def test_cublas_calls_in_a_row():
    main = _f(1, "main") + _f(5, 1) + _instr("p.1", "parameter", 9) + \
        _instr("fusion.1", "fusion", 10, [9], [101]) + \
        _instr("custom-call.1", "custom-call", 11, [10], target="__cublas$lt$matmul") + \
        _instr("custom-call.2", "custom-call", 12, [10], target="__cublas$lt$matmul") + \
        _instr("fusion.2", "fusion", 13, [11, 12], [102]) + _f(6, 13)
    calls = _module(main, fused=((101, "multiply"), (102, "add")), sched=((1, range(9, 14)),))
    gemms = ("fusion_1", "sm90_xmma_gemm_tn", "Memset 0", "sm90_xmma_gemm_nn", "fusion_2")
    got = [op for _, op in _placed(gemms, calls)]
    assert got == ["fusion.1", "custom-call.1", "custom-call.2", "custom-call.2", "fusion.2"], got
    got = [op for _, op in _placed(gemms[:2] + ("splitk_reduce",) + gemms[3:], calls)]
    assert got[1:4] == ["unattributed"] * 3, got
    # a call of two kernels beside a reused fusion: the cut does not align,
    # and the fusion still goes to its one member between the placed ones
    main = _f(1, "main") + _f(5, 1) + _instr("p.1", "parameter", 9) + \
        _instr("fusion.1", "fusion", 10, [9], [101]) + \
        _instr("custom-call.1", "custom-call", 11, [10], target="__cublas$gemm") + \
        _instr("fusion.2", "fusion", 12, [9], [102]) + \
        _instr("fusion.3", "fusion", 13, [11, 12], [103]) + \
        _instr("while.1", "while", 14, [13], [2]) + _f(6, 14)
    body = _f(1, "body") + _f(5, 2) + _instr("p.2", "parameter", 20) + \
        _instr("fusion.9", "fusion", 21, [20], [109]) + _f(6, 21)
    split_k = _module(main, body, fused=((101, "multiply"), (102, "add"), (103, "subtract"),
                                         (109, "add")),
                      sched=((1, (9, 10, 11, 12, 13, 14)), (2, (20, 21))))
    got = [op for _, op in _placed(("fusion_1", "sm90_gemm", "splitk_reduce", "fusion_2",
                                    "fusion_3"), split_k)]
    assert got == ["fusion.1", "unattributed", "unattributed", "fusion.2", "fusion.3"], got


def test_graph_tail():
    # a graph's last kernels, after its last placed one, ran what its
    # computation schedules after that one, up to a loop (the graph's end)
    for flow in (False, True):
        main = _f(1, "main") + _f(5, 1) + _instr("p.1", "parameter", 9) + \
            _instr("fusion.1", "fusion", 10, [9], [101]) + \
            _instr("custom-call.1", "custom-call", 11, [9], target="__cublas$lt$matmul") + \
            _instr("fusion.2", "fusion", 12, [9], [102]) + \
            (_instr("while.1", "while", 14, [9], [2]) if flow else b"") + \
            _instr("custom-call.2", "custom-call", 13, [9], target="__cublas$lt$matmul") + _f(6, 13)
        body = _f(1, "body") + _f(5, 2) + _instr("p.2", "parameter", 20) + \
            _instr("fusion.5", "fusion", 21, [20], [105]) + _f(6, 21)
        tail = _module(main, body, fused=((101, "multiply"), (102, "add"), (105, "negate")),
                       sched=((1, (9, 10, 11, 12) + ((14,) if flow else ()) + (13,)), (2, (20, 21))))
        got = [op for _, op in _placed(("fusion_1", "sm90_xmma_gemm_a", "fusion_2",
                                        "sm90_xmma_gemm_b"), tail)]
        assert got == ["fusion.1", "custom-call.1", "fusion.2",
                       "unattributed" if flow else "custom-call.2"], (flow, got)


def test_loop_bodies():
    main = _f(1, "main") + _f(5, 1) + _instr("p.1", "parameter", 9) + \
        _instr("fusion.1", "fusion", 10, [9], [101]) + \
        _instr("while.1", "while", 11, [9], [2]) + _f(6, 11)
    body = _f(1, "body") + _f(5, 2) + _instr("p.2", "parameter", 20) + \
        _instr("fusion.3", "fusion", 21, [20], [103]) + \
        _instr("fusion.4", "fusion", 22, [20], [104]) + _f(6, 22)
    loop = _module(main, body, fused=((101, "broadcast"), (103, "multiply"), (104, "broadcast")),
                   sched=((1, (9, 10, 11)), (2, (20, 21, 22))))
    got = _placed(("fusion_3", "fusion_1"), loop)
    assert got == [("fusion_3", "fusion.3"), ("fusion_1", "fusion.4")], got
    # the same loop held by main's graph (two trips): fusion_1 after the
    # body's fusion_3 is not main's fusion.1, scheduled before the loop
    got = _placed(("fusion_3", "fusion_1", "fusion_3", "fusion_1"), loop)
    assert got == [("fusion_3", "fusion.3"), ("fusion_1", "fusion.4")] * 2, got
    # a fori_loop body (2) runs a forward (4) and a backward (3) scan body;
    # the backward body's graph ran its fusion_3 once, so it is that body's
    # own, and its last kernel, fusion_5, is the backward body's fusion.2,
    # not the identical fusion.9 the fori body schedules after the loop
    main = _f(1, "main") + _f(5, 1) + _instr("p.1", "parameter", 9) + \
        _instr("while.1", "while", 10, [9], [2]) + _f(6, 10)
    fori = _f(1, "fori") + _f(5, 2) + _instr("p.2", "parameter", 20) + \
        _instr("while.2", "while", 21, [20], [4]) + _instr("while.3", "while", 22, [21], [3]) + \
        _instr("fusion.9", "fusion", 23, [22], [109]) + _f(6, 23)
    backward = _f(1, "backward") + _f(5, 3) + _instr("p.3", "parameter", 30) + \
        _instr("fusion.3", "fusion", 31, [30], [103]) + \
        _instr("fusion.2", "fusion", 32, [30], [102]) + _f(6, 32)
    forward = _f(1, "forward") + _f(5, 4) + _instr("p.4", "parameter", 40) + \
        _instr("fusion.5", "fusion", 41, [40], [105]) + _f(6, 41)
    nested = _module(main, fori, backward, forward,
                     fused=((103, "multiply"), (102, "add"), (105, "add"), (109, "add")),
                     sched=((1, (9, 10)), (2, (20, 21, 22, 23)), (3, (30, 31, 32)), (4, (40, 41))))
    got = _placed(("fusion_3", "fusion_5"), nested)
    assert got == [("fusion_3", "fusion.3"), ("fusion_5", "fusion.2")], got
    # main's graph holds two loops, body (fusion.3 alone, fusion.4) twice and
    # body2 (fusion.5, identical to fusion.4, nothing of its own) twice: no
    # body2 kernel goes to fusion.4, though its loop repeats
    main = _f(1, "main") + _f(5, 1) + _instr("p.1", "parameter", 9) + \
        _instr("fusion.1", "fusion", 10, [9], [101]) + \
        _instr("while.1", "while", 11, [10], [2]) + _instr("while.2", "while", 12, [11], [3]) + \
        _f(6, 12)
    body = _f(1, "body") + _f(5, 2) + _instr("p.2", "parameter", 20) + \
        _instr("fusion.3", "fusion", 21, [20], [103]) + \
        _instr("fusion.4", "fusion", 22, [20], [104]) + _f(6, 22)
    body2 = _f(1, "body2") + _f(5, 3) + _instr("p.3", "parameter", 30) + \
        _instr("fusion.5", "fusion", 31, [30], [105]) + _f(6, 31)
    two = _module(main, body, body2,
                  fused=((101, "multiply"), (103, "subtract"), (104, "add"), (105, "add")),
                  sched=((1, (9, 10, 11, 12)), (2, (20, 21, 22)), (3, (30, 31))))
    got = [op for _, op in _placed(("fusion_1",) + ("fusion_3", "fusion_4") * 2 +
                                   ("fusion_4",) * 2, two)]
    assert got[:4] == ["fusion.1", "fusion.3", "fusion.4", "fusion.3"], got
    assert "fusion.4" not in got[5:], got


if __name__ == "__main__":
    main([test_cublas_calls_in_a_row, test_graph_tail, test_loop_bodies])
