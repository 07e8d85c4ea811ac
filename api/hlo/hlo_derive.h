/*
 * hlo_derive.h — FLOPs and bytes of an HLO op derived from the shapes of
 * its compiled module (the `Hlo Proto` stats of /host:metadata), for the
 * HLO tools on profiles whose ops carry no `flops` stat (GPU).
 *
 * What is derived, per execution of one instruction:
 *  - dot, convolution: the formulas of hlo_proto.h (2 x result elements x
 *    contracted size; a convolution counts every kernel tap at every output
 *    position, padding included);
 *  - a library GEMM (custom-call `__cublas$gemm`, `__cublas$lt$matmul`,
 *    `__cublas$lt$matmul$f8`; XLA on ROCm keeps these names for rocBLAS and
 *    hipBLASLt): the dot formula on its first operand and the first element
 *    of its result tuple (the rest is workspace), with the contracting
 *    dimensions read from the backend_config JSON XLA writes
 *    (gemm_backend_config.dot_dimension_numbers.lhs_contracting_dimensions);
 *  - a library convolution (`__cudnn$convForward`,
 *    `__cudnn$convBiasActivationForward`, `__cudnn$convBackwardInput`,
 *    `__cudnn$convBackwardFilter`; MIOpen on ROCm likewise): the
 *    convolution formula with the instruction's own dimension numbers, the
 *    forward output and kernel taken from where each kind keeps them;
 *  - a fusion: the sum over the dots, convolutions and library calls of its
 *    called computations, nested fusions included (each computation once
 *    per path: a cycle is refused, not followed). Elementwise work is not
 *    counted, so a fusion with no dot or convolution has no derived FLOPs.
 * Bytes, for those same instructions only: the sizes of the operands plus
 * the result (a library call's first result element), i.e. the least the
 * op must move if it reads each input and writes each output once. Unknown
 * when a type has no whole-byte width.
 * Anything else stays unknown (has_* = 0), never 0.
 */
#ifndef XPV_HLO_DERIVE_H
#define XPV_HLO_DERIVE_H

#include "../../indexer/readers/hlo_proto.h"
#include <sqlite3.h>

typedef struct {
    long double flops, bytes;
    int has_flops, has_bytes;
} xpv_hlo_cost;

/* The cost of one execution of `in` (see above). Returns has_flops. */
int xpv_hlo_instr_cost(const xpv_hlo_module *m, const xpv_hlo_instr *in, xpv_hlo_cost *c);
/* FLOPs of a library GEMM custom-call: 1 with *flops, 0 when `in` is none
 * or its shapes or backend_config do not give them. */
int xpv_hlo_gemm_flops(const xpv_hlo_module *m, const xpv_hlo_instr *in, long double *flops);

/* A profile's modules, decoded on first use, for looking up ops by
 * (program id, instruction name). */
typedef struct xpv_hlo_derived xpv_hlo_derived;
/* NULL with err on failure; a profile without modules gives one that
 * finds nothing. */
xpv_hlo_derived *xpv_hlo_derived_open(sqlite3 *db, int64_t profile_id, xpv_err *err);
/* The cost of one execution of the named op of that program: 1 with *c
 * (has_flops set), 0 when unknown, -1 with err when its module cannot be
 * decoded. An instruction inside a fused computation is unknown: its
 * FLOPs are its fusion's, so an `XLA Ops` line that shows both never
 * counts them twice. */
int xpv_hlo_derived_cost(xpv_hlo_derived *d, uint64_t program, const char *name, size_t len,
                         xpv_hlo_cost *c, xpv_err *err);
/* The opcode of the named op of that program ("custom-call" for a Pallas
 * kernel, whose name says nothing): 1 with *opcode (valid while d is
 * open), 0 when unknown, -1 with err. */
int xpv_hlo_derived_opcode(xpv_hlo_derived *d, uint64_t program, const char *name, size_t len,
                           xpv_hlo_str *opcode, xpv_err *err);
/* 0 when d's file is still as it was when mapped, -1 with err when it
 * changed (xpv_hlo_file_unchanged): what d gave must then be dropped. */
int xpv_hlo_derived_unchanged(const xpv_hlo_derived *d, xpv_err *err);
void xpv_hlo_derived_free(xpv_hlo_derived *d);
/* 1 when profile id's modules hold an op (not inside a fusion) whose FLOPs
 * and bytes derive and whose name is one of the profile's strings (what
 * its events are named with), 0 when not, -1 with err: whether the
 * roofline has points, without scanning the events. */
int xpv_hlo_derived_any(sqlite3 *db, int64_t profile_id, xpv_err *err);

#endif
