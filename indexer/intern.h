/*
 * intern.h — the string table of one profile: each distinct byte string
 * gets a small id, which events carry instead of the string and which the
 * `strings` table maps back.
 *
 * Invariants: ids are dense, 0, 1, 2, ... in order of first interning, and
 * never change; id 0 is "" (the empty string is never added); equal bytes
 * always get the same id. Every string is stored once, NUL-terminated, in
 * one arena, so a looked-up pointer stays valid until the next add. The
 * ids are found through an xpv_hindex keyed by each string's hash. One
 * thread at a time.
 *
 * The lookup is inline: readers intern several strings per event, and a
 * hit must cost no call; adding a string (rarer) is in intern.c.
 */
#ifndef XPV_INTERN_H
#define XPV_INTERN_H

#include "../common/xpv_common.h"
#include "../common/xpv_hindex.h"

#include <string.h>

typedef struct {
    uint64_t off; /* in the arena */
    uint32_t len;
} xpv_intern_ref;

typedef struct {
    char *arena;
    size_t arena_len, arena_cap;
    xpv_intern_ref *strs; /* by id */
    size_t nstrs, cap_strs;
    xpv_hindex index; /* hash of the bytes -> id */
} xpv_intern;

void xpv_intern_init(xpv_intern *t);
void xpv_intern_free(xpv_intern *t);
/* Adds s, absent from the table, where its probe p ended; returns its new
 * id. */
uint32_t xpv_intern_add(xpv_intern *t, const char *s, size_t len, const xpv_hprobe *p);

/* The id of s, adding it unless `may_add` is false (then 0 when absent). */
static inline uint32_t xpv_intern_lookup(xpv_intern *t, const char *s, size_t len, int may_add)
{
    if (len == 0) return 0;
    xpv_hprobe p = xpv_hindex_probe(&t->index, xpv_hash_mem(s, len));
    for (uint64_t id; xpv_hindex_next(&t->index, &p, &id);) {
        xpv_intern_ref r = t->strs[id];
        if (r.len == len && memcmp(t->arena + r.off, s, len) == 0) return (uint32_t)id;
    }
    return may_add ? xpv_intern_add(t, s, len, &p) : 0;
}

/* The string of id (NUL-terminated, *len bytes when len is not NULL);
 * an unknown id reads as "". */
static inline const char *xpv_intern_get(const xpv_intern *t, uint32_t id, size_t *len)
{
    if (id >= t->nstrs) id = 0;
    xpv_intern_ref r = t->strs[id];
    if (len) *len = r.len;
    return t->arena + r.off;
}

/* How many ids there are (the empty string's included). */
static inline size_t xpv_intern_count(const xpv_intern *t)
{
    return t->nstrs;
}

/* Bytes held in the arena: what a memory budget is checked against. */
static inline size_t xpv_intern_bytes(const xpv_intern *t)
{
    return t->arena_len;
}

#endif
