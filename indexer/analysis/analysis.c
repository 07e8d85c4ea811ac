/*
 * analysis.c — the analysis entry points (analysis.h): routes each stored
 * event to the kernel summaries (kernel_stats.c) and the step markers
 * (steps.c) while the profile streams in, then at finish runs, in order:
 * steps (steps.c) -> [PyTorch kernels without an op: the launches by
 * correlation (launches.c) and their CPU ops] -> compilation inside the
 * capture, its device work moved out of the program's groups (compile.c,
 * compile_split.c) -> hlo_category groups ->
 * which units are collectives -> the kernel_stats rows (computed already if
 * the reader said when its device work ended, see
 * xpv_analysis_device_work_done, and nothing changed since), with the step join
 * beside them on a second thread when the capture answers all its scans
 * (that thread never touches SQLite): the launches by correlation (unless
 * built already; launches.c), then the step breakdown's
 * compute (step_breakdown.c) -> the steps rows. Finish comes in two halves
 * (analysis.h) so that the caller writes its own rows (strings, tracks)
 * while the step join runs, rather than after it.
 *
 * Memory while streaming: 8 bytes per kernel / memcpy / memset / XLA-op
 * duration up to DURATION_MEM_CAP (16 MB), spilled to a temp file beyond;
 * a few hundred bytes per track and per (kind, name, track) group; 4 bytes
 * per name id below 4 M (kernel_stats.c's name -> group array, 16 MB at
 * most) and as much per launch shape key (string ids too); 16-32 bytes
 * per distinct launch shape of each group; 40 bytes
 * per step marker; the capture (capture.c): 9-12 bytes per device event,
 * XLA module and host launch up to CAPTURE_LIMIT (128 MB; past it the
 * capture is dropped and finish reads the store instead), kept until the
 * end of finish; the spans (capture.c): each host event with a category
 * and a duration, delta-coded, ~8 bytes, up to SPANS_LIMIT (64 MB; past it
 * they are dropped and launches.c reads the host blocks), freed once the
 * launches are linked to their CPU ops. At finish, after the event store
 * has released its buffers:
 *  - the step join: 24 bytes per host launch inside a step (all of them
 *    when PyTorch kernels need their CPU op) up to LAUNCH_LIMIT (1 M
 *    launches, 24 MB; later ones use the time join, with a warning);
 *  - the kernel_stats rows, ~100 bytes each, and while they are computed
 *    a copy of the durations of one batch of names (16 MB at most): when
 *    the reader's device work ends, beside the ingest, or at finish, beside
 *    the step join's pairs and intervals;
 *  - at most INTERVAL_CAP busy intervals (16 bytes each: 64 MB) before
 *    step windows are scanned in chunks, and a sort buffer as large as the
 *    largest set of one step and device; a byte per name id below 4 M
 *    (which names are collectives, cached).
 *
 * Environment (read once, in xpv_analysis_new): XPV_ANALYSIS=off skips the
 * analysis (for measuring its cost); XPV_TIMING=1 prints the finish time
 * to stderr; XPV_ANALYSIS_EARLY=off leaves the kernel_stats rows to finish
 * whatever the reader says; XPV_ANALYSIS_DURATION_CAP=<bytes> lowers the in-memory
 * duration cap, XPV_ANALYSIS_INTERVAL_CAP=<n> the intervals held per
 * step window, XPV_ANALYSIS_CAPTURE_CAP=<bytes> the capture (0: none,
 * finish reads the store) and XPV_ANALYSIS_SPLIT_PASS_MIN=<n> the device
 * events from which the breakdown's first pass takes two threads — tests
 * use them to exercise the spill, split, store and two-thread paths.
 */
#define _GNU_SOURCE /* SCHED_IDLE */
#include "analysis_internal.h"
#include "analysis.h"

#include <assert.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#define DURATION_MEM_CAP (16u << 20)
#define LAUNCH_LIMIT (1u << 20)
#define INTERVAL_CAP (1u << 22)
/* Device events in the capture from which the step breakdown's first pass
 * runs on two threads (below, a thread costs more than it saves). */
