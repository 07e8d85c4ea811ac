/*
 * bench_json_read.c — times the Chrome trace JSON reader's stages on one
 * file: reading (inflate + parse + store, pipelined) until the reader
 * returns, then the sink's finish (draining the writer, the analysis,
 * strings/tracks), then the commit. Prints one line of figures.
 *
 *   bench_json_read FILE DB_PATH
 * DB_PATH is replaced (a fresh index).
 */
#define _GNU_SOURCE
#include "store/index_db.h"
#include "indexer/ingest.h"
#include "indexer/readers/readers.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static double cpu_seconds(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: bench_json_read FILE DB_PATH\n");
        return 2;
    }
    char side[4200];
    unlink(argv[2]);
    snprintf(side, sizeof side, "%s-wal", argv[2]);
    unlink(side);
    snprintf(side, sizeof side, "%s-shm", argv[2]);
    unlink(side);
    sqlite3 *db = NULL;
    xpv_err err = {{0}};
    if (xpv_index_open(argv[2], "/nonexistent-bench-root", &db, NULL, &err) != 0 ||
        xpv_db_exec(db, "INSERT INTO profiles(id, path) VALUES(1, 'bench'); BEGIN", &err) != 0) {
        fprintf(stderr, "bench_json_read: %s\n", err.msg);
        return 1;
    }
    double t0 = xpv_now_mono();
    xpv_sink *sink = xpv_sink_open(db, 1, &err);
    if (!sink) {
        fprintf(stderr, "bench_json_read: %s\n", err.msg);
        return 1;
    }
    xpv_err rerr = {{0}};
    int rc = xpv_reader_for(XPV_FMT_CHROME_JSON)(argv[1], sink, &rerr);
    double t1 = xpv_now_mono();
    double parse_cpu = cpu_seconds(CLOCK_THREAD_CPUTIME_ID),
           read_cpu = cpu_seconds(CLOCK_PROCESS_CPUTIME_ID);
    if (getenv("XPV_BENCH_READ_ONLY")) { /* profile the read stage alone */
        xpv_sink_free(sink);
        printf("read+store %.3f s (finish skipped); CPU: parse thread %.3f s, all threads %.3f s\n",
               xpv_now_mono() - t0, parse_cpu, cpu_seconds(CLOCK_PROCESS_CPUTIME_ID));
        return rc;
    }
    xpv_sink_stats st;
    int frc = xpv_sink_finish(sink, &st, &err);
    xpv_sink_free(sink);
    double t2 = xpv_now_mono();
    xpv_db_exec(db, "COMMIT", &err);
    double t3 = xpv_now_mono();
    sqlite3_close(db);
    if (rc != 0) fprintf(stderr, "bench_json_read: reader: %s\n", rerr.msg);
    if (frc != 0) fprintf(stderr, "bench_json_read: finish: %s\n", err.msg);
    printf("events %lld  read+store %.3f s  finish(analysis) %.3f s  commit %.3f s  total %.3f s\n"
           "CPU during read+store: parse thread %.3f s, all threads %.3f s\n",
           (long long)st.events, t1 - t0, t2 - t1, t3 - t2, t3 - t0, parse_cpu, read_cpu);
    return rc || frc;
}
