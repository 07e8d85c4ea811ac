/*
 * test_winidx.c — grouped time windows (common/xpv_winidx.h): a query finds
 * exactly the windows a linear scan finds, and over a device's disjoint
 * windows it looks at no window it does not return, however far apart the
 * devices run their steps (TF GPU traces: windows 0.65 s apart, 20 ms steps).
 */
#include "testutil.h"
#include "common/xpv_winidx.h"

#define STEPS 200
#define STEP_PS 20000000000LL    /* 20 ms */
#define OFFSET_PS 650000000000LL /* 0.65 s */

static int64_t win_start(size_t dev, size_t k)
{
    return (int64_t)k * STEP_PS + (int64_t)dev * OFFSET_PS;
}

static void test_offset_devices(void)
{
    xpv_winidx x = {0};
    for (size_t k = 0; k < STEPS; k++)
        for (size_t dev = 0; dev < 2; dev++)
            xpv_winidx_add(&x, dev, win_start(dev, k), win_start(dev, k) + STEP_PS - 1000, k);
    xpv_winidx_add(&x, 1, 5, 5, 0); /* empty: dropped */
    xpv_winidx_finish(&x, 2);
    CU_ASSERT_EQUAL(x.n, 2 * STEPS);
    size_t events = 0, visited = 0;
    for (size_t dev = 0; dev < 2; dev++)
        for (int64_t t = 0; t < (STEPS + 40) * STEP_PS; t += STEP_PS / 7) {
            int64_t e = t + STEP_PS / 3;
            xpv_winidx_iter it;
            xpv_winidx_query(&x, dev, t, e, &it);
            size_t found = 0;
            for (const xpv_winidx_entry *w; (w = xpv_winidx_next(&it));) {
                CU_ASSERT_EQUAL(w->group, dev);
                CU_ASSERT(w->start < e && w->end > t);
                found++;
            }
            size_t expect = 0;
            for (size_t k = 0; k < STEPS; k++)
                expect += win_start(dev, k) < e && win_start(dev, k) + STEP_PS - 1000 > t;
            CU_ASSERT_EQUAL(found, expect);
            CU_ASSERT_EQUAL(it.visited, found); /* nothing looked at in vain */
            events++, visited += it.visited;
        }
    CU_ASSERT(visited <= 2 * events);
    xpv_winidx_free(&x);
}

/* Overlapping windows (a hull beside marked windows) are found all the same. */
static void test_overlapping(void)
{
    xpv_winidx x = {0};
    xpv_winidx_add(&x, 0, 0, 1000, 0);
    xpv_winidx_add(&x, 0, 100, 200, 1);
    xpv_winidx_add(&x, 0, 300, 400, 2);
    xpv_winidx_finish(&x, 1);
    xpv_winidx_iter it;
    xpv_winidx_query(&x, 0, 500, 600, &it);
    const xpv_winidx_entry *w = xpv_winidx_next(&it);
    CU_ASSERT_PTR_NOT_NULL_FATAL(w);
    CU_ASSERT_EQUAL(w->key, 0);
    CU_ASSERT_PTR_NULL(xpv_winidx_next(&it));
    xpv_winidx_query(&x, 0, 150, 350, &it);
    size_t keys = 0;
    for (; (w = xpv_winidx_next(&it));)
        keys |= (size_t)1 << w->key;
    CU_ASSERT_EQUAL(keys, 7);
    xpv_winidx_query(&x, 3, 0, 10, &it); /* no such group */
    CU_ASSERT_PTR_NULL(xpv_winidx_next(&it));
    xpv_winidx_free(&x);
}

int main(void)
{
    static const xpv_test_case tests[] = {
        {"offset devices: one lookup per event", test_offset_devices},
        {"overlapping windows", test_overlapping},
        {NULL, NULL},
    };
    return xpv_test_run("winidx", tests, 0);
}
