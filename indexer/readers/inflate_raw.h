/*
 * inflate_raw.h — one raw deflate stream (RFC 1951) at a time, streamed
 * through caller-owned buffers. gz_input.c reads the gzip framing around it.
 *
 * Two engines: ISA-L's inflater when the build finds it (libisal), zlib's
 * otherwise. bench_json_inflate weighs them: on the 1.29 GB PyTorch trace
 * ISA-L inflates ~2.4x faster than zlib's raw inflate, and inflating is
 * the input thread's whole job.
 *
 * Read-ahead: ISA-L pulls input in 8-byte words, so at a stream's end it
 * may hold up to 8 bytes that follow the stream. xpv_inflate_run gives them
 * back by writing them into the XPV_INFLATE_GIVE_BACK bytes before *in and
 * moving *in back over them: the caller's input buffer must have that much
 * writable room before its first byte. zlib never reads ahead.
 */
#ifndef XPV_INFLATE_RAW_H
#define XPV_INFLATE_RAW_H

#include <stddef.h>

#define XPV_INFLATE_GIVE_BACK 8

typedef struct xpv_inflater xpv_inflater;

enum { XPV_INFLATE_ERROR = -1, XPV_INFLATE_MORE = 0, XPV_INFLATE_END = 1 };

/* NULL when the engine cannot start (out of memory). */
xpv_inflater *xpv_inflate_new(void);
void xpv_inflate_free(xpv_inflater *inf);
/* Readies inf for a new stream; 0, or -1 when the engine refuses. */
int xpv_inflate_reset(xpv_inflater *inf);

/* Inflates from [*in, *in + *in_len) into [*out, *out + *out_len), moving
 * both pointers and lengths past what it used. XPV_INFLATE_MORE: it needs
 * more input or more room; XPV_INFLATE_END: the stream ended, and *in is
 * the first byte after it; XPV_INFLATE_ERROR: the data is not deflate, and
 * *why says how (a static string). */
int xpv_inflate_run(xpv_inflater *inf, unsigned char **in, size_t *in_len, unsigned char **out,
                    size_t *out_len, const char **why);

/* "isa-l" or "zlib": which engine this build inflates with. */
const char *xpv_inflate_engine(void);

#endif
