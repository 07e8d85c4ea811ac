/*
 * test_gz_input.c — the chunked input (indexer/readers/gz_input.c): plain
 * and gzip files stream whole and in order, a truncated gzip stops with an
 * error after its good data, and the inflate limits stop a gzip bomb and an
 * over-large file while leaving ordinary files alone.
 */
#define _GNU_SOURCE
#include "testutil.h"
#include "indexer/readers/gz_input.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

/* Writes n bytes of `fill` (or, with fill < 0, varied text) gzip-compressed
 * to dir/name and returns the path (static buffer). */
static const char *write_gz(const char *name, size_t n, int fill)
{
    static char path[1024];
    snprintf(path, sizeof path, "%s/%s", xpv_test_tmpdir(), name);
    gzFile f = gzopen(path, "wb6");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    char block[65536];
    uint64_t state = 42;
    for (size_t done = 0; done < n;) {
        size_t k = n - done < sizeof block ? n - done : sizeof block;
        for (size_t i = 0; i < k; i++)
            block[i] = fill >= 0 ? (char)fill : (char)('a' + xpv_test_xorshift(&state) % 26);
        CU_ASSERT_EQUAL_FATAL(gzwrite(f, block, (unsigned)k), (int)k);
        done += k;
    }
    gzclose(f);
    return path;
}

/* Reads the whole stream; returns the bytes read and the last result. */
static int64_t drain(xpv_gz_input *in, int *rc, xpv_err *err)
{
    xpv_gz_chunk c;
    int64_t total = 0;
    while ((*rc = xpv_gz_next(in, &c, err)) == 1) {
        CU_ASSERT_EQUAL(c.offset, total);
        total += (int64_t)c.len;
        xpv_gz_release(in, &c);
    }
    return total;
}

static void test_gzip_streams_whole(void)
{
    const char *path = write_gz("text.gz", 10u << 20, -1);
    xpv_err err = {{0}};
    xpv_gz_input *in = xpv_gz_open(path, 1u << 20, 64, NULL, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(in);
    CU_ASSERT_TRUE(xpv_gz_is_gzip(in));
    int rc;
    CU_ASSERT_EQUAL(drain(in, &rc, &err), 10 << 20);
    CU_ASSERT_EQUAL(rc, 0);
    xpv_gz_close(in);
}

static void test_bomb_stops_past_ratio(void)
{
    /* 200 MB of one byte compresses about 1000 times: over the default
     * ratio once past the first 64 MB, so it stops before the end. */
    const char *path = write_gz("bomb.gz", 200u << 20, ' ');
    xpv_err err = {{0}};
    xpv_gz_input *in = xpv_gz_open(path, 0, 64, NULL, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(in);
    int rc;
    int64_t got = drain(in, &rc, &err);
    CU_ASSERT_EQUAL(rc, -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "gzip bomb"));
    CU_ASSERT_TRUE(got >= (int64_t)XPV_RATIO_CHECK_AFTER - (8 << 20));
    CU_ASSERT_TRUE(got < (int64_t)(200u << 20));
    xpv_gz_close(in);
    /* With the ratio guard off, the same file streams whole. */
    xpv_input_limits off = {0, 0};
    in = xpv_gz_open(path, 0, 64, &off, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(in);
    CU_ASSERT_EQUAL(drain(in, &rc, &err), 200 << 20);
    CU_ASSERT_EQUAL(rc, 0);
    xpv_gz_close(in);
}

static void test_size_cap(void)
{
    const char *path = write_gz("big.gz", 6u << 20, -1);
    xpv_input_limits cap = {2u << 20, 0};
    xpv_err err = {{0}};
    xpv_gz_input *in = xpv_gz_open(path, 1u << 20, 64, &cap, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(in);
    int rc;
    int64_t got = drain(in, &rc, &err);
    CU_ASSERT_EQUAL(rc, -1);
    CU_ASSERT_EQUAL(got, 2 << 20); /* the chunks within the cap are kept */
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "--max-inflate"));
    xpv_gz_close(in);
}

static void test_truncated_keeps_good_data(void)
{
    const char *path = write_gz("cut.gz", 4u << 20, -1);
    FILE *f = fopen(path, "r+b");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fclose(f);
    CU_ASSERT_EQUAL(truncate(path, size / 2), 0);
    xpv_err err = {{0}};
    xpv_gz_input *in = xpv_gz_open(path, 1u << 20, 64, NULL, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(in);
    int rc;
    int64_t got = drain(in, &rc, &err);
    CU_ASSERT_EQUAL(rc, -1);
    CU_ASSERT_TRUE(got > 0 && got < (4 << 20));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "truncated"));
    xpv_gz_close(in);
}

int main(void)
{
    static const xpv_test_case tests[] = {
        {"gzip streams whole, in order", test_gzip_streams_whole},
        {"a gzip bomb stops past the ratio", test_bomb_stops_past_ratio},
        {"the size cap stops inflating", test_size_cap},
        {"a truncated gzip keeps its good data", test_truncated_keeps_good_data},
        {NULL, NULL},
    };
    return xpv_test_run("gz_input", tests, 0);
}
