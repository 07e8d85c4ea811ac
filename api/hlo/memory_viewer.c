/*
 * memory_viewer.c — what each compiled module keeps in device memory, from
 * its buffer assignment (HloProto.buffer_assignment):
 *
 *  - an allocation's kind: parameter (entry computation parameter), then
 *    constant, then output (maybe_live_out), else temporary;
 *  - the heap: the heap-simulator trace of the module is replayed in
 *    program order (ALLOC adds the logical buffer's size, FREE takes it
 *    away, SHARE_WITH reuses the canonical buffer's bytes and adds none);
 *    with several traces, the one with the highest peak is the heap. Its
 *    peak is the first event where the bytes in use are highest;
 *  - peak memory = the sizes of every allocation except the traced one,
 *    plus the traced heap's peak; without a trace, the allocations' sizes;
 *  - the buffers live at the peak: every logical buffer of a parameter,
 *    output or constant allocation (live throughout), and the temporaries
 *    the trace holds at its peak (without a trace, every temporary).
 * Numbers are the proto's integers, summed exactly. A module that does
 * not decode is answered with its error; the others still answer.
 */
#include "../api.h"
#include "../api_util.h"
#include "hlo_file.h"
#include "../tools/tools.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { K_PARAMETER, K_OUTPUT, K_CONSTANT, K_TEMPORARY, NKINDS };
static const char *const KIND_NAMES[NKINDS] = {"parameter", "output", "constant", "temporary"};

#define MAX_HEAP_POINTS 2000

typedef struct {
    int32_t alloc; /* index into m->allocations, -1 unassigned */
    int64_t offset;
    uint8_t state; /* heap replay: 0 free, 1 holds bytes, 2 shares another's */
    uint8_t at_peak;
} mv_buf;

typedef struct {
    const xpv_hlo_module *m;
    mv_buf *bufs; /* parallel to m->buffers */
    int64_t alloc_bytes[NKINDS];
    int has_trace;
    int32_t trace;       /* index into m->traces */
    int64_t trace_alloc; /* its allocation index, -1 none */
    int64_t peak_heap;   /* bytes in use at the trace's peak */
    uint32_t peak_event; /* index of the peak event in the trace */
    int64_t peak_memory;
} mv;

static int alloc_kind(const xpv_hlo_allocation *a)
{
    if (a->is_entry_computation_parameter) return K_PARAMETER;
    if (a->is_constant) return K_CONSTANT;
    if (a->maybe_live_out) return K_OUTPUT;
    return K_TEMPORARY;
}

static int32_t buf_index(const xpv_hlo_module *m, int64_t id)
{
    const xpv_hlo_logical_buffer *b = xpv_hlo_buffer_by_id(m, id);
    return b ? (int32_t)(b - m->buffers) : -1;
}

static void assign(mv *v)
{
    const xpv_hlo_module *m = v->m;
    for (uint32_t i = 0; i < m->nbuffers; i++)
        v->bufs[i].alloc = -1;
    for (uint32_t a = 0; a < m->nallocations; a++) {
        const xpv_hlo_allocation *al = &m->allocations[a];
        v->alloc_bytes[alloc_kind(al)] += al->size;
        for (uint32_t k = 0; k < al->nassigned; k++) {
            int32_t bi = buf_index(m, al->assigned[k].logical_buffer_id);
            if (bi < 0) continue;
            v->bufs[bi].alloc = (int32_t)a;
            v->bufs[bi].offset = al->assigned[k].offset;
        }
    }
}

/* Replays trace t up to event `stop` (all when UINT32_MAX); returns its
 * peak and where, and leaves each buffer's state as of `stop`. */
static int64_t replay(mv *v, const xpv_hlo_heap_trace *t, uint32_t stop, uint32_t *peak_at,
                      void (*point)(void *, uint32_t, int64_t), void *ctx)
{
    const xpv_hlo_module *m = v->m;
    for (uint32_t i = 0; i < m->nbuffers; i++)
        v->bufs[i].state = 0;
    int64_t heap = 0, peak = 0;
    *peak_at = 0;
    for (uint32_t e = 0; e < t->nevents && e <= stop; e++) {
        const xpv_hlo_heap_event *ev = &t->events[e];
        int32_t bi = buf_index(m, ev->buffer_id);
        if (bi >= 0) {
            mv_buf *b = &v->bufs[bi];
            if (ev->kind == XPV_HLO_HEAP_ALLOC && !b->state) {
                b->state = 1;
                heap += m->buffers[bi].size;
            } else if (ev->kind == XPV_HLO_HEAP_SHARE_WITH && !b->state) {
                b->state = 2;
            } else if (ev->kind == XPV_HLO_HEAP_FREE && b->state) {
                if (b->state == 1) heap -= m->buffers[bi].size;
                b->state = 0;
            }
        }
        if (heap > peak) peak = heap, *peak_at = e;
        if (point) point(ctx, e, heap);
    }
    return peak;
}

