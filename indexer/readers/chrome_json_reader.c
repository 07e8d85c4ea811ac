/*
 * chrome_json_reader.c — streams Chrome Trace Event Format JSON (JAX
 * trace.json.gz and perfetto_trace.json.gz, PyTorch/Kineto *.pt.trace.json,
 * TensorFlow timelines, any array or {"traceEvents": ...} file, gzip or
 * plain) into a sink.
 *
 * Pipeline: gz_input inflates on its own thread into chunks; this thread
 * tokenizes (json_scan) and maps events; the sink stores them on a third.
 * Memory stays flat: one event at a time must be contiguous in the window
 * (the unfinished tail of a chunk is copied in front of the next one), and
 * top-level values that are not traceEvents are skipped as a stream.
 *
 * Mapping (see also xpv_event.h):
 *  - ts/dur are decimal microseconds converted exactly from their text:
 *    ts to ns and dur to ps, truncating any further digits.
 *  - pid/tid: integers in [-2^62, 2^62) and strings that spell such an
 *    integer (Chrome's viewer keys them as text, so "7" and 7 are one
 *    thread) are used as is; other strings, big or fractional numbers and
 *    booleans get ids from 2^62 up in order of appearance, and name their
 *    process/thread unless an M event names it. Missing or null is 0.
 *  - Every event read is counted by its phase letter (xpv_sink_count_read);
 *    an empty {} (the customary last element) is not an event.
 *  - B/E and b/e go to chrome_json_slices.c to be paired. n, s, t, f, i,
 *    I, C are stored as they are, keeping id/id2/bind_id/cname/s/bp/
 *    flow_in/flow_out as args.
 *  - PyTorch kernels: the launch shape comes from grid/block/registers per
 *    thread/est. achieved occupancy %; "shared memory" (static + dynamic
 *    in Kineto) goes to static_shared_bytes and dynamic stays unknown.
 *  - TensorFlow: per-stream "/device:GPU:N/stream:K Compute" processes
 *    hold kernels; "stream:all" repeats them and the executor's
 *    "/job:.../device:GPU:N Compute" row holds ops, so both are device
 *    rows of kind DEVICE_OTHER unless no per-stream row exists for N.
 *  - Args: integers -> INT (UINT above INT64_MAX), other numbers -> DOUBLE
 *    (out of range is an error), strings -> STR when interned, else TEXT,
 *    objects/arrays/true/false/null -> JSON (their raw text). Strings up
 *    to 256 bytes go through xpv_sink_intern_value(); longer ones (call
 *    stacks) are interned once seen twice, within a 64 MB budget.
 *  - Classification by process/thread names needs the M events before the
 *    events they name, which is how JAX and TensorFlow write them.
 *
 * Errors (bad gzip, UTF-8, JSON, ranges, an event over 64 MB, nesting over
 * JS_MAX_DEPTH, a document that is no trace) name the byte offset in the
 * uncompressed stream; events delivered before stay delivered. An array
 * missing only its closing ']' is accepted, as the format allows.
 */
#include "chrome_json_internal.h"
#include "kernel_details.h"
#include "step_names.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HEADROOM (1u << 20)
#define MAX_EVENT_BYTES (64u << 20)
#define MAX_TOP_VALUE_BYTES (16u << 20)
#define MAX_KEY_BYTES 4096
#define VALUE_INTERN_MAX 256
#define LONG_CACHE_SIZE 4096
#define LONG_SEEN_SIZE 65536
#define LONG_INTERN_BUDGET (64u << 20)
#define STRING_ID_BASE ((int64_t)1 << 62)

static const char *const EXTRA_KEYS[EX_COUNT] = {"id", "id2", "bind_id", "cname",
                                                 "s",  "bp",  "flow_in", "flow_out"};

/* ---- process, thread and pairing state ---- */

enum {
    PC_HOST = 0,
    PC_JAX_DEVICE,
    PC_TF_STREAM,
    PC_TF_STREAM_ALL,
    PC_TF_EXECUTOR,
    PC_TF_MEMCPY,
    PC_TF_OTHER
};
enum {
    TC_OTHER = 0,
    TC_KERNEL_STREAM,
    TC_MEMCPY_STREAM,
    TC_STREAM,
    TC_XLA_OPS,
    TC_XLA_MODULES,
    TC_STEPS
};

struct xpv_cj_proc {
    int64_t pid;
    int used, named, device, pclass, devmarked;
};

/* ---- errors ---- */

static int64_t offset_of(const xpv_cj_reader *r, const char *at)
{
    return r->w_off + (at - r->w);
}

static int fail_at(xpv_cj_reader *r, const char *at, const char *reason)
{
    return xpv_err_set(r->err, "%s at byte offset %lld%s", reason, (long long)offset_of(r, at),
                       xpv_gz_is_gzip(r->in) ? " (uncompressed)" : "");
}

/* ---- the window ---- */

/* Moves the window on: keeps [keep, wend) and appends the next chunk.
 * Returns 1, 0 at the end of the stream (r->eof set), -1 on input error. */
static int refill(xpv_cj_reader *r, const char *keep)
{
    if (r->eof) return 0;
    xpv_gz_chunk c;
    int rc = xpv_gz_next(r->in, &c, r->err);
    if (rc <= 0) {
        if (rc == 0) r->eof = 1;
        return rc;
    }
    size_t tail = (size_t)(r->wend - keep);
    int64_t keep_off = offset_of(r, keep);
    if (tail <= HEADROOM) {
        char *dst = c.data - tail;
        memmove(dst, keep, tail);
        if (r->holding) xpv_gz_release(r->in, &r->chunk);
        r->chunk = c;
        r->holding = 1;
        r->w = dst;
        r->wend = c.data + c.len;
    } else {
        /* One value longer than the headroom: gather it in `big`. */
        if (tail + c.len > r->big_cap) {
            size_t cap = r->big_cap ? r->big_cap : HEADROOM * 4;
            while (cap < tail + c.len)
                cap *= 2;
            char *nb = xpv_xmalloc(cap);
            xpv_cj_copy_bytes(nb, keep, tail);
            free(r->big);
            r->big = nb;
            r->big_cap = cap;
        } else {
            memmove(r->big, keep, tail);
        }
        xpv_cj_copy_bytes(r->big + tail, c.data, c.len);
        xpv_gz_release(r->in, &c);
        if (r->holding) xpv_gz_release(r->in, &r->chunk);
        r->holding = 0;
        r->w = r->big;
        r->wend = r->big + tail + c.len;
    }
    r->w_off = keep_off;
    r->p = r->w + (r->p >= keep ? (size_t)(r->p - keep) : 0);
    return 1;
}

/* Skips whitespace, refilling; returns the next byte or -1 at end (or error). */
static int peek(xpv_cj_reader *r)
{
    for (;;) {
        r->p = js_skip_ws(r->p, r->wend);
        if (r->p < r->wend) return (unsigned char)*r->p;
        int rc = refill(r, r->wend);
        if (rc <= 0) return -1;
    }
}

/* Reports the end of input as an error unless the input failed first. */
static int end_error(xpv_cj_reader *r, const char *what)
{
    if (r->err->msg[0]) return -1;
    return fail_at(r, r->wend, what);
}

/* ---- tokenizing one whole value in the window ---- */

typedef struct {
    const char *end;
    int final;
    js_error e;
} cursor;

#define TRY(x)                                                                                     \
    do {                                                                                           \
        int rc_ = (x);                                                                             \
        if (rc_ != JS_OK) return rc_;                                                              \
    } while (0)

