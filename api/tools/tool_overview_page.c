/*
 * tool_overview_page.c — XProf's overview_page: the run environment (hosts,
 * devices and the figures their planes give), the step time and where it
 * goes, the top device ops, and a recommendation in plain words with the
 * numbers it rests on (the table's properties "bottleneck" and
 * "recommendation").
 *
 * Shares are over device time: for each device, every step's duration is
 * split into its categories (steps rows with device >= 0), so a share is a
 * category's time over the summed step durations of all devices. The
 * thresholds that turn shares into words are named below; a share under
 * every threshold leaves the top op as the advice.
 *
 * The summary figures XProf's cards show are rows too: "steps" /
 * "step time standard deviation" (over the steps, each as long as its
 * slowest host), "steps" / "compilation" (the share of step time in host
 * compile spans the devices waited on plus autotuning, all-devices rows) and
 * "environment" / "device busy" (device_busy.c's mean over the devices that
 * ran work, weighted by how many ran on each host).
 *
 * The step-time graph is one row per step (section "step time graph",
 * `step` set): the step's time and each category's, averaged over the
 * scope's devices (hosts aligned by step number), or over its hosts' step
 * rows where no device row exists. A category no row carries is null.
 */
#include "tools.h"
#include "../api.h"
#include "../api_util.h"
#include "../../store/steps.h"
#include "../../store/profiles.h"

#include <stdio.h>
#include <string.h>

#define IDLE_BOUND 0.30       /* devices idle this much: input- or host-bound */
#define COLLECTIVE_BOUND 0.20 /* communication-bound */
#define MEMCPY_BOUND 0.10     /* transfer-bound */
#define TOP_OPS 5

enum {
    C_SECTION,
    C_METRIC,
    C_VALUE,
    C_UNIT,
    C_DETAIL,
    C_STEP, /* the step-time graph's columns, null in other rows */
    C_COMPUTE,
    C_COLLECTIVE,
    C_MEMCPY,
    C_MEMSET,
    C_IDLE,
    C_HOST,
    NCOLS
};

static const xpv_table_col COLS[NCOLS] = {
    {"section", "Section", XPV_COL_STRING},
    {"metric", "Metric", XPV_COL_STRING},
    {"value", "Value", XPV_COL_NUMBER},
    {"unit", "Unit", XPV_COL_STRING},
    {"detail", "Detail", XPV_COL_STRING},
    {"step", "Step", XPV_COL_NUMBER},
    {"compute_us", "Compute (µs)", XPV_COL_NUMBER},
    {"collective_us", "Collectives (µs)", XPV_COL_NUMBER},
    {"memcpy_us", "Memcpy (µs)", XPV_COL_NUMBER},
    {"memset_us", "Memset (µs)", XPV_COL_NUMBER},
    {"idle_us", "Idle (µs)", XPV_COL_NUMBER},
    {"host_wait_us", "Host wait (µs)", XPV_COL_NUMBER},
};

static size_t add(xpv_table *t, const char *section, const char *metric, const char *unit,
                  const char *detail)
{
    size_t r = xpv_table_add_row(t);
    xpv_table_set_text(t, r, C_SECTION, section, strlen(section));
    xpv_table_set_text(t, r, C_METRIC, metric, strlen(metric));
    if (unit) xpv_table_set_text(t, r, C_UNIT, unit, strlen(unit));
    if (detail) xpv_table_set_text(t, r, C_DETAIL, detail, strlen(detail));
    return r;
}

int xpv_tool_overview_page_has_data(sqlite3 *db, const xpv_tool_scope *s, xpv_err *err)
{
    return xpv_store_profiles_any_events(db, s->ids, s->n, 1, err);
}

/* ---- environment ---- */

/* How many of the listed devices ran work, and how busy those were (the
 * mean over them of busy time over the profile's span, device_busy.c): one
 * busy GPU of eight says so here, as on the overview's Device busy card. */
