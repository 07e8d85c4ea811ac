/*
 * kernel_stats.c — per-name summaries of device work (table kernel_stats).
 *
 * While events stream in, each KERNEL / MEMCPY_* / MEMSET / XLA_OP event with
 * a duration (0 included: Kineto's sub-µs kernels) lands in a group keyed by
 * (kind, name id, track): an
 * exact count and int64 ps total, every duration (durations.c, for the exact
 * median), the distinct launch shapes and the ops that launched it. At
 * finish, groups of one (kind, name) are merged per device and over all
 * devices into rows:
 *   - total/min/max exact ps; median exact (mean of the two middle values for
 *     an even count); stddev is the sample standard deviation (n - 1, as
 *     `nsys stats` cuda_gpu_kern_sum), 0 for one instance;
 *   - percent = share of the summed durations of the same kind family
 *     (kernel, memcpy, memset, xla_op, hlo_category) in the same device scope;
 *   - launch shape (grid, block, registers, static + dynamic shared memory)
 *     only when exactly one distinct shape was seen: otherwise `shapes` says
 *     how many (saturating at XPV_KS_MAX_SHAPES) and the shape columns are
 *     NULL; occupancy_pct is the mean over instances that report one (a 0
 *     is none);
 *   - op = the most frequent launching op (the reader's hlo_op/tf_op, else the
 *     CPU op found through correlation, see launches.c);
 *   - category: collective|compute for kernels and XLA ops (by name or op),
 *     memcpy_h2d|memcpy_d2h|memcpy_d2d|memcpy_other, memset.
 * Tracks without a device id contribute to the all-devices rows only.
 */
#include "analysis_internal.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define SHAPELESS (UINT32_MAX - 1) /* by_shape_key: the key's launches have no shape */

static uint64_t group_key(unsigned kind, uint32_t track, uint32_t name)
{
    assert(track < (1u << 26));
    return ((uint64_t)kind << 58) | ((uint64_t)track << 32) | name;
}

void xpv_kstats_init(xpv_kstats *k, size_t mem_cap)
{
    memset(k, 0, sizeof *k);
    xpv_durs_init(&k->durs, mem_cap);
}

void xpv_kstats_free(xpv_kstats *k)
{
    for (size_t i = 0; i < k->n; i++) {
        free(k->g[i].shapes);
        free(k->g[i].durs.v);
    }
    for (size_t i = 0; i < k->ncat; i++)
        free(k->cat_names[i]);
    free(k->cat_names);
    free(k->g);
    free(k->last_on_track);
    free(k->by_name);
    free(k->by_shape_key);
    free(k->shapes);
    free(k->shape_group);
    xpv_hindex_free(&k->index);
    xpv_hindex_free(&k->shape_index);
    xpv_hindex_free(&k->group_shapes);
    xpv_hindex_free(&k->cat_index);
    xpv_durs_free(&k->durs);
}

uint32_t xpv_kstats_group(xpv_kstats *k, unsigned kind, uint32_t name, uint32_t track, int add)
{
    uint64_t key = group_key(kind, track, name);
    uint64_t *slot = add ? xpv_hindex_put(&k->index, key, k->n) : xpv_hindex_get(&k->index, key);
    if (!slot) return UINT32_MAX;
    if (*slot < k->n) return (uint32_t)*slot;
    if (k->n == k->cap) {
        k->cap = k->cap ? k->cap * 2 : 256;
        k->g = xpv_xrealloc(k->g, k->cap * sizeof *k->g);
    }
    xpv_kgroup *g = &k->g[k->n];
    memset(g, 0, sizeof *g);
    g->kind = (uint8_t)kind;
    g->name = name;
    g->track = track;
    g->next = UINT32_MAX;
    g->last_shape = UINT32_MAX;
    return (uint32_t)k->n++;
}

/* Name ids are dense, so the group last used for a name is an array slot
 * away; readers that deliver a track at a time (xplane) find it there,
 * others fall back to the hash lookup. Names past XPV_BY_STRING_MAX always hash. */
