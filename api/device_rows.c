/*
 * device_rows.c — the derived device rows of a GPU JAX profile (see
 * device_rows.h), as XProf's trace viewer shows them under each GPU:
 *  - XLA Ops: the device events that carry hlo_op, in start order (all
 *    streams of the device together), each run of consecutive events with
 *    the same hlo_op, hlo_module, program_id and step merged into one span
 *    named after the op (its first event's jax_op and source kept);
 *  - XLA Modules: the same over hlo_module and program_id, one span per
 *    module execution, named `module(program_id)` as XProf names them;
 *  - Steps: per step, from the first to the last device activity (kernels,
 *    copies, memsets) that belongs to it: the step whose window holds the
 *    event's host launch (same correlation id), else the one whose window
 *    holds the event's own start. A step that the devices ran at different
 *    times (their own windows, docs/STEPS.md) is found on each device in
 *    that device's own window, by the event's own start.
 * Events without hlo_op neither join nor break a run. The rows follow
 * hlo_op whatever the reader put there (a command buffer's name, or the
 * instruction the reader attributed to a command-buffer kernel).
 *
 * Why built at query time and never stored: every other answer (kernel
 * stats, device busy, step breakdowns and detection, hlo_stats and
 * op_profile, search, findings, aggregates) reads the stored tracks and
 * event blocks; rows that live only here cannot be counted as device work
 * by any of them, nor turn on their `XLA Ops` / `Steps` line modes, and no
 * index has to be rebuilt. Only the timeline's tracks and events answers
 * and the trace export ask for them. A profile without the string
 * `hlo_op` costs one lookup and gets no row, so no answer of any other
 * profile changes; a device with stored XLA Ops, XLA Modules or Steps
 * lines (TPU) gets none either. The cost is one scan of the device events
 * (and, with steps, of the host launches) per build: seconds on ten million
 * events, hence the server builds them once per profile and lends them to
 * every request (device_rows_cache.c).
 */
#include "device_rows.h"
#include "api_util.h"
#include "../store/event_store.h"
#include "../store/steps.h"
#include "../store/strings.h"
#include "../store/tracks.h"
#include "../store/profiles.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const TITLES[XPV_DEVROW_KINDS] = {"Steps", "XLA Modules", "XLA Ops"};
static const char *const WORDS[XPV_DEVROW_KINDS] = {"steps", "xla_modules", "xla_ops"};
static const char *const ARG_KEYS[XPV_DEVROW_NARGS] = {"hlo_op", "hlo_module", "program_id",
                                                       "jax_op", "source"};

const char *xpv_devrow_title(int kind)
{
    return kind >= 0 && kind < XPV_DEVROW_KINDS ? TITLES[kind] : "";
}

const char *xpv_devrow_word(int kind)
{
    return kind >= 0 && kind < XPV_DEVROW_KINDS ? WORDS[kind] : "";
}

/* ---- the name table ---- */

static uint32_t intern(xpv_devrows *r, const char *s, size_t len)
{
    uint64_t hash = xpv_hash64(s, len), at;
    xpv_hprobe p = xpv_hindex_probe(&r->by_text, hash);
    while (xpv_hindex_next(&r->by_text, &p, &at))
        if (r->name_len[at] == len && memcmp(r->names[at], s, len) == 0) return (uint32_t)at;
    if (r->nnames == r->names_cap) {
        r->names_cap = r->names_cap ? r->names_cap * 2 : 64;
        r->names = xpv_xrealloc(r->names, r->names_cap * sizeof *r->names);
        r->name_len = xpv_xrealloc(r->name_len, r->names_cap * sizeof *r->name_len);
    }
    r->names[r->nnames] = xpv_xstrndup(s, len);
    r->name_len[r->nnames] = len;
    xpv_hindex_insert_at(&r->by_text, &p, r->nnames);
    return (uint32_t)r->nnames++;
}

const char *xpv_devrows_name(const xpv_devrows *r, uint32_t name, size_t *len)
{
    if (name >= r->nnames) {
        *len = 0;
        return "";
    }
    *len = r->name_len[name];
    return r->names[name];
}

