/*
 * fuzz_kernel_blob.c — kernel_device_rows(blob), the reader of a device's
 * packed kernel rows (store/kernel_device_stats.c), on any bytes: every
 * row read whole or an error naming the damage, never a read out of bounds.
 */
#include "fuzz.h"

#include "store/kernel_device_stats.h"

#include <assert.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

static sqlite3_stmt *read_all(void)
{
    static sqlite3 *db;
    static sqlite3_stmt *st;
    if (st) return st;
    if (sqlite3_open(":memory:", &db) != SQLITE_OK ||
        xpv_store_kernel_device_stats_register(db) != SQLITE_OK ||
        sqlite3_prepare_v2(db, "SELECT * FROM kernel_device_rows(?1)", -1, &st, NULL) != SQLITE_OK)
        abort();
    return st;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    sqlite3_stmt *st = read_all();
    /* An exact-size copy, so that reading one byte past the blob is caught. */
    unsigned char *blob = malloc(size ? size : 1);
    if (!blob) return 0;
    if (size) memcpy(blob, data, size);
    sqlite3_bind_blob(st, 1, blob, (int)size, SQLITE_STATIC);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW)
        for (int i = 0; i < sqlite3_column_count(st); i++)
            (void)sqlite3_column_bytes(st, i);
    assert(rc == SQLITE_DONE || (rc == SQLITE_ERROR && strstr(sqlite3_errmsg(sqlite3_db_handle(st)),
                                                              XPV_STORE_KERNEL_DEVICE_DAMAGED)));
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    free(blob);
    return 0;
}
