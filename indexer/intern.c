/*
 * intern.c — growing the string table of intern.h: its arena, its id array
 * and its hash index.
 *
 * Invariants (see intern.h): ids dense from 1, id 0 is "". Growth doubles,
 * so adding n strings costs O(n) amortised; the index keeps each string's
 * hash, so its growth never hashes a string again.
 */
#include "intern.h"

#include <stdlib.h>

void xpv_intern_init(xpv_intern *t)
{
    memset(t, 0, sizeof *t);
    xpv_hindex_reserve(&t->index, 1 << 11);
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
    xpv_hindex_free(&t->index);
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

uint32_t xpv_intern_add(xpv_intern *t, const char *s, size_t len, const xpv_hprobe *p)
{
    reserve(t, len);
    uint32_t id = (uint32_t)t->nstrs++;
    t->strs[id] = (xpv_intern_ref){t->arena_len, (uint32_t)len};
    memcpy(t->arena + t->arena_len, s, len);
    t->arena[t->arena_len + len] = 0;
    t->arena_len += len + 1;
    xpv_hindex_insert_at(&t->index, p, id);
    return id;
}
