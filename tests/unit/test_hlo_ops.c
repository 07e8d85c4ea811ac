/*
 * test_hlo_ops.c — device time per HLO op (api/hlo/hlo_ops.c) from hand-made
 * events written through the sink, checked against numbers worked out by
 * hand: `XLA Ops` lines (nesting and self time, siblings with the same
 * span, zero-length ops, args summed, module names from `XLA Modules`,
 * `Async XLA Ops` left out), GPU kernels grouped by (program_id, hlo_op)
 * with inline and interned names, kernels without an op counted apart,
 * compile-time work (autotuning) left out by the indexer's marks,
 * profiles without HLO ops (or not of JAX's formats), two hosts merged,
 * has_data agreeing with what is collected, and the per-profile cache
 * giving what a scan gives (reused, refreshed on a new indexing, bounded).
 */
#define _POSIX_C_SOURCE 200809L
#include "hlo_testutil.h"
#include "sink_testutil.h"
#include "api/hlo/hlo_cache.h"
#include "api/hlo/hlo_ops.h"
#include "store/index_db.h"
#include "indexer/ingest.h"

#include <stdio.h>
#include <string.h>

enum { TPU = 1, TPU2 = 2, GPU = 3, PLAIN = 4, TORCH = 5 };

static xpv_sink *open_profile(sqlite3 *db, int64_t id)
{
    return xpv_test_sink(db, id, id == TORCH ? "pytorch_trace_json" : "xplane");
}

static void finish(xpv_sink *s)
{
    xpv_test_sink_finish(s);
}

typedef struct {
    const char *category; /* NULL: none */
    int64_t flops, bytes; /* < 0: none */
} op_stats;

/* An event on thread tid of pid 200 (device 0), its op stats for program 7. */
static void line_event(xpv_sink *s, int64_t tid, int kind, const char *name, int64_t ts_ns,
                       int64_t dur_ps, const op_stats *st)
{
    xpv_arg args[4];
    uint32_t n = 0;
    if (st) {
        args[n++] =
            (xpv_arg){.key = xpv_sink_intern_cstr(s, "program_id"), .type = XPV_ARG_UINT, .v.u = 7};
        if (st->category)
            args[n++] = (xpv_arg){.key = xpv_sink_intern_cstr(s, "hlo_category"),
                                  .type = XPV_ARG_STR,
                                  .v.str = xpv_sink_intern_cstr(s, st->category)};
        if (st->flops >= 0)
            args[n++] = (xpv_arg){
                .key = xpv_sink_intern_cstr(s, "flops"), .type = XPV_ARG_INT, .v.i = st->flops};
        if (st->bytes >= 0)
            args[n++] = (xpv_arg){.key = xpv_sink_intern_cstr(s, "bytes_accessed"),
                                  .type = XPV_ARG_DOUBLE,
                                  .v.d = (double)st->bytes};
    }
    xpv_event ev;
    xpv_event_init(&ev);
    ev.track = xpv_sink_track(s, 200, tid);
    ev.kind = (uint8_t)kind;
    ev.name = xpv_sink_intern_cstr(s, name);
    ev.ts_ns = ts_ns;
    ev.dur_ps = dur_ps;
    ev.dur_ns = dur_ps < 0 ? -1 : dur_ps / 1000;
    ev.args = args;
    ev.nargs = n;
    xpv_sink_event(s, &ev);
}

/* One TPU-like profile: a while (10 us) holding two fusions (3 + 2 us) and
 * a zero-length copy-start at its start; two ops with one span (1 us
 * each); an async op and an instant, neither of which counts. */
static void write_tpu(sqlite3 *db, int64_t id)
{
    xpv_sink *s = open_profile(db, id);
    xpv_sink_process_device(s, 200, 0);
    /* the tracks first: xpv_sink_thread_name of a new track reads the track
     * table before creating the track grows it */
    for (int64_t tid = 2; tid <= 4; tid++)
        xpv_sink_track(s, 200, tid);
    xpv_sink_thread_name(s, 200, 2, "XLA Modules", 11);
    xpv_sink_thread_name(s, 200, 3, "XLA Ops", 7);
    xpv_sink_thread_name(s, 200, 4, "Async XLA Ops", 13);
    line_event(s, 2, XPV_KIND_XLA_MODULE, "jit_f(7)", 0, 100000000, NULL);
    op_stats loop = {"loop fusion", 600, 300}, none = {NULL, -1, -1};
    op_stats w = {"while", -1, -1}, copy = {"copy-start", 0, 40};
    line_event(s, 3, XPV_KIND_XLA_OP, "while.1", 1000, 10000000, &w);
    line_event(s, 3, XPV_KIND_XLA_OP, "copy-start", 1000, 0, &copy);
    line_event(s, 3, XPV_KIND_XLA_OP, "fusion.1", 2000, 3000000, &loop);
    line_event(s, 3, XPV_KIND_XLA_OP, "fusion.1", 6000, 2000000, &loop);
    line_event(s, 3, XPV_KIND_XLA_OP, "twin.a", 20000, 1000000, &none);
    line_event(s, 3, XPV_KIND_XLA_OP, "twin.b", 20000, 1000000, &none);
    line_event(s, 3, XPV_KIND_XLA_OP, "instant", 30000, -1, &none);
    line_event(s, 4, XPV_KIND_XLA_OP, "async-copy", 1000, 50000000, &copy);
    finish(s);
}

