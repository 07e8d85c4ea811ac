/*
 * event_store.c — block encoding, the block writer and block queries.
 *
 * Blob layout (all integers LEB128 varints; "z" = zigzag-encoded signed):
 *   u8 version, n (written at flush, when n is known), then
 *     version 2: the payload itself;
 *     version 3: the payload's byte count, the chunk count k, k pairs
 *                (chunk bytes, frame bytes), then k zstd frames (each with a
 *                checksum), one per chunk; written when it is the smaller.
 *   A chunk is ~CHUNK_BYTES of whole events, so a decode that resumes at a
 *   mark inflates only the chunks from the mark's on, and only as far as
 *   it reads: a window over long blocks costs what it was before compression.
 *   The payload, per event: u8 flags, u8 ph, u8 kind, z(ts - previous ts), (dur_ns + 1),
 *              name, [cat], [z corr], [z step, u8 step_src], [ps remainder],
 *              (the step pair when there is a step number or a step source)
 *              [nargs, bytes of the args that follow, per arg: key, u8 type, value]
 *   flags: 1 cat, 2 corr, 4 step, 8 ps remainder, 16 args
 *   value: INT z · UINT varint · DOUBLE 8 bytes little-endian · STR id ·
 *          TEXT/JSON length + bytes
 * The args' byte count lets a reader that needs no args skip them in one
 * step (the analysis and the window queries read most events that way).
 * The first event's ts delta is from 0. Decoding checks every length against
 * the blob, so a damaged block is an error, never an out-of-bounds read.
 *
 * Why zstd: bench/bench_codec.c on real traces (docs/BENCHMARKS.md, "Index footprint")
 * shrinks the payload ~6x and inflates it several times faster than zlib,
 * which matters because a window query inflates every block it decodes.
 * Why level -1: on the H100 GPU fixtures (JAX and PyTorch) it compresses
 * 1.3x and inflates 1.3x faster than level 1 for 1.3% more bytes (the V100
 * PyTorch trace: 1.4x, 1.5x, 6%; only a trace of 40 copies of one, all
 * long matches, inflated slower). Compression runs at flush on the event
 * store's thread.
 * Resume marks (xpv_store_mark) count bytes of the payload as it is once
 * inflated, from the blob's start for version 2 and from the payload's
 * start for version 3; both come from open_cursor, so they always agree.
 *
 * Invariant: a block holds events of one track and one duration class, and
 * its row's t_min/t_max bound every event in it; its `kinds` has the bit of
 * every kind in it, and XPV_BLOCK_COUNTERS / XPV_BLOCK_FLOWS when it holds
 * counter samples / flow records.
 */
#include "event_store.h"
#include "index_db.h"
#include "kernel_device_stats.h"
#include "string_chunks.h"
#include "../common/varint.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#define BLOCK_MAX_EVENTS 4096
#define BLOCK_MAX_BYTES (192 * 1024)
#define OPEN_BYTES_LIMIT (48u << 20)
/* No block payload is ever this big (BLOCK_MAX_BYTES plus one event): a
 * larger count in a version 3 header is damage, not a reason to allocate. */
#define PAYLOAD_LIMIT (64u << 20)
#define ZSTD_LEVEL (-1)
#define CHUNK_BYTES (32 * 1024)
#define MAX_CHUNKS 16

enum { BLOCK_RAW = 2, BLOCK_ZSTD = 3 };

enum { F_CAT = 1, F_CORR = 2, F_STEP = 4, F_PSREM = 8, F_ARGS = 16 };

/* ---- varints (common/varint.h) ---- */

static void put_varint(xpv_buf *b, uint64_t v)
{
    unsigned char tmp[XPV_VARINT_MAX];
    xpv_buf_append(b, tmp, (size_t)(xpv_varint_put(tmp, v) - tmp));
}

typedef xpv_varint_reader reader;

static const char *get_bytes(reader *r, uint64_t n)
{
    if (n > (uint64_t)(r->end - r->p)) {
        r->bad = 1;
        return NULL;
    }
    const char *s = (const char *)r->p;
    r->p += n;
    return s;
}

/* ---- encoding ---- */

static size_t varint_len(uint64_t v)
{
    size_t n = 1;
    while (v >= 0x80)
        v >>= 7, n++;
    return n;
}

/* The most bytes encode_event can write for ev. */
static size_t event_bound(const xpv_event *ev)
{
    size_t n = 3 + 8 * 10 + 1 + 10;
    for (uint32_t i = 0; i < ev->nargs; i++)
        n += 10 + 1 + 10 + ev->args[i].len;
    return n;
}

