/*
 * device_rows_cache.c — built device rows shared across requests (see
 * device_rows.h). A short array of sets searched linearly (a server has a
 * handful of GPU profiles open), under one mutex. Each set carries a
 * reference count: it is freed when it is neither listed nor lent, so
 * emptying the cache never pulls a set from under a request using it.
 * One build per entry: a thread that finds its entry being built waits on
 * the condition variable rather than scanning the same events again.
 */
#include "device_rows.h"
#include "../store/profiles.h"

#include <assert.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* A set as lent: the rows first, so that a lent pointer is the holder's. */
typedef struct {
    xpv_devrows rows;
    int64_t id;
    uint64_t generation;
    size_t bytes;
    int refs;     /* lent out, the builder included */
    int listed;   /* in the cache's array */
    int building; /* rows not ready yet: wait on ready */
    int failed;   /* the build failed: the waiters build their own */
} holder;

struct xpv_devrows_cache {
    pthread_mutex_t mu;
    pthread_cond_t ready;
    size_t max_bytes, bytes, builds;
    holder **e; /* under mu */
    size_t n, cap;
};

xpv_devrows_cache *xpv_devrows_cache_new(size_t max_bytes)
{
    xpv_devrows_cache *c = xpv_xcalloc(1, sizeof *c);
    pthread_mutex_init(&c->mu, NULL);
    pthread_cond_init(&c->ready, NULL);
    c->max_bytes = max_bytes;
    return c;
}

static void free_holder(holder *h)
{
    xpv_devrows_free(&h->rows);
    free(h);
}

/* Unlists entry i (under mu), freeing it when nobody holds it. */
static void unlist(xpv_devrows_cache *c, size_t i)
{
    holder *h = c->e[i];
    c->e[i] = c->e[--c->n];
    c->bytes -= h->bytes;
    h->listed = 0;
    if (!h->refs) free_holder(h);
}

void xpv_devrows_cache_free(xpv_devrows_cache *c)
{
    if (!c) return;
    while (c->n)
        unlist(c, c->n - 1);
    free(c->e);
    pthread_cond_destroy(&c->ready);
    pthread_mutex_destroy(&c->mu);
    free(c);
}

static size_t rows_bytes(const xpv_devrows *r)
{
    size_t b = sizeof *r + r->nrows * sizeof *r->rows + r->names_cap * 2 * sizeof(size_t);
    for (size_t i = 0; i < r->nrows; i++)
        b += r->rows[i].n * sizeof *r->rows[i].spans;
    for (size_t i = 0; i < r->nnames; i++)
        b += r->name_len[i] + 1;
    return b;
}

/* Builds a set lent to the caller alone (refs 1, not listed). */
static holder *build_own(sqlite3 *db, int64_t id, xpv_err *err)
{
    holder *h = xpv_xcalloc(1, sizeof *h);
    h->refs = 1;
    if (xpv_devrows_build(db, id, &h->rows, err) == 0) return h;
    free_holder(h);
    return NULL;
}

/* The listed entry for (id, gen), waited for while it is being built;
 * NULL when there is none or its build failed. Under mu; lends it. */
static holder *find_ready(xpv_devrows_cache *c, int64_t id, uint64_t gen)
{
    for (size_t i = 0; i < c->n; i++) {
        holder *h = c->e[i];
        if (h->id != id || h->generation != gen) continue;
        h->refs++;
        while (h->building)
            pthread_cond_wait(&c->ready, &c->mu);
        if (!h->failed) return h;
        if (!--h->refs && !h->listed) free_holder(h);
        return NULL;
    }
    return NULL;
}

/* Lists h, emptying the cache first when it would go past its budget; a
 * set over the budget on its own is not kept. Under mu. */
