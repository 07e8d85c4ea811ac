/*
 * gz_input.h — a file's bytes, inflated if it is gzip (sniffed by its magic
 * bytes) and read plain otherwise, delivered in large chunks produced on a
 * thread of their own so that inflating overlaps with the consumer's parsing.
 *
 * Every chunk has `headroom` writable bytes in front of its data, so a parser
 * can copy the unfinished tail of the previous chunk there and see one
 * contiguous window without copying the whole stream.
 *
 * Protocol: xpv_gz_next() hands out chunks in file order; the consumer may
 * hold the previous chunk while it copies its tail, then gives it back with
 * xpv_gz_release(). At most two chunks are held at a time.
 */
#ifndef XPV_GZ_INPUT_H
#define XPV_GZ_INPUT_H

#include "../../common/xpv_common.h"

#include <stddef.h>
#include <stdint.h>

/* A gzip file is read this many compressed bytes at a time (tests place a
 * member's end next to where one read stops and the next begins). */
#define XPV_GZ_READ_SIZE (1u << 20)

typedef struct xpv_gz_input xpv_gz_input;

typedef struct {
    char *data; /* chunk bytes; data - headroom .. data is writable too */
    size_t len;
    int64_t offset; /* offset of data[0] in the (uncompressed) stream */
    int slot;       /* for xpv_gz_release */
} xpv_gz_chunk;

/* Opens path and starts the producer thread. chunk_size 0 picks a default.
 * A gzip stream that inflates past the limits (NULL: the defaults) stops
 * with an error, as a damaged one does. */
xpv_gz_input *xpv_gz_open(const char *path, size_t chunk_size, size_t headroom,
                          const xpv_input_limits *limits, xpv_err *err);
/* 1: *out holds the next chunk; 0: end of stream; -1: read or inflate error
 * (err names the uncompressed offset and the reason). */
int xpv_gz_next(xpv_gz_input *in, xpv_gz_chunk *out, xpv_err *err);
void xpv_gz_release(xpv_gz_input *in, const xpv_gz_chunk *c);
/* 1 when the file is gzip-compressed. */
int xpv_gz_is_gzip(const xpv_gz_input *in);
/* Stops the producer (even mid-file) and frees everything. */
void xpv_gz_close(xpv_gz_input *in);

#endif
