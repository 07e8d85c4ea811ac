/*
 * gz_input.c — chunked, pipelined file input (see gz_input.h).
 *
 * A ring of NSLOTS chunk buffers is shared by two threads: the producer
 * fills free slots in ring order (reading, and inflating when the file
 * starts with the gzip magic 1f 8b), the consumer takes full slots in the
 * same order. Concatenated gzip members are read as one stream, as gzip(1)
 * does. A stream that ends before the gzip trailer is an error
 * ("truncated"), never a silent short read.
 *
 * Each member is inflated raw (inflate_raw.h: ISA-L's engine when built
 * with it, zlib's otherwise); the header and trailer are read here, and
 * the CRC-32 the trailer holds is checked with libdeflate's when it is
 * built in: zlib's own is ~3.9 instructions a byte, 45% of a gzip
 * member's inflate (bench_json_inflate weighs them), libdeflate's 0.3.
 * In front of the compressed input buffer lie the last
 * XPV_INFLATE_GIVE_BACK bytes read before it, which an engine that read
 * past a member's end may step back onto (inflate_raw.h).
 *
 * Invariants: slot states move free -> full (producer) -> held (consumer)
 * -> free (release), all under `mu`. After the producer has published its
 * last chunk it sets `done` (and `failed` with a message on error).
 */
#define _GNU_SOURCE
#include "gz_input.h"
#include "inflate_raw.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef XPV_HAVE_LIBDEFLATE
#include <libdeflate.h>
#define member_crc(crc, p, n) libdeflate_crc32((crc), (p), (n))
#else
#include <zlib.h>
#define member_crc(crc, p, n) (uint32_t) crc32_z((crc), (p), (n))
#endif

#define NSLOTS 4
#define DEFAULT_CHUNK (4u << 20)
#define READ_SIZE XPV_GZ_READ_SIZE

enum { SLOT_FREE, SLOT_FULL, SLOT_HELD };

struct xpv_gz_input {
    int fd;
    int gzip;
    size_t chunk_size, headroom;
    char *mem[NSLOTS];
    size_t len[NSLOTS];
    int64_t offset[NSLOTS];
    int state[NSLOTS];
    int next_fill, next_take;

    pthread_t thread;
    int thread_started;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int done, failed, quit;
    xpv_err err;

    /* producer only */
    xpv_inflater *inf;
    unsigned char *inbuf_mem, *inbuf; /* inbuf_mem: the bytes read before inbuf, then inbuf */
    unsigned char *next_in;           /* the compressed bytes read and not yet used */
    size_t avail_in;
    int64_t produced;
    int64_t compressed_read;
    uint32_t crc, isize; /* of the member's output so far */
    const char *bad;     /* why the stream stopped, for gzip_failure; NULL: err says */
    xpv_input_limits limits;
};

/* ---- producer ---- */

/* Waits for the next slot in ring order to be free; -1 when asked to quit. */
static int wait_free_slot(xpv_gz_input *in)
{
    pthread_mutex_lock(&in->mu);
    while (in->state[in->next_fill] != SLOT_FREE && !in->quit)
        pthread_cond_wait(&in->cv, &in->mu);
    int rc = in->quit ? -1 : in->next_fill;
    pthread_mutex_unlock(&in->mu);
    return rc;
}

static void publish(xpv_gz_input *in, int slot, size_t len)
{
    pthread_mutex_lock(&in->mu);
    in->len[slot] = len;
    in->offset[slot] = in->produced;
    in->state[slot] = SLOT_FULL;
    in->next_fill = (slot + 1) % NSLOTS;
    pthread_cond_broadcast(&in->cv);
    pthread_mutex_unlock(&in->mu);
    in->produced += (int64_t)len;
}

static void finish(xpv_gz_input *in, const xpv_err *err)
{
    pthread_mutex_lock(&in->mu);
    if (err) {
        in->err = *err;
        in->failed = 1;
    }
    in->done = 1;
    pthread_cond_broadcast(&in->cv);
    pthread_mutex_unlock(&in->mu);
}

static ssize_t read_some(int fd, void *buf, size_t n)
{
    for (;;) {
        ssize_t r = read(fd, buf, n);
        if (r >= 0 || errno != EINTR) return r;
    }
}

