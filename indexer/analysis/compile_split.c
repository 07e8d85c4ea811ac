/*
 * compile_split.c — moving compile-time device work (compile.c) out of the
 * program's kernel_stats groups, at finish, before the rows are computed.
 *
 * The groups were filled while events streamed in, before the host's
 * compile spans were known (the device planes come first). A group whose
 * every instance is compile-time (the autotuner kernels, the copies of
 * autotuning) only changes kind, to XPV_KS_COMPILE | kind. A group with
 * some (a GEMM fusion that autotuning timed as a candidate and the program
 * later ran) is rebuilt: its track is scanned again from the store and each
 * instance added to a fresh program group or to its compile group; the
 * launch shape comes from the stored args (kernel_details,
 * theoretical_occupancy_pct, hlo_op / tf_op), as the reader gave it. When
 * the scan does not find the group's instances again (a store that holds
 * fewer), the group is left as it was.
 *
 * Memory: 4 bytes per group, and the rebuilt groups' durations.
 */
#include "analysis_internal.h"
#include "../readers/kernel_details.h"

#include <stdlib.h>
#include <string.h>

enum { ARG_DETAILS = 1, ARG_OCCUPANCY, ARG_HLO_OP, ARG_TF_OP, ARG_OTHER };

typedef struct {
    xpv_kstats *k;
    const xpv_analysis_input *in;
    const xpv_compile *c;
    uint32_t *renewed; /* old group -> its fresh program group (UINT32_MAX none) */
    size_t nold;       /* groups before the split: fresh ones come after */
    xpv_hindex roles;  /* arg key id -> ARG_* */
} split_ctx;

static int role_of(split_ctx *s, uint32_t key)
{
    uint64_t *v = xpv_hindex_put(&s->roles, key, 0);
    if (*v) return (int)*v;
    static const char *const names[] = {"kernel_details", "theoretical_occupancy_pct", "hlo_op",
                                        "tf_op"};
    size_t len;
    const char *k = s->in->string(s->in->string_ctx, key, &len);
    *v = ARG_OTHER;
    for (int i = 0; i < 4; i++)
        if (strlen(names[i]) == len && memcmp(k, names[i], len) == 0) *v = (uint64_t)i + 1;
    return (int)*v;
}

static const char *arg_text(const split_ctx *s, const xpv_arg *a, size_t *len)
{
    if (a->type == XPV_ARG_STR) return s->in->string(s->in->string_ctx, a->v.str, len);
    if (a->type == XPV_ARG_TEXT) return *len = a->len, a->text;
    return NULL;
}

/* The launch the reader gave a kernel, from its stored args. */
static void launch_of(split_ctx *s, const xpv_event *ev, xpv_launch *l)
{
    xpv_launch_init(l);
    uint32_t hlo = 0, tf = 0;
    for (uint32_t i = 0; i < ev->nargs; i++) {
        const xpv_arg *a = &ev->args[i];
        size_t len = 0;
        const char *t;
        switch (role_of(s, a->key)) {
        case ARG_DETAILS:
            if ((t = arg_text(s, a, &len)) != NULL) xpv_kernel_details_parse(t, len, l);
            break;
        case ARG_OCCUPANCY:
            if (a->type == XPV_ARG_DOUBLE) l->occupancy_pct = a->v.d;
            break;
        case ARG_HLO_OP:
            if (a->type == XPV_ARG_STR) hlo = a->v.str;
            break;
        case ARG_TF_OP:
            if (a->type == XPV_ARG_STR) tf = a->v.str;
            break;
        default:
            break;
        }
    }
    l->op = hlo ? hlo : tf;
}

static int split_visit(void *ctx, const xpv_event *ev, int64_t block_id, uint32_t index)
{
    (void)block_id, (void)index;
    split_ctx *s = ctx;
    if (ev->dur_ps < 0) return 0;
    /* the index names the fresh group of a rebuilt one (created past nold) */
    uint32_t gi = xpv_kstats_group(s->k, ev->kind, ev->name, ev->track, 0);
    if (gi == UINT32_MAX || gi < s->nold) return 0;
    if (xpv_compile_is(s->c, ev))
        gi = xpv_kstats_group(s->k, XPV_KS_COMPILE | ev->kind, ev->name, ev->track, 1);
    xpv_event e = *ev;
    xpv_launch l;
    if (ev->kind == XPV_KIND_KERNEL) launch_of(s, ev, &l), e.launch = &l;
    xpv_kstats_add_to(s->k, gi, &e);
    return 0;
}

