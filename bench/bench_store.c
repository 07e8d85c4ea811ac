/*
 * bench_store.c — throughput of the sink + event store alone (no reader):
 * N synthetic GPU-kernel-like events with a few args each, into a fresh
 * index, compared with a minimal SQLite insert loop in the same run.
 * usage: bench_store [events=10000000] [dir=/tmp]
 */
#include "store/index_db.h"
#include "indexer/ingest.h"
#include "minimal_insert.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 10000000;
    const char *dir = argc > 2 ? argv[2] : "/tmp";
    char path[512], prof[512];
    snprintf(path, sizeof path, "%s/bench-store.sqlite", dir);
    snprintf(prof, sizeof prof, "%s/bench-store-profiles", dir);
    unlink(path);
    xpv_err err = {{0}};
    sqlite3 *db;
    if (xpv_index_open(path, prof, &db, NULL, &err) != 0)
        return fprintf(stderr, "%s\n", err.msg), 1;
    xpv_db_exec(db, "INSERT INTO profiles(id, path) VALUES(1, 'bench')", &err);
    double t0 = xpv_now_mono();
    xpv_db_exec(db, "BEGIN", &err);
    xpv_sink *s = xpv_sink_open(db, 1, &err);
    uint32_t names[64];
    char buf[64];
    for (int i = 0; i < 64; i++) {
        snprintf(buf, sizeof buf, "fusion_kernel_%d", i);
        names[i] = xpv_sink_intern_cstr(s, buf);
    }
    uint32_t k_corr = xpv_sink_intern_cstr(s, "correlation_id"),
             k_op = xpv_sink_intern_cstr(s, "hlo_op"), v_op = xpv_sink_intern_cstr(s, "fusion.12");
    for (long i = 0; i < n; i++) {
        xpv_event ev;
        xpv_event_init(&ev);
        ev.track = xpv_sink_track(s, i % 8, i % 4);
        ev.ts_ns = 1700000000000000000LL + i * 2000;
        ev.dur_ns = 500 + (i * 37) % 4000;
        ev.dur_ps = ev.dur_ns * 1000 + i % 1000;
        ev.name = names[i % 64];
        ev.kind = XPV_KIND_KERNEL;
        ev.corr = i;
        xpv_arg args[2] = {{.key = k_corr, .type = XPV_ARG_INT, .v.i = i},
                           {.key = k_op, .type = XPV_ARG_STR, .v.str = v_op}};
        ev.args = args;
        ev.nargs = 2;
        xpv_sink_event(s, &ev);
    }
    xpv_sink_stats stats;
    if (xpv_sink_finish(s, &stats, &err) != 0) return fprintf(stderr, "%s\n", err.msg), 1;
    xpv_sink_free(s);
    xpv_db_exec(db, "COMMIT", &err);
    double secs = xpv_now_mono() - t0;
    sqlite3_close(db);
    double minimal = xpv_bench_minimal_insert(dir, n);
    printf("sink+store: %ld events in %.2f s = %.2f M events/s\n", n, secs, n / secs / 1e6);
    printf("minimal SQLite insert loop: %.2f M rows/s\n", minimal / 1e6);
    printf("ratio: %.2fx the minimal insert loop\n", (n / secs) / minimal);
    unlink(path);
    return 0;
}
