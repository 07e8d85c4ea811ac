/*
 * test_analysis_steps.c — step timelines computed through the sink from
 * hand-made events, checked against numbers worked out by hand: marker
 * preference and merging, correlation vs time join, interval unions,
 * interleaved and repeated ids (and the launch lookup against a scan of
 * every launch), many launches, epoch timestamps, the module fallbacks,
 * "none", step windows split down to single events, the store path and a
 * first pass on two threads. Kernel summaries: test_analysis.c.
 */
#define _POSIX_C_SOURCE 200809L
#include "analysis_testutil.h"
#include "indexer/analysis/analysis_internal.h"

#include <stdlib.h>
#include <string.h>

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

static const char *step_col(const char *col, int64_t step, int device)
{
    static char sql[512];
    snprintf(sql, sizeof sql, "SELECT %s FROM steps WHERE profile_id=7 AND step=%lld AND device=%d",
             col, (long long)step, device);
    return sql;
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
    /* no device: idle is the whole step, and without launches "other" */
    CU_ASSERT_EQUAL(q_int(db, step_col("idle_ps", 6, -1)), 500000);
    CU_ASSERT_EQUAL(q_int(db, step_col("idle_other_ps", 6, -1)), 500000);
    CU_ASSERT_EQUAL(q_int(db, step_col("host_wait_ps", 6, -1)), 0);
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
    /* each instant of the window counts once, by time (no longer by the
     * step that launched the work) */
    CU_ASSERT_EQUAL(q_int(db, step_col("compute_ps", 1, 0)), 100000);
    CU_ASSERT_EQUAL(q_int(db, step_col("memset_ps", 1, 0)), 7000);
    CU_ASSERT_EQUAL(q_int(db, step_col("idle_ps", 1, 0)), 1000000 - 100000 - 7000);
    /* pending: corr 11 [100, 200), corr 12 [900, 1000) of [900, 1100) */
    CU_ASSERT_EQUAL(q_int(db, step_col("kernel_wait_ps", 1, 0)), 200000);
    CU_ASSERT_EQUAL(q_int(db, step_col("host_wait_ps", 1, 0)), 1000000 - 107000 - 200000);
    CU_ASSERT_EQUAL(q_int(db, step_col("compute_ps", 2, 0)), 80000);
    CU_ASSERT_EQUAL(q_int(db, step_col("memcpy_h2d_ps", 2, 0)), 50000); /* clipped */
    CU_ASSERT_EQUAL(q_int(db, step_col("idle_ps", 2, 0)), 1000000 - 50000 - 30000 - 50000);
    CU_ASSERT_EQUAL(q_int(db, step_col("compute_ps", 2, -1)), 80000);
    /* pending: corr 12 [1000, 1100), corr 13 [1500, 1600) */
    CU_ASSERT_EQUAL(q_int(db, step_col("kernel_wait_ps", 2, -1)), 200000);
    CU_ASSERT_EQUAL(q_int(db, step_col("host_wait_ps", 2, -1)), 1000000 - 130000 - 200000);
    CU_ASSERT_EQUAL(q_int(db, step_col("idle_other_ps", 2, -1)), 0);
    char *w = q_text(db, "SELECT warnings FROM profiles WHERE id=7");
    CU_ASSERT_PTR_NOT_NULL(strstr(w, "3 device events joined to their step through the "
                                     "correlation id of their host launch, 2 by their start time"));
    sqlite3_close(db);
}

/* One id launched twice (a trace made of two, end to end): each kernel
 * joins the latest launch of its id at or before its start, so each waits
 * 100 ns in its own step. Joined to the first launch, the second kernel
 * would wait from step 1 to step 2. */
