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
    {"step_time_us", "Step time (us)", XPV_COL_NUMBER},
    {"compute_us", "Compute (us)", XPV_COL_NUMBER},
    {"collective_us", "Collectives (us)", XPV_COL_NUMBER},
    {"memcpy_us", "Memcpy (us)", XPV_COL_NUMBER},
    {"idle_us", "Idle (us)", XPV_COL_NUMBER},
    {"slowest", "Slowest host of the step", XPV_COL_BOOLEAN},
    {"behind_fastest_us", "Behind the fastest host (us)", XPV_COL_NUMBER},
};

/* Per (step, host): the step's numbers, and the step's fastest and slowest
 * hosts by window functions over the hosts of the same step number. */
static const char *const SQL =
    "SELECT s.step, p.host, s.duration_ps, s.compute_ps, s.collective_ps,"
    " CASE WHEN coalesce(s.memcpy_h2d_ps, s.memcpy_d2h_ps, s.memcpy_d2d_ps, s.memcpy_other_ps)"
    " IS NULL THEN NULL ELSE ifnull(s.memcpy_h2d_ps, 0) + ifnull(s.memcpy_d2h_ps, 0) +"
    " ifnull(s.memcpy_d2d_ps, 0) + ifnull(s.memcpy_other_ps, 0) END, s.idle_ps,"
    " s.duration_ps = max(s.duration_ps) OVER w AND max(s.duration_ps) OVER w >"
    " min(s.duration_ps) OVER w,"
    " s.duration_ps - min(s.duration_ps) OVER w"
    " FROM steps s JOIN profiles p ON p.id = s.profile_id"
    " WHERE s.device = -1 AND s.profile_id IN (SELECT value FROM json_each(?1))"
    " WINDOW w AS (PARTITION BY s.step) ORDER BY s.step, p.host";

int xpv_tool_pod_viewer_has_data(sqlite3 *db, const xpv_tool_scope *s, xpv_err *err)
{
    return xpv_tool_any_row(db,
                            "SELECT 1 WHERE (SELECT count(DISTINCT profile_id) FROM steps"
                            " WHERE device = -1 AND profile_id IN"
                            " (SELECT value FROM json_each(?1))) >= 2",
                            s, err);
}

static void set_ps(xpv_table *t, size_t row, size_t col, sqlite3_stmt *st, int c)
{
    if (sqlite3_column_type(st, c) != SQLITE_NULL)
        xpv_table_set_ps_us(t, row, col, sqlite3_column_double(st, c));
}

/* The host slowest on the most steps, as "host (N of M steps)". */
static int slowest_host(sqlite3 *db, const xpv_tool_scope *s, xpv_table *t, xpv_err *err)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db,
                           "WITH r AS (SELECT s.step, p.host, s.duration_ps = max(s.duration_ps)"
                           " OVER (PARTITION BY s.step) AND max(s.duration_ps) OVER (PARTITION BY"
                           " s.step) > min(s.duration_ps) OVER (PARTITION BY s.step) AS slow"
                           " FROM steps s JOIN profiles p ON"
                           " p.id = s.profile_id WHERE s.device = -1 AND s.profile_id IN"
                           " (SELECT value FROM json_each(?1)))"
                           " SELECT host, sum(slow), count(DISTINCT step) FROM r GROUP BY host"
                           " HAVING sum(slow) > 0 ORDER BY sum(slow) DESC, host LIMIT 1",
                           -1, &st, NULL) != SQLITE_OK)
        return xpv_err_set(err, "index: %s", sqlite3_errmsg(db));
    xpv_tool_bind_ids(st, 1, s);
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        char text[512];
        snprintf(text, sizeof text, "%s (slowest on %lld of %lld steps)",
                 (const char *)sqlite3_column_text(st, 0), (long long)sqlite3_column_int64(st, 1),
                 (long long)sqlite3_column_int64(st, 2));
        xpv_table_set_property(t, "slowest_host", text);
    }
    return xpv_tool_step_end(db, st, rc, err);
}

xpv_table *xpv_tool_pod_viewer(sqlite3 *db, const xpv_tool_scope *s, xpv_err *err)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, SQL, -1, &st, NULL) != SQLITE_OK) {
        xpv_err_set(err, "index: %s", sqlite3_errmsg(db));
        return NULL;
    }
    xpv_tool_bind_ids(st, 1, s);
    xpv_table *t = xpv_table_new(COLS, NCOLS);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        size_t r = xpv_table_add_row(t);
        xpv_table_set_int(t, r, C_STEP, sqlite3_column_int64(st, 0));
        const char *host = (const char *)sqlite3_column_text(st, 1);
        if (host) xpv_table_set_text(t, r, C_HOST, host, strlen(host));
        for (int c = C_STEP_TIME; c <= C_IDLE; c++)
            set_ps(t, r, (size_t)c, st, c);
        xpv_table_set_text(t, r, C_SLOWEST, sqlite3_column_int(st, 7) ? "true" : "false",
                           sqlite3_column_int(st, 7) ? 4 : 5);
        set_ps(t, r, C_BEHIND, st, 8);
    }
    if (xpv_tool_step_end(db, st, rc, err) != 0 || slowest_host(db, s, t, err) != 0) {
        xpv_table_free(t);
        return NULL;
    }
    return t;
}
