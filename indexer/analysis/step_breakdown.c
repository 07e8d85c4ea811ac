/*
 * step_breakdown.c — where each step's time goes (table steps).
 *
 * A step is the window [start, end) of its marker (steps.c); start_ps in the
 * table counts from the profile's start (profiles.start_ns), because ps since
 * the Unix epoch do not fit in int64. Each device is measured in its own
 * window of the step: the step's, or the device's own when the devices mark
 * their steps apart (per-device Steps lines or module executions). Per step
 * and device, every device event (kernels, copies, memsets; XLA ops on TPU)
 * is clipped to the window and each instant counts in one category, by
 * PRIORITY below; idle is what no event covers, split into kernel wait
 * (launched, not started), host wait (nothing launched) and other (launches
 * unknown). compile_ps: the part of the window under host compile spans
 * (compile.c); autotune_ps: compile-time device work.
 *
 * The combined row (device -1) is the mean of the rows of the devices that
 * ran the step, so it partitions too: with one shared window, the devices
 * that ran work in it; with per-device windows, every device that has one,
 * and each device that ran work in the step without one, measured over the
 * step's hull, its duration being their mean and slowest_device the longest
 * marked window. Each event finds its device's windows in an interval index
 * (xpv_winidx): a device's windows are disjoint, so however far apart the
 * devices run a step, one lookup per event. Tracks
 * without a device id count in a shared window's combined row only.
 *
 * One full scan of the device tracks of the event store assigns each event
 * to its step and gathers the busy intervals of all step windows at once
 * while they number at most interval_cap (on two threads, each over half of
 * every track's capture segments, when the capture holds split_pass_min
 * device events); beyond that the unions come from further scans of chunks
 * of steps, split into halves (a single step's window into halves of time:
 * clipped unions of disjoint halves add up), so memory stays bounded. The
 * lists are only ever read through their unions, so an interval that
 * starts inside a list's last one extends it (xpv_ivals_add).
 */
#include "analysis_internal.h"
#include "../../common/xpv_winidx.h"
#include "../../store/index_db.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* C_COMPILE: compile-time device work (autotuning), apart from the others;
 * C_PENDING: launched and not yet started (a list of intervals, no category) */
enum { C_COMPUTE, C_COLLECTIVE, C_H2D, C_D2H, C_D2D, C_OTHER, C_MEMSET, C_COMPILE, C_COUNT };
enum { C_PENDING = C_COUNT, NLISTS };

/* Which category an instant covered by several counts in, first first. */
static const int PRIORITY[C_COUNT] = {C_COMPILE, C_COLLECTIVE, C_COMPUTE, C_H2D,
                                      C_D2H,     C_D2D,        C_OTHER,   C_MEMSET};

typedef struct {
    int64_t cat[C_COUNT]; /* partitioned: each busy instant in one category */
    int64_t busy;         /* their sum */
    int64_t ov_cc;        /* compute under collectives */
    int64_t ov_copy;      /* copies under compute or collectives */
    int64_t kernel_wait;  /* idle with device work launched and not started */
} acc;

/* Working space of partition(): one per thread that partitions. */
typedef struct {
    xpv_ivals scratch; /* for xpv_ivals_union */
    xpv_ivals covered, merged, copies;
} part_space;

typedef struct {
    const xpv_analysis_input *in;
    xpv_breakdown_opts *o;
    int *track_slot;  /* track -> slot, -1 not a device track */
    int *slot_device; /* slot -> device id (-1: tracks without one) */
    size_t nslots;
    acc *per_step;          /* [step][nslots + 1]: last column = combined */
    xpv_ivals *iv;          /* [step - k0][slot][list] of the chunk being scanned */
    part_space ps[2];       /* the caller's, and the helper thread's of commit_chunk */
    uint8_t *slot_launched; /* slot -> some event of it has a known launch */
    int64_t *max_end;       /* max end of steps [0, k] */
    size_t k0, k1, nivals;
    int64_t w0, w1;
    int splittable;
    int union_live;      /* the first pass still gathers the unions */
    int64_t *step_ivals; /* first pass: intervals per step, for sizing chunks */
    int64_t by_corr, by_time;
    int64_t max_wait;      /* longest launch-to-start wait (first pass) */
    size_t hint;           /* last launch found */
    size_t start_hint;     /* step of the previous event's start (time join) */
    uint8_t *name_classes; /* name id -> is_collective()'s cached bits */
    size_t nname_classes;
    xpv_winidx wins;   /* per device slot, its window of each step (index_windows) */
    size_t *slot_last; /* slot -> index in wins.v of the window it last hit, SIZE_MAX none */
} bd_ctx;

/* The kinds category() can count: store scans read only blocks holding them. */
#define DEVICE_WORK_KINDS (XPV_KIND_DEVICE_WORK_BITS | XPV_KIND_BIT(XPV_KIND_XLA_OP))

static void device_work_query(const xpv_analysis_input *in, size_t track, xpv_store_query *q)
{
    xpv_store_query_all(q, in->profile_id);
    q->track = (int64_t)track;
    q->kinds = DEVICE_WORK_KINDS;
    q->skip_args = 1;
}

