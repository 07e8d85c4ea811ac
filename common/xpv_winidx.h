/*
 * xpv_winidx.h — time windows [start, end) in groups (a device's windows of
 * the steps), and the windows of one group that overlap an interval.
 *
 * Each group's windows are sorted by start and carry the running maximum
 * of their ends, so a query starts at the last window starting before the
 * interval's end and walks back only while some earlier window can still
 * reach the interval's start. Disjoint windows (a device's own step
 * windows) make that O(log n) plus the windows found; overlapping ones stay
 * correct and cost the walk over them.
 *
 * Invariants: after xpv_winidx_finish, v is sorted by (group, start, key)
 * and at[g] .. at[g + 1] are group g's windows; empty windows are dropped.
 */
#ifndef XPV_WINIDX_H
#define XPV_WINIDX_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    size_t group;
    int64_t start, end;
    int64_t max_end; /* of the group's windows up to this one */
    size_t key;      /* the caller's (a step's index) */
} xpv_winidx_entry;

typedef struct {
    xpv_winidx_entry *v;
    size_t n, cap;
    size_t *at; /* [ngroups + 1] */
    size_t ngroups;
} xpv_winidx;

/* Adds group's window [start, end) named key; an empty one is ignored. */
void xpv_winidx_add(xpv_winidx *x, size_t group, int64_t start, int64_t end, size_t key);
/* Sorts the windows of groups [0, ngroups) for queries. */
void xpv_winidx_finish(xpv_winidx *x, size_t ngroups);
void xpv_winidx_free(xpv_winidx *x);

/* A query's place: the windows of one group overlapping [s, e), latest
 * start first; visited counts the windows looked at (tests check it). */
typedef struct {
    const xpv_winidx_entry *v;
    size_t i;
    int64_t s, e;
    size_t visited;
} xpv_winidx_iter;

void xpv_winidx_query(const xpv_winidx *x, size_t group, int64_t s, int64_t e, xpv_winidx_iter *it);
/* The next overlapping window, or NULL when there is none left. */
const xpv_winidx_entry *xpv_winidx_next(xpv_winidx_iter *it);

#endif