static uint32_t group_by_name(xpv_kstats *k, const xpv_event *ev)
{
    if (ev->name >= XPV_BY_STRING_MAX) return xpv_kstats_group(k, ev->kind, ev->name, ev->track, 1);
    k->by_name = xpv_grow_to_index(k->by_name, &k->nby_name, ev->name, sizeof *k->by_name, 0xFF);
    uint32_t gi = k->by_name[ev->name];
    if (gi != UINT32_MAX && k->g[gi].track == ev->track && k->g[gi].kind == ev->kind) return gi;
    gi = xpv_kstats_group(k, ev->kind, ev->name, ev->track, 1);
    k->by_name[ev->name] = gi;
    return gi;
}

/* The group of a streamed event. Device programs repeat: the event after
 * an instance of group g on a track is mostly of the group that followed g
 * there last time, so that guess is checked before the hash lookup. */
static uint32_t group_of_event(xpv_kstats *k, const xpv_event *ev)
{
    k->last_on_track =
        xpv_grow_to_index(k->last_on_track, &k->ntracks, ev->track, sizeof *k->last_on_track, 0xFF);
    uint32_t prev = k->last_on_track[ev->track], gi = UINT32_MAX;
    if (prev != UINT32_MAX && k->g[prev].next != UINT32_MAX) {
        const xpv_kgroup *guess = &k->g[k->g[prev].next];
        if (guess->name == ev->name && guess->kind == ev->kind) gi = k->g[prev].next;
    }
    if (gi == UINT32_MAX) {
        gi = group_by_name(k, ev);
        if (prev != UINT32_MAX) k->g[prev].next = gi;
    }
    k->last_on_track[ev->track] = gi;
    return gi;
}

static uint32_t shape_id(xpv_kstats *k, const xpv_shape *s)
{
    xpv_hprobe p = xpv_hindex_probe(&k->shape_index, xpv_hash64(s, sizeof *s));
    for (uint64_t id; xpv_hindex_next(&k->shape_index, &p, &id);)
        if (memcmp(&k->shapes[id], s, sizeof *s) == 0) return (uint32_t)id;
    if (k->nshapes == k->cap_shapes) {
        k->cap_shapes = k->cap_shapes ? k->cap_shapes * 2 : 64;
        k->shapes = xpv_xrealloc(k->shapes, k->cap_shapes * sizeof *k->shapes);
        k->shape_group = xpv_xrealloc(k->shape_group, k->cap_shapes * sizeof *k->shape_group);
    }
    k->shapes[k->nshapes] = *s;
    k->shape_group[k->nshapes] = UINT32_MAX;
    xpv_hindex_insert_at(&k->shape_index, &p, k->nshapes);
    return (uint32_t)k->nshapes++;
}

static void tally_op(xpv_kgroup *g, uint32_t op)
{
    for (int i = 0; i < XPV_KS_MAX_OPS; i++) {
        if (g->ops[i].op == op) {
            g->ops[i].n++;
            return;
        }
        if (g->ops[i].op == 0) {
            g->ops[i] = (xpv_op_tally){op, 1};
            return;
        }
    }
}

/* The shape of a launch, zeroed padding included (shapes are hashed and
 * compared bytewise); 0 when the launch says nothing of its shape. */
static int shape_of(const xpv_launch *l, xpv_shape *s)
{
    memset(s, 0, sizeof *s);
    memcpy(s->grid, l->grid, sizeof s->grid);
    memcpy(s->block, l->block, sizeof s->block);
    s->registers = l->registers_per_thread;
    s->shared_bytes = -1;
    if (l->static_shared_bytes >= 0 || l->dynamic_shared_bytes >= 0)
        s->shared_bytes = (int64_t)(l->static_shared_bytes > 0 ? l->static_shared_bytes : 0) +
                          (l->dynamic_shared_bytes > 0 ? l->dynamic_shared_bytes : 0);
    return s->grid[0] >= 0 || s->block[0] >= 0 || s->registers >= 0 || s->shared_bytes >= 0;
}

static void note_shape(xpv_kstats *k, uint32_t gi, uint32_t id)
{
    xpv_kgroup *g = &k->g[gi];
    g->last_shape = id;
    if (k->shape_group[id] == gi) return; /* the group that saw it last: a pair known */
    k->shape_group[id] = gi;
    uint64_t pair = (uint64_t)gi << 32 | id;
    size_t pairs = xpv_hindex_count(&k->group_shapes);
    xpv_hindex_put(&k->group_shapes, pair, 0);
    if (xpv_hindex_count(&k->group_shapes) == pairs || g->nshapes == XPV_KS_MAX_SHAPES)
        return; /* seen */
    g->shapes = xpv_xrealloc(g->shapes, (g->nshapes + 1) * sizeof *g->shapes);
    g->shapes[g->nshapes++] = id;
}

