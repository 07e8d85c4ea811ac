/*
 * varint.h — LEB128 varints and zigzag signed varints, the integer encoding
 * of the event store's blocks and of the analysis's in-memory capture.
 *
 * Writers write through a raw pointer into space the caller reserved
 * (at most XPV_VARINT_MAX bytes per value): they run for every event.
 * Readers are bounded: running off the end or a varint longer than 64 bits
 * sets `bad` and yields 0, so damaged bytes never read out of bounds.
 */
#ifndef XPV_VARINT_H
#define XPV_VARINT_H

#include <stdint.h>

#define XPV_VARINT_MAX 10

static inline unsigned char *xpv_varint_put(unsigned char *p, uint64_t v)
{
    while (v >= 0x80) {
        *p++ = (unsigned char)(v | 0x80);
        v >>= 7;
    }
    *p++ = (unsigned char)v;
    return p;
}

static inline unsigned char *xpv_zigzag_put(unsigned char *p, int64_t v)
{
    return xpv_varint_put(p, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63));
}

typedef struct {
    const unsigned char *p, *end;
    int bad;
} xpv_varint_reader;

static inline uint64_t xpv_varint_get(xpv_varint_reader *r)
{
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (r->p >= r->end) break;
        unsigned c = *r->p++;
        v |= (uint64_t)(c & 0x7F) << shift;
        if (!(c & 0x80)) return v;
    }
    r->bad = 1;
    return 0;
}

static inline int64_t xpv_zigzag_get(xpv_varint_reader *r)
{
    uint64_t u = xpv_varint_get(r);
    return (int64_t)(u >> 1) ^ -(int64_t)(u & 1);
}

static inline unsigned xpv_varint_u8(xpv_varint_reader *r)
{
    if (r->p >= r->end) {
        r->bad = 1;
        return 0;
    }
    return *r->p++;
}

#endif
