/*
 * strings.c — the reads of the `strings` table, and the insert of a
 * profile's rows (see strings.h), packed in chunks of consecutive ids
 * (string_chunks.h).
 *
 * A list of values goes to SQL as one JSON array parameter, so one
 * statement serves any list; the rows are matched back to the list here.
 */
#include "strings.h"
#include "db.h"
#include "string_chunks.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* The rows of a profile's strings, before a further condition. */
#define ROWS_OF(profiles)                                                                          \
    "SELECT r.id, r.value FROM strings c, string_rows(c.first_id, c.data) r"                       \
    " WHERE c.profile_id" profiles
#define ROWS ROWS_OF("=?1")
#define IN_PROFILES " IN (SELECT value FROM json_each(?1))"

int xpv_store_strings_lookup_open(xpv_store_strings_lookup *l, sqlite3 *db, int64_t profile_id,
                                  xpv_err *err)
{
    xpv_store_cursor c;
    memset(l, 0, sizeof *l);
    l->profile_id = profile_id;
    l->first_id = -1;
    int rc = xpv_store_cursor_open(
        &c, db, "SELECT data FROM strings WHERE profile_id=?1 AND first_id=?2", err);
    l->st = c.st;
    return rc;
}

/* Reads the chunk of first_id into l's cache: 1, 0 when there is none,
 * -1 with err (damage included). */
static int load_chunk(xpv_store_strings_lookup *l, int64_t first_id, xpv_err *err)
{
    xpv_store_cursor c = {sqlite3_db_handle(l->st), l->st};
    l->first_id = -1, l->n = 0;
    sqlite3_bind_int64(l->st, 1, l->profile_id);
    sqlite3_bind_int64(l->st, 2, first_id);
    int rc = xpv_store_cursor_step(&c, err);
    if (rc == 1) {
        xpv_buf_reset(&l->chunk);
        xpv_buf_append(&l->chunk, sqlite3_column_blob(l->st, 0),
                       (size_t)sqlite3_column_bytes(l->st, 0));
    }
    sqlite3_reset(l->st);
    if (rc != 1) return rc;
    xpv_store_string_chunk ch;
    int got = xpv_store_string_chunk_open(&ch, l->chunk.data, l->chunk.len, first_id);
    int64_t id;
    const char *s;
    size_t n;
    while (got == 0 && (got = xpv_store_string_chunk_next(&ch, &id, &s, &n)) == 1) {
        l->v[l->n++] = (xpv_store_string_ref){(size_t)(s - l->chunk.data), n};
        got = 0;
    }
    if (got < 0) return xpv_err_set(err, "%s", XPV_STORE_STRINGS_DAMAGED);
    l->first_id = first_id;
    return 1;
}

int xpv_store_strings_lookup_get(xpv_store_strings_lookup *l, uint32_t id, char **value,
                                 size_t *len, xpv_err *err)
{
    *value = NULL, *len = 0;
    int64_t first = (int64_t)id - (int64_t)id % XPV_STORE_STRINGS_PER_CHUNK;
    if (first != l->first_id) {
        int rc = load_chunk(l, first, err);
        if (rc != 1) return rc;
    }
    size_t i = (size_t)((int64_t)id - first);
    if (i >= l->n) return 0;
    *value = xpv_xstrndup(l->chunk.data + l->v[i].off, l->v[i].len);
    *len = l->v[i].len;
    return 1;
}

void xpv_store_strings_lookup_close(xpv_store_strings_lookup *l)
{
    sqlite3_finalize(l->st);
    l->st = NULL;
    xpv_buf_free(&l->chunk);
    l->first_id = -1, l->n = 0;
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
    if (xpv_store_cursor_open_id(&c, db, ROWS " AND r.value IN (SELECT value FROM json_each(?2))",
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
    if (xpv_store_cursor_open_ids(
            &c, db, ROWS_OF(IN_PROFILES) " AND r.value IN (SELECT value FROM json_each(?2))", ids,
            n, err) != 0)
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
        ROWS " AND (r.value LIKE '%nccl%' OR r.value LIKE '%rccl%' OR r.value LIKE"
             " '%all%reduce%' OR r.value LIKE '%all%gather%' OR r.value LIKE '%reduce%scatter%'"
             " OR r.value LIKE '%all%to%all%' OR r.value LIKE '%collective%' OR r.value LIKE"
             " '%c10d::%' OR r.value LIKE '%send%recv%' OR r.value LIKE '%compile%' OR r.value"
             " LIKE '%dataloader%' OR r.value LIKE '%iterator%' OR r.value LIKE '%feed%' OR"
             " r.value = 'next' OR r.value LIKE '%memcpy%' OR r.value LIKE '%pageable%')",
        profile_id, err);
}

int xpv_store_strings_open_input_names(xpv_store_cursor *c, sqlite3 *db, int64_t profile_id,
                                       xpv_err *err)
{
    const char *sql = ROWS " AND (r.value LIKE '%dataloader%' OR r.value LIKE '%iterator%' OR"
                           " r.value LIKE '%feed%' OR r.value = 'next')";
    return xpv_store_cursor_open_id(c, db, sql, profile_id, err);
}

int xpv_store_strings_open_containing(xpv_store_cursor *c, sqlite3 *db, int64_t profile_id,
                                      const char *q, xpv_err *err)
{
    if (xpv_store_cursor_open_id(c, db,
                                 ROWS " AND r.id > 0 AND instr(lower(r.value), lower(?2)) > 0",
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
    if (xpv_store_cursor_open_id(&c, db,
                                 ROWS " AND c.first_id=(SELECT max(first_id) FROM strings"
                                      " WHERE profile_id=?1) ORDER BY r.id DESC LIMIT 1",
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
    if (sqlite3_prepare_v2(db, "INSERT INTO strings(profile_id, first_id, data) VALUES(?1, ?2, ?3)",
                           -1, &st, NULL) != SQLITE_OK)
        return xpv_db_error(err, db);
    sqlite3_bind_int64(st, 1, profile_id);
    enum { PER = XPV_STORE_STRINGS_PER_CHUNK };
    xpv_buf chunk = {0};
    int rc = 0;
    for (size_t first = 0; first < rows->n && rc == 0; first += PER) {
        size_t n = rows->n - first < PER ? rows->n - first : PER;
        xpv_buf_reset(&chunk);
        xpv_store_string_chunk_encode(&chunk, rows->text.data, rows->v + first, n);
        /* Names are not capped (a JSON event may be 64 MB): 64 of the
         * longest could pass what one blob may hold. SQLite refuses one
         * over its limit (1e9 bytes) itself; this keeps the int below. */
        if (chunk.len > (size_t)INT_MAX) {
            rc = xpv_err_set(err, "strings %zu to %zu: %zu bytes, more than a chunk may hold",
                             first, first + n - 1, chunk.len);
            break;
        }
        sqlite3_bind_int64(st, 2, (int64_t)first);
        sqlite3_bind_blob(st, 3, chunk.data, (int)chunk.len, SQLITE_STATIC);
        if (sqlite3_step(st) != SQLITE_DONE) rc = xpv_db_error(err, db);
        sqlite3_reset(st);
    }
    xpv_buf_free(&chunk);
    sqlite3_finalize(st);
    return rc;
}
