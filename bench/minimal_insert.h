/*
 * minimal_insert.h — the yardstick several benchmarks compare against: a
 * minimal SQLite insert loop (one prepared statement, a 3-column table, one
 * transaction, the index's own journal settings) on the same machine and
 * disk, measured in the same run. Header-only because every benchmark
 * source is a program of its own.
 */
#ifndef XPV_BENCH_MINIMAL_INSERT_H
#define XPV_BENCH_MINIMAL_INSERT_H

#include "common/xpv_common.h"

#include <sqlite3.h>
#include <stdio.h>
#include <unistd.h>

/* Inserts n rows into a fresh table in dir; returns rows/s, or -1 on error. */
static inline double xpv_bench_minimal_insert(const char *dir, long n)
{
    char path[512];
    snprintf(path, sizeof path, "%s/bench-minimal-insert.sqlite", dir);
    unlink(path);
    sqlite3 *db;
    sqlite3_stmt *st = NULL;
    if (sqlite3_open(path, &db) != SQLITE_OK ||
        sqlite3_exec(db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=OFF; CREATE TABLE t(a,b,c)",
                     NULL, NULL, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(db, "INSERT INTO t VALUES(?1,?2,?3)", -1, &st, NULL) != SQLITE_OK) {
        fprintf(stderr, "sqlite: %s\n", sqlite3_errmsg(db));
        sqlite3_close(db);
        return -1;
    }
    double t0 = xpv_now_mono();
    sqlite3_exec(db, "BEGIN", NULL, NULL, NULL);
    for (long i = 0; i < n; i++) {
        sqlite3_bind_int64(st, 1, i);
        sqlite3_bind_int64(st, 2, i * 3);
        sqlite3_bind_int64(st, 3, i & 1023);
        if (sqlite3_step(st) != SQLITE_DONE) n = 0;
        sqlite3_reset(st);
    }
    sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
    double secs = xpv_now_mono() - t0;
    sqlite3_finalize(st);
    sqlite3_close(db);
    unlink(path);
    return n ? (double)n / secs : -1;
}

#endif
