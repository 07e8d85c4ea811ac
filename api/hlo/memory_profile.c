/*
 * memory_profile.c — bytes in use per allocator over the profile, from the
 * allocator events the profile carries:
 *  - xplane host planes' `MemoryAllocation` / `MemoryDeallocation` events,
 *    one allocator per `allocator_name` (TPU planes write `index_on_host`
 *    instead); their stats say the allocator's state after the event:
 *    bytes_allocated (in use), bytes_reserved, peak_bytes_in_use (over the
 *    allocator's life, the capture window or not), fragmentation, and the
 *    block: allocation_bytes, requested_bytes, addr, tf_op, shape,
 *    data_type, region_type;
 *  - PyTorch's `[memory]` instants (Kineto profile_memory): `Bytes` (> 0
 *    allocated, < 0 freed), `Addr`, `Total Allocated`, `Total Reserved`,
 *    one allocator per (`Device Type`, `Device Id`).
 * In use is the stat the event carries; an allocator whose events do not
 * all carry it is replayed from the block sizes, from 0 at the first event
 * (in_use_source "replay": relative to what was in use before the capture).
 * The peak is the first event where in use is highest; allocators are
 * listed highest peak first. The allocations
 * live at the peak are those allocated in the capture and not yet freed
 * (matched by address); what was in use before the capture is
 * unattributed, never guessed. A value an event does not carry is null.
 */
#include "../api.h"
#include "../api_util.h"
#include "../tools/tools.h"
#include "../../common/xpv_hindex.h"
#include "../../store/event_store.h"
#include "../../store/steps.h"
#include "../../store/strings.h"

#include <assert.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_POINTS 4000
#define MAX_LIVE_ROWS 1000

enum { N_ALLOC, N_FREE, N_TORCH, NNAMES };
static const char *const NAMES[NNAMES] = {"MemoryAllocation", "MemoryDeallocation", "[memory]"};
enum {
    A_ALLOCATOR,
    A_INDEX_ON_HOST,
    A_BYTES_ALLOCATED,
    A_BYTES_RESERVED,
    A_PEAK,
    A_REQUESTED,
    A_ALLOCATION_BYTES,
    A_FRAGMENTATION,
    A_TF_OP,
    A_REGION,
    A_DATA_TYPE,
    A_SHAPE,
    A_ADDR,
    T_BYTES,
    T_ADDR,
    T_TOTAL_ALLOCATED,
    T_TOTAL_RESERVED,
    T_DEVICE_TYPE,
    T_DEVICE_ID,
    NKEYS
};
static const char *const KEYS[NKEYS] = {"allocator_name",
                                        "index_on_host",
                                        "bytes_allocated",
                                        "bytes_reserved",
                                        "peak_bytes_in_use",
                                        "requested_bytes",
                                        "allocation_bytes",
                                        "fragmentation",
                                        "tf_op",
                                        "region_type",
                                        "data_type",
                                        "shape",
                                        "addr",
                                        "Bytes",
                                        "Addr",
                                        "Total Allocated",
                                        "Total Reserved",
                                        "Device Type",
                                        "Device Id"};

typedef struct {
    int64_t ts_ns, seq;
    uint32_t alloc;
    int8_t kind;                                      /* +1 allocation, -1 deallocation */
    int64_t bytes, requested, in_use, reserved, peak; /* -1 unknown */
    double frag;                                      /* NAN unknown */
    uint64_t addr;
    int has_addr;
    uint32_t op, shape, region, dtype; /* offsets + 1 into the text pool, 0 none */
} rec;

typedef struct {
    char *name;
    const char *source;
    int device; /* the device id its name gives (GPU_0_bfc, CUDA:0), -1 none */
} allocator;

typedef struct {
    uint32_t names[NNAMES], keys[NKEYS];
    xpv_api_strings *strings;
    rec *r;
    size_t n, cap;
    allocator *al;
    size_t nal;
    xpv_buf pool;
} scan;

/* ---- reading the events ---- */

static int lookup_ids(sqlite3 *db, int64_t id, scan *s, xpv_err *err)
{
    if (xpv_store_strings_ids(db, id, NAMES, NNAMES, s->names, err) != 0) return -1;
    return xpv_store_strings_ids(db, id, KEYS, NKEYS, s->keys, err);
}

