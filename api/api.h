/*
 * api.h — queries over the index, answered as JSON (or CSV) text.
 *
 * Every function takes an open index connection and appends its answer to
 * an xpv_buf. It returns an HTTP-style status (200, 404, 400, 500); on
 * anything but 200 the buffer holds `{"error": "..."}`. This layer knows SQL
 * and JSON, never sockets: server/ maps routes to these calls.
 */
#ifndef XPV_API_H
#define XPV_API_H

#include "../common/xpv_common.h"
#include <sqlite3.h>

/* One profile object (see README "REST API") for the profiles row `id`. */
int xpv_api_profile(sqlite3 *db, int64_t id, xpv_buf *out);
/* The newest profile (first in list order), 404 when there is none. */
int xpv_api_profile_latest(sqlite3 *db, xpv_buf *out);
/* `[profile, ...]` newest first. include_companions: also trace-JSON twins
 * of an xplane (hidden by default: the pair is shown once). */
int xpv_api_profile_array(sqlite3 *db, int include_companions, xpv_buf *out);
/* `{"profiles": [...]}` */
int xpv_api_profiles(sqlite3 *db, xpv_buf *out);

/* Appends {"error": msg} and returns status. */
int xpv_api_error(xpv_buf *out, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