/* Plain file: fills chunks straight from read(). */
static int produce_plain(xpv_gz_input *in, xpv_err *err)
{
    for (;;) {
        int slot = wait_free_slot(in);
        if (slot < 0) return 0;
        char *dst = in->mem[slot] + in->headroom;
        size_t got = 0;
        while (got < in->chunk_size) {
            ssize_t r = read_some(in->fd, dst + got, in->chunk_size - got);
            if (r < 0)
                return xpv_err_set(err, "read error at offset %lld: %s",
                                   (long long)(in->produced + (int64_t)got), strerror(errno));
            if (r == 0) break;
            got += (size_t)r;
        }
        if (got) publish(in, slot, got);
        if (got < in->chunk_size) return 0;
    }
}

/* Refills the compressed input; returns bytes now available, 0 at end of
 * file, -1 on error. The last XPV_INFLATE_GIVE_BACK bytes of what was read
 * before move to just in front of the buffer (inflate_raw.h). */
static int refill_input(xpv_gz_input *in, xpv_err *err)
{
    if (in->avail_in) return (int)in->avail_in;
    size_t used = (size_t)(in->next_in - in->inbuf); /* all of the last read */
    assert(used <= READ_SIZE);
    memmove(in->inbuf_mem, in->inbuf_mem + used, XPV_INFLATE_GIVE_BACK);
    in->next_in = in->inbuf;
    ssize_t r = read_some(in->fd, in->inbuf, READ_SIZE);
    if (r < 0)
        return xpv_err_set(err, "read error at compressed offset %lld: %s",
                           (long long)in->compressed_read, strerror(errno));
    in->compressed_read += r;
    in->avail_in = (size_t)r;
    return (int)r;
}

#define TRUNCATED "truncated gzip data: the compressed stream ends early"

/* Failures of the functions below: -1 with in->bad saying why, or NULL
 * and err (a read error). */
static int stream_bad(xpv_gz_input *in, const char *why)
{
    in->bad = why;
    return -1;
}

/* The next compressed byte, or -1. */
static int next_byte(xpv_gz_input *in, xpv_err *err)
{
    int avail = refill_input(in, err);
    if (avail <= 0) return stream_bad(in, avail == 0 ? TRUNCATED : NULL);
    in->avail_in--;
    return *in->next_in++;
}

static int skip_bytes(xpv_gz_input *in, size_t n, xpv_err *err)
{
    while (n--)
        if (next_byte(in, err) < 0) return -1;
    return 0;
}

/* Reads a member's header (RFC 1952: magic, method 8, then the optional
 * extra field, name, comment and header CRC the flags announce). */
static int read_header(xpv_gz_input *in, xpv_err *err)
{
    unsigned char h[10];
    for (int i = 0; i < 10; i++) {
        int c = next_byte(in, err);
        if (c < 0) return -1;
        h[i] = (unsigned char)c;
    }
    if (h[0] != 0x1f || h[1] != 0x8b || h[2] != 8 || (h[3] & 0xe0))
        return stream_bad(in, "corrupt gzip data (incorrect header check)");
    if (h[3] & 4) {
        int lo = next_byte(in, err), hi = lo < 0 ? -1 : next_byte(in, err);
        if (hi < 0 || skip_bytes(in, (size_t)(lo | hi << 8), err) != 0) return -1;
    }
    for (int flag = 8; flag <= 16; flag <<= 1) { /* name, comment: NUL-terminated */
        int c = h[3] & flag ? 1 : 0;
        while (c > 0)
            c = next_byte(in, err);
        if (c < 0) return -1;
    }
    if ((h[3] & 2) && skip_bytes(in, 2, err) != 0) return -1;
    in->crc = 0;
    in->isize = 0;
    return xpv_inflate_reset(in->inf) == 0 ? 0 : stream_bad(in, "the inflater cannot restart");
}

/* Reads a member's trailer and checks its CRC-32 and size. */
static int read_trailer(xpv_gz_input *in, xpv_err *err)
{
    uint32_t v[2] = {0, 0};
    for (int i = 0; i < 8; i++) {
        int c = next_byte(in, err);
        if (c < 0) return -1;
        v[i / 4] |= (uint32_t)c << (8 * (i % 4));
    }
    if (v[0] != in->crc) return stream_bad(in, "corrupt gzip data (incorrect data check)");
    if (v[1] != in->isize) return stream_bad(in, "corrupt gzip data (incorrect length check)");
    return 0;
}