static int arg_num(const xpv_arg *a, int64_t *i, double *d)
{
    switch (a->type) {
    case XPV_ARG_INT:
        *i = a->v.i, *d = (double)a->v.i;
        return 1;
    case XPV_ARG_UINT:
        *i = (int64_t)a->v.u, *d = (double)a->v.u;
        return 1;
    case XPV_ARG_DOUBLE:
        *i = (int64_t)a->v.d, *d = a->v.d;
        return 1;
    }
    return 0;
}

/* The arg's text (numbers written out), "" when none. */
static const char *arg_text(scan *s, const xpv_arg *a, size_t *n, char *tmp, size_t tn)
{
    int64_t i;
    double d;
    if (a->type == XPV_ARG_STR) return xpv_api_string(s->strings, a->v.str, n);
    if (a->type == XPV_ARG_TEXT || a->type == XPV_ARG_JSON) return *n = a->len, a->text;
    if (arg_num(a, &i, &d)) return *n = (size_t)snprintf(tmp, tn, "%" PRId64, i), tmp;
    return *n = 0, "";
}

static uint32_t pool_add(scan *s, const char *p, size_t n)
{
    if (n == 0 || (n == 6 && memcmp(p, "(null)", 6) == 0)) return 0;
    uint32_t at = (uint32_t)s->pool.len + 1;
    xpv_buf_append(&s->pool, p, n);
    xpv_buf_putc(&s->pool, 0);
    return at;
}

/* The device an allocator's name is for: the first number after "_" or
 * ":" (GPU_0_bfc, CUDA:1, TPU:2); -1 when there is none (CPU). */
static int device_of(const char *name)
{
    for (const char *p = name; *p; p++)
        if ((*p == '_' || *p == ':') && p[1] >= '0' && p[1] <= '9') {
            long d = strtol(p + 1, NULL, 10);
            return d <= 65535 ? (int)d : -1;
        }
    return -1;
}

static uint32_t allocator_of(scan *s, const char *name, const char *source)
{
    for (size_t i = 0; i < s->nal; i++)
        if (strcmp(s->al[i].name, name) == 0) return (uint32_t)i;
    s->al = xpv_xrealloc(s->al, (s->nal + 1) * sizeof *s->al);
    s->al[s->nal].name = xpv_xstrndup(name, strlen(name));
    s->al[s->nal].source = source;
    s->al[s->nal].device = device_of(name);
    return (uint32_t)s->nal++;
}

typedef struct {
    int has[NKEYS];
    int64_t i[NKEYS];
    double d[NKEYS];
    const xpv_arg *a[NKEYS];
} argv_t;

static void read_args(scan *s, const xpv_event *ev, argv_t *v)
{
    memset(v->has, 0, sizeof v->has);
    for (uint32_t k = 0; k < ev->nargs; k++)
        for (int j = 0; j < NKEYS; j++)
            if (s->keys[j] && ev->args[k].key == s->keys[j]) {
                v->a[j] = &ev->args[k];
                v->has[j] = 1;
                if (!arg_num(&ev->args[k], &v->i[j], &v->d[j])) v->i[j] = -1, v->d[j] = NAN;
            }
}

static int64_t num_or(const argv_t *v, int k)
{
    return v->has[k] && v->i[k] >= 0 ? v->i[k] : -1;
}

static uint32_t text_of(scan *s, const argv_t *v, int k)
{
    char tmp[32];
    size_t n;
    if (!v->has[k]) return 0;
    const char *p = arg_text(s, v->a[k], &n, tmp, sizeof tmp);
    return pool_add(s, p, n);
}

