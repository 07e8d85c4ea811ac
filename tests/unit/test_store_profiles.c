/*
 * test_store_profiles.c — store/profiles.c on hand-made rows: the whole
 * row and the state row with unknown (NULL) values flagged, never 0; the
 * list orders (newest first, best indexed first, companions apart); runs
 * and hosts; the checks and aggregates over a scope's profiles (events,
 * environment, device facts); and a broken query reported as an error.
 */
#include "testutil.h"
#include "store/index_db.h"
#include "store/profiles.h"

#include <stdlib.h>
#include <string.h>

static sqlite3 *db;
/* Run r1: host a (1, ok, with a companion 4), host b (5 ok, 2 failed);
 * run r2: 3, pending, all unknown; 6: no run, failed, the newest. */
static const char *const ROWS =
    "UPDATE profiles SET path='r1/a.xplane.pb', run='r1', host='a', format='xplane',"
    " producer='jax', size_bytes=100, mtime_ns=3000, status='ok', partial=0, events=10,"
    " start_ns=1000, end_ns=5000, devices='[\"GPU 0\",\"GPU 1\"]', facts='{\"peak\":\"100\","
    " \"device.gpu0.clock_rate\":1410000, \"device.gpu0.device_vendor\":\"Nvidia\","
    " \"device.gpu1.clock_rate\":1410000}', phase_counts='{\"X\":3}', step_source='steps',"
    " step_count=2, kernel_count=7, warnings='[\"w\"]', index_seconds=0.5, indexed_at=12.5;"
    "INSERT INTO profiles(id, path, run, host, format, mtime_ns, status, partial, events, facts,"
    " devices, companion_of) VALUES"
    " (2, 'r1/b.xplane.pb', 'r1', 'b', 'xplane', 2000, 'failed', 1, 0,"
    "  '{\"peak\":\"100\", \"device.gpu0.clock_rate\":1500000}', 'not json', NULL),"
    " (3, 'r2/a.json', 'r2', 'a', 'jax_trace_json', 1000, 'pending', 0, NULL, NULL, NULL, NULL),"
    " (4, 'r1/a.trace.json', 'r1', 'a', 'chrome_json', 4000, 'ok', 0, 5, NULL, NULL, 1),"
    " (5, 'r1/c.xplane.pb', 'r1', 'b', 'xplane', 2500, 'ok', 0, 3, NULL, NULL, NULL),"
    " (6, 'loose.json', NULL, NULL, NULL, 6000, 'failed', 0, 8, NULL, NULL, NULL);";

static void setup(void)
{
    if (!db) db = xpv_test_index_with(1, ROWS);
}

static int text_is(xpv_store_text t, const char *s)
{
    return t.s && t.n == strlen(s) && strcmp(t.s, s) == 0;
}

