/*
 * test_hlo_warm.c — warming the HLO tools' cache ahead of the first request
 * (api/hlo/hlo_warm.c, xpv_hlo_ops_warm in api/hlo/hlo_ops.c): what a warmed cache
 * gives, hosts merged, is what a cold scan gives, even once the events are
 * gone (so it did come from the warming); profiles without HLO ops, not
 * indexed for good, or past half the budget are not warmed; a stop request
 * stops it; the newest run's profiles, and only they, are warmed.
 */
#define _POSIX_C_SOURCE 200809L
#include "hlo_testutil.h"
#include "sink_testutil.h"
#include "api/hlo/hlo_cache.h"
#include "api/hlo/hlo_ops.h"
#include "api/hlo/hlo_warm.h"

#include <string.h>

enum { HOST_A = 1, HOST_B = 2, PLAIN = 3, OLD = 4 };

static void exec(sqlite3 *db, const char *sql)
{
    xpv_err err = {{0}};
    CU_ASSERT_EQUAL(xpv_db_exec(db, sql, &err), 0);
}

/* An `XLA Ops` event of program 7 on device 0, with flops when >= 0. */
static void op(xpv_sink *s, const char *name, int64_t ts_ns, int64_t dur_ps, int64_t flops)
{
    xpv_arg args[2] = {
        {.key = xpv_sink_intern_cstr(s, "program_id"), .type = XPV_ARG_UINT, .v.u = 7},
        {.key = xpv_sink_intern_cstr(s, "flops"), .type = XPV_ARG_INT, .v.i = flops},
    };
    xpv_event ev;
    xpv_event_init(&ev);
    ev.track = xpv_sink_track(s, 200, 3);
    ev.kind = XPV_KIND_XLA_OP;
    ev.name = xpv_sink_intern_cstr(s, name);
    ev.ts_ns = ts_ns;
    ev.dur_ps = dur_ps;
    ev.dur_ns = dur_ps / 1000;
    ev.args = args;
    ev.nargs = flops >= 0 ? 2 : 1;
    xpv_sink_event(s, &ev);
}

/* A host of a TPU-like run: a while holding a fusion, and a copy; the
 * host's number changes the times so that the merge is visible. */
static void write_host(sqlite3 *db, int64_t id, int64_t k)
{
    xpv_sink *s = xpv_test_sink(db, id, "xplane");
    xpv_sink_process_device(s, 200, 0);
    xpv_sink_track(s, 200, 3);
    xpv_sink_thread_name(s, 200, 3, "XLA Ops", 7);
    op(s, "while.1", 1000, 10000000 * k, -1);
    op(s, "fusion.1", 2000, 3000000 * k, 600 * k);
    op(s, "copy.2", 20000000, 1000000, -1);
    xpv_test_sink_finish(s);
}

static sqlite3 *run_of_three(void)
{
    sqlite3 *db = xpv_test_fresh_index(xpv_test_tmpdir(), HOST_A);
    write_host(db, HOST_A, 1);
    write_host(db, HOST_B, 2);
    xpv_test_sink_finish(xpv_test_sink(db, PLAIN, "xplane")); /* no HLO ops */
    exec(db, "UPDATE profiles SET status='ok', indexed_at=1, mtime_ns=5, run='new',"
             " host='h' || id");
    return db;
}

static void test_warm_equals_cold(void)
{
    sqlite3 *db = run_of_three();
    const int64_t all[] = {HOST_A, HOST_B, PLAIN};
    xpv_hlo_ops cold, warm;
    xpv_test_hlo_collect(db, all, 3, NULL, &cold);
    CU_ASSERT_EQUAL(cold.n, 3);
    CU_ASSERT_EQUAL(cold.total_self_ps, 10000000 * 3 + 2 * 1000000); /* whiles hold fusions */
    xpv_hlo_cache *c = xpv_hlo_ops_cache_new(1 << 20);
    xpv_err err = {{0}};
    CU_ASSERT_EQUAL(xpv_hlo_warm_profiles(db, c, all, 3, NULL, &err), 2); /* PLAIN has none */
    CU_ASSERT_EQUAL(xpv_hlo_cache_entries(c), 2);
    CU_ASSERT_EQUAL(xpv_hlo_warm_profiles(db, c, all, 3, NULL, &err), 2); /* already there */
    CU_ASSERT_EQUAL(xpv_hlo_cache_entries(c), 2);
    exec(db, "DELETE FROM blocks"); /* only the warmed cache has the ops now */
    xpv_test_hlo_collect(db, all, 3, c, &warm);
    xpv_test_hlo_assert_same(&cold, &warm);
    xpv_hlo_ops_free(&warm);
    xpv_hlo_ops_free(&cold);
    xpv_test_hlo_collect(db, all, 3, NULL, &cold); /* and a cold scan would find nothing */
    CU_ASSERT_EQUAL(cold.n, 0);
    xpv_hlo_ops_free(&cold);
    xpv_hlo_cache_free(c);
    sqlite3_close(db);
}

