/*
 * xpv_msort.h — a stable merge sort with its comparison inlined, for the
 * arrays the analysis sorts at every profile's finish (launches, CPU ops,
 * kernel groups), where qsort()'s indirect call per comparison cost more
 * than the rest of the work around it.
 *
 * XPV_MSORT_DEFINE(name, type, less) defines
 *     static void name(type *v, size_t n)
 * sorting v[0..n) so that less(&a, &b) (a strict weak order on
 * const type pointers) holds for no later element a against an earlier b.
 * Equal elements keep their order, as under glibc's qsort (itself a merge
 * sort), so callers that moved from it answer the same. Runs of up to 16
 * are insertion-sorted; halves already in order are not merged. It takes
 * n / 2 + 1 elements of scratch memory, freed before it returns.
 */
#ifndef XPV_MSORT_H
#define XPV_MSORT_H

#include "xpv_common.h"

#include <stdlib.h>
#include <string.h>

#define XPV_MSORT_DEFINE(name, type, less)                                                         \
    static void name##_run_(type *v, type *tmp, size_t n)                                          \
    {                                                                                              \
        if (n <= 16) {                                                                             \
            for (size_t i = 1; i < n; i++) {                                                       \
                type x = v[i];                                                                     \
                size_t j = i;                                                                      \
                for (; j > 0 && less(&x, &v[j - 1]); j--)                                          \
                    v[j] = v[j - 1];                                                               \
                v[j] = x;                                                                          \
            }                                                                                      \
            return;                                                                                \
        }                                                                                          \
        size_t h = n / 2;                                                                          \
        name##_run_(v, tmp, h);                                                                    \
        name##_run_(v + h, tmp, n - h);                                                            \
        if (!less(&v[h], &v[h - 1])) return;                                                       \
        memcpy(tmp, v, h * sizeof *v);                                                             \
        /* o <= j: the right half is read before it is overwritten */                              \
        size_t i = 0, j = h, o = 0;                                                                \
        while (i < h && j < n)                                                                     \
            v[o++] = less(&v[j], &tmp[i]) ? v[j++] : tmp[i++];                                     \
        while (i < h)                                                                              \
            v[o++] = tmp[i++];                                                                     \
    }                                                                                              \
    static void name(type *v, size_t n)                                                            \
    {                                                                                              \
        type *tmp = xpv_xmalloc((n / 2 + 1) * sizeof *tmp);                                        \
        name##_run_(v, tmp, n);                                                                    \
        free(tmp);                                                                                 \
    }

#endif
