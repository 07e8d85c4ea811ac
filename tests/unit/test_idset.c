/*
 * test_idset.c — the sorted id set (common/xpv_idset.c): adds and removals
 * report whether they changed the set, the ids stay strictly ascending
 * through growth, and the set agrees with a model after random use.
 */
#include "testutil.h"
#include "common/xpv_idset.h"

static void test_add_del_has(void)
{
    xpv_idset s = {0};
    CU_ASSERT_FALSE(xpv_idset_has(&s, 1));
    CU_ASSERT_FALSE(xpv_idset_del(&s, 1)); /* empty */
    CU_ASSERT_TRUE(xpv_idset_add(&s, 5));
    CU_ASSERT_TRUE(xpv_idset_add(&s, INT64_MIN));
    CU_ASSERT_TRUE(xpv_idset_add(&s, INT64_MAX));
    CU_ASSERT_TRUE(xpv_idset_add(&s, -3));
    CU_ASSERT_FALSE(xpv_idset_add(&s, 5)); /* twice */
    CU_ASSERT_EQUAL(s.n, 4);
    const int64_t want[] = {INT64_MIN, -3, 5, INT64_MAX};
    for (size_t i = 0; i < 4; i++)
        CU_ASSERT_EQUAL(s.ids[i], want[i]);
    CU_ASSERT_TRUE(xpv_idset_del(&s, INT64_MIN)); /* the first */
    CU_ASSERT_TRUE(xpv_idset_del(&s, INT64_MAX)); /* the last */
    CU_ASSERT_FALSE(xpv_idset_del(&s, 4));
    CU_ASSERT_EQUAL(s.n, 2);
    CU_ASSERT_TRUE(xpv_idset_has(&s, -3) && xpv_idset_has(&s, 5));
    xpv_idset_free(&s);
}

static void test_clear_and_free(void)
{
    xpv_idset s = {0};
    for (int64_t id = 100; id > 0; id--) /* descending: every add moves the rest */
        xpv_idset_add(&s, id);
    CU_ASSERT_EQUAL(s.n, 100);
    CU_ASSERT_EQUAL(s.ids[0], 1);
    CU_ASSERT_EQUAL(s.ids[99], 100);
    xpv_idset_clear(&s);
    CU_ASSERT_EQUAL(s.n, 0);
    CU_ASSERT_FALSE(xpv_idset_has(&s, 5));
    xpv_idset_free(&s);
    CU_ASSERT_PTR_NULL(s.ids);
}

static void test_against_model(void)
{
    enum { U = 300, OPS = 20000 };
    unsigned char in[U] = {0};
    xpv_idset s = {0};
    uint64_t rng = 7;
    for (int op = 0; op < OPS; op++) {
        uint64_t r = xpv_test_xorshift(&rng);
        int64_t id = (int64_t)(r % U) - U / 2;
        if (r >> 63) {
            CU_ASSERT_EQUAL_FATAL(xpv_idset_add(&s, id), !in[id + U / 2]);
            in[id + U / 2] = 1;
        } else {
            CU_ASSERT_EQUAL_FATAL(xpv_idset_del(&s, id), in[id + U / 2]);
            in[id + U / 2] = 0;
        }
    }
    size_t n = 0;
    for (int64_t id = -U / 2; id < U - U / 2; id++) {
        CU_ASSERT_EQUAL_FATAL(xpv_idset_has(&s, id), in[id + U / 2]);
        n += in[id + U / 2];
    }
    CU_ASSERT_EQUAL(s.n, n);
    for (size_t i = 1; i < s.n; i++)
        CU_ASSERT_TRUE_FATAL(s.ids[i - 1] < s.ids[i]);
    xpv_idset_free(&s);
}

int main(void)
{
    static const xpv_test_case tests[] = {
        {"adds and removals report a change", test_add_del_has},
        {"random use agrees with a model", test_against_model},
        {"clearing empties, freeing releases", test_clear_and_free},
        {NULL, NULL},
    };
    return xpv_test_run("idset", tests, 0);
}