static unsigned char *encode_arg(unsigned char *p, const xpv_arg *a)
{
    p = xpv_varint_put(p, a->key);
    *p++ = a->type;
    switch (a->type) {
    case XPV_ARG_INT:
        return xpv_zigzag_put(p, a->v.i);
    case XPV_ARG_UINT:
        return xpv_varint_put(p, a->v.u);
    case XPV_ARG_DOUBLE: {
        uint64_t bits;
        memcpy(&bits, &a->v.d, 8);
        for (int i = 0; i < 8; i++)
            *p++ = (unsigned char)(bits >> (8 * i));
        return p;
    }
    case XPV_ARG_STR:
        return xpv_varint_put(p, a->v.str);
    default:
        p = xpv_varint_put(p, a->len);
        memcpy(p, a->text, a->len);
        return p + a->len;
    }
}

static void encode_event(xpv_buf *b, const xpv_event *ev, int64_t prev_ts)
{
    int64_t psrem = 0;
    if (ev->dur_ns >= 0 && ev->dur_ps >= 0) psrem = ev->dur_ps - ev->dur_ns * 1000;
    unsigned flags = (ev->cat ? F_CAT : 0) | (ev->corr >= 0 ? F_CORR : 0) |
                     (ev->step >= 0 || ev->step_src ? F_STEP : 0) |
                     (psrem > 0 && psrem < 1000 ? F_PSREM : 0) | (ev->nargs ? F_ARGS : 0);
    size_t bound = event_bound(ev);
    if (b->len + bound + 1 > b->cap) xpv_buf_reserve(b, bound);
    unsigned char *start = (unsigned char *)b->data + b->len, *p = start;
    *p++ = (unsigned char)flags;
    *p++ = (unsigned char)ev->ph;
    *p++ = ev->kind;
    p = xpv_zigzag_put(p, ev->ts_ns - prev_ts);
    p = xpv_varint_put(p, (uint64_t)(ev->dur_ns + 1));
    p = xpv_varint_put(p, ev->name);
    if (flags & F_CAT) p = xpv_varint_put(p, ev->cat);
    if (flags & F_CORR) p = xpv_zigzag_put(p, ev->corr);
    if (flags & F_STEP) {
        p = xpv_zigzag_put(p, ev->step);
        *p++ = ev->step_src;
    }
    if (flags & F_PSREM) p = xpv_varint_put(p, (uint64_t)psrem);
    if (flags & F_ARGS) {
        /* The args are written where the longest byte count would leave
         * them, then moved down behind the count they turned out to take:
         * one pass over them, not one to size them and one to write. */
        p = xpv_varint_put(p, ev->nargs);
        unsigned char *args_at = p + XPV_VARINT_MAX, *q = args_at;
        for (uint32_t i = 0; i < ev->nargs; i++)
            q = encode_arg(q, &ev->args[i]);
        size_t bytes = (size_t)(q - args_at);
        p = xpv_varint_put(p, bytes);
        memmove(p, args_at, bytes);
        p += bytes;
    }
    assert((size_t)(p - start) <= bound);
    b->len += (size_t)(p - start);
    b->data[b->len] = 0;
}

/* ---- writer ---- */

typedef struct open_block {
    uint32_t track;
    int lod;
    uint32_t n;
    int64_t t_min, t_max, busy_ns, prev_ts;
    uint32_t kinds;
    xpv_buf data;
    uint32_t cuts[MAX_CHUNKS]; /* payload offsets where chunks 1.. start */
    uint32_t ncuts;
    struct open_block *next_in_bucket;
} open_block;

struct xpv_store_writer {
    sqlite3 *db;
    int64_t profile_id;
    sqlite3_stmt *insert;
    open_block **buckets;
    size_t nbuckets, nblocks;
    size_t open_bytes;
    xpv_buf scratch, frames;
    ZSTD_CCtx *zstd;
};

xpv_store_writer *xpv_store_writer_open(sqlite3 *db, int64_t profile_id, xpv_err *err)
{
    xpv_store_writer *w = xpv_xcalloc(1, sizeof *w);
    w->db = db;
    w->profile_id = profile_id;
    w->nbuckets = 1024;
    w->buckets = xpv_xcalloc(w->nbuckets, sizeof *w->buckets);
    w->zstd = ZSTD_createCCtx();
    if (!w->zstd ||
        ZSTD_isError(ZSTD_CCtx_setParameter(w->zstd, ZSTD_c_compressionLevel, ZSTD_LEVEL)) ||
        ZSTD_isError(ZSTD_CCtx_setParameter(w->zstd, ZSTD_c_checksumFlag, 1))) {
        xpv_err_set(err, "cannot set up the zstd compressor");
        ZSTD_freeCCtx(w->zstd);
        free(w->buckets);
        free(w);
        return NULL;
    }
    if (sqlite3_prepare_v2(db,
                           "INSERT INTO blocks(profile_id, track, lod, t_min, t_max, n, busy_ns, "
                           "data, kinds) VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9)",
                           -1, &w->insert, NULL) != SQLITE_OK) {
        xpv_db_error(err, db);
        ZSTD_freeCCtx(w->zstd);
        free(w->buckets);
        free(w);
        return NULL;
    }
    return w;
}