static void test_repeated_ids(void)
{
    sqlite3 *db = fresh_index();
    xpv_sink *s = open_sink(db);
    xpv_sink_process_device(s, 100, 0);
    marker(s, 1, XPV_STEP_PROFILER_STEP, 1, "ProfilerStep#1", 0, 1000);
    marker(s, 1, XPV_STEP_PROFILER_STEP, 2, "ProfilerStep#2", 10000, 1000);
    host_event(s, XPV_KIND_LAUNCH, "cuda_runtime", "cudaLaunchKernel", 100, 5, 5);
    host_event(s, XPV_KIND_LAUNCH, "cuda_runtime", "cudaLaunchKernel", 10100, 5, 5);
    device_event(s, XPV_KIND_KERNEL, 100, 7, "k", 200, 100000, 5, NULL);
    device_event(s, XPV_KIND_KERNEL, 100, 7, "k", 10200, 100000, 5, NULL);
    finish(s);
    CU_ASSERT_EQUAL(q_int(db, step_col("compute_ps", 1, 0)), 100000);
    CU_ASSERT_EQUAL(q_int(db, step_col("compute_ps", 2, 0)), 100000);
    CU_ASSERT_EQUAL(q_int(db, step_col("kernel_wait_ps", 1, 0)), 100000);
    CU_ASSERT_EQUAL(q_int(db, step_col("kernel_wait_ps", 2, 0)), 100000);
    char *w = q_text(db, "SELECT warnings FROM profiles WHERE id=7");
    CU_ASSERT_PTR_NOT_NULL(strstr(w, "2 device events joined to their step through the "
                                     "correlation id of their host launch, 0 by their start time"));
    sqlite3_close(db);
}

/* One id launched 500 times, 1 us apart, each launch's kernel starting
 * 100 ns after it: every kernel finds its own launch among the 500, so the
 * waits are 500 disjoint 100 ns spans. */
static void test_id_launched_many_times(void)
{
    sqlite3 *db = fresh_index();
    xpv_sink *s = open_sink(db);
    xpv_sink_process_device(s, 100, 0);
    marker(s, 1, XPV_STEP_PROFILER_STEP, 1, "ProfilerStep#1", 0, 1000000);
    for (int64_t k = 0; k < 500; k++)
        host_event(s, XPV_KIND_LAUNCH, "cuda_runtime", "cudaLaunchKernel", 1000 + k * 1000, 5, 42);
    for (int64_t k = 0; k < 500; k++)
        device_event(s, XPV_KIND_KERNEL, 100, 7, "k", 1100 + k * 1000, 200000, 42, NULL);
    finish(s);
    CU_ASSERT_EQUAL(q_int(db, step_col("compute_ps", 1, 0)), 500 * 200000);
    CU_ASSERT_EQUAL(q_int(db, step_col("kernel_wait_ps", 1, 0)), 500 * 100000);
    sqlite3_close(db);
}

/* xpv_launches_find against a scan of every record: the latest launch of
 * the id at or before the time, else its first, else none; from any hint,
 * on runs of one id up to 60 long, at the array's ends included. */
static void test_launch_lookup_brute_force(void)
{
    uint64_t rng = 12345;
    for (int round = 0; round < 50; round++) {
        size_t n = 1 + (size_t)(xpv_test_xorshift(&rng) % 2000);
        xpv_launches l = {0};
        l.r = xpv_xmalloc(n * sizeof *l.r);
        l.n = n;
        int64_t corr = 0, ts = 0;
        for (size_t i = 0; i < n; i++) {
            if (xpv_test_xorshift(&rng) % (round % 2 ? 3 : 30) == 0)
                corr += 1 + (int64_t)(xpv_test_xorshift(&rng) % 3), ts = 0;
            ts += (int64_t)(xpv_test_xorshift(&rng) % 3); /* equal times too */
            l.r[i] = (xpv_launch_rec){.corr = corr, .ts_ns = ts};
        }
        size_t hint = 0;
        int bad = 0;
        for (int q = 0; q < 2000; q++) {
            int64_t c = (int64_t)(xpv_test_xorshift(&rng) % (uint64_t)(corr + 3)) - 1;
            int64_t t = (int64_t)(xpv_test_xorshift(&rng) % 150) - 5;
            if (q % 7 == 0) hint = (size_t)(xpv_test_xorshift(&rng) % (n + 2));
            const xpv_launch_rec *want = NULL;
            for (size_t i = 0; i < n; i++)
                if (l.r[i].corr == c && (!want || l.r[i].ts_ns <= t)) want = &l.r[i];
            if (want && want->ts_ns > t) /* none by t: the first */
                for (size_t i = 0; i < n; i++)
                    if (l.r[i].corr == c) {
                        want = &l.r[i];
                        break;
                    }
            if (xpv_launches_find(&l, c, t, &hint) != want) bad++;
        }
        CU_ASSERT_EQUAL(bad, 0);
        free(l.r);
    }
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
    CU_ASSERT_EQUAL(q_int(db, step_col("compute_ps", 1, 0)), 30000 + 8000);
    CU_ASSERT_EQUAL(q_int(db, step_col("compute_ps", 2, 0)), 2000 + 1000 + 4000);
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
 * a few never launched), so that the lookups gallop far and near. Kernels
 * join through launched ids, ids never launched and ids past every launch
 * (time join); compute per step must match the per-launch rule exactly. */