static void list_built(xpv_devrows_cache *c, holder *h)
{
    size_t at;
    for (at = 0; at < c->n && c->e[at] != h; at++)
        ;
    assert(at < c->n);
    c->e[at] = c->e[--c->n];
    h->listed = 0;
    if (h->failed || h->bytes > c->max_bytes) return;
    if (c->bytes + h->bytes > c->max_bytes)
        while (c->n)
            unlist(c, c->n - 1);
    c->e[c->n++] = h;
    h->listed = 1;
    c->bytes += h->bytes;
}

const xpv_devrows *xpv_devrows_acquire(sqlite3 *db, int64_t id, xpv_devrows_cache *c, xpv_err *err)
{
    uint64_t gen = 0;
    int keyed = c ? xpv_store_profiles_generation(db, id, &gen, err) : 0;
    if (keyed < 0) return NULL;
    if (!keyed) {
        holder *h = build_own(db, id, err);
        return h ? &h->rows : NULL;
    }
    pthread_mutex_lock(&c->mu);
    holder *h = find_ready(c, id, gen);
    if (h) {
        pthread_mutex_unlock(&c->mu);
        return &h->rows;
    }
    h = xpv_xcalloc(1, sizeof *h);
    *h = (holder){.id = id, .generation = gen, .refs = 1, .listed = 1, .building = 1};
    c->e = xpv_grow_to_index(c->e, &c->cap, c->n, sizeof *c->e, 0);
    c->e[c->n++] = h; /* listed at once, with no bytes, so that others wait */
    c->builds++;
    pthread_mutex_unlock(&c->mu);

    int rc = xpv_devrows_build(db, id, &h->rows, err);
    pthread_mutex_lock(&c->mu);
    h->building = 0;
    h->failed = rc != 0;
    h->bytes = rc == 0 ? rows_bytes(&h->rows) : 0;
    list_built(c, h);
    pthread_cond_broadcast(&c->ready);
    if (h->failed) {
        h->refs--;
        if (!h->refs) free_holder(h);
        h = NULL;
    }
    pthread_mutex_unlock(&c->mu);
    return h ? &h->rows : NULL;
}

void xpv_devrows_release(xpv_devrows_cache *c, const xpv_devrows *r)
{
    if (!r) return;
    holder *h = (holder *)(void *)r; /* the rows are the holder's first member */
    if (c) pthread_mutex_lock(&c->mu);
    int last = --h->refs == 0 && !h->listed;
    if (c) pthread_mutex_unlock(&c->mu);
    if (last) free_holder(h);
}

static int warm_list(sqlite3 *db, xpv_devrows_cache *c, const int64_t *ids, size_t n,
                     volatile int *stop, xpv_err *err)
{
    for (size_t i = 0; i < n && !*stop && xpv_devrows_cache_bytes(c) < c->max_bytes / 2; i++) {
        const xpv_devrows *r = xpv_devrows_acquire(db, ids[i], c, err);
        if (!r) return -1;
        xpv_devrows_release(c, r);
    }
    return 0;
}

int xpv_devrows_warm(sqlite3 *db, xpv_devrows_cache *c, const int64_t *ids, size_t n,
                     int latest_run, volatile int *stop, xpv_err *err)
{
    if (warm_list(db, c, ids, n, stop, err) != 0) return -1;
    if (!latest_run) return 0;
    int64_t *run;
    size_t nrun;
    if (xpv_store_profiles_newest_run(db, &run, &nrun, err) != 0) return -1;
    int rc = warm_list(db, c, run, nrun, stop, err);
    free(run);
    return rc;
}

size_t xpv_devrows_cache_builds(xpv_devrows_cache *c)
{
    pthread_mutex_lock(&c->mu);
    size_t n = c->builds;
    pthread_mutex_unlock(&c->mu);
    return n;
}

size_t xpv_devrows_cache_bytes(xpv_devrows_cache *c)
{
    pthread_mutex_lock(&c->mu);
    size_t n = c->bytes;
    pthread_mutex_unlock(&c->mu);
    return n;
}