/* Compresses b's chunks into w->frames; writes their sizes to zlen. */
static int compress_chunks(xpv_store_writer *w, const open_block *b, uint32_t *at, uint32_t k,
                           size_t *zlen)
{
    xpv_buf_reset(&w->frames);
    for (uint32_t i = 0; i < k; i++) {
        size_t raw = at[i + 1] - at[i], bound = ZSTD_compressBound(raw);
        xpv_buf_reserve(&w->frames, bound);
        size_t z = ZSTD_compress2(w->zstd, w->frames.data + w->frames.len, bound,
                                  b->data.data + at[i], raw);
        if (ZSTD_isError(z)) return -1;
        w->frames.len += z;
        zlen[i] = z;
    }
    return 0;
}

/* The blob of block b in w->scratch: compressed when that is smaller. */
static const xpv_buf *pack_block(xpv_store_writer *w, const open_block *b)
{
    xpv_buf *blob = &w->scratch;
    uint32_t at[MAX_CHUNKS + 1], k = 0;
    size_t raw = b->data.len, zlen[MAX_CHUNKS];
    at[k++] = 0;
    for (uint32_t i = 0; i < b->ncuts; i++)
        if (b->cuts[i] > at[k - 1] && b->cuts[i] < raw) at[k++] = b->cuts[i];
    at[k] = (uint32_t)raw;
    assert(k <= MAX_CHUNKS && at[k - 1] < at[k]); /* n > 0: some payload; cuts increase */
    xpv_buf_reset(blob);
    if (compress_chunks(w, b, at, k, zlen) == 0) {
        xpv_buf_putc(blob, BLOCK_ZSTD);
        put_varint(blob, b->n);
        put_varint(blob, raw);
        put_varint(blob, k);
        for (uint32_t i = 0; i < k; i++) {
            put_varint(blob, at[i + 1] - at[i]);
            put_varint(blob, zlen[i]);
        }
        xpv_buf_append(blob, w->frames.data, w->frames.len);
        if (blob->len < 1 + varint_len(b->n) + raw) return blob;
    }
    xpv_buf_reset(blob);
    xpv_buf_putc(blob, BLOCK_RAW);
    put_varint(blob, b->n);
    xpv_buf_append(blob, b->data.data, raw);
    return blob;
}

/* Writes one block row: a version byte and the count, then the events. */
static int flush_block(xpv_store_writer *w, open_block *b, xpv_err *err)
{
    if (b->n == 0) return 0;
    const xpv_buf *blob = pack_block(w, b);
    sqlite3_stmt *st = w->insert;
    sqlite3_bind_int64(st, 1, w->profile_id);
    sqlite3_bind_int64(st, 2, b->track);
    sqlite3_bind_int(st, 3, b->lod);
    sqlite3_bind_int64(st, 4, b->t_min);
    sqlite3_bind_int64(st, 5, b->t_max);
    sqlite3_bind_int64(st, 6, b->n);
    sqlite3_bind_int64(st, 7, b->busy_ns);
    sqlite3_bind_blob(st, 8, blob->data, (int)blob->len, SQLITE_STATIC);
    sqlite3_bind_int64(st, 9, b->kinds);
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    if (rc != SQLITE_DONE) return xpv_db_error(err, w->db);
    assert(w->open_bytes >= b->data.len); /* every open block's bytes are counted */
    w->open_bytes -= b->data.len;
    b->n = 0;
    b->ncuts = 0;
    xpv_buf_reset(&b->data);
    return 0;
}

static int flush_all(xpv_store_writer *w, xpv_err *err)
{
    for (size_t i = 0; i < w->nbuckets; i++)
        for (open_block *b = w->buckets[i]; b; b = b->next_in_bucket)
            if (flush_block(w, b, err) != 0) return -1;
    return 0;
}

static void grow_buckets(xpv_store_writer *w)
{
    size_t n = w->nbuckets * 2;
    open_block **nb = xpv_xcalloc(n, sizeof *nb);
    for (size_t i = 0; i < w->nbuckets; i++) {
        open_block *b = w->buckets[i];
        while (b) {
            open_block *next = b->next_in_bucket;
            size_t h = ((size_t)b->track * 64 + (size_t)b->lod) & (n - 1);
            b->next_in_bucket = nb[h];
            nb[h] = b;
            b = next;
        }
    }
    free(w->buckets);
    w->buckets = nb;
    w->nbuckets = n;
}

static open_block *find_block(xpv_store_writer *w, uint32_t track, int lod)
{
    assert(w->nbuckets && (w->nbuckets & (w->nbuckets - 1)) == 0); /* a mask picks the bucket */
    size_t h = ((size_t)track * 64 + (size_t)lod) & (w->nbuckets - 1);
    for (open_block *b = w->buckets[h]; b; b = b->next_in_bucket)
        if (b->track == track && b->lod == lod) return b;
    if (w->nblocks >= w->nbuckets) {
        grow_buckets(w);
        h = ((size_t)track * 64 + (size_t)lod) & (w->nbuckets - 1);
    }
    open_block *b = xpv_xcalloc(1, sizeof *b);
    b->track = track;
    b->lod = lod;
    b->next_in_bucket = w->buckets[h];
    w->buckets[h] = b;
    w->nblocks++;
    return b;
}

