/*
 * test_analysis.c — kernel summaries and step timelines computed through
 * the sink from hand-made events, checked against numbers worked out by
 * hand: exact totals, medians (odd and even counts), sample stddev,
 * percent, per-device and all-device rows, launch shapes, ops through
 * correlation, memcpy/memset kept apart, TPU XLA ops and hlo_category,
 * marker preference and merging, correlation vs time join, interval unions,
 * the module fallbacks, "none", and the spill path of the duration store.
 */
#define _POSIX_C_SOURCE 200809L
#include "sink_testutil.h"
#include "store/index_db.h"
#include "indexer/ingest.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROFILE 7

static sqlite3 *fresh_index(void)
{
    return xpv_test_fresh_index(xpv_test_tmpdir(), PROFILE);
}

static xpv_sink *open_sink(sqlite3 *db)
{
    return xpv_test_sink(db, PROFILE, NULL);
}

static void finish(xpv_sink *s)
{
    xpv_test_sink_finish(s);
}

/* A device event of `kind` on (pid, tid), start in ns, duration in ps. */
static void device_event(xpv_sink *s, int kind, int64_t pid, int64_t tid, const char *name,
                         int64_t ts_ns, int64_t dur_ps, int64_t corr, const xpv_launch *l)
{
    xpv_event ev;
    xpv_event_init(&ev);
    ev.track = xpv_sink_track(s, pid, tid);
    ev.kind = (uint8_t)kind;
    ev.name = xpv_sink_intern_cstr(s, name);
    ev.ts_ns = ts_ns;
    ev.dur_ps = dur_ps;
    ev.dur_ns = dur_ps / 1000;
    ev.corr = corr;
    ev.launch = l;
    xpv_sink_event(s, &ev);
}

static void kernel(xpv_sink *s, int64_t pid, int64_t tid, const char *name, int64_t ts_ns,
                   int64_t dur_ps)
{
    device_event(s, XPV_KIND_KERNEL, pid, tid, name, ts_ns, dur_ps, -1, NULL);
}

static void host_event(xpv_sink *s, int kind, const char *cat, const char *name, int64_t ts_ns,
                       int64_t dur_ns, int64_t corr)
{
    xpv_event ev;
    xpv_event_init(&ev);
    ev.track = xpv_sink_track(s, 1, 1);
    ev.kind = (uint8_t)kind;
    ev.name = xpv_sink_intern_cstr(s, name);
    ev.cat = cat ? xpv_sink_intern_cstr(s, cat) : 0;
    ev.ts_ns = ts_ns;
    ev.dur_ns = dur_ns;
    ev.dur_ps = dur_ns * 1000;
    ev.corr = corr;
    xpv_sink_event(s, &ev);
}

static void marker(xpv_sink *s, int64_t tid, int src, int64_t step, const char *name, int64_t ts_ns,
                   int64_t dur_ns)
{
    xpv_event ev;
    xpv_event_init(&ev);
    ev.track = xpv_sink_track(s, 1, tid);
    ev.kind = XPV_KIND_STEP;
    ev.step_src = (uint8_t)src;
    ev.step = step;
    ev.name = xpv_sink_intern_cstr(s, name);
    ev.ts_ns = ts_ns;
    ev.dur_ns = dur_ns;
    ev.dur_ps = dur_ns * 1000;
    xpv_sink_event(s, &ev);
}

/* ---- reading results ---- */

static int64_t q_int(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *st;
    int64_t v = -999999;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
        fprintf(stderr, "bad query %s: %s\n", sql, sqlite3_errmsg(db));
        return v;
    }
    if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL)
        v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v;
}

static double q_double(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *st;
    double v = NAN;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) return v;
    if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL)
        v = sqlite3_column_double(st, 0);
    sqlite3_finalize(st);
    return v;
}

static char *q_text(sqlite3 *db, const char *sql)
{
    static char out[512];
    sqlite3_stmt *st;
    snprintf(out, sizeof out, "<none>");
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) return out;
    if (sqlite3_step(st) == SQLITE_ROW) {
        const unsigned char *t = sqlite3_column_text(st, 0);
        snprintf(out, sizeof out, "%s", t ? (const char *)t : "<null>");
    }
    sqlite3_finalize(st);
    return out;
}

static const char *ks(const char *col, const char *kind, int device, const char *name)
{
    static char sql[512];
    if (strcmp(col, "op") == 0) /* the op's text is in strings */
        col = "(SELECT value FROM strings s WHERE s.profile_id=7 AND s.id=op_id)";
    snprintf(sql, sizeof sql,
             "SELECT %s FROM kernel_stats WHERE profile_id=7 AND kind='%s' AND device=%d AND "
             "name='%s'",
             col, kind, device, name);
    return sql;
}

static const char *step_col(const char *col, int64_t step, int device)
{
    static char sql[512];
    snprintf(sql, sizeof sql, "SELECT %s FROM steps WHERE profile_id=7 AND step=%lld AND device=%d",
             col, (long long)step, device);
    return sql;
}

static double sample_stddev(const int64_t *v, int n)
{
    if (n < 2) return 0;
    double mean = 0, ss = 0;
    for (int i = 0; i < n; i++)
        mean += (double)v[i];
    mean /= n;
    for (int i = 0; i < n; i++)
        ss += ((double)v[i] - mean) * ((double)v[i] - mean);
    return sqrt(ss / (n - 1));
}

/* ---- kernel summaries ---- */