/* After one gzip member ends: 1 if another member follows, 0 if the file
 * ends here (trailing zero padding, which some writers leave, is ignored). */
static int next_member(xpv_gz_input *in, xpv_err *err)
{
    if (read_trailer(in, err) != 0) return -1;
    for (;;) {
        int avail = refill_input(in, err);
        if (avail < 0) return stream_bad(in, NULL);
        if (avail == 0) return 0;
        while (in->avail_in && in->next_in[0] == 0)
            in->next_in++, in->avail_in--;
        if (in->avail_in == 0) continue;
        if (in->next_in[0] != 0x1f) return 0;
        return read_header(in, err) == 0 ? 1 : -1;
    }
}

/* Publishes the `have` bytes the slot holds, so the consumer keeps the
 * good data, then fails. With `what`, err says that the stream is damaged
 * at the offset where its good data ends; without, err already holds the
 * reason. */
static int gzip_failure(xpv_gz_input *in, int slot, size_t have, xpv_err *err, const char *what)
{
    int64_t at = in->produced + (int64_t)have;
    if (have) publish(in, slot, have);
    if (!what) return -1;
    return xpv_err_set(err, "%s at uncompressed offset %lld", what, (long long)at);
}

/* 1 when inflating `have` more bytes keeps within the limits; otherwise
 * err says which limit and how to raise it. */
static int within_limits(xpv_gz_input *in, size_t have, xpv_err *err)
{
    uint64_t out = (uint64_t)in->produced + have;
    uint64_t read = (uint64_t)in->compressed_read - in->avail_in;
    const xpv_input_limits *l = &in->limits;
    if (l->max_bytes && out > l->max_bytes) {
        xpv_err_set(err, "inflates past %llu bytes, the limit per file (--max-inflate)",
                    (unsigned long long)l->max_bytes);
        return 0;
    }
    if (l->max_ratio && out > XPV_RATIO_CHECK_AFTER && read && out / read > l->max_ratio) {
        xpv_err_set(err,
                    "inflates more than %u times its compressed size (%llu bytes from %llu): "
                    "a gzip bomb? (--max-inflate-ratio)",
                    l->max_ratio, (unsigned long long)out, (unsigned long long)read);
        return 0;
    }
    return 1;
}

/* Inflates into the slot's free room until it is full, the last member
 * ends (*member_open = 0) or something fails. */
static int fill_slot(xpv_gz_input *in, int slot, size_t *have, int *member_open, int *need_header,
                     xpv_err *err)
{
    unsigned char *out = (unsigned char *)in->mem[slot] + in->headroom + *have;
    size_t room = in->chunk_size - *have;
    while (room) {
        if (*need_header && read_header(in, err) != 0)
            return gzip_failure(in, slot, *have, err, in->bad);
        *need_header = 0;
        int avail = refill_input(in, err);
        if (avail < 0) return gzip_failure(in, slot, *have, err, NULL);
        unsigned char *from = out;
        const char *why = "";
        int rc = xpv_inflate_run(in->inf, &in->next_in, &in->avail_in, &out, &room, &why);
        size_t made = (size_t)(out - from);
        in->crc = member_crc(in->crc, from, made);
        in->isize += (uint32_t)made;
        *have += made;
        if (rc == XPV_INFLATE_ERROR) {
            char what[160];
            snprintf(what, sizeof what, "corrupt gzip data (%s)", why);
            return gzip_failure(in, slot, *have, err, what);
        }
        if (rc == XPV_INFLATE_END) {
            int more = next_member(in, err);
            if (more < 0) return gzip_failure(in, slot, *have, err, in->bad);
            if (!more) {
                *member_open = 0;
                return 0;
            }
        } else if (made == 0 && avail == 0) {
            /* at the end of the file, and the engine's own buffered input
             * made nothing more */
            return gzip_failure(in, slot, *have, err, TRUNCATED);
        } else if (made == 0 && in->avail_in == (size_t)avail) {
            return gzip_failure(in, slot, *have, err, "the inflater made no progress");
        }
    }
    return 0;
}

