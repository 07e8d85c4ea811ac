/*
 * tb_scope.c — the profiles a TensorBoard run names: one per host (the
 * best indexed, then the newest), every host or those a list names. The
 * tool answers (tools.c) and the TensorBoard routes' answers
 * (tensorboard.c) both scope a run this way, so it sits below both.
 */
#include "../api.h"
#include "../api_util.h"

#include <stdlib.h>
#include <string.h>

/* Whether host (one name) is listed in the comma-separated list. */
static int listed(const char *list, const char *host)
{
    size_t n = strlen(host);
    for (const char *p = list; *p;) {
        const char *comma = strchr(p, ',');
        size_t m = comma ? (size_t)(comma - p) : strlen(p);
        if (m == n && memcmp(p, host, n) == 0) return 1;
        p += m + (comma != NULL);
    }
    return 0;
}

int xpv_api_tb_scope(sqlite3 *db, const char *run, const char *hosts, int64_t **ids, size_t *n,
                     xpv_err *err)
{
    sqlite3_stmt *st;
    *ids = NULL;
    *n = 0;
    if (sqlite3_prepare_v2(db,
                           "SELECT id, host FROM profiles WHERE run=?1 AND companion_of IS NULL"
                           " ORDER BY host, " XPV_API_BEST_INDEXED ", mtime_ns DESC",
                           -1, &st, NULL) != SQLITE_OK)
        return xpv_err_set(err, "index: %s", sqlite3_errmsg(db));
    sqlite3_bind_text(st, 1, run, -1, SQLITE_STATIC);
    int all = !hosts || strcmp(hosts, XPV_TB_ALL_HOSTS) == 0;
    const char *prev = NULL;
    xpv_buf seen = {0}; /* the previous host: one profile per host, the best */
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *host = (const char *)sqlite3_column_text(st, 1);
        if (!host || (prev && strcmp(prev, host) == 0)) continue;
        xpv_buf_reset(&seen);
        xpv_buf_puts(&seen, host);
        xpv_buf_putc(&seen, 0);
        prev = seen.data;
        if (!all && !listed(hosts, host)) continue;
        *ids = xpv_xrealloc(*ids, (*n + 1) * sizeof **ids);
        (*ids)[(*n)++] = sqlite3_column_int64(st, 0);
    }
    if (rc != SQLITE_DONE) /* a host list cut short would pass for the run */
        xpv_err_set(err, "index: %s", sqlite3_errmsg(db));
    sqlite3_finalize(st);
    xpv_buf_free(&seen);
    if (rc != SQLITE_DONE) {
        free(*ids);
        *ids = NULL, *n = 0;
        return -1;
    }
    return *n ? 1 : 0;
}
