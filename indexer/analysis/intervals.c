/*
 * intervals.c — sorting int64 values and intervals, and the union of a set
 * of [start, end) intervals (how busy time is measured without counting
 * overlapping streams twice).
 *
 * The sorts are plain quicksorts (Hoare partition, median of three,
 * insertion sort below 16 elements): Hoare's partition stays balanced on
 * many equal keys, which kernel durations have. A median needs no sort:
 * xpv_select_i64 partitions around one rank in linear time, branch-free
 * (values below the pivot, then equal to it, then above), so that random
 * durations cost no mispredicted branches and equal ones still progress. Intervals
 * usually arrive as a few runs already in order (the store returns each
 * track's events per duration class, each class in time order), so their
 * sort merges runs first and falls back to quicksort on disorder.
 */
#include "analysis_internal.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

static void insertion_i64(int64_t *v, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        int64_t x = v[i];
        size_t j = i;
        for (; j > 0 && v[j - 1] > x; j--)
            v[j] = v[j - 1];
        v[j] = x;
    }
}

static int64_t median3(int64_t a, int64_t b, int64_t c)
{
    if (a > b) {
        int64_t t = a;
        a = b;
        b = t;
    }
    return c < a ? a : (c > b ? b : c);
}

/* Hoare partition around the median of three: afterwards
 * v[0, left) <= pivot <= v[left, n). Requires n > 16. */
static size_t partition_i64(int64_t *v, size_t n)
{
    int64_t pivot = median3(v[0], v[n / 2], v[n - 1]);
    size_t i = 0, j = n - 1;
    for (;;) {
        while (v[i] < pivot)
            i++;
        while (v[j] > pivot)
            j--;
        if (i >= j) return j + 1;
        int64_t t = v[i];
        v[i++] = v[j];
        v[j--] = t;
    }
}

void xpv_sort_i64(int64_t *v, size_t n)
{
    while (n > 16) {
        size_t left = partition_i64(v, n);
        if (left < n - left) { /* recurse into the smaller side */
            xpv_sort_i64(v, left);
            v += left;
            n -= left;
        } else {
            xpv_sort_i64(v + left, n - left);
            n = left;
        }
    }
    insertion_i64(v, n);
}

/* Moves the values below `below` to the front of v and returns how many.
 * Every element is swapped whatever its value: no branch to mispredict on
 * random durations. */
static size_t partition_below(int64_t *v, size_t n, int64_t below)
{
    size_t front = 0;
    for (size_t i = 0; i < n; i++) {
        int64_t x = v[i];
        v[i] = v[front];
        v[front] = x;
        front += x < below;
    }
    return front;
}

void xpv_select_i64(int64_t *v, size_t n, size_t k)
{
    assert(k < n);
    while (n > 16) {
        int64_t pivot = median3(v[0], v[n / 2], v[n - 1]); /* one of v's values */
        size_t lt = partition_below(v, n, pivot);
        if (k < lt) { /* keep only the side holding rank k */
            n = lt;
            continue;
        }
        /* v[lt, n) >= pivot: the values equal to it (at least the pivot
         * itself) go next, so every round drops some, duplicates or not */
        size_t eq = pivot == INT64_MAX ? n - lt : partition_below(v + lt, n - lt, pivot + 1);
        if (k < lt + eq) return;
        v += lt + eq;
        k -= lt + eq;
        n -= lt + eq;
    }
    insertion_i64(v, n);
}

static void insertion_ivals(xpv_ival *v, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        xpv_ival x = v[i];
        size_t j = i;
        for (; j > 0 && v[j - 1].start > x.start; j--)
            v[j] = v[j - 1];
        v[j] = x;
    }
}

static void quicksort_ivals(xpv_ival *v, size_t n)
{
    while (n > 16) {
        int64_t pivot = median3(v[0].start, v[n / 2].start, v[n - 1].start);
        size_t i = 0, j = n - 1;
        for (;;) {
            while (v[i].start < pivot)
                i++;
            while (v[j].start > pivot)
                j--;
            if (i >= j) break;
            xpv_ival t = v[i];
            v[i++] = v[j];
            v[j--] = t;
        }
        size_t left = j + 1;
        if (left < n - left) {
            quicksort_ivals(v, left);
            v += left;
            n -= left;
        } else {
            quicksort_ivals(v + left, n - left);
            n = left;
        }
    }
    insertion_ivals(v, n);
}

/* Merges the sorted runs src[bounds[r], bounds[r+1]) pairwise, bottom up,
 * ping-ponging between src and tmp; returns the buffer holding the result. */
