/*
 * inflate_raw.h — one raw deflate stream (RFC 1951) at a time, streamed
 * through caller-owned buffers. gz_input.c reads the gzip framing around it.
 *
 * Two engines: ISA-L's inflater when the build finds it (libisal), zlib's
 * otherwise. bench_json_inflate weighs them: on the 1.28 GB PyTorch trace
 * ISA-L inflates 2.2x faster than zlib's raw inflate (0.33 s against
 * 0.72 s, both with libdeflate's CRC-32), and inflating is the input
 * thread's whole job.
 *
 * Read-ahead: ISA-L pulls input 8 bytes at a time, so at a stream's end it
 * may have taken up to 8 bytes that follow the stream. At XPV_INFLATE_END
 * *in points at the first byte after the stream, which may lie up to
 * XPV_INFLATE_GIVE_BACK bytes before where the call's input began: the
 * caller keeps the last XPV_INFLATE_GIVE_BACK bytes of the input it passed
 * before right in front of the input it passes now (gz_input.c copies them
 * there at each refill). zlib never reads ahead.
 */
#ifndef XPV_INFLATE_RAW_H
#define XPV_INFLATE_RAW_H

#include <stddef.h>

#define XPV_INFLATE_GIVE_BACK 8

typedef struct xpv_inflater xpv_inflater;

enum { XPV_INFLATE_ERROR = -1, XPV_INFLATE_MORE = 0, XPV_INFLATE_END = 1 };

/* NULL when the engine cannot start. */
xpv_inflater *xpv_inflate_new(void);
void xpv_inflate_free(xpv_inflater *inf);
/* Readies inf for a new stream; 0, or -1 when the engine refuses. */
int xpv_inflate_reset(xpv_inflater *inf);

/* Inflates from [*in, *in + *in_len) into [*out, *out + *out_len), moving
 * both pointers and lengths past what it used (but for the read-ahead it
 * gives back at a stream's end, above). XPV_INFLATE_MORE: it needs
 * more input or more room; XPV_INFLATE_END: the stream ended, and *in is
 * the first byte after it (see read-ahead above); XPV_INFLATE_ERROR: the
 * data is not deflate, and *why says how (a static string). */
int xpv_inflate_run(xpv_inflater *inf, unsigned char **in, size_t *in_len, unsigned char **out,
                    size_t *out_len, const char **why);

/* "isa-l" or "zlib": which engine this build inflates with. */
const char *xpv_inflate_engine(void);

#endif
