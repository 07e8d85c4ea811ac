/*
 * protobuf.h — decoding the protobuf wire format in place, without a schema
 * compiler and without copying: a message is a byte range, a field is a tag
 * plus a value (a number, or a sub-range for length-delimited fields).
 *
 * Invariants: every read is checked against the end of the range the
 * message lives in, so damaged input gives an error naming the byte offset
 * (relative to `base`, the start of the file) and never an out-of-bounds
 * read. Varints are at most 10 bytes and must fit in 64 bits; negative
 * int64 values are 10-byte varints (no zigzag). Wire types 0 (varint),
 * 1 (fixed64), 2 (length-delimited) and 5 (fixed32) are read; groups (3, 4)
 * and 6, 7 are errors. The fast paths are inline because a large XSpace has
 * hundreds of millions of fields.
 */
#ifndef XPV_PROTOBUF_H
#define XPV_PROTOBUF_H

#include "../../common/xpv_common.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

enum {
    XPV_PB_VARINT = 0,
    XPV_PB_FIXED64 = 1,
    XPV_PB_LEN = 2,
    XPV_PB_FIXED32 = 5,
};

/* A message being read: [p, end) is what is left of it. */
typedef struct {
    const uint8_t *base; /* start of the file: error offsets count from here */
    const uint8_t *p, *end;
} xpv_pb;

typedef struct {
    uint32_t num;        /* field number (>= 1) */
    uint32_t wire;       /* XPV_PB_* */
    uint64_t v;          /* value of varint, fixed64 and fixed32 fields */
    const uint8_t *data; /* value of length-delimited fields */
    size_t len;
    const uint8_t *at; /* where the field's tag starts */
} xpv_pb_field;

static inline xpv_pb xpv_pb_open(const void *base, size_t len)
{
    xpv_pb r = {(const uint8_t *)base, (const uint8_t *)base, (const uint8_t *)base + len};
    return r;
}

/* The payload of a length-delimited field, as a message of its own. */
static inline xpv_pb xpv_pb_sub(const xpv_pb *r, const xpv_pb_field *f)
{
    xpv_pb s = {r->base, f->data, f->data + f->len};
    return s;
}

static inline size_t xpv_pb_offset(const xpv_pb *r, const uint8_t *p)
{
    return (size_t)(p - r->base);
}

/* Slow paths and error reporting (protobuf.c). */
int xpv_pb_varint_slow(xpv_pb *r, uint64_t *out, xpv_err *err);
int xpv_pb_next_slow(xpv_pb *r, xpv_pb_field *f, xpv_err *err);
/* Sets err to "byte offset N: <what>" and returns -1. */
int xpv_pb_fail(const xpv_pb *r, const uint8_t *at, xpv_err *err, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Error for a field whose wire type is not the one its schema needs. */
int xpv_pb_wrong_wire(const xpv_pb *r, const xpv_pb_field *f, const char *message,
                      uint32_t expected, xpv_err *err);

/* Decodes a varint in [p, end). Returns the byte after it, or NULL when it
 * is cut off or malformed (the slow path then says which). */
static inline const uint8_t *xpv_pb_varint_in(const uint8_t *p, const uint8_t *end, uint64_t *out)
{
    if (p < end && *p < 0x80) {
        *out = *p;
        return p + 1;
    }
    if (end - p >= 10) { /* every byte a varint may take is there: no bound checks */
        uint64_t w = 0;
        for (int i = 0; i < 10; i++) {
            uint8_t c = p[i];
            if (i == 9 && c > 1) return NULL;
            w |= (uint64_t)(c & 0x7F) << (7 * i);
            if (!(c & 0x80)) {
                *out = w;
                return p + i + 1;
            }
        }
        return NULL;
    }
    uint64_t v = 0;
    for (int shift = 0; shift < 70 && p < end; shift += 7) {
        uint8_t c = *p++;
        if (shift == 63 && c > 1) return NULL; /* the 10th byte may only carry bit 63 */
        v |= (uint64_t)(c & 0x7F) << shift;
        if (!(c & 0x80)) {
            *out = v;
            return p;
        }
    }
    return NULL;
}

/* Reads one varint. Returns 0, or -1 with err. */
static inline int xpv_pb_varint(xpv_pb *r, uint64_t *out, xpv_err *err)
{
    if (r->p < r->end && *r->p < 0x80) {
        *out = *r->p++;
        return 0;
    }
    return xpv_pb_varint_slow(r, out, err);
}

/* Reads the next field. Returns 1 with *f filled, 0 at the end of the
 * message, or -1 with err. */
static inline int xpv_pb_next(xpv_pb *r, xpv_pb_field *f, xpv_err *err)
{
    if (r->p >= r->end) return 0;
    /* Fast path: a one-byte tag (fields 1-15) of a varint or length-delimited
     * field; everything else (and every error) takes the slow path. */
    uint32_t tag = r->p[0];
    if (tag < 0x80 && tag >= 8) {
        const uint8_t *p = r->p + 1;
        if ((tag & 7) == XPV_PB_VARINT) {
            p = xpv_pb_varint_in(p, r->end, &f->v);
            if (p) {
                f->at = r->p;
                f->num = tag >> 3;
                f->wire = XPV_PB_VARINT;
                r->p = p;
                return 1;
            }
        } else if ((tag & 7) == XPV_PB_LEN) {
            uint64_t len;
            p = xpv_pb_varint_in(p, r->end, &len);
            if (p && len <= (uint64_t)(r->end - p)) {
                f->at = r->p;
                f->num = tag >> 3;
                f->wire = XPV_PB_LEN;
                f->len = (size_t)len;
                f->data = p;
                r->p = p + len;
                return 1;
            }
        }
    }
    return xpv_pb_next_slow(r, f, err);
}

static inline double xpv_pb_double(uint64_t bits)
{
    double d;
    memcpy(&d, &bits, sizeof d);
    return d;
}

static inline float xpv_pb_float(uint64_t bits)
{
    uint32_t b = (uint32_t)bits;
    float f;
    memcpy(&f, &b, sizeof f);
    return f;
}

#endif
