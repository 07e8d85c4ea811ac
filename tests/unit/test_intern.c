/*
 * test_intern.c — the string table (indexer/intern.c): ids are stable and
 * dense, equal bytes share an id, and the table keeps its answers across
 * the rehashes and arena moves of growth.
 */
#include "testutil.h"
#include "indexer/intern.h"

#include <stdio.h>
#include <string.h>

static void test_same_bytes_same_id(void)
{
    xpv_intern t;
    xpv_intern_init(&t);
    char copy[] = "fusion.12";
    uint32_t a = xpv_intern_lookup(&t, "fusion.12", 9, 1);
    uint32_t b = xpv_intern_lookup(&t, copy, strlen(copy), 1);
    CU_ASSERT_EQUAL(a, b);
    CU_ASSERT_EQUAL(xpv_intern_lookup(&t, "fusion.12", 9, 0), a);
    /* a prefix is other bytes, not the same string */
    CU_ASSERT_NOT_EQUAL(xpv_intern_lookup(&t, "fusion.1", 8, 1), a);
    xpv_intern_free(&t);
}

static void test_ids_dense_from_one(void)
{
    xpv_intern t;
    xpv_intern_init(&t);
    const char *words[] = {"a", "b", "a", "c", "b", "d"};
    const uint32_t want[] = {1, 2, 1, 3, 2, 4};
    for (size_t i = 0; i < sizeof words / sizeof *words; i++)
        CU_ASSERT_EQUAL(xpv_intern_lookup(&t, words[i], 1, 1), want[i]);
    CU_ASSERT_EQUAL(xpv_intern_count(&t), 5); /* "" and four words */
    size_t len = 9;
    CU_ASSERT_STRING_EQUAL(xpv_intern_get(&t, 3, &len), "c");
    CU_ASSERT_EQUAL(len, 1);
    xpv_intern_free(&t);
}

static void test_empty_is_zero(void)
{
    xpv_intern t;
    xpv_intern_init(&t);
    CU_ASSERT_EQUAL(xpv_intern_lookup(&t, "", 0, 1), 0);
    CU_ASSERT_EQUAL(xpv_intern_lookup(&t, "xyz", 0, 1), 0); /* only len counts */
    CU_ASSERT_EQUAL(xpv_intern_count(&t), 1);
    size_t len = 9;
    CU_ASSERT_STRING_EQUAL(xpv_intern_get(&t, 0, &len), "");
    CU_ASSERT_EQUAL(len, 0);
    CU_ASSERT_STRING_EQUAL(xpv_intern_get(&t, 12345, NULL), ""); /* unknown id */
    xpv_intern_free(&t);
}

static void test_absent_without_add(void)
{
    xpv_intern t;
    xpv_intern_init(&t);
    CU_ASSERT_EQUAL(xpv_intern_lookup(&t, "never", 5, 0), 0);
    CU_ASSERT_EQUAL(xpv_intern_count(&t), 1);
    CU_ASSERT_EQUAL(xpv_intern_lookup(&t, "never", 5, 1), 1);
    xpv_intern_free(&t);
}

/* Enough strings to rehash the slots and move the arena several times. */
static void test_growth_keeps_ids(void)
{
    enum { N = 50000 };
    xpv_intern t;
    xpv_intern_init(&t);
    char buf[64];
    for (uint32_t i = 0; i < N; i++) {
        int n = snprintf(buf, sizeof buf, "kernel_%u_%s", i, i % 2 ? "long-ish name" : "x");
        CU_ASSERT_EQUAL_FATAL(xpv_intern_lookup(&t, buf, (size_t)n, 1), i + 1);
    }
    for (uint32_t i = 0; i < N; i++) {
        int n = snprintf(buf, sizeof buf, "kernel_%u_%s", i, i % 2 ? "long-ish name" : "x");
        CU_ASSERT_EQUAL_FATAL(xpv_intern_lookup(&t, buf, (size_t)n, 0), i + 1);
        size_t len;
        CU_ASSERT_STRING_EQUAL_FATAL(xpv_intern_get(&t, i + 1, &len), buf);
        CU_ASSERT_EQUAL_FATAL(len, (size_t)n);
    }
    CU_ASSERT_EQUAL(xpv_intern_count(&t), N + 1);
    xpv_intern_free(&t);
}

int main(void)
{
    static const xpv_test_case tests[] = {
        {"the same bytes twice give the same id", test_same_bytes_same_id},
        {"ids are dense from 1 in order of first use", test_ids_dense_from_one},
        {"the empty string is id 0", test_empty_is_zero},
        {"a lookup without add finds nothing new", test_absent_without_add},
        {"ids survive growth", test_growth_keeps_ids},
        {NULL, NULL},
    };
    return xpv_test_run("intern", tests, 0);
}