static int expect_ws_char(const char **pp, const cursor *c, char want, js_error *e,
                          const char *reason)
{
    const char *p = js_skip_ws(*pp, c->end);
    if (p >= c->end)
        return c->final ? (e->at = p, e->reason = "unexpected end of input", JS_ERR) : JS_MORE;
    if (*p != want) {
        e->at = p;
        e->reason = reason;
        return JS_ERR;
    }
    *pp = p + 1;
    return JS_OK;
}

static int scan_str(const char **pp, cursor *c, xpv_cj_str *out)
{
    const char *after;
    int esc;
    int rc = js_scan_string(*pp, c->end, &after, &esc, &c->e);
    if (rc == JS_MORE && c->final) {
        c->e.at = c->end;
        c->e.reason = "unexpected end of input in a string";
        return JS_ERR;
    }
    if (rc != JS_OK) return rc;
    size_t len = (size_t)(after - 1 - *pp);
    if (len > MAX_EVENT_BYTES) {
        c->e.at = *pp;
        c->e.reason = "string too long";
        return JS_ERR;
    }
    *out = (xpv_cj_str){*pp, (uint32_t)len, (uint8_t)esc};
    *pp = after;
    return JS_OK;
}

/* Any value: strings and numbers by their text, everything else raw. */
static int scan_value(const char **pp, cursor *c, xpv_cj_member *m)
{
    const char *p = js_skip_ws(*pp, c->end), *after;
    if (p >= c->end)
        return c->final ? (c->e.at = p, c->e.reason = "unexpected end of input", JS_ERR) : JS_MORE;
    if (*p == '"') {
        p++;
        TRY(scan_str(&p, c, &m->val));
        m->type = JV_STR;
        *pp = p;
        return JS_OK;
    }
    if (*p == 'N' || *p == 'I' || (*p == '-' && c->end - p >= 2 && p[1] == 'I')) {
        TRY(js_scan_literal(p, c->end, c->final, &after, &c->e));
        m->type = JV_NONFINITE;
    } else if (*p == '-' || (*p >= '0' && *p <= '9')) {
        int is_int;
        TRY(js_scan_number(p, c->end, c->final, &after, &is_int, &c->e));
        m->type = is_int ? JV_INT : JV_NUM;
    } else {
        TRY(js_skip_value(p, c->end, c->final, &after, &c->e));
        m->type = JV_RAW;
    }
    m->val = (xpv_cj_str){p, (uint32_t)(after - p), 0};
    *pp = after;
    return JS_OK;
}

static xpv_cj_member *new_member(xpv_cj_reader *r, uint32_t at)
{
    if (at >= r->cap_members) {
        r->cap_members = r->cap_members ? r->cap_members * 2 : 64;
        r->members = xpv_xrealloc(r->members, r->cap_members * sizeof *r->members);
    }
    return &r->members[at];
}

/* Iterates the members of an object at *pp ('{'), calling fn on each. */
typedef int (*member_fn)(xpv_cj_reader *r, cursor *c, const char **pp, const xpv_cj_str *key,
                         void *ctx);

static int scan_object(xpv_cj_reader *r, cursor *c, const char **pp, member_fn fn, void *ctx)
{
    const char *p = js_skip_ws(*pp + 1, c->end);
    if (p >= c->end)
        return c->final ? (c->e.at = p, c->e.reason = "unexpected end of input", JS_ERR) : JS_MORE;
    if (*p == '}') {
        *pp = p + 1;
        return JS_OK;
    }
    for (;;) {
        xpv_cj_str key;
        TRY(expect_ws_char(&p, c, '"', &c->e, "expected a string key"));
        TRY(scan_str(&p, c, &key));
        TRY(expect_ws_char(&p, c, ':', &c->e, "expected ':' after a key"));
        TRY(fn(r, c, &p, &key, ctx));
        p = js_skip_ws(p, c->end);
        if (p >= c->end)
            return c->final ? (c->e.at = p, c->e.reason = "unexpected end of input", JS_ERR)
                            : JS_MORE;
        if (*p == '}') {
            *pp = p + 1;
            return JS_OK;
        }
        if (*p != ',') {
            c->e.at = p;
            c->e.reason = "expected ',' or '}' in an object";
            return JS_ERR;
        }
        p++;
    }
}

static int arg_member(xpv_cj_reader *r, cursor *c, const char **pp, const xpv_cj_str *key,
                      void *ctx)
{
    xpv_cj_event *pe = ctx;
    xpv_cj_member *m = new_member(r, pe->args_at + pe->nargs);
    m->key = *key;
    TRY(scan_value(pp, c, m));
    pe->nargs++;
    return JS_OK;
}

static xpv_cj_member *event_field(xpv_cj_event *pe, const xpv_cj_str *key)
{
    if (key->esc) return NULL;
    switch (key->len) {
    case 2:
        if (memcmp(key->s, "ph", 2) == 0) return &pe->ph;
        if (memcmp(key->s, "ts", 2) == 0) return &pe->ts;
        if (memcmp(key->s, "id", 2) == 0) return &pe->extra[EX_ID];
        if (memcmp(key->s, "bp", 2) == 0) return &pe->extra[EX_BP];
        break;
    case 3:
        if (memcmp(key->s, "cat", 3) == 0) return &pe->cat;
        if (memcmp(key->s, "pid", 3) == 0) return &pe->pid;
        if (memcmp(key->s, "tid", 3) == 0) return &pe->tid;
        if (memcmp(key->s, "dur", 3) == 0) return &pe->dur;
        if (memcmp(key->s, "id2", 3) == 0) return &pe->extra[EX_ID2];
        break;
    case 4:
        if (memcmp(key->s, "name", 4) == 0) return &pe->name;
        break;
    case 1:
        if (key->s[0] == 's') return &pe->extra[EX_S];
        break;
    default:
        for (int i = EX_BIND_ID; i < EX_COUNT; i++)
            if (xpv_cj_str_is(key, EXTRA_KEYS[i])) return &pe->extra[i];
    }
    return NULL;
}

static int event_member(xpv_cj_reader *r, cursor *c, const char **pp, const xpv_cj_str *key,
                        void *ctx)
{
    xpv_cj_event *pe = ctx;
    pe->nkeys++;
    if (xpv_cj_str_is(key, "args")) {
        const char *p = js_skip_ws(*pp, c->end);
        if (p < c->end && *p == '{') {
            pe->nargs = 0;
            TRY(scan_object(r, c, &p, arg_member, pe));
            *pp = p;
            return JS_OK;
        }
    }
    xpv_cj_member *m = event_field(pe, key);
    xpv_cj_member ignored;
    if (!m) m = &ignored;
    m->key = *key;
    return scan_value(pp, c, m);
}

/* ---- interning ---- */

/* Long arg values (PyTorch call stacks, input shapes) repeat from step to
 * step. The sink's value table takes short strings only, so a long value
 * is interned here once it is seen a second time (a fingerprint table
 * remembers the first), within LONG_INTERN_BUDGET bytes; otherwise it is
 * kept inline. Returns 0 for "keep it inline". */
static uint32_t intern_long(xpv_cj_reader *r, const char *s, size_t n)
{
    uint64_t h = xpv_cj_hash(s, n);
    xpv_cj_icache_ent *e = &r->long_cache[h & (LONG_CACHE_SIZE - 1)];
    if (e->id && e->h == h && e->len == n) {
        const char *t = xpv_sink_string(r->sink, e->id, NULL);
        if (memcmp(t, s, n) == 0) return e->id;
    }
    uint64_t *seen = &r->long_seen[(h >> 20) & (LONG_SEEN_SIZE - 1)];
    if (*seen != h) {
        *seen = h;
        return 0;
    }
    if (r->long_bytes + n > LONG_INTERN_BUDGET) return 0;
    uint32_t id = xpv_sink_intern(r->sink, s, n);
    r->long_bytes += n;
    e->h = h;
    e->id = id;
    e->len = (uint32_t)n;
    return id;
}

