/*
 * chrome_json_reader.c — streams Chrome Trace Event Format JSON (JAX
 * trace.json.gz and perfetto_trace.json.gz, PyTorch/Kineto *.pt.trace.json,
 * TensorFlow timelines, any array or {"traceEvents": ...} file, gzip or
 * plain) into a sink.
 *
 * Pipeline: gz_input inflates on its own thread into chunks; this thread
 * tokenizes (json_scan) events into batches; a parser thread maps them
 * (chrome_json_event.c, through chrome_json_handoff.c); the sink stores
 * them on a fourth. Memory stays flat: one event at a time must be
 * contiguous in the window (the unfinished tail of a chunk is copied in
 * front of the next one), the chunks and batches in flight are bounded by
 * two rings, and top-level values that are not traceEvents are skipped as
 * a stream.
 *
 * Invariants: an event is kept only once it lies whole in the window; a
 * refill passes the batch on before the window moves, so every event of a
 * batch lies in one window, and the chunk left behind is given back by the
 * parser after that batch. `big` is reused only once the parser is idle.
 * The tokenizer touches the sink, scratch and the tables only outside the
 * traceEvents array, when no parser thread runs.
 *
 * Mapping (see also xpv_event.h):
 *  - ts/dur are decimal microseconds converted exactly from their text:
 *    ts to ns and dur to ps, truncating any further digits.
 *  - Every event read is counted by its phase letter (xpv_sink_count_read);
 *    an empty {} (the customary last element) is not an event.
 *  - pid/tid become a track, M events fill the process and thread tables,
 *    and each event's kind comes from chrome_json_classify.c.
 *  - B/E and b/e go to chrome_json_slices.c to be paired. n, s, t, f, i,
 *    I, C are stored as they are, keeping id/id2/bind_id/cname/s/bp/
 *    flow_in/flow_out as args.
 *  - Args: integers -> INT (UINT above INT64_MAX), other numbers -> DOUBLE
 *    (out of range is an error), strings -> STR when interned, else TEXT,
 *    objects/arrays/true/false/null -> JSON (their raw text). Strings up
 *    to 256 bytes go through xpv_sink_intern_value(); longer ones (call
 *    stacks) are interned once seen twice, within a 64 MB budget.
 *
 * Errors (bad gzip, UTF-8, JSON, ranges, an event over 64 MB, nesting over
 * JS_MAX_DEPTH, a document that is no trace) name the byte offset in the
 * uncompressed stream; events delivered before stay delivered. An array
 * missing only its closing ']' is accepted, as the format allows.
 */
#include "chrome_json_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HEADROOM (1u << 20)
#define MAX_EVENT_BYTES (64u << 20)
#define MAX_TOP_VALUE_BYTES (16u << 20)
#define MAX_KEY_BYTES 4096

static const char *const EXTRA_KEYS[EX_COUNT] = {"id", "id2", "bind_id", "cname",
                                                 "s",  "bp",  "flow_in", "flow_out"};

/* ---- the window ---- */

static int64_t offset_of(const xpv_cj_reader *r, const char *at)
{
    return r->w_off + (at - r->w);
}

/* The tokenizer's failure: sets err to reason at the byte offset of `at`
 * in the window; returns -1. */
