/*
 * tensorboard.c — answers for the TensorBoard profile-plugin routes
 * (FORMATS.md section 7): run names, the tools and hosts of a run, and the
 * kernel_stats tool as a Google Charts DataTable. Runs and hosts are the
 * profiles' own (`.../plugins/profile/<run>/<host>.<ext>`); a run's trace
 * JSON twin of an xplane is not a separate host.
 */
#include "api.h"
#include "api_util.h"

#include <string.h>

static int string_list(sqlite3 *db, const char *sql, const char *bind, const char *wrap_key,
                       xpv_buf *out)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        return xpv_api_error(out, 500, "index: %s", sqlite3_errmsg(db));
    if (bind) sqlite3_bind_text(st, 1, bind, -1, SQLITE_STATIC);
    xpv_buf_putc(out, '[');
    for (int n = 0; sqlite3_step(st) == SQLITE_ROW; n++) {
        if (n) xpv_buf_putc(out, ',');
        if (wrap_key) xpv_buf_printf(out, "{\"%s\":", wrap_key);
        xpv_api_put_text_col(out, st, 0);
        if (wrap_key) xpv_buf_putc(out, '}');
    }
    xpv_buf_putc(out, ']');
    sqlite3_finalize(st);
    return 200;
}

int xpv_api_tb_runs(sqlite3 *db, xpv_buf *out)
{
    return string_list(db,
                       "SELECT run FROM profiles WHERE companion_of IS NULL AND run IS NOT NULL"
                       " GROUP BY run ORDER BY max(mtime_ns) DESC, run DESC",
                       NULL, NULL, out);
}

int xpv_api_tb_hosts(sqlite3 *db, const char *run, xpv_buf *out)
{
    return string_list(db,
                       "SELECT DISTINCT host FROM profiles WHERE run=?1 AND companion_of IS NULL"
                       " ORDER BY host",
                       run, "hostname", out);
}

int xpv_api_tb_profile(sqlite3 *db, const char *run, const char *host, int64_t *id)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db,
                           "SELECT id FROM profiles WHERE run=?1 AND (?2 IS NULL OR host=?2)"
                           " ORDER BY companion_of IS NOT NULL, status!='ok', mtime_ns DESC"
                           " LIMIT 1",
                           -1, &st, NULL) != SQLITE_OK)
        return 500;
    sqlite3_bind_text(st, 1, run, -1, SQLITE_STATIC);
    if (host) sqlite3_bind_text(st, 2, host, -1, SQLITE_STATIC);
    int status = 404;
    if (sqlite3_step(st) == SQLITE_ROW) *id = sqlite3_column_int64(st, 0), status = 200;
    sqlite3_finalize(st);
    return status;
}

int xpv_api_tb_tools(sqlite3 *db, const char *run, xpv_buf *out)
{
    sqlite3_stmt *st;
    int kernels = 0;
    if (sqlite3_prepare_v2(db,
                           "SELECT 1 FROM kernel_stats JOIN profiles ON profiles.id=profile_id"
                           " WHERE run=?1 AND kind='kernel' LIMIT 1",
                           -1, &st, NULL) == SQLITE_OK) {
        sqlite3_bind_text(st, 1, run, -1, SQLITE_STATIC);
        kernels = sqlite3_step(st) == SQLITE_ROW;
        sqlite3_finalize(st);
    }
    xpv_buf_puts(out, kernels ? "[\"trace_viewer\",\"kernel_stats\"]" : "[\"trace_viewer\"]");
    return 200;
}

/* ---- kernel_stats as a DataTable ---- */

static const struct {
    const char *id, *label, *type;
} KERNEL_COLS[] = {
    {"rank", "Rank", "number"},
    {"kernel_name", "Kernel Name", "string"},
    {"registers_per_thread", "Registers per thread", "number"},
    {"shmem_bytes", "Shared Mem bytes", "number"},
    {"block_dim", "Block dim", "string"},
    {"grid_dim", "Grid dim", "string"},
    {"occupancy_pct", "Occupancy %", "number"},
    {"op_name", "Op Name", "string"},
    {"occurrences", "Occurrences", "number"},
    {"total_duration_us", "Total Duration (us)", "number"},
    {"avg_duration_us", "Avg Duration (us)", "number"},
    {"min_duration_us", "Min Duration (us)", "number"},
    {"max_duration_us", "Max Duration (us)", "number"},
};

typedef void (*put_col)(xpv_buf *, sqlite3_stmt *, int);

/* One DataTable row: the rank, then the SELECT's columns in KERNEL_COLS order. */
static void put_kernel_row(xpv_buf *b, sqlite3_stmt *st, int rank)
{
    static const put_col writers[] = {
        xpv_api_put_text_col, xpv_api_put_int_col,  xpv_api_put_int_col,  xpv_api_put_text_col,
        xpv_api_put_text_col, xpv_api_put_real_col, xpv_api_put_text_col, xpv_api_put_int_col,
        xpv_api_put_ps_col,   xpv_api_put_ps_col,   xpv_api_put_ps_col,   xpv_api_put_ps_col,
    };
    xpv_buf_printf(b, "{\"c\":[{\"v\":%d}", rank);
    for (int i = 0; i < (int)(sizeof writers / sizeof writers[0]); i++) {
        xpv_buf_puts(b, ",{\"v\":");
        writers[i](b, st, i);
        xpv_buf_putc(b, '}');
    }
    xpv_buf_puts(b, "]}");
}

int xpv_api_tb_kernel_table(sqlite3 *db, int64_t id, xpv_buf *out)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db,
                           "SELECT name, registers_per_thread, shared_memory_bytes, block,"
                           " grid, occupancy_pct, op, count, total_ps,"
                           " CAST(total_ps AS REAL) / NULLIF(count, 0), min_ps, max_ps"
                           " FROM kernel_stats WHERE profile_id=?1 AND kind='kernel' AND"
                           " device=-1 ORDER BY total_ps DESC, name LIMIT 1000",
                           -1, &st, NULL) != SQLITE_OK)
        return xpv_api_error(out, 500, "index: %s", sqlite3_errmsg(db));
    sqlite3_bind_int64(st, 1, id);
    xpv_buf_puts(out, "{\"cols\":[");
    for (size_t i = 0; i < sizeof KERNEL_COLS / sizeof KERNEL_COLS[0]; i++)
        xpv_buf_printf(out, "%s{\"id\":\"%s\",\"label\":\"%s\",\"type\":\"%s\"}", i ? "," : "",
                       KERNEL_COLS[i].id, KERNEL_COLS[i].label, KERNEL_COLS[i].type);
    xpv_buf_puts(out, "],\"rows\":[");
    int rank = 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
        if (rank) xpv_buf_putc(out, ',');
        put_kernel_row(out, st, ++rank);
    }
    sqlite3_finalize(st);
    xpv_buf_puts(out, "],\"p\":{}}");
    return 200;
}