#define SPLIT_PASS_MIN (1u << 17)
#define CAPTURE_LIMIT (128u << 20)
#define SPANS_LIMIT (64u << 20)

typedef struct xpv_finishing xpv_finishing;

struct xpv_analysis {
    int disabled, timing;
    size_t interval_cap;
    size_t split_pass_min;
    xpv_kstats ks;
    xpv_capture capture;
    xpv_spans spans;
    xpv_step_markers markers;
    int64_t (*track_kinds)[XPV_KIND_COUNT];
    size_t ntracks;
    int64_t kinds[XPV_KIND_COUNT];
    int64_t base_ns; /* earliest event start = profiles.start_ns */
    int64_t events;
    int64_t device_events_with_corr;
    int early;         /* compute kernel_stats rows when the device work ends */
    xpv_krows rows;    /* computed then, or at finish */
    int *rows_devices; /* the track devices they were computed with (NULL: none) */
    size_t rows_ntracks;
    pthread_t early_thread; /* computing them; owns ks, rows and rows_* until joined */
    int early_running, early_failed;
    xpv_finishing *fin; /* between finish_begin and finish_end */
};

/* A size from the environment (tests lower the caps), else the default. */
static size_t env_size(const char *name, size_t dflt)
{
    const char *v = getenv(name);
    return v && *v ? (size_t)strtoull(v, NULL, 10) : dflt;
}

xpv_analysis *xpv_analysis_new(void)
{
    xpv_analysis *a = xpv_xcalloc(1, sizeof *a);
    const char *off = getenv("XPV_ANALYSIS"), *timing = getenv("XPV_TIMING");
    a->disabled = off && strcmp(off, "off") == 0;
    a->timing = timing && *timing && strcmp(timing, "0") != 0;
    const char *early = getenv("XPV_ANALYSIS_EARLY");
    a->early = !early || strcmp(early, "off") != 0;
    a->interval_cap = env_size("XPV_ANALYSIS_INTERVAL_CAP", INTERVAL_CAP);
    a->split_pass_min = env_size("XPV_ANALYSIS_SPLIT_PASS_MIN", SPLIT_PASS_MIN);
    xpv_kstats_init(&a->ks, env_size("XPV_ANALYSIS_DURATION_CAP", DURATION_MEM_CAP));
    xpv_capture_init(&a->capture, env_size("XPV_ANALYSIS_CAPTURE_CAP", CAPTURE_LIMIT));
    xpv_spans_init(&a->spans, env_size("XPV_ANALYSIS_CAPTURE_CAP", SPANS_LIMIT));
    xpv_markers_init(&a->markers);
    return a;
}

static void early_join(xpv_analysis *a);
static int end_finishing(xpv_analysis *a, int rc, xpv_err *err);

static void count_kind(xpv_analysis *a, const xpv_event *ev)
{
    a->track_kinds =
        xpv_grow_to_index(a->track_kinds, &a->ntracks, ev->track, sizeof *a->track_kinds, 0);
    a->track_kinds[ev->track][ev->kind]++;
    a->kinds[ev->kind]++;
}

void xpv_analysis_event(xpv_analysis *a, const xpv_event *ev)
{
    if (a->disabled || ev->kind >= XPV_KIND_COUNT) return;
    if (a->events++ == 0 || ev->ts_ns < a->base_ns) a->base_ns = ev->ts_ns;
    count_kind(a, ev);
    xpv_capture_add(&a->capture, ev);
    if (xpv_spans_wants(ev)) xpv_spans_add(&a->spans, ev);
    switch (ev->kind) {
    case XPV_KIND_KERNEL:
    case XPV_KIND_MEMCPY_H2D:
    case XPV_KIND_MEMCPY_D2H:
    case XPV_KIND_MEMCPY_D2D:
    case XPV_KIND_MEMCPY_OTHER:
    case XPV_KIND_MEMSET:
    case XPV_KIND_XLA_OP:
        if (a->early_running) early_join(a); /* device work after the reader said none was left */
        if (ev->dur_ps >= 0) xpv_kstats_add(&a->ks, ev); /* 0 counts: sub-unit kernels */
        if (ev->corr >= 0) a->device_events_with_corr++;
        break;
    case XPV_KIND_STEP:
    case XPV_KIND_XLA_MODULE:
        xpv_markers_add(&a->markers, ev);
        break;
    default:
        break;
    }
}

