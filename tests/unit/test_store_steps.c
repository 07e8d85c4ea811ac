/*
 * test_store_steps.c — store/steps.c on hand-made rows: every column comes
 * back in place with unknown (NULL) values flagged, never 0; each query's
 * filter and order; the memcpy sum; the aggregates over several profiles
 * (step times, device sums, per-step averages, the per-host view and its
 * slowest host); and a broken query reported as an error.
 */
#include "testutil.h"
#include "store/index_db.h"
#include "store/steps.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static sqlite3 *db;
/* Profile 1 (host a): steps 0..2 for all devices, step 1 also per device
 * (0 and 3); step 2 has no start. Profile 2 (host b): steps 0, 1, slower. */
static const char *const ROWS =
    "UPDATE profiles SET host='a';"
    "INSERT INTO profiles(id, path, host) VALUES(2, 'q', 'b');"
    "INSERT INTO steps(profile_id, step, name, device, start_ps, duration_ps, compute_ps,"
    " collective_ps, memcpy_h2d_ps, memcpy_d2h_ps, memcpy_d2d_ps, memcpy_other_ps, memset_ps,"
    " idle_ps, host_wait_ps) VALUES"
    " (1, 1, 's1', -1, 1000, 500, 300, 50, 10, NULL, 5, NULL, 1, 100, 40),"
    " (1, 0, 's0', -1, 0, 1000, 600, NULL, NULL, NULL, NULL, NULL, NULL, 400, NULL),"
    " (1, 2, NULL, -1, NULL, 700, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),"
    " (1, 1, 's1', 3, 1000, 500, 200, 0, 1, 2, 3, 4, 0, 300, NULL),"
    " (1, 1, 's1', 0, 1000, 500, 400, 0, NULL, NULL, NULL, NULL, 0, 100, NULL),"
    " (2, 0, 's0', -1, 0, 3000, 900, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),"
    " (2, 1, 's1', -1, 3000, 200, 100, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);"
    /* profile 3: step 0 ran on device 0 in [0, 200), on device 1 in [1000, 1400) */
    "INSERT INTO profiles(id, path, host) VALUES(3, 'r', 'c');"
    "INSERT INTO steps(profile_id, step, name, device, start_ps, duration_ps) VALUES"
    " (3, 0, 's0', -1, 0, 300), (3, 0, 's0', 0, 0, 200), (3, 0, 's0', 1, 1000, 400);";

static void setup(void)
{
    if (!db) db = xpv_test_index_with(1, ROWS);
}

/* The rows of a cursor, at most 8. */
static size_t rows_of(xpv_store_cursor *c, xpv_store_step *v)
{
    xpv_err err = {{0}};
    size_t n = 0;
    int rc;
    while (n < 8 && (rc = xpv_store_steps_next(c, &v[n], &err)) == 1)
        n++;
    CU_ASSERT_EQUAL(rc, 0);
    xpv_store_cursor_close(c);
    return n;
}