/* ---- what one build gathers ---- */

typedef struct {
    int64_t ts, end, step, block;
    uint32_t index;
    uint32_t arg[XPV_DEVROW_NARGS];
} rec;

typedef struct {
    int64_t start, end, step;
    int own; /* the device's own window of a step the devices ran apart */
} window;

typedef struct {
    int64_t track, pid;
    int device;
} dev_track;

typedef struct {
    sqlite3 *db;
    int64_t id;
    xpv_devrows *r;
    xpv_api_strings *strings;
    uint32_t keys[XPV_DEVROW_NARGS]; /* string ids of ARG_KEYS, 0 absent */
    xpv_hindex str_names;            /* string id -> name index */
    dev_track *tracks;
    size_t ntracks;
    unsigned char *excluded; /* per device: has stored derived-style lines */
    window *steps;           /* all devices': the steps table's combined rows */
    size_t nsteps;
    window *dev_steps; /* one device's: steps[] with its own windows in place */
    size_t ndev_steps;
    int64_t start_ns;    /* the profile's start: the steps table's origin */
    int split;           /* some step has per-device windows */
    xpv_hindex launches; /* correlation id -> launch start */
    rec *recs;
    size_t nrecs, recs_cap;
} build;

static int is_xprof_line(xpv_store_text name)
{
    for (int k = 0; k < XPV_DEVROW_KINDS; k++)
        if (name.s && strcmp(name.s, TITLES[k]) == 0) return 1;
    return 0;
}

/* The device tracks, the devices with lines of their own, the first id. */
static int load_tracks(build *b, xpv_err *err)
{
    xpv_store_cursor c;
    xpv_store_track t;
    int rc;
    if (xpv_store_tracks_open_by_pid(&c, b->db, b->id, err) != 0) return -1;
    b->excluded = xpv_xcalloc(XPV_DEVROW_MAX_DEVICE, 1);
    size_t cap = 0;
    while ((rc = xpv_store_tracks_next(&c, &t, err)) == 1) {
        if (t.id >= b->r->first_track) b->r->first_track = t.id + 1;
        if (!xpv_store_track_known(&t, XPV_STORE_TRACK_DEVICE)) continue;
        int64_t dev = t.num[XPV_STORE_TRACK_DEVICE];
        if (dev < 0 || dev >= XPV_DEVROW_MAX_DEVICE) continue;
        if (is_xprof_line(t.thread_name)) b->excluded[dev] = 1;
        if (b->ntracks == cap) {
            cap = cap ? cap * 2 : 16;
            b->tracks = xpv_xrealloc(b->tracks, cap * sizeof *b->tracks);
        }
        b->tracks[b->ntracks++] = (dev_track){t.id, t.pid, (int)dev};
    }
    xpv_store_cursor_close(&c);
    return rc;
}

static int load_steps(build *b, xpv_err *err)
{
    xpv_store_cursor c;
    xpv_store_step s;
    int64_t start_ns = 0;
    xpv_store_profile_state ps;
    int rc = xpv_store_profiles_state(&c, b->db, b->id, &ps, err);
    if (rc < 0) return -1;
    if (rc == 0) return 0;
    int has_start = (ps.known >> XPV_STORE_PROFILE_STATE_START_NS) & 1u;
    start_ns = ps.num[XPV_STORE_PROFILE_STATE_START_NS];
    xpv_store_cursor_close(&c);
    if (!has_start) return 0;
    if (xpv_store_steps_open_timed(&c, b->db, b->id, err) != 0) return -1;
    size_t cap = 0;
    while ((rc = xpv_store_steps_next(&c, &s, err)) == 1) {
        if (b->nsteps == cap) {
            cap = cap ? cap * 2 : 16;
            b->steps = xpv_xrealloc(b->steps, cap * sizeof *b->steps);
        }
        int64_t a = start_ns + s.ps[XPV_STORE_STEP_START] / 1000;
        int split = s.span_end_ps > s.ps[XPV_STORE_STEP_START] + s.ps[XPV_STORE_STEP_DURATION];
        b->steps[b->nsteps++] =
            (window){a, a + s.ps[XPV_STORE_STEP_DURATION] / 1000, s.step, split};
        b->split |= split;
    }
    xpv_store_cursor_close(&c);
    b->start_ns = start_ns;
    return rc;
}