int xpv_store_add(xpv_store_writer *w, const xpv_event *ev, xpv_err *err)
{
    int lod = xpv_store_lod(ev->dur_ns);
    open_block *b = find_block(w, ev->track, lod);
    int64_t end = ev->ts_ns + (ev->dur_ns > 0 ? ev->dur_ns : 0);
    if (b->n == 0) {
        b->t_min = ev->ts_ns;
        b->t_max = end;
        b->busy_ns = 0;
        b->prev_ts = 0;
        b->kinds = 0;
    }
    b->kinds |= 1u << (ev->kind & 31);
    if (ev->ph == 'C' || ev->counter) b->kinds |= XPV_BLOCK_COUNTERS;
    if (ev->flow || ev->ph == 's' || ev->ph == 't' || ev->ph == 'f') b->kinds |= XPV_BLOCK_FLOWS;
    if (ev->ts_ns < b->t_min) b->t_min = ev->ts_ns;
    if (end > b->t_max) b->t_max = end;
    if (ev->dur_ns > 0) b->busy_ns += ev->dur_ns;
    size_t before = b->data.len;
    encode_event(&b->data, ev, b->prev_ts);
    w->open_bytes += b->data.len - before;
    b->prev_ts = ev->ts_ns;
    b->n++;
    uint32_t chunk_start = b->ncuts ? b->cuts[b->ncuts - 1] : 0;
    if (b->data.len - chunk_start >= CHUNK_BYTES && b->ncuts < MAX_CHUNKS - 1)
        b->cuts[b->ncuts++] = (uint32_t)b->data.len;
    assert(b->ncuts < MAX_CHUNKS); /* the chunks, one more than the cuts, fit the header */
    if (b->n >= BLOCK_MAX_EVENTS || b->data.len >= BLOCK_MAX_BYTES)
        if (flush_block(w, b, err) != 0) return -1;
    if (w->open_bytes > OPEN_BYTES_LIMIT) return flush_all(w, err);
    return 0;
}

static void free_blocks(xpv_store_writer *w)
{
    for (size_t i = 0; i < w->nbuckets; i++) {
        open_block *b = w->buckets[i];
        while (b) {
            open_block *next = b->next_in_bucket;
            xpv_buf_free(&b->data);
            free(b);
            b = next;
        }
    }
    free(w->buckets);
    xpv_buf_free(&w->scratch);
    xpv_buf_free(&w->frames);
    ZSTD_freeCCtx(w->zstd);
    sqlite3_finalize(w->insert);
    free(w);
}

int xpv_store_writer_close(xpv_store_writer *w, xpv_err *err)
{
    int rc = flush_all(w, err);
    free_blocks(w);
    return rc;
}

void xpv_store_writer_abandon(xpv_store_writer *w)
{
    free_blocks(w);
}

/* ---- decoding ---- */

static int decode_args(reader *r, xpv_arg *args, uint32_t nargs)
{
    for (uint32_t i = 0; i < nargs && !r->bad; i++) {
        xpv_arg *a = &args[i];
        a->key = (uint32_t)xpv_varint_get(r);
        a->type = (uint8_t)xpv_varint_u8(r);
        a->text = NULL;
        a->len = 0;
        switch (a->type) {
        case XPV_ARG_INT:
            a->v.i = xpv_zigzag_get(r);
            break;
        case XPV_ARG_UINT:
            a->v.u = xpv_varint_get(r);
            break;
        case XPV_ARG_DOUBLE: {
            const unsigned char *raw = (const unsigned char *)get_bytes(r, 8);
            uint64_t bits = 0;
            for (int k = 0; raw && k < 8; k++)
                bits |= (uint64_t)raw[k] << (8 * k);
            memcpy(&a->v.d, &bits, 8);
            break;
        }
        case XPV_ARG_STR:
            a->v.str = (uint32_t)xpv_varint_get(r);
            break;
        case XPV_ARG_TEXT:
        case XPV_ARG_JSON: {
            uint64_t len = xpv_varint_get(r);
            a->text = get_bytes(r, len);
            a->len = (uint32_t)len;
            break;
        }
        default:
            r->bad = 1;
        }
    }
    return r->bad ? -1 : 0;
}

/* Where the next event starts and what it is relative to; marks (below)
 * are snapshots of this, so a decode can resume mid-block. kinds and
 * no_args filter what visitors see (see xpv_store_query). */
