/*
 * kernel_rows.c — turning the groups of kernel_stats.c into `kernel_stats`
 * rows (see kernel_stats.c for what each column means), in two steps:
 *   - xpv_kstats_rows computes every row's numbers from the groups alone
 *     (no names, no SQLite), so it may run on whichever thread owns the
 *     analysis, as soon as the reader says no device work is left to come;
 *   - xpv_kstats_insert gives them their names and categories and writes
 *     them, on the thread that owns the database; or, for a worker's part,
 *     gathers them into in->kernel_rows for the index's writer to insert.
 *
 * Groups are ordered by (kind, name, device, track), so the groups of one
 * "unit" (kind + name) are adjacent and, inside it, those of one device.
 * A unit's durations are copied into one array in that order; each
 * device's slice is partitioned for its row's median, then the whole array
 * for the all-devices row. The groups keep their own durations, so rows can
 * be computed again if the groups change afterwards. When durations were
 * spilled, several units are gathered per pass over the temp file (at most
 * BATCH_VALUES values, or one unit).
 */
#include "analysis_internal.h"
#include "collectives.h"
#include "../../common/xpv_msort.h"
#include "../../store/index_db.h"
#include "../../store/kernel_stats.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define BATCH_VALUES (2u << 20)

/* Compile-time work (compile.c) has families of its own, so that the
 * program's rows and percents leave it out. */
enum {
    FAM_KERNEL,
    FAM_MEMCPY,
    FAM_MEMSET,
    FAM_XLA_OP,
    FAM_HLO,
    FAM_COMPILE_KERNEL,
    FAM_COMPILE_MEMCPY,
    FAM_COMPILE_MEMSET,
    FAM_COUNT
};
static const char *const FAMILY_NAME[FAM_COUNT] = {
    "kernel",       "memcpy",         "memset",         "xla_op",
    "hlo_category", "compile_kernel", "compile_memcpy", "compile_memset"};

static int family_of(unsigned kind)
{
    if (kind & XPV_KS_COMPILE) {
        unsigned base = kind & ~XPV_KS_COMPILE;
        return base == XPV_KIND_KERNEL   ? FAM_COMPILE_KERNEL
               : base == XPV_KIND_MEMSET ? FAM_COMPILE_MEMSET
                                         : FAM_COMPILE_MEMCPY;
    }
    switch (kind) {
    case XPV_KIND_KERNEL:
        return FAM_KERNEL;
    case XPV_KIND_MEMSET:
        return FAM_MEMSET;
    case XPV_KIND_XLA_OP:
        return FAM_XLA_OP;
    case XPV_KS_HLO_CATEGORY:
        return FAM_HLO;
    default:
        return FAM_MEMCPY;
    }
}

typedef struct {
    uint8_t kind;
    uint32_t name;
    int device;
    uint32_t track, gi;
} order_rec;

/* Groups in order of (kind, name, device, track), then group index: the
 * keys are unique, so the order is the one any sort gives. */
static int order_less(const order_rec *a, const order_rec *b)
{
    if (a->kind != b->kind) return a->kind < b->kind;
    if (a->name != b->name) return a->name < b->name;
    if (a->device != b->device) return a->device < b->device;
    if (a->track != b->track) return a->track < b->track;
    return a->gi < b->gi;
}

XPV_MSORT_DEFINE(sort_order, order_rec, order_less)

/* What computing the rows (and classifying the units) works from. */
typedef struct {
    xpv_kstats *k;
    const xpv_analysis_input *in; /* names: xpv_kstats_classify only */
    const int *track_device;
    size_t ntracks;
    order_rec *order;
    size_t norder;
    int64_t totals[FAM_COUNT]; /* all devices */
    xpv_hindex dev_totals;     /* family << 32 | device -> total ps */
    xpv_krows *out;
} builder;

static int device_of(const builder *b, uint32_t track)
{
    return track < b->ntracks ? b->track_device[track] : -1;
}