static void test_rows_of_a_device(void)
{
    setup();
    xpv_store_cursor c;
    xpv_store_step v[8];
    xpv_err err = {{0}};
    CU_ASSERT_EQUAL_FATAL(xpv_store_steps_open(&c, db, 1, -1, &err), 0);
    /* names point into the statement: check the first row before the next */
    xpv_store_step first;
    CU_ASSERT_EQUAL_FATAL(xpv_store_steps_next(&c, &first, &err), 1);
    CU_ASSERT_EQUAL(first.step, 0);
    CU_ASSERT_EQUAL(first.name.n, 2);
    CU_ASSERT_STRING_EQUAL(first.name.s, "s0");
    CU_ASSERT_EQUAL(first.device, -1);
    CU_ASSERT_EQUAL(first.ps[XPV_STORE_STEP_DURATION], 1000);
    CU_ASSERT_EQUAL(first.ps[XPV_STORE_STEP_IDLE], 400);
    CU_ASSERT_TRUE(xpv_store_step_known(&first, XPV_STORE_STEP_START));
    CU_ASSERT_FALSE(xpv_store_step_known(&first, XPV_STORE_STEP_COLLECTIVE));
    CU_ASSERT_FALSE(xpv_store_step_known(&first, XPV_STORE_STEP_HOST_WAIT));
    int64_t ps = -1;
    CU_ASSERT_FALSE(xpv_store_step_memcpy(&first, &ps));
    CU_ASSERT_EQUAL(ps, 0);
    size_t n = rows_of(&c, v);
    CU_ASSERT_EQUAL_FATAL(n, 2);
    CU_ASSERT_EQUAL(v[0].step, 1);
    CU_ASSERT_EQUAL(v[0].ps[XPV_STORE_STEP_START], 1000);
    CU_ASSERT_EQUAL(v[0].ps[XPV_STORE_STEP_COMPUTE], 300);
    CU_ASSERT_EQUAL(v[0].ps[XPV_STORE_STEP_COLLECTIVE], 50);
    CU_ASSERT_EQUAL(v[0].ps[XPV_STORE_STEP_MEMSET], 1);
    CU_ASSERT_EQUAL(v[0].ps[XPV_STORE_STEP_HOST_WAIT], 40);
    CU_ASSERT_TRUE(xpv_store_step_memcpy(&v[0], &ps));
    CU_ASSERT_EQUAL(ps, 15); /* 10 + 5, two directions unknown */
    CU_ASSERT_EQUAL(v[1].step, 2);
    CU_ASSERT_PTR_NULL(v[1].name.s);
    CU_ASSERT_FALSE(xpv_store_step_known(&v[1], XPV_STORE_STEP_START));
    CU_ASSERT_EQUAL(v[1].known, 1u << XPV_STORE_STEP_DURATION);

    CU_ASSERT_EQUAL_FATAL(xpv_store_steps_open(&c, db, 1, 3, &err), 0);
    CU_ASSERT_EQUAL_FATAL(rows_of(&c, v), 1);
    CU_ASSERT_EQUAL(v[0].device, 3);
    CU_ASSERT_TRUE(xpv_store_step_memcpy(&v[0], &ps));
    CU_ASSERT_EQUAL(ps, 10);
    CU_ASSERT_EQUAL_FATAL(xpv_store_steps_open(&c, db, 7, -1, &err), 0);
    CU_ASSERT_EQUAL(rows_of(&c, v), 0);
}

static void test_timed_and_lookups(void)
{
    setup();
    xpv_store_cursor c;
    xpv_store_step v[8];
    xpv_err err = {{0}};
    CU_ASSERT_EQUAL_FATAL(xpv_store_steps_open_timed(&c, db, 1, &err), 0);
    CU_ASSERT_EQUAL_FATAL(rows_of(&c, v), 2); /* step 2 has no start */
    CU_ASSERT_EQUAL(v[0].step, 0);
    CU_ASSERT_EQUAL(v[1].step, 1);
    CU_ASSERT_EQUAL(v[1].device, -1);

    int *devs;
    size_t n;
    CU_ASSERT_EQUAL_FATAL(xpv_store_steps_devices(db, 1, &devs, &n, &err), 0);
    CU_ASSERT_EQUAL_FATAL(n, 2);
    CU_ASSERT_EQUAL(devs[0], 0);
    CU_ASSERT_EQUAL(devs[1], 3);
    free(devs);
    CU_ASSERT_EQUAL(xpv_store_steps_devices(db, 2, &devs, &n, &err), 0);
    CU_ASSERT_EQUAL(n, 0);
    free(devs);

    int64_t step = -1;
    CU_ASSERT_EQUAL(xpv_store_steps_at(db, 1, -1, 1200, &step, &err), 1);
    CU_ASSERT_EQUAL(step, 1);
    CU_ASSERT_EQUAL(xpv_store_steps_at(db, 1, -1, 999, &step, &err), 1);
    CU_ASSERT_EQUAL(step, 0);
    CU_ASSERT_EQUAL(xpv_store_steps_at(db, 1, -1, 1500, &step, &err), 0); /* the end is outside */
}

/* Compile time counts only where the devices waited on it (within host
 * wait), autotuning in full; both over the all-devices rows' step time. */