static const xpv_hlo_op *find(const xpv_hlo_ops *o, const char *name)
{
    for (size_t i = 0; i < o->n; i++)
        if (strcmp(o->ops[i].name, name) == 0) return &o->ops[i];
    return NULL;
}

static void collect(sqlite3 *db, const int64_t *ids, size_t n, xpv_hlo_ops *o)
{
    xpv_err err = {{0}};
    xpv_tool_scope scope = {.ids = ids, .n = n};
    int rc = xpv_hlo_ops_collect(db, &scope, o, &err);
    if (rc) fprintf(stderr, "collect: %s\n", err.msg);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
}

static void exec(sqlite3 *db, const char *sql)
{
    xpv_err err = {{0}};
    CU_ASSERT_EQUAL(xpv_db_exec(db, sql, &err), 0);
}

/* The cache gives the answer a scan gives; hosts merged reuse each host's
 * entry; a profile indexed again (a new indexed_at) or not indexed for good
 * is scanned; a value over the budget is not kept. */
static void test_cache(void)
{
    sqlite3 *db = xpv_test_fresh_index(xpv_test_tmpdir(), TPU);
    write_tpu(db, TPU);
    write_tpu(db, TPU2);
    exec(db, "UPDATE profiles SET status='ok', indexed_at=1");
    xpv_hlo_cache *c = xpv_hlo_ops_cache_new(1 << 20);
    const int64_t both[] = {TPU, TPU2};
    xpv_hlo_ops scanned, cached;
    collect(db, both, 2, &scanned);
    xpv_test_hlo_collect(db, both, 2, c, &cached); /* fills the cache */
    xpv_test_hlo_assert_same(&scanned, &cached);
    CU_ASSERT_EQUAL(xpv_hlo_cache_entries(c), 2);
    CU_ASSERT(xpv_hlo_cache_bytes(c) > 0);
    xpv_hlo_ops_free(&cached);
    exec(db, "DELETE FROM blocks"); /* from now on only the cache has the ops */
    xpv_test_hlo_collect(db, both, 2, c, &cached);
    xpv_test_hlo_assert_same(&scanned, &cached);
    xpv_hlo_ops_free(&cached);
    xpv_hlo_ops_free(&scanned);
    collect(db, (int64_t[]){TPU}, 1, &scanned); /* no blocks: no ops */
    CU_ASSERT_EQUAL(scanned.n, 0);
    xpv_test_hlo_collect(db, (int64_t[]){TPU}, 1, c, &cached);
    CU_ASSERT_EQUAL(cached.n, 5);
    xpv_hlo_ops_free(&cached);
    exec(db, "UPDATE profiles SET indexed_at=2 WHERE id=1"); /* indexed again: scanned */
    xpv_test_hlo_collect(db, (int64_t[]){TPU}, 1, c, &cached);
    xpv_test_hlo_assert_same(&scanned, &cached);
    CU_ASSERT_EQUAL(xpv_hlo_cache_entries(c), 3);
    xpv_hlo_ops_free(&cached);
    exec(db, "UPDATE profiles SET status='pending' WHERE id=2"); /* not for good: scanned */
    xpv_test_hlo_collect(db, (int64_t[]){TPU2}, 1, c, &cached);
    CU_ASSERT_EQUAL(cached.n, 0);
    CU_ASSERT_EQUAL(xpv_hlo_cache_entries(c), 3);
    xpv_hlo_ops_free(&cached);
    xpv_hlo_ops_free(&scanned);
    xpv_hlo_cache_free(c);
    sqlite3_close(db);
}

