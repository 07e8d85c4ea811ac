/*
 * findings_scan.c — the measurements under the findings, read from the
 * event store: names classified once (SQL narrows the profile's strings
 * down, C decides), one scan of the host's events (compilation, input
 * work, synchronous copies) and the devices' copies (pageable ones), then one scan per step window
 * of the device work and the launches.
 *
 * Memory: the host's compile and input intervals and synchronous copies
 * (at most MAX_HOST_ITEMS each); the windows are findings_window.c's.
 */
#define _GNU_SOURCE
#include "findings_internal.h"
#include "../../indexer/analysis/analysis.h"
#include "../api_util.h"
#include "../../store/event_store.h"
#include "../../store/strings.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_HOST_ITEMS (1u << 21)

static int has(const char *s, size_t n, const char *w)
{
    size_t m = strlen(w);
    for (size_t i = 0; i + m <= n; i++)
        if (memcmp(s + i, w, m) == 0) return 1;
    return 0;
}

static int starts(const char *s, size_t n, const char *w)
{
    size_t m = strlen(w);
    return n >= m && memcmp(s, w, m) == 0;
}

static int is_compile(const char *s, size_t n)
{
    if (has(s, n, "backend_compile") || has(s, n, "BackendCompile") || has(s, n, "XlaCompile") ||
        has(s, n, "Compiler::Compile") || has(s, n, "Client::Compile") || has(s, n, "PjRtCompile"))
        return 1;
    /* torch.compile: dynamo's frame conversion (its Python frame, or the
     * "_compile.compile_inner (dynamo_timed)" region) and inductor's compile_fx */
    if (has(s, n, "compile_inner") ||
        (has(s, n, "_dynamo/convert_frame.py") && has(s, n, ": _compile")))
        return 1;
    return has(s, n, "_inductor/compile_fx.py") && has(s, n, ": compile_fx");
}

static int is_sync_copy(const char *s, size_t n)
{
    if (!starts(s, n, "cudaMemcpy") && !starts(s, n, "hipMemcpy") && !starts(s, n, "cuMemcpy"))
        return 0;
    return !has(s, n, "Async");
}

/* A host call that runs a whole CUDA graph: the runtime's and driver's
 * (cudaGraphLaunch, cuGraphLaunch (CudaGraph:18), hipGraphLaunch) and
 * XLA's command buffer execution (command_buffer::execute,
 * CommandBufferThunk's ExecuteOnStream). */
static int is_graph_launch(const char *s, size_t n)
{
    if (has(s, n, "GraphLaunch")) return 1;
    return (has(s, n, "command_buffer") || has(s, n, "CommandBuffer")) &&
           (has(s, n, "xecute") || has(s, n, "Launch"));
}

/* Data loading the loader names miss: JAX programs' TraceAnnotations
 * ("data_loading", "DataLoading", "load_data"). */
static int is_data_loading(const char *s, size_t n)
{
    char low[64];
    if (n >= sizeof low) return 0;
    for (size_t i = 0; i < n; i++)
        low[i] = (char)(s[i] >= 'A' && s[i] <= 'Z' ? s[i] - 'A' + 'a' : s[i]);
    return has(low, n, "data_load") || has(low, n, "dataload") || has(low, n, "load_data");
}

uint8_t xpv_findings_name_class(const char *s, size_t n)
{
    if (memchr(s, ';', n) || memchr(s, '\n', n)) return 0; /* call stacks */
    uint8_t k = 0;
    if (xpv_collective_name(s, n)) k |= XPV_FN_COLLECTIVE;
    if (is_compile(s, n)) k |= XPV_FN_COMPILE;
    enum xpv_tool_input in = xpv_tool_input_class(s, n);
    if (in == XPV_TOOL_INPUT_LOADER || is_data_loading(s, n)) k |= XPV_FN_INPUT;
    if (in == XPV_TOOL_INPUT_FEED) k |= XPV_FN_FEED;
    if (is_sync_copy(s, n)) k |= XPV_FN_SYNC_COPY;
    if (has(s, n, "Pageable")) k |= XPV_FN_PAGEABLE;
    if (is_graph_launch(s, n)) k |= XPV_FN_GRAPH_LAUNCH;
    return k;
}

/* Classifies the strings one cursor yields. */
static int classify_cursor(xpv_fctx *c, xpv_store_cursor *cur, xpv_err *err)
{
    int64_t id;
    xpv_store_text v;
    int rc;
    while ((rc = xpv_store_strings_next(cur, &id, &v, err)) == 1) {
        if (!v.s || id <= 0 || id > UINT32_MAX) continue;
        uint8_t k = xpv_findings_name_class(v.s, v.n);
        if (!k) continue;
        if ((k & XPV_FN_PAGEABLE) && c->npageable_names < XPV_FPAGEABLE_NAMES) {
            int i = c->npageable_names++;
            c->pageable_id[i] = (uint32_t)id;
            snprintf(c->pageable_text[i], sizeof c->pageable_text[i], "%.*s", (int)v.n, v.s);
        }
        c->cls = xpv_grow_to_index(c->cls, &c->ncls, (size_t)id, 1, 0);
        c->cls[id] = k;
    }
    xpv_store_cursor_close(cur);
    return rc < 0 ? -1 : 0;
}