typedef struct {
    reader r;
    const unsigned char *base;
    uint64_t n, i;
    int64_t prev_ts;
    uint32_t kinds;
    int no_args;
    /* Version 3: the payload, inflated a chunk at a time as r reaches
     * r.end (see next_chunk); freed by close_cursor. */
    unsigned char *inflated;
    ZSTD_DCtx *dctx;
    const unsigned char *frames;
    uint32_t nchunks, chunk;         /* chunk: the next to inflate */
    uint32_t raw_at[MAX_CHUNKS + 1]; /* where chunk i starts in the payload */
    size_t z_at[MAX_CHUNKS + 1];     /* where its frame starts after `frames` */
} cursor;

/* Inflates chunk k in place; r then reads up to its end. */
static int inflate_chunk(cursor *c, uint32_t k)
{
    /* open_chunks checked the sums, so the table only grows */
    assert(k < c->nchunks && c->raw_at[k] <= c->raw_at[k + 1] && c->z_at[k] <= c->z_at[k + 1]);
    size_t raw = c->raw_at[k + 1] - c->raw_at[k], z = c->z_at[k + 1] - c->z_at[k];
    unsigned char *dst = c->inflated + c->raw_at[k];
    const unsigned char *src = c->frames + c->z_at[k];
    size_t got = c->dctx ? ZSTD_decompressDCtx(c->dctx, dst, raw, src, z)
                         : ZSTD_decompress(dst, raw, src, z);
    if (ZSTD_isError(got) || got != raw) {
        c->r.bad = 1;
        return -1;
    }
    c->chunk = k + 1;
    c->r.end = c->inflated + c->raw_at[k + 1];
    return 0;
}

/* At the end of what is inflated: the next chunk, if any. */
static inline int next_chunk(cursor *c)
{
    if (c->r.p != c->r.end || c->chunk >= c->nchunks) return 0;
    return inflate_chunk(c, c->chunk);
}

/* Decodes events from c until n, a visitor's non-zero answer or damage.
 * With fn NULL it only walks, recording a mark every `every` events. */
static int decode_events(cursor *c, uint32_t track, int64_t block_id, xpv_store_visit fn, void *ctx,
                         xpv_store_mark *marks, size_t cap, uint32_t every, size_t *nmarks,
                         int *sorted)
{
    xpv_arg stack_args[64], *args = stack_args;
    uint32_t args_cap = 64;
    int rc = 0;
    reader *r = &c->r;
    for (; c->i < c->n && !r->bad && rc == 0; c->i++) {
        if (next_chunk(c) != 0) break;
        assert(r->p >= c->base && r->p <= r->end); /* readers stop at the end, never past */
        uint32_t offset = (uint32_t)(r->p - c->base);
        int64_t before = c->prev_ts;
        xpv_event ev;
        xpv_event_init(&ev);
        unsigned flags = xpv_varint_u8(r);
        ev.ph = (char)xpv_varint_u8(r);
        ev.kind = (uint8_t)xpv_varint_u8(r);
        ev.ts_ns = c->prev_ts + xpv_zigzag_get(r);
        c->prev_ts = ev.ts_ns;
        assert(!marks || *nmarks <= cap);
        if (marks && c->i % every == 0 && *nmarks < cap)
            marks[(*nmarks)++] = (xpv_store_mark){offset, (uint32_t)c->i, before, ev.ts_ns};
        if (sorted && c->i > 0 && ev.ts_ns < before) *sorted = 0;
        ev.dur_ns = (int64_t)xpv_varint_get(r) - 1;
        ev.dur_ps = ev.dur_ns >= 0 ? ev.dur_ns * 1000 : -1;
        ev.name = (uint32_t)xpv_varint_get(r);
        ev.track = track;
        if (flags & F_CAT) ev.cat = (uint32_t)xpv_varint_get(r);
        if (flags & F_CORR) ev.corr = xpv_zigzag_get(r);
        if (flags & F_STEP) {
            ev.step = xpv_zigzag_get(r);
            ev.step_src = (uint8_t)xpv_varint_u8(r);
        }
        if (flags & F_PSREM) ev.dur_ps += (int64_t)xpv_varint_get(r);
        int wanted = !c->kinds || (c->kinds & (1u << (ev.kind & 31)));
        if (flags & F_ARGS) {
            uint64_t nargs = xpv_varint_get(r), bytes = xpv_varint_get(r);
            const unsigned char *args_end = r->p + (bytes <= (uint64_t)(r->end - r->p) ? bytes : 0);
            if (nargs > bytes || bytes > (uint64_t)(r->end - r->p)) {
                r->bad = 1;
                break;
            }
            assert(args_end >= r->p && args_end <= r->end);
            if (c->no_args || !wanted || !fn) {
                r->p = args_end; /* one step over all of them */
                nargs = 0;
            } else if (nargs > args_cap) {
                if (args != stack_args) free(args);
                args = xpv_xmalloc(nargs * sizeof *args);
                args_cap = (uint32_t)nargs;
            }
            if (nargs && decode_args(r, args, (uint32_t)nargs) != 0) break;
            if (r->p != args_end) {
                r->bad = 1;
                break;
            }
            ev.args = nargs ? args : NULL;
            ev.nargs = (uint32_t)nargs;
        }
        if (!r->bad && fn && wanted) rc = fn(ctx, &ev, block_id, (uint32_t)c->i);
    }
    if (args != stack_args) free(args);
    return rc;
}

