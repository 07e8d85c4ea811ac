/*
 * hlo_ops.h — device time per HLO op, read from the event store for the
 * HLO tools (hlo_stats, op_profile, roofline_model).
 *
 * Where the ops come from, per profile:
 *  - "xla_ops": the device planes' `XLA Ops` lines (TPU, and GPU planes a
 *    converter already derived them on). One event is one occurrence; its
 *    name is the op; hlo_category, program_id, flops, model_flops,
 *    bytes_accessed and tf_op are its args. `Async XLA Ops` are left out:
 *    they overlap the ops that wait for them and are not device time.
 *  - "kernels" (raw GPU planes): kernels, copies and memsets that carry an
 *    `hlo_op` arg, grouped by (program_id, hlo_op) as XProf groups them;
 *    each device event is an occurrence (an op may launch several kernels).
 *    Device events without `hlo_op` are counted apart, never guessed. Only
 *    xplane and JAX trace JSON profiles are read so: other readers may
 *    know the arg name without any event carrying it.
 *    Compile-time device work (XLA's autotuning inside the capture) is
 *    left out by the rule kernel_stats keeps it apart by
 *    (indexer/analysis/compile.c, applied to each event with the windows
 *    and names the index keeps, store/compile_marks.h) and counted apart.
 * Ops are keyed by (program, op name) and merged over the scope's hosts.
 *
 * Derived FLOPs and bytes (hlo_derive.h), where an op carries none: one
 * execution's, times the op's executions. An `XLA Ops` event is one
 * execution. A kernels-profile op may launch several kernels per execution
 * (a cuDNN/MIOpen convolution launches an im2col and a GEMM kernel), and
 * the kernels an execution launches are fixed when the module is
 * compiled, so its executions on a stream are the launches there of the
 * kernel name it launches least often, summed over the streams (devices
 * may pick different kernels for the same op).
 *
 * Self time: on an `XLA Ops` line, an op that starts inside another op's
 * span (on the ns grid the index keeps starts on) is its child, and the
 * parent's self time excludes the child's time. Kernels of a stream run one
 * at a time, so in "kernels" profiles self time is the time (and no spans
 * are held or sorted). Times are integer ps,
 * summed exactly. A value the profile does not carry stays unknown (has_*
 * = 0), never 0.
 */
#ifndef XPV_HLO_OPS_H
#define XPV_HLO_OPS_H

#include "../tools/tools.h"
#include "hlo_category.h"

typedef struct {
    char *name;         /* the HLO op (instruction) name */
    char *category;     /* hlo_category, or xpv_hlo_category(name), or opcode */
    char *module;       /* the program's module name, NULL unknown */
    char *framework_op; /* tf_op (the framework op / JAX name stack), NULL unknown */
    char *source;       /* the user's source line (file:line), NULL unknown */
    char *opcode;       /* from its module (GPU) where the profile carried no
                           category, for a name that says nothing; NULL unknown */
    uint64_t program_id;
    int has_program, category_carried;
    int64_t occurrences, total_ps, self_ps;
    /* sums over occurrences, where at least one occurrence carried the stat,
     * or (GPU) derived from the module's shapes (hlo_derive.h) times the
     * op's executions where none did: *_derived says so */
    long double flops, model_flops, bytes;
    int has_flops, has_model_flops, has_bytes;
    int flops_derived, bytes_derived;
} xpv_hlo_op;

typedef struct {
    xpv_hlo_op *ops;
    size_t n;
    int64_t total_self_ps;  /* the sum of every op's self time */
    int64_t unattributed_n; /* device events without an hlo_op ("kernels" profiles) */
    int64_t unattributed_ps;
    int64_t compile_n; /* compile-time device events left out ("kernels" profiles) */
    int64_t compile_ps;
    int from_xla_ops, from_kernels; /* how many of the scope's profiles gave ops from each */
    char *derive_error; /* why a profile's modules could not be read for derived FLOPs */
} xpv_hlo_ops;

/* 1 when a profile of the scope has HLO ops (with_cost: an op that carries
 * flops and bytes_accessed), 0 when not, -1 with err. */
int xpv_hlo_ops_has_data(sqlite3 *db, const xpv_tool_scope *s, int with_cost, xpv_err *err);
/* Collects the scope's ops, sorted by self time, then time, then name
 * (descending, descending, ascending). Each profile is scanned once per
 * indexing when the scope carries a cache (s->hlo_cache, hlo_cache.h);
 * the answer is the same with or without. Returns 0, or -1 with err. */
int xpv_hlo_ops_collect(sqlite3 *db, const xpv_tool_scope *s, xpv_hlo_ops *out, xpv_err *err);
void xpv_hlo_ops_free(xpv_hlo_ops *o);
/* Scans profile id into cache (hlo_cache.h) unless it holds it already,
 * as xpv_hlo_ops_collect would, so that the HLO tools' first request finds
 * it there (hlo_warm.c). Returns 1 when the cache holds the profile's ops
 * after the call, 0 when it has none, is not indexed for good, or its ops
 * alone are over the budget, -1 with err. */
int xpv_hlo_ops_warm(sqlite3 *db, struct xpv_hlo_cache *cache, int64_t id, xpv_err *err);

/* Shared with hlo_modules.c: */
/* The ids of the profile's tracks whose thread is `line` (NULL: every
 * device track); *n gets their count. NULL with err on failure. */
int64_t *xpv_hlo_tracks_of(sqlite3 *db, int64_t profile_id, const char *line, size_t *n,
                           xpv_err *err);
/* 1 when the profile is of a format whose device events may carry hlo_op
 * (JAX's: xplane, or its trace JSON), 0 when not, -1 with err. */
int xpv_hlo_jax_format(sqlite3 *db, int64_t profile_id, xpv_err *err);
/* 0 when a tf_op says nothing of the framework op: empty, or JAX's
 * "XlaModule:" on GPU kernels (TensorFlow's "XlaModule:#hlo_module=…#"). */
int xpv_hlo_names_framework_op(const char *s, size_t len);
/* An `XLA Modules` event's name "<module>(<program id>)": 1 with the
 * module name's length and the program id, 0 when it is not so written. */
int xpv_hlo_module_split(const char *s, size_t len, size_t *name_len, uint64_t *prog);

#endif
