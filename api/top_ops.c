/*
 * top_ops.c — the kernels (then XLA ops) with the most device time over
 * the hosts of a scope, each name's time summed over the hosts, for
 * overview_page; exact either way it is found:
 *   - ranked: each host's all-devices rows carry their name's rank in its
 *     kind (kernel_stats.top_rank, the first XPV_KSTATS_TOP_RANKS names by
 *     time) and its profile row the kind's total and count of names
 *     (profiles.kernel_totals). A name ranked on no host has on each host at
 *     most that host's last ranked time, so at most their sum T over the
 *     hosts with names beyond their ranked ones. The ranked names' exact
 *     sums (a lookup on the hosts where they are not ranked) give the answer
 *     when the last one wanted is above T: a few rows per host, whatever
 *     the hosts' number of kernels.
 *   - scan: otherwise (a host indexed without ranks, names too spread over
 *     the hosts), every all-devices row of the scope, summed per name in a
 *     hash in one pass.
 * Both order rows by kind (kernels first), time (largest first), name.
 */
#include "tools/tools.h"
#include "../store/kernel_stats.h"
#include "../indexer/intern.h"
#include "../common/xpv_lower_bound.h"

#include <stdlib.h>
#include <string.h>

#define MAX_LOOKUPS 20000 /* past this many (name, host) lookups, scan */

typedef struct {
    xpv_intern names;
    int64_t *ps;   /* by name id */
    uint8_t *seen; /* ranked path: hosts (bits) where the name is ranked */
    size_t cap, nhosts;
    int empty_name; /* id 0 ("") was summed, not just reserved */
} name_sums;

static void sums_init(name_sums *k, size_t nhosts)
{
    memset(k, 0, sizeof *k);
    xpv_intern_init(&k->names);
    k->nhosts = nhosts;
}

static void sums_free(name_sums *k)
{
    xpv_intern_free(&k->names);
    free(k->ps);
    free(k->seen);
}

/* Adds ps to name's sum (host: the ranked path's host, or -1). -1 when the
 * sum leaves int64, as SQLite's sum() would fail. */
static int sums_add(name_sums *k, const char *name, size_t len, int64_t ps, int64_t host)
{
    uint32_t id = xpv_intern_lookup(&k->names, name, len, 1);
    size_t bytes = (k->nhosts + 7) / 8;
    if (id == 0) k->empty_name = 1;
    if (id >= k->cap) {
        size_t cap = k->cap ? 2 * k->cap : 256;
        while (cap <= id)
            cap *= 2;
        k->ps = xpv_xrealloc(k->ps, cap * sizeof *k->ps);
        memset(k->ps + k->cap, 0, (cap - k->cap) * sizeof *k->ps);
        if (bytes) {
            k->seen = xpv_xrealloc(k->seen, cap * bytes);
            memset(k->seen + k->cap * bytes, 0, (cap - k->cap) * bytes);
        }
        k->cap = cap;
    }
    if (host >= 0) k->seen[id * bytes + (size_t)host / 8] |= (uint8_t)(1u << (host % 8));
    return __builtin_add_overflow(k->ps[id], ps, &k->ps[id]) ? -1 : 0;
}

static int by_kind_then_time(const void *a, const void *b)
{
    const xpv_top_op *x = a, *y = b;
    if (x->kind != y->kind) return x->kind - y->kind;
    if (x->ps != y->ps) return x->ps > y->ps ? -1 : 1;
    return strcmp(x->name, y->name);
}

/* Every summed name of both kinds, sorted; the caller frees the array
 * (the names point into the sums). */
static xpv_top_op *sorted_names(name_sums k[2], size_t *n)
{
    xpv_top_op *v = xpv_xmalloc((k[0].names.nstrs + k[1].names.nstrs + 1) * sizeof *v);
    *n = 0;
    for (int kind = 0; kind < 2; kind++)
        for (size_t i = k[kind].empty_name ? 0 : 1; i < k[kind].names.nstrs; i++)
            v[(*n)++] = (xpv_top_op){kind, xpv_intern_get(&k[kind].names, (uint32_t)i, NULL),
                                     k[kind].ps[i]};
    xpv_sort(v, *n, sizeof *v, by_kind_then_time);
    return v;
}

static void keep(xpv_top_ops *out, const xpv_top_op *v, size_t n)
{
    for (size_t i = 0; i < n && out->n < XPV_TOP_OPS_MAX; i++) {
        out->v[out->n] = v[i];
        out->v[out->n++].name = xpv_xstrdup(v[i].name);
    }
}

/* ---- scan ---- */