int xpv_findings_classify_names(xpv_fctx *c, xpv_err *err)
{
    static const char *const KEYS[] = {"bytes", "Bytes", "num_bytes", "memcpy_details"};
    /* the work names, then the words the store's narrowing leaves out */
    static const char *const MORE[] = {"graphlaunch", "command_buffer", "commandbuffer",
                                       "data_load",   "dataload",       "load_data"};
    xpv_store_cursor cur;
    if (xpv_store_strings_open_work_names(&cur, c->db, c->id, err) != 0 ||
        classify_cursor(c, &cur, err) != 0)
        return -1;
    for (size_t i = 0; i < sizeof MORE / sizeof MORE[0]; i++)
        if (xpv_store_strings_open_containing(&cur, c->db, c->id, MORE[i], err) != 0 ||
            classify_cursor(c, &cur, err) != 0)
            return -1;
    uint32_t ids[4];
    if (xpv_store_strings_ids(c->db, c->id, KEYS, 4, ids, err) != 0) return -1;
    for (int i = 0; i < 3; i++)
        if (ids[i]) c->key_bytes[i] = ids[i];
    if (ids[3]) c->key_memcpy_details = ids[3];
    return 0;
}

static uint8_t cls_of(const xpv_fctx *c, uint32_t name)
{
    return name < c->ncls ? c->cls[name] : 0;
}

static int device_of(const xpv_fctx *c, uint32_t track)
{
    return track < c->ntracks ? c->track_device[track] : -1;
}

static int64_t rel_ps(const xpv_fctx *c, const xpv_event *ev)
{
    return (ev->ts_ns - c->prof.base_ns) * 1000;
}

void xpv_fref_longest(xpv_fref *r, int64_t start, int64_t end, int64_t block, uint32_t index)
{
    if (r->set && end - start <= r->end - r->start) return;
    *r = (xpv_fref){1, block, index, start, end};
}

/* ---- the host scan ---- */

typedef struct {
    xpv_fctx *c;
    size_t input_cap, compile_cap, sync_cap, compile_ival_cap;
} host_scan;

static void push_ival(xpv_tool_ival **v, size_t *n, size_t *cap, int64_t s, int64_t e)
{
    if (*n == *cap) {
        *cap = *cap ? *cap * 2 : 256;
        *v = xpv_xrealloc(*v, *cap * sizeof **v);
    }
    (*v)[(*n)++] = (xpv_tool_ival){s, e};
}

static void add_compile(host_scan *h, const xpv_event *ev, int64_t s, int64_t block, uint32_t idx)
{
    xpv_fctx *c = h->c;
    push_ival(&c->compile_ivals, &c->ncompile_ivals, &h->compile_ival_cap, s, s + ev->dur_ps);
    if (c->ncompiles >= MAX_HOST_ITEMS) return;
    if (c->ncompiles == h->compile_cap) {
        h->compile_cap = h->compile_cap ? h->compile_cap * 2 : 64;
        c->compiles = xpv_xrealloc(c->compiles, h->compile_cap * sizeof *c->compiles);
    }
    xpv_fcompile *k = &c->compiles[c->ncompiles++];
    memset(k, 0, sizeof *k);
    k->start = s, k->end = s + ev->dur_ps;
    k->ref = (xpv_fref){1, block, idx, k->start, k->end};
}

static void add_sync(host_scan *h, int64_t s, int64_t e, int64_t block, uint32_t idx)
{
    xpv_fctx *c = h->c;
    if (c->nsync >= MAX_HOST_ITEMS) return;
    if (c->nsync == h->sync_cap) {
        h->sync_cap = h->sync_cap ? h->sync_cap * 2 : 256;
        c->sync_t = xpv_xrealloc(c->sync_t, h->sync_cap * sizeof *c->sync_t);
        c->sync_ref = xpv_xrealloc(c->sync_ref, h->sync_cap * sizeof *c->sync_ref);
    }
    c->sync_t[c->nsync] = s;
    c->sync_ref[c->nsync++] = (xpv_fref){1, block, idx, s, e};
}