static void many_launches(int threads)
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
        /* half a step after its launch: the step that holds it in time
         * counts it (the kernels are a few ns and never cross an edge) */
        int64_t ts = seg_launch_ts(i) + SEG_STEP_NS / 2;
        int k = seg_step_of(ts);
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

static void test_many_launches(void)
{
    many_launches(1);
    many_launches(2);
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
    /* streams overlap: the union [100, 600), not the sum */
    CU_ASSERT_EQUAL(q_int(db, step_col("compute_ps", 0, 0)), 500000);
    CU_ASSERT_EQUAL(q_int(db, step_col("idle_ps", 0, 0)), 500000);
    CU_ASSERT_EQUAL(q_int(db, step_col("idle_ps", 0, 1)), 1000000 - 200000);
    CU_ASSERT_EQUAL(q_int(db, step_col("collective_ps", 0, 1)), 50000);
    /* combined: the mean of the two devices, which partitions the step */
    CU_ASSERT_EQUAL(q_int(db, step_col("compute_ps", 0, -1)), 325000);
    CU_ASSERT_EQUAL(q_int(db, step_col("collective_ps", 0, -1)), 25000);
    CU_ASSERT_EQUAL(q_int(db, step_col("idle_ps", 0, -1)), 1000000 - 350000);
    /* no launches: idle is "other", neither host nor kernel wait */
    CU_ASSERT_EQUAL(q_int(db, step_col("idle_other_ps", 0, -1)), 1000000 - 350000);
    CU_ASSERT_EQUAL(q_int(db, step_col("host_wait_ps", 0, 0)), 0);
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

/* Device work of `module` on device pid's stream, launched as corr. */
static void work_of_module(xpv_sink *s, int64_t pid, int kind, const char *module, int64_t ts,
                           int64_t dur_ns, int64_t corr)
{
    device_event_arg(s, kind, pid, 1, kind == XPV_KIND_KERNEL ? "loop_fusion" : "MemcpyD2D", ts,
                     dur_ns * 1000, corr, "hlo_module", module);
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
            work_of_module(s, 100, XPV_KIND_KERNEL, "jit_step", e * 10000000 + k * 1000, 900, -1);
    work_of_module(s, 100, XPV_KIND_KERNEL, "jit_init", 5000000, 900, -1);
    finish(s);
    CU_ASSERT_STRING_EQUAL(q_text(db, "SELECT step_source FROM profiles WHERE id=7"), "module");
    CU_ASSERT_EQUAL(q_int(db, "SELECT step_count FROM profiles WHERE id=7"), 3);
    CU_ASSERT_EQUAL(q_int(db, step_col("start_ps", 2, -1)), 20000000LL * 1000);
    CU_ASSERT_EQUAL(q_int(db, step_col("duration_ps", 2, -1)), 3900000);
    CU_ASSERT_EQUAL(q_int(db, step_col("compute_ps", 2, 0)), 4 * 900000);
    CU_ASSERT_STRING_EQUAL(q_text(db, step_col("name", 0, -1)), "jit_step");
    sqlite3_close(db);
}

/* XLA's annotation of one run of module on host thread (1, tid). */
static void module_run(xpv_sink *s, int64_t tid, const char *module, int64_t ts, int64_t dur_ns)
{
    char name[64];
    snprintf(name, sizeof name, "%s:XLA GPU module", module);
    xpv_event ev;
    xpv_event_init(&ev);
    ev.track = xpv_sink_track(s, 1, tid);
    ev.name = xpv_sink_intern_cstr(s, name);
    ev.ts_ns = ts;
    ev.dur_ns = dur_ns;
    ev.dur_ps = dur_ns * 1000;
    xpv_sink_event(s, &ev);
}

enum { RUN_EVERY_NS = 3300000, FIRST_RUN_NS = 10000000 };

/* A run of jit_step at t, launched from host thread tid onto device pid: a
 * copy and a kernel, then, after the host's 2 ms wait inside the run (a
 * while loop's condition), one more kernel. */
static void one_run(xpv_sink *s, int64_t tid, int64_t pid, int64_t t, int64_t corr)
{
    module_run(s, tid, "jit_step", t, 500000);
    launch_on(s, tid, t + 1000, corr);
    launch_on(s, tid, t + 400000, corr + 1);
    work_of_module(s, pid, XPV_KIND_MEMCPY_D2D, "jit_step", t + 40000, 1000, corr);
    work_of_module(s, pid, XPV_KIND_KERNEL, "jit_step", t + 50000, 100000, corr);
    work_of_module(s, pid, XPV_KIND_KERNEL, "jit_step", t + 2200000, 100000, corr + 1);
}

/* Without markers, the host's runs of the module tell its executions apart
 * where gaps cannot: each run waits 2 ms inside itself and 1 ms between
 * runs. Device 1's work comes from a second thread whose runs start 100 ns
 * before the first thread's and number one ahead (an extra run first, and
 * its next put no work in the capture): each thread numbers its own runs,
 * and a launch is looked up among its own thread's runs alone (among all,
 * the first thread's later-starting run would take it, and there would be
 * three steps, not four). */
static void test_module_runs(void)
{
    sqlite3 *db = fresh_index();
    xpv_sink *s = open_sink(db);
    xpv_sink_process_device(s, 100, 0);
    xpv_sink_process_device(s, 101, 1);
    module_run(s, 3, "jit_step", FIRST_RUN_NS - 5000000, 500000);
    for (int r = 0; r < 3; r++) {
        int64_t t = FIRST_RUN_NS + r * RUN_EVERY_NS;
        one_run(s, 2, 100, t, 100 + 10 * r);
        if (r > 0)
            one_run(s, 3, 101, t - 100, 200 + 10 * r);
        else
            module_run(s, 3, "jit_step", t - 100, 500000);
    }
    /* a kernel whose launch is in no run: left out of the windows */
    launch_on(s, 2, FIRST_RUN_NS + 9000000, 999);
    work_of_module(s, 100, XPV_KIND_KERNEL, "jit_step", FIRST_RUN_NS + 9100000, 1000, 999);
    finish(s);
    CU_ASSERT_STRING_EQUAL(q_text(db, "SELECT step_source FROM profiles WHERE id=7"), "module");
    CU_ASSERT_EQUAL(q_int(db, "SELECT step_count FROM profiles WHERE id=7"), 4);
    int64_t first = q_int(db, step_col("start_ps", 0, 0));
    for (int r = 0; r < 3; r++) { /* device 0: runs 0, 1, 2 of thread 2 */
        CU_ASSERT_EQUAL(q_int(db, step_col("start_ps", r, 0)) - first,
                        (int64_t)r * RUN_EVERY_NS * 1000);
        CU_ASSERT_EQUAL(q_int(db, step_col("duration_ps", r, 0)), 2260000000LL);
        CU_ASSERT_EQUAL(q_int(db, step_col("compute_ps", r, 0)), 200000000);
        CU_ASSERT_EQUAL(q_int(db, step_col("memcpy_d2d_ps", r, 0)), 1000000);
    }
    /* device 1: its work is in runs 2 and 3 of thread 3, each its own window
     * (the steps of the two threads are one run apart, as their numbers) */
    for (int n = 2; n < 4; n++)
        CU_ASSERT_EQUAL(q_int(db, step_col("duration_ps", n, 1)), 2260000000LL);
    CU_ASSERT_EQUAL(q_int(db, step_col("compute_ps", 0, 1)), 0);
    CU_ASSERT_EQUAL(q_int(db, step_col("compute_ps", 3, 1)), 200000000);
    CU_ASSERT_STRING_EQUAL(q_text(db, step_col("name", 1, -1)), "jit_step");
    sqlite3_close(db);

    /* device 1's launches on a thread that annotates no run, its kernel
     * after device 0's window: the gaps decide for every device, and
     * device 1 keeps windows of its own (dropped, its work would fall
     * outside device 0's) */
    db = fresh_index();
    s = open_sink(db);
    xpv_sink_process_device(s, 100, 0);
    xpv_sink_process_device(s, 101, 1);
    for (int r = 0; r < 3; r++) {
        int64_t t = FIRST_RUN_NS + r * RUN_EVERY_NS * 10;
        one_run(s, 2, 100, t, 100 + 10 * r);
        launch_on(s, 4, t + 1000, 300 + r);
        work_of_module(s, 101, XPV_KIND_KERNEL, "jit_step", t + 2500000, 100000, 300 + r);
    }
    finish(s);
    CU_ASSERT_EQUAL(q_int(db, "SELECT step_count FROM profiles WHERE id=7"), 3);
    for (int r = 0; r < 3; r++)
        CU_ASSERT_EQUAL(q_int(db, step_col("compute_ps", r, 1)), 100000000);
    sqlite3_close(db);
}

/* A Steps-line marker of step `step` on device pid's track. */
static void device_marker(xpv_sink *s, int64_t pid, int64_t step, int64_t ts_ns, int64_t dur_ns)
{
    xpv_event ev;
    xpv_event_init(&ev);
    ev.track = xpv_sink_track(s, pid, 1);
    ev.kind = XPV_KIND_STEP;
    ev.step_src = XPV_STEP_STEPS_LINE;
    ev.step = step;
    ev.name = xpv_sink_intern_cstr(s, "0");
    ev.ts_ns = ts_ns;
    ev.dur_ns = dur_ns;
    ev.dur_ps = dur_ns * 1000;
    xpv_sink_event(s, &ev);
}

/* Devices that mark their own step windows at different times: each row is
 * the device's window; the combined step is their mean, never the hull, and
 * names the slowest device. */
static void test_device_windows(void)
{
    sqlite3 *db = fresh_index();
    xpv_sink *s = open_sink(db);
    xpv_sink_process_device(s, 100, 4);
    xpv_sink_process_device(s, 200, 6);
    device_marker(s, 100, 0, 0, 1000);
    device_marker(s, 200, 0, 5000, 2000);
    kernel(s, 100, 7, "k", 100, 300000);
    kernel(s, 200, 7, "k", 5000, 1000000);
    kernel(s, 200, 7, "k", 6500, 1000000); /* runs past the window: clipped */
    finish(s);
    CU_ASSERT_STRING_EQUAL(q_text(db, "SELECT step_source FROM profiles WHERE id=7"), "steps_line");
    CU_ASSERT_EQUAL(q_int(db, step_col("start_ps", 0, 4)), 0);
    CU_ASSERT_EQUAL(q_int(db, step_col("duration_ps", 0, 4)), 1000000);
    CU_ASSERT_EQUAL(q_int(db, step_col("compute_ps", 0, 4)), 300000);
    CU_ASSERT_EQUAL(q_int(db, step_col("start_ps", 0, 6)), 5000000);
    CU_ASSERT_EQUAL(q_int(db, step_col("duration_ps", 0, 6)), 2000000);
    CU_ASSERT_EQUAL(q_int(db, step_col("compute_ps", 0, 6)), 1500000);
    CU_ASSERT_EQUAL(q_int(db, step_col("idle_ps", 0, 6)), 500000);
    CU_ASSERT_EQUAL(q_int(db, step_col("start_ps", 0, -1)), 0);
    CU_ASSERT_EQUAL(q_int(db, step_col("duration_ps", 0, -1)), 1500000);
    CU_ASSERT_EQUAL(q_int(db, step_col("compute_ps", 0, -1)), 900000);
    CU_ASSERT_EQUAL(q_int(db, step_col("idle_ps", 0, -1)), 600000);
    CU_ASSERT_EQUAL(q_int(db, step_col("slowest_device", 0, -1)), 6);
    sqlite3_close(db);
}

/* A device that runs the step's work without a Steps line of its own is
 * measured over the step's hull and counts in the combined mean; its hull
 * is never the slowest marked window. */
static void test_unmarked_device(void)
{
    sqlite3 *db = fresh_index();
    xpv_sink *s = open_sink(db);
    xpv_sink_process_device(s, 100, 4);
    xpv_sink_process_device(s, 200, 6);
    xpv_sink_process_device(s, 300, 8);
    device_marker(s, 100, 0, 0, 1000);
    device_marker(s, 200, 0, 5000, 2000);
    kernel(s, 100, 7, "k", 100, 300000);
    kernel(s, 200, 7, "k", 5000, 1000000);
    kernel(s, 300, 7, "k", 3000, 700000); /* device 8: no Steps line */
    finish(s);
    CU_ASSERT_EQUAL(q_int(db, step_col("start_ps", 0, 8)), 0);
    CU_ASSERT_EQUAL(q_int(db, step_col("duration_ps", 0, 8)), 7000000);
    CU_ASSERT_EQUAL(q_int(db, step_col("compute_ps", 0, 8)), 700000);
    CU_ASSERT_EQUAL(q_int(db, step_col("count(*)", 0, 8)), 1);
    /* (1 + 2 + 7) ms / 3, (0.3 + 1 + 0.7) ms / 3 */
    CU_ASSERT_EQUAL(q_int(db, step_col("duration_ps", 0, -1)), 10000000 / 3);
    CU_ASSERT_EQUAL(q_int(db, step_col("compute_ps", 0, -1)), 2000000 / 3);
    CU_ASSERT_EQUAL(q_int(db, step_col("slowest_device", 0, -1)), 6);
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

/* With room for one interval at a time, every step window is split down
 * to single events: the numbers must not change. */
static void test_split_windows(void)
{
    setenv("XPV_ANALYSIS_INTERVAL_CAP", "1", 1);
    test_interval_union();
    test_correlation_vs_time_join();
    test_module_fallback();
    test_module_runs();
    test_interleaved_ids();
    test_repeated_ids();
    setenv("XPV_ANALYSIS_INTERVAL_CAP", "3", 1);
    test_interval_union();
    test_epoch_timestamps();
    unsetenv("XPV_ANALYSIS_INTERVAL_CAP");
}

/* The tests run again where a setting must not change their numbers. */
static void (*const REPLAYED[])(void) = {test_correlation_vs_time_join,
                                         test_interval_union,
                                         test_interleaved_ids,
                                         test_many_launches,
                                         test_repeated_ids,
                                         test_epoch_timestamps,
                                         test_module_fallback,
                                         test_module_runs,
                                         test_device_windows,
                                         test_unmarked_device};
#define NREPLAYED (sizeof REPLAYED / sizeof REPLAYED[0])

/* The breakdown's first pass split between two threads (each half of every
 * track's capture segments) must not change a number, nor when a half
 * outgrows its half of the interval cap and the pass goes on in chunks. */
static void test_split_first_pass(void)
{
    setenv("XPV_ANALYSIS_SPLIT_PASS_MIN", "1", 1);
    for (size_t t = 0; t < NREPLAYED; t++)
        REPLAYED[t]();
    setenv("XPV_ANALYSIS_INTERVAL_CAP", "3", 1);
    test_many_launches();
    test_interval_union();
    unsetenv("XPV_ANALYSIS_INTERVAL_CAP");
    unsetenv("XPV_ANALYSIS_SPLIT_PASS_MIN");
}

/* Finish reads the events again from the capture when it holds them all,
 * else from the store: with no capture, and with one that overflows partway,
 * the numbers must not change (the kernel tests: test_analysis.c). */
static void test_store_path(void)
{
    run_on_store_paths(REPLAYED, NREPLAYED);
}

int main(void)
{
    static const xpv_test_case tests[] = {
        {"step marker preference and merging", test_marker_preference_and_merge},
        {"correlation join vs time join", test_correlation_vs_time_join},
        {"idle from interval unions", test_interval_union},
        {"interleaved correlation ids", test_interleaved_ids},
        {"one id launched twice", test_repeated_ids},
        {"one id launched 500 times", test_id_launched_many_times},
        {"launch lookup against a scan of every launch", test_launch_lookup_brute_force},
        {"many launches across steps, on one thread or two", test_many_launches},
        {"epoch timestamps", test_epoch_timestamps},
        {"a stray event at time zero", test_stray_event_at_time_zero},
        {"module fallback", test_module_fallback},
        {"module executions from the host's runs", test_module_runs},
        {"per-device step windows", test_device_windows},
        {"a device without a Steps line of its own", test_unmarked_device},
        {"training_step and Optimizer.step markers", test_weaker_pytorch_markers},
        {"no markers: none", test_no_markers},
        {"split step windows stay exact", test_split_windows},
        {"the store path gives the same numbers", test_store_path},
        {"a first pass on two threads gives the same numbers", test_split_first_pass},
        {NULL, NULL},
    };
    return xpv_test_run("analysis_steps", tests, 0);
}
