/*
 * compile.c — compilation inside the capture: when, and which device work
 * it ran (XLA's GEMM autotuning), so that tables show the program's work
 * and steps say how much of them was compilation.
 *
 * The rule, decided from what JAX/XLA captures hold (docs/FINDINGS.md):
 *   - compile windows: the union of the host spans that JAX and XLA open
 *     around compiling a program, on any host thread: JAX's
 *     `backend_compile[_and_load]` (tracing and lowering before it are not
 *     counted, as api/findings/ counts compilation), PjRt's
 *     `PjRt*Client::Compile*` and `PJRT_Client_Compile`, XLA's
 *     `CompileToBackendResult`, `CompileSingleModule`,
 *     `CompileModuleToLlvmIr` (the last run on the compile thread pool while
 *     the caller's thread waits in the first ones). Spans shorter than
 *     MIN_SPAN_NS are not read (their store blocks are skipped whole).
 *   - a compile-time device event: a kernel named after one of XLA's
 *     autotuner kernels (KERNEL_NAMES: redzone checks, result comparison,
 *     the timing delay kernel, buffer initialisation), wherever it runs; or
 *     a kernel, copy or memset that starts and ends inside a compile window
 *     and carries no `program_id` arg (every kernel a compiled program runs
 *     has one; the candidate GEMM kernels that autotuning times carry an
 *     `hlo_op` of their own one-fusion module, not a program id).
 * Everything else is the program's.
 *
 * The windows and the autotuner kernel names are kept in the index
 * (store/compile_marks.h), so that the HLO tools apply the same rule to
 * the events they scan (api/hlo/hlo_ops.c).
 *
 * Memory: the windows (16 bytes each, a few per compile), and 24 bytes per
 * compile-time event found inside them, at most EVENT_LIMIT (then the rest
 * count as the program's, with a warning).
 */
#define _GNU_SOURCE /* memmem */
#include "analysis_internal.h"
#include "../../store/compile_marks.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define MIN_SPAN_NS 100000 /* 100 µs */
#define EVENT_LIMIT (1u << 20)

static const char *const SPAN_NAMES[] = {"backend_compile",
                                         "backend_compile_and_load",
                                         "PJRT_Client_Compile",
                                         "CompileToBackendResult",
                                         "CompileSingleModule",
                                         "CompileModuleToLlvmIr",
                                         NULL};
static const char *const SPAN_PREFIXES[] = {"PjRtCApiClient::Compile",
                                            "PjRtStreamExecutorClient::Compile", NULL};
static const char *const KERNEL_NAMES[] = {"RedzoneAllocatorKernel", "xla_fp_comparison",
                                           "DelayKernel", "RepeatBufferKernel", NULL};

static int is_span_name(const char *s, size_t len)
{
    for (const char *const *n = SPAN_NAMES; *n; n++)
        if (strlen(*n) == len && memcmp(s, *n, len) == 0) return 1;
    for (const char *const *p = SPAN_PREFIXES; *p; p++)
        if (len >= strlen(*p) && memcmp(s, *p, strlen(*p)) == 0) return 1;
    return 0;
}

int xpv_compile_kernel_name(const char *s, size_t len)
{
    static const char ns[] = "stream_executor::gpu::";
    if (!memmem(s, len, ns, sizeof ns - 1)) return 0;
    for (const char *const *n = KERNEL_NAMES; *n; n++)
        if (memmem(s, len, *n, strlen(*n))) return 1;
    return 0;
}

void xpv_compile_free(xpv_compile *c)
{
    xpv_ivals_free(&c->windows);
    free(c->ev);
    xpv_hindex_free(&c->tuner);
    memset(c, 0, sizeof *c);
}

/* ---- windows ---- */

typedef struct {
    xpv_compile *c;
    const xpv_analysis_input *in;
    xpv_hindex memo; /* name id -> 1 compile span, 2 not */
} span_ctx;