static void drop_rows(xpv_analysis *a)
{
    xpv_krows_free(&a->rows);
    free(a->rows_devices);
    a->rows_devices = NULL;
    a->rows_ntracks = 0;
}

static void early_compute(xpv_analysis *a)
{
    xpv_err err = {{0}};
    a->early_failed = xpv_kstats_rows(&a->ks, a->rows_devices, a->rows_ntracks, &a->rows, &err);
}

/* Computes the rows at idle priority: the thread runs when a CPU would
 * otherwise wait (the consumer's, while the slower reader works), so it
 * slows neither; what is left when finish joins it runs then. Until it is
 * joined it owns ks, rows and rows_*: xpv_analysis_event joins it before
 * it touches ks again. */
static void *early_main(void *arg)
{
    struct sched_param idle = {0};
    pthread_setschedparam(pthread_self(), SCHED_IDLE, &idle); /* else at normal priority */
    early_compute(arg);
    return NULL;
}

static void early_join(xpv_analysis *a)
{
    if (!a->early_running) return;
    pthread_join(a->early_thread, NULL);
    a->early_running = 0;
    if (a->early_failed) drop_rows(a); /* finish computes them again, and reports what failed */
}

void xpv_analysis_free(xpv_analysis *a)
{
    if (!a) return;
    end_finishing(a, 0, NULL); /* a caller that failed between the halves of finish */
    early_join(a);
    drop_rows(a);
    xpv_kstats_free(&a->ks);
    xpv_capture_free(&a->capture);
    xpv_spans_free(&a->spans);
    xpv_markers_free(&a->markers);
    free(a->track_kinds);
    free(a);
}

void xpv_analysis_device_work_done(xpv_analysis *a, const int *track_device, size_t ntracks)
{
    /* XLA ops (TPU) get their hlo_category groups from the store at finish */
    if (a->disabled || !a->early || a->kinds[XPV_KIND_XLA_OP]) return;
    early_join(a);
    drop_rows(a);
    a->rows_devices = xpv_xmalloc((ntracks ? ntracks : 1) * sizeof *a->rows_devices);
    memcpy(a->rows_devices, track_device, ntracks * sizeof *track_device);
    a->rows_ntracks = ntracks;
    a->early_running = pthread_create(&a->early_thread, NULL, early_main, a) == 0;
    if (a->early_running) return;
    early_compute(a);
    if (a->early_failed) drop_rows(a);
}

/* 1 when the rows computed as the device work ended still hold: no group
 * changed since, and every track kept the device it had then (groups on
 * later tracks would have changed the version). */
static int early_rows_hold(const xpv_analysis *a, const xpv_analysis_input *in)
{
    if (!a->rows_devices || a->rows.version != a->ks.version || a->rows_ntracks > in->ntracks)
        return 0;
    for (size_t t = 0; t < a->rows_ntracks; t++)
        if (a->rows_devices[t] != in->tracks[t].device_id) return 0;
    return 1;
}

/* The kernel_stats rows: those computed when the device work ended if they
 * still hold, else computed now. */
static int write_kernel_rows(xpv_analysis *a, const xpv_analysis_input *in, int *early,
                             xpv_err *err)
{
    int rc = 0;
    *early = early_rows_hold(a, in);
    if (!*early) {
        int *dev = xpv_track_devices(in);
        rc = xpv_kstats_rows(&a->ks, dev, in->ntracks, &a->rows, err);
        free(dev);
    }
    if (rc == 0) rc = xpv_kstats_insert(&a->ks, &a->rows, in, err);
    drop_rows(a);
    return rc;
}

