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
    assert(cap && (cap & (cap - 1)) == 0); /* the mask below is a modulo */
    uint64_t h = key * 0x9E3779B97F4A7C15ULL;
    return (size_t)(h ^ (h >> 29)) & (cap - 1);
}

void xpv_idmap_init(xpv_idmap *m)
{
    memset(m, 0, sizeof *m);
}

void xpv_idmap_free(xpv_idmap *m)
{
    free(m->slots);
    memset(m, 0, sizeof *m);
}

uint64_t *xpv_idmap_get(const xpv_idmap *m, uint64_t key)
{
    if (!m->cap) return NULL;
    for (size_t i = slot_of(key, m->cap);; i = (i + 1) & (m->cap - 1)) {
        if (m->slots[i].key == key) return &m->slots[i].val;
        if (m->slots[i].key == XPV_IDMAP_EMPTY) return NULL;
    }
}

static void grow(xpv_idmap *m)
{
    size_t cap = m->cap ? m->cap * 2 : 64;
    xpv_idmap_slot *slots = xpv_xmalloc(cap * sizeof *slots);
    for (size_t i = 0; i < cap; i++)
        slots[i].key = XPV_IDMAP_EMPTY;
    for (size_t i = 0; i < m->cap; i++) {
        if (m->slots[i].key == XPV_IDMAP_EMPTY) continue;
        size_t j = slot_of(m->slots[i].key, cap);
        while (slots[j].key != XPV_IDMAP_EMPTY)
            j = (j + 1) & (cap - 1);
        slots[j] = m->slots[i];
    }
    free(m->slots);
    m->slots = slots;
    m->cap = cap;
}

uint64_t *xpv_idmap_put(xpv_idmap *m, uint64_t key, uint64_t init)
{
    assert(key != XPV_IDMAP_EMPTY);
    if ((m->n + 1) * 2 > m->cap) grow(m);
    assert((m->n + 1) * 2 <= m->cap); /* the load stays at most 1/2: probes end */
    size_t i = slot_of(key, m->cap);
    for (; m->slots[i].key != XPV_IDMAP_EMPTY; i = (i + 1) & (m->cap - 1))
        if (m->slots[i].key == key) return &m->slots[i].val;
    m->slots[i] = (xpv_idmap_slot){key, init};
    m->n++;
    assert(xpv_idmap_get(m, key) == &m->slots[i].val);
    return &m->slots[i].val;
}