static int span_visit(void *ctx, const xpv_event *ev, int64_t block_id, uint32_t index)
{
    (void)block_id, (void)index;
    span_ctx *s = ctx;
    if (ev->dur_ns < MIN_SPAN_NS) return 0;
    uint64_t *v = xpv_hindex_put(&s->memo, ev->name, 0);
    if (!*v) {
        size_t len;
        const char *name = s->in->string(s->in->string_ctx, ev->name, &len);
        *v = is_span_name(name, len) ? 1 : 2;
    }
    if (*v == 1) xpv_ivals_push(&s->c->windows, ev->ts_ns, xpv_sat_add_i64(ev->ts_ns, ev->dur_ns));
    return 0;
}

static int find_windows(xpv_compile *c, const xpv_analysis_input *in, xpv_err *err)
{
    span_ctx s = {.c = c, .in = in};
    int rc = 0;
    for (size_t t = 0; t < in->ntracks && rc == 0; t++) {
        if (in->tracks[t].device_id >= 0) continue;
        xpv_store_query q;
        xpv_store_query_all(&q, in->profile_id);
        q.track = (int64_t)t;
        q.kinds = XPV_KIND_BIT(XPV_KIND_OTHER);
        q.lod_min = xpv_store_lod(MIN_SPAN_NS);
        q.skip_args = 1;
        if (xpv_analysis_scan(in, &q, span_visit, &s, err) < 0) rc = -1;
    }
    xpv_hindex_free(&s.memo);
    c->window_ns = xpv_ivals_union(&c->windows, NULL);
    return rc;
}

/* ---- events ---- */

static int is_device_work(unsigned kind)
{
    return kind == XPV_KIND_KERNEL || (kind >= XPV_KIND_MEMCPY_H2D && kind <= XPV_KIND_MEMSET);
}

static int ev_cmp(const void *a, const void *b)
{
    const xpv_compile_ev *x = a, *y = b;
    if (x->track != y->track) return x->track < y->track ? -1 : 1;
    if (x->ts_ns != y->ts_ns) return x->ts_ns < y->ts_ns ? -1 : 1;
    if (x->name != y->name) return x->name < y->name ? -1 : 1;
    return (int)x->kind - (int)y->kind;
}

typedef struct {
    xpv_compile *c;
    const xpv_analysis_input *in;
    xpv_ival w;
    xpv_hindex key_is_program; /* arg key id -> 1 when it is "program_id" */
} ev_ctx;

static int has_program(ev_ctx *e, const xpv_event *ev)
{
    static const char *const keys[] = {"program_id", NULL};
    for (uint32_t i = 0; i < ev->nargs; i++)
        if (xpv_analysis_string_is(e->in, &e->key_is_program, ev->args[i].key, keys)) return 1;
    return 0;
}

static int ev_visit(void *ctx, const xpv_event *ev, int64_t block_id, uint32_t index)
{
    (void)block_id, (void)index;
    ev_ctx *e = ctx;
    xpv_compile *c = e->c;
    if (!is_device_work(ev->kind) || ev->dur_ps < 0) return 0;
    if (ev->ts_ns < e->w.start || xpv_sat_add_i64(ev->ts_ns, ev->dur_ns) > e->w.end) return 0;
    if (has_program(e, ev)) return 0;
    if (c->nev == EVENT_LIMIT) {
        c->dropped++;
        return 0;
    }
    if (c->nev == c->cap) {
        c->cap = c->cap ? c->cap * 2 : 1024;
        c->ev = xpv_xrealloc(c->ev, c->cap * sizeof *c->ev);
    }
    c->ev[c->nev++] = (xpv_compile_ev){ev->ts_ns, ev->track, ev->name, ev->kind};
    return 0;
}

static int find_events(xpv_compile *c, const xpv_analysis_input *in, const uint8_t *device_tracks,
                       xpv_err *err)
{
    ev_ctx e = {.c = c, .in = in};
    int rc = 0;
    for (size_t w = 0; w < c->windows.n && rc == 0; w++)
        for (size_t t = 0; t < in->ntracks && rc == 0; t++) {
            if (!device_tracks[t]) continue;
            xpv_store_query q;
            xpv_store_query_all(&q, in->profile_id);
            q.track = (int64_t)t;
            q.t0 = c->windows.v[w].start;
            q.t1 = c->windows.v[w].end;
            q.kinds = XPV_KIND_DEVICE_WORK_BITS;
            e.w = c->windows.v[w];
            if (xpv_analysis_scan(in, &q, ev_visit, &e, err) < 0) rc = -1;
        }
    xpv_hindex_free(&e.key_is_program);
    xpv_sort(c->ev, c->nev, sizeof *c->ev, ev_cmp);
    return rc;
}