static void test_cache_budget(void)
{
    sqlite3 *db = xpv_test_fresh_index(xpv_test_tmpdir(), TPU);
    write_tpu(db, TPU);
    exec(db, "UPDATE profiles SET status='ok', indexed_at=1");
    xpv_hlo_cache *c = xpv_hlo_ops_cache_new(16); /* smaller than any value */
    xpv_hlo_ops scanned, cached;
    collect(db, (int64_t[]){TPU}, 1, &scanned);
    xpv_test_hlo_collect(db, (int64_t[]){TPU}, 1, c, &cached);
    xpv_test_hlo_assert_same(&scanned, &cached);
    CU_ASSERT_EQUAL(xpv_hlo_cache_entries(c), 0);
    xpv_hlo_ops_free(&cached);
    xpv_hlo_ops_free(&scanned);
    xpv_hlo_cache_free(c);
    sqlite3_close(db);
}

static void test_xla_ops_self_time(void)
{
    sqlite3 *db = xpv_test_fresh_index(xpv_test_tmpdir(), TPU);
    write_tpu(db, TPU);
    xpv_tool_scope scope = {.ids = (int64_t[]){TPU}, .n = 1};
    CU_ASSERT_EQUAL(xpv_hlo_ops_has_data(db, &scope, 0, NULL), 1);
    CU_ASSERT_EQUAL(xpv_hlo_ops_has_data(db, &scope, 1, NULL), 1); /* fusion.1 has flops, bytes */
    xpv_hlo_ops o;
    collect(db, (int64_t[]){TPU}, 1, &o);
    CU_ASSERT_EQUAL(o.n, 5); /* no async-copy, no instant */
    CU_ASSERT_EQUAL(o.from_xla_ops, 1);
    const xpv_hlo_op *w = find(&o, "while.1"), *f = find(&o, "fusion.1");
    CU_ASSERT_PTR_NOT_NULL_FATAL(w);
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    CU_ASSERT_EQUAL(w->total_ps, 10000000);
    CU_ASSERT_EQUAL(w->self_ps, 5000000); /* less the two fusions */
    CU_ASSERT_EQUAL(f->occurrences, 2);
    CU_ASSERT_EQUAL(f->total_ps, 5000000);
    CU_ASSERT_EQUAL(f->self_ps, 5000000);
    CU_ASSERT(f->has_flops && f->flops == 1200 && f->has_bytes && f->bytes == 600);
    CU_ASSERT_FALSE(w->has_flops); /* not carried: unknown, not 0 */
    CU_ASSERT_EQUAL(find(&o, "copy-start")->occurrences, 1);
    CU_ASSERT_EQUAL(find(&o, "twin.a")->self_ps, 1000000); /* same span: siblings */
    CU_ASSERT_EQUAL(find(&o, "twin.b")->self_ps, 1000000);
    CU_ASSERT_EQUAL(o.total_self_ps, 12000000);
    CU_ASSERT_STRING_EQUAL(f->category, "loop fusion");
    CU_ASSERT_TRUE(f->category_carried);
    CU_ASSERT_STRING_EQUAL(find(&o, "twin.a")->category, "other"); /* from the name */
    CU_ASSERT_FALSE(find(&o, "twin.a")->category_carried);
    CU_ASSERT_STRING_EQUAL(f->module, "jit_f");
    CU_ASSERT(f->has_program && f->program_id == 7);
    CU_ASSERT_STRING_EQUAL(o.ops[0].name, "while.1"); /* self time ties: then time */
    CU_ASSERT_STRING_EQUAL(o.ops[1].name, "fusion.1");
    CU_ASSERT_STRING_EQUAL(o.ops[2].name, "twin.a"); /* ties again: then name */
    xpv_hlo_ops_free(&o);
    sqlite3_close(db);
}

/* A kernel on stream 16 of GPU 0 (pid 100), with an hlo_op given interned
 * (STR), inline (TEXT) or not at all. */
static void gpu_kernel(xpv_sink *s, int kind, const char *op, int inline_op, int64_t ts,
                       int64_t dur_ps)
{
    xpv_arg args[3];
    uint32_t n = 0;
    if (op) {
        args[n] = (xpv_arg){.key = xpv_sink_intern_cstr(s, "hlo_op")};
        if (inline_op)
            args[n].type = XPV_ARG_TEXT, args[n].text = op, args[n].len = (uint32_t)strlen(op);
        else
            args[n].type = XPV_ARG_STR, args[n].v.str = xpv_sink_intern_cstr(s, op);
        n++;
        args[n++] = (xpv_arg){.key = xpv_sink_intern_cstr(s, "hlo_module"),
                              .type = XPV_ARG_STR,
                              .v.str = xpv_sink_intern_cstr(s, "jit_dot")};
        args[n++] =
            (xpv_arg){.key = xpv_sink_intern_cstr(s, "program_id"), .type = XPV_ARG_INT, .v.i = 21};
    }
    xpv_event ev;
    xpv_event_init(&ev);
    ev.track = xpv_sink_track(s, 100, 16);
    ev.kind = (uint8_t)kind;
    ev.name = xpv_sink_intern_cstr(s, "Cijk_kernel");
    ev.ts_ns = ts;
    ev.dur_ps = dur_ps;
    ev.dur_ns = dur_ps / 1000;
    ev.args = args;
    ev.nargs = n;
    xpv_sink_event(s, &ev);
}

