/*
 * tool_framework_op_stats.c — XProf's framework_op_stats tool: the time of
 * each framework op (PyTorch op, TensorFlow op, JAX name stack) on the host
 * and on the device, with XProf's column ids, computed on request from the
 * event store.
 *
 * Host rows: PyTorch ops (cat cpu_op, or Operator in older Kineto traces)
 * and TensorFlow timeline ops (cat Op, named by their `name` arg, typed by
 * their `op` arg) on tracks that are no device; ProfilerStep#N markers are
 * steps, not ops. Total time sums the op's durations; self time subtracts
 * from each the union of its child ops on the same thread (nesting by
 * containment, tool_ops.c); occurrences count the op's events.
 *
 * Device rows: kernels, copies and memsets (XLA ops where the profile has
 * no kernels: TPU), attributed to an op
 *  - by the `jax_op` arg the xplane reader gives JAX kernels from their HLO
 *    instruction's metadata (op_name: `jit(step)/jvp()/dot_general`), else
 *    by the `tf_op` arg they carry (JAX name stacks, TensorFlow on xplane;
 *    JAX on GPU writes `XlaModule:` there, which names no op),
 *    or for TensorFlow timeline kernels by their `name`/`op` args: one
 *    device event is one occurrence, its time both total and self time;
 *  - else by correlation id, to the innermost host op holding the launch
 *    with that id (PyTorch): self time is what the op launched itself,
 *    total time adds what its child ops launched, and occurrences count
 *    the op's events that launched any device work.
 * Device work attributed to no op is left out: this table is about ops.
 * (TensorFlow timelines name copies by graph edge, not by op, so only
 * their kernels count.)
 *
 * Device rows come first, then host rows, each ranked by total self time,
 * as XProf ranks them; fractions are of the side's total self time and the
 * cumulative fraction runs in rank order. Several hosts merge by op name.
 *
 * Hosts are read in parallel (up to PAR_THREADS at once, each thread on
 * its own read-only connection), each into rows of its own, then merged in
 * the scope's order: the table is the one a read in turn would give, since
 * a row keeps the type of its first host either way.
 */
#include "tools.h"
#include "../api_util.h"
#include "tool_ops.h"
#include "../hlo/hlo_ops.h"
#include "../../common/xpv_hindex.h"
#include "../../common/xpv_lower_bound.h"
#include "../../store/event_store.h"
#include "../../store/index_db.h"
#include "../../store/strings.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define PAR_THREADS 4 /* hosts read at once, the request's thread included */

static const xpv_table_col COLS[] = {
    {"rank", "Rank", XPV_COL_NUMBER},
    {"host_or_device", "Host/device", XPV_COL_STRING},
    {"type", "Type", XPV_COL_STRING},
    {"operation", "Operation", XPV_COL_STRING},
    {"occurrences", "#Occurrences", XPV_COL_NUMBER},
    {"total_time_in_us", "Total time (µs)", XPV_COL_NUMBER},
    {"avg_time_in_us", "Avg. time (µs)", XPV_COL_NUMBER},
    {"total_self_time_in_us", "Total self-time (µs)", XPV_COL_NUMBER},
    {"avg_self_time_in_us", "Avg. self-time (µs)", XPV_COL_NUMBER},
    {"total_self_time_as_fraction", "Total self-time (share of its side)", XPV_COL_NUMBER},
    {"cumulative_total_self_time_as_fraction", "Cumulative total self-time (share)",
     XPV_COL_NUMBER},
};
#define NCOLS (sizeof COLS / sizeof COLS[0])

#define HOST_KINDS                                                                                 \
    (XPV_KIND_BIT(XPV_KIND_OTHER) | XPV_KIND_BIT(XPV_KIND_STEP) | XPV_KIND_BIT(XPV_KIND_LAUNCH))

/* ---- rows, keyed by (side, operation) across every profile of the scope ---- */

typedef struct {
    int device;
    char *op, *type;
    size_t op_len, type_len;
    int64_t occ, total_ps, self_ps;
} op_row;

typedef struct {
    op_row *v;
    size_t n, cap;
    xpv_hindex index; /* row_hash -> row index */
} op_rows;

static uint64_t row_hash(int device, const char *s, size_t n)
{
    return xpv_hash64(s, n) ^ (device ? 0x9e3779b97f4a7c15ull : 0);
}