static void test_not_warmed(void)
{
    sqlite3 *db = run_of_three();
    const int64_t two[] = {HOST_A, HOST_B};
    xpv_err err = {{0}};
    xpv_hlo_cache *c = xpv_hlo_ops_cache_new(1 << 20);
    volatile int stop = 1;
    CU_ASSERT_EQUAL(xpv_hlo_warm_profiles(db, c, two, 2, &stop, &err), 0);
    exec(db, "UPDATE profiles SET status='pending' WHERE id=1");
    CU_ASSERT_EQUAL(xpv_hlo_ops_warm(db, c, HOST_A, &err), 0);
    CU_ASSERT_EQUAL(xpv_hlo_cache_entries(c), 0);
    exec(db, "UPDATE profiles SET status='ok' WHERE id=1");
    CU_ASSERT_EQUAL(xpv_hlo_ops_warm(db, c, HOST_B, &err), 1);
    size_t one = xpv_hlo_cache_bytes(c); /* what one host's ops take */
    xpv_hlo_cache_free(c);
    c = xpv_hlo_ops_cache_new(one / 2); /* too big to keep at all */
    CU_ASSERT_EQUAL(xpv_hlo_ops_warm(db, c, HOST_B, &err), 0);
    xpv_hlo_cache_free(c);
    c = xpv_hlo_ops_cache_new(one * 3 / 2); /* one host takes it past half */
    CU_ASSERT_EQUAL(xpv_hlo_warm_profiles(db, c, (int64_t[]){HOST_B, HOST_A}, 2, NULL, &err), 1);
    CU_ASSERT_EQUAL(xpv_hlo_cache_entries(c), 1);
    xpv_hlo_cache_free(c);
    sqlite3_close(db);
}

static void test_latest_run(void)
{
    sqlite3 *db = run_of_three();
    write_host(db, OLD, 3);
    exec(db, "UPDATE profiles SET status='ok', indexed_at=1, mtime_ns=1, run='old', host='h'"
             " WHERE id=4");
    xpv_hlo_cache *c = xpv_hlo_ops_cache_new(1 << 20);
    xpv_err err = {{0}};
    CU_ASSERT_EQUAL(xpv_hlo_warm_latest_run(db, c, NULL, &err), 2);
    exec(db, "DELETE FROM blocks WHERE profile_id IN (1, 2)");
    xpv_hlo_ops o;
    xpv_test_hlo_collect(db, (int64_t[]){HOST_A, HOST_B}, 2, c, &o); /* from the cache */
    CU_ASSERT_EQUAL(o.n, 3);
    xpv_hlo_ops_free(&o);
    CU_ASSERT_EQUAL(xpv_hlo_cache_entries(c), 2);          /* not the old run's */
    exec(db, "UPDATE profiles SET mtime_ns=9 WHERE id=4"); /* now the old run is the newest */
    CU_ASSERT_EQUAL(xpv_hlo_warm_latest_run(db, c, NULL, &err), 1);
    CU_ASSERT_EQUAL(xpv_hlo_cache_entries(c), 3);
    xpv_hlo_cache_free(c);
    sqlite3_close(db);
}

int main(void)
{
    static const xpv_test_case tests[] = {
        {"warmed equals cold", test_warm_equals_cold},
        {"not warmed", test_not_warmed},
        {"newest run", test_latest_run},
        {NULL, NULL},
    };
    return xpv_test_run("hlo_warm", tests, 0);
}
