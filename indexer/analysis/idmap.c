/*
 * idmap.c — an open-addressing hash map from uint64 keys to uint64 values,
 * used for group keys, correlation ids and name ids. The key UINT64_MAX
 * marks an empty slot and is never stored. Load factor stays below 1/2.
 */
#include "analysis_internal.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

static size_t slot_of(uint64_t key, size_t cap)
{
    uint64_t h = key * 0x9E3779B97F4A7C15ULL;
    return (size_t)(h ^ (h >> 29)) & (cap - 1);
}

void xpv_idmap_init(xpv_idmap *m)
{
    memset(m, 0, sizeof *m);
}

void xpv_idmap_free(xpv_idmap *m)
{
    free(m->keys);
    free(m->vals);
    memset(m, 0, sizeof *m);
}

uint64_t *xpv_idmap_get(const xpv_idmap *m, uint64_t key)
{
    if (!m->cap) return NULL;
    for (size_t i = slot_of(key, m->cap);; i = (i + 1) & (m->cap - 1)) {
        if (m->keys[i] == key) return &m->vals[i];
        if (m->keys[i] == XPV_IDMAP_EMPTY) return NULL;
    }
}

static void grow(xpv_idmap *m)
{
    size_t cap = m->cap ? m->cap * 2 : 64;
    uint64_t *keys = xpv_xmalloc(cap * sizeof *keys), *vals = xpv_xmalloc(cap * sizeof *vals);
    memset(keys, 0xFF, cap * sizeof *keys);
    for (size_t i = 0; i < m->cap; i++) {
        if (m->keys[i] == XPV_IDMAP_EMPTY) continue;
        size_t j = slot_of(m->keys[i], cap);
        while (keys[j] != XPV_IDMAP_EMPTY)
            j = (j + 1) & (cap - 1);
        keys[j] = m->keys[i];
        vals[j] = m->vals[i];
    }
    free(m->keys);
    free(m->vals);
    m->keys = keys;
    m->vals = vals;
    m->cap = cap;
}

uint64_t *xpv_idmap_put(xpv_idmap *m, uint64_t key, uint64_t init)
{
    assert(key != XPV_IDMAP_EMPTY);
    if ((m->n + 1) * 2 > m->cap) grow(m);
    size_t i = slot_of(key, m->cap);
    for (; m->keys[i] != XPV_IDMAP_EMPTY; i = (i + 1) & (m->cap - 1))
        if (m->keys[i] == key) return &m->vals[i];
    m->keys[i] = key;
    m->vals[i] = init;
    m->n++;
    return &m->vals[i];
}