/* The row of (device, op), made with type when new. */
static uint32_t rows_get(op_rows *m, int device, const char *op, size_t n, const char *type,
                         size_t tn)
{
    xpv_hprobe p = xpv_hindex_probe(&m->index, row_hash(device, op, n));
    for (uint64_t i; xpv_hindex_next(&m->index, &p, &i);) {
        const op_row *r = &m->v[i];
        if (r->device == device && r->op_len == n && memcmp(r->op, op, n) == 0) return (uint32_t)i;
    }
    if (m->n == m->cap) {
        m->cap = m->cap ? m->cap * 2 : 64;
        m->v = xpv_xrealloc(m->v, m->cap * sizeof *m->v);
    }
    m->v[m->n] = (op_row){device, xpv_xstrndup(op, n), xpv_xstrndup(type, tn), n, tn, 0, 0, 0};
    xpv_hindex_insert_at(&m->index, &p, m->n);
    return (uint32_t)m->n++;
}

static void rows_free(op_rows *m)
{
    for (size_t i = 0; i < m->n; i++)
        free(m->v[i].op), free(m->v[i].type);
    free(m->v);
    xpv_hindex_free(&m->index);
}

/* ---- one profile's events ---- */

typedef struct {
    int64_t corr, ps, n;
} corr_time;

typedef struct {
    uint32_t row;                       /* its host row */
    int64_t dev_total, dev_self, dev_n; /* device work launched under it */
} op_item;

/* Which name a row comes from, for the id -> row caches. */
enum { BY_HOST_NAME, BY_HOST_ARG, BY_DEV_TF_OP, BY_DEV_ARG, NBY };

typedef struct {
    sqlite3 *db;
    int64_t id;
    xpv_api_strings *strings;
    uint32_t cat[3]; /* cpu_op, Operator, Op: 0 when the profile has none */
    uint32_t k_tf_op, k_jax_op, k_name, k_op;
    xpv_tool_profile prof;
    int probe; /* has_data: stop at the first op found */
    op_rows *rows;
    uint32_t *row_of[NBY]; /* string id -> row + 1 */
    size_t nrow_of[NBY];
    xpv_buf name; /* the first of two strings looked up together */
    corr_time *corr;
    size_t ncorr, corr_cap;
    xpv_tool_span *spans;
    size_t nspans, spans_cap;
    op_item *items;
    size_t nitems, items_cap;
} fo_ctx;

static int is_op_cat(const fo_ctx *c, uint32_t cat)
{
    return cat && (cat == c->cat[0] || cat == c->cat[1] || cat == c->cat[2]);
}

/* A string arg's value (interned or inline); NULL when absent or not text. */
static const char *arg_text(fo_ctx *c, const xpv_event *ev, uint32_t key, size_t *len, uint32_t *id)
{
    *id = 0;
    if (!key) return NULL;
    for (uint32_t i = 0; i < ev->nargs; i++) {
        const xpv_arg *a = &ev->args[i];
        if (a->key != key) continue;
        if (a->type == XPV_ARG_STR) {
            *id = a->v.str;
            return xpv_api_string(c->strings, a->v.str, len);
        }
        if (a->type == XPV_ARG_TEXT) return *len = a->len, a->text;
        return NULL;
    }
    return NULL;
}

/* The cached row of string id for `by`, or 0 (none yet; ids 0 never cache). */
static uint32_t *cached_row(fo_ctx *c, int by, uint32_t id)
{
    if (!id) return NULL;
    c->row_of[by] = xpv_grow_to_index(c->row_of[by], &c->nrow_of[by], id, sizeof(uint32_t), 0);
    return &c->row_of[by][id];
}

/* The device row of a tf_op value: its op name, typed from it. */
static uint32_t tf_op_row(fo_ctx *c, const char *s, size_t n, uint32_t id)
{
    uint32_t *cache = cached_row(c, BY_DEV_TF_OP, id);
    if (cache && *cache) return *cache - 1;
    xpv_tool_op op;
    xpv_tool_op_parse(s, n, &op);
    uint32_t row = rows_get(c->rows, 1, op.name, op.name_len, op.type, op.type_len);
    if (cache) *cache = row + 1;
    return row;
}

/* The row of an op named by a `name` arg and typed by an `op` arg (TensorFlow
 * timelines), on the given side; UINT32_MAX when the event has no such pair. */
