/*
 * bench_hlo_decode.c — decoding a large HloProto: builds one in memory
 * (N instructions with shapes, metadata and two operands each; a logical
 * buffer per instruction; one allocation holding them; a heap trace with
 * an ALLOC and a FREE per buffer), then times xpv_hlo_decode and prints
 * the proto's size, the decoded structures' size and the peak RSS.
 * Usage: bench_hlo_decode [instructions=1000000]
 */
#define _GNU_SOURCE
#include "../indexer/readers/hlo_proto.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

static void varint(xpv_buf *b, uint64_t v)
{
    while (v >= 0x80) {
        xpv_buf_putc(b, (char)(v | 0x80));
        v >>= 7;
    }
    xpv_buf_putc(b, (char)v);
}

static void num(xpv_buf *b, uint32_t f, uint64_t v)
{
    varint(b, (uint64_t)f << 3);
    varint(b, v);
}

static void bytes(xpv_buf *b, uint32_t f, const void *p, size_t n)
{
    varint(b, (uint64_t)f << 3 | 2);
    varint(b, n);
    xpv_buf_append(b, p, n);
}

static void sub(xpv_buf *b, uint32_t f, xpv_buf *m)
{
    bytes(b, f, m->data, m->len);
    xpv_buf_reset(m);
}

static void build(xpv_buf *out, long n)
{
    xpv_buf comp = {0}, in = {0}, t = {0}, ba = {0}, al = {0}, tr = {0};
    char name[64];
    for (long i = 0; i < n; i++) {
        int k = snprintf(name, sizeof name, "add.%ld", i);
        bytes(&in, 1, name, (size_t)k);
        bytes(&in, 2, "add", 3);
        num(&t, 2, 11), bytes(&t, 3, "\x80\x08\x80\x08", 4),
            sub(&in, 3, &t); /* packed 1024, 1024 */
        bytes(&t, 2, "jit(f)/add", 10), bytes(&t, 3, "model.py", 8), num(&t, 4, 42),
            sub(&in, 7, &t);
        num(&in, 35, (uint64_t)i + 1);
        if (i) { /* packed operand ids: i, i */
            xpv_buf ops = {0};
            varint(&ops, (uint64_t)i), varint(&ops, (uint64_t)i);
            sub(&in, 36, &ops);
            xpv_buf_free(&ops);
        }
        sub(&comp, 2, &in);
        num(&t, 1, (uint64_t)i), num(&t, 2, 4 << 20);
        num(&in, 4, (uint64_t)i + 1), sub(&t, 3, &in), sub(&ba, 1, &t);
        num(&in, 1, (uint64_t)i), num(&in, 3, 4 << 20), sub(&al, 9, &in);
        num(&in, 1, 0), num(&in, 2, (uint64_t)i), sub(&tr, 1, &in);
        if (i) num(&in, 1, 1), num(&in, 2, (uint64_t)i - 1), sub(&tr, 1, &in);
    }
    num(&al, 2, (uint64_t)n * (4 << 20)), sub(&ba, 3, &al);
    sub(&ba, 4, &tr);
    bytes(&comp, 1, "main", 4), num(&comp, 5, 1), num(&comp, 6, (uint64_t)n);
    xpv_buf mod = {0};
    bytes(&mod, 1, "jit_bench", 9), sub(&mod, 3, &comp);
    sub(out, 1, &mod), sub(out, 3, &ba);
    xpv_buf_free(&comp), xpv_buf_free(&in), xpv_buf_free(&t), xpv_buf_free(&ba);
    xpv_buf_free(&al), xpv_buf_free(&tr), xpv_buf_free(&mod);
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 1000000;
    xpv_buf p = {0};
    build(&p, n);
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    long rss_before = ru.ru_maxrss;
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    xpv_hlo_module m;
    xpv_err err = {{0}};
    const uint8_t *d = (const uint8_t *)p.data;
    if (xpv_hlo_decode(d, d, p.len, 0, &m, &err) != 0) {
        fprintf(stderr, "decode: %s\n", err.msg);
        return 1;
    }
    clock_gettime(CLOCK_MONOTONIC, &b);
    getrusage(RUSAGE_SELF, &ru);
    double s = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
    printf("instructions %u, logical buffers %u, heap events %u\n", m.ninstrs, m.nbuffers,
           m.ntraces ? m.traces[0].nevents : 0);
    printf("proto %.1f MB, decoded structures %.1f MB (%.2fx the proto)\n", (double)p.len / 1e6,
           (double)m.bytes / 1e6, (double)m.bytes / (double)p.len);
    printf("decode %.3f s = %.0f MB/s, %.2f M instructions/s\n", s, (double)p.len / 1e6 / s,
           m.ninstrs / 1e6 / s);
    printf("peak RSS %.1f MB (%.1f MB before decoding, the proto built in memory)\n",
           (double)ru.ru_maxrss / 1024, (double)rss_before / 1024);
    xpv_hlo_module_free(&m);
    xpv_buf_free(&p);
    return 0;
}
