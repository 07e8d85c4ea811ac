/*
 * flows.c — the events linked to one event, found in the event store.
 *
 * Links, with the direction seen from the selected event:
 *  - correlation: a kernel, memcpy or memset comes "in" from the host
 *    launch with its correlation id; a launch goes "out" to that device
 *    work;
 *  - Chrome flow records (ph s, t, f): a record binds to the innermost slice
 *    of its thread that encloses it (the record itself when none does); a
 *    slice's records chain, by id and category, to the nearest record
 *    before (in) and after (out);
 *  - bind_id: a slice with flow_out goes out to the slices with the same
 *    bind_id and flow_in (and the reverse);
 *  - the xplane `flow` stat: events with the same flow id (stat >> 8),
 *    direction from the stat's low two bits (1 in, 2 out), else from time.
 * Links are unique by event; latency_us is the start of the event the link
 * goes to minus the start of the one it comes from.
 *
 * No table indexes these ids: each partner is searched for in widening
 * windows around the event (1 ms, then x16 each round, up to the profile's
 * span), reading only blocks that hold the kinds sought (launches, device
 * work, or XPV_BLOCK_FLOWS). Device work starts after its launch, so a
 * launch's work is sought only after it and a kernel's launch only before
 * it (with 1 ms of slack for clock skew). Launches and their work are
 * microseconds to milliseconds apart, so the first rounds find them; a link
 * that does not exist costs one scan of those blocks over the part of the
 * profile on that side.
 */
#include "flows.h"

#include <stdlib.h>
#include <string.h>

#define MAX_LINKS 64
#define MAX_POINTS 32
#define FIRST_RADIUS_NS 1000000

typedef struct {
    int64_t block;
    uint32_t index;
    int64_t ts, dur;
    uint32_t track, name, cat;
    char ph;
    int out;
    const char *via;
} link;

/* A flow record's id (Chrome `id`, or bind_id): a number or an interned string. */
typedef struct {
    int set, is_str;
    int64_t v;
} flow_id;

typedef struct {
    sqlite3 *db;
    int64_t profile_id;
    int64_t span_a, span_b;
    xpv_api_strings *strings;
    const xpv_flow_source *src;
    link links[MAX_LINKS];
    size_t nlinks;
} flows;

static int key_is(xpv_api_strings *s, uint32_t key, const char *want)
{
    size_t len;
    const char *k = xpv_api_string(s, key, &len);
    return len == strlen(want) && memcmp(k, want, len) == 0;
}

static flow_id id_of(const xpv_arg *a)
{
    flow_id f = {1, 0, 0};
    if (a->type == XPV_ARG_INT)
        f.v = a->v.i;
    else if (a->type == XPV_ARG_UINT)
        f.v = (int64_t)a->v.u;
    else if (a->type == XPV_ARG_DOUBLE)
        f.v = (int64_t)a->v.d;
    else if (a->type == XPV_ARG_STR)
        f.is_str = 1, f.v = a->v.str;
    else
        f.set = 0;
    return f;
}

static int is_true(const xpv_arg *a)
{
    return (a->type == XPV_ARG_JSON && a->len == 4 && memcmp(a->text, "true", 4) == 0) ||
           (a->type == XPV_ARG_INT && a->v.i != 0) || (a->type == XPV_ARG_UINT && a->v.u != 0);
}

void xpv_flow_source_note(xpv_flow_source *src, const xpv_event *ev, int64_t block, uint32_t index,
                          xpv_api_strings *strings)
{
    memset(src, 0, sizeof *src);
    *src = (xpv_flow_source){.block = block,
                             .index = index,
                             .ts = ev->ts_ns,
                             .dur = ev->dur_ns,
                             .track = ev->track,
                             .cat = ev->cat,
                             .kind = ev->kind,
                             .ph = ev->ph,
                             .corr = ev->corr};
    for (uint32_t i = 0; i < ev->nargs; i++) {
        const xpv_arg *a = &ev->args[i];
        if (key_is(strings, a->key, "bind_id")) {
            flow_id f = id_of(a);
            src->has_bind = f.set, src->bind_str = f.is_str, src->bind = f.v;
        } else if (key_is(strings, a->key, "flow_in")) {
            src->flow_in = is_true(a);
        } else if (key_is(strings, a->key, "flow_out")) {
            src->flow_out = is_true(a);
        } else if (key_is(strings, a->key, "flow") &&
                   (a->type == XPV_ARG_UINT || a->type == XPV_ARG_INT)) {
            src->has_xflow = 1;
            src->xflow = a->type == XPV_ARG_UINT ? a->v.u : (uint64_t)a->v.i;
        }
    }
}

