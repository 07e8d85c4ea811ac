/*
 * test_gz_input.c — the chunked input (indexer/readers/gz_input.c): plain
 * and gzip files stream whole and in order, concatenated members read as
 * one stream byte for byte, a truncated gzip stops with an error after its
 * good data, a wrong checksum is an error, and the inflate limits stop a
 * gzip bomb and an over-large file while leaving ordinary files alone.
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

/* Reads the whole stream into one buffer (*n bytes). */
static char *slurp_stream(xpv_gz_input *in, size_t *n, int *rc, xpv_err *err)
{
    xpv_gz_chunk c;
    char *all = NULL;
    *n = 0;
    while ((*rc = xpv_gz_next(in, &c, err)) == 1) {
        all = realloc(all, *n + c.len + 1);
        memcpy(all + *n, c.data, c.len);
        *n += c.len;
        xpv_gz_release(in, &c);
    }
    return all;
}

/* Appends the bytes of the file at `path` to *all (*n bytes so far). */
static void append_file_bytes(char **all, size_t *n, const char *path)
{
    FILE *f = fopen(path, "rb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    char buf[65536];
    size_t k;
    while ((k = fread(buf, 1, sizeof buf, f)) > 0) {
        *all = realloc(*all, *n + k);
        memcpy(*all + *n, buf, k);
        *n += k;
    }
    fclose(f);
}

/* Members of 3 MB of text, 1 byte, and 2 MB of one byte, then zero padding
 * (as some writers leave): one stream, exactly their bytes. */
static void test_members_read_as_one(void)
{
    const size_t sizes[] = {3u << 20, 1, 2u << 20};
    const int fills[] = {-1, 'x', 'y'};
    char *file = NULL;
    size_t file_len = 0;
    const char *whole = NULL;
    for (int i = 0; i < 3; i++) {
        whole = write_gz("member.gz", sizes[i], fills[i]); /* each in a new folder */
        append_file_bytes(&file, &file_len, whole);
    }
    file = realloc(file, file_len + 8);
    memset(file + file_len, 0, 8);
    FILE *f = fopen(whole, "wb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    CU_ASSERT_EQUAL(fwrite(file, 1, file_len + 8, f), file_len + 8);
    fclose(f);
    free(file);
    xpv_err err = {{0}};
    xpv_gz_input *in = xpv_gz_open(whole, 1u << 20, 64, NULL, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(in);
    size_t n = 0;
    int rc;
    char *all = slurp_stream(in, &n, &rc, &err);
    CU_ASSERT_EQUAL(rc, 0);
    CU_ASSERT_EQUAL_FATAL(n, sizes[0] + sizes[1] + sizes[2]);
    uint64_t state = 42; /* write_gz's text, again */
    size_t wrong = 0;
    for (size_t i = 0; i < sizes[0]; i++)
        wrong += all[i] != (char)('a' + xpv_test_xorshift(&state) % 26);
    CU_ASSERT_EQUAL(wrong, 0);
    CU_ASSERT_EQUAL(all[sizes[0]], 'x');
    for (size_t i = sizes[0] + 1; i < n; i++)
        wrong += all[i] != 'y';
    CU_ASSERT_EQUAL(wrong, 0);
    free(all);
    xpv_gz_close(in);
}

/* A flipped CRC byte in the trailer: the data is read, then refused. */
static void test_wrong_checksum_is_an_error(void)
{
    const char *path = write_gz("crc.gz", 1u << 20, -1);
    FILE *f = fopen(path, "r+b");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fseek(f, -8, SEEK_END);
    int c = fgetc(f);
    fseek(f, -8, SEEK_END);
    fputc(c ^ 0x5a, f);
    fclose(f);
    xpv_err err = {{0}};
    xpv_gz_input *in = xpv_gz_open(path, 1u << 20, 64, NULL, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(in);
    int rc;
    CU_ASSERT_EQUAL(drain(in, &rc, &err), 1 << 20);
    CU_ASSERT_EQUAL(rc, -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "incorrect data check"));
    xpv_gz_close(in);
}

/* Appends a gzip member of text to *f (*n bytes so far): a header, the raw
 * deflate data z (zlen bytes) and the trailer for text. */
static void put_member(char **f, size_t *n, const unsigned char *z, size_t zlen,
                       const unsigned char *text, size_t len)
{
    static const char head[10] = {0x1f, (char)0x8b, 8, 0, 0, 0, 0, 0, 0, 3};
    uint32_t crc = (uint32_t)crc32(0, text, (uInt)len), size = (uint32_t)len;
    *f = realloc(*f, *n + 10 + zlen + 8);
    memcpy(*f + *n, head, 10);
    memcpy(*f + *n + 10, z, zlen);
    for (int i = 0; i < 4; i++) {
        (*f)[*n + 10 + zlen + i] = (char)(crc >> (8 * i));
        (*f)[*n + 14 + zlen + i] = (char)(size >> (8 * i));
    }
    *n += 10 + zlen + 8;
}

/* The raw deflate data of text[0..len) into z (room for 2 MB), from the
 * state `base` left after deflating text[0..cut) and flushing. */
static size_t deflate_from(z_stream *base, const unsigned char *text, size_t cut, size_t len)
{
    z_stream zs;
    CU_ASSERT_EQUAL_FATAL(deflateCopy(&zs, base), Z_OK);
    zs.next_in = (unsigned char *)text + cut;
    zs.avail_in = (uInt)(len - cut);
    zs.avail_out = (uInt)((2u << 20) - base->total_out);
    CU_ASSERT_EQUAL(deflate(&zs, Z_FINISH), Z_STREAM_END);
    size_t out = zs.total_out;
    deflateEnd(&zs);
    return out;
}

/* Raw deflate data of text whose length is exactly `want` bytes: the text
 * up to `cut` is deflated and flushed once; from a copy of that state the
 * length of the rest is bisected (the output grows with it, a byte or so
 * a letter), then the few lengths around the one found are tried. Returns the
 * text's length used (its data in z, room for 2 MB), 0 when none gives
 * `want`. */
static size_t deflate_to_size(const unsigned char *text, size_t cut, size_t max, size_t want,
                              unsigned char *z)
{
    z_stream base = {0};
    CU_ASSERT_EQUAL_FATAL(deflateInit2(&base, 6, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY),
                          Z_OK);
    base.next_in = (unsigned char *)text;
    base.avail_in = (uInt)cut;
    base.next_out = z;
    base.avail_out = 2u << 20;
    CU_ASSERT_EQUAL_FATAL(deflate(&base, Z_FULL_FLUSH), Z_OK);
    size_t lo = cut, hi = max, found = 0;
    while (lo < hi) { /* the first length whose data reaches want */
        size_t mid = lo + (hi - lo) / 2;
        if (deflate_from(&base, text, cut, mid) < want)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t len = lo > cut + 8 ? lo - 8 : cut; len < lo + 8 && len <= max && !found; len++)
        if (deflate_from(&base, text, cut, len) == want) found = len;
    if (found) deflate_from(&base, text, cut, found); /* leaves its data in z */
    deflateEnd(&base);
    return found;
}

/* A member whose deflate data ends 1 to 6 bytes before one read of the
 * file stops, then a second member: ISA-L has read past the first's end
 * into the next read, and steps back into the bytes kept in front of the
 * buffer (inflate_raw.h) to read the trailer. Each case reads back byte
 * for byte. */
static void test_member_ends_at_a_read(void)
{
    size_t max = 2u << 20, found = 0;
    unsigned char *text = malloc(max), *z = malloc(2u << 20);
    uint64_t state = 9;
    for (size_t i = 0; i < max; i++)
        text[i] = (unsigned char)('a' + xpv_test_xorshift(&state) % 26);
    /* 26 letters deflate to ~0.64 bytes each: flush well before a read's end */
    size_t cut = (size_t)((XPV_GZ_READ_SIZE - 30000) / 0.7);
    for (size_t k = 1; k <= 6; k++) {
        size_t want = XPV_GZ_READ_SIZE - 10 - k; /* the header's 10 bytes come first */
        size_t len = deflate_to_size(text, cut, max, want, z);
        if (!len) continue;
        found++;
        char *file = NULL;
        size_t n = 0;
        put_member(&file, &n, z, want, text, len);
        CU_ASSERT_EQUAL(n - 8, (size_t)XPV_GZ_READ_SIZE - k);
        const char *second = write_gz("second.gz", 1000, 'q');
        append_file_bytes(&file, &n, second);
        FILE *f = fopen(second, "wb");
        CU_ASSERT_PTR_NOT_NULL_FATAL(f);
        CU_ASSERT_EQUAL(fwrite(file, 1, n, f), n);
        fclose(f);
        xpv_err err = {{0}};
        xpv_gz_input *in = xpv_gz_open(second, 97, 64, NULL, &err);
        CU_ASSERT_PTR_NOT_NULL_FATAL(in);
        size_t got_n = 0;
        int rc;
        char *got = slurp_stream(in, &got_n, &rc, &err);
        CU_ASSERT_EQUAL(rc, 0);
        CU_ASSERT_EQUAL_FATAL(got_n, len + 1000);
        CU_ASSERT_EQUAL(memcmp(got, text, len), 0);
        CU_ASSERT_EQUAL(got[len], 'q');
        CU_ASSERT_EQUAL(got[len + 999], 'q');
        free(got);
        free(file);
        xpv_gz_close(in);
    }
    CU_ASSERT_TRUE(found >= 3); /* most ends are reachable; a miss is no failure of gz_input */
    free(text);
    free(z);
}

int main(void)
{
    static const xpv_test_case tests[] = {
        {"gzip streams whole, in order", test_gzip_streams_whole},
        {"a gzip bomb stops past the ratio", test_bomb_stops_past_ratio},
        {"the size cap stops inflating", test_size_cap},
        {"a truncated gzip keeps its good data", test_truncated_keeps_good_data},
        {"concatenated members read as one stream", test_members_read_as_one},
        {"a wrong checksum is an error", test_wrong_checksum_is_an_error},
        {"a member that ends at a read's end reads whole", test_member_ends_at_a_read},
        {NULL, NULL},
    };
    return xpv_test_run("gz_input", tests, 0);
}
