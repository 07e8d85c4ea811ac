/*
 * fuzz_gz_input.c — the chunked gzip/plain input on its own: any bytes
 * either stream whole or stop with an error, chunks come in order and
 * never overlap, and an early close stops the producer thread cleanly.
 * Small chunks make the chunk boundaries fall everywhere.
 */
#include "fuzz.h"

#include "indexer/readers/gz_input.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void write_input(const char *path, const uint8_t *data, size_t size)
{
    FILE *f = fopen(path, "wb");
    if (!f || (size && fwrite(data, 1, size, f) != size) || fclose(f) != 0) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[600];
    snprintf(path, sizeof path, "%s/input.gz", xpv_fuzz_tmpdir());
    write_input(path, data, size);
    /* The first byte picks how much to read before closing early (0: all). */
    size_t stop_after = size ? data[0] % 8 : 0;
    xpv_err err = {{0}};
    xpv_gz_input *in = xpv_gz_open(path, 512, 32, NULL, &err);
    if (!in) return 0;
    xpv_gz_chunk c, prev = {0};
    int have_prev = 0, rc;
    int64_t expect = 0;
    size_t chunks = 0;
    while ((rc = xpv_gz_next(in, &c, &err)) == 1) {
        assert(c.offset == expect && c.len > 0);
        memset(c.data - 32, 0, 32); /* the headroom is writable */
        expect += (int64_t)c.len;
        if (have_prev) xpv_gz_release(in, &prev);
        prev = c;
        have_prev = 1;
        if (stop_after && ++chunks == stop_after) break;
    }
    if (have_prev) xpv_gz_release(in, &prev);
    assert(rc != -1 || err.msg[0]);
    xpv_gz_close(in);
    return 0;
}