static link link_of(const xpv_event *ev, int64_t block, uint32_t index)
{
    return (link){block, index, ev->ts_ns, ev->dur_ns, ev->track, ev->name, ev->cat, ev->ph, 0, ""};
}

static void add_link(flows *f, link l, int out, const char *via)
{
    if (l.block == f->src->block && l.index == f->src->index) return;
    for (size_t i = 0; i < f->nlinks; i++)
        if (f->links[i].block == l.block && f->links[i].index == l.index) return;
    if (f->nlinks == MAX_LINKS) return;
    l.out = out;
    l.via = via;
    f->links[f->nlinks++] = l;
}

/* ---- searching near a time ---- */

typedef struct {
    link found[MAX_LINKS];
    size_t n;
    int64_t center;
    void *want; /* what the visitor matches */
} hits;

static void hit(hits *h, const xpv_event *ev, int64_t block, uint32_t index)
{
    if (h->n < MAX_LINKS) h->found[h->n++] = link_of(ev, block, index);
}

/* Scans windows widening around center until fn has hit something or the
 * window reaches the profile's ends. side -1: only before center, +1: only
 * after (each with FIRST_RADIUS_NS of slack), 0: both. track -1: every track. */
static int search_near(flows *f, int64_t track, int64_t center, int side, uint32_t kinds,
                       int need_args, xpv_store_visit fn, hits *h, xpv_err *err)
{
    xpv_store_query q;
    xpv_store_query_all(&q, f->profile_id);
    q.track = track;
    q.kinds = kinds;
    q.skip_args = !need_args;
    h->center = center;
    for (int64_t r = FIRST_RADIUS_NS;; r = r > INT64_MAX / 16 ? INT64_MAX : r * 16) {
        h->n = 0;
        int64_t back = side > 0 ? FIRST_RADIUS_NS : r, ahead = side < 0 ? FIRST_RADIUS_NS : r;
        q.t0 = center > INT64_MIN + back ? center - back : INT64_MIN;
        q.t1 = center < INT64_MAX - ahead ? center + ahead : INT64_MAX;
        int rc = xpv_store_scan(f->db, &q, fn, h, err);
        if (rc < 0) return -1;
        int past_a = side > 0 || q.t0 <= f->span_a, past_b = side < 0 || q.t1 >= f->span_b;
        if (h->n || r == INT64_MAX || (past_a && past_b)) return 0;
    }
}

/* ---- correlation ids ---- */

static int same_corr(void *ctx, const xpv_event *ev, int64_t block, uint32_t index)
{
    hits *h = ctx;
    if (ev->corr == *(const int64_t *)h->want) hit(h, ev, block, index);
    return 0;
}

static int correlation_links(flows *f, xpv_err *err)
{
    const xpv_flow_source *s = f->src;
    int device = s->kind < 32 && (XPV_KIND_DEVICE_WORK_BITS & XPV_KIND_BIT(s->kind));
    if (s->corr < 0 || (!device && s->kind != XPV_KIND_LAUNCH)) return 0;
    hits *h = xpv_xcalloc(1, sizeof *h);
    h->want = (void *)&s->corr;
    uint32_t kinds = device ? XPV_KIND_BIT(XPV_KIND_LAUNCH) : XPV_KIND_DEVICE_WORK_BITS;
    int rc = search_near(f, -1, s->ts, device ? -1 : 1, kinds, 0, same_corr, h, err);
    for (size_t i = 0; rc == 0 && i < h->n; i++)
        add_link(f, h->found[i], !device, "correlation");
    free(h);
    return rc;
}

/* ---- Chrome flow records ---- */

static int is_point(char ph)
{
    return ph == 's' || ph == 't' || ph == 'f';
}

/* The innermost slice of the track enclosing t (a record binds to it). */
typedef struct {
    int64_t t;
    int found;
    link best;
} enclosing;

static int visit_enclosing(void *ctx, const xpv_event *ev, int64_t block, uint32_t index)
{
    enclosing *e = ctx;
    if (ev->dur_ns < 0 || is_point(ev->ph) || ev->ph == 'C') return 0;
    if (ev->ts_ns > e->t || ev->ts_ns + ev->dur_ns < e->t) return 0;
    if (e->found &&
        (ev->dur_ns > e->best.dur || (ev->dur_ns == e->best.dur && ev->ts_ns <= e->best.ts)))
        return 0;
    e->found = 1;
    e->best = link_of(ev, block, index);
    return 0;
}

