/*
 * kernel_device_stats.h — the per-device rows of kernel_stats, packed: one
 * blob per (profile, kind, device >= 0) in `kernel_device_stats` (schema
 * in index_db.c), read back as rows by the table-valued function
 * kernel_device_rows(blob), whose columns are kernel_stats' own from name
 * on (profile_id, kind and device are the blob's row's).
 *
 * Why: a pod host's per-device rows are four in five of its kernel rows,
 * and SQLite spends ~1.8 us on each row inserted whatever its size; one
 * blob per device costs a few, and the rows are read per device anyway
 * (kernel_stats.c names every query that reads them).
 *
 * Invariant: a (profile, kind) with device rows also has its all-devices
 * rows (device -1) in kernel_stats, so a question of "which kinds" or "any
 * rows" reads kernel_stats alone.
 */
#ifndef XPV_STORE_KERNEL_DEVICE_STATS_H
#define XPV_STORE_KERNEL_DEVICE_STATS_H

#include "kernel_rows.h"

#include <sqlite3.h>

/* Appends to out the blob of rows->v[rows->order[from .. to)], rows of one
 * kind and device in key order (name, seq). */
void xpv_store_kernel_device_stats_encode(const xpv_store_kernel_rows *rows, size_t from, size_t to,
                                          xpv_buf *out);

/* Every kernel row as kernel_stats' columns, the all-devices rows and each
 * device's: a FROM source for checks and tests (the API's queries read one
 * device's rows, kernel_stats.c). */
#define XPV_STORE_KERNEL_ROWS_ALL                                                                  \
    "(SELECT * FROM kernel_stats UNION ALL SELECT b.profile_id, b.kind, b.device, r.*"             \
    " FROM kernel_device_stats b, kernel_device_rows(b.data) r)"

/* The error of a read of a damaged blob, which xpv_store_damage_in knows. */
#define XPV_STORE_KERNEL_DEVICE_DAMAGED "kernel row blob is damaged"

/* Reads every device row of a profile: 0 when all decode, 1 with err
 * naming the damage, -1 with err on an SQLite error. */
int xpv_store_kernel_device_stats_verify(sqlite3 *db, int64_t profile_id, xpv_err *err);

/* Makes kernel_device_rows(blob) known to db; every connection that reads
 * the index does this when it opens (index_db.c). SQLite's result code. */
int xpv_store_kernel_device_stats_register(sqlite3 *db);

#endif
