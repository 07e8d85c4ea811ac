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

#endif