static void test_kernel_stats_exact(void)
{
    sqlite3 *db = fresh_index();
    xpv_sink *s = open_sink(db);
    xpv_sink_process_device(s, 100, 0);
    xpv_sink_process_device(s, 101, 1);
    int64_t a0[] = {5001, 1003, 3007}, a1[] = {2002, 10010};
    for (int i = 0; i < 3; i++)
        kernel(s, 100, 1 + i % 2, "A", 1000 + i * 100, a0[i]);
    for (int i = 0; i < 2; i++)
        kernel(s, 101, 1, "A", 2000 + i * 100, a1[i]);
    kernel(s, 100, 1, "B", 5000, 4000);
    /* Zero durations are kernel instances (Kineto rounds sub-us kernels to
     * 0); an event without a duration (-1) is not. */
    kernel(s, 100, 1, "Z", 6000, 0);
    kernel(s, 100, 1, "Z", 6100, 0);
    kernel(s, 100, 1, "N", 6200, -1);
    finish(s);

    CU_ASSERT_EQUAL(q_int(db, ks("count", "kernel", 0, "A")), 3);
    CU_ASSERT_EQUAL(q_int(db, ks("total_ps", "kernel", 0, "A")), 9011);
    CU_ASSERT_EQUAL(q_int(db, ks("min_ps", "kernel", 0, "A")), 1003);
    CU_ASSERT_EQUAL(q_int(db, ks("max_ps", "kernel", 0, "A")), 5001);
    CU_ASSERT_DOUBLE_EQUAL(q_double(db, ks("median_ps", "kernel", 0, "A")), 3007, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(q_double(db, ks("stddev_ps", "kernel", 0, "A")), sample_stddev(a0, 3),
                           1e-6);
    CU_ASSERT_DOUBLE_EQUAL(q_double(db, ks("percent", "kernel", 0, "A")),
                           100.0 * 9011 / (9011 + 4000), 1e-9);
    /* device 1: even count, median is the mean of the middle two */
    CU_ASSERT_EQUAL(q_int(db, ks("count", "kernel", 1, "A")), 2);
    CU_ASSERT_DOUBLE_EQUAL(q_double(db, ks("median_ps", "kernel", 1, "A")), 6006, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(q_double(db, ks("percent", "kernel", 1, "A")), 100.0, 1e-9);
    /* all devices */
    int64_t all[] = {5001, 1003, 3007, 2002, 10010};
    CU_ASSERT_EQUAL(q_int(db, ks("count", "kernel", -1, "A")), 5);
    CU_ASSERT_EQUAL(q_int(db, ks("total_ps", "kernel", -1, "A")), 21023);
    CU_ASSERT_DOUBLE_EQUAL(q_double(db, ks("median_ps", "kernel", -1, "A")), 3007, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(q_double(db, ks("stddev_ps", "kernel", -1, "A")), sample_stddev(all, 5),
                           1e-6);
    CU_ASSERT_DOUBLE_EQUAL(q_double(db, ks("percent", "kernel", -1, "A")), 100.0 * 21023 / 25023,
                           1e-9);
    /* one instance: stddev 0 */
    CU_ASSERT_DOUBLE_EQUAL(q_double(db, ks("stddev_ps", "kernel", 0, "B")), 0, 1e-12);
    CU_ASSERT_EQUAL(q_int(db, ks("count", "kernel", -1, "Z")), 2);
    CU_ASSERT_EQUAL(q_int(db, ks("count", "kernel", 0, "Z")), 2);
    CU_ASSERT_EQUAL(q_int(db, ks("total_ps", "kernel", -1, "Z")), 0);
    CU_ASSERT_EQUAL(q_int(db, ks("min_ps", "kernel", -1, "Z")), 0);
    CU_ASSERT_DOUBLE_EQUAL(q_double(db, ks("median_ps", "kernel", -1, "Z")), 0, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(q_double(db, ks("percent", "kernel", -1, "Z")), 0, 1e-12);
    CU_ASSERT_EQUAL(q_int(db, ks("count", "kernel", -1, "N")), -999999);
    CU_ASSERT_STRING_EQUAL(q_text(db, ks("category", "kernel", -1, "A")), "compute");
    CU_ASSERT_EQUAL(q_int(db, "SELECT kernel_count FROM profiles WHERE id=7"), 9);
    CU_ASSERT_EQUAL(q_int(db, "SELECT count(*) FROM kernel_stats WHERE profile_id=7"), 7);
    sqlite3_close(db);
}

static xpv_launch shape(int grid, int block, int regs, double occ, uint32_t op)
{
    xpv_launch l;
    xpv_launch_init(&l);
    l.grid[0] = grid, l.grid[1] = l.grid[2] = 1;
    l.block[0] = block, l.block[1] = l.block[2] = 1;
    l.registers_per_thread = regs;
    l.static_shared_bytes = 1024;
    l.dynamic_shared_bytes = 512;
    l.occupancy_pct = occ;
    l.op = op;
    return l;
}

static void test_launch_shapes_and_collectives(void)
{
    sqlite3 *db = fresh_index();
    xpv_sink *s = open_sink(db);
    xpv_sink_process_device(s, 100, 0);
    uint32_t op = xpv_sink_intern_cstr(s, "fusion.1");
    xpv_launch one = shape(2, 128, 32, 50, op), one_b = shape(2, 128, 32, 70, op);
    xpv_launch other = shape(4, 256, 32, 50, op);
    device_event(s, XPV_KIND_KERNEL, 100, 1, "T", 100, 1000, -1, &one);
    device_event(s, XPV_KIND_KERNEL, 100, 1, "T", 200, 1000, -1, &one_b);
    device_event(s, XPV_KIND_KERNEL, 100, 1, "S", 300, 1000, -1, &one);
    device_event(s, XPV_KIND_KERNEL, 100, 2, "S", 400, 1000, -1, &other);
    uint32_t ar = xpv_sink_intern_cstr(s, "all-reduce.3");
    xpv_launch by_op = shape(1, 1, 1, -1, ar);
    device_event(s, XPV_KIND_KERNEL, 100, 1, "loop_fusion_kernel", 500, 1000, -1, &by_op);
    kernel(s, 100, 1, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", 600, 1000);
    finish(s);

    CU_ASSERT_EQUAL(q_int(db, ks("shapes", "kernel", 0, "T")), 1);
    CU_ASSERT_STRING_EQUAL(q_text(db, ks("grid", "kernel", 0, "T")), "2,1,1");
    CU_ASSERT_STRING_EQUAL(q_text(db, ks("block", "kernel", -1, "T")), "128,1,1");
    CU_ASSERT_EQUAL(q_int(db, ks("registers_per_thread", "kernel", 0, "T")), 32);
    CU_ASSERT_EQUAL(q_int(db, ks("shared_memory_bytes", "kernel", 0, "T")), 1536);
    CU_ASSERT_DOUBLE_EQUAL(q_double(db, ks("occupancy_pct", "kernel", 0, "T")), 60, 1e-9);
    CU_ASSERT_STRING_EQUAL(q_text(db, ks("op", "kernel", 0, "T")), "fusion.1");
    /* two shapes: said so, shape columns left empty */
    CU_ASSERT_EQUAL(q_int(db, ks("shapes", "kernel", 0, "S")), 2);
    CU_ASSERT_STRING_EQUAL(q_text(db, ks("grid", "kernel", 0, "S")), "<null>");
    CU_ASSERT_EQUAL(q_int(db, ks("registers_per_thread", "kernel", -1, "S")), -999999);
    CU_ASSERT_STRING_EQUAL(q_text(db, ks("category", "kernel", -1, "loop_fusion_kernel")),
                           "collective");
    CU_ASSERT_STRING_EQUAL(
        q_text(db, ks("category", "kernel", 0, "ncclDevKernel_AllReduce_Sum_f32_RING_LL")),
        "collective");
    CU_ASSERT_EQUAL(q_int(db, ks("shapes", "kernel", 0, "ncclDevKernel_AllReduce_Sum_f32_RING_LL")),
                    0);
    sqlite3_close(db);
}

/* Shapes that alternate, shared by several streams and devices, interleaved
 * (what defeats caching by "the previous instance" or "the last group that
 * saw this shape"), and a kernel with more shapes than are counted; the
 * launches carry shape keys (as xplane's do) or not. */
static void shapes_shared_and_interleaved(int keyed)
{
    sqlite3 *db = fresh_index();
    xpv_sink *s = open_sink(db);
    xpv_sink_process_device(s, 100, 0);
    xpv_sink_process_device(s, 101, 1);
    xpv_launch a = shape(2, 128, 32, 50, 0), b = shape(4, 128, 32, 50, 0),
               c = shape(8, 128, 32, 50, 0);
    if (keyed) a.shape_key = 11, b.shape_key = 12, c.shape_key = 13;
    const xpv_launch *order[] = {&a, &b, &a, &b, &a, &c};
    int64_t t = 100;
    for (int rep = 0; rep < 3; rep++)
        for (int i = 0; i < 6; i++) {
            const xpv_launch *l = order[i];
            device_event(s, XPV_KIND_KERNEL, 100, 1, "G", t++, 10, -1, l);
            device_event(s, XPV_KIND_KERNEL, 100, 2, "G", t++, 10, -1, l == &c ? &a : l);
            device_event(s, XPV_KIND_KERNEL, 101, 1, "G", t++, 10, -1, l == &c ? &b : l);
        }
    for (int i = 0; i < 300; i++) {
        xpv_launch many = shape(1 + i % 280, 64, 16, -1, 0);
        if (keyed) many.shape_key = (uint32_t)(1000 + i % 280);
        device_event(s, XPV_KIND_KERNEL, 100, 1, "M", 10000 + i, 10, -1, &many);
    }
    finish(s);

    CU_ASSERT_EQUAL(q_int(db, ks("shapes", "kernel", 0, "G")), 3);
    CU_ASSERT_EQUAL(q_int(db, ks("shapes", "kernel", 1, "G")), 2);
    CU_ASSERT_EQUAL(q_int(db, ks("shapes", "kernel", -1, "G")), 3);
    CU_ASSERT_EQUAL(q_int(db, ks("count", "kernel", -1, "G")), 54);
    CU_ASSERT_EQUAL(q_int(db, ks("shapes", "kernel", 0, "M")), 256); /* saturates */
    CU_ASSERT_EQUAL(q_int(db, ks("count", "kernel", 0, "M")), 300);
    sqlite3_close(db);
}

static void test_shapes_shared_and_interleaved(void)
{
    shapes_shared_and_interleaved(0);
}
static void test_shapes_shared_and_interleaved_keyed(void)
{
    shapes_shared_and_interleaved(1);
}

/* A shape key stands for one shape, but one shape may have several keys
 * (texts that differ in occupancy only) or none; a key whose launches have
 * no shape counts none. */
static void test_shape_keys(void)
{
    sqlite3 *db = fresh_index();
    xpv_sink *s = open_sink(db);
    xpv_sink_process_device(s, 100, 0);
    xpv_launch k1 = shape(2, 128, 32, 50, 0), k2 = shape(2, 128, 32, 70, 0);
    xpv_launch plain = shape(2, 128, 32, -1, 0), other = shape(3, 128, 32, -1, 0), none;
    xpv_launch_init(&none);
    k1.shape_key = 5, k2.shape_key = 6, other.shape_key = 7, none.shape_key = 8;
    const xpv_launch *order[] = {&k1, &plain, &k2, &k1, &plain, &k2};
    for (int i = 0; i < 6; i++)
        device_event(s, XPV_KIND_KERNEL, 100, 1, "one", 100 + i, 10, -1, order[i]);
    device_event(s, XPV_KIND_KERNEL, 100, 1, "two", 200, 10, -1, &k1);
    device_event(s, XPV_KIND_KERNEL, 100, 1, "two", 201, 10, -1, &other);
    device_event(s, XPV_KIND_KERNEL, 100, 1, "two", 202, 10, -1, &k1);
    device_event(s, XPV_KIND_KERNEL, 100, 1, "shapeless", 300, 10, -1, &none);
    device_event(s, XPV_KIND_KERNEL, 100, 1, "shapeless", 301, 10, -1, &none);
    finish(s);

    CU_ASSERT_EQUAL(q_int(db, ks("shapes", "kernel", 0, "one")), 1);
    CU_ASSERT_STRING_EQUAL(q_text(db, ks("grid", "kernel", 0, "one")), "2,1,1");
    CU_ASSERT_DOUBLE_EQUAL(q_double(db, ks("occupancy_pct", "kernel", 0, "one")), 60, 1e-9);
    CU_ASSERT_EQUAL(q_int(db, ks("shapes", "kernel", -1, "two")), 2);
    CU_ASSERT_EQUAL(q_int(db, ks("shapes", "kernel", 0, "shapeless")), 0);
    CU_ASSERT_STRING_EQUAL(q_text(db, ks("grid", "kernel", 0, "shapeless")), "<null>");
    sqlite3_close(db);
}

static void test_memcpy_memset_apart(void)
{
    sqlite3 *db = fresh_index();
    xpv_sink *s = open_sink(db);
    xpv_sink_process_device(s, 100, 0);
    kernel(s, 100, 1, "K", 100, 3000);
    device_event(s, XPV_KIND_MEMCPY_H2D, 100, 2, "", 200, 7000, -1, NULL);
    device_event(s, XPV_KIND_MEMCPY_H2D, 100, 2, "", 300, 9000, -1, NULL);
    device_event(s, XPV_KIND_MEMCPY_D2H, 100, 2, "Memcpy DtoH (Device -> Pinned)", 400, 1000, -1,
                 NULL);
    device_event(s, XPV_KIND_MEMSET, 100, 2, "Memset (Device)", 500, 500, -1, NULL);
    finish(s);
    CU_ASSERT_DOUBLE_EQUAL(q_double(db, ks("percent", "kernel", 0, "K")), 100, 1e-9);
    CU_ASSERT_EQUAL(q_int(db, ks("total_ps", "memcpy", 0, "Memcpy HtoD")), 16000);
    CU_ASSERT_DOUBLE_EQUAL(q_double(db, ks("median_ps", "memcpy", -1, "Memcpy HtoD")), 8000, 1e-9);
    CU_ASSERT_STRING_EQUAL(q_text(db, ks("category", "memcpy", 0, "Memcpy HtoD")), "memcpy_h2d");
    CU_ASSERT_STRING_EQUAL(
        q_text(db, ks("category", "memcpy", 0, "Memcpy DtoH (Device -> Pinned)")), "memcpy_d2h");
    CU_ASSERT_DOUBLE_EQUAL(q_double(db, ks("percent", "memcpy", 0, "Memcpy HtoD")),
                           100.0 * 16000 / 17000, 1e-9);
    CU_ASSERT_EQUAL(q_int(db, ks("count", "memset", -1, "Memset (Device)")), 1);
    CU_ASSERT_STRING_EQUAL(q_text(db, ks("shapes", "memset", -1, "Memset (Device)")), "<null>");
    CU_ASSERT_EQUAL(q_int(db, "SELECT kernel_count FROM profiles WHERE id=7"), 1);
    sqlite3_close(db);
}

static void xla_op(xpv_sink *s, int64_t pid, const char *name, const char *category, int64_t ts,
                   int64_t dur_ps)
{
    xpv_arg arg = {.key = xpv_sink_intern_cstr(s, "hlo_category"),
                   .type = XPV_ARG_STR,
                   .v.str = xpv_sink_intern_cstr(s, category)};
    xpv_event ev;
    xpv_event_init(&ev);
    ev.track = xpv_sink_track(s, pid, 3);
    ev.kind = XPV_KIND_XLA_OP;
    ev.name = xpv_sink_intern_cstr(s, name);
    ev.ts_ns = ts;
    ev.dur_ps = dur_ps;
    ev.dur_ns = dur_ps / 1000;
    ev.args = &arg;
    ev.nargs = 1;
    xpv_sink_event(s, &ev);
}

static void test_tpu_xla_ops(void)
{
    sqlite3 *db = fresh_index();
    xpv_sink *s = open_sink(db);
    xpv_sink_process_device(s, 200, 0);
    xpv_sink_process_device(s, 201, 1);
    xla_op(s, 200, "fusion.1", "loop fusion", 100, 1500);
    xla_op(s, 200, "fusion.1", "loop fusion", 200, 2500);
    xla_op(s, 201, "fusion.2", "loop fusion", 100, 4000);
    xla_op(s, 201, "all-reduce.1", "all-reduce", 300, 8000);
    finish(s);
    CU_ASSERT_EQUAL(q_int(db, ks("total_ps", "xla_op", 0, "fusion.1")), 4000);
    CU_ASSERT_DOUBLE_EQUAL(q_double(db, ks("median_ps", "xla_op", -1, "fusion.1")), 2000, 1e-9);
    CU_ASSERT_STRING_EQUAL(q_text(db, ks("category", "xla_op", -1, "all-reduce.1")), "collective");
    CU_ASSERT_EQUAL(q_int(db, ks("count", "hlo_category", -1, "loop fusion")), 3);
    CU_ASSERT_EQUAL(q_int(db, ks("total_ps", "hlo_category", -1, "loop fusion")), 8000);
    CU_ASSERT_EQUAL(q_int(db, ks("total_ps", "hlo_category", 1, "loop fusion")), 4000);
    CU_ASSERT_DOUBLE_EQUAL(q_double(db, ks("percent", "hlo_category", -1, "all-reduce")), 50, 1e-9);
    CU_ASSERT_EQUAL(q_int(db, "SELECT kernel_count FROM profiles WHERE id=7"), 4);
    CU_ASSERT_EQUAL(q_int(db, "SELECT count(*) FROM kernel_stats WHERE kind='kernel'"), 0);
    sqlite3_close(db);
}

static void test_op_through_correlation(void)
{
    sqlite3 *db = fresh_index();
    xpv_sink *s = open_sink(db);
    xpv_sink_fact(s, "producer", "PyTorch");
    xpv_sink_process_device(s, 100, 0);
    host_event(s, XPV_KIND_OTHER, "cpu_op", "aten::conv2d", 0, 1000, -1);
    host_event(s, XPV_KIND_OTHER, "cpu_op", "aten::cudnn_convolution", 50, 450, -1);
    host_event(s, XPV_KIND_LAUNCH, "cuda_runtime", "cudaLaunchKernel", 100, 10, 5);
    host_event(s, XPV_KIND_LAUNCH, "cuda_runtime", "cudaLaunchKernel", 700, 10, 6);
    host_event(s, XPV_KIND_OTHER, "python_function", "forward", 600, 200, -1);
    device_event(s, XPV_KIND_KERNEL, 100, 7, "K1", 300, 2000, 5, NULL);
    device_event(s, XPV_KIND_KERNEL, 100, 7, "K2", 900, 2000, 6, NULL);
    finish(s);
    CU_ASSERT_STRING_EQUAL(q_text(db, ks("op", "kernel", 0, "K1")), "aten::cudnn_convolution");
    CU_ASSERT_STRING_EQUAL(q_text(db, ks("op", "kernel", -1, "K2")), "aten::conv2d");
    sqlite3_close(db);
}

/* ---- steps ---- */

static void test_marker_preference_and_merge(void)
{
    sqlite3 *db = fresh_index();
    xpv_sink *s = open_sink(db);
    marker(s, 1, XPV_STEP_NVTX, 1, "nvtx step 1", 0, 100);
    marker(s, 1, XPV_STEP_PROFILER_STEP, 5, "ProfilerStep#5", 1000, 500);
    marker(s, 2, XPV_STEP_PROFILER_STEP, 5, "ProfilerStep#5", 1100, 600); /* other thread */
    marker(s, 1, XPV_STEP_PROFILER_STEP, 6, "ProfilerStep#6", 2000, 500);
    /* GPU-side copy of the step on a device track: not the step's window */
    xpv_sink_process_device(s, 100, 0);
    xpv_event gpu_copy;
    xpv_event_init(&gpu_copy);
    gpu_copy.track = xpv_sink_track(s, 100, 7);
    gpu_copy.kind = XPV_KIND_STEP;
    gpu_copy.step_src = XPV_STEP_PROFILER_STEP;
    gpu_copy.step = 6;
    gpu_copy.name = xpv_sink_intern_cstr(s, "ProfilerStep#6");
    gpu_copy.ts_ns = 2010;
    gpu_copy.dur_ns = 9000;
    gpu_copy.dur_ps = 9000000;
    xpv_sink_event(s, &gpu_copy);
    marker(s, 1, XPV_STEP_TF, 9, "tf", 0, 5000);
    finish(s);
    CU_ASSERT_STRING_EQUAL(q_text(db, "SELECT step_source FROM profiles WHERE id=7"),
                           "profiler_step");
    CU_ASSERT_EQUAL(q_int(db, "SELECT step_count FROM profiles WHERE id=7"), 2);
    CU_ASSERT_EQUAL(q_int(db, step_col("start_ps", 5, -1)), 1000000);
    CU_ASSERT_EQUAL(q_int(db, step_col("duration_ps", 5, -1)), 700000);
    CU_ASSERT_STRING_EQUAL(q_text(db, step_col("name", 6, -1)), "ProfilerStep#6");
    /* no device: idle and host time are the whole step */
    CU_ASSERT_EQUAL(q_int(db, step_col("idle_ps", 6, -1)), 500000);
    CU_ASSERT_EQUAL(q_int(db, step_col("host_ps", 6, -1)), 500000);
    CU_ASSERT_EQUAL(q_int(db, "SELECT count(*) FROM steps WHERE profile_id=7"), 2);
    sqlite3_close(db);

    db = fresh_index();
    s = open_sink(db);
    marker(s, 1, XPV_STEP_STEPS_LINE, -1, "1", 0, 100);
    marker(s, 1, XPV_STEP_STEPS_LINE, -1, "2", 200, 100);
    marker(s, 1, XPV_STEP_ANNOTATION, 3, "train", 0, 150);
    finish(s);
    CU_ASSERT_STRING_EQUAL(q_text(db, "SELECT step_source FROM profiles WHERE id=7"), "annotation");
    CU_ASSERT_EQUAL(q_int(db, "SELECT step FROM steps WHERE profile_id=7"), 3);
    sqlite3_close(db);

    /* unnumbered markers are numbered in order */
    db = fresh_index();
    s = open_sink(db);
    marker(s, 1, XPV_STEP_STEPS_LINE, -1, "b", 200, 100);
    marker(s, 1, XPV_STEP_STEPS_LINE, -1, "a", 0, 100);
    finish(s);
    CU_ASSERT_STRING_EQUAL(q_text(db, "SELECT step_source FROM profiles WHERE id=7"), "steps_line");
    CU_ASSERT_STRING_EQUAL(q_text(db, step_col("name", 1, -1)), "b");
    sqlite3_close(db);
}

static void test_correlation_vs_time_join(void)
{
    sqlite3 *db = fresh_index();
    xpv_sink *s = open_sink(db);
    xpv_sink_process_device(s, 100, 0);
    marker(s, 1, XPV_STEP_PROFILER_STEP, 1, "ProfilerStep#1", 0, 1000);
    marker(s, 1, XPV_STEP_PROFILER_STEP, 2, "ProfilerStep#2", 1000, 1000);
    host_event(s, XPV_KIND_LAUNCH, "cuda_runtime", "cudaLaunchKernel", 100, 5, 11);
    host_event(s, XPV_KIND_LAUNCH, "cuda_runtime", "cudaLaunchKernel", 900, 5, 12);
    host_event(s, XPV_KIND_LAUNCH, "cuda_runtime", "cudaLaunchKernel", 1500, 5, 13);
    /* launched in step 1, runs in step 1 */
    device_event(s, XPV_KIND_KERNEL, 100, 7, "k", 200, 100000, 11, NULL);
    /* launched in step 1 (corr 12) but runs in step 2: step 1's work, in
     * full; during step 2 it still keeps the device busy */
    device_event(s, XPV_KIND_KERNEL, 100, 7, "k", 1100, 50000, 12, NULL);
    /* launched in step 2 */
    device_event(s, XPV_KIND_KERNEL, 100, 7, "k", 1600, 30000, 13, NULL);
    /* no correlation: joins by start time (step 2), full duration; idle
     * counts only the part inside the window */
    device_event(s, XPV_KIND_MEMCPY_H2D, 100, 8, "", 1950, 80000, -1, NULL);
    /* correlation without a known launch: time join (step 1) */
    device_event(s, XPV_KIND_MEMSET, 100, 8, "", 500, 7000, 99, NULL);
    /* outside every step: nowhere */
    device_event(s, XPV_KIND_KERNEL, 100, 7, "k", 3000, 1000, -1, NULL);
    finish(s);
    CU_ASSERT_EQUAL(q_int(db, step_col("compute_ps", 1, 0)), 150000);
    CU_ASSERT_EQUAL(q_int(db, step_col("memset_ps", 1, 0)), 7000);
    CU_ASSERT_EQUAL(q_int(db, step_col("idle_ps", 1, 0)), 1000000 - 100000 - 7000);
    CU_ASSERT_EQUAL(q_int(db, step_col("compute_ps", 2, 0)), 30000);
    CU_ASSERT_EQUAL(q_int(db, step_col("memcpy_h2d_ps", 2, 0)), 80000);
    CU_ASSERT_EQUAL(q_int(db, step_col("idle_ps", 2, 0)), 1000000 - 50000 - 30000 - 50000);
    CU_ASSERT_EQUAL(q_int(db, step_col("compute_ps", 2, -1)), 30000);
    CU_ASSERT_EQUAL(q_int(db, step_col("host_ps", 2, -1)), 1000000 - 130000);
    char *w = q_text(db, "SELECT warnings FROM profiles WHERE id=7");
    CU_ASSERT_PTR_NOT_NULL(strstr(w, "3 device events joined to their step through the "
                                     "correlation id of their host launch, 2 by their start time"));
    sqlite3_close(db);
}

/* Correlation ids that interleave between steps: the join stays exact for
 * every id with a launch, and ids without one join by time. */
static void test_interleaved_ids(void)
{
    sqlite3 *db = fresh_index();
    xpv_sink *s = open_sink(db);
    xpv_sink_process_device(s, 100, 0);
    marker(s, 1, XPV_STEP_PROFILER_STEP, 1, "ProfilerStep#1", 0, 1000);
    marker(s, 1, XPV_STEP_PROFILER_STEP, 2, "ProfilerStep#2", 1000, 1000);
    host_event(s, XPV_KIND_LAUNCH, "cuda_runtime", "cudaLaunchKernel", 100, 5, 5);
    host_event(s, XPV_KIND_LAUNCH, "cuda_runtime", "cudaLaunchKernel", 200, 5, 9);
    host_event(s, XPV_KIND_LAUNCH, "cuda_runtime", "cudaLaunchKernel", 1500, 5, 7);
    device_event(s, XPV_KIND_KERNEL, 100, 7, "k", 1600, 1000, 7, NULL);
    device_event(s, XPV_KIND_KERNEL, 100, 7, "k", 1100, 2000, 9, NULL); /* runs in step 2 */
    device_event(s, XPV_KIND_KERNEL, 100, 7, "k", 300, 30000, 5, NULL);
    device_event(s, XPV_KIND_KERNEL, 100, 7, "k", 1200, 4000, 6, NULL); /* no launch: time */
    device_event(s, XPV_KIND_KERNEL, 100, 7, "k", 400, 8000, 8, NULL);  /* no launch: time */
    finish(s);
    CU_ASSERT_EQUAL(q_int(db, step_col("compute_ps", 1, 0)), 2000 + 30000 + 8000);
    CU_ASSERT_EQUAL(q_int(db, step_col("compute_ps", 2, 0)), 1000 + 4000);
    char *w = q_text(db, "SELECT warnings FROM profiles WHERE id=7");
    CU_ASSERT_PTR_NOT_NULL(strstr(w, "3 device events joined to their step through the "
                                     "correlation id of their host launch, 2 by their start time"));
    sqlite3_close(db);
}

/* A launch on host thread (1, tid) with no duration. */
static void launch_on(xpv_sink *s, int64_t tid, int64_t ts_ns, int64_t corr)
{
    xpv_event ev;
    xpv_event_init(&ev);
    ev.track = xpv_sink_track(s, 1, tid);
    ev.kind = XPV_KIND_LAUNCH;
    ev.name = xpv_sink_intern_cstr(s, "cudaLaunchKernel");
    ev.ts_ns = ts_ns;
    ev.dur_ns = 0;
    ev.dur_ps = 0;
    ev.corr = corr;
    xpv_sink_event(s, &ev);
}

enum { SEG_STEPS = 4, SEG_LAUNCHES = 200000, SEG_STEP_NS = 10000000, SEG_GAP = 1009 };

static int64_t seg_launch_ts(int64_t i)
{
    return SEG_STEP_NS + i * 200;
}

/* Step (0-based) whose window [k+1 steps, +90%) holds t, or -1. */
static int seg_step_of(int64_t t)
{
    int64_t k = t / SEG_STEP_NS - 1;
    if (k < 0 || k >= SEG_STEPS || t % SEG_STEP_NS >= SEG_STEP_NS / 10 * 9) return -1;
    return (int)k;
}

/* Many launches across step boundaries and the gaps between steps, on one
 * host thread (even ids) or two with interleaved ids (the second odd ids,
 * a few never launched): most capture segments settle as a whole, the rest
 * are read launch by launch. Kernels join through launched ids, ids never
 * launched (whose neighbours decide) and ids past every launch (time
 * join); compute per step must match the per-launch rule exactly. */
static void launch_segments(int threads)
{
    sqlite3 *db = fresh_index();
    xpv_sink *s = open_sink(db);
    xpv_sink_process_device(s, 100, 0);
    for (int k = 0; k < SEG_STEPS; k++)
        marker(s, 1, XPV_STEP_PROFILER_STEP, k, "ProfilerStep", (int64_t)(k + 1) * SEG_STEP_NS,
               SEG_STEP_NS / 10 * 9);
    for (int64_t i = 0; i < SEG_LAUNCHES; i++)
        launch_on(s, 2, seg_launch_ts(i), 2 * i);
    for (int64_t i = 0; i < SEG_LAUNCHES && threads == 2; i++)
        if (i % SEG_GAP) launch_on(s, 3, seg_launch_ts(i) + 100, 2 * i + 1);
    int64_t expect[SEG_STEPS] = {0};
    for (int64_t i = 0; i + 1 < SEG_LAUNCHES; i += 7) {
        int64_t corr = 2 * i + (i % 2), dur_ps = 1000 + i % 5000;
        int k = seg_step_of(seg_launch_ts(i));
        /* an odd id never launched: its neighbours 2i and 2i + 2 decide */
        int launched = corr % 2 == 0 || (threads == 2 && i % SEG_GAP);
        if (!launched && k != seg_step_of(seg_launch_ts(i + 1))) k = -2;
        /* half a step after its launch, so that the time join would differ */
        int64_t ts = seg_launch_ts(i) + SEG_STEP_NS / 2;
        if (k == -2) k = seg_step_of(ts); /* no position: the time join */
        if (k >= 0) expect[k] += dur_ps;
        device_event(s, XPV_KIND_KERNEL, 100, 7, "k", ts, dur_ps, corr, NULL);
    }
    /* ids past every launch: the time join */
    device_event(s, XPV_KIND_KERNEL, 100, 7, "k", 2 * SEG_STEP_NS + 5, 777, 4 * SEG_LAUNCHES, NULL);
    expect[1] += 777;
    finish(s);
    for (int k = 0; k < SEG_STEPS; k++)
        CU_ASSERT_EQUAL(q_int(db, step_col("compute_ps", k, 0)), expect[k]);
    sqlite3_close(db);
}

static void test_launch_segments(void)
{
    launch_segments(1);
    launch_segments(2);
}

static void test_interval_union(void)
{
    sqlite3 *db = fresh_index();
    xpv_sink *s = open_sink(db);
    xpv_sink_process_device(s, 100, 0);
    xpv_sink_process_device(s, 101, 1);
    marker(s, 1, XPV_STEP_ANNOTATION, 0, "train", 0, 1000);
    kernel(s, 100, 1, "a", 100, 300000); /* [100, 400) */
    kernel(s, 100, 2, "b", 300, 300000); /* [300, 600), other stream */
    kernel(s, 101, 1, "c", 550, 150000); /* [550, 700), other device */
    kernel(s, 101, 1, "ncclAllReduce", 900, 50000);
    finish(s);
    CU_ASSERT_EQUAL(q_int(db, step_col("compute_ps", 0, 0)), 600000);
    CU_ASSERT_EQUAL(q_int(db, step_col("idle_ps", 0, 0)), 500000);
    CU_ASSERT_EQUAL(q_int(db, step_col("idle_ps", 0, 1)), 1000000 - 200000);
    CU_ASSERT_EQUAL(q_int(db, step_col("collective_ps", 0, 1)), 50000);
    CU_ASSERT_EQUAL(q_int(db, step_col("compute_ps", 0, -1)), 750000);
    CU_ASSERT_EQUAL(q_int(db, step_col("collective_ps", 0, -1)), 50000);
    /* combined union: [100, 700) + [900, 950) */
    CU_ASSERT_EQUAL(q_int(db, step_col("idle_ps", 0, -1)), 1000000 - 650000);
    CU_ASSERT_EQUAL(q_int(db, step_col("host_ps", 0, -1)), 1000000 - 650000);
    CU_ASSERT_EQUAL(q_int(db, step_col("host_ps", 0, 0)), 1000000 - 650000);
    CU_ASSERT_EQUAL(q_int(db, "SELECT count(*) FROM steps WHERE profile_id=7"), 3);
    sqlite3_close(db);
}

/* Unix-epoch ns (as PyTorch traces have) overflow int64 in ps: step starts
 * count from the profile's start. */
static void test_epoch_timestamps(void)
{
    const int64_t t0 = 1623142623460172000LL;
    sqlite3 *db = fresh_index();
    xpv_sink *s = open_sink(db);
    xpv_sink_process_device(s, 100, 0);
    host_event(s, XPV_KIND_OTHER, "cpu_op", "first", t0 - 500, 10, -1);
    marker(s, 1, XPV_STEP_PROFILER_STEP, 5, "ProfilerStep#5", t0, 176078000);
    host_event(s, XPV_KIND_LAUNCH, "cuda_runtime", "cudaLaunchKernel", t0 + 1000, 5, 1);
    device_event(s, XPV_KIND_KERNEL, 100, 7, "k", t0 + 2000, 123456789, 1, NULL);
    finish(s);
    CU_ASSERT_EQUAL(q_int(db, step_col("start_ps", 5, -1)), 500000);
    CU_ASSERT_EQUAL(q_int(db, step_col("duration_ps", 5, -1)), 176078000000LL);
    CU_ASSERT_EQUAL(q_int(db, step_col("compute_ps", 5, 0)), 123456789);
    CU_ASSERT_EQUAL(q_int(db, step_col("idle_ps", 5, 0)), 176078000000LL - 123456789);
    CU_ASSERT_EQUAL(q_int(db, "SELECT start_ns FROM profiles WHERE id=7"), t0 - 500);
    sqlite3_close(db);
}

/* One stray event at ts 0 beside epoch times (seen in damaged and odd real
 * traces) puts 1.6e18 ns between the profile's start and its steps: more
 * picoseconds than int64 holds. The steps must still come out whole. */
static void test_stray_event_at_time_zero(void)
{
    const int64_t t0 = 1623142623460172000LL;
    sqlite3 *db = fresh_index();
    xpv_sink *s = open_sink(db);
    xpv_sink_process_device(s, 100, 0);
    host_event(s, XPV_KIND_OTHER, "cpu_op", "stray", 0, 10, -1);
    marker(s, 1, XPV_STEP_PROFILER_STEP, 5, "ProfilerStep#5", t0, 1000000);
    marker(s, 1, XPV_STEP_PROFILER_STEP, 6, "ProfilerStep#6", t0 + 1000000, 2000000);
    kernel(s, 100, 7, "k", t0 + 1000, 300000000);
    finish(s);
    CU_ASSERT_EQUAL(q_int(db, "SELECT step_count FROM profiles WHERE id=7"), 2);
    CU_ASSERT_EQUAL(q_int(db, step_col("duration_ps", 5, -1)), 1000000000LL);
    CU_ASSERT_EQUAL(q_int(db, step_col("duration_ps", 6, -1)), 2000000000LL);
    CU_ASSERT_EQUAL(q_int(db, step_col("compute_ps", 5, 0)), 300000000);
    sqlite3_close(db);
}

static void module_event(xpv_sink *s, const char *name, int64_t ts, int64_t dur_ns)
{
    device_event(s, XPV_KIND_XLA_MODULE, 200, 1, name, ts, dur_ns * 1000, -1, NULL);
}

static void kernel_of_module(xpv_sink *s, const char *module, int64_t ts, int64_t dur_ns)
{
    xpv_arg arg = {.key = xpv_sink_intern_cstr(s, "hlo_module"),
                   .type = XPV_ARG_STR,
                   .v.str = xpv_sink_intern_cstr(s, module)};
    xpv_event ev;
    xpv_event_init(&ev);
    ev.track = xpv_sink_track(s, 100, 1);
    ev.kind = XPV_KIND_KERNEL;
    ev.name = xpv_sink_intern_cstr(s, "fusion_kernel");
    ev.ts_ns = ts;
    ev.dur_ns = dur_ns;
    ev.dur_ps = dur_ns * 1000;
    ev.args = &arg;
    ev.nargs = 1;
    xpv_sink_event(s, &ev);
}

static void test_module_fallback(void)
{
    sqlite3 *db = fresh_index();
    xpv_sink *s = open_sink(db);
    xpv_sink_process_device(s, 200, 0);
    module_event(s, "jit_train_step", 2000, 500);
    module_event(s, "jit_train_step", 0, 500);
    module_event(s, "jit_init", 600, 100);
    module_event(s, "jit_train_step", 1000, 700);
    finish(s);
    CU_ASSERT_STRING_EQUAL(q_text(db, "SELECT step_source FROM profiles WHERE id=7"), "module");
    CU_ASSERT_EQUAL(q_int(db, "SELECT step_count FROM profiles WHERE id=7"), 3);
    CU_ASSERT_EQUAL(q_int(db, step_col("start_ps", 1, -1)), 1000000);
    CU_ASSERT_EQUAL(q_int(db, step_col("duration_ps", 1, -1)), 700000);
    CU_ASSERT_STRING_EQUAL(q_text(db, step_col("name", 2, -1)), "jit_train_step");
    sqlite3_close(db);

    /* no XLA_MODULE events: executions of the commonest hlo_module of kernels */
    db = fresh_index();
    s = open_sink(db);
    xpv_sink_process_device(s, 100, 0);
    for (int e = 0; e < 3; e++)
        for (int k = 0; k < 4; k++)
            kernel_of_module(s, "jit_step", e * 10000000 + k * 1000, 900);
    kernel_of_module(s, "jit_init", 5000000, 900);
    finish(s);
    CU_ASSERT_STRING_EQUAL(q_text(db, "SELECT step_source FROM profiles WHERE id=7"), "module");
    CU_ASSERT_EQUAL(q_int(db, "SELECT step_count FROM profiles WHERE id=7"), 3);
    CU_ASSERT_EQUAL(q_int(db, step_col("start_ps", 2, -1)), 20000000LL * 1000);
    CU_ASSERT_EQUAL(q_int(db, step_col("duration_ps", 2, -1)), 3900000);
    CU_ASSERT_EQUAL(q_int(db, step_col("compute_ps", 2, 0)), 4 * 900000);
    CU_ASSERT_STRING_EQUAL(q_text(db, step_col("name", 0, -1)), "jit_step");
    sqlite3_close(db);
}

/* Without ProfilerStep#N: training_step annotations, then Optimizer.step
 * markers, whose steps run from one optimizer step's end to the next's. */
static void test_weaker_pytorch_markers(void)
{
    sqlite3 *db = fresh_index();
    xpv_sink *s = open_sink(db);
    marker(s, 1, XPV_STEP_OPTIMIZER, -1, "Optimizer.step#SGD.step", 900, 50);
    marker(s, 1, XPV_STEP_TRAINING_STEP, -1, "[LightningModule]M.training_step", 100, 900);
    marker(s, 1, XPV_STEP_TRAINING_STEP, -1, "[LightningModule]M.training_step", 1100, 800);
    finish(s);
    CU_ASSERT_STRING_EQUAL(q_text(db, "SELECT step_source FROM profiles WHERE id=7"),
                           "training_step");
    CU_ASSERT_EQUAL(q_int(db, "SELECT step_count FROM profiles WHERE id=7"), 2);
    CU_ASSERT_EQUAL(q_int(db, step_col("duration_ps", 1, -1)), 800000);
    sqlite3_close(db);

    db = fresh_index();
    s = open_sink(db);
    /* two threads; thread 2's markers start later (merged by order) */
    int64_t ends[] = {1000, 2500, 4000, 4600};
    for (int i = 0; i < 4; i++)
        marker(s, 1, XPV_STEP_OPTIMIZER, -1, "Optimizer.step#Adam.step", ends[i] - 100, 100);
    for (int i = 0; i < 2; i++)
        marker(s, 2, XPV_STEP_OPTIMIZER, -1, "Optimizer.step#Adam.step", 1500 + i * 1000, 100);
    finish(s);
    CU_ASSERT_STRING_EQUAL(q_text(db, "SELECT step_source FROM profiles WHERE id=7"),
                           "optimizer_step");
    CU_ASSERT_EQUAL(q_int(db, "SELECT step_count FROM profiles WHERE id=7"), 3);
    /* times from the profile start, the first marker at 900 ns */
    CU_ASSERT_EQUAL(q_int(db, step_col("start_ps", 0, -1)), 100000);
    CU_ASSERT_EQUAL(q_int(db, step_col("duration_ps", 0, -1)), 1600000); /* to thread 2's 2600 */
    CU_ASSERT_EQUAL(q_int(db, step_col("start_ps", 1, -1)), 1600000);
    CU_ASSERT_EQUAL(q_int(db, step_col("duration_ps", 1, -1)), 1500000);
    CU_ASSERT_EQUAL(q_int(db, step_col("duration_ps", 2, -1)), 600000);
    CU_ASSERT_STRING_EQUAL(q_text(db, step_col("name", 2, -1)), "Optimizer.step#Adam.step");
    sqlite3_close(db);

    /* Lightning nests [Strategy]...training_step around
     * [LightningModule]...training_step: one step per iteration, not two */
    db = fresh_index();
    s = open_sink(db);
    for (int i = 0; i < 4; i++) {
        marker(s, 1, XPV_STEP_TRAINING_STEP, -1, "[Strategy]DDP.training_step", i * 1000, 900);
        marker(s, 1, XPV_STEP_TRAINING_STEP, -1, "[LightningModule]M.training_step", i * 1000 + 10,
               800);
    }
    finish(s);
    CU_ASSERT_EQUAL(q_int(db, "SELECT step_count FROM profiles WHERE id=7"), 4);
    CU_ASSERT_EQUAL(q_int(db, step_col("duration_ps", 3, -1)), 900000);
    CU_ASSERT_STRING_EQUAL(q_text(db, step_col("name", 2, -1)), "[Strategy]DDP.training_step");
    sqlite3_close(db);

    /* one optimizer marker makes no step: the next source decides */
    db = fresh_index();
    s = open_sink(db);
    marker(s, 1, XPV_STEP_OPTIMIZER, -1, "Optimizer.step#SGD.step", 900, 50);
    finish(s);
    CU_ASSERT_STRING_EQUAL(q_text(db, "SELECT step_source FROM profiles WHERE id=7"), "none");
    CU_ASSERT_EQUAL(q_int(db, "SELECT step_count FROM profiles WHERE id=7"), 0);
    sqlite3_close(db);
}

static void test_no_markers(void)
{
    sqlite3 *db = fresh_index();
    xpv_sink *s = open_sink(db);
    xpv_sink_process_device(s, 100, 0);
    kernel(s, 100, 1, "k", 0, 1000);
    finish(s);
    CU_ASSERT_STRING_EQUAL(q_text(db, "SELECT step_source FROM profiles WHERE id=7"), "none");
    CU_ASSERT_EQUAL(q_int(db, "SELECT step_count FROM profiles WHERE id=7"), 0);
    CU_ASSERT_EQUAL(q_int(db, "SELECT count(*) FROM steps"), 0);
    sqlite3_close(db);
}

/* Durations past a tiny memory cap go through the temp file; the medians
 * and totals must not change. */
static void test_spilled_durations(void)
{
    setenv("XPV_ANALYSIS_DURATION_CAP", "256", 1);
    sqlite3 *db = fresh_index();
    xpv_sink *s = open_sink(db);
    xpv_sink_process_device(s, 100, 0);
    xpv_sink_process_device(s, 101, 1);
    enum { N = 20001 };
    int64_t sum[3] = {0};
    for (int i = 0; i < N; i++) {
        int64_t d = 1000 + (int64_t)((i * 7919) % N);
        char name[8];
        snprintf(name, sizeof name, "k%d", i % 3);
        kernel(s, 100 + i % 2, 1, name, i * 10, d);
        sum[i % 3] += d;
    }
    finish(s);
    unsetenv("XPV_ANALYSIS_DURATION_CAP");
    /* k0 holds i = 0, 3, 6, ...: its durations, sorted, give the median. */
    int64_t *v = malloc(N * sizeof *v);
    int n = 0;
    for (int i = 0; i < N; i += 3)
        v[n++] = 1000 + (int64_t)((i * 7919) % N);
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && v[j - 1] > v[j]; j--) {
            int64_t t = v[j];
            v[j] = v[j - 1];
            v[j - 1] = t;
        }
    double median = n % 2 ? (double)v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
    CU_ASSERT_EQUAL(q_int(db, ks("count", "kernel", -1, "k0")), n);
    CU_ASSERT_EQUAL(q_int(db, ks("total_ps", "kernel", -1, "k0")), sum[0]);
    CU_ASSERT_EQUAL(q_int(db, ks("total_ps", "kernel", -1, "k2")), sum[2]);
    CU_ASSERT_DOUBLE_EQUAL(q_double(db, ks("median_ps", "kernel", -1, "k0")), median, 1e-9);
    CU_ASSERT_EQUAL(q_int(db, ks("min_ps", "kernel", -1, "k0")), v[0]);
    CU_ASSERT_EQUAL(q_int(db, ks("max_ps", "kernel", -1, "k0")), v[n - 1]);
    CU_ASSERT_EQUAL(q_int(db, "SELECT sum(count) FROM kernel_stats WHERE device>=0"), N);
    free(v);
    sqlite3_close(db);
}

/* The whole kernel_stats table of the profile, one line per row, in a fixed
 * order (malloc'ed). */
static char *kernel_table(sqlite3 *db)
{
    static const char *const sql =
        "SELECT group_concat(line, char(10)) FROM (SELECT kind || '|' || device || '|' || name"
        " || '|' || category || '|' || count || '|' || total_ps || '|' || min_ps || '|' ||"
        " max_ps || '|' || median_ps || '|' || stddev_ps || '|' || ifnull(percent, '-') || '|'"
        " || ifnull(grid, '-') || '|' || ifnull(block, '-') || '|' ||"
        " ifnull(registers_per_thread, '-') || '|' || ifnull(shared_memory_bytes, '-') || '|'"
        " || ifnull(occupancy_pct, '-') || '|' || ifnull((SELECT value FROM strings s WHERE"
        " s.profile_id=7 AND s.id=op_id), '-') || '|' || ifnull(shapes, '-')"
        " AS line FROM kernel_stats WHERE profile_id=7 ORDER BY kind, device, name)";
    sqlite3_stmt *st;
    char *out = NULL;
    CU_ASSERT_FATAL(sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK);
    if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
        out = strdup((const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    return out ? out : strdup("");
}

/* Kernels and copies on two devices, the reader's promise that no device
 * work is left (if `promise`), a few batches of host events, then (if
 * `late`) device work after all; returns the kernel_stats table. */
static char *rows_around_promise(int promise, int late)
{
    sqlite3 *db = fresh_index();
    xpv_sink *s = open_sink(db);
    xpv_sink_process_device(s, 100, 0);
    xpv_sink_process_device(s, 101, 1);
    for (int i = 0; i < 30000; i++) {
        char name[8];
        snprintf(name, sizeof name, "k%d", i % 7);
        xpv_launch l = shape(64 + i % 2, 128, 32, 50.0 + i % 3, 0);
        device_event(s, XPV_KIND_KERNEL, 100 + i % 2, 1 + (i % 3 == 0), name, i * 10,
                     1000 + (i * 7919) % 5003, -1, i % 5 ? NULL : &l);
        if (i % 100 == 0)
            device_event(s, XPV_KIND_MEMCPY_H2D, 100, 8, "copy", i * 10, 777 + i, -1, NULL);
    }
    if (promise) xpv_sink_device_work_done(s);
    for (int i = 0; i < 20000; i++)
        host_event(s, XPV_KIND_OTHER, "python", "step", 400000 + i * 10, 5, -1);
    for (int i = 0; late && i < 10; i++) {
        kernel(s, 101, 9, "k1", 700000 + i * 10, 3000 + i); /* a new track */
        kernel(s, 100, 1, "k_late", 800000 + i * 10, 100 + i);
    }
    finish(s);
    char *table = kernel_table(db);
    CU_ASSERT_EQUAL(q_int(db, ks("count", "kernel", -1, "k_late")), late ? 10 : -999999);
    sqlite3_close(db);
    return table;
}

/* Rows computed as the device work ends (beside the reader, see
 * xpv_sink_device_work_done) equal those computed at finish, spilled or
 * not; device work after the promise makes finish compute them again. */
static void test_rows_when_device_work_ends(void)
{
    for (int spilled = 0; spilled < 2; spilled++) {
        if (spilled) setenv("XPV_ANALYSIS_DURATION_CAP", "4096", 1);
        for (int late = 0; late < 2; late++) {
            char *at_finish = rows_around_promise(0, late);
            char *early = rows_around_promise(1, late);
            CU_ASSERT(strlen(at_finish) > 1000);
            CU_ASSERT_STRING_EQUAL(early, at_finish);
            free(at_finish);
            free(early);
        }
        unsetenv("XPV_ANALYSIS_DURATION_CAP");
    }
}

/* With room for one interval at a time, every step window is split down
 * to single events: the numbers must not change. */
static void test_split_windows(void)
{
    setenv("XPV_ANALYSIS_INTERVAL_CAP", "1", 1);
    test_interval_union();
    test_correlation_vs_time_join();
    test_module_fallback();
    test_interleaved_ids();
    setenv("XPV_ANALYSIS_INTERVAL_CAP", "3", 1);
    test_interval_union();
    test_epoch_timestamps();
    unsetenv("XPV_ANALYSIS_INTERVAL_CAP");
}

/* Finish reads the events again from the capture when it holds them all,
 * else from the store: with no capture, and with one that overflows partway,
 * the numbers must not change. */
static void test_store_path(void)
{
    static const char *const caps[] = {"0", "5000"};
    for (int i = 0; i < 2; i++) {
        setenv("XPV_ANALYSIS_CAPTURE_CAP", caps[i], 1);
        test_kernel_stats_exact();
        test_op_through_correlation();
        test_correlation_vs_time_join();
        test_interval_union();
        test_interleaved_ids();
        test_launch_segments();
        test_epoch_timestamps();
        test_module_fallback();
        test_spilled_durations();
    }
    unsetenv("XPV_ANALYSIS_CAPTURE_CAP");
}

int main(void)
{
    static const xpv_test_case tests[] = {
        {"exact totals, medians, stddev, percent per device", test_kernel_stats_exact},
        {"launch shapes, ops and collectives", test_launch_shapes_and_collectives},
        {"shapes shared across streams and devices", test_shapes_shared_and_interleaved},
        {"shapes shared across streams and devices, keyed",
         test_shapes_shared_and_interleaved_keyed},
        {"shape keys", test_shape_keys},
        {"memcpy and memset summarised apart", test_memcpy_memset_apart},
        {"TPU XLA ops and hlo_category", test_tpu_xla_ops},
        {"CPU op through correlation", test_op_through_correlation},
        {"step marker preference and merging", test_marker_preference_and_merge},
        {"correlation join vs time join", test_correlation_vs_time_join},
        {"idle from interval unions", test_interval_union},
        {"interleaved correlation ids", test_interleaved_ids},
        {"launch segments settled whole or read", test_launch_segments},
        {"epoch timestamps", test_epoch_timestamps},
        {"a stray event at time zero", test_stray_event_at_time_zero},
        {"module fallback", test_module_fallback},
        {"training_step and Optimizer.step markers", test_weaker_pytorch_markers},
        {"no markers: none", test_no_markers},
        {"spilled durations stay exact", test_spilled_durations},
        {"kernel rows computed as the device work ends", test_rows_when_device_work_ends},
        {"split step windows stay exact", test_split_windows},
        {"the store path gives the same numbers", test_store_path},
        {NULL, NULL},
    };
    return xpv_test_run("analysis", tests, 0);
}