int xpv_breakdown_needs_no_store(const xpv_analysis_input *in)
{
    xpv_store_query q;
    device_work_query(in, 0, &q);
    return in->capture && xpv_capture_covers(in->capture, &q);
}

/* Name classes cached per name id: known / collective, for kernels (bits 0-1)
 * and XLA ops (bits 2-3); ids past XPV_BY_STRING_MAX ask the map each time. */
static int is_collective(bd_ctx *c, unsigned kind, uint32_t name)
{
    const xpv_hindex *coll = c->o->collective;
    uint64_t key = ((uint64_t)kind << 32) | name;
    if (name >= XPV_BY_STRING_MAX) return xpv_hindex_get(coll, key) != NULL;
    c->name_classes = xpv_grow_to_index(c->name_classes, &c->nname_classes, name, 1, 0);
    unsigned shift = kind == XPV_KIND_KERNEL ? 0 : 2, bits = c->name_classes[name] >> shift;
    if (!(bits & 1)) {
        bits = 1u | (xpv_hindex_get(coll, key) ? 2u : 0u);
        c->name_classes[name] |= (uint8_t)(bits << shift);
    }
    return (bits & 2) != 0;
}

static int category(bd_ctx *c, const xpv_event *ev)
{
    if (ev->dur_ps <= 0) return -1; /* no time to count */
    if (c->o->compile && xpv_compile_is(c->o->compile, ev)) return C_COMPILE;
    switch (ev->kind) {
    case XPV_KIND_MEMCPY_H2D:
        return C_H2D;
    case XPV_KIND_MEMCPY_D2H:
        return C_D2H;
    case XPV_KIND_MEMCPY_D2D:
        return C_D2D;
    case XPV_KIND_MEMCPY_OTHER:
        return C_OTHER;
    case XPV_KIND_MEMSET:
        return C_MEMSET;
    case XPV_KIND_KERNEL:
        break;
    case XPV_KIND_XLA_OP:
        if (c->o->xla_ops_are_work) break;
        return -1;
    default:
        return -1;
    }
    return is_collective(c, ev->kind, ev->name) ? C_COLLECTIVE : C_COMPUTE;
}

/* When the launch of ev is known, its time (ps of the steps' clock), else
 * INT64_MIN. */
static int64_t launch_ps(bd_ctx *c, const xpv_event *ev)
{
    if (ev->corr < 0 || !c->o->launches) return INT64_MIN;
    const xpv_launch_rec *l = xpv_launches_find(c->o->launches, ev->corr, ev->ts_ns, &c->hint);
    return l ? xpv_ps_since(c->o->steps->base_ns, l->ts_ns) : INT64_MIN;
}

/* The first pass counts how events join a launch, per device slot. */
static void count_join(bd_ctx *c, const xpv_event *ev, int64_t launched)
{
    int64_t base = c->o->steps->base_ns;
    if (xpv_step_at(c->o->steps, xpv_ps_since(base, ev->ts_ns), &c->start_hint) < 0) return;
    if (launched == INT64_MIN) {
        c->by_time++;
        return;
    }
    c->by_corr++;
    c->slot_launched[c->track_slot[ev->track]] = 1;
}

/* Steps [k0, k1) whose windows are scanned together, clipped to [w0, w1). */
typedef struct {
    size_t k0, k1;
    int64_t w0, w1;
} chunk;

/* The window of slot that the slot's last event fell in, when [s, e) lies
 * inside it and no other window of the slot reaches [s, e): then it is all
 * that xpv_winidx_query would find. A device's events arrive in time order,
 * so most of them land in the step of the one before; else NULL. */
static const xpv_winidx_entry *same_window(const bd_ctx *c, size_t slot, int64_t s, int64_t e)
{
    const xpv_winidx *x = &c->wins;
    size_t i = c->slot_last[slot];
    if (i == SIZE_MAX || s < x->v[i].start || e > x->v[i].end) return NULL;
    if (i + 1 < x->at[slot + 1] && x->v[i + 1].start < e) return NULL; /* sorted by start */
    if (i > x->at[slot] && x->v[i - 1].max_end > s) return NULL;
    return &x->v[i];
}

/* Adds [s, e) of the device slot of track to list of each step window of
 * the chunk that it overlaps; 1 when that took the intervals past
 * interval_cap in a chunk that can be split. */
