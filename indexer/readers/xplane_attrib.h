/*
 * xplane_attrib.h — which HLO instruction ran each GPU kernel of an XSpace,
 * read from the compiled modules the space carries (the `Hlo Proto` stats
 * of /host:metadata, hlo_proto.h).
 *
 * Why: with XLA command buffers (CUDA graphs, JAX's default) every kernel
 * of a graph carries hlo_op = `command_buffer_N`, so per-op tools see one
 * op. The kernels of one graph execution are placed together instead, by
 * rules applied in turn until none places more:
 *  - by name: XLA names a fusion's kernel after its instruction, with `.`
 *    and `-` made `_` (`gemm_fusion_dot_17` is `gemm_fusion_dot.17`); a
 *    kernel whose name no identical instruction may share goes there;
 *  - by schedule: a graph runs its commands in the order of the module's
 *    schedule (every kernel that names one instruction alone did, on the
 *    H100 fixtures and captures), so the unplaced events between two
 *    placed ones of one computation ran, in order, instructions it
 *    schedules between them (after the last placed one: up to the next
 *    loop, conditional or call, or the computation's end, where the
 *    graph's commands end). Each reused kernel (XLA runs identical
 *    fusions with one kernel, named after the one it compiled first) and
 *    each library call (cuBLAS `nvjet_*`, `sm90_xmma_*`, cutlass, cuDNN,
 *    with its memsets and copies, which precede its kernel; NCCL's only to
 *    a collective, others never; a run of plain kernels is one call each)
 *    is matched to them in order, and placed where every such match
 *    agrees, when each instruction left between the two ran one of them (a
 *    collective's kernels run on a stream of their own; an instruction an
 *    async-start wraps counts at its place); CUDA's own kernels of memcpy
 *    nodes (`memcpy128`, `memcpy32_post`), named after nothing, go one
 *    copy each to the copies of the computation beside them, in schedule
 *    order, when there are exactly as many;
 *  - by data links, for reused and library kernels the schedule leaves
 *    open: of the instructions that may have run one (and that the placed
 *    events beside it allow by the schedule), the one that reads what the
 *    placed kernels just before wrote or writes what those just after
 *    read, nearest and on both sides first; a tie places nothing; with a
 *    schedule, a library call first waits for the kernels beside it;
 *  - by elimination: the last free member of a group takes the last of
 *    its kernels, and every one of them when it lies in a loop body the
 *    graph runs more than once;
 *  - by name order, when nothing else decides: the earliest such kernel
 *    the schedule allows goes to the instruction it is named after (XLA
 *    compiles in schedule order). This rule and the copies' are
 *    conventions, not proofs (a copy has no name to check its place by);
 *    the kernels they place are counted apart in the profile's
 *    `attribution` fact. The schedule's rules rest on the order graphs
 *    were seen to keep, and stop at loops a graph holds; a kernel after
 *    a loop body's is never an instruction scheduled before the loop.
 * The instructions considered are those of the graph's computation: where
 * the kernels that name one instruction alone lie, what those
 * computations run, and, when such a kernel of a loop body ran more than
 * once (the graph holds the loop), what runs the loop.
 * Anything else is "unattributed", with its time.
 *
 * Invariants: a module is decoded at most once, on first use, and points
 * into the mapped file, which must outlive the attribution; what its graph
 * executions need is built at the first one. Strings given
 * back are interned in the sink; 0 means none.
 */
#ifndef XPV_XPLANE_ATTRIB_H
#define XPV_XPLANE_ATTRIB_H

#include "../ingest.h"

#include <stddef.h>
#include <stdint.h>

#define XPV_ATTRIB_UNATTRIBUTED "unattributed"

typedef struct xpv_attrib xpv_attrib;
typedef struct xpv_attrib_module xpv_attrib_module;

/* What one kernel ran, as interned strings (0: none). */
typedef struct xpv_attrib_op {
    uint32_t hlo_op; /* the instruction's name, or XPV_ATTRIB_UNATTRIBUTED */
    uint32_t jax_op; /* its metadata.op_name, e.g. jit(step)/jvp()/dot_general */
    uint32_t source; /* its metadata source_file:source_line */
} xpv_attrib_op;

/* The attribution for the XSpace mapped at [data, data + size); NULL when
 * the space carries no compiled module. */
xpv_attrib *xpv_attrib_open(const uint8_t *data, size_t size, xpv_sink *sink);
void xpv_attrib_free(xpv_attrib *a);

/* The module of a kernel's program: by program id (has_prog), else by the
 * hlo_module name when one module has it. NULL when none, or when its
 * proto cannot be decoded (reported once, as a warning fact). */
xpv_attrib_module *xpv_attrib_module_of(xpv_attrib *a, int has_prog, uint64_t prog,
                                        uint32_t module_name);

/* Facts for the profile: how many graph events were placed, how many by
 * name order alone, how many not; and a warning for the unplaceable ones
 * (command-buffer events without correlation id or module). a may be NULL. */
void xpv_attrib_report(const xpv_attrib *a, int64_t unplaceable);

/* 1 when hlo_op text is a command buffer's (`command_buffer_N`). */
int xpv_attrib_is_command_buffer(xpv_attrib *a, uint32_t hlo_op);

/* The op of a kernel whose hlo_op names its instruction: 1 with *op, 0 when
 * the module has no such instruction. */
int xpv_attrib_named(xpv_attrib_module *m, uint32_t hlo_op, xpv_attrib_op *op);

/* One graph execution: the interned names of its device events in time
 * order; op[i] gets what event i ran (hlo_op XPV_ATTRIB_UNATTRIBUTED when
 * it cannot be placed with certainty). */
void xpv_attrib_run(xpv_attrib_module *m, const uint32_t *names, size_t n, xpv_attrib_op *op);

#endif
