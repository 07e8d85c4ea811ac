/*
 * test_capture.c — the analysis's in-memory capture (capture.c) gives back
 * exactly the events a store scan would: same fields, every window and kind
 * filter, across segments, with odd values (negative deltas, no duration,
 * ps remainders, ids going backwards); and past its limit it holds nothing
 * and answers nothing.
 */
#include "testutil.h"
#include "indexer/analysis/analysis_internal.h"

#include <stdlib.h>
#include <string.h>

static uint64_t rng = 0x2545F4914F6CDD1DULL;

static uint64_t next(void)
{
    return xpv_test_xorshift(&rng);
}

static const uint8_t KINDS[] = {XPV_KIND_KERNEL, XPV_KIND_MEMCPY_H2D, XPV_KIND_MEMSET,
                                XPV_KIND_XLA_OP, XPV_KIND_LAUNCH,     XPV_KIND_XLA_MODULE,
                                XPV_KIND_OTHER,  XPV_KIND_STEP,       XPV_KIND_MEMCPY_OTHER};

static xpv_event random_event(uint32_t ntracks, int64_t *clock)
{
    xpv_event ev;
    xpv_event_init(&ev);
    ev.track = (uint32_t)(next() % ntracks);
    ev.kind = KINDS[next() % sizeof KINDS];
    *clock += (int64_t)(next() % 5000) - 1000; /* mostly forward, sometimes back */
    ev.ts_ns = *clock;
    switch (next() % 4) {
    case 0: /* no duration */
        break;
    case 1: /* whole ns */
        ev.dur_ns = (int64_t)(next() % 100000);
        ev.dur_ps = ev.dur_ns * 1000;
        break;
    default: /* exact ps with a remainder */
        ev.dur_ps = (int64_t)(next() % 100000000);
        ev.dur_ns = ev.dur_ps / 1000;
    }
    ev.name = (uint32_t)(next() % 70000);
    if (next() % 3) ev.corr = (int64_t)(next() % 1000000);
    return ev;
}

typedef struct {
    xpv_event *v;
    size_t n, cap;
} event_list;

static int collect(void *ctx, const xpv_event *ev, int64_t block_id, uint32_t index)
{
    (void)block_id, (void)index;
    event_list *l = ctx;
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 256;
        l->v = xpv_xrealloc(l->v, l->cap * sizeof *l->v);
    }
    l->v[l->n++] = *ev;
    return 0;
}

/* What a store scan visits for q, per track in arrival order. */
static int wanted(const xpv_store_query *q, const xpv_event *ev)
{
    if (q->track >= 0 && ev->track != (uint32_t)q->track) return 0;
    if (!(q->kinds & XPV_KIND_BIT(ev->kind))) return 0;
    int64_t end = ev->ts_ns + (ev->dur_ns > 0 ? ev->dur_ns : 0);
    return ev->ts_ns <= q->t1 && end >= q->t0;
}

static int same_event(const xpv_event *a, const xpv_event *b)
{
    return a->ts_ns == b->ts_ns && a->dur_ns == b->dur_ns && a->dur_ps == b->dur_ps &&
           a->name == b->name && a->kind == b->kind && a->corr == b->corr && a->track == b->track;
}

static void check_query(const xpv_capture *c, const xpv_event *all, size_t n, uint32_t ntracks,
                        const xpv_store_query *q)
{
    CU_ASSERT_TRUE_FATAL(xpv_capture_covers(c, q));
    event_list got = {0};
    CU_ASSERT_EQUAL(xpv_capture_scan(c, q, collect, &got), 0);
    size_t k = 0, bad = 0;
    for (uint32_t t = 0; t < ntracks; t++)
        for (size_t i = 0; i < n; i++) {
            if (all[i].track != t || !(XPV_CAPTURE_KINDS & XPV_KIND_BIT(all[i].kind))) continue;
            if (!wanted(q, &all[i])) continue;
            if (k >= got.n || !same_event(&got.v[k], &all[i])) bad++;
            k++;
        }
    CU_ASSERT_EQUAL(bad, 0);
    CU_ASSERT_EQUAL(got.n, k);
    free(got.v);
}

