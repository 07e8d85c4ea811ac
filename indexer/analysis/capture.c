/*
 * capture.c — the analysis's own compact copy of the events its finish
 * reads again: device work (kernels, copies, memsets, XLA ops), XLA module
 * executions and host launches, without args or categories.
 *
 * Why: finish scans these events several times (launch join, step
 * breakdown). Read back through the store they cost a SQLite read and a
 * full block decode each, and the pages they pull in push the writer's
 * dirty pages out of SQLite's cache mid-transaction. Kept here, a scan is a
 * walk over a few bytes per event in memory.
 *
 * Layout: per track, a byte string of events in arrival order, each
 *   u8 kind | 0x80 when corr >= 0 | 0x40 when there is a ps remainder,
 *   zigzag(ts - previous ts), varint(dur_ns + 1), varint(name),
 *   [zigzag(corr - previous corr)], [zigzag(dur_ps - dur_ns * 1000)]
 * (typically 9-12 bytes), cut into segments of SEG_EVENTS events whose
 * earliest start and latest end let a time-window scan skip them.
 *
 * Invariant: a capture either holds every event of the captured kinds seen
 * so far, or (past its byte limit) nothing, and says so: xpv_capture_covers
 * is then 0 and callers read the store instead, whose answers are the same.
 *
 * Also here, the other read of the input: whether a string id spells one
 * of a few names, remembered per id.
 */
#include "analysis_internal.h"
#include "../../common/varint.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#define SEG_EVENTS 4096
#define EVENT_MAX_BYTES (1 + 5 * XPV_VARINT_MAX)

void xpv_capture_init(xpv_capture *c, size_t limit)
{
    memset(c, 0, sizeof *c);
    c->limit = limit;
    c->overflowed = limit == 0;
}

void xpv_capture_free(xpv_capture *c)
{
    for (size_t t = 0; t < c->ntracks; t++) {
        free(c->t[t].buf);
        free(c->t[t].seg);
    }
    free(c->t);
    c->t = NULL;
    c->ntracks = 0;
    c->bytes = 0;
}

static void overflow(xpv_capture *c)
{
    xpv_capture_free(c);
    c->overflowed = 1;
}

static xpv_capture_track *track_of(xpv_capture *c, uint32_t track)
{
    c->t = xpv_grow_to_index(c->t, &c->ntracks, track, sizeof *c->t, 0);
    return &c->t[track];
}

/* Grows *p (of *cap elements of size sz) to hold `need`, counting the bytes. */
static int grow(xpv_capture *c, void **p, size_t *cap, size_t need, size_t sz)
{
    assert(need > *cap);
    size_t n = *cap ? *cap * 2 : (sz == 1 ? 4096 : 8);
    while (n < need)
        n *= 2;
    if (c->bytes + (n - *cap) * sz > c->limit) return -1;
    *p = xpv_xrealloc(*p, n * sz);
    c->bytes += (n - *cap) * sz;
    *cap = n;
    return 0;
}

static int start_segment(xpv_capture *c, xpv_capture_track *t)
{
    if (t->nseg == t->cap_seg &&
        grow(c, (void **)&t->seg, &t->cap_seg, t->nseg + 1, sizeof *t->seg) != 0)
        return -1;
    t->seg[t->nseg++] = (xpv_capture_seg){.offset = t->len,
                                          .prev_ts = t->prev_ts,
                                          .prev_corr = t->prev_corr,
                                          .t_min = INT64_MAX,
                                          .t_max = INT64_MIN};
    return 0;
}

