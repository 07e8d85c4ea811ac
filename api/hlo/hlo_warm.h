/*
 * hlo_warm.h — filling the HLO tools' per-profile cache (hlo_cache.h) ahead
 * of the first request, so that op_profile, hlo_stats and roofline_model
 * answer a freshly indexed run, all its hosts merged, without scanning its
 * event store while the user waits.
 *
 * The caller owns the cache and the thread (the server's indexing thread,
 * on its own connection); the scans are those a request would make, and a
 * request that comes first computes the same answer itself. Warming stops
 * at half the cache's budget: past it, one more entry could empty the cache
 * and lose what was just warmed.
 */
#ifndef XPV_HLO_WARM_H
#define XPV_HLO_WARM_H

#include "hlo_cache.h"
#include "../../common/xpv_common.h"

#include <sqlite3.h>

/* Warms each profile of ids (see xpv_hlo_ops_warm) until *stop or the
 * budget. Returns how many profiles are cached, or -1 with err. */
int xpv_hlo_warm_profiles(sqlite3 *db, xpv_hlo_cache *cache, const int64_t *ids, size_t n,
                          volatile int *stop, xpv_err *err);

/* Warms the profiles of the newest run (the one the TensorBoard shell
 * opens on), for a server started on an index built before it. Returns how
 * many profiles are cached, or -1 with err. */
int xpv_hlo_warm_latest_run(sqlite3 *db, xpv_hlo_cache *cache, volatile int *stop, xpv_err *err);

#endif