static void test_whole_row(void)
{
    setup();
    xpv_store_cursor c;
    xpv_store_profile r;
    xpv_err err = {{0}};
    CU_ASSERT_EQUAL_FATAL(xpv_store_profiles_get(&c, db, 1, &r, &err), 1);
    CU_ASSERT_EQUAL(r.id, 1);
    CU_ASSERT_TRUE(text_is(r.path, "r1/a.xplane.pb") && text_is(r.run, "r1"));
    CU_ASSERT_TRUE(text_is(r.host, "a") && text_is(r.format, "xplane"));
    CU_ASSERT_TRUE(text_is(r.producer, "jax") && text_is(r.status, "ok"));
    CU_ASSERT_PTR_NULL(r.error.s);
    CU_ASSERT_TRUE(text_is(r.devices, "[\"GPU 0\",\"GPU 1\"]"));
    CU_ASSERT_TRUE(text_is(r.phase_counts, "{\"X\":3}") && text_is(r.warnings, "[\"w\"]"));
    CU_ASSERT_TRUE(text_is(r.step_source, "steps"));
    CU_ASSERT_PTR_NOT_NULL(r.facts.s);
    CU_ASSERT_EQUAL(r.partial, 0);
    int64_t want[XPV_STORE_PROFILE_NNUMS] = {100, 3000, 10, 1000, 5000, 2, 7, 0};
    for (int i = 0; i < XPV_STORE_PROFILE_NNUMS; i++)
        CU_ASSERT_EQUAL(r.num[i], want[i]);
    CU_ASSERT_EQUAL(r.known, (1u << XPV_STORE_PROFILE_COMPANION_OF) - 1);
    CU_ASSERT_TRUE(r.index_seconds_known);
    CU_ASSERT_DOUBLE_EQUAL(r.index_seconds, 0.5, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(r.indexed_at, 12.5, 1e-12);
    xpv_store_cursor_close(&c);

    CU_ASSERT_EQUAL_FATAL(xpv_store_profiles_get(&c, db, 3, &r, &err), 1);
    CU_ASSERT_PTR_NULL(r.producer.s);
    CU_ASSERT_PTR_NULL(r.devices.s);
    CU_ASSERT_EQUAL(r.known, 1u << XPV_STORE_PROFILE_MTIME_NS);
    CU_ASSERT_EQUAL(r.num[XPV_STORE_PROFILE_EVENTS], 0);
    CU_ASSERT_FALSE(r.index_seconds_known);
    xpv_store_cursor_close(&c);
    CU_ASSERT_EQUAL_FATAL(xpv_store_profiles_get(&c, db, 4, &r, &err), 1);
    CU_ASSERT_TRUE(xpv_store_profile_known(&r, XPV_STORE_PROFILE_COMPANION_OF));
    CU_ASSERT_EQUAL(r.num[XPV_STORE_PROFILE_COMPANION_OF], 1);
    xpv_store_cursor_close(&c);
    CU_ASSERT_EQUAL(xpv_store_profiles_get(&c, db, 99, &r, &err), 0);
    CU_ASSERT_PTR_NULL(c.st);
}

/* The ids of the whole rows of an open cursor, at most 8. */
static size_t ids_of(xpv_store_cursor *c, int64_t *ids)
{
    xpv_store_profile r;
    xpv_err err = {{0}};
    size_t n = 0;
    int rc;
    while (n < 8 && (rc = xpv_store_profiles_next(c, &r, &err)) == 1)
        ids[n++] = r.id;
    CU_ASSERT_EQUAL(rc, 0);
    xpv_store_cursor_close(c);
    return n;
}

static void test_lists(void)
{
    setup();
    xpv_store_cursor c;
    xpv_err err = {{0}};
    int64_t ids[8], id = 0;
    CU_ASSERT_EQUAL_FATAL(xpv_store_profiles_open_all(&c, db, 0, &err), 0);
    CU_ASSERT_EQUAL_FATAL(ids_of(&c, ids), 5);
    CU_ASSERT_TRUE(ids[0] == 6 && ids[1] == 1 && ids[2] == 5 && ids[3] == 2 && ids[4] == 3);
    CU_ASSERT_EQUAL_FATAL(xpv_store_profiles_open_all(&c, db, 1, &err), 0);
    CU_ASSERT_EQUAL_FATAL(ids_of(&c, ids), 6);
    CU_ASSERT_TRUE(ids[0] == 6 && ids[1] == 4 && ids[2] == 1);
    CU_ASSERT_EQUAL_FATAL(xpv_store_profiles_open_id(&c, db, 5, &err), 0);
    CU_ASSERT_TRUE(ids_of(&c, ids) == 1 && ids[0] == 5);

    CU_ASSERT_EQUAL(xpv_store_profiles_latest(db, &id, &err), 1);
    CU_ASSERT_EQUAL(id, 1); /* ok before the newer failed one, companions aside */
    /* A newer partial profile with events is readable, so it is the latest;
     * partial with no event (2) never is. */
    CU_ASSERT_EQUAL(sqlite3_exec(db, "UPDATE profiles SET partial=1 WHERE id=6", 0, 0, 0), 0);
    CU_ASSERT_TRUE(xpv_store_profiles_latest(db, &id, &err) == 1 && id == 6);
    CU_ASSERT_EQUAL(sqlite3_exec(db,
                                 "UPDATE profiles SET partial=0 WHERE id=6;"
                                 "UPDATE profiles SET mtime_ns=9000 WHERE id=2",
                                 0, 0, 0),
                    0);
    CU_ASSERT_TRUE(xpv_store_profiles_latest(db, &id, &err) == 1 && id == 1);
    CU_ASSERT_EQUAL(sqlite3_exec(db, "UPDATE profiles SET mtime_ns=2000 WHERE id=2", 0, 0, 0), 0);
    CU_ASSERT_EQUAL_FATAL(xpv_store_profiles_open_status_counts(&c, db, &err), 0);
    static const char *const status[] = {"failed", "ok", "pending"};
    static const int64_t counts[] = {2, 2, 1};
    xpv_store_text t;
    int64_t n;
    for (int i = 0; i < 3; i++) {
        CU_ASSERT_EQUAL_FATAL(xpv_store_profiles_count_next(&c, &t, &n, &err), 1);
        CU_ASSERT_TRUE(text_is(t, status[i]));
        CU_ASSERT_EQUAL(n, counts[i]);
    }
    CU_ASSERT_EQUAL(xpv_store_profiles_count_next(&c, &t, &n, &err), 0);
    xpv_store_cursor_close(&c);

    int64_t *ev;
    size_t nev;
    CU_ASSERT_EQUAL_FATAL(xpv_store_profiles_with_events(db, &ev, &nev, &err), 0);
    CU_ASSERT_EQUAL(nev, 4); /* 1, 4, 5, 6 */
    int64_t sum = 0;
    for (size_t i = 0; i < nev; i++)
        sum += ev[i];
    CU_ASSERT_EQUAL(sum, 16);
    free(ev);
}

static void test_state_and_file(void)
{
    setup();
    xpv_store_cursor c;
    xpv_store_profile_state s;
    xpv_err err = {{0}};
    CU_ASSERT_EQUAL_FATAL(xpv_store_profiles_state(&c, db, 1, &s, &err), 1);
    CU_ASSERT_TRUE(text_is(s.status, "ok") && text_is(s.path, "r1/a.xplane.pb"));
    int64_t want[XPV_STORE_PROFILE_STATE_NNUMS] = {10, 1000, 5000, 3000};
    for (int i = 0; i < XPV_STORE_PROFILE_STATE_NNUMS; i++)
        CU_ASSERT_EQUAL(s.num[i], want[i]);
    CU_ASSERT_EQUAL(s.known, (1u << XPV_STORE_PROFILE_STATE_NNUMS) - 1);
    CU_ASSERT_DOUBLE_EQUAL(s.indexed_at, 12.5, 1e-12);
    xpv_store_cursor_close(&c);
    CU_ASSERT_EQUAL_FATAL(xpv_store_profiles_state(&c, db, 2, &s, &err), 1);
    CU_ASSERT_EQUAL(s.partial, 1);
    CU_ASSERT_EQUAL(s.known, (1u << XPV_STORE_PROFILE_STATE_EVENTS) |
                                 (1u << XPV_STORE_PROFILE_STATE_MTIME_NS));
    xpv_store_cursor_close(&c);
    CU_ASSERT_EQUAL(xpv_store_profiles_state(&c, db, 99, &s, &err), 0);

    xpv_store_profile_file f;
    CU_ASSERT_EQUAL_FATAL(xpv_store_profiles_xplane_file(&c, db, 1, &f, &err), 1);
    CU_ASSERT_PTR_NOT_NULL(f.dir.s);
    CU_ASSERT_TRUE(text_is(f.path, "r1/a.xplane.pb"));
    CU_ASSERT_TRUE(f.size_bytes == 100 && f.mtime_ns == 3000);
    xpv_store_cursor_close(&c);
    CU_ASSERT_EQUAL(xpv_store_profiles_xplane_file(&c, db, 3, &f, &err), 0); /* not an xplane */
}

static void test_runs_and_hosts(void)
{
    setup();
    xpv_store_cursor c;
    xpv_err err = {{0}};
    xpv_store_text t;
    CU_ASSERT_EQUAL_FATAL(xpv_store_profiles_open_runs(&c, db, &err), 0);
    CU_ASSERT_TRUE(xpv_store_profiles_text_next(&c, &t, &err) == 1 && text_is(t, "r1"));
    CU_ASSERT_TRUE(xpv_store_profiles_text_next(&c, &t, &err) == 1 && text_is(t, "r2"));
    CU_ASSERT_EQUAL(xpv_store_profiles_text_next(&c, &t, &err), 0);
    xpv_store_cursor_close(&c);
    CU_ASSERT_EQUAL_FATAL(xpv_store_profiles_open_hosts(&c, db, "r1", &err), 0);
    CU_ASSERT_TRUE(xpv_store_profiles_text_next(&c, &t, &err) == 1 && text_is(t, "a"));
    CU_ASSERT_TRUE(xpv_store_profiles_text_next(&c, &t, &err) == 1 && text_is(t, "b"));
    CU_ASSERT_EQUAL(xpv_store_profiles_text_next(&c, &t, &err), 0);
    xpv_store_cursor_close(&c);

    static const int64_t want[] = {1, 5, 2}; /* by host, the best indexed first */
    static const char *const hosts[] = {"a", "b", "b"};
    int64_t id = 0;
    CU_ASSERT_EQUAL_FATAL(xpv_store_profiles_open_run_hosts(&c, db, "r1", &err), 0);
    for (int i = 0; i < 3; i++) {
        CU_ASSERT_EQUAL_FATAL(xpv_store_profiles_host_next(&c, &id, &t, &err), 1);
        CU_ASSERT_TRUE(id == want[i] && text_is(t, hosts[i]));
    }
    CU_ASSERT_EQUAL(xpv_store_profiles_host_next(&c, &id, &t, &err), 0);
    xpv_store_cursor_close(&c);

    CU_ASSERT_TRUE(xpv_store_profiles_of_run(db, "r1", NULL, &id, &err) == 1 && id == 1);
    CU_ASSERT_TRUE(xpv_store_profiles_of_run(db, "r1", "b", &id, &err) == 1 && id == 5);
    CU_ASSERT_EQUAL(xpv_store_profiles_of_run(db, "r9", NULL, &id, &err), 0);
    int64_t *ids;
    size_t n;
    CU_ASSERT_EQUAL_FATAL(xpv_store_profiles_newest_run(db, &ids, &n, &err), 0);
    CU_ASSERT_TRUE(n == 2 && ids[0] == 1 && ids[1] == 5);
    free(ids);
}

static void test_scope(void)
{
    setup();
    xpv_err err = {{0}};
    xpv_store_cursor c;
    const int64_t one_two[] = {1, 2}, two_three[] = {2, 3}, six[] = {6}, one_three[] = {1, 3};
    CU_ASSERT_EQUAL(xpv_store_profiles_any_events(db, two_three, 2, 0, &err), 0);
    CU_ASSERT_EQUAL(xpv_store_profiles_any_events(db, six, 1, 0, &err), 1);
    CU_ASSERT_EQUAL(xpv_store_profiles_any_events(db, six, 1, 1, &err), 0); /* not ok */
    CU_ASSERT_EQUAL(xpv_store_profiles_any_events(db, one_two, 2, 1, &err), 1);

    xpv_store_profiles_environment e;
    CU_ASSERT_EQUAL_FATAL(xpv_store_profiles_environment_get(&c, db, one_two, 2, &e, &err), 1);
    CU_ASSERT_EQUAL(e.profiles, 2);
    CU_ASSERT_TRUE(text_is(e.hosts, "a, b") && text_is(e.device, "GPU 0"));
    CU_ASSERT_TRUE(e.devices_known && e.devices == 2); /* 2's list is not JSON */
    xpv_store_cursor_close(&c);
    CU_ASSERT_EQUAL_FATAL(xpv_store_profiles_environment_get(&c, db, two_three, 2, &e, &err), 1);
    CU_ASSERT_FALSE(e.devices_known);
    CU_ASSERT_PTR_NULL(e.device.s);
    xpv_store_cursor_close(&c);

    static const char *const stats[] = {"clock_rate", "device_vendor", NULL};
    xpv_store_device_figure f;
    CU_ASSERT_EQUAL_FATAL(xpv_store_profiles_open_device_figures(&c, db, one_two, 2, stats, &err),
                          0);
    CU_ASSERT_EQUAL_FATAL(xpv_store_profiles_device_figure_next(&c, &f, &err), 1);
    CU_ASSERT_TRUE(text_is(f.stat, "clock_rate") && text_is(f.value, "1410000"));
    CU_ASSERT_TRUE(f.devices == 2 && text_is(f.device, "gpu0"));
    CU_ASSERT_DOUBLE_EQUAL(f.number, 1410000.0, 0);
    CU_ASSERT_EQUAL_FATAL(xpv_store_profiles_device_figure_next(&c, &f, &err), 1);
    CU_ASSERT_TRUE(text_is(f.value, "1500000") && f.devices == 1);
    CU_ASSERT_EQUAL_FATAL(xpv_store_profiles_device_figure_next(&c, &f, &err), 1);
    CU_ASSERT_TRUE(text_is(f.stat, "device_vendor") && text_is(f.value, "Nvidia"));
    CU_ASSERT_EQUAL(xpv_store_profiles_device_figure_next(&c, &f, &err), 0);
    xpv_store_cursor_close(&c);

    xpv_store_device_stat s;
    CU_ASSERT_EQUAL_FATAL(xpv_store_profiles_open_device_stats(&c, db, one_two, 2, stats, &err), 0);
    CU_ASSERT_EQUAL_FATAL(xpv_store_profiles_device_stat_next(&c, &s, &err), 1);
    CU_ASSERT_TRUE(text_is(s.stat, "clock_rate") && text_is(s.value, "1500000"));
    CU_ASSERT_TRUE(s.values == 2 && s.profiles == 2);
    CU_ASSERT_EQUAL_FATAL(xpv_store_profiles_device_stat_next(&c, &s, &err), 1);
    CU_ASSERT_TRUE(text_is(s.stat, "device_vendor") && s.values == 1 && s.profiles == 1);
    CU_ASSERT_EQUAL(xpv_store_profiles_device_stat_next(&c, &s, &err), 0);
    xpv_store_cursor_close(&c);

    xpv_store_fact_agreement a;
    char v[8];
    CU_ASSERT_EQUAL(xpv_store_profiles_fact(db, one_two, 2, "$.peak", &a, v, sizeof v, &err), 0);
    CU_ASSERT_TRUE(a.values == 1 && a.stating == 2 && a.profiles == 2 && a.value_known);
    CU_ASSERT_STRING_EQUAL(v, "100");
    CU_ASSERT_EQUAL(xpv_store_profiles_fact(db, one_three, 2, "$.peak", &a, v, sizeof v, &err), 0);
    CU_ASSERT_TRUE(a.stating == 1 && a.profiles == 2);
    CU_ASSERT_EQUAL(xpv_store_profiles_fact(db, six, 1, "$.peak", &a, v, sizeof v, &err), 0);
    CU_ASSERT_TRUE(!a.value_known && v[0] == 0);
}

static void test_errors(void)
{
    setup();
    xpv_err err = {{0}};
    xpv_store_cursor c;
    xpv_store_profile r;
    xpv_store_profile_state s;
    int64_t id, one[] = {1};
    char v[8];
    xpv_store_fact_agreement a;
    xpv_store_profiles_environment e;
    CU_ASSERT_EQUAL(xpv_db_exec(db, "ALTER TABLE profiles RENAME TO profiles_gone", &err), 0);
    CU_ASSERT_EQUAL(xpv_store_profiles_get(&c, db, 1, &r, &err), -1);
    CU_ASSERT_PTR_NULL(c.st);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "no such table"));
    CU_ASSERT_EQUAL(xpv_store_profiles_state(&c, db, 1, &s, &err), -1);
    CU_ASSERT_EQUAL(xpv_store_profiles_latest(db, &id, &err), -1);
    CU_ASSERT_EQUAL(xpv_store_profiles_open_runs(&c, db, &err), -1);
    CU_ASSERT_EQUAL(xpv_store_profiles_of_run(db, "r1", NULL, &id, &err), -1);
    CU_ASSERT_EQUAL(xpv_store_profiles_any_events(db, one, 1, 0, &err), -1);
    CU_ASSERT_EQUAL(xpv_store_profiles_environment_get(&c, db, one, 1, &e, &err), -1);
    CU_ASSERT_EQUAL(xpv_store_profiles_fact(db, one, 1, "$.peak", &a, v, sizeof v, &err), -1);
    CU_ASSERT_EQUAL(xpv_db_exec(db, "ALTER TABLE profiles_gone RENAME TO profiles", &err), 0);
}

int main(void)
{
    static const xpv_test_case tests[] = {
        {"the whole row, unknown values flagged", test_whole_row},
        {"lists, latest, status counts, profiles with events", test_lists},
        {"the state row and an xplane's file", test_state_and_file},
        {"runs and hosts", test_runs_and_hosts},
        {"checks and aggregates over a scope", test_scope},
        {"a broken query is an error", test_errors},
        {NULL, NULL},
    };
    return xpv_test_run("store_profiles", tests, 0); /* the index goes with the process */
}
