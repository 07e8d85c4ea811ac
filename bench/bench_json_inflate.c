/*
 * bench_json_inflate.c — the decompression floor: the least any reader of
 * a gzipped trace must spend. Inflates FILE with zlib (gzip mode, CRC
 * checked) into one reused buffer and prints the uncompressed size, the
 * time and MB/s of output (the first line, which the bench scripts read).
 *
 * Built with libdeflate (its headers installed), it then weighs the two
 * ways that library could replace zlib, on the same file in the same run:
 *   raw+crc     zlib inflating the member raw (no checksum of its own),
 *               streamed, with libdeflate's CRC-32 checked against the
 *               trailer;
 *   reader      the same through the engine the reader inflates with
 *               (inflate_raw.h: ISA-L's when built with it, else zlib's),
 *               the file in memory as raw+crc has it;
 *   libdeflate  libdeflate's gzip decompressor, which takes whole buffers
 *               only: the file and its whole output in memory at once.
 * The crc32 lines time the two checksums alone over the output.
 *
 *   bench_json_inflate FILE
 */
#include "common/xpv_common.h"
#include "indexer/readers/inflate_raw.h"

#include <stdio.h>
#include <stdlib.h>
#include <zlib.h>

#ifdef XPV_BENCH_LIBDEFLATE
#include <libdeflate.h>
#include <string.h>

static unsigned char *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    *n = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *p = malloc(*n ? *n : 1);
    if (p && fread(p, 1, *n, f) != *n) {
        free(p);
        p = NULL;
    }
    fclose(f);
    return p;
}

/* The deflate data's offset after a gzip member's header, or 0. */
static size_t gzip_header(const unsigned char *p, size_t n)
{
    if (n < 18 || p[0] != 0x1f || p[1] != 0x8b || p[2] != 8) return 0;
    size_t at = 10;
    int flg = p[3];
    if (flg & 4) at += 2 + (size_t)(p[10] | p[11] << 8);
    for (int bit = 8; bit <= 16; bit <<= 1)
        if (flg & bit)
            while (at < n && p[at++] != 0)
                continue;
    if (flg & 2) at += 2;
    return at < n ? at : 0;
}

static void report(const char *what, long long bytes, double secs)
{
    printf("%s: %lld bytes in %.3f s = %.0f MB/s\n", what, bytes, secs, bytes / secs / 1e6);
}

/* zlib raw inflate of the first member, streamed, libdeflate's CRC-32. */
static int raw_plus_crc(const unsigned char *gz, size_t n)
{
    enum { OUT = 4 << 20 };
    unsigned char *out = malloc(OUT);
    size_t at = gzip_header(gz, n);
    z_stream zs = {0};
    if (!out || !at || inflateInit2(&zs, -MAX_WBITS) != Z_OK) return 1;
    double t0 = xpv_now_mono();
    zs.next_in = (unsigned char *)gz + at;
    zs.avail_in = (uInt)(n - at);
    uint32_t crc = 0;
    long long total = 0;
    int rc = Z_OK;
    while (rc == Z_OK) {
        zs.next_out = out;
        zs.avail_out = OUT;
        rc = inflate(&zs, Z_NO_FLUSH);
        crc = libdeflate_crc32(crc, out, OUT - zs.avail_out);
        total += OUT - zs.avail_out;
    }
    const unsigned char *t = zs.next_in;
    int ok = rc == Z_STREAM_END && zs.avail_in >= 8 &&
             crc == (uint32_t)(t[0] | t[1] << 8 | t[2] << 16 | (uint32_t)t[3] << 24);
    report(ok ? "raw+crc" : "raw+crc (CRC MISMATCH)", total, xpv_now_mono() - t0);
    inflateEnd(&zs);
    free(out);
    return !ok;
}

/* The reader's raw inflate engine over the first member, streamed out of
 * the file in memory (so the bytes before the input are the file's, as
 * inflate_raw.h asks), with libdeflate's CRC-32. */