static const char *unit_name(const xpv_kstats *k, const xpv_analysis_input *in, const xpv_kgroup *g,
                             size_t *len)
{
    if (g->kind == XPV_KS_HLO_CATEGORY) {
        *len = strlen(k->cat_names[g->name]);
        return k->cat_names[g->name];
    }
    const char *s = in->string(in->string_ctx, g->name, len);
    if (*len) return s;
    static const char *const fallback[XPV_KIND_COUNT] = {
        [XPV_KIND_KERNEL] = "(unnamed kernel)",     [XPV_KIND_MEMCPY_H2D] = "Memcpy HtoD",
        [XPV_KIND_MEMCPY_D2H] = "Memcpy DtoH",      [XPV_KIND_MEMCPY_D2D] = "Memcpy DtoD",
        [XPV_KIND_MEMCPY_OTHER] = "Memcpy (other)", [XPV_KIND_MEMSET] = "Memset",
        [XPV_KIND_XLA_OP] = "(unnamed op)",
    };
    unsigned kind = g->kind & ~XPV_KS_COMPILE;
    s = kind < XPV_KIND_COUNT && fallback[kind] ? fallback[kind] : "(unnamed)";
    *len = strlen(s);
    return s;
}

/* Summary of the groups order[a, b): merged shapes, ops and occupancy. */
typedef struct {
    uint32_t shape, nshapes;
    uint32_t op;
    double occ_sum;
    int64_t occ_n;
} row_meta;

static void merge_meta(const builder *b, size_t from, size_t to, row_meta *m)
{
    memset(m, 0, sizeof *m);
    uint32_t seen[XPV_KS_MAX_SHAPES];
    xpv_op_tally ops[4 * XPV_KS_MAX_OPS];
    size_t nops = 0;
    for (size_t i = from; i < to; i++) {
        const xpv_kgroup *g = &b->k->g[b->order[i].gi];
        for (uint32_t s = 0; s < g->nshapes; s++) {
            uint32_t j = 0;
            while (j < m->nshapes && seen[j] != g->shapes[s])
                j++;
            if (j == m->nshapes && m->nshapes < XPV_KS_MAX_SHAPES)
                seen[m->nshapes++] = g->shapes[s];
        }
        for (int o = 0; o < XPV_KS_MAX_OPS && g->ops[o].op; o++) {
            size_t j = 0;
            while (j < nops && ops[j].op != g->ops[o].op)
                j++;
            if (j == nops && nops == sizeof ops / sizeof ops[0]) continue;
            if (j == nops) ops[nops++] = (xpv_op_tally){g->ops[o].op, 0};
            ops[j].n += g->ops[o].n;
        }
        m->occ_sum += g->occ_sum;
        m->occ_n += g->occ_n;
    }
    if (m->nshapes) m->shape = seen[0];
    int64_t best = 0;
    for (size_t j = 0; j < nops; j++)
        if (ops[j].n > best) m->op = ops[j].op, best = ops[j].n;
}

/* Exact statistics of n > 0 durations into r; reorders v (the median is
 * found by selection, not by sorting). */
static void stats_of(int64_t *v, size_t n, xpv_krow *r)
{
    r->count = (int64_t)n;
    r->total = 0;
    r->min = r->max = v[0];
    for (size_t i = 0; i < n; i++) {
        r->total += v[i];
        if (v[i] < r->min) r->min = v[i];
        if (v[i] > r->max) r->max = v[i];
    }
    xpv_select_i64(v, n, n / 2);
    r->median = (double)v[n / 2];
    if (n % 2 == 0) { /* the lower middle value is the largest of v[0, n/2) */
        int64_t lower = v[0];
        for (size_t i = 1; i < n / 2; i++)
            if (v[i] > lower) lower = v[i];
        r->median = ((double)lower + (double)v[n / 2]) / 2.0;
    }
    r->stddev = 0;
    if (n > 1) { /* two passes around the exact mean: no cancellation */
        double mean = (double)r->total / (double)n, ss = 0;
        for (size_t i = 0; i < n; i++)
            ss += ((double)v[i] - mean) * ((double)v[i] - mean);
        r->stddev = sqrt(ss / (double)(n - 1));
    }
}

/* The category column of the unit whose first group is g (classified). */
static const char *category_of(const xpv_kgroup *g)
{
    switch (g->kind & ~XPV_KS_COMPILE) {
    case XPV_KIND_MEMCPY_H2D:
        return "memcpy_h2d";
    case XPV_KIND_MEMCPY_D2H:
        return "memcpy_d2h";
    case XPV_KIND_MEMCPY_D2D:
        return "memcpy_d2d";
    case XPV_KIND_MEMCPY_OTHER:
        return "memcpy_other";
    case XPV_KIND_MEMSET:
        return "memset";
    default:
        return g->collective ? "collective" : "compute";
    }
}