/* Reads a version 3 block's chunk table (c->r is just past the count);
 * the chunks are inflated as they are read. */
static int open_chunks(cursor *c, int64_t block_id, xpv_err *err)
{
    uint64_t raw = xpv_varint_get(&c->r), k = xpv_varint_get(&c->r), rsum = 0, zsum = 0;
    if (c->r.bad || raw > PAYLOAD_LIMIT || k == 0 || k > MAX_CHUNKS)
        return xpv_err_set(err, "event block %lld is damaged (header)", (long long)block_id);
    c->nchunks = (uint32_t)k;
    for (uint32_t i = 0; i < k; i++) {
        c->raw_at[i] = (uint32_t)rsum;
        c->z_at[i] = (size_t)zsum;
        /* each size is bounded before it is added, so no sum can wrap */
        uint64_t rlen = xpv_varint_get(&c->r), zlen = xpv_varint_get(&c->r);
        if (c->r.bad || rlen > raw - rsum || zlen > PAYLOAD_LIMIT - zsum) {
            c->r.bad = 1;
            break;
        }
        rsum += rlen;
        zsum += zlen;
    }
    if (c->r.bad || rsum != raw || zsum != (uint64_t)(c->r.end - c->r.p))
        return xpv_err_set(err, "event block %lld is damaged (chunk sizes)", (long long)block_id);
    c->raw_at[k] = (uint32_t)raw;
    c->z_at[k] = (size_t)zsum;
    c->frames = c->r.p;
    c->inflated = xpv_xmalloc(raw ? raw : 1);
    c->base = c->inflated;
    c->r = (reader){c->inflated, c->inflated, 0}; /* nothing inflated yet */
    return 0;
}

/* The single way into a block: every decoder starts here, so every block
 * version reads the same. dctx may be NULL (one is made for the call). */
static int open_cursor(cursor *c, const void *data, size_t len, int64_t block_id, ZSTD_DCtx *dctx,
                       xpv_err *err)
{
    c->base = data;
    c->r = (reader){data, (const unsigned char *)data + len, 0};
    c->inflated = NULL;
    c->dctx = dctx;
    c->nchunks = c->chunk = 0;
    unsigned version = xpv_varint_u8(&c->r);
    c->n = xpv_varint_get(&c->r);
    c->i = 0;
    c->prev_ts = 0;
    c->kinds = 0;
    c->no_args = 0;
    if (version == BLOCK_ZSTD) return open_chunks(c, block_id, err);
    if (version != BLOCK_RAW)
        return xpv_err_set(err, "event block %lld is damaged (version %u)", (long long)block_id,
                           version);
    return 0;
}

static void close_cursor(cursor *c)
{
    free(c->inflated);
    c->inflated = NULL;
}

int xpv_store_payload(const void *data, size_t len, xpv_buf *out, xpv_err *err)
{
    cursor c;
    if (open_cursor(&c, data, len, 0, NULL, err) != 0) return -1;
    xpv_buf_reset(out);
    while (next_chunk(&c) == 0 && c.r.p < c.r.end) {
        xpv_buf_append(out, c.r.p, (size_t)(c.r.end - c.r.p));
        c.r.p = c.r.end;
    }
    int bad = c.r.bad;
    close_cursor(&c);
    return bad ? xpv_err_set(err, "event block is damaged") : 0;
}

int xpv_store_decode(const void *data, size_t len, uint32_t track, int64_t block_id,
                     xpv_store_visit fn, void *ctx, xpv_err *err)
{
    return xpv_store_decode_from(data, len, track, block_id, NULL, fn, ctx, err);
}

/* Makes the bytes at mark m readable: for version 3, inflates the chunk
 * holding it (marks fall on event starts, and no event spans chunks). */
static int seek_mark(cursor *c, const xpv_store_mark *m)
{
    if (m->index >= c->n) return -1;
    if (!c->nchunks)
        return m->offset < (size_t)(c->r.p - c->base) || m->offset >= (size_t)(c->r.end - c->base)
                   ? -1
                   : 0;
    if (m->offset >= c->raw_at[c->nchunks]) return -1;
    uint32_t k = 0;
    while (c->raw_at[k + 1] <= m->offset)
        k++;
    assert(k < c->nchunks); /* m->offset < raw_at[nchunks] */
    return inflate_chunk(c, k);
}