static void test_scans_match_brute_force(void)
{
    enum { N = 30000, TRACKS = 5 };
    xpv_event *all = xpv_xmalloc(N * sizeof *all);
    xpv_capture c;
    xpv_capture_init(&c, 64u << 20);
    int64_t clock = 1700000000000000000LL; /* epoch ns, as JAX writes them */
    for (size_t i = 0; i < N; i++) {
        all[i] = random_event(TRACKS, &clock);
        xpv_capture_add(&c, &all[i]);
    }
    CU_ASSERT_FALSE(c.overflowed);
    xpv_store_query q;
    xpv_store_query_all(&q, 1);
    q.skip_args = 1;
    q.kinds = XPV_CAPTURE_KINDS;
    check_query(&c, all, N, TRACKS, &q);
    for (int round = 0; round < 40; round++) {
        q.track = round % 3 ? (int64_t)(next() % TRACKS) : -1;
        q.kinds = (uint32_t)(next() & XPV_CAPTURE_KINDS);
        if (!q.kinds) q.kinds = XPV_KIND_BIT(XPV_KIND_KERNEL);
        int64_t a = all[next() % N].ts_ns, b = all[next() % N].ts_ns;
        q.t0 = a < b ? a : b;
        q.t1 = a < b ? b : a;
        check_query(&c, all, N, TRACKS, &q);
    }
    xpv_capture_free(&c);
    free(all);
}

/* Queries the capture cannot answer go to the store. */
static void test_covers_only_what_it_holds(void)
{
    xpv_capture c;
    xpv_capture_init(&c, 1u << 20);
    xpv_store_query q;
    xpv_store_query_all(&q, 1);
    q.kinds = XPV_KIND_BIT(XPV_KIND_LAUNCH);
    CU_ASSERT_FALSE(xpv_capture_covers(&c, &q)); /* args wanted */
    q.skip_args = 1;
    CU_ASSERT_TRUE(xpv_capture_covers(&c, &q));
    q.kinds |= XPV_KIND_BIT(XPV_KIND_OTHER);
    CU_ASSERT_FALSE(xpv_capture_covers(&c, &q)); /* a kind it does not keep */
    q.kinds = 0;
    CU_ASSERT_FALSE(xpv_capture_covers(&c, &q)); /* every kind */
    q.kinds = XPV_KIND_BIT(XPV_KIND_KERNEL);
    q.lod_min = 3;
    CU_ASSERT_FALSE(xpv_capture_covers(&c, &q)); /* duration classes */
    xpv_capture_free(&c);
    xpv_capture_init(&c, 0); /* capture turned off */
    q.lod_min = 0;
    CU_ASSERT_FALSE(xpv_capture_covers(&c, &q));
    xpv_capture_free(&c);
}

static void test_overflow_drops_everything(void)
{
    xpv_capture c;
    xpv_capture_init(&c, 64 * 1024);
    int64_t clock = 0;
    size_t added = 0;
    while (!c.overflowed && added < 1000000) {
        xpv_event ev = random_event(3, &clock);
        ev.kind = XPV_KIND_KERNEL;
        xpv_capture_add(&c, &ev);
        added++;
        CU_ASSERT(c.bytes <= 64 * 1024);
    }
    CU_ASSERT_TRUE(c.overflowed);
    CU_ASSERT_EQUAL(c.bytes, 0);
    CU_ASSERT_PTR_NULL(c.t);
    xpv_store_query q;
    xpv_store_query_all(&q, 1);
    q.kinds = XPV_KIND_BIT(XPV_KIND_KERNEL);
    q.skip_args = 1;
    CU_ASSERT_FALSE(xpv_capture_covers(&c, &q));
    xpv_capture_free(&c);
}

int main(void)
{
    static const xpv_test_case tests[] = {
        {"scans equal brute force over every window and kind", test_scans_match_brute_force},
        {"covers only what it holds", test_covers_only_what_it_holds},
        {"past its limit it holds and covers nothing", test_overflow_drops_everything},
        {NULL, NULL},
    };
    return xpv_test_run("capture", tests, 0);
}
