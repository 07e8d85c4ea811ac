/*
 * bench_events.c — latency of the timeline's window query (xpv_api_events,
 * the code behind GET /api/profiles/{id}/events) on an indexed profile:
 * the full span, the middle 10% and 1%, then 1 ms and 100 µs windows at
 * several places, each repeated. Prints min/median/max milliseconds and the
 * answer's size. Target (issue 6): under 50 ms for any window of a
 * 10-million-event profile.
 * usage: bench_events DB [PROFILE_HEX|latest] [RESOLUTION=1500] [REPS=7]
 */
#include "api/api.h"
#include "api/block_marks.h"
#include "store/index_db.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int by_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static int pick_profile(sqlite3 *db, const char *want, int64_t *id, int64_t *t0, int64_t *t1,
                        int64_t *events)
{
    sqlite3_stmt *st;
    const char *sql = "SELECT id, start_ns, end_ns, events FROM profiles WHERE status='ok' AND"
                      " events > 0 ORDER BY events DESC";
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) return -1;
    int64_t parsed = -1;
    if (want && strcmp(want, "latest") != 0 && xpv_profile_id_parse(want, &parsed) != 0) return -1;
    int found = 0;
    while (!found && sqlite3_step(st) == SQLITE_ROW) {
        if (parsed >= 0 && sqlite3_column_int64(st, 0) != parsed) continue;
        *id = sqlite3_column_int64(st, 0);
        *t0 = sqlite3_column_int64(st, 1);
        *t1 = sqlite3_column_int64(st, 2);
        *events = sqlite3_column_int64(st, 3);
        found = 1;
    }
    sqlite3_finalize(st);
    return found ? 0 : -1;
}

static void time_window(sqlite3 *db, xpv_block_marks *marks, int64_t id, const char *label,
                        double a_us, double b_us, int resolution, int reps)
{
    double ms[64];
    size_t bytes = 0;
    int status = 0;
    if (reps > 64) reps = 64;
    for (int r = 0; r < reps; r++) {
        xpv_events_query q = {.has_start = 1,
                              .has_end = 1,
                              .start_us = a_us,
                              .end_us = b_us,
                              .resolution = resolution,
                              .marks = marks};
        xpv_buf out = {0};
        double t = xpv_now_mono();
        status = xpv_api_events(db, id, &q, &out);
        ms[r] = (xpv_now_mono() - t) * 1000.0;
        bytes = out.len;
        if (status != 200 && r == 0) fprintf(stderr, "%s: %s\n", label, out.data ? out.data : "");
        xpv_buf_free(&out);
    }
    qsort(ms, (size_t)reps, sizeof ms[0], by_double);
    printf("%-26s %14.3f us  status %d  min %7.2f  median %7.2f  max %7.2f ms  %8zu bytes\n", label,
           b_us - a_us, status, ms[0], ms[reps / 2], ms[reps - 1], bytes);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bench_events DB [PROFILE_HEX|latest] [RESOLUTION] [REPS]\n");
        return 2;
    }
    int resolution = argc > 3 ? atoi(argv[3]) : 1500, reps = argc > 4 ? atoi(argv[4]) : 7;
    sqlite3 *db;
    xpv_err err = {{0}};
    if (xpv_index_open_reader(argv[1], &db, &err) != 0) return fprintf(stderr, "%s\n", err.msg), 1;
    /* As the server's connections are set up (server/server_state.c). */
    sqlite3_exec(db, "PRAGMA mmap_size=17179869184; PRAGMA cache_size=-16384", NULL, NULL, NULL);
    int64_t id, t0, t1, events;
    if (pick_profile(db, argc > 2 ? argv[2] : NULL, &id, &t0, &t1, &events) != 0) {
        fprintf(stderr, "bench_events: no indexed profile with events in %s\n", argv[1]);
        return 1;
    }
    char hex[17];
    xpv_profile_id_hex(id, hex);
    double a = (double)t0 / 1000.0, b = (double)t1 / 1000.0, span = b - a, mid = a + span / 2;
    printf("profile %s: %lld events over %.3f s; resolution %d px; %d runs per window\n", hex,
           (long long)events, span / 1e6, resolution, reps);
    for (int pass = 0; pass < 2; pass++) {
        xpv_block_marks *marks = NULL;
        if (pass == 1) {
            marks = xpv_block_marks_new((size_t)256 << 20);
            double t = xpv_now_mono();
            int64_t blocks = xpv_block_marks_warm(marks, db, id, NULL, NULL);
            printf("\nwith resume marks (as the server keeps them): warm-up %.2f s, %lld blocks,"
                   " %.1f MB\n",
                   xpv_now_mono() - t, (long long)blocks, xpv_block_marks_bytes(marks) / 1048576.0);
        } else {
            printf("\nwithout resume marks (every overlapping block decoded whole)\n");
        }
        time_window(db, marks, id, "full span", a, b, resolution, reps);
        time_window(db, marks, id, "middle 10%", mid - span / 20, mid + span / 20, resolution,
                    reps);
        time_window(db, marks, id, "middle 1%", mid - span / 200, mid + span / 200, resolution,
                    reps);
        const double places[] = {0.1, 0.5, 0.9};
        for (size_t i = 0; i < sizeof places / sizeof places[0]; i++) {
            char label[64];
            double at = a + span * places[i];
            snprintf(label, sizeof label, "1 ms at %.0f%%", places[i] * 100);
            time_window(db, marks, id, label, at, at + 1000, resolution, reps);
            snprintf(label, sizeof label, "100 us at %.0f%%", places[i] * 100);
            time_window(db, marks, id, label, at, at + 100, resolution, reps);
        }
        xpv_block_marks_free(marks);
    }
    sqlite3_close(db);
    return 0;
}
