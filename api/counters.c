/*
 * counters.c — counter series of a time window at `resolution` pixels, for
 * the timeline's counter tracks.
 *
 * A series is one numeric arg of the Chrome `C` events of one name on one
 * track ("mem" {"allocated": 1, "reserved": 2} is two series), or one of the
 * `Total …` args of PyTorch's `[memory]` instants (split by their `Device
 * Id`). Only blocks flagged XPV_BLOCK_COUNTERS are read. Per pixel a series
 * keeps the count, min, max and last value of its samples (the level of
 * detail: a chart drawn from min/max per pixel looks like one drawn from
 * every sample), so the answer is bounded by series x resolution.
 *
 * A counter holds its value until the next sample, so each series also
 * says its value when the window opens ("initial", the last sample before
 * it), found in windows widening back from the start (x16 each round) until
 * every series known has one or the profile's start is passed.
 */
#include "api.h"
#include "api_util.h"
#include "../store/event_store.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SERIES 512
#define NO_DEVICE INT64_MIN

typedef struct {
    int64_t count, t0, last_ts;
    double min, max, last;
} cbucket;

typedef struct {
    uint32_t track, name, key;
    int64_t device;
    int has_initial;
    int64_t initial_ts;
    double initial;
    cbucket *buckets;
} series;

typedef struct {
    int64_t a, b;
    double pixel;
    int resolution;
    int lookback; /* samples before the window set initial values */
    xpv_api_strings *strings;
    series *s;
    size_t n, cap;
    int truncated;
    uint32_t k_device; /* interned "Device Id", 0 unknown yet */
} counters;

static series *series_of(counters *c, uint32_t track, uint32_t name, uint32_t key, int64_t dev)
{
    for (size_t i = c->n; i-- > 0;) {
        series *s = &c->s[i];
        if (s->track == track && s->name == name && s->key == key && s->device == dev) return s;
    }
    if (c->n == MAX_SERIES) {
        c->truncated = 1;
        return NULL;
    }
    if (c->n == c->cap) {
        c->cap = c->cap ? c->cap * 2 : 16;
        c->s = xpv_xrealloc(c->s, c->cap * sizeof *c->s);
    }
    series *s = &c->s[c->n++];
    *s = (series){track, name, key, dev, 0, 0, 0, NULL};
    s->buckets = xpv_xcalloc((size_t)c->resolution, sizeof *s->buckets);
    return s;
}

static void sample(counters *c, series *s, int64_t ts, double v)
{
    if (c->lookback || ts < c->a) {
        if (!s->has_initial || ts >= s->initial_ts)
            s->has_initial = 1, s->initial_ts = ts, s->initial = v;
        return;
    }
    double p = (double)(ts - c->a) / c->pixel;
    int px = p >= c->resolution ? c->resolution - 1 : (int)p;
    cbucket *k = &s->buckets[px];
    if (k->count == 0) {
        *k = (cbucket){1, ts, ts, v, v, v};
        return;
    }
    k->count++;
    if (ts < k->t0) k->t0 = ts;
    if (v < k->min) k->min = v;
    if (v > k->max) k->max = v;
    if (ts >= k->last_ts) k->last_ts = ts, k->last = v;
}

static int numeric(const xpv_arg *a, double *v)
{
    if (a->type == XPV_ARG_INT)
        *v = (double)a->v.i;
    else if (a->type == XPV_ARG_UINT)
        *v = (double)a->v.u;
    else if (a->type == XPV_ARG_DOUBLE && isfinite(a->v.d))
        *v = a->v.d;
    else
        return 0;
    return 1;
}

/* PyTorch [memory] instants: their Total … args, by device. */
static void memory_samples(counters *c, const xpv_event *ev)
{
    int64_t dev = NO_DEVICE;
    double v;
    for (uint32_t i = 0; i < ev->nargs; i++) {
        size_t len;
        const char *k = xpv_api_string(c->strings, ev->args[i].key, &len);
        if (len == 9 && memcmp(k, "Device Id", 9) == 0 && numeric(&ev->args[i], &v))
            dev = (int64_t)v;
    }
    for (uint32_t i = 0; i < ev->nargs; i++) {
        size_t len;
        const char *k = xpv_api_string(c->strings, ev->args[i].key, &len);
        if (len < 6 || memcmp(k, "Total ", 6) != 0 || !numeric(&ev->args[i], &v)) continue;
        series *s = series_of(c, ev->track, ev->name, ev->args[i].key, dev);
        if (s) sample(c, s, ev->ts_ns, v);
    }
}

static int visit_counter(void *ctx, const xpv_event *ev, int64_t block, uint32_t index)
{
    counters *c = ctx;
    double v;
    (void)block, (void)index;
    if (ev->ph != 'C') {
        if (ev->ph == 'i' || ev->ph == 'I') memory_samples(c, ev);
        return 0;
    }
    for (uint32_t i = 0; i < ev->nargs; i++) {
        if (!numeric(&ev->args[i], &v)) continue;
        series *s = series_of(c, ev->track, ev->name, ev->args[i].key, NO_DEVICE);
        if (s) sample(c, s, ev->ts_ns, v);
    }
    return 0;
}