static int fail_at(xpv_cj_reader *r, const char *at, const char *reason)
{
    return xpv_err_set(r->err, "%s at byte offset %lld%s", reason, (long long)offset_of(r, at),
                       xpv_gz_is_gzip(r->in) ? " (uncompressed)" : "");
}

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
        /* Batches may point into the old chunk: the parser gives it back. */
        if (r->handoff) {
            if (xpv_cj_handoff_push(r, r->holding ? &r->chunk : NULL) != 0) {
                xpv_gz_release(r->in, &c);
                return -1;
            }
        } else if (r->holding) {
            xpv_gz_release(r->in, &r->chunk);
        }
        r->chunk = c;
        r->holding = 1;
        r->w = dst;
        r->wend = c.data + c.len;
    } else {
        /* One value longer than the headroom: gather it in `big`, which
         * batches may point into until the parser is idle. */
        if (r->handoff && xpv_cj_handoff_idle(r) != 0) {
            xpv_gz_release(r->in, &c);
            return -1;
        }
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
    int rc = js_scan_string_fast(*pp, c->end, &after, &esc, &c->e);
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
    } else if (*p == '-' || js_is_digit(*p)) {
        int is_int;
        TRY(js_scan_number_fast(p, c->end, c->final, &after, &is_int, &c->e));
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
    xpv_cj_batch *b = r->tok;
    if (at >= b->cap_members) {
        b->cap_members = b->cap_members ? b->cap_members * 2 : 1024;
        b->members = xpv_xrealloc(b->members, b->cap_members * sizeof *b->members);
    }
    return &b->members[at];
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

/* ---- the arg keys classification reads (chrome_json_args.c notes them) ---- */

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

/* Scans the next event into r->tok, which a refill may have passed on
 * since the last try: then the event is scanned anew into the next. */
static int scan_event(xpv_cj_reader *r, cursor *c, const char **pp, void *ctx)
{
    (void)ctx;
    xpv_cj_batch *b = r->tok;
    xpv_cj_event *pe = &b->events[b->nevents];
    memset(pe, 0, sizeof *pe);
    pe->args_at = (uint32_t)b->nmembers;
    return scan_object(r, c, pp, event_member, pe);
}

/* Keeps the event just scanned in its batch, passing a full batch on. */
static int commit_event(xpv_cj_reader *r)
{
    xpv_cj_batch *b = r->tok;
    xpv_cj_event *pe = &b->events[b->nevents++];
    pe->raw_len = (uint32_t)(r->p - r->last_start);
    b->nmembers += pe->nargs;
    if (b->nevents < XPV_CJ_BATCH_EVENTS && b->nmembers < XPV_CJ_BATCH_MEMBERS) return 0;
    return xpv_cj_handoff_push(r, NULL);
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

static int walk_events(xpv_cj_reader *r, int top_array)
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
        int rc = parse_whole(r, scan_event, NULL, MAX_EVENT_BYTES);
        if (rc > 0) return fail_at(r, r->p, "event longer than 64 MB");
        if (rc < 0 || commit_event(r) != 0) return -1;
        c = peek(r);
        if (c == ',') {
            r->p++;
            c = peek(r);
        } else if (c != ']' && c >= 0) {
            return fail_at(r, r->p, "expected ',' or ']' after an event");
        }
    }
}

/* The events of one array, mapped on the parser's thread while this one
 * tokenizes; the parser is gone again when this returns. */
static int read_events(xpv_cj_reader *r, int top_array)
{
    if (xpv_cj_handoff_start(r) != 0) return -1;
    int rc = walk_events(r, top_array);
    if (xpv_cj_handoff_finish(r) != 0) return -1;
    return rc;
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
    xpv_cj_begin_event(r, m.val.len);
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
    xpv_sink_fact(r->sink, "producer", xpv_cj_producer(r));
    xpv_cj_slice_warnings(r);
    if (r->array_unterminated)
        xpv_sink_fact(r->sink, "warning",
                      "the event array has no closing ']' (allowed by the format; the file may "
                      "have been cut short)");
}

static void reader_free(xpv_cj_reader *r)
{
    xpv_cj_slices_free(r);
    xpv_cj_tables_free(r);
    free(r->icache);
    free(r->long_cache);
    free(r->long_seen);
    free(r->args);
    free(r->scratch);
    free(r->big);
    xpv_cj_handoff_finish(r);
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
    r.in = xpv_gz_open(path, 0, HEADROOM, xpv_sink_limits(sink), err);
    if (!r.in) return -1;
    r.icache = xpv_xcalloc(XPV_CJ_ICACHE_SIZE, sizeof *r.icache);
    r.long_cache = xpv_xcalloc(XPV_CJ_LONG_CACHE_SIZE, sizeof *r.long_cache);
    r.long_seen = xpv_xcalloc(XPV_CJ_LONG_SEEN_SIZE, sizeof *r.long_seen);
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
