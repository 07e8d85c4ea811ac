/*
 * hlo_cache.c — see hlo_cache.h. A short array searched linearly (a run
 * has a handful of hosts), under one mutex; emptied whole when a new value
 * would take it past its budget, as block_marks.c does.
 */
#include "hlo_cache.h"
#include "../../common/xpv_common.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    xpv_hlo_cache_key key;
    void *value;
    size_t bytes;
} entry;

struct xpv_hlo_cache {
    pthread_mutex_t mu;
    void (*free_value)(void *);
    size_t max_bytes, bytes;
    entry *e; /* under mu */
    size_t n, cap;
};

xpv_hlo_cache *xpv_hlo_cache_new(size_t max_bytes, void (*free_value)(void *value))
{
    xpv_hlo_cache *c = xpv_xcalloc(1, sizeof *c);
    pthread_mutex_init(&c->mu, NULL);
    c->free_value = free_value;
    c->max_bytes = max_bytes;
    return c;
}

static void empty(xpv_hlo_cache *c)
{
    for (size_t i = 0; i < c->n; i++)
        c->free_value(c->e[i].value);
    c->n = 0;
    c->bytes = 0;
}

void xpv_hlo_cache_free(xpv_hlo_cache *c)
{
    if (!c) return;
    empty(c);
    free(c->e);
    pthread_mutex_destroy(&c->mu);
    free(c);
}

static entry *find(xpv_hlo_cache *c, const xpv_hlo_cache_key *k)
{
    for (size_t i = 0; i < c->n; i++)
        if (c->e[i].key.profile_id == k->profile_id && c->e[i].key.generation == k->generation)
            return &c->e[i];
    return NULL;
}

int xpv_hlo_cache_use(xpv_hlo_cache *c, const xpv_hlo_cache_key *k,
                      void (*use)(void *ctx, const void *value), void *ctx)
{
    pthread_mutex_lock(&c->mu);
    entry *e = find(c, k);
    if (e) use(ctx, e->value);
    pthread_mutex_unlock(&c->mu);
    return e != NULL;
}

void xpv_hlo_cache_put(xpv_hlo_cache *c, const xpv_hlo_cache_key *k, void *value, size_t bytes)
{
    if (bytes > c->max_bytes) {
        c->free_value(value);
        return;
    }
    pthread_mutex_lock(&c->mu);
    entry *e = find(c, k);
    if (e) { /* computed twice at once: keep the first, the same numbers */
        pthread_mutex_unlock(&c->mu);
        c->free_value(value);
        return;
    }
    if (c->bytes + bytes > c->max_bytes) empty(c);
    if (c->n == c->cap) {
        c->cap = c->cap ? c->cap * 2 : 8;
        c->e = xpv_xrealloc(c->e, c->cap * sizeof *c->e);
    }
    c->e[c->n++] = (entry){*k, value, bytes};
    c->bytes += bytes;
    pthread_mutex_unlock(&c->mu);
}

size_t xpv_hlo_cache_bytes(xpv_hlo_cache *c)
{
    pthread_mutex_lock(&c->mu);
    size_t b = c->bytes;
    pthread_mutex_unlock(&c->mu);
    return b;
}

size_t xpv_hlo_cache_entries(xpv_hlo_cache *c)
{
    pthread_mutex_lock(&c->mu);
    size_t n = c->n;
    pthread_mutex_unlock(&c->mu);
    return n;
}

size_t xpv_hlo_cache_budget(const xpv_hlo_cache *c)
{
    return c->max_bytes; /* set once, at creation */
}