static uint32_t tf_arg_row(fo_ctx *c, const xpv_event *ev, int device)
{
    size_t n, tn;
    uint32_t id, tid;
    const char *s = arg_text(c, ev, c->k_name, &n, &id);
    if (!s || !n) return UINT32_MAX;
    uint32_t *cache = cached_row(c, device ? BY_DEV_ARG : BY_HOST_ARG, id);
    if (cache && *cache) return *cache - 1;
    xpv_buf_reset(&c->name);
    xpv_buf_append(&c->name, s, n);
    const char *type = arg_text(c, ev, c->k_op, &tn, &tid);
    if (!type) return UINT32_MAX;
    uint32_t row = rows_get(c->rows, device, c->name.data, n, type, tn);
    if (cache) *cache = row + 1;
    return row;
}

static void add_time(fo_ctx *c, uint32_t row, int64_t occ, int64_t total, int64_t self)
{
    op_row *r = &c->rows->v[row];
    r->occ += occ;
    r->total_ps += total;
    r->self_ps += self;
}

/* Whether kernel ev carries TensorFlow's name/op pair (probe only). */
static int has_tf_args(fo_ctx *c, const xpv_event *ev)
{
    size_t n;
    uint32_t id;
    return arg_text(c, ev, c->k_name, &n, &id) && n && arg_text(c, ev, c->k_op, &n, &id);
}

static int device_visit(void *ctx, const xpv_event *ev, int64_t block, uint32_t index)
{
    (void)block, (void)index;
    fo_ctx *c = ctx;
    if (ev->dur_ns < 0) return 0;
    size_t n;
    uint32_t id, row = UINT32_MAX;
    const char *tf_op = c->k_jax_op ? arg_text(c, ev, c->k_jax_op, &n, &id) : NULL;
    if (!tf_op || !n) tf_op = arg_text(c, ev, c->k_tf_op, &n, &id);
    if (tf_op && !xpv_hlo_names_framework_op(tf_op, n)) tf_op = NULL;
    int tf_kernel = ev->kind == XPV_KIND_KERNEL && c->k_name && c->k_op;
    if (c->probe) return (tf_op && n) || (tf_kernel && has_tf_args(c, ev));
    if (tf_op && n)
        row = tf_op_row(c, tf_op, n, id);
    else if (tf_kernel)
        row = tf_arg_row(c, ev, 1);
    if (row != UINT32_MAX) {
        add_time(c, row, 1, ev->dur_ps, ev->dur_ps);
    } else if (ev->corr >= 0) {
        if (c->ncorr == c->corr_cap) {
            c->corr_cap = c->corr_cap ? c->corr_cap * 2 : 1024;
            c->corr = xpv_xrealloc(c->corr, c->corr_cap * sizeof *c->corr);
        }
        c->corr[c->ncorr++] = (corr_time){ev->corr, ev->dur_ps, 1};
    }
    return 0;
}

static int by_corr(const void *a, const void *b)
{
    const corr_time *x = a, *y = b;
    return (x->corr > y->corr) - (x->corr < y->corr);
}

/* Sorts the device work by correlation id, one entry per id. */
static void corr_merge(fo_ctx *c)
{
    xpv_sort(c->corr, c->ncorr, sizeof *c->corr, by_corr);
    size_t out = 0;
    for (size_t i = 0; i < c->ncorr; i++) {
        if (out && c->corr[out - 1].corr == c->corr[i].corr) {
            c->corr[out - 1].ps += c->corr[i].ps;
            c->corr[out - 1].n += c->corr[i].n;
        } else {
            c->corr[out++] = c->corr[i];
        }
    }
    c->ncorr = out;
}

static long corr_find(const fo_ctx *c, int64_t corr)
{
    size_t lo =
        xpv_lower_bound_i64(c->corr, c->ncorr, sizeof *c->corr, offsetof(corr_time, corr), corr);
    return lo < c->ncorr && c->corr[lo].corr == corr ? (long)lo : -1;
}

static void push_span(fo_ctx *c, const xpv_event *ev, int point, uint32_t ref, uint64_t seq)
{
    if (c->nspans == c->spans_cap) {
        c->spans_cap = c->spans_cap ? c->spans_cap * 2 : 1024;
        c->spans = xpv_xrealloc(c->spans, c->spans_cap * sizeof *c->spans);
    }
    int64_t start = (ev->ts_ns - c->prof.base_ns) * 1000;
    c->spans[c->nspans++] = (xpv_tool_span){.track = ev->track,
                                            .point = point,
                                            .start = start,
                                            .end = point ? start : start + ev->dur_ps,
                                            .seq = seq,
                                            .ref = ref};
}