static int devices_with_work(sqlite3 *db, const xpv_tool_scope *s, xpv_table *t, xpv_err *err)
{
    int64_t listed = 0, ran = 0, measured = 0;
    double busy = 0;
    for (size_t i = 0; i < s->n; i++) {
        xpv_device_busy d;
        xpv_api_profile_state ps;
        int found = xpv_api_profile_state_find(db, s->ids[i], &ps, err);
        if (found < 0) return -1; /* an index error, not "no span" */
        int has = found && ps.has_span;
        int64_t span_ps = has ? (ps.end_ns - ps.start_ns) * 1000 : 0;
        if (xpv_api_device_busy_get(db, s->ids[i], span_ps, &d, err) != 0) return -1;
        listed += d.listed, ran += d.with_work;
        if (d.has_fraction) busy += d.fraction * (double)d.with_work, measured += d.with_work;
    }
    if (listed == 0) return 0;
    char detail[96];
    snprintf(detail, sizeof detail, "%lld of %lld device%s ran work", (long long)ran,
             (long long)listed, listed == 1 ? "" : "s");
    xpv_table_set_int(t, add(t, "environment", "devices with work", NULL, detail), C_VALUE, ran);
    if (measured > 0) {
        size_t r = add(t, "environment", "device busy", "%", detail);
        xpv_table_set_double(t, r, C_VALUE, 100.0 * busy / (double)measured);
    }
    return 0;
}

static int environment(sqlite3 *db, const xpv_tool_scope *s, xpv_table *t, xpv_err *err)
{
    xpv_store_cursor c;
    xpv_store_profiles_environment e;
    int found = xpv_store_profiles_environment_get(&c, db, s->ids, s->n, &e, err);
    if (found != 1) return found;
    size_t r = add(t, "environment", "hosts", NULL, e.hosts.s);
    xpv_table_set_int(t, r, C_VALUE, e.profiles);
    r = add(t, "environment", "devices", NULL, e.device.s);
    if (e.devices_known) xpv_table_set_int(t, r, C_VALUE, e.devices);
    xpv_store_cursor_close(&c);
    return devices_with_work(db, s, t, err);
}

/* The units of the device planes' figures, as the profilers write them. */
static const char *unit_of(const char *stat)
{
    static const char *const UNITS[][2] = {
        {"clock_rate", "kHz"},
        {"core_count", "cores"},
        {"memory_size", "bytes"},
        {"memory_bandwidth", "bytes/s"},
        {"peak_teraflops_per_second", "TFLOP/s"},
        {"peak_hbm_bw_gigabytes_per_second", "GB/s"},
    };
    for (size_t i = 0; i < sizeof UNITS / sizeof UNITS[0]; i++)
        if (strcmp(stat, UNITS[i][0]) == 0) return UNITS[i][1];
    return NULL;
}

/* The device planes' figures, once per distinct (stat, value), as facts
 * device.<name>.<stat> give them; the devices sharing it are the detail. */
static int device_figures(sqlite3 *db, const xpv_tool_scope *s, xpv_table *t, xpv_err *err)
{
    static const char *const STATS[] = {"device_vendor",
                                        "device_type_string",
                                        "compute_cap_major",
                                        "compute_cap_minor",
                                        "core_count",
                                        "clock_rate",
                                        "memory_size",
                                        "memory_bandwidth",
                                        "peak_teraflops_per_second",
                                        "peak_hbm_bw_gigabytes_per_second",
                                        NULL};
    xpv_store_cursor c;
    xpv_store_device_figure f;
    if (xpv_store_profiles_open_device_figures(&c, db, s->ids, s->n, STATS, err) != 0) return -1;
    int rc;
    while ((rc = xpv_store_profiles_device_figure_next(&c, &f, err)) == 1) {
        const char *stat = f.stat.s, *value = f.value.s;
        char detail[160];
        snprintf(detail, sizeof detail, "%lld device%s, e.g. %s", (long long)f.devices,
                 f.devices == 1 ? "" : "s", f.device.s);
        int textual = strcmp(stat, "device_vendor") == 0 || strcmp(stat, "device_type_string") == 0;
        char text[400];
        snprintf(text, sizeof text, "%s%s%s", textual ? value : "", textual ? "; " : "", detail);
        size_t r = add(t, "device", stat, unit_of(stat), text);
        if (!textual) xpv_table_set_double(t, r, C_VALUE, f.number);
    }
    xpv_store_cursor_close(&c);
    return rc;
}

