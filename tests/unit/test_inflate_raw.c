/*
 * test_inflate_raw.c — the raw deflate engine (indexer/readers/inflate_raw.c)
 * through the pieces a file is read in: fed 1, 3, 7 or 4096 bytes at a
 * time, from a buffer whose room in front holds garbage, it inflates the
 * stream exactly, ends it where it ends, and gives back the bytes it read
 * past the end (ISA-L reads ahead) so that what follows is read intact.
 * Damaged data is an error with a reason, and a reset starts a new stream.
 */
#include "testutil.h"
#include "indexer/readers/inflate_raw.h"

#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#define TAIL "TRAILER!and more"

/* raw deflate of src at level, then TAIL; *n gets the whole length. */
static unsigned char *deflate_then_tail(const unsigned char *src, size_t len, int level, size_t *n,
                                        size_t *stream_len)
{
    z_stream zs = {0};
    CU_ASSERT_EQUAL_FATAL(deflateInit2(&zs, level, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY),
                          Z_OK);
    size_t cap = deflateBound(&zs, (uLong)len) + sizeof TAIL;
    unsigned char *out = malloc(cap);
    zs.next_in = (unsigned char *)src;
    zs.avail_in = (uInt)len;
    zs.next_out = out;
    zs.avail_out = (uInt)cap;
    CU_ASSERT_EQUAL_FATAL(deflate(&zs, Z_FINISH), Z_STREAM_END);
    *stream_len = zs.total_out;
    deflateEnd(&zs);
    memcpy(out + *stream_len, TAIL, sizeof TAIL - 1);
    *n = *stream_len + sizeof TAIL - 1;
    return out;
}

static unsigned char *sample(size_t len)
{
    unsigned char *p = malloc(len);
    uint64_t state = 7;
    for (size_t i = 0; i < len; i++) /* words from a small alphabet: matches and literals */
        p[i] = i % 9 == 8 ? ' ' : (unsigned char)('a' + xpv_test_xorshift(&state) % 6);
    return p;
}

/* Inflates data[0..n) fed `piece` bytes at a time, each piece copied into a
 * fresh buffer with garbage in its give-back room; checks the output and
 * that the bytes from the stream's end on read back as TAIL. */
static void inflate_in_pieces(const unsigned char *data, size_t n, size_t stream_len,
                              const unsigned char *want, size_t want_len, size_t piece)
{
    xpv_inflater *inf = xpv_inflate_new();
    CU_ASSERT_PTR_NOT_NULL_FATAL(inf);
    unsigned char *got = malloc(want_len + 1), *o = got;
    unsigned char *buf = malloc(XPV_INFLATE_GIVE_BACK + piece);
    size_t room = want_len + 1, fed = 0, avail = 0;
    unsigned char *next = buf;
    int rc = XPV_INFLATE_MORE;
    const char *why = "";
    while (rc == XPV_INFLATE_MORE && (avail || fed < n)) {
        if (avail == 0) {
            memset(buf, 0xEE, XPV_INFLATE_GIVE_BACK);
            avail = n - fed < piece ? n - fed : piece;
            next = buf + XPV_INFLATE_GIVE_BACK;
            memcpy(next, data + fed, avail);
            fed += avail;
        }
        rc = xpv_inflate_run(inf, &next, &avail, &o, &room, &why);
    }
    CU_ASSERT_EQUAL_FATAL(rc, XPV_INFLATE_END);
    CU_ASSERT_EQUAL((size_t)(o - got), want_len);
    CU_ASSERT_EQUAL(memcmp(got, want, want_len), 0);
    /* the stream ends at stream_len: what is left, given back or not yet
     * fed, is TAIL from its first byte */
    CU_ASSERT_EQUAL(fed - avail, stream_len);
    CU_ASSERT_TRUE(avail <= sizeof TAIL - 1);
    CU_ASSERT_EQUAL(memcmp(next, TAIL, avail), 0);
    xpv_inflate_free(inf);
    free(buf);
    free(got);
}

static void test_any_piece_size(void)
{
    static const size_t pieces[] = {1, 3, 7, 4096, 1u << 20};
    static const int levels[] = {0, 1, 6, 9};
    static const size_t lens[] = {0, 1, 100, 70000, 300000};
    for (size_t l = 0; l < sizeof lens / sizeof *lens; l++) {
        unsigned char *src = sample(lens[l]);
        for (size_t v = 0; v < sizeof levels / sizeof *levels; v++) {
            size_t n, stream_len;
            unsigned char *z = deflate_then_tail(src, lens[l], levels[v], &n, &stream_len);
            for (size_t p = 0; p < sizeof pieces / sizeof *pieces; p++) {
                if (lens[l] > 1000 && pieces[p] < 7) continue; /* slow, and no new case */
                inflate_in_pieces(z, n, stream_len, src, lens[l], pieces[p]);
            }
            free(z);
        }
        free(src);
    }
}

static void test_damage_is_an_error(void)
{
    unsigned char *src = sample(50000);
    size_t n, stream_len;
    unsigned char *z = deflate_then_tail(src, 50000, 6, &n, &stream_len);
    unsigned char first = z[0];
    z[0] |= 6; /* block type 3: reserved */
    unsigned char *buf = malloc(XPV_INFLATE_GIVE_BACK + n), *out = malloc(60000);
    memcpy(buf + XPV_INFLATE_GIVE_BACK, z, n);
    xpv_inflater *inf = xpv_inflate_new();
    unsigned char *next = buf + XPV_INFLATE_GIVE_BACK, *o = out;
    size_t avail = n, room = 60000;
    const char *why = NULL;
    CU_ASSERT_EQUAL(xpv_inflate_run(inf, &next, &avail, &o, &room, &why), XPV_INFLATE_ERROR);
    CU_ASSERT_PTR_NOT_NULL_FATAL(why);
    CU_ASSERT_TRUE(strlen(why) > 0);

    /* a reset forgets the damaged stream */
    z[0] = first;
    memcpy(buf + XPV_INFLATE_GIVE_BACK, z, n);
    CU_ASSERT_EQUAL(xpv_inflate_reset(inf), 0);
    next = buf + XPV_INFLATE_GIVE_BACK, o = out, avail = n, room = 60000;
    CU_ASSERT_EQUAL(xpv_inflate_run(inf, &next, &avail, &o, &room, &why), XPV_INFLATE_END);
    CU_ASSERT_EQUAL((size_t)(o - out), 50000);
    CU_ASSERT_EQUAL(memcmp(out, src, 50000), 0);
    xpv_inflate_free(inf);
    free(buf);
    free(out);
    free(z);
    free(src);
}

static void test_names_its_engine(void)
{
    const char *e = xpv_inflate_engine();
    CU_ASSERT_TRUE(strcmp(e, "isa-l") == 0 || strcmp(e, "zlib") == 0);
}

int main(void)
{
    static const xpv_test_case tests[] = {
        {"a stream inflates exactly in pieces of any size", test_any_piece_size},
        {"damaged data is an error, and a reset starts anew", test_damage_is_an_error},
        {"the build names its engine", test_names_its_engine},
        {NULL, NULL},
    };
    return xpv_test_run("inflate_raw", tests, 0);
}