static int bind_point(flows *f, const link *point, link *slice, xpv_err *err)
{
    xpv_store_query q;
    xpv_store_query_all(&q, f->profile_id);
    q.track = point->track;
    q.t0 = q.t1 = point->ts;
    q.skip_args = 1;
    enclosing e = {point->ts, 0, {0}};
    if (xpv_store_scan(f->db, &q, visit_enclosing, &e, err) < 0) return -1;
    *slice = e.found ? e.best : *point;
    return 0;
}

typedef struct {
    flow_id id;
    uint32_t cat;
    int64_t block;
    uint32_t index;
} point_want;

static flow_id point_id(flows *f, const xpv_event *ev)
{
    for (uint32_t i = 0; i < ev->nargs; i++)
        if (key_is(f->strings, ev->args[i].key, "id")) return id_of(&ev->args[i]);
    return (flow_id){0, 0, 0};
}

typedef struct {
    flows *f;
    point_want w;
    link prev, next; /* nearest matching records before and after */
    int has_prev, has_next;
    size_t n;
} chain;

static int visit_chain(void *ctx, const xpv_event *ev, int64_t block, uint32_t index)
{
    hits *h = ctx;
    chain *c = h->want;
    if (!is_point(ev->ph) || ev->cat != c->w.cat) return 0;
    if (block == c->w.block && index == c->w.index) return 0;
    flow_id id = point_id(c->f, ev);
    if (!id.set || id.is_str != c->w.id.is_str || id.v != c->w.id.v) return 0;
    link l = link_of(ev, block, index);
    if (ev->ts_ns <= h->center && (!c->has_prev || ev->ts_ns > c->prev.ts))
        c->prev = l, c->has_prev = 1;
    if (ev->ts_ns >= h->center && (!c->has_next || ev->ts_ns < c->next.ts))
        c->next = l, c->has_next = 1;
    hit(h, ev, block, index);
    return 0;
}

/* Links one of the selected slice's records to its neighbours in the chain. */
static int chain_links(flows *f, const link *point, flow_id id, xpv_err *err)
{
    hits *h = xpv_xcalloc(1, sizeof *h);
    chain c = {f, {id, point->cat, point->block, point->index}, {0}, {0}, 0, 0, 0};
    h->want = &c;
    int rc = search_near(f, -1, point->ts, 0, XPV_BLOCK_FLOWS, 1, visit_chain, h, err);
    link slice;
    if (rc == 0 && c.has_prev && point->ph != 's' && c.prev.ph != 'f') {
        rc = bind_point(f, &c.prev, &slice, err);
        if (rc == 0) add_link(f, slice, 0, "flow");
    }
    if (rc == 0 && c.has_next && point->ph != 'f' && c.next.ph != 's') {
        rc = bind_point(f, &c.next, &slice, err);
        if (rc == 0) add_link(f, slice, 1, "flow");
    }
    free(h);
    return rc;
}

typedef struct {
    flows *f;
    link points[MAX_POINTS];
    flow_id ids[MAX_POINTS];
    size_t n;
} own_points;

static int visit_own_point(void *ctx, const xpv_event *ev, int64_t block, uint32_t index)
{
    own_points *o = ctx;
    if (!is_point(ev->ph) || o->n == MAX_POINTS) return 0;
    flow_id id = point_id(o->f, ev);
    if (!id.set) return 0;
    o->ids[o->n] = id;
    o->points[o->n++] = link_of(ev, block, index);
    return 0;
}

/* The records bound to the selected event (itself, when it is one). */
static int record_links(flows *f, xpv_err *err)
{
    const xpv_flow_source *s = f->src;
    own_points *o = xpv_xcalloc(1, sizeof *o);
    o->f = f;
    xpv_store_query q;
    xpv_store_query_all(&q, f->profile_id);
    q.track = s->track;
    q.t0 = s->ts;
    q.t1 = s->ts + (s->dur > 0 ? s->dur : 0);
    q.kinds = XPV_BLOCK_FLOWS;
    int rc = xpv_store_scan(f->db, &q, visit_own_point, o, err) < 0 ? -1 : 0;
    for (size_t i = 0; rc == 0 && i < o->n; i++) {
        link slice;
        int self = o->points[i].block == s->block && o->points[i].index == s->index;
        if (!self) {
            if ((rc = bind_point(f, &o->points[i], &slice, err)) != 0) break;
            if (slice.block != s->block || slice.index != s->index) continue;
        }
        rc = chain_links(f, &o->points[i], o->ids[i], err);
    }
    free(o);
    return rc;
}