static xpv_ival *merge_runs(xpv_ival *src, xpv_ival *tmp, size_t *bounds, size_t runs)
{
    while (runs > 1) {
        size_t out = 0;
        for (size_t r = 0; r < runs; r += 2) {
            size_t a = bounds[r], m = bounds[r + (r + 1 < runs)],
                   b = bounds[r + 1 + (r + 1 < runs)];
            size_t i = a, j = m, o = a;
            while (i < m && j < b)
                tmp[o++] = src[j].start < src[i].start ? src[j++] : src[i++];
            while (i < m)
                tmp[o++] = src[i++];
            while (j < b)
                tmp[o++] = src[j++];
            bounds[out++] = a;
        }
        bounds[out] = bounds[runs];
        runs = out;
        xpv_ival *t = src;
        src = tmp;
        tmp = t;
    }
    return src;
}

static void sort_ivals(xpv_ival *v, size_t n, xpv_ivals *scratch)
{
    if (n < 2) return;
    size_t runs = 1;
    for (size_t i = 1; i < n; i++)
        runs += v[i].start < v[i - 1].start;
    if (runs == 1) return;
    if (runs > 64 && runs > n / 16) { /* no useful order: plain quicksort */
        quicksort_ivals(v, n);
        return;
    }
    size_t *bounds = xpv_xmalloc((runs + 1) * sizeof *bounds), r = 0;
    bounds[r++] = 0;
    for (size_t i = 1; i < n; i++)
        if (v[i].start < v[i - 1].start) bounds[r++] = i;
    assert(r == runs);
    bounds[r] = n;
    if (scratch->cap < n) {
        scratch->cap = n;
        scratch->v = xpv_xrealloc(scratch->v, n * sizeof *scratch->v);
    }
    xpv_ival *sorted = merge_runs(v, scratch->v, bounds, runs);
    if (sorted != v) memcpy(v, sorted, n * sizeof *v);
    free(bounds);
}

void xpv_ivals_push(xpv_ivals *iv, int64_t start, int64_t end)
{
    if (iv->n == iv->cap) {
        iv->cap = iv->cap ? iv->cap * 2 : 256;
        iv->v = xpv_xrealloc(iv->v, iv->cap * sizeof *iv->v);
    }
    iv->v[iv->n++] = (xpv_ival){start, end};
}

int xpv_ivals_add(xpv_ivals *iv, int64_t start, int64_t end)
{
    xpv_ival *last = iv->n ? &iv->v[iv->n - 1] : NULL;
    if (last && start >= last->start && start <= last->end) {
        if (end > last->end) last->end = end;
        return 0;
    }
    xpv_ivals_push(iv, start, end);
    return 1;
}

int64_t xpv_ivals_union(xpv_ivals *iv, xpv_ivals *scratch)
{
    if (iv->n == 0) return 0;
    xpv_ivals own = {0};
    sort_ivals(iv->v, iv->n, scratch ? scratch : &own);
    xpv_ivals_free(&own);
    size_t out = 0;
    for (size_t i = 1; i < iv->n; i++) {
        assert(iv->v[i].start >= iv->v[out].start); /* sorted */
        if (iv->v[i].start <= iv->v[out].end) {
            if (iv->v[i].end > iv->v[out].end) iv->v[out].end = iv->v[i].end;
        } else {
            iv->v[++out] = iv->v[i];
        }
    }
    iv->n = out + 1;
    for (size_t i = 1; i < iv->n; i++) /* a new one starts only past the last end */
        assert(iv->v[i].start > iv->v[i - 1].end);
    int64_t total = 0;
    for (size_t i = 0; i < iv->n; i++)
        total += iv->v[i].end - iv->v[i].start;
    return total;
}

int64_t xpv_ivals_overlap(const xpv_ivals *a, const xpv_ivals *b)
{
    int64_t total = 0;
    size_t i = 0, j = 0;
    while (i < a->n && j < b->n) {
        int64_t s = a->v[i].start > b->v[j].start ? a->v[i].start : b->v[j].start;
        int64_t e = a->v[i].end < b->v[j].end ? a->v[i].end : b->v[j].end;
        if (e > s) total += e - s;
        if (a->v[i].end < b->v[j].end)
            i++;
        else
            j++;
    }
    return total;
}

/* A merge by start of the two lists, joining what touches or overlaps. */
void xpv_ivals_merge(xpv_ivals *dst, const xpv_ivals *a, const xpv_ivals *b)
{
    assert(dst != a && dst != b);
    dst->n = 0;
    size_t i = 0, j = 0;
    while (i < a->n || j < b->n) {
        xpv_ival next =
            j >= b->n || (i < a->n && a->v[i].start < b->v[j].start) ? a->v[i++] : b->v[j++];
        if (dst->n && next.start <= dst->v[dst->n - 1].end) {
            if (next.end > dst->v[dst->n - 1].end) dst->v[dst->n - 1].end = next.end;
        } else {
            xpv_ivals_push(dst, next.start, next.end);
        }
    }
}

void xpv_ivals_free(xpv_ivals *iv)
{
    free(iv->v);
    iv->v = NULL;
    iv->n = iv->cap = 0;
}
