/*
 * strings.h — the `strings` table (schema in index_db.c): a profile's
 * interned strings, id → value (event names, arg keys, texts), packed 64
 * consecutive ids a row (string_chunks.h). Every query of the answers that
 * reads the table is here (strings.c): one value by id through a statement
 * kept prepared and the last chunk read (the timeline's hot path), the ids of
 * known values, the rows whose value may name a kind of work, the rows
 * containing a text, and the greatest id; nothing in api/ names the table
 * in SQL (scripts/checksrc.sh).
 *
 * The rows are gathered in memory by indexer/ingest_rows.c from the
 * ingest's interned strings and written here (xpv_store_strings_write):
 * inside the ingest's transaction, or, for a worker's part, by the index's
 * writer as it moves the part in (index_db.c), once instead of into the
 * part and again out of it.
 *
 * Invariant: an id is 1 .. UINT32_MAX; 0 is "no string" and is never
 * looked up.
 */
#ifndef XPV_STORE_STRINGS_H
#define XPV_STORE_STRINGS_H

#include "cursor.h"
#include "string_chunks.h"

/* A profile's strings in memory, value i at text.data + v[i].off. */
typedef struct xpv_store_string_rows {
    xpv_buf text;
    xpv_store_string_ref *v;
    size_t n, cap;
} xpv_store_string_rows;

/* Appends the next id's value. */
void xpv_store_string_rows_add(xpv_store_string_rows *rows, const char *s, size_t n);
void xpv_store_string_rows_free(xpv_store_string_rows *rows);
/* Inserts the rows as profile_id's strings, id i the i-th value. 0, or -1
 * with err. */
int xpv_store_strings_write(sqlite3 *db, int64_t profile_id, const xpv_store_string_rows *rows,
                            xpv_err *err);

/* One profile's values by id, the statement prepared once and the last
 * chunk read kept decoded (ids asked for are mostly near each other). */
typedef struct {
    sqlite3_stmt *st; /* NULL when not open */
    int64_t profile_id;
    int64_t first_id; /* the chunk's in `chunk`, -1 for none */
    xpv_buf chunk;
    xpv_store_string_ref v[XPV_STORE_STRINGS_PER_CHUNK]; /* its values, in chunk */
    size_t n;
} xpv_store_strings_lookup;

/* Prepares the lookup. Returns 0, or -1 with err (l->st NULL). */
int xpv_store_strings_lookup_open(xpv_store_strings_lookup *l, sqlite3 *db, int64_t profile_id,
                                  xpv_err *err);
/* The value of string id: 1 with *value (malloc'ed, NUL-terminated) and
 * *len, 0 when there is no such string (*value NULL,
 * *len 0), -1 with err. */
int xpv_store_strings_lookup_get(xpv_store_strings_lookup *l, uint32_t id, char **value,
                                 size_t *len, xpv_err *err);
/* Finalizes the statement; a closed lookup may be closed again. */
void xpv_store_strings_lookup_close(xpv_store_strings_lookup *l);

/* The ids of values[0 .. n - 1] in a profile: ids[i] is the id of
 * values[i], 0 when the profile has no such string. 0, or -1 with err. */
int xpv_store_strings_ids(sqlite3 *db, int64_t profile_id, const char *const *values, size_t n,
                          uint32_t *ids, xpv_err *err);
/* Whether any of profiles ids[0 .. n - 1] holds one of values[0 .. nv - 1]:
 * 1, 0, or -1 with err. */
int xpv_store_strings_any(sqlite3 *db, const int64_t *ids, size_t n, const char *const *values,
                          size_t nv, xpv_err *err);

/* A profile's strings as (id, value) rows, in no order promised. */
int xpv_store_strings_open_all(xpv_store_cursor *c, sqlite3 *db, int64_t profile_id, xpv_err *err);
/* Those that may name collective, compile, input, feed or copy work (the
 * findings' classes; LIKE ignores ASCII case): a superset the caller
 * narrows. */
int xpv_store_strings_open_work_names(xpv_store_cursor *c, sqlite3 *db, int64_t profile_id,
                                      xpv_err *err);
/* Those that may name input work (dataloader, iterator, feed, next). */
int xpv_store_strings_open_input_names(xpv_store_cursor *c, sqlite3 *db, int64_t profile_id,
                                       xpv_err *err);
/* Those with an id above 0 whose value contains q, ignoring case. */
int xpv_store_strings_open_containing(xpv_store_cursor *c, sqlite3 *db, int64_t profile_id,
                                      const char *q, xpv_err *err);
/* The next row of any of them: 1 (*id and *value, valid until the next
 * step), 0 at the end, -1 with err (a damaged chunk's names the damage). */
int xpv_store_strings_next(xpv_store_cursor *c, int64_t *id, xpv_store_text *value, xpv_err *err);

/* The greatest string id of a profile: 1 with *id, 0 when it has none
 * (*id 0), -1 with err. */
int xpv_store_strings_max_id(sqlite3 *db, int64_t profile_id, int64_t *id, xpv_err *err);

#endif
