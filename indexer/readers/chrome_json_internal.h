/*
 * chrome_json_internal.h — what the parts of the Chrome trace JSON reader
 * share. They are split the way a tokenizer is kept apart from a parser,
 * and the two run on threads of their own:
 *  - chrome_json_reader.c (the tokenizer's thread) walks the document
 *    (driving json_scan) and pulls each event's members and args out of the
 *    window into a batch;
 *  - chrome_json_handoff.c passes full batches, with the chunks they point
 *    into, to the parser's thread and gives the chunks back when mapped;
 *  - chrome_json_event.c (the parser's thread) converts an event's times
 *    and args and hands it on; everything below it runs there too:
 *  - chrome_json_classify.c keeps the process and thread tables and decides
 *    what an event is (kernel, memcpy, step, ...) for each producer;
 *  - chrome_json_slices.c pairs B/E and b/e events into slices.
 *
 * Threads: the parser's thread alone touches the sink, the intern cache,
 * scratch, the args and the tables while events are being read; the
 * tokenizer's thread alone touches the window and the batch it fills.
 * Outside the traceEvents array the parser's thread does not exist.
 *
 * Lifetimes: an xpv_cj_event and every xpv_cj_str in it point into its
 * batch's members, the window or scratch; a chunk of the window is given
 * back only after every batch that points into it has been mapped.
 * Whatever outlives the event is interned or copied: held slices copy
 * their args' text, names go to the sink.
 *
 * What runs for every member or arg (decoded text, the intern cache), and
 * the common cases of the track lookup and of handing an event on, are
 * static inline here: the split adds one call per event, to
 * xpv_cj_classify().
 */
#ifndef XPV_CHROME_JSON_INTERNAL_H
#define XPV_CHROME_JSON_INTERNAL_H

#include "readers.h"
#include "gz_input.h"
#include "json_scan.h"
#include "../../common/xpv_hindex.h"

#include <stdlib.h>
#include <string.h>

/* Tracks remembered by (pid, tid) besides the last one: a PyTorch trace
 * interleaves a few host threads with its GPU streams. A power of two. */
#define XPV_CJ_RECENT_TRACKS 64

/* The intern cache: direct-mapped, a power of two. */
#define XPV_CJ_ICACHE_SIZE 16384
#define XPV_CJ_ICACHE_INLINE 16

/* memcpy that may be given a NULL source with a zero length (an empty
 * value, an event without args), which memcpy itself may not. */
static inline void xpv_cj_copy_bytes(void *dst, const void *src, size_t n)
{
    if (n) memcpy(dst, src, n);
}

/* ---- parsed, not yet interpreted, pieces of one event ---- */

enum { JV_NONE = 0, JV_STR, JV_INT, JV_NUM, JV_RAW, JV_NONFINITE /* NaN, Infinity, -Infinity */ };

/* A string's bytes as they stand in the input (esc: still escaped). */
typedef struct {
    const char *s;
    uint32_t len;
    uint8_t esc;
} xpv_cj_str;

typedef struct {
    xpv_cj_str key;
    uint8_t type;
    xpv_cj_str val; /* string body, number text or raw JSON */
} xpv_cj_member;

/* Top-level event fields other than the mapped ones that are kept as args. */
enum { EX_ID, EX_ID2, EX_BIND_ID, EX_CNAME, EX_S, EX_BP, EX_FLOW_IN, EX_FLOW_OUT, EX_COUNT };

typedef struct {
    int nkeys;
    xpv_cj_member ph, name, cat, pid, tid, ts, dur;
    xpv_cj_member extra[EX_COUNT];
    uint32_t args_at, nargs; /* in the batch's members */
    uint32_t raw_len;        /* the event's bytes in the window */
} xpv_cj_event;

/* Events the tokenizer has pulled out, all lying in one window, which
 * starts at w (stream offset w_off); release: a chunk no later batch
 * points into, to be given back once these are mapped. */
typedef struct {
    xpv_cj_event *events;
    uint32_t nevents;
    xpv_cj_member *members;
    size_t nmembers, cap_members;
    const char *w;
    int64_t w_off;
    int has_release;
    xpv_gz_chunk release;
} xpv_cj_batch;

typedef struct xpv_cj_handoff xpv_cj_handoff; /* chrome_json_handoff.c */

