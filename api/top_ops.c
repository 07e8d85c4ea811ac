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
#include "../store/index_db.h"
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
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db,
                           "SELECT kind='xla_op', name, total_ps FROM kernel_stats WHERE"
                           " profile_id IN (SELECT value FROM json_each(?1)) AND kind IN"
                           " ('kernel', 'xla_op') AND device=-1",
                           -1, &st, NULL) != SQLITE_OK)
        return xpv_err_set(err, "index: %s", sqlite3_errmsg(db));
    xpv_tool_bind_ids(st, 1, s);
    name_sums k[2];
    sums_init(&k[0], 0);
    sums_init(&k[1], 0);
    int rc, bad = 0;
    while (!bad && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        int kind = sqlite3_column_int(st, 0);
        const char *name = (const char *)sqlite3_column_text(st, 1);
        size_t len = name ? (size_t)sqlite3_column_bytes(st, 1) : 0;
        int64_t ps = sqlite3_column_int64(st, 2);
        bad = sums_add(&k[kind], name ? name : "", len, ps, -1) ||
              __builtin_add_overflow(out->total[kind], ps, &out->total[kind]);
    }
    if (bad) {
        sqlite3_finalize(st);
        rc = xpv_err_set(err, "index: integer overflow summing op times");
    } else {
        rc = xpv_tool_step_end(db, st, rc, err);
    }
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
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(
            db,
            "SELECT id, kernel_totals IS NULL AND EXISTS(SELECT 1 FROM kernel_stats k WHERE"
            " k.profile_id=p.id), ifnull(json_extract(kernel_totals, '$.kernel[0]'), 0),"
            " ifnull(json_extract(kernel_totals, '$.kernel[1]'), 0),"
            " ifnull(json_extract(kernel_totals, '$.xla_op[0]'), 0),"
            " ifnull(json_extract(kernel_totals, '$.xla_op[1]'), 0) FROM profiles p WHERE id IN"
            " (SELECT value FROM json_each(?1))",
            -1, &st, NULL) != SQLITE_OK)
        return 0;
    xpv_tool_bind_ids(st, 1, s);
    size_t n = 0;
    int ok = 1;
    while (ok && n < s->n && sqlite3_step(st) == SQLITE_ROW) {
        ok = !sqlite3_column_int(st, 1);
        h[n] = (host_rank){sqlite3_column_int64(st, 0), {0, 0}, {0, 0}, {0, 0}};
        for (int kind = 0; kind < 2; kind++) {
            h[n].names[kind] = sqlite3_column_int64(st, 3 + 2 * kind);
            ok = ok && !__builtin_add_overflow(total[kind], sqlite3_column_int64(st, 2 + 2 * kind),
                                               &total[kind]);
        }
        n++;
    }
    sqlite3_finalize(st);
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
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db,
                           "SELECT profile_id, kind='xla_op', top_rank, name, total_ps FROM"
                           " kernel_stats INDEXED BY kernel_stats_top WHERE profile_id IN"
                           " (SELECT value FROM json_each(?1)) AND kind IN ('kernel', 'xla_op')"
                           " AND top_rank IS NOT NULL ORDER BY profile_id, kind, top_rank",
                           -1, &st, NULL) != SQLITE_OK)
        return -1;
    xpv_tool_bind_ids(st, 1, s);
    int rc = 0, step;
    while (rc == 0 && (step = sqlite3_step(st)) == SQLITE_ROW) {
        host_rank *hr = host_of(h, nh, sqlite3_column_int64(st, 0));
        int kind = sqlite3_column_int(st, 1);
        int64_t rank = sqlite3_column_int64(st, 2), ps = sqlite3_column_int64(st, 4);
        const char *name = (const char *)sqlite3_column_text(st, 3);
        if (!hr || !name) {
            rc = -1;
            break;
        }
        /* Rows of one name share its rank: the last name's time is theirs summed. */
        if (rank != hr->ranked[kind]) hr->last[kind] = 0;
        hr->ranked[kind] = rank;
        if (__builtin_add_overflow(hr->last[kind], ps, &hr->last[kind]) ||
            sums_add(&k[kind], name, (size_t)sqlite3_column_bytes(st, 3), ps, hr - h))
            rc = -1;
    }
    if (rc == 0 && step != SQLITE_DONE) rc = -1;
    sqlite3_finalize(st);
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
static int complete(sqlite3_stmt *st, const host_rank *h, size_t nh, const name_sums *k, int kind,
                    cand *c, size_t *lookups)
{
    for (size_t i = 0; i < nh; i++) {
        if (is_ranked(k, c->id, i) || h[i].names[kind] <= h[i].ranked[kind] || h[i].last[kind] == 0)
            continue;
        if (++*lookups > MAX_LOOKUPS) return -1;
        sqlite3_bind_int64(st, 1, h[i].id);
        sqlite3_bind_text(st, 2, kind ? "xla_op" : "kernel", -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 3, c->op.name, -1, SQLITE_STATIC);
        int bad = sqlite3_step(st) != SQLITE_ROW ||
                  __builtin_add_overflow(c->op.ps, sqlite3_column_int64(st, 0), &c->op.ps);
        sqlite3_reset(st);
        if (bad) return -1;
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
static int top_of_kind(sqlite3_stmt *st, const host_rank *h, size_t nh, const name_sums *k,
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
    sqlite3_stmt *st = NULL;
    if (nh > 0 && read_ranked(db, s, h, (size_t)nh, k) == 0 &&
        sqlite3_prepare_v2(db,
                           "SELECT ifnull(sum(total_ps), 0) FROM kernel_stats WHERE profile_id=?1"
                           " AND kind=?2 AND device=-1 AND name=?3",
                           -1, &st, NULL) == SQLITE_OK) {
        size_t took = 0, kernels = 0;
        done = top_of_kind(st, h, (size_t)nh, &k[0], 0, want, out, &kernels) == 1;
        if (done && kernels < want)
            done = top_of_kind(st, h, (size_t)nh, &k[1], 1, want - kernels, out, &took) == 1;
        if (done) memcpy(out->total, total, sizeof total);
    }
    sqlite3_finalize(st);
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
