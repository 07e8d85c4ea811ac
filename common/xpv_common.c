/*
 * xpv_common.c — error messages, buffers, JSON escaping, hashing.
 */
#define _GNU_SOURCE
#include "xpv_common.h"

#include <assert.h>
#include <fcntl.h>
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int xpv_err_set(xpv_err *err, const char *fmt, ...)
{
    if (!err) return -1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    return -1;
}

int xpv_err_prefix(xpv_err *err, const char *fmt, ...)
{
    if (!err) return -1;
    char prefix[256], old[sizeof err->msg];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    memcpy(old, err->msg, sizeof old);
    size_t n = strlen(prefix);
    if (n > sizeof err->msg - 3) n = sizeof err->msg - 3;
    memcpy(err->msg, prefix, n);
    memcpy(err->msg + n, ": ", 2);
    size_t room = sizeof err->msg - n - 3;
    size_t m = strnlen(old, room);
    memcpy(err->msg + n + 2, old, m);
    err->msg[n + 2 + m] = 0;
    return -1;
}

void *xpv_xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "xprof-view: out of memory (%zu bytes)\n", n);
        abort();
    }
    return p;
}

void *xpv_xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p) {
        fprintf(stderr, "xprof-view: out of memory (%zu x %zu bytes)\n", n, size);
        abort();
    }
    return p;
}

void *xpv_xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q) {
        fprintf(stderr, "xprof-view: out of memory (%zu bytes)\n", n);
        abort();
    }
    return q;
}

void *xpv_grow_table(void *p, size_t *n, size_t index, size_t size, int fill)
{
    assert(index >= *n);
    size_t grown = *n ? *n : 16;
    while (grown <= index)
        grown *= 2;
    p = xpv_xrealloc(p, grown * size);
    memset((char *)p + *n * size, fill, (grown - *n) * size);
    *n = grown;
    return p;
}

char *xpv_xstrndup(const char *s, size_t n)
{
    char *d = xpv_xmalloc(n + 1);
    memcpy(d, s, n);
    d[n] = 0;
    return d;
}

char *xpv_xstrdup(const char *s)
{
    return xpv_xstrndup(s, strlen(s));
}

void xpv_buf_reserve(xpv_buf *b, size_t extra)
{
    size_t need = b->len + extra + 1;
    if (need <= b->cap) return;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < need)
        cap *= 2;
    b->data = xpv_xrealloc(b->data, cap);
    b->cap = cap;
}

void xpv_buf_append(xpv_buf *b, const void *p, size_t n)
{
    xpv_buf_reserve(b, n);
    if (n) memcpy(b->data + b->len, p, n);
    b->len += n;
    b->data[b->len] = 0;
}

void xpv_buf_puts(xpv_buf *b, const char *s)
{
    xpv_buf_append(b, s, strlen(s));
}

void xpv_buf_putc(xpv_buf *b, char c)
{
    xpv_buf_reserve(b, 1);
    b->data[b->len++] = c;
    b->data[b->len] = 0;
}

