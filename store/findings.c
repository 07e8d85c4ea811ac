/*
 * findings.c — the reads and writes of the `findings` table (see
 * findings.h). The hashes are stored as SQLite's signed integers, the
 * same 64 bits.
 */
#include "findings.h"

int xpv_store_findings_get(sqlite3 *db, int64_t id, uint64_t key, uint64_t stamp, xpv_buf *out,
                           xpv_err *err)
{
    xpv_store_cursor c;
    if (xpv_store_cursor_open_id(
            &c, db, "SELECT answer FROM findings WHERE profile_id=?1 AND key=?2 AND stamp=?3", id,
            err) != 0)
        return -1;
    sqlite3_bind_int64(c.st, 2, (int64_t)key);
    sqlite3_bind_int64(c.st, 3, (int64_t)stamp);
    int rc = xpv_store_cursor_step(&c, err);
    if (rc == 1) {
        xpv_store_text t = xpv_store_column_text(c.st, 0);
        if (t.s)
            xpv_buf_append(out, t.s, t.n);
        else
            rc = 0;
    }
    xpv_store_cursor_close(&c);
    return rc;
}

int xpv_store_findings_put(sqlite3 *db, int64_t id, uint64_t key, uint64_t stamp, const char *body,
                           size_t n, int *busy, xpv_err *err)
{
    if (busy) *busy = 0;
    xpv_store_cursor c;
    if (xpv_store_cursor_open_id(&c, db,
                                 "INSERT OR REPLACE INTO findings(profile_id, key, stamp, answer)"
                                 " VALUES(?1, ?2, ?3, ?4)",
                                 id, err) != 0)
        return -1;
    sqlite3_bind_int64(c.st, 2, (int64_t)key);
    sqlite3_bind_int64(c.st, 3, (int64_t)stamp);
    sqlite3_bind_text(c.st, 4, body, (int)n, SQLITE_STATIC);
    int rc = xpv_store_cursor_step(&c, err);
    if (rc < 0 && busy) *busy = (sqlite3_extended_errcode(db) & 0xff) == SQLITE_BUSY;
    xpv_store_cursor_close(&c);
    return rc < 0 ? -1 : 0;
}

int64_t xpv_store_findings_count(sqlite3 *db, xpv_err *err)
{
    xpv_store_cursor c;
    int64_t n = 0;
    if (xpv_store_cursor_open(&c, db, "SELECT count(*) FROM findings", err) != 0) return -1;
    return xpv_store_cursor_first_int(&c, &n, err) < 0 ? -1 : n;
}
