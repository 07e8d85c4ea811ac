/*
 * test_event_store.c — events written through a sink come back from the
 * event store exactly: times, durations (to the picosecond), names, args,
 * window queries, block headers, single-event lookup, and damage detection.
 */
#include "testutil.h"
#include "store/event_store.h"
#include "store/index_db.h"
#include "indexer/ingest.h"
#include "common/varint.h"

#include <stdio.h>
#include <string.h>

typedef struct {
    int64_t n, sum_ts, sum_dur, sum_ps;
    int args_ok;
    int64_t last_block;
    uint32_t last_index;
} tally;

static int count_visit(void *ctx, const xpv_event *ev, int64_t block_id, uint32_t index)
{
    tally *t = ctx;
    t->n++;
    t->sum_ts += ev->ts_ns;
    t->sum_dur += ev->dur_ns;
    t->sum_ps += ev->dur_ps;
    t->last_block = block_id;
    t->last_index = index;
    if (ev->nargs == 3 && ev->args[0].type == XPV_ARG_INT && ev->args[0].v.i == -ev->ts_ns &&
        ev->args[1].type == XPV_ARG_DOUBLE && ev->args[1].v.d == 0.5 &&
        ev->args[2].type == XPV_ARG_TEXT && ev->args[2].len == 5 &&
        memcmp(ev->args[2].text, "hello", 5) == 0)
        t->args_ok++;
    return 0;
}

static sqlite3 *fresh_index(void)
{
    return xpv_test_fresh_index(xpv_test_tmpdir(), 7);
}

