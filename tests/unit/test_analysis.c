/*
 * test_analysis.c — kernel summaries computed through the sink from
 * hand-made events, checked against numbers worked out by hand: exact
 * totals, medians (odd and even counts), sample stddev, percent,
 * per-device and all-device rows, launch shapes, ops through correlation,
 * memcpy/memset kept apart, TPU XLA ops and hlo_category, the spill path
 * of the duration store, and rows computed as the device work ends. Step
 * timelines: test_analysis_steps.c.
 */
#define _POSIX_C_SOURCE 200809L
#include "analysis_testutil.h"
#include "store/kernel_device_stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- reading results ---- */

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

static const char *ks(const char *col, const char *kind, int device, const char *name)
{
    static char sql[512];
    if (strcmp(col, "op") == 0) /* the op's text is in strings */
        col = "(SELECT r.value FROM strings s, string_rows(s.first_id, s.data) r WHERE"
              " s.profile_id=7 AND r.id=op_id)";
    snprintf(sql, sizeof sql,
             "SELECT %s FROM " XPV_STORE_KERNEL_ROWS_ALL
             " WHERE profile_id=7 AND kind='%s' AND device=%d AND "
             "name='%s'",
             col, kind, device, name);
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
    CU_ASSERT_EQUAL(
        q_int(db, "SELECT count(*) FROM " XPV_STORE_KERNEL_ROWS_ALL " WHERE profile_id=7"), 7);
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
    device_event_arg(s, XPV_KIND_XLA_OP, pid, 3, name, ts, dur_ps, -1, "hlo_category", category);
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
    CU_ASSERT_EQUAL(
        q_int(db, "SELECT count(*) FROM " XPV_STORE_KERNEL_ROWS_ALL " WHERE kind='kernel'"), 0);
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
    CU_ASSERT_EQUAL(
        q_int(db, "SELECT sum(count) FROM " XPV_STORE_KERNEL_ROWS_ALL " WHERE device>=0"), N);
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
        " || ifnull(occupancy_pct, '-') || '|' || ifnull((SELECT r.value FROM strings s,"
        " string_rows(s.first_id, s.data) r WHERE s.profile_id=7 AND r.id=op_id), '-') || '|' || "
        "ifnull(shapes, '-')"
        " AS line FROM " XPV_STORE_KERNEL_ROWS_ALL
        " WHERE profile_id=7 ORDER BY kind, device, name)";
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

/* Finish reads the events again from the capture when it holds them all,
 * else from the store: with no capture, and with one that overflows partway,
 * the numbers must not change (the step tests: test_analysis_steps.c). */
static void test_store_path(void)
{
    static void (*const tests[])(void) = {test_kernel_stats_exact, test_op_through_correlation,
                                          test_spilled_durations};
    run_on_store_paths(tests, sizeof tests / sizeof tests[0]);
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
        {"spilled durations stay exact", test_spilled_durations},
        {"kernel rows computed as the device work ends", test_rows_when_device_work_ends},
        {"the store path gives the same numbers", test_store_path},
        {NULL, NULL},
    };
    return xpv_test_run("analysis", tests, 0);
}
