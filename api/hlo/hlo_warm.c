/*
 * hlo_warm.c — see hlo_warm.h. The newest run is the first of
 * /data/plugin/profile/runs (both take XPV_API_RUNS_NEWEST_FIRST); its
 * profiles are warmed host by host in name order.
 */
#include "hlo_warm.h"
#include "../api_util.h"
#include "hlo_ops.h"
#include "../../store/profiles.h"

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
    int64_t *ids;
    size_t n;
    if (xpv_store_profiles_newest_run(db, &ids, &n, err) != 0) return -1;
    int warmed = xpv_hlo_warm_profiles(db, cache, ids, n, stop, err);
    free(ids);
    return warmed;
}
