/*
 * trace_export.h — a profile from the index as Chrome trace JSON, in the
 * shape JAX's own converter writes (M process/thread names and sort
 * indexes, one pid per process, one tid per thread, X events in
 * microseconds with args), with no event cap and no top-level `metadata`
 * key, so Perfetto UI opens it. Streamed in chunks: memory stays flat.
 */
#ifndef XPV_TRACE_EXPORT_H
#define XPV_TRACE_EXPORT_H

#include "../common/xpv_common.h"
#include <sqlite3.h>

/* Receives the JSON text in pieces; return non-zero to stop. */
typedef int (*xpv_export_write)(void *ctx, const char *data, size_t len);

/* Writes the whole trace of profile `id`. Returns 0, or -1 with err. */
int xpv_export_trace(sqlite3 *db, int64_t id, xpv_export_write write, void *ctx, xpv_err *err);

#endif
