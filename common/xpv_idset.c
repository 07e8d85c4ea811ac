/*
 * xpv_idset.c — adding to and removing from the sorted id set of
 * xpv_idset.h. Growth doubles (from 64), so n adds in ascending order
 * cost O(n) amortised.
 */
#include "xpv_idset.h"
#include "xpv_common.h"

#include <stdlib.h>
#include <string.h>

int xpv_idset_add(xpv_idset *s, int64_t id)
{
    size_t i = xpv_lower_bound_i64(s->ids, s->n, sizeof *s->ids, 0, id);
    if (i < s->n && s->ids[i] == id) return 0;
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 64;
        s->ids = xpv_xrealloc(s->ids, s->cap * sizeof *s->ids);
    }
    memmove(s->ids + i + 1, s->ids + i, (s->n - i) * sizeof *s->ids);
    s->ids[i] = id;
    s->n++;
    return 1;
}

int xpv_idset_del(xpv_idset *s, int64_t id)
{
    size_t i = xpv_lower_bound_i64(s->ids, s->n, sizeof *s->ids, 0, id);
    if (i >= s->n || s->ids[i] != id) return 0;
    memmove(s->ids + i, s->ids + i + 1, (s->n - i - 1) * sizeof *s->ids);
    s->n--;
    return 1;
}

void xpv_idset_clear(xpv_idset *s)
{
    s->n = 0;
}

void xpv_idset_free(xpv_idset *s)
{
    free(s->ids);
    memset(s, 0, sizeof *s);
}