static int window_push(bd_ctx *c, uint32_t track, int list, int64_t s, int64_t e)
{
    if (s < c->w0) s = c->w0;
    if (e > c->w1) e = c->w1;
    if (e <= s) return 0;
    /* the slot's own windows that overlap [s, e): a device's windows are
     * disjoint, so however far apart the devices run a step this finds the
     * device's step without walking past the other devices' windows */
    size_t slot = (size_t)c->track_slot[track];
    const xpv_winidx_entry *only = same_window(c, slot, s, e);
    xpv_winidx_iter it = {0}; /* finds nothing more after `only` */
    if (!only) xpv_winidx_query(&c->wins, slot, s, e, &it);
    for (const xpv_winidx_entry *w = only ? only : xpv_winidx_next(&it); w;
         w = xpv_winidx_next(&it)) {
        c->slot_last[slot] = (size_t)(w - c->wins.v);
        size_t k = w->key;
        if (k < c->k0 || k >= c->k1) continue;
        int64_t cs = s > w->start ? s : w->start, ce = e < w->end ? e : w->end;
        if (c->step_ivals) {
            c->step_ivals[k]++;
            if (!c->union_live) continue;
        }
        size_t at = ((k - c->k0) * c->nslots + slot) * NLISTS;
        if (!xpv_ivals_add(&c->iv[at + (size_t)list], cs, ce)) continue;
        if (++c->nivals > c->o->interval_cap && c->splittable) return 1;
    }
    return 0;
}

/* Device event ev of category cat as busy time, and the wait between its
 * launch (launched, INT64_MIN unknown) and its start as pending time. */
static int window_event(bd_ctx *c, const xpv_event *ev, int cat, int64_t launched)
{
    int64_t s = xpv_ps_since(c->o->steps->base_ns, ev->ts_ns), e = xpv_sat_add_i64(s, ev->dur_ps);
    if (window_push(c, ev->track, cat, s, e)) return 1;
    if (launched != INT64_MIN && s - launched > c->max_wait) c->max_wait = s - launched;
    return launched != INT64_MIN && launched < s &&
           window_push(c, ev->track, C_PENDING, launched, s);
}

static int window_visit(void *ctx, const xpv_event *ev, int64_t block_id, uint32_t index)
{
    (void)block_id, (void)index;
    bd_ctx *c = ctx;
    int cat = category(c, ev);
    return cat < 0 ? 0 : window_event(c, ev, cat, launch_ps(c, ev));
}

static int scan_chunk(bd_ctx *c, xpv_err *err)
{
    for (size_t i = 0; i < (c->k1 - c->k0) * c->nslots * NLISTS; i++)
        c->iv[i].n = 0;
    c->nivals = 0;
    for (size_t t = 0; t < c->in->ntracks; t++) {
        if (c->track_slot[t] < 0) continue;
        xpv_store_query q;
        device_work_query(c->in, t, &q);
        q.t0 = c->o->steps->base_ns + c->w0 / 1000 - 1;
        /* and work that starts later, launched inside the window */
        q.t1 = c->o->steps->base_ns + xpv_sat_add_i64(c->w1, c->max_wait) / 1000 + 1;
        int rc = xpv_analysis_scan(c->in, &q, window_visit, c, err);
        if (rc != 0) return rc;
    }
    return 0;
}

static void swap_ivals(xpv_ivals *a, xpv_ivals *b)
{
    xpv_ivals t = *a;
    *a = *b;
    *b = t;
}

/* The partition of one step's (or part-window's) time on one device slot,
 * from its lists: each list's union, then each category in PRIORITY order
 * takes what the ones before it left. */
static void partition(part_space *c, xpv_ivals *lists, acc *a)
{
    for (int l = 0; l < NLISTS; l++)
        xpv_ivals_union(&lists[l], &c->scratch);
    c->covered.n = c->copies.n = 0;
    for (int i = 0; i < C_COUNT; i++) {
        const xpv_ivals *u = &lists[PRIORITY[i]];
        if (!u->n) continue; /* adds nothing; a merge would only copy covered */
        int64_t len = 0;
        for (size_t j = 0; j < u->n; j++)
            len += u->v[j].end - u->v[j].start;
        int64_t part = len - xpv_ivals_overlap(u, &c->covered);
        a->cat[PRIORITY[i]] += part;
        a->busy += part;
        if (PRIORITY[i] == C_COMPUTE) a->ov_cc += xpv_ivals_overlap(u, &lists[C_COLLECTIVE]);
        if (PRIORITY[i] >= C_H2D && PRIORITY[i] <= C_OTHER) {
            xpv_ivals_merge(&c->merged, &c->copies, u);
            swap_ivals(&c->merged, &c->copies);
        }
        xpv_ivals_merge(&c->merged, &c->covered, u);
        swap_ivals(&c->merged, &c->covered);
    }
    /* copies under compute or collectives: merge those two first */
    if (c->copies.n) {
        xpv_ivals_merge(&c->merged, &lists[C_COMPUTE], &lists[C_COLLECTIVE]);
        a->ov_copy += xpv_ivals_overlap(&c->copies, &c->merged);
    }
    int64_t pend = 0;
    for (size_t j = 0; j < lists[C_PENDING].n; j++)
        pend += lists[C_PENDING].v[j].end - lists[C_PENDING].v[j].start;
    a->kernel_wait += pend - xpv_ivals_overlap(&lists[C_PENDING], &c->covered);
}

/* Partitions the (step, slot) units [u0, u1) of the chunk, unit u being
 * step k0 + u / nslots on slot u % nslots. A unit touches only its own
 * lists and acc, so two threads can take disjoint ranges. */
