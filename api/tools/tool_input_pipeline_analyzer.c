/*
 * tool_input_pipeline_analyzer.c — XProf's input_pipeline_analyzer tool:
 * per step, how long the device waited for input while the host worked on
 * it, and a verdict with its numbers, computed on request from the steps
 * table and the event store.
 *
 * Input work is recognised by name (tool_ops.c): on the host, data loading
 * (tf.data iterators, PyTorch's DataLoader events, `next`) and TensorFlow's
 * infeed ops; on the device, XLA's infeed and outfeed ops. Per step (the
 * steps table's rows for all devices together), inside the step's window:
 *  - host_input: the union of the host's input work;
 *  - infeed: the union of the device's infeed/outfeed ops;
 *  - input_time: the time the device waits for input: host input work
 *    while no device does other work (kernels, copies, memsets; XLA ops
 *    where there are no kernels), plus infeed/outfeed, counted once. That
 *    is the device idling at the start of a step while the host fetches the
 *    batch, wherever in the step the wait falls: a GPU still running the
 *    previous step's kernels when a step begins is not waiting yet;
 *  - idle: the step's idle time as the steps table has it (no device busy).
 * The verdict follows XProf's lines: under 5% of the step time waiting for
 * input is "not input-bound", 5% and more "input-bound" (20% and more
 * XProf calls highly input-bound: the degree property says which).
 *
 * Device work is only kept where it overlaps host input work, which is all
 * the wait needs, so memory follows the input work, not the profile.
 */
#include "tools.h"
#include "../api_util.h"
#include "tool_ops.h"
#include "../../common/xpv_lower_bound.h"
#include "../../store/event_store.h"
#include "../../store/steps.h"
#include "../../store/strings.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const xpv_table_col COLS[] = {
    {"stepnum", "Step", XPV_COL_NUMBER},
    {"step_time_us", "Step time (µs)", XPV_COL_NUMBER},
    {"input_time_us", "Waiting for input (µs)", XPV_COL_NUMBER},
    {"input_fraction", "Waiting for input (share of step)", XPV_COL_NUMBER},
    {"host_input_us", "Host input work (µs)", XPV_COL_NUMBER},
    {"infeed_us", "Device infeed/outfeed (µs)", XPV_COL_NUMBER},
    {"idle_us", "Device idle (µs)", XPV_COL_NUMBER},
};
#define NCOLS (sizeof COLS / sizeof COLS[0])

#define INPUT_BOUND_AT 0.05
#define HIGHLY_INPUT_BOUND_AT 0.20

#define HOST_KINDS (XPV_KIND_BIT(XPV_KIND_OTHER) | XPV_KIND_BIT(XPV_KIND_STEP))

typedef struct {
    xpv_tool_ival *v;
    size_t n, cap;
} ivals;

static void ivals_push(ivals *l, int64_t s, int64_t e)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 256;
        l->v = xpv_xrealloc(l->v, l->cap * sizeof *l->v);
    }
    l->v[l->n++] = (xpv_tool_ival){s, e};
}

typedef struct {
    int64_t step, start_ps, dur_ps, idle_ps;
    int has_idle;
} step_row;

typedef struct {
    sqlite3 *db;
    int64_t id;
    uint8_t *input; /* string id -> enum xpv_tool_input */
    size_t ninput;
    xpv_tool_profile prof;
    int probe;
    ivals host, busy, feed; /* ps from the profile's start */
    step_row *steps;
    size_t nsteps;
} ip_ctx;

static enum xpv_tool_input input_of(const ip_ctx *c, uint32_t name)
{
    return name < c->ninput ? (enum xpv_tool_input)c->input[name] : XPV_TOOL_INPUT_NONE;
}

static int is_device(const ip_ctx *c, uint32_t track)
{
    return xpv_tool_on_device(&c->prof, track);
}

/* The names of input work among the profile's strings: SQL narrows them
 * down (LIKE ignores ASCII case), tool_ops.c decides. */
static int load_input_names(ip_ctx *c)
{
    xpv_store_cursor cur;
    /* No err: the tool's caller answers a failed load as it always has. */
    if (xpv_store_strings_open_input_names(&cur, c->db, c->id, NULL) != 0) return -1;
    int64_t id;
    xpv_store_text v;
    int rc;
    while ((rc = xpv_store_strings_next(&cur, &id, &v, NULL)) == 1) {
        enum xpv_tool_input k =
            v.s && id > 0 && id <= UINT32_MAX ? xpv_tool_input_class(v.s, v.n) : 0;
        if (k) c->input = xpv_grow_to_index(c->input, &c->ninput, (size_t)id, 1, 0);
        if (k) c->input[id] = (uint8_t)k;
    }
    xpv_store_cursor_close(&cur);
    return rc < 0 ? -1 : 0;
}