static void simulate(mv *v)
{
    const xpv_hlo_module *m = v->m;
    v->trace = -1;
    v->trace_alloc = -1;
    for (uint32_t t = 0; t < m->ntraces; t++) {
        uint32_t at;
        int64_t peak = replay(v, &m->traces[t], UINT32_MAX, &at, NULL, NULL);
        if (v->trace < 0 || peak > v->peak_heap)
            v->trace = (int32_t)t, v->peak_heap = peak, v->peak_event = at;
    }
    v->has_trace = v->trace >= 0;
    int64_t total = 0;
    for (uint32_t a = 0; a < m->nallocations; a++)
        total += m->allocations[a].size;
    v->peak_memory = total;
    if (!v->has_trace) return;
    const xpv_hlo_heap_trace *t = &m->traces[v->trace];
    v->trace_alloc = t->buffer_allocation_index;
    for (uint32_t a = 0; a < m->nallocations; a++)
        if (m->allocations[a].index == t->buffer_allocation_index) {
            v->peak_memory -= m->allocations[a].size;
            break;
        }
    v->peak_memory += v->peak_heap;
    uint32_t at;
    replay(v, t, v->peak_event, &at, NULL, NULL); /* states as of the peak */
}

static void mark_live(mv *v)
{
    const xpv_hlo_module *m = v->m;
    for (uint32_t i = 0; i < m->nbuffers; i++) {
        mv_buf *b = &v->bufs[i];
        int kind = b->alloc >= 0 ? alloc_kind(&m->allocations[b->alloc]) : K_TEMPORARY;
        int traced =
            b->alloc >= 0 && v->has_trace && m->allocations[b->alloc].index == v->trace_alloc;
        b->at_peak = b->alloc >= 0 && (kind != K_TEMPORARY || !traced || b->state != 0);
    }
}

static void mv_init(mv *v, const xpv_hlo_module *m)
{
    memset(v, 0, sizeof *v);
    v->m = m;
    v->bufs = xpv_xcalloc(m->nbuffers ? m->nbuffers : 1, sizeof *v->bufs);
    assign(v);
    simulate(v);
    mark_live(v);
}

/* ---- JSON ---- */

static void put_nullable(xpv_buf *b, int has, int64_t v)
{
    if (has)
        xpv_api_put_int(b, v);
    else
        xpv_buf_puts(b, "null");
}

static void put_summary(xpv_buf *b, const mv *v)
{
    const xpv_hlo_module *m = v->m;
    xpv_buf_puts(b, "\"hlo_name\":");
    xpv_hlo_put_str(b, m->name);
    xpv_buf_printf(b, ",\"instructions\":%u,\"heap_trace\":%s", m->ninstrs,
                   v->has_trace ? "true" : "false");
    xpv_buf_puts(b, ",\"buffer_assignment\":");
    xpv_buf_puts(b, m->has_buffer_assignment ? "true" : "false");
    xpv_buf_puts(b, ",\"peak_memory_bytes\":");
    put_nullable(b, m->has_buffer_assignment, v->peak_memory);
    xpv_buf_puts(b, ",\"peak_heap_bytes\":");
    put_nullable(b, v->has_trace, v->peak_heap);
    for (int k = 0; k < NKINDS; k++) {
        xpv_buf_printf(b, ",\"%s_bytes\":", KIND_NAMES[k]);
        put_nullable(b, m->has_buffer_assignment, v->alloc_bytes[k]);
    }
    xpv_buf_printf(b, ",\"allocations\":%u,\"logical_buffers\":%u", m->nallocations, m->nbuffers);
}

static void put_source(xpv_buf *b, const xpv_hlo_instr *in)
{
    if (!in || !in->source_file.p) {
        xpv_buf_puts(b, "null");
        return;
    }
    xpv_buf s = {0};
    xpv_buf_append(&s, in->source_file.p, in->source_file.n);
    if (in->source_line > 0) xpv_buf_printf(&s, ":%d", (int)in->source_line);
    xpv_buf_json_str(b, s.data, s.len);
    xpv_buf_free(&s);
}