static int scan(sqlite3 *db, const xpv_tool_scope *s, size_t want, xpv_top_ops *out, xpv_err *err)
{
    xpv_store_cursor c;
    if (xpv_store_kernel_stats_open_times(&c, db, s->ids, s->n, err) != 0) return -1;
    name_sums k[2];
    sums_init(&k[0], 0);
    sums_init(&k[1], 0);
    xpv_store_kernel_time r;
    int rc, bad = 0;
    while (!bad && (rc = xpv_store_kernel_stats_times_next(&c, &r, err)) == 1) {
        int kind = r.xla_op;
        bad = sums_add(&k[kind], r.name.s ? r.name.s : "", r.name.n, r.total_ps, -1) ||
              __builtin_add_overflow(out->total[kind], r.total_ps, &out->total[kind]);
    }
    xpv_store_cursor_close(&c);
    if (bad) rc = xpv_err_set(err, "index: integer overflow summing op times");
    size_t n;
    xpv_top_op *v = sorted_names(k, &n);
    if (rc == 0) keep(out, v, n < want ? n : want);
    free(v);
    sums_free(&k[0]);
    sums_free(&k[1]);
    return rc;
}

/* ---- ranked ---- */

typedef struct {
    int64_t id;
    int64_t names[2];           /* the kind's names on this host */
    int64_t ranked[2], last[2]; /* its ranked names, and the last one's time */
} host_rank;

static int by_id(const void *a, const void *b)
{
    const host_rank *x = a, *y = b;
    return x->id < y->id ? -1 : x->id > y->id;
}

/* The hosts' totals and name counts; 0 when a host has kernel rows but no
 * totals (then only a scan answers). */
static int load_hosts(sqlite3 *db, const xpv_tool_scope *s, host_rank *h, int64_t total[2])
{
    xpv_store_cursor c;
    if (xpv_store_kernel_stats_open_totals(&c, db, s->ids, s->n, NULL) != 0) return 0;
    xpv_store_kernel_totals r;
    size_t n = 0;
    int ok = 1;
    while (ok && n < s->n && xpv_store_kernel_stats_totals_next(&c, &r, NULL) == 1) {
        ok = !r.unranked;
        h[n] = (host_rank){r.profile_id, {0, 0}, {0, 0}, {0, 0}};
        for (int kind = 0; kind < 2; kind++) {
            h[n].names[kind] = r.names[kind];
            ok = ok && !__builtin_add_overflow(total[kind], r.total_ps[kind], &total[kind]);
        }
        n++;
    }
    xpv_store_cursor_close(&c);
    xpv_sort(h, n, sizeof *h, by_id);
    return ok ? (int)n : 0;
}

static host_rank *host_of(host_rank *h, size_t n, int64_t id)
{
    host_rank key = {.id = id};
    return xpv_sorted_find(&key, h, n, sizeof *h, by_id);
}

/* Sums the ranked rows per name; records each host's ranked names and the
 * time of its last one. Returns 0, or -1 (not usable). */
static int read_ranked(sqlite3 *db, const xpv_tool_scope *s, host_rank *h, size_t nh,
                       name_sums k[2])
{
    xpv_store_cursor c;
    if (xpv_store_kernel_stats_open_ranked(&c, db, s->ids, s->n, NULL) != 0) return -1;
    xpv_store_kernel_time r;
    int rc = 0, step;
    while (rc == 0 && (step = xpv_store_kernel_stats_times_next(&c, &r, NULL)) == 1) {
        host_rank *hr = host_of(h, nh, r.profile_id);
        int kind = r.xla_op;
        if (!hr || !r.name.s) {
            rc = -1;
            break;
        }
        /* Rows of one name share its rank: the last name's time is theirs summed. */
        if (r.rank != hr->ranked[kind]) hr->last[kind] = 0;
        hr->ranked[kind] = r.rank;
        if (__builtin_add_overflow(hr->last[kind], r.total_ps, &hr->last[kind]) ||
            sums_add(&k[kind], r.name.s, r.name.n, r.total_ps, hr - h))
            rc = -1;
    }
    if (rc == 0 && step != 0) rc = -1;
    xpv_store_cursor_close(&c);
    return rc;
}

/* The most a name ranked on no host can have: over the hosts with names
 * beyond their ranked ones, the time of their last ranked name; -1 when
 * there is no such host (every name of the kind is ranked somewhere). */
static int64_t bound(const host_rank *h, size_t nh, int kind)
{
    int64_t t = -1;
    for (size_t i = 0; i < nh; i++)
        if (h[i].names[kind] > h[i].ranked[kind]) {
            if (t < 0) t = 0;
            if (__builtin_add_overflow(t, h[i].last[kind], &t)) return INT64_MAX;
        }
    return t;
}

/* A ranked name: its sum over the hosts where it is ranked, and the most
 * it can have (that plus the last ranked time of each host that may hold
 * it unranked). */
typedef struct {
    xpv_top_op op;
    uint32_t id;
    int64_t most;
} cand;

static int by_most(const void *a, const void *b)
{
    const cand *x = a, *y = b;
    if (x->most != y->most) return x->most > y->most ? -1 : 1;
    return strcmp(x->op.name, y->op.name);
}

static int is_ranked(const name_sums *k, uint32_t id, size_t host)
{
    return k->seen[id * ((k->nhosts + 7) / 8) + host / 8] & (1u << (host % 8));
}

/* Adds name c's time on the hosts that may hold it unranked; -1 past
 * MAX_LOOKUPS lookups in all, or on an error. */