typedef struct {
    bd_ctx *c;
    part_space *ps;
    size_t u0, u1;
} part_job;

static void *partition_units(void *arg)
{
    part_job *j = arg;
    bd_ctx *c = j->c;
    for (size_t u = j->u0; u < j->u1; u++) {
        size_t k = c->k0 + u / c->nslots, slot = u % c->nslots;
        partition(j->ps, &c->iv[u * NLISTS], &c->per_step[k * (c->nslots + 1) + slot]);
    }
    return NULL;
}

/* Below this many intervals in a chunk a second thread costs more than it
 * saves. */
#define PARALLEL_PARTITION_MIN 65536

/* The partitions of the chunk's units; on two threads when they hold enough
 * intervals, the second taking the units from the one where half of the
 * intervals are passed. The finish's tail runs here on one core otherwise. */
static void commit_chunk(bd_ctx *c)
{
    size_t nunits = (c->k1 - c->k0) * c->nslots, half = nunits;
    if (nunits > 1 && c->nivals >= PARALLEL_PARTITION_MIN) {
        size_t seen = 0;
        for (half = 0; half + 1 < nunits && seen < c->nivals / 2; half++)
            for (int l = 0; l < NLISTS; l++)
                seen += c->iv[half * NLISTS + (size_t)l].n;
    }
    part_job first = {c, &c->ps[0], 0, half}, second = {c, &c->ps[1], half, nunits};
    pthread_t helper;
    int started = half < nunits && pthread_create(&helper, NULL, partition_units, &second) == 0;
    partition_units(&first);
    if (started)
        pthread_join(helper, NULL);
    else
        partition_units(&second);
}

/* Unions of the busy intervals of steps [ch.k0, ch.k1) within [ch.w0, ch.w1):
 * one scan per device track for the whole chunk; a chunk with more than
 * interval_cap intervals is split (into halves of its steps, or of its
 * window for a single step). */
static int process_chunk(bd_ctx *c, chunk ch, xpv_err *err)
{
    c->k0 = ch.k0, c->k1 = ch.k1, c->w0 = ch.w0, c->w1 = ch.w1;
    c->splittable = ch.k1 - ch.k0 > 1 || ch.w1 - ch.w0 >= 2000;
    int rc = scan_chunk(c, err);
    if (rc < 0) return -1;
    if (rc == 0) {
        commit_chunk(c);
        return 0;
    }
    chunk lo = ch, hi = ch;
    if (ch.k1 - ch.k0 > 1) {
        lo.k1 = hi.k0 = ch.k0 + (ch.k1 - ch.k0) / 2;
        lo.w1 = c->max_end[lo.k1 - 1];
        hi.w0 = c->o->steps->v[hi.k0].start_ps;
    } else {
        lo.w1 = hi.w0 = ch.w0 + (ch.w1 - ch.w0) / 2;
    }
    if (process_chunk(c, lo, err) != 0) return -1;
    return process_chunk(c, hi, err);
}

/* The first pass: every device event goes to its step; the unions of all
 * steps are gathered on the way while they fit interval_cap (else they are
 * left to process_chunk's scans of smaller chunks). */
static int assign_and_union_visit(void *ctx, const xpv_event *ev, int64_t block_id, uint32_t index)
{
    (void)block_id, (void)index;
    bd_ctx *c = ctx;
    int cat = category(c, ev);
    if (cat < 0) return 0;
    int64_t launched = launch_ps(c, ev);
    count_join(c, ev, launched);
    if (window_event(c, ev, cat, launched)) c->union_live = 0;
    return 0;
}

/* After a first pass that outgrew interval_cap: chunks of consecutive steps
 * holding at most interval_cap intervals each (by the first pass's counts),
 * so each is scanned once; a single step above the cap is split in time. */
static int process_in_chunks(bd_ctx *c, xpv_err *err)
{
    const xpv_step_list *s = c->o->steps;
    int64_t *counts = c->step_ivals;
    c->step_ivals = NULL;
    int rc = 0;
    for (size_t k = 0; k < s->n && rc == 0;) {
        size_t e = k;
        int64_t sum = 0, end = s->v[k].end_ps;
        while (e < s->n && (e == k || sum + counts[e] <= (int64_t)c->o->interval_cap)) {
            sum += counts[e];
            if (s->v[e].end_ps > end) end = s->v[e].end_ps;
            e++;
        }
        rc = process_chunk(c, (chunk){k, e, s->v[k].start_ps, end}, err);
        k = e;
    }
    free(counts);
    return rc;
}

/* One part of the first pass: the device tracks' events of part `part`
 * of `nparts` of their capture segments; with one part, whatever
 * xpv_analysis_scan reads them from. */
static int first_pass(bd_ctx *c, unsigned part, unsigned nparts, xpv_err *err)
{
    for (size_t t = 0; t < c->in->ntracks; t++) {
        if (c->track_slot[t] < 0) continue;
        xpv_store_query q;
        device_work_query(c->in, t, &q);
        int rc = nparts == 1 ? xpv_analysis_scan(c->in, &q, assign_and_union_visit, c, err)
                             : xpv_capture_scan_part(c->in->capture, &q, part, nparts,
                                                     assign_and_union_visit, c);
        if (rc < 0) return -1;
    }
    return 0;
}