static void put_buffer(xpv_buf *b, const mv *v, uint32_t i)
{
    const xpv_hlo_module *m = v->m;
    const xpv_hlo_logical_buffer *lb = &m->buffers[i];
    const xpv_hlo_allocation *al = &m->allocations[v->bufs[i].alloc];
    const xpv_hlo_instr *in = xpv_hlo_instr_by_id(m, lb->instruction_id);
    xpv_buf_printf(b, "{\"id\":%" PRId64 ",\"size_bytes\":%" PRId64 ",\"kind\":\"%s\"", lb->id,
                   lb->size, KIND_NAMES[alloc_kind(al)]);
    xpv_buf_printf(b, ",\"allocation\":%" PRId64 ",\"offset\":%" PRId64 ",\"shared\":%s", al->index,
                   v->bufs[i].offset, v->bufs[i].state == 2 ? "true" : "false");
    xpv_buf_puts(b, ",\"shape\":");
    const xpv_hlo_shape *sh = in ? xpv_hlo_subshape(&in->shape, &lb->shape_index) : NULL;
    if (sh) {
        xpv_buf s = {0};
        xpv_hlo_put_shape(&s, sh);
        xpv_buf_json_str(b, s.data, s.len);
        xpv_buf_free(&s);
    } else {
        xpv_buf_puts(b, "null");
    }
    xpv_buf_puts(b, ",\"instruction\":");
    xpv_hlo_put_str(b, in ? in->name : (xpv_hlo_str){0});
    xpv_buf_puts(b, ",\"opcode\":");
    xpv_hlo_put_str(b, in ? in->opcode : (xpv_hlo_str){0});
    xpv_buf_puts(b, ",\"op_name\":");
    xpv_hlo_put_str(b, in ? in->op_name : (xpv_hlo_str){0});
    xpv_buf_puts(b, ",\"source\":");
    put_source(b, in);
    xpv_buf_putc(b, '}');
}

/* What the buffers are sorted by, copied out so that the comparisons need
 * no context (qsort has none, and answers are built on several threads). */
typedef struct {
    int64_t size, id, offset;
    int32_t alloc;
    uint32_t index;
} buf_key;

static int by_size(const void *pa, const void *pb)
{
    const buf_key *a = pa, *b = pb;
    if (a->size != b->size) return a->size > b->size ? -1 : 1;
    return a->id < b->id ? -1 : a->id > b->id;
}

static int by_extent(const void *pa, const void *pb)
{
    const buf_key *x = pa, *y = pb;
    if (x->alloc != y->alloc) return x->alloc < y->alloc ? -1 : 1;
    if (x->offset != y->offset) return x->offset < y->offset ? -1 : 1;
    return by_size(pa, pb);
}

/* Bytes the live buffers of each kind cover: buffers that alias (same
 * allocation and offset: a parameter and the copy that reuses it) count
 * once, at the largest size; shared heap buffers add nothing. */
static void live_bytes(const mv *v, buf_key *keys, uint32_t n, int64_t *live, int64_t *count)
{
    const xpv_hlo_module *m = v->m;
    qsort(keys, n, sizeof *keys, by_extent);
    for (uint32_t k = 0; k < n; k++) {
        const buf_key *key = &keys[k];
        int kind = alloc_kind(&m->allocations[key->alloc]);
        count[kind]++;
        if (v->bufs[key->index].state == 2 ||
            (k && keys[k - 1].alloc == key->alloc && keys[k - 1].offset == key->offset))
            continue;
        live[kind] += key->size;
    }
}

static void put_buffers(xpv_buf *b, const mv *v)
{
    const xpv_hlo_module *m = v->m;
    buf_key *keys = xpv_xmalloc((m->nbuffers ? m->nbuffers : 1) * sizeof *keys);
    uint32_t n = 0;
    for (uint32_t i = 0; i < m->nbuffers; i++)
        if (v->bufs[i].at_peak)
            keys[n++] = (buf_key){m->buffers[i].size, m->buffers[i].id, v->bufs[i].offset,
                                  v->bufs[i].alloc, i};
    int64_t live[NKINDS] = {0}, count[NKINDS] = {0};
    live_bytes(v, keys, n, live, count);
    xpv_buf_puts(b, ",\"groups\":[");
    for (int k = 0; k < NKINDS; k++)
        xpv_buf_printf(b,
                       "%s{\"kind\":\"%s\",\"allocation_bytes\":%" PRId64 ",\"live_bytes\":%" PRId64
                       ",\"buffers\":%" PRId64 "}",
                       k ? "," : "", KIND_NAMES[k], v->alloc_bytes[k], live[k], count[k]);
    qsort(keys, n, sizeof *keys, by_size);
    xpv_buf_puts(b, "],\"buffers\":[");
    for (uint32_t k = 0; k < n; k++) {
        if (k) xpv_buf_putc(b, ',');
        put_buffer(b, v, keys[k].index);
    }
    xpv_buf_putc(b, ']');
    free(keys);
}

