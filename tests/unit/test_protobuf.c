/*
 * test_protobuf.c — the wire decoder on hand-built bytes: every wire type,
 * negative (10-byte) varints, unknown fields skipped, and each malformed
 * input giving an error that names its byte offset.
 */
#include "testutil.h"
#include "indexer/readers/protobuf.h"

#include <string.h>

/* Reads every field of buf; returns the last xpv_pb_next result. */
static int walk(const uint8_t *buf, size_t n, xpv_pb_field *last, int *count, xpv_err *err)
{
    xpv_pb r = xpv_pb_open(buf, n);
    int rc;
    *count = 0;
    while ((rc = xpv_pb_next(&r, last, err)) == 1)
        (*count)++;
    return rc;
}

static void test_wire_types(void)
{
    /* f1 varint 150, f2 fixed64, f3 len "abc", f5 fixed32, f300 varint 1 */
    const uint8_t buf[] = {0x08, 0x96, 0x01, 0x11, 1,    2, 3, 4, 5, 6,    7,    8,   0x1A,
                           3,    'a',  'b',  'c',  0x2D, 9, 0, 0, 0, 0xE0, 0x12, 0x01};
    xpv_pb r = xpv_pb_open(buf, sizeof buf);
    xpv_pb_field f;
    xpv_err err = {{0}};
    CU_ASSERT_EQUAL(xpv_pb_next(&r, &f, &err), 1);
    CU_ASSERT(f.num == 1 && f.wire == XPV_PB_VARINT && f.v == 150);
    CU_ASSERT_EQUAL(xpv_pb_next(&r, &f, &err), 1);
    CU_ASSERT(f.num == 2 && f.wire == XPV_PB_FIXED64 && f.v == 0x0807060504030201ULL);
    CU_ASSERT_EQUAL(xpv_pb_next(&r, &f, &err), 1);
    CU_ASSERT(f.num == 3 && f.wire == XPV_PB_LEN && f.len == 3 && memcmp(f.data, "abc", 3) == 0);
    CU_ASSERT_EQUAL(xpv_pb_offset(&r, f.at), 12);
    CU_ASSERT_EQUAL(xpv_pb_next(&r, &f, &err), 1);
    CU_ASSERT(f.num == 5 && f.wire == XPV_PB_FIXED32 && f.v == 9);
    CU_ASSERT_EQUAL(xpv_pb_next(&r, &f, &err), 1); /* a two-byte tag: field 300 */
    CU_ASSERT(f.num == 300 && f.wire == XPV_PB_VARINT && f.v == 1);
    CU_ASSERT_EQUAL(xpv_pb_next(&r, &f, &err), 0);
}

static void test_negative_varints(void)
{
    /* int64 -1 and -2: ten bytes, no zigzag; the short (fast) and the long path */
    const uint8_t buf[] = {0x08, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01,
                           0x10, 0xFE, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01};
    xpv_pb_field f;
    xpv_err err = {{0}};
    xpv_pb r = xpv_pb_open(buf, sizeof buf);
    CU_ASSERT_EQUAL(xpv_pb_next(&r, &f, &err), 1);
    CU_ASSERT_EQUAL((int64_t)f.v, -1);
    CU_ASSERT_EQUAL(xpv_pb_next(&r, &f, &err), 1);
    CU_ASSERT_EQUAL((int64_t)f.v, -2);
    CU_ASSERT_EQUAL(xpv_pb_next(&r, &f, &err), 0);
    /* a negative value as the very last bytes (the slow path's end checks) */
    xpv_pb tail = xpv_pb_open(buf + 11, 11);
    CU_ASSERT_EQUAL(xpv_pb_next(&tail, &f, &err), 1);
    CU_ASSERT_EQUAL((int64_t)f.v, -2);
    uint64_t v = 0;
    xpv_pb raw = xpv_pb_open(buf + 1, 10);
    CU_ASSERT_EQUAL(xpv_pb_varint(&raw, &v, &err), 0);
    CU_ASSERT_EQUAL((int64_t)v, -1);
}

static void expect_error(const uint8_t *buf, size_t n, const char *offset, const char *reason)
{
    xpv_pb_field f;
    xpv_err err = {{0}};
    int count;
    CU_ASSERT_EQUAL(walk(buf, n, &f, &count, &err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, offset));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, reason));
    if (!strstr(err.msg, offset) || !strstr(err.msg, reason))
        fprintf(stderr, "\n  got \"%s\", wanted \"%s\" and \"%s\"\n", err.msg, offset, reason);
}

