/*
 * hlo_warm.c — see hlo_warm.h. The newest run is the first of
 * /data/plugin/profile/runs (both take XPV_API_RUNS_NEWEST_FIRST); its
 * profiles are warmed host by host in name order.
 */
#include "hlo_warm.h"
#include "../api_util.h"
#include "hlo_ops.h"

#include <stdlib.h>

int xpv_hlo_warm_profiles(sqlite3 *db, xpv_hlo_cache *cache, const int64_t *ids, size_t n,
                          volatile int *stop, xpv_err *err)
{
    int warmed = 0;
    for (size_t i = 0; i < n && !xpv_stop_requested(stop); i++) {
        if (xpv_hlo_cache_bytes(cache) >= xpv_hlo_cache_budget(cache) / 2) break;
        int rc = xpv_hlo_ops_warm(db, cache, ids[i], err);
        if (rc < 0) return -1;
        warmed += rc;
    }
    return warmed;
}

int xpv_hlo_warm_latest_run(sqlite3 *db, xpv_hlo_cache *cache, volatile int *stop, xpv_err *err)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db,
                           "SELECT id FROM profiles WHERE companion_of IS NULL AND status='ok'"
                           " AND run=(" XPV_API_RUNS_NEWEST_FIRST " LIMIT 1) ORDER BY host, id",
                           -1, &st, NULL) != SQLITE_OK)
        return xpv_err_set(err, "index: %s", sqlite3_errmsg(db));
    int64_t *ids = NULL;
    size_t n = 0, cap = 0;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (n == cap) ids = xpv_xrealloc(ids, (cap = cap ? cap * 2 : 8) * sizeof *ids);
        ids[n++] = sqlite3_column_int64(st, 0);
    }
    int warmed = rc == SQLITE_DONE ? xpv_hlo_warm_profiles(db, cache, ids, n, stop, err)
                                   : xpv_err_set(err, "index: %s", sqlite3_errmsg(db));
    sqlite3_finalize(st);
    free(ids);
    return warmed;
}
