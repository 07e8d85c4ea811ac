/*
 * test_intervals.c — selection and interval unions against brute force, on
 * random data shaped as the store returns it (a few ordered runs), on
 * shuffled data and on many equal keys; lists built by xpv_ivals_add
 * against the same intervals pushed one by one.
 */
#include "testutil.h"
#include "indexer/analysis/analysis_internal.h"

#include <stdlib.h>
#include <string.h>

static uint64_t rng = 88172645463325252ULL;

static uint64_t next(void)
{
    return xpv_test_xorshift(&rng);
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

static void test_select_matches_sort(void)
{
    for (int round = 0; round < 200; round++) {
        size_t n = 1 + next() % 3000;
        int64_t *v = xpv_xmalloc(n * sizeof *v), *sorted = xpv_xmalloc(n * sizeof *v);
        int64_t range = round % 3 == 0 ? 4 : 1000000; /* many equal keys, or few */
        static const int64_t extremes[] = {INT64_MIN, -1, 0, INT64_MAX};
        for (size_t i = 0; i < n; i++) {
            v[i] = (int64_t)(next() % (uint64_t)range);
            if (round % 7 == 1) v[i] = INT64_MAX;            /* all equal, at the top */
            if (round % 7 == 2) v[i] = extremes[next() % 4]; /* the int64 limits */
            if (round % 7 == 3) v[i] = (int64_t)i;           /* already in order */
            if (round % 7 == 4) v[i] = (int64_t)(n - i);     /* reversed */
            sorted[i] = v[i];
        }
        qsort(sorted, n, sizeof *sorted, cmp_i64);
        size_t k = next() % n;
        xpv_select_i64(v, n, k);
        CU_ASSERT_EQUAL(v[k], sorted[k]);
        for (size_t i = 0; i < n; i++) {
            if (i < k) CU_ASSERT(v[i] <= v[k]);
            if (i > k) CU_ASSERT(v[i] >= v[k]);
        }
        free(v);
        free(sorted);
    }
}

/* Busy time by painting a bitmap: the obviously right answer. */
static int64_t brute_union(const xpv_ival *v, size_t n, int64_t span)
{
    unsigned char *busy = xpv_xcalloc((size_t)span, 1);
    for (size_t i = 0; i < n; i++)
        for (int64_t t = v[i].start; t < v[i].end; t++)
            busy[t] = 1;
    int64_t total = 0;
    for (int64_t t = 0; t < span; t++)
        total += busy[t];
    free(busy);
    return total;
}

/* Kept across check_union calls: reused scratch must not leak old values. */
static xpv_ivals shared_scratch;

static void check_union(size_t runs, size_t per_run, int shuffle)
{
    const int64_t span = 20000;
    xpv_ivals iv = {0};
    for (size_t r = 0; r < runs; r++) {
        int64_t t = (int64_t)(next() % 100);
        for (size_t i = 0; i < per_run && t < span - 200; i++) {
            int64_t len = 1 + (int64_t)(next() % 150);
            xpv_ivals_push(&iv, t, t + len);
            t += (int64_t)(next() % 120); /* ordered starts, overlapping or not */
        }
    }
    if (shuffle)
        for (size_t i = iv.n; i > 1; i--) {
            size_t j = next() % i;
            xpv_ival x = iv.v[i - 1];
            iv.v[i - 1] = iv.v[j];
            iv.v[j] = x;
        }
    xpv_ival *copy = xpv_xmalloc((iv.n ? iv.n : 1) * sizeof *copy);
    if (iv.n) memcpy(copy, iv.v, iv.n * sizeof *copy);
    size_t n = iv.n;
    CU_ASSERT_EQUAL(xpv_ivals_union(&iv, runs % 2 ? &shared_scratch : NULL),
                    brute_union(copy, n, span));
    free(copy);
    xpv_ivals_free(&iv);
}

static void test_union_of_runs(void)
{
    for (size_t runs = 1; runs <= 40; runs += 3)
        check_union(runs, 150, 0);
}

static void test_union_shuffled(void)
{
    for (int round = 0; round < 10; round++)
        check_union(5, 300, 1);
    check_union(1, 1, 0);
    check_union(0, 0, 0);
}

/* Adding where pushing was: the same union, from fewer slots when the
 * intervals come in ordered runs (launch waits overlap their successors). */
static void test_add_keeps_the_union(void)
{
    const int64_t span = 20000;
    for (int round = 0; round < 40; round++) {
        xpv_ivals pushed = {0}, added = {0};
        size_t runs = 1 + (size_t)round % 6, slots = 0;
        for (size_t r = 0; r < runs; r++) {
            int64_t t = (int64_t)(next() % 100);
            while (t < span - 200) {
                int64_t len = 1 + (int64_t)(next() % 150);
                xpv_ivals_push(&pushed, t, t + len);
                slots += (size_t)xpv_ivals_add(&added, t, t + len);
                t += (int64_t)(next() % (round % 2 ? 60 : 200));
            }
        }
        CU_ASSERT_EQUAL(slots, added.n);
        CU_ASSERT(added.n < pushed.n);
        int64_t want = brute_union(pushed.v, pushed.n, span);
        CU_ASSERT_EQUAL(brute_union(added.v, added.n, span), want);
        CU_ASSERT_EQUAL(xpv_ivals_union(&added, NULL), want);
        xpv_ivals_free(&pushed);
        xpv_ivals_free(&added);
    }
}

int main(void)
{
    static const xpv_test_case tests[] = {
        {"selection equals the sorted rank", test_select_matches_sort},
        {"union of ordered runs equals painting", test_union_of_runs},
        {"union of shuffled intervals equals painting", test_union_shuffled},
        {"adding to the last interval keeps the union", test_add_keeps_the_union},
        {NULL, NULL},
    };
    return xpv_test_run("intervals", tests, 0);
}