static int window_by_start(const void *pa, const void *pb)
{
    const window *x = pa, *y = pb;
    if (x->start != y->start) return x->start < y->start ? -1 : 1;
    return x->step < y->step ? -1 : x->step > y->step;
}

/* device's windows into dev_steps: the combined ones, and for each step the
 * devices ran apart, the device's own row (none when it has no row). */
static int load_device_steps(build *b, int device, xpv_err *err)
{
    b->ndev_steps = 0;
    if (!b->split) return 0;
    xpv_hindex own = {0};
    xpv_store_cursor c;
    xpv_store_step s;
    int64_t *win = NULL;
    size_t n = 0, cap = 0;
    int rc;
    if (xpv_store_steps_open(&c, b->db, b->id, device, err) != 0) return -1;
    while ((rc = xpv_store_steps_next(&c, &s, err)) == 1) {
        if (s.ps[XPV_STORE_STEP_DURATION] <= 0 || !xpv_store_step_known(&s, XPV_STORE_STEP_START))
            continue;
        win = xpv_grow_to_index(win, &cap, 2 * n + 1, sizeof *win, 0);
        win[2 * n] = b->start_ns + s.ps[XPV_STORE_STEP_START] / 1000;
        win[2 * n + 1] = win[2 * n] + s.ps[XPV_STORE_STEP_DURATION] / 1000;
        *xpv_hindex_put(&own, (uint64_t)s.step, n) = n;
        n++;
    }
    xpv_store_cursor_close(&c);
    b->dev_steps = xpv_xrealloc(b->dev_steps, (b->nsteps ? b->nsteps : 1) * sizeof *b->dev_steps);
    for (size_t i = 0; rc == 0 && i < b->nsteps; i++) {
        window w = b->steps[i];
        uint64_t *at = w.own ? xpv_hindex_get(&own, (uint64_t)w.step) : NULL;
        if (w.own && !at) continue;
        if (at) w.start = win[2 * *at], w.end = win[2 * *at + 1];
        b->dev_steps[b->ndev_steps++] = w;
    }
    xpv_sort(b->dev_steps, b->ndev_steps, sizeof *b->dev_steps, window_by_start);
    xpv_hindex_free(&own);
    free(win);
    return rc;
}

static int note_launch(void *ctx, const xpv_event *ev, int64_t block, uint32_t index)
{
    (void)block, (void)index;
    build *b = ctx;
    if (ev->corr >= 0) xpv_hindex_put(&b->launches, (uint64_t)ev->corr, (uint64_t)ev->ts_ns);
    return 0;
}

static int load_launches(build *b, xpv_err *err)
{
    xpv_store_query q;
    xpv_store_query_all(&q, b->id);
    q.kinds = XPV_KIND_BIT(XPV_KIND_LAUNCH);
    q.skip_args = 1;
    return xpv_store_scan(b->db, &q, note_launch, b, err) < 0 ? -1 : 0;
}

/* The window of w[0, n) (in start order) that holds t, NULL none. */
static const window *window_at(const window *w, size_t n, int64_t t)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (w[mid].start <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo && t < w[lo - 1].end ? &w[lo - 1] : NULL;
}

/* The step of a device event starting at ts, launched at *launch (NULL:
 * unknown): by the launch, unless that finds a step the devices ran apart,
 * whose windows are the device's own, found by the event's own start. */
static int64_t step_at(const build *b, int64_t ts, const uint64_t *launch)
{
    const window *v = b->split ? b->dev_steps : b->steps;
    size_t n = b->split ? b->ndev_steps : b->nsteps;
    const window *w = window_at(v, n, launch ? (int64_t)*launch : ts);
    if (launch && (!w || w->own) && b->split) w = window_at(v, n, ts);
    return w ? w->step : -1;
}

