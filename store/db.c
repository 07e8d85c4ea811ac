/*
 * db.c — what every store module does with SQLite the same way: an error
 * turned into a message with the system's reason, statements run for
 * their effect (see db.h).
 */
#include "db.h"

#include <string.h>

int xpv_db_error(xpv_err *err, sqlite3 *db)
{
    int code = sqlite3_errcode(db) & 0xff, sys = sqlite3_system_errno(db);
    const char *msg = sqlite3_errmsg(db);
    if (code == SQLITE_CANTOPEN && sys)
        return xpv_err_set(err, "sqlite: %s (%s)", msg, strerror(sys));
    if (code != SQLITE_IOERR && code != SQLITE_FULL) return xpv_err_set(err, "sqlite: %s", msg);
    /* The system's reason is not always kept by the time the error returns. */
    if (sys) return xpv_err_set(err, "sqlite: %s (%s: is the disk full?)", msg, strerror(sys));
    return xpv_err_set(err, "sqlite: %s (is the disk full, or a file-size limit reached?)", msg);
}

int xpv_db_exec(sqlite3 *db, const char *sql, xpv_err *err)
{
    char *msg = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK) {
        xpv_db_error(err, db);
        sqlite3_free(msg);
        return -1;
    }
    return 0;
}

int xpv_db_vtab_damaged(sqlite3_vtab *t, const char *damage)
{
    sqlite3_free(t->zErrMsg);
    t->zErrMsg = sqlite3_mprintf("%s", damage);
    return SQLITE_ERROR;
}

int xpv_db_verify_packed(sqlite3 *db, const char *sql, int64_t profile_id, const char *damage,
                         xpv_err *err)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        return xpv_err_set(err, "index: %s", sqlite3_errmsg(db));
    sqlite3_bind_int64(st, 1, profile_id);
    int rc = sqlite3_step(st) == SQLITE_ROW ? 0 : 1;
    const char *msg = sqlite3_errmsg(db);
    if (rc) xpv_err_set(err, "%s", msg);
    if (rc && !strstr(msg, damage)) rc = -1; /* SQLite's, not damage */
    sqlite3_finalize(st);
    return rc;
}