/* ---- finish ---- */

/* Step times are worked in picoseconds from an origin near the steps: the
 * earliest marker when there are markers. From the profile's start they can
 * overflow int64 ps when a stray event (at ts 0, say) sits beside epoch
 * times; events that far from every step cannot be in one anyway. */
static int64_t work_base(const xpv_analysis *a)
{
    if (!a->markers.n) return a->base_ns;
    int64_t base = a->markers.m[0].ts_ns;
    for (size_t i = 1; i < a->markers.n; i++)
        if (a->markers.m[i].ts_ns < base) base = a->markers.m[i].ts_ns;
    return base;
}

typedef struct {
    uint8_t *kernel, *xla_op, *module, *launch, *device;
} track_sets;

static int64_t track_count(const xpv_analysis *a, size_t t, int kind)
{
    return t < a->ntracks ? a->track_kinds[t][kind] : 0;
}

/* XLA ops are summarised from the `XLA Ops` lines when there are any: the
 * `Async XLA Ops` line repeats asynchronous ops that overlap them. */
static void keep_main_xla_op_lines(const xpv_analysis_input *in, uint8_t *xla_op)
{
    int any = 0;
    for (size_t t = 0; t < in->ntracks; t++)
        any |= xla_op[t] && strcmp(in->tracks[t].thread_name, "XLA Ops") == 0;
    for (size_t t = 0; t < in->ntracks && any; t++)
        if (strcmp(in->tracks[t].thread_name, "XLA Ops") != 0) xla_op[t] = 0;
}

static void mark_tracks(const xpv_analysis *a, const xpv_analysis_input *in, int tpu,
                        track_sets *ts)
{
    size_t ntracks = in->ntracks;
    size_t n = ntracks ? ntracks : 1;
    ts->kernel = xpv_xcalloc(n, 1);
    ts->xla_op = xpv_xcalloc(n, 1);
    ts->module = xpv_xcalloc(n, 1);
    ts->launch = xpv_xcalloc(n, 1);
    ts->device = xpv_xcalloc(n, 1);
    for (size_t t = 0; t < ntracks; t++) {
        ts->kernel[t] = track_count(a, t, XPV_KIND_KERNEL) > 0;
        ts->xla_op[t] = track_count(a, t, XPV_KIND_XLA_OP) > 0;
        ts->module[t] = track_count(a, t, XPV_KIND_XLA_MODULE) > 0;
        ts->launch[t] = track_count(a, t, XPV_KIND_LAUNCH) > 0;
    }
    keep_main_xla_op_lines(in, ts->xla_op);
    for (size_t t = 0; t < ntracks; t++) {
        int64_t work = 0;
        for (int k = XPV_KIND_KERNEL; k <= XPV_KIND_MEMSET; k++)
            work += track_count(a, t, k);
        ts->device[t] = work > 0 || (tpu && ts->xla_op[t]);
    }
}

static void free_tracks(track_sets *ts)
{
    free(ts->kernel);
    free(ts->xla_op);
    free(ts->module);
    free(ts->launch);
    free(ts->device);
}

static void warn(xpv_analysis_result *out, const char *fmt, long long x, long long y)
{
    size_t used = strlen(out->warnings);
    if (used + 1 >= sizeof out->warnings) return;
    if (used) out->warnings[used++] = '\n';
    snprintf(out->warnings + used, sizeof out->warnings - used, fmt, x, y);
}

static int need_op_links(const xpv_kstats *k)
{
    for (size_t i = 0; i < k->n; i++)
        if (k->g[i].kind == XPV_KIND_KERNEL && !k->g[i].ops_from_reader) return 1;
    return 0;
}

/* PyTorch kernels without an op need the per-launch table (the CPU op of
 * each launch; other producers have no cpu_op events to link to). */