typedef struct {
    xpv_buf *b;
    uint32_t every, n;
    int64_t best;
    uint32_t best_at;
} heap_points;

/* One point per `every` events: the highest of them, so the peak shows. */
static void heap_point(void *ctx, uint32_t e, int64_t heap)
{
    heap_points *h = ctx;
    if (e % h->every == 0 || heap > h->best) h->best = heap, h->best_at = e;
    if ((e + 1) % h->every == 0) {
        xpv_buf_printf(h->b, "%s[%u,%" PRId64 "]", h->n++ ? "," : "", h->best_at, h->best);
        h->best = -1;
    }
}

static void put_heap(xpv_buf *b, mv *v)
{
    xpv_buf_puts(b, ",\"heap\":");
    if (!v->has_trace) {
        xpv_buf_puts(b, "null");
        return;
    }
    const xpv_hlo_heap_trace *t = &v->m->traces[v->trace];
    heap_points h = {b, t->nevents / MAX_HEAP_POINTS + 1, 0, -1, 0};
    xpv_buf_printf(b, "{\"allocation\":%" PRId64 ",\"events\":%u,\"peak_event\":",
                   t->buffer_allocation_index, t->nevents);
    if (v->peak_event < t->nevents) { /* a trace with no events has no peak */
        xpv_buf_printf(b, "%u,\"peak_instruction\":", v->peak_event);
        xpv_hlo_put_str(b, t->events[v->peak_event].instruction_name);
    } else {
        xpv_buf_puts(b, "null,\"peak_instruction\":null");
    }
    xpv_buf_puts(b, ",\"points\":[");
    uint32_t at;
    replay(v, t, UINT32_MAX, &at, heap_point, &h);
    if (h.best >= 0) xpv_buf_printf(b, "%s[%u,%" PRId64 "]", h.n ? "," : "", h.best_at, h.best);
    xpv_buf_puts(b, "]}");
    replay(v, t, v->peak_event, &at, NULL, NULL); /* back to the peak's states */
}

static void put_module_head(xpv_buf *b, const xpv_hlo_blob *bl)
{
    xpv_buf_puts(b, "{\"name\":");
    xpv_hlo_put_str(b, bl->name);
    xpv_buf_printf(b, ",\"program_id\":\"%" PRIu64 "\"", bl->program_id);
}

/* ---- answers ---- */

static int one_module(void *ctx, const xpv_hlo_file *f, const xpv_hlo_blob *bl, xpv_buf *out)
{
    (void)ctx;
    xpv_hlo_module m;
    xpv_err err = {{0}};
    if (xpv_hlo_file_decode(f, bl, &m, &err) != 0) return xpv_api_error(out, 422, "%s", err.msg);
    mv v;
    mv_init(&v, &m);
    xpv_buf_puts(out, ",\"module\":");
    put_module_head(out, bl);
    xpv_buf_putc(out, ',');
    put_summary(out, &v);
    xpv_buf_putc(out, '}');
    put_buffers(out, &v);
    put_heap(out, &v);
    xpv_buf_putc(out, '}');
    free(v.bufs);
    xpv_hlo_module_free(&m);
    return 200;
}

static void module_list(void *ctx, const xpv_hlo_file *f, xpv_buf *out)
{
    (void)ctx;
    xpv_buf_puts(out, ",\"modules\":[");
    for (size_t i = 0; i < f->n; i++) {
        xpv_hlo_module m;
        xpv_err err = {{0}};
        if (i) xpv_buf_putc(out, ',');
        put_module_head(out, &f->blobs[i]);
        if (xpv_hlo_file_decode(f, &f->blobs[i], &m, &err) != 0) {
            xpv_buf_puts(out, ",\"error\":");
            xpv_buf_json_str(out, err.msg, strlen(err.msg));
            xpv_buf_putc(out, '}');
            continue;
        }
        mv v;
        mv_init(&v, &m);
        xpv_buf_puts(out, ",\"error\":null,");
        put_summary(out, &v);
        xpv_buf_putc(out, '}');
        free(v.bufs);
        xpv_hlo_module_free(&m);
    }
    xpv_buf_puts(out, "]}");
}

