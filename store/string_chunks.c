/*
 * string_chunks.c — the chunk of consecutive string ids that is one row of
 * `strings`, and string_rows(first_id, data), the table-valued function
 * that reads a chunk as (id, value) rows (see string_chunks.h).
 *
 * Chunk layout (integers LEB128 varints): u8 version (1), the value count
 * n, then n times the value's byte count and its bytes. Decoding checks
 * every length against the chunk and the count against the chunk's size:
 * damage is an error naming it (XPV_STORE_STRINGS_DAMAGED), never an
 * out-of-bounds read.
 */
#include "string_chunks.h"
#include "db.h"
#include "../common/varint.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK_VERSION 1

void xpv_store_string_chunk_encode(xpv_buf *out, const char *text, const xpv_store_string_ref *v,
                                   size_t n)
{
    assert(n >= 1 && n <= XPV_STORE_STRINGS_PER_CHUNK);
    size_t bytes = 1 + XPV_VARINT_MAX;
    for (size_t i = 0; i < n; i++)
        bytes += XPV_VARINT_MAX + v[i].len;
    xpv_buf_reserve(out, bytes);
    unsigned char *p = (unsigned char *)out->data + out->len;
    *p++ = CHUNK_VERSION;
    p = xpv_varint_put(p, n);
    for (size_t i = 0; i < n; i++) {
        p = xpv_varint_put(p, v[i].len);
        if (v[i].len) memcpy(p, text + v[i].off, v[i].len);
        p += v[i].len;
    }
    out->len = (size_t)(p - (unsigned char *)out->data);
}

int xpv_store_string_chunk_open(xpv_store_string_chunk *c, const void *data, size_t len,
                                int64_t first_id)
{
    if (!data || len == 0) {
        *c = (xpv_store_string_chunk){NULL, NULL, first_id, 0};
        return -1; /* a chunk has at least its version and count */
    }
    xpv_varint_reader r = {data, (const unsigned char *)data + len, 0};
    unsigned version = xpv_varint_u8(&r);
    uint64_t n = xpv_varint_get(&r);
    *c = (xpv_store_string_chunk){r.p, r.end, first_id, n};
    return version == CHUNK_VERSION && !r.bad && n >= 1 && n <= XPV_STORE_STRINGS_PER_CHUNK &&
                   first_id >= 0 && first_id % XPV_STORE_STRINGS_PER_CHUNK == 0
               ? 0
               : -1;
}

int xpv_store_string_chunk_next(xpv_store_string_chunk *c, int64_t *id, const char **s, size_t *n)
{
    if (c->left == 0) return c->p == c->end ? 0 : -1;
    xpv_varint_reader r = {c->p, c->end, 0};
    uint64_t len = xpv_varint_get(&r);
    if (r.bad || len > (uint64_t)(r.end - r.p)) return -1;
    *id = c->next_id++;
    *s = (const char *)r.p;
    *n = (size_t)len;
    c->p = r.p + len;
    c->left--;
    return 1;
}

/* ---- string_rows(first_id, data) ---- */

enum { C_ID, C_VALUE, C_FIRST, C_DATA, N_ARGS = 3 };

typedef struct {
    sqlite3_vtab_cursor base;
    unsigned char *data; /* a copy: the argument lives as long as one call */
    xpv_store_string_chunk chunk;
    int has_want; /* id = ? was asked: only that id's row */
    int64_t want;
    int64_t id;
    const char *value;
    size_t len;
    int eof;
} rows_cursor;

static int rows_connect(sqlite3 *db, void *aux, int argc, const char *const *argv,
                        sqlite3_vtab **out, char **errmsg)
{
    (void)aux, (void)argc, (void)argv, (void)errmsg;
    int rc = sqlite3_declare_vtab(
        db, "CREATE TABLE x(id INTEGER, value TEXT, first_id HIDDEN, data HIDDEN)");
    if (rc != SQLITE_OK) return rc;
    sqlite3_vtab *t = sqlite3_malloc(sizeof *t);
    if (!t) return SQLITE_NOMEM;
    memset(t, 0, sizeof *t);
    sqlite3_vtab_config(db, SQLITE_VTAB_INNOCUOUS);
    *out = t;
    return SQLITE_OK;
}

static int rows_disconnect(sqlite3_vtab *t)
{
    sqlite3_free(t);
    return SQLITE_OK;
}

/* first_id = ? and data = ? must be given; id = ? narrows to one row
 * (idxNum 1), which the op-name lookups of kernel_stats.c ask for. */
static int rows_best_index(sqlite3_vtab *t, sqlite3_index_info *info)
{
    (void)t;
    int at[N_ARGS] = {-1, -1, -1}; /* constraint index of first_id, data, id */
    for (int i = 0; i < info->nConstraint; i++) {
        const struct sqlite3_index_constraint *c = &info->aConstraint[i];
        if (c->op != SQLITE_INDEX_CONSTRAINT_EQ) continue;
        int slot = c->iColumn == C_FIRST  ? 0
                   : c->iColumn == C_DATA ? 1
                   : c->iColumn == C_ID   ? 2
                                          : -1;
        if (slot < 0) continue;
        if (!c->usable) {
            if (slot < 2) return SQLITE_CONSTRAINT;
            continue;
        }
        at[slot] = i;
    }
    if (at[0] < 0 || at[1] < 0) return SQLITE_CONSTRAINT;
    for (int k = 0; k < N_ARGS; k++) {
        if (at[k] < 0) continue;
        info->aConstraintUsage[at[k]].argvIndex = k + 1;
        info->aConstraintUsage[at[k]].omit = 1;
    }
    info->idxNum = at[2] >= 0;
    info->estimatedCost = at[2] >= 0 ? 10 : XPV_STORE_STRINGS_PER_CHUNK;
    info->estimatedRows = at[2] >= 0 ? 1 : XPV_STORE_STRINGS_PER_CHUNK;
    return SQLITE_OK;
}

