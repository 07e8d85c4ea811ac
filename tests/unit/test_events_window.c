/*
 * test_events_window.c — the timeline window answer (api/events.c) and the
 * resume marks behind it (event_store marks, api/block_marks.c):
 *  - decoding from a mark yields exactly the events from that index on;
 *  - a window answered with the marks cache is byte-identical to one
 *    answered by decoding whole blocks, on sorted and unsorted tracks;
 *  - a narrow window returns exactly the events that overlap it, with
 *    nesting depths; summaries stay within tracks x resolution.
 */
#include "testutil.h"
#include "api/api.h"
#include "api/block_marks.h"
#include "store/event_store.h"
#include "store/index_db.h"
#include "indexer/ingest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROFILE 9
#define N_SORTED 30000

static sqlite3 *db;

/* Track 0: sorted slices of many lengths; track 1: the same shuffled in
 * time order (unsorted blocks); track 2: nested parent/child pairs. */
static void build(void)
{
    const char *dir = xpv_test_tmpdir();
    char db_path[512], profiles[512];
    snprintf(db_path, sizeof db_path, "%s/index.sqlite", dir);
    snprintf(profiles, sizeof profiles, "%s/profiles", dir);
    xpv_test_write(dir, "profiles/.keep", "", 0);
    xpv_err err = {{0}};
    CU_ASSERT_EQUAL_FATAL(xpv_index_open(db_path, profiles, &db, NULL, &err), 0);
    xpv_db_exec(db, "INSERT INTO profiles(id, path, status) VALUES(9, 'p', 'ok')", &err);
    xpv_sink *s = xpv_sink_open(db, PROFILE, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    uint32_t names[3] = {xpv_sink_intern_cstr(s, "short"), xpv_sink_intern_cstr(s, "long"),
                         xpv_sink_intern_cstr(s, "child")};
    for (int t = 0; t < 2; t++)
        for (int i = 0; i < N_SORTED; i++) {
            int k = t == 0 ? i : (int)(((int64_t)i * 7919) % N_SORTED);
            xpv_event ev;
            xpv_event_init(&ev);
            ev.track = xpv_sink_track(s, 1, t);
            ev.ts_ns = 1000000 + (int64_t)k * 1000;
            ev.dur_ns = (k % 10 == 0) ? 5000 + k % 7 : 200 + k % 300;
            ev.dur_ps = ev.dur_ns * 1000;
            ev.name = names[k % 10 == 0];
            xpv_sink_event(s, &ev);
        }
    for (int i = 0; i < 100; i++) {
        xpv_event ev;
        xpv_event_init(&ev);
        ev.track = xpv_sink_track(s, 1, 2);
        ev.ts_ns = 1000000 + (int64_t)i * 100000;
        ev.dur_ns = 50000;
        ev.dur_ps = ev.dur_ns * 1000;
        ev.name = names[1];
        xpv_sink_event(s, &ev);
        ev.ts_ns += 1000;
        ev.dur_ns = 20000;
        ev.dur_ps = ev.dur_ns * 1000;
        ev.name = names[2];
        xpv_sink_event(s, &ev);
    }
    xpv_sink_stats stats;
    CU_ASSERT_EQUAL(xpv_sink_finish(s, &stats, &err), 0);
    xpv_sink_free(s);
}

typedef struct {
    int64_t n, first_index, sum_ts;
    uint32_t from; /* count only events at or after this index */
} tally;

static int count(void *ctx, const xpv_event *ev, int64_t block, uint32_t index)
{
    (void)block;
    tally *t = ctx;
    if (index < t->from) return 0;
    if (t->n++ == 0) t->first_index = index;
    t->sum_ts += ev->ts_ns;
    return 0;
}

static void ensure_built(void)
{
    if (!db) build();
}

static void test_marks_resume_exactly(void)
{
    ensure_built();
    sqlite3_stmt *st;
    CU_ASSERT_EQUAL_FATAL(sqlite3_prepare_v2(db,
                                             "SELECT data, n FROM blocks WHERE track=0 AND"
                                             " n > 1000 LIMIT 1",
                                             -1, &st, NULL),
                          SQLITE_OK);
    CU_ASSERT_EQUAL_FATAL(sqlite3_step(st), SQLITE_ROW);
    const void *blob = sqlite3_column_blob(st, 0);
    size_t len = (size_t)sqlite3_column_bytes(st, 0);
    int64_t n = sqlite3_column_int64(st, 1);
    xpv_store_mark marks[256];
    int sorted = 0;
    xpv_err err = {{0}};
    int nm = xpv_store_marks(blob, len, 64, marks, 256, &sorted, &err);
    CU_ASSERT_EQUAL(nm, (int)((n + 63) / 64));
    CU_ASSERT_EQUAL(sorted, 1);
    CU_ASSERT_EQUAL(marks[0].index, 0);
    CU_ASSERT_EQUAL(marks[0].prev_ts, 0);
    /* From each mark: exactly the events from its index on, same times. */
    for (int m = 0; m < nm; m += 5) {
        tally whole = {.from = marks[m].index}, tail = {0};
        CU_ASSERT_EQUAL(xpv_store_decode(blob, len, 0, 1, count, &whole, &err), 0);
        CU_ASSERT_EQUAL(xpv_store_decode_from(blob, len, 0, 1, &marks[m], count, &tail, &err), 0);
        CU_ASSERT_EQUAL(tail.n, n - marks[m].index);
        CU_ASSERT_EQUAL(tail.first_index, marks[m].index);
        CU_ASSERT_EQUAL(tail.sum_ts, whole.sum_ts);
    }
    xpv_store_mark bad = {(uint32_t)len + 5, 0, 0, 0};
    tally t = {0};
    CU_ASSERT_EQUAL(xpv_store_decode_from(blob, len, 0, 1, &bad, count, &t, &err), -1);
    sqlite3_finalize(st);
}

static void answer(double a, double b, int res, xpv_block_marks *marks, xpv_buf *out)
{
    xpv_events_query q = {.has_start = 1,
                          .has_end = 1,
                          .start_us = a,
                          .end_us = b,
                          .resolution = res,
                          .marks = marks};
    xpv_buf_reset(out);
    CU_ASSERT_EQUAL(xpv_api_events(db, PROFILE, &q, out), 200);
}

static void test_marks_do_not_change_answers(void)
{
    ensure_built();
    xpv_block_marks *marks = xpv_block_marks_new(1 << 20);
    CU_ASSERT(xpv_block_marks_warm(marks, db, PROFILE, NULL, NULL) > 0);
    xpv_buf with = {0}, without = {0};
    uint64_t seed = 12345;
    for (int i = 0; i < 200; i++) {
        seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
        double start = 900.0 + (double)(seed >> 40) / (double)(1 << 24) * 31000.0;
        double width = 0.05 * (double)(1 + (seed >> 20) % 200000) / 10.0;
        int res = 1 + (int)((seed >> 8) % 2000);
        answer(start, start + width, res, marks, &with);
        answer(start, start + width, res, NULL, &without);
        CU_ASSERT_EQUAL(with.len, without.len);
        if (with.len != without.len || memcmp(with.data, without.data, with.len) != 0) {
            CU_FAIL("answers differ with and without marks");
            break;
        }
    }
    /* A cache too small to hold anything still answers correctly. */
    xpv_block_marks *tiny = xpv_block_marks_new(16);
    answer(1000, 1500, 800, tiny, &with);
    answer(1000, 1500, 800, NULL, &without);
    CU_ASSERT_STRING_EQUAL(with.data, without.data);
    xpv_block_marks_free(tiny);
    xpv_buf_free(&with);
    xpv_buf_free(&without);
    xpv_block_marks_free(marks);
}

static void test_narrow_window_exact(void)
{
    ensure_built();
    /* [1010 µs, 1012 µs]; track 0 events start every 1000 ns. */
    xpv_buf out = {0};
    answer(1010.0, 1012.0, 2000, NULL, &out);
    /* Count the events of track 0 overlapping [1010000, 1012000] ns. */
    int expect = 0;
    for (int k = 0; k < N_SORTED; k++) {
        int64_t ts = 1000000 + (int64_t)k * 1000;
        int64_t dur = (k % 10 == 0) ? 5000 + k % 7 : 200 + k % 300;
        if (ts <= 1012000 && ts + dur >= 1010000) expect++;
    }
    const char *t0 = strstr(out.data, "{\"id\":0,");
    CU_ASSERT_PTR_NOT_NULL_FATAL(t0);
    const char *ev = strstr(t0, "\"events\":[");
    const char *spans = strstr(t0, "\"spans\":[");
    int got = 0; /* each event ends with its ref: "<block>:<index>"] */
    for (const char *p = strstr(ev, "\"]"); p && p < spans; p = strstr(p + 1, "\"]"))
        got++;
    CU_ASSERT_EQUAL(got, expect);
    CU_ASSERT_PTR_NOT_NULL(strstr(spans, "\"spans\":[]"));
    /* Nesting on track 2: the parent at depth 0, the child at depth 1. */
    answer(999.0, 1060.0, 2000, NULL, &out);
    const char *t2 = strstr(out.data, "{\"id\":2,");
    CU_ASSERT_PTR_NOT_NULL_FATAL(t2);
    CU_ASSERT_PTR_NOT_NULL(strstr(t2, "[1000,50,"));
    CU_ASSERT_PTR_NOT_NULL(strstr(t2, "[1001,20,"));
    const char *parent = strstr(t2, "[1000,50,"), *child = strstr(t2, "[1001,20,");
    CU_ASSERT(parent && strncmp(strchr(parent + 9, ',') + 1, "0,", 2) == 0);
    CU_ASSERT(child && strncmp(strchr(child + 9, ',') + 1, "1,", 2) == 0);
    xpv_buf_free(&out);
}

static void test_summaries_bounded(void)
{
    ensure_built();
    xpv_buf out = {0};
    for (int res = 1; res <= 1000; res *= 10) {
        answer(900, 32000, res, NULL, &out);
        /* each span is one JSON array of 5 numbers: count "]," pairs */
        for (int t = 0; t < 3; t++) {
            char key[32];
            snprintf(key, sizeof key, "{\"id\":%d,", t);
            const char *tr = strstr(out.data, key);
            if (!tr) continue;
            const char *spans = strstr(tr, "\"spans\":[");
            const char *end = strstr(spans, "]}");
            int n = 0;
            for (const char *p = spans + 9; p < end; p++)
                n += *p == '[';
            CU_ASSERT(n <= res);
        }
    }
    xpv_buf_free(&out);
}

static void test_bad_windows(void)
{
    ensure_built();
    xpv_buf out = {0};
    xpv_events_query q = {.has_start = 1, .has_end = 1, .start_us = 5, .end_us = 5};
    CU_ASSERT_EQUAL(xpv_api_events(db, PROFILE, &q, &out), 400);
    int64_t tracks[] = {99};
    xpv_events_query q2 = {.tracks = tracks, .ntracks = 1};
    xpv_buf_reset(&out);
    CU_ASSERT_EQUAL(xpv_api_events(db, PROFILE, &q2, &out), 400);
    xpv_buf_reset(&out);
    CU_ASSERT_EQUAL(xpv_api_events(db, 12345, &q2, &out), 404);
    xpv_buf_free(&out);
}

int main(void)
{
    static const xpv_test_case tests[] = {
        {"marks resume exactly", test_marks_resume_exactly},
        {"marks do not change answers", test_marks_do_not_change_answers},
        {"narrow window exact", test_narrow_window_exact},
        {"summaries bounded", test_summaries_bounded},
        {"bad windows", test_bad_windows},
        {NULL, NULL},
    };
    int rc = xpv_test_run("events_window", tests, 0);
    sqlite3_close(db);
    return rc;
}
