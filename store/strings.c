/*
 * strings.c — the reads of the `strings` table, and the insert of a
 * profile's rows (see strings.h).
 *
 * A list of values goes to SQL as one JSON array parameter, so one
 * statement serves any list; the rows are matched back to the list here.
 */
#include "strings.h"
#include "db.h"

#include <stdlib.h>
#include <string.h>

/* The rows of a profile's strings, before a further condition. */
#define ROWS "SELECT id, value FROM strings WHERE profile_id=?1"

int xpv_store_strings_lookup_open(xpv_store_strings_lookup *l, sqlite3 *db, int64_t profile_id,
                                  xpv_err *err)
{
    xpv_store_cursor c;
    l->profile_id = profile_id;
    int rc = xpv_store_cursor_open(&c, db,
                                   "SELECT value FROM strings WHERE profile_id=?1 AND id=?2", err);
    l->st = c.st;
    return rc;
}

int xpv_store_strings_lookup_get(xpv_store_strings_lookup *l, uint32_t id, char **value,
                                 size_t *len, xpv_err *err)
{
    xpv_store_cursor c = {sqlite3_db_handle(l->st), l->st};
    *value = NULL, *len = 0;
    sqlite3_bind_int64(l->st, 1, l->profile_id);
    sqlite3_bind_int64(l->st, 2, id);
    int rc = xpv_store_cursor_step(&c, err);
    xpv_store_text t = rc == 1 ? xpv_store_column_text(l->st, 0) : (xpv_store_text){NULL, 0};
    if (t.s) *value = xpv_xstrndup(t.s, t.n), *len = t.n;
    if (rc == 1 && !t.s) rc = 0;
    sqlite3_reset(l->st);
    return rc;
}

void xpv_store_strings_lookup_close(xpv_store_strings_lookup *l)
{
    sqlite3_finalize(l->st);
    l->st = NULL;
}

/* Binds values as a JSON array of texts to param. */
static void bind_values(sqlite3_stmt *st, int param, const char *const *values, size_t n)
{
    xpv_buf b = {0};
    xpv_buf_putc(&b, '[');
    for (size_t i = 0; i < n; i++) {
        if (i) xpv_buf_putc(&b, ',');
        xpv_buf_json_str(&b, values[i], strlen(values[i]));
    }
    xpv_buf_putc(&b, ']');
    sqlite3_bind_text(st, param, b.data, (int)b.len, SQLITE_TRANSIENT);
    xpv_buf_free(&b);
}

int xpv_store_strings_ids(sqlite3 *db, int64_t profile_id, const char *const *values, size_t n,
                          uint32_t *ids, xpv_err *err)
{
    xpv_store_cursor c;
    memset(ids, 0, n * sizeof *ids);
    if (xpv_store_cursor_open_id(&c, db, ROWS " AND value IN (SELECT value FROM json_each(?2))",
                                 profile_id, err) != 0)
        return -1;
    bind_values(c.st, 2, values, n);
    int64_t id;
    xpv_store_text v;
    int rc;
    while ((rc = xpv_store_strings_next(&c, &id, &v, err)) == 1)
        for (size_t i = 0; v.s && id > 0 && id <= UINT32_MAX && i < n; i++)
            if (strcmp(v.s, values[i]) == 0) ids[i] = (uint32_t)id;
    xpv_store_cursor_close(&c);
    return rc;
}

int xpv_store_strings_any(sqlite3 *db, const int64_t *ids, size_t n, const char *const *values,
                          size_t nv, xpv_err *err)
{
    xpv_store_cursor c;
    if (xpv_store_cursor_open_ids(&c, db,
                                  "SELECT 1 FROM strings WHERE profile_id IN (SELECT value FROM"
                                  " json_each(?1)) AND value IN (SELECT value FROM json_each(?2))",
                                  ids, n, err) != 0)
        return -1;
    bind_values(c.st, 2, values, nv);
    return xpv_store_cursor_first_int(&c, NULL, err);
}

int xpv_store_strings_open_all(xpv_store_cursor *c, sqlite3 *db, int64_t profile_id, xpv_err *err)
{
    return xpv_store_cursor_open_id(c, db, ROWS, profile_id, err);
}

