/*
 * inflate_raw.c — the raw deflate engines behind inflate_raw.h.
 *
 * Invariants: each call hands the engine at most UINT32_MAX bytes of input
 * and of room (both engines count in 32 bits); the caller's input pointer
 * and length are set from where the engine's input pointer ends, not from
 * its count of bytes used, because an ISA-L from 2.32.1 on moves its
 * pointer back over what it read past a stream's end, possibly to before
 * where this call's input began (into the bytes inflate_raw.h has the
 * caller keep there), while older ones leave those bytes in their bit
 * buffer for us to step back over.
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
    xpv_inflater *inf = xpv_xmalloc(sizeof *inf);
    xpv_inflate_reset(inf);
    return inf;
}

int xpv_inflate_reset(xpv_inflater *inf)
{
    isal_inflate_init(&inf->st);
    inf->st.crc_flag = ISAL_DEFLATE;
    return 0;
}

static const char *engine_failure(int rc)
{
    switch (rc) {
    case ISAL_INVALID_BLOCK:
        return "invalid block";
    case ISAL_INVALID_SYMBOL:
        return "invalid code";
    case ISAL_INVALID_LOOKBACK:
        return "invalid distance too far back";
    default:
        return "inflate failed";
    }
}

/* At a stream's end an ISA-L before 2.32.1 keeps in its bit buffer the
 * padding of the last byte, then whole bytes read past the end: *in steps
 * back over those, onto the same bytes (the caller's, inflate_raw.h). */
static void step_back(struct inflate_state *st, unsigned char **in, size_t *in_len)
{
    int whole = st->read_in_length / 8;
    assert(whole >= 0 && whole <= XPV_INFLATE_GIVE_BACK);
    uint64_t bits = st->read_in >> (st->read_in_length % 8);
    *in -= whole;
    *in_len += (size_t)whole;
    for (int i = 0; i < whole; i++)
        assert((*in)[i] == (unsigned char)(bits >> (8 * i)));
    (void)bits;
    st->read_in = 0;
    st->read_in_length = 0;
}

int xpv_inflate_run(xpv_inflater *inf, unsigned char **in, size_t *in_len, unsigned char **out,
                    size_t *out_len, const char **why)
{
    struct inflate_state *st = &inf->st;
    uint32_t give = clamp32(*in_len), room = clamp32(*out_len);
    unsigned char *in_end = *in + give;
    st->next_in = *in;
    st->avail_in = give;
    st->next_out = *out;
    st->avail_out = room;
    int rc = isal_inflate(st);
    assert(st->next_in <= in_end && st->next_in >= *in - XPV_INFLATE_GIVE_BACK);
    *in_len = *in_len - give + (size_t)(in_end - st->next_in);
    *in = st->next_in;
    *out_len -= room - st->avail_out;
    *out = st->next_out;
    if (rc < 0) {
        *why = engine_failure(rc);
        return XPV_INFLATE_ERROR;
    }
    if (st->block_state != ISAL_BLOCK_FINISH) return XPV_INFLATE_MORE;
    step_back(st, in, in_len);
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
    uint32_t give = clamp32(*in_len), room = clamp32(*out_len);
    zs->next_in = *in;
    zs->avail_in = give;
    zs->next_out = *out;
    zs->avail_out = room;
    int rc = inflate(zs, Z_NO_FLUSH);
    *in_len -= give - zs->avail_in; /* zlib never reads ahead: avail_in <= give */
    *in = zs->next_in;
    *out_len -= room - zs->avail_out;
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