static int complete(xpv_store_cursor *st, const host_rank *h, size_t nh, const name_sums *k,
                    int kind, cand *c, size_t *lookups)
{
    for (size_t i = 0; i < nh; i++) {
        if (is_ranked(k, c->id, i) || h[i].names[kind] <= h[i].ranked[kind] || h[i].last[kind] == 0)
            continue;
        if (++*lookups > MAX_LOOKUPS) return -1;
        int64_t ps;
        if (xpv_store_kernel_stats_name_time(st, h[i].id, kind, c->op.name, &ps, NULL) != 0 ||
            __builtin_add_overflow(c->op.ps, ps, &c->op.ps))
            return -1;
    }
    return 0;
}

/* Inserts c into best[0, *n) (time desc, then name), keeping `need`. */
static void place(xpv_top_op *best, size_t *n, size_t need, const xpv_top_op *c)
{
    size_t at = *n;
    while (at > 0 && by_kind_then_time(c, &best[at - 1]) < 0)
        at--;
    if (at >= need) return;
    size_t last = *n < need ? *n : need - 1;
    memmove(best + at + 1, best + at, (last - at) * sizeof *best);
    best[at] = *c;
    if (*n < need) (*n)++;
}

/* The first `need` names of one kind into out, exact: the names with the
 * most possible time first, each completed by lookups, until no other can
 * reach the need-th one. 1 done (*took set), 0 not provable, -1 error. */
static int top_of_kind(xpv_store_cursor *st, const host_rank *h, size_t nh, const name_sums *k,
                       int kind, size_t need, xpv_top_ops *out, size_t *took)
{
    int64_t t = bound(h, nh, kind);
    size_t n = 0, nbest = 0, lookups = 0;
    cand *c = xpv_xmalloc((k->names.nstrs + 1) * sizeof *c);
    xpv_top_op *best = xpv_xmalloc((need + 1) * sizeof *best);
    for (uint32_t id = k->empty_name ? 0 : 1; id < k->names.nstrs; id++) {
        c[n] = (cand){{kind, xpv_intern_get(&k->names, id, NULL), k->ps[id]}, id, k->ps[id]};
        for (size_t i = 0; i < nh; i++)
            if (!is_ranked(k, id, i) && h[i].names[kind] > h[i].ranked[kind] &&
                __builtin_add_overflow(c[n].most, h[i].last[kind], &c[n].most))
                c[n].most = INT64_MAX;
        n++;
    }
    xpv_sort(c, n, sizeof *c, by_most);
    int rc = 1;
    for (size_t i = 0; i < n && rc == 1; i++) {
        if (nbest == need && c[i].most < best[need - 1].ps) break;
        if (c[i].most != c[i].op.ps && complete(st, h, nh, k, kind, &c[i], &lookups) != 0) rc = 0;
        if (rc == 1 && need) place(best, &nbest, need, &c[i].op);
    }
    /* Names ranked nowhere have at most t: the last one kept must beat it. */
    if (rc == 1 && t >= 0 && (nbest < need || best[need - 1].ps <= t)) rc = 0;
    if (rc == 1) keep(out, best, nbest);
    *took = rc == 1 ? nbest : 0;
    free(best);
    free(c);
    return rc;
}

/* 1 answered, 0 not answerable this way (scan). */
static int ranked(sqlite3 *db, const xpv_tool_scope *s, size_t want, xpv_top_ops *out)
{
    host_rank *h = xpv_xcalloc(s->n ? s->n : 1, sizeof *h);
    int64_t total[2] = {0, 0};
    int nh = load_hosts(db, s, h, total), done = 0;
    name_sums k[2];
    sums_init(&k[0], (size_t)nh);
    sums_init(&k[1], (size_t)nh);
    xpv_store_cursor st = {db, NULL};
    if (nh > 0 && read_ranked(db, s, h, (size_t)nh, k) == 0 &&
        xpv_store_kernel_stats_open_name_time(&st, db, NULL) == 0) {
        size_t took = 0, kernels = 0;
        done = top_of_kind(&st, h, (size_t)nh, &k[0], 0, want, out, &kernels) == 1;
        if (done && kernels < want)
            done = top_of_kind(&st, h, (size_t)nh, &k[1], 1, want - kernels, out, &took) == 1;
        if (done) memcpy(out->total, total, sizeof total);
    }
    xpv_store_cursor_close(&st);
    sums_free(&k[0]);
    sums_free(&k[1]);
    free(h);
    return done;
}

int xpv_tool_top_ops(sqlite3 *db, const xpv_tool_scope *s, size_t want, xpv_top_ops *out,
                     xpv_err *err)
{
    memset(out, 0, sizeof *out);
    if (want > XPV_TOP_OPS_MAX) want = XPV_TOP_OPS_MAX;
    if (!getenv("XPV_TOP_OPS_SCAN") && ranked(db, s, want, out) == 1) return 0;
    xpv_top_ops_free(out);
    memset(out, 0, sizeof *out);
    return scan(db, s, want, out, err);
}

void xpv_top_ops_free(xpv_top_ops *o)
{
    for (size_t i = 0; i < o->n; i++)
        free((char *)o->v[i].name);
    o->n = 0;
}
