/*
 * inflate_raw.c — the raw deflate engines behind inflate_raw.h.
 *
 * Invariant: each call hands the engine at most UINT32_MAX bytes of input
 * and of room (both engines count in 32 bits) and moves the caller's
 * pointers by exactly what the engine reports it used, less, at a stream's
 * end, the read-ahead it gives back.
 */
#include "inflate_raw.h"
#include "../../common/xpv_common.h"

#include <assert.h>
#include <stdint.h>
#include <stdlib.h>

#ifdef XPV_HAVE_ISAL
#include <isa-l/igzip_lib.h>
#else
#include <zlib.h>
#endif

static uint32_t clamp32(size_t n)
{
    return n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
}

#ifdef XPV_HAVE_ISAL

struct xpv_inflater {
    struct inflate_state st;
};

xpv_inflater *xpv_inflate_new(void)
{
    xpv_inflater *inf = malloc(sizeof *inf);
    if (inf) xpv_inflate_reset(inf);
    return inf;
}

int xpv_inflate_reset(xpv_inflater *inf)
{
    isal_inflate_init(&inf->st);
    inf->st.crc_flag = ISAL_DEFLATE;
    return 0;
}

static const char *isal_failure(int rc)
{
    switch (rc) {
    case ISAL_INVALID_BLOCK:
        return "invalid block type";
    case ISAL_INVALID_SYMBOL:
        return "invalid code";
    case ISAL_INVALID_LOOKBACK:
        return "invalid distance too far back";
    default:
        return "inflate failed";
    }
}

/* At the stream's end the engine's bit buffer holds the padding of the last
 * byte and then whole bytes read past the end: written back before *in. */
static void give_back(struct inflate_state *st, unsigned char **in, size_t *in_len)
{
    int whole = st->read_in_length / 8;
    assert(whole >= 0 && whole <= XPV_INFLATE_GIVE_BACK);
    uint64_t bits = st->read_in >> (st->read_in_length % 8);
    *in -= whole;
    *in_len += (size_t)whole;
    for (int i = 0; i < whole; i++)
        (*in)[i] = (unsigned char)(bits >> (8 * i));
    st->read_in = 0;
    st->read_in_length = 0;
}

int xpv_inflate_run(xpv_inflater *inf, unsigned char **in, size_t *in_len, unsigned char **out,
                    size_t *out_len, const char **why)
{
    struct inflate_state *st = &inf->st;
    uint32_t avail_in = clamp32(*in_len), avail_out = clamp32(*out_len);
    st->next_in = *in;
    st->avail_in = avail_in;
    st->next_out = *out;
    st->avail_out = avail_out;
    int rc = isal_inflate(st);
    *in_len -= avail_in - st->avail_in;
    *in = st->next_in;
    *out_len -= avail_out - st->avail_out;
    *out = st->next_out;
    if (rc < 0) {
        *why = isal_failure(rc);
        return XPV_INFLATE_ERROR;
    }
    if (st->block_state != ISAL_BLOCK_FINISH) return XPV_INFLATE_MORE;
    give_back(st, in, in_len);
    return XPV_INFLATE_END;
}

void xpv_inflate_free(xpv_inflater *inf)
{
    free(inf);
}

const char *xpv_inflate_engine(void)
{
    return "isa-l";
}

#else /* zlib */

struct xpv_inflater {
    z_stream zs;
};

xpv_inflater *xpv_inflate_new(void)
{
    xpv_inflater *inf = xpv_xcalloc(1, sizeof *inf);
    if (inflateInit2(&inf->zs, -MAX_WBITS) != Z_OK) {
        free(inf);
        return NULL;
    }
    return inf;
}

int xpv_inflate_reset(xpv_inflater *inf)
{
    return inflateReset(&inf->zs) == Z_OK ? 0 : -1;
}

int xpv_inflate_run(xpv_inflater *inf, unsigned char **in, size_t *in_len, unsigned char **out,
                    size_t *out_len, const char **why)
{
    z_stream *zs = &inf->zs;
    uint32_t avail_in = clamp32(*in_len), avail_out = clamp32(*out_len);
    zs->next_in = *in;
    zs->avail_in = avail_in;
    zs->next_out = *out;
    zs->avail_out = avail_out;
    int rc = inflate(zs, Z_NO_FLUSH);
    *in_len -= avail_in - zs->avail_in;
    *in = zs->next_in;
    *out_len -= avail_out - zs->avail_out;
    *out = zs->next_out;
    if (rc == Z_STREAM_END) return XPV_INFLATE_END;
    if (rc == Z_OK || rc == Z_BUF_ERROR) return XPV_INFLATE_MORE;
    *why = zs->msg ? zs->msg : "inflate failed";
    return XPV_INFLATE_ERROR;
}

void xpv_inflate_free(xpv_inflater *inf)
{
    if (!inf) return;
    inflateEnd(&inf->zs);
    free(inf);
}

const char *xpv_inflate_engine(void)
{
    return "zlib";
}

#endif