/* Sizes scratch for every decoded string of an event of raw_len bytes. */
static void begin_event(xpv_cj_reader *r, size_t raw_len)
{
    if (raw_len > r->scratch_cap) {
        size_t cap = r->scratch_cap ? r->scratch_cap : 1 << 16;
        while (cap < raw_len)
            cap *= 2;
        free(r->scratch);
        r->scratch = xpv_xmalloc(cap);
        r->scratch_cap = cap;
    }
    r->scratch_len = 0;
}

/* ---- small conversions ---- */

/* An integer from a number or from a string that spells one. */
static int member_int(xpv_cj_reader *r, const xpv_cj_member *m, int64_t *out)
{
    if (m->type == JV_INT && m->val.len <= 18) {
        *out = js_small_int(m->val.s, m->val.len);
        return 0;
    }
    if (m->type == JV_INT) return js_to_int64(m->val.s, m->val.len, out);
    if (m->type != JV_STR || m->val.esc || m->val.len == 0 || m->val.len > 20) return -1;
    const char *after;
    int is_int;
    (void)r;
    if (js_scan_number(m->val.s, m->val.s + m->val.len, 1, &after, &is_int, NULL) != JS_OK ||
        after != m->val.s + m->val.len || !is_int)
        return -1;
    return js_to_int64(m->val.s, m->val.len, out);
}

/* A number (or numeric string) times 10^scale, exactly. -2: not a number. */
static int member_scaled(const xpv_cj_member *m, int scale, int64_t *out)
{
    if (m->type == JV_INT || m->type == JV_NUM)
        return js_to_scaled_int64(m->val.s, m->val.len, scale, out);
    if (m->type == JV_STR && !m->val.esc && m->val.len) {
        const char *after;
        int is_int;
        if (js_scan_number(m->val.s, m->val.s + m->val.len, 1, &after, &is_int, NULL) == JS_OK &&
            after == m->val.s + m->val.len)
            return js_to_scaled_int64(m->val.s, m->val.len, scale, out);
    }
    return -2;
}

static const char *find_text(const char *s, size_t n, const char *needle)
{
    size_t k = strlen(needle);
    for (size_t i = 0; i + k <= n; i++)
        if (s[i] == needle[0] && memcmp(s + i, needle, k) == 0) return s + i;
    return NULL;
}

/* Memcpy direction from a name such as "Memcpy HtoD", "MEMCPYDtoH",
 * "Stream #7(MemcpyH2D)"; -1 when the text names none. */
static int memcpy_kind_of(const char *s, size_t n)
{
    if (find_text(s, n, "HtoD") || find_text(s, n, "H2D")) return XPV_KIND_MEMCPY_H2D;
    if (find_text(s, n, "DtoH") || find_text(s, n, "D2H")) return XPV_KIND_MEMCPY_D2H;
    if (find_text(s, n, "DtoD") || find_text(s, n, "D2D")) return XPV_KIND_MEMCPY_D2D;
    if (find_text(s, n, "PtoP") || find_text(s, n, "P2P") || find_text(s, n, "Other"))
        return XPV_KIND_MEMCPY_OTHER;
    return -1;
}

/* "[x, y, z]" (1 to 3 non-negative ints) into dims; others stay -1. */
static void parse_dims(const xpv_cj_str *raw, int32_t dims[3])
{
    const char *p = raw->s, *end = raw->s + raw->len;
    if (p >= end || *p != '[') return;
    p++;
    for (int i = 0; i < 3; i++) {
        p = js_skip_ws(p, end);
        int64_t v = 0;
        const char *d = p;
        while (p < end && *p >= '0' && *p <= '9' && v <= INT32_MAX)
            v = v * 10 + (*p++ - '0');
        if (p == d || v > INT32_MAX) return;
        dims[i] = (int32_t)v;
        p = js_skip_ws(p, end);
        if (p >= end || *p != ',') return;
        p++;
    }
}

/* ---- pid/tid ids, processes and tracks ---- */

/* A string that spells a canonical integer in the plain-id range. */
static int spelled_int(const xpv_cj_str *s, int64_t *out)
{
    if (s->esc || s->len == 0 || s->len > 19) return 0;
    const char *p = s->s, *end = s->s + s->len;
    int neg = *p == '-';
    p += neg;
    if (p >= end || (*p == '0' && end - p > 1) || (neg && *p == '0')) return 0;
    int64_t v = 0;
    for (; p < end; p++) {
        if (*p < '0' || *p > '9') return 0;
        v = v * 10 + (*p - '0');
    }
    if (v >= STRING_ID_BASE) return 0;
    *out = neg ? -v : v;
    return 1;
}

/* Maps a pid/tid value to an int64; *label gets the text when the id came
 * from a string (so it can name the process or thread). */
static int64_t map_id(xpv_cj_reader *r, const xpv_cj_member *m, xpv_cj_str *label)
{
    label->len = 0;
    int64_t v;
    if (m->type == JV_NONE) return 0;
    if (m->type == JV_INT && js_to_int64(m->val.s, m->val.len, &v) == 0 && v >= -STRING_ID_BASE &&
        v < STRING_ID_BASE)
        return v;
    if (m->type == JV_RAW && xpv_cj_str_is(&m->val, "null")) return 0;
    xpv_cj_str t = m->type == JV_STR ? xpv_cj_text_of(r, &m->val) : m->val;
    if (m->type == JV_STR && spelled_int(&m->val, &v)) return v;
    *label = t;
    for (size_t i = 0; i < r->nstr_ids; i++)
        if (strlen(r->str_ids[i]) == t.len && memcmp(r->str_ids[i], t.s, t.len) == 0)
            return STRING_ID_BASE + (int64_t)i;
    r->str_ids = xpv_xrealloc(r->str_ids, (r->nstr_ids + 1) * sizeof *r->str_ids);
    r->str_ids[r->nstr_ids] = xpv_xstrndup(t.s, t.len);
    return STRING_ID_BASE + (int64_t)r->nstr_ids++;
}

static xpv_cj_proc *proc_get(xpv_cj_reader *r, int64_t pid)
{
    if (r->nprocs * 2 >= r->nprocs_slots) {
        size_t n = r->nprocs_slots ? r->nprocs_slots * 2 : 64;
        xpv_cj_proc *slots = xpv_xcalloc(n, sizeof *slots);
        for (size_t i = 0; i < r->nprocs_slots; i++) {
            if (!r->procs[i].used) continue;
            size_t h = xpv_hash64(&r->procs[i].pid, sizeof(int64_t)) & (n - 1);
            while (slots[h].used)
                h = (h + 1) & (n - 1);
            slots[h] = r->procs[i];
        }
        free(r->procs);
        r->procs = slots;
        r->nprocs_slots = n;
    }
    size_t h = xpv_hash64(&pid, sizeof pid) & (r->nprocs_slots - 1);
    while (r->procs[h].used && r->procs[h].pid != pid)
        h = (h + 1) & (r->nprocs_slots - 1);
    xpv_cj_proc *p = &r->procs[h];
    if (!p->used) {
        *p = (xpv_cj_proc){.pid = pid, .used = 1, .device = -1};
        r->nprocs++;
    }
    return p;
}