/* 1 when the first pass reads the capture and it holds enough device
 * events to be worth a second thread. */
static int worth_splitting(const bd_ctx *c)
{
    if (!xpv_breakdown_needs_no_store(c->in)) return 0;
    uint64_t n = 0;
    for (size_t t = 0; t < c->in->ntracks; t++)
        if (c->track_slot[t] >= 0) n += xpv_capture_events(c->in->capture, t);
    return n >= c->o->split_pass_min;
}

/* The later half of a split first pass: a copy of the context with lists,
 * counters and caches of its own, under its own options (half the cap). */
typedef struct {
    bd_ctx c;
    xpv_breakdown_opts o;
} pass_half;

static void *later_half_main(void *arg)
{
    pass_half *h = arg;
    first_pass(&h->c, 1, 2, NULL); /* capture scans: no error to report */
    return NULL;
}

static void start_half(pass_half *h, const bd_ctx *c, size_t nlists)
{
    h->o = *c->o;
    h->c = *c;
    h->c.o = &h->o;
    h->c.iv = xpv_xcalloc(nlists, sizeof *h->c.iv);
    h->c.slot_launched = xpv_xcalloc(c->nslots + 1, 1);
    h->c.slot_last = xpv_xmalloc((c->nslots + 1) * sizeof *h->c.slot_last);
    for (size_t slot = 0; slot <= c->nslots; slot++)
        h->c.slot_last[slot] = SIZE_MAX;
    h->c.step_ivals = xpv_xcalloc(c->o->steps->n, sizeof *h->c.step_ivals);
    h->c.name_classes = NULL;
    h->c.nname_classes = 0;
    h->c.hint = h->c.start_hint = 0;
}

/* Moves the intervals of src after those of dst (the union sorts them). */
static void append_ivals(xpv_ivals *dst, xpv_ivals *src)
{
    if (dst->n + src->n > dst->cap) {
        dst->cap = dst->n + src->n;
        dst->v = xpv_xrealloc(dst->v, dst->cap * sizeof *dst->v);
    }
    if (src->n) memcpy(dst->v + dst->n, src->v, src->n * sizeof *src->v);
    dst->n += src->n;
    xpv_ivals_free(src);
}

/* Adds the later half's lists, counts and flags to c's, and frees it. */
static void join_half(bd_ctx *c, pass_half *h, size_t nlists)
{
    for (size_t i = 0; i < nlists; i++)
        append_ivals(&c->iv[i], &h->c.iv[i]);
    for (size_t k = 0; k < c->o->steps->n; k++)
        c->step_ivals[k] += h->c.step_ivals[k];
    for (size_t slot = 0; slot <= c->nslots; slot++)
        c->slot_launched[slot] |= h->c.slot_launched[slot];
    c->nivals += h->c.nivals;
    c->by_corr += h->c.by_corr;
    c->by_time += h->c.by_time;
    if (h->c.max_wait > c->max_wait) c->max_wait = h->c.max_wait;
    c->union_live = c->union_live && h->c.union_live;
    free(h->c.iv);
    free(h->c.slot_launched);
    free(h->c.slot_last);
    free(h->c.step_ivals);
    free(h->c.name_classes);
}

/* The first pass on two threads, each over half of every device track's
 * capture segments, each holding at most half of interval_cap. Its
 * results are the one-thread pass's: counts add up, the lists are only
 * read through their unions, and where either half outgrew its cap the
 * pass goes on in chunks, sized by the summed counts. */
static int split_first_pass(bd_ctx *c, xpv_err *err)
{
    size_t nlists = c->o->steps->n * c->nslots * NLISTS;
    xpv_breakdown_opts *shared = c->o, mine = *shared;
    mine.interval_cap = shared->interval_cap / 2 ? shared->interval_cap / 2 : 1;
    c->o = &mine;
    pass_half *h = xpv_xmalloc(sizeof *h);
    start_half(h, c, nlists);
    pthread_t helper;
    int started = pthread_create(&helper, NULL, later_half_main, h) == 0;
    int rc = first_pass(c, 0, 2, err);
    if (started)
        pthread_join(helper, NULL);
    else
        first_pass(&h->c, 1, 2, NULL);
    c->o = shared;
    join_half(c, h, nlists);
    free(h);
    return rc;
}

static int assign_events(bd_ctx *c, xpv_err *err)
{
    size_t n = c->o->steps->n;
    chunk all = {0, n, c->o->steps->v[0].start_ps, c->max_end[n - 1]};
    c->k0 = all.k0, c->k1 = all.k1, c->w0 = all.w0, c->w1 = all.w1;
    c->splittable = 1;
    c->union_live = 1;
    c->nivals = 0;
    c->step_ivals = xpv_xcalloc(n, sizeof *c->step_ivals);
    int rc = worth_splitting(c) ? split_first_pass(c, err) : first_pass(c, 0, 1, err);
    if (rc < 0) return -1;
    if (c->union_live) {
        free(c->step_ivals);
        c->step_ivals = NULL;
        commit_chunk(c);
        return 0;
    }
    return process_in_chunks(c, err);
}