static int rows_open(sqlite3_vtab *t, sqlite3_vtab_cursor **out)
{
    (void)t;
    rows_cursor *c = sqlite3_malloc(sizeof *c);
    if (!c) return SQLITE_NOMEM;
    memset(c, 0, sizeof *c);
    c->eof = 1;
    *out = &c->base;
    return SQLITE_OK;
}

static int rows_close(sqlite3_vtab_cursor *cur)
{
    rows_cursor *c = (rows_cursor *)cur;
    sqlite3_free(c->data);
    sqlite3_free(c);
    return SQLITE_OK;
}

/* The message xpv_store_damage_in knows: the server then checks the
 * profile (xpv_store_string_chunks_verify) and indexes it again. */
static int damaged(rows_cursor *c)
{
    c->eof = 1;
    return xpv_db_vtab_damaged(c->base.pVtab, XPV_STORE_STRINGS_DAMAGED);
}

static int rows_next(sqlite3_vtab_cursor *cur)
{
    rows_cursor *c = (rows_cursor *)cur;
    for (;;) {
        int rc = xpv_store_string_chunk_next(&c->chunk, &c->id, &c->value, &c->len);
        if (rc < 0) return damaged(c);
        if (rc == 0 || (c->has_want && c->id > c->want)) break;
        if (!c->has_want || c->id == c->want) return SQLITE_OK;
    }
    c->eof = 1;
    return SQLITE_OK;
}

static int rows_filter(sqlite3_vtab_cursor *cur, int idx_num, const char *idx_str, int argc,
                       sqlite3_value **argv)
{
    (void)idx_str;
    rows_cursor *c = (rows_cursor *)cur;
    sqlite3_free(c->data);
    c->data = NULL;
    c->eof = 1;
    /* Only integers name a chunk or a row: anything else (NULL, 3.5, '3x')
     * matches none, as the table's own integer columns would. */
    if (argc < 2 || sqlite3_value_numeric_type(argv[0]) != SQLITE_INTEGER ||
        sqlite3_value_type(argv[1]) == SQLITE_NULL)
        return SQLITE_OK;
    c->has_want = idx_num && argc == 3;
    if (idx_num && (argc != 3 || sqlite3_value_numeric_type(argv[2]) != SQLITE_INTEGER))
        return SQLITE_OK;
    c->want = c->has_want ? sqlite3_value_int64(argv[2]) : 0;
    int n = sqlite3_value_bytes(argv[1]);
    const void *src = sqlite3_value_blob(argv[1]);
    if (n > 0 && !(c->data = sqlite3_malloc(n))) return SQLITE_NOMEM;
    if (n > 0) memcpy(c->data, src, (size_t)n);
    if (xpv_store_string_chunk_open(&c->chunk, c->data, (size_t)n, sqlite3_value_int64(argv[0])) !=
        0)
        return damaged(c);
    c->eof = 0;
    return rows_next(cur);
}

static int rows_eof(sqlite3_vtab_cursor *cur)
{
    return ((rows_cursor *)cur)->eof;
}

static int rows_column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int col)
{
    const rows_cursor *c = (const rows_cursor *)cur;
    if (col == C_ID)
        sqlite3_result_int64(ctx, c->id);
    else if (col == C_VALUE)
        sqlite3_result_text(ctx, c->value, (int)c->len, SQLITE_TRANSIENT);
    else
        sqlite3_result_null(ctx); /* the arguments are not read back */
    return SQLITE_OK;
}

static int rows_rowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *rowid)
{
    *rowid = ((rows_cursor *)cur)->id;
    return SQLITE_OK;
}

static const sqlite3_module ROWS_MODULE = {
    .iVersion = 0,
    .xCreate = NULL, /* eponymous only: no CREATE VIRTUAL TABLE */
    .xConnect = rows_connect,
    .xBestIndex = rows_best_index,
    .xDisconnect = rows_disconnect,
    .xOpen = rows_open,
    .xClose = rows_close,
    .xFilter = rows_filter,
    .xNext = rows_next,
    .xEof = rows_eof,
    .xColumn = rows_column,
    .xRowid = rows_rowid,
};

int xpv_store_string_chunks_register(sqlite3 *db)
{
    return sqlite3_create_module_v2(db, "string_rows", &ROWS_MODULE, NULL, NULL);
}

int xpv_store_string_chunks_verify(sqlite3 *db, int64_t profile_id, xpv_err *err)
{
    return xpv_db_verify_packed(db,
                                "SELECT count(*) FROM strings c, string_rows(c.first_id, c.data)"
                                " WHERE c.profile_id=?1",
                                profile_id, XPV_STORE_STRINGS_DAMAGED, err);
}