static xpv_cj_track *track_get(xpv_cj_reader *r, uint32_t track)
{
    if (track >= r->ntracks) {
        size_t n = r->ntracks ? r->ntracks : 64;
        while (n <= track)
            n *= 2;
        r->tracks = xpv_xrealloc(r->tracks, n * sizeof *r->tracks);
        memset(r->tracks + r->ntracks, 0, (n - r->ntracks) * sizeof *r->tracks);
        r->ntracks = n;
    }
    return &r->tracks[track];
}

/* "/device:GPU:3..." -> 3 (also TPU); -1 when absent. */
static int device_ordinal(const xpv_cj_str *name, const char **kind)
{
    static const char *const kinds[] = {"/device:GPU:", "/device:TPU:", "/device:gpu:"};
    for (int k = 0; k < 3; k++) {
        const char *at = find_text(name->s, name->len, kinds[k]);
        if (!at) continue;
        const char *p = at + strlen(kinds[k]), *end = name->s + name->len;
        int v = 0, nd = 0;
        while (p < end && *p >= '0' && *p <= '9' && v < 100000)
            v = v * 10 + (*p++ - '0'), nd++;
        if (!nd) continue;
        if (kind) *kind = at;
        return v;
    }
    return -1;
}

static void classify_process(xpv_cj_reader *r, xpv_cj_proc *p, const xpv_cj_str *name)
{
    const char *at = NULL;
    int dev = device_ordinal(name, &at);
    p->pclass = PC_HOST;
    if (xpv_cj_ends_with(name, " Compute") || xpv_cj_ends_with(name, " Tensors") ||
        find_text(name->s, name->len, "/job:")) {
        r->tf_hint = 1;
        if (dev < 0 || xpv_cj_ends_with(name, " Tensors")) {
            p->pclass = dev < 0 ? PC_HOST : PC_TF_OTHER;
            return;
        }
        if (find_text(name->s, name->len, "/stream:all"))
            p->pclass = PC_TF_STREAM_ALL;
        else if (find_text(name->s, name->len, "/stream:")) {
            p->pclass = PC_TF_STREAM;
            if (dev < 64) r->tf_stream_devices[dev] = 1;
        } else if (find_text(name->s, name->len, "/memcpy"))
            p->pclass = PC_TF_MEMCPY;
        else
            p->pclass = PC_TF_EXECUTOR;
    } else if (dev >= 0 && at == name->s) {
        p->pclass = PC_JAX_DEVICE;
        r->jax_hint = 1;
        char buf[256];
        snprintf(buf, sizeof buf, "%.*s", (int)name->len, name->s);
        xpv_sink_fact(r->sink, "device", buf);
    } else if (xpv_cj_starts_with(name, "/host:")) {
        r->jax_hint = 1;
    }
    if (dev >= 0 && p->pclass != PC_HOST) {
        p->device = dev;
        xpv_sink_process_device(r->sink, p->pid, dev);
    }
}

static int classify_thread(const xpv_cj_str *name)
{
    if (xpv_cj_str_is(name, "XLA Ops")) return TC_XLA_OPS;
    if (xpv_cj_str_is(name, "XLA Modules")) return TC_XLA_MODULES;
    if (xpv_cj_str_is(name, "Steps")) return TC_STEPS;
    if (xpv_cj_starts_with(name, "Stream #")) {
        if (find_text(name->s, name->len, "Kernel")) return TC_KERNEL_STREAM;
        if (find_text(name->s, name->len, "Memcpy")) return TC_MEMCPY_STREAM;
        return TC_STREAM;
    }
    return TC_OTHER;
}

/* ---- args ---- */

static void note_known(const xpv_cj_reader *r, uint32_t key, const xpv_cj_member *m,
                       xpv_cj_known_args *k)
{
    if (key > r->k_last_known) return; /* the known keys were interned first */
    if (key == r->k_correlation)
        k->correlation = m;
    else if (key == r->k_correlation_id)
        k->correlation_id = m;
    else if (key == r->k_device)
        k->device = m;
    else if (key == r->k_grid)
        k->grid = m;
    else if (key == r->k_block)
        k->block = m;
    else if (key == r->k_regs)
        k->regs = m;
    else if (key == r->k_shmem)
        k->shmem = m;
    else if (key == r->k_occupancy)
        k->occupancy = m;
    else if (key == r->k_step_num)
        k->step_num = m;
    else if (key == r->k_group_id)
        k->group_id = m;
    else if (key == r->k_kernel_details)
        k->kernel_details = m;
    else if (key == r->k_memcpy_details)
        k->memcpy_details = m;
    else if (key == r->k_hlo_op)
        k->hlo_op = m;
    else if (key == r->k_tf_op)
        k->tf_op = m;
    else if (key == r->k_name)
        k->name = m;
    else if (key == r->k_op)
        k->op = m;
}

static int convert_arg(xpv_cj_reader *r, const xpv_cj_member *m, uint32_t key, xpv_arg *a)
{
    a->key = key;
    a->text = NULL;
    a->len = 0;
    switch (m->type) {
    case JV_STR: {
        xpv_cj_str t = xpv_cj_text_of(r, &m->val);
        uint32_t id = t.len <= VALUE_INTERN_MAX ? xpv_cj_intern(r, t.s, t.len, 1)
                                                : intern_long(r, t.s, t.len);
        if (id || t.len == 0) {
            a->type = XPV_ARG_STR;
            a->v.str = id;
        } else {
            a->type = XPV_ARG_TEXT;
            a->text = t.s;
            a->len = t.len;
        }
        return 0;
    }
    case JV_INT:
        if (m->val.len <= 18) {
            a->type = XPV_ARG_INT;
            a->v.i = js_small_int(m->val.s, m->val.len);
            return 0;
        }
        if (js_to_int64(m->val.s, m->val.len, &a->v.i) == 0) {
            a->type = XPV_ARG_INT;
            return 0;
        }
        if (m->val.s[0] != '-' && js_to_uint64(m->val.s, m->val.len, &a->v.u) == 0) {
            a->type = XPV_ARG_UINT;
            return 0;
        }
        /* fall through */
    case JV_NUM:
        a->type = XPV_ARG_DOUBLE;
        if (js_to_double(m->val.s, m->val.len, &a->v.d) != 0)
            return fail_at(r, m->val.s, "number out of range");
        return 0;
    case JV_NONFINITE:
        a->type = XPV_ARG_DOUBLE;
        a->v.d = m->val.s[0] == 'N' ? NAN : m->val.s[0] == '-' ? -INFINITY : INFINITY;
        return 0;
    default:
        a->type = XPV_ARG_JSON;
        a->text = m->val.s;
        a->len = m->val.len;
        return 0;
    }
}

static xpv_arg *args_room(xpv_cj_reader *r, size_t n)
{
    if (n > r->cap_args) {
        size_t cap = r->cap_args ? r->cap_args : 64;
        while (cap < n)
            cap *= 2;
        r->args = xpv_xrealloc(r->args, cap * sizeof *r->args);
        r->cap_args = cap;
    }
    return r->args;
}

/* Converts the event's args and kept top-level fields into r->args. */
static int convert_args(xpv_cj_reader *r, xpv_cj_event *pe, xpv_cj_known_args *k, uint32_t *nargs)
{
    xpv_arg *args = args_room(r, pe->nargs + EX_COUNT);
    uint32_t n = 0;
    memset(k, 0, sizeof *k);
    for (uint32_t i = 0; i < pe->nargs; i++) {
        const xpv_cj_member *m = &r->members[pe->args_at + i];
        xpv_cj_str key = xpv_cj_text_of(r, &m->key);
        uint32_t kid = xpv_cj_intern(r, key.s, key.len, 0);
        note_known(r, kid, m, k);
        if (convert_arg(r, m, kid, &args[n++]) != 0) return -1;
    }
    for (int i = 0; i < EX_COUNT; i++)
        if (pe->extra[i].type != JV_NONE)
            if (convert_arg(r, &pe->extra[i], r->k_extra[i], &args[n++]) != 0) return -1;
    *nargs = n;
    return 0;
}