static void test_compile_share(void)
{
    setup();
    const int64_t both[] = {1, 2};
    xpv_err err = {{0}};
    CU_ASSERT_EQUAL_FATAL(sqlite3_exec(db,
                                       "UPDATE steps SET compile_ps = 60, autotune_ps = 20 WHERE"
                                       " profile_id = 1 AND step = 1 AND device = -1",
                                       NULL, NULL, NULL),
                          SQLITE_OK);
    xpv_store_step_compile c;
    CU_ASSERT_EQUAL_FATAL(xpv_store_steps_compile(db, both, 2, &c, &err), 0);
    CU_ASSERT_DOUBLE_EQUAL(c.duration_ps, 500 + 1000 + 700 + 3000 + 200, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(c.compile_ps, 40, 1e-9); /* host wait was 40 */
    CU_ASSERT_DOUBLE_EQUAL(c.autotune_ps, 20, 1e-9);
    sqlite3_exec(db, "UPDATE steps SET compile_ps = NULL, autotune_ps = NULL", NULL, NULL, NULL);
}

/* A step the devices ran apart spans to the latest device's end. */
static void test_span_of_devices_apart(void)
{
    setup();
    xpv_store_cursor c;
    xpv_store_step v[8];
    xpv_err err = {{0}};
    CU_ASSERT_EQUAL_FATAL(xpv_store_steps_open_timed(&c, db, 3, &err), 0);
    CU_ASSERT_EQUAL_FATAL(rows_of(&c, v), 1);
    CU_ASSERT_EQUAL(v[0].ps[XPV_STORE_STEP_DURATION], 300);
    CU_ASSERT_EQUAL(v[0].span_end_ps, 1400);
    CU_ASSERT_EQUAL_FATAL(xpv_store_steps_open(&c, db, 3, 1, &err), 0);
    CU_ASSERT_EQUAL_FATAL(rows_of(&c, v), 1);
    CU_ASSERT_EQUAL(v[0].span_end_ps, 1400); /* a device row: its own end */
    CU_ASSERT_EQUAL_FATAL(xpv_store_steps_open_timed(&c, db, 1, &err), 0);
    CU_ASSERT_EQUAL_FATAL(rows_of(&c, v), 2);
    CU_ASSERT_EQUAL(v[1].span_end_ps, 1500); /* devices sharing the window: its end */
    int64_t step = -1;
    CU_ASSERT_EQUAL(xpv_store_steps_at(db, 3, -1, 1200, &step, &err), 1);
    CU_ASSERT_EQUAL(step, 0);
    CU_ASSERT_EQUAL(xpv_store_steps_at(db, 3, -1, 1400, &step, &err), 0);
    CU_ASSERT_EQUAL(xpv_store_steps_at(db, 3, 1, 1200, &step, &err), 1); /* its own window */
    CU_ASSERT_EQUAL(step, 0);
    CU_ASSERT_EQUAL(xpv_store_steps_at(db, 3, 0, 250, &step, &err), 1); /* past it: the span */
    CU_ASSERT_EQUAL(step, 0);
}

/* Steps the devices ran apart overlap: an instant on a device is in the
 * device's own step, not the earliest-starting one whose span holds it. */
static void test_at_on_device(void)
{
    setup();
    xpv_err err = {{0}};
    CU_ASSERT_EQUAL_FATAL(sqlite3_exec(db,
                                       "INSERT INTO steps(profile_id, step, name, device, start_ps,"
                                       " duration_ps) VALUES (3, 1, 's1', -1, 300, 300),"
                                       " (3, 1, 's1', 0, 300, 200), (3, 1, 's1', 1, 1400, 400)",
                                       NULL, NULL, NULL),
                          SQLITE_OK);
    int64_t step = -1;
    CU_ASSERT_EQUAL(xpv_store_steps_at(db, 3, -1, 1100, &step, &err), 1);
    CU_ASSERT_EQUAL(step, 0); /* the combined spans: the earliest start */
    CU_ASSERT_EQUAL(xpv_store_steps_at(db, 3, 0, 1100, &step, &err), 1);
    CU_ASSERT_EQUAL(step, 0); /* device 0 ran neither then: the combined span */
    CU_ASSERT_EQUAL(xpv_store_steps_at(db, 3, 1, 1500, &step, &err), 1);
    CU_ASSERT_EQUAL(step, 1); /* device 1's own step 1 */
    CU_ASSERT_EQUAL(xpv_store_steps_at(db, 3, 0, 350, &step, &err), 1);
    CU_ASSERT_EQUAL(step, 1);
    sqlite3_exec(db, "DELETE FROM steps WHERE profile_id = 3 AND step = 1", NULL, NULL, NULL);
}

static void test_over_hosts(void)
{
    setup();
    const int64_t both[] = {1, 2}, one[] = {1};
    xpv_err err = {{0}};
    CU_ASSERT_EQUAL(xpv_store_steps_profiles_with_steps(db, both, 2, &err), 2);
    CU_ASSERT_EQUAL(xpv_store_steps_profiles_with_steps(db, one, 1, &err), 1);

    /* per step the slowest host: 3000, 500, 700 */
    xpv_store_step_times t;
    CU_ASSERT_EQUAL_FATAL(xpv_store_steps_times(db, both, 2, &t, &err), 0);
    CU_ASSERT_EQUAL(t.steps, 3);
    CU_ASSERT_DOUBLE_EQUAL(t.avg_ps, 1400, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(t.min_ps, 500, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(t.max_ps, 3000, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(t.sd_ps, sqrt((1600.0 * 1600 + 900 * 900 + 700 * 700) / 3), 1e-6);

    xpv_store_step_sums s;
    CU_ASSERT_EQUAL_FATAL(xpv_store_steps_device_sums(db, both, 2, &s, &err), 0);
    CU_ASSERT_EQUAL(s.steps, 1);
    CU_ASSERT_EQUAL(s.devices, 2);
    CU_ASSERT_DOUBLE_EQUAL(s.duration_ps, 1000, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(s.compute_ps, 600, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(s.idle_ps, 400, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(s.memcpy_ps, 10, 1e-9);

    /* device rows exist, so the averages are over them: step 1 only */
    xpv_store_cursor c;
    xpv_store_step_avg a;
    CU_ASSERT_EQUAL_FATAL(xpv_store_steps_open_averages(&c, db, both, 2, &err), 0);
    CU_ASSERT_EQUAL_FATAL(xpv_store_steps_averages_next(&c, &a, &err), 1);
    CU_ASSERT_EQUAL(a.step, 1);
    CU_ASSERT_EQUAL(a.rows, 2);
    CU_ASSERT_DOUBLE_EQUAL(a.avg_ps[XPV_STORE_STEP_AVG_COMPUTE], 300, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(a.avg_ps[XPV_STORE_STEP_AVG_MEMCPY], 10, 1e-9); /* 10, then unknown */
    CU_ASSERT_FALSE(a.known & (1u << XPV_STORE_STEP_AVG_HOST_WAIT));
    CU_ASSERT_EQUAL(xpv_store_steps_averages_next(&c, &a, &err), 0);
    xpv_store_cursor_close(&c);
    /* profile 2 alone has none: its all-devices rows, by step */
    const int64_t two[] = {2};
    CU_ASSERT_EQUAL_FATAL(xpv_store_steps_open_averages(&c, db, two, 1, &err), 0);
    CU_ASSERT_EQUAL(xpv_store_steps_averages_next(&c, &a, &err), 1);
    CU_ASSERT_DOUBLE_EQUAL(a.avg_ps[XPV_STORE_STEP_AVG_DURATION], 3000, 1e-9);
    CU_ASSERT_EQUAL(xpv_store_steps_averages_next(&c, &a, &err), 1);
    CU_ASSERT_EQUAL(a.step, 1);
    CU_ASSERT_EQUAL(xpv_store_steps_averages_next(&c, &a, &err), 0);
    xpv_store_cursor_close(&c);
}

static void test_hosts_view(void)
{
    setup();
    const int64_t both[] = {1, 2};
    xpv_err err = {{0}};
    xpv_store_cursor c;
    xpv_store_step_host h;
    CU_ASSERT_EQUAL_FATAL(xpv_store_steps_open_hosts(&c, db, both, 2, &err), 0);
    /* step 0: a (1000) then b (3000, slowest, 2000 behind) */
    CU_ASSERT_EQUAL_FATAL(xpv_store_steps_hosts_next(&c, &h, &err), 1);
    CU_ASSERT_EQUAL(h.step, 0);
    CU_ASSERT_STRING_EQUAL(h.host.s, "a");
    CU_ASSERT_FALSE(h.slowest);
    CU_ASSERT_EQUAL(h.ps[XPV_STORE_STEP_HOST_BEHIND], 0);
    CU_ASSERT_FALSE(h.known & (1u << XPV_STORE_STEP_HOST_MEMCPY));
    CU_ASSERT_EQUAL_FATAL(xpv_store_steps_hosts_next(&c, &h, &err), 1);
    CU_ASSERT_STRING_EQUAL(h.host.s, "b");
    CU_ASSERT_TRUE(h.slowest);
    CU_ASSERT_EQUAL(h.ps[XPV_STORE_STEP_HOST_DURATION], 3000);
    CU_ASSERT_EQUAL(h.ps[XPV_STORE_STEP_HOST_BEHIND], 2000);
    /* step 1: a is the slowest (500 against 200), with its memcpy summed */
    CU_ASSERT_EQUAL_FATAL(xpv_store_steps_hosts_next(&c, &h, &err), 1);
    CU_ASSERT_EQUAL(h.step, 1);
    CU_ASSERT_TRUE(h.slowest);
    CU_ASSERT_EQUAL(h.ps[XPV_STORE_STEP_HOST_MEMCPY], 15);
    CU_ASSERT_EQUAL(xpv_store_steps_hosts_next(&c, &h, &err), 1);
    /* step 2: a alone, as slow as itself: not the slowest */
    CU_ASSERT_EQUAL(xpv_store_steps_hosts_next(&c, &h, &err), 1);
    CU_ASSERT_EQUAL(h.step, 2);
    CU_ASSERT_FALSE(h.slowest);
    CU_ASSERT_EQUAL(xpv_store_steps_hosts_next(&c, &h, &err), 0);
    xpv_store_cursor_close(&c);

    char host[8];
    int64_t slow = 0, steps = 0;
    CU_ASSERT_EQUAL(
        xpv_store_steps_slowest_host(db, both, 2, host, sizeof host, &slow, &steps, &err), 1);
    CU_ASSERT_STRING_EQUAL(host, "a"); /* a tie, 1 each: by name */
    CU_ASSERT_EQUAL(slow, 1);
    CU_ASSERT_EQUAL(steps, 3);
    const int64_t one[] = {2};
    CU_ASSERT_EQUAL(
        xpv_store_steps_slowest_host(db, one, 1, host, sizeof host, &slow, &steps, &err), 0);
}

static void test_errors(void)
{
    setup();
    xpv_err err = {{0}};
    xpv_store_cursor c;
    CU_ASSERT_EQUAL(xpv_db_exec(db, "ALTER TABLE steps RENAME TO steps_gone", &err), 0);
    CU_ASSERT_EQUAL(xpv_store_steps_open(&c, db, 1, -1, &err), -1);
    CU_ASSERT_PTR_NULL(c.st);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "no such table"));
    xpv_store_step_times t;
    CU_ASSERT_EQUAL(xpv_store_steps_times(db, (const int64_t[]){1}, 1, &t, &err), -1);
    CU_ASSERT_EQUAL(xpv_db_exec(db, "ALTER TABLE steps_gone RENAME TO steps", &err), 0);
}

int main(void)
{
    static const xpv_test_case tests[] = {
        {"a device's rows, unknown values flagged", test_rows_of_a_device},
        {"timed rows, devices, the step at a time", test_timed_and_lookups},
        {"a step the devices ran apart spans them", test_span_of_devices_apart},
        {"the step at a time on a device", test_at_on_device},
        {"aggregates over hosts", test_over_hosts},
        {"the per-host view and its slowest host", test_hosts_view},
        {"the share of step time compiling", test_compile_share},
        {"a broken query is an error", test_errors},
        {NULL, NULL},
    };
    return xpv_test_run("store_steps", tests, 0); /* the index goes with the process */
}
