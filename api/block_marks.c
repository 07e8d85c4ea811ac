/*
 * block_marks.c — see block_marks.h. Entries sit in one array with an
 * xpv_hindex from block id to their place, under one mutex; lookups copy
 * the one mark they need out, so an entry may be freed as soon as the lock
 * is released.
 */
#include "block_marks.h"
#include "../common/xpv_hindex.h"
#include "../common/xpv_lower_bound.h"
#include "../store/profiles.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    xpv_block_key key;
    int sorted;
    uint32_t nmarks;
    xpv_store_mark *marks;
} entry;

struct xpv_block_marks {
    pthread_mutex_t mu;
    entry *v;
    size_t n, cap, bytes, max_bytes;
    xpv_hindex by_block; /* block id -> index in v */
};

xpv_block_marks *xpv_block_marks_new(size_t max_bytes)
{
    xpv_block_marks *m = xpv_xcalloc(1, sizeof *m);
    pthread_mutex_init(&m->mu, NULL);
    m->max_bytes = max_bytes;
    return m;
}

static void clear(xpv_block_marks *m)
{
    for (size_t i = 0; i < m->n; i++)
        free(m->v[i].marks);
    m->n = m->bytes = 0;
    xpv_hindex_clear(&m->by_block);
}

void xpv_block_marks_free(xpv_block_marks *m)
{
    if (!m) return;
    clear(m);
    free(m->v);
    xpv_hindex_free(&m->by_block);
    pthread_mutex_destroy(&m->mu);
    free(m);
}

static entry *lookup(xpv_block_marks *m, int64_t id)
{
    uint64_t *i = xpv_hindex_get(&m->by_block, (uint64_t)id);
    return i ? &m->v[*i] : NULL;
}

int xpv_block_marks_find(xpv_block_marks *m, const xpv_block_key *k, int64_t t,
                         xpv_store_mark *mark)
{
    int rc = XPV_MARKS_MISSING;
    pthread_mutex_lock(&m->mu);
    entry *e = lookup(m, k->block_id);
    if (e && memcmp(&e->key, k, sizeof *k) == 0) {
        rc = e->sorted ? XPV_MARKS_FOUND : XPV_MARKS_UNSORTED;
        if (e->sorted) {
            /* The last mark whose ts <= t (the first mark when none is). */
            size_t after = xpv_upper_bound_i64(e->marks, e->nmarks, sizeof *e->marks,
                                               offsetof(xpv_store_mark, ts), t);
            *mark = e->marks[after ? after - 1 : 0];
        }
    }
    pthread_mutex_unlock(&m->mu);
    return rc;
}

int xpv_block_marks_add(xpv_block_marks *m, const xpv_block_key *k, const void *data, size_t len,
                        xpv_err *err)
{
    size_t cap = (size_t)(k->n / XPV_MARK_EVERY + 1);
    xpv_store_mark *marks = xpv_xmalloc(cap * sizeof *marks);
    int sorted = 0;
    int n = xpv_store_marks(data, len, XPV_MARK_EVERY, marks, cap, &sorted, err);
    if (n <= 0) {
        free(marks);
        return n < 0 ? -1 : 0;
    }
    size_t bytes = (size_t)n * sizeof *marks + sizeof(entry);
    pthread_mutex_lock(&m->mu);
    entry *e = lookup(m, k->block_id);
    if (!e) {
        if (m->bytes + bytes > m->max_bytes) clear(m);
        m->v = xpv_grow_to_index(m->v, &m->cap, m->n, sizeof *m->v, 0);
        xpv_hindex_put(&m->by_block, (uint64_t)k->block_id, m->n);
        e = &m->v[m->n++];
    } else {
        m->bytes -= (size_t)e->nmarks * sizeof *marks + sizeof(entry);
        free(e->marks);
    }
    *e = (entry){*k, sorted, (uint32_t)n, marks};
    m->bytes += bytes;
    pthread_mutex_unlock(&m->mu);
    return 0;
}

int64_t xpv_block_marks_warm(xpv_block_marks *m, sqlite3 *db, int64_t profile_id,
                             volatile int *stop, xpv_err *err)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db,
                           "SELECT id, n, length(data), t_min, t_max FROM blocks WHERE"
                           " profile_id=?1 AND n > ?2",
                           -1, &st, NULL) != SQLITE_OK)
        return xpv_err_set(err, "index: %s", sqlite3_errmsg(db));
    sqlite3_stmt *blob;
    if (sqlite3_prepare_v2(db, "SELECT data FROM blocks WHERE id=?1", -1, &blob, NULL) !=
        SQLITE_OK) {
        xpv_err_set(err, "index: %s", sqlite3_errmsg(db));
        sqlite3_finalize(st);
        return -1;
    }
    sqlite3_bind_int64(st, 1, profile_id);
    sqlite3_bind_int(st, 2, XPV_MARK_EVERY);
    int64_t added = 0;
    while (!xpv_stop_requested(stop) && sqlite3_step(st) == SQLITE_ROW) {
        xpv_block_key k = {sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1),
                           sqlite3_column_int64(st, 2), sqlite3_column_int64(st, 3),
                           sqlite3_column_int64(st, 4)};
        xpv_store_mark mark;
        if (xpv_block_marks_find(m, &k, 0, &mark) != XPV_MARKS_MISSING) continue;
        sqlite3_bind_int64(blob, 1, k.block_id);
        /* a damaged block is skipped: a window reading it reports it */
        if (sqlite3_step(blob) == SQLITE_ROW &&
            xpv_block_marks_add(m, &k, sqlite3_column_blob(blob, 0),
                                (size_t)sqlite3_column_bytes(blob, 0), NULL) == 0)
            added++;
        sqlite3_reset(blob);
    }
    sqlite3_finalize(blob);
    sqlite3_finalize(st);
    return added;
}

void xpv_block_marks_warm_all(xpv_block_marks *m, sqlite3 *db, volatile int *stop)
{
    int64_t *ids;
    size_t n;
    /* the cache only speeds windows up: without it they are still right */
    if (xpv_store_profiles_with_events(db, &ids, &n, NULL) != 0) return;
    for (size_t i = 0; i < n && !xpv_stop_requested(stop); i++)
        xpv_block_marks_warm(m, db, ids[i], stop, NULL);
    free(ids);
}

size_t xpv_block_marks_bytes(xpv_block_marks *m)
{
    pthread_mutex_lock(&m->mu);
    size_t b = m->bytes;
    pthread_mutex_unlock(&m->mu);
    return b;
}
