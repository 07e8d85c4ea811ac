/*
 * nsys_db.c — opening an nsys export read-only, its catalog, version-proof
 * SELECTs and the StringIds cache. See nsys_db.h for the invariants.
 */
#include "nsys_db.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Largest nsys string id kept in the direct-mapped cache; rarer, larger ids
 * are looked up every time (the sink still interns them only once). */
#define STRING_CACHE_MAX (1u << 24)

/* `file:` URI for path, percent-encoding everything but unreserved bytes and
 * '/', so names with '?', '#' or '%' still open the right file. */
static void uri_for_path(xpv_buf *uri, const char *path)
{
    static const char hex[] = "0123456789ABCDEF";
    xpv_buf_puts(uri, "file:");
    for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
        int plain = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
                    (*p >= '0' && *p <= '9') || strchr("/._~-", *p);
        if (plain) {
            xpv_buf_putc(uri, (char)*p);
        } else {
            char esc[3] = {'%', hex[*p >> 4], hex[*p & 15]};
            xpv_buf_append(uri, esc, 3);
        }
    }
    xpv_buf_puts(uri, "?immutable=1");
}

/* sqlite3_open_v2 opens lazily; reading the catalog proves the file is a
 * readable database. */
static int probe(sqlite3 *db)
{
    return sqlite3_exec(db, "SELECT count(*) FROM sqlite_master", NULL, NULL, NULL);
}

static sqlite3 *try_open(const char *name, int flags, char *why, size_t whysz)
{
    sqlite3 *db = NULL;
    int rc = sqlite3_open_v2(name, &db, flags, NULL);
    if (rc == SQLITE_OK) rc = probe(db);
    if (rc == SQLITE_OK) return db;
    snprintf(why, whysz, "%s", db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
    sqlite3_close(db);
    return NULL;
}

sqlite3 *xpv_nsys_db_open(const char *path, xpv_err *err)
{
    char why[256];
    xpv_buf uri = {0};
    uri_for_path(&uri, path);
    /* One thread uses the handle: no per-call mutex (a sizeable share of
     * the time on exports with millions of rows). */
    int flags = SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX;
    sqlite3 *db = try_open(uri.data, flags | SQLITE_OPEN_URI, why, sizeof why);
    xpv_buf_free(&uri);
    if (!db) db = try_open(path, flags, why, sizeof why);
    if (!db) {
        xpv_err_set(err, "%s: cannot open as SQLite (offset 0): %s", path, why);
        return NULL;
    }
    sqlite3_busy_timeout(db, 5000);
    /* Belt and braces: even a statement built by mistake cannot write. */
    sqlite3_exec(db, "PRAGMA query_only=1", NULL, NULL, NULL);
    return db;
}

int xpv_nsys_db_has_table(sqlite3 *db, const char *name)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db,
                           "SELECT 1 FROM sqlite_master WHERE type IN ('table','view') AND name=?1",
                           -1, &st, NULL) != SQLITE_OK)
        return 0;
    sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
    int found = sqlite3_step(st) == SQLITE_ROW;
    sqlite3_finalize(st);
    return found;
}

int xpv_nsys_cols_load(sqlite3 *db, const char *table, xpv_nsys_cols *out, xpv_err *err)
{
    out->names = NULL;
    out->n = 0;
    if (!xpv_nsys_db_has_table(db, table)) return 0;
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, "SELECT name FROM pragma_table_info(?1)", -1, &st, NULL) !=
        SQLITE_OK)
        return xpv_err_set(err, "sqlite catalog of %s: %s", table, sqlite3_errmsg(db));
    sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *name = (const char *)sqlite3_column_text(st, 0);
        out->names = xpv_xrealloc(out->names, (out->n + 1) * sizeof *out->names);
        out->names[out->n++] = xpv_xstrdup(name ? name : "");
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) {
        xpv_nsys_cols_free(out);
        return xpv_err_set(err, "sqlite catalog of %s: %s", table, sqlite3_errmsg(db));
    }
    return 0;
}

int xpv_nsys_cols_has(const xpv_nsys_cols *c, const char *name)
{
    for (size_t i = 0; i < c->n; i++)
        if (strcmp(c->names[i], name) == 0) return 1;
    return 0;
}

void xpv_nsys_cols_free(xpv_nsys_cols *c)
{
    for (size_t i = 0; i < c->n; i++)
        free(c->names[i]);
    free(c->names);
    c->names = NULL;
    c->n = 0;
}