/* ---- bind_id and the xplane flow stat: events carrying the same id ---- */

typedef struct {
    flows *f;
    int xplane;
} arg_want;

static int visit_same_id(void *ctx, const xpv_event *ev, int64_t block, uint32_t index)
{
    hits *h = ctx;
    arg_want *w = h->want;
    const xpv_flow_source *s = w->f->src;
    xpv_flow_source other;
    if (is_point(ev->ph) || !ev->nargs) return 0;
    xpv_flow_source_note(&other, ev, block, index, w->f->strings);
    if (w->xplane) {
        if (other.has_xflow && other.xflow >> 8 == s->xflow >> 8) hit(h, ev, block, index);
    } else if (other.has_bind && other.bind == s->bind && other.bind_str == s->bind_str &&
               ((s->flow_out && other.flow_in) || (s->flow_in && other.flow_out))) {
        hit(h, ev, block, index);
    }
    return 0;
}

static int shared_id_links(flows *f, int xplane, xpv_err *err)
{
    const xpv_flow_source *s = f->src;
    if (xplane ? !s->has_xflow : !(s->has_bind && (s->flow_in || s->flow_out))) return 0;
    hits *h = xpv_xcalloc(1, sizeof *h);
    arg_want w = {f, xplane};
    h->want = &w;
    int rc = search_near(f, -1, s->ts, 0, XPV_BLOCK_FLOWS, 1, visit_same_id, h, err);
    for (size_t i = 0; rc == 0 && i < h->n; i++) {
        const link *l = &h->found[i];
        int out;
        if (xplane)
            out = (s->xflow & 3) == 2 ? 1 : (s->xflow & 3) == 1 ? 0 : l->ts >= s->ts;
        else
            out = s->flow_out && !(s->flow_in && l->ts < s->ts);
        add_link(f, *l, out, xplane ? "flow" : "bind_id");
    }
    free(h);
    return rc;
}

/* ---- the answer ---- */

static void put_link(flows *f, const link *l, xpv_buf *out)
{
    size_t len;
    const char *name = xpv_api_string(f->strings, l->name, &len);
    xpv_buf_printf(out, "{\"ref\":\"%lld:%u\",\"direction\":\"%s\",\"via\":\"%s\",\"name\":",
                   (long long)l->block, l->index, l->out ? "out" : "in", l->via);
    xpv_buf_json_str(out, name, len);
    xpv_buf_puts(out, ",\"start_us\":");
    xpv_api_put_us(out, l->ts);
    xpv_buf_puts(out, ",\"dur_us\":");
    if (l->dur >= 0)
        xpv_api_put_us(out, l->dur);
    else
        xpv_buf_puts(out, "null");
    xpv_buf_printf(out, ",\"track\":%u,\"latency_us\":", l->track);
    xpv_api_put_us(out, l->out ? l->ts - f->src->ts : f->src->ts - l->ts);
    xpv_buf_putc(out, '}');
}

static int by_start(const void *pa, const void *pb)
{
    const link *a = pa, *b = pb;
    if (a->ts != b->ts) return a->ts < b->ts ? -1 : 1;
    return a->block < b->block   ? -1
           : a->block > b->block ? 1
                                 : (a->index > b->index) - (a->index < b->index);
}

int xpv_api_put_flows(sqlite3 *db, int64_t profile_id, const xpv_api_profile_state *ps,
                      const xpv_flow_source *src, xpv_api_strings *strings, xpv_buf *out,
                      xpv_err *err)
{
    flows *f = xpv_xcalloc(1, sizeof *f);
    *f = (flows){.db = db, .profile_id = profile_id, .strings = strings, .src = src};
    f->span_a = ps->has_span ? ps->start_ns : INT64_MIN;
    f->span_b = ps->has_span ? ps->end_ns : INT64_MAX;
    int rc = correlation_links(f, err);
    if (rc == 0) rc = record_links(f, err);
    if (rc == 0) rc = shared_id_links(f, 0, err);
    if (rc == 0) rc = shared_id_links(f, 1, err);
    if (rc == 0) {
        xpv_sort(f->links, f->nlinks, sizeof *f->links, by_start);
        xpv_buf_puts(out, "\"flows\":[");
        for (size_t i = 0; i < f->nlinks; i++) {
            if (i) xpv_buf_putc(out, ',');
            put_link(f, &f->links[i], out);
        }
        xpv_buf_putc(out, ']');
    }
    free(f);
    return rc;
}
