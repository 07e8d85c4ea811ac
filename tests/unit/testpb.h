/*
 * testpb.h — a tiny protobuf writer for the unit tests that build HLO and
 * XSpace messages by hand: varints, length-delimited fields, packed
 * repeated ints. Field numbers come from the callers.
 */
#ifndef XPV_TEST_PB_H
#define XPV_TEST_PB_H

#include "common/xpv_common.h"

#include <stdint.h>
#include <string.h>

static inline void xpv_test_pb_varint(xpv_buf *b, uint64_t v)
{
    while (v >= 0x80) {
        xpv_buf_putc(b, (char)(v | 0x80));
        v >>= 7;
    }
    xpv_buf_putc(b, (char)v);
}

static inline void xpv_test_pb_int(xpv_buf *b, uint32_t num, int64_t v)
{
    xpv_test_pb_varint(b, (uint64_t)num << 3);
    xpv_test_pb_varint(b, (uint64_t)v);
}

static inline void xpv_test_pb_bytes(xpv_buf *b, uint32_t num, const void *p, size_t n)
{
    xpv_test_pb_varint(b, (uint64_t)num << 3 | 2);
    xpv_test_pb_varint(b, n);
    xpv_buf_append(b, p, n);
}

static inline void xpv_test_pb_str(xpv_buf *b, uint32_t num, const char *s)
{
    xpv_test_pb_bytes(b, num, s, strlen(s));
}

/* Appends the message m as field num and frees it. */
static inline void xpv_test_pb_msg(xpv_buf *b, uint32_t num, xpv_buf *m)
{
    xpv_test_pb_bytes(b, num, m->data, m->len);
    xpv_buf_free(m);
}

static inline void xpv_test_pb_packed(xpv_buf *b, uint32_t num, const int64_t *v, size_t n)
{
    xpv_buf p = {0};
    for (size_t i = 0; i < n; i++)
        xpv_test_pb_varint(&p, (uint64_t)v[i]);
    xpv_test_pb_msg(b, num, &p);
}

#endif
