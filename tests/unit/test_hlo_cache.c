/*
 * test_hlo_cache.c — the per-profile cache of the HLO tools
 * (api/hlo/hlo_cache.c) with counted values: a value is found only under its
 * own key (profile and generation), a second put of a key keeps the first
 * value, a value over the budget is freed at once, a put past the budget
 * empties the cache, and every value is freed exactly once.
 */
#include "testutil.h"
#include "api/hlo/hlo_cache.h"

#include <stdlib.h>

static int freed;

static void free_value(void *v)
{
    freed++;
    free(v);
}

static int *value(int v)
{
    int *p = malloc(sizeof *p);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    *p = v;
    return p;
}

static void read_value(void *ctx, const void *v)
{
    *(int *)ctx = *(const int *)v;
}

static int lookup(xpv_hlo_cache *c, int64_t id, uint64_t gen)
{
    int got = -1;
    xpv_hlo_cache_key k = {id, gen};
    return xpv_hlo_cache_use(c, &k, read_value, &got) ? got : -1;
}

static void test_keys(void)
{
    freed = 0;
    xpv_hlo_cache *c = xpv_hlo_cache_new(100, free_value);
    xpv_hlo_cache_put(c, &(xpv_hlo_cache_key){1, 7}, value(10), 30);
    xpv_hlo_cache_put(c, &(xpv_hlo_cache_key){2, 7}, value(20), 30);
    CU_ASSERT_EQUAL(lookup(c, 1, 7), 10);
    CU_ASSERT_EQUAL(lookup(c, 2, 7), 20);
    CU_ASSERT_EQUAL(lookup(c, 1, 8), -1); /* indexed again: another generation */
    CU_ASSERT_EQUAL(lookup(c, 3, 7), -1);
    xpv_hlo_cache_put(c, &(xpv_hlo_cache_key){1, 7}, value(11), 30); /* twice: the first kept */
    CU_ASSERT_EQUAL(freed, 1);
    CU_ASSERT_EQUAL(lookup(c, 1, 7), 10);
    CU_ASSERT_EQUAL(xpv_hlo_cache_entries(c), 2);
    CU_ASSERT_EQUAL(xpv_hlo_cache_bytes(c), 60);
    xpv_hlo_cache_free(c);
    CU_ASSERT_EQUAL(freed, 3);
}

static void test_budget(void)
{
    freed = 0;
    xpv_hlo_cache *c = xpv_hlo_cache_new(100, free_value);
    xpv_hlo_cache_put(c, &(xpv_hlo_cache_key){1, 1}, value(1), 101); /* alone over budget */
    CU_ASSERT_EQUAL(freed, 1);
    CU_ASSERT_EQUAL(xpv_hlo_cache_entries(c), 0);
    xpv_hlo_cache_put(c, &(xpv_hlo_cache_key){1, 1}, value(1), 60);
    xpv_hlo_cache_put(c, &(xpv_hlo_cache_key){2, 1}, value(2), 60); /* past it: emptied first */
    CU_ASSERT_EQUAL(freed, 2);
    CU_ASSERT_EQUAL(lookup(c, 1, 1), -1);
    CU_ASSERT_EQUAL(lookup(c, 2, 1), 2);
    CU_ASSERT_EQUAL(xpv_hlo_cache_bytes(c), 60);
    xpv_hlo_cache_free(c);
    CU_ASSERT_EQUAL(freed, 3);
    xpv_hlo_cache_free(NULL);
}

int main(void)
{
    static const xpv_test_case tests[] = {
        {"keys and generations", test_keys},
        {"budget", test_budget},
        {NULL, NULL},
    };
    return xpv_test_run("hlo_cache", tests, 0);
}