static int needs_link_ops(const xpv_analysis *a, const xpv_analysis_input *in)
{
    return need_op_links(&a->ks) && strcmp(in->producer, "PyTorch") == 0;
}

/* The host launches by correlation id: with link_ops, with each launch's
 * CPU op. The step breakdown needs each launch's time (how long device work
 * waited after its launch), hence a table of every launch. */
static int build_launches(int link_ops, const xpv_analysis_input *in, const uint8_t *launch_tracks,
                          const xpv_step_list *steps, xpv_launches *l, xpv_err *err)
{
    if (!link_ops && !steps->n) return 0;
    return xpv_launches_build(l, in, launch_tracks, link_ops, steps, LAUNCH_LIMIT, err);
}

/* Ops through correlation (PyTorch), hlo_category groups (TPU), then which
 * units are collectives: all the breakdown needs from the kernel groups. */
static int classify_kernels(xpv_analysis *a, const xpv_analysis_input *in, const track_sets *ts,
                            const xpv_launches *l, xpv_hindex *collective, xpv_err *err)
{
    if (l->has_ops && l->n && xpv_kstats_link_ops(&a->ks, in, ts->kernel, l, err) != 0) return -1;
    if (a->kinds[XPV_KIND_XLA_OP] && xpv_kstats_hlo_categories(&a->ks, in, ts->xla_op, err) != 0)
        return -1;
    xpv_kstats_classify(&a->ks, in, collective);
    return 0;
}

/* The step join: the host launches (unless built already, for the ops of
 * PyTorch kernels), then the step breakdown's compute phase. On its own
 * thread it reads only the capture (its input has no db), while the
 * caller's thread writes the kernel_stats rows through SQLite. */
typedef struct {
    xpv_breakdown *bd;
    const uint8_t *launch_tracks; /* build launches from these first, or NULL */
    const xpv_step_list *steps;
    xpv_launches *launches;
    xpv_analysis_input in;
    pthread_t thread;
    int started, rc;
    xpv_err err;
} join_job;

static int step_join(join_job *j, const xpv_analysis_input *in, xpv_err *err)
{
    if (j->launch_tracks &&
        build_launches(0, in, j->launch_tracks, j->steps, j->launches, err) != 0)
        return -1;
    return xpv_breakdown_compute(j->bd, in, err);
}

static void *join_main(void *arg)
{
    join_job *j = arg;
    j->rc = step_join(j, &j->in, &j->err);
    return NULL;
}

/* 1 when the capture answers every scan of the step join: the launches
 * and the device work. */
static int join_needs_no_store(const xpv_analysis_input *in)
{
    return xpv_breakdown_needs_no_store(in) && xpv_launches_needs_no_store(in);
}

/* Starts the step join beside the caller when the capture answers all of
 * its scans; otherwise (or when no thread can be started) runs it now. */
static int join_start(join_job *j, const xpv_analysis_input *in, xpv_err *err)
{
    j->in = *in;
    j->in.db = NULL;
    j->started = join_needs_no_store(in) && pthread_create(&j->thread, NULL, join_main, j) == 0;
    return j->started ? 0 : step_join(j, in, err);
}

static int join_wait(join_job *j, int rc, xpv_err *err)
{
    if (!j->started) return rc;
    pthread_join(j->thread, NULL);
    j->started = 0;
    if (rc == 0 && j->rc != 0) {
        if (err) *err = j->err;
        return -1;
    }
    return rc;
}

static void warn_steps(const xpv_analysis *a, const xpv_step_list *steps,
                       const xpv_breakdown_opts *o, xpv_analysis_result *out)
{
    snprintf(out->step_source, sizeof out->step_source, "%s", steps->source);
    out->step_count = (int64_t)steps->n;
    if (steps->n && (o->joined_by_corr || o->joined_by_time))
        warn(out,
             "steps: %lld device events joined to their step through the correlation id of their "
             "host launch, %lld by their start time",
             (long long)o->joined_by_corr, (long long)o->joined_by_time);
    if (steps->dropped)
        warn(out, "steps: only the first %lld steps are kept; %lld later ones were left out",
             (long long)steps->n, (long long)steps->dropped);
    if (a->markers.dropped)
        warn(out, "steps: %lld step markers past the first %lld were ignored",
             (long long)a->markers.dropped, (long long)a->markers.n);
}