void xpv_capture_add(xpv_capture *c, const xpv_event *ev)
{
    if (c->overflowed || !(XPV_CAPTURE_KINDS & XPV_KIND_BIT(ev->kind))) return;
    xpv_capture_track *t = track_of(c, ev->track);
    if ((t->nseg == 0 || t->seg[t->nseg - 1].n == SEG_EVENTS) && start_segment(c, t) != 0)
        return overflow(c);
    if (t->len + EVENT_MAX_BYTES > t->cap &&
        grow(c, (void **)&t->buf, &t->cap, t->len + EVENT_MAX_BYTES, 1) != 0)
        return overflow(c);
    int64_t dur_ns = ev->dur_ns < 0 ? -1 : ev->dur_ns;
    int64_t psrem = dur_ns >= 0 ? ev->dur_ps - dur_ns * 1000 : 0;
    unsigned char *p = t->buf + t->len;
    *p++ = (unsigned char)(ev->kind | (ev->corr >= 0 ? 0x80 : 0) | (psrem ? 0x40 : 0));
    p = xpv_zigzag_put(p, ev->ts_ns - t->prev_ts);
    p = xpv_varint_put(p, (uint64_t)(dur_ns + 1));
    p = xpv_varint_put(p, ev->name);
    if (ev->corr >= 0) {
        p = xpv_zigzag_put(p, ev->corr - t->prev_corr);
        t->prev_corr = ev->corr;
    }
    if (psrem) p = xpv_zigzag_put(p, psrem);
    t->len = (size_t)(p - t->buf);
    t->prev_ts = ev->ts_ns;
    xpv_capture_seg *s = &t->seg[t->nseg - 1];
    int64_t end = dur_ns > 0 ? xpv_sat_add_i64(ev->ts_ns, dur_ns) : ev->ts_ns;
    if (ev->ts_ns < s->t_min) s->t_min = ev->ts_ns;
    if (end > s->t_max) s->t_max = end;
    s->n++;
}

int xpv_capture_covers(const xpv_capture *c, const xpv_store_query *q)
{
    return !c->overflowed && q->kinds && !(q->kinds & ~XPV_CAPTURE_KINDS) && q->skip_args &&
           q->lod_min <= 0 && q->lod_max >= XPV_LOD_COUNT - 1;
}

/* Decodes segment s of track t, visiting the events q asks for. */
static int scan_segment(const xpv_capture_track *t, const xpv_capture_seg *s, uint32_t track,
                        const xpv_store_query *q, xpv_store_visit fn, void *ctx)
{
    xpv_varint_reader r = {t->buf + s->offset, t->buf + t->len, 0};
    int64_t ts = s->prev_ts, corr = s->prev_corr;
    xpv_event ev; /* visitors only read it: the fields set below are all that change */
    xpv_event_init(&ev);
    ev.track = track;
    for (uint32_t i = 0; i < s->n; i++) {
        unsigned head = xpv_varint_u8(&r);
        ev.kind = (uint8_t)(head & 0x3F);
        ts += xpv_zigzag_get(&r);
        ev.ts_ns = ts;
        ev.dur_ns = (int64_t)xpv_varint_get(&r) - 1;
        ev.dur_ps = ev.dur_ns >= 0 ? ev.dur_ns * 1000 : -1;
        ev.name = (uint32_t)xpv_varint_get(&r);
        ev.corr = head & 0x80 ? (corr += xpv_zigzag_get(&r)) : -1;
        if (head & 0x40) ev.dur_ps += xpv_zigzag_get(&r);
        assert(!r.bad); /* written by xpv_capture_add in this process */
        if (!(q->kinds & XPV_KIND_BIT(ev.kind))) continue;
        int64_t end = ev.dur_ns > 0 ? xpv_sat_add_i64(ev.ts_ns, ev.dur_ns) : ev.ts_ns;
        if (ev.ts_ns > q->t1 || end < q->t0) continue;
        int rc = fn(ctx, &ev, -1, i);
        if (rc) return rc;
    }
    return 0;
}

int xpv_capture_scan(const xpv_capture *c, const xpv_store_query *q, xpv_store_visit fn, void *ctx)
{
    return xpv_capture_scan_part(c, q, 0, 1, fn, ctx);
}

int xpv_capture_scan_part(const xpv_capture *c, const xpv_store_query *q, unsigned part,
                          unsigned nparts, xpv_store_visit fn, void *ctx)
{
    assert(xpv_capture_covers(c, q) && part < nparts);
    size_t t0 = q->track >= 0 ? (size_t)q->track : 0;
    size_t t1 = q->track >= 0 ? (size_t)q->track + 1 : c->ntracks;
    for (size_t ti = t0; ti < t1 && ti < c->ntracks; ti++) {
        const xpv_capture_track *t = &c->t[ti];
        size_t k0 = t->nseg * part / nparts, k1 = t->nseg * (part + 1) / nparts;
        for (size_t k = k0; k < k1; k++) {
            const xpv_capture_seg *s = &t->seg[k];
            if (s->t_min > q->t1 || s->t_max < q->t0) continue;
            int rc = scan_segment(t, s, (uint32_t)ti, q, fn, ctx);
            if (rc) return rc;
        }
    }
    return 0;
}