/* The shape id of a launch, UINT32_MAX when it says nothing of its shape.
 * Launches with a shape key (one per kernel_details text) find it in an
 * array slot once their key has been seen; the others are compared with
 * the group's previous shape, then hashed. */
static uint32_t launch_shape(xpv_kstats *k, const xpv_launch *l, uint32_t last)
{
    xpv_shape s;
    if (l->shape_key && l->shape_key < XPV_BY_STRING_MAX) {
        k->by_shape_key = xpv_grow_to_index(k->by_shape_key, &k->nby_shape_key, l->shape_key,
                                            sizeof *k->by_shape_key, 0xFF);
        uint32_t *slot = &k->by_shape_key[l->shape_key];
        if (*slot == UINT32_MAX) *slot = shape_of(l, &s) ? shape_id(k, &s) : SHAPELESS;
        return *slot == SHAPELESS ? UINT32_MAX : *slot;
    }
    if (!shape_of(l, &s)) return UINT32_MAX;
    if (last != UINT32_MAX && memcmp(&k->shapes[last], &s, sizeof s) == 0) return last;
    return shape_id(k, &s);
}

static void note_launch(xpv_kstats *k, uint32_t gi, const xpv_launch *l)
{
    xpv_kgroup *g = &k->g[gi];
    uint32_t id = launch_shape(k, l, g->last_shape);
    if (id != UINT32_MAX && id != g->last_shape) note_shape(k, gi, id);
    /* 0 is no measurement: ROCm tracers and Kineto write 0 where they computed none,
     * and a kernel that ran had a warp resident */
    if (l->occupancy_pct > 0) {
        g->occ_sum += l->occupancy_pct;
        g->occ_n++;
    }
    if (l->op) {
        tally_op(g, l->op);
        g->ops_from_reader = 1;
    }
}

static void add_value(xpv_kstats *k, uint32_t gi, int64_t dur_ps)
{
    xpv_kgroup *g = &k->g[gi];
    k->version++;
    g->count++;
    g->total_ps += dur_ps;
    xpv_durs_add(&k->durs, &g->durs, gi, dur_ps);
}

void xpv_kstats_add(xpv_kstats *k, const xpv_event *ev)
{
    uint32_t gi = group_of_event(k, ev);
    add_value(k, gi, ev->dur_ps);
    if (ev->kind == XPV_KIND_KERNEL && ev->launch) note_launch(k, gi, ev->launch);
}

void xpv_kstats_add_to(xpv_kstats *k, uint32_t gi, const xpv_event *ev)
{
    add_value(k, gi, ev->dur_ps);
    if (ev->kind == XPV_KIND_KERNEL && ev->launch) note_launch(k, gi, ev->launch);
}

void xpv_kstats_rekey(xpv_kstats *k, uint32_t gi, unsigned kind)
{
    xpv_kgroup *g = &k->g[gi];
    xpv_hindex_del(&k->index, group_key(g->kind, g->track, g->name));
    g->kind = (uint8_t)kind;
    *xpv_hindex_put(&k->index, group_key(kind, g->track, g->name), 0) = gi;
    k->version++;
}

uint32_t xpv_kstats_renew(xpv_kstats *k, uint32_t gi)
{
    xpv_kgroup old = k->g[gi];
    uint64_t key = group_key(old.kind, old.track, old.name);
    xpv_hindex_del(&k->index, key);
    uint32_t ni = xpv_kstats_group(k, old.kind, old.name, old.track, 1);
    k->g[gi].dropped = 1;
    k->version++;
    return ni;
}

void xpv_kstats_keep_tracks(xpv_kstats *k, unsigned kind, const uint8_t *keep_tracks)
{
    for (size_t i = 0; i < k->n; i++)
        if (k->g[i].kind == kind && !keep_tracks[k->g[i].track] && !k->g[i].dropped) {
            k->g[i].dropped = 1;
            k->version++;
        }
}

/* ---- finish: ops through correlation ---- */

typedef struct {
    xpv_kstats *k;
    const xpv_launches *l;
    size_t hint;
} link_ctx;

