/*
 * test_lower_bound.c — binary search (common/xpv_lower_bound.h): every
 * answer of the generic and the int64 searches agrees with a linear scan,
 * over empty arrays, runs of equal keys and keys past both ends, and the
 * find returns the very element C's bsearch does.
 */
#include "testutil.h"
#include "common/xpv_lower_bound.h"

#include <stddef.h>
#include <stdlib.h>

typedef struct {
    int32_t pad;
    int64_t t;
} rec;

static int cmp_rec(const void *key, const void *elem)
{
    int64_t a = ((const rec *)key)->t, b = ((const rec *)elem)->t;
    return (a > b) - (a < b);
}

static size_t linear(const rec *v, size_t n, int64_t key, int upper)
{
    size_t i = 0;
    while (i < n && (v[i].t < key || (upper && v[i].t == key)))
        i++;
    return i;
}

static void check_all(const rec *v, size_t n)
{
    int64_t *bare = malloc((n ? n : 1) * sizeof *bare);
    for (size_t i = 0; i < n; i++)
        bare[i] = v[i].t;
    for (int64_t key = -2; key <= (n ? v[n - 1].t + 2 : 2); key++) {
        rec k = {0, key};
        size_t lo = linear(v, n, key, 0), hi = linear(v, n, key, 1);
        CU_ASSERT_EQUAL_FATAL(xpv_lower_bound(&k, v, n, sizeof *v, cmp_rec), lo);
        CU_ASSERT_EQUAL_FATAL(xpv_upper_bound(&k, v, n, sizeof *v, cmp_rec), hi);
        CU_ASSERT_EQUAL_FATAL(xpv_lower_bound_i64(v, n, sizeof *v, offsetof(rec, t), key), lo);
        CU_ASSERT_EQUAL_FATAL(xpv_upper_bound_i64(v, n, sizeof *v, offsetof(rec, t), key), hi);
        CU_ASSERT_EQUAL_FATAL(xpv_lower_bound_i64(bare, n, sizeof *bare, 0, key), lo);
        CU_ASSERT_EQUAL_FATAL(xpv_sorted_has_i64(bare, n, key), hi > lo);
        const rec *f = xpv_sorted_find(&k, v, n, sizeof *v, cmp_rec);
        CU_ASSERT_PTR_EQUAL_FATAL(f, bsearch(&k, v, n, sizeof *v, cmp_rec)); /* as C's */
        CU_ASSERT_TRUE_FATAL(hi > lo ? f >= &v[lo] && f < &v[hi] : f == NULL);
    }
    free(bare);
}

static void test_empty(void)
{
    rec k = {0, 5};
    CU_ASSERT_EQUAL(xpv_lower_bound(&k, NULL, 0, sizeof k, cmp_rec), 0);
    CU_ASSERT_EQUAL(xpv_upper_bound_i64(NULL, 0, sizeof k, offsetof(rec, t), 5), 0);
    CU_ASSERT_PTR_NULL(xpv_sorted_find(&k, NULL, 0, sizeof k, cmp_rec));
    CU_ASSERT_FALSE(xpv_sorted_has_i64(NULL, 0, 5));
}

static void test_runs_and_ends(void)
{
    /* lengths 1..40, keys rising in steps of 0, 1 or 2 (runs and gaps) */
    uint64_t rng = 42;
    rec v[40];
    for (size_t n = 1; n <= 40; n++) {
        int64_t t = (int64_t)(xpv_test_xorshift(&rng) % 3) - 1;
        for (size_t i = 0; i < n; i++) {
            v[i] = (rec){(int32_t)i, t};
            t += (int64_t)(xpv_test_xorshift(&rng) % 3);
        }
        check_all(v, n);
    }
}

static void test_extreme_keys(void)
{
    int64_t a[] = {INT64_MIN, -1, 0, INT64_MAX};
    CU_ASSERT_EQUAL(xpv_lower_bound_i64(a, 4, sizeof *a, 0, INT64_MIN), 0);
    CU_ASSERT_EQUAL(xpv_upper_bound_i64(a, 4, sizeof *a, 0, INT64_MIN), 1);
    CU_ASSERT_EQUAL(xpv_lower_bound_i64(a, 4, sizeof *a, 0, INT64_MAX), 3);
    CU_ASSERT_EQUAL(xpv_upper_bound_i64(a, 4, sizeof *a, 0, INT64_MAX), 4);
    CU_ASSERT_TRUE(xpv_sorted_has_i64(a, 4, -1));
    CU_ASSERT_FALSE(xpv_sorted_has_i64(a, 4, 1));
}

int main(void)
{
    static const xpv_test_case tests[] = {
        {"an empty array answers 0", test_empty},
        {"answers agree with a scan over runs and gaps", test_runs_and_ends},
        {"the int64 limits are keys like any other", test_extreme_keys},
        {NULL, NULL},
    };
    return xpv_test_run("lower_bound", tests, 0);
}
