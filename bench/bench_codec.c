/*
 * bench_codec.c — which codec pays for event blocks: reads every block of
 * an index, takes its event payload (what follows the version byte and
 * count; for a compressed block, its inflated payload) and compresses each
 * block on its own with zlib (and zstd, lz4 when built with them), then
 * decompresses it. Prints bytes per event, ratio and MB/s (of payload) for
 * each; the choice for event_store.c is the one whose footprint meets the
 * target at the least time. usage: bench_codec INDEX.sqlite [repeat=3]
 */
#include "store/event_store.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#ifdef XPV_BENCH_ZSTD
#include <zstd.h>
#endif
#ifdef XPV_BENCH_LZ4
#include <lz4.h>
#include <lz4hc.h>
#endif

typedef struct {
    unsigned char *data;
    size_t len;
} payload;

typedef struct {
    const char *name;
    int level;
    size_t (*compress)(unsigned char *dst, size_t cap, const payload *p, int level);
    int (*decompress)(unsigned char *dst, size_t len, const unsigned char *src, size_t n);
} codec;

static size_t z_compress(unsigned char *dst, size_t cap, const payload *p, int level)
{
    uLongf n = (uLongf)cap;
    return compress2(dst, &n, p->data, (uLong)p->len, level) == Z_OK ? (size_t)n : 0;
}

static int z_decompress(unsigned char *dst, size_t len, const unsigned char *src, size_t n)
{
    uLongf out = (uLongf)len;
    return uncompress(dst, &out, src, (uLong)n) == Z_OK && out == len ? 0 : -1;
}

#ifdef XPV_BENCH_ZSTD
static size_t zs_compress(unsigned char *dst, size_t cap, const payload *p, int level)
{
    size_t n = ZSTD_compress(dst, cap, p->data, p->len, level);
    return ZSTD_isError(n) ? 0 : n;
}

static int zs_decompress(unsigned char *dst, size_t len, const unsigned char *src, size_t n)
{
    return ZSTD_decompress(dst, len, src, n) == len ? 0 : -1;
}
#endif

#ifdef XPV_BENCH_LZ4
static size_t lz_compress(unsigned char *dst, size_t cap, const payload *p, int level)
{
    int n = level
                ? LZ4_compress_HC((const char *)p->data, (char *)dst, (int)p->len, (int)cap, level)
                : LZ4_compress_default((const char *)p->data, (char *)dst, (int)p->len, (int)cap);
    return n > 0 ? (size_t)n : 0;
}

static int lz_decompress(unsigned char *dst, size_t len, const unsigned char *src, size_t n)
{
    return LZ4_decompress_safe((const char *)src, (char *)dst, (int)n, (int)len) == (int)len ? 0
                                                                                             : -1;
}
#endif

static const codec CODECS[] = {
    {"zlib", 1, z_compress, z_decompress},    {"zlib", 6, z_compress, z_decompress},
#ifdef XPV_BENCH_ZSTD
    {"zstd", -1, zs_compress, zs_decompress}, {"zstd", 1, zs_compress, zs_decompress},
    {"zstd", 3, zs_compress, zs_decompress},  {"zstd", 6, zs_compress, zs_decompress},
#endif
#ifdef XPV_BENCH_LZ4
    {"lz4", 0, lz_compress, lz_decompress},   {"lz4hc", 9, lz_compress, lz_decompress},
#endif
};

/* The payload of one block: its decoded events re-encoded would be the
 * same bytes, so the v2 layout is read straight from a v2 blob, and a
 * newer blob is taken through the store's own decoder (xpv_store_payload). */
static int load(const char *path, payload **out, size_t *count, long long *events)
{
    sqlite3 *db;
    sqlite3_stmt *st;
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(db, "SELECT data, n FROM blocks", -1, &st, NULL) != SQLITE_OK)
        return fprintf(stderr, "%s: %s\n", path, sqlite3_errmsg(db)), -1;
    size_t cap = 1024, n = 0;
    payload *p = malloc(cap * sizeof *p);
    *events = 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
        xpv_err err = {{0}};
        xpv_buf raw = {0};
        if (xpv_store_payload(sqlite3_column_blob(st, 0), (size_t)sqlite3_column_bytes(st, 0), &raw,
                              &err) != 0)
            return fprintf(stderr, "%s\n", err.msg), -1;
        if (n == cap) p = realloc(p, (cap *= 2) * sizeof *p);
        p[n++] = (payload){(unsigned char *)raw.data, raw.len};
        *events += sqlite3_column_int64(st, 1);
    }
    sqlite3_finalize(st);
    sqlite3_close(db);
    *out = p;
    *count = n;
    return 0;
}

static void run(const codec *c, const payload *p, size_t n, long long events, int repeat,
                size_t raw_total)
{
    double best_c = 1e30, best_d = 1e30;
    size_t packed_total = 0;
    for (int r = 0; r < repeat; r++) {
        packed_total = 0;
        double tc = 0, td = 0;
        for (size_t i = 0; i < n; i++) {
            size_t cap = p[i].len + p[i].len / 8 + 1024;
            unsigned char *z = malloc(cap), *back = malloc(p[i].len + 1);
            double t0 = xpv_now_mono();
            size_t zn = c->compress(z, cap, &p[i], c->level);
            double t1 = xpv_now_mono();
            int ok = zn && c->decompress(back, p[i].len, z, zn) == 0 &&
                     memcmp(back, p[i].data, p[i].len) == 0;
            td += xpv_now_mono() - t1;
            tc += t1 - t0;
            if (!ok)
                fprintf(stderr, "%s %d: block %zu does not round-trip\n", c->name, c->level, i);
            packed_total += zn;
            free(z);
            free(back);
        }
        if (tc < best_c) best_c = tc;
        if (td < best_d) best_d = td;
    }
    printf("%-6s %3d  %8.2f B/event  ratio %5.2f  compress %7.0f MB/s  decompress %7.0f MB/s\n",
           c->name, c->level, (double)packed_total / (double)events,
           (double)raw_total / (double)packed_total, raw_total / best_c / 1e6,
           raw_total / best_d / 1e6);
}

int main(int argc, char **argv)
{
    if (argc < 2) return fprintf(stderr, "usage: bench_codec INDEX.sqlite [repeat]\n"), 2;
    int repeat = argc > 2 ? atoi(argv[2]) : 3;
    payload *p;
    size_t n, raw_total = 0;
    long long events;
    if (load(argv[1], &p, &n, &events) != 0) return 1;
    for (size_t i = 0; i < n; i++)
        raw_total += p[i].len;
    printf("%zu blocks, %lld events, payload %.2f B/event (%.1f KB/block)\n", n, events,
           (double)raw_total / (double)events, (double)raw_total / (double)n / 1024);
    for (size_t i = 0; i < sizeof CODECS / sizeof CODECS[0]; i++)
        run(&CODECS[i], p, n, events, repeat, raw_total);
    for (size_t i = 0; i < n; i++)
        free(p[i].data);
    free(p);
    return 0;
}