uint64_t xpv_capture_events(const xpv_capture *c, size_t t)
{
    uint64_t n = 0;
    for (size_t k = 0; t < c->ntracks && k < c->t[t].nseg; k++)
        n += c->t[t].seg[k].n;
    return n;
}

int xpv_analysis_scan(const xpv_analysis_input *in, const xpv_store_query *q, xpv_store_visit fn,
                      void *ctx, xpv_err *err)
{
    if (in->capture && xpv_capture_covers(in->capture, q))
        return xpv_capture_scan(in->capture, q, fn, ctx);
    if (!in->db) /* a finish thread that must leave SQLite to the other one */
        return xpv_err_set(err, "analysis: a scan the capture cannot answer, without the store");
    return xpv_store_scan(in->db, q, fn, ctx, err);
}

int xpv_analysis_string_is(const xpv_analysis_input *in, xpv_hindex *memo, uint32_t id,
                           const char *const *names)
{
    uint64_t *v = xpv_hindex_get(memo, id);
    if (v) return (int)*v;
    size_t len;
    const char *s = in->string(in->string_ctx, id, &len);
    int yes = 0;
    for (; *names && !yes; names++)
        yes = strlen(*names) == len && memcmp(s, *names, len) == 0;
    xpv_hindex_put(memo, id, (uint64_t)yes);
    return yes;
}

/* ---- spans: the CPU op candidates of launches.c ---- */

void xpv_spans_init(xpv_spans *s, size_t limit)
{
    memset(s, 0, sizeof *s);
    s->limit = limit;
    s->overflowed = limit == 0;
}

void xpv_spans_free(xpv_spans *s)
{
    for (size_t t = 0; t < s->ntracks; t++)
        free(s->t[t].buf);
    free(s->t);
    s->t = NULL;
    s->ntracks = 0;
    s->bytes = 0;
}

void xpv_spans_add(xpv_spans *s, const xpv_event *ev)
{
    assert(xpv_spans_wants(ev)); /* the caller asks first, inline */
    if (s->overflowed) return;
    s->t = xpv_grow_to_index(s->t, &s->ntracks, ev->track, sizeof *s->t, 0);
    xpv_span_track *t = &s->t[ev->track];
    if (t->len + 4 * XPV_VARINT_MAX > t->cap) {
        size_t n = t->cap ? t->cap * 2 : 4096;
        if (s->bytes + (n - t->cap) > s->limit) {
            xpv_spans_free(s);
            s->overflowed = 1;
            return;
        }
        t->buf = xpv_xrealloc(t->buf, n);
        s->bytes += n - t->cap;
        t->cap = n;
    }
    unsigned char *p = t->buf + t->len;
    p = xpv_zigzag_put(p, ev->ts_ns - t->prev_ts);
    p = xpv_varint_put(p, (uint64_t)ev->dur_ns);
    p = xpv_varint_put(p, ev->name);
    p = xpv_varint_put(p, ev->cat);
    t->len = (size_t)(p - t->buf);
    t->prev_ts = ev->ts_ns;
}

int xpv_spans_scan(const xpv_spans *s, uint32_t track, xpv_store_visit fn, void *ctx)
{
    assert(!s->overflowed);
    /* a track without spans has no buffer: no reader over a null one */
    if (track >= s->ntracks || s->t[track].len == 0) return 0;
    const xpv_span_track *t = &s->t[track];
    xpv_varint_reader r = {t->buf, t->buf + t->len, 0};
    int64_t ts = 0;
    xpv_event ev;
    xpv_event_init(&ev);
    ev.track = track;
    ev.kind = XPV_KIND_OTHER;
    for (uint32_t i = 0; r.p < r.end; i++) {
        ts += xpv_zigzag_get(&r);
        ev.ts_ns = ts;
        ev.dur_ns = (int64_t)xpv_varint_get(&r);
        ev.dur_ps = ev.dur_ns * 1000;
        ev.name = (uint32_t)xpv_varint_get(&r);
        ev.cat = (uint32_t)xpv_varint_get(&r);
        assert(!r.bad); /* written by xpv_spans_add in this process */
        int rc = fn(ctx, &ev, -1, i);
        if (rc) return rc;
    }
    return 0;
}