int xpv_store_decode_from(const void *data, size_t len, uint32_t track, int64_t block_id,
                          const xpv_store_mark *from, xpv_store_visit fn, void *ctx, xpv_err *err)
{
    cursor c;
    if (open_cursor(&c, data, len, block_id, NULL, err) != 0) return -1;
    if (from && seek_mark(&c, from) != 0) {
        int bad = c.r.bad;
        close_cursor(&c);
        return bad ? xpv_err_set(err, "event block %lld is damaged", (long long)block_id)
                   : xpv_err_set(err, "event block %lld: bad resume mark", (long long)block_id);
    }
    if (from) {
        c.r.p = c.base + from->offset;
        c.i = from->index;
        c.prev_ts = from->prev_ts;
    }
    int rc = decode_events(&c, track, block_id, fn, ctx, NULL, 0, 1, NULL, NULL);
    if (c.r.bad) rc = xpv_err_set(err, "event block %lld is damaged", (long long)block_id);
    close_cursor(&c);
    return rc;
}

int xpv_store_marks(const void *data, size_t len, uint32_t every, xpv_store_mark *out, size_t cap,
                    int *sorted, xpv_err *err)
{
    cursor c;
    size_t n = 0;
    if (every == 0) every = 1;
    if (open_cursor(&c, data, len, 0, NULL, err) != 0) return -1;
    *sorted = 1;
    decode_events(&c, 0, 0, NULL, NULL, out, cap, every, &n, sorted);
    int bad = c.r.bad;
    close_cursor(&c);
    if (bad) return xpv_err_set(err, "event block is damaged");
    /* sorted: no start went back, so neither do the marks */
    for (size_t i = 1; *sorted && i < n; i++)
        assert(out[i - 1].ts <= out[i].ts && out[i].prev_ts <= out[i].ts);
    return (int)n;
}

/* ---- queries ---- */

static const char *const BLOCK_QUERY_SQL =
    "SELECT id, track, lod, t_min, t_max, n, busy_ns%s FROM blocks"
    " WHERE profile_id=?1 AND (?2 < 0 OR track=?2) AND lod BETWEEN ?3 AND ?4"
    " AND t_min <= ?6 AND t_max >= ?5 AND (?7 = 0 OR (kinds & ?7) != 0)"
    " ORDER BY track, lod, t_min";

static int prepare_block_query(sqlite3 *db, const xpv_store_query *q, int with_data,
                               sqlite3_stmt **st, xpv_err *err)
{
    char sql[512];
    snprintf(sql, sizeof sql, BLOCK_QUERY_SQL, with_data ? ", data" : "");
    if (sqlite3_prepare_v2(db, sql, -1, st, NULL) != SQLITE_OK) return xpv_db_error(err, db);
    sqlite3_bind_int64(*st, 1, q->profile_id);
    sqlite3_bind_int64(*st, 2, q->track);
    sqlite3_bind_int(*st, 3, q->lod_min);
    sqlite3_bind_int(*st, 4, q->lod_max);
    sqlite3_bind_int64(*st, 5, q->t0);
    sqlite3_bind_int64(*st, 6, q->t1);
    sqlite3_bind_int64(*st, 7, q->kinds);
    return 0;
}

typedef struct {
    const xpv_store_query *q;
    xpv_store_visit fn;
    void *ctx;
} window_filter;

static int filter_window(void *ctx, const xpv_event *ev, int64_t block_id, uint32_t index)
{
    window_filter *f = ctx;
    int64_t end = ev->ts_ns + (ev->dur_ns > 0 ? ev->dur_ns : 0);
    if (ev->ts_ns > f->q->t1 || end < f->q->t0) return 0;
    return f->fn(f->ctx, ev, block_id, index);
}

int xpv_store_scan(sqlite3 *db, const xpv_store_query *q, xpv_store_visit fn, void *ctx,
                   xpv_err *err)
{
    sqlite3_stmt *st;
    if (prepare_block_query(db, q, 1, &st, err) != 0) return -1;
    window_filter f = {q, fn, ctx};
    ZSTD_DCtx *dctx = ZSTD_createDCtx(); /* one for the scan; NULL still works */
    int rc = 0, step;
    while (rc == 0 && (step = sqlite3_step(st)) == SQLITE_ROW) {
        const void *blob = sqlite3_column_blob(st, 7);
        int len = sqlite3_column_bytes(st, 7);
        int64_t block_id = sqlite3_column_int64(st, 0);
        cursor c;
        if ((rc = open_cursor(&c, blob, (size_t)len, block_id, dctx, err)) != 0) break;
        c.kinds = q->kinds & XPV_KIND_BITS;
        c.no_args = q->skip_args;
        rc = decode_events(&c, (uint32_t)sqlite3_column_int64(st, 1), block_id, filter_window, &f,
                           NULL, 0, 1, NULL, NULL);
        if (c.r.bad) rc = xpv_err_set(err, "event block %lld is damaged", (long long)block_id);
        close_cursor(&c);
    }
    if (rc == 0 && step != SQLITE_DONE) rc = xpv_db_error(err, db);
    ZSTD_freeDCtx(dctx);
    sqlite3_finalize(st);
    return rc;
}