static void assign_slots(bd_ctx *c)
{
    c->track_slot = xpv_xmalloc((c->in->ntracks ? c->in->ntracks : 1) * sizeof *c->track_slot);
    c->slot_device = xpv_xmalloc((c->in->ntracks + 1) * sizeof *c->slot_device);
    c->nslots = 0;
    for (size_t t = 0; t < c->in->ntracks; t++) {
        c->track_slot[t] = -1;
        if (!c->o->device_tracks[t]) continue;
        int dev = c->in->tracks[t].device_id < 0 ? -1 : c->in->tracks[t].device_id;
        size_t s = 0;
        while (s < c->nslots && c->slot_device[s] != dev)
            s++;
        if (s == c->nslots) c->slot_device[c->nslots++] = dev;
        c->track_slot[t] = (int)s;
    }
}

/* One row of the table: the busy categories and idle partition dur, the
 * length of the row's window; compile: host compile time in it. */
typedef struct {
    int64_t cat[C_COUNT];
    int64_t dur, compile, idle, host_wait, kernel_wait, other, ov_cc, ov_copy;
} out_row;

/* A device slot's row: idle splits into kernel and host wait where the
 * slot's launches are known, else it is all "other". */
static out_row slot_row(const acc *a, int64_t dur, int launched)
{
    out_row r = {.dur = dur, .idle = dur - a->busy, .ov_cc = a->ov_cc, .ov_copy = a->ov_copy};
    memcpy(r.cat, a->cat, sizeof r.cat);
    if (r.idle < 0) r.idle = 0; /* assert-worthy; never seen: clipped to the window */
    r.kernel_wait = a->kernel_wait < r.idle ? a->kernel_wait : r.idle;
    if (launched)
        r.host_wait = r.idle - r.kernel_wait;
    else
        r.other = r.idle - r.kernel_wait;
    return r;
}

/* The combined row: the mean of rows[0, n), the devices that ran the step
 * (so it partitions its mean duration too); rounding's few ps go to the
 * largest part of idle. With none, a step of dur, all idle, waiting on the
 * host when some slot's launches are known. */
static out_row mean_row(const out_row *rows, size_t n, int64_t dur, int launched)
{
    out_row sum, r;
    memset(&sum, 0, sizeof sum);
    memset(&r, 0, sizeof r);
    if (!n) {
        r.dur = r.idle = dur;
        *(launched ? &r.host_wait : &r.other) = dur;
        return r;
    }
    for (size_t k = 0; k < n; k++) {
        const out_row *o = &rows[k];
        for (int i = 0; i < C_COUNT; i++)
            sum.cat[i] += o->cat[i];
        sum.dur += o->dur, sum.compile += o->compile;
        sum.host_wait += o->host_wait, sum.kernel_wait += o->kernel_wait, sum.other += o->other;
        sum.ov_cc += o->ov_cc, sum.ov_copy += o->ov_copy;
    }
    int64_t busy = 0, m = (int64_t)n;
    for (int i = 0; i < C_COUNT; i++)
        busy += r.cat[i] = sum.cat[i] / m;
    r.dur = sum.dur / m, r.compile = sum.compile / m;
    r.idle = r.dur - busy;
    r.kernel_wait = sum.kernel_wait / m, r.other = sum.other / m;
    r.ov_cc = sum.ov_cc / m, r.ov_copy = sum.ov_copy / m;
    r.host_wait = r.idle - r.kernel_wait - r.other;
    if (sum.host_wait == 0 && r.host_wait != 0) { /* rounding: to the largest part */
        *(r.kernel_wait >= r.other ? &r.kernel_wait : &r.other) += r.host_wait;
        r.host_wait = 0;
    }
    return r;
}

/* One row: step s on device (-1 combined) from start_ps (the steps' clock);
 * slowest: the combined row's slowest device, -1 none. */
static int write_row(bd_ctx *c, sqlite3_stmt *st, const xpv_step *s, int device, int64_t start_ps,
                     const out_row *r, int slowest, xpv_err *err)
{
    size_t len;
    const char *name = c->in->string(c->in->string_ctx, s->name, &len);
    sqlite3_bind_int64(st, 1, c->in->profile_id);
    sqlite3_bind_int64(st, 2, s->number);
    sqlite3_bind_text(st, 3, name, (int)len, SQLITE_TRANSIENT);
    sqlite3_bind_int(st, 4, device);
    const xpv_step_list *steps = c->o->steps;
    sqlite3_bind_int64(
        st, 5, xpv_sat_add_i64(start_ps, xpv_ps_since(steps->profile_base_ns, steps->base_ns)));
    sqlite3_bind_int64(st, 6, r->dur);
    for (int i = 0; i < C_COMPILE; i++)
        sqlite3_bind_int64(st, 7 + i, r->cat[i]);
    sqlite3_bind_int64(st, 14, r->idle);
    sqlite3_bind_int64(st, 15, r->host_wait);
    sqlite3_bind_int64(st, 16, r->compile);
    sqlite3_bind_int64(st, 17, r->cat[C_COMPILE]);
    sqlite3_bind_int64(st, 18, r->kernel_wait);
    sqlite3_bind_int64(st, 19, r->other);
    sqlite3_bind_int64(st, 20, r->ov_cc);
    sqlite3_bind_int64(st, 21, r->ov_copy);
    if (slowest >= 0)
        sqlite3_bind_int(st, 22, slowest);
    else
        sqlite3_bind_null(st, 22);
    int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : xpv_db_error(err, c->in->db);
    sqlite3_reset(st);
    return rc;
}