/* The kernel names of the groups that are XLA's autotuner kernels. */
static void find_tuner_names(xpv_compile *c, const xpv_analysis_input *in, const xpv_kstats *k)
{
    for (size_t i = 0; i < k->n; i++) {
        const xpv_kgroup *g = &k->g[i];
        if (g->kind != XPV_KIND_KERNEL || xpv_hindex_get(&c->tuner, g->name)) continue;
        size_t len;
        const char *name = in->string(in->string_ctx, g->name, &len);
        if (xpv_compile_kernel_name(name, len)) xpv_hindex_put(&c->tuner, g->name, 1);
    }
}

int xpv_compile_find(xpv_compile *c, const xpv_analysis_input *in, const xpv_kstats *k,
                     const uint8_t *device_tracks, xpv_err *err)
{
    memset(c, 0, sizeof *c);
    find_tuner_names(c, in, k);
    if (find_windows(c, in, err) != 0) return -1;
    return find_events(c, in, device_tracks, err);
}

int xpv_compile_is(const xpv_compile *c, const xpv_event *ev)
{
    if (!is_device_work(ev->kind)) return 0;
    if (ev->kind == XPV_KIND_KERNEL && xpv_hindex_get(&c->tuner, ev->name)) return 1;
    if (!c->nev) return 0;
    xpv_compile_ev key = {ev->ts_ns, ev->track, ev->name, ev->kind};
    size_t i = xpv_lower_bound(&key, c->ev, c->nev, sizeof *c->ev, ev_cmp);
    return i < c->nev && ev_cmp(&key, &c->ev[i]) == 0;
}

int64_t xpv_compile_overlap_ps(const xpv_compile *c, int64_t base_ns, int64_t start_ps,
                               int64_t end_ps)
{
    /* the windows are disjoint and sorted, so their ends are sorted too */
    int64_t from_ns = xpv_sat_add_i64(base_ns, start_ps / 1000 - 1), sum = 0;
    size_t i = xpv_lower_bound_i64(c->windows.v, c->windows.n, sizeof *c->windows.v,
                                   offsetof(xpv_ival, end), from_ns);
    for (; i < c->windows.n; i++) {
        int64_t s = xpv_ps_since(base_ns, c->windows.v[i].start);
        int64_t e = xpv_ps_since(base_ns, c->windows.v[i].end);
        if (s >= end_ps) break;
        if (s < start_ps) s = start_ps;
        if (e > end_ps) e = end_ps;
        if (e > s) sum += e - s;
    }
    return sum;
}

static int u32_cmp(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

int xpv_compile_write(const xpv_compile *c, const xpv_analysis_input *in, xpv_err *err)
{
    if (!in->db) return 0;
    size_t nw = c->windows.n, nn = xpv_hindex_count(&c->tuner), pos = 0, i = 0;
    int64_t *start = xpv_xmalloc((nw ? nw : 1) * sizeof *start);
    int64_t *end = xpv_xmalloc((nw ? nw : 1) * sizeof *end);
    uint32_t *names = xpv_xmalloc((nn ? nn : 1) * sizeof *names);
    for (size_t w = 0; w < nw; w++)
        start[w] = c->windows.v[w].start, end[w] = c->windows.v[w].end;
    for (uint64_t key, val; i < nn && xpv_hindex_next_entry(&c->tuner, &pos, &key, &val);)
        names[i++] = (uint32_t)key;
    xpv_sort(names, i, sizeof *names, u32_cmp);
    int rc = xpv_store_compile_marks_put(in->db, in->profile_id, start, end, nw, names, i, err);
    free(start);
    free(end);
    free(names);
    return rc;
}