/* Kernels, XLA ops and hlo categories are collectives by name, or by the
 * name of the op that launches them most often. */
static int is_collective_unit(const builder *b, size_t from, size_t to)
{
    const xpv_kgroup *g = &b->k->g[b->order[from].gi];
    if (g->kind & XPV_KS_COMPILE) return 0;
    if (g->kind < XPV_KIND_COUNT && g->kind != XPV_KIND_KERNEL && g->kind != XPV_KIND_XLA_OP)
        return 0;
    size_t len;
    const char *name = unit_name(b->k, b->in, g, &len);
    if (xpv_collective_name(name, len)) return 1;
    row_meta m;
    merge_meta(b, from, to, &m);
    if (!m.op) return 0;
    name = b->in->string(b->in->string_ctx, m.op, &len);
    return xpv_collective_name(name, len);
}

/* Adds the row of the groups order[from, to), whose values are v[0, n). */
static void add_row(builder *b, size_t from, size_t to, int device, int64_t *v, size_t n)
{
    xpv_krows *out = b->out;
    if (out->n == out->cap) {
        out->cap = out->cap ? out->cap * 2 : 1024;
        out->v = xpv_xrealloc(out->v, out->cap * sizeof *out->v);
    }
    xpv_krow *r = &out->v[out->n++];
    const xpv_kgroup *g = &b->k->g[b->order[from].gi];
    int fam = family_of(g->kind);
    stats_of(v, n, r);
    r->gi = b->order[from].gi;
    r->device = device;
    int64_t scope = b->totals[fam];
    if (device >= 0) {
        uint64_t *t = xpv_hindex_get(&b->dev_totals, ((uint64_t)fam << 32) | (uint32_t)device);
        scope = t ? (int64_t)*t : 0;
    }
    r->percent = scope > 0 ? 100.0 * (double)r->total / (double)scope : -1;
    row_meta m;
    merge_meta(b, from, to, &m);
    r->op = g->kind != XPV_KS_HLO_CATEGORY ? m.op : 0;
    r->shape = m.shape;
    r->nshapes = m.nshapes;
    r->occupancy = m.occ_n ? m.occ_sum / (double)m.occ_n : -1;
}

/* Rows of the unit order[from, to), whose values (already gathered) start at v. */
static void add_unit(builder *b, size_t from, size_t to, int64_t *v)
{
    size_t off = 0, total = 0;
    for (size_t i = from; i < to; i++)
        total += (size_t)b->k->g[b->order[i].gi].count;
    for (size_t i = from; i < to;) {
        size_t j = i, n = 0;
        while (j < to && b->order[j].device == b->order[i].device)
            n += (size_t)b->k->g[b->order[j++].gi].count;
        if (b->order[i].device >= 0) add_row(b, i, j, b->order[i].device, v + off, n);
        off += n;
        i = j;
    }
    add_row(b, from, to, -1, v, total);
}

static void replay_into(void *ctx, uint32_t gi, int64_t v)
{
    xpv_kgroup *g = &((xpv_kstats *)ctx)->g[gi];
    if (g->dst) g->dst[g->fill++] = v;
}

static size_t unit_end(const builder *b, size_t from)
{
    size_t to = from + 1;
    while (to < b->norder && b->order[to].kind == b->order[from].kind &&
           b->order[to].name == b->order[from].name)
        to++;
    return to;
}

/* Gathers the values of units starting at order[from] (as many as fit one
 * batch), adds their rows and returns the index after the last one. */
