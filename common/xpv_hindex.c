/*
 * xpv_hindex.c — the rare paths of the hash index of xpv_hindex.h:
 * growth, the zero key, removal and walking.
 *
 * Invariants (see xpv_hindex.h): at most half full after every put; growth
 * doubles (from 16 slots), so n puts cost O(n) amortised, and re-places
 * slots by their stored keys alone; removal shifts back each follower
 * whose home slot lies at or before the hole, so no probe crosses an empty
 * slot that once held one of its candidates.
 */
#include "xpv_hindex.h"
#include "xpv_common.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#define MIN_CAP 16

void xpv_hindex_free(xpv_hindex *h)
{
    free(h->slots);
    memset(h, 0, sizeof *h);
}

void xpv_hindex_clear(xpv_hindex *h)
{
    if (h->slots) memset(h->slots, 0, h->cap * sizeof *h->slots);
    h->n = 0;
    h->has_zero = 0;
    h->zero_val = 0;
}

/* Re-places every slot in a table of cap slots. */
static void resize(xpv_hindex *h, size_t cap)
{
    xpv_hindex old = *h;
    assert(cap >= MIN_CAP && (cap & (cap - 1)) == 0 && h->n * 2 <= cap);
    unsigned bits = 0;
    while (((size_t)1 << bits) < cap)
        bits++;
    h->slots = xpv_xcalloc(cap, sizeof *h->slots);
    h->cap = cap;
    h->shift = 64 - bits;
    for (size_t i = 0; i < old.cap; i++) {
        if (old.slots[i].key == 0) continue;
        size_t j = xpv_hindex_home(h, old.slots[i].key);
        while (h->slots[j].key != 0)
            j = (j + 1) & (cap - 1);
        h->slots[j] = old.slots[i];
    }
    free(old.slots);
}

void xpv_hindex_reserve(xpv_hindex *h, size_t n)
{
    size_t cap = h->cap ? h->cap : MIN_CAP;
    while (cap < 2 * n)
        cap *= 2;
    if (cap != h->cap) resize(h, cap);
}

uint64_t *xpv_hindex_put_slow(xpv_hindex *h, uint64_t key, uint64_t init)
{
    if (key == 0) {
        if (!h->has_zero) h->has_zero = 1, h->zero_val = init;
        return &h->zero_val;
    }
    uint64_t *v = xpv_hindex_get(h, key);
    if (v) return v;
    xpv_hindex_reserve(h, h->n + 1);
    v = xpv_hindex_put(h, key, init);
    assert(v == xpv_hindex_get(h, key) && h->n * 2 <= h->cap);
    return v;
}

void xpv_hindex_add(xpv_hindex *h, uint64_t hash, uint64_t val)
{
    uint64_t key = hash ? hash : 1;
    xpv_hindex_reserve(h, h->n + 1);
    size_t i = xpv_hindex_home(h, key);
    while (h->slots[i].key != 0)
        i = (i + 1) & (h->cap - 1);
    h->slots[i] = (xpv_hslot){key, val};
    h->n++;
    assert(h->n * 2 <= h->cap);
}

/* Empties slot i and shifts back the followers that may fill the hole. */
static void remove_slot(xpv_hindex *h, size_t i)
{
    assert(h->n > 0 && h->slots[i].key != 0);
    size_t mask = h->cap - 1;
    for (size_t j = (i + 1) & mask; h->slots[j].key != 0; j = (j + 1) & mask) {
        size_t home = xpv_hindex_home(h, h->slots[j].key);
        /* j may move to the hole when its home is not in (i, j] */
        if (((j - home) & mask) >= ((j - i) & mask)) {
            h->slots[i] = h->slots[j];
            i = j;
        }
    }
    h->slots[i] = (xpv_hslot){0, 0};
    h->n--;
}

int xpv_hindex_del(xpv_hindex *h, uint64_t key)
{
    if (key == 0) {
        int had = h->has_zero;
        h->has_zero = 0;
        h->zero_val = 0;
        return had;
    }
    uint64_t *v = xpv_hindex_get(h, key);
    if (!v) return 0;
    remove_slot(h, (size_t)((const char *)v - (const char *)h->slots) / sizeof *h->slots);
    return 1;
}

void xpv_hindex_remove_at(xpv_hindex *h, const xpv_hprobe *p)
{
    remove_slot(h, (p->i - 1) & (h->cap - 1));
}

int xpv_hindex_next_entry(const xpv_hindex *h, size_t *pos, uint64_t *key, uint64_t *val)
{
    for (; *pos < h->cap; ++*pos) {
        const xpv_hslot *s = &h->slots[*pos];
        if (s->key == 0) continue;
        *key = s->key;
        *val = s->val;
        ++*pos;
        return 1;
    }
    if (*pos == h->cap && h->has_zero) {
        *key = 0;
        *val = h->zero_val;
        ++*pos;
        return 1;
    }
    return 0;
}
