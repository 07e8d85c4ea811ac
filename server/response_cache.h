/*
 * response_cache.h — recent API answers kept per serving thread, so a
 * repeated query (a dashboard polling, a table re-sorted back, a load test)
 * is answered without re-running SQL.
 *
 * Invariant: an answer is reused only while the index is unchanged: each
 * lookup reads SQLite's `PRAGMA data_version` on the thread's own
 * connection, which moves whenever another connection (the indexer)
 * commits; a change empties the thread's cache. An answer is kept only
 * when the version is the same after it was computed as at the lookup
 * before it, so it cannot be of an older state than its version says.
 * Keys are the path plus the query parameters in the order given.
 */
#ifndef XPV_RESPONSE_CACHE_H
#define XPV_RESPONSE_CACHE_H

#include "http.h"
#include "server_state.h"

/* Fills r from the cache and returns 1, or returns 0 (r untouched). */
int xpv_response_cache_get(xpv_server *s, struct MHD_Connection *c, const char *path, xpv_reply *r);
/* Remembers a successful, non-streamed answer computed after
 * xpv_response_cache_get missed on this thread, unless the index changed
 * meanwhile. */
void xpv_response_cache_put(xpv_server *s, struct MHD_Connection *c, const char *path,
                            const xpv_reply *r);

#endif
