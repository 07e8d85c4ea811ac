/*
 * bench_xplane_insert.c — the yardstick for the xplane ingest benchmark: a
 * minimal SQLite insert loop (one prepared statement, a 3-column table, one
 * transaction, the index's own journal settings) on the same machine and
 * disk, measured in the same run as the ingest (see run_xplane_ingest.sh).
 * usage: bench_xplane_insert [rows=10000000] [dir=/tmp]
 * prints: minimal_rows_per_s=<rows/s>
 */
#include "common/xpv_common.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 10000000;
    const char *dir = argc > 2 ? argv[2] : "/tmp";
    char path[512];
    snprintf(path, sizeof path, "%s/bench-xplane-minimal.sqlite", dir);
    unlink(path);
    sqlite3 *db;
    sqlite3_stmt *st;
    if (sqlite3_open(path, &db) != SQLITE_OK ||
        sqlite3_exec(db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=OFF; CREATE TABLE t(a,b,c)",
                     NULL, NULL, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(db, "INSERT INTO t VALUES(?1,?2,?3)", -1, &st, NULL) != SQLITE_OK)
        return fprintf(stderr, "sqlite: %s\n", sqlite3_errmsg(db)), 1;
    double t0 = xpv_now_mono();
    sqlite3_exec(db, "BEGIN", NULL, NULL, NULL);
    for (long i = 0; i < n; i++) {
        sqlite3_bind_int64(st, 1, i);
        sqlite3_bind_int64(st, 2, i * 3);
        sqlite3_bind_int64(st, 3, i & 1023);
        if (sqlite3_step(st) != SQLITE_DONE) return fprintf(stderr, "insert failed\n"), 1;
        sqlite3_reset(st);
    }
    sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
    double secs = xpv_now_mono() - t0;
    sqlite3_finalize(st);
    sqlite3_close(db);
    unlink(path);
    printf("minimal_rows=%ld\nminimal_seconds=%.3f\nminimal_rows_per_s=%.0f\n", n, secs, n / secs);
    return 0;
}
