/*
 * hlo_cache.h — one profile's HLO ops as hlo_ops.c collected them, kept so
 * that op_profile, hlo_stats and roofline_model scan a profile's event store
 * once, not once per tool and request.
 *
 * The cache belongs to whoever creates it (the server keeps one and passes
 * it to the tools in their scope); it is safe to use from several threads.
 * An entry is keyed by the profile id and a generation that hlo_ops.c
 * derives from the profile's row (status, event count, file mtime, time of
 * indexing), so a profile indexed again never matches its old entry: the
 * server's connections are one per thread, and SQLite's data_version can
 * only be compared on one connection. Values are opaque here: the cache
 * holds them, hands them to a callback under its lock, and frees them with
 * the function it was made with. When it outgrows its budget it is emptied
 * and refilled on demand.
 */
#ifndef XPV_HLO_CACHE_H
#define XPV_HLO_CACHE_H

#include <stddef.h>
#include <stdint.h>

typedef struct xpv_hlo_cache xpv_hlo_cache;

typedef struct {
    int64_t profile_id;
    uint64_t generation;
} xpv_hlo_cache_key;

xpv_hlo_cache *xpv_hlo_cache_new(size_t max_bytes, void (*free_value)(void *value));
/* The cache xpv_hlo_ops_collect uses (its values are hlo_ops.c's), of at
 * most max_bytes: what a caller makes to put in a tool scope's hlo_cache. */
xpv_hlo_cache *xpv_hlo_ops_cache_new(size_t max_bytes);
void xpv_hlo_cache_free(xpv_hlo_cache *c);

/* When k is cached, calls use(ctx, value) under the cache's lock (the value
 * stays the cache's) and returns 1; returns 0 when it is not. */
int xpv_hlo_cache_use(xpv_hlo_cache *c, const xpv_hlo_cache_key *k,
                      void (*use)(void *ctx, const void *value), void *ctx);

/* Keeps value under k (bytes: what it holds), replacing an entry with the
 * same key; value becomes the cache's, freed at once if it alone is over
 * the budget. */
void xpv_hlo_cache_put(xpv_hlo_cache *c, const xpv_hlo_cache_key *k, void *value, size_t bytes);

/* Bytes held and entries, for health and tests. */
size_t xpv_hlo_cache_bytes(xpv_hlo_cache *c);
size_t xpv_hlo_cache_entries(xpv_hlo_cache *c);
/* The budget it was made with. */
size_t xpv_hlo_cache_budget(const xpv_hlo_cache *c);

#endif
