/*
 * test_inflate_raw.c — the raw deflate engine (indexer/readers/inflate_raw.c)
 * through the pieces a file is read in: fed 1, 3, 7, 4096 or 1 MB bytes at
 * a time, each piece behind the last bytes of the one before (as
 * inflate_raw.h asks of its caller), and given 1, 3, 97 bytes or all the
 * room it wants per call, it inflates the stream exactly and ends it where
 * it ends, stepping back over what it read past the end, even into the
 * bytes in front of a piece. Damaged data is an error with a reason, a
 * reset starts a new stream, and the engine is the one the build chose.
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

/* Copies the next piece of data into buf, behind the XPV_INFLATE_GIVE_BACK
 * bytes that precede it in data (zeros before data's start). */
static size_t next_piece(unsigned char *buf, const unsigned char *data, size_t n, size_t fed,
                         size_t piece)
{
    for (size_t i = 0; i < XPV_INFLATE_GIVE_BACK; i++) {
        size_t back = XPV_INFLATE_GIVE_BACK - i;
        buf[i] = fed >= back ? data[fed - back] : 0;
    }
    size_t k = n - fed < piece ? n - fed : piece;
    memcpy(buf + XPV_INFLATE_GIVE_BACK, data + fed, k);
    return k;
}

/* Inflates data[0..n) fed `piece` bytes at a time, with at most `step`
 * bytes of room per call; checks the output and that the stream ends at
 * stream_len, TAIL from there. Returns 1 when the end stepped back to
 * before the piece it came in (into the bytes in front of it). */
static int inflate_in_pieces(const unsigned char *data, size_t n, size_t stream_len,
                             const unsigned char *want, size_t want_len, size_t piece, size_t step)
{
    xpv_inflater *inf = xpv_inflate_new();
    CU_ASSERT_PTR_NOT_NULL_FATAL(inf);
    unsigned char *got = malloc(want_len + 1), *o = got;
    unsigned char *buf = malloc(XPV_INFLATE_GIVE_BACK + piece),
                  *start = buf + XPV_INFLATE_GIVE_BACK;
    size_t left = want_len + 1, fed = 0, avail = 0, at = 0; /* at: data's offset of start */
    unsigned char *next = start;
    int rc = XPV_INFLATE_MORE, stuck = 0;
    const char *why = "";
    while (rc == XPV_INFLATE_MORE && !stuck) {
        if (avail == 0 && fed < n) {
            at = fed;
            avail = next_piece(buf, data, n, fed, piece);
            fed += avail;
            next = start;
        }
        size_t room = left < step ? left : step, had_room = room, had = avail;
        rc = xpv_inflate_run(inf, &next, &avail, &o, &room, &why);
        left -= had_room - room;
        stuck = rc == XPV_INFLATE_MORE && room == had_room && avail == had && (had || fed == n);
    }
    CU_ASSERT_EQUAL_FATAL(rc, XPV_INFLATE_END);
    CU_ASSERT_EQUAL((size_t)(o - got), want_len);
    CU_ASSERT_EQUAL(memcmp(got, want, want_len), 0);
    ptrdiff_t end = (ptrdiff_t)at + (next - start); /* data's offset of *in */
    CU_ASSERT_EQUAL(end, (ptrdiff_t)stream_len);
    CU_ASSERT_EQUAL((size_t)(next - start) + avail, fed - at);
    size_t tail = avail < sizeof TAIL - 1 ? avail : sizeof TAIL - 1;
    CU_ASSERT_EQUAL(memcmp(next, TAIL, tail), 0);
    int stepped_before = next < start;
    xpv_inflate_free(inf);
    free(buf);
    free(got);
    return stepped_before;
}

static void test_any_piece_size(void)
{
    static const size_t pieces[] = {1, 3, 7, 4096, 1u << 20};
    static const size_t steps[] = {1, 3, 97, SIZE_MAX};
    static const int levels[] = {0, 1, 6, 9};
    static const size_t lens[] = {0, 1, 100, 70000, 300000};
    int stepped_before = 0;
    for (size_t l = 0; l < sizeof lens / sizeof *lens; l++) {
        unsigned char *src = sample(lens[l]);
        for (size_t v = 0; v < sizeof levels / sizeof *levels; v++) {
            size_t n, stream_len;
            unsigned char *z = deflate_then_tail(src, lens[l], levels[v], &n, &stream_len);
            for (size_t p = 0; p < sizeof pieces / sizeof *pieces; p++)
                for (size_t k = 0; k < sizeof steps / sizeof *steps; k++) {
                    /* slow, and no new case: tiny pieces or rooms of long streams */
                    if (lens[l] > 1000 && (pieces[p] < 7 || steps[k] < 97)) continue;
                    stepped_before +=
                        inflate_in_pieces(z, n, stream_len, src, lens[l], pieces[p], steps[k]);
                }
            free(z);
        }
        free(src);
    }
    /* ISA-L reads ahead, and some of these streams end in the bytes in
     * front of a piece: the case inflate_raw.h's contract is for */
    if (strcmp(xpv_inflate_engine(), "isa-l") == 0) CU_ASSERT_TRUE(stepped_before > 0);
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

/* The engine is the one CMake chose (XPV_TEST_INFLATE_ENGINE, from the
 * same test as the library's define): a build that found libisal but
 * compiled zlib's engine, or the reverse, fails here. */
static void test_names_its_engine(void)
{
    CU_ASSERT_STRING_EQUAL(xpv_inflate_engine(), XPV_TEST_INFLATE_ENGINE);
}

int main(void)
{
    static const xpv_test_case tests[] = {
        {"a stream inflates exactly in pieces of any size", test_any_piece_size},
        {"damaged data is an error, and a reset starts anew", test_damage_is_an_error},
        {"the engine is the one the build chose", test_names_its_engine},
        {NULL, NULL},
    };
    return xpv_test_run("inflate_raw", tests, 0);
}
