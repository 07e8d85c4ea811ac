/*
 * cursor.h — what the table modules (steps.c, kernel_stats.c, ...) share:
 * a prepared statement walked row by row, its errors as xpv_err messages,
 * and a list of profile ids bound as one JSON array parameter.
 *
 * Invariant: a step that is neither a row nor the end is an error, and it
 * sets err ("index: <sqlite's message>"), so a query broken halfway never
 * passes for a short answer.
 */
#ifndef XPV_STORE_CURSOR_H
#define XPV_STORE_CURSOR_H

#include "../common/xpv_common.h"
#include <sqlite3.h>

typedef struct {
    sqlite3 *db;
    sqlite3_stmt *st; /* NULL once closed */
} xpv_store_cursor;

/* Prepares sql on db into c. Returns 0, or -1 with err (c->st NULL). */
int xpv_store_cursor_open(xpv_store_cursor *c, sqlite3 *db, const char *sql, xpv_err *err);
/* The same, binding profile_id as ?1, or ids as ?1 (xpv_store_bind_ids). */
int xpv_store_cursor_open_id(xpv_store_cursor *c, sqlite3 *db, const char *sql, int64_t profile_id,
                             xpv_err *err);
int xpv_store_cursor_open_ids(xpv_store_cursor *c, sqlite3 *db, const char *sql, const int64_t *ids,
                              size_t n, xpv_err *err);
/* 1: a row is ready, 0: no more rows, -1: an error (err set). */
int xpv_store_cursor_step(xpv_store_cursor *c, xpv_err *err);
/* Every row's first column as an int into *v (malloc'ed, NULL when none),
 * then closes c. Returns 0, or -1 with err (then *v is NULL and *n 0). */
int xpv_store_cursor_ints(xpv_store_cursor *c, int **v, size_t *n, xpv_err *err);
/* The same as int64_t (ids). */
int xpv_store_cursor_ids(xpv_store_cursor *c, int64_t **v, size_t *n, xpv_err *err);
/* The first row's first column into *v (unless v is NULL), then closes c:
 * 1 when that row exists and the value is not NULL, 0 when not, -1 with
 * err. For the queries of one value: a max, a count, "is there any". */
int xpv_store_cursor_first_int(xpv_store_cursor *c, int64_t *v, xpv_err *err);
/* Finalizes the statement; a closed cursor may be closed again. */
void xpv_store_cursor_close(xpv_store_cursor *c);

/* Binds ids as a JSON array ("[1,2]") to param, for SQL written with
 * "IN (SELECT value FROM json_each(?N))". */
void xpv_store_bind_ids(sqlite3_stmt *st, int param, const int64_t *ids, size_t n);

/* A text column: s is NULL when the value is NULL (unknown); else it holds
 * n bytes and a NUL, valid until the cursor's next step. */
typedef struct {
    const char *s;
    size_t n;
} xpv_store_text;
xpv_store_text xpv_store_column_text(sqlite3_stmt *st, int col);

/* Columns first .. first + n - 1 into ints, or into reals when ints is
 * NULL (a NULL value: 0); returns their known bits, bit i for column
 * first + i. */
unsigned xpv_store_columns(sqlite3_stmt *st, int first, int n, int64_t *ints, double *reals);

#endif