static int scan(sqlite3 *db, int64_t id, counters *c, int64_t t0, int64_t t1, xpv_err *err)
{
    xpv_store_query q;
    xpv_store_query_all(&q, id);
    q.t0 = t0;
    q.t1 = t1;
    q.kinds = XPV_BLOCK_COUNTERS;
    return xpv_store_scan(db, &q, visit_counter, c, err);
}

static int all_have_initial(const counters *c)
{
    for (size_t i = 0; i < c->n; i++)
        if (!c->s[i].has_initial) return 0;
    return 1;
}

static int look_back(sqlite3 *db, int64_t id, counters *c, int64_t span_a, xpv_err *err)
{
    c->lookback = 1;
    int64_t r = c->b - c->a;
    for (int64_t hi = c->a - 1; hi >= span_a && !all_have_initial(c);) {
        int64_t lo = r >= hi - span_a ? span_a : hi - r;
        if (scan(db, id, c, lo, hi, err) < 0) return -1;
        hi = lo - 1;
        r = r > INT64_MAX / 16 ? INT64_MAX : r * 16;
    }
    return 0;
}

static void put_value(xpv_buf *b, double v)
{
    if (v == floor(v) && fabs(v) < 9e15)
        xpv_api_put_int(b, (int64_t)v);
    else
        xpv_buf_json_double(b, v);
}

static void put_series(counters *c, const series *s, xpv_buf *out)
{
    size_t len;
    const char *name = xpv_api_string(c->strings, s->name, &len);
    xpv_buf_printf(out, "{\"track\":%u,\"name\":", s->track);
    xpv_buf_json_str(out, name, len);
    const char *key = xpv_api_string(c->strings, s->key, &len);
    xpv_buf_puts(out, ",\"series\":");
    xpv_buf_json_str(out, key, len);
    xpv_buf_puts(out, ",\"device\":");
    if (s->device == NO_DEVICE)
        xpv_buf_puts(out, "null");
    else
        xpv_api_put_int(out, s->device);
    xpv_buf_puts(out, ",\"initial\":");
    if (s->has_initial)
        put_value(out, s->initial);
    else
        xpv_buf_puts(out, "null");
    xpv_buf_puts(out, ",\"points\":[");
    int n = 0;
    for (int p = 0; p < c->resolution; p++) {
        const cbucket *k = &s->buckets[p];
        if (!k->count) continue;
        xpv_buf_puts(out, n++ ? ",[" : "[");
        xpv_api_put_us(out, k->t0);
        xpv_buf_putc(out, ',');
        put_value(out, k->min);
        xpv_buf_putc(out, ',');
        put_value(out, k->max);
        xpv_buf_putc(out, ',');
        put_value(out, k->last);
        xpv_buf_putc(out, ',');
        xpv_api_put_int(out, k->count);
        xpv_buf_putc(out, ']');
    }
    xpv_buf_puts(out, "]}");
}

static int by_track_name(const void *pa, const void *pb)
{
    const series *x = pa, *y = pb;
    if (x->track != y->track) return x->track < y->track ? -1 : 1;
    if (x->name != y->name) return x->name < y->name ? -1 : 1;
    if (x->key != y->key) return x->key < y->key ? -1 : 1;
    return (x->device > y->device) - (x->device < y->device);
}

static void put_answer(int64_t id, counters *c, xpv_buf *out)
{
    char hex[17];
    xpv_profile_id_hex(id, hex);
    xpv_buf_printf(out, "{\"profile\":\"%s\",\"start_us\":", hex);
    xpv_api_put_us(out, c->a);
    xpv_buf_puts(out, ",\"end_us\":");
    xpv_api_put_us(out, c->b);
    xpv_buf_printf(out, ",\"resolution\":%d,\"pixel_us\":", c->resolution);
    xpv_buf_json_double(out, c->pixel / 1000.0);
    xpv_buf_printf(out, ",\"truncated\":%s,\"counters\":[", c->truncated ? "true" : "false");
    xpv_sort(c->s, c->n, sizeof *c->s, by_track_name);
    for (size_t i = 0; i < c->n; i++) {
        if (i) xpv_buf_putc(out, ',');
        put_series(c, &c->s[i], out);
    }
    xpv_buf_puts(out, "]}");
}

int xpv_api_counters(sqlite3 *db, int64_t id, const xpv_events_query *q, xpv_buf *out)
{
    int64_t a, b;
    int resolution;
    xpv_api_profile_state ps;
    int status = xpv_api_window(db, id, q, &ps, &a, &b, &resolution, out);
    if (status != 200) return status;
    counters c = {.a = a, .b = b, .resolution = resolution};
    c.pixel = (double)(b - a) / resolution;
    c.strings = xpv_api_strings_open(db, id);
    xpv_err err = {{0}};
    int rc = scan(db, id, &c, a, b, &err);
    if (rc == 0) rc = look_back(db, id, &c, ps.has_span ? ps.start_ns : a, &err);
    if (rc == 0)
        put_answer(id, &c, out);
    else
        status = xpv_api_error(out, 500, "index: %s", err.msg);
    for (size_t i = 0; i < c.n; i++)
        free(c.s[i].buckets);
    free(c.s);
    xpv_api_strings_free(c.strings);
    return status;
}
