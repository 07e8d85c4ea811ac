/*
 * xpv_winidx.c — grouped time windows and overlap queries (xpv_winidx.h).
 */
#include "xpv_winidx.h"
#include "xpv_common.h"
#include "xpv_lower_bound.h"

#include <assert.h>
#include <stdlib.h>

void xpv_winidx_add(xpv_winidx *x, size_t group, int64_t start, int64_t end, size_t key)
{
    if (end <= start) return;
    if (x->n == x->cap) {
        x->cap = x->cap ? x->cap * 2 : 64;
        x->v = xpv_xrealloc(x->v, x->cap * sizeof *x->v);
    }
    x->v[x->n++] = (xpv_winidx_entry){group, start, end, end, key};
}

static int by_group_start(const void *a, const void *b)
{
    const xpv_winidx_entry *p = a, *q = b;
    if (p->group != q->group) return p->group < q->group ? -1 : 1;
    if (p->start != q->start) return p->start < q->start ? -1 : 1;
    return p->key < q->key ? -1 : p->key > q->key;
}

void xpv_winidx_finish(xpv_winidx *x, size_t ngroups)
{
    xpv_sort(x->v, x->n, sizeof *x->v, by_group_start);
    x->ngroups = ngroups;
    x->at = xpv_xcalloc(ngroups + 1, sizeof *x->at);
    size_t i = 0;
    for (size_t g = 0; g < ngroups; g++) {
        x->at[g] = i;
        for (int64_t max = INT64_MIN; i < x->n && x->v[i].group == g; i++) {
            if (x->v[i].end > max) max = x->v[i].end;
            x->v[i].max_end = max;
        }
    }
    assert(i == x->n); /* no window of a group past ngroups */
    x->at[ngroups] = i;
}

void xpv_winidx_free(xpv_winidx *x)
{
    free(x->v);
    free(x->at);
    *x = (xpv_winidx){0};
}

void xpv_winidx_query(const xpv_winidx *x, size_t group, int64_t s, int64_t e, xpv_winidx_iter *it)
{
    *it = (xpv_winidx_iter){.s = s, .e = e};
    if (group >= x->ngroups || e <= s) return;
    it->v = x->v + x->at[group];
    size_t n = x->at[group + 1] - x->at[group];
    it->i = xpv_lower_bound_i64(it->v, n, sizeof *it->v, offsetof(xpv_winidx_entry, start), e);
}

const xpv_winidx_entry *xpv_winidx_next(xpv_winidx_iter *it)
{
    while (it->i > 0 && it->v[it->i - 1].max_end > it->s) {
        const xpv_winidx_entry *w = &it->v[--it->i];
        it->visited++;
        if (w->end > it->s) return w;
    }
    it->i = 0;
    return NULL;
}
