/*
 * tensorboard.c — answers for the TensorBoard profile-plugin routes
 * (FORMATS.md section 7): run names, the tools and hosts of a run, and the
 * profiles a (run, host or hosts) names; the tools themselves are in
 * tools.c. Runs and hosts are the profiles' own
 * (`.../plugins/profile/<run>/<host>.<ext>`); a run's trace JSON twin of
 * an xplane is not a separate host.
 */
#include "../api.h"
#include "../api_util.h"
#include "tools.h"

#include <stdlib.h>

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
    return string_list(db, XPV_API_RUNS_NEWEST_FIRST, NULL, NULL, out);
}

int xpv_api_tb_hosts(sqlite3 *db, const char *run, const char *tag, xpv_buf *out)
{
    const xpv_tool *t = tag ? xpv_tool_named(tag) : NULL;
    int64_t *ids = NULL;
    size_t n = 0;
    /* hosts that cannot be counted: listed alone, without ALL_HOSTS */
    int all = t && t->merges_hosts && xpv_api_tb_scope(db, run, NULL, &ids, &n, NULL) == 1 && n > 1;
    free(ids);
    if (all && t->merges_hosts == XPV_TOOL_RUN_HOSTS) { /* a host alone has no data */
        xpv_buf_puts(out, "[{\"hostname\":\"" XPV_TB_ALL_HOSTS "\"}]");
        return 200;
    }
    int status = string_list(db,
                             "SELECT DISTINCT host FROM profiles WHERE run=?1 AND"
                             " companion_of IS NULL ORDER BY host",
                             run, "hostname", out);
    if (status == 200 && all) { /* as XProf lists it: first */
        const char *head = "[{\"hostname\":\"" XPV_TB_ALL_HOSTS "\"}";
        xpv_buf rest = {0};
        xpv_buf_append(&rest, out->data + 1, out->len - 1);
        xpv_buf_reset(out);
        xpv_buf_puts(out, head);
        if (rest.len > 1) xpv_buf_putc(out, ',');
        xpv_buf_append(out, rest.data, rest.len);
        xpv_buf_free(&rest);
    }
    return status;
}

int xpv_api_tb_profile(sqlite3 *db, const char *run, const char *host, int64_t *id, xpv_err *err)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db,
                           "SELECT id FROM profiles WHERE run=?1 AND (?2 IS NULL OR host=?2)"
                           " ORDER BY companion_of IS NOT NULL, " XPV_API_BEST_INDEXED
                           ", mtime_ns DESC"
                           " LIMIT 1",
                           -1, &st, NULL) != SQLITE_OK)
        return xpv_err_set(err, "index: %s", sqlite3_errmsg(db));
    sqlite3_bind_text(st, 1, run, -1, SQLITE_STATIC);
    if (host) sqlite3_bind_text(st, 2, host, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st), found = rc == SQLITE_ROW;
    if (found)
        *id = sqlite3_column_int64(st, 0);
    else if (rc != SQLITE_DONE)
        found = xpv_err_set(err, "index: %s", sqlite3_errmsg(db));
    sqlite3_finalize(st);
    return found;
}

int xpv_api_tb_tools(sqlite3 *db, const char *run, xpv_buf *out)
{
    int64_t *ids = NULL;
    size_t n = 0;
    xpv_err err = {{0}};
    int found = xpv_api_tb_scope(db, run, NULL, &ids, &n, &err);
    int status = found < 0 ? xpv_api_error(out, 500, "%s", err.msg) : 200;
    if (found == 0) xpv_buf_puts(out, "[]");
    if (found > 0) status = xpv_api_tool_list(db, &(xpv_tool_scope){.ids = ids, .n = n}, out);
    free(ids);
    return status;
}