/* Rebuilds the groups of track t marked in s->renewed from the store. */
static int rescan_track(split_ctx *s, size_t t, uint32_t kinds, xpv_err *err)
{
    xpv_store_query q;
    xpv_store_query_all(&q, s->in->profile_id);
    q.track = (int64_t)t;
    q.kinds = kinds;
    return xpv_analysis_scan(s->in, &q, split_visit, s, err) < 0 ? -1 : 0;
}

/* The old groups whose rebuilt pair does not add up to them are put back. */
static void check_rebuilt(split_ctx *s)
{
    xpv_kstats *k = s->k;
    for (uint32_t gi = 0; gi < s->nold; gi++) {
        uint32_t ni = s->renewed[gi];
        if (ni == UINT32_MAX) continue;
        const xpv_kgroup *g = &k->g[gi];
        uint32_t ci = xpv_kstats_group(k, XPV_KS_COMPILE | g->kind, g->name, g->track, 0);
        int64_t n = k->g[ni].count + (ci != UINT32_MAX ? k->g[ci].count : 0);
        if (n == g->count) continue;
        k->g[ni].dropped = 1;
        if (ci != UINT32_MAX) k->g[ci].dropped = 1;
        k->g[gi].dropped = 0;
        xpv_kstats_rekey(k, gi, k->g[gi].kind); /* the key names it again */
    }
}

/* Per group, how many of its instances are compile-time events. */
static int64_t *count_compile(xpv_kstats *k, const xpv_compile *c)
{
    int64_t *n = xpv_xcalloc(k->n ? k->n : 1, sizeof *n);
    for (size_t i = 0; i < c->nev; i++) {
        const xpv_compile_ev *e = &c->ev[i];
        uint32_t gi = xpv_kstats_group(k, e->kind, e->name, e->track, 0);
        if (gi != UINT32_MAX) n[gi]++;
    }
    for (size_t gi = 0; gi < k->n; gi++)
        if (k->g[gi].kind == XPV_KIND_KERNEL && xpv_hindex_get(&c->tuner, k->g[gi].name))
            n[gi] = k->g[gi].count;
    return n;
}

int xpv_kstats_split_compile(xpv_kstats *k, const xpv_analysis_input *in, const xpv_compile *c,
                             xpv_err *err)
{
    if (!c->nev && !xpv_hindex_count(&c->tuner)) return 0;
    split_ctx s = {.k = k, .in = in, .c = c, .nold = k->n};
    int64_t *ncompile = count_compile(k, c);
    s.renewed = xpv_xmalloc((s.nold ? s.nold : 1) * sizeof *s.renewed);
    uint32_t *track_kinds = xpv_xcalloc(in->ntracks ? in->ntracks : 1, sizeof *track_kinds);
    for (uint32_t gi = 0; gi < s.nold; gi++) {
        xpv_kgroup *g = &k->g[gi];
        s.renewed[gi] = UINT32_MAX;
        if (!ncompile[gi] || g->dropped || g->kind & XPV_KS_COMPILE) continue;
        if (ncompile[gi] >= g->count) {
            xpv_kstats_rekey(k, gi, XPV_KS_COMPILE | g->kind);
        } else if (g->track < in->ntracks) {
            track_kinds[g->track] |= XPV_KIND_BIT(g->kind);
            s.renewed[gi] = xpv_kstats_renew(k, gi);
        }
    }
    int rc = 0;
    for (size_t t = 0; t < in->ntracks && rc == 0; t++)
        if (track_kinds[t]) rc = rescan_track(&s, t, track_kinds[t], err);
    if (rc == 0) check_rebuilt(&s);
    free(track_kinds);
    free(ncompile);
    free(s.renewed);
    xpv_hindex_free(&s.roles);
    return rc;
}