static int64_t compile_in(bd_ctx *c, int64_t start_ps, int64_t end_ps)
{
    if (!c->o->compile) return 0;
    return xpv_compile_overlap_ps(c->o->compile, c->o->steps->base_ns, start_ps, end_ps);
}

/* A step every device shares: a row per device slot in the step's window;
 * the combined row averages the slots that ran work in it. */
static int write_shared_step(bd_ctx *c, sqlite3_stmt *st, size_t k, out_row *rows, xpv_err *err)
{
    const xpv_step *s = &c->o->steps->v[k];
    const acc *row = &c->per_step[k * (c->nslots + 1)];
    int64_t dur = s->end_ps - s->start_ps, compile = compile_in(c, s->start_ps, s->end_ps);
    size_t n = 0;
    int rc = 0, launched = 0;
    for (size_t slot = 0; slot < c->nslots && rc == 0; slot++) {
        launched |= c->slot_launched[slot];
        out_row r = slot_row(&row[slot], dur, c->slot_launched[slot]);
        r.compile = compile;
        if (row[slot].busy > 0) rows[n++] = r;
        if (c->slot_device[slot] < 0) continue;
        rc = write_row(c, st, s, c->slot_device[slot], s->start_ps, &r, -1, err);
    }
    out_row all = mean_row(rows, n, dur, launched);
    all.compile = compile;
    return rc == 0 ? write_row(c, st, s, -1, s->start_ps, &all, -1, err) : rc;
}

/* Device dev's own window of step st, 1; 0 when it has none. */
static int own_window(const xpv_step_list *s, const xpv_step *st, int dev, int64_t *ws, int64_t *we)
{
    for (size_t i = 0; i < st->nwin; i++)
        if (s->win[st->win_at + i].device == dev) {
            *ws = s->win[st->win_at + i].start_ps, *we = s->win[st->win_at + i].end_ps;
            return 1;
        }
    return 0;
}

/* A step whose devices have their own windows: a row per device in its
 * window (a device without work there is all idle), and one in the step's
 * hull for a device that ran work in the step without a window of its own
 * (a GPU with no Steps line); the combined row averages them all and names
 * the slowest of the marked windows (none when all are as long). */
static int write_device_step(bd_ctx *c, sqlite3_stmt *st, size_t k, out_row *rows, xpv_err *err)
{
    const xpv_step *s = &c->o->steps->v[k];
    const acc *row = &c->per_step[k * (c->nslots + 1)];
    const xpv_step_window *w = &c->o->steps->win[s->win_at];
    int64_t longest = -1, shortest = INT64_MAX, ws, we;
    int rc = 0, slowest = -1;
    size_t n = 0;
    for (size_t i = 0; i < s->nwin && rc == 0; i++, n++) {
        acc none;
        memset(&none, 0, sizeof none);
        size_t slot = 0;
        while (slot < c->nslots && c->slot_device[slot] != w[i].device)
            slot++;
        int launched = slot < c->nslots && c->slot_launched[slot];
        int64_t dur = w[i].end_ps - w[i].start_ps;
        rows[n] = slot_row(slot < c->nslots ? &row[slot] : &none, dur, launched);
        rows[n].compile = compile_in(c, w[i].start_ps, w[i].end_ps);
        if (dur > longest) longest = dur, slowest = w[i].device;
        if (dur < shortest) shortest = dur;
        rc = write_row(c, st, s, w[i].device, w[i].start_ps, &rows[n], -1, err);
    }
    for (size_t slot = 0; slot < c->nslots && rc == 0; slot++) {
        int dev = c->slot_device[slot];
        if (dev < 0 || !row[slot].busy || own_window(c->o->steps, s, dev, &ws, &we)) continue;
        rows[n] = slot_row(&row[slot], s->end_ps - s->start_ps, c->slot_launched[slot]);
        rows[n].compile = compile_in(c, s->start_ps, s->end_ps);
        rc = write_row(c, st, s, dev, s->start_ps, &rows[n++], -1, err);
    }
    out_row all = mean_row(rows, n, 0, 0);
    if (rc == 0)
        rc = write_row(c, st, s, -1, s->start_ps, &all, longest > shortest ? slowest : -1, err);
    return rc;
}