int xpv_store_blocks(sqlite3 *db, const xpv_store_query *q, xpv_block_visit fn, void *ctx,
                     xpv_err *err)
{
    sqlite3_stmt *st;
    if (prepare_block_query(db, q, 0, &st, err) != 0) return -1;
    int rc = 0, step;
    while (rc == 0 && (step = sqlite3_step(st)) == SQLITE_ROW) {
        xpv_block_info b = {
            .block_id = sqlite3_column_int64(st, 0),
            .track = (uint32_t)sqlite3_column_int64(st, 1),
            .lod = sqlite3_column_int(st, 2),
            .t_min = sqlite3_column_int64(st, 3),
            .t_max = sqlite3_column_int64(st, 4),
            .n = sqlite3_column_int64(st, 5),
            .busy_ns = sqlite3_column_int64(st, 6),
        };
        rc = fn(ctx, &b);
    }
    if (rc == 0 && step != SQLITE_DONE) rc = xpv_db_error(err, db);
    sqlite3_finalize(st);
    return rc;
}

typedef struct {
    uint32_t want;
    xpv_store_visit fn;
    void *ctx;
    int found;
} pick_one;

static int pick_index(void *ctx, const xpv_event *ev, int64_t block_id, uint32_t index)
{
    pick_one *p = ctx;
    if (index != p->want) return 0;
    p->found = 1;
    int rc = p->fn(p->ctx, ev, block_id, index);
    return rc ? rc : 1; /* stop decoding */
}

int xpv_store_event_at(sqlite3 *db, int64_t profile_id, int64_t block_id, uint32_t index,
                       xpv_store_visit fn, void *ctx, xpv_err *err)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, "SELECT track, data FROM blocks WHERE id=?1 AND profile_id=?2", -1,
                           &st, NULL) != SQLITE_OK)
        return xpv_db_error(err, db);
    sqlite3_bind_int64(st, 1, block_id);
    sqlite3_bind_int64(st, 2, profile_id);
    int rc;
    if (sqlite3_step(st) != SQLITE_ROW) {
        rc = xpv_err_set(err, "no event %lld:%u in this profile", (long long)block_id, index);
    } else {
        pick_one p = {index, fn, ctx, 0};
        rc = xpv_store_decode(sqlite3_column_blob(st, 1), (size_t)sqlite3_column_bytes(st, 1),
                              (uint32_t)sqlite3_column_int64(st, 0), block_id, pick_index, &p, err);
        if (rc == 1) rc = 0;
        if (rc == 0 && !p.found)
            rc = xpv_err_set(err, "no event %lld:%u in this profile", (long long)block_id, index);
    }
    sqlite3_finalize(st);
    return rc;
}

/* ---- damage ---- */

static int visit_nothing(void *ctx, const xpv_event *ev, int64_t block_id, uint32_t index)
{
    (void)ctx, (void)ev, (void)block_id, (void)index;
    return 0;
}

int xpv_store_damage_in(const char *text)
{
    const char *at = text ? strstr(text, "event block ") : NULL;
    return (at && strstr(at, " is damaged") != NULL) ||
           (text && strstr(text, XPV_STORE_KERNEL_DEVICE_DAMAGED) != NULL) ||
           (text && strstr(text, XPV_STORE_STRINGS_DAMAGED) != NULL);
}

int xpv_store_verify(sqlite3 *db, int64_t profile_id, volatile int *stop, xpv_err *err)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, "SELECT id, track, data FROM blocks WHERE profile_id=?1", -1, &st,
                           NULL) != SQLITE_OK)
        return xpv_db_error(err, db);
    sqlite3_bind_int64(st, 1, profile_id);
    ZSTD_DCtx *dctx = ZSTD_createDCtx();
    int rc = 0, step = SQLITE_DONE;
    while (rc == 0 && !(stop && *stop) && (step = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t block_id = sqlite3_column_int64(st, 0);
        cursor c;
        if (open_cursor(&c, sqlite3_column_blob(st, 2), (size_t)sqlite3_column_bytes(st, 2),
                        block_id, dctx, err) != 0) {
            rc = 1;
            break;
        }
        /* A visitor, so that every arg is decoded and checked too. */
        decode_events(&c, (uint32_t)sqlite3_column_int64(st, 1), block_id, visit_nothing, NULL,
                      NULL, 0, 1, NULL, NULL);
        if (c.r.bad || c.i != c.n)
            rc = 1, xpv_err_set(err, "event block %lld is damaged", (long long)block_id);
        close_cursor(&c);
    }
    if (rc == 0 && !(stop && *stop) && step != SQLITE_DONE) rc = xpv_db_error(err, db);
    ZSTD_freeDCtx(dctx);
    sqlite3_finalize(st);
    return rc;
}