/* A batch is passed on when it holds this many events or members: few
 * enough that the parser starts soon, enough that locking is rare. */
#define XPV_CJ_BATCH_EVENTS 512
#define XPV_CJ_BATCH_MEMBERS 8192

/* What classification needs from the args, picked out while converting. */
typedef struct {
    const xpv_cj_member *correlation, *correlation_id, *device, *grid, *block, *regs, *shmem,
        *occupancy, *step_num, *group_id, *kernel_details, *memcpy_details, *hlo_op, *tf_op, *name,
        *op;
} xpv_cj_known_args;

/* ---- processes, threads and open slices ---- */

typedef struct xpv_cj_proc xpv_cj_proc;       /* chrome_json_classify.c */
typedef struct xpv_cj_pending xpv_cj_pending; /* chrome_json_slices.c */

typedef struct {
    int tclass, named, memkind; /* memkind: from a memcpy stream's name, -1 none */
    int has_kernel;             /* a stream whose kinds include Kernel */
    xpv_cj_pending **open;      /* B stack */
    size_t nopen, cap_open;
} xpv_cj_track;

typedef struct {
    int64_t pid, tid;
    uint32_t track;
    xpv_cj_proc *proc, *procs; /* procs: the table the pointer is into */
} xpv_cj_recent_track;

typedef struct {
    uint64_t h;
    uint32_t id, len;
    char text[XPV_CJ_ICACHE_INLINE]; /* the string itself when it is this short */
} xpv_cj_icache_ent;

typedef struct {
    xpv_sink *sink;
    xpv_err *err;
    xpv_gz_input *in;

    /* the walk: window over the stream, [w, wend), w at stream offset w_off */
    const char *w, *wend, *p;
    int64_t w_off;
    int eof, holding;
    xpv_gz_chunk chunk;
    char *big;
    size_t big_cap;
    const char *last_start; /* where the last whole value began */

    /* the walk: the batch being filled and the way to the parser */
    xpv_cj_batch *tok;
    xpv_cj_handoff *handoff;

    /* the parser: the batch being mapped, where its window starts (for
     * error offsets), its own error, the converted args and decoded strings */
    const xpv_cj_member *members;
    const char *ev_w;
    int64_t ev_w_off;
    xpv_err perr;
    xpv_arg *args;
    size_t cap_args;
    char *scratch;
    size_t scratch_len, scratch_cap;

    xpv_cj_icache_ent *icache, *long_cache;
    uint64_t *long_seen;
    size_t long_bytes;
    uint32_t k_correlation, k_correlation_id, k_device, k_grid, k_block, k_regs, k_shmem,
        k_occupancy, k_step_num, k_group_id, k_kernel_details, k_memcpy_details, k_hlo_op, k_tf_op,
        k_name, k_op, k_extra[EX_COUNT], k_last_known;
    int64_t objects, with_ph;
    int array_unterminated;

    /* classification: process and thread tables */
    xpv_cj_proc *procs; /* in order of first sight */
    size_t nprocs, cap_procs;
    xpv_hindex proc_index; /* pid -> index in procs */
    xpv_cj_track *tracks;
    size_t ntracks;
    char **str_ids; /* string pid/tid -> XPV_CJ_STRING_ID_BASE + index */
    size_t nstr_ids;
    struct {
        int valid;
        int64_t pid, tid;
        uint32_t track;
        xpv_cj_proc *proc, *procs; /* procs: the table the pointer is into */
    } last;                        /* the previous event's track, which the next one often shares */
    xpv_cj_recent_track recent[XPV_CJ_RECENT_TRACKS]; /* unlabelled tracks seen lately */
    int tf_stream_devices[64];
    /* producer hints (the walk sets some from top-level keys) */
    int pytorch_hint, tf_hint, jax_hint, ns_unit, highres;

    /* slice pairing */
    xpv_cj_pending **async_slots;
    size_t nasync_slots, nopen_total;
    int64_t unmatched_b, unmatched_e, unmatched_async_b, unmatched_async_e, negative_dur;
    int64_t dropped_open;
} xpv_cj_reader;

/* ---- helpers on the per-event path ---- */

static inline int xpv_cj_str_is(const xpv_cj_str *s, const char *lit)
{
    size_t n = strlen(lit);
    return !s->esc && s->len == n && memcmp(s->s, lit, n) == 0;
}

