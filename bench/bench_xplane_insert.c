/*
 * bench_xplane_insert.c — the yardstick for the xplane ingest benchmark: a
 * minimal SQLite insert loop (one prepared statement, a 3-column table, one
 * transaction, the index's own journal settings) on the same machine and
 * disk, measured in the same run as the ingest (see run_xplane_ingest.sh).
 * usage: bench_xplane_insert [rows=10000000] [dir=/tmp]
 * prints: minimal_rows_per_s=<rows/s>
 */
#include "minimal_insert.h"

#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 10000000;
    const char *dir = argc > 2 ? argv[2] : "/tmp";
    double t0 = xpv_now_mono();
    double rate = xpv_bench_minimal_insert(dir, n);
    if (rate < 0) return fprintf(stderr, "insert failed\n"), 1;
    printf("minimal_rows=%ld\nminimal_seconds=%.3f\nminimal_rows_per_s=%.0f\n", n,
           xpv_now_mono() - t0, rate);
    return 0;
}
