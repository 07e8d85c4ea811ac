/*
 * string_chunks.h — a profile's interned strings, packed: the `strings`
 * table (schema in index_db.c) holds one row per XPV_STORE_STRINGS_PER_CHUNK
 * consecutive ids, (profile_id, first_id, data), and the table-valued
 * function string_rows(first_id, data) reads a chunk back as (id, value)
 * rows. strings.c is the table's only reader and writer.
 *
 * Why: a pod host interns ~4.5 k strings, and SQLite spends ~1.5 us on
 * each row it inserts whatever its size; 1.15 M rows were a tenth of the
 * 256-host pod's indexing CPU, all of it on the index's one writer thread.
 *
 * Invariants: first_id is a multiple of XPV_STORE_STRINGS_PER_CHUNK, and a
 * chunk holds 1 .. XPV_STORE_STRINGS_PER_CHUNK values, ids first_id on,
 * none missing; a value is never NULL.
 */
#ifndef XPV_STORE_STRING_CHUNKS_H
#define XPV_STORE_STRING_CHUNKS_H

#include "../common/xpv_common.h"

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

#define XPV_STORE_STRINGS_PER_CHUNK 64
/* The same, for SQL text: a chunk's first id is `id & -64`. */
#define XPV_STORE_STRINGS_CHUNK_MASK "-64"

/* The error of a read of a damaged chunk, which xpv_store_damage_in knows. */
#define XPV_STORE_STRINGS_DAMAGED "string chunk is damaged"

/* Where a value is in a buffer of texts: at off, len bytes. */
typedef struct {
    size_t off, len;
} xpv_store_string_ref;

/* Appends to out the chunk of n (1 .. XPV_STORE_STRINGS_PER_CHUNK) values,
 * value i at text + v[i].off. */
void xpv_store_string_chunk_encode(xpv_buf *out, const char *text, const xpv_store_string_ref *v,
                                   size_t n);

/* A chunk being read. */
typedef struct {
    const unsigned char *p, *end;
    int64_t next_id;
    uint64_t left;
} xpv_store_string_chunk;

/* Starts reading data (len bytes) as the chunk of first_id: 0, or -1 when
 * it is damaged. */
int xpv_store_string_chunk_open(xpv_store_string_chunk *c, const void *data, size_t len,
                                int64_t first_id);

/* The next value: 1 with *id, *s and *n (pointing into the data), 0 at the
 * chunk's end, -1 when it is damaged. */
int xpv_store_string_chunk_next(xpv_store_string_chunk *c, int64_t *id, const char **s, size_t *n);

/* Reads every chunk of a profile: 0 when all decode, 1 with err naming the
 * damage, -1 with err on an SQLite error. */
int xpv_store_string_chunks_verify(sqlite3 *db, int64_t profile_id, xpv_err *err);

/* Makes string_rows(first_id, data) known to db; every connection that
 * reads the index does this when it opens (index_db.c). SQLite's code. */
int xpv_store_string_chunks_register(sqlite3 *db);

#endif