static uint32_t arg_name(build *b, const xpv_arg *a)
{
    char num[32];
    uint64_t *at;
    switch (a->type) {
    case XPV_ARG_STR:
        if ((at = xpv_hindex_get(&b->str_names, a->v.str))) return (uint32_t)*at;
        size_t len;
        const char *s = xpv_api_string(b->strings, a->v.str, &len);
        uint32_t n = intern(b->r, s, len);
        *xpv_hindex_put(&b->str_names, a->v.str, n) = n;
        return n;
    case XPV_ARG_TEXT:
    case XPV_ARG_JSON:
        return intern(b->r, a->text ? a->text : "", a->text ? a->len : 0);
    case XPV_ARG_INT:
        return intern(b->r, num, (size_t)snprintf(num, sizeof num, "%lld", (long long)a->v.i));
    case XPV_ARG_UINT:
        return intern(b->r, num,
                      (size_t)snprintf(num, sizeof num, "%llu", (unsigned long long)a->v.u));
    case XPV_ARG_DOUBLE:
        return intern(b->r, num, (size_t)snprintf(num, sizeof num, "%.17g", a->v.d));
    }
    return XPV_DEVROW_NONE;
}

static int note_activity(void *ctx, const xpv_event *ev, int64_t block, uint32_t index)
{
    build *b = ctx;
    if (b->nrecs == b->recs_cap) {
        b->recs_cap = b->recs_cap ? b->recs_cap * 2 : 1024;
        b->recs = xpv_xrealloc(b->recs, b->recs_cap * sizeof *b->recs);
    }
    rec *r = &b->recs[b->nrecs++];
    r->ts = ev->ts_ns;
    r->end = ev->ts_ns + (ev->dur_ns > 0 ? ev->dur_ns : 0);
    r->block = block, r->index = index;
    uint64_t *launch = ev->corr >= 0 ? xpv_hindex_get(&b->launches, (uint64_t)ev->corr) : NULL;
    r->step = b->nsteps ? step_at(b, ev->ts_ns, launch) : -1;
    for (int k = 0; k < XPV_DEVROW_NARGS; k++)
        r->arg[k] = XPV_DEVROW_NONE;
    for (uint32_t i = 0; i < ev->nargs; i++)
        for (int k = 0; k < XPV_DEVROW_NARGS; k++)
            if (b->keys[k] && ev->args[i].key == b->keys[k]) r->arg[k] = arg_name(b, &ev->args[i]);
    return 0;
}