static void intern_known_keys(xpv_cj_reader *r)
{
    r->k_correlation = xpv_sink_intern_cstr(r->sink, "correlation");
    r->k_correlation_id = xpv_sink_intern_cstr(r->sink, "correlation_id");
    r->k_device = xpv_sink_intern_cstr(r->sink, "device");
    r->k_grid = xpv_sink_intern_cstr(r->sink, "grid");
    r->k_block = xpv_sink_intern_cstr(r->sink, "block");
    r->k_regs = xpv_sink_intern_cstr(r->sink, "registers per thread");
    r->k_shmem = xpv_sink_intern_cstr(r->sink, "shared memory");
    r->k_occupancy = xpv_sink_intern_cstr(r->sink, "est. achieved occupancy %");
    r->k_step_num = xpv_sink_intern_cstr(r->sink, "step_num");
    r->k_group_id = xpv_sink_intern_cstr(r->sink, "group_id");
    r->k_kernel_details = xpv_sink_intern_cstr(r->sink, "kernel_details");
    r->k_memcpy_details = xpv_sink_intern_cstr(r->sink, "memcpy_details");
    r->k_hlo_op = xpv_sink_intern_cstr(r->sink, "hlo_op");
    r->k_tf_op = xpv_sink_intern_cstr(r->sink, "tf_op");
    r->k_name = xpv_sink_intern_cstr(r->sink, "name");
    r->k_op = xpv_sink_intern_cstr(r->sink, "op");
    for (int i = 0; i < EX_COUNT; i++)
        r->k_extra[i] = xpv_sink_intern_cstr(r->sink, EXTRA_KEYS[i]);
    const uint32_t *ids[] = {
        &r->k_correlation, &r->k_correlation_id, &r->k_device,         &r->k_grid,
        &r->k_block,       &r->k_regs,           &r->k_shmem,          &r->k_occupancy,
        &r->k_step_num,    &r->k_group_id,       &r->k_kernel_details, &r->k_memcpy_details,
        &r->k_hlo_op,      &r->k_tf_op,          &r->k_name,           &r->k_op};
    r->k_last_known = 0;
    for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++)
        if (*ids[i] > r->k_last_known) r->k_last_known = *ids[i];
}

/* ---- classification ---- */

static uint32_t text_id(xpv_cj_reader *r, const xpv_cj_member *m)
{
    if (!m || m->type != JV_STR) return 0;
    xpv_cj_str t = xpv_cj_text_of(r, &m->val);
    return xpv_cj_intern(r, t.s, t.len, 0);
}

static void pytorch_launch(const xpv_cj_known_args *k, xpv_launch *l)
{
    int64_t v;
    if (k->grid && k->grid->type == JV_RAW) parse_dims(&k->grid->val, l->grid);
    if (k->block && k->block->type == JV_RAW) parse_dims(&k->block->val, l->block);
    if (k->regs && k->regs->type == JV_INT &&
        js_to_int64(k->regs->val.s, k->regs->val.len, &v) == 0 && v >= 0 && v <= INT32_MAX)
        l->registers_per_thread = (int32_t)v;
    if (k->shmem && k->shmem->type == JV_INT &&
        js_to_int64(k->shmem->val.s, k->shmem->val.len, &v) == 0 && v >= 0 && v <= INT32_MAX)
        l->static_shared_bytes = (int32_t)v;
    double d;
    if (k->occupancy && (k->occupancy->type == JV_INT || k->occupancy->type == JV_NUM) &&
        js_to_double(k->occupancy->val.s, k->occupancy->val.len, &d) == 0 && d >= 0)
        l->occupancy_pct = d;
}

/* Marks the process of a PyTorch device event as device args.device. */
static void pytorch_device(xpv_cj_reader *r, xpv_cj_proc *p, const xpv_cj_known_args *k)
{
    int64_t dev;
    if (!k->device || member_int(r, k->device, &dev) != 0 || dev < 0 || dev > 1000000) return;
    if (p->devmarked && p->device == dev) return;
    p->devmarked = 1;
    p->device = (int)dev;
    xpv_sink_process_device(r->sink, p->pid, (int)dev);
}

/* PyTorch/Kineto categories; returns 1 when the category decided. */
static int classify_pytorch(xpv_cj_reader *r, xpv_event *ev, const xpv_cj_str *cat,
                            const xpv_cj_str *name, const xpv_cj_known_args *k, xpv_cj_proc *p,
                            xpv_launch *l)
{
    int64_t corr;
    int has_corr = k->correlation && member_int(r, k->correlation, &corr) == 0;
    if (xpv_cj_str_is(cat, "kernel") || xpv_cj_str_is(cat, "Kernel")) {
        ev->kind = XPV_KIND_KERNEL;
        pytorch_launch(k, l);
        ev->launch = l;
        pytorch_device(r, p, k);
    } else if (xpv_cj_str_is(cat, "gpu_memcpy") || xpv_cj_str_is(cat, "Memcpy")) {
        int kind = memcpy_kind_of(name->s, name->len);
        ev->kind = (uint8_t)(kind < 0 ? XPV_KIND_MEMCPY_OTHER : kind);
        pytorch_device(r, p, k);
    } else if (xpv_cj_str_is(cat, "gpu_memset") || xpv_cj_str_is(cat, "Memset")) {
        ev->kind = XPV_KIND_MEMSET;
        pytorch_device(r, p, k);
    } else if (xpv_cj_str_is(cat, "cuda_runtime") || xpv_cj_str_is(cat, "Runtime") ||
               xpv_cj_str_is(cat, "cuda_driver")) {
        if (!has_corr) return 1;
        ev->kind = XPV_KIND_LAUNCH;
    } else if (xpv_cj_str_is(cat, "gpu_user_annotation")) {
        ev->kind = XPV_KIND_DEVICE_OTHER;
        return 1;
    } else {
        return 0;
    }
    if (has_corr) ev->corr = corr;
    return 1;
}

static void jax_kernel(xpv_cj_reader *r, xpv_event *ev, const xpv_cj_known_args *k, xpv_launch *l)
{
    ev->kind = XPV_KIND_KERNEL;
    if (k->kernel_details && k->kernel_details->type == JV_STR) {
        xpv_cj_str t = xpv_cj_text_of(r, &k->kernel_details->val);
        xpv_kernel_details_parse(t.s, t.len, l);
    }
    l->op = text_id(r, k->hlo_op);
    if (!l->op) l->op = text_id(r, k->tf_op);
    ev->launch = l;
}