static inline int xpv_cj_starts_with(const xpv_cj_str *s, const char *lit)
{
    size_t n = strlen(lit);
    return s->len >= n && memcmp(s->s, lit, n) == 0;
}

static inline int xpv_cj_ends_with(const xpv_cj_str *s, const char *lit)
{
    size_t n = strlen(lit);
    return s->len >= n && memcmp(s->s + s->len - n, lit, n) == 0;
}

/* The decoded text of a string: escapes are resolved into scratch, which
 * the walk sized to hold every string of the event. */
static inline xpv_cj_str xpv_cj_text_of(xpv_cj_reader *r, const xpv_cj_str *s)
{
    if (!s->esc) return *s;
    char *dst = r->scratch + r->scratch_len;
    size_t n = js_unescape(s->s, s->len, dst);
    r->scratch_len += n;
    return (xpv_cj_str){dst, (uint32_t)n, 0};
}

static inline uint64_t xpv_cj_mix(uint64_t h, uint64_t v)
{
    h = (h ^ v) * 0xff51afd7ed558ccdULL;
    return h ^ (h >> 32);
}

static inline uint64_t xpv_cj_load8(const char *s)
{
    uint64_t v;
    memcpy(&v, s, 8);
    return v;
}

/* A fast hash for cache slots (every hit is verified with memcmp): strings
 * up to 128 bytes are hashed whole, longer ones by length and samples. */
static inline uint64_t xpv_cj_hash(const char *s, size_t n)
{
    uint64_t h = 0x9E3779B97F4A7C15ULL ^ n;
    if (n >= 8 && n <= 16) {
        h = xpv_cj_mix(h, xpv_cj_load8(s));
        h = xpv_cj_mix(h, xpv_cj_load8(s + n - 8));
        return h ^ (h >> 29);
    }
    if (n > 128) {
        for (size_t i = 0; i < 8; i++)
            h = xpv_cj_mix(h, xpv_cj_load8(s + (n - 8) * i / 7));
        return h ^ (h >> 29);
    }
    while (n >= 8) {
        h = xpv_cj_mix(h, xpv_cj_load8(s));
        s += 8;
        n -= 8;
    }
    uint64_t v = 0;
    xpv_cj_copy_bytes(&v, s, n);
    h = (h ^ v) * 0xc4ceb9fe1a85ec53ULL;
    return h ^ (h >> 29);
}

/* memcmp(a, b, n) == 0 for n <= XPV_CJ_ICACHE_INLINE without a call: the
 * arg keys of every event are checked against the cache this way. Two
 * overlapping loads cover 8..16 bytes. */
static inline int xpv_cj_same_short(const char *a, const char *b, size_t n)
{
    if (n >= 8)
        return xpv_cj_load8(a) == xpv_cj_load8(b) &&
               xpv_cj_load8(a + n - 8) == xpv_cj_load8(b + n - 8);
    for (size_t i = 0; i < n; i++)
        if (a[i] != b[i]) return 0;
    return 1;
}

/* Interned id through a direct-mapped cache in front of the sink's table,
 * which hashes every byte; `value` uses the sink's bounded value table. */
static inline uint32_t xpv_cj_intern(xpv_cj_reader *r, const char *s, size_t n, int value)
{
    if (n == 0) return 0;
    uint64_t h = xpv_cj_hash(s, n);
    xpv_cj_icache_ent *e = &r->icache[h & (XPV_CJ_ICACHE_SIZE - 1)];
    if (e->id && e->h == h && e->len == n) {
        if (n <= XPV_CJ_ICACHE_INLINE ? xpv_cj_same_short(e->text, s, n)
                                      : memcmp(xpv_sink_string(r->sink, e->id, NULL), s, n) == 0)
            return e->id;
    }
    uint32_t id = value ? xpv_sink_intern_value(r->sink, s, n) : xpv_sink_intern(r->sink, s, n);
    if (id) {
        e->h = h;
        e->id = id;
        e->len = (uint32_t)n;
        if (n <= XPV_CJ_ICACHE_INLINE) xpv_cj_copy_bytes(e->text, s, n);
    }
    return id;
}

/* Sizes of the long-value fingerprint tables (chrome_json_args.c). */
#define XPV_CJ_LONG_CACHE_SIZE 4096
#define XPV_CJ_LONG_SEEN_SIZE 65536