/* 20000 events on 3 tracks with durations spanning many classes. */
static void write_events(sqlite3 *db)
{
    xpv_err err = {{0}};
    xpv_sink *s = xpv_sink_open(db, 7, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    uint32_t key_a = xpv_sink_intern_cstr(s, "a"), key_b = xpv_sink_intern_cstr(s, "b"),
             key_c = xpv_sink_intern_cstr(s, "c"), name = xpv_sink_intern_cstr(s, "kernel");
    for (int i = 0; i < 20000; i++) {
        xpv_event ev;
        xpv_event_init(&ev);
        ev.track = xpv_sink_track(s, 1, i % 3);
        ev.ts_ns = 1000000 + (int64_t)i * 100;
        ev.dur_ns = (i * 7919) % 100000;
        ev.dur_ps = ev.dur_ns * 1000 + (i % 1000);
        ev.name = name;
        xpv_arg args[3] = {{.key = key_a, .type = XPV_ARG_INT, .v.i = -ev.ts_ns},
                           {.key = key_b, .type = XPV_ARG_DOUBLE, .v.d = 0.5},
                           {.key = key_c, .type = XPV_ARG_TEXT, .text = "hello", .len = 5}};
        ev.args = args;
        ev.nargs = 3;
        xpv_sink_event(s, &ev);
    }
    xpv_sink_stats stats;
    CU_ASSERT_EQUAL(xpv_sink_finish(s, &stats, &err), 0);
    CU_ASSERT_EQUAL(stats.events, 20000);
    CU_ASSERT_EQUAL(stats.phase_counts['X'], 20000);
    xpv_sink_free(s);
}

static void test_round_trip(void)
{
    sqlite3 *db = fresh_index();
    write_events(db);
    xpv_store_query q;
    xpv_store_query_all(&q, 7);
    tally t = {0};
    xpv_err err = {{0}};
    CU_ASSERT_EQUAL(xpv_store_scan(db, &q, count_visit, &t, &err), 0);
    int64_t want_ts = 0, want_dur = 0, want_ps = 0;
    for (int i = 0; i < 20000; i++) {
        want_ts += 1000000 + (int64_t)i * 100;
        want_dur += (i * 7919) % 100000;
        want_ps += (int64_t)((i * 7919) % 100000) * 1000 + (i % 1000);
    }
    CU_ASSERT_EQUAL(t.n, 20000);
    CU_ASSERT_EQUAL(t.sum_ts, want_ts);
    CU_ASSERT_EQUAL(t.sum_dur, want_dur);
    CU_ASSERT_EQUAL(t.sum_ps, want_ps);
    CU_ASSERT_EQUAL(t.args_ok, 20000);
    sqlite3_close(db);
}

static void test_window_and_track(void)
{
    sqlite3 *db = fresh_index();
    write_events(db);
    xpv_store_query q;
    xpv_store_query_all(&q, 7);
    q.track = 0; /* pid 1 tid 0 was created first */
    q.t0 = 1000000 + 5000 * 100;
    q.t1 = 1000000 + 6000 * 100;
    tally t = {0};
    xpv_err err = {{0}};
    CU_ASSERT_EQUAL(xpv_store_scan(db, &q, count_visit, &t, &err), 0);
    int64_t want = 0;
    for (int i = 0; i < 20000; i += 3) {
        int64_t ts = 1000000 + (int64_t)i * 100, end = ts + (i * 7919) % 100000;
        if (ts <= q.t1 && end >= q.t0) want++;
    }
    CU_ASSERT_EQUAL(t.n, want);
    CU_ASSERT(want > 333);
    /* The last event seen can be fetched alone by its reference. */
    tally one = {0};
    CU_ASSERT_EQUAL(xpv_store_event_at(db, 7, t.last_block, t.last_index, count_visit, &one, &err),
                    0);
    CU_ASSERT_EQUAL(one.n, 1);
    CU_ASSERT_NOT_EQUAL(xpv_store_event_at(db, 7, t.last_block, 99999, count_visit, &one, &err), 0);
    sqlite3_close(db);
}

static int sum_blocks(void *ctx, const xpv_block_info *b)
{
    int64_t *n = ctx;
    *n += b->n;
    return 0;
}

static void test_block_headers(void)
{
    sqlite3 *db = fresh_index();
    write_events(db);
    xpv_store_query q;
    xpv_store_query_all(&q, 7);
    int64_t n = 0;
    xpv_err err = {{0}};
    CU_ASSERT_EQUAL(xpv_store_blocks(db, &q, sum_blocks, &n, &err), 0);
    CU_ASSERT_EQUAL(n, 20000);
    sqlite3_close(db);
}

typedef struct {
    int64_t n, with_args, wrong_kind;
} kind_tally;

static int kind_visit(void *ctx, const xpv_event *ev, int64_t block_id, uint32_t index)
{
    (void)block_id, (void)index;
    kind_tally *t = ctx;
    t->n++;
    t->with_args += ev->nargs > 0;
    t->wrong_kind += ev->kind != XPV_KIND_LAUNCH;
    return 0;
}

/* Kind filters skip blocks and events of other kinds; skip_args drops args. */
static void test_kind_filter_and_skip_args(void)
{
    sqlite3 *db = fresh_index();
    xpv_err err = {{0}};
    xpv_sink *s = xpv_sink_open(db, 7, &err);
    uint32_t key = xpv_sink_intern_cstr(s, "k");
    for (int i = 0; i < 3000; i++) {
        xpv_event ev;
        xpv_event_init(&ev);
        ev.track = xpv_sink_track(s, 1, i % 2); /* track 1 holds only launches */
        ev.ts_ns = i;
        ev.dur_ns = 10;
        ev.kind = (i % 2) ? XPV_KIND_LAUNCH : (i % 4 ? XPV_KIND_KERNEL : XPV_KIND_LAUNCH);
        xpv_arg a = {.key = key, .type = XPV_ARG_INT, .v.i = i};
        ev.args = &a;
        ev.nargs = 1;
        xpv_sink_event(s, &ev);
    }
    CU_ASSERT_EQUAL(xpv_sink_finish(s, NULL, &err), 0);
    xpv_sink_free(s);
    xpv_store_query q;
    xpv_store_query_all(&q, 7);
    q.kinds = XPV_KIND_BIT(XPV_KIND_LAUNCH);
    kind_tally t = {0};
    CU_ASSERT_EQUAL(xpv_store_scan(db, &q, kind_visit, &t, &err), 0);
    CU_ASSERT_EQUAL(t.n, 1500 + 750);
    CU_ASSERT_EQUAL(t.wrong_kind, 0);
    CU_ASSERT_EQUAL(t.with_args, t.n);
    q.skip_args = 1;
    kind_tally t2 = {0};
    CU_ASSERT_EQUAL(xpv_store_scan(db, &q, kind_visit, &t2, &err), 0);
    CU_ASSERT_EQUAL(t2.n, t.n);
    CU_ASSERT_EQUAL(t2.with_args, 0);
    q.kinds = XPV_KIND_BIT(XPV_KIND_MEMSET);
    kind_tally none = {0};
    CU_ASSERT_EQUAL(xpv_store_scan(db, &q, kind_visit, &none, &err), 0);
    CU_ASSERT_EQUAL(none.n, 0);
    sqlite3_close(db);
}

typedef struct {
    int n, counters, flows, other;
} ph_tally;

static int ph_visit(void *ctx, const xpv_event *ev, int64_t b, uint32_t i)
{
    ph_tally *t = ctx;
    (void)b, (void)i;
    t->n++;
    if (ev->ph == 'C') t->counters++;
    if (ev->ph == 's' || ev->ph == 'f') t->flows++;
    if (ev->ph == 'X' || ev->ph == 'i') t->other++;
    return 0;
}

/* Blocks say whether they hold counters or flow records: a query naming
 * XPV_BLOCK_COUNTERS / XPV_BLOCK_FLOWS reads only such blocks, and still
 * filters events by the kind bits alone. */
static void test_counter_and_flow_blocks(void)
{
    sqlite3 *db = fresh_index();
    xpv_err err = {{0}};
    xpv_sink *s = xpv_sink_open(db, 7, &err);
    uint32_t t_slices = xpv_sink_track(s, 1, 1), t_counters = xpv_sink_track(s, 1, 2),
             t_flows = xpv_sink_track(s, 1, 3), t_bound = xpv_sink_track(s, 1, 4);
    for (int i = 0; i < 300; i++) {
        xpv_event ev;
        xpv_event_init(&ev);
        ev.ts_ns = 1000 + i * 10;
        ev.track = i % 4 == 0 ? t_slices : i % 4 == 1 ? t_counters : i % 4 == 2 ? t_flows : t_bound;
        ev.ph = i % 4 == 1 ? 'C' : i % 4 == 2 ? (i % 8 == 2 ? 's' : 'f') : 'X';
        ev.dur_ns = ev.ph == 'X' ? 5 : -1;
        ev.flow = i % 4 == 3; /* a slice carrying bind_id: its block holds flows */
        xpv_sink_event(s, &ev);
    }
    CU_ASSERT_EQUAL(xpv_sink_finish(s, NULL, &err), 0);
    xpv_sink_free(s);
    xpv_store_query q;
    xpv_store_query_all(&q, 7);
    q.kinds = XPV_BLOCK_COUNTERS;
    ph_tally c = {0};
    CU_ASSERT_EQUAL(xpv_store_scan(db, &q, ph_visit, &c, &err), 0);
    CU_ASSERT_EQUAL(c.n, 75);
    CU_ASSERT_EQUAL(c.counters, 75);
    q.kinds = XPV_BLOCK_FLOWS;
    ph_tally f = {0};
    CU_ASSERT_EQUAL(xpv_store_scan(db, &q, ph_visit, &f, &err), 0);
    CU_ASSERT_EQUAL(f.flows, 75);
    CU_ASSERT_EQUAL(f.other, 75); /* the bound slices, none of the plain ones */
    CU_ASSERT_EQUAL(f.n, 150);
    sqlite3_close(db);
}

static int never(void *ctx, const xpv_event *ev, int64_t b, uint32_t i)
{
    (void)ctx, (void)ev, (void)b, (void)i;
    return 0;
}

static void test_damaged_block(void)
{
    unsigned char blob[] = {2, 5, 0, 'X', 1, 2}; /* says 5 events, holds part of one */
    xpv_err err = {{0}};
    CU_ASSERT_EQUAL(xpv_store_decode(blob, sizeof blob, 0, 1, never, NULL, &err), -1);
    CU_ASSERT(strstr(err.msg, "damaged") != NULL);
    /* One event (flags: args) whose args byte count runs past the blob, and
     * one whose count disagrees with the args it holds. */
    unsigned char past[] = {2, 1, 16, 'X', 1, 2, 1, 5, 1, 40, 1, 1, 2};
    CU_ASSERT_EQUAL(xpv_store_decode(past, sizeof past, 0, 1, never, NULL, &err), -1);
    unsigned char short_count[] = {2, 1, 16, 'X', 1, 2, 1, 5, 1, 1, 1, 1, 2};
    CU_ASSERT_EQUAL(xpv_store_decode(short_count, sizeof short_count, 0, 1, never, NULL, &err), -1);
    unsigned char good[] = {2, 1, 16, 'X', 1, 2, 1, 5, 1, 3, 1, 1, 2};
    CU_ASSERT_EQUAL(xpv_store_decode(good, sizeof good, 0, 1, never, NULL, &err), 0);
    unsigned char version[] = {9, 0};
    CU_ASSERT_EQUAL(xpv_store_decode(version, sizeof version, 0, 1, never, NULL, &err), -1);
}

/* The largest block of write_events' index, as stored. */
static xpv_buf largest_block(sqlite3 *db, int64_t *id, int64_t *n)
{
    sqlite3_stmt *st;
    xpv_buf b = {0};
    CU_ASSERT_EQUAL_FATAL(sqlite3_prepare_v2(db,
                                             "SELECT id, n, data FROM blocks ORDER BY n DESC,"
                                             " id LIMIT 1",
                                             -1, &st, NULL),
                          SQLITE_OK);
    CU_ASSERT_EQUAL_FATAL(sqlite3_step(st), SQLITE_ROW);
    *id = sqlite3_column_int64(st, 0);
    *n = sqlite3_column_int64(st, 1);
    xpv_buf_append(&b, sqlite3_column_blob(st, 2), (size_t)sqlite3_column_bytes(st, 2));
    sqlite3_finalize(st);
    return b;
}

static int decode_count(const xpv_buf *b, int64_t *n, xpv_err *err)
{
    tally t = {0};
    int rc = xpv_store_decode(b->data, b->len, 0, 1, count_visit, &t, err);
    *n = t.n;
    return rc;
}

static void store_blob(sqlite3 *db, int64_t id, const xpv_buf *b)
{
    sqlite3_stmt *st;
    CU_ASSERT_EQUAL_FATAL(
        sqlite3_prepare_v2(db, "UPDATE blocks SET data=?1 WHERE id=?2", -1, &st, NULL), SQLITE_OK);
    sqlite3_bind_blob(st, 1, b->data, (int)b->len, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, id);
    CU_ASSERT_EQUAL(sqlite3_step(st), SQLITE_DONE);
    sqlite3_finalize(st);
}

/* Blocks are stored compressed (version 3); every kind of damage to one is
 * an error naming the block, found no later than the damaged chunk. */
static void test_damaged_compressed_block(void)
{
    sqlite3 *db = fresh_index();
    write_events(db);
    int64_t id, n, got;
    xpv_buf good = largest_block(db, &id, &n);
    xpv_err err = {{0}};
    CU_ASSERT_EQUAL(good.data[0], 3);
    CU_ASSERT_EQUAL(decode_count(&good, &got, &err), 0);
    CU_ASSERT_EQUAL(got, n);
    xpv_buf bad = {0};
    /* A flipped byte in the middle of the compressed frame. */
    xpv_buf_append(&bad, good.data, good.len);
    bad.data[bad.len / 2] ^= 0x5a;
    CU_ASSERT_EQUAL(decode_count(&bad, &got, &err), -1);
    CU_ASSERT(strstr(err.msg, "damaged") != NULL);
    CU_ASSERT(got < n); /* chunks before the damaged one may have been read */
    xpv_store_mark marks[64];
    int sorted;
    CU_ASSERT_EQUAL(xpv_store_marks(bad.data, bad.len, 64, marks, 64, &sorted, &err), -1);
    /* The frame cut short. */
    xpv_buf_reset(&bad);
    xpv_buf_append(&bad, good.data, good.len - 9);
    CU_ASSERT_EQUAL(decode_count(&bad, &got, &err), -1);
    /* A payload size no block has (nothing that large is allocated). */
    unsigned char huge[] = {3, 1, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x28, 0xb5, 0x2f, 0xfd};
    CU_ASSERT_EQUAL(xpv_store_decode(huge, sizeof huge, 0, 1, never, NULL, &err), -1);
    CU_ASSERT(strstr(err.msg, "damaged") != NULL);
    /* Stored back, it fails the queries that read it, and only those. */
    xpv_buf_reset(&bad);
    xpv_buf_append(&bad, good.data, good.len);
    bad.data[bad.len - 3] ^= 0x01; /* inside the frame's checksum */
    store_blob(db, id, &bad);
    xpv_store_query q;
    xpv_store_query_all(&q, 7);
    tally t = {0};
    CU_ASSERT_EQUAL(xpv_store_scan(db, &q, count_visit, &t, &err), -1);
    CU_ASSERT(strstr(err.msg, "damaged") != NULL);
    CU_ASSERT_NOT_EQUAL(xpv_store_event_at(db, 7, id, (uint32_t)n - 1, count_visit, &t, &err), 0);
    int64_t blocks = 0;
    CU_ASSERT_EQUAL(xpv_store_blocks(db, &q, sum_blocks, &blocks, &err), 0);
    CU_ASSERT_EQUAL(blocks, 20000);
    xpv_buf_free(&bad);
    xpv_buf_free(&good);
    sqlite3_close(db);
}

/* A flipped byte in a stored block (the UPDATE a damaged disk amounts to)
 * is found by xpv_store_verify, which names the block; the message is one
 * xpv_store_damage_in recognises, and a profile with no block is sound. */
static void test_verify_finds_damage(void)
{
    sqlite3 *db = fresh_index();
    write_events(db);
    int64_t id, n;
    xpv_err err = {{0}};
    CU_ASSERT_EQUAL(xpv_store_verify(db, 7, NULL, &err), 0);
    CU_ASSERT_EQUAL(xpv_store_verify(db, 8, NULL, &err), 0); /* no blocks at all */
    xpv_buf good = largest_block(db, &id, &n), bad = {0};
    CU_ASSERT_EQUAL(good.data[0], 3);
    for (size_t at = 16; at < good.len; at += good.len / 5) {
        xpv_buf_reset(&bad);
        xpv_buf_append(&bad, good.data, good.len);
        bad.data[at] ^= 0xff;
        store_blob(db, id, &bad);
        err.msg[0] = 0;
        CU_ASSERT_EQUAL(xpv_store_verify(db, 7, NULL, &err), 1);
        char want[64];
        snprintf(want, sizeof want, "event block %lld is damaged", (long long)id);
        CU_ASSERT(strstr(err.msg, want) != NULL);
        CU_ASSERT(xpv_store_damage_in(err.msg));
    }
    /* A stop already requested checks nothing. */
    volatile int stop = 1;
    CU_ASSERT_EQUAL(xpv_store_verify(db, 7, &stop, &err), 0);
    store_blob(db, id, &good);
    CU_ASSERT_EQUAL(xpv_store_verify(db, 7, NULL, &err), 0);
    CU_ASSERT(xpv_store_damage_in("{\"error\":\"index: event block 12 is damaged (header)\"}"));
    CU_ASSERT(!xpv_store_damage_in("index: database disk image is malformed"));
    CU_ASSERT(!xpv_store_damage_in("the index is damaged"));
    CU_ASSERT(!xpv_store_damage_in(NULL));
    xpv_buf_free(&bad);
    xpv_buf_free(&good);
    sqlite3_close(db);
}

/* An uncompressed (version 2) block of the same payload reads the same,
 * and resume marks count payload bytes in both. */
static void test_raw_and_compressed_agree(void)
{
    sqlite3 *db = fresh_index();
    write_events(db);
    int64_t id, n;
    xpv_buf packed = largest_block(db, &id, &n), payload = {0}, raw = {0};
    xpv_err err = {{0}};
    CU_ASSERT_EQUAL_FATAL(xpv_store_payload(packed.data, packed.len, &payload, &err), 0);
    CU_ASSERT(packed.len * 2 < payload.len); /* it did compress */
    CU_ASSERT(payload.len > 2 * 32 * 1024);  /* into several chunks */
    unsigned char head[12] = {2}, *p = xpv_varint_put(head + 1, (uint64_t)n);
    xpv_buf_append(&raw, head, (size_t)(p - head));
    xpv_buf_append(&raw, payload.data, payload.len);
    xpv_store_mark mz[128], mr[128];
    int sz, sr;
    int nz = xpv_store_marks(packed.data, packed.len, 64, mz, 128, &sz, &err);
    int nr = xpv_store_marks(raw.data, raw.len, 64, mr, 128, &sr, &err);
    CU_ASSERT(nz > 2);
    CU_ASSERT_EQUAL(nz, nr);
    for (int i = 0; i < nz && i == nr; i++) {
        CU_ASSERT_EQUAL(mz[i].offset + (uint32_t)(p - head), mr[i].offset);
        tally a = {0}, b = {0};
        CU_ASSERT_EQUAL(
            xpv_store_decode_from(packed.data, packed.len, 0, 1, &mz[i], count_visit, &a, &err), 0);
        CU_ASSERT_EQUAL(
            xpv_store_decode_from(raw.data, raw.len, 0, 1, &mr[i], count_visit, &b, &err), 0);
        CU_ASSERT_EQUAL(a.n, n - mz[i].index);
        CU_ASSERT(a.n == b.n && a.sum_ts == b.sum_ts && a.sum_ps == b.sum_ps);
        CU_ASSERT_EQUAL(a.args_ok, b.args_ok);
    }
    xpv_buf_free(&packed);
    xpv_buf_free(&payload);
    xpv_buf_free(&raw);
    sqlite3_close(db);
}

static void test_lod_classes(void)
{
    CU_ASSERT_EQUAL(xpv_store_lod(-1), 0);
    CU_ASSERT_EQUAL(xpv_store_lod(0), 0);
    CU_ASSERT_EQUAL(xpv_store_lod(1), 1);
    CU_ASSERT_EQUAL(xpv_store_lod(1023), 10);
    CU_ASSERT_EQUAL(xpv_store_lod(1024), 11);
}

int main(void)
{
    static const xpv_test_case tests[] = {
        {"round trip through sink and store", test_round_trip},
        {"window and track queries, single lookup", test_window_and_track},
        {"block headers count every event", test_block_headers},
        {"damaged blocks are errors", test_damaged_block},
        {"damaged compressed blocks are errors", test_damaged_compressed_block},
        {"verify finds a damaged block", test_verify_finds_damage},
        {"raw and compressed blocks agree", test_raw_and_compressed_agree},
        {"duration classes", test_lod_classes},
        {"kind filter and skipped args", test_kind_filter_and_skip_args},
        {"counter and flow blocks", test_counter_and_flow_blocks},
        {NULL, NULL},
    };
    return xpv_test_run("event_store", tests, 0);
}