/* Device rows of JAX (by thread) and TensorFlow (by process). */
static void classify_device(xpv_cj_reader *r, xpv_event *ev, const xpv_cj_str *name,
                            const xpv_cj_known_args *k, const xpv_cj_proc *p, const xpv_cj_track *t,
                            xpv_launch *l)
{
    int64_t v;
    int mk = memcpy_kind_of(name->s, name->len);
    if (p->pclass == PC_JAX_DEVICE) {
        if (k->kernel_details || t->tclass == TC_KERNEL_STREAM)
            jax_kernel(r, ev, k, l);
        else if (k->memcpy_details || t->tclass == TC_MEMCPY_STREAM)
            ev->kind = (uint8_t)(mk >= 0          ? mk
                                 : t->memkind > 0 ? t->memkind
                                                  : XPV_KIND_MEMCPY_OTHER);
        else if (t->tclass == TC_XLA_OPS)
            ev->kind = XPV_KIND_XLA_OP;
        else if (t->tclass == TC_XLA_MODULES)
            ev->kind = XPV_KIND_XLA_MODULE;
        else if (t->tclass == TC_STEPS) {
            ev->kind = XPV_KIND_STEP;
            ev->step_src = XPV_STEP_STEPS_LINE;
            xpv_cj_member nm = {.type = JV_STR, .val = *name};
            if (member_int(r, &nm, &v) == 0) ev->step = v;
        } else
            ev->kind = XPV_KIND_DEVICE_OTHER;
        if (k->correlation_id && member_int(r, k->correlation_id, &v) == 0) ev->corr = v;
        return;
    }
    int exec_kernels = p->pclass == PC_TF_EXECUTOR &&
                       !(p->device >= 0 && p->device < 64 && r->tf_stream_devices[p->device]);
    if (p->pclass == PC_TF_STREAM || p->pclass == PC_TF_MEMCPY || exec_kernels) {
        if (xpv_cj_starts_with(name, "MEMCPY") || xpv_cj_starts_with(name, "Memcpy") ||
            p->pclass == PC_TF_MEMCPY)
            ev->kind = (uint8_t)(mk >= 0 ? mk : XPV_KIND_MEMCPY_OTHER);
        else {
            ev->kind = XPV_KIND_KERNEL;
            l->op = text_id(r, k->name);
            if (!l->op) l->op = text_id(r, k->op);
            ev->launch = l;
        }
    } else {
        ev->kind = XPV_KIND_DEVICE_OTHER;
    }
}

static void classify(xpv_cj_reader *r, xpv_event *ev, const xpv_cj_str *cat, const xpv_cj_str *name,
                     const xpv_cj_known_args *k, xpv_cj_proc *p, const xpv_cj_track *t,
                     xpv_launch *l)
{
    int64_t v;
    int src;
    xpv_launch_init(l);
    if (xpv_cj_starts_with(name, "ProfilerStep#")) {
        xpv_cj_member nm = {.type = JV_STR, .val = {name->s + 13, name->len - 13, 0}};
        r->pytorch_hint = 1;
        if (member_int(r, &nm, &v) == 0) {
            ev->kind = XPV_KIND_STEP;
            ev->step = v;
            ev->step_src = XPV_STEP_PROFILER_STEP;
            return;
        }
    }
    if (!classify_pytorch(r, ev, cat, name, k, p, l)) {
        if (p->pclass != PC_HOST && p->pclass != PC_TF_OTHER) {
            classify_device(r, ev, name, k, p, t, l);
        } else if (k->kernel_details) {
            jax_kernel(r, ev, k, l);
        } else if (k->step_num && member_int(r, k->step_num, &v) == 0) {
            ev->kind = XPV_KIND_STEP;
            ev->step = v;
            ev->step_src = XPV_STEP_ANNOTATION;
        } else if ((src = xpv_step_name_source(name->s, name->len, &v)) != 0) {
            ev->kind = XPV_KIND_STEP; /* a weaker source: used without ProfilerStep#N */
            ev->step = v;
            ev->step_src = (uint8_t)src;
        } else if (k->correlation_id && member_int(r, k->correlation_id, &v) == 0) {
            ev->kind = XPV_KIND_LAUNCH;
            ev->corr = v;
        }
    }
    if (ev->step < 0 && k->group_id && member_int(r, k->group_id, &v) == 0) ev->step = v;
}

/* ---- metadata (M) events ---- */

static const xpv_cj_member *arg_named(xpv_cj_reader *r, const xpv_cj_event *pe, const char *key)
{
    for (uint32_t i = 0; i < pe->nargs; i++)
        if (xpv_cj_str_is(&r->members[pe->args_at + i].key, key))
            return &r->members[pe->args_at + i];
    return NULL;
}

static void metadata(xpv_cj_reader *r, xpv_cj_event *pe)
{
    xpv_cj_str label, name = xpv_cj_text_of(r, &pe->name.val);
    if (pe->name.type != JV_STR) return;
    int64_t pid = map_id(r, &pe->pid, &label), tid = map_id(r, &pe->tid, &label), v;
    const xpv_cj_member *a;
    if (xpv_cj_str_is(&name, "process_name") && (a = arg_named(r, pe, "name")) &&
        a->type == JV_STR) {
        xpv_cj_str t = xpv_cj_text_of(r, &a->val);
        xpv_cj_proc *p = proc_get(r, pid);
        xpv_sink_process_name(r->sink, pid, t.s, t.len);
        p->named = 1;
        classify_process(r, p, &t);
    } else if (xpv_cj_str_is(&name, "thread_name") && (a = arg_named(r, pe, "name")) &&
               a->type == JV_STR) {
        xpv_cj_str t = xpv_cj_text_of(r, &a->val);
        xpv_cj_track *ti = track_get(r, xpv_sink_track(r->sink, pid, tid));
        xpv_sink_thread_name(r->sink, pid, tid, t.s, t.len);
        ti->named = 1;
        ti->tclass = classify_thread(&t);
        ti->memkind = memcpy_kind_of(t.s, t.len);
    } else if (xpv_cj_str_is(&name, "process_sort_index") && (a = arg_named(r, pe, "sort_index")) &&
               member_int(r, a, &v) == 0) {
        xpv_sink_process_sort(r->sink, pid, v);
    } else if (xpv_cj_str_is(&name, "thread_sort_index") && (a = arg_named(r, pe, "sort_index")) &&
               member_int(r, a, &v) == 0) {
        xpv_sink_thread_sort(r->sink, pid, tid, v);
    } else if (xpv_cj_str_is(&name, "process_labels") && (a = arg_named(r, pe, "labels")) &&
               a->type == JV_STR) {
        xpv_cj_str t = xpv_cj_text_of(r, &a->val);
        xpv_sink_process_label(r->sink, pid, t.s, t.len);
    }
}

/* ---- one event ---- */

static int event_times(xpv_cj_reader *r, const xpv_cj_event *pe, xpv_event *ev)
{
    int64_t v;
    int rc = pe->ts.type ? member_scaled(&pe->ts, 3, &v) : -2;
    if (rc == -1) return fail_at(r, pe->ts.val.s, "ts out of range");
    ev->ts_ns = rc == 0 ? v : 0;
    if (ev->ph != 'X') return 0;
    rc = pe->dur.type ? member_scaled(&pe->dur, 6, &v) : -2;
    if (rc == -1 || (rc == 0 && v > INT64_MAX - 1000))
        return fail_at(r, pe->dur.val.s, "dur out of range");
    if (rc != 0) v = 0;
    if (v < 0) v = 0, r->negative_dur++;
    ev->dur_ps = v;
    ev->dur_ns = v / 1000;
    return 0;
}