static void test_gpu_kernels(void)
{
    sqlite3 *db = xpv_test_fresh_index(xpv_test_tmpdir(), TPU);
    xpv_sink *s = open_profile(db, GPU);
    xpv_sink_process_device(s, 100, 0);
    gpu_kernel(s, XPV_KIND_KERNEL, "custom-call.1", 0, 1000, 4000000);
    gpu_kernel(s, XPV_KIND_KERNEL, "custom-call.1", 1, 6000, 2000000); /* same op, inline */
    gpu_kernel(s, XPV_KIND_MEMCPY_D2D, "copy.3", 1, 9000, 500000);
    gpu_kernel(s, XPV_KIND_KERNEL, NULL, 0, 12000, 700000); /* no op: apart */
    finish(s);
    xpv_tool_scope scope = {.ids = (int64_t[]){GPU}, .n = 1};
    CU_ASSERT_EQUAL(xpv_hlo_ops_has_data(db, &scope, 0, NULL), 1);
    CU_ASSERT_EQUAL(xpv_hlo_ops_has_data(db, &scope, 1, NULL), 0); /* no cost figures on GPU */
    xpv_hlo_ops o;
    collect(db, (int64_t[]){GPU}, 1, &o);
    CU_ASSERT_EQUAL(o.from_kernels, 1);
    CU_ASSERT_EQUAL(o.n, 2);
    const xpv_hlo_op *cc = find(&o, "custom-call.1"), *cp = find(&o, "copy.3");
    CU_ASSERT_PTR_NOT_NULL_FATAL(cc);
    CU_ASSERT_PTR_NOT_NULL_FATAL(cp);
    CU_ASSERT_EQUAL(cc->occurrences, 2); /* every kernel is an occurrence */
    CU_ASSERT_EQUAL(cc->total_ps, 6000000);
    CU_ASSERT_EQUAL(cc->self_ps, 6000000);
    CU_ASSERT_STRING_EQUAL(cc->category, "custom-call");
    CU_ASSERT_STRING_EQUAL(cc->module, "jit_dot");
    CU_ASSERT(cc->has_program && cc->program_id == 21);
    CU_ASSERT_FALSE(cc->has_flops || cc->has_bytes || cc->has_model_flops);
    CU_ASSERT_STRING_EQUAL(cp->category, "copy");
    CU_ASSERT_EQUAL(o.unattributed_n, 1);
    CU_ASSERT_EQUAL(o.unattributed_ps, 700000);
    xpv_hlo_ops_free(&o);
    sqlite3_close(db);
}

/* A kernel of stream 16 named `name` that carries hlo_op `op` (when not
 * NULL) and no program_id, as the GEMMs autotuning times do. */
static void tuning_kernel(xpv_sink *s, const char *name, const char *op, int64_t ts, int64_t dur_ps)
{
    xpv_arg arg = {.key = xpv_sink_intern_cstr(s, "hlo_op"), .type = XPV_ARG_STR};
    if (op) arg.v.str = xpv_sink_intern_cstr(s, op);
    xpv_event ev;
    xpv_event_init(&ev);
    ev.track = xpv_sink_track(s, 100, 16);
    ev.kind = XPV_KIND_KERNEL;
    ev.name = xpv_sink_intern_cstr(s, name);
    ev.ts_ns = ts, ev.dur_ps = dur_ps, ev.dur_ns = dur_ps / 1000;
    ev.args = op ? &arg : NULL, ev.nargs = op ? 1 : 0;
    xpv_sink_event(s, &ev);
}

/* Compile-time device work is left out by the indexer's rule, from the
 * marks it keeps: an autotuner kernel wherever it runs, and device work
 * without program_id wholly inside a compile span; the rest is the
 * program's. */
