/*
 * tool_pod_viewer.c — the multi-host view XProf cannot give (it opens one
 * host at a time): every host of a run side by side, step by step. Steps
 * are aligned by step number; each row is one (step, host) with the step's
 * time and its split (summed over the host's devices, as the steps table
 * keeps device -1), and the host that was slowest on that step is marked
 * (none when every host took as long).
 * The table's properties name the slowest host over the whole run.
 *
 * Listed only for two or more hosts with steps: one host has no pod.
 */
#include "tools.h"
#include "../../store/steps.h"

#include <stdio.h>
#include <string.h>

enum {
    C_STEP,
    C_HOST,
    C_STEP_TIME,
    C_COMPUTE,
    C_COLLECTIVE,
    C_MEMCPY,
    C_IDLE,
    C_SLOWEST,
    C_BEHIND,
    NCOLS
};

static const xpv_table_col COLS[NCOLS] = {
    {"step", "Step", XPV_COL_NUMBER},
    {"host", "Host", XPV_COL_STRING},
    {"step_time_us", "Step time (µs)", XPV_COL_NUMBER},
    {"compute_us", "Compute (µs)", XPV_COL_NUMBER},
    {"collective_us", "Collectives (µs)", XPV_COL_NUMBER},
    {"memcpy_us", "Memcpy (µs)", XPV_COL_NUMBER},
    {"idle_us", "Idle (µs)", XPV_COL_NUMBER},
    {"slowest", "Slowest host of the step", XPV_COL_BOOLEAN},
    {"behind_fastest_us", "Behind the fastest host (µs)", XPV_COL_NUMBER},
};

int xpv_tool_pod_viewer_has_data(sqlite3 *db, const xpv_tool_scope *s, xpv_err *err)
{
    int64_t n = xpv_store_steps_profiles_with_steps(db, s->ids, s->n, err);
    return n < 0 ? -1 : n >= 2;
}

/* The host slowest on the most steps, as "host (N of M steps)". */
static int slowest_host(sqlite3 *db, const xpv_tool_scope *s, xpv_table *t, xpv_err *err)
{
    char host[512], text[512];
    int64_t slow, steps;
    int rc = xpv_store_steps_slowest_host(db, s->ids, s->n, host, sizeof host, &slow, &steps, err);
    /* cut to fit, as a long host name would be */
    if (rc == 1 && snprintf(text, sizeof text, "%s (slowest on %lld of %lld steps)", host,
                            (long long)slow, (long long)steps) >= 0)
        xpv_table_set_property(t, "slowest_host", text);
    return rc < 0 ? -1 : 0;
}

xpv_table *xpv_tool_pod_viewer(sqlite3 *db, const xpv_tool_scope *s, xpv_err *err)
{
    static const int8_t PS_COL[XPV_STORE_STEP_HOST_NFIELDS] = {C_STEP_TIME, C_COMPUTE, C_COLLECTIVE,
                                                               C_MEMCPY,    C_IDLE,    C_BEHIND};
    xpv_store_cursor cur;
    if (xpv_store_steps_open_hosts(&cur, db, s->ids, s->n, err) != 0) return NULL;
    xpv_table *t = xpv_table_new(COLS, NCOLS);
    xpv_store_step_host h;
    int rc;
    while ((rc = xpv_store_steps_hosts_next(&cur, &h, err)) == 1) {
        size_t r = xpv_table_add_row(t);
        xpv_table_set_int(t, r, C_STEP, h.step);
        if (h.host.s) xpv_table_set_text(t, r, C_HOST, h.host.s, strlen(h.host.s));
        for (int f = 0; f < XPV_STORE_STEP_HOST_NFIELDS; f++)
            if ((h.known >> f) & 1u) xpv_table_set_ps_us(t, r, (size_t)PS_COL[f], (double)h.ps[f]);
        xpv_table_set_text(t, r, C_SLOWEST, h.slowest ? "true" : "false", h.slowest ? 4 : 5);
    }
    xpv_store_cursor_close(&cur);
    if (rc != 0 || slowest_host(db, s, t, err) != 0) {
        xpv_table_free(t);
        return NULL;
    }
    return t;
}
