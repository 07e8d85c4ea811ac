/*
 * test_store_kernel_stats.c — store/kernel_stats.c on hand-made rows: a
 * row comes back whole (its op's name looked up, unknown values flagged),
 * in each sort with its limit; the count, devices and kind checks; the top
 * ops' reads (all rows, the ranked ones, kernel_totals, one name's time);
 * the findings' hot names and per-device busy time; a device's packed
 * rows read back whole and damaged ones refused; a broken query; the
 * insert's key order.
 */
#include "testutil.h"
#include "store/index_db.h"
#include "store/event_store.h"
#include "store/kernel_device_stats.h"
#include "store/kernel_stats.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static sqlite3 *db;
/* Profile 1: three kernels on all devices (b has two shapes), one on device
 * 2, one memcpy on device 0, and an XLA op; ranked, with kernel_totals.
 * Profile 2: XLA ops only, no totals. */
static const char *const ROWS =
    "UPDATE profiles SET kernel_totals='{\"kernel\":[1000,3],\"xla_op\":[70,1]}';"
    "INSERT INTO profiles(id, path) VALUES(2, 'q');"
    "INSERT INTO kernel_stats(profile_id, kind, device, name, seq, category, count, total_ps,"
    " min_ps, max_ps, median_ps, stddev_ps, percent, grid, block, registers_per_thread,"
    " shared_memory_bytes, occupancy_pct, op_id, shapes, top_rank) VALUES"
    " (1, 'kernel', -1, 'a', 0, 'gemm', 4, 400, 50, 150, 100.5, 10.0, 40.0, '[1,2,3]', 'x', 32,"
    "  1024, 50.0, 5, 1, 2),"
    " (1, 'kernel', -1, 'b', 1, NULL, 1, 300, 300, 300, NULL, NULL, NULL, NULL, NULL, NULL,"
    "  NULL, NULL, NULL, 2, 1),"
    " (1, 'kernel', -1, 'b', 2, NULL, 2, 200, 90, 110, NULL, NULL, NULL, NULL, NULL, NULL,"
    "  NULL, NULL, NULL, 2, 1),"
    " (1, 'kernel', -1, 'c', 3, NULL, 10, 100, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,"
    "  NULL, NULL, NULL, 1, 3),"
    " (1, 'memcpy', -1, 'HtoD', 5, NULL, 1, 30, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,"
    "  NULL, NULL, NULL, NULL, NULL),"
    " (1, 'xla_op', -1, 'fusion', 6, NULL, 1, 70, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,"
    "  NULL, NULL, NULL, NULL, 1),"
    " (2, 'xla_op', -1, 'fusion', 0, NULL, 2, 90, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,"
    "  NULL, NULL, NULL, NULL, NULL),"
    " (2, 'xla_op', -1, 'dot', 1, NULL, 2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,"
    "  NULL, NULL, NULL, NULL, NULL);"
    "INSERT INTO tracks(profile_id, id, device_id, events) VALUES (1, 1, 0, 5), (1, 2, 2, 9),"
    " (1, 3, 3, 0), (1, 4, 4, 1);";

static void add_row(xpv_store_kernel_rows *rows, const char *kind, int device, const char *name,
                    int64_t seq)
{
    xpv_store_kernel_row *r = xpv_store_kernel_rows_add(rows);
    r->device = device;
    r->seq = seq;
    xpv_store_kernel_rows_text(rows, XPV_STORE_KCOL_KIND, kind, strlen(kind));
    xpv_store_kernel_rows_text(rows, XPV_STORE_KCOL_NAME, name, strlen(name));
}

/* Profile 1's device rows, packed as the indexer writes them: kernel a on
 * device 2, the memcpy on device 0. */
static void write_device_rows(void)
{
    xpv_store_kernel_rows rows = {0};
    add_row(&rows, "kernel", 2, "a", 4);
    rows.v[0].count = 4, rows.v[0].total_ps = 400;
    add_row(&rows, "memcpy", 0, "HtoD", 6);
    rows.v[1].count = 1, rows.v[1].total_ps = 30;
    xpv_err err = {{0}};
    CU_ASSERT_EQUAL_FATAL(xpv_store_kernel_stats_write(db, 1, &rows, &err), 0);
    xpv_store_kernel_rows_free(&rows);
}