static void test_gpu_compile_apart(void)
{
    sqlite3 *db = xpv_test_fresh_index(xpv_test_tmpdir(), TPU);
    xpv_sink *s = open_profile(db, GPU);
    xpv_sink_process_device(s, 100, 0);
    xpv_event span;
    xpv_event_init(&span);
    span.track = xpv_sink_track(s, 1, 1);
    span.name = xpv_sink_intern_cstr(s, "backend_compile");
    span.ts_ns = 0, span.dur_ns = 200000, span.dur_ps = 200000000;
    xpv_sink_event(s, &span);
    gpu_kernel(s, XPV_KIND_KERNEL, "custom-call.1", 0, 1000, 4000000); /* has a program */
    tuning_kernel(s, "gemm_candidate", "fusion.9", 5000, 3000000);     /* timed: apart */
    tuning_kernel(s, "stream_executor::gpu::RedzoneAllocatorKernelImpl", NULL, 300000, 1000000);
    tuning_kernel(s, "gemm_candidate", "fusion.9", 199000, 2000000); /* past the span's end */
    finish(s);
    xpv_hlo_ops o;
    collect(db, (int64_t[]){GPU}, 1, &o);
    CU_ASSERT_EQUAL(o.compile_n, 2);
    CU_ASSERT_EQUAL(o.compile_ps, 4000000);
    CU_ASSERT_EQUAL(o.unattributed_n, 0);
    const xpv_hlo_op *cc = find(&o, "custom-call.1"), *f = find(&o, "fusion.9");
    CU_ASSERT_PTR_NOT_NULL_FATAL(cc);
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    CU_ASSERT_EQUAL(cc->total_ps, 4000000);
    CU_ASSERT_EQUAL(f->occurrences, 1);
    CU_ASSERT_EQUAL(f->total_ps, 2000000);
    xpv_hlo_ops_free(&o);
    sqlite3_close(db);
}

/* A profile whose kernels carry no hlo_op, though the arg name is known
 * (the JSON reader interns it up front); and a PyTorch one whose kernels
 * carry one: only JAX's formats are read for HLO ops. */
static void test_no_hlo_ops(void)
{
    sqlite3 *db = xpv_test_fresh_index(xpv_test_tmpdir(), TPU);
    xpv_sink *s = open_profile(db, PLAIN);
    xpv_sink_process_device(s, 100, 0);
    xpv_sink_intern_cstr(s, "hlo_op");
    gpu_kernel(s, XPV_KIND_KERNEL, NULL, 0, 1000, 4000000);
    finish(s);
    s = open_profile(db, TORCH);
    xpv_sink_process_device(s, 100, 0);
    gpu_kernel(s, XPV_KIND_KERNEL, "fusion.1", 0, 1000, 4000000);
    finish(s);
    xpv_tool_scope scope = {.ids = (int64_t[]){PLAIN, TORCH}, .n = 2};
    CU_ASSERT_EQUAL(xpv_hlo_ops_has_data(db, &scope, 0, NULL), 0);
    xpv_hlo_ops o;
    collect(db, (int64_t[]){PLAIN, TORCH}, 2, &o);
    CU_ASSERT_EQUAL(o.n, 0);
    CU_ASSERT_EQUAL(o.from_kernels + o.from_xla_ops, 0);
    xpv_hlo_ops_free(&o);
    sqlite3_close(db);
}

static void test_hosts_merge(void)
{
    sqlite3 *db = xpv_test_fresh_index(xpv_test_tmpdir(), TPU);
    write_tpu(db, TPU);
    write_tpu(db, TPU2);
    xpv_hlo_ops o;
    collect(db, (int64_t[]){TPU, TPU2}, 2, &o);
    CU_ASSERT_EQUAL(o.n, 5);
    CU_ASSERT_EQUAL(o.from_xla_ops, 2);
    const xpv_hlo_op *f = find(&o, "fusion.1");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    CU_ASSERT_EQUAL(f->occurrences, 4);
    CU_ASSERT_EQUAL(f->total_ps, 10000000);
    CU_ASSERT(f->flops == 2400);
    CU_ASSERT_EQUAL(o.total_self_ps, 24000000);
    xpv_hlo_ops_free(&o);
    sqlite3_close(db);
}

int main(void)
{
    static const xpv_test_case tests[] = {
        {"XLA Ops: self time, args, modules", test_xla_ops_self_time},
        {"GPU kernels by hlo_op", test_gpu_kernels},
        {"GPU compile-time work apart", test_gpu_compile_apart},
        {"no HLO ops", test_no_hlo_ops},
        {"hosts merged", test_hosts_merge},
        {"cached per profile", test_cache},
        {"cache budget", test_cache_budget},
        {NULL, NULL},
    };
    return xpv_test_run("hlo_ops", tests, 0);
}