int xpv_store_strings_open_work_names(xpv_store_cursor *c, sqlite3 *db, int64_t profile_id,
                                      xpv_err *err)
{
    return xpv_store_cursor_open_id(
        c, db,
        ROWS " AND (value LIKE '%nccl%' OR value LIKE '%rccl%' OR value LIKE '%all%reduce%' OR"
             " value LIKE '%all%gather%' OR value LIKE '%reduce%scatter%' OR value LIKE"
             " '%all%to%all%' OR value LIKE '%collective%' OR value LIKE '%c10d::%' OR value LIKE"
             " '%send%recv%' OR value LIKE '%compile%' OR value LIKE '%dataloader%' OR value LIKE"
             " '%iterator%' OR value LIKE '%feed%' OR value = 'next' OR value LIKE '%memcpy%' OR"
             " value LIKE '%pageable%')",
        profile_id, err);
}

int xpv_store_strings_open_input_names(xpv_store_cursor *c, sqlite3 *db, int64_t profile_id,
                                       xpv_err *err)
{
    const char *sql = ROWS " AND (value LIKE '%dataloader%' OR value LIKE '%iterator%' OR value"
                           " LIKE '%feed%' OR value = 'next')";
    return xpv_store_cursor_open_id(c, db, sql, profile_id, err);
}

int xpv_store_strings_open_containing(xpv_store_cursor *c, sqlite3 *db, int64_t profile_id,
                                      const char *q, xpv_err *err)
{
    if (xpv_store_cursor_open_id(c, db, ROWS " AND id > 0 AND instr(lower(value), lower(?2)) > 0",
                                 profile_id, err) != 0)
        return -1;
    sqlite3_bind_text(c->st, 2, q, -1, SQLITE_TRANSIENT);
    return 0;
}

int xpv_store_strings_next(xpv_store_cursor *c, int64_t *id, xpv_store_text *value, xpv_err *err)
{
    int rc = xpv_store_cursor_step(c, err);
    if (rc != 1) return rc;
    *id = sqlite3_column_int64(c->st, 0);
    *value = xpv_store_column_text(c->st, 1);
    return 1;
}

int xpv_store_strings_max_id(sqlite3 *db, int64_t profile_id, int64_t *id, xpv_err *err)
{
    xpv_store_cursor c;
    *id = 0;
    if (xpv_store_cursor_open_id(&c, db, "SELECT max(id) FROM strings WHERE profile_id=?1",
                                 profile_id, err) != 0)
        return -1;
    return xpv_store_cursor_first_int(&c, id, err);
}

/* ---- writing ---- */

void xpv_store_string_rows_add(xpv_store_string_rows *rows, const char *s, size_t n)
{
    if (rows->n == rows->cap) {
        rows->cap = rows->cap ? 2 * rows->cap : 1024;
        rows->v = xpv_xrealloc(rows->v, rows->cap * sizeof *rows->v);
    }
    rows->v[rows->n++] = (xpv_store_string_ref){rows->text.len, n};
    xpv_buf_append(&rows->text, s, n);
}

void xpv_store_string_rows_free(xpv_store_string_rows *rows)
{
    xpv_buf_free(&rows->text);
    free(rows->v);
    memset(rows, 0, sizeof *rows);
}

int xpv_store_strings_write(sqlite3 *db, int64_t profile_id, const xpv_store_string_rows *rows,
                            xpv_err *err)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, "INSERT INTO strings(profile_id, id, value) VALUES(?1, ?2, ?3)", -1,
                           &st, NULL) != SQLITE_OK)
        return xpv_db_error(err, db);
    sqlite3_bind_int64(st, 1, profile_id);
    int rc = 0;
    for (size_t id = 0; id < rows->n && rc == 0; id++) {
        xpv_store_string_ref r = rows->v[id];
        sqlite3_bind_int64(st, 2, (int64_t)id);
        sqlite3_bind_text(st, 3, r.len ? rows->text.data + r.off : "", (int)r.len, SQLITE_STATIC);
        if (sqlite3_step(st) != SQLITE_DONE) rc = xpv_db_error(err, db);
        sqlite3_reset(st);
    }
    sqlite3_finalize(st);
    return rc;
}