static void put_ident(xpv_buf *b, const char *name)
{
    xpv_buf_putc(b, '"');
    for (const char *p = name; *p; p++) {
        if (*p == '"') xpv_buf_putc(b, '"');
        xpv_buf_putc(b, *p);
    }
    xpv_buf_putc(b, '"');
}

int xpv_nsys_db_select(sqlite3 *db, const char *table, const char *const *wanted, size_t nwanted,
                       const char *const *required, const char *tail, sqlite3_stmt **st,
                       xpv_err *err)
{
    *st = NULL;
    xpv_nsys_cols cols;
    if (xpv_nsys_cols_load(db, table, &cols, err) != 0) return -1;
    int usable = cols.n > 0;
    for (const char *const *r = required; usable && r && *r; r++)
        usable = xpv_nsys_cols_has(&cols, *r);
    if (!usable) {
        xpv_nsys_cols_free(&cols);
        return 0;
    }
    xpv_buf sql = {0};
    xpv_buf_puts(&sql, "SELECT ");
    for (size_t i = 0; i < nwanted; i++) {
        if (i) xpv_buf_puts(&sql, ", ");
        if (xpv_nsys_cols_has(&cols, wanted[i]))
            put_ident(&sql, wanted[i]);
        else
            xpv_buf_puts(&sql, "NULL");
    }
    xpv_buf_puts(&sql, " FROM ");
    put_ident(&sql, table);
    if (tail) xpv_buf_printf(&sql, " %s", tail);
    xpv_nsys_cols_free(&cols);
    int rc = sqlite3_prepare_v2(db, sql.data, -1, st, NULL);
    xpv_buf_free(&sql);
    if (rc != SQLITE_OK) {
        *st = NULL;
        return xpv_err_set(err, "reading %s: %s", table, sqlite3_errmsg(db));
    }
    return 0;
}

int xpv_nsys_strings_init(xpv_nsys_strings *s, sqlite3 *db, xpv_sink *sink, xpv_err *err)
{
    memset(s, 0, sizeof *s);
    s->sink = sink;
    if (!xpv_nsys_db_has_table(db, "StringIds")) return 0;
    if (sqlite3_prepare_v2(db, "SELECT value FROM StringIds WHERE id=?1", -1, &s->lookup, NULL) !=
        SQLITE_OK)
        return xpv_err_set(err, "reading StringIds: %s", sqlite3_errmsg(db));
    return 0;
}

static uint32_t lookup_uncached(xpv_nsys_strings *s, int64_t id)
{
    if (!s->lookup) return 0;
    uint32_t out = 0;
    sqlite3_bind_int64(s->lookup, 1, id);
    if (sqlite3_step(s->lookup) == SQLITE_ROW) {
        const char *v = (const char *)sqlite3_column_text(s->lookup, 0);
        size_t n = (size_t)sqlite3_column_bytes(s->lookup, 0);
        if (v) out = xpv_sink_intern(s->sink, v, n);
    }
    sqlite3_reset(s->lookup);
    return out;
}

uint32_t xpv_nsys_strings_get(xpv_nsys_strings *s, int64_t id)
{
    if (id < 0 || id >= (int64_t)STRING_CACHE_MAX) return lookup_uncached(s, id);
    size_t i = (size_t)id;
    if (i >= s->cap) {
        size_t cap = s->cap ? s->cap : 4096;
        while (cap <= i)
            cap *= 2;
        s->ids = xpv_xrealloc(s->ids, cap * sizeof *s->ids);
        memset(s->ids + s->cap, 0, (cap - s->cap) * sizeof *s->ids);
        s->cap = cap;
    }
    if (!s->ids[i]) s->ids[i] = lookup_uncached(s, id) + 1;
    return s->ids[i] - 1;
}

uint32_t xpv_nsys_strings_column(xpv_nsys_strings *s, sqlite3_stmt *st, int col)
{
    switch (sqlite3_column_type(st, col)) {
    case SQLITE_INTEGER:
        return xpv_nsys_strings_get(s, sqlite3_column_int64(st, col));
    case SQLITE_TEXT: {
        const char *v = (const char *)sqlite3_column_text(st, col);
        return v ? xpv_sink_intern(s->sink, v, (size_t)sqlite3_column_bytes(st, col)) : 0;
    }
    default:
        return 0;
    }
}

void xpv_nsys_strings_free(xpv_nsys_strings *s)
{
    sqlite3_finalize(s->lookup);
    free(s->ids);
    memset(s, 0, sizeof *s);
}
