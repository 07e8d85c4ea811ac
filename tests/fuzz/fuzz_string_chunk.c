/*
 * fuzz_string_chunk.c — string_rows(first_id, data), the reader of one
 * chunk of a profile's packed strings (store/string_chunks.c), on any
 * bytes: every value read whole or an error naming the damage, never a
 * read out of bounds. The first two bytes choose the first id (a multiple
 * of the chunk's size or not) and the id asked for, so both the scan and
 * the one-id lookup run.
 */
#include "fuzz.h"

#include "store/string_chunks.h"

#include <assert.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

static sqlite3_stmt *prepare(int one_id)
{
    static sqlite3 *db;
    static sqlite3_stmt *st[2];
    if (st[one_id]) return st[one_id];
    if (!db && (sqlite3_open(":memory:", &db) != SQLITE_OK ||
                xpv_store_string_chunks_register(db) != SQLITE_OK))
        abort();
    const char *sql = one_id ? "SELECT id, value FROM string_rows(?1, ?2) WHERE id=?3"
                             : "SELECT id, value FROM string_rows(?1, ?2)";
    if (sqlite3_prepare_v2(db, sql, -1, &st[one_id], NULL) != SQLITE_OK) abort();
    return st[one_id];
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2) return 0;
    int one_id = data[0] & 1;
    int64_t first = (data[0] >> 1) * (data[0] & 2 ? 1 : XPV_STORE_STRINGS_PER_CHUNK);
    int64_t want = first + data[1] % (XPV_STORE_STRINGS_PER_CHUNK + 2);
    data += 2, size -= 2;
    sqlite3_stmt *st = prepare(one_id);
    /* An exact-size copy, so that reading one byte past the chunk is caught. */
    unsigned char *chunk = malloc(size ? size : 1);
    if (!chunk) return 0;
    if (size) memcpy(chunk, data, size);
    sqlite3_bind_int64(st, 1, first);
    sqlite3_bind_blob(st, 2, chunk, (int)size, SQLITE_STATIC);
    if (one_id) sqlite3_bind_int64(st, 3, want);
    int rc, rows = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        (void)sqlite3_column_bytes(st, 1);
        assert(!one_id || sqlite3_column_int64(st, 0) == want);
        rows++;
    }
    assert(rows <= XPV_STORE_STRINGS_PER_CHUNK);
    assert(rc == SQLITE_DONE || (rc == SQLITE_ERROR && strstr(sqlite3_errmsg(sqlite3_db_handle(st)),
                                                              XPV_STORE_STRINGS_DAMAGED)));
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    free(chunk);
    return 0;
}
