/*
 * bench_json_yajl.c — how fast yajl (Debian libyajl) tokenizes a trace, to
 * justify the purpose-built tokenizer in indexer/readers/json_scan.c.
 * Inflates FILE (gzip or plain) chunk by chunk and feeds yajl with
 * callbacks that only count; prints the time spent inside yajl_parse and
 * the total.
 *
 * yajl is not a project dependency: bench/run_json_ingest.sh compiles this
 * with -DXPV_WITH_YAJL when pkg-config finds yajl. Built by CMake without
 * it, the program only says so.
 *
 *   bench_json_yajl FILE
 */
#include "common/xpv_common.h"

#include <stdio.h>

#ifndef XPV_WITH_YAJL
int main(void)
{
    fprintf(stderr, "bench_json_yajl: built without yajl; run bench/run_json_ingest.sh\n");
    return 77;
}
#else
#include <yajl/yajl_parse.h>
#include <zlib.h>

typedef struct {
    long long maps, keys, strings, numbers, other;
} counts;

static int on_null(void *c)
{
    return ((counts *)c)->other++, 1;
}
static int on_bool(void *c, int b)
{
    return (void)b, ((counts *)c)->other++, 1;
}
static int on_number(void *c, const char *s, size_t n)
{
    return (void)s, (void)n, ((counts *)c)->numbers++, 1;
}
static int on_string(void *c, const unsigned char *s, size_t n)
{
    return (void)s, (void)n, ((counts *)c)->strings++, 1;
}
static int on_key(void *c, const unsigned char *s, size_t n)
{
    return (void)s, (void)n, ((counts *)c)->keys++, 1;
}
static int on_start_map(void *c)
{
    return ((counts *)c)->maps++, 1;
}
static int on_end(void *c)
{
    return (void)c, 1;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: bench_json_yajl FILE\n");
        return 2;
    }
    gzFile gz = gzopen(argv[1], "rb");
    if (!gz) return 1;
    gzbuffer(gz, 1 << 20);
    static const yajl_callbacks cb = {on_null,      on_bool, NULL,   NULL,   on_number, on_string,
                                      on_start_map, on_key,  on_end, on_end, on_end};
    counts c = {0};
    yajl_handle h = yajl_alloc(&cb, NULL, &c);
    yajl_config(h, yajl_allow_trailing_garbage, 1);
    enum { CHUNK = 4 << 20 };
    static unsigned char buf[CHUNK];
    double t0 = xpv_now_mono(), in_yajl = 0;
    long long total = 0;
    int n, rc = 0;
    while ((n = gzread(gz, buf, CHUNK)) > 0) {
        double t = xpv_now_mono();
        if (yajl_parse(h, buf, (size_t)n) != yajl_status_ok) rc = 1;
        in_yajl += xpv_now_mono() - t;
        total += n;
        if (rc) break;
    }
    double t = xpv_now_mono();
    if (!rc && yajl_complete_parse(h) != yajl_status_ok) rc = 1;
    in_yajl += xpv_now_mono() - t;
    double secs = xpv_now_mono() - t0;
    if (rc) {
        unsigned char *msg = yajl_get_error(h, 0, NULL, 0);
        fprintf(stderr, "yajl: %s\n", msg);
        yajl_free_error(h, msg);
    }
    printf("yajl: %lld bytes, %lld maps, %lld keys; tokenizing %.3f s = %.0f MB/s; with inflate "
           "%.3f s\n",
           total, c.maps, c.keys, in_yajl, total / in_yajl / 1e6, secs);
    yajl_free(h);
    gzclose(gz);
    return rc;
}
#endif
