/*
 * compile_marks.c — the reads and writes of the `compile_marks` table (see
 * compile_marks.h). Rows are read back in the order that makes the arrays
 * sorted, so a reader can binary-search them.
 */
#include "compile_marks.h"

#include <stdlib.h>
#include <string.h>

static int put_row(xpv_store_cursor *c, sqlite3_stmt *st, int64_t start, int64_t end, uint32_t name,
                   int window, xpv_err *err)
{
    sqlite3_reset(st);
    if (window) {
        sqlite3_bind_int64(st, 2, start);
        sqlite3_bind_int64(st, 3, end);
        sqlite3_bind_null(st, 4);
    } else {
        sqlite3_bind_null(st, 2);
        sqlite3_bind_null(st, 3);
        sqlite3_bind_int64(st, 4, name);
    }
    return xpv_store_cursor_step(c, err) < 0 ? -1 : 0;
}

int xpv_store_compile_marks_put(sqlite3 *db, int64_t id, const int64_t *start, const int64_t *end,
                                size_t nwindows, const uint32_t *names, size_t nnames, xpv_err *err)
{
    if (!nwindows && !nnames) return 0;
    xpv_store_cursor c;
    if (xpv_store_cursor_open_id(&c, db,
                                 "INSERT INTO compile_marks(profile_id, start_ns, end_ns, name)"
                                 " VALUES(?1, ?2, ?3, ?4)",
                                 id, err) != 0)
        return -1;
    int rc = 0;
    for (size_t i = 0; i < nwindows && rc == 0; i++)
        rc = put_row(&c, c.st, start[i], end[i], 0, 1, err);
    for (size_t i = 0; i < nnames && rc == 0; i++)
        rc = put_row(&c, c.st, 0, 0, names[i], 0, err);
    xpv_store_cursor_close(&c);
    return rc;
}

void xpv_store_compile_marks_free(xpv_store_compile_marks *m)
{
    free(m->start);
    free(m->end);
    free(m->names);
    memset(m, 0, sizeof *m);
}

static void add_window(xpv_store_compile_marks *m, size_t *cap, int64_t start, int64_t end)
{
    if (m->nwindows == *cap) {
        *cap = *cap ? *cap * 2 : 8;
        m->start = xpv_xrealloc(m->start, *cap * sizeof *m->start);
        m->end = xpv_xrealloc(m->end, *cap * sizeof *m->end);
    }
    m->start[m->nwindows] = start, m->end[m->nwindows++] = end;
}

static void add_name(xpv_store_compile_marks *m, size_t *cap, uint32_t name)
{
    if (m->nnames == *cap) {
        *cap = *cap ? *cap * 2 : 8;
        m->names = xpv_xrealloc(m->names, *cap * sizeof *m->names);
    }
    m->names[m->nnames++] = name;
}

int xpv_store_compile_marks_get(sqlite3 *db, int64_t id, xpv_store_compile_marks *out, xpv_err *err)
{
    memset(out, 0, sizeof *out);
    xpv_store_cursor c;
    if (xpv_store_cursor_open_id(&c, db,
                                 "SELECT start_ns, end_ns, name FROM compile_marks"
                                 " WHERE profile_id=?1 ORDER BY name IS NOT NULL, start_ns, name",
                                 id, err) != 0)
        return -1;
    size_t capw = 0, capn = 0;
    int rc;
    while ((rc = xpv_store_cursor_step(&c, err)) == 1) {
        if (sqlite3_column_type(c.st, 2) == SQLITE_NULL)
            add_window(out, &capw, sqlite3_column_int64(c.st, 0), sqlite3_column_int64(c.st, 1));
        else
            add_name(out, &capn, (uint32_t)sqlite3_column_int64(c.st, 2));
    }
    xpv_store_cursor_close(&c);
    if (rc < 0) xpv_store_compile_marks_free(out);
    return rc < 0 ? -1 : 0;
}