int xpv_api_memory_viewer(sqlite3 *db, int64_t id, const char *module, xpv_buf *out)
{
    const xpv_hlo_answer a = {one_module, module_list, NULL};
    return xpv_hlo_file_answer(db, id, module, &a, out);
}

/* ---- the tool: one row per module (the scope's module alone when it
 * names one) ---- */

static const xpv_table_col COLS[] = {
    {"module", "Module", XPV_COL_STRING},
    {"program_id", "Program id", XPV_COL_STRING},
    {"peak_memory_bytes", "Peak memory (bytes)", XPV_COL_NUMBER},
    {"peak_heap_bytes", "Peak heap (bytes)", XPV_COL_NUMBER},
    {"parameter_bytes", "Parameters (bytes)", XPV_COL_NUMBER},
    {"output_bytes", "Outputs (bytes)", XPV_COL_NUMBER},
    {"constant_bytes", "Constants (bytes)", XPV_COL_NUMBER},
    {"temporary_bytes", "Temporaries (bytes)", XPV_COL_NUMBER},
    {"logical_buffers", "Logical buffers", XPV_COL_NUMBER},
    {"instructions", "Instructions", XPV_COL_NUMBER},
    {"error", "Error", XPV_COL_STRING},
};

/* 1 when profile id has the module named (a file that cannot be read has
 * none, as xpv_hlo_file_has_modules says). */
static int has_module(sqlite3 *db, int64_t id, const char *module)
{
    xpv_hlo_file f;
    if (xpv_hlo_file_open(db, id, &f, NULL) <= 0) return 0;
    int found = xpv_hlo_file_find(&f, module) != NULL;
    xpv_hlo_file_close(&f);
    return found;
}

int xpv_tool_memory_viewer_has_data(sqlite3 *db, const xpv_tool_scope *s, xpv_err *err)
{
    (void)err; /* an unreadable file has no modules to show (xpv_hlo_file_has_modules) */
    for (size_t i = 0; i < s->n; i++) /* listed for a run when any host has modules */
        if (s->module ? has_module(db, s->ids[i], s->module)
                      : xpv_hlo_file_has_modules(db, s->ids[i]) == 1)
            return 1;
    return 0;
}

static void tool_row(xpv_table *t, const xpv_hlo_file *f, const xpv_hlo_blob *bl)
{
    size_t r = xpv_table_add_row(t);
    char prog[24];
    snprintf(prog, sizeof prog, "%" PRIu64, bl->program_id);
    xpv_table_set_text(t, r, 0, bl->name.p ? bl->name.p : "", bl->name.n);
    xpv_table_set_text(t, r, 1, prog, strlen(prog));
    xpv_hlo_module m;
    xpv_err err = {{0}};
    if (xpv_hlo_file_decode(f, bl, &m, &err) != 0) {
        xpv_table_set_text(t, r, 10, err.msg, strlen(err.msg));
        return;
    }
    mv v;
    mv_init(&v, &m);
    if (m.has_buffer_assignment) {
        xpv_table_set_int(t, r, 2, v.peak_memory);
        for (int k = 0; k < NKINDS; k++)
            xpv_table_set_int(t, r, 4 + (size_t)k, v.alloc_bytes[k]);
        xpv_table_set_int(t, r, 8, m.nbuffers);
    }
    if (v.has_trace) xpv_table_set_int(t, r, 3, v.peak_heap);
    xpv_table_set_int(t, r, 9, m.ninstrs);
    free(v.bufs);
    xpv_hlo_module_free(&m);
}

xpv_table *xpv_tool_memory_viewer(sqlite3 *db, const xpv_tool_scope *s, xpv_err *err)
{
    xpv_hlo_file f;
    if (s->n != 1 || xpv_hlo_file_open(db, s->ids[0], &f, err) <= 0) {
        if (!err->msg[0]) xpv_err_set(err, "no modules");
        return NULL;
    }
    xpv_table *t = xpv_table_new(COLS, sizeof COLS / sizeof COLS[0]);
    const xpv_hlo_blob *only = s->module ? xpv_hlo_file_find(&f, s->module) : NULL;
    for (size_t i = 0; i < f.n; i++)
        if (!s->module || &f.blobs[i] == only) tool_row(t, &f, &f.blobs[i]);
    if (xpv_hlo_file_unchanged(&f, err) != 0) {
        xpv_table_free(t);
        t = NULL;
    }
    xpv_hlo_file_close(&f);
    return t;
}
