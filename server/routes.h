/*
 * routes.h — the REST API under /api/: parameters checked here (a bad one
 * is a 400 with a JSON error), answers produced by api/.
 *
 *   /api/health
 *   /api/stream                        Server-Sent Events (live_events.h)
 *   /api/profiles                      /api/profiles/latest
 *   /api/profiles/{id}                 {id} is 16 hex digits, or "latest"
 *   /api/profiles/{id}/kernels?kind=&device=&sort=&order=&limit=&format=json|csv
 *   /api/profiles/{id}/steps?device=
 *   /api/profiles/{id}/tracks
 *   /api/profiles/{id}/events?start_us=&end_us=&tracks=1,2&resolution=
 *   /api/profiles/{id}/event?ref=<block>:<index>
 *   /api/profiles/{id}/search?q=&limit=&offset=
 *   /api/profiles/{id}/counters?start_us=&end_us=&resolution=
 *   /api/profiles/{id}/aggregate?start_us=&end_us=&tracks=1,2
 *   /api/profiles/{id}/modules         the XLA/HLO modules the profile ran
 *   /api/profiles/{id}/findings        what is slow and why, with evidence
 *   /api/profiles/{id}/tools           the XProf tools with data for the profile
 *   /api/profiles/{id}/tools/{tag}?format=json|csv&hosts=one|all
 *   /api/profiles/{id}/trace?start_us=&end_us=   streamed Chrome trace JSON, as a download
 *   /api/compare?a=ID&b=ID             profile b against profile a
 */
#ifndef XPV_ROUTES_H
#define XPV_ROUTES_H

#include "http.h"
#include "server_state.h"

void xpv_routes_api(xpv_server *s, struct MHD_Connection *c, const char *path, xpv_reply *r);

/* Resolves "latest" or a hex id to a profile id; 0 or -1 with r filled. */
int xpv_routes_profile_id(xpv_server *s, const char *text, size_t len, int64_t *id, xpv_reply *r);

/* After an answer about profiles ids[0..n): a 500 caused by a damaged event
 * block becomes a 503 naming the profile, and the indexer thread is asked
 * to check them (and index a damaged one again). */
void xpv_routes_damaged(xpv_server *s, const int64_t *ids, size_t n, xpv_reply *r);

#endif