/* What finish keeps from its first half to its second: the step join runs
 * in between, beside whatever the caller writes meanwhile. */
struct xpv_finishing {
    double t0, t_steps, t_kernels;
    double t_end;          /* when the second half began */
    xpv_analysis_input in; /* the caller's, with the capture */
    int early;             /* the kernel_stats rows were those of the device work's end */
    int64_t kernel_count, spilled;
    size_t groups;
    track_sets ts;
    xpv_launches launches;
    xpv_hindex collective;
    xpv_compile compile;
    xpv_step_list steps;
    xpv_breakdown_opts o;
    join_job job;
};

/* Compilation inside the capture (compile.c): its windows and device work,
 * the latter moved out of the program's kernel groups. Only device work can
 * have run for a compile, so profiles without any skip the host scan. */
static int split_compile(xpv_analysis *a, xpv_finishing *f, xpv_err *err)
{
    if (!a->kinds[XPV_KIND_KERNEL]) return 0;
    if (xpv_compile_find(&f->compile, &f->in, &a->ks, f->ts.device, err) != 0) return -1;
    if (xpv_compile_write(&f->compile, &f->in, err) != 0) return -1;
    return xpv_kstats_split_compile(&a->ks, &f->in, &f->compile, err);
}

/* Up to the kernel_stats rows, with the step join started beside them. */
static int begin_rows(xpv_analysis *a, xpv_finishing *f, xpv_err *err)
{
    const xpv_analysis_input *in = &f->in;
    int tpu = a->kinds[XPV_KIND_KERNEL] == 0 && a->kinds[XPV_KIND_XLA_OP] > 0;
    mark_tracks(a, in, tpu, &f->ts);
    xpv_kstats_keep_tracks(&a->ks, XPV_KIND_XLA_OP, f->ts.xla_op);
    for (size_t t = 0; t < in->ntracks && tpu; t++)
        if (f->ts.xla_op[t]) f->kernel_count += track_count(a, t, XPV_KIND_XLA_OP);
    xpv_step_tracks st = {f->ts.module, f->ts.device, f->ts.launch};
    int rc = xpv_steps_build(&a->markers, in, &st, work_base(a), &f->steps, err);
    f->steps.profile_base_ns = a->base_ns;
    /* the launches are built now when the ops of kernels need them, else
     * by the step join beside the kernel_stats rows */
    int join = a->device_events_with_corr && a->kinds[XPV_KIND_LAUNCH];
    int link_ops = join && needs_link_ops(a, in);
    if (rc == 0 && link_ops) rc = build_launches(1, in, f->ts.launch, &f->steps, &f->launches, err);
    xpv_spans_free(&a->spans); /* read by the op links only */
    a->spans.overflowed = 1;
    f->t_steps = f->t_kernels = xpv_now_mono();
    f->spilled = a->ks.durs.nspilled;
    f->groups = a->ks.n;
    if (rc == 0) rc = split_compile(a, f, err);
    if (rc == 0) rc = classify_kernels(a, in, &f->ts, &f->launches, &f->collective, err);
    f->o = (xpv_breakdown_opts){.steps = &f->steps,
                                .compile = &f->compile,
                                .device_tracks = f->ts.device,
                                .xla_ops_are_work = tpu,
                                .launches = &f->launches,
                                .collective = &f->collective,
                                .interval_cap = a->interval_cap,
                                .split_pass_min = a->split_pass_min};
    if (rc != 0) return rc;
    f->job = (join_job){.bd = xpv_breakdown_new(in, &f->o),
                        .launch_tracks = join && !link_ops ? f->ts.launch : NULL,
                        .steps = &f->steps,
                        .launches = &f->launches};
    rc = join_start(&f->job, in, err);
    if (rc == 0) rc = write_kernel_rows(a, in, &f->early, err);
    xpv_kstats_free(&a->ks); /* the durations are no longer needed */
    xpv_kstats_init(&a->ks, 0);
    f->t_kernels = xpv_now_mono();
    return rc;
}

