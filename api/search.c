/*
 * search.c — finding events by name anywhere in a profile (the timeline's
 * search), not only among those a window has loaded.
 *
 * First the profile's string table gives the ids of every name holding the
 * query (case-insensitive, ASCII), then one pass over the event store, with
 * args skipped, keeps the earliest `offset + limit` matches in a max-heap on
 * start time, and the last `limit` of them are the answer. Cost: one decode
 * of the profile's events; memory: a bitmap of string ids and the heap,
 * never the matches beyond `offset + limit`.
 */
#include "api.h"
#include "api_util.h"
#include "../store/event_store.h"
#include "../store/strings.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    int64_t ts, dur;
    int64_t block;
    uint32_t index, track, name;
} match;

typedef struct {
    const uint8_t *wanted; /* bitmap over string ids */
    uint32_t nids;
    match *heap;          /* max-heap on (ts, block, index): the latest kept match on top */
    size_t n, cap, limit; /* limit: the most kept, offset + the page's limit */
    int64_t total;
} search_ctx;

static int later(const match *a, const match *b)
{
    if (a->ts != b->ts) return a->ts > b->ts;
    if (a->block != b->block) return a->block > b->block;
    return a->index > b->index;
}

static void sift_down(match *h, size_t n, size_t i)
{
    for (;;) {
        size_t big = i, l = 2 * i + 1, r = l + 1;
        if (l < n && later(&h[l], &h[big])) big = l;
        if (r < n && later(&h[r], &h[big])) big = r;
        if (big == i) return;
        match t = h[i];
        h[i] = h[big];
        h[big] = t;
        i = big;
    }
}

static void keep(search_ctx *c, const match *m)
{
    if (c->n < c->limit) {
        if (c->n == c->cap) { /* grown as matches come: a few matches, little memory */
            c->cap = c->cap ? c->cap * 2 : 256;
            if (c->cap > c->limit) c->cap = c->limit;
            c->heap = xpv_xrealloc(c->heap, c->cap * sizeof *c->heap);
        }
        size_t i = c->n++;
        c->heap[i] = *m;
        while (i > 0 && later(&c->heap[i], &c->heap[(i - 1) / 2])) {
            match t = c->heap[i];
            c->heap[i] = c->heap[(i - 1) / 2];
            c->heap[(i - 1) / 2] = t;
            i = (i - 1) / 2;
        }
    } else if (c->limit && later(&c->heap[0], m)) {
        c->heap[0] = *m;
        sift_down(c->heap, c->n, 0);
    }
}

static int visit(void *ctx, const xpv_event *ev, int64_t block_id, uint32_t index)
{
    search_ctx *c = ctx;
    if (ev->name >= c->nids || !(c->wanted[ev->name >> 3] & (1u << (ev->name & 7)))) return 0;
    c->total++;
    match m = {ev->ts_ns, ev->dur_ns, block_id, index, ev->track, ev->name};
    keep(c, &m);
    return 0;
}

/* Marks the ids of strings holding q; returns how many, or -1 with out. */
static int64_t matching_names(sqlite3 *db, int64_t id, const char *q, search_ctx *c, xpv_buf *out)
{
    xpv_err err = {{0}};
    int64_t max;
    xpv_store_cursor st;
    if (xpv_store_strings_max_id(db, id, &max, &err) < 0)
        return xpv_api_error(out, 500, "%s", err.msg), -1;
    c->nids = (uint32_t)max + 1;
    c->wanted = xpv_xcalloc(c->nids / 8 + 1, 1);
    if (xpv_store_strings_open_containing(&st, db, id, q, &err) != 0)
        return xpv_api_error(out, 500, "%s", err.msg), -1;
    int64_t n = 0, sid;
    xpv_store_text v;
    int rc;
    while ((rc = xpv_store_strings_next(&st, &sid, &v, &err)) == 1) {
        if ((uint32_t)sid >= c->nids) continue;
        ((uint8_t *)c->wanted)[(uint32_t)sid >> 3] |= (uint8_t)(1u << (sid & 7));
        n++;
    }
    xpv_store_cursor_close(&st);
    if (rc < 0) return xpv_api_error(out, 500, "%s", err.msg), -1;
    return n;
}

static int by_time(const void *a, const void *b)
{
    return later(a, b) ? 1 : later(b, a) ? -1 : 0;
}

static int put_matches(sqlite3 *db, int64_t id, search_ctx *c, size_t offset, xpv_buf *out)
{
    xpv_sort(c->heap, c->n, sizeof *c->heap, by_time);
    xpv_api_strings *names = xpv_api_strings_open(db, id);
    xpv_buf_puts(out, ",\"matches\":[");
    for (size_t i = offset; i < c->n; i++) {
        const match *m = &c->heap[i];
        size_t len;
        const char *name = xpv_api_string(names, m->name, &len);
        xpv_buf_puts(out, i > offset ? ",{\"start_us\":" : "{\"start_us\":");
        xpv_api_put_us(out, m->ts);
        xpv_buf_puts(out, ",\"dur_us\":");
        if (m->dur >= 0)
            xpv_api_put_us(out, m->dur);
        else
            xpv_buf_puts(out, "null");
        xpv_buf_printf(out, ",\"track\":%u,\"name\":", m->track);
        xpv_buf_json_str(out, name, len);
        xpv_buf_printf(out, ",\"ref\":\"%lld:%u\"}", (long long)m->block, m->index);
    }
    xpv_buf_puts(out, "]}");
    int status = xpv_api_strings_status(names, out);
    xpv_api_strings_free(names);
    return status;
}

int xpv_api_search(sqlite3 *db, int64_t id, const char *q, int64_t offset, int limit, xpv_buf *out)
{
    if (!q || !*q) return xpv_api_error(out, 400, "q (the text to find in event names) is empty");
    assert(offset >= 0 && offset <= XPV_SEARCH_MAX_OFFSET);
    xpv_api_profile_state ps;
    int status = xpv_api_profile_state_get(db, id, &ps, out);
    if (status != 200) return status;
    search_ctx c = {.limit = (size_t)offset + (size_t)(limit > 0 ? limit : 200)};
    if (matching_names(db, id, q, &c, out) < 0) {
        free((void *)c.wanted);
        return 500;
    }
    xpv_store_query sq;
    xpv_store_query_all(&sq, id);
    sq.skip_args = 1;
    xpv_err err = {{0}};
    if (xpv_store_scan(db, &sq, visit, &c, &err) < 0) {
        status = xpv_api_error(out, 500, "index: %s", err.msg);
    } else {
        char hex[17];
        xpv_profile_id_hex(id, hex);
        xpv_buf_printf(out, "{\"profile\":\"%s\",\"query\":", hex);
        xpv_buf_json_str(out, q, strlen(q));
        xpv_buf_printf(out, ",\"match_count\":%lld,\"offset\":%lld,\"truncated\":%s",
                       (long long)c.total, (long long)offset,
                       c.total > (int64_t)c.n ? "true" : "false");
        status = put_matches(db, id, &c, (size_t)offset, out);
    }
    free(c.heap);
    free((void *)c.wanted);
    return status;
}