/* The host row of op event ev: TensorFlow's name/op args, else its name. */
static uint32_t host_row(fo_ctx *c, const xpv_event *ev)
{
    if (ev->cat == c->cat[2] && c->k_name && c->k_op) {
        uint32_t row = tf_arg_row(c, ev, 0);
        if (row != UINT32_MAX) return row;
    }
    uint32_t *cache = cached_row(c, BY_HOST_NAME, ev->name);
    if (cache && *cache) return *cache - 1;
    size_t n;
    const char *name = xpv_api_string(c->strings, ev->name, &n);
    uint32_t row = rows_get(c->rows, 0, name, n, name, n);
    if (cache) *cache = row + 1;
    return row;
}

static int host_visit(void *ctx, const xpv_event *ev, int64_t block, uint32_t index)
{
    fo_ctx *c = ctx;
    if (ev->dur_ns < 0 || xpv_tool_on_device(&c->prof, ev->track)) return 0;
    uint64_t seq = (uint64_t)block * 65536u + index;
    if (ev->kind == XPV_KIND_LAUNCH) {
        long k = ev->corr >= 0 && !c->probe ? corr_find(c, ev->corr) : -1;
        if (k >= 0) push_span(c, ev, 1, (uint32_t)k, seq);
        return 0;
    }
    if (!is_op_cat(c, ev->cat) || (ev->kind == XPV_KIND_STEP && ev->step >= 0)) return 0;
    if (c->probe) return 1;
    if (c->nitems == c->items_cap) {
        c->items_cap = c->items_cap ? c->items_cap * 2 : 1024;
        c->items = xpv_xrealloc(c->items, c->items_cap * sizeof *c->items);
    }
    c->items[c->nitems] = (op_item){host_row(c, ev), 0, 0, 0};
    push_span(c, ev, 0, (uint32_t)c->nitems++, seq);
    return 0;
}

/* Host self times, and the device work of each op through its launches. */
static void attribute(fo_ctx *c)
{
    xpv_tool_spans_sort(c->spans, c->nspans);
    xpv_tool_nest(c->spans, c->nspans);
    for (size_t i = 0; i < c->nspans; i++) {
        const xpv_tool_span *s = &c->spans[i];
        if (!s->point) {
            add_time(c, c->items[s->ref].row, 1, s->end - s->start,
                     s->end - s->start - s->child_time);
            continue;
        }
        if (s->parent < 0) continue;
        const corr_time *t = &c->corr[s->ref];
        c->items[c->spans[s->parent].ref].dev_self += t->ps;
        for (int32_t a = s->parent; a >= 0; a = c->spans[a].parent) {
            op_item *it = &c->items[c->spans[a].ref];
            it->dev_total += t->ps;
            it->dev_n += t->n;
        }
    }
    for (size_t i = 0; i < c->nitems; i++) {
        const op_item *it = &c->items[i];
        if (!it->dev_n) continue;
        const op_row *h = &c->rows->v[it->row];
        uint32_t row = rows_get(c->rows, 1, h->op, h->op_len, h->type, h->type_len);
        add_time(c, row, 1, it->dev_total, it->dev_self);
    }
}

/* ---- what the profile holds: interned names, device tracks, kernels ---- */

static int load_names(fo_ctx *c)
{
    static const char *const want[] = {"cpu_op", "Operator", "Op", "tf_op", "name", "op", "jax_op"};
    uint32_t ids[7];
    /* No err: the tool's caller answers a failed load as it always has. */
    if (xpv_store_strings_ids(c->db, c->id, want, 7, ids, NULL) != 0) return -1;
    uint32_t *slot[] = {&c->cat[0], &c->cat[1], &c->cat[2],  &c->k_tf_op,
                        &c->k_name, &c->k_op,   &c->k_jax_op};
    for (int i = 0; i < 7; i++)
        if (ids[i]) *slot[i] = ids[i];
    return 0;
}

static int load_profile(fo_ctx *c)
{
    if (load_names(c) != 0) return -1;
    return xpv_tool_profile_load(c->db, c->id, &c->prof, NULL);
}

static void ctx_free(fo_ctx *c)
{
    xpv_api_strings_free(c->strings);
    xpv_tool_profile_free(&c->prof);
    for (int i = 0; i < NBY; i++)
        free(c->row_of[i]);
    xpv_buf_free(&c->name);
    free(c->corr);
    free(c->spans);
    free(c->items);
}