static int produce_gzip(xpv_gz_input *in, xpv_err *err)
{
    int member_open = 1, need_header = 1;
    while (member_open) {
        int slot = wait_free_slot(in);
        if (slot < 0) return 0;
        size_t have = 0;
        if (fill_slot(in, slot, &have, &member_open, &need_header, err) != 0) return -1;
        if (!within_limits(in, have, err)) return -1;
        if (have) publish(in, slot, have);
    }
    return 0;
}

static void *producer_main(void *arg)
{
    xpv_gz_input *in = arg;
    xpv_err err = {{0}};
    int rc = in->gzip ? produce_gzip(in, &err) : produce_plain(in, &err);
    finish(in, rc == 0 ? NULL : &err);
    return NULL;
}

/* ---- consumer ---- */

xpv_gz_input *xpv_gz_open(const char *path, size_t chunk_size, size_t headroom,
                          const xpv_input_limits *limits, xpv_err *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        xpv_err_set(err, "%s: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    xpv_gz_input *in = xpv_xcalloc(1, sizeof *in);
    in->fd = fd;
    in->chunk_size = chunk_size ? chunk_size : DEFAULT_CHUNK;
    in->headroom = headroom;
    in->limits = limits ? *limits : XPV_INPUT_LIMITS_DEFAULT;
    unsigned char magic[2] = {0, 0};
    ssize_t n = pread(fd, magic, 2, 0);
    in->gzip = n == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
    for (int i = 0; i < NSLOTS; i++)
        in->mem[i] = xpv_xmalloc(in->headroom + in->chunk_size + 16);
    pthread_mutex_init(&in->mu, NULL);
    pthread_cond_init(&in->cv, NULL);
    if (in->gzip) {
        in->inbuf_mem = xpv_xcalloc(1, XPV_INFLATE_GIVE_BACK + READ_SIZE);
        in->inbuf = in->next_in = in->inbuf_mem + XPV_INFLATE_GIVE_BACK;
        in->inf = xpv_inflate_new();
        if (!in->inf) {
            xpv_err_set(err, "%s: the inflater (%s) cannot start", path, xpv_inflate_engine());
            xpv_gz_close(in);
            return NULL;
        }
    }
    if (pthread_create(&in->thread, NULL, producer_main, in) != 0) {
        xpv_err_set(err, "%s: cannot start the input thread", path);
        xpv_gz_close(in);
        return NULL;
    }
    in->thread_started = 1;
    return in;
}

int xpv_gz_next(xpv_gz_input *in, xpv_gz_chunk *out, xpv_err *err)
{
    pthread_mutex_lock(&in->mu);
    int slot = in->next_take;
    while (in->state[slot] != SLOT_FULL && !in->done)
        pthread_cond_wait(&in->cv, &in->mu);
    int rc;
    if (in->state[slot] == SLOT_FULL) {
        in->state[slot] = SLOT_HELD;
        in->next_take = (slot + 1) % NSLOTS;
        out->data = in->mem[slot] + in->headroom;
        out->len = in->len[slot];
        out->offset = in->offset[slot];
        out->slot = slot;
        rc = 1;
    } else if (in->failed) {
        if (err) *err = in->err;
        rc = -1;
    } else {
        rc = 0;
    }
    pthread_mutex_unlock(&in->mu);
    return rc;
}

void xpv_gz_release(xpv_gz_input *in, const xpv_gz_chunk *c)
{
    pthread_mutex_lock(&in->mu);
    in->state[c->slot] = SLOT_FREE;
    pthread_cond_broadcast(&in->cv);
    pthread_mutex_unlock(&in->mu);
}

int xpv_gz_is_gzip(const xpv_gz_input *in)
{
    return in->gzip;
}

void xpv_gz_close(xpv_gz_input *in)
{
    if (!in) return;
    if (in->thread_started) {
        pthread_mutex_lock(&in->mu);
        in->quit = 1;
        pthread_cond_broadcast(&in->cv);
        pthread_mutex_unlock(&in->mu);
        pthread_join(in->thread, NULL);
    }
    xpv_inflate_free(in->inf);
    free(in->inbuf_mem);
    for (int i = 0; i < NSLOTS; i++)
        free(in->mem[i]);
    pthread_mutex_destroy(&in->mu);
    pthread_cond_destroy(&in->cv);
    close(in->fd);
    free(in);
}
