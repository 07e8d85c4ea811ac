/*
 * intern.c — growing the string table of intern.h: its arena, its id array
 * and its hash slots.
 *
 * Invariants (see intern.h): ids dense from 1, id 0 is "", the slots at
 * most half full after every add. Growth doubles, so adding n strings
 * costs O(n) amortised; a rehash walks the ids in order and never looks at
 * the old slots.
 */
#include "intern.h"

#include <stdlib.h>

void xpv_intern_init(xpv_intern *t)
{
    memset(t, 0, sizeof *t);
    t->nslots = 1 << 12;
    t->slots = xpv_xcalloc(t->nslots, sizeof *t->slots);
    t->cap_strs = 1024;
    t->strs = xpv_xmalloc(t->cap_strs * sizeof *t->strs);
    t->strs[0] = (xpv_intern_ref){0, 0};
    t->nstrs = 1;
    t->arena_cap = 1 << 16;
    t->arena = xpv_xmalloc(t->arena_cap);
    t->arena[0] = 0;
    t->arena_len = 1;
}

void xpv_intern_free(xpv_intern *t)
{
    free(t->arena);
    free(t->strs);
    free(t->slots);
}

static void rehash(xpv_intern *t)
{
    size_t n = t->nslots * 2;
    uint32_t *slots = xpv_xcalloc(n, sizeof *slots);
    for (size_t id = 1; id < t->nstrs; id++) {
        xpv_intern_ref r = t->strs[id];
        size_t h = xpv_hash64(t->arena + r.off, r.len) & (n - 1);
        while (slots[h])
            h = (h + 1) & (n - 1);
        slots[h] = (uint32_t)id + 1;
    }
    free(t->slots);
    t->slots = slots;
    t->nslots = n;
}

static void reserve(xpv_intern *t, size_t len)
{
    if (t->arena_len + len + 1 > t->arena_cap) {
        while (t->arena_len + len + 1 > t->arena_cap)
            t->arena_cap *= 2;
        t->arena = xpv_xrealloc(t->arena, t->arena_cap);
    }
    if (t->nstrs == t->cap_strs) {
        t->cap_strs *= 2;
        t->strs = xpv_xrealloc(t->strs, t->cap_strs * sizeof *t->strs);
    }
}

uint32_t xpv_intern_add(xpv_intern *t, const char *s, size_t len, size_t slot)
{
    reserve(t, len);
    uint32_t id = (uint32_t)t->nstrs++;
    t->strs[id] = (xpv_intern_ref){t->arena_len, (uint32_t)len};
    memcpy(t->arena + t->arena_len, s, len);
    t->arena[t->arena_len + len] = 0;
    t->arena_len += len + 1;
    t->slots[slot] = id + 1;
    if (t->nstrs * 2 > t->nslots) rehash(t);
    return id;
}