static int reader_engine(const unsigned char *gz, size_t n)
{
    enum { OUT = 4 << 20 };
    unsigned char *out = malloc(OUT);
    xpv_inflater *inf = xpv_inflate_new();
    size_t at = gzip_header(gz, n);
    int rc = XPV_INFLATE_ERROR, ok = 0;
    if (out && inf && at) {
        double t0 = xpv_now_mono();
        unsigned char *next = (unsigned char *)gz + at;
        size_t avail = n - at;
        uint32_t crc = 0;
        long long total = 0;
        const char *why = "";
        do {
            unsigned char *o = out;
            size_t room = OUT;
            rc = xpv_inflate_run(inf, &next, &avail, &o, &room, &why);
            crc = libdeflate_crc32(crc, out, OUT - room);
            total += OUT - room;
            if (rc == XPV_INFLATE_MORE && room == OUT) break; /* no progress: cut short */
        } while (rc == XPV_INFLATE_MORE);
        const unsigned char *t = next;
        ok = rc == XPV_INFLATE_END && avail >= 8 &&
             crc == (uint32_t)(t[0] | t[1] << 8 | t[2] << 16 | (uint32_t)t[3] << 24);
        char what[64];
        snprintf(what, sizeof what, "reader (%s)+crc%s", xpv_inflate_engine(),
                 ok ? "" : " (FAILED)");
        report(what, total, xpv_now_mono() - t0);
    }
    xpv_inflate_free(inf);
    free(out);
    return !ok;
}

/* libdeflate's whole-buffer gzip decompressor, then each CRC alone. */
static int whole_buffer(const unsigned char *gz, size_t n)
{
    size_t size = (size_t)(gz[n - 4] | gz[n - 3] << 8 | gz[n - 2] << 16) |
                  (size_t)gz[n - 1] << 24; /* ISIZE: right below 4 GB */
    unsigned char *out = malloc(size ? size : 1);
    struct libdeflate_decompressor *d = libdeflate_alloc_decompressor();
    if (!out || !d) return 1;
    size_t got = 0;
    double t0 = xpv_now_mono();
    enum libdeflate_result r = libdeflate_gzip_decompress(d, gz, n, out, size, &got);
    report(r == LIBDEFLATE_SUCCESS ? "libdeflate" : "libdeflate (FAILED)", (long long)got,
           xpv_now_mono() - t0);
    t0 = xpv_now_mono();
    volatile uLong z = crc32(0, out, (uInt)0) + crc32_z(0, out, got);
    report("crc32 zlib", (long long)got, xpv_now_mono() - t0);
    t0 = xpv_now_mono();
    volatile uint32_t l = libdeflate_crc32(0, out, got);
    report("crc32 libdeflate", (long long)got, xpv_now_mono() - t0);
    (void)z, (void)l;
    libdeflate_free_decompressor(d);
    free(out);
    return r != LIBDEFLATE_SUCCESS;
}

static int weigh_libdeflate(const char *path)
{
    size_t n = 0;
    unsigned char *gz = slurp(path, &n);
    if (!gz || n < 18) return 1;
    int rc = raw_plus_crc(gz, n) | reader_engine(gz, n) | whole_buffer(gz, n);
    free(gz);
    return rc;
}
#endif

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: bench_json_inflate FILE\n");
        return 2;
    }
    FILE *f = fopen(argv[1], "rb");
    if (!f) {
        perror(argv[1]);
        return 1;
    }
    enum { IN = 1 << 20, OUT = 4 << 20 };
    unsigned char *in = malloc(IN), *out = malloc(OUT);
    z_stream zs = {0};
    if (!in || !out || inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK) return 1;
    double t0 = xpv_now_mono();
    long long total = 0;
    int rc = Z_OK;
    while (rc != Z_STREAM_END) {
        if (zs.avail_in == 0) {
            zs.avail_in = (uInt)fread(in, 1, IN, f);
            zs.next_in = in;
            if (zs.avail_in == 0) break;
        }
        zs.next_out = out;
        zs.avail_out = OUT;
        rc = inflate(&zs, Z_NO_FLUSH);
        if (rc != Z_OK && rc != Z_STREAM_END && rc != Z_BUF_ERROR) {
            fprintf(stderr, "inflate error %d\n", rc);
            return 1;
        }
        total += OUT - zs.avail_out;
    }
    double secs = xpv_now_mono() - t0;
    printf("inflate: %lld bytes in %.3f s = %.0f MB/s\n", total, secs, total / secs / 1e6);
    inflateEnd(&zs);
    fclose(f);
    free(in);
    free(out);
#ifdef XPV_BENCH_LIBDEFLATE
    if (rc == Z_STREAM_END && weigh_libdeflate(argv[1]) != 0) return 1;
#endif
    return rc == Z_STREAM_END ? 0 : 1;
}