/* ---- steps and where their time goes ---- */

typedef xpv_store_step_sums breakdown;

/* The share of step time spent compiling: host compile spans the devices
 * waited on, plus the devices' autotuning. */
static int compile_share(sqlite3 *db, const xpv_tool_scope *s, xpv_table *t, xpv_err *err)
{
    xpv_store_step_compile c;
    if (xpv_store_steps_compile(db, s->ids, s->n, &c, err) != 0) return -1;
    if (c.duration_ps <= 0) return 0;
    char detail[160];
    snprintf(detail, sizeof detail,
             "%.1f ms host compile, %.1f ms autotuning, of %.1f ms of step time",
             c.compile_ps / 1e9, c.autotune_ps / 1e9, c.duration_ps / 1e9);
    size_t r = add(t, "steps", "compilation", "%", detail);
    xpv_table_set_double(t, r, C_VALUE, 100.0 * (c.compile_ps + c.autotune_ps) / c.duration_ps);
    return 0;
}

static int step_times(sqlite3 *db, const xpv_tool_scope *s, xpv_table *t, xpv_err *err)
{
    xpv_store_step_times st;
    if (xpv_store_steps_times(db, s->ids, s->n, &st, err) != 0) return -1;
    if (st.steps > 0) {
        size_t r = add(t, "steps", "steps", NULL, NULL);
        xpv_table_set_int(t, r, C_VALUE, st.steps);
        static const char *const names[] = {"average step time", "fastest step", "slowest step",
                                            "step time standard deviation"};
        const double v[] = {st.avg_ps, st.min_ps, st.max_ps, st.sd_ps};
        for (int i = 0; i < 4; i++) {
            r = add(t, "steps", names[i], "µs", NULL);
            xpv_table_set_ps_us(t, r, C_VALUE, v[i]);
        }
        return compile_share(db, s, t, err);
    }
    return 0;
}

static int step_breakdown(sqlite3 *db, const xpv_tool_scope *s, breakdown *b, xpv_err *err)
{
    return xpv_store_steps_device_sums(db, s->ids, s->n, b, err);
}

static void share_rows(xpv_table *t, const breakdown *b)
{
    if (b->duration_ps <= 0) return;
    const struct {
        const char *name;
        double ps;
    } parts[] = {{"compute", b->compute_ps},   {"collectives", b->collective_ps},
                 {"memcpy", b->memcpy_ps},     {"memset", b->memset_ps},
                 {"autotune", b->autotune_ps}, {"idle", b->idle_ps}};
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
        size_t r = add(t, "step time breakdown", parts[i].name, "%", "of the devices' step time");
        xpv_table_set_double(t, r, C_VALUE, 100.0 * parts[i].ps / b->duration_ps);
    }
}

/* ---- the step-time graph ---- */

static int step_graph(sqlite3 *db, const xpv_tool_scope *s, xpv_table *t, xpv_err *err)
{
    xpv_store_cursor cur;
    if (xpv_store_steps_open_averages(&cur, db, s->ids, s->n, err) != 0) return -1;
    xpv_store_step_avg a;
    int rc;
    while ((rc = xpv_store_steps_averages_next(&cur, &a, err)) == 1) {
        char metric[48], detail[64];
        snprintf(metric, sizeof metric, "step %lld", (long long)a.step);
        snprintf(detail, sizeof detail, "average of %lld step row%s", (long long)a.rows,
                 a.rows == 1 ? "" : "s");
        size_t r = add(t, "step time graph", metric, "µs", detail);
        xpv_table_set_int(t, r, C_STEP, a.step);
        for (int c = 0; c < XPV_STORE_STEP_AVG_NFIELDS; c++)
            if ((a.known >> c) & 1u)
                xpv_table_set_ps_us(t, r, c ? C_COMPUTE + c - 1 : C_VALUE, a.avg_ps[c]);
    }
    xpv_store_cursor_close(&cur);
    return rc;
}

