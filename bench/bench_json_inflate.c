/*
 * bench_json_inflate.c — the decompression floor: the least any reader of
 * a gzipped trace must spend. Inflates FILE with zlib (gzip mode, CRC
 * checked) into one reused buffer and prints the uncompressed size, the
 * time and MB/s of output.
 *
 *   bench_json_inflate FILE
 */
#include "common/xpv_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <zlib.h>

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
    return rc == Z_STREAM_END ? 0 : 1;
}