static int load_steps(ip_ctx *c)
{
    xpv_store_cursor cur;
    if (xpv_store_steps_open_timed(&cur, c->db, c->id, NULL) != 0) return -1;
    size_t cap = 0;
    xpv_store_step r;
    int rc;
    while ((rc = xpv_store_steps_next(&cur, &r, NULL)) == 1) {
        if (c->nsteps == cap) {
            cap = cap ? cap * 2 : 64;
            c->steps = xpv_xrealloc(c->steps, cap * sizeof *c->steps);
        }
        c->steps[c->nsteps++] =
            (step_row){r.step, r.ps[XPV_STORE_STEP_START], r.ps[XPV_STORE_STEP_DURATION],
                       r.ps[XPV_STORE_STEP_IDLE], xpv_store_step_known(&r, XPV_STORE_STEP_IDLE)};
    }
    xpv_store_cursor_close(&cur);
    return rc;
}

static int64_t start_ps(const ip_ctx *c, const xpv_event *ev)
{
    return (ev->ts_ns - c->prof.base_ns) * 1000;
}

static int host_visit(void *ctx, const xpv_event *ev, int64_t block, uint32_t index)
{
    (void)block, (void)index;
    ip_ctx *c = ctx;
    if (ev->dur_ns < 0 || is_device(c, ev->track) || !input_of(c, ev->name)) return 0;
    if (c->probe) return 1;
    ivals_push(&c->host, start_ps(c, ev), start_ps(c, ev) + ev->dur_ps);
    return 0;
}

/* Keeps the parts of [s, e) that overlap the host's (normalized) input work. */
static void push_busy(ip_ctx *c, int64_t s, int64_t e)
{
    /* the first input interval ending after s */
    size_t lo = xpv_upper_bound_i64(c->host.v, c->host.n, sizeof *c->host.v,
                                    offsetof(xpv_tool_ival, end), s);
    for (size_t i = lo; i < c->host.n && c->host.v[i].start < e; i++) {
        int64_t a = s > c->host.v[i].start ? s : c->host.v[i].start;
        int64_t b = e < c->host.v[i].end ? e : c->host.v[i].end;
        if (b > a) ivals_push(&c->busy, a, b);
    }
}

static int device_visit(void *ctx, const xpv_event *ev, int64_t block, uint32_t index)
{
    (void)block, (void)index;
    ip_ctx *c = ctx;
    if (ev->dur_ps <= 0) return 0;
    int feed = input_of(c, ev->name) == XPV_TOOL_INPUT_FEED;
    if (c->probe) return feed;
    if (feed)
        ivals_push(&c->feed, start_ps(c, ev), start_ps(c, ev) + ev->dur_ps);
    else
        push_busy(c, start_ps(c, ev), start_ps(c, ev) + ev->dur_ps);
    return 0;
}

static void ctx_free(ip_ctx *c)
{
    free(c->input);
    xpv_tool_profile_free(&c->prof);
    free(c->host.v);
    free(c->busy.v);
    free(c->feed.v);
    free(c->steps);
}

/* Reads one profile's steps and input work; with probe, returns 1 at the
 * first input event when there are steps, else 0. -1 with err on failure. */
static int read_profile(ip_ctx *c, xpv_err *err)
{
    if (load_steps(c) != 0 || load_input_names(c) != 0 ||
        xpv_tool_profile_load(c->db, c->id, &c->prof, NULL) != 0)
        return xpv_err_set(err, "index: %s", sqlite3_errmsg(c->db));
    if (!c->nsteps || !c->ninput) return 0;
    xpv_store_query q;
    xpv_store_query_all(&q, c->id);
    q.kinds = HOST_KINDS;
    q.skip_args = 1;
    int rc = xpv_store_scan(c->db, &q, host_visit, c, err);
    if (rc != 0) return rc;
    c->host.n = xpv_tool_ivals_normalize(c->host.v, c->host.n);
    q.kinds = XPV_KIND_DEVICE_WORK_BITS | (c->prof.no_kernels ? XPV_KIND_BIT(XPV_KIND_XLA_OP) : 0);
    rc = xpv_store_scan(c->db, &q, device_visit, c, err);
    if (rc != 0) return rc;
    c->busy.n = xpv_tool_ivals_normalize(c->busy.v, c->busy.n);
    c->feed.n = xpv_tool_ivals_normalize(c->feed.v, c->feed.n);
    return 0;
}