/* Resolves the track, naming it after a string pid/tid when no M did. */
static uint32_t event_track(xpv_cj_reader *r, const xpv_cj_event *pe, xpv_cj_proc **pp,
                            xpv_cj_track **tp)
{
    xpv_cj_str plabel, tlabel;
    int64_t pid = map_id(r, &pe->pid, &plabel), tid = map_id(r, &pe->tid, &tlabel);
    if (r->last.valid && r->last.pid == pid && r->last.tid == tid && r->last.procs == r->procs) {
        *pp = r->last.proc;
        *tp = &r->tracks[r->last.track];
        return r->last.track;
    }
    uint32_t track = xpv_sink_track(r->sink, pid, tid);
    xpv_cj_proc *p = proc_get(r, pid);
    xpv_cj_track *t = track_get(r, track);
    r->last.valid = !plabel.len && !tlabel.len;
    r->last.pid = pid;
    r->last.tid = tid;
    r->last.track = track;
    r->last.proc = p;
    r->last.procs = r->procs;
    if (plabel.len && !p->named) {
        xpv_sink_process_name(r->sink, pid, plabel.s, plabel.len);
        p->named = 1;
    }
    if (tlabel.len && !t->named) {
        xpv_sink_thread_name(r->sink, pid, tid, tlabel.s, tlabel.len);
        t->named = 1;
        t->memkind = -1;
    }
    *pp = p;
    *tp = t;
    return track;
}

static int process_event(xpv_cj_reader *r, xpv_cj_event *pe, size_t raw_len)
{
    if (pe->nkeys == 0) return 0; /* the customary trailing {} */
    r->objects++;
    if (pe->ph.type != JV_STR || pe->ph.val.len == 0) {
        xpv_sink_skipped(r->sink, "event without ph");
        return 0;
    }
    begin_event(r, raw_len);
    xpv_cj_str ph = xpv_cj_text_of(r, &pe->ph.val);
    char phc = ph.s[0];
    xpv_sink_count_read(r->sink, phc);
    r->with_ph++;
    if (phc == 'M' && ph.len == 1) {
        metadata(r, pe);
        return 0;
    }
    if (ph.len != 1 || !strchr("XBEiICbenstf", phc) || phc == 0) {
        char what[32] = "phase ";
        size_t n = 6;
        for (uint32_t i = 0; i < ph.len && i < 8; i++)
            what[n++] = ph.s[i] > 0x20 && ph.s[i] < 0x7f ? ph.s[i] : '?';
        what[n] = 0;
        xpv_sink_skipped(r->sink, what);
        return 0;
    }
    xpv_event ev;
    xpv_event_init(&ev);
    ev.ph = phc;
    if (event_times(r, pe, &ev) != 0) return -1;
    xpv_cj_proc *p;
    xpv_cj_track *t;
    ev.track = event_track(r, pe, &p, &t);
    xpv_cj_str name =
        pe->name.type == JV_STR ? xpv_cj_text_of(r, &pe->name.val) : (xpv_cj_str){"", 0, 0};
    xpv_cj_str cat =
        pe->cat.type == JV_STR ? xpv_cj_text_of(r, &pe->cat.val) : (xpv_cj_str){"", 0, 0};
    ev.name = xpv_cj_intern(r, name.s, name.len, 0);
    ev.cat = xpv_cj_intern(r, cat.s, cat.len, 0);
    xpv_cj_known_args k;
    if (convert_args(r, pe, &k, &ev.nargs) != 0) return -1;
    ev.args = r->args;
    xpv_launch launch;
    classify(r, &ev, &cat, &name, &k, p, t, &launch);
    xpv_cj_deliver(r, pe, t, &ev);
    return 0;
}

/* ---- the document ---- */

typedef int (*whole_fn)(xpv_cj_reader *r, cursor *c, const char **pp, void *ctx);

/* Runs fn on one whole value at r->p, refilling until it lies in the
 * window. 0 on success (r->p past it, r->last_start at it), 1 when it is
 * longer than `limit` (r->p unchanged), -1 on error. */
static int parse_whole(xpv_cj_reader *r, whole_fn fn, void *ctx, size_t limit)
{
    for (;;) {
        cursor c = {r->wend, r->eof, {NULL, NULL}};
        const char *p = r->p;
        int rc = fn(r, &c, &p, ctx);
        if (rc == JS_OK) {
            r->last_start = r->p;
            r->p = p;
            return 0;
        }
        if (rc == JS_ERR) return fail_at(r, c.e.at ? c.e.at : r->p, c.e.reason);
        if (r->eof) return fail_at(r, r->wend, "unexpected end of input");
        if ((size_t)(r->wend - r->p) > limit) return 1;
        if (refill(r, r->p) < 0) return -1;
    }
}

static int scan_event(xpv_cj_reader *r, cursor *c, const char **pp, void *ctx)
{
    xpv_cj_event *pe = ctx;
    memset(pe, 0, sizeof *pe);
    return scan_object(r, c, pp, event_member, pe);
}

static int scan_any(xpv_cj_reader *r, cursor *c, const char **pp, void *ctx)
{
    (void)r;
    xpv_cj_member *m = ctx;
    return scan_value(pp, c, m);
}

static int scan_key(xpv_cj_reader *r, cursor *c, const char **pp, void *ctx)
{
    (void)r;
    const char *p = *pp + 1;
    TRY(scan_str(&p, c, ctx));
    TRY(expect_ws_char(&p, c, ':', &c->e, "expected ':' after a key"));
    *pp = p;
    return JS_OK;
}

/* Skips one value of any size as a stream. */
static int skip_stream(xpv_cj_reader *r)
{
    js_skipper s;
    js_skipper_init(&s);
    for (;;) {
        const char *stop;
        js_error e = {NULL, NULL};
        int rc = js_skipper_feed(&s, r->p, r->wend, r->eof, &stop, &e);
        if (rc == JS_OK) {
            r->p = stop;
            return 0;
        }
        if (rc == JS_ERR) return r->err->msg[0] ? -1 : fail_at(r, e.at, e.reason);
        r->p = stop;
        if (refill(r, r->p) < 0) return -1;
    }
}

static int end_of_events(xpv_cj_reader *r, int top_array)
{
    if (r->err->msg[0]) return -1;
    if (!top_array) return end_error(r, "unexpected end of input inside traceEvents");
    r->array_unterminated = 1;
    return 0;
}

static int read_events(xpv_cj_reader *r, int top_array)
{
    r->p++;
    int c = peek(r);
    for (;;) {
        if (c == ']') {
            r->p++;
            return 0;
        }
        if (c < 0) return end_of_events(r, top_array);
        if (c != '{') return fail_at(r, r->p, "not a trace: expected an event object");
        xpv_cj_event pe;
        int rc = parse_whole(r, scan_event, &pe, MAX_EVENT_BYTES);
        if (rc > 0) return fail_at(r, r->p, "event longer than 64 MB");
        if (rc < 0 || process_event(r, &pe, (size_t)(r->p - r->last_start)) != 0) return -1;
        c = peek(r);
        if (c == ',') {
            r->p++;
            c = peek(r);
        } else if (c != ']' && c >= 0) {
            return fail_at(r, r->p, "expected ',' or ']' after an event");
        }
    }
}

/* ---- top-level keys ---- */

typedef struct {
    xpv_cj_reader *r;
    int want; /* 0: deviceProperties entry, 1: distributedInfo, 2: metadata */
} top_ctx;

static void member_text(xpv_cj_reader *r, const xpv_cj_member *m, char *buf, size_t cap)
{
    xpv_cj_str t = m->type == JV_STR ? xpv_cj_text_of(r, &m->val) : m->val;
    snprintf(buf, cap, "%.*s", (int)t.len, t.s);
}