static int add_batch(builder *b, size_t from, size_t *next, xpv_err *err)
{
    xpv_kstats *k = b->k;
    size_t cap = k->durs.nspilled ? BATCH_VALUES : 0, to = from, nvals = 0;
    do {
        size_t e = unit_end(b, to), n = 0;
        for (size_t i = to; i < e; i++)
            n += (size_t)k->g[b->order[i].gi].count;
        if (to > from && nvals + n > cap) break;
        nvals += n;
        to = e;
    } while (to < b->norder);
    int64_t *vals = xpv_xmalloc((nvals ? nvals : 1) * sizeof *vals), *p = vals;
    for (size_t i = from; i < to; i++) {
        xpv_kgroup *g = &k->g[b->order[i].gi];
        g->dst = p;
        if (g->durs.n) memcpy(p, g->durs.v, (size_t)g->durs.n * sizeof *p);
        g->fill = g->durs.n;
        p += g->count;
    }
    int rc = xpv_durs_replay(&k->durs, replay_into, k, err);
    for (size_t i = from; i < to && rc == 0; i++) {
        xpv_kgroup *g = &k->g[b->order[i].gi];
        if (g->fill != g->count)
            rc = xpv_err_set(err, "analysis: %lld of %lld durations gathered", (long long)g->fill,
                             (long long)g->count);
    }
    for (size_t u = from; u < to && rc == 0;) {
        size_t e = unit_end(b, u);
        add_unit(b, u, e, k->g[b->order[u].gi].dst);
        u = e;
    }
    for (size_t i = from; i < to; i++)
        k->g[b->order[i].gi].dst = NULL;
    free(vals);
    *next = to;
    return rc;
}

static void prepare_order(builder *b)
{
    b->norder = 0;
    b->order = xpv_xmalloc((b->k->n ? b->k->n : 1) * sizeof *b->order);
    b->dev_totals = (xpv_hindex){0};
    for (size_t i = 0; i < b->k->n; i++) {
        const xpv_kgroup *g = &b->k->g[i];
        if (g->dropped) continue;
        int dev = device_of(b, g->track), fam = family_of(g->kind);
        b->order[b->norder++] = (order_rec){g->kind, g->name, dev, g->track, (uint32_t)i};
        b->totals[fam] += g->total_ps;
        if (dev >= 0)
            *xpv_hindex_put(&b->dev_totals, ((uint64_t)fam << 32) | (uint32_t)dev, 0) +=
                (uint64_t)g->total_ps;
    }
    sort_order(b->order, b->norder);
}

static void builder_free(builder *b)
{
    free(b->order);
    xpv_hindex_free(&b->dev_totals);
}

int *xpv_track_devices(const xpv_analysis_input *in)
{
    int *dev = xpv_xmalloc((in->ntracks ? in->ntracks : 1) * sizeof *dev);
    for (size_t t = 0; t < in->ntracks; t++)
        dev[t] = in->tracks[t].device_id;
    return dev;
}

void xpv_kstats_classify(xpv_kstats *k, const xpv_analysis_input *in, xpv_hindex *collective_map)
{
    int *dev = xpv_track_devices(in);
    builder b = {.k = k, .in = in, .track_device = dev, .ntracks = in->ntracks};
    prepare_order(&b);
    for (size_t from = 0; from < b.norder;) {
        size_t to = unit_end(&b, from);
        const xpv_kgroup *first = &k->g[b.order[from].gi];
        int collective = is_collective_unit(&b, from, to);
        if (collective)
            xpv_hindex_put(collective_map, ((uint64_t)first->kind << 32) | first->name, 1);
        for (size_t i = from; i < to; i++)
            k->g[b.order[i].gi].collective = (uint8_t)collective;
        from = to;
    }
    builder_free(&b);
    free(dev);
}

int xpv_kstats_rows(xpv_kstats *k, const int *track_device, size_t ntracks, xpv_krows *out,
                    xpv_err *err)
{
    builder b = {.k = k, .track_device = track_device, .ntracks = ntracks, .out = out};
    out->n = 0;
    out->version = k->version;
    prepare_order(&b);
    int rc = 0;
    for (size_t from = 0; from < b.norder && rc == 0;)
        rc = add_batch(&b, from, &from, err);
    builder_free(&b);
    return rc;
}

void xpv_krows_free(xpv_krows *rows)
{
    free(rows->v);
    memset(rows, 0, sizeof *rows);
}

/* Writes v in decimal at p; returns the end. */
static char *put_decimal(char *p, int32_t v)
{
    uint32_t u = v < 0 ? 0u - (uint32_t)v : (uint32_t)v;
    char digits[10];
    int n = 0;
    do
        digits[n++] = (char)('0' + u % 10);
    while ((u /= 10) > 0);
    if (v < 0) *p++ = '-';
    while (n > 0)
        *p++ = digits[--n];
    return p;
}

/* "x,y,z" of a grid or block, as the shape columns show them (snprintf
 * cost a tenth of the whole insert). */