/* The parser's failure: sets its error to reason at the byte offset of
 * `at` in the window of the batch being mapped; returns -1. */
static inline int xpv_cj_fail_at(xpv_cj_reader *r, const char *at, const char *reason)
{
    return xpv_err_set(&r->perr, "%s at byte offset %lld%s", reason,
                       (long long)(r->ev_w_off + (at - r->ev_w)),
                       xpv_gz_is_gzip(r->in) ? " (uncompressed)" : "");
}

/* Sizes scratch for every decoded string of a value of raw_len bytes. */
static inline void xpv_cj_begin_event(xpv_cj_reader *r, size_t raw_len)
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

/* ---- the parser's side of one event: chrome_json_event.c ---- */

/* Maps pe (from the batch at r->members) and hands it on. 0, or -1 with
 * r->perr. */
int xpv_cj_process_event(xpv_cj_reader *r, xpv_cj_event *pe);

/* ---- the handoff between the threads: chrome_json_handoff.c ---- */

/* Starts the parser's thread and gives the tokenizer its first batch
 * (r->tok). 0, or -1 with r->err. */
int xpv_cj_handoff_start(xpv_cj_reader *r);
/* Passes r->tok on, with `release` to give back after it when not NULL,
 * and makes r->tok the next batch, waiting for one to be free. 0, or -1
 * once the parser has failed (its error is taken at the finish). */
int xpv_cj_handoff_push(xpv_cj_reader *r, const xpv_gz_chunk *release);
/* Passes r->tok on and waits until the parser has mapped everything, so
 * that the tokenizer may reuse memory that batches pointed into. */
int xpv_cj_handoff_idle(xpv_cj_reader *r);
/* Passes r->tok on, waits for the parser's thread to end and frees the
 * handoff. The parser's error, if any, replaces r->err: it came first in
 * the stream. 0, or -1 when either side failed. */
int xpv_cj_handoff_finish(xpv_cj_reader *r);

/* ---- args: chrome_json_args.c ---- */

/* Converts pe's args and kept top-level fields into r->args (*nargs of
 * them), noting in k the ones classification reads (after the reader has
 * interned the known keys first). 0, or -1 with r->err. */
int xpv_cj_convert_args(xpv_cj_reader *r, xpv_cj_event *pe, xpv_cj_known_args *k, uint32_t *nargs);

/* ---- classification: chrome_json_classify.c ---- */

/* Applies an M event to the process and thread tables. */
void xpv_cj_metadata(xpv_cj_reader *r, xpv_cj_event *pe);
/* The track of pe's pid/tid with its process (*pp) and thread (*tp);
 * names them after a string pid/tid when no M event did. */
uint32_t xpv_cj_track_of(xpv_cj_reader *r, const xpv_cj_event *pe, xpv_cj_proc **pp,
                         xpv_cj_track **tp);

/* pid/tid ids from here up stand for string ones (str_ids); below, the
 * plain ids: integers, and strings that spell one. */
#define XPV_CJ_STRING_ID_BASE ((int64_t)1 << 62)

/* A string that spells a canonical integer in the plain-id range (Kineto
 * writes "tid": "25738"): 1 with its value. */
static inline int xpv_cj_spelled_int(const xpv_cj_str *s, int64_t *out)
{
    if (s->esc || s->len == 0 || s->len > 19) return 0;
    const char *p = s->s, *end = s->s + s->len;
    int neg = *p == '-';
    p += neg;
    if (p >= end || (*p == '0' && end - p > 1) || (neg && *p == '0')) return 0;
    uint64_t v = 0; /* 19 digits stay below 2^64 */
    for (; p < end; p++) {
        if (!js_is_digit(*p)) return 0;
        v = v * 10 + (uint64_t)(*p - '0');
    }
    if (v >= (uint64_t)XPV_CJ_STRING_ID_BASE) return 0;
    *out = neg ? -(int64_t)v : (int64_t)v;
    return 1;
}

/* A pid/tid that is its own id without a lookup: missing (0), an integer
 * of at most 18 characters, or a string spelling one (xpv_cj_spelled_int),
 * so inside the plain-id range and mapped as xpv_cj_track_of() maps it.
 * Anything else is left to that function. */