/* Reads one profile's ops into rows; with probe, returns 1 at the first op
 * (rows untouched), 0 when it has none. -1 with err on failure. */
static int read_profile(sqlite3 *db, int64_t id, op_rows *rows, int probe, xpv_err *err)
{
    fo_ctx c = {.db = db, .id = id, .probe = probe, .rows = rows};
    if (load_profile(&c) != 0) {
        ctx_free(&c);
        return xpv_err_set(err, "index: %s", sqlite3_errmsg(db));
    }
    int host_ops = c.cat[0] || c.cat[1] || c.cat[2], rc = 0;
    if (!c.prof.has_span) { /* no events */
        ctx_free(&c);
        return 0;
    }
    xpv_store_query q;
    if (c.k_tf_op || c.k_jax_op || (c.k_name && c.k_op) || (host_ops && !probe)) {
        c.strings = xpv_api_strings_open(db, id);
        xpv_store_query_all(&q, id);
        q.kinds =
            XPV_KIND_DEVICE_WORK_BITS | (c.prof.no_kernels ? XPV_KIND_BIT(XPV_KIND_XLA_OP) : 0);
        q.skip_args = !c.k_tf_op && !c.k_jax_op && !(c.k_name && c.k_op);
        rc = xpv_store_scan(db, &q, device_visit, &c, err);
        corr_merge(&c);
    }
    if (rc == 0 && host_ops) {
        if (!c.strings) c.strings = xpv_api_strings_open(db, id);
        xpv_store_query_all(&q, id);
        q.kinds = HOST_KINDS;
        q.skip_args = !(c.cat[2] && c.k_name && c.k_op);
        rc = xpv_store_scan(db, &q, host_visit, &c, err);
        if (rc == 0 && !probe) attribute(&c);
    }
    ctx_free(&c);
    return rc;
}

int xpv_tool_framework_op_stats_has_data(sqlite3 *db, const xpv_tool_scope *s, xpv_err *err)
{
    for (size_t i = 0; i < s->n; i++) {
        int rc = read_profile(db, s->ids[i], NULL, 1, err);
        if (rc != 0) return rc < 0 ? -1 : 1;
    }
    return 0;
}

/* ---- the table ---- */

typedef struct {
    const op_row *v;
    uint32_t i;
} row_ref;

static int by_self_time(const void *pa, const void *pb)
{
    const op_row *a = &((const row_ref *)pa)->v[((const row_ref *)pa)->i];
    const op_row *b = &((const row_ref *)pb)->v[((const row_ref *)pb)->i];
    if (a->device != b->device) return b->device - a->device; /* device rows first */
    if (a->self_ps != b->self_ps) return a->self_ps > b->self_ps ? -1 : 1;
    if (a->total_ps != b->total_ps) return a->total_ps > b->total_ps ? -1 : 1;
    size_t n = a->op_len < b->op_len ? a->op_len : b->op_len;
    int c = memcmp(a->op, b->op, n);
    return c ? c : (a->op_len > b->op_len) - (a->op_len < b->op_len);
}

static void put_row(xpv_table *t, const op_row *r, int64_t rank, int64_t side_self,
                    int64_t cumulative)
{
    size_t row = xpv_table_add_row(t);
    xpv_table_set_int(t, row, 0, rank);
    xpv_table_set_text(t, row, 1, r->device ? "Device" : "Host", r->device ? 6 : 4);
    xpv_table_set_text(t, row, 2, r->type, r->type_len);
    xpv_table_set_text(t, row, 3, r->op, r->op_len);
    xpv_table_set_int(t, row, 4, r->occ);
    xpv_table_set_ps_us(t, row, 5, (double)r->total_ps);
    xpv_table_set_ps_us(t, row, 6, (double)r->total_ps / (double)r->occ);
    xpv_table_set_ps_us(t, row, 7, (double)r->self_ps);
    xpv_table_set_ps_us(t, row, 8, (double)r->self_ps / (double)r->occ);
    if (side_self > 0) { /* else unknown: a share of nothing */
        xpv_table_set_double(t, row, 9, (double)r->self_ps / (double)side_self);
        xpv_table_set_double(t, row, 10, (double)cumulative / (double)side_self);
    }
}

