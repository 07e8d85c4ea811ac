/*
 * test_settle.c — the settle rule: a file is ready once its size and mtime
 * have not changed for the settle time; a file seen first with an old mtime
 * is ready at once; growth restarts the wait; the tracker forgets files a
 * scan no longer sees; the next wake-up is the earliest due file.
 */
#include "testutil.h"
#include "indexer/settle.h"

#define MS 1000000LL
#define T0 (1700000000000LL * MS) /* a wall-clock time, in ns */

static void test_growing_file_waits(void)
{
    xpv_settle *s = xpv_settle_new(300 * MS);
    /* A profiler writes 3 pieces 100 ms apart; mtime follows each write. */
    CU_ASSERT_EQUAL(xpv_settle_observe(s, "a.json", 100, T0, T0 + 1 * MS), 0);
    CU_ASSERT_EQUAL(xpv_settle_observe(s, "a.json", 200, T0 + 100 * MS, T0 + 101 * MS), 0);
    CU_ASSERT_EQUAL(xpv_settle_observe(s, "a.json", 300, T0 + 200 * MS, T0 + 201 * MS), 0);
    CU_ASSERT_EQUAL(xpv_settle_count(s), 1);
    /* Unchanged, but not yet for 300 ms since it was last seen changing. */
    CU_ASSERT_EQUAL(xpv_settle_observe(s, "a.json", 300, T0 + 200 * MS, T0 + 400 * MS), 0);
    CU_ASSERT_EQUAL(xpv_settle_next_due(s, T0 + 400 * MS), 101 * MS);
    /* 300 ms after the last change was first seen: ready, and forgotten. */
    CU_ASSERT_EQUAL(xpv_settle_observe(s, "a.json", 300, T0 + 200 * MS, T0 + 501 * MS), 1);
    CU_ASSERT_EQUAL(xpv_settle_count(s), 0);
    CU_ASSERT_EQUAL(xpv_settle_next_due(s, T0 + 501 * MS), -1);
    xpv_settle_free(s);
}

static void test_same_size_new_mtime_restarts(void)
{
    xpv_settle *s = xpv_settle_new(300 * MS);
    CU_ASSERT_EQUAL(xpv_settle_observe(s, "b.pb", 64, T0, T0), 0);
    /* Rewritten in place with the same size: the mtime moved, so wait again. */
    CU_ASSERT_EQUAL(xpv_settle_observe(s, "b.pb", 64, T0 + 250 * MS, T0 + 299 * MS), 0);
    CU_ASSERT_EQUAL(xpv_settle_observe(s, "b.pb", 64, T0 + 250 * MS, T0 + 400 * MS), 0);
    CU_ASSERT_EQUAL(xpv_settle_observe(s, "b.pb", 64, T0 + 250 * MS, T0 + 599 * MS), 1);
    xpv_settle_free(s);
}

static void test_old_file_ready_at_once(void)
{
    xpv_settle *s = xpv_settle_new(300 * MS);
    /* Written a minute ago and moved in (or found at start): no wait. */
    CU_ASSERT_EQUAL(xpv_settle_observe(s, "old.xplane.pb", 10, T0 - 60000 * MS, T0), 1);
    CU_ASSERT_EQUAL(xpv_settle_count(s), 0);
    /* An mtime in the future (clock skew) is not old: it must hold still. */
    CU_ASSERT_EQUAL(xpv_settle_observe(s, "skew.pb", 10, T0 + 5000 * MS, T0), 0);
    CU_ASSERT_EQUAL(xpv_settle_observe(s, "skew.pb", 10, T0 + 5000 * MS, T0 + 300 * MS), 1);
    xpv_settle_free(s);
}

static void test_sweep_forgets_unseen(void)
{
    xpv_settle *s = xpv_settle_new(300 * MS);
    char key[32];
    for (int i = 0; i < 100; i++) { /* grows the table past its first size */
        snprintf(key, sizeof key, "f%03d.json", i);
        CU_ASSERT_EQUAL(xpv_settle_observe(s, key, i, T0, T0 + i * MS), 0);
    }
    CU_ASSERT_EQUAL(xpv_settle_count(s), 100);
    CU_ASSERT_EQUAL(xpv_settle_next_due(s, T0), 300 * MS);
    xpv_settle_sweep(s); /* every one was seen in this scan: all kept */
    CU_ASSERT_EQUAL(xpv_settle_count(s), 100);
    /* Next scan sees only the even ones (the odd ones were deleted). */
    for (int i = 0; i < 100; i += 2) {
        snprintf(key, sizeof key, "f%03d.json", i);
        CU_ASSERT_EQUAL(xpv_settle_observe(s, key, i, T0, T0 + 350 * MS), i > 50 ? 0 : 1);
    }
    xpv_settle_sweep(s);
    CU_ASSERT_EQUAL(xpv_settle_count(s), 24); /* even ones above 50: still waiting */
    /* A deleted file that comes back is a new sighting, not a stale one. */
    CU_ASSERT_EQUAL(xpv_settle_observe(s, "f001.json", 1, T0 + 360 * MS, T0 + 361 * MS), 0);
    xpv_settle_free(s);
}

static void test_zero_settle(void)
{
    xpv_settle *s = xpv_settle_new(0);
    CU_ASSERT_EQUAL(xpv_settle_observe(s, "x", 1, T0, T0), 1);
    CU_ASSERT_EQUAL(xpv_settle_count(s), 0);
    xpv_settle_free(s);
}

int main(void)
{
    static const xpv_test_case tests[] = {
        {"a growing file waits for the settle time", test_growing_file_waits},
        {"same size, new mtime waits again", test_same_size_new_mtime_restarts},
        {"an old file is ready at once; a future mtime is not", test_old_file_ready_at_once},
        {"sweep forgets files a scan no longer sees", test_sweep_forgets_unseen},
        {"settle 0 reads at once", test_zero_settle},
        {NULL, NULL},
    };
    return xpv_test_run("settle", tests, 0);
}
