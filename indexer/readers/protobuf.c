/*
 * protobuf.c — the general (multi-byte) paths of the wire decoder and its
 * error messages; see protobuf.h for the rules it enforces.
 */
#include "protobuf.h"

#include <stdarg.h>
#include <stdio.h>

#define VARINT_MAX_BYTES 10

int xpv_pb_fail(const xpv_pb *r, const uint8_t *at, xpv_err *err, const char *fmt, ...)
{
    char what[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return xpv_err_set(err, "byte offset %zu: %s", xpv_pb_offset(r, at), what);
}

static const char *wire_name(uint32_t wire)
{
    switch (wire) {
    case XPV_PB_VARINT:
        return "varint";
    case XPV_PB_FIXED64:
        return "fixed64";
    case XPV_PB_LEN:
        return "length-delimited";
    case XPV_PB_FIXED32:
        return "fixed32";
    case 3:
        return "start-group";
    case 4:
        return "end-group";
    default:
        return "invalid";
    }
}

int xpv_pb_wrong_wire(const xpv_pb *r, const xpv_pb_field *f, const char *message,
                      uint32_t expected, xpv_err *err)
{
    return xpv_pb_fail(r, f->at, err, "%s field %u has wire type %u (%s), expected %u (%s)",
                       message, f->num, f->wire, wire_name(f->wire), expected, wire_name(expected));
}

int xpv_pb_varint_slow(xpv_pb *r, uint64_t *out, xpv_err *err)
{
    const uint8_t *start = r->p;
    uint64_t v = 0;
    for (int i = 0; i < VARINT_MAX_BYTES; i++) {
        if (r->p >= r->end)
            return xpv_pb_fail(r, start, err, "varint runs past the end of its message");
        uint8_t c = *r->p++;
        if (i == VARINT_MAX_BYTES - 1 && c > 1) {
            r->p = start;
            return xpv_pb_fail(r, start, err,
                               c & 0x80 ? "varint longer than 10 bytes"
                                        : "varint does not fit in 64 bits");
        }
        v |= (uint64_t)(c & 0x7F) << (7 * i);
        if (!(c & 0x80)) {
            *out = v;
            return 0;
        }
    }
    r->p = start;
    return xpv_pb_fail(r, start, err, "varint longer than 10 bytes");
}

static int read_fixed(xpv_pb *r, xpv_pb_field *f, size_t n, xpv_err *err)
{
    if ((size_t)(r->end - r->p) < n)
        return xpv_pb_fail(r, f->at, err,
                           "field %u: %zu-byte value runs past the end of its "
                           "message (%zu bytes left)",
                           f->num, n, (size_t)(r->end - r->p));
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++)
        v |= (uint64_t)r->p[i] << (8 * i);
    r->p += n;
    f->v = v;
    return 1;
}

int xpv_pb_next_slow(xpv_pb *r, xpv_pb_field *f, xpv_err *err)
{
    if (r->p >= r->end) return 0;
    f->at = r->p;
    uint64_t tag;
    if (xpv_pb_varint(r, &tag, err) != 0) return -1;
    f->num = (uint32_t)(tag >> 3);
    f->wire = (uint32_t)(tag & 7);
    if ((tag >> 3) == 0 || (tag >> 3) > 536870911u)
        return xpv_pb_fail(r, f->at, err, "invalid field number %llu (not protobuf?)",
                           (unsigned long long)(tag >> 3));
    switch (f->wire) {
    case XPV_PB_VARINT:
        return xpv_pb_varint(r, &f->v, err) == 0 ? 1 : -1;
    case XPV_PB_FIXED64:
        return read_fixed(r, f, 8, err);
    case XPV_PB_FIXED32:
        return read_fixed(r, f, 4, err);
    case XPV_PB_LEN: {
        uint64_t len;
        const uint8_t *len_at = r->p;
        if (xpv_pb_varint(r, &len, err) != 0) return -1;
        if (len > (uint64_t)(r->end - r->p))
            return xpv_pb_fail(r, len_at, err,
                               "field %u: length prefix %llu runs past the end of its message "
                               "(%zu bytes left)",
                               f->num, (unsigned long long)len, (size_t)(r->end - r->p));
        f->data = r->p;
        f->len = (size_t)len;
        r->p += len;
        return 1;
    }
    default:
        return xpv_pb_fail(r, f->at, err,
                           "field %u has unsupported wire type %u (%s; not an "
                           "XSpace protobuf?)",
                           f->num, f->wire, wire_name(f->wire));
    }
}
