/*
 * tool_kernel_stats.c — XProf's kernel_stats tool: the profile's GPU
 * kernels (kernel_stats rows of kind 'kernel', all devices), the 1,000
 * with the most total time, with XProf's column ids.
 */
#include "tools.h"

static const xpv_table_col COLS[] = {
    {"rank", "Rank", XPV_COL_NUMBER},
    {"kernel_name", "Kernel Name", XPV_COL_STRING},
    {"registers_per_thread", "Registers per thread", XPV_COL_NUMBER},
    {"shmem_bytes", "Shared Mem bytes", XPV_COL_NUMBER},
    {"block_dim", "Block dim", XPV_COL_STRING},
    {"grid_dim", "Grid dim", XPV_COL_STRING},
    {"occupancy_pct", "Occupancy %", XPV_COL_NUMBER},
    {"op_name", "Op Name", XPV_COL_STRING},
    {"occurrences", "Occurrences", XPV_COL_NUMBER},
    {"total_duration_us", "Total Duration (us)", XPV_COL_NUMBER},
    {"avg_duration_us", "Avg Duration (us)", XPV_COL_NUMBER},
    {"min_duration_us", "Min Duration (us)", XPV_COL_NUMBER},
    {"max_duration_us", "Max Duration (us)", XPV_COL_NUMBER},
};

static const char *const SQL =
    "SELECT name, registers_per_thread, shared_memory_bytes, block, grid, occupancy_pct, (SELECT"
    " value FROM strings WHERE profile_id=kernel_stats.profile_id AND id=op_id),"
    " count, total_ps, CAST(total_ps AS REAL) / NULLIF(count, 0), min_ps, max_ps"
    " FROM kernel_stats WHERE profile_id IN (SELECT value FROM json_each(?1)) AND"
    " kind='kernel' AND device=-1 ORDER BY total_ps DESC, name LIMIT 1000";

int xpv_tool_kernel_stats_has_data(sqlite3 *db, const xpv_tool_scope *s, xpv_err *err)
{
    return xpv_tool_any_row(db,
                            "SELECT 1 FROM kernel_stats WHERE profile_id IN"
                            " (SELECT value FROM json_each(?1)) AND kind='kernel' LIMIT 1",
                            s, err);
}

/* Column i of the row from SELECT column i - 1, by the column's kind. */
static void set_cell(xpv_table *t, size_t row, size_t i, sqlite3_stmt *st)
{
    int c = (int)i - 1;
    if (sqlite3_column_type(st, c) == SQLITE_NULL) return;
    if (i >= 9)
        xpv_table_set_ps_us(t, row, i, sqlite3_column_double(st, c));
    else if (COLS[i].type == XPV_COL_STRING)
        xpv_table_set_text(t, row, i, (const char *)sqlite3_column_text(st, c),
                           (size_t)sqlite3_column_bytes(st, c));
    else if (sqlite3_column_type(st, c) == SQLITE_FLOAT)
        xpv_table_set_double(t, row, i, sqlite3_column_double(st, c));
    else
        xpv_table_set_int(t, row, i, sqlite3_column_int64(st, c));
}

xpv_table *xpv_tool_kernel_stats(sqlite3 *db, const xpv_tool_scope *s, xpv_err *err)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, SQL, -1, &st, NULL) != SQLITE_OK) {
        xpv_err_set(err, "index: %s", sqlite3_errmsg(db));
        return NULL;
    }
    xpv_tool_bind_ids(st, 1, s);
    xpv_table *t = xpv_table_new(COLS, sizeof COLS / sizeof COLS[0]);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        size_t row = xpv_table_add_row(t);
        xpv_table_set_int(t, row, 0, (int64_t)row + 1);
        for (size_t i = 1; i < sizeof COLS / sizeof COLS[0]; i++)
            set_cell(t, row, i, st);
    }
    if (xpv_tool_step_end(db, st, rc, err) == 0) return t;
    xpv_table_free(t);
    return NULL;
}