void xpv_buf_printf(xpv_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    xpv_buf_reserve(b, (size_t)n);
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

void xpv_buf_reset(xpv_buf *b)
{
    b->len = 0;
    if (b->data) b->data[0] = 0;
}

void xpv_buf_free(xpv_buf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

/* Length of the valid UTF-8 sequence at s (1..4), or 0 when invalid. */
static size_t utf8_seq_len(const unsigned char *s, size_t n)
{
    unsigned c = s[0];
    size_t len;
    unsigned min;
    if (c < 0x80) return 1;
    if (c >= 0xC2 && c <= 0xDF)
        len = 2, min = 0x80;
    else if (c >= 0xE0 && c <= 0xEF)
        len = 3, min = 0x800;
    else if (c >= 0xF0 && c <= 0xF4)
        len = 4, min = 0x10000;
    else
        return 0;
    if (len > n) return 0;
    unsigned cp = c & (0x3F >> (len - 1));
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80) return 0;
        cp = (cp << 6) | (s[i] & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
    return len;
}

void xpv_buf_json_str(xpv_buf *b, const char *s, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *u = (const unsigned char *)s;
    xpv_buf_reserve(b, n + 2);
    xpv_buf_putc(b, '"');
    size_t i = 0;
    while (i < n) {
        size_t run = i;
        while (run < n && u[run] >= 0x20 && u[run] < 0x80 && u[run] != '"' && u[run] != '\\')
            run++;
        if (run > i) xpv_buf_append(b, s + i, run - i);
        i = run;
        if (i >= n) break;
        unsigned c = u[i];
        if (c == '"' || c == '\\') {
            char esc[2] = {'\\', (char)c};
            xpv_buf_append(b, esc, 2);
            i++;
        } else if (c < 0x20) {
            char esc[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
            if (c == '\n')
                xpv_buf_append(b, "\\n", 2);
            else if (c == '\t')
                xpv_buf_append(b, "\\t", 2);
            else if (c == '\r')
                xpv_buf_append(b, "\\r", 2);
            else
                xpv_buf_append(b, esc, 6);
            i++;
        } else {
            size_t len = utf8_seq_len(u + i, n - i);
            if (len)
                xpv_buf_append(b, s + i, len), i += len;
            else
                xpv_buf_append(b, "\xEF\xBF\xBD", 3), i++;
        }
    }
    xpv_buf_putc(b, '"');
}

void xpv_buf_json_double(xpv_buf *b, double v)
{
    if (!isfinite(v)) {
        xpv_buf_puts(b, "null");
        return;
    }
    char tmp[40];
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(tmp, sizeof tmp, "%.*g", prec, v);
        if (strtod(tmp, NULL) == v) break;
    }
    xpv_buf_puts(b, tmp);
}

uint64_t xpv_hash64(const void *p, size_t n)
{
    /* FNV-1a, then a final avalanche so low bits are usable for tables. */
    const unsigned char *s = p;
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < n; i++) {
        h ^= s[i];
        h *= 1099511628211ULL;
    }
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    return h;
}

void xpv_sort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
    const char *v = base;
    size_t in_order = 1;
    while (in_order < n && cmp(v + (in_order - 1) * size, v + in_order * size) <= 0)
        in_order++;
    if (in_order < n) qsort(base, n, size, cmp);
}

int64_t xpv_mtime_ns(const struct stat *st)
{
    return (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec;
}

void xpv_read_ahead(const char *path, int64_t bytes)
{
    assert(bytes > 0); /* 0 would mean the whole file */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return;
    (void)posix_fadvise(fd, 0, (off_t)bytes, POSIX_FADV_WILLNEED); /* nothing to report */
    close(fd);
}

double xpv_now_mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int64_t xpv_now_wall_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t xpv_profile_id_for(const char *rel_path)
{
    /* Keep ids positive and within 63 bits so they print and sort simply. */
    return (int64_t)(xpv_hash64(rel_path, strlen(rel_path)) >> 1);
}

void xpv_profile_id_hex(int64_t id, char out[17])
{
    snprintf(out, 17, "%016llx", (unsigned long long)id);
}

int xpv_profile_id_parse(const char *hex, int64_t *out)
{
    if (strlen(hex) != 16) return -1;
    uint64_t v = 0;
    for (int i = 0; i < 16; i++) {
        char c = hex[i];
        int d = (c >= '0' && c <= '9') ? c - '0' : (c >= 'a' && c <= 'f') ? c - 'a' + 10 : -1;
        if (d < 0) return -1;
        v = (v << 4) | (uint64_t)d;
    }
    /* Ids are made 63-bit, but any 16-hex-digit id is well formed: one that
     * cannot exist is simply not found (404), not a bad request (400). */
    *out = (int64_t)v;
    return 0;
}

int xpv_cpu_count(void)
{
    cpu_set_t set;
    long cpus = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set)
                                                            : sysconf(_SC_NPROCESSORS_ONLN);
    return cpus > 0 ? (int)cpus : 1;
}