static int host_visit(void *ctx, const xpv_event *ev, int64_t block, uint32_t index)
{
    host_scan *h = ctx;
    xpv_fctx *c = h->c;
    uint8_t k = cls_of(c, ev->name);
    if (!k || ev->dur_ps < 0) return 0;
    int64_t s = rel_ps(c, ev);
    if (device_of(c, ev->track) >= 0) { /* only copies come this far */
        if (!(k & XPV_FN_PAGEABLE)) return 0;
        int which = -1;
        for (int i = 0; i < c->npageable_names; i++)
            if (c->pageable_id[i] == ev->name) which = i;
        c->pageable_used |= which >= 0 ? 1u << which : 1u << XPV_FPAGEABLE_NAMES;
        if (!c->pageable_ev.set || ev->dur_ps > c->pageable_ev.end - c->pageable_ev.start)
            c->pageable_longest = which;
        c->pageable_n++;
        c->pageable_time += ev->dur_ps;
        xpv_fref_longest(&c->pageable_ev, s, s + ev->dur_ps, block, index);
        return 0;
    }
    if (k & XPV_FN_COMPILE) add_compile(h, ev, s, block, index);
    if (k & XPV_FN_INPUT && c->ninput < MAX_HOST_ITEMS)
        push_ival(&c->input, &c->ninput, &h->input_cap, s, s + ev->dur_ps);
    if (k & XPV_FN_SYNC_COPY) add_sync(h, s, s + ev->dur_ps, block, index);
    return 0;
}

/* ---- which module a compilation compiled ---- */

#define MAX_NAMED_COMPILES 1024

typedef struct {
    xpv_fcompile *k;
    xpv_api_strings *str;
} module_probe;

static void set_module(xpv_fcompile *k, const char *v, size_t n)
{
    if (n >= sizeof k->module) n = sizeof k->module - 1;
    memcpy(k->module, v, n);
    k->module[n] = 0;
}

/* TraceMe's "name#module=jit_f,program_id=3#" or an arg naming the module. */
static int module_visit(void *ctx, const xpv_event *ev, int64_t block, uint32_t index)
{
    (void)block, (void)index;
    module_probe *p = ctx;
    size_t n;
    const char *name = xpv_api_string(p->str, ev->name, &n);
    const char *m = memmem(name, n, "module=", 7);
    if (m) {
        m += 7;
        size_t len = strcspn(m, ",#");
        if (m + len > name + n) len = (size_t)(name + n - m);
        set_module(p->k, m, len);
        return 0;
    }
    static const char *const KEYS[] = {"module", "hlo_module", "module_name", "fn", "function"};
    for (uint32_t i = 0; i < ev->nargs; i++) {
        const xpv_arg *a = &ev->args[i];
        size_t kn;
        const char *key = xpv_api_string(p->str, a->key, &kn);
        for (size_t j = 0; j < sizeof KEYS / sizeof KEYS[0]; j++) {
            if (strlen(KEYS[j]) != kn || memcmp(key, KEYS[j], kn) != 0) continue;
            if (a->type == XPV_ARG_TEXT) set_module(p->k, a->text, a->len);
            if (a->type == XPV_ARG_STR) {
                const char *v = xpv_api_string(p->str, a->v.str, &kn);
                set_module(p->k, v, kn);
            }
            return 0;
        }
    }
    return 0;
}

static int compile_modules(xpv_fctx *c, xpv_err *err)
{
    if (!c->ncompiles) return 0;
    xpv_api_strings *str = xpv_api_strings_open(c->db, c->id);
    int rc = 0;
    for (size_t i = 0; i < c->ncompiles && i < MAX_NAMED_COMPILES && rc == 0; i++) {
        module_probe p = {&c->compiles[i], str};
        rc = xpv_store_event_at(c->db, c->id, c->compiles[i].ref.block, c->compiles[i].ref.index,
                                module_visit, &p, err);
    }
    xpv_api_strings_free(str);
    return rc;
}

static int cmp_sync(const void *a, const void *b)
{
    const xpv_fref *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

int xpv_findings_scan_host(xpv_fctx *c, xpv_err *err)
{
    if (!c->ncls) return 0;
    host_scan h = {.c = c};
    xpv_store_query q;
    xpv_store_query_all(&q, c->id);
    q.kinds = XPV_KIND_BIT(XPV_KIND_OTHER) | XPV_KIND_BIT(XPV_KIND_LAUNCH) |
              XPV_KIND_BIT(XPV_KIND_STEP) | XPV_KIND_BIT(XPV_KIND_MEMCPY_H2D) |
              XPV_KIND_BIT(XPV_KIND_MEMCPY_D2H) | XPV_KIND_BIT(XPV_KIND_MEMCPY_D2D) |
              XPV_KIND_BIT(XPV_KIND_MEMCPY_OTHER);
    q.skip_args = 1;
    if (xpv_store_scan(c->db, &q, host_visit, &h, err) != 0) return -1;
    c->ninput = xpv_tool_ivals_normalize(c->input, c->ninput);
    c->ncompile_ivals = xpv_tool_ivals_normalize(c->compile_ivals, c->ncompile_ivals);
    xpv_sort(c->sync_ref, c->nsync, sizeof *c->sync_ref, cmp_sync);
    for (size_t i = 0; i < c->nsync; i++)
        c->sync_t[i] = c->sync_ref[i].start;
    return compile_modules(c, err);
}