static void setup(void)
{
    if (db) return;
    db = xpv_test_index_with(1, ROWS);
    static const char *const strings[] = {NULL, NULL, NULL, NULL, NULL, "jit_op", "b"};
    xpv_test_put_strings(db, 1, strings, 7);
    write_device_rows();
}

/* The names of a cursor's rows, joined by ',' (and their seq order kept). */
static const char *names(xpv_store_cursor *c)
{
    static char out[256];
    xpv_store_kernel_stat r;
    xpv_err err = {{0}};
    int rc;
    out[0] = 0;
    while ((rc = xpv_store_kernel_stats_next(c, &r, &err)) == 1)
        snprintf(out + strlen(out), sizeof out - strlen(out), "%s%s", out[0] ? "," : "", r.name.s);
    CU_ASSERT_EQUAL(rc, 0);
    xpv_store_cursor_close(c);
    return out;
}

static void test_row_whole(void)
{
    setup();
    xpv_store_cursor c;
    xpv_store_kernel_stat r;
    xpv_err err = {{0}};
    CU_ASSERT_EQUAL_FATAL(
        xpv_store_kernel_stats_open(&c, db, 1, "kernel", -1, XPV_STORE_KSORT_KEY, 0, -1, &err), 0);
    CU_ASSERT_EQUAL_FATAL(xpv_store_kernel_stats_next(&c, &r, &err), 1);
    CU_ASSERT_STRING_EQUAL(r.name.s, "a");
    CU_ASSERT_STRING_EQUAL(r.category.s, "gemm");
    CU_ASSERT_STRING_EQUAL(r.op.s, "jit_op");
    CU_ASSERT_EQUAL(r.op.n, 6);
    CU_ASSERT_STRING_EQUAL(r.grid.s, "[1,2,3]");
    CU_ASSERT_STRING_EQUAL(r.block.s, "x");
    CU_ASSERT_EQUAL(r.device, -1);
    CU_ASSERT_EQUAL(r.count, 4);
    CU_ASSERT_EQUAL(r.total_ps, 400);
    CU_ASSERT_EQUAL(r.min_ps, 50);
    CU_ASSERT_EQUAL(r.max_ps, 150);
    CU_ASSERT_DOUBLE_EQUAL(r.median_ps, 100.5, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(r.stddev_ps, 10, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(r.percent, 40, 1e-12);
    CU_ASSERT_EQUAL(r.registers_per_thread, 32);
    CU_ASSERT_EQUAL(r.shared_memory_bytes, 1024);
    CU_ASSERT_DOUBLE_EQUAL(r.occupancy_pct, 50, 1e-12);
    CU_ASSERT_EQUAL(r.shapes, 1);
    CU_ASSERT_EQUAL(r.known, (1u << 11) - 1);
    CU_ASSERT_EQUAL_FATAL(xpv_store_kernel_stats_next(&c, &r, &err), 1);
    CU_ASSERT_STRING_EQUAL(r.name.s, "b");
    CU_ASSERT_PTR_NULL(r.op.s);
    CU_ASSERT_PTR_NULL(r.category.s);
    CU_ASSERT_PTR_NULL(r.grid.s);
    CU_ASSERT_EQUAL(r.total_ps, 300); /* seq 1 before seq 2 */
    CU_ASSERT_EQUAL(r.known, XPV_STORE_KSTAT_COUNT | XPV_STORE_KSTAT_TOTAL | XPV_STORE_KSTAT_MIN |
                                 XPV_STORE_KSTAT_MAX | XPV_STORE_KSTAT_SHAPES);
    xpv_store_cursor_close(&c);
}

static const char *sorted(enum xpv_store_kernel_sort sort, int desc, int64_t limit)
{
    xpv_store_cursor c;
    xpv_err err = {{0}};
    CU_ASSERT_EQUAL_FATAL(
        xpv_store_kernel_stats_open(&c, db, 1, "kernel", -1, sort, desc, limit, &err), 0);
    return names(&c);
}

static void test_sorts(void)
{
    setup();
    CU_ASSERT_STRING_EQUAL(sorted(XPV_STORE_KSORT_KEY, 1, 1), "a,b,b,c"); /* no limit, no desc */
    CU_ASSERT_STRING_EQUAL(sorted(XPV_STORE_KSORT_TOTAL, 1, -1), "a,b,b,c");
    CU_ASSERT_STRING_EQUAL(sorted(XPV_STORE_KSORT_TOTAL, 0, 2), "c,b");
    CU_ASSERT_STRING_EQUAL(sorted(XPV_STORE_KSORT_COUNT, 1, -1), "c,a,b,b");
    CU_ASSERT_STRING_EQUAL(sorted(XPV_STORE_KSORT_AVG, 1, -1), "b,a,b,c"); /* 300, 100, 100, 10 */
    CU_ASSERT_STRING_EQUAL(sorted(XPV_STORE_KSORT_MAX, 0, -1), "b,a,b,c"); /* unknown last */
    CU_ASSERT_STRING_EQUAL(sorted(XPV_STORE_KSORT_NAME, 1, 3), "c,b,b");

    xpv_store_cursor c;
    xpv_err err = {{0}};
    const int64_t both[] = {1, 2};
    CU_ASSERT_EQUAL_FATAL(xpv_store_kernel_stats_open_top(&c, db, both, 2, "xla_op", 10, &err), 0);
    CU_ASSERT_STRING_EQUAL(names(&c), "fusion,fusion,dot"); /* 90, 70, unknown */
    CU_ASSERT_EQUAL_FATAL(xpv_store_kernel_stats_open_top(&c, db, both, 2, "kernel", 2, &err), 0);
    CU_ASSERT_STRING_EQUAL(names(&c), "a,b");
}

static void test_counts(void)
{
    setup();
    xpv_err err = {{0}};
    xpv_store_kernel_count n;
    CU_ASSERT_EQUAL(xpv_store_kernel_stats_count(db, 1, "kernel", -1, &n, &err), 0);
    CU_ASSERT_EQUAL(n.rows, 4);
    CU_ASSERT_EQUAL(n.total_ps, 1000);
    CU_ASSERT_TRUE(n.total_known);
    CU_ASSERT_EQUAL(xpv_store_kernel_stats_count(db, 2, "xla_op", -1, &n, &err), 0);
    CU_ASSERT_EQUAL(n.rows, 2);
    CU_ASSERT_EQUAL(n.total_ps, 90);
    CU_ASSERT_EQUAL(xpv_store_kernel_stats_count(db, 2, "kernel", -1, &n, &err), 0);
    CU_ASSERT_EQUAL(n.rows, 0);
    CU_ASSERT_FALSE(n.total_known);

    int *devs;
    size_t nd;
    CU_ASSERT_EQUAL_FATAL(xpv_store_kernel_stats_devices(db, 1, "kernel", &devs, &nd, &err), 0);
    CU_ASSERT_EQUAL_FATAL(nd, 1);
    CU_ASSERT_EQUAL(devs[0], 2);
    free(devs);

    const int64_t one[] = {1}, two[] = {2};
    CU_ASSERT_EQUAL(xpv_store_kernel_stats_has_kind(db, one, 1, "kernel", &err), 1);
    CU_ASSERT_EQUAL(xpv_store_kernel_stats_has_kind(db, two, 1, "kernel", &err), 0);
}

static void test_top_ops_reads(void)
{
    setup();
    xpv_err err = {{0}};
    xpv_store_cursor c;
    xpv_store_kernel_time t;
    const int64_t both[] = {1, 2};
    int64_t sum[2] = {0, 0}, rows = 0;
    CU_ASSERT_EQUAL_FATAL(xpv_store_kernel_stats_open_times(&c, db, both, 2, &err), 0);
    while (xpv_store_kernel_stats_times_next(&c, &t, &err) == 1)
        sum[t.xla_op] += t.total_ps, rows++;
    xpv_store_cursor_close(&c);
    CU_ASSERT_EQUAL(rows, 7); /* all devices only: not the device 2 or memcpy rows */
    CU_ASSERT_EQUAL(sum[0], 1000);
    CU_ASSERT_EQUAL(sum[1], 160);

    /* ranked: profile 1's, by kind then rank: b, b, a, c, then fusion */
    CU_ASSERT_EQUAL_FATAL(xpv_store_kernel_stats_open_ranked(&c, db, both, 2, &err), 0);
    const char *want[] = {"b", "b", "a", "c", "fusion"};
    const int64_t rank[] = {1, 1, 2, 3, 1};
    for (int i = 0; i < 5; i++) {
        CU_ASSERT_EQUAL_FATAL(xpv_store_kernel_stats_times_next(&c, &t, &err), 1);
        CU_ASSERT_STRING_EQUAL(t.name.s, want[i]);
        CU_ASSERT_EQUAL(t.rank, rank[i]);
        CU_ASSERT_EQUAL(t.profile_id, 1);
        CU_ASSERT_EQUAL(t.xla_op, i == 4);
    }
    CU_ASSERT_EQUAL(xpv_store_kernel_stats_times_next(&c, &t, &err), 0);
    xpv_store_cursor_close(&c);

    xpv_store_kernel_totals k;
    CU_ASSERT_EQUAL_FATAL(xpv_store_kernel_stats_open_totals(&c, db, both, 2, &err), 0);
    for (int i = 0; i < 2; i++) {
        CU_ASSERT_EQUAL_FATAL(xpv_store_kernel_stats_totals_next(&c, &k, &err), 1);
        if (k.profile_id == 1) {
            CU_ASSERT_FALSE(k.unranked);
            CU_ASSERT_EQUAL(k.total_ps[0], 1000);
            CU_ASSERT_EQUAL(k.names[0], 3);
            CU_ASSERT_EQUAL(k.total_ps[1], 70);
        } else {
            CU_ASSERT_TRUE(k.unranked); /* rows, no totals */
            CU_ASSERT_EQUAL(k.names[1], 0);
        }
    }
    xpv_store_cursor_close(&c);

    int64_t ps = -1;
    CU_ASSERT_EQUAL_FATAL(xpv_store_kernel_stats_open_name_time(&c, db, &err), 0);
    CU_ASSERT_EQUAL(xpv_store_kernel_stats_name_time(&c, 1, 0, "b", &ps, &err), 0);
    CU_ASSERT_EQUAL(ps, 500);
    CU_ASSERT_EQUAL(xpv_store_kernel_stats_name_time(&c, 2, 1, "fusion", &ps, &err), 0);
    CU_ASSERT_EQUAL(ps, 90);
    CU_ASSERT_EQUAL(xpv_store_kernel_stats_name_time(&c, 2, 0, "fusion", &ps, &err), 0);
    CU_ASSERT_EQUAL(ps, 0);
    xpv_store_cursor_close(&c);
}

static void test_findings_reads(void)
{
    setup();
    xpv_err err = {{0}};
    xpv_store_cursor c;
    xpv_store_kernel_hot h;
    CU_ASSERT_EQUAL_FATAL(xpv_store_kernel_stats_open_hot(&c, db, 1, 2, &err), 0);
    CU_ASSERT_EQUAL_FATAL(xpv_store_kernel_stats_hot_next(&c, &h, &err), 1);
    CU_ASSERT_STRING_EQUAL(h.name.s, "a");
    CU_ASSERT_EQUAL(h.total_ps, 400);
    CU_ASSERT_EQUAL(h.kind_total_ps, 1000);
    CU_ASSERT_EQUAL(h.name_id, 0);
    CU_ASSERT_EQUAL_FATAL(xpv_store_kernel_stats_hot_next(&c, &h, &err), 1);
    CU_ASSERT_STRING_EQUAL(h.name.s, "b");
    CU_ASSERT_EQUAL(h.name_id, 6);
    CU_ASSERT_EQUAL(xpv_store_kernel_stats_hot_next(&c, &h, &err), 0); /* the limit */
    xpv_store_cursor_close(&c);
    /* no kernels: XLA ops with a known time */
    CU_ASSERT_EQUAL_FATAL(xpv_store_kernel_stats_open_hot(&c, db, 2, 3, &err), 0);
    CU_ASSERT_EQUAL_FATAL(xpv_store_kernel_stats_hot_next(&c, &h, &err), 1);
    CU_ASSERT_STRING_EQUAL(h.name.s, "fusion");
    CU_ASSERT_EQUAL(xpv_store_kernel_stats_hot_next(&c, &h, &err), 0);
    xpv_store_cursor_close(&c);

    /* devices with events: 0 (memcpy 30), 2 (kernel a 400), 4 (nothing) */
    int64_t dev, busy;
    const int64_t want[][2] = {{0, 30}, {2, 400}, {4, 0}};
    CU_ASSERT_EQUAL_FATAL(xpv_store_kernel_stats_open_device_busy(&c, db, 1, "kernel", &err), 0);
    for (int i = 0; i < 3; i++) {
        CU_ASSERT_EQUAL_FATAL(xpv_store_kernel_stats_device_busy_next(&c, &dev, &busy, &err), 1);
        CU_ASSERT_EQUAL(dev, want[i][0]);
        CU_ASSERT_EQUAL(busy, want[i][1]);
    }
    CU_ASSERT_EQUAL(xpv_store_kernel_stats_device_busy_next(&c, &dev, &busy, &err), 0);
    xpv_store_cursor_close(&c);
}

/* Profile 3, device 1: a row with every column known (extreme integers,
 * texts with quotes and bytes that are not UTF-8), one with none (a NaN
 * median reads as unknown, as SQLite stores it), one with empty texts. */
static void write_round_trip_rows(void)
{
    xpv_store_kernel_rows rows = {0};
    add_row(&rows, "kernel", 1, "full \"q\" \xff", 7);
    xpv_store_kernel_row *r = &rows.v[0];
    *r =
        (xpv_store_kernel_row){.text = {r->text[0], r->text[1], r->text[2], r->text[3], r->text[4]},
                               .device = 1,
                               .seq = 7,
                               .count = INT64_MAX,
                               .total_ps = INT64_MIN,
                               .min_ps = -1,
                               .max_ps = 1LL << 40,
                               .median_ps = 2.5,
                               .stddev_ps = 1.0 / 3,
                               .percent = 12.75,
                               .registers_per_thread = 255,
                               .shared_memory_bytes = 49152,
                               .occupancy_pct = 87.5,
                               .op_id = 130, /* in the third chunk of strings */
                               .shapes = 3,
                               .top_rank = 4,
                               .known = (1u << 13) - 1};
    xpv_store_kernel_rows_text(&rows, XPV_STORE_KCOL_CATEGORY, "gemm", 4);
    xpv_store_kernel_rows_text(&rows, XPV_STORE_KCOL_GRID, "[4,2,1]", 7);
    xpv_store_kernel_rows_text(&rows, XPV_STORE_KCOL_BLOCK, "[128,1,1]", 9);
    add_row(&rows, "kernel", 1, "bare", 8);
    rows.v[1].median_ps = NAN;
    add_row(&rows, "kernel", 1, "empty", 9);
    xpv_store_kernel_rows_text(&rows, XPV_STORE_KCOL_CATEGORY, "", 0);
    xpv_store_kernel_rows_text(&rows, XPV_STORE_KCOL_GRID, "", 0);
    xpv_err err = {{0}};
    CU_ASSERT_EQUAL_FATAL(xpv_store_kernel_stats_write(db, 3, &rows, &err), 0);
    xpv_store_kernel_rows_free(&rows);
    const char *strings[140] = {NULL};
    strings[129] = "op129", strings[130] = "op130", strings[131] = "op131";
    xpv_test_put_strings(db, 3, strings, 140);
}

static void test_device_round_trip(void)
{
    setup();
    write_round_trip_rows();
    xpv_store_cursor c;
    xpv_store_kernel_stat r;
    xpv_err err = {{0}};
    CU_ASSERT_EQUAL_FATAL(
        xpv_store_kernel_stats_open(&c, db, 3, "kernel", 1, XPV_STORE_KSORT_KEY, 0, -1, &err), 0);
    CU_ASSERT_EQUAL_FATAL(xpv_store_kernel_stats_next(&c, &r, &err), 1);
    CU_ASSERT_STRING_EQUAL(r.name.s, "bare");
    CU_ASSERT_PTR_NULL(r.category.s);
    CU_ASSERT_PTR_NULL(r.op.s);
    CU_ASSERT_EQUAL(r.known, XPV_STORE_KSTAT_COUNT | XPV_STORE_KSTAT_TOTAL | XPV_STORE_KSTAT_MIN |
                                 XPV_STORE_KSTAT_MAX | XPV_STORE_KSTAT_STDDEV);
    CU_ASSERT_EQUAL(r.device, 1);
    CU_ASSERT_EQUAL_FATAL(xpv_store_kernel_stats_next(&c, &r, &err), 1);
    CU_ASSERT_STRING_EQUAL(r.name.s, "empty");
    CU_ASSERT_STRING_EQUAL(r.category.s, "");
    CU_ASSERT_STRING_EQUAL(r.grid.s, "");
    CU_ASSERT_PTR_NULL(r.block.s);
    CU_ASSERT_EQUAL_FATAL(xpv_store_kernel_stats_next(&c, &r, &err), 1);
    CU_ASSERT_STRING_EQUAL(r.name.s, "full \"q\" \xff");
    CU_ASSERT_STRING_EQUAL(r.category.s, "gemm");
    CU_ASSERT_STRING_EQUAL(r.grid.s, "[4,2,1]");
    CU_ASSERT_STRING_EQUAL(r.block.s, "[128,1,1]");
    CU_ASSERT_STRING_EQUAL(r.op.s, "op130");
    CU_ASSERT_EQUAL(r.count, INT64_MAX);
    CU_ASSERT_EQUAL(r.total_ps, INT64_MIN);
    CU_ASSERT_EQUAL(r.min_ps, -1);
    CU_ASSERT_EQUAL(r.max_ps, 1LL << 40);
    CU_ASSERT_EQUAL(r.median_ps, 2.5);
    CU_ASSERT_EQUAL(r.stddev_ps, 1.0 / 3); /* the same double, not a near one */
    CU_ASSERT_EQUAL(r.percent, 12.75);
    CU_ASSERT_EQUAL(r.registers_per_thread, 255);
    CU_ASSERT_EQUAL(r.shared_memory_bytes, 49152);
    CU_ASSERT_EQUAL(r.occupancy_pct, 87.5);
    CU_ASSERT_EQUAL(r.shapes, 3);
    CU_ASSERT_EQUAL(r.known, (1u << 11) - 1);
    CU_ASSERT_EQUAL(xpv_store_kernel_stats_next(&c, &r, &err), 0);
    xpv_store_cursor_close(&c);
    /* a device's rows sort and count as the table's do */
    CU_ASSERT_EQUAL_FATAL(
        xpv_store_kernel_stats_open(&c, db, 3, "kernel", 1, XPV_STORE_KSORT_COUNT, 1, 2, &err), 0);
    CU_ASSERT_STRING_EQUAL(names(&c), "full \"q\" \xff,bare");
    xpv_store_kernel_count n;
    CU_ASSERT_EQUAL(xpv_store_kernel_stats_count(db, 3, "kernel", 1, &n, &err), 0);
    CU_ASSERT_EQUAL(n.rows, 3);
    CU_ASSERT_EQUAL(n.total_ps, INT64_MIN);
    CU_ASSERT_EQUAL(xpv_store_kernel_stats_count(db, 3, "kernel", 2, &n, &err), 0);
    CU_ASSERT_EQUAL(n.rows, 0);
}

/* A damaged blob is an error the server knows as damage, never rows read
 * out of bounds: cut short, a byte more, another version, empty. The
 * profile's check finds it (and the server then indexes the profile again). */
static void test_device_damage(void)
{
    setup();
    static const char *const damage[] = {"substr(data, 1, length(data) - 3)", "data || x'00'",
                                         "x'09' || substr(data, 2)", "x''"};
    xpv_err err = {{0}};
    CU_ASSERT_EQUAL_FATAL(
        xpv_db_exec(db, "CREATE TEMP TABLE kept AS SELECT * FROM kernel_device_stats", &err), 0);
    for (size_t i = 0; i < sizeof damage / sizeof damage[0]; i++) {
        char sql[160];
        snprintf(sql, sizeof sql, "UPDATE kernel_device_stats SET data=%s", damage[i]);
        CU_ASSERT_EQUAL_FATAL(xpv_db_exec(db, sql, &err), 0);
        xpv_store_kernel_count n;
        CU_ASSERT_EQUAL(xpv_store_kernel_stats_count(db, 1, "kernel", 2, &n, &err), -1);
        CU_ASSERT(xpv_store_damage_in(err.msg));
        CU_ASSERT_EQUAL(sqlite3_errcode(db), SQLITE_ERROR); /* not the file's damage */
        CU_ASSERT_EQUAL(xpv_store_kernel_device_stats_verify(db, 1, &err), 1);
        CU_ASSERT(xpv_store_damage_in(err.msg));
        CU_ASSERT_EQUAL(xpv_store_kernel_device_stats_verify(db, 2, &err), 0); /* no rows */
        CU_ASSERT_EQUAL_FATAL(xpv_db_exec(db,
                                          "DELETE FROM kernel_device_stats; INSERT INTO"
                                          " kernel_device_stats SELECT * FROM kept",
                                          &err),
                              0);
    }
    xpv_store_kernel_count n;
    CU_ASSERT_EQUAL(xpv_store_kernel_stats_count(db, 1, "kernel", 2, &n, &err), 0);
    CU_ASSERT_EQUAL(n.total_ps, 400);
    CU_ASSERT_EQUAL(xpv_store_kernel_device_stats_verify(db, 1, &err), 0);
    CU_ASSERT_EQUAL(xpv_db_exec(db, "DROP TABLE kept", &err), 0);
}

/* Errors come back as errors: a missing table, and the ranked read's
 * index gone (an index of an older layout must not pass for no rows). */
static void test_errors(void)
{
    setup();
    xpv_err err = {{0}};
    xpv_store_cursor c;
    xpv_store_kernel_count n;
    const int64_t one[] = {1};
    CU_ASSERT_EQUAL_FATAL(xpv_db_exec(db, "DROP INDEX kernel_stats_top", &err), 0);
    CU_ASSERT_EQUAL(xpv_store_kernel_stats_open_ranked(&c, db, one, 1, &err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "kernel_stats_top"));
    CU_ASSERT_EQUAL_FATAL(xpv_db_exec(db, "DROP TABLE kernel_stats", &err), 0);
    CU_ASSERT_EQUAL(xpv_store_kernel_stats_count(db, 1, "kernel", -1, &n, &err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "no such table"));
}

/* kind, device, name, seq of the order's i-th row, as text */
static void row_key_text(const xpv_store_kernel_rows *rows, size_t i, char *out, size_t n)
{
    const xpv_store_kernel_row *r = &rows->v[rows->order[i]];
    const xpv_store_kernel_text *t = r->text;
    snprintf(out, n, "%.*s/%d/%.*s/%lld", (int)t[0].len, rows->text.data + t[0].off, r->device,
             (int)t[1].len, rows->text.data + t[1].off, (long long)r->seq);
}

/* Rows come out in the table's key order, texts compared as SQLite does
 * (a prefix first), whether runs of one name come apart, and whether a
 * name's rows of one device arrive in seq order or not (a sort then). */
static void test_write_order(void)
{
    static const char *const want[] = {"kernel/-1/a/5", "kernel/-1/ab/3", "kernel/-1/b/0",
                                       "kernel/-1/b/1", "kernel/0/a/6",   "kernel/0/ab/4",
                                       "kernel/0/b/2",  "kernel/3/b/7",   "memcpy/-1/HtoD/8"};
    for (int reversed = 0; reversed < 2; reversed++) {
        xpv_store_kernel_rows rows = {0};
        add_row(&rows, "memcpy", -1, "HtoD", 8);
        add_row(&rows, "kernel", -1, "b", reversed ? 1 : 0);
        add_row(&rows, "kernel", -1, "b", reversed ? 0 : 1);
        add_row(&rows, "kernel", 0, "b", 2);
        add_row(&rows, "kernel", -1, "ab", 3);
        add_row(&rows, "kernel", 0, "ab", 4);
        add_row(&rows, "kernel", -1, "a", 5);
        add_row(&rows, "kernel", 0, "a", 6);
        add_row(&rows, "kernel", 3, "b", 7); /* b again, in a run of its own */
        xpv_store_kernel_rows_order(&rows);
        CU_ASSERT_EQUAL_FATAL(rows.ordered, 9);
        for (size_t i = 0; i < 9; i++) {
            char got[64];
            row_key_text(&rows, i, got, sizeof got);
            CU_ASSERT_STRING_EQUAL(got, want[i]);
        }
        xpv_store_kernel_rows_add(&rows); /* a row more: the order is stale */
        CU_ASSERT_EQUAL(rows.ordered, 0);
        xpv_store_kernel_rows_free(&rows);
    }
}

int main(void)
{
    static const xpv_test_case tests[] = {
        {"a row whole, unknown values flagged", test_row_whole},
        {"each sort and limit", test_sorts},
        {"counts, devices, kinds", test_counts},
        {"the top ops' reads", test_top_ops_reads},
        {"the findings' reads", test_findings_reads},
        {"a device's rows come back whole", test_device_round_trip},
        {"a damaged device blob is an error", test_device_damage},
        {"a broken query is an error", test_errors},
        {"the insert's key order", test_write_order},
        {NULL, NULL},
    };
    return xpv_test_run("store_kernel_stats", tests, 0); /* the index goes with the process */
}