static void test_varint_errors(void)
{
    const uint8_t eleven[] = {0x08, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
                              0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01};
    expect_error(eleven, sizeof eleven, "byte offset 1", "longer than 10 bytes");
    const uint8_t overflow[] = {0x08, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x02};
    expect_error(overflow, sizeof overflow, "byte offset 1", "64 bits");
    const uint8_t cut[] = {0x08, 0x96, 0x01, 0x10, 0x80, 0x80};
    expect_error(cut, sizeof cut, "byte offset 4", "runs past the end");
    const uint8_t cut_tag[] = {0x08, 0x01, 0x80};
    expect_error(cut_tag, sizeof cut_tag, "byte offset 2", "runs past the end");
}

static void test_length_and_wire_errors(void)
{
    const uint8_t past_end[] = {0x08, 0x01, 0x12, 0x05, 'a', 'b'};
    expect_error(past_end, sizeof past_end, "byte offset 3", "length prefix 5 runs past the end");
    const uint8_t fixed_cut[] = {0x09, 1, 2, 3};
    expect_error(fixed_cut, sizeof fixed_cut, "byte offset 0", "runs past the end");
    const uint8_t group[] = {0x0B, 0x0C};
    expect_error(group, sizeof group, "byte offset 0", "wire type 3");
    const uint8_t wire7[] = {0x08, 0x01, 0x0F};
    expect_error(wire7, sizeof wire7, "byte offset 2", "wire type 7");
    const uint8_t field0[] = {0x00, 0x01};
    expect_error(field0, sizeof field0, "byte offset 0", "invalid field number 0");
    const char *json = "{\"traceEvents\": []}";
    expect_error((const uint8_t *)json, strlen(json), "byte offset 0", "wire type 3");
    const uint8_t gzip[] = {0x1F, 0x8B, 0x08, 0x00};
    expect_error(gzip, sizeof gzip, "byte offset 0", "wire type 7");
}

static void test_nested_offsets_and_wrong_wire(void)
{
    /* field 1 { field 2: length prefix 9 with 1 byte left } at file offset 2 */
    const uint8_t buf[] = {0x08, 0x01, 0x0A, 0x03, 0x12, 0x09, 'x'};
    xpv_pb r = xpv_pb_open(buf, sizeof buf);
    xpv_pb_field f, g;
    xpv_err err = {{0}};
    CU_ASSERT_EQUAL(xpv_pb_next(&r, &f, &err), 1);
    CU_ASSERT_EQUAL(xpv_pb_next(&r, &f, &err), 1);
    xpv_pb sub = xpv_pb_sub(&r, &f);
    CU_ASSERT_EQUAL(xpv_pb_next(&sub, &g, &err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "byte offset 5"));
    CU_ASSERT_EQUAL(xpv_pb_wrong_wire(&r, &f, "XPlane", XPV_PB_VARINT, &err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "byte offset 2: XPlane field 1 has wire type 2"));
}

static void test_unknown_fields_skipped(void)
{
    /* fields 7 (len), 9 (fixed64), 10 (fixed32), 11 (varint) between field 1s */
    const uint8_t buf[] = {0x08, 0x01, 0x3A, 0x02, 0x00, 0x00, 0x49, 1,    2,    3,    4,    5,   6,
                           7,    8,    0x55, 1,    2,    3,    4,    0x58, 0xAC, 0x02, 0x08, 0x02};
    xpv_pb r = xpv_pb_open(buf, sizeof buf);
    xpv_pb_field f;
    xpv_err err = {{0}};
    int ones = 0, rc;
    uint64_t sum = 0;
    while ((rc = xpv_pb_next(&r, &f, &err)) == 1)
        if (f.num == 1) ones++, sum += f.v;
    CU_ASSERT_EQUAL(rc, 0);
    CU_ASSERT_EQUAL(ones, 2);
    CU_ASSERT_EQUAL(sum, 3);
}

int main(void)
{
    static const xpv_test_case tests[] = {
        {"wire types 0, 1, 2, 5 and a two-byte tag", test_wire_types},
        {"negative int64 as 10-byte varints", test_negative_varints},
        {"varint too long, overflowing, cut off", test_varint_errors},
        {"length prefix past the end, bad wire types, not protobuf", test_length_and_wire_errors},
        {"offsets inside nested messages", test_nested_offsets_and_wrong_wire},
        {"unknown fields are skipped", test_unknown_fields_skipped},
        {NULL, NULL},
    };
    return xpv_test_run("protobuf", tests, 0);
}