static int top_member(xpv_cj_reader *r, cursor *c, const char **pp, const xpv_cj_str *key,
                      void *ctx)
{
    top_ctx *tc = ctx;
    xpv_cj_member m = {0};
    TRY(scan_value(pp, c, &m));
    char buf[512];
    if (tc->want == 0 && xpv_cj_str_is(key, "name") && m.type == JV_STR) {
        member_text(r, &m, buf, sizeof buf);
        xpv_sink_fact(r->sink, "device", buf);
    } else if (tc->want == 1 && (xpv_cj_str_is(key, "rank") || xpv_cj_str_is(key, "world_size")) &&
               m.type == JV_INT) {
        member_text(r, &m, buf, sizeof buf);
        xpv_sink_fact(r->sink, key->s[0] == 'r' ? "rank" : "world_size", buf);
    } else if (tc->want == 2 && xpv_cj_str_is(key, "highres-ticks") &&
               xpv_cj_str_is(&m.val, "true")) {
        r->highres = 1;
    }
    return JS_OK;
}

/* Reads deviceProperties / distributedInfo / metadata / displayTimeUnit
 * whole when small (they are), else skips them. */
static int read_known_value(xpv_cj_reader *r, const char *key)
{
    xpv_cj_member m = {0};
    int rc =
        parse_whole(r, scan_any, &m, strcmp(key, "metadata") == 0 ? 1u << 20 : MAX_TOP_VALUE_BYTES);
    if (rc > 0) return skip_stream(r);
    if (rc < 0) return -1;
    begin_event(r, m.val.len);
    top_ctx tc = {r, 0};
    cursor c = {m.val.s + m.val.len, 1, {NULL, NULL}};
    if (strcmp(key, "displayTimeUnit") == 0) {
        r->ns_unit = m.type == JV_STR && xpv_cj_str_is(&m.val, "ns");
    } else if (strcmp(key, "deviceProperties") == 0 && m.type == JV_RAW && m.val.s[0] == '[') {
        const char *p = m.val.s + 1;
        for (;;) {
            p = js_skip_ws(p, c.end);
            if (p >= c.end || *p != '{') break;
            if (scan_object(r, &c, &p, top_member, &tc) != JS_OK) break;
            p = js_skip_ws(p, c.end);
            if (p >= c.end || *p != ',') break;
            p++;
        }
    } else if (m.type == JV_RAW && m.val.s[0] == '{') {
        tc.want = strcmp(key, "distributedInfo") == 0 ? 1 : 2;
        const char *p = m.val.s;
        scan_object(r, &c, &p, top_member, &tc);
    }
    return 0;
}

static int read_top_object(xpv_cj_reader *r)
{
    static const char *const pytorch_keys[] = {"schemaVersion", "deviceProperties",
                                               "distributedInfo", NULL};
    int saw_events = 0;
    r->p++;
    int c = peek(r);
    if (c == '}') return fail_at(r, r->p, "not a trace: empty JSON object");
    for (;;) {
        if (c < 0) return end_error(r, "unexpected end of input");
        if (c != '"') return fail_at(r, r->p, "expected a key");
        xpv_cj_str key = {0};
        int rc = parse_whole(r, scan_key, &key, MAX_KEY_BYTES);
        if (rc > 0) return fail_at(r, r->p, "key too long");
        if (rc < 0) return -1;
        char name[64];
        snprintf(name, sizeof name, "%.*s", key.esc ? 0 : (int)(key.len < 63 ? key.len : 63),
                 key.s);
        if (key.len >= 63) name[0] = 0;
        for (int i = 0; pytorch_keys[i]; i++)
            if (strcmp(name, pytorch_keys[i]) == 0) r->pytorch_hint = 1;
        c = peek(r);
        if (c < 0) return end_error(r, "unexpected end of input");
        if (strcmp(name, "traceEvents") == 0) {
            if (c != '[') return fail_at(r, r->p, "not a trace: traceEvents is not an array");
            if (read_events(r, 0) != 0) return -1;
            saw_events = 1;
        } else if (strcmp(name, "deviceProperties") == 0 || strcmp(name, "distributedInfo") == 0 ||
                   strcmp(name, "metadata") == 0 || strcmp(name, "displayTimeUnit") == 0) {
            if (read_known_value(r, name) != 0) return -1;
        } else if (skip_stream(r) != 0) {
            return -1;
        }
        c = peek(r);
        if (c == '}') break;
        if (c < 0) return end_error(r, "unexpected end of input");
        if (c != ',') return fail_at(r, r->p, "expected ',' or '}' after a top-level value");
        r->p++;
        c = peek(r);
    }
    r->p++;
    if (!saw_events) return fail_at(r, r->p, "not a trace: the object has no traceEvents array");
    return 0;
}

static int read_document(xpv_cj_reader *r)
{
    int c = peek(r);
    if (c == 0xEF && r->wend - r->p >= 3 && memcmp(r->p, "\xEF\xBB\xBF", 3) == 0) {
        r->p += 3;
        c = peek(r);
    }
    if (c < 0) return end_error(r, "not a trace: the file is empty");
    int rc;
    if (c == '[')
        rc = read_events(r, 1);
    else if (c == '{')
        rc = read_top_object(r);
    else
        return fail_at(r, r->p, "not a trace: expected '[' or '{'");
    if (rc != 0) return -1;
    c = peek(r);
    if (c >= 0) return fail_at(r, r->p, "unexpected data after the JSON document");
    if (r->err->msg[0]) return -1;
    if (r->objects > 0 && r->with_ph == 0)
        return fail_at(r, r->p, "not a trace: no event has a \"ph\" field");
    return 0;
}

/* ---- facts ---- */

static void record_facts(xpv_cj_reader *r)
{
    const char *producer = "unknown";
    if (r->pytorch_hint)
        producer = "PyTorch";
    else if (r->tf_hint)
        producer = "TensorFlow";
    else if (r->jax_hint || (r->ns_unit && r->highres))
        producer = "JAX/XLA";
    xpv_sink_fact(r->sink, "producer", producer);
    xpv_cj_slice_warnings(r);
    if (r->array_unterminated)
        xpv_sink_fact(r->sink, "warning",
                      "the event array has no closing ']' (allowed by the format; the file may "
                      "have been cut short)");
}

static void reader_free(xpv_cj_reader *r)
{
    xpv_cj_slices_free(r);
    for (size_t i = 0; i < r->nstr_ids; i++)
        free(r->str_ids[i]);
    free(r->str_ids);
    free(r->tracks);
    free(r->procs);
    free(r->icache);
    free(r->long_cache);
    free(r->long_seen);
    free(r->members);
    free(r->args);
    free(r->scratch);
    free(r->big);
    if (r->in) {
        if (r->holding) xpv_gz_release(r->in, &r->chunk);
        xpv_gz_close(r->in);
    }
}

int xpv_read_chrome_json(const char *path, xpv_sink *sink, xpv_err *err)
{
    xpv_err local = {{0}};
    if (!err) err = &local;
    err->msg[0] = 0;
    xpv_cj_reader r;
    memset(&r, 0, sizeof r);
    r.sink = sink;
    r.err = err;
    r.in = xpv_gz_open(path, 0, HEADROOM, err);
    if (!r.in) return -1;
    r.icache = xpv_xcalloc(XPV_CJ_ICACHE_SIZE, sizeof *r.icache);
    r.long_cache = xpv_xcalloc(LONG_CACHE_SIZE, sizeof *r.long_cache);
    r.long_seen = xpv_xcalloc(LONG_SEEN_SIZE, sizeof *r.long_seen);
    r.w = r.wend = r.p = "";
    intern_known_keys(&r);
    int rc = read_document(&r);
    if (rc == 0) {
        xpv_cj_flush_open(&r, 1);
        record_facts(&r);
    } else {
        record_facts(&r);
    }
    reader_free(&r);
    return rc == 0 ? 0 : -1;
}