static int link_visit(void *ctx, const xpv_event *ev, int64_t block_id, uint32_t index)
{
    (void)block_id, (void)index;
    link_ctx *c = ctx;
    if (ev->kind != XPV_KIND_KERNEL || ev->dur_ps < 0 || ev->corr < 0) return 0;
    uint32_t gi = xpv_kstats_group(c->k, ev->kind, ev->name, ev->track, 0);
    if (gi == UINT32_MAX || c->k->g[gi].ops_from_reader) return 0;
    const xpv_launch_rec *r = xpv_launches_find(c->l, ev->corr, ev->ts_ns, &c->hint);
    if (r && r->op) {
        tally_op(&c->k->g[gi], r->op);
        c->k->version++;
    }
    return 0;
}

int xpv_kstats_link_ops(xpv_kstats *k, const xpv_analysis_input *in, const uint8_t *kernel_tracks,
                        const xpv_launches *l, xpv_err *err)
{
    link_ctx c = {k, l, 0};
    for (size_t t = 0; t < in->ntracks; t++) {
        if (!kernel_tracks[t]) continue;
        xpv_store_query q;
        xpv_store_query_all(&q, in->profile_id);
        q.track = (int64_t)t;
        q.kinds = XPV_KIND_BIT(XPV_KIND_KERNEL);
        q.skip_args = 1;
        if (xpv_analysis_scan(in, &q, link_visit, &c, err) < 0) return -1;
    }
    return 0;
}

/* ---- finish: TPU hlo_category groups ---- */

typedef struct {
    xpv_kstats *k;
    const xpv_analysis_input *in;
    xpv_hindex key_is_category; /* arg key id -> 1 when it is "hlo_category" */
} hlo_ctx;

static uint32_t category_index(xpv_kstats *k, const char *s, size_t len)
{
    xpv_hprobe p = xpv_hindex_probe(&k->cat_index, xpv_hash64(s, len));
    for (uint64_t id; xpv_hindex_next(&k->cat_index, &p, &id);) {
        const char *have = k->cat_names[id];
        if (strlen(have) == len && memcmp(have, s, len) == 0) return (uint32_t)id;
    }
    k->cat_names = xpv_xrealloc(k->cat_names, (k->ncat + 1) * sizeof *k->cat_names);
    k->cat_names[k->ncat] = xpv_xstrndup(s, len);
    xpv_hindex_insert_at(&k->cat_index, &p, k->ncat);
    return (uint32_t)k->ncat++;
}

static int hlo_visit(void *ctx, const xpv_event *ev, int64_t block_id, uint32_t index)
{
    (void)block_id, (void)index;
    hlo_ctx *c = ctx;
    if (ev->kind != XPV_KIND_XLA_OP || ev->dur_ps < 0) return 0;
    for (uint32_t i = 0; i < ev->nargs; i++) {
        const xpv_arg *a = &ev->args[i];
        static const char *const category_key[] = {"hlo_category", NULL};
        if (!xpv_analysis_string_is(c->in, &c->key_is_category, a->key, category_key)) continue;
        const char *s = NULL;
        size_t len = 0;
        if (a->type == XPV_ARG_STR)
            s = c->in->string(c->in->string_ctx, a->v.str, &len);
        else if (a->type == XPV_ARG_TEXT)
            s = a->text, len = a->len;
        if (!s || !len) return 0;
        uint32_t name = category_index(c->k, s, len);
        add_value(c->k, xpv_kstats_group(c->k, XPV_KS_HLO_CATEGORY, name, ev->track, 1),
                  ev->dur_ps);
        return 0;
    }
    return 0;
}

int xpv_kstats_hlo_categories(xpv_kstats *k, const xpv_analysis_input *in,
                              const uint8_t *xla_op_tracks, xpv_err *err)
{
    hlo_ctx c = {.k = k, .in = in};
    int rc = 0;
    for (size_t t = 0; t < in->ntracks && rc == 0; t++) {
        if (!xla_op_tracks[t]) continue;
        xpv_store_query q;
        xpv_store_query_all(&q, in->profile_id);
        q.track = (int64_t)t;
        q.kinds = XPV_KIND_BIT(XPV_KIND_XLA_OP);
        if (xpv_analysis_scan(in, &q, hlo_visit, &c, err) < 0) rc = -1;
    }
    xpv_hindex_free(&c.key_is_category);
    return rc;
}
