/*
 * nsys_db.h — reading an `nsys export --type sqlite` file whatever its
 * nsys version: opening it without ever writing to it, finding which tables
 * and columns exist, building SELECTs from what exists, and resolving
 * StringIds into sink strings.
 *
 * Invariants: the export is opened read-only (immutable where SQLite allows),
 * so indexing never changes a user's file; a missing table or column is
 * read as empty / NULL, never as an error; every sink string id handed out
 * by the string cache was interned in the same sink.
 */
#ifndef XPV_NSYS_DB_H
#define XPV_NSYS_DB_H

#include "../ingest.h"

#include <sqlite3.h>

/* Opens path read-only: first as `file:PATH?immutable=1`, then plainly
 * read-only when that fails. Returns the handle, or NULL with err. */
sqlite3 *xpv_nsys_db_open(const char *path, xpv_err *err);

/* 1 when the database has table `name` (exact, case-sensitive), 0 otherwise. */
int xpv_nsys_db_has_table(sqlite3 *db, const char *name);

/* The column names of one table, from the catalog; n == 0 when the table
 * does not exist. */
typedef struct {
    char **names;
    size_t n;
} xpv_nsys_cols;

int xpv_nsys_cols_load(sqlite3 *db, const char *table, xpv_nsys_cols *out, xpv_err *err);
int xpv_nsys_cols_has(const xpv_nsys_cols *c, const char *name);
void xpv_nsys_cols_free(xpv_nsys_cols *c);

/* Prepares `SELECT c1, c2, ... FROM table [tail]`, where every wanted
 * column that the table lacks is selected as NULL, so result positions
 * follow `wanted` whatever the export version. *st is NULL (and 0 returned)
 * when the table does not exist or lacks a column named in `required`
 * (NULL-terminated, may be NULL). */
int xpv_nsys_db_select(sqlite3 *db, const char *table, const char *const *wanted, size_t nwanted,
                       const char *const *required, const char *tail, sqlite3_stmt **st,
                       xpv_err *err);

/* Maps nsys StringIds ids to sink string ids, interning each string once. */
typedef struct {
    sqlite3_stmt *lookup; /* NULL when the export has no StringIds table */
    uint32_t *ids;        /* nsys id -> sink id + 1; 0 = not looked up yet */
    size_t cap;
    xpv_sink *sink;
} xpv_nsys_strings;

int xpv_nsys_strings_init(xpv_nsys_strings *s, sqlite3 *db, xpv_sink *sink, xpv_err *err);
/* Sink id of StringIds row `id`; 0 when it is missing or empty. */
uint32_t xpv_nsys_strings_get(xpv_nsys_strings *s, int64_t id);
/* Sink id of a result column that holds either a StringIds id (INTEGER)
 * or the text itself (TEXT), as different nsys versions do; 0 for NULL. */
uint32_t xpv_nsys_strings_column(xpv_nsys_strings *s, sqlite3_stmt *st, int col);
void xpv_nsys_strings_free(xpv_nsys_strings *s);

#endif
