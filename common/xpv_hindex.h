/*
 * xpv_hindex.h — the one hash index: open addressing with linear probing
 * over slots of a 64-bit key and a 64-bit value. It is used two ways, never
 * both in one index:
 *  - as a map from a uint64 key to a value (xpv_hindex_get/put/del): every
 *    key is allowed (key 0, which marks an empty slot, lives beside the
 *    slots);
 *  - as an index over entries the caller keeps in its own array, keyed by
 *    each entry's 64-bit hash (xpv_hindex_probe/next/insert_at): equal
 *    hashes may belong to different entries, so the caller checks each
 *    candidate the probe yields with its own equality test, inline.
 *
 * Invariants: cap is 0 or a power of two; at most half the slots are
 * filled, so every probe ends at an empty slot; an entry sits at or after
 * its home slot (key * golden ratio, top bits) with no empty slot between;
 * removal shifts the followers back instead of leaving tombstones, so the
 * invariant holds after any mix of puts and removals. A stored hash is
 * never 0 (0 is read as 1). Growth doubles and moves slots without calling
 * back into the caller. Pointers to values stay valid until the next put
 * or insert. A zeroed xpv_hindex is a valid empty one. One thread at a
 * time.
 *
 * The lookups are inline: interning, id maps and per-event group lookups
 * call them in their hot loops; growth and removal are in xpv_hindex.c.
 */
#ifndef XPV_HINDEX_H
#define XPV_HINDEX_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    uint64_t key; /* the key, or the entry's hash; 0: empty */
    uint64_t val;
} xpv_hslot;

typedef struct {
    xpv_hslot *slots;
    size_t cap;        /* 0 or a power of two */
    size_t n;          /* filled slots (key 0 not counted) */
    unsigned shift;    /* 64 - log2(cap) */
    int has_zero;      /* map use: key 0 is present, its value in zero_val */
    uint64_t zero_val; /* map use: the value of key 0 */
} xpv_hindex;

/* A probe for one hash: where it stands in the slots (index use). */
typedef struct {
    uint64_t key; /* the hash as stored */
    size_t i;     /* the next slot to look at; after the end, the empty one */
} xpv_hprobe;

void xpv_hindex_free(xpv_hindex *h);
/* Empties h, keeping its slots for reuse. */
void xpv_hindex_clear(xpv_hindex *h);
/* Sizes h so that n entries fit without growing. */
void xpv_hindex_reserve(xpv_hindex *h, size_t n);
/* Entries in h (key 0 included). */
static inline size_t xpv_hindex_count(const xpv_hindex *h)
{
    return h->n + (h->has_zero != 0);
}

static inline size_t xpv_hindex_home(const xpv_hindex *h, uint64_t key)
{
    return (size_t)((key * 0x9E3779B97F4A7C15ULL) >> h->shift);
}

/* ---- map use: uint64 key -> value ---- */

/* The value of key, or NULL when absent. */
static inline uint64_t *xpv_hindex_get(const xpv_hindex *h, uint64_t key)
{
    if (key == 0) return h->has_zero ? (uint64_t *)&h->zero_val : NULL;
    if (!h->cap) return NULL;
    for (size_t mask = h->cap - 1, i = xpv_hindex_home(h, key);; i = (i + 1) & mask) {
        if (h->slots[i].key == key) return &h->slots[i].val;
        if (h->slots[i].key == 0) return NULL;
    }
}

uint64_t *xpv_hindex_put_slow(xpv_hindex *h, uint64_t key, uint64_t init);

/* The value of key, added as `init` when absent. */
static inline uint64_t *xpv_hindex_put(xpv_hindex *h, uint64_t key, uint64_t init)
{
    if (key == 0 || (h->n + 1) * 2 > h->cap) return xpv_hindex_put_slow(h, key, init);
    size_t mask = h->cap - 1, i = xpv_hindex_home(h, key);
    for (; h->slots[i].key != 0; i = (i + 1) & mask)
        if (h->slots[i].key == key) return &h->slots[i].val;
    h->slots[i] = (xpv_hslot){key, init};
    h->n++;
    return &h->slots[i].val;
}

/* Removes key; returns 1 when it was there. */
int xpv_hindex_del(xpv_hindex *h, uint64_t key);

/* Walks the entries in no particular order: start with *pos = 0; returns 0
 * after the last. No put or removal while walking. */
int xpv_hindex_next_entry(const xpv_hindex *h, size_t *pos, uint64_t *key, uint64_t *val);

/* ---- index use: entries in the caller's array, found by hash ---- */

static inline xpv_hprobe xpv_hindex_probe(const xpv_hindex *h, uint64_t hash)
{
    xpv_hprobe p = {hash ? hash : 1, 0};
    if (h->cap) p.i = xpv_hindex_home(h, p.key);
    return p;
}

/* The next candidate of the probe: 1 with *val set to an entry stored
 * under the same hash, 0 once the probe reaches an empty slot (where
 * xpv_hindex_insert_at puts a new entry). */
static inline int xpv_hindex_next(const xpv_hindex *h, xpv_hprobe *p, uint64_t *val)
{
    if (!h->cap) return 0;
    for (size_t mask = h->cap - 1;;) {
        const xpv_hslot *s = &h->slots[p->i];
        if (s->key == 0) return 0;
        p->i = (p->i + 1) & mask;
        if (s->key == p->key) {
            *val = s->val;
            return 1;
        }
    }
}

/* Adds the entry `val` under hash without looking for it first: for
 * entries known to be absent, as when an index is built again. */
void xpv_hindex_add(xpv_hindex *h, uint64_t hash, uint64_t val);

/* Adds the entry `val` under the probe's hash, after xpv_hindex_next
 * returned 0 on that probe (the entry is not there yet). */
static inline void xpv_hindex_insert_at(xpv_hindex *h, const xpv_hprobe *p, uint64_t val)
{
    if ((h->n + 1) * 2 > h->cap) {
        xpv_hindex_add(h, p->key, val);
        return;
    }
    h->slots[p->i] = (xpv_hslot){p->key, val};
    h->n++;
}

/* Removes the candidate xpv_hindex_next returned last on p. */
void xpv_hindex_remove_at(xpv_hindex *h, const xpv_hprobe *p);

#endif
