/*
 * xpv_idset.h — a set of int64 ids kept as one sorted array: adding and
 * removing cost a move of the ids after the place (sets here hold
 * profiles, hundreds at most), asking is a binary search, and walking is
 * reading ids[0..n) in ascending order.
 *
 * Invariants: ids[0..n) is strictly ascending (no id twice); cap >= n; a
 * zeroed xpv_idset is a valid empty one, and a set may be moved by copying
 * the struct (then only the copy is used). One thread at a time.
 */
#ifndef XPV_IDSET_H
#define XPV_IDSET_H

#include "xpv_lower_bound.h"

#include <stddef.h>
#include <stdint.h>

typedef struct {
    int64_t *ids; /* ascending */
    size_t n, cap;
} xpv_idset;

/* Adds id; returns 1 when it was new. */
int xpv_idset_add(xpv_idset *s, int64_t id);
/* Removes id; returns 1 when it was there. */
int xpv_idset_del(xpv_idset *s, int64_t id);
/* Empties s, keeping its memory. */
void xpv_idset_clear(xpv_idset *s);
void xpv_idset_free(xpv_idset *s);

static inline int xpv_idset_has(const xpv_idset *s, int64_t id)
{
    return xpv_sorted_has_i64(s->ids, s->n, id);
}

#endif