static inline int xpv_cj_plain_id(const xpv_cj_member *m, int64_t *v)
{
    if (m->type == JV_NONE) {
        *v = 0;
        return 1;
    }
    if (m->type == JV_STR) return xpv_cj_spelled_int(&m->val, v);
    if (m->type != JV_INT || m->val.len == 0 || m->val.len > 18) return 0;
    *v = js_small_int(m->val.s, m->val.len);
    return 1;
}

static inline uint32_t xpv_cj_recent_slot(int64_t pid, int64_t tid)
{
    return (uint32_t)(xpv_cj_mix((uint64_t)pid, (uint64_t)tid) & (XPV_CJ_RECENT_TRACKS - 1));
}

/* xpv_cj_track_of(), answering without a call from the previous event's
 * track when the event shares it, as most do, or else from the recent
 * tracks. Plain ids carry no label, so nothing is left to name. */
static inline uint32_t xpv_cj_event_track(xpv_cj_reader *r, const xpv_cj_event *pe,
                                          xpv_cj_proc **pp, xpv_cj_track **tp)
{
    int64_t pid, tid;
    if (!xpv_cj_plain_id(&pe->pid, &pid) || !xpv_cj_plain_id(&pe->tid, &tid))
        return xpv_cj_track_of(r, pe, pp, tp);
    if (r->last.valid && r->last.procs == r->procs && r->last.pid == pid && r->last.tid == tid) {
        *pp = r->last.proc;
        *tp = &r->tracks[r->last.track];
        return r->last.track;
    }
    const xpv_cj_recent_track *e = &r->recent[xpv_cj_recent_slot(pid, tid)];
    if (e->procs != r->procs || !e->procs || e->pid != pid || e->tid != tid)
        return xpv_cj_track_of(r, pe, pp, tp);
    r->last.valid = 1;
    r->last.pid = pid;
    r->last.tid = tid;
    r->last.track = e->track;
    r->last.proc = e->proc;
    r->last.procs = r->procs;
    *pp = r->last.proc;
    *tp = &r->tracks[e->track];
    return e->track;
}

/* Sets ev's kind, step, step source and corr, and points ev->launch at l
 * when it has a launch shape or op; cat and name are decoded. */
void xpv_cj_classify(xpv_cj_reader *r, xpv_event *ev, const xpv_cj_str *cat, const xpv_cj_str *name,
                     const xpv_cj_known_args *k, xpv_cj_proc *p, const xpv_cj_track *t,
                     xpv_launch *l);
/* The producer fact, from the hints the walk and classification left. */
const char *xpv_cj_producer(const xpv_cj_reader *r);
void xpv_cj_tables_free(xpv_cj_reader *r);

/* ---- slice pairing: chrome_json_slices.c ---- */

/* Each takes an event whose args may point into the window: a slice that
 * is held open keeps copies. */
void xpv_cj_begin_slice(xpv_cj_reader *r, xpv_cj_track *t, const xpv_event *ev);
void xpv_cj_end_slice(xpv_cj_reader *r, xpv_cj_track *t, const xpv_event *ev);
void xpv_cj_async_begin(xpv_cj_reader *r, const xpv_cj_event *pe, const xpv_event *ev);
void xpv_cj_async_end(xpv_cj_reader *r, const xpv_cj_event *pe, const xpv_event *ev);
/* At the end of a good read (emit): stores every slice still open, without
 * a duration. Otherwise releases them unstored. */
void xpv_cj_flush_open(xpv_cj_reader *r, int emit);
/* The warnings about unpaired slices and negative durations, as facts. */
void xpv_cj_slice_warnings(xpv_cj_reader *r);
void xpv_cj_slices_free(xpv_cj_reader *r);

/* Stores ev (track t), or holds it until its pair arrives; ph is ev->ph. */
static inline void xpv_cj_deliver(xpv_cj_reader *r, const xpv_cj_event *pe, xpv_cj_track *t,
                                  const xpv_event *ev)
{
    switch (ev->ph) {
    case 'B':
        xpv_cj_begin_slice(r, t, ev);
        break;
    case 'E':
        xpv_cj_end_slice(r, t, ev);
        break;
    case 'b':
        xpv_cj_async_begin(r, pe, ev);
        break;
    case 'e':
        xpv_cj_async_end(r, pe, ev);
        break;
    default:
        xpv_sink_event(r->sink, ev);
        break;
    }
}

#endif