static xpv_table *make_table(const op_rows *rows)
{
    row_ref *order = xpv_xmalloc((rows->n ? rows->n : 1) * sizeof *order);
    int64_t side_self[2] = {0, 0}, cumulative[2] = {0, 0};
    for (uint32_t i = 0; i < rows->n; i++) {
        order[i] = (row_ref){rows->v, i};
        side_self[rows->v[i].device] += rows->v[i].self_ps;
    }
    xpv_sort(order, rows->n, sizeof *order, by_self_time);
    xpv_table *t = xpv_table_new(COLS, NCOLS);
    for (size_t k = 0; k < rows->n; k++) {
        const op_row *r = &rows->v[order[k].i];
        cumulative[r->device] += r->self_ps;
        put_row(t, r, (int64_t)k + 1, side_self[r->device], cumulative[r->device]);
    }
    free(order);
    return t;
}

/* ---- several hosts at once ---- */

typedef struct {
    const int64_t *ids;
    size_t n;
    op_rows *rows; /* one per profile */
    xpv_err *errs;
    int *rc;
    atomic_size_t next;
    const char *path;   /* the index, for the helpers' own connections... */
    int64_t created_ns; /* ...which must find the file the request reads */
} par_job;

/* Reads profiles of the job until none is left. */
static void par_take(par_job *j, sqlite3 *db)
{
    for (size_t i; (i = atomic_fetch_add(&j->next, 1)) < j->n;)
        j->rc[i] = read_profile(db, j->ids[i], &j->rows[i], 0, &j->errs[i]);
}

static void *par_helper(void *arg)
{
    par_job *j = arg;
    sqlite3 *db = NULL;
    xpv_err err = {{0}};
    /* A helper that cannot open, or opens a file rebuilt since the request
     * began (its hosts pending), leaves its share to the others. */
    if (xpv_index_open_reader(j->path, &db, &err) == 0 && xpv_index_created_ns(db) == j->created_ns)
        par_take(j, db);
    if (db) sqlite3_close(db);
    return NULL;
}

/* Adds one host's rows into the scope's, in the order they were made. */
static void merge_rows(op_rows *all, const op_rows *one)
{
    for (size_t i = 0; i < one->n; i++) {
        const op_row *r = &one->v[i];
        uint32_t k = rows_get(all, r->device, r->op, r->op_len, r->type, r->type_len);
        op_row *to = &all->v[k]; /* after rows_get: it may move v */
        to->occ += r->occ, to->total_ps += r->total_ps, to->self_ps += r->self_ps;
    }
}

/* Reads every profile of s into rows, several at a time. 0, or -1 with err. */
static int read_all(sqlite3 *db, const xpv_tool_scope *s, op_rows *rows, xpv_err *err)
{
    const char *path = sqlite3_db_filename(db, "main");
    if (s->n < 2 || !path || !*path) { /* one host, or an index in memory */
        for (size_t i = 0; i < s->n; i++)
            if (read_profile(db, s->ids[i], rows, 0, err) != 0) return -1;
        return 0;
    }
    par_job j = {.ids = s->ids, .n = s->n, .path = path, .created_ns = xpv_index_created_ns(db)};
    j.rows = xpv_xcalloc(s->n, sizeof *j.rows);
    j.errs = xpv_xcalloc(s->n, sizeof *j.errs);
    j.rc = xpv_xcalloc(s->n, sizeof *j.rc);
    atomic_init(&j.next, 0);
    pthread_t th[PAR_THREADS - 1];
    size_t nth = 0;
    while (nth < PAR_THREADS - 1 && nth + 1 < s->n &&
           pthread_create(&th[nth], NULL, par_helper, &j) == 0)
        nth++;
    par_take(&j, db);
    for (size_t k = 0; k < nth; k++)
        pthread_join(th[k], NULL);
    int rc = 0;
    for (size_t i = 0; i < s->n; i++) {
        if (rc == 0 && j.rc[i] != 0) rc = xpv_err_set(err, "%s", j.errs[i].msg);
        if (rc == 0) merge_rows(rows, &j.rows[i]);
        rows_free(&j.rows[i]);
    }
    free(j.rows), free(j.errs), free(j.rc);
    return rc;
}

xpv_table *xpv_tool_framework_op_stats(sqlite3 *db, const xpv_tool_scope *s, xpv_err *err)
{
    op_rows rows = {0};
    if (read_all(db, s, &rows, err) != 0) {
        rows_free(&rows);
        return NULL;
    }
    xpv_table *t = make_table(&rows);
    rows_free(&rows);
    return t;
}