static void put_triple(xpv_store_kernel_rows *out, int col, const int32_t v[3])
{
    char buf[48], *p = buf;
    for (int i = 0; i < 3; i++) {
        if (i) *p++ = ',';
        p = put_decimal(p, v[i]);
    }
    xpv_store_kernel_rows_text(out, col, buf, (size_t)(p - buf));
}

static void put_shape(xpv_store_kernel_rows *out, xpv_store_kernel_row *o, const xpv_kstats *k,
                      const xpv_krow *r, int kernel)
{
    if (!kernel) return;
    o->shapes = r->nshapes;
    o->known |= XPV_STORE_KSTAT_SHAPES;
    if (r->nshapes != 1) return;
    const xpv_shape *s = &k->shapes[r->shape];
    if (s->grid[0] >= 0) put_triple(out, XPV_STORE_KCOL_GRID, s->grid);
    if (s->block[0] >= 0) put_triple(out, XPV_STORE_KCOL_BLOCK, s->block);
    o->registers_per_thread = s->registers;
    o->shared_memory_bytes = s->shared_bytes;
    o->occupancy_pct = r->occupancy;
    o->known |= (s->registers >= 0 ? XPV_STORE_KSTAT_REGS : 0) |
                (s->shared_bytes >= 0 ? XPV_STORE_KSTAT_SHMEM : 0) |
                (r->occupancy >= 0 ? XPV_STORE_KSTAT_OCCUPANCY : 0);
}

/* ---- top ranks ---- */

/* An all-devices row's name, for ranking names by their summed time. */
typedef struct {
    int fam;
    const char *name;
    size_t len;
    int64_t ps;
    size_t row; /* in the rows; for units: the first of its refs */
    size_t nrefs;
} name_ref;

static int by_fam_name(const void *a, const void *b)
{
    const name_ref *x = a, *y = b;
    if (x->fam != y->fam) return x->fam - y->fam;
    int c = memcmp(x->name, y->name, x->len < y->len ? x->len : y->len);
    if (c) return c;
    return x->len < y->len ? -1 : x->len > y->len;
}

/* Per family, the largest summed time first, then by name. */
static int by_fam_time(const void *a, const void *b)
{
    const name_ref *x = a, *y = b;
    if (x->fam != y->fam) return x->fam - y->fam;
    if (x->ps != y->ps) return x->ps > y->ps ? -1 : 1;
    return by_fam_name(a, b);
}

/* The rank of each all-devices row's name within its family, by the name's
 * summed time (1 the largest, ties by name), for the first
 * XPV_KSTATS_TOP_RANKS names, 0 otherwise; and each family's summed time
 * and count of names. Readers that merge hosts (overview_page) find a
 * family's top names from these few rows and bound the rest (see
 * xpv_kstats_insert). */
static int32_t *rank_rows(const xpv_kstats *k, const xpv_krows *rows, const xpv_analysis_input *in,
                          int64_t total[FAM_COUNT], int64_t names[FAM_COUNT])
{
    int32_t *rank = xpv_xcalloc(rows->n ? rows->n : 1, sizeof *rank);
    name_ref *refs = xpv_xmalloc((rows->n ? rows->n : 1) * sizeof *refs);
    name_ref *units = xpv_xmalloc((rows->n ? rows->n : 1) * sizeof *units);
    size_t nrefs = 0, nunits = 0;
    for (size_t i = 0; i < rows->n; i++) {
        const xpv_krow *r = &rows->v[i];
        if (r->device != -1) continue;
        const xpv_kgroup *g = &k->g[r->gi];
        name_ref *f = &refs[nrefs++];
        f->fam = family_of(g->kind);
        f->name = unit_name(k, in, g, &f->len);
        f->ps = r->total;
        f->row = i;
        total[f->fam] += r->total;
    }
    xpv_sort(refs, nrefs, sizeof *refs, by_fam_name);
    for (size_t i = 0; i < nrefs; i++) {
        if (nunits && by_fam_name(&units[nunits - 1], &refs[i]) == 0) {
            units[nunits - 1].ps += refs[i].ps;
            units[nunits - 1].nrefs++;
            continue;
        }
        units[nunits] = refs[i];
        units[nunits].row = i;
        units[nunits++].nrefs = 1;
        names[refs[i].fam]++;
    }
    xpv_sort(units, nunits, sizeof *units, by_fam_time);
    int32_t at[FAM_COUNT] = {0};
    for (size_t u = 0; u < nunits; u++) {
        int32_t r = ++at[units[u].fam];
        for (size_t j = 0; r <= XPV_KSTATS_TOP_RANKS && j < units[u].nrefs; j++)
            rank[refs[units[u].row + j].row] = r;
    }
    free(units);
    free(refs);
    return rank;
}

