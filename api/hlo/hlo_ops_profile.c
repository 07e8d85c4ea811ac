/*
 * hlo_ops_profile.c — what one profile offers the HLO ops scan (see
 * hlo_ops_internal.h): the string ids of the arg names it uses, where its
 * ops come from (its `XLA Ops` lines, or device events carrying hlo_op),
 * its op tracks, and whether it holds any op at all, found by scanning no
 * further than the first (the tools' has_data, run whenever they are
 * listed).
 */
#include "hlo_ops_internal.h"
#include "../../store/event_store.h"
#include "../../store/profiles.h"
#include "../../store/strings.h"
#include "../../store/tracks.h"
#include "../../indexer/readers/readers.h"

#include <stdlib.h>
#include <string.h>

static const char *const KEY_NAMES[NKEYS] = {
    "hlo_op",      "hlo_module",     "program_id", "hlo_category", "flops",
    "model_flops", "bytes_accessed", "tf_op",      "jax_op",       "source",
};

int xpv_hlo_profile_keys(sqlite3 *db, profile_ctx *p, xpv_err *err)
{
    if (xpv_store_strings_ids(db, p->profile_id, KEY_NAMES, NKEYS, p->keys, err) != 0) return -1;
    for (int k = 0; k < NKEYS; k++) /* a table, as every arg of every op is looked up */
        if (p->keys[k] >= p->nkey_of) p->nkey_of = p->keys[k] + 1;
    p->key_of = xpv_xcalloc(p->nkey_of + 1, 1);
    for (int k = 0; k < NKEYS; k++)
        if (p->keys[k]) p->key_of[p->keys[k]] = (uint8_t)(k + 1);
    return 0;
}

int64_t *xpv_hlo_tracks_of(sqlite3 *db, int64_t profile_id, const char *line, size_t *n,
                           xpv_err *err)
{
    int64_t *ids;
    if (xpv_store_tracks_ids_with_events(db, profile_id, line, &ids, n, err) != 0) return NULL;
    return ids ? ids : xpv_xmalloc(sizeof *ids); /* NULL is the error */
}

void xpv_hlo_profile_free(profile_ctx *p)
{
    xpv_api_strings_free(p->strings);
    free(p->key_of);
    for (size_t i = 0; i < p->npool; i++)
        free(p->pool[i]);
    free(p->pool);
    xpv_hindex_free(&p->poolidx);
    free(p->ops);
    xpv_hindex_free(&p->opidx);
    free(p->spans);
    free(p->launches);
    xpv_hindex_free(&p->launchidx);
    free(p->least);
    xpv_store_compile_marks_free(&p->compile);
    free(p->derive_error);
}

int xpv_hlo_jax_format(sqlite3 *db, int64_t profile_id, xpv_err *err)
{
    xpv_store_cursor c;
    xpv_store_profile row;
    int found = xpv_store_profiles_get(&c, db, profile_id, &row, err);
    if (found != 1) return found;
    const char *f = row.format.s;
    found = f && (strcmp(f, XPV_FMT_XPLANE) == 0 || strcmp(f, XPV_FMT_JAX_JSON) == 0);
    xpv_store_cursor_close(&c);
    return found;
}

int xpv_hlo_profile_mode(sqlite3 *db, profile_ctx *p, xpv_err *err)
{
    size_t n;
    int64_t *lines = xpv_hlo_tracks_of(db, p->profile_id, "XLA Ops", &n, err);
    if (!lines) return -1;
    free(lines);
    if (n) return MODE_XLA_OPS;
    if (!p->keys[K_HLO_OP]) return MODE_NONE;
    int jax = xpv_hlo_jax_format(db, p->profile_id, err);
    return jax < 0 ? -1 : jax ? MODE_KERNELS : MODE_NONE;
}

typedef struct {
    const profile_ctx *p;
    int with_cost;
} carries_ctx;

/* Stops a scan at the first op (an XLA Ops event, or a device event that
 * carries hlo_op), with flops and bytes_accessed if with_cost. */
static int visit_carries_op(void *ctx, const xpv_event *ev, int64_t block, uint32_t index)
{
    (void)block, (void)index;
    const carries_ctx *c = ctx;
    int op = c->p->mode == MODE_XLA_OPS, flops = 0, bytes = 0;
    if (ev->dur_ns < 0) return 0;
    for (uint32_t i = 0; i < ev->nargs; i++) {
        uint32_t key = ev->args[i].key;
        int k = key < c->p->nkey_of ? c->p->key_of[key] - 1 : -1;
        op |= k == K_HLO_OP, flops |= k == K_FLOPS, bytes |= k == K_BYTES;
    }
    return op && (!c->with_cost || (flops && bytes));
}

/* Finds the first op of p's profile (see profile_has_ops). */
static int first_op(sqlite3 *db, profile_ctx *p, int with_cost, xpv_err *err)
{
    if (p->mode == MODE_NONE || (with_cost && !(p->keys[K_FLOPS] && p->keys[K_BYTES]))) return 0;
    if (p->mode == MODE_XLA_OPS && !with_cost) return 1;
    size_t n;
    int64_t *tracks =
        xpv_hlo_tracks_of(db, p->profile_id, p->mode == MODE_XLA_OPS ? "XLA Ops" : NULL, &n, err);
    if (!tracks) return -1;
    carries_ctx c = {p, with_cost};
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        xpv_store_query q;
        xpv_store_query_all(&q, p->profile_id);
        q.track = tracks[i];
        if (p->mode == MODE_KERNELS) q.kinds = XPV_KIND_DEVICE_WORK_BITS;
        rc = xpv_store_scan(db, &q, visit_carries_op, &c, err);
    }
    free(tracks);
    return rc;
}

int xpv_hlo_profile_has_ops(sqlite3 *db, int64_t id, int with_cost, xpv_err *err)
{
    profile_ctx p = {.profile_id = id};
    int rc = xpv_hlo_profile_keys(db, &p, err);
    if (rc == 0) rc = p.mode = xpv_hlo_profile_mode(db, &p, err);
    if (rc >= 0) rc = first_op(db, &p, with_cost, err);
    xpv_hlo_profile_free(&p);
    return rc;
}

int xpv_hlo_ops_has_data(sqlite3 *db, const xpv_tool_scope *s, int with_cost, xpv_err *err)
{
    for (size_t i = 0; i < s->n; i++) {
        int rc = xpv_hlo_profile_has_ops(db, s->ids[i], with_cost, err);
        if (rc != 0) return rc;
    }
    return 0;
}
