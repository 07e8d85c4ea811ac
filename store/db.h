/*
 * db.h — the store's SQLite helpers, shared by index_db.c and the table
 * modules: errors as xpv_err messages that keep the system's reason (a
 * full disk, a file-size limit), and statements run for their effect.
 */
#ifndef XPV_STORE_DB_H
#define XPV_STORE_DB_H

#include "../common/xpv_common.h"
#include <sqlite3.h>

/* Sets err from the connection's last error, with the system's reason
 * (disk full, file too large) where SQLite has one. Returns -1. */
int xpv_db_error(xpv_err *err, sqlite3 *db);
/* Runs statements with no result rows; returns 0 or -1 with err. */
int xpv_db_exec(sqlite3 *db, const char *sql, xpv_err *err);

/* Packed rows (kernel_device_stats.c, string_chunks.c): a table-valued
 * function that meets a damaged blob fails its statement with `damage`,
 * which xpv_store_damage_in knows. Not SQLITE_CORRUPT: that would send the
 * server to check the whole file, where SQLite finds nothing wrong. */
int xpv_db_vtab_damaged(sqlite3_vtab *t, const char *damage);
/* Runs sql, a count over one profile's packed rows (?1 the profile):
 * 0 when every blob decodes, 1 with err naming the damage, -1 with err on
 * an SQLite error. */
int xpv_db_verify_packed(sqlite3 *db, const char *sql, int64_t profile_id, const char *damage,
                         xpv_err *err);

#endif