static void xplane_rec(scan *s, const argv_t *v, rec *r, int is_alloc)
{
    char name[300];
    size_t n = 0;
    char tmp[32];
    if (v->has[A_ALLOCATOR]) {
        const char *p = arg_text(s, v->a[A_ALLOCATOR], &n, tmp, sizeof tmp);
        snprintf(name, sizeof name, "%.*s", (int)n, p);
    } else if (v->has[A_INDEX_ON_HOST]) {
        snprintf(name, sizeof name, "index_on_host %" PRId64, v->i[A_INDEX_ON_HOST]);
    } else {
        snprintf(name, sizeof name, "allocator");
    }
    r->alloc = allocator_of(s, name, "xplane");
    r->kind = is_alloc ? 1 : -1;
    r->bytes = num_or(v, A_ALLOCATION_BYTES);
    r->requested = num_or(v, A_REQUESTED);
    r->in_use = num_or(v, A_BYTES_ALLOCATED);
    r->reserved = num_or(v, A_BYTES_RESERVED);
    r->peak = num_or(v, A_PEAK);
    r->frag = v->has[A_FRAGMENTATION] ? v->d[A_FRAGMENTATION] : NAN;
    r->has_addr = v->has[A_ADDR] && v->i[A_ADDR] != -1;
    r->addr = (uint64_t)v->i[A_ADDR];
    r->op = text_of(s, v, A_TF_OP), r->shape = text_of(s, v, A_SHAPE);
    r->region = text_of(s, v, A_REGION), r->dtype = text_of(s, v, A_DATA_TYPE);
}

static void torch_rec(scan *s, const argv_t *v, rec *r)
{
    char name[64];
    int64_t type = v->has[T_DEVICE_TYPE] ? v->i[T_DEVICE_TYPE] : -1;
    int64_t dev = v->has[T_DEVICE_ID] ? v->i[T_DEVICE_ID] : -1;
    if (type == 0)
        snprintf(name, sizeof name, "CPU");
    else if (type == 1)
        snprintf(name, sizeof name, "CUDA:%" PRId64, dev);
    else
        snprintf(name, sizeof name, "device type %" PRId64 ":%" PRId64, type, dev);
    r->alloc = allocator_of(s, name, "pytorch");
    int64_t b = v->has[T_BYTES] ? v->i[T_BYTES] : 0;
    r->kind = b < 0 ? -1 : 1;
    r->bytes = v->has[T_BYTES] ? (b < 0 ? -b : b) : -1;
    r->requested = -1;
    r->in_use = num_or(v, T_TOTAL_ALLOCATED);
    r->reserved = num_or(v, T_TOTAL_RESERVED);
    r->peak = -1;
    r->frag = NAN;
    r->has_addr = v->has[T_ADDR];
    r->addr = (uint64_t)v->i[T_ADDR];
}

static int visit(void *ctx, const xpv_event *ev, int64_t block, uint32_t index)
{
    (void)block, (void)index;
    scan *s = ctx;
    int which = -1;
    for (int i = 0; i < NNAMES; i++)
        if (s->names[i] && ev->name == s->names[i]) which = i;
    if (which < 0) return 0;
    argv_t v;
    read_args(s, ev, &v);
    if (s->n == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 1024;
        s->r = xpv_xrealloc(s->r, s->cap * sizeof *s->r);
    }
    rec *r = &s->r[s->n];
    memset(r, 0, sizeof *r);
    r->ts_ns = ev->ts_ns;
    r->seq = (int64_t)s->n++;
    if (which == N_TORCH)
        torch_rec(s, &v, r);
    else
        xplane_rec(s, &v, r, which == N_ALLOC);
    return 0;
}