static int write_rows(bd_ctx *c, xpv_err *err)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(c->in->db,
                           "INSERT INTO steps(profile_id, step, name, device, start_ps,"
                           " duration_ps, compute_ps, collective_ps, memcpy_h2d_ps, memcpy_d2h_ps,"
                           " memcpy_d2d_ps, memcpy_other_ps, memset_ps, idle_ps, host_wait_ps,"
                           " compile_ps, autotune_ps, kernel_wait_ps, idle_other_ps,"
                           " overlap_compute_collective_ps, overlap_copy_ps, slowest_device)"
                           " VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15,?16,?17,"
                           "?18,?19,?20,?21,?22)",
                           -1, &st, NULL) != SQLITE_OK)
        return xpv_db_error(err, c->in->db);
    size_t most = 0;
    for (size_t k = 0; k < c->o->steps->n; k++)
        if (c->o->steps->v[k].nwin > most) most = c->o->steps->v[k].nwin;
    out_row *rows = xpv_xmalloc((c->nslots + most + 1) * sizeof *rows);
    int rc = 0;
    for (size_t k = 0; k < c->o->steps->n && rc == 0; k++)
        rc = c->o->steps->v[k].nwin ? write_device_step(c, st, k, rows, err)
                                    : write_shared_step(c, st, k, rows, err);
    free(rows);
    sqlite3_finalize(st);
    return rc;
}

struct xpv_breakdown {
    bd_ctx c;
};

/* Each device slot's window of each step: the step's when the devices share
 * it; else the device's own, or the step's hull for a device that ran the
 * step's work without marking a window (write_device_step), and none for
 * tracks without a device id. */
static void index_windows(bd_ctx *c)
{
    const xpv_step_list *s = c->o->steps;
    for (size_t k = 0; k < s->n; k++)
        for (size_t slot = 0; slot < c->nslots; slot++) {
            const xpv_step *st = &s->v[k];
            int64_t ws = st->start_ps, we = st->end_ps;
            if (st->nwin && c->slot_device[slot] < 0) continue;
            if (st->nwin) own_window(s, st, c->slot_device[slot], &ws, &we);
            xpv_winidx_add(&c->wins, slot, ws, we, k);
        }
    xpv_winidx_finish(&c->wins, c->nslots);
}

xpv_breakdown *xpv_breakdown_new(const xpv_analysis_input *in, xpv_breakdown_opts *o)
{
    xpv_breakdown *b = xpv_xcalloc(1, sizeof *b);
    bd_ctx *c = &b->c;
    c->in = in;
    c->o = o;
    assign_slots(c);
    size_t n = o->steps->n;
    c->per_step = xpv_xcalloc((n ? n : 1) * (c->nslots + 1), sizeof *c->per_step);
    c->iv = xpv_xcalloc((n ? n : 1) * (c->nslots + 1) * NLISTS, sizeof *c->iv);
    c->slot_launched = xpv_xcalloc(c->nslots + 1, 1);
    c->max_end = xpv_xmalloc((n ? n : 1) * sizeof *c->max_end);
    c->slot_last = xpv_xmalloc((c->nslots + 1) * sizeof *c->slot_last);
    for (size_t slot = 0; slot <= c->nslots; slot++)
        c->slot_last[slot] = SIZE_MAX;
    index_windows(c);
    for (size_t k = 0; k < n; k++)
        c->max_end[k] = k && c->max_end[k - 1] > o->steps->v[k].end_ps ? c->max_end[k - 1]
                                                                       : o->steps->v[k].end_ps;
    return b;
}

int xpv_breakdown_compute(xpv_breakdown *b, const xpv_analysis_input *in, xpv_err *err)
{
    bd_ctx *c = &b->c;
    c->in = in;
    int rc = c->nslots && c->o->steps->n ? assign_events(c, err) : 0;
    c->o->joined_by_corr = c->by_corr;
    c->o->joined_by_time = c->by_time;
    return rc;
}

int xpv_breakdown_write(xpv_breakdown *b, const xpv_analysis_input *in, xpv_err *err)
{
    b->c.in = in;
    return write_rows(&b->c, err);
}

void xpv_breakdown_free(xpv_breakdown *b)
{
    if (!b) return;
    bd_ctx *c = &b->c;
    size_t n = c->o->steps->n;
    for (size_t i = 0; i < (n ? n : 1) * (c->nslots + 1) * NLISTS; i++)
        xpv_ivals_free(&c->iv[i]);
    for (int i = 0; i < 2; i++) {
        xpv_ivals_free(&c->ps[i].scratch);
        xpv_ivals_free(&c->ps[i].covered);
        xpv_ivals_free(&c->ps[i].merged);
        xpv_ivals_free(&c->ps[i].copies);
    }
    free(c->slot_launched);
    free(c->max_end);
    free(c->slot_last);
    free(c->step_ivals);
    free(c->iv);
    free(c->per_step);
    free(c->track_slot);
    free(c->slot_device);
    free(c->name_classes);
    xpv_winidx_free(&c->wins);
    free(b);
}