int xpv_tool_input_pipeline_analyzer_has_data(sqlite3 *db, const xpv_tool_scope *s, xpv_err *err)
{
    for (size_t i = 0; i < s->n; i++) {
        ip_ctx c = {.db = db, .id = s->ids[i], .probe = 1};
        int rc = read_profile(&c, err);
        ctx_free(&c);
        if (rc != 0) return rc < 0 ? -1 : 1;
    }
    return 0;
}

/* ---- the table ---- */

static void put_number(xpv_table *t, const char *key, double v)
{
    xpv_buf b = {0};
    xpv_buf_json_double(&b, v);
    xpv_table_set_property(t, key, b.data);
    xpv_buf_free(&b);
}

static void put_summary(xpv_table *t, int64_t step_ps, int64_t wait_ps, int64_t host_ps,
                        int64_t feed_ps, size_t nsteps)
{
    double share = (double)wait_ps / (double)step_ps;
    int bound = share >= INPUT_BOUND_AT;
    const char *degree = share >= HIGHLY_INPUT_BOUND_AT ? "highly" : bound ? "moderately" : "not";
    xpv_table_set_property(t, "verdict", bound ? "input-bound" : "not input-bound");
    xpv_table_set_property(t, "degree", degree);
    put_number(t, "input_fraction", share);
    put_number(t, "input_time_us", (double)wait_ps / 1e6);
    put_number(t, "step_time_us", (double)step_ps / 1e6);
    put_number(t, "host_input_us", (double)host_ps / 1e6);
    put_number(t, "infeed_us", (double)feed_ps / 1e6);
    put_number(t, "steps", (double)nsteps);
    put_number(t, "input_bound_at", INPUT_BOUND_AT);
    put_number(t, "highly_input_bound_at", HIGHLY_INPUT_BOUND_AT);
    char text[256];
    snprintf(text, sizeof text,
             "%s: the device waited for input %.1f%% of the step time (%.3f of %.3f ms over %zu"
             " steps); under %.0f%% is not input-bound, %.0f%% and more highly input-bound",
             bound ? "Input-bound" : "Not input-bound", share * 100, (double)wait_ps / 1e9,
             (double)step_ps / 1e9, nsteps, INPUT_BOUND_AT * 100, HIGHLY_INPUT_BOUND_AT * 100);
    xpv_table_set_property(t, "summary", text);
}

static xpv_table *make_table(const ip_ctx *c)
{
    xpv_table *t = xpv_table_new(COLS, NCOLS);
    int64_t step_ps = 0, wait_ps = 0, host_ps = 0, feed_ps = 0;
    for (size_t i = 0; i < c->nsteps; i++) {
        const step_row *s = &c->steps[i];
        int64_t w0 = s->start_ps, w1 = s->start_ps + s->dur_ps;
        int64_t wait = xpv_tool_wait_len(c->host.v, c->host.n, c->busy.v, c->busy.n, c->feed.v,
                                         c->feed.n, w0, w1);
        int64_t host = xpv_tool_ivals_len_in(c->host.v, c->host.n, w0, w1);
        int64_t feed = xpv_tool_ivals_len_in(c->feed.v, c->feed.n, w0, w1);
        size_t row = xpv_table_add_row(t);
        xpv_table_set_int(t, row, 0, s->step);
        xpv_table_set_ps_us(t, row, 1, (double)s->dur_ps);
        xpv_table_set_ps_us(t, row, 2, (double)wait);
        xpv_table_set_double(t, row, 3, (double)wait / (double)s->dur_ps);
        xpv_table_set_ps_us(t, row, 4, (double)host);
        xpv_table_set_ps_us(t, row, 5, (double)feed);
        if (s->has_idle) xpv_table_set_ps_us(t, row, 6, (double)s->idle_ps);
        step_ps += s->dur_ps, wait_ps += wait, host_ps += host, feed_ps += feed;
    }
    put_summary(t, step_ps, wait_ps, host_ps, feed_ps, c->nsteps);
    return t;
}

xpv_table *xpv_tool_input_pipeline_analyzer(sqlite3 *db, const xpv_tool_scope *s, xpv_err *err)
{
    if (s->n != 1) { /* merges_hosts is 0: the framework never asks */
        xpv_err_set(err, "one host at a time");
        return NULL;
    }
    ip_ctx c = {.db = db, .id = s->ids[0]};
    xpv_table *t = read_profile(&c, err) == 0 ? make_table(&c) : NULL;
    ctx_free(&c);
    return t;
}
