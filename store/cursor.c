/*
 * cursor.c — see cursor.h.
 */
#include "cursor.h"

#include <stdlib.h>
#include <string.h>

int xpv_store_cursor_open(xpv_store_cursor *c, sqlite3 *db, const char *sql, xpv_err *err)
{
    c->db = db;
    if (sqlite3_prepare_v2(db, sql, -1, &c->st, NULL) == SQLITE_OK) return 0;
    c->st = NULL;
    return xpv_err_set(err, "index: %s", sqlite3_errmsg(db));
}

int xpv_store_cursor_open_id(xpv_store_cursor *c, sqlite3 *db, const char *sql, int64_t profile_id,
                             xpv_err *err)
{
    if (xpv_store_cursor_open(c, db, sql, err) != 0) return -1;
    sqlite3_bind_int64(c->st, 1, profile_id);
    return 0;
}

int xpv_store_cursor_open_ids(xpv_store_cursor *c, sqlite3 *db, const char *sql, const int64_t *ids,
                              size_t n, xpv_err *err)
{
    if (xpv_store_cursor_open(c, db, sql, err) != 0) return -1;
    xpv_store_bind_ids(c->st, 1, ids, n);
    return 0;
}

int xpv_store_cursor_step(xpv_store_cursor *c, xpv_err *err)
{
    int rc = sqlite3_step(c->st);
    if (rc == SQLITE_ROW) return 1;
    if (rc == SQLITE_DONE) return 0;
    return xpv_err_set(err, "index: %s", sqlite3_errmsg(c->db));
}

/* Every row's first column into *v as ints of `size` bytes (int or
 * int64_t), then closes c. On an error *v is NULL and *n 0. */
static int first_column(xpv_store_cursor *c, void **v, size_t *n, size_t size, xpv_err *err)
{
    size_t cap = 0;
    int rc;
    char *p = NULL;
    *n = 0;
    while ((rc = xpv_store_cursor_step(c, err)) == 1) {
        p = xpv_grow_to_index(p, &cap, *n, size, 0);
        int64_t x = sqlite3_column_int64(c->st, 0);
        int y = (int)x;
        memcpy(p + (*n)++ * size, size == sizeof y ? (void *)&y : (void *)&x, size);
    }
    xpv_store_cursor_close(c);
    if (rc < 0) { /* no rows cut short pass for the whole column */
        free(p);
        p = NULL;
        *n = 0;
    }
    *v = p;
    return rc;
}

int xpv_store_cursor_ints(xpv_store_cursor *c, int **v, size_t *n, xpv_err *err)
{
    return first_column(c, (void **)v, n, sizeof **v, err);
}

int xpv_store_cursor_ids(xpv_store_cursor *c, int64_t **v, size_t *n, xpv_err *err)
{
    return first_column(c, (void **)v, n, sizeof **v, err);
}

int xpv_store_cursor_first_int(xpv_store_cursor *c, int64_t *v, xpv_err *err)
{
    int rc = xpv_store_cursor_step(c, err);
    if (rc == 1 && sqlite3_column_type(c->st, 0) == SQLITE_NULL) rc = 0;
    if (rc == 1 && v) *v = sqlite3_column_int64(c->st, 0);
    xpv_store_cursor_close(c);
    return rc;
}

void xpv_store_cursor_close(xpv_store_cursor *c)
{
    sqlite3_finalize(c->st);
    c->st = NULL;
}

void xpv_store_bind_ids(sqlite3_stmt *st, int param, const int64_t *ids, size_t n)
{
    xpv_buf b = {0};
    xpv_buf_putc(&b, '[');
    for (size_t i = 0; i < n; i++)
        xpv_buf_printf(&b, "%s%lld", i ? "," : "", (long long)ids[i]);
    xpv_buf_putc(&b, ']');
    sqlite3_bind_text(st, param, b.data, (int)b.len, SQLITE_TRANSIENT);
    xpv_buf_free(&b);
}

xpv_store_text xpv_store_column_text(sqlite3_stmt *st, int col)
{
    const char *s = (const char *)sqlite3_column_text(st, col);
    return (xpv_store_text){s, s ? (size_t)sqlite3_column_bytes(st, col) : 0};
}

unsigned xpv_store_columns(sqlite3_stmt *st, int first, int n, int64_t *ints, double *reals)
{
    unsigned known = 0;
    for (int i = 0; i < n; i++) {
        int set = sqlite3_column_type(st, first + i) != SQLITE_NULL;
        if (ints)
            ints[i] = set ? sqlite3_column_int64(st, first + i) : 0;
        else
            reals[i] = set ? sqlite3_column_double(st, first + i) : 0;
        known |= (unsigned)set << i;
    }
    return known;
}
