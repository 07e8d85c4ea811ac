/*
 * trace_export.c — placeholder until the exporter lands.
 */
#include "trace_export.h"

int xpv_export_trace(sqlite3 *db, int64_t id, xpv_export_write write, void *ctx, xpv_err *err)
{
    (void)db;
    (void)id;
    (void)write;
    (void)ctx;
    return xpv_err_set(err, "trace export is not built yet");
}
