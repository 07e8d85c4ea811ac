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