static int cmp_rec(const void *pa, const void *pb)
{
    const rec *a = pa, *b = pb;
    if (a->alloc != b->alloc) return a->alloc < b->alloc ? -1 : 1;
    if (a->ts_ns != b->ts_ns) return a->ts_ns < b->ts_ns ? -1 : 1;
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static void scan_free(scan *s)
{
    for (size_t i = 0; i < s->nal; i++)
        free(s->al[i].name);
    free(s->al);
    free(s->r);
    xpv_buf_free(&s->pool);
    if (s->strings) xpv_api_strings_free(s->strings);
    memset(s, 0, sizeof *s);
}

/* Reads every allocator event of profile id, sorted by allocator then time. */
static int scan_profile(sqlite3 *db, int64_t id, scan *s, xpv_err *err)
{
    memset(s, 0, sizeof *s);
    if (lookup_ids(db, id, s, err) != 0) return -1;
    if (!s->names[N_ALLOC] && !s->names[N_FREE] && !s->names[N_TORCH]) return 0;
    s->strings = xpv_api_strings_open(db, id);
    xpv_store_query q;
    xpv_store_query_all(&q, id);
    q.kinds = XPV_KIND_BIT(XPV_KIND_OTHER);
    if (xpv_store_scan(db, &q, visit, s, err) < 0) return -1;
    if (s->n) qsort(s->r, s->n, sizeof *s->r, cmp_rec);
    return 0;
}

/* ---- one allocator ---- */

typedef struct {
    const rec *r; /* its records, in time order */
    size_t n;
    int replayed;     /* in use from the block sizes, not the events' stat */
    int64_t *in_use;  /* per record */
    size_t peak;      /* index of the peak record */
    int64_t lifetime; /* max peak_bytes_in_use, -1 unknown */
    double max_frag;  /* NAN unknown */
    int64_t allocs, frees;
} series;

static void series_init(series *a, const rec *r, size_t n)
{
    memset(a, 0, sizeof *a);
    a->r = r, a->n = n;
    a->in_use = xpv_xmalloc(n * sizeof *a->in_use);
    a->lifetime = -1;
    a->max_frag = NAN;
    for (size_t i = 0; i < n; i++)
        if (r[i].in_use < 0) a->replayed = 1;
    int64_t run = 0;
    for (size_t i = 0; i < n; i++) {
        run += r[i].kind * (r[i].bytes > 0 ? r[i].bytes : 0);
        a->in_use[i] = a->replayed ? run : r[i].in_use;
        if (a->in_use[i] > a->in_use[a->peak]) a->peak = i;
        if (r[i].peak > a->lifetime) a->lifetime = r[i].peak;
        if (!isnan(r[i].frag) && (isnan(a->max_frag) || r[i].frag > a->max_frag))
            a->max_frag = r[i].frag;
        if (r[i].kind > 0)
            a->allocs++;
        else
            a->frees++;
    }
}

/* The step of the allocator's device (-1: any) at ts (ns from the
 * profile's start): the device's own window when the devices ran the step
 * apart; -1 when none. */
static int64_t step_at(sqlite3 *db, int64_t id, int device, int64_t ts_ns)
{
    int64_t step = -1;
    xpv_store_steps_at(db, id, device, ts_ns * 1000, &step, NULL);
    return step;
}

static void put_num(xpv_buf *b, int64_t v)
{
    if (v < 0)
        xpv_buf_puts(b, "null");
    else
        xpv_api_put_int(b, v);
}

static void put_frag(xpv_buf *b, double f)
{
    if (isnan(f))
        xpv_buf_puts(b, "null");
    else
        xpv_buf_json_double(b, f);
}

static void put_summary(sqlite3 *db, int64_t id, int64_t base_ns, xpv_buf *b, const allocator *al,
                        const series *a)
{
    const rec *p = &a->r[a->peak];
    xpv_buf_puts(b, "\"summary\":{\"peak_bytes_in_use\":");
    xpv_api_put_int(b, a->in_use[a->peak]);
    xpv_buf_puts(b, ",\"peak_time_us\":");
    xpv_api_put_us(b, p->ts_ns);
    xpv_buf_puts(b, ",\"peak_offset_us\":");
    xpv_api_put_us(b, p->ts_ns - base_ns);
    xpv_buf_puts(b, ",\"peak_step\":");
    put_num(b, step_at(db, id, al->device, p->ts_ns - base_ns));
    xpv_buf_puts(b, ",\"peak_reserved_bytes\":");
    put_num(b, p->reserved);
    xpv_buf_puts(b, ",\"peak_fragmentation\":");
    put_frag(b, p->frag);
    xpv_buf_puts(b, ",\"lifetime_peak_bytes\":");
    put_num(b, a->lifetime);
    xpv_buf_puts(b, ",\"final_bytes_in_use\":");
    xpv_api_put_int(b, a->in_use[a->n - 1]);
    xpv_buf_puts(b, ",\"max_fragmentation\":");
    put_frag(b, a->max_frag);
    xpv_buf_printf(b, ",\"allocations\":%" PRId64 ",\"deallocations\":%" PRId64 "}", a->allocs,
                   a->frees);
}

/* [time_us, in_use, reserved, fragmentation]; at most MAX_POINTS, each the
 * highest of its run of events, so the peak is always drawn. */
static void put_timeline(xpv_buf *b, const series *a)
{
    size_t every = a->n / MAX_POINTS + 1;
    xpv_buf_puts(b, "\"timeline\":[");
    for (size_t i = 0, out = 0; i < a->n; i += every) {
        size_t best = i;
        for (size_t k = i; k < i + every && k < a->n; k++)
            if (a->in_use[k] > a->in_use[best]) best = k;
        const rec *r = &a->r[best];
        xpv_buf_puts(b, out++ ? ",[" : "[");
        xpv_api_put_us(b, r->ts_ns);
        xpv_buf_putc(b, ',');
        xpv_api_put_int(b, a->in_use[best]);
        xpv_buf_putc(b, ',');
        put_num(b, r->reserved);
        xpv_buf_putc(b, ',');
        put_frag(b, r->frag);
        xpv_buf_putc(b, ']');
    }
    xpv_buf_putc(b, ']');
}

/* ---- the allocations live at the peak ---- */

/* The sort key of a live block, copied out: qsort's comparison has no
 * context, and answers are built on several threads. */
typedef struct {
    int64_t bytes, seq;
    size_t index;
} live_key;

static int by_bytes(const void *pa, const void *pb)
{
    const live_key *a = pa, *b = pb;
    if (a->bytes != b->bytes) return a->bytes > b->bytes ? -1 : 1;
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* The records allocated up to the peak and not freed by it; *known 0 when
 * the events carry no addresses. Returns a malloc'ed list of indexes. */
static size_t *live_at_peak(const series *a, size_t *n, int *known)
{
    xpv_hindex live = {0}; /* addr -> index in a->r */
    *n = 0;
    *known = 1;
    xpv_hindex_reserve(&live, a->peak + 1);
    for (size_t i = 0; i <= a->peak; i++) {
        const rec *r = &a->r[i];
        if (!r->has_addr) *known = 0;
        if (!r->has_addr) continue;
        if (r->kind > 0)
            *xpv_hindex_put(&live, r->addr, i) = i;
        else
            xpv_hindex_del(&live, r->addr);
    }
    size_t *out = xpv_xmalloc((a->peak + 1) * sizeof *out);
    uint64_t addr, index;
    for (size_t pos = 0; xpv_hindex_next_entry(&live, &pos, &addr, &index);)
        out[(*n)++] = (size_t)index;
    xpv_hindex_free(&live);
    live_key *keys = xpv_xmalloc((*n ? *n : 1) * sizeof *keys);
    for (size_t i = 0; i < *n; i++)
        keys[i] = (live_key){a->r[out[i]].bytes, a->r[out[i]].seq, out[i]};
    qsort(keys, *n, sizeof *keys, by_bytes);
    for (size_t i = 0; i < *n; i++)
        out[i] = keys[i].index;
    free(keys);
    return out;
}

static void put_text(xpv_buf *b, const scan *s, uint32_t at)
{
    if (at)
        xpv_buf_json_str(b, s->pool.data + at - 1, strlen(s->pool.data + at - 1));
    else
        xpv_buf_puts(b, "null");
}

static void put_live_row(xpv_buf *b, const scan *s, const rec *r)
{
    xpv_buf_puts(b, "{\"time_us\":");
    xpv_api_put_us(b, r->ts_ns);
    xpv_buf_puts(b, ",\"bytes\":");
    put_num(b, r->bytes);
    xpv_buf_puts(b, ",\"requested_bytes\":");
    put_num(b, r->requested);
    xpv_buf_printf(b, ",\"address\":\"0x%" PRIx64 "\",\"op\":", r->addr);
    put_text(b, s, r->op);
    xpv_buf_puts(b, ",\"shape\":");
    put_text(b, s, r->shape);
    xpv_buf_puts(b, ",\"data_type\":");
    put_text(b, s, r->dtype);
    xpv_buf_puts(b, ",\"region_type\":");
    put_text(b, s, r->region);
    xpv_buf_putc(b, '}');
}

static void put_live(xpv_buf *b, const scan *s, const series *a)
{
    size_t n;
    int known;
    size_t *live = live_at_peak(a, &n, &known);
    int64_t bytes = 0;
    for (size_t i = 0; i < n; i++)
        bytes += a->r[live[i]].bytes > 0 ? a->r[live[i]].bytes : 0;
    xpv_buf_puts(b, "\"live_at_peak\":{\"known\":");
    xpv_buf_puts(b, known ? "true" : "false");
    xpv_buf_printf(b, ",\"count\":%zu,\"bytes\":%" PRId64 ",\"unattributed_bytes\":", n, bytes);
    int64_t rest = a->in_use[a->peak] - bytes;
    put_num(b, known && !a->replayed && rest >= 0 ? rest : -1);
    xpv_buf_puts(b, ",\"allocations\":[");
    for (size_t i = 0; known && i < n && i < MAX_LIVE_ROWS; i++) {
        if (i) xpv_buf_putc(b, ',');
        put_live_row(b, s, &a->r[live[i]]);
    }
    xpv_buf_puts(b, "]}");
    free(live);
}

/* ---- answers ---- */

typedef struct {
    series a;
    const allocator *al;
} ranked;

/* Highest peak first (the allocator a page opens on, XProf's default
 * memory id), then by name: an order that does not hang on the file's. */
static int by_peak(const void *pa, const void *pb)
{
    const ranked *x = pa, *y = pb;
    int64_t px = x->a.in_use[x->a.peak], py = y->a.in_use[y->a.peak];
    if (px != py) return px > py ? -1 : 1;
    return strcmp(x->al->name, y->al->name);
}

/* Calls fn for each allocator's series, highest peak first. */
static void each_series(const scan *s, void (*fn)(void *, const allocator *, const series *),
                        void *ctx)
{
    ranked *all = xpv_xmalloc((s->nal ? s->nal : 1) * sizeof *all);
    size_t n = 0;
    for (size_t i = 0; i < s->n;) {
        size_t j = i;
        while (j < s->n && s->r[j].alloc == s->r[i].alloc)
            j++;
        assert(n < s->nal);
        series_init(&all[n].a, &s->r[i], j - i);
        all[n++].al = &s->al[s->r[i].alloc];
        i = j;
    }
    qsort(all, n, sizeof *all, by_peak);
    for (size_t i = 0; i < n; i++) {
        fn(ctx, all[i].al, &all[i].a);
        free(all[i].a.in_use);
    }
    free(all);
}

typedef struct {
    sqlite3 *db;
    int64_t id, base_ns;
    const scan *s;
    xpv_buf *b;
    int n;
    int64_t best;
    const char *best_name;
} answer;

static void put_allocator(void *ctx, const allocator *al, const series *a)
{
    answer *w = ctx;
    xpv_buf *b = w->b;
    xpv_buf_puts(b, w->n++ ? ",{\"name\":" : "{\"name\":");
    xpv_buf_json_str(b, al->name, strlen(al->name));
    xpv_buf_printf(b, ",\"source\":\"%s\",\"in_use_source\":\"%s\",\"events\":%zu,", al->source,
                   a->replayed ? "replay" : "stat", a->n);
    put_summary(w->db, w->id, w->base_ns, b, al, a);
    xpv_buf_putc(b, ',');
    put_timeline(b, a);
    xpv_buf_putc(b, ',');
    put_live(b, w->s, a);
    xpv_buf_putc(b, '}');
    if (a->in_use[a->peak] > w->best) w->best = a->in_use[a->peak], w->best_name = al->name;
}

int xpv_api_memory_profile(sqlite3 *db, int64_t id, xpv_buf *out)
{
    xpv_api_profile_state ps;
    int known = xpv_api_profile_state_get(db, id, &ps, out);
    if (known != 200) return known;
    scan s;
    xpv_err err = {{0}};
    if (scan_profile(db, id, &s, &err) != 0) {
        scan_free(&s);
        return xpv_api_error(out, 500, "%s", err.msg);
    }
    if (s.n == 0) {
        scan_free(&s);
        return xpv_api_error(out, 404, "No Data");
    }
    xpv_api_put_profile_head(out, id, &ps);
    xpv_buf_puts(out, ",\"allocators\":[");
    answer w = {db, id, ps.has_span ? ps.start_ns : 0, &s, out, 0, -1, NULL};
    each_series(&s, put_allocator, &w);
    xpv_buf_puts(out, "],\"peak_allocator\":");
    xpv_buf_json_str(out, w.best_name, strlen(w.best_name));
    xpv_buf_putc(out, '}');
    scan_free(&s);
    return 200;
}

/* ---- the tool: one row per allocator ---- */

static const xpv_table_col COLS[] = {
    {"allocator", "Allocator", XPV_COL_STRING},
    {"source", "Source", XPV_COL_STRING},
    {"peak_in_use_bytes", "Peak in use", XPV_COL_NUMBER},
    {"peak_offset_us", "Peak at (µs from the start)", XPV_COL_NUMBER},
    {"peak_step", "Peak step", XPV_COL_NUMBER},
    {"lifetime_peak_bytes", "Lifetime peak", XPV_COL_NUMBER},
    {"live_at_peak", "Allocations live at peak", XPV_COL_NUMBER},
    {"allocations", "Allocations", XPV_COL_NUMBER},
    {"deallocations", "Deallocations", XPV_COL_NUMBER},
    {"max_fragmentation_fraction", "Max fragmentation", XPV_COL_NUMBER},
};

typedef struct {
    sqlite3 *db;
    int64_t id, base_ns;
    xpv_table *t;
    int64_t best;
    char best_name[256];
} tool_ctx;

static void tool_row(void *ctx, const allocator *al, const series *a)
{
    tool_ctx *c = ctx;
    size_t r = xpv_table_add_row(c->t), n;
    int known;
    const rec *p = &a->r[a->peak];
    xpv_table_set_text(c->t, r, 0, al->name, strlen(al->name));
    xpv_table_set_text(c->t, r, 1, al->source, strlen(al->source));
    xpv_table_set_int(c->t, r, 2, a->in_use[a->peak]);
    xpv_table_set_double(c->t, r, 3, (double)(p->ts_ns - c->base_ns) / 1000.0);
    int64_t step = step_at(c->db, c->id, al->device, p->ts_ns - c->base_ns);
    if (step >= 0) xpv_table_set_int(c->t, r, 4, step);
    if (a->lifetime >= 0) xpv_table_set_int(c->t, r, 5, a->lifetime);
    free(live_at_peak(a, &n, &known));
    if (known) xpv_table_set_int(c->t, r, 6, (int64_t)n);
    xpv_table_set_int(c->t, r, 7, a->allocs);
    xpv_table_set_int(c->t, r, 8, a->frees);
    if (!isnan(a->max_frag)) xpv_table_set_double(c->t, r, 9, a->max_frag);
    if (a->in_use[a->peak] > c->best)
        c->best = a->in_use[a->peak], snprintf(c->best_name, sizeof c->best_name, "%s", al->name);
}

int xpv_tool_memory_profile_has_data(sqlite3 *db, const xpv_tool_scope *s, xpv_err *err)
{
    static const char *const MARKS[] = {"MemoryAllocation", "[memory]"};
    return xpv_store_strings_any(db, s->ids, s->n, MARKS, 2, err);
}

xpv_table *xpv_tool_memory_profile(sqlite3 *db, const xpv_tool_scope *s, xpv_err *err)
{
    scan sc;
    if (s->n != 1 || scan_profile(db, s->ids[0], &sc, err) != 0) {
        if (s->n == 1) scan_free(&sc);
        if (!err->msg[0]) xpv_err_set(err, "one profile at a time");
        return NULL;
    }
    xpv_api_profile_state ps;
    xpv_buf tmp = {0};
    int has = xpv_api_profile_state_get(db, s->ids[0], &ps, &tmp) == 200 && ps.has_span;
    xpv_buf_free(&tmp);
    tool_ctx c = {
        db, s->ids[0], has ? ps.start_ns : 0, xpv_table_new(COLS, sizeof COLS / sizeof COLS[0]),
        -1, ""};
    each_series(&sc, tool_row, &c);
    xpv_table_set_property(c.t, "peak_allocator", c.best_name);
    scan_free(&sc);
    return c.t;
}
