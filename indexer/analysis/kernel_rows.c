/*
 * kernel_rows.c — turning the groups of kernel_stats.c into `kernel_stats`
 * rows (see kernel_stats.c for what each column means).
 *
 * Groups are ordered by (kind, name, device, track), so the groups of one
 * "unit" (kind + name) are adjacent and, inside it, those of one device.
 * A unit's durations are gathered into one array in that order; each
 * device's slice is sorted for its row, then the whole array for the
 * all-devices row. When durations were spilled, several units are gathered
 * per pass over the temp file (at most BATCH_VALUES values, or one unit).
 */
#include "analysis_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define BATCH_VALUES (2u << 20)

enum { FAM_KERNEL, FAM_MEMCPY, FAM_MEMSET, FAM_XLA_OP, FAM_HLO, FAM_COUNT };
static const char *const FAMILY_NAME[FAM_COUNT] = {"kernel", "memcpy", "memset", "xla_op",
                                                   "hlo_category"};

static int family_of(unsigned kind)
{
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

static int order_cmp(const void *pa, const void *pb)
{
    const order_rec *a = pa, *b = pb;
    if (a->kind != b->kind) return a->kind < b->kind ? -1 : 1;
    if (a->name != b->name) return a->name < b->name ? -1 : 1;
    if (a->device != b->device) return a->device < b->device ? -1 : 1;
    return a->track < b->track ? -1 : (a->track > b->track);
}

typedef struct {
    xpv_kstats *k;
    const xpv_analysis_input *in;
    sqlite3_stmt *ins;
    order_rec *order;
    size_t norder;
    int64_t totals[FAM_COUNT]; /* all devices */
    xpv_idmap dev_totals;      /* family << 32 | device -> total ps */
} writer;

static int device_of(const xpv_analysis_input *in, uint32_t track)
{
    return track < in->ntracks ? in->tracks[track].device_id : -1;
}

static const char *unit_name(const writer *w, const xpv_kgroup *g, size_t *len)
{
    if (g->kind == XPV_KS_HLO_CATEGORY) {
        *len = strlen(w->k->cat_names[g->name]);
        return w->k->cat_names[g->name];
    }
    const char *s = w->in->string(w->in->string_ctx, g->name, len);
    if (*len) return s;
    static const char *const fallback[XPV_KIND_COUNT] = {
        [XPV_KIND_KERNEL] = "(unnamed kernel)",     [XPV_KIND_MEMCPY_H2D] = "Memcpy HtoD",
        [XPV_KIND_MEMCPY_D2H] = "Memcpy DtoH",      [XPV_KIND_MEMCPY_D2D] = "Memcpy DtoD",
        [XPV_KIND_MEMCPY_OTHER] = "Memcpy (other)", [XPV_KIND_MEMSET] = "Memset",
        [XPV_KIND_XLA_OP] = "(unnamed op)",
    };
    s = g->kind < XPV_KIND_COUNT && fallback[g->kind] ? fallback[g->kind] : "(unnamed)";
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

static void merge_meta(const writer *w, size_t a, size_t b, row_meta *m)
{
    memset(m, 0, sizeof *m);
    uint32_t seen[XPV_KS_MAX_SHAPES];
    xpv_op_tally ops[4 * XPV_KS_MAX_OPS];
    size_t nops = 0;
    for (size_t i = a; i < b; i++) {
        const xpv_kgroup *g = &w->k->g[w->order[i].gi];
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

typedef struct {
    int64_t count, total, min, max;
    double median, stddev;
} dur_stats;

/* Exact statistics of n > 0 durations; reorders v (the median is found by
 * selection, not by sorting). */
static void stats_of(int64_t *v, size_t n, dur_stats *s)
{
    s->count = (int64_t)n;
    s->total = 0;
    s->min = s->max = v[0];
    for (size_t i = 0; i < n; i++) {
        s->total += v[i];
        if (v[i] < s->min) s->min = v[i];
        if (v[i] > s->max) s->max = v[i];
    }
    xpv_select_i64(v, n, n / 2);
    s->median = (double)v[n / 2];
    if (n % 2 == 0) { /* the lower middle value is the largest of v[0, n/2) */
        int64_t lower = v[0];
        for (size_t i = 1; i < n / 2; i++)
            if (v[i] > lower) lower = v[i];
        s->median = ((double)lower + (double)v[n / 2]) / 2.0;
    }
    s->stddev = 0;
    if (n > 1) { /* two passes around the exact mean: no cancellation */
        double mean = (double)s->total / (double)n, ss = 0;
        for (size_t i = 0; i < n; i++)
            ss += ((double)v[i] - mean) * ((double)v[i] - mean);
        s->stddev = sqrt(ss / (double)(n - 1));
    }
}

/* The category column of the unit whose first group is g (classified). */
static const char *category_of(const xpv_kgroup *g)
{
    switch (g->kind) {
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
static int is_collective_unit(const writer *w, size_t a, size_t b)
{
    const xpv_kgroup *g = &w->k->g[w->order[a].gi];
    if (g->kind < XPV_KIND_COUNT && g->kind != XPV_KIND_KERNEL && g->kind != XPV_KIND_XLA_OP)
        return 0;
    size_t len;
    const char *name = unit_name(w, g, &len);
    if (xpv_collective_name(name, len)) return 1;
    row_meta m;
    merge_meta(w, a, b, &m);
    if (!m.op) return 0;
    name = w->in->string(w->in->string_ctx, m.op, &len);
    return xpv_collective_name(name, len);
}

static void bind_shape(sqlite3_stmt *st, const writer *w, const row_meta *m, int kernel)
{
    for (int c = 13; c <= 17; c++)
        sqlite3_bind_null(st, c);
    sqlite3_bind_null(st, 19);
    if (!kernel) return;
    sqlite3_bind_int64(st, 19, m->nshapes);
    if (m->nshapes != 1) return;
    const xpv_shape *s = &w->k->shapes[m->shape];
    char buf[64];
    if (s->grid[0] >= 0) {
        snprintf(buf, sizeof buf, "%d,%d,%d", s->grid[0], s->grid[1], s->grid[2]);
        sqlite3_bind_text(st, 13, buf, -1, SQLITE_TRANSIENT);
    }
    if (s->block[0] >= 0) {
        snprintf(buf, sizeof buf, "%d,%d,%d", s->block[0], s->block[1], s->block[2]);
        sqlite3_bind_text(st, 14, buf, -1, SQLITE_TRANSIENT);
    }
    if (s->registers >= 0) sqlite3_bind_int64(st, 15, s->registers);
    if (s->shared_bytes >= 0) sqlite3_bind_int64(st, 16, s->shared_bytes);
    if (m->occ_n) sqlite3_bind_double(st, 17, m->occ_sum / (double)m->occ_n);
}

/* Writes one row for the groups order[a, b) whose sorted values are v[0, n). */
static int write_row(writer *w, size_t a, size_t b, int device, int64_t *v, size_t n,
                     const char *category, xpv_err *err)
{
    const xpv_kgroup *g = &w->k->g[w->order[a].gi];
    int fam = family_of(g->kind);
    dur_stats s;
    stats_of(v, n, &s);
    row_meta m;
    merge_meta(w, a, b, &m);
    int64_t scope = w->totals[fam];
    if (device >= 0) {
        uint64_t *t = xpv_idmap_get(&w->dev_totals, ((uint64_t)fam << 32) | (uint32_t)device);
        scope = t ? (int64_t)*t : 0;
    }
    size_t len;
    const char *name = unit_name(w, g, &len);
    sqlite3_stmt *st = w->ins;
    sqlite3_bind_int64(st, 1, w->in->profile_id);
    sqlite3_bind_text(st, 2, FAMILY_NAME[fam], -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 3, device);
    sqlite3_bind_text(st, 4, name, (int)len, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 5, category, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 6, s.count);
    sqlite3_bind_int64(st, 7, s.total);
    sqlite3_bind_int64(st, 8, s.min);
    sqlite3_bind_int64(st, 9, s.max);
    sqlite3_bind_double(st, 10, s.median);
    sqlite3_bind_double(st, 11, s.stddev);
    if (scope > 0)
        sqlite3_bind_double(st, 12, 100.0 * (double)s.total / (double)scope);
    else
        sqlite3_bind_null(st, 12);
    bind_shape(st, w, &m, g->kind == XPV_KIND_KERNEL);
    if (m.op && g->kind != XPV_KS_HLO_CATEGORY) {
        const char *op = w->in->string(w->in->string_ctx, m.op, &len);
        sqlite3_bind_text(st, 18, op, (int)len, SQLITE_TRANSIENT);
    } else {
        sqlite3_bind_null(st, 18);
    }
    int rc = sqlite3_step(st) == SQLITE_DONE
                 ? 0
                 : xpv_err_set(err, "sqlite: %s", sqlite3_errmsg(w->in->db));
    sqlite3_reset(st);
    return rc;
}

/* Rows of the unit order[a, b), whose values (already gathered) start at v. */
static int write_unit(writer *w, size_t a, size_t b, int64_t *v, xpv_err *err)
{
    const char *category = category_of(&w->k->g[w->order[a].gi]);
    size_t off = 0, total = 0;
    for (size_t i = a; i < b; i++)
        total += (size_t)w->k->g[w->order[i].gi].count;
    for (size_t i = a; i < b;) {
        size_t j = i, n = 0;
        while (j < b && w->order[j].device == w->order[i].device)
            n += (size_t)w->k->g[w->order[j++].gi].count;
        if (w->order[i].device >= 0 &&
            write_row(w, i, j, w->order[i].device, v + off, n, category, err) != 0)
            return -1;
        off += n;
        i = j;
    }
    return write_row(w, a, b, -1, v, total, category, err);
}

static void replay_into(void *ctx, uint32_t gi, int64_t v)
{
    xpv_kgroup *g = &((xpv_kstats *)ctx)->g[gi];
    if (g->dst) g->dst[g->fill++] = v;
}

static size_t unit_end(const writer *w, size_t a)
{
    size_t b = a + 1;
    while (b < w->norder && w->order[b].kind == w->order[a].kind &&
           w->order[b].name == w->order[a].name)
        b++;
    return b;
}

/* Gathers the values of units starting at order[a] (as many as fit one
 * batch), writes their rows and returns the index after the last one. */
static int write_batch(writer *w, size_t a, size_t *next, xpv_err *err)
{
    size_t cap = w->k->durs.nspilled ? BATCH_VALUES : 0, b = a, nvals = 0;
    do {
        size_t e = unit_end(w, b), n = 0;
        for (size_t i = b; i < e; i++)
            n += (size_t)w->k->g[w->order[i].gi].count;
        if (b > a && nvals + n > cap) break;
        nvals += n;
        b = e;
    } while (b < w->norder);
    int64_t *vals = xpv_xmalloc((nvals ? nvals : 1) * sizeof *vals), *p = vals;
    for (size_t i = a; i < b; i++) {
        xpv_kgroup *g = &w->k->g[w->order[i].gi];
        g->dst = p;
        if (g->durs.n) memcpy(p, g->durs.v, (size_t)g->durs.n * sizeof *p);
        g->fill = g->durs.n;
        free(g->durs.v);
        g->durs.v = NULL;
        p += g->count;
    }
    int rc = xpv_durs_replay(&w->k->durs, replay_into, w->k, err);
    for (size_t i = a; i < b && rc == 0; i++) {
        xpv_kgroup *g = &w->k->g[w->order[i].gi];
        if (g->fill != g->count)
            rc = xpv_err_set(err, "analysis: %lld of %lld durations gathered", (long long)g->fill,
                             (long long)g->count);
    }
    for (size_t u = a; u < b && rc == 0;) {
        size_t e = unit_end(w, u);
        rc = write_unit(w, u, e, w->k->g[w->order[u].gi].dst, err);
        u = e;
    }
    for (size_t i = a; i < b; i++)
        w->k->g[w->order[i].gi].dst = NULL;
    free(vals);
    *next = b;
    return rc;
}

static void prepare_order(writer *w)
{
    w->norder = 0;
    w->order = xpv_xmalloc((w->k->n ? w->k->n : 1) * sizeof *w->order);
    for (size_t i = 0; i < w->k->n; i++) {
        const xpv_kgroup *g = &w->k->g[i];
        if (g->dropped) continue;
        int dev = device_of(w->in, g->track), fam = family_of(g->kind);
        w->order[w->norder++] = (order_rec){g->kind, g->name, dev, g->track, (uint32_t)i};
        w->totals[fam] += g->total_ps;
        if (dev >= 0)
            *xpv_idmap_put(&w->dev_totals, ((uint64_t)fam << 32) | (uint32_t)dev, 0) +=
                (uint64_t)g->total_ps;
    }
    xpv_sort(w->order, w->norder, sizeof *w->order, order_cmp);
}

void xpv_kstats_classify(xpv_kstats *k, const xpv_analysis_input *in, xpv_idmap *collective_map)
{
    writer w = {.k = k, .in = in};
    xpv_idmap_init(&w.dev_totals);
    prepare_order(&w);
    for (size_t a = 0; a < w.norder;) {
        size_t b = unit_end(&w, a);
        const xpv_kgroup *first = &k->g[w.order[a].gi];
        int collective = is_collective_unit(&w, a, b);
        if (collective) xpv_idmap_put(collective_map, ((uint64_t)first->kind << 32) | first->name, 1);
        for (size_t i = a; i < b; i++)
            k->g[w.order[i].gi].collective = (uint8_t)collective;
        a = b;
    }
    free(w.order);
    xpv_idmap_free(&w.dev_totals);
}

int xpv_kstats_write(xpv_kstats *k, const xpv_analysis_input *in, xpv_err *err)
{
    writer w = {.k = k, .in = in};
    xpv_idmap_init(&w.dev_totals);
    if (sqlite3_prepare_v2(in->db,
                           "INSERT INTO kernel_stats(profile_id, kind, device, name, category,"
                           " count, total_ps, min_ps, max_ps, median_ps, stddev_ps, percent, grid,"
                           " block, registers_per_thread, shared_memory_bytes, occupancy_pct, op,"
                           " shapes) VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15,"
                           "?16,?17,?18,?19)",
                           -1, &w.ins, NULL) != SQLITE_OK)
        return xpv_err_set(err, "sqlite: %s", sqlite3_errmsg(in->db));
    prepare_order(&w);
    int rc = 0;
    for (size_t a = 0; a < w.norder && rc == 0;)
        rc = write_batch(&w, a, &a, err);
    sqlite3_finalize(w.ins);
    free(w.order);
    xpv_idmap_free(&w.dev_totals);
    return rc;
}