static int by_start(const void *pa, const void *pb)
{
    const rec *x = pa, *y = pb;
    if (x->ts != y->ts) return x->ts < y->ts ? -1 : 1;
    if (x->block != y->block) return x->block < y->block ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

/* ---- the rows ---- */

static xpv_devrow_span *push_span(xpv_devrow *row, size_t *cap)
{
    if (row->n == *cap) {
        *cap = *cap ? *cap * 2 : 64;
        row->spans = xpv_xrealloc(row->spans, *cap * sizeof *row->spans);
    }
    return &row->spans[row->n++];
}

static uint32_t module_name(build *b, const rec *e)
{
    size_t mlen, plen;
    const char *m = xpv_devrows_name(b->r, e->arg[XPV_DEVROW_ARG_MODULE], &mlen);
    if (e->arg[XPV_DEVROW_ARG_PROGRAM] == XPV_DEVROW_NONE) return e->arg[XPV_DEVROW_ARG_MODULE];
    const char *p = xpv_devrows_name(b->r, e->arg[XPV_DEVROW_ARG_PROGRAM], &plen);
    xpv_buf t = {0};
    xpv_buf_printf(&t, "%.*s(%.*s)", (int)mlen, m, (int)plen, p);
    uint32_t n = intern(b->r, t.data, t.len);
    xpv_buf_free(&t);
    return n;
}

/* Runs of events with equal keys (the op's, or the module's) and step. */
static void derive_runs(build *b, xpv_devrow *row)
{
    int ops = row->kind == XPV_DEVROW_OPS;
    int lead = ops ? XPV_DEVROW_ARG_OP : XPV_DEVROW_ARG_MODULE;
    size_t cap = 0;
    xpv_devrow_span *cur = NULL;
    for (size_t i = 0; i < b->nrecs; i++) {
        const rec *e = &b->recs[i];
        if (e->arg[lead] == XPV_DEVROW_NONE) continue;
        if (cur && cur->step == e->step && cur->arg[lead] == e->arg[lead] &&
            cur->arg[XPV_DEVROW_ARG_PROGRAM] == e->arg[XPV_DEVROW_ARG_PROGRAM] &&
            cur->arg[XPV_DEVROW_ARG_MODULE] == e->arg[XPV_DEVROW_ARG_MODULE]) {
            if (e->end > cur->end) cur->end = e->end;
            cur->events++;
            continue;
        }
        cur = push_span(row, &cap);
        *cur = (xpv_devrow_span){e->ts, e->end, 0, {0}, e->step, e->block, e->index, 1};
        for (int k = 0; k < XPV_DEVROW_NARGS; k++)
            cur->arg[k] = ops || k == XPV_DEVROW_ARG_MODULE || k == XPV_DEVROW_ARG_PROGRAM
                              ? e->arg[k]
                              : XPV_DEVROW_NONE;
        cur->name = ops ? e->arg[XPV_DEVROW_ARG_OP] : module_name(b, e);
    }
}

static int span_by_start(const void *pa, const void *pb)
{
    const xpv_devrow_span *x = pa, *y = pb;
    if (x->start != y->start) return x->start < y->start ? -1 : 1;
    return x->step < y->step ? -1 : x->step > y->step;
}

/* One span per step, over every device event that belongs to it. */
static void derive_steps(build *b, xpv_devrow *row)
{
    xpv_hindex at = {0};
    size_t cap = 0;
    for (size_t i = 0; i < b->nrecs; i++) {
        const rec *e = &b->recs[i];
        if (e->step < 0) continue;
        uint64_t *slot = xpv_hindex_put(&at, (uint64_t)e->step, row->n);
        if (*slot == row->n) {
            char num[24];
            xpv_devrow_span *s = push_span(row, &cap);
            *s = (xpv_devrow_span){e->ts, e->end, 0, {0}, e->step, e->block, e->index, 1};
            for (int k = 0; k < XPV_DEVROW_NARGS; k++)
                s->arg[k] = XPV_DEVROW_NONE;
            s->name =
                intern(b->r, num, (size_t)snprintf(num, sizeof num, "%lld", (long long)e->step));
            continue;
        }
        xpv_devrow_span *s = &row->spans[*slot];
        if (e->end > s->end) s->end = e->end; /* recs are in start order */
        s->events++;
    }
    xpv_hindex_free(&at);
    xpv_sort(row->spans, row->n, sizeof *row->spans, span_by_start);
}

static void add_rows(build *b, int device, int64_t device_track)
{
    xpv_devrows *r = b->r;
    for (int kind = 0; kind < XPV_DEVROW_KINDS; kind++) {
        xpv_devrow row = {
            r->first_track + 3 * (int64_t)device + kind, device_track, device, kind, NULL, 0};
        if (kind == XPV_DEVROW_STEPS)
            derive_steps(b, &row);
        else
            derive_runs(b, &row);
        if (!row.n) {
            free(row.spans);
            continue;
        }
        r->rows = xpv_xrealloc(r->rows, (r->nrows + 1) * sizeof *r->rows);
        r->rows[r->nrows++] = row;
    }
}

/* Gathers one device's events and derives its rows when any carries hlo_op. */
static int build_device(build *b, int device, xpv_err *err)
{
    int64_t device_track = -1;
    b->nrecs = 0;
    if (load_device_steps(b, device, err) != 0) return -1;
    for (size_t i = 0; i < b->ntracks; i++) {
        if (b->tracks[i].device != device) continue;
        if (device_track < 0) device_track = b->tracks[i].track;
        xpv_store_query q;
        xpv_store_query_all(&q, b->id);
        q.track = b->tracks[i].track;
        q.kinds = XPV_KIND_DEVICE_WORK_BITS;
        if (xpv_store_scan(b->db, &q, note_activity, b, err) < 0) return -1;
    }
    int any_op = 0;
    for (size_t i = 0; i < b->nrecs && !any_op; i++)
        any_op = b->recs[i].arg[XPV_DEVROW_ARG_OP] != XPV_DEVROW_NONE;
    if (!any_op) return 0;
    xpv_sort(b->recs, b->nrecs, sizeof *b->recs, by_start);
    add_rows(b, device, device_track);
    return 0;
}

static int build_all(build *b, xpv_err *err)
{
    if (load_tracks(b, err) != 0 || load_steps(b, err) != 0) return -1;
    if (b->nsteps && load_launches(b, err) != 0) return -1;
    if (!(b->strings = xpv_api_strings_open_checked(b->db, b->id, err))) return -1;
    unsigned char *done = xpv_xcalloc(XPV_DEVROW_MAX_DEVICE, 1);
    int rc = 0;
    for (size_t i = 0; i < b->ntracks && rc == 0; i++) {
        int dev = b->tracks[i].device;
        if (done[dev] || b->excluded[dev]) continue;
        done[dev] = 1;
        rc = build_device(b, dev, err);
    }
    free(done);
    return rc;
}

int xpv_devrows_build(sqlite3 *db, int64_t id, xpv_devrows *r, xpv_err *err)
{
    memset(r, 0, sizeof *r);
    build b = {.db = db, .id = id, .r = r};
    if (xpv_store_strings_ids(db, id, ARG_KEYS, XPV_DEVROW_NARGS, b.keys, err) != 0) return -1;
    int rc = b.keys[XPV_DEVROW_ARG_OP] ? build_all(&b, err) : 0;
    xpv_api_strings_free(b.strings);
    xpv_hindex_free(&b.str_names);
    xpv_hindex_free(&b.launches);
    free(b.tracks);
    free(b.excluded);
    free(b.steps);
    free(b.dev_steps);
    free(b.recs);
    return rc;
}

const xpv_devrow *xpv_devrows_row(const xpv_devrows *r, int64_t track)
{
    for (size_t i = 0; i < r->nrows; i++)
        if (r->rows[i].track == track) return &r->rows[i];
    return NULL;
}

/* A decimal integer that a JSON number holds exactly. */
static int is_integer(const char *s, size_t n)
{
    size_t i = n && s[0] == '-';
    if (i == n || n > 16) return 0;
    for (; i < n; i++)
        if (s[i] < '0' || s[i] > '9') return 0;
    return !(s[s[0] == '-'] == '0' && n > 1 + (s[0] == '-'));
}

void xpv_devrows_put_args(xpv_buf *b, const xpv_devrows *r, const xpv_devrow *row,
                          const xpv_devrow_span *s)
{
    xpv_buf_putc(b, '{');
    if (row->kind == XPV_DEVROW_STEPS) {
        xpv_buf_puts(b, "\"step_num\":");
        xpv_api_put_int(b, s->step);
    }
    int n = 0;
    for (int k = 0; row->kind != XPV_DEVROW_STEPS && k < XPV_DEVROW_NARGS; k++) {
        if (s->arg[k] == XPV_DEVROW_NONE) continue;
        size_t len;
        const char *v = xpv_devrows_name(r, s->arg[k], &len);
        xpv_buf_printf(b, "%s\"%s\":", n++ ? "," : "", ARG_KEYS[k]);
        if (k == XPV_DEVROW_ARG_PROGRAM && is_integer(v, len))
            xpv_buf_append(b, v, len);
        else
            xpv_buf_json_str(b, v, len);
    }
    xpv_buf_putc(b, '}');
}

void xpv_devrows_free(xpv_devrows *r)
{
    for (size_t i = 0; i < r->nrows; i++)
        free(r->rows[i].spans);
    free(r->rows);
    for (size_t i = 0; i < r->nnames; i++)
        free(r->names[i]);
    free(r->names);
    free(r->name_len);
    xpv_hindex_free(&r->by_text);
    memset(r, 0, sizeof *r);
}