/* ---- top ops ---- */

static int top_ops(sqlite3 *db, const xpv_tool_scope *s, xpv_table *t, char *top, size_t n,
                   double *top_share, xpv_err *err)
{
    static const char *const KIND[2] = {"kernel", "xla_op"};
    xpv_top_ops ops;
    if (xpv_tool_top_ops(db, s, TOP_OPS, &ops, err) != 0) return -1;
    top[0] = 0;
    for (size_t i = 0; i < ops.n; i++) {
        const xpv_top_op *r = &ops.v[i];
        int64_t total = ops.total[r->kind];
        double share = total ? (double)r->ps / (double)total : 0;
        if (i == 0) {
            snprintf(top, n, "%s", r->name);
            *top_share = share;
        }
        char detail[96];
        snprintf(detail, sizeof detail, "%s, %.1f%% of all %s time", KIND[r->kind], 100.0 * share,
                 KIND[r->kind]);
        size_t row = add(t, "top ops", r->name, "µs", detail);
        xpv_table_set_ps_us(t, row, C_VALUE, (double)r->ps);
    }
    xpv_top_ops_free(&ops);
    return 0;
}

/* ---- the advice ---- */

/* The bottleneck the shares point at, worst first, with its numbers. */
static void recommend(xpv_table *t, const breakdown *b, const char *top, double top_share)
{
    char text[1024], *p = text;
    size_t left = sizeof text;
    const char *bottleneck = "compute";
#define SAY(...)                                                                                   \
    do {                                                                                           \
        int k = snprintf(p, left, __VA_ARGS__);                                                    \
        if (k > 0 && (size_t)k < left) p += k, left -= (size_t)k;                                  \
    } while (0)
    if (b->duration_ps <= 0) {
        bottleneck = "unknown";
        SAY("No step markers: the step time and its breakdown are unknown. ");
    } else {
        double idle = b->idle_ps / b->duration_ps, coll = b->collective_ps / b->duration_ps;
        double copy = b->memcpy_ps / b->duration_ps;
        if (idle >= IDLE_BOUND) {
            bottleneck = "input or host";
            SAY("The devices are idle %.1f%% of the step time: the program is likely input- or "
                "host-bound; look at the input pipeline and at the host before each step. ",
                100 * idle);
        }
        if (coll >= COLLECTIVE_BOUND) {
            if (strcmp(bottleneck, "compute") == 0) bottleneck = "communication";
            SAY("Collectives take %.1f%% of the step time: overlap them with compute or "
                "communicate less. ",
                100 * coll);
        }
        if (copy >= MEMCPY_BOUND) {
            if (strcmp(bottleneck, "compute") == 0) bottleneck = "memory transfers";
            SAY("Memory copies take %.1f%% of the step time: keep data on the device. ",
                100 * copy);
        }
    }
    if (top[0])
        SAY("The top op, %s, takes %.1f%% of the device time: it is where compute time goes.", top,
            100 * top_share);
#undef SAY
    xpv_table_set_property(t, "bottleneck", bottleneck);
    xpv_table_set_property(t, "recommendation", text);
}

xpv_table *xpv_tool_overview_page(sqlite3 *db, const xpv_tool_scope *s, xpv_err *err)
{
    xpv_table *t = xpv_table_new(COLS, NCOLS);
    breakdown b;
    char top[512];
    double top_share = 0;
    if (environment(db, s, t, err) != 0 || device_figures(db, s, t, err) != 0 ||
        step_times(db, s, t, err) != 0 || step_breakdown(db, s, &b, err) != 0) {
        xpv_table_free(t);
        return NULL;
    }
    share_rows(t, &b);
    if (top_ops(db, s, t, top, sizeof top, &top_share, err) != 0) {
        xpv_table_free(t);
        return NULL;
    }
    recommend(t, &b, top, top_share);
    if (step_graph(db, s, t, err) != 0) {
        xpv_table_free(t);
        return NULL;
    }
    return t;
}