/* profiles.kernel_totals: {"<family>": [summed ps, names], ...} over the
 * all-devices rows, so a merge of hosts knows each host's family total and
 * whether it has names beyond its ranked ones. */
static int write_totals(const xpv_analysis_input *in, const int64_t total[FAM_COUNT],
                        const int64_t names[FAM_COUNT], xpv_err *err)
{
    xpv_buf b = {0};
    xpv_buf_putc(&b, '{');
    for (int f = 0; f < FAM_COUNT; f++)
        if (names[f])
            xpv_buf_printf(&b, "%s\"%s\":[%lld,%lld]", b.len > 1 ? "," : "", FAMILY_NAME[f],
                           (long long)total[f], (long long)names[f]);
    xpv_buf_putc(&b, '}');
    sqlite3_stmt *st;
    int rc = sqlite3_prepare_v2(in->db, "UPDATE profiles SET kernel_totals=?2 WHERE id=?1", -1, &st,
                                NULL);
    if (rc == SQLITE_OK) {
        sqlite3_bind_int64(st, 1, in->profile_id);
        sqlite3_bind_text(st, 2, b.data, (int)b.len, SQLITE_STATIC);
        rc = sqlite3_step(st) == SQLITE_DONE ? SQLITE_OK : SQLITE_ERROR;
        sqlite3_finalize(st);
    }
    xpv_buf_free(&b);
    return rc == SQLITE_OK ? 0 : xpv_db_error(err, in->db);
}

static void put_row(xpv_store_kernel_rows *out, const xpv_kstats *k, const xpv_krow *r, size_t seq,
                    int32_t rank, const xpv_analysis_input *in)
{
    const xpv_kgroup *g = &k->g[r->gi];
    size_t len;
    const char *name = unit_name(k, in, g, &len);
    xpv_store_kernel_row *o = xpv_store_kernel_rows_add(out);
    o->device = r->device;
    o->seq = (int64_t)seq;
    o->count = r->count;
    o->total_ps = r->total;
    o->min_ps = r->min;
    o->max_ps = r->max;
    o->median_ps = r->median;
    o->stddev_ps = r->stddev;
    o->percent = r->percent;
    o->op_id = r->op;
    o->top_rank = rank;
    o->known = (r->percent >= 0 ? XPV_STORE_KSTAT_PERCENT : 0) | (r->op ? XPV_STORE_KSTAT_OP : 0) |
               (rank ? XPV_STORE_KSTAT_RANK : 0);
    put_shape(out, o, k, r, (g->kind & ~XPV_KS_COMPILE) == XPV_KIND_KERNEL);
    const char *kind = FAMILY_NAME[family_of(g->kind)], *cat = category_of(g);
    xpv_store_kernel_rows_text(out, XPV_STORE_KCOL_KIND, kind, strlen(kind));
    xpv_store_kernel_rows_text(out, XPV_STORE_KCOL_NAME, name, len);
    xpv_store_kernel_rows_text(out, XPV_STORE_KCOL_CATEGORY, cat, strlen(cat));
}

int xpv_kstats_insert(const xpv_kstats *k, const xpv_krows *rows, const xpv_analysis_input *in,
                      xpv_err *err)
{
    assert(rows->version == k->version);
    int64_t total[FAM_COUNT] = {0}, names[FAM_COUNT] = {0};
    int32_t *rank = rank_rows(k, rows, in, total, names);
    xpv_store_kernel_rows own = {0}, *out = in->kernel_rows ? in->kernel_rows : &own;
    out->n = 0;
    xpv_buf_reset(&out->text);
    for (size_t i = 0; i < rows->n; i++)
        put_row(out, k, &rows->v[i], i, rank[i], in);
    free(rank);
    int rc = in->kernel_rows ? 0 : xpv_store_kernel_stats_write(in->db, in->profile_id, out, err);
    xpv_store_kernel_rows_free(&own);
    return rc == 0 ? write_totals(in, total, names, err) : rc;
}
