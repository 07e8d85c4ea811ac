/*
 * hlo_ops_internal.h — what hlo_ops.c (the scan of a profile's ops) and
 * hlo_ops_profile.c (what a profile offers that scan) share: the arg names
 * an op may carry, where a profile's ops come from, and the per-profile
 * scan state.
 *
 * Invariants: an op, pool or launch index maps to an item of its array; a
 * ref (name, category, ...) is a string id of the profile or, with its top
 * bit set, a pooled string (hlo_ops.c).
 */
#ifndef XPV_HLO_OPS_INTERNAL_H
#define XPV_HLO_OPS_INTERNAL_H

#include "hlo_ops.h"
#include "../api_util.h"
#include "../../common/xpv_hindex.h"
#include "../../store/compile_marks.h"

/* The args an op may carry, by index into profile_ctx.keys. */
enum {
    K_HLO_OP,
    K_HLO_MODULE,
    K_PROGRAM_ID,
    K_CATEGORY,
    K_FLOPS,
    K_MODEL_FLOPS,
    K_BYTES,
    K_TF_OP,
    K_JAX_OP, /* the instruction's metadata.op_name, set by the xplane reader */
    K_SOURCE, /* its source file:line, likewise */
    NKEYS
};

/* Where a profile's ops come from (see hlo_ops.h). */
enum { MODE_NONE, MODE_XLA_OPS, MODE_KERNELS };

typedef struct {
    uint64_t prog;
    int has_prog;
    uint32_t name, category, module, tf_op, source, opcode; /* refs, 0 none */
    int64_t occurrences, total_ps, self_ps;
    long double flops, model_flops, bytes;
    int has_flops, has_model_flops, has_bytes;
    int flops_derived, bytes_derived;
    int64_t executions;              /* "kernels" profiles: see hlo_ops.h */
    uint32_t last_name, last_launch; /* its latest kernel name and launch (+ 1) */
} local_op;

typedef struct {
    int64_t ts_ns, dur_ps, self_ps;
    uint32_t op;
} span;

/* How many kernels of one name an op launched on the track being scanned
 * ("kernels" profiles). */
typedef struct {
    uint32_t op, name;
    int64_t n;
} launch;

typedef struct {
    int64_t profile_id;
    int mode;
    uint32_t keys[NKEYS]; /* string ids of the arg names; 0: not in the profile */
    uint8_t *key_of;      /* string id -> 1 + K_*, 0 for other args (ids up to nkey_of) */
    uint32_t nkey_of;
    xpv_api_strings *strings;
    local_op *ops;
    size_t nops, capops;
    xpv_hindex opidx; /* op_hash_of -> index in ops */
    char **pool;      /* inline strings, NUL-terminated */
    size_t npool, cappool;
    xpv_hindex poolidx; /* hash of the text -> index in pool */
    span *spans;
    size_t nspans, capspans;
    launch *launches; /* the track being scanned's */
    size_t nlaunches, caplaunches;
    xpv_hindex launchidx; /* op_hash_of(op, 1, name) -> index in launches */
    int64_t *least;       /* scratch: by op, its least-launched kernel's count on a track */
    int64_t unattributed_n, unattributed_ps;
    xpv_store_compile_marks compile; /* "kernels" profiles: what is compile-time work */
    int64_t compile_n, compile_ps;   /* the device events left out as such */
    char *derive_error;
} profile_ctx;

/* The profile's string ids of the arg names it uses (keys, key_of). 0, or
 * -1 with err. */
int xpv_hlo_profile_keys(sqlite3 *db, profile_ctx *p, xpv_err *err);
/* Which source the profile's ops come from (MODE_*, see hlo_ops.h), after
 * xpv_hlo_profile_keys; -1 with err. */
int xpv_hlo_profile_mode(sqlite3 *db, profile_ctx *p, xpv_err *err);
/* 1 when profile id has an op (see hlo_ops.h), with cost figures if
 * with_cost; 0 when not, -1 with err. */
int xpv_hlo_profile_has_ops(sqlite3 *db, int64_t id, int with_cost, xpv_err *err);
void xpv_hlo_profile_free(profile_ctx *p);

#endif
