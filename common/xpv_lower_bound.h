/*
 * xpv_lower_bound.h — binary search over sorted arrays: where a key would
 * go. xpv_lower_bound gives the first element not less than the key,
 * xpv_upper_bound the first greater than it; both n when there is none,
 * so "the last element <= key" is xpv_upper_bound(...) - 1 when that is
 * not 0. The generic ones take a bsearch-style compare, cmp(key, element);
 * the _i64 ones read an int64 at `offset` in each element of `size` bytes
 * (a bare int64 array is offset 0), with no call per step.
 *
 * Invariants: the array is sorted by the compare (ascending); equal
 * elements may repeat, and the answers then are the first and one past
 * the last of them. n may be 0 with base NULL. Nothing is allocated.
 *
 * All inline: some of these run once per event.
 */
#ifndef XPV_LOWER_BOUND_H
#define XPV_LOWER_BOUND_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef int (*xpv_key_cmp)(const void *key, const void *elem);

/* The first element for which cmp(key, element) <= 0 (with upper: < 0). */
static inline size_t xpv_bound_(const void *key, const void *base, size_t n, size_t size,
                                xpv_key_cmp cmp, int upper)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = cmp(key, (const char *)base + mid * size);
        if (c > 0 || (upper && c == 0))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static inline size_t xpv_lower_bound(const void *key, const void *base, size_t n, size_t size,
                                     xpv_key_cmp cmp)
{
    return xpv_bound_(key, base, n, size, cmp, 0);
}

static inline size_t xpv_upper_bound(const void *key, const void *base, size_t n, size_t size,
                                     xpv_key_cmp cmp)
{
    return xpv_bound_(key, base, n, size, cmp, 1);
}

/* An element equal to key, or NULL: of equal elements, the one bisection
 * meets first, the same one C's bsearch returns (so callers that moved
 * from bsearch answer as before even when keys repeat). */
static inline void *xpv_sorted_find(const void *key, const void *base, size_t n, size_t size,
                                    xpv_key_cmp cmp)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const char *e = (const char *)base + mid * size;
        int c = cmp(key, e);
        if (c == 0) return (void *)e;
        if (c < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    return NULL;
}

static inline int64_t xpv_i64_at_(const void *base, size_t i, size_t size, size_t offset)
{
    int64_t v;
    memcpy(&v, (const char *)base + i * size + offset, sizeof v);
    return v;
}

/* The first element whose int64 is >= key (with upper: > key). */
static inline size_t xpv_bound_i64_(const void *base, size_t n, size_t size, size_t offset,
                                    int64_t key, int upper)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int64_t v = xpv_i64_at_(base, mid, size, offset);
        if (v < key || (upper && v == key))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static inline size_t xpv_lower_bound_i64(const void *base, size_t n, size_t size, size_t offset,
                                         int64_t key)
{
    return xpv_bound_i64_(base, n, size, offset, key, 0);
}

static inline size_t xpv_upper_bound_i64(const void *base, size_t n, size_t size, size_t offset,
                                         int64_t key)
{
    return xpv_bound_i64_(base, n, size, offset, key, 1);
}

/* Whether sorted int64 array a[0..n) holds v. */
static inline int xpv_sorted_has_i64(const int64_t *a, size_t n, int64_t v)
{
    size_t i = xpv_lower_bound_i64(a, n, sizeof *a, 0, v);
    return i < n && a[i] == v;
}

#endif
