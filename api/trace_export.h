/*
 * trace_export.h — a profile from the index as Chrome trace JSON, in the
 * shape JAX's own converter writes (M process/thread names and sort
 * indexes, one pid per process, one tid per thread, X events in
 * microseconds with args), with no event cap and no top-level `metadata`
 * key, so Perfetto UI opens it. Streamed in chunks: memory stays flat.
 *
 * Times: ts and dur are integer ns written as µs with up to 3 decimals
 * (exact). pid/tid are the ones the reader stored for the track. Args that
 * readers keep for a non-X event's identity — "id", "id2", "bind_id",
 * "scope", "bp" (async and flow phases) and "s" (instant scope) — are
 * written as top-level fields, as the Chrome format wants them.
 */
#ifndef XPV_TRACE_EXPORT_H
#define XPV_TRACE_EXPORT_H

#include "../common/xpv_common.h"
#include <sqlite3.h>

/* Receives the JSON text in pieces; return non-zero to stop. */
typedef int (*xpv_export_write)(void *ctx, const char *data, size_t len);

/* Writes the whole trace of profile `id`. Returns 0, or -1 with err. */
int xpv_export_trace(sqlite3 *db, int64_t id, xpv_export_write write, void *ctx, xpv_err *err);

/* The same export, pulled piece by piece (for an HTTP response callback).
 * db must stay open, and be used by no other thread, until the cursor is
 * freed. */
typedef struct xpv_trace_cursor xpv_trace_cursor;
xpv_trace_cursor *xpv_trace_cursor_open(sqlite3 *db, int64_t id, xpv_err *err);
/* Restricts the export to the events that overlap [a_ns, b_ns] of the
 * events' clock (a slice crossing an edge is kept whole; the metadata is
 * kept), before the first xpv_trace_cursor_next. */
void xpv_trace_cursor_window(xpv_trace_cursor *c, int64_t a_ns, int64_t b_ns);
/* Appends the next piece (a few hundred KB at most, one event block's worth
 * beyond that) to out. Returns 1 while more follows, 0 once the JSON is
 * complete (out holds the last piece), -1 with err. */
int xpv_trace_cursor_next(xpv_trace_cursor *c, xpv_buf *out, xpv_err *err);
/* Events (not counting M metadata) written so far. */
int64_t xpv_trace_cursor_events(const xpv_trace_cursor *c);
void xpv_trace_cursor_free(xpv_trace_cursor *c);

#endif