int xpv_analysis_finish_begin(xpv_analysis *a, const xpv_analysis_input *in, xpv_err *err)
{
    assert(!a->fin);
    xpv_finishing *f = a->fin = xpv_xcalloc(1, sizeof *f);
    f->t0 = xpv_now_mono();
    f->in = *in;
    f->in.capture = &a->capture;
    f->in.spans = &a->spans;
    early_join(a);
    f->kernel_count = a->kinds[XPV_KIND_KERNEL];
    if (a->disabled || begin_rows(a, f, err) == 0) return 0;
    return end_finishing(a, -1, NULL);
}

/* The finish's own time leaves out the caller's rows between its halves
 * (the step join runs beside them: what it takes beyond them is waited for
 * in the second half). */
static void print_timing(const xpv_analysis *a, const xpv_finishing *f, int64_t steps)
{
    double now = xpv_now_mono();
    fprintf(stderr,
            "xpv-analysis: finish %.3f s of its own (steps, with PyTorch's op links, %.3f s,"
            " kernel_stats rows %.3f s (%s), with the launch join and step breakdown beside"
            " them and beside the caller's rows (%.3f s, not counted), then %.3f s more for"
            " those;"
            " %zu groups, %lld durations spilled, %lld launches, %lld steps;"
            " capture %s, %.1f MB)\n",
            (f->t_kernels - f->t0) + (now - f->t_end), f->t_steps - f->t0,
            f->t_kernels - f->t_steps,
            f->early ? "computed as the device work ended" : "computed now",
            f->t_end - f->t_kernels, now - f->t_end, f->groups, (long long)f->spilled,
            (long long)f->launches.n, (long long)steps,
            a->capture.overflowed ? "off (store scans)" : "on", a->capture.bytes / 1048576.0);
}

/* Joins the step join if it runs and frees what finish kept; rc is the
 * result so far, err gets the join's error when rc is still 0. */
static int end_finishing(xpv_analysis *a, int rc, xpv_err *err)
{
    xpv_finishing *f = a->fin;
    if (!f) return rc;
    rc = join_wait(&f->job, rc, err);
    xpv_breakdown_free(f->job.bd);
    xpv_capture_free(&a->capture);
    xpv_step_list_free(&f->steps);
    xpv_launches_free(&f->launches);
    xpv_hindex_free(&f->collective);
    xpv_compile_free(&f->compile);
    free_tracks(&f->ts);
    free(f);
    a->fin = NULL;
    return rc;
}

int xpv_analysis_finish_end(xpv_analysis *a, xpv_analysis_result *out, xpv_err *err)
{
    xpv_finishing *f = a->fin;
    assert(f);
    f->t_end = xpv_now_mono();
    memset(out, 0, sizeof *out);
    out->kernel_count = f->kernel_count;
    snprintf(out->step_source, sizeof out->step_source, "none");
    if (a->disabled) return end_finishing(a, 0, err);
    int rc = join_wait(&f->job, 0, err);
    if (rc == 0) rc = xpv_breakdown_write(f->job.bd, &f->in, err);
    if (rc == 0) warn_steps(a, &f->steps, &f->o, out);
    if (f->compile.dropped)
        warn(out,
             "compile: only %lld device events inside compile spans were told apart (memory "
             "cap); %lld later ones count as the program's",
             (long long)f->compile.nev, (long long)f->compile.dropped);
    if (f->launches.dropped)
        warn(out,
             "steps: only %lld host launches were kept (memory cap); %lld later ones use the "
             "time join",
             (long long)f->launches.n, (long long)f->launches.dropped);
    if (a->timing) print_timing(a, f, out->step_count);
    return end_finishing(a, rc, err);
}
